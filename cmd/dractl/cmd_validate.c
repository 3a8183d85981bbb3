/* dractl validate: decodes every object of every input (YAML streams,
 * JSON, List objects) and checks it with kube-apiserver's create rules,
 * CEL selectors included (compiled with the DRA environment and judged
 * against the cost limit, through the api module's CEL hook).
 * Prints "Kind/name: valid" per good object and "Kind/name: path: message"
 * per error; exit 0 when all are valid, 1 when any is invalid or does not
 * decode, 2 for usage or I/O errors. */
#include <stdlib.h>
#include <string.h>

#include "api/validate.h"
#include "dra/api.h"
#include "dra/cel.h"
#include "dractl.h"

/* The CEL hook: one DRA environment, made on first use. */
typedef struct cel_checker {
    dra_cel_env *env;
    int failed; /* the environment could not be made */
} cel_checker;

static dra_api_cel_verdict cel_check(void *ud, const char *expr, char *msg,
                                     size_t cap)
{
    cel_checker *c = ud;
    dra_cel_program *p = NULL;
    dra_diag d;
    dra_buf b;
    dra_api_cel_verdict v = DRA_API_CEL_OK;
    if (!c->env && !c->failed && dra_cel_env_new_dra(NULL, NULL, &c->env) != DRA_OK)
        c->failed = 1;
    if (!c->env)
        return DRA_API_CEL_OK; /* out of memory: length checks only */
    dra_diag_init(&d, NULL);
    dra_buf_init(&b, NULL);
    if (dra_cel_compile(c->env, expr, strlen(expr), &p, &d) != DRA_OK) {
        dra_diag_format(&d, &b);
        while (b.len && b.p[b.len - 1] == '\n')
            b.p[--b.len] = '\0';
        /* Parse and check errors come as "compilation failed: ERROR:
         * <input>:..." in kube-apiserver; the result-type error stands
         * alone. */
        snprintf(msg, cap, "%s%s", b.p && !strncmp(b.p, "ERROR:", 6)
                 ? "compilation failed: " : "", b.p ? b.p : "");
        v = DRA_API_CEL_INVALID;
    } else if (dra_cel_program_cost_estimate(p) > DRA_CEL_COST_LIMIT) {
        v = DRA_API_CEL_TOO_COSTLY;
    }
    dra_cel_program_unref(p);
    dra_buf_fini(&b);
    dra_diag_fini(&d);
    return v;
}

static void usage(dractl_ctx *ctx, FILE *f)
{
    fprintf(f,
            "usage: %s validate -f FILE [-f FILE...] [--validate=strict|warn|ignore]\n"
            "\n"
            "Checks resource.k8s.io/v1 objects (ResourceSlice, DeviceClass,\n"
            "ResourceClaim, ResourceClaimTemplate) and Pods with kube-apiserver's\n"
            "validation rules. FILE may hold many YAML documents or a List;\n"
            "'-' reads standard input.\n"
            "\n"
            "Output, one line each: 'Kind/name: valid', or\n"
            "'Kind/name: field.path: message' for every error of an object,\n"
            "or 'FILE: message' when the input does not decode.\n"
            "Fields Kubernetes does not define are errors, as with kubectl's\n"
            "default --validate=strict; 'warn' prints them as warnings,\n"
            "'ignore' drops them.\n"
            "Exit status: 0 all valid, 1 something invalid, 2 usage or I/O error.\n",
            ctx->progname);
}

/* "Kind/name"; objects without a name are told apart by position. */
static void identity(const dra_object *o, size_t idx, char *buf, size_t cap)
{
    const char *kind = o->kind_name ? o->kind_name : "Object";
    if (o->meta.name && *o->meta.name)
        snprintf(buf, cap, "%s/%s", kind, o->meta.name);
    else if (o->meta.generate_name && *o->meta.generate_name)
        snprintf(buf, cap, "%s/%s*", kind, o->meta.generate_name);
    else
        snprintf(buf, cap, "%s/(object %zu)", kind, idx + 1);
}

static void print_diag(dractl_ctx *ctx, const char *prefix, const dra_diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        const dra_diag_entry *e = &d->v[i];
        if (e->path && *e->path)
            fprintf(ctx->out, "%s: %s: %s\n", prefix, e->path, e->msg);
        else if (e->line > 0)
            fprintf(ctx->out, "%s:%d:%d: %s\n", prefix, e->line, e->col, e->msg);
        else
            fprintf(ctx->out, "%s: %s\n", prefix, e->msg);
    }
    if (d->dropped)
        fprintf(ctx->out, "%s: ... and %zu more errors\n", prefix, d->dropped);
}

/* What to do with fields Kubernetes does not define (kubectl's
 * --validate). */
enum { UNKNOWN_STRICT, UNKNOWN_WARN, UNKNOWN_IGNORE };

/* Reports the unknown fields of |o|; returns 1 when they make it invalid. */
static int report_unknown(dractl_ctx *ctx, const char *id, const dra_object *o,
                          int mode)
{
    dra_diag d;
    size_t n;
    if (mode == UNKNOWN_IGNORE)
        return 0;
    dra_diag_init(&d, NULL);
    n = dra_api_unknown_fields(o, &d);
    for (size_t i = 0; i < d.n; i++)
        fprintf(ctx->out, "%s: %s%s\n", id, mode == UNKNOWN_WARN ? "warning: " : "",
                d.v[i].msg);
    dra_diag_fini(&d);
    return n > 0 && mode == UNKNOWN_STRICT;
}

/* Validates every object of one input. Returns DRACTL_OK, DRACTL_FAIL, or
 * DRACTL_USAGE when the file cannot be read. */
static int validate_file(dractl_ctx *ctx, const char *path,
                         const dra_api_validate_opts *opts, int unknown)
{
    size_t len = 0, n = 0;
    char *text = dractl_read_file(ctx, path, &len);
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    dra_arena a;
    dra_diag d;
    dra_object **objs = NULL;
    int rc = DRACTL_OK;
    dra_err e;
    if (!text)
        return DRACTL_USAGE;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    e = dra_api_decode_stream(&a, text, len, &objs, &n, &d);
    if (e == DRA_ENOMEM) {
        dractl_errorf(ctx, "%s: out of memory", name);
        rc = DRACTL_USAGE;
        goto out;
    }
    if (e != DRA_OK) {
        /* Objects that did decode are still checked below. */
        print_diag(ctx, name, &d);
        rc = DRACTL_FAIL;
        if (e == DRA_EPARSE)
            n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        char id[512];
        identity(objs[i], i, id, sizeof id);
        dra_diag_clear(&d);
        e = dra_api_validate_ex(objs[i], NULL, DRA_API_VALIDATE_CREATE, opts, &d);
        if (e == DRA_OK) {
            if (report_unknown(ctx, id, objs[i], unknown))
                rc = DRACTL_FAIL;
            else
                fprintf(ctx->out, "%s: valid\n", id);
        } else if (e == DRA_ENOMEM) {
            dractl_errorf(ctx, "%s: %s: out of memory", name, id);
            rc = DRACTL_USAGE;
            break;
        } else {
            print_diag(ctx, id, &d);
            if (d.n == 0)
                fprintf(ctx->out, "%s: %s\n", id, dra_strerror(e));
            report_unknown(ctx, id, objs[i], unknown);
            rc = DRACTL_FAIL;
        }
    }
    if (n == 0 && e == DRA_OK) {
        fprintf(ctx->out, "%s: no objects\n", name);
        rc = DRACTL_FAIL;
    }
out:
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    free(text);
    return rc;
}

int cmd_validate(dractl_ctx *ctx, int argc, char **argv)
{
    int rc = DRACTL_OK, nfiles = 0, unknown = UNKNOWN_STRICT;
    cel_checker cel = {NULL, 0};
    dra_api_validate_opts opts = {cel_check, &cel};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(ctx, ctx->out);
            return DRACTL_OK;
        }
        if (!strncmp(argv[i], "--validate=", 11)) {
            const char *m = argv[i] + 11;
            if (!strcmp(m, "strict") || !strcmp(m, "true"))
                unknown = UNKNOWN_STRICT;
            else if (!strcmp(m, "warn"))
                unknown = UNKNOWN_WARN;
            else if (!strcmp(m, "ignore") || !strcmp(m, "false"))
                unknown = UNKNOWN_IGNORE;
            else {
                dractl_errorf(ctx, "validate: --validate must be strict, warn or ignore");
                return DRACTL_USAGE;
            }
            continue;
        }
        if (strcmp(argv[i], "-f") && strcmp(argv[i], "--filename")) {
            dractl_errorf(ctx, "validate: unexpected argument '%s'", argv[i]);
            usage(ctx, ctx->err);
            return DRACTL_USAGE;
        }
        if (++i >= argc) {
            dractl_errorf(ctx, "validate: -f needs a file name");
            return DRACTL_USAGE;
        }
        nfiles++;
    }
    if (!nfiles) {
        usage(ctx, ctx->err);
        return DRACTL_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-f") && strcmp(argv[i], "--filename"))
            continue;
        int r = validate_file(ctx, argv[++i], &opts, unknown);
        /* Usage/I/O trouble outranks an invalid object. */
        if (r == DRACTL_USAGE || (r == DRACTL_FAIL && rc == DRACTL_OK))
            rc = r;
    }
    dra_cel_env_free(cel.env);
    return rc;
}
