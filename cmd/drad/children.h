/*
 * children.h: processes drad supervises (children.c): started, restarted
 * with back-off (0.5 s doubling to 10 s, reset after 30 s of running)
 * when they die, stopped with SIGTERM then SIGKILL, always reaped. Each
 * child dies with drad (PR_SET_PDEATHSIG) and runs in its own process
 * group, its output appended to a log file.
 */
#ifndef DRAD_CHILDREN_H
#define DRAD_CHILDREN_H

#include "dra/base.h"

typedef struct drad_child drad_child;

typedef struct drad_child_opts {
    const char *name;            /* for drad's messages ("dra-gpu-plugin for node05") */
    const char *const *argv;     /* argv[0] is the program's path; NULL-terminated */
    const char *log_path;        /* stdout and stderr, appended (created 0600) */
    const char *pid_path;        /* the running child's pid is written here; may be NULL */
} drad_child_opts;

/* Copies |o| and starts the supervisor thread, which starts the child.
 * A child that cannot be started (fork or exec fails) is retried with
 * the same back-off and reported on stderr. DRA_OK; DRA_EIO (no thread:
 * |d|); DRA_ENOMEM. */
dra_err drad_child_start(const drad_child_opts *o, drad_child **out, dra_diag *d);

/* The running child's pid, 0 between runs. */
int drad_child_pid(drad_child *c);

/* How many times the child ended and was restarted (or retried). */
unsigned drad_child_restarts(drad_child *c);

/* Stops supervising: SIGTERM to the child, SIGKILL after |grace_ms|,
 * waits until it is reaped, removes the pid file, frees. NULL: no-op. */
void drad_child_stop(drad_child *c, int grace_ms);

#endif
