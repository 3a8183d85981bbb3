/*
 * lib_regex.h: RE2 regular expressions (Go's regexp/syntax, which CEL
 * and Kubernetes use) on top of PCRE2. A pattern is first checked and
 * translated from RE2 syntax to an equivalent PCRE2 pattern, rejecting
 * what RE2 lacks (backreferences, lookaround, atomic groups, possessive
 * quantifiers, recursion, ...) with Go's error texts; it is then compiled
 * with UTF mode and RE2's "$ means end of text" rule, and every search
 * runs under match, depth and heap limits so that a hostile pattern
 * yields an error instead of running away.
 */
#ifndef DRA_CEL_LIB_REGEX_H
#define DRA_CEL_LIB_REGEX_H

#include "dra/base.h"

/* Limits that bound one search (PCRE2 units). About 10 ms per search at
 * worst on current hardware. */
#define LIB_RE_MATCH_LIMIT 2000000u
#define LIB_RE_DEPTH_LIMIT 5000u
#define LIB_RE_HEAP_LIMIT_KIB 16384u
#define LIB_RE_MAX_PATTERN 65536u
#define LIB_RE_MAX_REPEAT 1000 /* Go's {n,m} bound */

typedef struct lib_re lib_re;
typedef struct lib_re_md lib_re_md;

/* Check RE2 syntax in |pat| and write the PCRE2 equivalent to |out|.
 * DRA_EPARSE with Go's message ("error parsing regexp: missing closing ]:
 * `[a`") appended to |why| (may be NULL); DRA_ENOMEM. */
DRA_HIDDEN dra_err lib_re_translate(const char *pat, size_t len, dra_buf *out,
                                    dra_buf *why);

/* Compile |pat| (RE2 syntax, valid UTF-8). *out is immutable and may be
 * shared by threads; free with lib_re_free. DRA_EPARSE (message in
 * |why|), DRA_ELIMIT (pattern too long), DRA_ENOMEM. */
DRA_HIDDEN dra_err lib_re_compile(const dra_mem *mem, const char *pat,
                                  size_t len, lib_re **out, dra_buf *why);
DRA_HIDDEN void lib_re_free(lib_re *re); /* NULL ok */
/* Number of capturing groups. */
DRA_HIDDEN int lib_re_ngroups(const lib_re *re);

/* Per-thread match state (holds up to 32 capture pairs). */
DRA_HIDDEN dra_err lib_re_md_new(const dra_mem *mem, lib_re_md **out);
DRA_HIDDEN void lib_re_md_free(lib_re_md *md); /* NULL ok */

/* Search |s| (|len| bytes of valid UTF-8) from byte |start|. Returns 1 on
 * a match, with ovec[2k], ovec[2k+1] = byte offsets of group k (-1 when
 * unset) for k < novec/2; 0 when there is none; -1 when a limit was hit
 * or the subject is not UTF-8 (message in |why|). |utf_checked| nonzero
 * skips PCRE2's UTF-8 validation (the caller already validated |s|). */
DRA_HIDDEN int lib_re_search(const lib_re *re, lib_re_md *md, const char *s,
                             size_t len, size_t start, int utf_checked,
                             long *ovec, size_t novec, dra_buf *why);

#endif
