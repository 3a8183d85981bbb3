/*
 * lib_math.c: cel-go's ext.Math, enabled in the standard environment only
 * (Kubernetes does not enable it): math.greatest / math.least over
 * numbers of mixed kinds or a list, math.ceil/floor/round/trunc,
 * math.abs, math.sign, math.isNaN/isInf/isFinite and the bitwise
 * functions. cel-go makes greatest/least macros that turn three or more
 * arguments into a list; the engine's parser does the same, and the
 * overloads cover one and two arguments, three and four (dyn) and lists.
 */
#include <math.h>

#include "lib_common.h"

static int is_num(cel_value v)
{
    return v.kind == CEL_K_INT || v.kind == CEL_K_UINT || v.kind == CEL_K_DOUBLE;
}

/* want 1: keep the greater (ties keep the first), -1: the lesser. */
static cel_value pick(cel_ctx *ctx, const cel_value *v, size_t n, int want,
                      const char *name)
{
    cel_value r;
    if (n == 0)
        return cel_err(ctx, "%s(list) argument must not be empty", name);
    r = v[0];
    if (!is_num(r))
        return cel_err(ctx, "no such overload: %s", name);
    for (size_t i = 1; i < n; i++) {
        int c;
        if (!is_num(v[i]))
            return cel_err(ctx, "no such overload: %s", name);
        if (cel_value_compare(v[i], r, &c) == 0 && c == want)
            r = v[i];
    }
    return r;
}

static cel_value m_greatest(cel_ctx *ctx, const cel_value *a, size_t n)
{
    if (n == 1 && a[0].kind == CEL_K_LIST)
        return pick(ctx, a[0].u.list->v, a[0].u.list->n, 1, "math.@max");
    return pick(ctx, a, n, 1, "math.@max");
}

static cel_value m_least(cel_ctx *ctx, const cel_value *a, size_t n)
{
    if (n == 1 && a[0].kind == CEL_K_LIST)
        return pick(ctx, a[0].u.list->v, a[0].u.list->n, -1, "math.@min");
    return pick(ctx, a, n, -1, "math.@min");
}

static cel_value m_ceil(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_double(ceil(a[0].u.d));
}

static cel_value m_floor(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_double(floor(a[0].u.d));
}

static cel_value m_round(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_double(round(a[0].u.d)); /* half away from zero, as Go */
}

static cel_value m_trunc(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_double(trunc(a[0].u.d));
}

static cel_value m_abs(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    switch (a[0].kind) {
    case CEL_K_INT:
        if (a[0].u.i == INT64_MIN)
            return cel_err(c, "integer overflow");
        return cel_int(a[0].u.i < 0 ? -a[0].u.i : a[0].u.i);
    case CEL_K_UINT:
        return a[0];
    default:
        return cel_double(fabs(a[0].u.d));
    }
}

static cel_value m_sign(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    switch (a[0].kind) {
    case CEL_K_INT:
        return cel_int((a[0].u.i > 0) - (a[0].u.i < 0));
    case CEL_K_UINT:
        return cel_uint(a[0].u.u > 0);
    default:
        if (isnan(a[0].u.d))
            return a[0];
        return cel_double((a[0].u.d > 0) - (a[0].u.d < 0));
    }
}

static cel_value m_is_nan(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_bool(isnan(a[0].u.d));
}

static cel_value m_is_inf(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_bool(isinf(a[0].u.d));
}

static cel_value m_is_finite(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    return cel_bool(isfinite(a[0].u.d));
}

static cel_value m_bit(cel_ctx *c, const cel_value *a, char op)
{
    uint64_t x = a[0].u.u, y = a[1].u.u, r;
    (void)c;
    r = op == '&' ? (x & y) : op == '|' ? (x | y) : (x ^ y);
    if (a[0].kind == CEL_K_INT)
        return cel_int((int64_t)r);
    return cel_uint(r);
}

static cel_value m_and(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return m_bit(c, a, '&');
}

static cel_value m_or(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return m_bit(c, a, '|');
}

static cel_value m_xor(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return m_bit(c, a, '^');
}

static cel_value m_not(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)c, (void)n;
    if (a[0].kind == CEL_K_INT)
        return cel_int((int64_t)~a[0].u.u);
    return cel_uint(~a[0].u.u);
}

/* Shifts are logical on the 64-bit pattern; 64 or more gives 0. */
static cel_value m_shift(cel_ctx *c, const cel_value *a, int left, const char *name)
{
    uint64_t x = a[0].u.u, r;
    int64_t k = a[1].u.i;
    if (k < 0)
        return cel_err(c, "%s() negative offset: %lld", name, (long long)k);
    r = k >= 64 ? 0 : left ? x << k : x >> k;
    if (a[0].kind == CEL_K_INT)
        return cel_int((int64_t)r);
    return cel_uint(r);
}

static cel_value m_shl(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return m_shift(c, a, 1, "math.bitShiftLeft");
}

static cel_value m_shr(cel_ctx *c, const cel_value *a, size_t n)
{
    (void)n;
    return m_shift(c, a, 0, "math.bitShiftRight");
}

#define G1(ID, T, R) {.id = "math_@max_" ID, .name = "math.greatest", .result = R, \
                      .args = {T}, .fn = m_greatest},                              \
                     {.id = "math_@min_" ID, .name = "math.least", .result = R,    \
                      .args = {T}, .fn = m_least}
#define G2(ID, A, B, R) {.id = "math_@max_" ID, .name = "math.greatest", .result = R, \
                         .args = {A, B}, .fn = m_greatest},                           \
                        {.id = "math_@min_" ID, .name = "math.least", .result = R,    \
                         .args = {A, B}, .fn = m_least}
#define F1(ID, NAME, T, R, FN) {.id = ID, .name = NAME, .result = R, .args = {T}, .fn = FN}
#define F2(ID, NAME, A, B, R, FN) {.id = ID, .name = NAME, .result = R, .args = {A, B}, .fn = FN}

static const cel_overload math_ovs[] = {
    G1("int", "int", "int"), G1("uint", "uint", "uint"),
    G1("double", "double", "double"),
    G1("list_int", "list(int)", "int"), G1("list_uint", "list(uint)", "uint"),
    G1("list_double", "list(double)", "double"), G1("list_dyn", "list(dyn)", "dyn"),
    G2("int_int", "int", "int", "int"), G2("uint_uint", "uint", "uint", "uint"),
    G2("double_double", "double", "double", "double"),
    G2("int_uint", "int", "uint", "dyn"), G2("int_double", "int", "double", "dyn"),
    G2("uint_int", "uint", "int", "dyn"), G2("uint_double", "uint", "double", "dyn"),
    G2("double_int", "double", "int", "dyn"), G2("double_uint", "double", "uint", "dyn"),
    {.id = "math_@max_dyn_dyn_dyn", .name = "math.greatest", .result = "dyn",
     .args = {"dyn", "dyn", "dyn"}, .fn = m_greatest},
    {.id = "math_@min_dyn_dyn_dyn", .name = "math.least", .result = "dyn",
     .args = {"dyn", "dyn", "dyn"}, .fn = m_least},
    {.id = "math_@max_dyn_dyn_dyn_dyn", .name = "math.greatest", .result = "dyn",
     .args = {"dyn", "dyn", "dyn", "dyn"}, .fn = m_greatest},
    {.id = "math_@min_dyn_dyn_dyn_dyn", .name = "math.least", .result = "dyn",
     .args = {"dyn", "dyn", "dyn", "dyn"}, .fn = m_least},
    F1("math_ceil_double", "math.ceil", "double", "double", m_ceil),
    F1("math_floor_double", "math.floor", "double", "double", m_floor),
    F1("math_round_double", "math.round", "double", "double", m_round),
    F1("math_trunc_double", "math.trunc", "double", "double", m_trunc),
    F1("math_abs_int", "math.abs", "int", "int", m_abs),
    F1("math_abs_uint", "math.abs", "uint", "uint", m_abs),
    F1("math_abs_double", "math.abs", "double", "double", m_abs),
    F1("math_sign_int", "math.sign", "int", "int", m_sign),
    F1("math_sign_uint", "math.sign", "uint", "uint", m_sign),
    F1("math_sign_double", "math.sign", "double", "double", m_sign),
    F1("math_isNaN_double", "math.isNaN", "double", "bool", m_is_nan),
    F1("math_isInf_double", "math.isInf", "double", "bool", m_is_inf),
    F1("math_isFinite_double", "math.isFinite", "double", "bool", m_is_finite),
    F2("math_bitAnd_int_int", "math.bitAnd", "int", "int", "int", m_and),
    F2("math_bitAnd_uint_uint", "math.bitAnd", "uint", "uint", "uint", m_and),
    F2("math_bitOr_int_int", "math.bitOr", "int", "int", "int", m_or),
    F2("math_bitOr_uint_uint", "math.bitOr", "uint", "uint", "uint", m_or),
    F2("math_bitXor_int_int", "math.bitXor", "int", "int", "int", m_xor),
    F2("math_bitXor_uint_uint", "math.bitXor", "uint", "uint", "uint", m_xor),
    F1("math_bitNot_int_int", "math.bitNot", "int", "int", m_not),
    F1("math_bitNot_uint_uint", "math.bitNot", "uint", "uint", m_not),
    F2("math_bitShiftLeft_int_int", "math.bitShiftLeft", "int", "int", "int", m_shl),
    F2("math_bitShiftLeft_uint_int", "math.bitShiftLeft", "uint", "int", "uint", m_shl),
    F2("math_bitShiftRight_int_int", "math.bitShiftRight", "int", "int", "int", m_shr),
    F2("math_bitShiftRight_uint_int", "math.bitShiftRight", "uint", "int", "uint", m_shr),
};

static int math_enabled(const cel_env_info *info)
{
    return info->kind == CEL_ENV_STD;
}

const cel_lib cel_lib_math = {
    "cel.lib.ext.math", math_ovs, sizeof math_ovs / sizeof math_ovs[0], NULL, 0,
    math_enabled};
