/* resource.Quantity with k8s.io/apimachinery's semantics: the parser of
 * quantity.go (fast int64Amount path and the inf.Dec path, with rounding
 * up to nano and the BinarySI cap), exact comparison and arithmetic on
 * (mantissa, scale) pairs, and the canonical printing of
 * CanonicalizeBytes. No floating point except in to_double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

#define MAX_DIGITS 38 /* |mant| < 10^38 keeps every alignment in u128 */

static u128 pow10u(int n)
{
    u128 r = 1;
    while (n-- > 0)
        r *= 10;
    return r;
}

static int ndigits(u128 v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static u128 uabs(i128 v)
{
    return v < 0 ? (u128)0 - (u128)v : (u128)v;
}

/* ---- parsing ------------------------------------------------------------ */

typedef struct qsyn {
    int neg;
    const char *num; size_t numlen;   /* leading zeros stripped; "0" if none */
    const char *den; size_t denlen;
    const char *suf; size_t suflen;
} qsyn;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* parseQuantityString: sign, digits, optional '.' digits, suffix letters
 * from "eEinumkKMGTP", optional sign, digits, end. */
static dra_err q_syntax(const char *s, size_t len, qsyn *q)
{
    size_t i = 0, st;
    static const char zero[] = "0";
    memset(q, 0, sizeof *q);
    if (i < len && (s[i] == '-' || s[i] == '+'))
        q->neg = s[i++] == '-';
    while (i < len && s[i] == '0')
        i++;
    if (i == len) {
        q->num = zero, q->numlen = 1;
        q->suf = s + len;
        return DRA_OK;
    }
    st = i;
    while (i < len && is_digit(s[i]))
        i++;
    q->num = s + st, q->numlen = i - st;
    if (!q->numlen)
        q->num = zero, q->numlen = 1;
    if (i < len && s[i] == '.') {
        st = ++i;
        while (i < len && is_digit(s[i]))
            i++;
        q->den = s + st, q->denlen = i - st;
    }
    q->suf = s + i;
    while (i < len && strchr("eEinumkKMGTP", s[i]) && s[i])
        i++;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && is_digit(s[i]))
        i++;
    if (i != len)
        return DRA_EPARSE;
    q->suflen = (size_t)(s + len - q->suf);
    return DRA_OK;
}

/* quantitySuffixer.interpret. Exponents outside int32 are DRA_ERANGE
 * (upstream truncates them with int32()). */
static dra_err q_suffix(const char *s, size_t n, int *base, int64_t *exp,
                        dra_quantity_format *f)
{
    static const struct { const char *s; int base, exp; dra_quantity_format f; } tab[] = {
        {"", 10, 0, DRA_QTY_DECIMAL_SI}, {"n", 10, -9, DRA_QTY_DECIMAL_SI},
        {"u", 10, -6, DRA_QTY_DECIMAL_SI}, {"m", 10, -3, DRA_QTY_DECIMAL_SI},
        {"k", 10, 3, DRA_QTY_DECIMAL_SI}, {"M", 10, 6, DRA_QTY_DECIMAL_SI},
        {"G", 10, 9, DRA_QTY_DECIMAL_SI}, {"T", 10, 12, DRA_QTY_DECIMAL_SI},
        {"P", 10, 15, DRA_QTY_DECIMAL_SI}, {"E", 10, 18, DRA_QTY_DECIMAL_SI},
        {"Ki", 2, 10, DRA_QTY_BINARY_SI}, {"Mi", 2, 20, DRA_QTY_BINARY_SI},
        {"Gi", 2, 30, DRA_QTY_BINARY_SI}, {"Ti", 2, 40, DRA_QTY_BINARY_SI},
        {"Pi", 2, 50, DRA_QTY_BINARY_SI}, {"Ei", 2, 60, DRA_QTY_BINARY_SI},
    };
    size_t i = 1;
    int neg = 0;
    uint64_t v = 0;
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        if (strlen(tab[k].s) == n && memcmp(tab[k].s, s, n) == 0) {
            *base = tab[k].base, *exp = tab[k].exp, *f = tab[k].f;
            return DRA_OK;
        }
    }
    if (n < 2 || (s[0] != 'e' && s[0] != 'E'))
        return DRA_EPARSE;
    if (s[1] == '+' || s[1] == '-')
        neg = s[i++] == '-';
    if (i == n)
        return DRA_EPARSE;
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return DRA_EPARSE;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > (uint64_t)INT32_MAX + 1)
            return DRA_ERANGE;
    }
    if (!neg && v > INT32_MAX)
        return DRA_ERANGE;
    *base = 10, *exp = neg ? -(int64_t)v : (int64_t)v, *f = DRA_QTY_DECIMAL_EXPONENT;
    return DRA_OK;
}

/* The int64Amount fast path of ParseQuantity; 0 when it does not apply. */
static int q_fast(const qsyn *q, int base, int64_t exp, dra_quantity_format f,
                  dra_quantity *out)
{
    int64_t precision, scale, value = 0, mult = 1;
    char shifted0;
    size_t nd = q->numlen + q->denlen;
    if (base == 10) {
        precision = 18 - (int64_t)nd;
        scale = exp;
    } else if (q->denlen == 0) {
        /* int32(float32(exponent)*3/10) is exact for multiples of 10. */
        precision = 15 - (int64_t)q->numlen - exp * 3 / 10 - 1;
        scale = 0;
        mult = (int64_t)1 << exp;
    } else {
        return 0;
    }
    if (precision < 0)
        return 0;
    scale -= (int64_t)q->denlen;
    if (scale < -9)
        return 0;
    for (size_t i = 0; i < nd; i++)
        value = value * 10 + ((i < q->numlen ? q->num[i] : q->den[i - q->numlen]) - '0');
    if (value && mult > INT64_MAX / value)
        return 0;
    out->mant = q->neg ? -(i128)(value * mult) : (i128)(value * mult);
    out->scale = (int32_t)scale;
    out->format = f;
    out->flags = 0;
    /* When upstream keeps the text: canonical-looking input. */
    shifted0 = q->num[0];
    if (base == 2) {
        if (exp % 10 == 0 && (value & 7) != 0)
            out->flags |= DRA_QTY_F_TEXT;
    } else if (scale % 3 == 0 && shifted0 != '0') {
        char t[3];
        int k = 0;
        for (size_t i = nd >= 3 ? nd - 3 : 0; i < nd; i++)
            t[k++] = i < q->numlen ? q->num[i] : q->den[i - q->numlen];
        if (!(k == 3 && t[0] == '0' && t[1] == '0' && t[2] == '0'))
            out->flags |= DRA_QTY_F_TEXT;
    }
    return 1;
}

/* Strip factors of ten into the scale (inf.Dec form only). */
static void q_normalize(u128 *m, int64_t *scale)
{
    if (*m == 0) {
        *scale = 0;
        return;
    }
    while (*m % 10 == 0) {
        *m /= 10;
        (*scale)++;
    }
}

/* The inf.Dec path for base 10: exact digits, rounded up to nano. */
static dra_err q_dec10(const qsyn *q, int64_t exp, u128 *m, int64_t *scale)
{
    size_t nd = q->numlen + q->denlen;
    int64_t s = exp - (int64_t)q->denlen;
    int tail = 0, sig = 0;
    u128 v = 0;
    for (size_t i = 0; i < nd; i++) {
        int dg = (i < q->numlen ? q->num[i] : q->den[i - q->numlen]) - '0';
        int64_t pos = s + (int64_t)(nd - 1 - i); /* power of ten of this digit */
        if (pos < -9) {
            tail |= dg != 0;
            continue;
        }
        if (v == 0 && dg == 0)
            continue;
        if (++sig > MAX_DIGITS) {
            /* Only trailing zeros may follow; they go into the scale. */
            for (size_t k = i; k < nd; k++) {
                int64_t p2 = s + (int64_t)(nd - 1 - k);
                char c = k < q->numlen ? q->num[k] : q->den[k - q->numlen];
                if (c != '0' && p2 >= -9)
                    return DRA_ERANGE;
                tail |= c != '0';
            }
            if (tail)
                return DRA_ERANGE;
            *m = v;
            *scale = s + (int64_t)(nd - i);
            q_normalize(m, scale);
            return DRA_OK;
        }
        v = v * 10 + (u128)dg;
    }
    if (s < -9)
        s = -9;
    if (tail) {
        if (v == pow10u(MAX_DIGITS) - 1)
            return DRA_ERANGE;
        v += 1; /* round up: some resource beats none */
    }
    *m = v;
    *scale = s;
    q_normalize(m, scale);
    return DRA_OK;
}

/* The inf.Dec path for binary suffixes: (I + F/10^k) * 2^e, rounded up
 * to nano, capped at 2^63-1 like upstream's maxAllowed. */
static dra_err q_dec2(const qsyn *q, int64_t exp, u128 *m, int64_t *scale)
{
    const u128 cap = (u128)INT64_MAX;
    u128 ip = 0, fp = 0, n, r, k10, nano;
    size_t k = q->denlen;
    if (k > 18)
        return DRA_ERANGE;
    for (size_t i = 0; i < q->numlen; i++) {
        ip = ip * 10 + (u128)(q->num[i] - '0');
        if (ip > cap)
            goto capped;
    }
    if (ip && ip > (cap >> exp))
        goto capped;
    ip <<= exp;
    for (size_t i = 0; i < k; i++)
        fp = fp * 10 + (u128)(q->den[i] - '0');
    k10 = pow10u((int)k);
    n = fp << exp; /* < 10^18 * 2^60 < 2^120 */
    ip += n / k10;
    r = n % k10;
    if (ip > cap)
        goto capped;
    nano = (r * 1000000000u + k10 - 1) / k10; /* ceil: rounds up to nano */
    *m = ip * 1000000000u + nano;
    *scale = -9;
    if (*m > cap * 1000000000u)
        goto capped;
    q_normalize(m, scale);
    return DRA_OK;
capped:
    *m = cap;
    *scale = 0;
    return DRA_OK;
}

dra_err dra_quantity_parse(const char *s, size_t len, dra_quantity *out)
{
    qsyn q;
    int base;
    int64_t exp, scale;
    dra_quantity_format f;
    dra_err err;
    u128 m;
    if (!s || len == 0)
        return DRA_EPARSE;
    if ((err = q_syntax(s, len, &q)) != DRA_OK)
        return err;
    if ((err = q_suffix(q.suf, q.suflen, &base, &exp, &f)) != DRA_OK)
        return err;
    if (len == 1 && s[0] == '0') {
        *out = (dra_quantity){0, 0, DRA_QTY_DECIMAL_SI, DRA_QTY_F_TEXT};
        return DRA_OK;
    }
    if (q_fast(&q, base, exp, f, out))
        return DRA_OK;
    err = base == 10 ? q_dec10(&q, exp, &m, &scale) : q_dec2(&q, exp, &m, &scale);
    if (err)
        return err;
    if (scale > INT32_MAX)
        return DRA_ERANGE;
    /* A binary value in (0, 1) is shown as DecimalSI (no rounding). */
    if (f == DRA_QTY_BINARY_SI && m != 0 && scale < 0 && ndigits(m) + scale <= 0)
        f = DRA_QTY_DECIMAL_SI;
    out->mant = q.neg ? -(i128)m : (i128)m;
    out->scale = (int32_t)scale;
    out->format = f;
    out->flags = DRA_QTY_F_DEC;
    return DRA_OK;
}

/* ---- comparison and arithmetic ------------------------------------------ */

/* Compare magnitudes m1*10^s1 and m2*10^s2 exactly. */
static int ucmp(u128 m1, int64_t s1, u128 m2, int64_t s2)
{
    int64_t o1, o2;
    if (m1 == 0 || m2 == 0)
        return (m1 != 0) - (m2 != 0);
    o1 = ndigits(m1) + s1;
    o2 = ndigits(m2) + s2;
    if (o1 != o2)
        return o1 < o2 ? -1 : 1;
    /* Same order of magnitude: the scale gap is below 39 digits. */
    if (s1 > s2)
        m1 *= pow10u((int)(s1 - s2));
    else if (s2 > s1)
        m2 *= pow10u((int)(s2 - s1));
    return m1 < m2 ? -1 : m1 > m2;
}

int dra_quantity_sign(const dra_quantity *q)
{
    return q->mant < 0 ? -1 : q->mant > 0;
}

/* 10^0 .. 10^19, the powers that fit in 64 bits. */
static const uint64_t pow10_64[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
    10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
    100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

int dra_quantity_cmp(const dra_quantity *a, const dra_quantity *b)
{
    int sa = dra_quantity_sign(a), sb = dra_quantity_sign(b), c;
    u128 ma, mb;
    int64_t d = (int64_t)a->scale - b->scale;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    if (d == 0)
        return a->mant < b->mant ? -1 : a->mant > b->mant;
    ma = uabs(a->mant);
    mb = uabs(b->mant);
    /* The common case (selectors comparing capacities: both mantissas
     * below 2^64, scales at most 19 apart) aligns exactly in 128 bits
     * without the digit counting below, which divides per digit. */
    if (ma <= UINT64_MAX && mb <= UINT64_MAX && d >= -19 && d <= 19) {
        if (d > 0)
            ma *= pow10_64[d];
        else
            mb *= pow10_64[-d];
        c = (ma > mb) - (ma < mb);
    } else {
        c = ucmp(ma, a->scale, mb, b->scale);
    }
    return sa < 0 ? -c : c;
}

dra_quantity dra_quantity_from_int64(int64_t v, dra_quantity_format f)
{
    dra_quantity q = {v, 0, f, 0};
    return q;
}

/* positiveScaleInt64: v * 10^n, 0 on int64 overflow. */
static int scale_i64(int64_t v, int64_t n, int64_t *out)
{
    if (v == 0 || n <= 0) {
        *out = v;
        return 1;
    }
    if (n > 18)
        return 0; /* 10^19 overflows int64 */
    for (int64_t i = 0; i < n; i++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10)
            return 0;
        v *= 10;
    }
    *out = v;
    return 1;
}

/* int64Amount.Add; 0 when upstream would fall back to inf.Dec. */
static int add_i64(const dra_quantity *a, const dra_quantity *b, dra_quantity *r)
{
    int64_t av = (int64_t)a->mant, bv = (int64_t)b->mant, c;
    int32_t s;
    if (bv == 0) {
        r->mant = av, r->scale = a->scale;
        return 1;
    }
    if (av == 0) {
        r->mant = bv, r->scale = b->scale;
        return 1;
    }
    if (a->scale > b->scale) {
        if (!scale_i64(av, (int64_t)a->scale - b->scale, &av))
            return 0;
        s = b->scale;
    } else {
        if (!scale_i64(bv, (int64_t)b->scale - a->scale, &bv))
            return 0;
        s = a->scale;
    }
    if (__builtin_add_overflow(av, bv, &c))
        return 0;
    r->mant = c, r->scale = s;
    return 1;
}

/* Exact signed sum in the inf.Dec form. */
static dra_err add_dec(const dra_quantity *a, const dra_quantity *b, int negb, dra_quantity *r)
{
    i128 am = a->mant, bm = negb ? -b->mant : b->mant;
    int64_t s = a->scale < b->scale ? a->scale : b->scale;
    u128 ua = uabs(am), ub = uabs(bm), sum;
    int64_t sc;
    const u128 lim = pow10u(MAX_DIGITS);
    /* Align both to the smaller scale; refuse what would not fit. */
    if (ua && (a->scale - s > MAX_DIGITS || ndigits(ua) + (a->scale - s) > MAX_DIGITS))
        return DRA_ERANGE;
    if (ub && (b->scale - s > MAX_DIGITS || ndigits(ub) + (b->scale - s) > MAX_DIGITS))
        return DRA_ERANGE;
    ua *= pow10u((int)(ua ? a->scale - s : 0));
    ub *= pow10u((int)(ub ? b->scale - s : 0));
    if ((am < 0) == (bm < 0)) {
        sum = ua + ub;
        if (sum >= lim)
            return DRA_ERANGE;
        r->mant = am < 0 ? -(i128)sum : (i128)sum;
    } else if (ua >= ub) {
        r->mant = am < 0 ? -(i128)(ua - ub) : (i128)(ua - ub);
    } else {
        r->mant = bm < 0 ? -(i128)(ub - ua) : (i128)(ub - ua);
    }
    sc = s;
    sum = uabs(r->mant);
    q_normalize(&sum, &sc);
    if (sc > INT32_MAX)
        return DRA_ERANGE;
    r->mant = r->mant < 0 ? -(i128)sum : (i128)sum;
    r->scale = (int32_t)sc;
    return DRA_OK;
}

static dra_err addsub(const dra_quantity *a, const dra_quantity *b, int neg, dra_quantity *out)
{
    dra_quantity r = {0, 0, a->mant == 0 ? b->format : a->format, 0};
    dra_quantity nb = *b;
    dra_err err;
    if (neg)
        nb.mant = -nb.mant;
    if (!(a->flags & DRA_QTY_F_DEC) && !(b->flags & DRA_QTY_F_DEC) &&
        !(neg && (int64_t)b->mant == INT64_MIN) && add_i64(a, &nb, &r)) {
        *out = r;
        return DRA_OK;
    }
    r.flags = DRA_QTY_F_DEC;
    if ((err = add_dec(a, b, neg, &r)) != DRA_OK)
        return err;
    *out = r;
    return DRA_OK;
}

dra_err dra_quantity_add(const dra_quantity *a, const dra_quantity *b, dra_quantity *out)
{
    return addsub(a, b, 0, out);
}

dra_err dra_quantity_sub(const dra_quantity *a, const dra_quantity *b, dra_quantity *out)
{
    return addsub(a, b, 1, out);
}

dra_err dra_quantity_to_int64(const dra_quantity *q, int64_t *out)
{
    int64_t v;
    if (q->flags & DRA_QTY_F_DEC)
        return DRA_ERANGE;
    if (q->scale < 0)
        return DRA_ERANGE; /* upstream does not reduce factors here */
    if (!scale_i64((int64_t)q->mant, q->scale, &v))
        return DRA_ERANGE;
    *out = v;
    return DRA_OK;
}

int dra_quantity_is_integer(const dra_quantity *q)
{
    int64_t v;
    return dra_quantity_to_int64(q, &v) == DRA_OK;
}

double dra_quantity_to_double(const dra_quantity *q)
{
    char buf[DRA_QTY_STR_MAX + 16], dig[48];
    u128 m = uabs(q->mant);
    int n = 0;
    if (!(q->flags & DRA_QTY_F_DEC)) {
        double base = (double)(int64_t)q->mant;
        return q->scale == 0 ? base : base * pow(10, q->scale);
    }
    do {
        dig[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    for (int i = 0; i < n / 2; i++) {
        char t = dig[i];
        dig[i] = dig[n - 1 - i];
        dig[n - 1 - i] = t;
    }
    dig[n] = '\0';
    snprintf(buf, sizeof buf, "%s%se%d", q->mant < 0 ? "-" : "", dig, (int)q->scale);
    return strtod(buf, NULL);
}

int64_t dra_quantity_value(const dra_quantity *q)
{
    u128 m = uabs(q->mant);
    int64_t s = q->scale;
    int neg = q->mant < 0, up = 0;
    while (s < 0 && m) {
        up |= m % 10 != 0;
        m /= 10;
        s++;
    }
    if (m && s > 0) {
        if (s > MAX_DIGITS || ndigits(m) + s > MAX_DIGITS)
            return neg ? INT64_MIN : INT64_MAX;
        m *= pow10u((int)s);
    }
    m += (u128)up; /* away from zero */
    if (m > (u128)INT64_MAX)
        return neg ? INT64_MIN : INT64_MAX;
    return neg ? -(int64_t)m : (int64_t)m;
}

/* ---- canonical printing ------------------------------------------------- */

static int u128_str(u128 v, char *out)
{
    char t[48];
    int n = 0, k = 0;
    do {
        t[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    while (n)
        out[k++] = t[--n];
    out[k] = '\0';
    return k;
}

/* AsCanonicalBytes: factors of ten into the exponent, exponent lowered to
 * a multiple of three. Appends digits to |out|, returns the exponent. */
static int64_t canon10(u128 m, int64_t e, char *out)
{
    int n;
    while (m && m % 10 == 0) {
        m /= 10;
        e++;
    }
    n = u128_str(m, out);
    while (((e % 3) + 3) % 3 != 0) {
        out[n++] = '0';
        e--;
    }
    out[n] = '\0';
    return e;
}

/* The BinarySI branch; 0 when the value is not an integer that fits u128
 * (then it prints as DecimalSI, as upstream does for inexact values). */
static int canon1024(const dra_quantity *q, char *out, const char **suffix)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    u128 m = uabs(q->mant);
    int e = 0;
    if (q->scale < 0) {
        u128 p = pow10u(-q->scale > MAX_DIGITS ? MAX_DIGITS : -q->scale);
        if (-q->scale > MAX_DIGITS || m % p != 0)
            return 0;
        m /= p;
    } else if (q->scale > 0) {
        if (q->scale > MAX_DIGITS || ndigits(m) + q->scale > MAX_DIGITS)
            return 0;
        m *= pow10u(q->scale);
    }
    while (e < 6 && m % 1024 == 0) {
        m /= 1024;
        e++;
    }
    u128_str(m, out);
    *suffix = bin[e];
    return 1;
}

size_t dra_quantity_str(const dra_quantity *q, char *buf, size_t size)
{
    char out[2 * DRA_QTY_STR_MAX], digits[DRA_QTY_STR_MAX];
    const char *suffix = NULL;
    dra_quantity_format f = q->format;
    int n;
    if (q->mant == 0) {
        strcpy(out, "0");
    } else {
        if (f == DRA_QTY_BINARY_SI) {
            dra_quantity lo = dra_quantity_from_int64(-1024, f);
            dra_quantity hi = dra_quantity_from_int64(1024, f);
            if ((dra_quantity_cmp(q, &lo) > 0 && dra_quantity_cmp(q, &hi) < 0) ||
                !canon1024(q, digits, &suffix))
                f = DRA_QTY_DECIMAL_SI;
        }
        if (f != DRA_QTY_BINARY_SI) {
            static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
            int64_t e = canon10(uabs(q->mant), q->scale, digits);
            char eb[24];
            if (f == DRA_QTY_DECIMAL_SI && e >= -9 && e <= 18) {
                suffix = si[(e + 9) / 3];
            } else if (e == 0) {
                suffix = "";
            } else {
                snprintf(eb, sizeof eb, "e%lld", (long long)e);
                suffix = eb;
            }
            snprintf(out, sizeof out, "%s%s%s", q->mant < 0 ? "-" : "", digits, suffix);
        } else {
            snprintf(out, sizeof out, "%s%s%s", q->mant < 0 ? "-" : "", digits, suffix);
        }
    }
    n = (int)strlen(out);
    if (size) {
        size_t c = (size_t)n < size ? (size_t)n : size - 1;
        memcpy(buf, out, c);
        buf[c] = '\0';
    }
    return (size_t)n;
}
