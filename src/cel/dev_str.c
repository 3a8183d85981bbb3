/*
 * dev_str.c: ANY_DEV's string kernel. `['a100', 'h100'].exists(p,
 * device.attributes['d'].productName.lowerAscii().contains(p))` is the
 * common shape of a model selector; with the device string in hand, the
 * loop needs no call, no allocation and no evaluation context: the string
 * is converted once into a padded buffer and each constant is searched in
 * it, the cost charged as the overloads' cost functions would charge it.
 */
#include "vm.h"

/* SSE2 is part of x86-64; elsewhere (or with DRA_CEL_NO_SIMD defined, to
 * test that path here) the library's portable conversion and search. */
#if defined(__SSE2__) && !defined(DRA_CEL_NO_SIMD)
#define DSK_SSE2 1
#include <emmintrin.h>
#endif

/* Longest device string the kernel takes (longer: the generic loop). */
#define DSK_MAX 256
/* Slack after the string: the search loads 16 bytes from any position. */
#define DSK_PAD 32

#ifdef DSK_SSE2

/* The bytes of |v| that are ASCII letters of the other case flipped:
 * signed compares, so bytes >= 0x80 (negative) are never letters. */
static inline __m128i sse_case(__m128i v, int upper)
{
    __m128i lo = _mm_set1_epi8(upper ? 'a' - 1 : 'A' - 1);
    __m128i hi = _mm_set1_epi8(upper ? 'z' + 1 : 'Z' + 1);
    __m128i in = _mm_and_si128(_mm_cmpgt_epi8(v, lo), _mm_cmplt_epi8(v, hi));
    return _mm_xor_si128(v, _mm_and_si128(in, _mm_set1_epi8(0x20)));
}

/* Copies |s| (n <= DSK_MAX bytes) into |b|, case-converted by |conv|
 * (CEL_DSK_LOWER / CEL_DSK_UPPER / 0), with zeros after it. Short
 * strings are moved with two overlapping loads of one width, so no
 * byte beyond s + n is read. */
static void dsk_load(const char *s, size_t n, char *b, unsigned conv)
{
    const __m128i zero = _mm_setzero_si128();
    int upper = (conv & CEL_DSK_UPPER) != 0;
    size_t i = 0;
    if (n >= 16) {
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)(b + i), conv ? sse_case(v, upper) : v);
        }
        if (i < n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16));
            _mm_storeu_si128((__m128i *)(void *)(b + n - 16), conv ? sse_case(v, upper) : v);
        }
        _mm_storeu_si128((__m128i *)(void *)(b + n), zero);
        return;
    }
    _mm_storeu_si128((__m128i *)(void *)b, zero);
    _mm_storeu_si128((__m128i *)(void *)(b + 16), zero);
    if (n >= 8) {
        uint64_t x, y;
        memcpy(&x, s, 8);
        memcpy(&y, s + n - 8, 8);
        memcpy(b + n - 8, &y, 8);
        memcpy(b, &x, 8);
    } else if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(b + n - 4, &y, 4);
        memcpy(b, &x, 4);
    } else {
        for (; i < n; i++)
            b[i] = s[i];
    }
    if (conv) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b);
        _mm_storeu_si128((__m128i *)(void *)b, sse_case(v, upper));
    }
}

/* 1 when needle |t| occurs in |h| (n bytes, DSK_PAD readable bytes
 * after it): candidates are the positions whose first and last bytes
 * match, sixteen at a time; each is then compared whole, a needle of up
 * to 16 bytes in one 16-byte compare. */
static inline int dsk_contains(const char *h, size_t n, const cel_dsk_needle *t)
{
    size_t m = t->n, last;
    __m128i f, l, head;
    if (m - 1 >= n) /* m == 0 (always there) or m > n */
        return m == 0;
    f = _mm_load_si128((const __m128i *)(const void *)t->first);
    l = _mm_load_si128((const __m128i *)(const void *)t->last);
    head = _mm_load_si128((const __m128i *)(const void *)t->head);
    last = n - m;
    for (size_t i = 0;; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(h + i));
        __m128i z = _mm_loadu_si128((const __m128i *)(const void *)(h + i + m - 1));
        unsigned mask = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(a, f), _mm_cmpeq_epi8(z, l)));
        if (last - i < 15)
            mask &= (2u << (last - i)) - 1;
        for (; mask; mask &= mask - 1) {
            const char *at = h + i + (unsigned)__builtin_ctz(mask);
            __m128i w = _mm_loadu_si128((const __m128i *)(const void *)at);
            unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, head));
            if ((eq & t->hmask) == t->hmask && (m <= 16 || cel_bytes_eq(at, t->s, m)))
                return 1;
        }
        if (last - i < 16)
            return 0;
    }
}

#else /* no SSE2: the library's own conversion and search */

static void dsk_load(const char *s, size_t n, char *b, unsigned conv)
{
    if (conv)
        cel_ascii_case_copy(s, n, b, (conv & CEL_DSK_UPPER) != 0);
    else
        memcpy(b, s, n);
}

static int dsk_contains(const char *h, size_t n, const cel_dsk_needle *t)
{
    return cel_has_sub(h, n, t->s, t->n);
}

#endif

cel_dsk *cel_dsk_new(dra_arena *ar, const cel_list *l, unsigned kern, int all)
{
    cel_dsk *k = dra_arena_zalloc(ar, sizeof *k);
    cel_dsk_needle *t = dra_arena_array(ar, l->n ? l->n : 1, sizeof *t);
    if (!k || !t)
        return NULL;
    for (size_t i = 0; i < l->n; i++) {
        const cel_value *v = &l->v[i];
        memset(t[i].first, v->n ? v->u.s[0] : 0, 16);
        memset(t[i].last, v->n ? v->u.s[v->n - 1] : 0, 16);
        memset(t[i].head, 0, 16);
        memcpy(t[i].head, v->u.s, v->n < 16 ? v->n : 16);
        t[i].hmask = v->n >= 16 ? 0xFFFFu : (1u << v->n) - 1;
        t[i].s = v->u.s;
        t[i].n = v->n;
        t[i].t10 = cel_tenth(cel_value_size(*v));
    }
    k->t = t;
    k->nt = l->n;
    k->kern = (uint8_t)kern;
    k->all = (uint8_t)(all != 0);
    return k;
}

int cel_dev_str_loop(const cel_dsk *k, cel_value inv, uint64_t limit, uint64_t *cost_io,
                     int *result)
{
    _Alignas(16) char buf[DSK_MAX + DSK_PAD];
    const char *s = inv.u.s;
    size_t n = inv.n;
    uint64_t cost = *cost_io, sz10 = cel_tenth(cel_value_size(inv)), step;
    unsigned conv = k->kern & (CEL_DSK_LOWER | CEL_DSK_UPPER), test = k->kern & CEL_DSK_TEST;
    int all = k->all, accu = all;
    const cel_dsk_needle *t = k->t, *end = t + k->nt;
    if (n > DSK_MAX)
        return 0;
    if (test == CEL_DSK_CONTAINS || conv) {
        dsk_load(s, n, buf, conv);
        s = buf;
    }
    /* per iteration after the loop condition, before the call: the
     * device value (DEV_ATTR, or HOIST_GET's cached value) and its
     * conversion */
    step = 4 + (conv ? sz10 : 0);
    for (; t < end && cel_any_goes_on(cel_bool(accu), all, &cost); t++) {
        int r;
        cost += step;
        if (conv && cost > limit)
            goto over;
        cost += CEL_COST_ANY_CALL;
        if (test == CEL_DSK_CONTAINS) {
            r = dsk_contains(s, n, t);
            cost += sz10 * t->t10;
        } else {
            r = t->n <= n && !memcmp(test == CEL_DSK_STARTS ? s : s + n - t->n, t->s, t->n);
            cost += t->t10 ? t->t10 : 1;
        }
        if (cost > limit)
            goto over;
        accu = all ? accu && r : accu || r;
    }
    *cost_io = cost;
    *result = accu;
    return 1;
over:
    *cost_io = cost;
    return -1;
}
