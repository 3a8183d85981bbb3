/* dractl convert: reads objects (YAML streams, JSON, kind: List) from
 * files or stdin, decodes them into the typed model and prints them
 * normalised: canonical quantities, defaults left alone, unknown fields
 * kept, keys in kubectl's order (sorted) or, with --go-order, in the
 * apiserver's Go struct order. Several objects print as a YAML stream, or
 * for -o json as a v1 List like `kubectl get -o json`. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dra/api.h"
#include "dra/codec.h"
#include "dractl.h"

#define MAX_FILES 256

typedef struct convert_opts {
    const char *files[MAX_FILES];
    size_t nfiles;
    int json;
    int go_order;
    int strict;
    int defaults;
} convert_opts;

static void convert_usage(FILE *f)
{
    fputs("usage: dractl convert -f FILE... [-o yaml|json] [--go-order] [--strict]\n"
          "                     [--defaults]\n"
          "\n"
          "Decodes resource.k8s.io/v1 and core/v1 objects and prints them\n"
          "normalised. FILE may be - for stdin or a directory (its .json, .yaml\n"
          "and .yml files, in name order); -f may be repeated and each file may\n"
          "hold several documents or a List.\n"
          "\n"
          "  -f, --filename FILE  input file (repeatable)\n"
          "  -o, --output FORMAT  yaml (default) or json; several objects\n"
          "                       print as a --- stream (yaml) or a v1 List (json)\n"
          "      --go-order       fields in Go struct order (the apiserver's\n"
          "                       wire order) instead of kubectl's sorted keys\n"
          "      --strict         unknown fields are errors, not warnings\n"
          "      --defaults       apply kube-apiserver's defaults (allocationMode,\n"
          "                       count, toleration operator) as a create would\n"
          "\n"
          "Exit status: 0 ok, 1 an input was not a valid object, 2 usage or I/O.\n",
          f);
}

/* Returns -1 to go on, else an exit status. */
static int parse_args(dractl_ctx *ctx, int argc, char **argv, convert_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            convert_usage(ctx->out);
            return DRACTL_OK;
        }
        if (!strcmp(a, "--go-order")) {
            o->go_order = 1;
            continue;
        }
        if (!strcmp(a, "--strict")) {
            o->strict = 1;
            continue;
        }
        if (!strcmp(a, "--defaults")) {
            o->defaults = 1;
            continue;
        }
        if (!strncmp(a, "--filename=", 11) || !strncmp(a, "--output=", 9)) {
            val = strchr(a, '=') + 1;
        } else if ((a[0] == '-' && (a[1] == 'o' || a[1] == 'f') && a[2])) {
            val = a[2] == '=' ? a + 3 : a + 2; /* kubectl's -ojson, -o=json */
        } else if (!strcmp(a, "-f") || !strcmp(a, "--filename") || !strcmp(a, "-o") ||
                   !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                dractl_errorf(ctx, "convert: option %s needs a value", a);
                return DRACTL_USAGE;
            }
            val = argv[++i];
        } else {
            dractl_errorf(ctx, "convert: unknown argument '%s' (see 'dractl convert --help')", a);
            return DRACTL_USAGE;
        }
        if (a[1] == 'f' || !strncmp(a, "--filename", 10)) {
            if (o->nfiles == MAX_FILES) {
                dractl_errorf(ctx, "convert: too many files (at most %d)", MAX_FILES);
                return DRACTL_USAGE;
            }
            o->files[o->nfiles++] = val;
        } else if (!strcmp(val, "json") || !strcmp(val, "yaml")) {
            o->json = !strcmp(val, "json");
        } else {
            dractl_errorf(ctx, "convert: unknown output format '%s' (want yaml or json)", val);
            return DRACTL_USAGE;
        }
    }
    if (!o->nfiles) {
        dractl_errorf(ctx, "convert: no input (use -f FILE, or -f - for stdin)");
        return DRACTL_USAGE;
    }
    return -1;
}

static void print_diag(dractl_ctx *ctx, const char *file, const dra_diag *d, const char *tag)
{
    for (size_t i = 0; i < d->n; i++) {
        const dra_diag_entry *e = &d->v[i];
        fprintf(ctx->err, "%s: %s%s", ctx->progname, tag, file);
        if (e->line)
            fprintf(ctx->err, ":%d:%d", e->line, e->col);
        fprintf(ctx->err, ": %s%s%s\n", e->path, *e->path ? ": " : "", e->msg);
    }
    if (d->dropped)
        fprintf(ctx->err, "%s: %s: %zu more errors\n", ctx->progname, file, d->dropped);
}

/* Decodes one file into |objs| (grown with realloc). Returns an exit
 * status; DRACTL_OK when every object in it decoded. */
static int load_file(dractl_ctx *ctx, const convert_opts *o, const char *path, dra_arena *a,
                     dra_object ***objs, size_t *nobjs)
{
    const char *name = strcmp(path, "-") ? path : "<stdin>";
    size_t len, n = 0;
    dra_object **got = NULL, **grown;
    dra_diag d;
    dra_err e;
    char *text = dractl_read_file(ctx, path, &len);
    if (!text)
        return DRACTL_USAGE;
    dra_diag_init(&d, NULL);
    e = dra_api_decode_stream(a, text, len, &got, &n, &d);
    free(text);
    print_diag(ctx, name, &d, "");
    /* Like kube-apiserver's field validation: Warn by default, Strict on
     * request. */
    dra_diag_clear(&d);
    for (size_t i = 0; i < n; i++)
        if (dra_api_unknown_fields(got[i], &d) && o->strict && e == DRA_OK)
            e = DRA_EINVALID;
    print_diag(ctx, name, &d, o->strict ? "" : "warning: ");
    dra_diag_fini(&d);
    if (e == DRA_ENOMEM) {
        dractl_errorf(ctx, "%s: out of memory", name);
        return DRACTL_USAGE;
    }
    if (n) {
        if (!(grown = realloc(*objs, (*nobjs + n) * sizeof *grown))) {
            dractl_errorf(ctx, "out of memory");
            return DRACTL_USAGE;
        }
        *objs = grown;
        memcpy(*objs + *nobjs, got, n * sizeof *got);
        *nobjs += n;
    }
    return e == DRA_OK ? DRACTL_OK : DRACTL_FAIL;
}

/* kubectl's -f DIR: the directory's .json, .yaml and .yml files. */
static int manifest_name(const struct dirent *de)
{
    const char *dot = strrchr(de->d_name, '.');
    return de->d_name[0] != '.' && dot &&
           (!strcmp(dot, ".json") || !strcmp(dot, ".yaml") || !strcmp(dot, ".yml"));
}

static int load_dir(dractl_ctx *ctx, const convert_opts *o, const char *dir, dra_arena *a,
                    dra_object ***objs, size_t *nobjs)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, manifest_name, alphasort), rc = DRACTL_OK;
    if (n < 0) {
        dractl_errorf(ctx, "%s: %s", dir, strerror(errno));
        return DRACTL_USAGE;
    }
    for (int i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(ents[i]->d_name) + 2;
        char *path = malloc(len);
        int r = DRACTL_USAGE;
        if (path) {
            snprintf(path, len, "%s/%s", dir, ents[i]->d_name);
            r = load_file(ctx, o, path, a, objs, nobjs);
        } else {
            dractl_errorf(ctx, "out of memory");
        }
        free(path);
        if (r > rc)
            rc = r;
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    return rc;
}

/* Decodes every input. The worst status wins: 2 (usage/I/O) over 1 (an
 * invalid object) over 0. */
static int load(dractl_ctx *ctx, const convert_opts *o, dra_arena *a, dra_object ***objs,
                size_t *nobjs)
{
    int rc = DRACTL_OK;
    for (size_t f = 0; f < o->nfiles; f++) {
        struct stat st;
        int r;
        if (strcmp(o->files[f], "-") && stat(o->files[f], &st) == 0 && S_ISDIR(st.st_mode))
            r = load_dir(ctx, o, o->files[f], a, objs, nobjs);
        else
            r = load_file(ctx, o, o->files[f], a, objs, nobjs);
        if (r > rc)
            rc = r;
        if (rc == DRACTL_USAGE)
            break;
    }
    return rc;
}

static int print_objects(dractl_ctx *ctx, const convert_opts *o, dra_arena *a,
                         dra_object **objs, size_t n)
{
    dra_buf out;
    dra_err e = DRA_OK;
    dra_buf_init(&out, NULL);
    if (o->json && n != 1) {
        dra_doc *list;
        for (size_t i = 0; i < n && o->defaults; i++)
            dra_api_set_defaults(objs[i]);
        e = dra_api_encode_list(a, objs, n, &list);
        if (e == DRA_OK && !o->go_order)
            dra_api_doc_sort_keys(list);
        if (e == DRA_OK)
            e = dra_doc_to_json(list, 4, &out);
    } else {
        for (size_t i = 0; i < n && e == DRA_OK; i++) {
            dra_doc *doc;
            if (o->defaults)
                dra_api_set_defaults(objs[i]);
            if ((e = dra_api_encode(a, objs[i], &doc)) != DRA_OK)
                break;
            /* kubectl sorts JSON keys bytewise (encoding/json) and YAML
             * keys naturally (go-yaml v2: "a2" before "a10"). */
            if (!o->go_order)
                (void)dra_doc_sort_keys(doc, o->json ? DRA_DOC_ORDER_BYTES : DRA_DOC_ORDER_YAML);
            if (i)
                dra_buf_puts(&out, "---\n");
            e = o->json ? dra_doc_to_json(doc, 4, &out) : dra_doc_to_yaml(doc, &out);
        }
    }
    if (e == DRA_OK && out.oom)
        e = DRA_ENOMEM;
    if (e == DRA_OK && o->json && (!out.len || out.p[out.len - 1] != '\n'))
        e = dra_buf_putc(&out, '\n');
    if (e != DRA_OK) {
        dractl_errorf(ctx, "convert: %s", dra_strerror(e));
        dra_buf_fini(&out);
        return DRACTL_USAGE;
    }
    fwrite(out.p, 1, out.len, ctx->out);
    dra_buf_fini(&out);
    return DRACTL_OK;
}

int cmd_convert(dractl_ctx *ctx, int argc, char **argv)
{
    convert_opts o;
    dra_arena a;
    dra_object **objs = NULL;
    size_t n = 0;
    int rc;
    memset(&o, 0, sizeof o);
    if ((rc = parse_args(ctx, argc, argv, &o)) >= 0)
        return rc;
    dra_arena_init(&a, NULL);
    rc = load(ctx, &o, &a, &objs, &n);
    /* Print only when every input decoded: half a conversion would pass
     * for a whole one in a pipeline. */
    if (rc == DRACTL_OK)
        rc = print_objects(ctx, &o, &a, objs, n);
    free(objs);
    dra_arena_fini(&a);
    return rc;
}
