/*
 * lib_time.c: timestamps, durations and civil dates for CEL, following
 * cel-go (which follows Go's time package): RFC 3339 parsing and printing,
 * Go duration syntax, checked arithmetic and float-based accessors. Time
 * zones live in lib_tz.c. Pure functions: no I/O, no clock, no state.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_time.h"

/* ---- civil dates ----------------------------------------------------------
 * Days <-> proleptic Gregorian dates by counting 400-year eras from
 * 0000-03-01, which puts the leap day at the end of each counted year. */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int64_t lib_days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;
    y -= m <= 2;
    era = floor_div(y, 400);
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void lib_civil_from_unix(int64_t local_sec, lib_civil *c)
{
    int64_t days = floor_div(local_sec, 86400);
    int64_t rem = local_sec - days * 86400;
    int64_t z = days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t y = yoe + era * 400;
    c->day = (int)(doy - (153 * mp + 2) / 5 + 1);
    c->month = (int)(mp < 10 ? mp + 3 : mp - 9);
    c->year = y + (c->month <= 2);
    c->hour = (int)(rem / 3600);
    c->min = (int)(rem / 60 % 60);
    c->sec = (int)(rem % 60);
    c->wday = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday */
    c->yday = (int)(days - lib_days_from_civil(c->year, 1, 1));
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* ---- RFC 3339 ------------------------------------------------------------- */

/* Reads exactly |n| digits at s[*i]; -1 when any is not a digit. */
static int fixed_num(const char *s, size_t len, size_t *i, int n)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (*i >= len || s[*i] < '0' || s[*i] > '9')
            return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    return v;
}

static int expect(const char *s, size_t len, size_t *i, char c)
{
    if (*i >= len || s[*i] != c)
        return 0;
    (*i)++;
    return 1;
}

/* Go's time.Parse(time.RFC3339) accepts the union of its strict fast path
 * and its generic layout parser: a one- or two-digit hour, '.' or ','
 * before the fraction, offsets up to 24:60. We accept exactly that. */
static dra_err parse_offset(const char *s, size_t len, size_t *i, int32_t *off)
{
    int sign, hh, mm;
    if (*i < len && s[*i] == 'Z') {
        (*i)++;
        *off = 0;
        return DRA_OK;
    }
    if (*i >= len || (s[*i] != '+' && s[*i] != '-'))
        return DRA_EPARSE;
    sign = s[(*i)++] == '-' ? -1 : 1;
    hh = fixed_num(s, len, i, 2);
    if (hh < 0 || !expect(s, len, i, ':'))
        return DRA_EPARSE;
    mm = fixed_num(s, len, i, 2);
    if (mm < 0 || hh > 24 || mm > 60)
        return DRA_EPARSE;
    *off = sign * (hh * 3600 + mm * 60);
    return DRA_OK;
}

static int32_t parse_fraction(const char *s, size_t len, size_t *i)
{
    int32_t ns = 0;
    int digits = 0;
    if (*i + 1 >= len || (s[*i] != '.' && s[*i] != ',') || s[*i + 1] < '0' ||
        s[*i + 1] > '9')
        return 0;
    (*i)++;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (digits < 9) {
            ns = ns * 10 + (s[*i] - '0');
            digits++;
        }
        (*i)++;
    }
    for (; digits < 9; digits++)
        ns *= 10;
    return ns;
}

dra_err lib_ts_parse(const char *s, size_t len, int64_t *sec, int32_t *nsec,
                       int32_t *off)
{
    size_t i = 0;
    int y, mo, d, h, mi, se;
    int32_t ns, zoff;
    int64_t t;
    y = fixed_num(s, len, &i, 4);
    if (y < 0 || !expect(s, len, &i, '-'))
        return DRA_EPARSE;
    mo = fixed_num(s, len, &i, 2);
    if (mo < 1 || mo > 12 || !expect(s, len, &i, '-'))
        return DRA_EPARSE;
    d = fixed_num(s, len, &i, 2);
    if (d < 1 || d > days_in_month(y, mo) || !expect(s, len, &i, 'T'))
        return DRA_EPARSE;
    h = fixed_num(s, len, &i, 1);
    if (h >= 0 && i < len && s[i] >= '0' && s[i] <= '9')
        h = h * 10 + (s[i++] - '0');
    if (h < 0 || h > 23 || !expect(s, len, &i, ':'))
        return DRA_EPARSE;
    mi = fixed_num(s, len, &i, 2);
    if (mi < 0 || mi > 59 || !expect(s, len, &i, ':'))
        return DRA_EPARSE;
    se = fixed_num(s, len, &i, 2);
    if (se < 0 || se > 59)
        return DRA_EPARSE;
    ns = parse_fraction(s, len, &i);
    if (parse_offset(s, len, &i, &zoff) != DRA_OK || i != len)
        return DRA_EPARSE;
    t = lib_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - zoff;
    if (t < LIB_TS_MIN_SEC || t > LIB_TS_MAX_SEC)
        return DRA_ERANGE;
    *sec = t;
    *nsec = ns;
    if (off)
        *off = zoff;
    return DRA_OK;
}

size_t lib_ts_format(int64_t sec, int32_t nsec, int32_t off, char *buf,
                       size_t size)
{
    lib_civil c;
    char frac[16] = "", zone[16] = "Z";
    int n;
    lib_civil_from_unix(sec + off, &c);
    if (nsec > 0) {
        int k;
        snprintf(frac, sizeof frac, ".%09d", (int)nsec);
        for (k = 9; frac[k] == '0'; k--)
            frac[k] = '\0';
    }
    if (off != 0) {
        int a = off < 0 ? -off : off;
        snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+',
                 a / 3600 % 100, a / 60 % 60);
    }
    n = snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02d%s%s",
                 (long long)c.year, c.month, c.day, c.hour, c.min, c.sec,
                 frac, zone);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- checked arithmetic ----------------------------------------------------- */

dra_err lib_dur_add(int64_t a, int64_t b, int64_t *out)
{
    if (__builtin_add_overflow(a, b, out))
        return DRA_ERANGE;
    return DRA_OK;
}

dra_err lib_dur_sub(int64_t a, int64_t b, int64_t *out)
{
    if (__builtin_sub_overflow(a, b, out))
        return DRA_ERANGE;
    return DRA_OK;
}

dra_err lib_dur_neg(int64_t a, int64_t *out)
{
    if (a == INT64_MIN)
        return DRA_ERANGE;
    *out = -a;
    return DRA_OK;
}

dra_err lib_ts_add(int64_t sec, int32_t nsec, int64_t dur_ns, int64_t *osec,
                     int32_t *onsec)
{
    int64_t s, ns = (int64_t)nsec + dur_ns % LIB_NS_PER_SEC;
    if (__builtin_add_overflow(sec, dur_ns / LIB_NS_PER_SEC, &s))
        return DRA_ERANGE;
    if (ns < 0) {
        ns += LIB_NS_PER_SEC;
        s--;
    } else if (ns >= LIB_NS_PER_SEC) {
        ns -= LIB_NS_PER_SEC;
        s++;
    }
    if (s < LIB_TS_MIN_SEC || s > LIB_TS_MAX_SEC)
        return DRA_ERANGE;
    *osec = s;
    *onsec = (int32_t)ns;
    return DRA_OK;
}

dra_err lib_ts_sub_dur(int64_t sec, int32_t nsec, int64_t dur_ns,
                         int64_t *osec, int32_t *onsec)
{
    /* cel-go negates the duration first, so INT64_MIN cannot be negated. */
    if (dur_ns == INT64_MIN)
        return DRA_ERANGE;
    return lib_ts_add(sec, nsec, -dur_ns, osec, onsec);
}

dra_err lib_ts_diff(int64_t asec, int32_t ansec, int64_t bsec, int32_t bnsec,
                      int64_t *out_ns)
{
    int64_t s, t;
    if (__builtin_sub_overflow(asec, bsec, &s) ||
        __builtin_mul_overflow(s, LIB_NS_PER_SEC, &t) ||
        __builtin_add_overflow(t, (int64_t)ansec - bnsec, out_ns))
        return DRA_ERANGE;
    return DRA_OK;
}

/* ---- durations -------------------------------------------------------------- */

static void go_quote(dra_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    dra_buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 || c < ' ') {
            dra_buf_puts(b, "\\x");
            dra_buf_putc(b, hex[c >> 4]);
            dra_buf_putc(b, hex[c & 15]);
        } else {
            if (c == '"' || c == '\\')
                dra_buf_putc(b, '\\');
            dra_buf_putc(b, (char)c);
        }
    }
    dra_buf_putc(b, '"');
}

static dra_err dur_fail(dra_buf *why, dra_err e, const char *s, size_t len)
{
    if (why) {
        dra_buf_puts(why, "time: invalid duration ");
        go_quote(why, s, len);
    }
    return e;
}

static uint64_t unit_ns(const char *u, size_t n)
{
    static const struct { const char *name; uint64_t ns; } units[] = {
        {"ns", 1ULL},
        {"us", 1000ULL},
        {"\xc2\xb5s", 1000ULL}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000ULL}, /* U+03BC Greek mu */
        {"ms", 1000000ULL},
        {"s", 1000000000ULL},
        {"m", 60000000000ULL},
        {"h", 3600000000000ULL},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    return 0;
}

/* One "<number><unit>" group of a duration; adds its nanoseconds to *d.
 * Mirrors Go: integer part overflow is an error, fraction digits beyond
 * uint64 precision are ignored, the fraction is scaled in float64. */
static dra_err dur_group(const char *s, size_t len, size_t *i, uint64_t *d,
                         dra_buf *why)
{
    const uint64_t lim = 1ULL << 63;
    uint64_t v = 0, f = 0, unit;
    double scale = 1;
    size_t start = *i, ustart;
    int pre, post = 0, ovf = 0;
    if (s[*i] != '.' && (s[*i] < '0' || s[*i] > '9'))
        return dur_fail(why, DRA_EPARSE, s, len);
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        if (v > lim / 10)
            return dur_fail(why, DRA_ERANGE, s, len);
        v = v * 10 + (uint64_t)(s[*i] - '0');
        if (v > lim)
            return dur_fail(why, DRA_ERANGE, s, len);
    }
    pre = *i != start;
    if (*i < len && s[*i] == '.') {
        size_t fs = ++(*i);
        for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
            uint64_t y;
            if (ovf)
                continue;
            if (f > (lim - 1) / 10) {
                ovf = 1;
                continue;
            }
            y = f * 10 + (uint64_t)(s[*i] - '0');
            if (y > lim) {
                ovf = 1;
                continue;
            }
            f = y;
            scale *= 10;
        }
        post = *i != fs;
    }
    if (!pre && !post)
        return dur_fail(why, DRA_EPARSE, s, len);
    ustart = *i;
    while (*i < len && s[*i] != '.' && (s[*i] < '0' || s[*i] > '9'))
        (*i)++;
    if (*i == ustart) {
        if (why) {
            dra_buf_puts(why, "time: missing unit in duration ");
            go_quote(why, s, len);
        }
        return DRA_EPARSE;
    }
    unit = unit_ns(s + ustart, *i - ustart);
    if (!unit) {
        if (why) {
            dra_buf_puts(why, "time: unknown unit ");
            go_quote(why, s + ustart, *i - ustart);
            dra_buf_puts(why, " in duration ");
            go_quote(why, s, len);
        }
        return DRA_EPARSE;
    }
    if (v > lim / unit)
        return dur_fail(why, DRA_ERANGE, s, len);
    v *= unit;
    if (f > 0) {
        v += (uint64_t)((double)f * ((double)unit / scale));
        if (v > lim)
            return dur_fail(why, DRA_ERANGE, s, len);
    }
    *d += v;
    if (*d > lim)
        return dur_fail(why, DRA_ERANGE, s, len);
    return DRA_OK;
}

dra_err lib_dur_parse(const char *s, size_t len, int64_t *ns, dra_buf *why)
{
    size_t i = 0;
    uint64_t d = 0;
    int neg = 0;
    dra_err e;
    if (len > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (len - i == 1 && s[i] == '0') {
        *ns = 0;
        return DRA_OK;
    }
    if (i == len)
        return dur_fail(why, DRA_EPARSE, s, len);
    while (i < len)
        if ((e = dur_group(s, len, &i, &d, why)) != DRA_OK)
            return e;
    if (neg) {
        *ns = d == (1ULL << 63) ? INT64_MIN : -(int64_t)d;
        return DRA_OK;
    }
    if (d > (uint64_t)INT64_MAX)
        return dur_fail(why, DRA_ERANGE, s, len);
    *ns = (int64_t)d;
    return DRA_OK;
}

/* ---- float printing ------------------------------------------------------- */

void lib_shortest_digits(double x, char digits[24], int *exp10)
{
    char buf[40];
    int p, n = 0, e = 0;
    for (p = 0; p < 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    for (const char *c = buf; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && n < 23)
            digits[n++] = *c;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    e = atoi(strchr(buf, 'e') + 1);
    *exp10 = e + 1;
}

/* Go's 'f' format with the shortest round-trip digits, into |out|, which
 * must hold LIB_FIXED_MAX bytes (a subnormal needs ~330). Returns length. */
#define LIB_FIXED_MAX 400
static size_t fixed_repr(double x, char *out)
{
    char d[24];
    int e, nd;
    size_t k = 0;
    if (signbit(x))
        out[k++] = '-';
    x = fabs(x);
    if (x == 0) {
        out[k++] = '0';
        out[k] = '\0';
        return k;
    }
    lib_shortest_digits(x, d, &e);
    nd = (int)strlen(d);
    if (e <= 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (int z = 0; z < -e; z++)
            out[k++] = '0';
        memcpy(out + k, d, (size_t)nd);
        k += (size_t)nd;
    } else if (e >= nd) {
        memcpy(out + k, d, (size_t)nd);
        k += (size_t)nd;
        for (int z = nd; z < e; z++)
            out[k++] = '0';
    } else {
        memcpy(out + k, d, (size_t)e);
        k += (size_t)e;
        out[k++] = '.';
        memcpy(out + k, d + e, (size_t)(nd - e));
        k += (size_t)(nd - e);
    }
    out[k] = '\0';
    return k;
}

dra_err lib_format_float_f(double x, dra_buf *out)
{
    char tmp[LIB_FIXED_MAX];
    size_t n;
    if (isnan(x))
        return dra_buf_puts(out, "NaN");
    if (isinf(x))
        return dra_buf_puts(out, x < 0 ? "-Inf" : "+Inf");
    n = fixed_repr(x, tmp);
    return dra_buf_append(out, tmp, n);
}

size_t lib_dur_format(int64_t ns, char *buf, size_t size)
{
    /* Go's Duration.Seconds(): whole seconds plus the remainder, in float64. */
    double secs = (double)(ns / LIB_NS_PER_SEC) +
                  (double)(ns % LIB_NS_PER_SEC) / 1e9;
    char tmp[LIB_FIXED_MAX];
    size_t n = fixed_repr(secs, tmp);
    tmp[n++] = 's';
    tmp[n] = '\0';
    if (size) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

int64_t lib_dur_hours(int64_t ns)
{
    const int64_t h = 3600 * LIB_NS_PER_SEC;
    return (int64_t)((double)(ns / h) + (double)(ns % h) / (60 * 60 * 1e9));
}

int64_t lib_dur_minutes(int64_t ns)
{
    const int64_t m = 60 * LIB_NS_PER_SEC;
    return (int64_t)((double)(ns / m) + (double)(ns % m) / (60 * 1e9));
}

int64_t lib_dur_seconds(int64_t ns)
{
    return (int64_t)((double)(ns / LIB_NS_PER_SEC) +
                     (double)(ns % LIB_NS_PER_SEC) / 1e9);
}

int64_t lib_dur_millis(int64_t ns)
{
    return ns / 1000000;
}
