/*
 * lib_strings.c: cel-go's ext.Strings. Version 0: charAt, indexOf,
 * lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim;
 * version 1: strings.quote (format lives in lib_format.c); version 2:
 * join; version 3: reverse. Indexes count code points; behaviour and
 * error texts follow cel-go (which follows Go's strings package).
 */
#define _GNU_SOURCE /* memmem: linear-time substring search */
#include <math.h>
#include <string.h>

#include "lib_common.h"
#include "vm.h"

/* Decodes |v| (a string) into code points in the scratch arena. */
static uint32_t *runes_of(cel_ctx *ctx, cel_value v, size_t *n)
{
    uint32_t *r = cel_alloc(ctx, ((size_t)v.n + 1) * sizeof *r);
    size_t i = 0, k = 0;
    if (!r)
        return NULL;
    while (i < v.n)
        r[k++] = lib_utf8_next(v.u.s, v.n, &i);
    *n = k;
    return r;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static cel_value nomem(void)
{
    return cel_error_value(&cel_e_nomem);
}

static cel_value out_of_range(cel_ctx *ctx, int64_t i)
{
    return cel_err(ctx, "index out of range: %lld", (long long)i);
}

/* The substring of |s| between code points [from, to). */
static cel_value sub_cp(cel_value s, size_t from, size_t to)
{
    size_t a = lib_utf8_offset(s.u.s, s.n, from);
    size_t b = a + lib_utf8_offset(s.u.s + a, s.n - a, to - from);
    return cel_str(s.u.s + a, b - a);
}

static cel_value s_char_at(cel_ctx *ctx, const cel_value *a, size_t n)
{
    size_t len = cel_utf8_len(a[0].u.s, a[0].n);
    int64_t i = a[1].u.i;
    (void)n;
    if (i < 0 || (uint64_t)i > len)
        return out_of_range(ctx, i);
    if ((uint64_t)i == len)
        return cel_str("", 0);
    return sub_cp(a[0], (size_t)i, (size_t)i + 1);
}

/* Substring search works on the UTF-8 bytes: in valid UTF-8 a byte match
 * of a whole needle always starts on a code point boundary, and memmem
 * and the KMP scan below are linear, so a long hostile needle cannot make
 * a call quadratic before its cost is charged. */
static size_t cp_count(const char *s, size_t len)
{
    return cel_utf8_len(s, len);
}

static cel_value index_of(cel_ctx *ctx, cel_value s, cel_value sub, int64_t off)
{
    size_t n, start;
    const char *p;
    if (sub.n == 0)
        return cel_int(off);
    n = cp_count(s.u.s, s.n);
    if (off < 0 || (uint64_t)off >= n)
        return out_of_range(ctx, off);
    start = lib_utf8_offset(s.u.s, s.n, (size_t)off);
    p = memmem(s.u.s + start, s.n - start, sub.u.s, sub.n);
    if (!p)
        return cel_int(-1);
    return cel_int(off + (int64_t)cp_count(s.u.s + start, (size_t)(p - s.u.s) - start));
}

/* Start (bytes) of the last match of |sub| beginning at or before byte
 * |limit|, or -1. One KMP pass over the haystack. */
static long last_match(cel_ctx *ctx, cel_value s, cel_value sub, size_t limit)
{
    size_t m = sub.n, k = 0;
    long best = -1;
    size_t *fail = cel_alloc(ctx, m * sizeof *fail);
    if (!fail)
        return -2;
    fail[0] = 0;
    for (size_t i = 1; i < m; i++) {
        while (k > 0 && sub.u.s[i] != sub.u.s[k])
            k = fail[k - 1];
        if (sub.u.s[i] == sub.u.s[k])
            k++;
        fail[i] = k;
    }
    k = 0;
    for (size_t i = 0; i < s.n && i < limit + m; i++) {
        while (k > 0 && s.u.s[i] != sub.u.s[k])
            k = fail[k - 1];
        if (s.u.s[i] == sub.u.s[k])
            k++;
        if (k == m) {
            size_t st = i + 1 - m;
            if (st <= limit)
                best = (long)st;
            k = fail[k - 1];
        }
    }
    return best;
}

static cel_value last_index_of(cel_ctx *ctx, cel_value s, cel_value sub,
                               int64_t off)
{
    size_t n, m;
    long at;
    if (sub.n == 0)
        return cel_int(off);
    n = cp_count(s.u.s, s.n);
    m = cp_count(sub.u.s, sub.n);
    if (off < 0 || (uint64_t)off >= n)
        return out_of_range(ctx, off);
    if (off > (int64_t)n - (int64_t)m)
        off = (int64_t)n - (int64_t)m;
    if (off < 0)
        return cel_int(-1);
    at = last_match(ctx, s, sub, lib_utf8_offset(s.u.s, s.n, (size_t)off));
    if (at == -2)
        return nomem();
    if (at < 0)
        return cel_int(-1);
    return cel_int((int64_t)cp_count(s.u.s, (size_t)at));
}

static cel_value s_index_of(cel_ctx *ctx, const cel_value *a, size_t n)
{
    /* Without an offset a needle longer than the haystack (including any
     * needle in "") is simply not found, as cel-go's conformance expects. */
    if (n <= 2 && a[1].n > 0 &&
        cel_utf8_len(a[1].u.s, a[1].n) > cel_utf8_len(a[0].u.s, a[0].n))
        return cel_int(-1);
    return index_of(ctx, a[0], a[1], n > 2 ? a[2].u.i : 0);
}

static cel_value s_last_index_of(cel_ctx *ctx, const cel_value *a, size_t n)
{
    if (n > 2)
        return last_index_of(ctx, a[0], a[1], a[2].u.i);
    if (a[1].n == 0)
        return cel_int((int64_t)cel_utf8_len(a[0].u.s, a[0].n));
    if (cel_utf8_len(a[1].u.s, a[1].n) > cel_utf8_len(a[0].u.s, a[0].n))
        return cel_int(-1);
    return last_index_of(ctx, a[0], a[1],
                         (int64_t)cel_utf8_len(a[0].u.s, a[0].n) - 1);
}

/* Bit 0x20 of every byte of |x| that is in [lo, hi] (ASCII letters of
 * one case), eight bytes at a time: bit 7 is cleared first so that the
 * per-byte additions cannot carry into the next byte. */
static uint64_t case_bits(uint64_t x, unsigned lo, unsigned hi)
{
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    uint64_t t = x & ~high;
    uint64_t ge = t + ones * (0x80u - lo), gt = t + ones * (0x80u - hi - 1u);
    return (ge & ~gt & ~x & high) >> 2;
}

void cel_ascii_case_copy(const char *s, size_t n, char *o, int upper)
{
    unsigned lo = upper ? 'a' : 'A', hi = upper ? 'z' : 'Z';
    size_t i = 0;
    uint64_t w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        w ^= case_bits(w, lo, hi);
        memcpy(o + i, &w, 8);
    }
    for (; i < n; i++)
        o[i] = (char)((unsigned char)s[i] >= lo && (unsigned char)s[i] <= hi ? s[i] ^ 32 : s[i]);
}

/* Converts the ASCII letters of |s| to one case. A string with nothing to
 * convert is returned as is (borrowed: it outlives the result), so the
 * common already-lower-case selector input costs a scan and no copy.
 * Changing ASCII case keeps the code-point count, so the result keeps
 * the input's CEL_VF_CPLEN count for the cost tracker. */
static cel_value ascii_case(cel_ctx *ctx, cel_value s, int upper)
{
    unsigned lo = upper ? 'a' : 'A', hi = upper ? 'z' : 'Z';
    size_t i = 0, n = s.n;
    uint64_t w;
    char *o;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s.u.s + i, 8);
        if (case_bits(w, lo, hi))
            break;
    }
    if (i + 8 > n) {
        while (i < n && ((unsigned char)s.u.s[i] < lo || (unsigned char)s.u.s[i] > hi))
            i++;
        if (i == n)
            return s;
    }
    o = cel_alloc(ctx, (size_t)n + 1);
    if (!o)
        return nomem();
    memcpy(o, s.u.s, i);
    cel_ascii_case_copy(s.u.s + i, n - i, o + i, upper);
    o[n] = '\0';
    cel_value r = cel_str(o, s.n);
    r.flags = (uint8_t)(s.flags & CEL_VF_CPLEN);
    r.pad = s.pad;
    return r;
}

static cel_value s_lower(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return ascii_case(ctx, a[0], 0);
}

static cel_value s_upper(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return ascii_case(ctx, a[0], 1);
}

/* Go's strings.Index on byte strings (linear: glibc's two-way memmem). */
static const char *find_bytes(const char *s, size_t n, const char *sub, size_t m)
{
    if (m == 0)
        return s;
    return memmem(s, n, sub, m);
}

static size_t count_bytes(const char *s, size_t n, const char *sub, size_t m)
{
    size_t c = 0;
    const char *p;
    if (m == 0)
        return cel_utf8_len(s, n) + 1;
    while ((p = find_bytes(s, n, sub, m)) != NULL) {
        c++;
        n -= (size_t)(p - s) + m;
        s = p + m;
    }
    return c;
}

/* Go's strings.Replace(s, old, new, n). */
static cel_value replace_n(cel_ctx *ctx, cel_value s, cel_value old, cel_value nw,
                           int64_t lim)
{
    size_t m, start = 0, o = 0;
    uint64_t size;
    char *out;
    if ((old.n == nw.n && memcmp(old.u.s, nw.u.s, old.n) == 0) || lim == 0)
        return s;
    m = count_bytes(s.u.s, s.n, old.u.s, old.n);
    if (m == 0)
        return s;
    if (lim < 0 || (uint64_t)lim > m)
        lim = (int64_t)m;
    size = (uint64_t)s.n + (uint64_t)lim * nw.n;
    if (size > UINT32_MAX || !(out = cel_alloc(ctx, (size_t)size + 1)))
        return nomem();
    for (int64_t i = 0; i < lim; i++) {
        size_t j = start;
        if (old.n == 0) {
            if (i > 0)
                (void)lib_utf8_next(s.u.s, s.n, &j);
        } else {
            j = (size_t)(find_bytes(s.u.s + start, s.n - start, old.u.s, old.n) - s.u.s);
        }
        memcpy(out + o, s.u.s + start, j - start);
        o += j - start;
        memcpy(out + o, nw.u.s, nw.n);
        o += nw.n;
        start = j + old.n;
    }
    memcpy(out + o, s.u.s + start, s.n - start);
    o += s.n - start;
    return cel_str(out, o);
}

static cel_value s_replace(cel_ctx *ctx, const cel_value *a, size_t n)
{
    return replace_n(ctx, a[0], a[1], a[2], n > 3 ? a[3].u.i : -1);
}

/* Go's strings.SplitN(s, sep, n). */
static cel_value split_n(cel_ctx *ctx, cel_value s, cel_value sep, int64_t lim)
{
    cel_value r, *items;
    size_t i = 0, pos = 0;
    if (lim == 0)
        return cel_list_new(ctx, 0, &items);
    if (sep.n == 0) { /* explode into code points */
        size_t l = cel_utf8_len(s.u.s, s.n);
        if (lim < 0 || (uint64_t)lim > l)
            lim = (int64_t)l;
        r = cel_list_new(ctx, (size_t)lim, &items);
        if (r.kind != CEL_K_LIST)
            return r;
        for (i = 0; lim > 0 && i + 1 < (size_t)lim; i++) {
            size_t st = pos;
            (void)lib_utf8_next(s.u.s, s.n, &pos);
            items[i] = cel_str(s.u.s + st, pos - st);
        }
        if (lim > 0)
            items[lim - 1] = cel_str(s.u.s + pos, s.n - pos);
        return r;
    }
    if (lim < 0)
        lim = (int64_t)count_bytes(s.u.s, s.n, sep.u.s, sep.n) + 1;
    if ((uint64_t)lim > (uint64_t)s.n + 1)
        lim = (int64_t)s.n + 1;
    r = cel_list_new(ctx, (size_t)lim, &items);
    if (r.kind != CEL_K_LIST)
        return r;
    while (i + 1 < (size_t)lim) {
        const char *p = find_bytes(s.u.s + pos, s.n - pos, sep.u.s, sep.n);
        if (!p)
            break;
        items[i++] = cel_str(s.u.s + pos, (size_t)(p - (s.u.s + pos)));
        pos = (size_t)(p - s.u.s) + sep.n;
    }
    items[i++] = cel_str(s.u.s + pos, s.n - pos);
    ((cel_list *)r.u.list)->n = i;
    return r;
}

static cel_value s_split(cel_ctx *ctx, const cel_value *a, size_t n)
{
    return split_n(ctx, a[0], a[1], n > 2 ? a[2].u.i : -1);
}

static cel_value s_substring(cel_ctx *ctx, const cel_value *a, size_t n)
{
    size_t len = cel_utf8_len(a[0].u.s, a[0].n);
    int64_t st = a[1].u.i, en = n > 2 ? a[2].u.i : (int64_t)len;
    if (n > 2 && st > en)
        return cel_err(ctx, "invalid substring range. start: %lld, end: %lld",
                       (long long)st, (long long)en);
    if (st < 0 || (uint64_t)st > len)
        return out_of_range(ctx, st);
    if (en < 0 || (uint64_t)en > len)
        return out_of_range(ctx, en);
    return sub_cp(a[0], (size_t)st, (size_t)en);
}

/* Go's unicode.IsSpace. */
static int is_space(uint32_t c)
{
    switch (c) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
        return 1;
    default:
        return c >= 0x2000 && c <= 0x200A;
    }
}

static cel_value s_trim(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const char *s = a[0].u.s;
    size_t len = a[0].n, b = 0, e = len;
    (void)ctx, (void)n;
    while (b < len) {
        size_t j = b;
        if (!is_space(lib_utf8_next(s, len, &j)))
            break;
        b = j;
    }
    while (e > b) {
        size_t st = e - 1, j;
        while (st > b && ((unsigned char)s[st] & 0xC0) == 0x80)
            st--;
        j = st;
        if (!is_space(lib_utf8_next(s, len, &j)))
            break;
        e = st;
    }
    return cel_str(s + b, e - b);
}

static cel_value s_quote(cel_ctx *ctx, const cel_value *a, size_t n)
{
    const char *s = a[0].u.s;
    char *out = cel_alloc(ctx, (size_t)a[0].n * 2 + 3);
    size_t o = 0;
    (void)n;
    if (!out)
        return nomem();
    out[o++] = '"';
    for (size_t i = 0; i < a[0].n; i++) {
        static const char from[] = "\a\b\f\n\r\t\v\\\"", to[] = "abfnrtv\\\"";
        const char *p = s[i] ? strchr(from, s[i]) : NULL;
        if (p) {
            out[o++] = '\\';
            out[o++] = to[p - from];
        } else {
            out[o++] = s[i];
        }
    }
    out[o++] = '"';
    return cel_str(out, o);
}

static cel_value join(cel_ctx *ctx, const cel_list *l, cel_value sep)
{
    uint64_t size = 0;
    char *out;
    size_t o = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].kind != CEL_K_STRING)
            return cel_err(ctx, "type conversion error from '%s' to 'string'",
                           cel_kind_name((cel_kind)l->v[i].kind));
        size += l->v[i].n + (i ? sep.n : 0);
    }
    if (size > UINT32_MAX || !(out = cel_alloc(ctx, (size_t)size + 1)))
        return nomem();
    for (size_t i = 0; i < l->n; i++) {
        if (i && sep.n) {
            memcpy(out + o, sep.u.s, sep.n);
            o += sep.n;
        }
        if (l->v[i].n)
            memcpy(out + o, l->v[i].u.s, l->v[i].n);
        o += l->v[i].n;
    }
    return cel_str(out, o);
}

static cel_value s_join(cel_ctx *ctx, const cel_value *a, size_t n)
{
    return join(ctx, a[0].u.list, n > 1 ? a[1] : cel_str("", 0));
}

static cel_value s_reverse(cel_ctx *ctx, const cel_value *a, size_t n)
{
    uint32_t *r;
    size_t cnt, o = 0;
    char *out;
    (void)n;
    if (!(r = runes_of(ctx, a[0], &cnt)) || !(out = cel_alloc(ctx, (size_t)a[0].n + 1)))
        return nomem();
    for (size_t i = cnt; i-- > 0;)
        o += put_utf8(out + o, r[i]);
    return cel_str(out, o);
}

/* ---- costs (Kubernetes library/cost.go) ---------------------------------- */

static uint64_t cost_traverse(const cel_value *a, size_t n, cel_value r)
{
    (void)n, (void)r;
    return cel_tenth(cel_value_size(a[0]));
}

static uint64_t cost_traverse2(const cel_value *a, size_t n, cel_value r)
{
    (void)n, (void)r;
    return cel_tenth(2 * (uint64_t)cel_utf8_len(a[0].u.s, a[0].n));
}

static uint64_t cost_join(const cel_value *a, size_t n, cel_value r)
{
    (void)a, (void)n;
    return r.kind == CEL_K_STRING ? cel_tenth(2 * (uint64_t)cel_utf8_len(r.u.s, r.n)) : 1;
}

#define M CEL_OV_MEMBER
static const cel_overload strings_v0_ovs[] = {
    {.id = "string_char_at_int", .name = "charAt", .flags = M, .result = "string",
     .args = {"string", "int"}, .fn = s_char_at},
    {.id = "string_index_of_string", .name = "indexOf", .flags = M,
     .result = "int", .args = {"string", "string"}, .fn = s_index_of,
     .cost = cost_traverse},
    {.id = "string_index_of_string_int", .name = "indexOf", .flags = M,
     .result = "int", .args = {"string", "string", "int"}, .fn = s_index_of,
     .cost = cost_traverse},
    {.id = "string_last_index_of_string", .name = "lastIndexOf", .flags = M,
     .result = "int", .args = {"string", "string"}, .fn = s_last_index_of,
     .cost = cost_traverse},
    {.id = "string_last_index_of_string_int", .name = "lastIndexOf", .flags = M,
     .result = "int", .args = {"string", "string", "int"}, .fn = s_last_index_of,
     .cost = cost_traverse},
    {.id = "string_lower_ascii", .name = "lowerAscii", .flags = M,
     .result = "string", .args = {"string"}, .fn = s_lower, .cost = cost_traverse},
    {.id = "string_replace_string_string", .name = "replace", .flags = M,
     .result = "string", .args = {"string", "string", "string"}, .fn = s_replace,
     .cost = cost_traverse2},
    {.id = "string_replace_string_string_int", .name = "replace", .flags = M,
     .result = "string", .args = {"string", "string", "string", "int"},
     .fn = s_replace, .cost = cost_traverse2},
    {.id = "string_split_string", .name = "split", .flags = M,
     .result = "list(string)", .args = {"string", "string"}, .fn = s_split,
     .cost = cost_traverse2},
    {.id = "string_split_string_int", .name = "split", .flags = M,
     .result = "list(string)", .args = {"string", "string", "int"},
     .fn = s_split, .cost = cost_traverse2},
    {.id = "string_substring_int", .name = "substring", .flags = M,
     .result = "string", .args = {"string", "int"}, .fn = s_substring,
     .cost = cost_traverse},
    {.id = "string_substring_int_int", .name = "substring", .flags = M,
     .result = "string", .args = {"string", "int", "int"}, .fn = s_substring,
     .cost = cost_traverse},
    {.id = "string_trim", .name = "trim", .flags = M, .result = "string",
     .args = {"string"}, .fn = s_trim, .cost = cost_traverse},
    {.id = "string_upper_ascii", .name = "upperAscii", .flags = M,
     .result = "string", .args = {"string"}, .fn = s_upper, .cost = cost_traverse},
};
static const cel_overload strings_v1_ovs[] = {
    {.id = "strings_quote", .name = "strings.quote", .result = "string",
     .args = {"string"}, .fn = s_quote, .cost = cost_traverse},
};
static const cel_overload strings_v2_ovs[] = {
    {.id = "list_join", .name = "join", .flags = M, .result = "string",
     .args = {"list(string)"}, .fn = s_join, .cost = cost_join},
    {.id = "list_join_string", .name = "join", .flags = M, .result = "string",
     .args = {"list(string)", "string"}, .fn = s_join, .cost = cost_join},
};
static const cel_overload strings_v3_ovs[] = {
    {.id = "string_reverse", .name = "reverse", .flags = M, .result = "string",
     .args = {"string"}, .fn = s_reverse, .cost = cost_traverse},
};
#undef M

static int strings_v1(const cel_env_info *info)
{
    return lib_strings_version(info) >= 1;
}

static int strings_v2(const cel_env_info *info)
{
    return lib_strings_version(info) >= 2;
}

static int strings_v3(const cel_env_info *info)
{
    return lib_strings_version(info) >= 3;
}

const cel_lib cel_lib_strings = {
    "cel.lib.ext.strings", strings_v0_ovs,
    sizeof strings_v0_ovs / sizeof strings_v0_ovs[0], NULL, 0, NULL};
const cel_lib cel_lib_strings_v1 = {
    "cel.lib.ext.strings.v1", strings_v1_ovs,
    sizeof strings_v1_ovs / sizeof strings_v1_ovs[0], NULL, 0, strings_v1};
const cel_lib cel_lib_strings_v2 = {
    "cel.lib.ext.strings.v2", strings_v2_ovs,
    sizeof strings_v2_ovs / sizeof strings_v2_ovs[0], NULL, 0, strings_v2};
const cel_lib cel_lib_strings_v3 = {
    "cel.lib.ext.strings.v3", strings_v3_ovs,
    sizeof strings_v3_ovs / sizeof strings_v3_ovs[0], NULL, 0, strings_v3};
