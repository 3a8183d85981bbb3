/*
 * value.c: CEL values. Equality and ordering (numbers on one number line
 * across int/uint/double), map-key hashing compatible with that equality,
 * map lookup, UTF-8 helpers and printing values as CEL literals. Errors
 * are values (cel_error) per the CEL spec.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ast.h"
#include "vm.h"

const cel_error cel_e_no_overload = {"no such overload"};
const cel_error cel_e_div_zero = {"division by zero"};
const cel_error cel_e_mod_zero = {"modulus by zero"};
const cel_error cel_e_overflow = {"return error for overflow"};
const cel_error cel_e_nomem = {"out of memory"};
const cel_error cel_e_range = {"range error"};

#define T(var, k, nm) const cel_type var = {k, 0, nm, {NULL, NULL}, NULL}
T(cel_t_dyn, CEL_T_DYN, "dyn");
T(cel_t_null, CEL_T_NULL, "null_type");
T(cel_t_bool, CEL_T_BOOL, "bool");
T(cel_t_int, CEL_T_INT, "int");
T(cel_t_uint, CEL_T_UINT, "uint");
T(cel_t_double, CEL_T_DOUBLE, "double");
T(cel_t_string, CEL_T_STRING, "string");
T(cel_t_bytes, CEL_T_BYTES, "bytes");
T(cel_t_list, CEL_T_LIST, "list");
T(cel_t_map, CEL_T_MAP, "map");
T(cel_t_type, CEL_T_TYPE, "type");
T(cel_t_duration, CEL_T_DURATION, "google.protobuf.Duration");
T(cel_t_timestamp, CEL_T_TIMESTAMP, "google.protobuf.Timestamp");
T(cel_t_optional, CEL_T_OPTIONAL, "optional_type");
T(cel_t_quantity, CEL_T_QUANTITY, "kubernetes.Quantity");
T(cel_t_semver, CEL_T_SEMVER, "kubernetes.Semver");
T(cel_t_error, CEL_T_ERROR, "*error*");
T(cel_t_any, CEL_T_ANY, "google.protobuf.Any");
#undef T

/* ORDER cel_kind */
static const char *const kind_names[CEL_K__COUNT] = {
    "null_type", "bool", "int", "uint", "double", "string", "bytes", "list", "map",
    "type", "google.protobuf.Duration", "google.protobuf.Timestamp", "optional_type",
    "kubernetes.Quantity", "kubernetes.Semver", "object", "opaque", "*error*"};

const char *cel_kind_name(cel_kind k)
{
    return (unsigned)k < CEL_K__COUNT ? kind_names[k] : "?";
}

const cel_type *cel_value_type(cel_value v)
{
    static const cel_type *const by_kind[CEL_K__COUNT] = {
        &cel_t_null, &cel_t_bool, &cel_t_int, &cel_t_uint, &cel_t_double, &cel_t_string,
        &cel_t_bytes, &cel_t_list, &cel_t_map, &cel_t_type, &cel_t_duration,
        &cel_t_timestamp, &cel_t_optional, &cel_t_quantity, &cel_t_semver, NULL, NULL,
        &cel_t_error};
    if (v.kind == CEL_K_OBJECT || v.kind == CEL_K_OPAQUE)
        return NULL; /* the VM makes these from their names */
    return v.kind < CEL_K__COUNT ? by_kind[v.kind] : &cel_t_dyn;
}

/* ---- numbers ------------------------------------------------------------ */

/* Int and uint compare with doubles after conversion to double, as
 * cel-go does (so 9223372036854775807 and 9223372036854775808.0 are
 * equal): <0, 0, >0, or 2 when d is NaN. */
static int cmp_dd(double a, double d)
{
    if (isnan(d))
        return 2;
    return a < d ? -1 : a > d;
}

static int cmp_int_double(int64_t i, double d)
{
    return cmp_dd((double)i, d);
}

static int cmp_uint_double(uint64_t u, double d)
{
    return cmp_dd((double)u, d);
}

static int is_num(cel_value v)
{
    return v.kind == CEL_K_INT || v.kind == CEL_K_UINT || v.kind == CEL_K_DOUBLE;
}

/* Numeric comparison across kinds; 2 for unordered (NaN). */
static int num_cmp(cel_value a, cel_value b)
{
    switch (a.kind * 8 + b.kind) {
    case CEL_K_INT * 8 + CEL_K_INT:
        return a.u.i < b.u.i ? -1 : a.u.i > b.u.i;
    case CEL_K_UINT * 8 + CEL_K_UINT:
        return a.u.u < b.u.u ? -1 : a.u.u > b.u.u;
    case CEL_K_INT * 8 + CEL_K_UINT:
        if (a.u.i < 0)
            return -1;
        return (uint64_t)a.u.i < b.u.u ? -1 : (uint64_t)a.u.i > b.u.u;
    case CEL_K_UINT * 8 + CEL_K_INT:
        if (b.u.i < 0)
            return 1;
        return a.u.u < (uint64_t)b.u.i ? -1 : a.u.u > (uint64_t)b.u.i;
    case CEL_K_INT * 8 + CEL_K_DOUBLE: return cmp_int_double(a.u.i, b.u.d);
    case CEL_K_UINT * 8 + CEL_K_DOUBLE: return cmp_uint_double(a.u.u, b.u.d);
    case CEL_K_DOUBLE * 8 + CEL_K_INT: {
        int c = cmp_int_double(b.u.i, a.u.d);
        return c == 2 ? 2 : -c;
    }
    case CEL_K_DOUBLE * 8 + CEL_K_UINT: {
        int c = cmp_uint_double(b.u.u, a.u.d);
        return c == 2 ? 2 : -c;
    }
    default: /* double, double */
        if (isnan(a.u.d) || isnan(b.u.d))
            return 2;
        return a.u.d < b.u.d ? -1 : a.u.d > b.u.d;
    }
}

static int bytes_cmp(cel_value a, cel_value b)
{
    size_t n = a.n < b.n ? a.n : b.n;
    int c = n ? memcmp(a.u.s, b.u.s, n) : 0;
    if (c)
        return c < 0 ? -1 : 1;
    return a.n < b.n ? -1 : a.n > b.n;
}

/* ---- equality ------------------------------------------------------------ */

static int list_equal(const cel_list *a, const cel_list *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (cel_value_equal(a->v[i], b->v[i]) != 1)
            return 0;
    return 1;
}

static int map_equal(const cel_map *a, const cel_map *b)
{
    cel_value v;
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!cel_map_find(b, a->e[i].k, &v))
            return 0;
        if (cel_value_equal(a->e[i].v, v) != 1)
            return 0;
    }
    return 1;
}

int cel_value_equal(cel_value a, cel_value b)
{
    if (is_num(a) && is_num(b))
        return num_cmp(a, b) == 0;
    if (a.kind == CEL_K_QUANTITY)
        return b.kind == CEL_K_QUANTITY ? dra_quantity_cmp(a.u.q, b.u.q) == 0 : -1;
    if (a.kind == CEL_K_SEMVER)
        return b.kind == CEL_K_SEMVER ? dra_semver_cmp(a.u.sv, b.u.sv) == 0 : -1;
    if (a.kind != b.kind)
        return 0;
    switch (a.kind) {
    case CEL_K_NULL: return 1;
    case CEL_K_BOOL: return a.u.b == b.u.b;
    case CEL_K_STRING:
    case CEL_K_BYTES: return a.n == b.n && (a.n == 0 || !memcmp(a.u.s, b.u.s, a.n));
    case CEL_K_LIST: return a.u.list == b.u.list || list_equal(a.u.list, b.u.list);
    case CEL_K_MAP: return a.u.map == b.u.map || map_equal(a.u.map, b.u.map);
    case CEL_K_TYPE: return !strcmp(a.u.type->name, b.u.type->name);
    case CEL_K_DURATION: return a.u.i == b.u.i;
    case CEL_K_TIMESTAMP: return a.u.i == b.u.i && a.n == b.n;
    case CEL_K_OPTIONAL:
        if (!a.u.opt || !b.u.opt)
            return a.u.opt == b.u.opt;
        return cel_value_equal(*a.u.opt, *b.u.opt) == 1;
    case CEL_K_OBJECT: return a.u.obj == b.u.obj;
    case CEL_K_OPAQUE:
        if (a.u.op->type != b.u.op->type)
            return 0;
        return a.u.op->type->equal ? a.u.op->type->equal(a.u.op, b.u.op)
                                   : a.u.op->data == b.u.op->data;
    default: return 0;
    }
}

int cel_value_compare(cel_value a, cel_value b, int *cmp)
{
    if (is_num(a) && is_num(b)) {
        *cmp = num_cmp(a, b);
        return 0;
    }
    if (a.kind != b.kind)
        return -1;
    switch (a.kind) {
    case CEL_K_BOOL: *cmp = a.u.b - b.u.b; return 0;
    case CEL_K_STRING:
    case CEL_K_BYTES: *cmp = bytes_cmp(a, b); return 0;
    case CEL_K_DURATION: *cmp = a.u.i < b.u.i ? -1 : a.u.i > b.u.i; return 0;
    case CEL_K_TIMESTAMP:
        *cmp = a.u.i != b.u.i ? (a.u.i < b.u.i ? -1 : 1) : (a.n < b.n ? -1 : a.n > b.n);
        return 0;
    default: return -1;
    }
}

/* ---- hashing and maps ------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

uint64_t cel_value_hash(cel_value k)
{
    switch (k.kind) {
    case CEL_K_STRING: return dra_hash(k.u.s, k.n);
    case CEL_K_BYTES: return dra_hash(k.u.s, k.n) ^ 0x5bd1e995u;
    case CEL_K_BOOL: return mix(0x1000u + (uint64_t)k.u.b);
    case CEL_K_INT: return mix((uint64_t)k.u.i);
    case CEL_K_UINT: return mix(k.u.u);
    case CEL_K_DOUBLE:
        /* Integral doubles hash like the equal int or uint. */
        if (k.u.d == trunc(k.u.d) && k.u.d >= -9223372036854775808.0 &&
            k.u.d < 18446744073709551616.0) {
            if (k.u.d < 9223372036854775808.0)
                return mix((uint64_t)(int64_t)k.u.d);
            return mix((uint64_t)k.u.d);
        }
        {
            uint64_t bits;
            memcpy(&bits, &k.u.d, sizeof bits);
            return mix(bits ^ 0x77u);
        }
    case CEL_K_NULL: return 0x3141u;
    default: return mix((uint64_t)k.kind * 0x9e3779b97f4a7c15ull);
    }
}

int cel_map_find_str(const cel_map *m, const char *s, size_t len, uint64_t hash,
                     cel_value *out)
{
    const cel_value *v = cel_map_get_str(m, s, len, hash);
    if (v)
        *out = *v;
    return v != NULL;
}

int cel_map_find(const cel_map *m, cel_value key, cel_value *out)
{
    uint64_t h;
    if (key.kind == CEL_K_STRING)
        return cel_map_find_str(m, key.u.s, key.n, dra_hash(key.u.s, key.n), out);
    h = cel_value_hash(key);
    for (size_t i = 0; i < m->n; i++) {
        const cel_map_entry *e = &m->e[i];
        if (e->hash == h && cel_value_equal(e->k, key) == 1) {
            *out = e->v;
            return 1;
        }
    }
    return 0;
}

void cel_map_entry_set(cel_map_entry *e, cel_value k, cel_value v)
{
    e->k = k;
    e->v = v;
    e->hash = cel_value_hash(k);
}

/* ---- UTF-8 ----------------------------------------------------------------- */

size_t cel_utf8_len(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

int cel_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, n;
    uint32_t cp;
    while (i < len) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        if (!(n = dra_utf8_decode(p + i, len - i, &cp)))
            return 0;
        i += n;
    }
    return 1;
}

/* ---- printing --------------------------------------------------------------- */

/* Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string(double)
 * uses: shortest digits that round trip, %e form when the exponent is
 * < -4 or >= the precision (6, or the digit count when that is larger
 * than the integer part). */
void cel_format_double(double d, char *out, size_t size)
{
    char buf[40], digits[24];
    int prec, exp10, nd = 0;
    if (isnan(d)) { snprintf(out, size, "NaN"); return; }
    if (isinf(d)) { snprintf(out, size, d > 0 ? "+Inf" : "-Inf"); return; }
    if (d == 0) { snprintf(out, size, signbit(d) ? "-0" : "0"); return; }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    /* buf is [-]D.DDDDe[+-]XX */
    const char *q = buf;
    int neg = *q == '-';
    if (neg) q++;
    for (; *q && *q != 'e'; q++)
        if (*q != '.')
            digits[nd++] = *q;
    digits[nd] = 0;
    exp10 = atoi(q + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = 0;
    char tmp[64];
    size_t k = 0;
    int eprec = 6;
    if (eprec > nd && nd >= exp10 + 1)
        eprec = nd;
    if (neg) tmp[k++] = '-';
    if (exp10 < -4 || exp10 >= eprec) {
        tmp[k++] = digits[0];
        if (nd > 1) {
            tmp[k++] = '.';
            for (int i = 1; i < nd; i++) tmp[k++] = digits[i];
        }
        k += (size_t)snprintf(tmp + k, sizeof tmp - k, "e%c%02d", exp10 < 0 ? '-' : '+',
                              exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        tmp[k++] = '0';
        tmp[k++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) tmp[k++] = '0';
        for (int i = 0; i < nd; i++) tmp[k++] = digits[i];
    } else {
        for (int i = 0; i <= exp10 || i < nd; i++) {
            if (i == exp10 + 1) tmp[k++] = '.';
            tmp[k++] = i < nd ? digits[i] : '0';
        }
    }
    tmp[k] = 0;
    snprintf(out, size, "%s", tmp);
}

static void quote(dra_buf *out, const char *s, size_t n, int bytes)
{
    dra_buf_puts(out, bytes ? "b\"" : "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': dra_buf_puts(out, "\\\""); break;
        case '\\': dra_buf_puts(out, "\\\\"); break;
        case '\n': dra_buf_puts(out, "\\n"); break;
        case '\r': dra_buf_puts(out, "\\r"); break;
        case '\t': dra_buf_puts(out, "\\t"); break;
        default:
            if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80))
                dra_buf_printf(out, "\\x%02x", c);
            else
                dra_buf_putc(out, (char)c);
        }
    }
    dra_buf_putc(out, '"');
}

dra_err cel_value_format(cel_value v, dra_buf *out)
{
    char tmp[64];
    switch (v.kind) {
    case CEL_K_NULL: dra_buf_puts(out, "null"); break;
    case CEL_K_BOOL: dra_buf_puts(out, v.u.b ? "true" : "false"); break;
    case CEL_K_INT: dra_buf_printf(out, "%lld", (long long)v.u.i); break;
    case CEL_K_UINT: dra_buf_printf(out, "%lluu", (unsigned long long)v.u.u); break;
    case CEL_K_DOUBLE:
        cel_format_double(v.u.d, tmp, sizeof tmp);
        if (isnan(v.u.d) || isinf(v.u.d))
            dra_buf_printf(out, "double(\"%s\")", tmp);
        else
            dra_buf_printf(out, "%s%s", tmp, strpbrk(tmp, ".e") ? "" : ".0");
        break;
    case CEL_K_STRING: quote(out, v.u.s, v.n, 0); break;
    case CEL_K_BYTES: quote(out, v.u.s, v.n, 1); break;
    case CEL_K_LIST:
        dra_buf_putc(out, '[');
        for (size_t i = 0; i < v.u.list->n; i++) {
            if (i) dra_buf_puts(out, ", ");
            cel_value_format(v.u.list->v[i], out);
        }
        dra_buf_putc(out, ']');
        break;
    case CEL_K_MAP:
        dra_buf_putc(out, '{');
        for (size_t i = 0; i < v.u.map->n; i++) {
            if (i) dra_buf_puts(out, ", ");
            cel_value_format(v.u.map->e[i].k, out);
            dra_buf_puts(out, ": ");
            cel_value_format(v.u.map->e[i].v, out);
        }
        dra_buf_putc(out, '}');
        break;
    case CEL_K_TYPE: dra_buf_puts(out, v.u.type->name); break;
    case CEL_K_DURATION:
        cel_format_duration(v.u.i, tmp, sizeof tmp);
        dra_buf_printf(out, "duration(\"%s\")", tmp);
        break;
    case CEL_K_TIMESTAMP:
        cel_format_timestamp(v.u.i, v.n, tmp, sizeof tmp);
        dra_buf_printf(out, "timestamp(\"%s\")", tmp);
        break;
    case CEL_K_OPTIONAL:
        if (!v.u.opt) {
            dra_buf_puts(out, "optional.none()");
        } else {
            dra_buf_puts(out, "optional.of(");
            cel_value_format(*v.u.opt, out);
            dra_buf_putc(out, ')');
        }
        break;
    case CEL_K_QUANTITY:
        dra_quantity_str(v.u.q, tmp, sizeof tmp);
        dra_buf_printf(out, "quantity(\"%s\")", tmp);
        break;
    case CEL_K_SEMVER:
        dra_buf_printf(out, "semver(\"%llu.%llu.%llu", (unsigned long long)v.u.sv->major,
                       (unsigned long long)v.u.sv->minor, (unsigned long long)v.u.sv->patch);
        if (v.u.sv->prelen)
            dra_buf_printf(out, "-%.*s", (int)v.u.sv->prelen, v.u.sv->pre);
        if (v.u.sv->buildlen)
            dra_buf_printf(out, "+%.*s", (int)v.u.sv->buildlen, v.u.sv->build);
        dra_buf_puts(out, "\")");
        break;
    case CEL_K_OBJECT:
        if (v.u.obj->type->nfields == 0) {
            dra_buf_printf(out, "%s{}", v.u.obj->type->name);
            break;
        }
        dra_buf_printf(out, "%s{", v.u.obj->type->name);
        for (size_t i = 0; i < v.u.obj->type->nfields; i++) {
            dra_buf_printf(out, "%s%s: ", i ? ", " : "", v.u.obj->type->field_names[i]);
            cel_value_format(v.u.obj->fields[i], out);
        }
        dra_buf_putc(out, '}');
        break;
    case CEL_K_OPAQUE: dra_buf_printf(out, "<%s>", v.u.op->type->name); break;
    case CEL_K_ERROR: dra_buf_puts(out, v.u.err->msg); break;
    default: dra_buf_puts(out, "<?>"); break;
    }
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- time printing ------------------------------------------------------------ */

/* Days since 1970-01-01 -> civil date (proleptic Gregorian). */
void cel_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int64_t cel_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void cel_format_timestamp(int64_t sec, uint32_t nanos, char *out, size_t size)
{
    int64_t days = sec / 86400, rem = sec % 86400, y;
    unsigned m, d;
    char frac[16] = "";
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    cel_civil_from_days(days, &y, &m, &d);
    if (nanos) {
        int k;
        snprintf(frac, sizeof frac, ".%09u", nanos);
        for (k = (int)strlen(frac) - 1; frac[k] == '0'; k--)
            frac[k] = 0;
    }
    snprintf(out, size, "%04lld-%02u-%02uT%02d:%02d:%02d%sZ", (long long)y, m, d,
             (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60), frac);
}

/* Durations print as seconds with up to 9 fraction digits ("1.5s"), as
 * cel-go's string(duration) does. */
void cel_format_duration(int64_t ns, char *out, size_t size)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t s = a / 1000000000u, f = a % 1000000000u;
    if (f) {
        char frac[16];
        int k;
        snprintf(frac, sizeof frac, "%09llu", (unsigned long long)f);
        for (k = 8; k > 0 && frac[k] == '0'; k--)
            frac[k] = 0;
        snprintf(out, size, "%s%llu.%ss", ns < 0 ? "-" : "", (unsigned long long)s, frac);
    } else {
        snprintf(out, size, "%s%llus", ns < 0 ? "-" : "", (unsigned long long)s);
    }
}
