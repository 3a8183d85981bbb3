/*
 * lib_regex.c: RE2 syntax on PCRE2 (see lib_regex.h). The translator
 * walks the pattern once, keeping just enough state (inside a class or
 * not, whether the last item can be repeated, whether it was itself a
 * repetition, the group depth) to reproduce Go's regexp/syntax errors,
 * and rewrites the few places where PCRE2 reads the same text
 * differently (\s, \v, octal escapes, literal braces, '[' in classes).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#include "lib_regex.h"

/* PCRE2's JIT code reads a little past the end of the subject for speed
 * (harmless: within the same allocation page, results unaffected), which
 * memcheck reports as uses of uninitialised memory. Under valgrind the
 * interpreter is used instead, so the test suite's valgrind mode stays
 * meaningful. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define LIB_RE_UNDER_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef LIB_RE_UNDER_VALGRIND
#define LIB_RE_UNDER_VALGRIND() 0
#endif

struct lib_re {
    const dra_mem *mem;
    pcre2_general_context *gctx;
    pcre2_match_context *mctx;
    pcre2_code *code;
    int ngroups;
};

struct lib_re_md {
    const dra_mem *mem;
    pcre2_general_context *gctx;
    pcre2_match_data *md;
};

/* ---- translation ------------------------------------------------------- */

typedef struct xl {
    const char *p;
    size_t len, i;
    dra_buf *out, *why;
    int atom;  /* the last item can take a repetition operator */
    size_t quant_at; /* start of the last repetition operator, or SIZE_MAX */
    int depth;
} xl;

static dra_err xl_fail(xl *x, const char *code, const char *arg, size_t n)
{
    if (x->why)
        dra_buf_printf(x->why, "error parsing regexp: %s: `%.*s`", code, (int)n,
                       arg);
    return DRA_EPARSE;
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int is_word(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_';
}

static int hexval(int c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Length of the UTF-8 sequence starting with |c| (pattern is valid). */
static size_t u8len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

static void emit_cp(xl *x, unsigned long cp)
{
    dra_buf_printf(x->out, "\\x{%lx}", cp);
}

/* One literal character (any code point) from the pattern, escaped. */
static void emit_lit(xl *x, size_t at, size_t n)
{
    unsigned char c = (unsigned char)x->p[at];
    if (n == 1 && !is_word(c) && c >= 0x20 && c < 0x7f)
        dra_buf_putc(x->out, '\\');
    if (n == 1 && (c < 0x20 || c == 0x7f)) {
        emit_cp(x, c);
        return;
    }
    dra_buf_append(x->out, x->p + at, n);
}

/* Numeric escapes: octal \0.. \1xx .., \xHH, \x{H..}. x->i is just past
 * the escape letter or first digit. Returns the code point or -1. */
static long esc_number(xl *x, int c, size_t start)
{
    long v;
    if (c == 'x') {
        if (x->i < x->len && x->p[x->i] == '{') {
            size_t j = x->i + 1;
            v = 0;
            while (j < x->len && hexval((unsigned char)x->p[j]) >= 0 && v <= 0x10FFFF)
                v = v * 16 + hexval((unsigned char)x->p[j++]);
            while (j < x->len && hexval((unsigned char)x->p[j]) >= 0)
                j++;
            if (j == x->i + 1 || j >= x->len || x->p[j] != '}' || v > 0x10FFFF) {
                if (j < x->len && x->p[j] == '}')
                    x->i = j + 1;
                return -1;
            }
            x->i = j + 1;
            return v;
        }
        if (x->i + 1 < x->len && hexval((unsigned char)x->p[x->i]) >= 0 &&
            hexval((unsigned char)x->p[x->i + 1]) >= 0) {
            v = hexval((unsigned char)x->p[x->i]) * 16 +
                hexval((unsigned char)x->p[x->i + 1]);
            x->i += 2;
            return v;
        }
        return -1;
    }
    /* Octal. Go: a lone non-zero digit would be a backreference, which RE2
     * does not have; \0 and \1x..\7x start up to three octal digits. */
    if (c != '0' && (x->i >= x->len || x->p[x->i] < '0' || x->p[x->i] > '7'))
        return -1;
    v = c - '0';
    for (int k = 0; k < 2 && x->i < x->len && x->p[x->i] >= '0' && x->p[x->i] <= '7'; k++)
        v = v * 8 + (x->p[x->i++] - '0');
    (void)start;
    return v;
}

/* An escape outside or inside a class. Emits its translation. */
static dra_err xl_escape(xl *x, int in_class)
{
    size_t start = x->i++; /* at the backslash */
    int c;
    long v;
    if (x->i >= x->len)
        return xl_fail(x, "trailing backslash at end of expression", "", 0);
    c = (unsigned char)x->p[x->i++];
    switch (c) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7':
    case '0': case 'x':
        if ((v = esc_number(x, c, start)) < 0)
            break;
        emit_cp(x, (unsigned long)v);
        return DRA_OK;
    case 'a': case 'f': case 't': case 'n': case 'r':
        dra_buf_putc(x->out, '\\');
        dra_buf_putc(x->out, (char)c);
        return DRA_OK;
    case 'v': /* PCRE2 reads \v as a class of vertical space */
        emit_cp(x, 0x0B);
        return DRA_OK;
    case 'd': case 'D': case 'w': case 'W':
        dra_buf_putc(x->out, '\\');
        dra_buf_putc(x->out, (char)c);
        return DRA_OK;
    case 's': /* RE2's \s is [\t\n\f\r ]; PCRE2's also has \v */
        dra_buf_puts(x->out, in_class ? "\\t\\n\\f\\r\\x20" : "[\\t\\n\\f\\r\\x20]");
        return DRA_OK;
    case 'S':
        dra_buf_puts(x->out, in_class ? "\\x00-\\x08\\x0b\\x0e-\\x1f\\x{21}-\\x{10ffff}"
                                      : "[^\\t\\n\\f\\r\\x20]");
        return DRA_OK;
    case 'b': case 'B': case 'A': case 'z':
        if (in_class)
            break;
        dra_buf_putc(x->out, '\\');
        dra_buf_putc(x->out, (char)c);
        return DRA_OK;
    case 'p': case 'P': {
        size_t s0 = x->i;
        if (x->i < x->len && x->p[x->i] == '{') {
            const char *e = memchr(x->p + x->i, '}', x->len - x->i);
            if (!e)
                break;
            x->i = (size_t)(e - x->p) + 1;
        } else if (x->i < x->len && x->p[x->i] >= 'A' && x->p[x->i] <= 'Z') {
            x->i++;
        } else {
            break;
        }
        dra_buf_putc(x->out, '\\');
        dra_buf_putc(x->out, (char)c);
        dra_buf_append(x->out, x->p + s0, x->i - s0);
        return DRA_OK;
    }
    default:
        if (c < 0x80 && !is_word(c)) { /* escaped punctuation: a literal */
            emit_lit(x, x->i - 1, 1);
            return DRA_OK;
        }
        if (c >= 0x80)
            x->i += u8len((unsigned char)c) - 1;
        if (x->i > x->len) /* a truncated sequence: stay inside the pattern */
            x->i = x->len;
        break;
    }
    return xl_fail(x, "invalid escape sequence", x->p + start, x->i - start);
}

static const char *const posix_names[] = {
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph",
    "lower", "print", "punct", "space", "upper", "word", "xdigit",
};

/* "[:name:]" or "[:^name:]" at x->i inside a class. 1 handled, 0 not a
 * POSIX class, -1 error. */
static int xl_posix(xl *x, dra_err *e)
{
    const char *s = x->p + x->i, *end;
    size_t n = x->len - x->i, nl;
    const char *name;
    if (n < 4 || s[1] != ':')
        return 0;
    end = NULL;
    for (size_t k = 2; k + 1 < n; k++)
        if (s[k] == ':' && s[k + 1] == ']') {
            end = s + k;
            break;
        }
    if (!end)
        return 0;
    name = s + 2 + (s[2] == '^');
    nl = (size_t)(end - name);
    for (size_t k = 0; k < sizeof posix_names / sizeof posix_names[0]; k++)
        if (strlen(posix_names[k]) == nl && memcmp(posix_names[k], name, nl) == 0) {
            dra_buf_append(x->out, s, (size_t)(end - s) + 2);
            x->i += (size_t)(end - s) + 2;
            return 1;
        }
    *e = xl_fail(x, "invalid character class range", s, (size_t)(end - s) + 2);
    return -1;
}

/* One class member that can start or end a range: a literal code point.
 * Returns the code point, or -1 when the member is not a single character
 * (an escape like \d, already emitted) and -2 on error (*e set). */
static long xl_class_char(xl *x, dra_err *e)
{
    unsigned char c = (unsigned char)x->p[x->i];
    if (c == '\\') {
        size_t at = x->i;
        int k = x->i + 1 < x->len ? (unsigned char)x->p[x->i + 1] : 0;
        long v;
        if (k == 'x' || (k >= '0' && k <= '7')) {
            x->i += 2;
            if ((v = esc_number(x, k, at)) < 0) {
                *e = xl_fail(x, "invalid escape sequence", x->p + at, x->i - at);
                return -2;
            }
            return v;
        }
        if (k && k < 0x80 && !is_word(k)) {
            x->i += 2;
            return k;
        }
        if (k == 'a' || k == 'f' || k == 't' || k == 'n' || k == 'r' || k == 'v') {
            static const char from[] = "aftnrv", to[] = "\a\f\t\n\r\v";
            x->i += 2;
            return (unsigned char)to[strchr(from, k) - from];
        }
        if ((*e = xl_escape(x, 1)) != DRA_OK)
            return -2;
        return -1;
    }
    {
        size_t i = x->i, n = u8len(c);
        long cp = c < 0x80 ? c : c < 0xE0 ? c & 0x1F : c < 0xF0 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < n && i + k < x->len; k++)
            cp = cp << 6 | (x->p[i + k] & 0x3F);
        x->i = i + n > x->len ? x->len : i + n;
        return cp;
    }
}

static dra_err xl_class(xl *x)
{
    size_t start = x->i++;
    int first = 1;
    dra_err e = DRA_OK;
    dra_buf_putc(x->out, '[');
    if (x->i < x->len && x->p[x->i] == '^') {
        dra_buf_putc(x->out, '^');
        x->i++;
    }
    for (;;) {
        size_t at = x->i;
        long lo, hi;
        int r;
        if (x->i >= x->len)
            return xl_fail(x, "missing closing ]", x->p + start, x->len - start);
        if (x->p[x->i] == ']' && !first)
            break;
        first = 0;
        if (x->p[x->i] == '[' && (r = xl_posix(x, &e)) != 0) {
            if (r < 0)
                return e;
            continue;
        }
        if ((lo = xl_class_char(x, &e)) == -2)
            return e;
        if (lo == -1)
            continue;
        if (x->i + 1 < x->len && x->p[x->i] == '-' && x->p[x->i + 1] != ']') {
            x->i++;
            if ((hi = xl_class_char(x, &e)) == -2)
                return e;
            if (hi < 0 || hi < lo)
                return xl_fail(x, "invalid character class range", x->p + at,
                               x->i - at);
            emit_cp(x, (unsigned long)lo);
            dra_buf_putc(x->out, '-');
            emit_cp(x, (unsigned long)hi);
            continue;
        }
        emit_cp(x, (unsigned long)lo);
    }
    x->i++;
    dra_buf_putc(x->out, ']');
    return DRA_OK;
}

/* "(?..." group openers and flag groups. */
static dra_err xl_group(xl *x)
{
    const char *s = x->p + x->i;
    size_t n = x->len - x->i, k;
    int neg = 0, nflags = 0;
    if (n < 2 || s[1] != '?') {
        x->i++;
        x->depth++;
        dra_buf_putc(x->out, '(');
        return DRA_OK;
    }
    if ((n > 3 && s[2] == 'P' && s[3] == '<') || (n > 2 && s[2] == '<' &&
                                                    !(n > 3 && (s[3] == '=' || s[3] == '!')))) {
        size_t ns = s[2] == 'P' ? 4 : 3;
        const char *end = memchr(s + ns, '>', n - ns);
        if (!end)
            return xl_fail(x, "invalid named capture", s, n);
        if (end == s + ns)
            return xl_fail(x, "invalid named capture", s, (size_t)(end - s) + 1);
        for (const char *c = s + ns; c < end; c++)
            if (!is_word((unsigned char)*c))
                return xl_fail(x, "invalid named capture", s, (size_t)(end - s) + 1);
        dra_buf_puts(x->out, "(?<");
        dra_buf_append(x->out, s + ns, (size_t)(end - s) - ns);
        dra_buf_putc(x->out, '>');
        x->i += (size_t)(end - s) + 1;
        x->depth++;
        return DRA_OK;
    }
    for (k = 2; k < n; k++) {
        char c = s[k];
        if (c == 'i' || c == 'm' || c == 's' || c == 'U') {
            nflags++;
            continue;
        }
        if (c == '-' && !neg) {
            neg = 1;
            nflags = 0;
            continue;
        }
        if ((c == ':' || c == ')') && !(neg && nflags == 0) && (k > 2)) {
            dra_buf_append(x->out, s, k + 1);
            x->i += k + 1;
            if (c == ':')
                x->depth++;
            else
                x->atom = 0;
            return DRA_OK;
        }
        break;
    }
    return xl_fail(x, "invalid or unsupported Perl syntax", s, k < n ? k + 1 : n);
}

/* {n}, {n,}, {n,m} at x->i. 1 a repeat (emitted), 0 a literal brace,
 * -1 error. */
static int xl_braces(xl *x, dra_err *e)
{
    const char *s = x->p + x->i;
    size_t n = x->len - x->i, k = 1;
    long lo = 0, hi = -1;
    int digits = 0;
    while (k < n && is_digit((unsigned char)s[k]) && digits < 9)
        lo = lo * 10 + (s[k++] - '0'), digits++;
    if (!digits || k >= n)
        return 0;
    if (s[k] == ',') {
        k++;
        if (k < n && is_digit((unsigned char)s[k])) {
            hi = 0;
            digits = 0;
            while (k < n && is_digit((unsigned char)s[k]) && digits < 9)
                hi = hi * 10 + (s[k++] - '0'), digits++;
        } else {
            hi = -2; /* unbounded */
        }
    } else {
        hi = lo;
    }
    if (k >= n || s[k] != '}')
        return 0;
    k++;
    if (!x->atom) {
        *e = xl_fail(x, "missing argument to repetition operator", s, k);
        return -1;
    }
    if (lo > LIB_RE_MAX_REPEAT || hi > LIB_RE_MAX_REPEAT || (hi >= 0 && hi < lo)) {
        *e = xl_fail(x, "invalid repeat count", s, k);
        return -1;
    }
    dra_buf_append(x->out, s, k);
    x->i += k;
    return 1;
}

/* A repetition operator at x->i ('*', '+', '?' or a brace repeat). */
static dra_err xl_repeat(xl *x)
{
    size_t at = x->i;
    dra_err e = DRA_OK;
    char c = x->p[x->i];
    if (c == '{') {
        int r = xl_braces(x, &e);
        if (r < 0)
            return e;
        if (r == 0) { /* a literal brace is an ordinary atom */
            dra_buf_puts(x->out, "\\{");
            x->i++;
            x->atom = 1;
            x->quant_at = SIZE_MAX;
            return DRA_OK;
        }
    } else {
        if (!x->atom)
            return xl_fail(x, "missing argument to repetition operator", x->p + at, 1);
        dra_buf_putc(x->out, c);
        x->i++;
    }
    if (x->quant_at != SIZE_MAX)
        return xl_fail(x, "invalid nested repetition operator", x->p + x->quant_at,
                       x->i - x->quant_at);
    if (x->i < x->len && x->p[x->i] == '?') { /* non-greedy */
        dra_buf_putc(x->out, '?');
        x->i++;
    }
    x->quant_at = at;
    return DRA_OK;
}

/* \Q...\E (or to the end): every character literal; a repetition
 * after it applies to the last character, as in Go. */
static void xl_quoted(xl *x)
{
    x->i += 2;
    while (x->i < x->len) {
        size_t n;
        if (x->p[x->i] == '\\' && x->i + 1 < x->len && x->p[x->i + 1] == 'E') {
            x->i += 2;
            break;
        }
        n = u8len((unsigned char)x->p[x->i]);
        if (x->i + n > x->len)
            n = x->len - x->i;
        emit_lit(x, x->i, n);
        x->i += n;
    }
}

static dra_err xl_item(xl *x)
{
    unsigned char c = (unsigned char)x->p[x->i];
    dra_err e = DRA_OK;
    int atom = 1;
    switch (c) {
    case '*': case '+': case '?': case '{':
        return xl_repeat(x);
    case '\\':
        if (x->i + 1 < x->len && x->p[x->i + 1] == 'Q') {
            xl_quoted(x);
            break;
        }
        e = xl_escape(x, 0);
        break;
    case '[':
        e = xl_class(x);
        break;
    case '(':
        e = xl_group(x);
        x->atom = 0; /* nothing inside the group yet (or a flag group) */
        x->quant_at = SIZE_MAX;
        return e;
    case ')':
        if (x->depth == 0)
            return xl_fail(x, "unexpected )", x->p, x->len);
        x->depth--;
        dra_buf_putc(x->out, ')');
        x->i++;
        break;
    case '|':
        dra_buf_putc(x->out, '|');
        x->i++;
        atom = 0;
        break;
    case '}': case ']':
        emit_lit(x, x->i, 1);
        x->i++;
        break;
    case '.': case '^': case '$':
        dra_buf_putc(x->out, (char)c);
        x->i++;
        break;
    default: {
        size_t n = u8len(c);
        if (x->i + n > x->len)
            n = x->len - x->i;
        emit_lit(x, x->i, n);
        x->i += n;
    }
    }
    x->atom = atom;
    x->quant_at = SIZE_MAX;
    return e;
}

dra_err lib_re_translate(const char *pat, size_t len, dra_buf *out, dra_buf *why)
{
    xl x = {pat, len, 0, out, why, 0, SIZE_MAX, 0};
    dra_err e;
    while (x.i < len)
        if ((e = xl_item(&x)) != DRA_OK)
            return e;
    if (x.depth > 0)
        return xl_fail(&x, "missing closing )", pat, len);
    return out->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- compile and search --------------------------------------------------- */

static void *re_malloc(PCRE2_SIZE size, void *ud)
{
    return dra_malloc(ud, size);
}

static void re_free(void *p, void *ud)
{
    dra_free(ud, p);
}

void lib_re_free(lib_re *re)
{
    if (!re)
        return;
    pcre2_code_free(re->code);
    pcre2_match_context_free(re->mctx);
    pcre2_general_context_free(re->gctx);
    dra_free(re->mem, re);
}

int lib_re_ngroups(const lib_re *re)
{
    return re->ngroups;
}

static dra_err re_compile_pcre(lib_re *re, const char *xlat, size_t len,
                               dra_buf *why)
{
    pcre2_compile_context *cctx = pcre2_compile_context_create(re->gctx);
    int ec = 0;
    PCRE2_SIZE eo = 0;
    uint32_t ng = 0;
    if (!cctx)
        return DRA_ENOMEM;
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
    pcre2_set_parens_nest_limit(cctx, 1000);
    re->code = pcre2_compile((PCRE2_SPTR)xlat, len,
                             PCRE2_UTF | PCRE2_DOLLAR_ENDONLY |
                                 PCRE2_NEVER_BACKSLASH_C,
                             &ec, &eo, cctx);
    pcre2_compile_context_free(cctx);
    if (!re->code) {
        PCRE2_UCHAR msg[256];
        if (ec == PCRE2_ERROR_HEAP_FAILED)
            return DRA_ENOMEM;
        pcre2_get_error_message(ec, msg, sizeof msg);
        if (why)
            dra_buf_printf(why, "error parsing regexp: %s", (const char *)msg);
        return DRA_EPARSE;
    }
    pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &ng);
    re->ngroups = (int)ng;
    /* JIT is an optimisation only: failure (or no JIT support) is fine. */
    if (!LIB_RE_UNDER_VALGRIND())
        (void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
    re->mctx = pcre2_match_context_create(re->gctx);
    if (!re->mctx)
        return DRA_ENOMEM;
    pcre2_set_match_limit(re->mctx, LIB_RE_MATCH_LIMIT);
    pcre2_set_depth_limit(re->mctx, LIB_RE_DEPTH_LIMIT);
    pcre2_set_heap_limit(re->mctx, LIB_RE_HEAP_LIMIT_KIB);
    return DRA_OK;
}

dra_err lib_re_compile(const dra_mem *mem, const char *pat, size_t len,
                       lib_re **out, dra_buf *why)
{
    dra_buf xb;
    lib_re *re;
    dra_err e;
    *out = NULL;
    if (len > LIB_RE_MAX_PATTERN) {
        if (why)
            dra_buf_puts(why, "error parsing regexp: expression too large");
        return DRA_ELIMIT;
    }
    dra_buf_init(&xb, mem);
    if ((e = lib_re_translate(pat, len, &xb, why)) != DRA_OK) {
        dra_buf_fini(&xb);
        return e;
    }
    re = dra_calloc(mem, 1, sizeof *re);
    if (!re) {
        dra_buf_fini(&xb);
        return DRA_ENOMEM;
    }
    re->mem = mem;
    re->gctx = pcre2_general_context_create(re_malloc, re_free, (void *)mem);
    e = re->gctx ? re_compile_pcre(re, xb.p ? xb.p : "", xb.len, why) : DRA_ENOMEM;
    dra_buf_fini(&xb);
    if (e != DRA_OK) {
        lib_re_free(re);
        return e;
    }
    *out = re;
    return DRA_OK;
}

dra_err lib_re_md_new(const dra_mem *mem, lib_re_md **out)
{
    lib_re_md *md = dra_calloc(mem, 1, sizeof *md);
    *out = NULL;
    if (!md)
        return DRA_ENOMEM;
    md->mem = mem;
    md->gctx = pcre2_general_context_create(re_malloc, re_free, (void *)mem);
    if (md->gctx)
        md->md = pcre2_match_data_create(32, md->gctx);
    if (!md->md) {
        lib_re_md_free(md);
        return DRA_ENOMEM;
    }
    *out = md;
    return DRA_OK;
}

void lib_re_md_free(lib_re_md *md)
{
    if (!md)
        return;
    pcre2_match_data_free(md->md);
    pcre2_general_context_free(md->gctx);
    dra_free(md->mem, md);
}

int lib_re_search(const lib_re *re, lib_re_md *md, const char *s, size_t len,
                  size_t start, int utf_checked, long *ovec, size_t novec,
                  dra_buf *why)
{
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, start,
                         utf_checked ? PCRE2_NO_UTF_CHECK : 0, md->md, re->mctx);
    if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md->md);
        uint32_t pairs = pcre2_get_ovector_count(md->md);
        if (rc == PCRE2_ERROR_NOMATCH)
            return 0;
        for (size_t k = 0; k < novec / 2; k++) {
            int set = k < pairs && (rc == 0 || k < (size_t)rc) &&
                      ov[2 * k] != PCRE2_UNSET;
            ovec[2 * k] = set ? (long)ov[2 * k] : -1;
            ovec[2 * k + 1] = set ? (long)ov[2 * k + 1] : -1;
        }
        return 1;
    }
    if (why) {
        if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
            rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT)
            dra_buf_puts(why, "regular expression match exceeded its resource "
                              "limit (pattern too complex for this input)");
        else if (rc == PCRE2_ERROR_NOMEMORY)
            dra_buf_puts(why, "out of memory");
        else {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            dra_buf_printf(why, "regular expression match failed: %s",
                           (const char *)msg);
        }
    }
    return -1;
}
