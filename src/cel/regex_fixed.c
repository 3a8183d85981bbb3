/*
 * regex_fixed.c: regular expressions whose every match is a fixed run of
 * single ASCII bytes, matched without PCRE2. Selector patterns such as
 * `^0000:[0-3][0-9a-f]:` (literals, escaped punctuation, \d \w \s,
 * non-negated classes of ASCII characters and ranges, `{n}`, an optional
 * leading `^` and trailing `$`) are recognised at compile time; each atom
 * becomes a 256-bit set and a match is a test per byte. Anything else
 * (alternation, groups, `.`, repetitions other than {n}, negated or
 * non-ASCII classes, flags) is left to PCRE2, so results are RE2's by
 * construction: an ASCII-only atom can match neither a UTF-8 lead nor a
 * continuation byte, so byte positions and code-point positions agree.
 */
#include <string.h>

#include "vm.h"

static void set_add(uint8_t *set, unsigned c)
{
    set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static void set_range(uint8_t *set, unsigned lo, unsigned hi)
{
    for (unsigned c = lo; c <= hi; c++)
        set_add(set, c);
}

static int is_alnum(unsigned c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* \d \w \s as RE2 defines them (ASCII only). */
static int perl_class(unsigned e, uint8_t *set)
{
    switch (e) {
    case 'd': set_range(set, '0', '9'); return 1;
    case 'w':
        set_range(set, '0', '9');
        set_range(set, 'a', 'z');
        set_range(set, 'A', 'Z');
        set_add(set, '_');
        return 1;
    case 's':
        set_add(set, '\t');
        set_add(set, '\n');
        set_add(set, '\f');
        set_add(set, '\r');
        set_add(set, ' ');
        return 1;
    default: return 0;
    }
}

/* The single character an escape stands for, or -1: punctuation escapes
 * itself, and \t \n \r \f. */
static int escaped_char(unsigned e)
{
    if (e < 0x80 && e > 0x20 && e != 0x7f && !is_alnum(e))
        return (int)e;
    switch (e) {
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'f': return '\f';
    default: return -1;
    }
}

/* A class body after '[' at p[*i]; 1 with the set, 0 when not simple. */
static int parse_class(const unsigned char *p, size_t len, size_t *i, uint8_t *set)
{
    size_t k = *i;
    int first = 1;
    if (k < len && p[k] == '^')
        return 0;
    for (;;) {
        int lo, hi;
        if (k >= len)
            return 0;
        if (p[k] == ']' && !first)
            break;
        first = 0;
        if (p[k] >= 0x80 || p[k] == '[')
            return 0;
        if (p[k] == '\\') {
            if (k + 1 >= len)
                return 0;
            if (perl_class(p[k + 1], set)) {
                k += 2;
                continue;
            }
            if ((lo = escaped_char(p[k + 1])) < 0)
                return 0;
            k += 2;
        } else {
            lo = p[k++];
        }
        /* '-' is literal only first or last (Go's rules otherwise differ
         * from PCRE2's in corners: leave those to PCRE2). */
        if (lo == '-' && p[k - 1] == '-' && k - 1 != *i && (k >= len || p[k] != ']'))
            return 0;
        hi = lo;
        if (k + 1 < len && p[k] == '-' && p[k + 1] != ']') {
            k++;
            if (p[k] >= 0x80 || p[k] == '[')
                return 0;
            if (p[k] == '\\') {
                if (k + 1 >= len || (hi = escaped_char(p[k + 1])) < 0)
                    return 0;
                k += 2;
            } else {
                hi = p[k++];
            }
            if (hi < lo)
                return 0;
        }
        set_range(set, (unsigned)lo, (unsigned)hi);
    }
    *i = k + 1;
    return 1;
}

/* One atom at p[*i] into |set|; 1, or 0 when not simple. */
static int parse_atom(const unsigned char *p, size_t len, size_t *i, uint8_t *set)
{
    unsigned c = p[*i];
    int e;
    if (c == '[') {
        (*i)++;
        return parse_class(p, len, i, set);
    }
    if (c == '\\') {
        if (*i + 1 >= len)
            return 0;
        if (perl_class(p[*i + 1], set)) {
            *i += 2;
            return 1;
        }
        if ((e = escaped_char(p[*i + 1])) < 0)
            return 0;
        set_add(set, (unsigned)e);
        *i += 2;
        return 1;
    }
    if (c >= 0x80 || c < 0x20 || strchr(".+*?()|[]{}^$", (int)c))
        return 0;
    set_add(set, c);
    (*i)++;
    return 1;
}

/* `{n}` after an atom: *n (1 when there is none); 0 for any other
 * repetition (or a brace RE2 would read as a literal). */
static int parse_count(const unsigned char *p, size_t len, size_t *i, unsigned *n)
{
    size_t k = *i;
    *n = 1;
    if (k >= len || (p[k] != '{' && p[k] != '*' && p[k] != '+' && p[k] != '?'))
        return 1;
    if (p[k] != '{')
        return 0;
    *n = 0;
    if (k + 2 < len && p[k + 1] == '0' && p[k + 2] >= '0' && p[k + 2] <= '9')
        return 0; /* Go reads {02} as literal text */
    for (k++; k < len && p[k] >= '0' && p[k] <= '9' && *n <= CEL_FIXRE_MAX; k++)
        *n = *n * 10 + (p[k] - '0');
    if (k >= len || p[k] != '}' || k == *i + 1 || *n == 0 || *n > CEL_FIXRE_MAX)
        return 0;
    *i = k + 1;
    return 1;
}

/* The byte a set holds when it holds exactly one, else -1. */
static int only_byte(const uint8_t *set)
{
    int found = -1;
    for (unsigned c = 0; c < 256; c++)
        if ((set[c >> 3] >> (c & 7)) & 1) {
            if (found >= 0)
                return -1;
            found = (int)c;
        }
    return found;
}

/* Literal atoms among the first eight into one word test (byte order as
 * loaded, whatever the machine's); the rest into chk and cls. */
static void literal_word(cel_fixre *f, uint8_t (*set)[32])
{
    unsigned char pm[8] = {0}, pv[8] = {0};
    f->pn = (uint8_t)(f->n < 8 ? f->n : 8);
    for (unsigned i = 0; i < f->n; i++) {
        int b = i < 8 ? only_byte(set[i]) : -1;
        if (b >= 0) {
            pm[i] = 0xff;
            pv[i] = (unsigned char)b;
            continue;
        }
        for (unsigned c = 0; c < 256; c++)
            if ((set[i][c >> 3] >> (c & 7)) & 1)
                f->cls[c] |= (uint64_t)1 << f->nchk;
        f->chk[f->nchk++] = (uint8_t)i;
    }
    memcpy(&f->pmask, pm, 8);
    memcpy(&f->pval, pv, 8);
}

cel_fixre *cel_fixre_compile(dra_arena *ar, const char *pat, size_t len, int *oom)
{
    uint8_t s[CEL_FIXRE_MAX][32];
    const unsigned char *p = (const unsigned char *)pat;
    size_t i = 0, n = 0;
    int start = 0, end = 0;
    cel_fixre *f;
    *oom = 0;
    memset(s, 0, sizeof s);
    if (i < len && p[i] == '^')
        start = 1, i++;
    while (i < len) {
        unsigned count;
        if (p[i] == '$' && i + 1 == len) {
            end = 1;
            break;
        }
        if (n == CEL_FIXRE_MAX || !parse_atom(p, len, &i, s[n]) ||
            !parse_count(p, len, &i, &count) || n + count > CEL_FIXRE_MAX)
            return NULL;
        for (unsigned k = 1; k < count; k++)
            memcpy(s[n + k], s[n], 32);
        n += count;
    }
    if (!(f = dra_arena_zalloc(ar, sizeof *f))) {
        *oom = 1;
        return NULL;
    }
    f->start = (uint8_t)start;
    f->end = (uint8_t)end;
    f->n = (uint16_t)n;
    literal_word(f, s);
    return f;
}
