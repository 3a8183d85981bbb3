/*
 * regex.c: the engine's view of regular expressions. The RE2-over-PCRE2
 * engine itself (syntax screening with Go's messages, translation, match
 * limits) is lib_regex.c's lib_re; this file keeps a small per-VM cache
 * of compiled patterns with their match state, so a selector's constant
 * pattern is compiled once per VM and evaluations do not allocate.
 */
#include <stdio.h>

#include "lib_regex.h"
#include "vm.h"

struct cel_regex {
    lib_re *re;
    lib_re_md *md;
    const cel_fixre *fix; /* in |ar|, when the pattern is of that form */
    dra_arena ar;
};

void cel_regex_free(const dra_mem *mem, cel_regex *re)
{
    if (!re)
        return;
    lib_re_md_free(re->md);
    lib_re_free(re->re);
    dra_arena_fini(&re->ar);
    dra_free(mem, re);
}

cel_regex *cel_regex_compile(const dra_mem *mem, const char *pat, size_t len, dra_buf *why,
                             dra_err *rc)
{
    cel_regex *re = dra_calloc(mem, 1, sizeof *re);
    if (!re) {
        *rc = DRA_ENOMEM;
        return NULL;
    }
    dra_arena_init(&re->ar, mem);
    *rc = lib_re_compile(mem, pat, len, &re->re, why);
    if (!*rc)
        *rc = lib_re_md_new(mem, &re->md);
    if (!*rc) {
        int oom;
        re->fix = cel_fixre_compile(&re->ar, pat, len, &oom);
        if (oom)
            *rc = DRA_ENOMEM;
    }
    if (*rc) {
        cel_regex_free(mem, re);
        return NULL;
    }
    return re;
}

const cel_regex *cel_regex_get(cel_ctx *ctx, const char *pat, size_t len, cel_value *err)
{
    cel_regex *re;
    cel_regex_cache_entry *e;
    dra_buf why;
    dra_err rc;
    for (size_t i = 0; i < CEL_REGEX_CACHE; i++) {
        e = &ctx->rcache[i];
        if (e->re && e->len == len && !memcmp(e->pat, pat, len))
            return e->re;
    }
    dra_buf_init(&why, ctx->mem);
    re = cel_regex_compile(ctx->mem, pat, len, &why, &rc);
    if (!re) {
        *err = rc == DRA_ENOMEM ? cel_error_value(&cel_e_nomem)
                                : cel_err(ctx, "%s", why.p ? why.p : "invalid regular expression");
        dra_buf_fini(&why);
        return NULL;
    }
    dra_buf_fini(&why);
    e = &ctx->rcache[ctx->rnext++ % CEL_REGEX_CACHE];
    cel_regex_free(ctx->mem, e->re);
    dra_free(ctx->mem, e->pat);
    e->re = NULL;
    e->pat = dra_malloc(ctx->mem, len + 1);
    if (!e->pat) {
        cel_regex_free(ctx->mem, re);
        *err = cel_error_value(&cel_e_nomem);
        return NULL;
    }
    if (len)
        memcpy(e->pat, pat, len);
    e->len = len;
    e->re = re;
    return re;
}

int cel_regex_search(cel_ctx *ctx, const cel_regex *re, const char *s, size_t len,
                     size_t start, long *ovec, size_t novec, cel_value *err)
{
    dra_buf why;
    int r;
    dra_buf_init(&why, ctx->mem);
    /* CEL strings are valid UTF-8 by construction. */
    r = lib_re_search(re->re, re->md, s, len, start, 1, ovec, novec, &why);
    if (r < 0)
        *err = cel_err(ctx, "%s", why.p ? why.p : "regular expression match failed");
    dra_buf_fini(&why);
    return r;
}

int cel_regex_ngroups(const cel_regex *re)
{
    return lib_re_ngroups(re->re);
}

int cel_regex_matches(cel_ctx *ctx, const cel_regex *re, const char *s, size_t len,
                      cel_value *err)
{
    long ov[2];
    if (re->fix)
        return cel_fixre_match(re->fix, s, len);
    return cel_regex_search(ctx, re, s, len, 0, ov, 2, err);
}
