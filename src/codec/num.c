/* Scalars shared by the codecs: shortest float formatting in Go's two
 * styles (encoding/json and strconv 'g'), go-yaml v2's resolution of
 * plain scalars, and small UTF-8 / number-syntax checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"

void codec_shortest(double f, int single, char dig[24], int *dp)
{
    char buf[40];
    int exp10 = 0, n = 0;
    if (f < 0)
        f = -f;
    for (int prec = 1; prec <= 17; prec++) {
        double back;
        snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
        back = strtod(buf, NULL);
        if (single ? (float)back == (float)f : back == f)
            break;
    }
    /* buf is d[.ddd]e[+-]x: collect digits, then the exponent. */
    for (const char *p = buf; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            dig[n++] = *p;
    while (n > 1 && dig[n - 1] == '0')
        n--;
    dig[n] = '\0';
    exp10 = atoi(strchr(buf, 'e') + 1);
    *dp = exp10 + 1;
}

/* d.ddd e±XX with at least two exponent digits, as Go's 'e' format. */
static void put_e(dra_buf *out, const char *dig, int dp)
{
    int e = dp - 1;
    dra_buf_putc(out, dig[0]);
    if (dig[1]) {
        dra_buf_putc(out, '.');
        dra_buf_puts(out, dig + 1);
    }
    dra_buf_printf(out, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
}

static void put_f(dra_buf *out, const char *dig, int dp)
{
    int nd = (int)strlen(dig);
    if (dp <= 0) {
        dra_buf_puts(out, "0.");
        for (int i = 0; i < -dp; i++)
            dra_buf_putc(out, '0');
        dra_buf_puts(out, dig);
    } else if (dp >= nd) {
        dra_buf_puts(out, dig);
        for (int i = nd; i < dp; i++)
            dra_buf_putc(out, '0');
    } else {
        dra_buf_append(out, dig, (size_t)dp);
        dra_buf_putc(out, '.');
        dra_buf_puts(out, dig + dp);
    }
}

dra_err codec_put_json_float(dra_buf *out, double f)
{
    char dig[24];
    int dp;
    double a = fabs(f);
    if (isnan(f) || isinf(f))
        return DRA_EINVAL;
    if (f == 0) {
        dra_buf_puts(out, signbit(f) ? "-0" : "0");
        return out->oom ? DRA_ENOMEM : DRA_OK;
    }
    codec_shortest(f, 0, dig, &dp);
    if (f < 0)
        dra_buf_putc(out, '-');
    if (a < 1e-6 || a >= 1e21) {
        size_t mark = out->len;
        put_e(out, dig, dp);
        /* encoding/json trims "e-07" to "e-7" (but keeps "e+21"). */
        if (!out->oom && out->len - mark >= 4 && out->p[out->len - 4] == 'e' &&
            out->p[out->len - 3] == '-' && out->p[out->len - 2] == '0') {
            out->p[out->len - 2] = out->p[out->len - 1];
            out->p[--out->len] = '\0';
        }
    } else {
        put_f(out, dig, dp);
    }
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

dra_err codec_put_g_float(dra_buf *out, double f, int single)
{
    char dig[24];
    int dp;
    if (isnan(f))
        return dra_buf_puts(out, ".nan");
    if (isinf(f))
        return dra_buf_puts(out, f < 0 ? "-.inf" : ".inf");
    if (f == 0)
        return dra_buf_puts(out, signbit(f) ? "-0" : "0");
    codec_shortest(f, single, dig, &dp);
    if (f < 0)
        dra_buf_putc(out, '-');
    /* strconv 'g' with shortest precision switches to %e at exponents
     * below -4 or from 6 up (it decides with precision 6). */
    if (dp - 1 < -4 || dp - 1 >= 6)
        put_e(out, dig, dp);
    else
        put_f(out, dig, dp);
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- go-yaml v2 plain scalar resolution ------------------------------ */

static const struct {
    const char *s;
    codec_yres r;
    int b;
    double f; /* 1: +inf, -1: -inf, 0: nan (for floats) */
} yaml_words[] = {
    {"y", CODEC_Y_BOOL, 1, 0}, {"Y", CODEC_Y_BOOL, 1, 0},
    {"yes", CODEC_Y_BOOL, 1, 0}, {"Yes", CODEC_Y_BOOL, 1, 0},
    {"YES", CODEC_Y_BOOL, 1, 0}, {"true", CODEC_Y_BOOL, 1, 0},
    {"True", CODEC_Y_BOOL, 1, 0}, {"TRUE", CODEC_Y_BOOL, 1, 0},
    {"on", CODEC_Y_BOOL, 1, 0}, {"On", CODEC_Y_BOOL, 1, 0},
    {"ON", CODEC_Y_BOOL, 1, 0},
    {"n", CODEC_Y_BOOL, 0, 0}, {"N", CODEC_Y_BOOL, 0, 0},
    {"no", CODEC_Y_BOOL, 0, 0}, {"No", CODEC_Y_BOOL, 0, 0},
    {"NO", CODEC_Y_BOOL, 0, 0}, {"false", CODEC_Y_BOOL, 0, 0},
    {"False", CODEC_Y_BOOL, 0, 0}, {"FALSE", CODEC_Y_BOOL, 0, 0},
    {"off", CODEC_Y_BOOL, 0, 0}, {"Off", CODEC_Y_BOOL, 0, 0},
    {"OFF", CODEC_Y_BOOL, 0, 0},
    {"~", CODEC_Y_NULL, 0, 0}, {"null", CODEC_Y_NULL, 0, 0},
    {"Null", CODEC_Y_NULL, 0, 0}, {"NULL", CODEC_Y_NULL, 0, 0},
    {".nan", CODEC_Y_FLOAT, 0, 0}, {".NaN", CODEC_Y_FLOAT, 0, 0},
    {".NAN", CODEC_Y_FLOAT, 0, 0},
    {".inf", CODEC_Y_FLOAT, 0, 1}, {".Inf", CODEC_Y_FLOAT, 0, 1},
    {".INF", CODEC_Y_FLOAT, 0, 1}, {"+.inf", CODEC_Y_FLOAT, 0, 1},
    {"+.Inf", CODEC_Y_FLOAT, 0, 1}, {"+.INF", CODEC_Y_FLOAT, 0, 1},
    {"-.inf", CODEC_Y_FLOAT, 0, -1}, {"-.Inf", CODEC_Y_FLOAT, 0, -1},
    {"-.INF", CODEC_Y_FLOAT, 0, -1},
};

static int digit_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/* Go's strconv.ParseUint(s, base, 64) for an unsigned digit string;
 * 0 on syntax error or overflow. */
static int go_parse_uint(const char *s, size_t len, int base, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        int d = digit_val(s[i]);
        if (d >= base)
            return 0;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return 0;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 1;
}

/* Go's base-0 prefix rules: 0x, 0o, 0b, and a bare leading 0 for octal. */
static int go_parse_uint0(const char *s, size_t len, uint64_t *out)
{
    if (len >= 2 && s[0] == '0') {
        char c = s[1];
        if (c == 'x' || c == 'X')
            return go_parse_uint(s + 2, len - 2, 16, out);
        if (c == 'o' || c == 'O')
            return go_parse_uint(s + 2, len - 2, 8, out);
        if (c == 'b' || c == 'B')
            return go_parse_uint(s + 2, len - 2, 2, out);
        return go_parse_uint(s + 1, len - 1, 8, out);
    }
    return go_parse_uint(s, len, 10, out);
}

/* The float shape go-yaml v2 accepts for ints-that-are-not:
 * ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int yaml_float_shape(const char *s, size_t len)
{
    size_t i = 0, d = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, d++;
        if (!d)
            return 0;
    } else {
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, d++;
        if (!d)
            return 0;
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9')
                i++;
        }
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        d = 0;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, d++;
        if (!d)
            return 0;
    }
    return i == len;
}

/* strtod on NUL-terminated text of exactly |len| bytes; 0 when the value
 * overflows (Go's ParseFloat then fails with ErrRange and go-yaml keeps
 * the string). */
static int parse_float(const char *s, size_t len, double *out)
{
    char *end;
    double f = strtod(s, &end);
    if (end != s + len || isinf(f))
        return 0;
    *out = f;
    return 1;
}

static codec_yres resolve_number(const char *in, size_t len, codec_yval *v)
{
    char plain[512];
    const char *p = in;
    size_t n = len;
    uint64_t u;
    int neg = 0;
    size_t off = 0;
    if (memchr(in, '_', len)) {
        /* go-yaml drops every '_' first. Longer underscored numerals than
         * this buffer are not numbers we can check; they stay strings. */
        n = 0;
        for (size_t i = 0; i < len; i++) {
            if (in[i] == '_')
                continue;
            if (n == sizeof plain - 1)
                return CODEC_Y_STR;
            plain[n++] = in[i];
        }
        plain[n] = '\0';
        p = plain;
    }
    if (n && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        off = 1;
    }
    if (go_parse_uint0(p + off, n - off, &u)) {
        if (neg && u <= (uint64_t)INT64_MAX + 1) {
            v->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
            return CODEC_Y_INT;
        }
        if (!neg && u <= (uint64_t)INT64_MAX) {
            v->i = (int64_t)u;
            return CODEC_Y_INT;
        }
        if (!neg && off == 0) {
            v->u = u; /* ParseUint takes no sign */
            return CODEC_Y_UINT;
        }
    }
    if (yaml_float_shape(p, n) && parse_float(p, n, &v->f))
        return CODEC_Y_FLOAT;
    return CODEC_Y_STR;
}

codec_yres codec_yaml_resolve(const char *s, size_t len, codec_yval *v)
{
    char c;
    memset(v, 0, sizeof *v);
    if (len == 0)
        return CODEC_Y_NULL;
    c = s[0];
    if (!(c == '+' || c == '-' || (c >= '0' && c <= '9') || c == '.' ||
          strchr("yYnNtTfFoO~", c)))
        return CODEC_Y_STR;
    for (size_t i = 0; i < sizeof yaml_words / sizeof yaml_words[0]; i++) {
        if (strlen(yaml_words[i].s) == len && memcmp(yaml_words[i].s, s, len) == 0) {
            v->b = yaml_words[i].b;
            if (yaml_words[i].r == CODEC_Y_FLOAT)
                v->f = yaml_words[i].f > 0 ? INFINITY
                     : yaml_words[i].f < 0 ? -INFINITY : NAN;
            return yaml_words[i].r;
        }
    }
    if (c == '.') {
        /* Go's ParseFloat on text that starts with '.': only decimals. */
        if (yaml_float_shape(s, len) && parse_float(s, len, &v->f))
            return CODEC_Y_FLOAT;
        return CODEC_Y_STR;
    }
    if (c == '+' || c == '-' || (c >= '0' && c <= '9'))
        return resolve_number(s, len, v);
    return CODEC_Y_STR;
}

/* ---- strings go-yaml quotes although they resolve to !!str ------------ */

static size_t digits(const char *s, size_t len, size_t i, size_t max, int *val)
{
    size_t n = 0;
    *val = 0;
    while (i + n < len && n < max && s[i + n] >= '0' && s[i + n] <= '9') {
        *val = *val * 10 + (s[i + n] - '0');
        n++;
    }
    return n;
}

static int days_in(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return d[m - 1];
}

/* go-yaml v2 tries these time.Parse layouts: 2006-1-2T15:4:5.999999999Z07:00
 * (also with 't'), "2006-1-2 15:4:5.999999999" and 2006-1-2. */
static int looks_timestamp(const char *s, size_t len)
{
    int y, mo, d, h, mi, se, v;
    size_t i = 0, k;
    char sep;
    if ((k = digits(s, len, i, 4, &y)) != 4 || i + 4 >= len || s[4] != '-')
        return 0;
    i = 5;
    if (!(k = digits(s, len, i, 2, &mo)) || i + k >= len || s[i + k] != '-')
        return 0;
    i += k + 1;
    if (!(k = digits(s, len, i, 2, &d)))
        return 0;
    i += k;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in(y, mo))
        return 0;
    if (i == len)
        return 1;
    sep = s[i++];
    if (sep != 'T' && sep != 't' && sep != ' ')
        return 0;
    if (!(k = digits(s, len, i, 2, &h)) || i + k >= len || s[i + k] != ':')
        return 0;
    i += k + 1;
    if (!(k = digits(s, len, i, 2, &mi)) || i + k >= len || s[i + k] != ':')
        return 0;
    i += k + 1;
    if (!(k = digits(s, len, i, 2, &se)))
        return 0;
    i += k;
    if (h > 23 || mi > 59 || se > 59)
        return 0;
    if (i + 1 < len && (s[i] == '.' || s[i] == ',') && s[i + 1] >= '0' && s[i + 1] <= '9') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (sep == ' ')
        return i == len;
    if (i < len && s[i] == 'Z')
        return i + 1 == len;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        i++;
        if (digits(s, len, i, 2, &v) != 2 || i + 2 >= len || s[i + 2] != ':')
            return 0;
        i += 3;
        return digits(s, len, i, 2, &v) == 2 && i + 2 == len;
    }
    return 0;
}

/* ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ */
static int looks_base60(const char *s, size_t len)
{
    size_t i = 0;
    int groups = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i >= len || s[i] < '0' || s[i] > '9')
        return 0;
    while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
        i++;
    while (i < len && s[i] == ':') {
        size_t st = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9' && i - st < 2)
            i++;
        if (i == st || (i - st == 2 && s[st] > '5'))
            return 0;
        groups++;
    }
    if (!groups)
        return 0;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            i++;
    }
    return i == len;
}

int codec_yaml_looks_special(const char *s, size_t len)
{
    return looks_timestamp(s, len) || looks_base60(s, len);
}

/* ---- JSON number syntax -------------------------------------------- */

int codec_is_json_number(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    if (i >= len)
        return 0;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return 0;
    if (i < len && s[i] == '.') {
        size_t st = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == st)
            return 0;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t st;
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        st = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == st)
            return 0;
    }
    return i == len;
}
