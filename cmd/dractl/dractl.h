/* Shared declarations for dractl's subcommands (see commands.def). */
#ifndef DRACTL_H
#define DRACTL_H

#include <stdio.h>

#include "dra/base.h"

/* Exit codes: 0 success, 1 the input was checked and found wanting
 * (invalid object, unsatisfiable claim, CEL error), 2 usage or I/O. */
enum { DRACTL_OK = 0, DRACTL_FAIL = 1, DRACTL_USAGE = 2 };

typedef struct dractl_ctx {
    const char *progname;
    FILE *out, *err;
} dractl_ctx;

/* Prints "dractl: message" on ctx->err. */
void dractl_errorf(dractl_ctx *ctx, const char *fmt, ...) DRA_PRINTF(2, 3);

/* Reads a whole file ("-" is stdin) into a malloc'd NUL-terminated
 * buffer; the caller frees it. On failure prints the reason and returns
 * NULL. Refuses inputs over DRA_DOC_MAX_BYTES. */
char *dractl_read_file(dractl_ctx *ctx, const char *path, size_t *len);

#define DRACTL_CMD(name, fn, summary) int fn(dractl_ctx *ctx, int argc, char **argv);
#include "commands.def"
#undef DRACTL_CMD

#endif
