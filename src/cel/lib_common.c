/*
 * lib_common.c: what the library files share: which environment enables
 * which library at which version, and UTF-8 offsets by code point.
 */
#include "lib_common.h"

int lib_k8s_enabled(const cel_env_info *info)
{
    return info->kind == CEL_ENV_DRA;
}

int lib_strings_version(const cel_env_info *info)
{
    if (info->opts && info->opts->strings_version > 0)
        return info->opts->strings_version;
    return info->kind == CEL_ENV_DRA ? 2 : LIB_STRINGS_LATEST;
}

int lib_lists_version(const cel_env_info *info)
{
    return info->kind == CEL_ENV_DRA ? 3 : LIB_LISTS_LATEST;
}

size_t lib_utf8_offset(const char *s, size_t len, size_t cp)
{
    size_t i = 0;
    while (cp > 0 && i < len) {
        (void)lib_utf8_next(s, len, &i);
        cp--;
    }
    return i;
}
