/* dractl explain: the allocation of `dractl allocate`, printing only why
 * claims cannot be allocated (and, for those that can, the node they
 * would get). The work is shared with cmd_allocate.c. `explain pod NAME`
 * and `explain claim NAME` ask a live cluster (cmd_explain_live.c). */
#include <string.h>

#include "dractl.h"

int dractl_allocate_main(dractl_ctx *ctx, int argc, char **argv, int explain_only);
int dractl_explain_live(dractl_ctx *ctx, int argc, char **argv);

int cmd_explain(dractl_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "pod") || !strcmp(argv[1], "claim")))
        return dractl_explain_live(ctx, argc, argv);
    return dractl_allocate_main(ctx, argc, argv, 1);
}
