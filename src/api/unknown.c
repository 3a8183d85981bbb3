/*
 * unknown.c: reports the members a decoded object kept in its `extra`
 * maps that Kubernetes itself does not define, the way kube-apiserver's
 * strict field validation words them (unknown field "spec.foo"). Walks
 * the same field tables as the decoder.
 */
#include <string.h>

#include "api_int.h"

typedef struct walk {
    dra_path path;
    dra_diag *d;
    size_t n;
    int drop; /* remove what is found instead of reporting it */
} walk;

static void walk_struct(walk *w, const api_struct *st, const char *base);

static void report_extra(walk *w, const api_struct *st, const char *base)
{
    dra_doc *x = *(dra_doc *const *)(base + st->extra_off);
    size_t kept = 0;
    if (!x || x->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < x->u.map.n; i++) {
        const dra_doc_member *m = &x->u.map.m[i];
        if (api_struct_has(st, m)) {
            x->u.map.m[kept++] = *m; /* known to Kubernetes, kept untyped here */
            continue;
        }
        w->n++;
        if (w->drop)
            continue;
        kept++;
        dra_path_field(&w->path, m->key);
        dra_diag_add(w->d, "", m->val->line, m->val->col, "unknown field \"%s\"",
                     dra_path_str(&w->path));
        dra_path_pop(&w->path);
    }
    x->u.map.n = kept;
}

static void walk_field(walk *w, const api_field *f, const char *base)
{
    const char *p = base + f->off;
    size_t n;
    switch ((api_ftype)f->type) {
    case API_F_STRUCT: walk_struct(w, f->sub, p); break;
    case API_F_PSTRUCT:
        if (*(const char *const *)p)
            walk_struct(w, f->sub, *(const char *const *)p);
        break;
    case API_F_INLINE: walk_struct(w, f->sub, base); break;
    case API_F_LIST:
        n = *(const size_t *)(base + f->off2);
        for (size_t i = 0; i < n; i++) {
            dra_path_index(&w->path, i);
            walk_struct(w, f->sub, *(const char *const *)p + i * f->sub->size);
            dra_path_pop(&w->path);
        }
        break;
    case API_F_MAPOF:
        n = *(const size_t *)(base + f->off2);
        for (size_t i = 0; i < n; i++) {
            const char *elem = *(const char *const *)p + i * f->sub->size;
            dra_path_key(&w->path, *(const char *const *)(elem + f->sub->key_off));
            walk_struct(w, f->sub, elem);
            dra_path_pop(&w->path);
        }
        break;
    default:
        break;
    }
}

static void walk_struct(walk *w, const api_struct *st, const char *base)
{
    report_extra(w, st, base);
    for (size_t i = 0; i < st->nfields; i++) {
        dra_path_field(&w->path, st->fields[i].name);
        walk_field(w, &st->fields[i], base);
        dra_path_pop(&w->path);
    }
}

static size_t unknown_walk(const dra_object *obj, dra_diag *d, int drop)
{
    const api_struct *st = obj ? api_kind_struct(obj->kind) : NULL;
    walk w;
    if (!st)
        return 0;
    dra_path_init(&w.path, NULL);
    w.d = d;
    w.n = 0;
    w.drop = drop;
    walk_struct(&w, st, (const char *)obj);
    return w.n;
}

size_t dra_api_unknown_fields(const dra_object *obj, dra_diag *d)
{
    return unknown_walk(obj, d, 0);
}

/* The walk reads |obj| through const pointers, but the extra maps it
 * edits are the object's own (the decoder copies every unknown member). */
size_t dra_api_drop_unknown_fields(dra_object *obj)
{
    return unknown_walk(obj, NULL, 1);
}
