/* dractl entry point, modelled on lua.c: main builds the context, hands
 * the real work to one function that returns a status, and maps it to an
 * exit code. Subcommands come from commands.def. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"
#include "dractl.h"

#ifndef DRA_VERSION
#define DRA_VERSION "0.1.0"
#endif

typedef struct dractl_cmd {
    const char *name;
    int (*fn)(dractl_ctx *, int, char **);
    const char *summary;
} dractl_cmd;

static const dractl_cmd commands[] = {
#define DRACTL_CMD(name, fn, summary) {#name, fn, summary},
#include "commands.def"
#undef DRACTL_CMD
};

void dractl_errorf(dractl_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    fprintf(ctx->err, "%s: ", ctx->progname);
    va_start(ap, fmt);
    vfprintf(ctx->err, fmt, ap);
    va_end(ap);
    fputc('\n', ctx->err);
}

char *dractl_read_file(dractl_ctx *ctx, const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *p = NULL, *np;
    size_t n = 0, cap = 0, r;
    if (!f) {
        dractl_errorf(ctx, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (cap - n < 65536) {
            if (cap > DRA_DOC_MAX_BYTES) {
                dractl_errorf(ctx, "%s: input larger than %u bytes", path,
                              (unsigned)DRA_DOC_MAX_BYTES);
                goto fail;
            }
            cap = cap * 2 + 65536;
            np = realloc(p, cap + 1);
            if (!np) {
                dractl_errorf(ctx, "%s: out of memory", path);
                goto fail;
            }
            p = np;
        }
        r = fread(p + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        dractl_errorf(ctx, "%s: read error", path);
        goto fail;
    }
    if (f != stdin)
        fclose(f);
    p[n] = '\0';
    *len = n;
    return p;
fail:
    if (f != stdin)
        fclose(f);
    free(p);
    return NULL;
}

int cmd_version(dractl_ctx *ctx, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(ctx->out, "dractl %s\n", DRA_VERSION);
    return DRACTL_OK;
}

static void usage(dractl_ctx *ctx, FILE *f)
{
    fprintf(f, "usage: %s COMMAND [ARGS...]\n\ncommands:\n", ctx->progname);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", ctx->progname);
}

static int dractl_main(dractl_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        usage(ctx, ctx->err);
        return DRACTL_USAGE;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(ctx, ctx->out);
        return DRACTL_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(ctx, argc - 1, argv + 1);
    dractl_errorf(ctx, "unknown command '%s' (see '%s help')", argv[1], ctx->progname);
    return DRACTL_USAGE;
}

int main(int argc, char **argv)
{
    dractl_ctx ctx = {"dractl", stdout, stderr};
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    /* Installed as kubectl-dra, kubectl runs it as `kubectl dra ...`. */
    if (argc > 0 && argv[0] && !strcmp(base ? base + 1 : argv[0], "kubectl-dra"))
        ctx.progname = "kubectl dra";
    int rc = dractl_main(&ctx, argc, argv);
    if (fflush(stdout) != 0 && rc == DRACTL_OK)
        rc = DRACTL_USAGE;
    return rc;
}
