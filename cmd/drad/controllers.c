/*
 * controllers.c: where drad starts and stops what runs beside the API
 * server inside the process: the scheduler and the resourceclaim
 * controller (src/sched), then the simulated nodes (nodes.c: node agents
 * and their dra-gpu-plugin children), each with a cluster from
 * dra_apiserver_cluster(ctx->srv), stopped in reverse order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/sched.h"
#include "drad.h"

struct drad_controllers {
    const drad_ctx *ctx;
    dra_cluster *sched_cluster;
    dra_sched *sched;
    drad_nodes *nodes;
};

static void sched_log(void *ud, int level, const char *msg)
{
    (void)ud;
    if (level == DRA_SCHED_LOG_ERROR)
        fprintf(stderr, "drad: scheduler: %s\n", msg);
}

/* The scheduler places pods with schedulerName default-scheduler; the
 * claim controller always runs. DRAD_SCHEDULER=off turns the scheduler
 * off, so that dra-scheduler can be tested against drad as it would run
 * beside a real cluster's own scheduler (until drad has a flag for it). */
static dra_err start_sched(drad_controllers *c, dra_diag *d)
{
    const char *env = getenv("DRAD_SCHEDULER");
    dra_sched_opts o;
    dra_err e;
    memset(&o, 0, sizeof o);
    o.scheduler = !(env && !strcmp(env, "off"));
    o.claim_controller = 1;
    o.log = sched_log;
    if (!(c->sched_cluster = dra_apiserver_cluster(c->ctx->srv)))
        return DRA_ENOMEM;
    if ((e = dra_sched_start(c->sched_cluster, &o, &c->sched)) != DRA_OK)
        dra_diag_add(d, "", 0, 0, "starting the scheduler: %s", dra_strerror(e));
    return e;
}

void drad_controllers_stop(drad_controllers *c)
{
    if (!c)
        return;
    drad_nodes_stop(c->nodes);
    dra_sched_stop(c->sched);
    dra_cluster_free(c->sched_cluster);
    dra_free(NULL, c);
}

dra_err drad_controllers_start(const drad_ctx *ctx, drad_controllers **out,
                               dra_diag *d)
{
    drad_controllers *c = dra_calloc(NULL, 1, sizeof *c);
    dra_err e;
    *out = NULL;
    if (!c)
        return DRA_ENOMEM;
    c->ctx = ctx;
    if ((e = start_sched(c, d)) != DRA_OK || (e = drad_nodes_start(ctx, &c->nodes, d)) != DRA_OK) {
        drad_controllers_stop(c);
        return e;
    }
    *out = c;
    return DRA_OK;
}
