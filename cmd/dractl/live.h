/* Shared by dractl's live commands (explain pod/claim, simulate): the
 * cluster connection from a kubeconfig and a scheduler snapshot
 * (dra_sched_sim) filled from the cluster and from files. */
#ifndef DRACTL_LIVE_H
#define DRACTL_LIVE_H

#include "dra/cluster.h"
#include "dra/sched.h"
#include "dractl.h"

typedef struct dractl_live {
    const char *kubeconfig; /* --kubeconfig, or NULL */
    const char *context;    /* --context, or NULL */
    const char *ns;         /* -n; the context's namespace when NULL */
    const char *score;      /* --score, or NULL */
} dractl_live;

/* Consumes the option at argv[*i] when it is one of --kubeconfig,
 * --context, -n/--namespace, --score (with its value, "--x V" or
 * "--x=V"); returns 1 when it did, 0 when it is something else, -1 when
 * a value is missing (after printing why). */
int dractl_live_option(dractl_ctx *ctx, dractl_live *lv, int argc, char **argv, int *i);

/* Opens the cluster of |lv|'s kubeconfig and context (kubectl's
 * precedence when neither is given) and fills lv->ns from the context
 * when unset. The cluster is the caller's (dra_cluster_free). Prints why
 * and returns NULL on failure. */
dra_cluster *dractl_live_connect(dractl_ctx *ctx, dractl_live *lv);

/* A new snapshot with |lv|'s score. Prints why and returns NULL on
 * failure. */
dra_sched_sim *dractl_live_sim(dractl_ctx *ctx, const dractl_live *lv);

/* Adds every Node, ResourceSlice, DeviceClass, ResourceClaim,
 * ResourceClaimTemplate and Pod of the cluster to |s|. Returns 0, or
 * prints why and returns -1. */
int dractl_live_load(dractl_ctx *ctx, dra_cluster *c, dra_sched_sim *s);

/* Prints a scheduling decision for |what| ("pod default/x"): the node,
 * or the FailedScheduling message and the full explanation, and each
 * claim with its devices. Returns DRACTL_OK when a node was found, else
 * DRACTL_FAIL. */
int dractl_print_decision(FILE *f, const char *what, const dra_sched_decision *d);

/* Prints the lines of |text| to |f|, each with |indent| spaces before. */
void dractl_print_indented(FILE *f, const char *text, int indent);

#endif
