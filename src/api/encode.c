/*
 * encode.c: typed structs -> dra_doc, driven by the field tables in
 * types.c. Fields come out in Go struct order under Go's encoding/json
 * rules: omitempty drops zero values, a nil pointer or slice without
 * omitempty is null, an embedded struct is always written, and map keys
 * are sorted. Unknown members kept in `extra` are written back, at their
 * Go position when the table names them (API_F_SKIP), else at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* Result of encoding one field: written, left out, or out of memory. */
enum { ENC_OMIT = 0, ENC_OK = 1, ENC_OOM = -1 };

/* ---- builders --------------------------------------------------------------- */

static dra_doc *node(dra_arena *a, dra_doc_kind kind)
{
    dra_doc *d = dra_arena_zalloc(a, sizeof *d);
    if (d)
        d->kind = kind;
    return d;
}

dra_doc *api_enc_string(dra_arena *a, const char *s)
{
    dra_doc *d = node(a, DRA_DOC_STRING);
    if (!d)
        return NULL;
    d->u.str.len = strlen(s);
    d->u.str.s = dra_arena_strndup(a, s, d->u.str.len);
    return d->u.str.s ? d : NULL;
}

dra_doc *api_enc_map(dra_arena *a, size_t cap)
{
    dra_doc *d = node(a, DRA_DOC_MAP);
    if (!d || !(d->u.map.m = dra_arena_array(a, cap ? cap : 1, sizeof *d->u.map.m)))
        return NULL;
    return d;
}

/* Appends without a lookup; the caller sized the map for every member.
 * |key| must outlive the document (static names or arena strings). */
void api_enc_put(dra_doc *map, const char *key, dra_doc *val)
{
    dra_doc_member *m = &map->u.map.m[map->u.map.n++];
    m->key = key;
    m->keylen = strlen(key);
    m->val = val;
}

dra_doc *api_enc_list(dra_arena *a, size_t n)
{
    dra_doc *d = node(a, DRA_DOC_LIST);
    if (!d || !(d->u.list.items = dra_arena_array(a, n ? n : 1, sizeof *d->u.list.items)))
        return NULL;
    d->u.list.n = n;
    return d;
}

static dra_doc *enc_int(dra_arena *a, int64_t v)
{
    dra_doc *d = node(a, DRA_DOC_INT);
    if (d)
        d->u.i = v;
    return d;
}

static dra_doc *enc_bool(dra_arena *a, int v)
{
    dra_doc *d = node(a, DRA_DOC_BOOL);
    if (d)
        d->u.b = v != 0;
    return d;
}

static dra_doc *enc_qty(dra_arena *a, const dra_quantity *q)
{
    char tmp[128];
    size_t n = dra_quantity_str(q, tmp, sizeof tmp);
    if (n >= sizeof tmp) { /* beyond any real quantity; still exact */
        char *big = dra_arena_alloc(a, n + 1);
        if (!big)
            return NULL;
        dra_quantity_str(q, big, n + 1);
        return api_enc_string(a, big);
    }
    return api_enc_string(a, tmp);
}

/* ---- sorted maps -------------------------------------------------------------
 * Go's encoding/json writes map keys in byte order; sort (key, index)
 * pairs, ties keep source order. */

typedef struct keyidx {
    const char *key;
    size_t i;
} keyidx;

static int keyidx_cmp(const void *x, const void *y)
{
    const keyidx *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Sorted index of |n| keys found at |stride|-spaced |first|; NULL on
 * ENOMEM. */
static keyidx *sort_keys(dra_arena *a, const void *first, size_t n, size_t stride)
{
    keyidx *k = dra_arena_array(a, n ? n : 1, sizeof *k);
    if (!k)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        k[i].key = *(const char *const *)((const char *)first + i * stride);
        k[i].i = i;
    }
    qsort(k, n, sizeof *k, keyidx_cmp);
    return k;
}

/* ---- field kinds ------------------------------------------------------------ */

static int absent(const api_field *f, dra_arena *a, dra_doc **out)
{
    if (f->flags & API_OMIT)
        return ENC_OMIT;
    *out = node(a, DRA_DOC_NULL);
    return *out ? ENC_OK : ENC_OOM;
}

static int enc_strlist(dra_arena *a, const api_field *f, const dra_strlist *l, dra_doc **out)
{
    if (!l->n && ((f->flags & API_OMIT) || !l->set))
        return absent(f, a, out);
    if (!(*out = api_enc_list(a, l->n)))
        return ENC_OOM;
    for (size_t i = 0; i < l->n; i++)
        if (!((*out)->u.list.items[i] = api_enc_string(a, l->v[i] ? l->v[i] : "")))
            return ENC_OOM;
    return ENC_OK;
}

static int enc_strmap(dra_arena *a, const api_field *f, const dra_strmap *m, dra_doc **out)
{
    keyidx *k;
    if (!m->n)
        return absent(f, a, out);
    if (!(k = sort_keys(a, &m->v[0].key, m->n, sizeof m->v[0])) || !(*out = api_enc_map(a, m->n)))
        return ENC_OOM;
    for (size_t i = 0; i < m->n; i++) {
        const dra_kv *kv = &m->v[k[i].i];
        dra_doc *v = api_enc_string(a, kv->val ? kv->val : "");
        const char *key = dra_arena_strdup(a, kv->key);
        if (!v || !key)
            return ENC_OOM;
        api_enc_put(*out, key, v);
    }
    return ENC_OK;
}

static int enc_qtymap(dra_arena *a, const api_field *f, const dra_qtymap *m, dra_doc **out)
{
    keyidx *k;
    if (!m->n)
        return absent(f, a, out);
    if (!(k = sort_keys(a, &m->v[0].key, m->n, sizeof m->v[0])) || !(*out = api_enc_map(a, m->n)))
        return ENC_OOM;
    for (size_t i = 0; i < m->n; i++) {
        const dra_qty_entry *e = &m->v[k[i].i];
        dra_doc *v = enc_qty(a, &e->q);
        const char *key = dra_arena_strdup(a, e->key);
        if (!v || !key)
            return ENC_OOM;
        api_enc_put(*out, key, v);
    }
    return ENC_OK;
}

static int enc_qtylist(dra_arena *a, const api_field *f, const char *base, dra_doc **out)
{
    const dra_quantity *v = *(dra_quantity *const *)(base + f->off);
    size_t n = *(const size_t *)(base + f->off2);
    if (!n)
        return absent(f, a, out);
    if (!(*out = api_enc_list(a, n)))
        return ENC_OOM;
    for (size_t i = 0; i < n; i++)
        if (!((*out)->u.list.items[i] = enc_qty(a, &v[i])))
            return ENC_OOM;
    return ENC_OK;
}

static int enc_structlist(dra_arena *a, const api_field *f, const char *base, dra_doc **out)
{
    const char *arr = *(const char *const *)(base + f->off);
    size_t n = *(const size_t *)(base + f->off2);
    int set = (f->flags & API_HAS_OFF3) && *(const int *)(base + f->off3);
    if (!n && ((f->flags & API_OMIT) || !set))
        return absent(f, a, out);
    if (!(*out = api_enc_list(a, n)))
        return ENC_OOM;
    for (size_t i = 0; i < n; i++)
        if (!((*out)->u.list.items[i] = api_enc_struct(a, f->sub, arr + i * f->sub->size)))
            return ENC_OOM;
    return ENC_OK;
}

static int enc_mapof(dra_arena *a, const api_field *f, const char *base, dra_doc **out)
{
    const char *arr = *(const char *const *)(base + f->off);
    size_t n = *(const size_t *)(base + f->off2), sz = f->sub->size;
    keyidx *k;
    if (!n)
        return absent(f, a, out);
    if (!(k = sort_keys(a, arr + f->sub->key_off, n, sz)) || !(*out = api_enc_map(a, n)))
        return ENC_OOM;
    for (size_t i = 0; i < n; i++) {
        const char *elem = arr + k[i].i * sz;
        dra_doc *v = api_enc_struct(a, f->sub, elem);
        const char *key = dra_arena_strdup(a, k[i].key);
        if (!v || !key)
            return ENC_OOM;
        api_enc_put(*out, key, v);
    }
    return ENC_OK;
}

static int enc_str(dra_arena *a, const api_field *f, const char *s, dra_doc **out)
{
    switch ((api_ftype)f->type) {
    case API_F_STR:
        if ((f->flags & API_OMIT) && (!s || !*s))
            return ENC_OMIT;
        s = s ? s : "";
        break;
    default: /* PSTR, TIME: a nil pointer or zero time */
        if (!s)
            return absent(f, a, out);
        break;
    }
    *out = api_enc_string(a, s);
    return *out ? ENC_OK : ENC_OOM;
}

static int enc_field(dra_arena *a, const api_field *f, const char *base, dra_doc **out)
{
    const void *p = base + f->off;
    *out = NULL;
    switch ((api_ftype)f->type) {
    case API_F_SKIP: return ENC_OMIT;
    case API_F_STR:
    case API_F_PSTR:
    case API_F_TIME: return enc_str(a, f, *(const char *const *)p, out);
    case API_F_I64:
        if ((f->flags & API_OMIT) && !*(const int64_t *)p)
            return ENC_OMIT;
        *out = enc_int(a, *(const int64_t *)p);
        break;
    case API_F_OPTI64:
        if (!((const dra_opt_i64 *)p)->set)
            return absent(f, a, out);
        *out = enc_int(a, ((const dra_opt_i64 *)p)->v);
        break;
    case API_F_TRI:
        if (*(const dra_tri *)p == DRA_TRI_UNSET)
            return absent(f, a, out);
        *out = enc_bool(a, *(const dra_tri *)p == DRA_TRI_TRUE);
        break;
    case API_F_MASKI64:
    case API_F_MASKBOOL:
    case API_F_MASKSTR:
        if (!(*(const unsigned *)(base + f->off2) & f->bit))
            return ENC_OMIT;
        if (f->type == API_F_MASKI64)
            *out = enc_int(a, *(const int64_t *)p);
        else if (f->type == API_F_MASKBOOL)
            *out = enc_bool(a, *(const int *)p);
        else
            *out = api_enc_string(a, *(const char *const *)p ? *(const char *const *)p : "");
        break;
    case API_F_QTY: *out = enc_qty(a, (const dra_quantity *)p); break;
    case API_F_PQTY:
        if (!*(const dra_quantity *const *)p)
            return absent(f, a, out);
        *out = enc_qty(a, *(const dra_quantity *const *)p);
        break;
    case API_F_QTYLIST: return enc_qtylist(a, f, base, out);
    case API_F_QTYMAP: return enc_qtymap(a, f, (const dra_qtymap *)p, out);
    case API_F_STRLIST: return enc_strlist(a, f, (const dra_strlist *)p, out);
    case API_F_STRMAP: return enc_strmap(a, f, (const dra_strmap *)p, out);
    case API_F_DOC:
        if (!*(dra_doc *const *)p) {
            if (f->flags & API_EMPTYOBJ) {
                *out = api_enc_map(a, 0);
                break;
            }
            return absent(f, a, out);
        }
        *out = api_doc_copy(a, *(dra_doc *const *)p);
        break;
    case API_F_STRUCT: *out = api_enc_struct(a, f->sub, p); break;
    case API_F_PSTRUCT:
        if (!*(const void *const *)p)
            return absent(f, a, out);
        *out = api_enc_struct(a, f->sub, *(const void *const *)p);
        break;
    case API_F_INLINE:
        if ((f->flags & API_HAS_OFF2) && !*(const int *)(base + f->off2))
            return absent(f, a, out);
        *out = api_enc_struct(a, f->sub, base);
        break;
    case API_F_LIST: return enc_structlist(a, f, base, out);
    case API_F_MAPOF: return enc_mapof(a, f, base, out);
    }
    return *out ? ENC_OK : ENC_OOM;
}

/* ---- structs ---------------------------------------------------------------- */

static const dra_doc_member *extra_find(const dra_doc *extra, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; extra && i < extra->u.map.n; i++)
        if (extra->u.map.m[i].keylen == len && !memcmp(extra->u.map.m[i].key, name, len))
            return &extra->u.map.m[i];
    return NULL;
}

int api_struct_has(const api_struct *st, const dra_doc_member *m)
{
    for (size_t i = 0; i < st->nfields; i++)
        if (api_field_named(&st->fields[i], m->key, m->keylen))
            return 1;
    return 0;
}

static int put_extra(dra_arena *a, dra_doc *map, const dra_doc_member *m)
{
    dra_doc_member *t = &map->u.map.m[map->u.map.n];
    t->keylen = m->keylen;
    t->key = dra_arena_strndup(a, m->key, m->keylen);
    t->val = api_doc_copy(a, m->val);
    if (!t->key || !t->val)
        return ENC_OOM;
    map->u.map.n++;
    return ENC_OK;
}

dra_doc *api_enc_struct(dra_arena *a, const api_struct *st, const void *basev)
{
    const char *base = basev;
    const dra_doc *extra = *(dra_doc *const *)(base + st->extra_off);
    size_t nextra = extra && extra->kind == DRA_DOC_MAP ? extra->u.map.n : 0;
    dra_doc *map = api_enc_map(a, st->nfields + nextra);
    if (!map)
        return NULL;
    if (!nextra)
        extra = NULL;
    for (size_t i = 0; i < st->nfields; i++) {
        const api_field *f = &st->fields[i];
        dra_doc *v;
        int r;
        if (f->type == API_F_SKIP) {
            const dra_doc_member *m = extra_find(extra, f->name);
            if (m && put_extra(a, map, m) == ENC_OOM)
                return NULL;
            continue;
        }
        r = enc_field(a, f, base, &v);
        if (r == ENC_OOM)
            return NULL;
        if (r == ENC_OK)
            api_enc_put(map, f->name, v);
    }
    for (size_t i = 0; i < nextra; i++)
        if (!api_struct_has(st, &extra->u.map.m[i]) && put_extra(a, map, &extra->u.map.m[i]) == ENC_OOM)
            return NULL;
    return map;
}
