/*
 * lib_k8s_regex.c: the Kubernetes regex library (apiserver
 * pkg/cel/library/regex.go): s.find(re) -> the leftmost match or "",
 * s.findAll(re[, n]) -> up to n matches (all when n < 0), with Go's
 * FindAllString rules for empty matches. Patterns go through the engine's
 * cached RE2-on-PCRE2 compiler (cel_regex_get).
 */
#include "lib_common.h"

static const cel_regex *get_re(cel_ctx *ctx, cel_value pat, cel_value *err)
{
    cel_value e = cel_null();
    const cel_regex *re = cel_regex_get(ctx, pat.u.s, pat.n, &e);
    if (!re)
        *err = e.kind == CEL_K_ERROR && e.u.err->msg
                   ? cel_err(ctx, "Illegal regex: %s", e.u.err->msg)
                   : cel_err(ctx, "Illegal regex");
    return re;
}

static cel_value r_find(cel_ctx *ctx, const cel_value *a, size_t n)
{
    cel_value err = cel_null();
    const cel_regex *re = get_re(ctx, a[1], &err);
    long ov[2];
    int r;
    (void)n;
    if (!re)
        return err;
    r = cel_regex_search(ctx, re, a[0].u.s, a[0].n, 0, ov, 2, &err);
    if (r < 0)
        return err;
    if (r == 0)
        return cel_str("", 0);
    return cel_str(a[0].u.s + ov[0], (size_t)(ov[1] - ov[0]));
}

/* Go's regexp allMatches: an empty match right after the previous match
 * is skipped, and the search then moves on by one code point. */
static cel_value r_find_all(cel_ctx *ctx, const cel_value *a, size_t n)
{
    cel_value err = cel_null(), res, *items;
    const cel_regex *re = get_re(ctx, a[1], &err);
    int64_t lim = n > 2 ? a[2].u.i : -1;
    size_t pos = 0, cnt = 0, cap;
    long prev_end = -1;
    if (!re)
        return err;
    if (lim < 0 || (uint64_t)lim > (uint64_t)a[0].n + 1)
        lim = (int64_t)a[0].n + 1;
    cap = (size_t)lim;
    res = cel_list_new(ctx, cap, &items);
    if (res.kind != CEL_K_LIST)
        return res;
    while ((int64_t)cnt < lim && pos <= a[0].n) {
        long ov[2];
        int r = cel_regex_search(ctx, re, a[0].u.s, a[0].n, pos, ov, 2, &err);
        int accept = 1;
        if (r < 0)
            return err;
        if (r == 0)
            break;
        if ((size_t)ov[1] == pos) {
            if (ov[0] == prev_end)
                accept = 0;
            if (pos < a[0].n)
                (void)lib_utf8_next(a[0].u.s, a[0].n, &pos);
            else
                pos++;
        } else {
            pos = (size_t)ov[1];
        }
        prev_end = ov[1];
        if (accept)
            items[cnt++] = cel_str(a[0].u.s + ov[0], (size_t)(ov[1] - ov[0]));
    }
    ((cel_list *)res.u.list)->n = cnt;
    return res;
}

/* Kubernetes charges find/findAll like matches:
 * ceil(0.1 * (1 + len(s))) * ceil(0.25 * len(regex)). */
static uint64_t cost_find(const cel_value *a, size_t n, cel_value r)
{
    uint64_t sl = cel_utf8_len(a[0].u.s, a[0].n), rl = cel_utf8_len(a[1].u.s, a[1].n);
    (void)n, (void)r;
    return cel_tenth(1 + sl) * ((rl + 3) / 4);
}

static const cel_overload regex_ovs[] = {
    {.id = "string_find_string", .name = "find", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"string", "string"}, .fn = r_find,
     .cost = cost_find},
    {.id = "string_find_all_string", .name = "findAll", .flags = CEL_OV_MEMBER,
     .result = "list(string)", .args = {"string", "string"}, .fn = r_find_all,
     .cost = cost_find},
    {.id = "string_find_all_string_int", .name = "findAll",
     .flags = CEL_OV_MEMBER, .result = "list(string)",
     .args = {"string", "string", "int"}, .fn = r_find_all, .cost = cost_find},
};

const cel_lib cel_lib_k8s_regex = {
    "kubernetes.regex", regex_ovs, sizeof regex_ovs / sizeof regex_ovs[0], NULL,
    0, lib_k8s_enabled};
