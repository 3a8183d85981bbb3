/*
 * lib_format.c: ext.Strings' <string>.format(<list>) (version 1+), with
 * the clauses %s %d %f %e %b %o %x %X and %%, an optional precision
 * (".3"), and cel-go's error texts. Rendering follows the CEL
 * specification's format (cel-go strings version 4, what the conformance
 * suite checks); for versions 1-3 ("legacy", what Kubernetes enables)
 * values nested in lists and maps are printed as CEL literals, as cel-go's
 * legacy formatter does (see docs/cel-libraries.md for the differences).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib_common.h"
#include "lib_time.h"

#define FMT_MAX_PRECISION 1000
#define FMT_MAX_DEPTH 32

typedef struct fmt {
    cel_ctx *ctx;
    dra_buf out;
    int legacy;
    cel_value err; /* set on failure */
} fmt;

static int fail(fmt *f, const char *pre, const char *what, const char *type)
{
    f->err = cel_err(f->ctx, "%s: %s%s", pre, what, type ? type : "");
    return -1;
}

static int fail_type(fmt *f, const char *what, cel_value v)
{
    return fail(f, "error during formatting", what,
                cel_kind_name((cel_kind)v.kind));
}

/* Go's strconv.FormatFloat(x, 'g', -1, 64), which cel-go's string(double)
 * uses: shortest digits, %e form when the exponent is < -4 or >= 6. */
static void put_g(dra_buf *b, double x)
{
    char d[24];
    int e, nd, exp;
    if (signbit(x))
        dra_buf_putc(b, '-');
    x = fabs(x);
    if (x == 0) {
        dra_buf_putc(b, '0');
        return;
    }
    lib_shortest_digits(x, d, &e);
    nd = (int)strlen(d);
    exp = e - 1;
    if (exp < -4 || exp >= 6) {
        dra_buf_putc(b, d[0]);
        if (nd > 1) {
            dra_buf_putc(b, '.');
            dra_buf_puts(b, d + 1);
        }
        dra_buf_printf(b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    (void)lib_format_float_f(x, b);
}

static int put_special(fmt *f, double x)
{
    if (isnan(x))
        dra_buf_puts(&f->out, "NaN");
    else if (isinf(x))
        dra_buf_puts(&f->out, x > 0 ? "Infinity" : "-Infinity");
    else
        return 0;
    return 1;
}

static void put_hex_bytes(dra_buf *b, const char *s, size_t n, int upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dra_buf_putc(b, digits[(unsigned char)s[i] >> 4]);
        dra_buf_putc(b, digits[(unsigned char)s[i] & 15]);
    }
}

/* Integers in base 2, 8, 16 (Go's %b %o %x: a '-' then the magnitude). */
static void put_base(dra_buf *b, int neg, uint64_t mag, unsigned base, int upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[72];
    int k = 0;
    do {
        tmp[k++] = digits[mag % base];
        mag /= base;
    } while (mag);
    if (neg)
        dra_buf_putc(b, '-');
    while (k > 0)
        dra_buf_putc(b, tmp[--k]);
}

static int put_int_base(fmt *f, cel_value v, unsigned base, int upper)
{
    if (v.kind == CEL_K_INT)
        put_base(&f->out, v.u.i < 0,
                 v.u.i < 0 ? (uint64_t)0 - (uint64_t)v.u.i : (uint64_t)v.u.i, base, upper);
    else if (v.kind == CEL_K_UINT)
        put_base(&f->out, 0, v.u.u, base, upper);
    else
        return 0;
    return 1;
}

static int format_s(fmt *f, cel_value v, int depth);

/* A Go %q-style quoted string, for legacy nested values. */
static void put_quoted(dra_buf *b, const char *s, size_t n)
{
    dra_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            dra_buf_putc(b, '\\');
            dra_buf_putc(b, (char)c);
        } else if (c == '\n') {
            dra_buf_puts(b, "\\n");
        } else if (c == '\t') {
            dra_buf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            dra_buf_printf(b, "\\x%02x", c);
        } else {
            dra_buf_putc(b, (char)c);
        }
    }
    dra_buf_putc(b, '"');
}

/* One element inside a list or map. */
static int format_nested(fmt *f, cel_value v, int depth)
{
    if (!f->legacy)
        return format_s(f, v, depth);
    switch (v.kind) {
    case CEL_K_STRING:
        put_quoted(&f->out, v.u.s, v.n);
        return 0;
    case CEL_K_BYTES:
        dra_buf_putc(&f->out, 'b');
        put_quoted(&f->out, v.u.s, v.n);
        return 0;
    case CEL_K_DOUBLE:
        if (isnan(v.u.d) || isinf(v.u.d)) {
            dra_buf_puts(&f->out, isnan(v.u.d) ? "\"NaN\"" : v.u.d > 0 ? "\"+Inf\"" : "\"-Inf\"");
            return 0;
        }
        dra_buf_printf(&f->out, "%.6f", v.u.d);
        return 0;
    case CEL_K_TIMESTAMP:
    case CEL_K_DURATION:
        dra_buf_puts(&f->out, v.kind == CEL_K_TIMESTAMP ? "timestamp(\"" : "duration(\"");
        if (format_s(f, v, depth) < 0)
            return -1;
        dra_buf_puts(&f->out, "\")");
        return 0;
    default:
        return format_s(f, v, depth);
    }
}

static int format_list(fmt *f, const cel_list *l, int depth)
{
    dra_buf_putc(&f->out, '[');
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            dra_buf_puts(&f->out, ", ");
        if (format_nested(f, l->v[i], depth + 1) < 0)
            return -1;
    }
    dra_buf_putc(&f->out, ']');
    return 0;
}

typedef struct kv {
    char *k, *v;
} kv;

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const kv *)a)->k, ((const kv *)b)->k);
}

/* Renders |v| on its own into the scratch arena (for map sorting). */
static char *render(fmt *f, cel_value v, int depth, int key)
{
    dra_buf saved = f->out;
    char *s;
    dra_buf_init(&f->out, NULL);
    if ((key ? format_s(f, v, depth) : format_nested(f, v, depth)) < 0 || f->out.oom) {
        dra_buf_fini(&f->out);
        f->out = saved;
        return NULL;
    }
    s = cel_alloc(f->ctx, f->out.len + 1);
    if (s) {
        memcpy(s, f->out.p ? f->out.p : "", f->out.len);
        s[f->out.len] = '\0';
    }
    dra_buf_fini(&f->out);
    f->out = saved;
    if (!s)
        f->err = cel_error_value(&cel_e_nomem);
    return s;
}

static int format_map(fmt *f, const cel_map *m, int depth)
{
    kv *e = cel_alloc(f->ctx, (m->n + 1) * sizeof *e);
    if (!e) {
        f->err = cel_error_value(&cel_e_nomem);
        return -1;
    }
    for (size_t i = 0; i < m->n; i++) {
        cel_value k = m->e[i].k;
        if (f->legacy && k.kind == CEL_K_STRING) {
            dra_buf saved = f->out;
            dra_buf_init(&f->out, NULL);
            put_quoted(&f->out, k.u.s, k.n);
            e[i].k = cel_alloc(f->ctx, f->out.len + 1);
            if (e[i].k)
                memcpy(e[i].k, f->out.p ? f->out.p : "", f->out.len + 1);
            dra_buf_fini(&f->out);
            f->out = saved;
        } else {
            e[i].k = render(f, k, depth + 1, 1);
        }
        if (!e[i].k || !(e[i].v = render(f, m->e[i].v, depth + 1, 0)))
            return f->err.kind == CEL_K_ERROR ? -1 : fail(f, "error during formatting", "out of memory", NULL);
    }
    qsort(e, m->n, sizeof *e, kv_cmp);
    dra_buf_putc(&f->out, '{');
    for (size_t i = 0; i < m->n; i++)
        dra_buf_printf(&f->out, "%s%s%s%s", i ? ", " : "", e[i].k,
                       f->legacy ? ":" : ": ", e[i].v);
    dra_buf_putc(&f->out, '}');
    return 0;
}

static int format_s(fmt *f, cel_value v, int depth)
{
    char buf[64];
    if (depth > FMT_MAX_DEPTH)
        return fail(f, "error during formatting", "value nests too deeply", NULL);
    switch (v.kind) {
    case CEL_K_NULL: dra_buf_puts(&f->out, "null"); return 0;
    case CEL_K_BOOL: dra_buf_puts(&f->out, v.u.b ? "true" : "false"); return 0;
    case CEL_K_INT: dra_buf_printf(&f->out, "%lld", (long long)v.u.i); return 0;
    case CEL_K_UINT: dra_buf_printf(&f->out, "%llu", (unsigned long long)v.u.u); return 0;
    case CEL_K_DOUBLE:
        if (!f->legacy && put_special(f, v.u.d))
            return 0;
        if (f->legacy && (isnan(v.u.d) || isinf(v.u.d))) {
            dra_buf_puts(&f->out, isnan(v.u.d) ? "NaN" : v.u.d > 0 ? "+Inf" : "-Inf");
            return 0;
        }
        put_g(&f->out, v.u.d);
        return 0;
    case CEL_K_STRING:
    case CEL_K_BYTES: dra_buf_append(&f->out, v.u.s, v.n); return 0;
    case CEL_K_TYPE: dra_buf_puts(&f->out, v.u.type->name); return 0;
    case CEL_K_TIMESTAMP:
        lib_ts_format(v.u.i, (int32_t)v.n, 0, buf, sizeof buf);
        dra_buf_puts(&f->out, buf);
        return 0;
    case CEL_K_DURATION:
        lib_dur_format(v.u.i, buf, sizeof buf);
        dra_buf_puts(&f->out, buf);
        return 0;
    case CEL_K_LIST: return format_list(f, v.u.list, depth);
    case CEL_K_MAP: return format_map(f, v.u.map, depth);
    default:
        return fail_type(f, "string clause can only be used on strings, bools, bytes, "
                            "ints, doubles, maps, lists, types, durations, and "
                            "timestamps, was given ", v);
    }
}

static int format_d(fmt *f, cel_value v)
{
    if (v.kind == CEL_K_INT || v.kind == CEL_K_UINT)
        return format_s(f, v, 0);
    if (!f->legacy && v.kind == CEL_K_DOUBLE && put_special(f, v.u.d))
        return 0;
    return fail_type(f, "decimal clause can only be used on integers, was given ", v);
}

/* Legacy (strings v1-3) %f/%e also take the strings "NaN", "Infinity"
 * and "-Infinity", and cel-go's legacy %e builds "%<p>e": the precision
 * lands in the width, so the digits stay at the default 6. */
static int legacy_special(fmt *f, cel_value *v)
{
    static const char *const names[] = {"NaN", "Infinity", "-Infinity"};
    if (!f->legacy || v->kind != CEL_K_STRING)
        return 0;
    for (int i = 0; i < 3; i++)
        if (v->n == strlen(names[i]) && memcmp(v->u.s, names[i], v->n) == 0) {
            *v = cel_double(i == 0 ? NAN : i == 1 ? INFINITY : -INFINITY);
            return 1;
        }
    return 0;
}

static int format_fe(fmt *f, cel_value v, int prec, char conv)
{
    char stackbuf[128], *p = stackbuf;
    int need, width = 0;
    (void)legacy_special(f, &v);
    if (v.kind != CEL_K_DOUBLE)
        return fail_type(f, conv == 'f' ? "fixed-point clause can only be used on doubles, was given "
                                        : "scientific clause can only be used on doubles, was given ",
                         v);
    if (f->legacy && (isnan(v.u.d) || isinf(v.u.d))) {
        dra_buf_puts(&f->out, isnan(v.u.d) ? "NaN" : v.u.d > 0 ? "+Inf" : "-Inf");
        return 0;
    }
    if (put_special(f, v.u.d))
        return 0;
    if (f->legacy && conv == 'e') {
        width = prec;
        prec = 6;
    }
    need = snprintf(stackbuf, sizeof stackbuf, conv == 'f' ? "%*.*f" : "%*.*e", width, prec,
                    v.u.d);
    if (need < 0)
        return fail(f, "error during formatting", "bad number", NULL);
    if ((size_t)need >= sizeof stackbuf) {
        p = cel_alloc(f->ctx, (size_t)need + 1);
        if (!p) {
            f->err = cel_error_value(&cel_e_nomem);
            return -1;
        }
        snprintf(p, (size_t)need + 1, conv == 'f' ? "%*.*f" : "%*.*e", width, prec, v.u.d);
    }
    dra_buf_puts(&f->out, p);
    return 0;
}

static int format_clause(fmt *f, char conv, int prec, cel_value v)
{
    switch (conv) {
    case 's': return format_s(f, v, 0);
    case 'd': return format_d(f, v);
    case 'f': case 'e': return format_fe(f, v, prec < 0 ? 6 : prec, conv);
    case 'b':
        if (v.kind == CEL_K_BOOL) {
            dra_buf_putc(&f->out, v.u.b ? '1' : '0');
            return 0;
        }
        if (put_int_base(f, v, 2, 0))
            return 0;
        return fail_type(f, "only integers and bools can be formatted as binary, was given ", v);
    case 'o':
        if (put_int_base(f, v, 8, 0))
            return 0;
        return fail_type(f, "octal clause can only be used on integers, was given ", v);
    default: /* x X */
        if (v.kind == CEL_K_STRING || v.kind == CEL_K_BYTES) {
            put_hex_bytes(&f->out, v.u.s, v.n, conv == 'X');
            return 0;
        }
        if (put_int_base(f, v, 16, conv == 'X'))
            return 0;
        return fail_type(f, "only integers, byte buffers, and strings can be formatted as "
                            "hex, was given ", v);
    }
}

/* Parses "[.N]c" at s[*i] (just past '%'). Returns the verb or 0. */
static char parse_clause(fmt *f, const char *s, size_t n, size_t *i, int *prec)
{
    *prec = -1;
    if (*i < n && s[*i] == '.') {
        long p = 0;
        size_t st = ++(*i);
        while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
            if (p <= FMT_MAX_PRECISION)
                p = p * 10 + (s[*i] - '0');
            (*i)++;
        }
        if (*i >= n) {
            fail(f, "could not parse formatting clause",
                 "error while parsing precision: could not find end of precision specifier",
                 NULL);
            return 0;
        }
        if (*i == st || p > FMT_MAX_PRECISION) {
            fail(f, "could not parse formatting clause",
                 "error while parsing precision: invalid precision", NULL);
            return 0;
        }
        *prec = (int)p;
    }
    if (*i >= n) {
        fail(f, "could not parse formatting clause", "unexpected end of string", NULL);
        return 0;
    }
    if (!strchr("sdfebxXo", s[*i]) || !s[*i]) {
        char what[64];
        size_t j = *i;
        uint32_t cp = lib_utf8_next(s, n, &j);
        char u[5] = {0};
        if (cp < 0x80)
            u[0] = (char)cp;
        else
            memcpy(u, s + *i, j - *i < 4 ? j - *i : 4);
        snprintf(what, sizeof what, "unrecognized formatting clause \"%s\"", u);
        fail(f, "could not parse formatting clause", what, NULL);
        return 0;
    }
    return s[(*i)++];
}

static cel_value do_format(cel_ctx *ctx, const cel_value *a, int legacy)
{
    fmt f = {ctx, {0}, legacy, {0}};
    const char *s = a[0].u.s;
    size_t n = a[0].n, i = 0, argi = 0;
    const cel_list *args = a[1].u.list;
    cel_value r;
    dra_buf_init(&f.out, NULL);
    while (i < n) {
        char conv;
        int prec;
        if (s[i] != '%') {
            dra_buf_putc(&f.out, s[i++]);
            continue;
        }
        if (i + 1 < n && s[i + 1] == '%') {
            dra_buf_putc(&f.out, '%');
            i += 2;
            continue;
        }
        if (argi >= args->n) {
            f.err = cel_err(ctx, "index %zu out of range", argi);
            break;
        }
        i++;
        if (!(conv = parse_clause(&f, s, n, &i, &prec)))
            break;
        if (format_clause(&f, conv, prec, args->v[argi++]) < 0)
            break;
    }
    if (f.err.kind == CEL_K_ERROR)
        r = f.err;
    else if (f.out.oom)
        r = cel_error_value(&cel_e_nomem);
    else
        r = cel_str_new(ctx, f.out.p ? f.out.p : "", f.out.len);
    dra_buf_fini(&f.out);
    return r;
}

static cel_value s_format(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return do_format(ctx, a, 0);
}

static cel_value s_format_legacy(cel_ctx *ctx, const cel_value *a, size_t n)
{
    (void)n;
    return do_format(ctx, a, 1);
}

static const cel_overload format_ovs[] = {
    {.id = "string_format", .name = "format", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"string", "list(dyn)"}, .fn = s_format},
};
static const cel_overload format_legacy_ovs[] = {
    {.id = "string_format", .name = "format", .flags = CEL_OV_MEMBER,
     .result = "string", .args = {"string", "list(dyn)"}, .fn = s_format_legacy},
};

static int format_v4(const cel_env_info *info)
{
    return lib_strings_version(info) >= 4;
}

static int format_legacy(const cel_env_info *info)
{
    int v = lib_strings_version(info);
    return v >= 1 && v < 4;
}

const cel_lib cel_lib_strings_format = {
    "cel.lib.ext.strings.format", format_ovs, 1, NULL, 0, format_v4};
const cel_lib cel_lib_strings_format_legacy = {
    "cel.lib.ext.strings.format.legacy", format_legacy_ovs, 1, NULL, 0, format_legacy};
