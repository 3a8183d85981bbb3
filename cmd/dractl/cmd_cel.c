/* dractl cel: evaluate CEL expressions (optionally against a DRA device)
 * and run the cel-spec conformance suite dumped by
 * scripts/cel-spec-dump.mjs. */
#include <stdlib.h>
#include <string.h>

#include "dra/cel.h"
#include "dra/codec.h"
#include "dractl.h"

static void cel_usage(dractl_ctx *ctx)
{
    fprintf(ctx->err,
            "usage: dractl cel eval EXPR [--device FILE]\n"
            "       dractl cel conformance [-v] [--floor N] FILE...\n"
            "\n"
            "eval prints the value as a CEL literal, or the error (exit 1), with the\n"
            "Kubernetes libraries (quantity, semver, lists, regex, url, ip, cidr, ...).\n"
            "FILE is a device as in a ResourceSlice (JSON or YAML) plus its\n"
            "`driver`; with it the expression is a DRA selector over `device`.\n");
}

/* ---- device files ------------------------------------------------------------ */

typedef struct dev_buf {
    dra_cel_attr *attrs;
    dra_cel_capacity *caps;
    dra_cel_device dev;
} dev_buf;

static int decode_attr(dractl_ctx *ctx, const dra_doc_member *m, dra_cel_attr *a)
{
    const dra_doc *v = m->val, *x;
    a->name = m->key;
    if ((x = dra_doc_get(v, "int")) && x->kind == DRA_DOC_INT) {
        a->kind = DRA_CEL_ATTR_INT;
        a->i = x->u.i;
    } else if ((x = dra_doc_get(v, "bool")) && x->kind == DRA_DOC_BOOL) {
        a->kind = DRA_CEL_ATTR_BOOL;
        a->b = x->u.b;
    } else if ((x = dra_doc_get(v, "string")) && x->kind == DRA_DOC_STRING) {
        a->kind = DRA_CEL_ATTR_STRING;
        a->s = x->u.str.s;
    } else if ((x = dra_doc_get(v, "version")) && x->kind == DRA_DOC_STRING) {
        a->kind = DRA_CEL_ATTR_VERSION;
        a->s = x->u.str.s;
        if (dra_semver_parse(x->u.str.s, x->u.str.len, &a->version)) {
            dractl_errorf(ctx, "attributes[%s].version: invalid semantic version", m->key);
            return 0;
        }
    } else {
        dractl_errorf(ctx, "attributes[%s]: expected one of int, bool, string, version", m->key);
        return 0;
    }
    return 1;
}

static int decode_device(dractl_ctx *ctx, const dra_doc *d, dev_buf *db)
{
    const dra_doc *drv = dra_doc_get(d, "driver"), *at = dra_doc_get(d, "attributes");
    const dra_doc *cp = dra_doc_get(d, "capacity"), *am = dra_doc_get(d, "allowMultipleAllocations");
    memset(db, 0, sizeof *db);
    if (!drv || drv->kind != DRA_DOC_STRING) {
        dractl_errorf(ctx, "device: missing string field 'driver'");
        return 0;
    }
    db->dev.driver = drv->u.str.s;
    if (at && at->kind == DRA_DOC_MAP) {
        db->attrs = calloc(at->u.map.n + 1, sizeof *db->attrs);
        if (!db->attrs)
            return 0;
        for (size_t i = 0; i < at->u.map.n; i++)
            if (!decode_attr(ctx, &at->u.map.m[i], &db->attrs[i]))
                return 0;
        db->dev.attrs = db->attrs;
        db->dev.nattrs = at->u.map.n;
    }
    if (cp && cp->kind == DRA_DOC_MAP) {
        db->caps = calloc(cp->u.map.n + 1, sizeof *db->caps);
        if (!db->caps)
            return 0;
        for (size_t i = 0; i < cp->u.map.n; i++) {
            const dra_doc *v = cp->u.map.m[i].val, *q = dra_doc_get(v, "value");
            if (!q)
                q = v;
            db->caps[i].name = cp->u.map.m[i].key;
            if (q->kind == DRA_DOC_INT) {
                db->caps[i].value = dra_quantity_from_int64(q->u.i, DRA_QTY_DECIMAL_SI);
            } else if (q->kind != DRA_DOC_STRING ||
                       dra_quantity_parse(q->u.str.s, q->u.str.len, &db->caps[i].value)) {
                dractl_errorf(ctx, "capacity[%s].value: invalid quantity", cp->u.map.m[i].key);
                return 0;
            }
        }
        db->dev.caps = db->caps;
        db->dev.ncaps = cp->u.map.n;
    }
    db->dev.allow_multiple_allocations = am && am->kind == DRA_DOC_BOOL && am->u.b;
    return 1;
}

static void print_diag(dractl_ctx *ctx, const dra_diag *d)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_diag_format(d, &b);
    if (b.p)
        fprintf(ctx->err, "%s%s", b.p, b.len && b.p[b.len - 1] == '\n' ? "" : "\n");
    dra_buf_fini(&b);
}

static int eval_device(dractl_ctx *ctx, const char *expr, const char *file)
{
    size_t len, nd;
    char *text = dractl_read_file(ctx, file, &len);
    dra_arena a;
    dra_doc **docs;
    dra_diag d;
    dev_buf db;
    dra_cel_env *env = NULL;
    dra_cel_program *p = NULL;
    dra_cel_prepared *pd = NULL;
    dra_cel_vm *vm = NULL;
    int rc = DRACTL_USAGE, result;
    dra_err e;
    memset(&db, 0, sizeof db);
    if (!text)
        return DRACTL_USAGE;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, text, len, &docs, &nd, &d) || nd != 1) {
        if (nd != 1 && !d.n)
            dractl_errorf(ctx, "%s: expected one document", file);
        print_diag(ctx, &d);
        goto out;
    }
    if (!decode_device(ctx, docs[0], &db))
        goto out;
    if (dra_cel_env_new_dra(NULL, NULL, &env) || dra_cel_vm_new(NULL, &vm) ||
        dra_cel_device_prepare(NULL, &db.dev, &pd)) {
        dractl_errorf(ctx, "out of memory");
        goto out;
    }
    rc = DRACTL_FAIL;
    if (dra_cel_compile(env, expr, strlen(expr), &p, &d)) {
        print_diag(ctx, &d);
        goto out;
    }
    e = dra_cel_eval_device(p, vm, pd, &result, &d);
    if (e) {
        print_diag(ctx, &d);
        goto out;
    }
    fprintf(ctx->out, "%s\n", result ? "true" : "false");
    rc = DRACTL_OK;
out:
    dra_cel_program_unref(p);
    dra_cel_prepared_free(pd);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    free(db.attrs);
    free(db.caps);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    free(text);
    return rc;
}

int dractl_cel_compile_k8s(const char *expr, dra_cel_env **envp, dra_cel_program **p, dra_diag *d);

static int eval_plain(dractl_ctx *ctx, const char *expr)
{
    dra_cel_env *env = NULL;
    dra_cel_program *p = NULL;
    dra_cel_vm *vm = NULL;
    dra_diag d;
    dra_buf out;
    int rc = DRACTL_FAIL;
    dra_err e;
    dra_diag_init(&d, NULL);
    dra_buf_init(&out, NULL);
    if (dra_cel_vm_new(NULL, &vm)) {
        dractl_errorf(ctx, "out of memory");
        rc = DRACTL_USAGE;
        goto out;
    }
    /* With the Kubernetes libraries (cel_k8s.c). */
    if (dractl_cel_compile_k8s(expr, &env, &p, &d)) {
        print_diag(ctx, &d);
        goto out;
    }
    e = dra_cel_eval_json(p, vm, NULL, &out, &d);
    if (e) {
        print_diag(ctx, &d);
        goto out;
    }
    fprintf(ctx->out, "%s\n", out.p ? out.p : "");
    rc = DRACTL_OK;
out:
    dra_cel_program_unref(p);
    dra_cel_vm_free(vm);
    dra_cel_env_free(env);
    dra_buf_fini(&out);
    dra_diag_fini(&d);
    return rc;
}

/* ---- conformance ------------------------------------------------------------------ */

typedef struct counts {
    long pass, fail, skip;
} counts;

static int run_file(dractl_ctx *ctx, const char *file, int verbose, counts *total)
{
    size_t len;
    char *text = dractl_read_file(ctx, file, &len);
    dra_arena a;
    dra_doc *root;
    dra_diag d;
    counts c = {0, 0, 0};
    const dra_doc *secs, *name;
    int ok = 0;
    if (!text)
        return 0;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_json(&a, text, len, &root, &d)) {
        print_diag(ctx, &d);
        goto out;
    }
    name = dra_doc_get(root, "name");
    secs = dra_doc_get(root, "sections");
    for (size_t s = 0; secs && secs->kind == DRA_DOC_LIST && s < secs->u.list.n; s++) {
        const dra_doc *sec = secs->u.list.items[s], *tests = dra_doc_get(sec, "tests");
        const dra_doc *sname = dra_doc_get(sec, "name");
        for (size_t t = 0; tests && tests->kind == DRA_DOC_LIST && t < tests->u.list.n; t++) {
            const dra_doc *test = tests->u.list.items[t], *tn = dra_doc_get(test, "name");
            dra_buf why;
            int st;
            dra_buf_init(&why, NULL);
            if (dra_cel_conformance_case(NULL, test, &st, &why)) {
                dractl_errorf(ctx, "out of memory");
                dra_buf_fini(&why);
                goto out;
            }
            if (st == 0) c.pass++;
            else if (st == 1) c.fail++;
            else c.skip++;
            if ((st == 1 && verbose) || (st == 2 && verbose > 1))
                fprintf(ctx->out, "  %s %s/%s/%s: %s\n", st == 1 ? "FAIL" : "SKIP",
                        name && name->kind == DRA_DOC_STRING ? name->u.str.s : file,
                        sname && sname->kind == DRA_DOC_STRING ? sname->u.str.s : "?",
                        tn && tn->kind == DRA_DOC_STRING ? tn->u.str.s : "?",
                        why.p ? why.p : "");
            dra_buf_fini(&why);
        }
    }
    fprintf(ctx->out, "%s: %ld passed, %ld failed, %ld skipped\n",
            name && name->kind == DRA_DOC_STRING ? name->u.str.s : file, c.pass, c.fail, c.skip);
    total->pass += c.pass;
    total->fail += c.fail;
    total->skip += c.skip;
    ok = 1;
out:
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    free(text);
    return ok;
}

static int conformance(dractl_ctx *ctx, int argc, char **argv)
{
    counts total = {0, 0, 0};
    long floor = -1;
    int verbose = 0, nfiles = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose++;
        } else if (!strcmp(argv[i], "--floor") && i + 1 < argc) {
            floor = strtol(argv[++i], NULL, 10);
        } else {
            if (!run_file(ctx, argv[i], verbose, &total))
                return DRACTL_USAGE;
            nfiles++;
        }
    }
    if (!nfiles) {
        cel_usage(ctx);
        return DRACTL_USAGE;
    }
    fprintf(ctx->out, "%ld passed, %ld failed, %ld skipped\n", total.pass, total.fail,
            total.skip);
    if (floor >= 0 && total.pass < floor) {
        dractl_errorf(ctx, "conformance: %ld passed, below the floor of %ld", total.pass,
                      floor);
        return DRACTL_FAIL;
    }
    return DRACTL_OK;
}

int cmd_cel(dractl_ctx *ctx, int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "eval")) {
        if (argc == 5 && !strcmp(argv[3], "--device"))
            return eval_device(ctx, argv[2], argv[4]);
        if (argc == 3)
            return eval_plain(ctx, argv[2]);
    }
    if (argc >= 2 && !strcmp(argv[1], "conformance"))
        return conformance(ctx, argc, argv);
    cel_usage(ctx);
    return argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? DRACTL_OK
                                                                               : DRACTL_USAGE;
}
