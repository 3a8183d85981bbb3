/* Semantic versions 2.0.0: strict parsing (no leading zeros, no empty
 * identifiers, 64-bit overflow rejected as blang/semver does, which
 * Kubernetes' CEL semver library uses) and precedence comparison. */
#include <string.h>

#include "codec_int.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_ident_char(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

/* A numeric field: "0" or [1-9][0-9]*, fitting uint64. */
static int parse_num(const char *s, size_t len, size_t *i, uint64_t *out)
{
    size_t st = *i;
    uint64_t v = 0;
    while (*i < len && is_digit(s[*i])) {
        unsigned d = (unsigned)(s[*i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
        (*i)++;
    }
    if (*i == st || (s[st] == '0' && *i - st > 1))
        return 0;
    *out = v;
    return 1;
}

/* Dot-separated identifiers up to |stop| (or the end); numeric ones are
 * checked for leading zeros and overflow when |numeric_rules|. */
static int parse_idents(const char *s, size_t len, size_t *i, char stop, int numeric_rules)
{
    for (;;) {
        size_t st = *i;
        int all_digits = 1;
        while (*i < len && is_ident_char(s[*i])) {
            all_digits &= is_digit(s[*i]);
            (*i)++;
        }
        if (*i == st)
            return 0;
        if (numeric_rules && all_digits) {
            size_t k = st;
            uint64_t v;
            if (!parse_num(s, *i, &k, &v))
                return 0;
        }
        if (*i < len && s[*i] == '.') {
            (*i)++;
            continue;
        }
        return *i == len || s[*i] == stop;
    }
}

dra_err dra_semver_parse(const char *s, size_t len, dra_semver *out)
{
    size_t i = 0, st;
    dra_semver v;
    memset(&v, 0, sizeof v);
    if (!s)
        return DRA_EPARSE;
    if (!parse_num(s, len, &i, &v.major) || i >= len || s[i++] != '.' ||
        !parse_num(s, len, &i, &v.minor) || i >= len || s[i++] != '.' ||
        !parse_num(s, len, &i, &v.patch))
        return DRA_EPARSE;
    if (i < len && s[i] == '-') {
        st = ++i;
        if (!parse_idents(s, len, &i, '+', 1))
            return DRA_EPARSE;
        v.pre = s + st;
        v.prelen = i - st;
    }
    if (i < len && s[i] == '+') {
        st = ++i;
        if (!parse_idents(s, len, &i, '\0', 0) || i != len)
            return DRA_EPARSE;
        v.build = s + st;
        v.buildlen = i - st;
    }
    if (i != len)
        return DRA_EPARSE;
    *out = v;
    return DRA_OK;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

/* One prerelease identifier against another (section 11.4). */
static int cmp_ident(const char *a, size_t an, const char *b, size_t bn)
{
    int ad = 1, bd = 1, c;
    for (size_t i = 0; i < an; i++)
        ad &= is_digit(a[i]);
    for (size_t i = 0; i < bn; i++)
        bd &= is_digit(b[i]);
    if (ad && bd) {
        /* No leading zeros, so length orders numbers first. */
        if (an != bn)
            return an < bn ? -1 : 1;
        c = memcmp(a, b, an);
        return c < 0 ? -1 : c > 0;
    }
    if (ad != bd)
        return ad ? -1 : 1;
    c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

int dra_semver_cmp(const dra_semver *a, const dra_semver *b)
{
    size_t i = 0, j = 0;
    int c;
    if ((c = cmp_u64(a->major, b->major)) || (c = cmp_u64(a->minor, b->minor)) ||
        (c = cmp_u64(a->patch, b->patch)))
        return c;
    if (!a->prelen || !b->prelen)
        return (a->prelen == 0) - (b->prelen == 0);
    while (i < a->prelen && j < b->prelen) {
        size_t ie = i, je = j;
        while (ie < a->prelen && a->pre[ie] != '.')
            ie++;
        while (je < b->prelen && b->pre[je] != '.')
            je++;
        if ((c = cmp_ident(a->pre + i, ie - i, b->pre + j, je - j)))
            return c;
        i = ie + 1;
        j = je + 1;
    }
    /* A larger set of identifiers has higher precedence. */
    return (i < a->prelen) - (j < b->prelen);
}
