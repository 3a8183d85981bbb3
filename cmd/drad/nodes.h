/*
 * nodes.h: drad's simulated nodes (nodes.c): the command-line flags that
 * choose them, and their start and stop from controllers.c. Each node is
 * a node agent (src/node) inside drad and a dra-gpu-plugin child process
 * that drad supervises (children.c); fake nodes (KWOK-style) run nothing.
 */
#ifndef DRAD_NODES_H
#define DRAD_NODES_H

#include <stdio.h>

#include "dra/base.h"

/* What the command line asked for. Strings point into argv. */
typedef struct drad_node_flags {
    const char *nodes; /* --nodes FILE|none; NULL: the seed's two GB200 nodes */
    int real_gpus;     /* --real-gpus: the local node on the real driver (/) */
    long fake_nodes;   /* --fake-nodes N (0: none) */
} drad_node_flags;

/* Parses argv[i] when it is one of the flags above (taking argv[i + 1]
 * as its value when needed). Returns the number of arguments taken (1
 * or 2), 0 when argv[i] is not one of them, -1 when its value is
 * missing or bad (the message is printed on stderr). */
int drad_node_flag(drad_node_flags *f, int argc, char **argv, int i);

/* 1 when the flags ask for any node (real, simulated or fake): then
 * bound pods are deleted gracefully, through their node. */
int drad_node_flags_any(const drad_node_flags *f);

/* The flags' lines for drad's usage text. */
void drad_node_flags_usage(FILE *out);

struct drad_ctx;
typedef struct drad_nodes drad_nodes;

/* Lays out and starts the nodes |ctx->node_flags| asks for: installs
 * the chart's DeviceClasses, then per node a fake driver root, a node
 * agent and a dra-gpu-plugin child; returns once every node is
 * registered and its plugin has published its ResourceSlice and
 * registered with the agent. On an error the message goes to |d| and
 * nothing is left running. *out may be NULL (no nodes). */
dra_err drad_nodes_start(const struct drad_ctx *ctx, drad_nodes **out, dra_diag *d);
/* Stops the agents (their containers are stopped as in a node
 * shutdown), then the plugin children (SIGTERM, SIGKILL after 10 s;
 * reaped). NULL: no-op. */
void drad_nodes_stop(drad_nodes *n);

#endif
