/*
 * controllers.c: where drad starts and stops what runs beside the API
 * server inside the process. Today nothing does; the scheduler and claim
 * controller (src/sched) and the node agents (src/node) are started here
 * with a cluster from dra_apiserver_cluster(ctx->srv), and stopped in
 * reverse order, by the helpers that build them.
 */
#include "drad.h"

struct drad_controllers {
    const drad_ctx *ctx;
};

dra_err drad_controllers_start(const drad_ctx *ctx, drad_controllers **out,
                               dra_diag *d)
{
    drad_controllers *c = dra_calloc(NULL, 1, sizeof *c);
    (void)d;
    *out = NULL;
    if (!c)
        return DRA_ENOMEM;
    c->ctx = ctx;
    *out = c;
    return DRA_OK;
}

void drad_controllers_stop(drad_controllers *c)
{
    dra_free(NULL, c);
}
