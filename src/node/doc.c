/*
 * doc.c: small helpers over dra_doc trees for the agent: dotted-path
 * lookups into pods and claims, builders that defer the out-of-memory
 * check to the end, deep copies and JSON round trips.
 */
#include <string.h>

#include "node_int.h"

int64_t node_doc_int(const dra_doc *d, const char *dotted, int64_t dflt)
{
    const dra_doc *v = dra_doc_at(d, dotted);
    return v && v->kind == DRA_DOC_INT ? v->u.i : dflt;
}

const char *node_doc_str(const dra_doc *map, const char *key)
{
    const dra_doc *v = map && map->kind == DRA_DOC_MAP ? dra_doc_get(map, key) : NULL;
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

dra_doc *node_str(dra_arena *a, const char *s)
{
    return dra_doc_new_string(a, s ? s : "", s ? strlen(s) : 0);
}

void node_set(dra_arena *a, dra_doc *map, const char *key, dra_doc *val, dra_err *err)
{
    if (*err)
        return;
    if (!map || !val || dra_doc_map_set(a, map, key, val) != DRA_OK)
        *err = DRA_ENOMEM;
}

void node_set_str(dra_arena *a, dra_doc *map, const char *key, const char *s, dra_err *err)
{
    node_set(a, map, key, node_str(a, s), err);
}

void node_push(dra_arena *a, dra_doc *list, dra_doc *item, dra_err *err)
{
    if (*err)
        return;
    if (!list || !item || dra_doc_list_push(a, list, item) != DRA_OK)
        *err = DRA_ENOMEM;
}

dra_doc *node_doc_copy(dra_arena *a, const dra_doc *d)
{
    dra_doc *c;
    if (!d)
        return NULL;
    switch (d->kind) {
    case DRA_DOC_NULL:
        return dra_doc_new_null(a);
    case DRA_DOC_BOOL:
        return dra_doc_new_bool(a, d->u.b);
    case DRA_DOC_INT:
        return dra_doc_new_int(a, d->u.i);
    case DRA_DOC_FLOAT:
        if ((c = dra_doc_new_float(a, d->u.f.f)) != NULL && d->u.f.num)
            c->u.f.num = dra_arena_strdup(a, d->u.f.num);
        return c;
    case DRA_DOC_STRING:
        return dra_doc_new_string(a, d->u.str.s, d->u.str.len);
    case DRA_DOC_LIST:
        if (!(c = dra_doc_new_list(a, d->u.list.n)))
            return NULL;
        for (size_t i = 0; i < d->u.list.n; i++) {
            dra_doc *it = node_doc_copy(a, d->u.list.items[i]);
            if (!it || dra_doc_list_push(a, c, it))
                return NULL;
        }
        return c;
    case DRA_DOC_MAP:
        if (!(c = dra_doc_new_map(a, d->u.map.n)))
            return NULL;
        for (size_t i = 0; i < d->u.map.n; i++) {
            dra_doc *v = node_doc_copy(a, d->u.map.m[i].val);
            if (!v || dra_doc_map_set(a, c, d->u.map.m[i].key, v))
                return NULL;
        }
        return c;
    }
    return NULL;
}

void node_doc_del(dra_doc *map, const char *key)
{
    size_t w = 0;
    if (!map || map->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < map->u.map.n; i++)
        if (strcmp(map->u.map.m[i].key, key) != 0)
            map->u.map.m[w++] = map->u.map.m[i];
    map->u.map.n = w;
}

dra_doc *node_parse(dra_arena *a, const char *text, size_t len)
{
    dra_doc *d = NULL;
    if (!text || dra_doc_parse_json(a, text, len, &d, NULL) != DRA_OK)
        return NULL;
    return d;
}

char *node_to_json(const dra_mem *mem, const dra_doc *d)
{
    dra_buf b;
    dra_buf_init(&b, mem);
    if (dra_doc_to_json(d, 0, &b) != DRA_OK) {
        dra_buf_fini(&b);
        return NULL;
    }
    return dra_buf_detach(&b);
}
