/* Error code names and messages, generated from the DRA_ERRORS X-macro so
 * the enum and its tables cannot drift apart. */
#include "dra/base.h"

const char *dra_strerror(int err)
{
    switch (err) {
#define DRA_X_MSG(name, value, msg) case value: return msg;
        DRA_ERRORS(DRA_X_MSG)
#undef DRA_X_MSG
    default: return "unknown error";
    }
}

const char *dra_errname(int err)
{
    switch (err) {
#define DRA_X_NAME(name, value, msg) case value: return #name;
        DRA_ERRORS(DRA_X_NAME)
#undef DRA_X_NAME
    default: return "DRA_E?";
    }
}
