/*
 * drad.h: the pieces of the drad program (cmd/drad): the kubeconfig it
 * writes and the hook where in-process controllers (scheduler, node
 * agents) are started and stopped.
 */
#ifndef DRAD_H
#define DRAD_H

#include "dra/apiserver.h"
#include "dra/store.h"
#include "nodes.h"

/* What the controllers may use; all borrowed for drad's life. */
typedef struct drad_ctx {
    const char *data_dir;
    dra_store *store;
    dra_apiserver *srv;
    const char *server_url; /* https://127.0.0.1:PORT */
    const char *kubeconfig; /* the file drad wrote */
    const char *kubeconfig_h2; /* the same for its HTTP/2 port */
    const drad_node_flags *node_flags; /* which nodes to run (nodes.h) */
} drad_ctx;

typedef struct drad_controllers drad_controllers;

/* Starts the controllers that run inside drad (controllers.c). On an
 * error the message goes to |d| and nothing is left running. */
dra_err drad_controllers_start(const drad_ctx *ctx, drad_controllers **out,
                               dra_diag *d);
/* Stops them (before the API server goes). NULL: no-op. */
void drad_controllers_stop(drad_controllers *c);

/* Writes |path| (mode 0600, through a temporary file and rename): one
 * cluster, user and context named "drad", the server |url|, the CA and
 * the bearer token. DRA_OK or DRA_EIO (|d| says why). */
dra_err drad_write_kubeconfig(const char *path, const char *url,
                              const dra_apiserver_creds *creds, dra_diag *d);

#endif
