/* dractl explain: the allocation of `dractl allocate`, printing only why
 * claims cannot be allocated (and, for those that can, the node they
 * would get). The work is shared with cmd_allocate.c. */
#include "dractl.h"

int dractl_allocate_main(dractl_ctx *ctx, int argc, char **argv, int explain_only);

int cmd_explain(dractl_ctx *ctx, int argc, char **argv)
{
    return dractl_allocate_main(ctx, argc, argv, 1);
}
