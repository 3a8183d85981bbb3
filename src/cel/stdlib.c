/*
 * stdlib.c: the CEL standard library as an overload table. Operators
 * whose |fn| is NULL are executed by dedicated VM instructions; they are
 * declared here so the checker knows their signatures. Functions carry
 * their C implementation and, where cel-go charges by size, a cost
 * function. Also the optional-value functions.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vm.h"


/* ---- size and strings ------------------------------------------------------- */

static cel_value f_size(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    switch (a[0].kind) {
    case CEL_K_STRING: return cel_int((int64_t)cel_value_size(a[0]));
    case CEL_K_BYTES: return cel_int(a[0].n);
    case CEL_K_LIST: return cel_int((int64_t)a[0].u.list->n);
    case CEL_K_MAP: return cel_int((int64_t)a[0].u.map->n);
    default: return cel_error_value(&cel_e_no_overload);
    }
}

/* Selector strings are short: candidate positions (bytes equal to the
 * needle's first) found eight at a time, each checked by an inline
 * compare, beat a library call. */
int cel_has_sub(const char *s, size_t n, const char *t, size_t m)
{
    size_t i = 0;
    if (m == 0)
        return 1;
    if (m > n)
        return 0;
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    {
        const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
        const uint64_t first = ones * (unsigned char)t[0];
        /* Positions i..i+7 all start a possible match. Bytes equal to
         * t[0] become zero in x; the zero-byte test may also flag a byte
         * above a true zero (borrow), never miss one: every hit is
         * verified. */
        for (; i + 8 <= n - m + 1; i += 8) {
            uint64_t w, x, hits;
            memcpy(&w, s + i, 8);
            x = w ^ first;
            for (hits = (x - ones) & ~x & high; hits; hits &= hits - 1)
                if (cel_bytes_eq(s + i + (unsigned)__builtin_ctzll(hits) / 8, t, m))
                    return 1;
        }
    }
#endif
    for (; i + m <= n; i++)
        if (s[i] == t[0] && cel_bytes_eq(s + i, t, m))
            return 1;
    return 0;
}

static cel_value f_contains(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return cel_bool(cel_has_sub(a[0].u.s, a[0].n, a[1].u.s, a[1].n));
}

static uint64_t c_contains(const cel_value *a, size_t n, cel_value r)
{
    (void)n;
    (void)r;
    uint64_t x = cel_tenth(cel_value_size(a[0])), y = cel_tenth(cel_value_size(a[1]));
    return x * y;
}

static cel_value f_starts(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return cel_bool(a[1].n <= a[0].n && !memcmp(a[0].u.s, a[1].u.s, a[1].n));
}

static cel_value f_ends(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return cel_bool(a[1].n <= a[0].n && !memcmp(a[0].u.s + a[0].n - a[1].n, a[1].u.s, a[1].n));
}

static uint64_t c_prefix(const cel_value *a, size_t n, cel_value r)
{
    (void)n;
    (void)r;
    uint64_t x = cel_tenth(cel_value_size(a[1]));
    return x ? x : 1;
}

static cel_value f_matches(cel_ctx *c, const cel_value *a, size_t n)
{
    cel_value err;
    const cel_regex *re = cel_regex_get(c, a[1].u.s, a[1].n, &err);
    (void)n;
    if (!re)
        return err;
    int r = cel_regex_matches(c, re, a[0].u.s, a[0].n, &err);
    return r < 0 ? err : cel_bool(r);
}

static uint64_t c_matches(const cel_value *a, size_t n, cel_value r)
{
    (void)n;
    (void)r;
    uint64_t s = cel_tenth(1 + cel_value_size(a[0]));
    uint64_t re = (cel_value_size(a[1]) + 3) / 4;
    return s * re;
}

/* ---- conversions -------------------------------------------------------------- */

static cel_value f_identity(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return a[0];
}

static cel_value range_err(cel_ctx *c)
{
    (void)c;
    return cel_error_value(&cel_e_range);
}

static int copy_cstr(const cel_value *v, char *buf, size_t size)
{
    if (v->n >= size || memchr(v->u.s, 0, v->n))
        return 0;
    memcpy(buf, v->u.s, v->n);
    buf[v->n] = 0;
    return 1;
}

static cel_value f_int(cel_ctx *c, const cel_value *a, size_t n)
{
    char buf[64], *end;
    (void)n;
    switch (a[0].kind) {
    case CEL_K_INT: return a[0];
    case CEL_K_UINT:
        if (a[0].u.u > (uint64_t)INT64_MAX)
            return range_err(c);
        return cel_int((int64_t)a[0].u.u);
    case CEL_K_DOUBLE:
        if (!(a[0].u.d > -9223372036854775808.0 && a[0].u.d < 9223372036854775808.0))
            return range_err(c);
        return cel_int((int64_t)a[0].u.d);
    case CEL_K_STRING:
        if (!copy_cstr(&a[0], buf, sizeof buf) || !a[0].n)
            return cel_err(c, "cannot convert string to int");
        errno = 0;
        {
            long long v = strtoll(buf, &end, 10);
            if (*end || errno || buf[0] == ' ' || buf[0] == '+')
                return cel_err(c, "cannot convert string to int");
            return cel_int(v);
        }
    default: return cel_error_value(&cel_e_no_overload);
    }
}

static cel_value f_uint(cel_ctx *c, const cel_value *a, size_t n)
{
    char buf[64], *end;
    (void)n;
    switch (a[0].kind) {
    case CEL_K_UINT: return a[0];
    case CEL_K_INT:
        if (a[0].u.i < 0)
            return range_err(c);
        return cel_uint((uint64_t)a[0].u.i);
    case CEL_K_DOUBLE:
        /* cel-go: negative (even -0.1) or beyond the uint range fails. */
        if (!(a[0].u.d >= 0 && a[0].u.d < 18446744073709551616.0))
            return range_err(c);
        return cel_uint((uint64_t)a[0].u.d);
    case CEL_K_STRING:
        if (!copy_cstr(&a[0], buf, sizeof buf) || !a[0].n || buf[0] == '-' || buf[0] == '+' ||
            buf[0] == ' ')
            return cel_err(c, "cannot convert string to uint");
        errno = 0;
        {
            unsigned long long v = strtoull(buf, &end, 10);
            if (*end || errno)
                return cel_err(c, "cannot convert string to uint");
            return cel_uint(v);
        }
    default: return cel_error_value(&cel_e_no_overload);
    }
}

/* Go's ParseFloat accepts '_' between digits ("1_000"); removes them in
 * place, 0 when one is misplaced. */
static int strip_underscores(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '_') {
            if (r == s || !isxdigit((unsigned char)r[-1]) || !isxdigit((unsigned char)r[1]))
                return 0;
            continue;
        }
        *w++ = *r;
    }
    *w = 0;
    return 1;
}

static cel_value f_double(cel_ctx *c, const cel_value *a, size_t n)
{
    char buf[512], *end;
    (void)n;
    switch (a[0].kind) {
    case CEL_K_DOUBLE: return a[0];
    case CEL_K_INT: return cel_double((double)a[0].u.i);
    case CEL_K_UINT: return cel_double((double)a[0].u.u);
    case CEL_K_STRING:
        /* Go's ParseFloat: no surrounding space, hex only with a p
         * exponent, out of range (1e400) is an error, underflow is not. */
        if (!copy_cstr(&a[0], buf, sizeof buf) || !a[0].n || isspace((unsigned char)buf[0]) ||
            ((strchr(buf, 'x') || strchr(buf, 'X')) && !strchr(buf, 'p') && !strchr(buf, 'P')))
            return cel_err(c, "cannot convert string to double");
        if (strchr(buf, '_') && !strip_underscores(buf))
            return cel_err(c, "cannot convert string to double");
        {
            double d;
            errno = 0;
            d = strtod(buf, &end);
            if (*end || (errno == ERANGE && isinf(d)))
                return cel_err(c, "cannot convert string to double");
            return cel_double(d);
        }
    default: return cel_error_value(&cel_e_no_overload);
    }
}

static cel_value f_string(cel_ctx *c, const cel_value *a, size_t n)
{
    char buf[64];
    (void)n;
    switch (a[0].kind) {
    case CEL_K_STRING: return a[0];
    case CEL_K_BOOL: return a[0].u.b ? cel_str("true", 4) : cel_str("false", 5);
    case CEL_K_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)a[0].u.i);
        return cel_str_new(c, buf, strlen(buf));
    case CEL_K_UINT:
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)a[0].u.u);
        return cel_str_new(c, buf, strlen(buf));
    case CEL_K_DOUBLE:
        cel_format_double(a[0].u.d, buf, sizeof buf);
        return cel_str_new(c, buf, strlen(buf));
    case CEL_K_BYTES:
        if (!cel_utf8_valid(a[0].u.s, a[0].n))
            return cel_err(c, "invalid UTF-8 in bytes, cannot convert to string");
        {
            cel_value v = a[0];
            v.kind = CEL_K_STRING;
            return v;
        }
    default: return cel_error_value(&cel_e_no_overload);
    }
}

static uint64_t c_convert_len(const cel_value *a, size_t n, cel_value r)
{
    (void)n;
    (void)r;
    if (a[0].kind == CEL_K_STRING || a[0].kind == CEL_K_BYTES) {
        uint64_t x = cel_tenth(cel_value_size(a[0]));
        return x ? x : 1;
    }
    return 1;
}

static cel_value f_bytes(cel_ctx *c, const cel_value *a, size_t n)
{
    cel_value v = a[0];
    (void)c;
    (void)n;
    v.kind = CEL_K_BYTES;
    v.flags = 0;
    return v;
}

static cel_value f_bool(cel_ctx *c, const cel_value *a, size_t n)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    (void)n;
    if (a[0].kind == CEL_K_BOOL)
        return a[0];
    for (size_t i = 0; i < 6; i++) {
        if (a[0].n == strlen(t[i]) && !memcmp(a[0].u.s, t[i], a[0].n))
            return cel_bool(1);
        if (a[0].n == strlen(f[i]) && !memcmp(a[0].u.s, f[i], a[0].n))
            return cel_bool(0);
    }
    return cel_err(c, "cannot convert string to bool");
}

static cel_value f_type(cel_ctx *c, const cel_value *a, size_t n)
{
    const cel_type *t = cel_value_type(a[0]);
    cel_type *nt;
    (void)n;
    if (t)
        return cel_type_value(t);
    nt = cel_alloc(c, sizeof *nt);
    if (!nt)
        return cel_error_value(&cel_e_nomem);
    memset(nt, 0, sizeof *nt);
    nt->kind = a[0].kind == CEL_K_OBJECT ? CEL_T_OBJECT : CEL_T_OPAQUE;
    nt->name = a[0].kind == CEL_K_OBJECT ? a[0].u.obj->type->name : a[0].u.op->type->name;
    return cel_type_value(nt);
}

/* ---- optionals ------------------------------------------------------------------ */

static cel_value f_opt_of(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return cel_optional_new(c, &a[0]);
}

static int is_zero(cel_value v)
{
    switch (v.kind) {
    case CEL_K_NULL: return 1;
    case CEL_K_BOOL: return !v.u.b;
    case CEL_K_INT: return v.u.i == 0;
    case CEL_K_UINT: return v.u.u == 0;
    case CEL_K_DOUBLE: return v.u.d == 0;
    case CEL_K_STRING:
    case CEL_K_BYTES: return v.n == 0;
    case CEL_K_LIST: return v.u.list->n == 0;
    case CEL_K_MAP: return v.u.map->n == 0;
    case CEL_K_DURATION: return v.u.i == 0;
    case CEL_K_TIMESTAMP: return v.u.i == 0 && v.n == 0;
    default: return 0;
    }
}

static cel_value f_opt_nonzero(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return cel_optional_new(c, is_zero(a[0]) ? NULL : &a[0]);
}

static cel_value f_opt_none(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)a;
    (void)n;
    return cel_optional_new(c, NULL);
}

static cel_value f_opt_has(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return cel_bool(a[0].u.opt != NULL);
}

static cel_value f_opt_value(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    if (!a[0].u.opt)
        return cel_err(c, "optional.none() dereference");
    return *a[0].u.opt;
}

static cel_value f_opt_or(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return a[0].u.opt ? a[0] : a[1];
}

static cel_value f_opt_or_value(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c;
    (void)n;
    return a[0].u.opt ? *a[0].u.opt : a[1];
}

/* ---- ext.Encoders: base64 (conformance environment only) ----------------------------- */

static cel_value f_b64_encode(cel_ctx *c, const cel_value *a, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)a[0].u.s;
    size_t len = a[0].n, k = 0;
    char *o = cel_alloc(c, (len + 2) / 3 * 4 + 1);
    (void)n;
    if (!o)
        return cel_error_value(&cel_e_nomem);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < len ? (uint32_t)s[i + 1] << 8 : 0) |
                     (i + 2 < len ? s[i + 2] : 0);
        o[k++] = tab[v >> 18 & 63];
        o[k++] = tab[v >> 12 & 63];
        o[k++] = i + 1 < len ? tab[v >> 6 & 63] : '=';
        o[k++] = i + 2 < len ? tab[v & 63] : '=';
    }
    return cel_str(o, k);
}

static int b64v(char ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+') return 62;
    if (ch == '/') return 63;
    return -1;
}

/* Standard alphabet; padding optional, as cel-go accepts both. */
static cel_value f_b64_decode(cel_ctx *c, const cel_value *a, size_t n)
{
    size_t len = a[0].n, k = 0;
    uint32_t acc = 0;
    int bits = 0;
    char *o = cel_alloc(c, len + 1);
    (void)n;
    if (!o)
        return cel_error_value(&cel_e_nomem);
    while (len && a[0].u.s[len - 1] == '=')
        len--;
    if (len % 4 == 1 || a[0].n - len > 2)
        return cel_err(c, "illegal base64 data at input byte %zu", len);
    for (size_t i = 0; i < len; i++) {
        int v = b64v(a[0].u.s[i]);
        if (v < 0)
            return cel_err(c, "illegal base64 data at input byte %zu", i);
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (char)(acc >> bits & 0xFF);
        }
    }
    return cel_bytes(o, k);
}

static const cel_overload enc_ovs[] = {
    {"base64_encode_bytes", "base64.encode", 0, "string", {"bytes"}, f_b64_encode, NULL, NULL},
    {"base64_decode_string", "base64.decode", 0, "bytes", {"string"}, f_b64_decode, NULL, NULL},
};

static int std_only(const cel_env_info *info)
{
    return info->kind == CEL_ENV_STD;
}

const cel_lib cel_lib_encoders = {"ext.encoders", enc_ovs, sizeof enc_ovs / sizeof enc_ovs[0],
                                  NULL, 0, std_only};

/* ---- the table -------------------------------------------------------------------- */

#define OP(id, name, res, a0, a1) {id, name, 0, res, {a0, a1, NULL, NULL}, NULL, NULL, NULL}
#define OP1(id, name, res, a0) {id, name, 0, res, {a0, NULL, NULL, NULL}, NULL, NULL, NULL}
#define FN(id, name, fl, res, a0, a1, fn, cost) \
    {id, name, fl, res, {a0, a1, NULL, NULL}, fn, cost, NULL}
#define M CEL_OV_MEMBER
#define CMP(id, nm)                                                        \
    OP(id "_bool", nm, "bool", "bool", "bool"),                            \
    OP(id "_int64", nm, "bool", "int", "int"),                             \
    OP(id "_uint64", nm, "bool", "uint", "uint"),                          \
    OP(id "_double", nm, "bool", "double", "double"),                      \
    OP(id "_string", nm, "bool", "string", "string"),                      \
    OP(id "_bytes", nm, "bool", "bytes", "bytes"),                         \
    OP(id "_timestamp", nm, "bool", "timestamp", "timestamp"),             \
    OP(id "_duration", nm, "bool", "duration", "duration"),                \
    OP(id "_int64_uint64", nm, "bool", "int", "uint"),                     \
    OP(id "_int64_double", nm, "bool", "int", "double"),                   \
    OP(id "_uint64_int64", nm, "bool", "uint", "int"),                     \
    OP(id "_uint64_double", nm, "bool", "uint", "double"),                 \
    OP(id "_double_int64", nm, "bool", "double", "int"),                   \
    OP(id "_double_uint64", nm, "bool", "double", "uint")

static const cel_overload std_ovs[] = {
    OP("add_int64", "_+_", "int", "int", "int"),
    OP("add_uint64", "_+_", "uint", "uint", "uint"),
    OP("add_double", "_+_", "double", "double", "double"),
    OP("add_string", "_+_", "string", "string", "string"),
    OP("add_bytes", "_+_", "bytes", "bytes", "bytes"),
    OP("add_list", "_+_", "list(A)", "list(A)", "list(A)"),
    OP("subtract_int64", "_-_", "int", "int", "int"),
    OP("subtract_uint64", "_-_", "uint", "uint", "uint"),
    OP("subtract_double", "_-_", "double", "double", "double"),
    OP("multiply_int64", "_*_", "int", "int", "int"),
    OP("multiply_uint64", "_*_", "uint", "uint", "uint"),
    OP("multiply_double", "_*_", "double", "double", "double"),
    OP("divide_int64", "_/_", "int", "int", "int"),
    OP("divide_uint64", "_/_", "uint", "uint", "uint"),
    OP("divide_double", "_/_", "double", "double", "double"),
    OP("modulo_int64", "_%_", "int", "int", "int"),
    OP("modulo_uint64", "_%_", "uint", "uint", "uint"),
    OP1("negate_int64", "-_", "int", "int"),
    OP1("negate_double", "-_", "double", "double"),
    OP1("logical_not", "!_", "bool", "bool"),
    CMP("less", "_<_"),
    CMP("less_equals", "_<=_"),
    CMP("greater", "_>_"),
    CMP("greater_equals", "_>=_"),
    FN("size_string", "size", 0, "int", "string", NULL, f_size, NULL),
    FN("size_bytes", "size", 0, "int", "bytes", NULL, f_size, NULL),
    FN("size_list", "size", 0, "int", "list(A)", NULL, f_size, NULL),
    FN("size_map", "size", 0, "int", "map(K, V)", NULL, f_size, NULL),
    FN("string_size", "size", M, "int", "string", NULL, f_size, NULL),
    FN("bytes_size", "size", M, "int", "bytes", NULL, f_size, NULL),
    FN("list_size", "size", M, "int", "list(A)", NULL, f_size, NULL),
    FN("map_size", "size", M, "int", "map(K, V)", NULL, f_size, NULL),
    FN("contains_string", "contains", M, "bool", "string", "string", f_contains, c_contains),
    FN("starts_with_string", "startsWith", M, "bool", "string", "string", f_starts, c_prefix),
    FN("ends_with_string", "endsWith", M, "bool", "string", "string", f_ends, c_prefix),
    FN("matches_string", "matches", M, "bool", "string", "string", f_matches, c_matches),
    FN("matches", "matches", 0, "bool", "string", "string", f_matches, c_matches),
    FN("int64_to_int64", "int", 0, "int", "int", NULL, f_int, NULL),
    FN("uint64_to_int64", "int", 0, "int", "uint", NULL, f_int, NULL),
    FN("double_to_int64", "int", 0, "int", "double", NULL, f_int, NULL),
    FN("string_to_int64", "int", 0, "int", "string", NULL, f_int, NULL),
    FN("uint64_to_uint64", "uint", 0, "uint", "uint", NULL, f_uint, NULL),
    FN("int64_to_uint64", "uint", 0, "uint", "int", NULL, f_uint, NULL),
    FN("double_to_uint64", "uint", 0, "uint", "double", NULL, f_uint, NULL),
    FN("string_to_uint64", "uint", 0, "uint", "string", NULL, f_uint, NULL),
    FN("double_to_double", "double", 0, "double", "double", NULL, f_double, NULL),
    FN("int64_to_double", "double", 0, "double", "int", NULL, f_double, NULL),
    FN("uint64_to_double", "double", 0, "double", "uint", NULL, f_double, NULL),
    FN("string_to_double", "double", 0, "double", "string", NULL, f_double, NULL),
    FN("string_to_string", "string", 0, "string", "string", NULL, f_string, NULL),
    FN("bool_to_string", "string", 0, "string", "bool", NULL, f_string, NULL),
    FN("int64_to_string", "string", 0, "string", "int", NULL, f_string, NULL),
    FN("uint64_to_string", "string", 0, "string", "uint", NULL, f_string, NULL),
    FN("double_to_string", "string", 0, "string", "double", NULL, f_string, NULL),
    FN("bytes_to_string", "string", 0, "string", "bytes", NULL, f_string, c_convert_len),
    FN("bytes_to_bytes", "bytes", 0, "bytes", "bytes", NULL, f_identity, NULL),
    FN("string_to_bytes", "bytes", 0, "bytes", "string", NULL, f_bytes, c_convert_len),
    FN("bool_to_bool", "bool", 0, "bool", "bool", NULL, f_bool, NULL),
    FN("string_to_bool", "bool", 0, "bool", "string", NULL, f_bool, NULL),
    FN("to_dyn", "dyn", 0, "dyn", "A", NULL, f_identity, NULL),
    FN("type", "type", 0, "type(A)", "A", NULL, f_type, NULL),
    FN("timestamp_to_timestamp", "timestamp", 0, "timestamp", "timestamp", NULL, f_identity,
       NULL),
    FN("duration_to_duration", "duration", 0, "duration", "duration", NULL, f_identity, NULL),
    FN("optional_of", "optional.of", 0, "optional_type(A)", "A", NULL, f_opt_of, NULL),
    FN("optional_ofNonZeroValue", "optional.ofNonZeroValue", 0, "optional_type(A)", "A", NULL,
       f_opt_nonzero, NULL),
    {"optional_none", "optional.none", 0, "optional_type(dyn)", {NULL}, f_opt_none, NULL,
     NULL},
    FN("optional_hasValue", "hasValue", M, "bool", "optional_type(A)", NULL, f_opt_has, NULL),
    FN("optional_value", "value", M, "A", "optional_type(A)", NULL, f_opt_value, NULL),
    FN("optional_or_optional", "or", M, "optional_type(A)", "optional_type(A)",
       "optional_type(A)", f_opt_or, NULL),
    FN("optional_orValue_value", "orValue", M, "A", "optional_type(A)", "A", f_opt_or_value,
       NULL),
};

const cel_lib cel_lib_std = {"std", std_ovs, sizeof std_ovs / sizeof std_ovs[0], NULL, 0, NULL};
