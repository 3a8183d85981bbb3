/* dractl explain pod NAME / dractl explain claim NAME: the live form of
 * `dractl explain`. Reads the cluster (kubeconfig, --context, -n), loads
 * it into the scheduler's offline snapshot and says where the pod goes
 * or why it cannot, per claim and request, or what a claim holds and
 * why a pending one fits nowhere. Writes nothing. Also reached as
 * `kubectl dra explain ...`. */
#include <string.h>

#include "live.h"

int dractl_explain_live(dractl_ctx *ctx, int argc, char **argv);

static void usage(dractl_ctx *ctx, FILE *f)
{
    fprintf(f,
            "usage: %s explain pod NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME]\n"
            "       %s explain claim NAME [-n NAMESPACE] [--kubeconfig FILE] [--context NAME]\n"
            "\n"
            "Reads the cluster's nodes, ResourceSlices, DeviceClasses, claims, templates\n"
            "and pods, and explains with the scheduler's own logic, without writing:\n"
            "for a pod, the node it is bound to or would get, or why none fits (each\n"
            "claim and request, which devices were rejected and why); for a claim, its\n"
            "allocation and consumers, or why it cannot be allocated anywhere.\n"
            "--score LeastAllocated|MostAllocated ranks nodes as dra-scheduler would.\n"
            "Exit status: 0 placed or allocated, 1 not, 2 usage or connection errors.\n",
            ctx->progname, ctx->progname);
}

int dractl_explain_live(dractl_ctx *ctx, int argc, char **argv)
{
    dractl_live lv;
    const char *kind = argv[1], *name = NULL;
    dra_cluster *c;
    dra_sched_sim *s = NULL;
    dra_sched_decision d;
    dra_arena a;
    char what[600];
    int rc = DRACTL_USAGE;
    dra_err e;
    memset(&lv, 0, sizeof lv);
    for (int i = 2; i < argc; i++) {
        int r = dractl_live_option(ctx, &lv, argc, argv, &i);
        if (r < 0)
            return DRACTL_USAGE;
        if (r)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(ctx, ctx->out);
            return DRACTL_OK;
        }
        if (argv[i][0] == '-' || name) {
            dractl_errorf(ctx, "unexpected argument %s", argv[i]);
            usage(ctx, ctx->err);
            return DRACTL_USAGE;
        }
        name = argv[i];
    }
    if (!name) {
        usage(ctx, ctx->err);
        return DRACTL_USAGE;
    }
    if (!(c = dractl_live_connect(ctx, &lv)))
        return DRACTL_USAGE;
    dra_arena_init(&a, NULL);
    if (!(s = dractl_live_sim(ctx, &lv)) || dractl_live_load(ctx, c, s))
        goto out;
    snprintf(what, sizeof what, "%s %s/%s", !strcmp(kind, "pod") ? "pod" : "claim", lv.ns, name);
    e = !strcmp(kind, "pod") ? dra_sched_sim_schedule(s, lv.ns, name, &a, &d)
                             : dra_sched_sim_explain_claim(s, lv.ns, name, &a, &d);
    if (e == DRA_ENOTFOUND) {
        dractl_errorf(ctx, "%s not found", what);
        rc = DRACTL_FAIL;
    } else if (e != DRA_OK) {
        dractl_errorf(ctx, "%s: %s", what, dra_strerror(e));
    } else if (!strcmp(kind, "pod")) {
        rc = dractl_print_decision(ctx->out, what, &d);
    } else {
        fprintf(ctx->out, "%s\n", d.message ? d.message : what);
        for (size_t i = 0; i < d.nclaims; i++)
            if (d.claims[i].devices)
                fprintf(ctx->out, "  devices: %s\n", d.claims[i].devices);
        if (d.explanation) {
            fputs("  why:\n", ctx->out);
            dractl_print_indented(ctx->out, d.explanation, 4);
        }
        rc = d.scheduled ? DRACTL_OK : DRACTL_FAIL;
    }
out:
    dra_sched_sim_free(s);
    dra_cluster_free(c);
    dra_arena_fini(&a);
    return rc;
}
