/*
 * decode.c: dra_doc -> typed structs, driven by the field tables in
 * types.c. Members a table does not know are deep-copied into the
 * struct's `extra` map. A member of the wrong JSON type is reported with
 * its field path and skipped, and the walk goes on, so one call reports
 * every error of an object.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api_int.h"

#define QTY_REGEX "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define RENDER_MAX 80

/* ---- helpers ---------------------------------------------------------------- */

static void *dec_alloc(api_dec *dc, size_t n, size_t size)
{
    void *p = dra_arena_array(dc->a, n ? n : 1, size);
    if (!p)
        dc->oom = 1;
    return p;
}

/* Renders |doc| for an "Invalid value" message: strings quoted, scalars
 * as JSON, containers compact and cut at RENDER_MAX bytes. */
static void render(dra_buf *b, const dra_doc *doc, int depth)
{
    if (b->len > RENDER_MAX)
        return;
    switch (doc->kind) {
    case DRA_DOC_NULL: dra_buf_puts(b, "null"); break;
    case DRA_DOC_BOOL: dra_buf_puts(b, doc->u.b ? "true" : "false"); break;
    case DRA_DOC_INT: dra_buf_printf(b, "%" PRId64, doc->u.i); break;
    case DRA_DOC_FLOAT:
        if (doc->u.f.num)
            dra_buf_puts(b, doc->u.f.num);
        else
            dra_buf_printf(b, "%.17g", doc->u.f.f);
        break;
    case DRA_DOC_STRING:
        dra_buf_putc(b, '"');
        for (size_t i = 0; i < doc->u.str.len && b->len <= RENDER_MAX; i++) {
            unsigned char c = (unsigned char)doc->u.str.s[i];
            if (c == '"' || c == '\\')
                dra_buf_printf(b, "\\%c", c);
            else if (c < 0x20)
                dra_buf_printf(b, "\\u%04x", c);
            else
                dra_buf_putc(b, (char)c);
        }
        dra_buf_putc(b, '"');
        break;
    case DRA_DOC_LIST:
        dra_buf_putc(b, '[');
        for (size_t i = 0; i < doc->u.list.n && depth < 8; i++) {
            if (i)
                dra_buf_putc(b, ',');
            render(b, doc->u.list.items[i], depth + 1);
        }
        dra_buf_putc(b, ']');
        break;
    case DRA_DOC_MAP:
        dra_buf_putc(b, '{');
        for (size_t i = 0; i < doc->u.map.n && depth < 8; i++) {
            if (i)
                dra_buf_putc(b, ',');
            dra_buf_printf(b, "\"%s\":", doc->u.map.m[i].key);
            render(b, doc->u.map.m[i].val, depth + 1);
        }
        dra_buf_putc(b, '}');
        break;
    }
    if (b->len > RENDER_MAX && b->p) {
        b->len = RENDER_MAX;
        b->p[b->len] = '\0';
        dra_buf_puts(b, "...");
    }
}

void api_dec_error(api_dec *dc, const dra_doc *doc, const char *fmt, ...)
{
    va_list ap;
    dc->nerr++;
    va_start(ap, fmt);
    if (dra_diag_vadd(dc->d, dra_path_str(&dc->path), doc ? doc->line : 0,
                      doc ? doc->col : 0, fmt, ap) != DRA_OK)
        dc->oom = 1;
    va_end(ap);
}

void api_dec_invalid(api_dec *dc, const dra_doc *doc, const char *what)
{
    dra_buf b;
    dra_buf_init(&b, dc->d ? dc->d->mem : NULL);
    render(&b, doc, 0);
    if (b.oom)
        dc->oom = 1;
    api_dec_error(dc, doc, "Invalid value: %s: %s", b.p ? b.p : "", what);
    dra_buf_fini(&b);
}

dra_doc *api_doc_copy(dra_arena *a, const dra_doc *doc)
{
    dra_doc *c = dra_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *doc;
    switch (doc->kind) {
    case DRA_DOC_FLOAT:
        if (doc->u.f.num && !(c->u.f.num = dra_arena_strdup(a, doc->u.f.num)))
            return NULL;
        break;
    case DRA_DOC_STRING:
        if (!(c->u.str.s = dra_arena_strndup(a, doc->u.str.s, doc->u.str.len)))
            return NULL;
        break;
    case DRA_DOC_LIST:
        c->u.list.items = dra_arena_array(a, doc->u.list.n ? doc->u.list.n : 1,
                                          sizeof *c->u.list.items);
        if (!c->u.list.items)
            return NULL;
        for (size_t i = 0; i < doc->u.list.n; i++)
            if (!(c->u.list.items[i] = api_doc_copy(a, doc->u.list.items[i])))
                return NULL;
        break;
    case DRA_DOC_MAP:
        c->u.map.m = dra_arena_array(a, doc->u.map.n ? doc->u.map.n : 1, sizeof *c->u.map.m);
        if (!c->u.map.m)
            return NULL;
        for (size_t i = 0; i < doc->u.map.n; i++) {
            const dra_doc_member *s = &doc->u.map.m[i];
            dra_doc_member *t = &c->u.map.m[i];
            t->keylen = s->keylen;
            if (!(t->key = dra_arena_strndup(a, s->key, s->keylen)) ||
                !(t->val = api_doc_copy(a, s->val)))
                return NULL;
        }
        break;
    default:
        break;
    }
    return c;
}

/* Copies a string node; reports non-strings and embedded NULs. */
static int dec_str(api_dec *dc, const dra_doc *doc, const char **out)
{
    if (doc->kind == DRA_DOC_NULL) { /* Go leaves "" in list/map slots */
        *out = "";
        return 1;
    }
    if (doc->kind != DRA_DOC_STRING) {
        api_dec_invalid(dc, doc, "must be a string");
        return 0;
    }
    if (memchr(doc->u.str.s, '\0', doc->u.str.len)) {
        api_dec_invalid(dc, doc, "must not contain NUL characters");
        return 0;
    }
    *out = dra_arena_strndup(dc->a, doc->u.str.s, doc->u.str.len);
    if (!*out)
        dc->oom = 1;
    return *out != NULL;
}

static int dec_key(api_dec *dc, const dra_doc_member *m, const dra_doc *at, const char **out)
{
    if (memchr(m->key, '\0', m->keylen)) {
        api_dec_error(dc, at, "Invalid value: map key must not contain NUL characters");
        return 0;
    }
    *out = dra_arena_strndup(dc->a, m->key, m->keylen);
    if (!*out)
        dc->oom = 1;
    return *out != NULL;
}

static int dec_i64(api_dec *dc, const dra_doc *doc, int64_t *out)
{
    if (doc->kind != DRA_DOC_INT) {
        api_dec_invalid(dc, doc, "must be an integer");
        return 0;
    }
    *out = doc->u.i;
    return 1;
}

static int dec_bool(api_dec *dc, const dra_doc *doc, int *out)
{
    if (doc->kind != DRA_DOC_BOOL) {
        api_dec_invalid(dc, doc, "must be a boolean");
        return 0;
    }
    *out = doc->u.b != 0;
    return 1;
}

/* Like Go's Quantity.UnmarshalJSON: a JSON string or a bare number. */
static int dec_qty(api_dec *dc, const dra_doc *doc, dra_quantity *out)
{
    char tmp[64];
    const char *s;
    size_t len;
    dra_err e;
    switch (doc->kind) {
    case DRA_DOC_STRING: s = doc->u.str.s; len = doc->u.str.len; break;
    case DRA_DOC_INT:
        len = (size_t)snprintf(tmp, sizeof tmp, "%" PRId64, doc->u.i);
        s = tmp;
        break;
    case DRA_DOC_FLOAT:
        if (doc->u.f.num) {
            s = doc->u.f.num;
            len = strlen(s);
        } else {
            len = (size_t)snprintf(tmp, sizeof tmp, "%.17g", doc->u.f.f);
            s = tmp;
        }
        break;
    default:
        api_dec_invalid(dc, doc, "must be a quantity (string or number)");
        return 0;
    }
    e = dra_quantity_parse(s, len, out);
    if (e == DRA_ERANGE) {
        api_dec_invalid(dc, doc, "quantity is out of range");
        return 0;
    }
    if (e != DRA_OK) {
        api_dec_invalid(dc, doc, "quantities must match the regular expression " QTY_REGEX);
        return 0;
    }
    return 1;
}

static int want(api_dec *dc, const dra_doc *doc, dra_doc_kind kind)
{
    if (doc->kind == kind)
        return 1;
    api_dec_invalid(dc, doc, kind == DRA_DOC_MAP ? "must be an object" : "must be a list");
    return 0;
}

/* ---- containers ------------------------------------------------------------- */

static void dec_strlist(api_dec *dc, const dra_doc *doc, dra_strlist *out)
{
    size_t n, k = 0;
    if (!want(dc, doc, DRA_DOC_LIST))
        return;
    n = doc->u.list.n;
    if (!(out->v = dec_alloc(dc, n, sizeof *out->v)))
        return;
    out->set = 1;
    for (size_t i = 0; i < n; i++) {
        dra_path_index(&dc->path, i);
        if (dec_str(dc, doc->u.list.items[i], &out->v[k]))
            k++;
        dra_path_pop(&dc->path);
    }
    out->n = k;
}

static void dec_strmap(api_dec *dc, const dra_doc *doc, dra_strmap *out)
{
    size_t n, k = 0;
    if (!want(dc, doc, DRA_DOC_MAP))
        return;
    n = doc->u.map.n;
    if (!(out->v = dec_alloc(dc, n, sizeof *out->v)))
        return;
    for (size_t i = 0; i < n; i++) {
        const dra_doc_member *m = &doc->u.map.m[i];
        dra_path_key(&dc->path, m->key);
        if (dec_key(dc, m, m->val, &out->v[k].key) && dec_str(dc, m->val, &out->v[k].val))
            k++;
        dra_path_pop(&dc->path);
    }
    out->n = k;
}

static void dec_qtymap(api_dec *dc, const dra_doc *doc, dra_qtymap *out)
{
    size_t n, k = 0;
    if (!want(dc, doc, DRA_DOC_MAP))
        return;
    n = doc->u.map.n;
    if (!(out->v = dec_alloc(dc, n, sizeof *out->v)))
        return;
    for (size_t i = 0; i < n; i++) {
        const dra_doc_member *m = &doc->u.map.m[i];
        dra_path_key(&dc->path, m->key);
        if (dec_key(dc, m, m->val, &out->v[k].key) && dec_qty(dc, m->val, &out->v[k].q))
            k++;
        dra_path_pop(&dc->path);
    }
    out->n = k;
}

static void dec_qtylist(api_dec *dc, const dra_doc *doc, dra_quantity **out, size_t *nout)
{
    size_t n, k = 0;
    dra_quantity *v;
    if (!want(dc, doc, DRA_DOC_LIST))
        return;
    n = doc->u.list.n;
    if (!(v = dec_alloc(dc, n, sizeof *v)))
        return;
    for (size_t i = 0; i < n; i++) {
        dra_path_index(&dc->path, i);
        if (dec_qty(dc, doc->u.list.items[i], &v[k]))
            k++;
        dra_path_pop(&dc->path);
    }
    *out = v;
    *nout = k;
}

static void dec_list(api_dec *dc, const api_field *f, char *base, const dra_doc *doc)
{
    size_t n;
    char *arr;
    if (!want(dc, doc, DRA_DOC_LIST))
        return;
    n = doc->u.list.n;
    if (!(arr = dec_alloc(dc, n, f->sub->size)))
        return;
    for (size_t i = 0; i < n; i++) {
        dra_path_index(&dc->path, i);
        api_dec_struct(dc, f->sub, arr + i * f->sub->size, doc->u.list.items[i]);
        dra_path_pop(&dc->path);
    }
    *(void **)(base + f->off) = arr;
    *(size_t *)(base + f->off2) = n;
    if (f->flags & API_HAS_OFF3)
        *(int *)(base + f->off3) = 1;
}

static void dec_mapof(api_dec *dc, const api_field *f, char *base, const dra_doc *doc)
{
    size_t n, k = 0;
    char *arr;
    if (!want(dc, doc, DRA_DOC_MAP))
        return;
    n = doc->u.map.n;
    if (!(arr = dec_alloc(dc, n, f->sub->size)))
        return;
    for (size_t i = 0; i < n; i++) {
        const dra_doc_member *m = &doc->u.map.m[i];
        char *elem = arr + k * f->sub->size;
        dra_path_key(&dc->path, m->key);
        if (dec_key(dc, m, m->val, (const char **)(elem + f->sub->key_off))) {
            api_dec_struct(dc, f->sub, elem, m->val);
            k++;
        }
        dra_path_pop(&dc->path);
    }
    *(void **)(base + f->off) = arr;
    *(size_t *)(base + f->off2) = k;
}

/* ---- fields and structs ----------------------------------------------------- */

static void dec_field(api_dec *dc, const api_field *f, char *base, const dra_doc *v)
{
    void *p = base + f->off;
    int b;
    switch ((api_ftype)f->type) {
    case API_F_SKIP: break;
    case API_F_STR:
    case API_F_PSTR:
    case API_F_TIME: dec_str(dc, v, (const char **)p); break;
    case API_F_I64:
        if (dec_i64(dc, v, (int64_t *)p) && (f->flags & API_HAS_OFF2))
            *(int *)(base + f->off2) = 1;
        break;
    case API_F_OPTI64:
        ((dra_opt_i64 *)p)->set = dec_i64(dc, v, &((dra_opt_i64 *)p)->v);
        break;
    case API_F_TRI:
        if (dec_bool(dc, v, &b))
            *(dra_tri *)p = b ? DRA_TRI_TRUE : DRA_TRI_FALSE;
        break;
    case API_F_MASKI64:
        if (dec_i64(dc, v, (int64_t *)p))
            *(unsigned *)(base + f->off2) |= f->bit;
        break;
    case API_F_MASKBOOL:
        if (dec_bool(dc, v, (int *)p))
            *(unsigned *)(base + f->off2) |= f->bit;
        break;
    case API_F_MASKSTR:
        if (dec_str(dc, v, (const char **)p))
            *(unsigned *)(base + f->off2) |= f->bit;
        break;
    case API_F_QTY: dec_qty(dc, v, (dra_quantity *)p); break;
    case API_F_PQTY: {
        dra_quantity *q = dec_alloc(dc, 1, sizeof *q);
        if (q && dec_qty(dc, v, q))
            *(dra_quantity **)p = q;
        break;
    }
    case API_F_QTYLIST: dec_qtylist(dc, v, (dra_quantity **)p, (size_t *)(base + f->off2)); break;
    case API_F_QTYMAP: dec_qtymap(dc, v, (dra_qtymap *)p); break;
    case API_F_STRLIST: dec_strlist(dc, v, (dra_strlist *)p); break;
    case API_F_STRMAP: dec_strmap(dc, v, (dra_strmap *)p); break;
    case API_F_DOC:
        if (!(*(dra_doc **)p = api_doc_copy(dc->a, v)))
            dc->oom = 1;
        break;
    case API_F_STRUCT: api_dec_struct(dc, f->sub, p, v); break;
    case API_F_PSTRUCT: {
        void *s = dec_alloc(dc, 1, f->sub->size);
        if (s) {
            api_dec_struct(dc, f->sub, s, v);
            *(void **)p = s;
        }
        break;
    }
    case API_F_INLINE:
        if (want(dc, v, DRA_DOC_MAP)) {
            api_dec_struct(dc, f->sub, base, v);
            if (f->flags & API_HAS_OFF2)
                *(int *)(base + f->off2) = 1;
        }
        break;
    case API_F_LIST: dec_list(dc, f, base, v); break;
    case API_F_MAPOF: dec_mapof(dc, f, base, v); break;
    }
}

/* |m|'s field of |st|, searched from *hint on: documents we encoded list
 * their members in field order, so the next member is usually the next
 * field. */
static const api_field *find_field(const api_struct *st, const dra_doc_member *m, size_t *hint)
{
    for (size_t k = 0; k < st->nfields; k++) {
        size_t i = *hint + k < st->nfields ? *hint + k : *hint + k - st->nfields;
        if (st->fields[i].type != API_F_SKIP && api_field_named(&st->fields[i], m->key, m->keylen)) {
            *hint = i + 1 < st->nfields ? i + 1 : 0;
            return &st->fields[i];
        }
    }
    return NULL;
}

static void add_extra(api_dec *dc, dra_doc **extra, size_t cap, const dra_doc_member *m)
{
    dra_doc *x = *extra;
    dra_doc_member *t;
    if (!x) {
        x = dra_arena_zalloc(dc->a, sizeof *x);
        if (!x || !(x->u.map.m = dec_alloc(dc, cap, sizeof *x->u.map.m))) {
            dc->oom = 1;
            return;
        }
        x->kind = DRA_DOC_MAP;
        *extra = x;
    }
    t = &x->u.map.m[x->u.map.n];
    t->keylen = m->keylen;
    t->key = dra_arena_strndup(dc->a, m->key, m->keylen);
    t->val = api_doc_copy(dc->a, m->val);
    if (!t->key || !t->val) {
        dc->oom = 1;
        return;
    }
    x->u.map.n++;
}

void api_dec_struct(api_dec *dc, const api_struct *st, void *base, const dra_doc *doc)
{
    size_t hint = 0;
    if (!want(dc, doc, DRA_DOC_MAP))
        return;
    for (size_t i = 0; i < doc->u.map.n && !dc->oom; i++) {
        const dra_doc_member *m = &doc->u.map.m[i];
        const api_field *f = find_field(st, m, &hint);
        if (!f) {
            add_extra(dc, (dra_doc **)((char *)base + st->extra_off), doc->u.map.n, m);
            continue;
        }
        /* JSON null leaves a Go field at its zero value. */
        if (m->val->kind == DRA_DOC_NULL)
            continue;
        dra_path_field(&dc->path, f->name);
        dec_field(dc, f, base, m->val);
        dra_path_pop(&dc->path);
    }
}
