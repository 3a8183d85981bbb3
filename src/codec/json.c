/* JSON <-> dra_doc. The decoder is a small recursive-descent parser that
 * builds nodes straight into the caller's arena, keeps member order and
 * the text of numbers beyond int64, records line:col on every node and
 * reports errors in encoding/json's words with a position. The encoder
 * prints like Go's json.Marshal / MarshalIndent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_int.h"

/* Maps larger than this get a hash index for the duplicate-key check. */
#define JP_LINEAR_KEYS 32

typedef struct jp {
    dra_arena *a;
    dra_diag *d;
    const char *s, *p, *end;
    const char *line_start;
    size_t cont; /* UTF-8 continuation bytes on this line before p */
    int line;
    int depth;
    dra_err err;
    dra_doc_member *stk; /* pending list items / map members */
    size_t n, cap;
} jp;

static int jp_col(const jp *j, const char *at)
{
    /* Columns count characters, not bytes, like libyaml's marks. */
    size_t cont = j->cont;
    for (const char *q = j->p; q < at; q++)
        if (((unsigned char)*q & 0xC0) == 0x80)
            cont++;
    for (const char *q = at; q < j->p; q++) /* |at| behind us: a key */
        if (((unsigned char)*q & 0xC0) == 0x80)
            cont--;
    return (int)((size_t)(at - j->line_start) - cont + 1);
}

static void *jp_fail(jp *j, const char *at, dra_err err, const char *fmt, ...)
    DRA_PRINTF(4, 5);
static void *jp_fail(jp *j, const char *at, dra_err err, const char *fmt, ...)
{
    va_list ap;
    if (j->err)
        return NULL;
    j->err = err;
    if (err == DRA_ENOMEM) {
        dra_diag_add(j->d, "", 0, 0, "out of memory");
        return NULL;
    }
    va_start(ap, fmt);
    dra_diag_vadd(j->d, "", j->line, jp_col(j, at), fmt, ap);
    va_end(ap);
    return NULL;
}

/* Go quotes the offending character: 'x', or '\n' style escapes. */
static const char *char_name(char c, char buf[8])
{
    unsigned char u = (unsigned char)c;
    if (c == '\'')
        return "'\\''";
    if (c == '"')
        return "'\"'";
    if (u >= 0x20 && u < 0x7F) {
        buf[0] = '\'';
        buf[1] = c;
        buf[2] = '\'';
        buf[3] = '\0';
        return buf;
    }
    snprintf(buf, 8, "0x%02x", u);
    return buf;
}

static void *jp_bad_char(jp *j, const char *context)
{
    char b[8];
    if (j->p >= j->end)
        return jp_fail(j, j->p, DRA_EPARSE, "unexpected end of JSON input");
    return jp_fail(j, j->p, DRA_EPARSE, "invalid character %s %s",
                   char_name(*j->p, b), context);
}

static void jp_ws(jp *j)
{
    while (j->p < j->end) {
        char c = *j->p;
        if (c == '\n') {
            j->line++;
            j->line_start = j->p + 1;
            j->cont = 0;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        j->p++;
    }
}

static dra_doc *jp_node(jp *j, dra_doc_kind kind)
{
    dra_doc *d = codec_node(j->a, kind, j->line, jp_col(j, j->p));
    if (!d)
        jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
    return d;
}

static int jp_push(jp *j, const char *key, size_t keylen, dra_doc *val)
{
    void *v = j->stk;
    if (j->n >= j->cap && dra_grow(j->a->mem, &v, &j->cap, j->n + 1, sizeof *j->stk) != DRA_OK) {
        jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
        return 0;
    }
    j->stk = v;
    j->stk[j->n].key = key;
    j->stk[j->n].keylen = keylen;
    j->stk[j->n].val = val;
    j->n++;
    return 1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
    uint32_t v = 0;
    if (end - p < 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return 0;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* One escape at j->p (just after the backslash); writes to |o|. */
static size_t jp_escape(jp *j, char *o)
{
    char c = *j->p;
    uint32_t cp, lo;
    const char *at = j->p - 1;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = c ? strchr(from, c) : NULL;
    if (k) {
        j->p++;
        o[0] = to[k - from];
        return 1;
    }
    if (c != 'u' || !hex4(j->p + 1, j->end, &cp)) {
        jp_fail(j, at, DRA_EPARSE, "invalid escape in string literal");
        return 0;
    }
    j->p += 5;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
            hex4(j->p + 2, j->end, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
            j->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else {
            jp_fail(j, at, DRA_EPARSE, "unpaired surrogate \\u%04X in string literal", cp);
            return 0;
        }
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        jp_fail(j, at, DRA_EPARSE, "unpaired surrogate \\u%04X in string literal", cp);
        return 0;
    }
    return put_utf8(o, cp);
}

/* Eight bytes at a time (the classic SWAR tests): whether any byte of
 * |v| is a control character, above 0x7F, or equal to one of |n| bytes
 * given as |want|. A borrow may flag a byte after a true hit too, which
 * only sends that chunk to the byte-wise code. */
#define JSON_ONES 0x0101010101010101ull
#define JSON_HIGH 0x8080808080808080ull

static int json_zero8(uint64_t v)
{
    return ((v - JSON_ONES) & ~v & JSON_HIGH) != 0;
}

static int json_stop8(uint64_t v, const char *want, int n)
{
    if ((v | ((v - JSON_ONES * 0x20) & ~v)) & JSON_HIGH)
        return 1;
    for (int i = 0; i < n; i++)
        if (json_zero8(v ^ (JSON_ONES * (unsigned char)want[i])))
            return 1;
    return 0;
}

/* The end of the run of bytes from |p| that a string literal copies as
 * they are: printable ASCII other than the quote and the backslash. */
static const char *jp_plain_run(const char *p, const char *end)
{
    uint64_t v;
    while (end - p >= 8) {
        memcpy(&v, p, 8);
        if (json_stop8(v, "\"\\", 2))
            break;
        p += 8;
    }
    while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x80 && *p != '"' &&
           *p != '\\')
        p++;
    return p;
}

static char *jp_string_escaped(jp *j, size_t *len);

/* A string literal at j->p (on the opening quote). Most are plain ASCII
 * without escapes: one scan and a copy. */
static char *jp_string(jp *j, size_t *len)
{
    const char *start = j->p + 1, *q = jp_plain_run(start, j->end);
    char *buf;
    size_t n;
    if (q >= j->end || *q != '"')
        return jp_string_escaped(j, len);
    n = (size_t)(q - start);
    if (!(buf = dra_arena_alloc(j->a, n + 1)))
        return jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
    memcpy(buf, start, n);
    buf[n] = '\0';
    j->p = q + 1;
    *len = n;
    return buf;
}

/* The general case: escapes, UTF-8 (validated) and the errors. The decoded
 * text never outgrows the source, so one arena block of the raw length
 * suffices. */
static char *jp_string_escaped(jp *j, size_t *len)
{
    const char *q = j->p + 1, *raw_end;
    char *buf, *o;
    while (q < j->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= j->end) {
        j->p = j->end;
        return jp_fail(j, j->end, DRA_EPARSE, "unexpected end of JSON input");
    }
    raw_end = q;
    buf = dra_arena_alloc(j->a, (size_t)(raw_end - j->p));
    if (!buf)
        return jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
    o = buf;
    j->p++;
    while (j->p < raw_end) {
        unsigned char c = (unsigned char)*j->p;
        uint32_t cp;
        int n;
        if (c == '\\') {
            size_t w;
            j->p++;
            if (!(w = jp_escape(j, o)))
                return NULL;
            o += w;
        } else if (c < 0x20) {
            char b[8];
            return jp_fail(j, j->p, DRA_EPARSE, "invalid character %s in string literal",
                           char_name((char)c, b));
        } else if (c < 0x80) {
            *o++ = (char)c;
            j->p++;
        } else if ((n = (int)dra_utf8_decode((const unsigned char *)j->p,
                                       (size_t)(raw_end - j->p), &cp)) > 0) {
            memcpy(o, j->p, (size_t)n);
            o += n;
            j->p += n;
            j->cont += (size_t)n - 1;
        } else {
            return jp_fail(j, j->p, DRA_EPARSE, "invalid UTF-8 in string literal");
        }
    }
    j->p++; /* closing quote */
    *o = '\0';
    *len = (size_t)(o - buf);
    return buf;
}

static dra_doc *jp_number(jp *j)
{
    const char *st = j->p, *q = j->p;
    int integral = 1;
    dra_doc *d;
    char *text;
    if (q < j->end && *q == '-')
        q++;
    if (q < j->end && *q == '0')
        q++;
    else if (q < j->end && *q >= '1' && *q <= '9')
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    else
        goto bad;
    if (q < j->end && *q == '.') {
        integral = 0;
        if (++q >= j->end || *q < '0' || *q > '9')
            goto bad;
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        integral = 0;
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= j->end || *q < '0' || *q > '9')
            goto bad;
        while (q < j->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (!(d = jp_node(j, DRA_DOC_INT)))
        return NULL;
    j->p = q;
    if (integral) {
        /* Accumulate negatively so INT64_MIN fits. */
        int64_t v = 0;
        int neg = *st == '-', ok = 1;
        for (const char *r = st + neg; r < q; r++) {
            int dg = *r - '0';
            if (v < (INT64_MIN + dg) / 10) {
                ok = 0;
                break;
            }
            v = v * 10 - dg;
        }
        if (ok && (neg || v != INT64_MIN)) {
            d->u.i = neg ? v : -v;
            return d;
        }
    }
    if (!(text = dra_arena_strndup(j->a, st, (size_t)(q - st))))
        return jp_fail(j, st, DRA_ENOMEM, "out of memory");
    d->kind = DRA_DOC_FLOAT;
    d->u.f.num = text;
    d->u.f.f = strtod(text, NULL);
    if (isinf(d->u.f.f))
        return jp_fail(j, st, DRA_ERANGE, "number %s out of range", text);
    return d;
bad:
    if (q >= j->end)
        return jp_fail(j, q, DRA_EPARSE, "unexpected end of JSON input");
    j->p = q;
    return jp_bad_char(j, "in numeric literal");
}

static dra_doc *jp_value(jp *j);

static dra_doc *jp_list(jp *j)
{
    dra_doc *d = jp_node(j, DRA_DOC_LIST);
    size_t base = j->n;
    if (!d)
        return NULL;
    j->p++;
    jp_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return d;
    }
    for (;;) {
        dra_doc *item = jp_value(j);
        if (!item || !jp_push(j, NULL, 0, item))
            return NULL;
        jp_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == ']')
            break;
        return jp_bad_char(j, "after array element");
    }
    j->p++;
    d->u.list.n = j->n - base;
    if (!(d->u.list.items = codec_items(j->a, d->u.list.n)))
        return jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
    for (size_t i = 0; i < d->u.list.n; i++)
        d->u.list.items[i] = j->stk[base + i].val;
    j->n = base;
    return d;
}

/* Reject a repeated key like Kubernetes' strict decoding does. */
static int jp_dup(jp *j, size_t base, dra_map *idx, const char *key, size_t klen,
                  const char *at)
{
    size_t n = j->n - base;
    if (n < JP_LINEAR_KEYS) {
        for (size_t i = base; i < j->n; i++)
            if (j->stk[i].keylen == klen && memcmp(j->stk[i].key, key, klen) == 0)
                goto dup;
        return 0;
    }
    if (n == JP_LINEAR_KEYS) {
        for (size_t i = base; i < j->n; i++)
            if (dra_map_put(idx, j->stk[i].key, j->stk[i].keylen, idx) != DRA_OK)
                goto oom;
    }
    if (dra_map_get(idx, key, klen))
        goto dup;
    if (dra_map_put(idx, key, klen, idx) != DRA_OK)
        goto oom;
    return 0;
dup:
    jp_fail(j, at, DRA_EPARSE, "duplicate field \"%s\"", key);
    return 1;
oom:
    jp_fail(j, at, DRA_ENOMEM, "out of memory");
    return 1;
}

static dra_doc *jp_map_members(jp *j, size_t base, dra_map *idx)
{
    for (;;) {
        const char *kat;
        size_t klen;
        char *key;
        dra_doc *val;
        jp_ws(j);
        if (j->p >= j->end || *j->p != '"')
            return jp_bad_char(j, "looking for beginning of object key string");
        kat = j->p;
        if (!(key = jp_string(j, &klen)))
            return NULL;
        if (jp_dup(j, base, idx, key, klen, kat))
            return NULL;
        jp_ws(j);
        if (j->p >= j->end || *j->p != ':')
            return jp_bad_char(j, "after object key");
        j->p++;
        if (!(val = jp_value(j)) || !jp_push(j, key, klen, val))
            return NULL;
        jp_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}')
            return val;
        return jp_bad_char(j, "after object key:value pair");
    }
}

static dra_doc *jp_map(jp *j)
{
    dra_doc *d = jp_node(j, DRA_DOC_MAP), *ok;
    size_t base = j->n;
    dra_map idx;
    if (!d)
        return NULL;
    j->p++;
    jp_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return d;
    }
    dra_map_init(&idx, j->a->mem);
    ok = jp_map_members(j, base, &idx);
    dra_map_fini(&idx);
    if (!ok)
        return NULL;
    j->p++;
    d->u.map.n = j->n - base;
    if (!(d->u.map.m = codec_members(j->a, d->u.map.n)))
        return jp_fail(j, j->p, DRA_ENOMEM, "out of memory");
    memcpy(d->u.map.m, j->stk + base, d->u.map.n * sizeof *d->u.map.m);
    j->n = base;
    return d;
}

static dra_doc *jp_word(jp *j, const char *w, dra_doc_kind kind, int b)
{
    size_t n = strlen(w);
    dra_doc *d;
    for (size_t i = 0; i < n; i++) {
        if (j->p + i >= j->end)
            return jp_fail(j, j->end, DRA_EPARSE, "unexpected end of JSON input");
        if (j->p[i] != w[i]) {
            char b8[8];
            return jp_fail(j, j->p + i, DRA_EPARSE, "invalid character %s in literal %s (expecting '%c')",
                           char_name(j->p[i], b8), w, w[i]);
        }
    }
    if (!(d = jp_node(j, kind)))
        return NULL;
    d->u.b = b;
    j->p += n;
    return d;
}

static dra_doc *jp_value(jp *j)
{
    dra_doc *d;
    jp_ws(j);
    if (j->p >= j->end)
        return jp_fail(j, j->p, DRA_EPARSE, "unexpected end of JSON input");
    switch (*j->p) {
    case '{':
    case '[':
        if (j->depth >= DRA_DOC_MAX_DEPTH)
            return jp_fail(j, j->p, DRA_ELIMIT, "exceeded max depth of %d", DRA_DOC_MAX_DEPTH);
        j->depth++;
        d = *j->p == '{' ? jp_map(j) : jp_list(j);
        j->depth--;
        return d;
    case '"': {
        size_t len;
        char *s;
        if (!(d = jp_node(j, DRA_DOC_STRING)) || !(s = jp_string(j, &len)))
            return NULL;
        d->u.str.s = s;
        d->u.str.len = len;
        return d;
    }
    case 't':
        return jp_word(j, "true", DRA_DOC_BOOL, 1);
    case 'f':
        return jp_word(j, "false", DRA_DOC_BOOL, 0);
    case 'n':
        return jp_word(j, "null", DRA_DOC_NULL, 0);
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
            return jp_number(j);
        return jp_bad_char(j, "looking for beginning of value");
    }
}

dra_err dra_doc_parse_json(dra_arena *a, const char *text, size_t len,
                           dra_doc **out, dra_diag *d)
{
    jp j;
    dra_doc *root;
    *out = NULL;
    if (len > DRA_DOC_MAX_BYTES) {
        dra_diag_add(d, "", 0, 0, "input of %zu bytes exceeds the limit of %u bytes",
                     len, (unsigned)DRA_DOC_MAX_BYTES);
        return DRA_ELIMIT;
    }
    memset(&j, 0, sizeof j);
    j.a = a;
    j.d = d;
    j.s = j.p = j.line_start = text;
    j.end = text + len;
    j.line = 1;
    root = jp_value(&j);
    if (root) {
        jp_ws(&j);
        if (j.p < j.end)
            jp_bad_char(&j, "after top-level value");
    }
    dra_free(a->mem, j.stk);
    if (j.err)
        return j.err;
    *out = root;
    return DRA_OK;
}

/* ---- encoder ----------------------------------------------------------- */

typedef struct je {
    dra_buf *out;
    int indent;
    dra_err err;
} je;

/* dra_buf_putc without the call when there is room: the encoder writes
 * its punctuation a byte at a time. */
static void je_putc(dra_buf *out, char c)
{
    if (out->cap - out->len > 1) {
        out->p[out->len++] = c;
        out->p[out->len] = '\0';
    } else {
        dra_buf_putc(out, c);
    }
}

static void je_nl(je *e, int depth)
{
    static const char sp[] = "\n                                                                ";
    int n = depth * e->indent;
    dra_buf_append(e->out, sp, (size_t)(n < 64 ? n : 64) + 1);
    for (n -= 64; n > 0; n -= 64)
        dra_buf_append(e->out, sp + 1, (size_t)(n < 64 ? n : 64));
}

/* encoding/json's escaping: quotes, backslash, control characters, the
 * HTML-sensitive <, > and &, U+2028/2029; invalid UTF-8 becomes U+FFFD. */
static void je_string(dra_buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0, run = 0;
    je_putc(out, '"');
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp = 0; /* stays 0 when the UTF-8 decode fails */
        int n;
        const char *esc = NULL;
        char u[7];
        uint64_t v8;
        if (len - i >= 8) {
            memcpy(&v8, s + i, 8);
            if (!json_stop8(v8, "\"\\<>&", 5)) {
                i += 8, run += 8;
                continue;
            }
        }
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
            i++, run++;
            continue;
        }
        if (c >= 0x80) {
            n = (int)dra_utf8_decode((const unsigned char *)s + i, len - i, &cp);
            if (n > 0 && cp != 0x2028 && cp != 0x2029) {
                i += (size_t)n, run += (size_t)n;
                continue;
            }
        } else {
            n = 1;
            cp = c;
        }
        dra_buf_append(out, s + i - run, run);
        run = 0;
        switch (cp) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default: break;
        }
        if (n <= 0) {
            esc = "\\ufffd";
            n = 1;
        }
        if (!esc) {
            u[0] = '\\', u[1] = 'u';
            u[2] = hex[(cp >> 12) & 15], u[3] = hex[(cp >> 8) & 15];
            u[4] = hex[(cp >> 4) & 15], u[5] = hex[cp & 15], u[6] = '\0';
            esc = u;
        }
        dra_buf_puts(out, esc);
        i += (size_t)n;
    }
    dra_buf_append(out, s + i - run, run);
    je_putc(out, '"');
}

/* What printf's %lld writes, without printf. */
static void je_int(dra_buf *out, int64_t i)
{
    char d[24], *o = d + sizeof d;
    /* Negative magnitudes so INT64_MIN needs no special case. */
    int64_t v = i < 0 ? i : -i;
    do {
        *--o = (char)('0' - v % 10);
        v /= 10;
    } while (v);
    if (i < 0)
        *--o = '-';
    dra_buf_append(out, o, (size_t)(d + sizeof d - o));
}

static void je_value(je *e, const dra_doc *v, int depth)
{
    if (e->err)
        return;
    if (depth > DRA_DOC_MAX_DEPTH) {
        e->err = DRA_ELIMIT;
        return;
    }
    switch (v->kind) {
    case DRA_DOC_NULL:
        dra_buf_puts(e->out, "null");
        break;
    case DRA_DOC_BOOL:
        dra_buf_puts(e->out, v->u.b ? "true" : "false");
        break;
    case DRA_DOC_INT:
        je_int(e->out, v->u.i);
        break;
    case DRA_DOC_FLOAT:
        if (v->u.f.num && codec_is_json_number(v->u.f.num, strlen(v->u.f.num)))
            dra_buf_puts(e->out, v->u.f.num);
        else if (codec_put_json_float(e->out, v->u.f.f) == DRA_EINVAL)
            e->err = DRA_EINVAL;
        break;
    case DRA_DOC_STRING:
        je_string(e->out, v->u.str.s, v->u.str.len);
        break;
    case DRA_DOC_LIST:
        je_putc(e->out, '[');
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i)
                je_putc(e->out, ',');
            if (e->indent)
                je_nl(e, depth + 1);
            je_value(e, v->u.list.items[i], depth + 1);
        }
        if (e->indent && v->u.list.n)
            je_nl(e, depth);
        je_putc(e->out, ']');
        break;
    case DRA_DOC_MAP:
        je_putc(e->out, '{');
        for (size_t i = 0; i < v->u.map.n; i++) {
            if (i)
                je_putc(e->out, ',');
            if (e->indent)
                je_nl(e, depth + 1);
            je_string(e->out, v->u.map.m[i].key, v->u.map.m[i].keylen);
            if (e->indent)
                dra_buf_append(e->out, ": ", 2);
            else
                je_putc(e->out, ':');
            je_value(e, v->u.map.m[i].val, depth + 1);
        }
        if (e->indent && v->u.map.n)
            je_nl(e, depth);
        je_putc(e->out, '}');
        break;
    default:
        e->err = DRA_EINVAL;
    }
}

dra_err dra_doc_to_json(const dra_doc *doc, int indent, dra_buf *out)
{
    je e;
    size_t mark = out->len;
    e.out = out;
    e.indent = indent < 0 ? 0 : indent;
    e.err = DRA_OK;
    if (!doc)
        return DRA_EINVAL;
    je_value(&e, doc, 0);
    if (!e.err && out->oom)
        e.err = DRA_ENOMEM;
    if (e.err && out->p) {
        /* Leave |out| as it was: no half-written document. */
        out->len = mark;
        out->p[mark] = '\0';
    }
    return e.err;
}

/* ---- the text round trip without the text -------------------------------- */

typedef struct jc {
    dra_arena *a;
    size_t len, max; /* an upper bound of the text's length, and its limit */
    dra_err err;
} jc;

static void *jc_fail(jc *c, dra_err err)
{
    if (!c->err)
        c->err = err;
    return NULL;
}

/* A string of |n| bytes is at most 6n + 2 bytes of text (\u00XX). */
static int jc_count(jc *c, size_t n)
{
    if (n > (SIZE_MAX - 2) / 6 || c->len + 6 * n + 2 > c->max) {
        jc_fail(c, DRA_EUNSUPPORTED);
        return 0;
    }
    c->len += 6 * n + 2;
    return 1;
}

/* A copy of |s| (|n| bytes), NUL-terminated, when the encoder would
 * write it as it is: valid UTF-8 (NUL bytes included, as \u0000). */
static char *jc_str(jc *c, const char *s, size_t n)
{
    char *o;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t w;
        uint64_t v;
        if (n - i >= 8 && (memcpy(&v, s + i, 8), !(v & JSON_HIGH))) {
            i += 8;
            continue;
        }
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        if (!(w = dra_utf8_decode((const unsigned char *)s + i, n - i, &cp)))
            return jc_fail(c, DRA_EUNSUPPORTED);
        i += w;
    }
    if (!jc_count(c, n))
        return NULL;
    if (!(o = dra_arena_alloc(c->a, n + 1)))
        return jc_fail(c, DRA_ENOMEM);
    memcpy(o, s, n);
    o[n] = '\0';
    return o;
}

/* Whether member |i| of |m| repeats an earlier key (the parser's
 * duplicate-field error): a scan for small maps, |idx| for large. */
static int jc_dup(jc *c, const dra_doc *m, size_t i, dra_map *idx)
{
    const dra_doc_member *k = &m->u.map.m[i];
    if (m->u.map.n < JP_LINEAR_KEYS) {
        for (size_t j = 0; j < i; j++)
            if (m->u.map.m[j].keylen == k->keylen && !memcmp(m->u.map.m[j].key, k->key, k->keylen))
                return 1;
        return 0;
    }
    if (dra_map_get(idx, k->key, k->keylen))
        return 1;
    if (dra_map_put(idx, k->key, k->keylen, idx) != DRA_OK) {
        jc_fail(c, DRA_ENOMEM);
        return 1;
    }
    return 0;
}

static dra_doc *jc_value(jc *c, const dra_doc *v, int depth);

static dra_doc *jc_map(jc *c, const dra_doc *v, dra_doc *d, int depth)
{
    size_t n = v->u.map.n;
    dra_map idx;
    dra_doc *ok = d;
    if (!n)
        return d;
    if (!(d->u.map.m = codec_members(c->a, n)))
        return jc_fail(c, DRA_ENOMEM);
    d->u.map.n = n;
    c->len += n;
    dra_map_init(&idx, c->a->mem);
    for (size_t i = 0; i < n && ok; i++) {
        dra_doc_member *o = &d->u.map.m[i];
        if (jc_dup(c, v, i, &idx)) {
            ok = jc_fail(c, DRA_EUNSUPPORTED);
            break;
        }
        o->keylen = v->u.map.m[i].keylen;
        if (!(o->key = jc_str(c, v->u.map.m[i].key, o->keylen)) ||
            !(o->val = jc_value(c, v->u.map.m[i].val, depth + 1)))
            ok = NULL;
    }
    dra_map_fini(&idx);
    return ok;
}

static dra_doc *jc_value(jc *c, const dra_doc *v, int depth)
{
    dra_doc *d;
    /* Leaves room under the parser's and the encoder's depth limits,
     * which count levels a little differently. */
    if (!v || depth >= DRA_DOC_MAX_DEPTH - 2)
        return jc_fail(c, DRA_EUNSUPPORTED);
    if (!(d = codec_node(c->a, v->kind, 0, 0)))
        return jc_fail(c, DRA_ENOMEM);
    c->len += 22; /* a scalar's text, or a container's brackets */
    if (c->len > c->max)
        return jc_fail(c, DRA_EUNSUPPORTED);
    switch (v->kind) {
    case DRA_DOC_NULL:
        return d;
    case DRA_DOC_BOOL:
        d->u.b = v->u.b != 0;
        return d;
    case DRA_DOC_INT:
        d->u.i = v->u.i;
        return d;
    case DRA_DOC_STRING:
        d->u.str.len = v->u.str.len;
        return (d->u.str.s = jc_str(c, v->u.str.s, v->u.str.len)) ? d : NULL;
    case DRA_DOC_LIST:
        if (!v->u.list.n)
            return d;
        if (!(d->u.list.items = codec_items(c->a, v->u.list.n)))
            return jc_fail(c, DRA_ENOMEM);
        d->u.list.n = v->u.list.n;
        c->len += v->u.list.n;
        for (size_t i = 0; i < v->u.list.n; i++)
            if (!(d->u.list.items[i] = jc_value(c, v->u.list.items[i], depth + 1)))
                return NULL;
        return d;
    case DRA_DOC_MAP:
        return jc_map(c, v, d, depth);
    default: /* floats: "1.0" would read back as an int */
        return jc_fail(c, DRA_EUNSUPPORTED);
    }
}

dra_err dra_doc_copy_json(dra_arena *a, const dra_doc *src, size_t max_len,
                          dra_doc **out)
{
    jc c;
    dra_doc *d;
    *out = NULL;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.max = max_len < DRA_DOC_MAX_BYTES ? max_len : DRA_DOC_MAX_BYTES;
    d = jc_value(&c, src, 0);
    if (c.err)
        return c.err;
    *out = d;
    return DRA_OK;
}
