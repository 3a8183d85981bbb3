/*
 * node_int.h: internals of the node module. cdi.c parses CDI specs and
 * resolves device names; bwrap.c turns a container config into the
 * bubblewrap command line; runtime.c starts and supervises containers
 * through dra-shim (shim.c); crilog.c writes and reads CRI-format logs;
 * agent.c, plugins.c, pods.c, podstatus.c and fake.c are the node agent.
 */
#ifndef DRA_NODE_INT_H
#define DRA_NODE_INT_H

#include <stdint.h>

#include "dra/node.h"

/* ---- small helpers (util.c) ---- */

/* Wall clock in nanoseconds since the epoch (CLOCK_REALTIME). */
int64_t node_now_ns(void) DRA_HIDDEN;
/* Monotonic clock in milliseconds. */
int64_t node_mono_ms(void) DRA_HIDDEN;
/* RFC 3339 UTC with 9 fraction digits ("2026-01-02T03:04:05.123456789Z")
 * or, with |frac| 0, whole seconds as Kubernetes' metav1.Time prints
 * them. |buf| holds at least 40 bytes. */
void node_fmt_time(int64_t ns, int frac, char *buf, size_t size) DRA_HIDDEN;
/* Parses what node_fmt_time writes (any number of fraction digits, or
 * none). 0 on success, -1 otherwise. */
int node_parse_time(const char *s, size_t len, int64_t *ns) DRA_HIDDEN;
/* mkdir -p with mode 0700 for created directories. 0 or -1 (errno). */
int node_mkdirs(const char *path) DRA_HIDDEN;
/* Writes |len| bytes to |path| atomically (temporary file in the same
 * directory, fsync, rename). 0 or -1 (errno). */
int node_write_file(const char *path, const void *data, size_t len) DRA_HIDDEN;
/* Reads a whole file into a NUL-terminated buffer in |a| (at most
 * |max| bytes). 0, or -1 with errno (EFBIG when larger). */
int node_read_file(dra_arena *a, const char *path, size_t max, char **out,
                   size_t *len) DRA_HIDDEN;
/* Removes a directory tree (no symlinks followed). 0 or -1. */
int node_rmtree(const char *path) DRA_HIDDEN;
/* Start time of process |pid| in clock ticks since boot (field 22 of
 * /proc/PID/stat), or -1 when it does not exist. */
int64_t node_proc_start(int pid) DRA_HIDDEN;
/* A fresh random hex id of |n| hex digits (n < size). */
void node_random_hex(char *buf, size_t n) DRA_HIDDEN;

/* ---- dra-shim (shim.c) ---- */

/* `dra-shim run DIR SYNCFD` and `dra-shim init ERRFD CFGFD CWD -- CMD`:
 * the program's two roles, given its whole argv. Exit statuses. */
int node_shim_run(int argc, char **argv) DRA_HIDDEN;
int node_shim_init(int argc, char **argv) DRA_HIDDEN;

/* ---- containers (bwrap.c, runtime.c) ---- */

/* The configuration document dra-shim reads for |cfg|, in |a|: bwrap
 * options, command, environment, hooks and mount points to create.
 * |dir| is the container's state directory; |as_root| whether the
 * runtime runs as root. DRA_OK; DRA_EINVAL (message in |d|); DRA_ENOMEM. */
dra_err node_ctr_plan(dra_arena *a, const dra_node_ctr_config *cfg, const char *bwrap,
                      const char *shim, const char *dir, int as_root, dra_doc **out,
                      dra_diag *d) DRA_HIDDEN;

/* ---- CDI internals (cdi.c) ---- */

/* Merges |src| into |dst| (CDI ContainerEdits.Append: lists appended). */
dra_err cdi_edits_append(dra_arena *a, dra_node_cdi_edits *dst,
                         const dra_node_cdi_edits *src) DRA_HIDDEN;
/* Applies containerd's replacement rules to merged edits: later device
 * nodes replace earlier ones with the same path, later mounts replace
 * earlier ones at the same containerPath, mounts sorted by depth. */
void cdi_edits_finish(dra_node_cdi_edits *e) DRA_HIDDEN;

#endif
