/*
 * lex.c: CEL source text -> tokens. Literals are decoded here (numbers to
 * int64/uint64/double, strings with every escape of cel-spec's langdef)
 * into the parse arena, so the parser only sees values.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ast.h"

void cel_lex_init(cel_lexer *lx, const char *src, size_t len, dra_arena *a)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->len = len;
    lx->arena = a;
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static cel_tok lex_error(cel_lexer *lx, size_t off, const char *msg)
{
    if (!lx->err) {
        lx->err = msg;
        lx->err_off = off;
    }
    return TK_ERROR;
}

static void skip_space(cel_lexer *lx)
{
    while (lx->pos < lx->len) {
        char c = lx->src[lx->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
            lx->pos++;
        } else if (c == '/' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '/') {
            while (lx->pos < lx->len && lx->src[lx->pos] != '\n')
                lx->pos++;
        } else {
            break;
        }
    }
}

/* Appends code point |cp| as UTF-8. */
static int put_utf8(dra_buf *b, uint32_t cp)
{
    char t[4];
    size_t n;
    if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xC0 | (cp >> 6));
        t[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xE0 | (cp >> 12));
        t[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        t[0] = (char)(0xF0 | (cp >> 18));
        t[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        t[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        t[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return dra_buf_append(b, t, n) == DRA_OK;
}

/* Decodes one escape after the backslash at src[*p]. Returns NULL or an
 * error message. */
static const char *lex_escape(cel_lexer *lx, size_t *p, int bytes, dra_buf *b)
{
    const char *s = lx->src;
    char c;
    uint32_t v = 0;
    int nd;
    if (*p >= lx->len)
        return "unterminated escape";
    c = s[(*p)++];
    switch (c) {
    case 'a': return dra_buf_putc(b, '\a') ? "out of memory" : NULL;
    case 'b': return dra_buf_putc(b, '\b') ? "out of memory" : NULL;
    case 'f': return dra_buf_putc(b, '\f') ? "out of memory" : NULL;
    case 'n': return dra_buf_putc(b, '\n') ? "out of memory" : NULL;
    case 'r': return dra_buf_putc(b, '\r') ? "out of memory" : NULL;
    case 't': return dra_buf_putc(b, '\t') ? "out of memory" : NULL;
    case 'v': return dra_buf_putc(b, '\v') ? "out of memory" : NULL;
    case '\\': case '?': case '"': case '\'': case '`':
        return dra_buf_putc(b, c) ? "out of memory" : NULL;
    case 'x': case 'X': nd = 2; goto hex;
    case 'u': nd = 4; goto uni;
    case 'U': nd = 8; goto uni;
    default:
        if (c >= '0' && c <= '3') {
            v = (uint32_t)(c - '0');
            for (int k = 0; k < 2; k++) {
                if (*p >= lx->len || s[*p] < '0' || s[*p] > '7')
                    return "invalid octal escape";
                v = v * 8 + (uint32_t)(s[(*p)++] - '0');
            }
            goto emit;
        }
        return "invalid escape sequence";
    }
uni:
    if (bytes)
        return "unicode escape not allowed in bytes literal";
hex:
    for (int k = 0; k < nd; k++) {
        int h = *p < lx->len ? hexval((unsigned char)s[*p]) : -1;
        if (h < 0)
            return "invalid hex escape";
        v = v * 16 + (uint32_t)h;
        (*p)++;
    }
emit:
    if (bytes)
        return dra_buf_putc(b, (char)v) ? "out of memory" : NULL;
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return "invalid unicode code point";
    return put_utf8(b, v) ? NULL : "out of memory";
}

/* A string or bytes literal starting at the quote at lx->pos. */
static cel_tok lex_string(cel_lexer *lx, cel_token *t, int raw, int bytes)
{
    const char *s = lx->src;
    char q = s[lx->pos];
    int triple = lx->pos + 2 < lx->len && s[lx->pos + 1] == q && s[lx->pos + 2] == q;
    size_t p = lx->pos + (triple ? 3 : 1);
    dra_buf b;
    const char *err = NULL;
    dra_buf_init(&b, lx->arena->mem);
    for (;;) {
        if (p >= lx->len) {
            err = "unterminated string literal";
            break;
        }
        if (triple) {
            if (s[p] == q && p + 2 < lx->len && s[p + 1] == q && s[p + 2] == q) {
                p += 3;
                break;
            }
        } else if (s[p] == q) {
            p++;
            break;
        } else if (s[p] == '\n' || s[p] == '\r') {
            err = "newline in string literal";
            break;
        }
        if (s[p] == '\\' && !raw) {
            p++;
            err = lex_escape(lx, &p, bytes, &b);
            if (err)
                break;
            continue;
        }
        if (raw && s[p] == '\\' && p + 1 < lx->len) {
            /* A raw string keeps the backslash, but an escaped quote
             * still does not end it. */
            if (dra_buf_append(&b, s + p, 2)) {
                err = "out of memory";
                break;
            }
            p += 2;
            continue;
        }
        if (dra_buf_putc(&b, s[p++])) {
            err = "out of memory";
            break;
        }
    }
    if (!err && !bytes && b.len && !cel_utf8_valid(b.p, b.len))
        err = "invalid UTF-8 in string literal";
    if (err) {
        dra_buf_fini(&b);
        return lex_error(lx, lx->pos, err);
    }
    t->s = dra_arena_strndup(lx->arena, b.p ? b.p : "", b.len);
    t->slen = b.len;
    dra_buf_fini(&b);
    if (!t->s)
        return lex_error(lx, lx->pos, "out of memory");
    lx->pos = p;
    return bytes ? TK_BYTES : TK_STRING;
}

static cel_tok lex_number(cel_lexer *lx, cel_token *t)
{
    const char *s = lx->src;
    size_t p = lx->pos, start = p;
    int isdbl = 0;
    char buf[128];
    if (s[p] == '0' && p + 1 < lx->len && (s[p + 1] == 'x' || s[p + 1] == 'X')) {
        uint64_t v = 0;
        int over = 0;
        p += 2;
        if (p >= lx->len || hexval((unsigned char)s[p]) < 0)
            return lex_error(lx, start, "invalid hex literal");
        while (p < lx->len && hexval((unsigned char)s[p]) >= 0) {
            if (v >> 60)
                over = 1;
            v = v * 16 + (uint64_t)hexval((unsigned char)s[p++]);
        }
        if (over)
            return lex_error(lx, start, "integer literal out of range");
        t->u = v;
        if (p < lx->len && (s[p] == 'u' || s[p] == 'U')) {
            lx->pos = p + 1;
            return TK_UINT;
        }
        lx->pos = p;
        return TK_INT;
    }
    while (p < lx->len && is_digit(s[p]))
        p++;
    if (p + 1 < lx->len && s[p] == '.' && is_digit(s[p + 1])) {
        isdbl = 1;
        p++;
        while (p < lx->len && is_digit(s[p]))
            p++;
    }
    if (p < lx->len && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        if (q < lx->len && (s[q] == '+' || s[q] == '-'))
            q++;
        if (q < lx->len && is_digit(s[q])) {
            isdbl = 1;
            p = q;
            while (p < lx->len && is_digit(s[p]))
                p++;
        }
    }
    if (p - start >= sizeof buf)
        return lex_error(lx, start, "number literal too long");
    memcpy(buf, s + start, p - start);
    buf[p - start] = 0;
    if (isdbl) {
        t->d = strtod(buf, NULL);
        lx->pos = p;
        return TK_DOUBLE;
    }
    errno = 0;
    t->u = strtoull(buf, NULL, 10);
    if (errno == ERANGE)
        return lex_error(lx, start, "integer literal out of range");
    if (p < lx->len && (s[p] == 'u' || s[p] == 'U')) {
        lx->pos = p + 1;
        return TK_UINT;
    }
    lx->pos = p;
    return TK_INT;
}

static cel_tok lex_ident(cel_lexer *lx, cel_token *t)
{
    const char *s = lx->src;
    size_t p = lx->pos;
    /* String prefixes: r, b, rb, br in either case. */
    int raw = 0, bytes = 0;
    size_t q = p;
    while (q < lx->len && q - p < 2) {
        char c = s[q];
        if ((c == 'r' || c == 'R') && !raw)
            raw = 1;
        else if ((c == 'b' || c == 'B') && !bytes)
            bytes = 1;
        else
            break;
        q++;
        if (q < lx->len && (s[q] == '"' || s[q] == '\'')) {
            lx->pos = q;
            return lex_string(lx, t, raw, bytes);
        }
    }
    while (p < lx->len && (is_ident_start(s[p]) || is_digit(s[p])))
        p++;
    t->s = s + lx->pos;
    t->slen = p - lx->pos;
    lx->pos = p;
#define KW(w, k) if (t->slen == sizeof(w) - 1 && !memcmp(t->s, w, t->slen)) return k
    KW("true", TK_TRUE);
    KW("false", TK_FALSE);
    KW("null", TK_NULL);
    KW("in", TK_IN);
#undef KW
    return TK_IDENT;
}

static cel_tok lex_backtick(cel_lexer *lx, cel_token *t)
{
    size_t p = lx->pos + 1;
    while (p < lx->len && lx->src[p] != '`') {
        char c = lx->src[p];
        if (!(is_ident_start(c) || is_digit(c) || c == '.' || c == '-' || c == '/' ||
              c == ' '))
            return lex_error(lx, p, "invalid character in quoted identifier");
        p++;
    }
    if (p >= lx->len || p == lx->pos + 1)
        return lex_error(lx, lx->pos, "invalid quoted identifier");
    t->s = lx->src + lx->pos + 1;
    t->slen = p - lx->pos - 1;
    lx->pos = p + 1;
    return TK_BACKTICK_IDENT;
}

static cel_tok lex_punct(cel_lexer *lx)
{
    const char *s = lx->src;
    size_t p = lx->pos;
    char c = s[p], n = p + 1 < lx->len ? s[p + 1] : 0;
    lx->pos++;
    switch (c) {
    case '(': return TK_LPAREN;
    case ')': return TK_RPAREN;
    case '[': return TK_LBRACKET;
    case ']': return TK_RBRACKET;
    case '{': return TK_LBRACE;
    case '}': return TK_RBRACE;
    case '.': return TK_DOT;
    case ',': return TK_COMMA;
    case ':': return TK_COLON;
    case '?': return TK_QUESTION;
    case '+': return TK_PLUS;
    case '-': return TK_MINUS;
    case '*': return TK_STAR;
    case '/': return TK_SLASH;
    case '%': return TK_PERCENT;
    case '!':
        if (n == '=') { lx->pos++; return TK_NE; }
        return TK_BANG;
    case '=':
        if (n == '=') { lx->pos++; return TK_EQ; }
        break;
    case '<':
        if (n == '=') { lx->pos++; return TK_LE; }
        return TK_LT;
    case '>':
        if (n == '=') { lx->pos++; return TK_GE; }
        return TK_GT;
    case '&':
        if (n == '&') { lx->pos++; return TK_AND; }
        break;
    case '|':
        if (n == '|') { lx->pos++; return TK_OR; }
        break;
    default:
        break;
    }
    return lex_error(lx, p, "unexpected character");
}

cel_tok cel_lex_next(cel_lexer *lx, cel_token *t)
{
    cel_tok k;
    char c;
    memset(t, 0, sizeof *t);
    skip_space(lx);
    t->off = lx->pos;
    if (lx->pos >= lx->len) {
        t->kind = TK_EOF;
        return TK_EOF;
    }
    c = lx->src[lx->pos];
    if (is_digit(c) || (c == '.' && lx->pos + 1 < lx->len && is_digit(lx->src[lx->pos + 1])))
        k = lex_number(lx, t);
    else if (c == '"' || c == '\'')
        k = lex_string(lx, t, 0, 0);
    else if (is_ident_start(c))
        k = lex_ident(lx, t);
    else if (c == '`')
        k = lex_backtick(lx, t);
    else
        k = lex_punct(lx);
    t->kind = k;
    t->len = lx->pos - t->off;
    return k;
}
