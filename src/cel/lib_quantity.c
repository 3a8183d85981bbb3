/*
 * lib_quantity.c: the Kubernetes quantity library (apiserver
 * pkg/cel/library/quantity.go) over the codec's exact dra_quantity:
 * quantity(), isQuantity(), sign(), comparisons, add/sub with quantities
 * or ints, asInteger(), isInteger(), asApproximateFloat(). There are no
 * < > overloads on purpose: Kubernetes has none, so they fail to check.
 * Equality (==) between quantities is numeric and lives in value.c.
 */
#include "cel_int.h"
#include "lib_common.h"

/* resource.ParseQuantity's first test is this regular expression; inputs
 * that fail it get ErrFormatWrong, the rest ErrSuffix or ErrNumeric. */
static int quantity_shape_ok(const char *s, size_t n)
{
    size_t i = 0, d = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
        i++, d++;
    if (d == 0)
        return 0;
    while (i < n && s[i] && strchr("eEinumkKMGTP", s[i]))
        i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i == n;
}

const char *lib_quantity_parse_error(const char *s, size_t n)
{
    size_t i = 0;
    if (!quantity_shape_ok(s, n))
        return "quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    /* The shape is right, so the number or the suffix is wrong. A number
     * with two points is the numeric case; the rest is the suffix. */
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    {
        int dots = 0;
        for (; i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'); i++)
            dots += s[i] == '.';
        if (dots > 1)
            return "unable to parse numeric part of quantity";
    }
    return "unable to parse quantity's suffix";
}

static cel_value q_new(cel_ctx *ctx, const dra_quantity *q)
{
    return cel_quantity_new(ctx, q);
}

/* Kubernetes' regular expression first, then the exact parse: the shape
 * check keeps the library's answers Kubernetes' even where a decoder is
 * more lenient. */
static dra_err q_parse(const char *s, size_t n, dra_quantity *q)
{
    if (!quantity_shape_ok(s, n))
        return DRA_EPARSE;
    return dra_quantity_parse(s, n, q);
}

static cel_value q_from_string(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_quantity q;
    dra_err e = q_parse(a[0].u.s, a[0].n, &q);
    (void)n;
    if (e == DRA_ERANGE)
        return cel_err(ctx, "quantity is out of range");
    if (e != DRA_OK)
        return cel_err(ctx, "%s", lib_quantity_parse_error(a[0].u.s, a[0].n));
    return q_new(ctx, &q);
}

static cel_value q_is_quantity(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_quantity q;
    (void)ctx, (void)n;
    return cel_bool(q_parse(a[0].u.s, a[0].n, &q) == DRA_OK);
}

static cel_value q_sign(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(dra_quantity_sign(a[0].u.q));
}

static int q_cmp(const cel_value *a)
{
    int c = dra_quantity_cmp(a[0].u.q, a[1].u.q);
    return c < 0 ? -1 : c > 0;
}

static cel_value q_greater(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(q_cmp(a) == 1);
}

static cel_value q_less(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(q_cmp(a) == -1);
}

static cel_value q_compare(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_int(q_cmp(a));
}

static cel_value q_float(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_double(dra_quantity_to_double(a[0].u.q));
}

static cel_value q_is_integer(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)ctx, (void)n;
    return cel_bool(dra_quantity_is_integer(a[0].u.q));
}

static cel_value q_as_integer(cel_ctx *ctx, const cel_value *a, size_t n)
{
    int64_t v;
    (void)n;
    if (dra_quantity_to_int64(a[0].u.q, &v) != DRA_OK)
        return cel_err(ctx, "cannot convert value to integer");
    return cel_int(v);
}

/* Kubernetes adds and subtracts in arbitrary precision; a result that
 * does not fit the codec's 128-bit mantissa is reported, never wrapped. */
static cel_value q_arith(cel_ctx *ctx, const dra_quantity *x,
                         const dra_quantity *y, int sub)
{
    dra_quantity r;
    dra_err e = sub ? dra_quantity_sub(x, y, &r) : dra_quantity_add(x, y, &r);
    if (e != DRA_OK)
        return cel_err(ctx, "quantity overflow");
    return q_new(ctx, &r);
}

static cel_value q_add(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return q_arith(ctx, a[0].u.q, a[1].u.q, 0);
}

static cel_value q_sub(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return q_arith(ctx, a[0].u.q, a[1].u.q, 1);
}

static cel_value q_add_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_quantity y = dra_quantity_from_int64(a[1].u.i, DRA_QTY_DECIMAL_EXPONENT);
    (void)n;
    return q_arith(ctx, a[0].u.q, &y, 0);
}

static cel_value q_sub_int(cel_ctx *ctx, const cel_value *a, size_t n)
{
    dra_quantity y = dra_quantity_from_int64(a[1].u.i, DRA_QTY_DECIMAL_EXPONENT);
    (void)n;
    return q_arith(ctx, a[0].u.q, &y, 1);
}

#define QT "kubernetes.Quantity"
static const cel_overload quantity_ovs[] = {
    {.id = "string_to_quantity", .name = "quantity", .result = QT,
     .args = {"string"}, .fn = q_from_string},
    {.id = "is_quantity_string", .name = "isQuantity", .result = "bool",
     .args = {"string"}, .fn = q_is_quantity},
    /* Global on purpose: Kubernetes declares sign() as a global overload. */
    {.id = "quantity_sign", .name = "sign", .result = "int", .args = {QT},
     .fn = q_sign},
    {.id = "quantity_is_greater_than", .name = "isGreaterThan",
     .flags = CEL_OV_MEMBER, .result = "bool", .args = {QT, QT}, .fn = q_greater},
    {.id = "quantity_is_less_than", .name = "isLessThan", .flags = CEL_OV_MEMBER,
     .result = "bool", .args = {QT, QT}, .fn = q_less},
    {.id = "quantity_compare_to", .name = "compareTo", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {QT, QT}, .fn = q_compare},
    {.id = "quantity_get_float", .name = "asApproximateFloat",
     .flags = CEL_OV_MEMBER, .result = "double", .args = {QT}, .fn = q_float},
    {.id = "quantity_get_int", .name = "asInteger", .flags = CEL_OV_MEMBER,
     .result = "int", .args = {QT}, .fn = q_as_integer},
    {.id = "quantity_is_integer", .name = "isInteger", .flags = CEL_OV_MEMBER,
     .result = "bool", .args = {QT}, .fn = q_is_integer},
    {.id = "quantity_add", .name = "add", .flags = CEL_OV_MEMBER, .result = QT,
     .args = {QT, QT}, .fn = q_add},
    {.id = "quantity_add_int", .name = "add", .flags = CEL_OV_MEMBER,
     .result = QT, .args = {QT, "int"}, .fn = q_add_int},
    {.id = "quantity_sub", .name = "sub", .flags = CEL_OV_MEMBER, .result = QT,
     .args = {QT, QT}, .fn = q_sub},
    {.id = "quantity_sub_int", .name = "sub", .flags = CEL_OV_MEMBER,
     .result = QT, .args = {QT, "int"}, .fn = q_sub_int},
};

const cel_lib cel_lib_quantity = {
    "kubernetes.quantity", quantity_ovs,
    sizeof quantity_ovs / sizeof quantity_ovs[0], NULL, 0, lib_k8s_enabled};
