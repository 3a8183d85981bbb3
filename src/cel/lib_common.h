/*
 * lib_common.h: shared by the CEL library files (lib_*.c): which
 * environments enable which library at which version, small UTF-8
 * helpers, and the helpers one library exports to another or to tests.
 */
#ifndef DRA_CEL_LIB_COMMON_H
#define DRA_CEL_LIB_COMMON_H

#include "cel_int.h"

/* Kubernetes libraries (quantity, semver, lists, regex, IP/CIDR, format,
 * URLs): DRA env only. */
CEL_FUNC int lib_k8s_enabled(const cel_env_info *info);
/* ext.Strings version in effect: opts->strings_version when set, else 2
 * (what Kubernetes 1.29+ enables) for DRA and the latest for STD. */
#define LIB_STRINGS_LATEST 4
CEL_FUNC int lib_strings_version(const cel_env_info *info);
/* ext.Lists version: 3 for DRA (Kubernetes 1.34+) and for STD. */
#define LIB_LISTS_LATEST 3
CEL_FUNC int lib_lists_version(const cel_env_info *info);

/* Decodes one code point of valid UTF-8 at s[*i] and advances *i. */
static inline uint32_t lib_utf8_next(const char *s, size_t len, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s + *i;
    size_t left = len - *i;
    if (p[0] < 0x80 || left < 2) {
        (*i)++;
        return p[0];
    }
    if (p[0] < 0xE0) {
        *i += 2;
        return (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F);
    }
    if (p[0] < 0xF0 || left < 4) {
        *i += left < 3 ? left : 3;
        return left < 3 ? 0xFFFD
                        : (uint32_t)(p[0] & 0x0F) << 12 |
                              (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
    }
    *i += 4;
    return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
           (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F);
}

/* Byte offset of code point |cp| in |s| (len when cp == count). */
CEL_FUNC size_t lib_utf8_offset(const char *s, size_t len, size_t cp);

/* Message resource.ParseQuantity gives for an unparsable |s|. */
CEL_FUNC const char *lib_quantity_parse_error(const char *s, size_t n);

/* Kubernetes semver normalisation (semver(s, true)): strips one leading
 * 'v', pads "1" and "1.2" with ".0", strips leading zeros of each of the
 * first three dot-separated parts. Writes into |out| (|size| >= len + 5
 * suffices); returns the length, or 0 with *msg set when a short version
 * carries pre-release or build metadata. */
CEL_FUNC size_t lib_semver_normalize(const char *s, size_t len, char *out,
                                     size_t size, const char **msg);
/* blang/semver's message for a strict parse failure of |s|; may format
 * into |buf| (256 bytes suffice) and return it, or return a static text. */
CEL_FUNC const char *lib_semver_parse_error(const char *s, size_t len,
                                            char *buf, size_t size);

extern const cel_lib cel_lib_quantity;
extern const cel_lib cel_lib_semver, cel_lib_semver_v1;

#endif
