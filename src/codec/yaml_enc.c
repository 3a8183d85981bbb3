/* dra_doc -> YAML the way kubectl -o yaml prints (go-yaml v2 over a port
 * of libyaml's emitter): block style, 2-space indent, sequences under a
 * key at the key's column, scalars quoted only when go-yaml would (when a
 * plain scalar would read back as another type, or libyaml's analysis
 * forbids plain), multi-line strings as literal blocks, and libyaml's
 * folding of long scalars at column 80. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec_int.h"

#define YE_WIDTH 80       /* libyaml's best_width */
#define YE_SIMPLE_KEY 128 /* longer keys use the "? key" form */

typedef struct ye {
    dra_buf *out;
    int col; /* characters on the current line */
    dra_err err;
} ye;

enum { CTX_TOP, CTX_MAPVAL, CTX_SEQITEM };

static void put(ye *e, const char *s, size_t n)
{
    dra_buf_append(e->out, s, n);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            e->col = 0;
        else if (((unsigned char)s[i] & 0xC0) != 0x80)
            e->col++;
    }
}

static void puts_(ye *e, const char *s) { put(e, s, strlen(s)); }

static const char spaces64[] = "                                                                ";

static void pad(ye *e, int n)
{
    while (n > 0) {
        int k = n > 64 ? 64 : n;
        put(e, spaces64, (size_t)k);
        n -= k;
    }
}

static void line(ye *e, int indent)
{
    if (e->col > 0)
        put(e, "\n", 1);
    pad(e, indent);
}

/* ---- libyaml's scalar analysis ---------------------------------------- */

typedef struct yan {
    int multiline, special, block_plain, single_ok, block_ok;
} yan;

static int printable(uint32_t c)
{
    return c == 0x0A || (c >= 0x20 && c <= 0x7E) || (c >= 0xA0 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD && c != 0xFEFF);
}

static int is_break(uint32_t c)
{
    return c == '\r' || c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static int blankz(const unsigned char *s, size_t len, size_t i)
{
    return i >= len || s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' ||
           s[i] == 0;
}

/* yaml_emitter_analyze_scalar, block context only. 0 on invalid UTF-8. */
static int analyze(const char *str, size_t len, yan *a)
{
    const unsigned char *s = (const unsigned char *)str;
    int flow_ind = 0, block_ind = 0, lead_sp = 0, lead_br = 0, trail_sp = 0;
    int trail_br = 0, br_sp = 0, sp_br = 0, prev_sp = 0, prev_br = 0, breaks = 0;
    int preceded = 1, followed;
    size_t i = 0;
    memset(a, 0, sizeof *a);
    if (len == 0) {
        a->block_plain = a->single_ok = 1;
        return 1;
    }
    if (len >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))
        flow_ind = block_ind = 1;
    while (i < len) {
        uint32_t c;
        int w = (int)dra_utf8_decode(s + i, len - i, &c);
        if (w <= 0)
            return 0;
        followed = blankz(s, len, i + (size_t)w);
        if (i == 0) {
            if (c < 0x80 && strchr("#,[]{}&*!|>'\"%@`", (int)c) && c)
                flow_ind = block_ind = 1;
            if (c == '?' || c == ':') {
                flow_ind = 1;
                block_ind |= followed;
            }
            if (c == '-' && followed)
                flow_ind = block_ind = 1;
        } else {
            if (c < 0x80 && strchr(",?[]{}", (int)c) && c)
                flow_ind = 1;
            if (c == ':') {
                flow_ind = 1;
                block_ind |= followed;
            }
            if (c == '#' && preceded)
                flow_ind = block_ind = 1;
        }
        if (!printable(c))
            a->special = 1;
        if (c == ' ') {
            lead_sp |= i == 0;
            trail_sp |= i + (size_t)w == len;
            br_sp |= prev_br;
            prev_sp = 1, prev_br = 0;
        } else if (is_break(c)) {
            breaks = 1;
            lead_br |= i == 0;
            trail_br |= i + (size_t)w == len;
            sp_br |= prev_sp;
            prev_sp = 0, prev_br = 1;
        } else {
            prev_sp = prev_br = 0;
        }
        preceded = c == ' ' || c == '\t' || is_break(c) || c == 0;
        i += (size_t)w;
    }
    (void)flow_ind;
    a->multiline = breaks;
    a->block_plain = a->single_ok = a->block_ok = 1;
    if (lead_sp || lead_br || trail_sp || trail_br)
        a->block_plain = 0;
    if (trail_sp)
        a->block_ok = 0;
    if (br_sp)
        a->block_plain = a->single_ok = 0;
    if (sp_br || a->special)
        a->block_plain = a->single_ok = a->block_ok = 0;
    if (breaks)
        a->block_plain = 0;
    if (block_ind)
        a->block_plain = 0;
    return 1;
}

/* go-yaml v2's stringv: plain only when the text reads back as a string. */
static int reads_as_string(const char *s, size_t len)
{
    codec_yval v;
    if (len == 2 && memcmp(s, "<<", 2) == 0)
        return 0;
    return codec_yaml_resolve(s, len, &v) == CODEC_Y_STR && !codec_yaml_looks_special(s, len);
}

/* ---- scalar writers ------------------------------------------------------- */

static void write_plain(ye *e, const char *s, size_t len, int indent, int breaks_ok)
{
    int spaces = 0;
    size_t i = 0;
    while (i < len) {
        const char *sp;
        size_t run;
        if (s[i] == ' ') {
            if (breaks_ok && !spaces && e->col > YE_WIDTH && i + 1 < len && s[i + 1] != ' ')
                line(e, indent);
            else
                put(e, " ", 1);
            spaces = 1;
            i++;
            continue;
        }
        /* Copy the run up to the next space at once. */
        sp = memchr(s + i, ' ', len - i);
        run = sp ? (size_t)(sp - (s + i)) : len - i;
        put(e, s + i, run);
        i += run;
        spaces = 0;
    }
}

static void write_single(ye *e, const char *s, size_t len, int indent, int breaks_ok)
{
    int spaces = 0;
    put(e, "'", 1);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') {
            if (breaks_ok && !spaces && e->col > YE_WIDTH && i != 0 && i != len - 1 &&
                s[i + 1] != ' ')
                line(e, indent);
            else
                put(e, " ", 1);
            spaces = 1;
        } else {
            put(e, s[i] == '\'' ? "''" : s + i, s[i] == '\'' ? 2 : 1);
            spaces = 0;
        }
    }
    put(e, "'", 1);
}

static void write_escape(ye *e, uint32_t c)
{
    static const struct { uint32_t c; const char *s; } esc[] = {
        {0, "\\0"}, {7, "\\a"}, {8, "\\b"}, {9, "\\t"}, {10, "\\n"}, {11, "\\v"},
        {12, "\\f"}, {13, "\\r"}, {27, "\\e"}, {'"', "\\\""}, {'\\', "\\\\"},
        {0x85, "\\N"}, {0xA0, "\\_"}, {0x2028, "\\L"}, {0x2029, "\\P"},
    };
    char buf[12];
    for (size_t i = 0; i < sizeof esc / sizeof esc[0]; i++)
        if (esc[i].c == c) {
            puts_(e, esc[i].s);
            return;
        }
    if (c <= 0xFF)
        snprintf(buf, sizeof buf, "\\x%02X", (unsigned)c);
    else if (c <= 0xFFFF)
        snprintf(buf, sizeof buf, "\\u%04X", (unsigned)c);
    else
        snprintf(buf, sizeof buf, "\\U%08X", (unsigned)c);
    puts_(e, buf);
}

static void write_double(ye *e, const char *s, size_t len, int indent, int breaks_ok)
{
    int spaces = 0;
    size_t i = 0;
    put(e, "\"", 1);
    while (i < len) {
        uint32_t c;
        int w = (int)dra_utf8_decode((const unsigned char *)s + i, len - i, &c);
        if (w <= 0) {
            e->err = DRA_EINVAL;
            return;
        }
        if (!printable(c) || c == 0xFEFF || is_break(c) || c == '"' || c == '\\') {
            write_escape(e, c);
            spaces = 0;
        } else if (c == ' ') {
            if (breaks_ok && !spaces && e->col > YE_WIDTH && i != 0 && i != len - 1) {
                line(e, indent);
                if (i + 1 < len && s[i + 1] == ' ')
                    put(e, "\\", 1);
            } else {
                put(e, " ", 1);
            }
            spaces = 1;
        } else {
            put(e, s + i, (size_t)w);
            spaces = 0;
        }
        i += (size_t)w;
    }
    put(e, "\"", 1);
}

static void write_literal(ye *e, const char *s, size_t len, int indent)
{
    size_t st = 0;
    put(e, "|", 1);
    if (s[0] == ' ' || s[0] == '\n')
        put(e, "2", 1);
    if (s[len - 1] != '\n')
        put(e, "-", 1);
    else if (len == 1 || s[len - 2] == '\n')
        put(e, "+", 1);
    put(e, "\n", 1);
    while (st < len) {
        const char *nl = memchr(s + st, '\n', len - st);
        size_t end = nl ? (size_t)(nl - s) : len;
        if (end > st) {
            pad(e, indent);
            put(e, s + st, end - st);
        }
        put(e, "\n", 1);
        st = end + 1;
    }
}

/* A string node: go-yaml picks plain/literal/double, libyaml may demote
 * plain to single quotes and literal to double quotes. */
static void write_string(ye *e, const char *s, size_t len, int indent, int simple_key)
{
    yan a;
    int plain = reads_as_string(s, len);
    if (!analyze(s, len, &a)) {
        e->err = DRA_EINVAL; /* go-yaml would switch to !!binary */
        return;
    }
    if (memchr(s, '\n', len)) {
        /* U+2028/2029 and CR would need libyaml's break rewriting inside a
         * literal block; escaping them in double quotes reads back the same. */
        int odd = 0;
        for (size_t i = 0; i < len; i++)
            odd |= s[i] == '\r' || ((unsigned char)s[i] == 0xE2 && i + 2 < len &&
                                    (unsigned char)s[i + 1] == 0x80 &&
                                    ((unsigned char)s[i + 2] & 0xFE) == 0xA8);
        if (a.block_ok && !simple_key && !odd)
            write_literal(e, s, len, indent);
        else
            write_double(e, s, len, indent, !simple_key);
        return;
    }
    if (plain && a.block_plain && !(len == 0 && simple_key)) {
        write_plain(e, s, len, indent, !simple_key);
        return;
    }
    if (plain && a.single_ok && !a.multiline) {
        write_single(e, s, len, indent, !simple_key);
        return;
    }
    write_double(e, s, len, indent, !simple_key);
}

static void write_float(ye *e, const dra_doc *v)
{
    const char *num = v->u.f.num;
    codec_yval yv;
    if (!isfinite(v->u.f.f)) {
        e->err = DRA_EINVAL; /* the decoder refuses .inf/.nan too */
        return;
    }
    if (v->u.f.f == 0 && signbit(v->u.f.f)) {
        /* go-yaml prints "-0", which reads back as the int 0; "-0.0"
         * keeps encode(decode(encode(x))) == encode(x). */
        puts_(e, "-0.0");
        return;
    }
    /* Big integers keep their digits; other floats print like go-yaml's
     * FormatFloat(f, 'g', -1, 64), as kubectl does. */
    if (num && !strpbrk(num, ".eE") && codec_is_json_number(num, strlen(num)) &&
        codec_yaml_resolve(num, strlen(num), &yv) != CODEC_Y_STR) {
        puts_(e, num);
        return;
    }
    {
        size_t before = e->out->len;
        codec_put_g_float(e->out, v->u.f.f, 0);
        e->col += (int)(e->out->len - before);
    }
}

static void write_scalar(ye *e, const dra_doc *v, int indent, int simple_key)
{
    char buf[32];
    switch (v->kind) {
    case DRA_DOC_NULL:
        puts_(e, "null");
        break;
    case DRA_DOC_BOOL:
        puts_(e, v->u.b ? "true" : "false");
        break;
    case DRA_DOC_INT:
        snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
        puts_(e, buf);
        break;
    case DRA_DOC_FLOAT:
        write_float(e, v);
        break;
    case DRA_DOC_STRING:
        write_string(e, v->u.str.s, v->u.str.len, indent, simple_key);
        break;
    default:
        e->err = DRA_EINVAL;
    }
}

/* ---- collections ---------------------------------------------------------- */

static void ye_node(ye *e, const dra_doc *v, int indent, int ctx, int depth);

static int simple_key(const char *k, size_t len)
{
    return len <= YE_SIMPLE_KEY && !memchr(k, '\n', len) && !memchr(k, '\r', len);
}

static void ye_map(ye *e, const dra_doc *v, int indent, int ctx, int depth)
{
    int ci = ctx == CTX_TOP ? 0 : indent + 2;
    for (size_t i = 0; i < v->u.map.n && !e->err; i++) {
        const dra_doc_member *m = &v->u.map.m[i];
        if (i == 0 && ctx == CTX_SEQITEM)
            put(e, " ", 1);
        else
            line(e, ci);
        if (simple_key(m->key, m->keylen)) {
            write_string(e, m->key, m->keylen, ci + 2, 1);
            put(e, ":", 1);
        } else {
            put(e, "? ", 2);
            write_string(e, m->key, m->keylen, ci + 2, 0);
            line(e, ci);
            put(e, ":", 1);
        }
        ye_node(e, m->val, ci, CTX_MAPVAL, depth + 1);
    }
}

static void ye_list(ye *e, const dra_doc *v, int indent, int ctx, int depth)
{
    int di = ctx == CTX_TOP ? 0 : ctx == CTX_MAPVAL ? indent : indent + 2;
    for (size_t i = 0; i < v->u.list.n && !e->err; i++) {
        if (i == 0 && ctx == CTX_SEQITEM)
            put(e, " -", 2);
        else {
            line(e, di);
            put(e, "-", 1);
        }
        ye_node(e, v->u.list.items[i], di, CTX_SEQITEM, depth + 1);
    }
}

static void ye_node(ye *e, const dra_doc *v, int indent, int ctx, int depth)
{
    if (e->err)
        return;
    if (depth > DRA_DOC_MAX_DEPTH) {
        e->err = DRA_ELIMIT;
        return;
    }
    if (v->kind == DRA_DOC_MAP && v->u.map.n) {
        ye_map(e, v, indent, ctx, depth);
        return;
    }
    if (v->kind == DRA_DOC_LIST && v->u.list.n) {
        ye_list(e, v, indent, ctx, depth);
        return;
    }
    if (ctx != CTX_TOP)
        put(e, " ", 1);
    if (v->kind == DRA_DOC_MAP)
        puts_(e, "{}");
    else if (v->kind == DRA_DOC_LIST)
        puts_(e, "[]");
    else
        write_scalar(e, v, ctx == CTX_TOP ? 2 : indent + 2, 0);
}

dra_err dra_doc_to_yaml(const dra_doc *doc, dra_buf *out)
{
    ye e;
    size_t mark = out->len;
    if (!doc)
        return DRA_EINVAL;
    e.out = out;
    e.col = 0;
    e.err = DRA_OK;
    ye_node(&e, doc, 0, CTX_TOP, 0);
    if (e.col > 0)
        put(&e, "\n", 1);
    if (!e.err && out->oom)
        e.err = DRA_ENOMEM;
    if (e.err && out->p) {
        out->len = mark;
        out->p[mark] = '\0';
    }
    return e.err;
}
