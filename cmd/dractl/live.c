/* live.c: what dractl's live commands share: options, connecting through
 * a kubeconfig (src/kube), and loading the cluster into an offline
 * scheduler snapshot (src/sched) that explain and simulate query. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dra/kube.h"
#include "live.h"

int dractl_live_option(dractl_ctx *ctx, dractl_live *lv, int argc, char **argv, int *i)
{
    static const struct {
        const char *flag, *alt;
        size_t off;
    } opts[] = {
        {"--kubeconfig", NULL, offsetof(dractl_live, kubeconfig)},
        {"--context", NULL, offsetof(dractl_live, context)},
        {"--namespace", "-n", offsetof(dractl_live, ns)},
        {"--score", NULL, offsetof(dractl_live, score)},
    };
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        size_t n = strlen(opts[k].flag);
        const char **dst = (const char **)((char *)lv + opts[k].off);
        if (!strncmp(a, opts[k].flag, n) && a[n] == '=') {
            *dst = a + n + 1;
            return 1;
        }
        if (!strcmp(a, opts[k].flag) || (opts[k].alt && !strcmp(a, opts[k].alt))) {
            if (*i + 1 >= argc) {
                dractl_errorf(ctx, "%s needs a value", a);
                return -1;
            }
            *dst = argv[++*i];
            return 1;
        }
    }
    return 0;
}

dra_cluster *dractl_live_connect(dractl_ctx *ctx, dractl_live *lv)
{
    dra_kube_config cfg;
    dra_cluster *c = NULL;
    dra_diag d;
    dra_err e;
    dra_diag_init(&d, NULL);
    if ((e = dra_kube_config_load(&cfg, lv->kubeconfig, lv->context, NULL, &d)) == DRA_OK)
        e = dra_kube_cluster_new(&cfg, NULL, &c, &d);
    if (e != DRA_OK)
        dractl_errorf(ctx, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    else if (!lv->ns)
        lv->ns = strdup(cfg.ns ? cfg.ns : "default"); /* lives until exit */
    dra_kube_config_fini(&cfg);
    dra_diag_fini(&d);
    return c;
}

dra_sched_sim *dractl_live_sim(dractl_ctx *ctx, const dractl_live *lv)
{
    dra_sched_opts o;
    dra_sched_sim *s = NULL;
    memset(&o, 0, sizeof o);
    if (lv->score && dra_sched_score_parse(lv->score, &o.score)) {
        dractl_errorf(ctx, "--score must be LeastAllocated or MostAllocated, not %s", lv->score);
        return NULL;
    }
    if (dra_sched_sim_new(&o, &s) != DRA_OK) {
        dractl_errorf(ctx, "out of memory");
        return NULL;
    }
    return s;
}

int dractl_live_load(dractl_ctx *ctx, dra_cluster *c, dra_sched_sim *s)
{
    static const dra_gvr kinds[] = {DRA_GVR_NODES,     DRA_GVR_CLASSES, DRA_GVR_SLICES,
                                    DRA_GVR_TEMPLATES, DRA_GVR_CLAIMS,  DRA_GVR_PODS};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        dra_arena a;
        dra_doc *list = NULL;
        const dra_doc *items;
        dra_kstatus st;
        dra_diag d;
        dra_err e;
        dra_arena_init(&a, NULL);
        dra_diag_init(&d, NULL);
        memset(&st, 0, sizeof st);
        e = dra_cluster_list_all(c, &kinds[k], NULL, NULL, &a, &list, NULL, &st);
        if (e != DRA_OK) {
            dractl_errorf(ctx, "listing %s: %s", kinds[k].resource,
                          st.message[0] ? st.message : dra_strerror(e));
            dra_arena_fini(&a);
            dra_diag_fini(&d);
            return -1;
        }
        items = dra_doc_get(list, "items");
        for (size_t i = 0; items && items->kind == DRA_DOC_LIST && i < items->u.list.n; i++)
            if (dra_sched_sim_add(s, items->u.list.items[i], &d) == DRA_ENOMEM) {
                dractl_errorf(ctx, "out of memory");
                dra_arena_fini(&a);
                dra_diag_fini(&d);
                return -1;
            }
        dra_arena_fini(&a);
        dra_diag_fini(&d);
    }
    return 0;
}

void dractl_print_indented(FILE *f, const char *text, int indent)
{
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len)
            fprintf(f, "%*s%.*s\n", indent, "", (int)len, p);
        p = nl ? nl + 1 : NULL;
    }
}

int dractl_print_decision(FILE *f, const char *what, const dra_sched_decision *d)
{
    if (d->bound)
        fprintf(f, "%s: bound to node %s\n", what, d->node);
    else if (d->scheduled)
        fprintf(f, "%s: fits on node %s\n", what, d->node);
    else
        fprintf(f, "%s: cannot be scheduled\n", what);
    if (!d->scheduled && d->message)
        dractl_print_indented(f, d->message, 2);
    for (size_t i = 0; i < d->nclaims; i++) {
        const dra_sched_claim_outcome *c = &d->claims[i];
        fprintf(f, "  claim %s (pod claim %s): %s%s%s\n", c->claim ? c->claim : "?", c->pod_claim,
                c->state, c->devices && *c->devices ? ": " : "", c->devices ? c->devices : "");
    }
    if (!d->scheduled && d->explanation) {
        fputs("  why:\n", f);
        dractl_print_indented(f, d->explanation, 4);
    }
    return d->scheduled ? DRACTL_OK : DRACTL_FAIL;
}
