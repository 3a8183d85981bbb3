/* dractl simulate: "what if". A snapshot of the cluster (with
 * --kubeconfig or --context) and/or of files, then the pods of the files
 * are scheduled one after the other by the scheduler's own cycle, each
 * seeing the devices the ones before took; claims in the files that no
 * pod there uses are allocated on their own. Prints each decision with
 * its devices or its explanation; writes nothing anywhere. */
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"
#include "live.h"

static void usage(dractl_ctx *ctx, FILE *f)
{
    fprintf(f,
            "usage: %s simulate -f FILE [-f FILE...] [--kubeconfig FILE] [--context NAME]\n"
            "                   [--score LeastAllocated|MostAllocated]\n"
            "\n"
            "Loads the objects of the files (nodes, ResourceSlices, DeviceClasses,\n"
            "claims, templates, pods) on top of the cluster's when --kubeconfig or\n"
            "--context is given, then schedules the files' pods in order as the\n"
            "scheduler would (their template claims made as the claim controller\n"
            "would), and allocates the files' claims no pod there uses. Nothing is\n"
            "written to the cluster.\n"
            "Exit status: 0 everything placed, 1 something was not, 2 usage or I/O.\n",
            ctx->progname);
}

typedef struct item {
    int pod; /* else a claim */
    const char *ns, *name;
} item;

static const char *str_at(const dra_doc *d, const char *a, const char *b)
{
    const dra_doc *v = dra_doc_get(dra_doc_get(d, a), b);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

/* Whether a pod of the files names claim |ns|/|name|. */
static int used_by_file_pod(dra_doc **docs, size_t n, const char *ns, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const dra_doc *k = dra_doc_get(docs[i], "kind"), *rc;
        const char *pns = str_at(docs[i], "metadata", "namespace");
        if (!k || k->kind != DRA_DOC_STRING || strcmp(k->u.str.s, "Pod") ||
            strcmp(pns ? pns : "default", ns))
            continue;
        rc = dra_doc_get(dra_doc_get(docs[i], "spec"), "resourceClaims");
        for (size_t j = 0; rc && rc->kind == DRA_DOC_LIST && j < rc->u.list.n; j++) {
            const dra_doc *cn = dra_doc_get(rc->u.list.items[j], "resourceClaimName");
            if (cn && cn->kind == DRA_DOC_STRING && !strcmp(cn->u.str.s, name))
                return 1;
        }
    }
    return 0;
}

static int load_files(dractl_ctx *ctx, dra_sched_sim *s, dra_arena *a, const char **files,
                      size_t nfiles, item **items, size_t *nitems)
{
    dra_doc **all = NULL;
    size_t nall = 0;
    for (size_t f = 0; f < nfiles; f++) {
        size_t len, n = 0;
        char *text = dractl_read_file(ctx, files[f], &len);
        dra_doc **docs = NULL;
        dra_diag d;
        if (!text)
            return -1;
        dra_diag_init(&d, NULL);
        if (dra_doc_parse_yaml(a, text, len, &docs, &n, &d) || dra_doc_flatten_lists(a, &docs, &n)) {
            dractl_errorf(ctx, "%s: %s", files[f], dra_diag_first(&d) ? dra_diag_first(&d) : "parse error");
            dra_diag_fini(&d);
            free(text);
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            dra_diag_clear(&d);
            if (dra_sched_sim_add(s, docs[i], &d) != DRA_OK) {
                dractl_errorf(ctx, "%s: object %zu: %s", files[f], i + 1,
                              dra_diag_first(&d) ? dra_diag_first(&d) : "cannot be used");
                dra_diag_fini(&d);
                free(text);
                return -1;
            }
        }
        dra_diag_fini(&d);
        free(text);
        all = realloc(all, (nall + n + 1) * sizeof *all);
        if (!all)
            return -1;
        if (n)
            memcpy(all + nall, docs, n * sizeof *docs);
        nall += n;
    }
    *items = calloc(nall + 1, sizeof **items);
    for (size_t i = 0; *items && i < nall; i++) {
        const dra_doc *k = dra_doc_get(all[i], "kind");
        const char *ns = str_at(all[i], "metadata", "namespace");
        const char *name = str_at(all[i], "metadata", "name");
        int pod = k && k->kind == DRA_DOC_STRING && !strcmp(k->u.str.s, "Pod");
        int claim = k && k->kind == DRA_DOC_STRING && !strcmp(k->u.str.s, "ResourceClaim");
        if (!name || !(pod || claim))
            continue;
        if (claim && used_by_file_pod(all, nall, ns ? ns : "default", name))
            continue;
        (*items)[*nitems].pod = pod;
        (*items)[*nitems].ns = ns ? ns : "default";
        (*items)[(*nitems)++].name = name;
    }
    free(all);
    return *items ? 0 : -1;
}

int cmd_simulate(dractl_ctx *ctx, int argc, char **argv)
{
    dractl_live lv;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t nfiles = 0, nitems = 0;
    item *items = NULL;
    dra_cluster *c = NULL;
    dra_sched_sim *s = NULL;
    dra_arena a;
    int rc = DRACTL_USAGE, live;
    memset(&lv, 0, sizeof lv);
    if (!files)
        return DRACTL_USAGE;
    for (int i = 1; i < argc; i++) {
        int r = dractl_live_option(ctx, &lv, argc, argv, &i);
        if (r < 0)
            goto done;
        if (r)
            continue;
        if ((!strcmp(argv[i], "-f") || !strcmp(argv[i], "--filename")) && i + 1 < argc) {
            files[nfiles++] = argv[++i];
        } else if (!strncmp(argv[i], "--filename=", 11)) {
            files[nfiles++] = argv[i] + 11;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(ctx, ctx->out);
            rc = DRACTL_OK;
            goto done;
        } else {
            dractl_errorf(ctx, "unexpected argument %s", argv[i]);
            usage(ctx, ctx->err);
            goto done;
        }
    }
    if (!nfiles) {
        usage(ctx, ctx->err);
        goto done;
    }
    live = lv.kubeconfig || lv.context;
    dra_arena_init(&a, NULL);
    if ((live && !(c = dractl_live_connect(ctx, &lv))) || !(s = dractl_live_sim(ctx, &lv)) ||
        (c && dractl_live_load(ctx, c, s)) ||
        load_files(ctx, s, &a, files, nfiles, &items, &nitems))
        goto out;
    rc = DRACTL_OK;
    for (size_t i = 0; i < nitems; i++) {
        dra_sched_decision d;
        char what[600];
        dra_err e;
        snprintf(what, sizeof what, "%s %s/%s", items[i].pod ? "pod" : "claim", items[i].ns,
                 items[i].name);
        e = items[i].pod ? dra_sched_sim_schedule(s, items[i].ns, items[i].name, &a, &d)
                         : dra_sched_sim_explain_claim(s, items[i].ns, items[i].name, &a, &d);
        if (e != DRA_OK) {
            dractl_errorf(ctx, "%s: %s", what, dra_strerror(e));
            rc = DRACTL_USAGE;
            break;
        }
        if (items[i].pod) {
            if (dractl_print_decision(ctx->out, what, &d) != DRACTL_OK)
                rc = DRACTL_FAIL;
        } else {
            fprintf(ctx->out, "%s\n", d.message ? d.message : what);
            if (!d.scheduled) {
                rc = DRACTL_FAIL;
                if (d.explanation)
                    dractl_print_indented(ctx->out, d.explanation, 2);
            }
        }
    }
out:
    free(items);
    dra_sched_sim_free(s);
    dra_cluster_free(c);
    dra_arena_fini(&a);
done:
    free(files);
    return rc;
}
