/*
 * patch_apply.c: server-side apply and managedFields bookkeeping. Field
 * sets are tries of FieldsV1 path elements (f:<field>, k:<keys>,
 * v:<value>), built from documents with the list types of the schema
 * tables; apply merges the applied configuration into the live object,
 * detects conflicts with other managers' fields, removes fields the
 * manager stopped applying and records who owns what, following
 * structured-merge-diff's rules in a reduced form (see
 * docs/apiserver-lib.md for what differs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch_int.h"

/* ---- field sets --------------------------------------------------------------- */

typedef struct fnode fnode;
struct fnode {
    const char *el; /* FieldsV1 key of this element; NULL at the root */
    int member;     /* the path ending here is in the set */
    fnode **kids;
    size_t n, cap;
};

typedef struct actx {
    dra_arena *a;
    int oom;
} actx;

static fnode *fs_new(actx *c, const char *el)
{
    fnode *f = dra_arena_zalloc(c->a, sizeof *f);
    if (!f)
        c->oom = 1;
    else
        f->el = el;
    return f;
}

static fnode *fs_child(actx *c, fnode *f, const char *el, int create)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->kids[i]->el, el))
            return f->kids[i];
    if (!create)
        return NULL;
    if (f->n == f->cap) {
        size_t ncap = f->cap ? f->cap * 2 : 4;
        fnode **nv = dra_arena_array(c->a, ncap, sizeof *nv);
        if (!nv) {
            c->oom = 1;
            return NULL;
        }
        if (f->n)
            memcpy(nv, f->kids, f->n * sizeof *nv);
        f->kids = nv;
        f->cap = ncap;
    }
    fnode *k = fs_new(c, el);
    if (k)
        f->kids[f->n++] = k;
    return k;
}

/* A path: elements from the root. */
typedef struct fpath {
    const char *el[DRA_DOC_MAX_DEPTH];
    size_t n;
} fpath;

static void fs_add(actx *c, fnode *root, const fpath *p)
{
    fnode *f = root;
    for (size_t i = 0; f && i < p->n; i++)
        f = fs_child(c, f, p->el[i], 1);
    if (f)
        f->member = 1;
}

static int fs_has(const fnode *root, const fpath *p)
{
    const fnode *f = root;
    for (size_t i = 0; f && i < p->n; i++)
        f = fs_child(NULL, (fnode *)f, p->el[i], 0);
    return f && f->member;
}

static void fs_del(fnode *root, const fpath *p)
{
    fnode *f = root;
    for (size_t i = 0; f && i < p->n; i++)
        f = fs_child(NULL, f, p->el[i], 0);
    if (f)
        f->member = 0;
}

static int fs_empty(const fnode *f)
{
    if (!f)
        return 1;
    if (f->member)
        return 0;
    for (size_t i = 0; i < f->n; i++)
        if (!fs_empty(f->kids[i]))
            return 0;
    return 1;
}

typedef void (*fs_fn)(void *ud, const fpath *p);

static void fs_each_rec(const fnode *f, fpath *p, fs_fn fn, void *ud)
{
    if (f->member && p->n)
        fn(ud, p);
    for (size_t i = 0; i < f->n && p->n < DRA_DOC_MAX_DEPTH; i++) {
        p->el[p->n++] = f->kids[i]->el;
        fs_each_rec(f->kids[i], p, fn, ud);
        p->n--;
    }
}

static void fs_each(const fnode *root, fs_fn fn, void *ud)
{
    fpath p;
    p.n = 0;
    fs_each_rec(root, &p, fn, ud);
}

/* FieldsV1 ordering: ".", then f: (by name), k:, v:, i: entries. */
static int el_rank(const char *el)
{
    return el[0] == 'f' ? 0 : el[0] == 'k' ? 1 : el[0] == 'v' ? 2 : 3;
}

static int el_cmp(const void *x, const void *y)
{
    const char *a = (*(const fnode *const *)x)->el, *b = (*(const fnode *const *)y)->el;
    int ra = el_rank(a), rb = el_rank(b);
    return ra != rb ? ra - rb : strcmp(a, b);
}

/* The FieldsV1 document of |f|, or NULL when it holds nothing. */
static dra_doc *fs_to_doc(actx *c, fnode *f)
{
    if (fs_empty(f))
        return NULL;
    dra_doc *m = dra_doc_new_map(c->a, f->n + 1);
    if (!m) {
        c->oom = 1;
        return NULL;
    }
    if (f->member && f->n && f->el) {
        dra_doc *e = dra_doc_new_map(c->a, 0);
        if (!e || dra_doc_map_set(c->a, m, ".", e))
            c->oom = 1;
    }
    if (f->n > 1)
        qsort(f->kids, f->n, sizeof *f->kids, el_cmp);
    for (size_t i = 0; i < f->n; i++) {
        dra_doc *k = fs_to_doc(c, f->kids[i]);
        if (k && dra_doc_map_set(c->a, m, f->kids[i]->el, k))
            c->oom = 1;
    }
    return m;
}

static void fs_from_doc(actx *c, fnode *f, const dra_doc *d, int depth)
{
    if (!d || d->kind != DRA_DOC_MAP || depth > DRA_DOC_MAX_DEPTH)
        return;
    if (d->u.map.n == 0 && f->el)
        f->member = 1;
    for (size_t i = 0; i < d->u.map.n; i++) {
        const char *k = d->u.map.m[i].key;
        if (!strcmp(k, ".")) {
            f->member = 1;
            continue;
        }
        char *el = dra_arena_strdup(c->a, k);
        fnode *kid = el ? fs_child(c, f, el, 1) : NULL;
        if (!kid) {
            c->oom = 1;
            return;
        }
        fs_from_doc(c, kid, d->u.map.m[i].val, depth + 1);
    }
}

/* ---- schema walking ----------------------------------------------------------- */

/* How a value under field |f| is owned. */
enum { OWN_LEAF, OWN_GRANULAR, OWN_LISTMAP, OWN_SET };

static int ownership(const api_openapi_field *f, const dra_doc *v, api_oa_at sub)
{
    if (!v)
        return OWN_LEAF;
    if (v->kind == DRA_DOC_LIST) {
        if (f && f->keys)
            return OWN_LISTMAP;
        if (f && (f->flags & API_OA_F_SET))
            return OWN_SET;
        return OWN_LEAF;
    }
    if (v->kind == DRA_DOC_MAP) {
        if (f && (f->flags & API_OA_F_MAP_ATOMIC))
            return OWN_LEAF;
        if (sub.t && !sub.map && (sub.t->flags & API_OA_T_ATOMIC))
            return OWN_LEAF;
        if (f && f->kind == API_OA_MAP && f->elem != API_OA_OBJECT)
            return OWN_GRANULAR; /* map of scalars: one leaf per key */
        if (f && f->kind != API_OA_OBJECT && f->kind != API_OA_MAP)
            return OWN_LEAF; /* RawExtension and other free-form values */
        return OWN_GRANULAR;
    }
    return OWN_LEAF;
}

static const char *json_text(actx *c, const char *prefix, const dra_doc *d)
{
    dra_buf b;
    char *s;
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, prefix);
    if (dra_doc_to_json(d, 0, &b) != DRA_OK || b.oom) {
        dra_buf_fini(&b);
        c->oom = 1;
        return "";
    }
    if (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = '\0';
    s = dra_arena_strdup(c->a, b.p);
    dra_buf_fini(&b);
    if (!s)
        c->oom = 1;
    return s ? s : "";
}

/* k:{"key":value,...} for |item| of a list keyed by |keys| (sorted by
 * key name, present keys only). */
static const char *key_el(actx *c, const char *keys, const dra_doc *item)
{
    const char *names[8];
    size_t n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", keys);
    for (char *tok = strtok(buf, ","); tok && n < 8; tok = strtok(NULL, ","))
        names[n++] = dra_arena_strdup(c->a, tok);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && names[j] && names[j - 1] && strcmp(names[j - 1], names[j]) > 0; j--) {
            const char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    dra_doc *m = dra_doc_new_map(c->a, n);
    if (!m) {
        c->oom = 1;
        return "";
    }
    for (size_t i = 0; i < n; i++) {
        const dra_doc *v = names[i] ? dra_doc_get(item, names[i]) : NULL;
        if (v && dra_doc_map_set(c->a, m, names[i], (dra_doc *)v))
            c->oom = 1;
    }
    return json_text(c, "k:", m);
}

static const char *field_el(actx *c, const char *name)
{
    char *s = dra_arena_sprintf(c->a, "f:%s", name);
    if (!s)
        c->oom = 1;
    return s ? s : "";
}

static void walk_value(actx *c, fnode *set, fpath *p, const dra_doc *v, api_oa_at ctx);

static void walk_member(actx *c, fnode *set, fpath *p, const char *name,
                        const dra_doc *v, api_oa_at ctx)
{
    api_oa_at sub;
    const api_openapi_field *f = api_openapi_step(ctx, name, &sub);
    if (p->n + 2 >= DRA_DOC_MAX_DEPTH || v->kind == DRA_DOC_NULL)
        return;
    p->el[p->n++] = field_el(c, name);
    switch (ownership(f, v, sub)) {
    case OWN_LISTMAP:
        for (size_t i = 0; i < v->u.list.n; i++) {
            p->el[p->n++] = key_el(c, f->keys, v->u.list.items[i]);
            fs_add(c, set, p);
            walk_value(c, set, p, v->u.list.items[i], sub);
            p->n--;
        }
        break;
    case OWN_SET:
        for (size_t i = 0; i < v->u.list.n; i++) {
            p->el[p->n++] = json_text(c, "v:", v->u.list.items[i]);
            fs_add(c, set, p);
            p->n--;
        }
        break;
    case OWN_GRANULAR:
        if (v->u.map.n == 0)
            fs_add(c, set, p);
        walk_value(c, set, p, v, sub);
        break;
    default:
        fs_add(c, set, p);
    }
    p->n--;
}

static void walk_value(actx *c, fnode *set, fpath *p, const dra_doc *v, api_oa_at ctx)
{
    if (!v || v->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < v->u.map.n; i++)
        walk_member(c, set, p, v->u.map.m[i].key, v->u.map.m[i].val, ctx);
}

/* The fields an object names, without those never tracked (type and
 * system metadata) and without the status of the main resource. */
static fnode *fieldset(actx *c, const dra_doc *obj, const api_openapi_type *t, int status_only)
{
    static const char *const strip[] = {"name", "namespace", "creationTimestamp", "selfLink",
                                        "uid", "clusterName", "generation", "managedFields",
                                        "resourceVersion"};
    fnode *set = fs_new(c, NULL);
    fpath p;
    api_oa_at ctx = {t, 0};
    if (!set || !obj || obj->kind != DRA_DOC_MAP)
        return set;
    p.n = 0;
    for (size_t i = 0; i < obj->u.map.n; i++) {
        const char *k = obj->u.map.m[i].key;
        if (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))
            continue;
        if (status_only != !strcmp(k, "status"))
            continue;
        if (!strcmp(k, "metadata")) {
            const dra_doc *md = obj->u.map.m[i].val;
            api_oa_at sub;
            api_openapi_step(ctx, "metadata", &sub);
            p.el[p.n++] = field_el(c, "metadata");
            for (size_t j = 0; md && md->kind == DRA_DOC_MAP && j < md->u.map.n; j++) {
                size_t s;
                for (s = 0; s < sizeof strip / sizeof strip[0]; s++)
                    if (!strcmp(strip[s], md->u.map.m[j].key))
                        break;
                if (s == sizeof strip / sizeof strip[0])
                    walk_member(c, set, &p, md->u.map.m[j].key, md->u.map.m[j].val, sub);
            }
            p.n--;
            continue;
        }
        walk_member(c, set, &p, k, obj->u.map.m[i].val, ctx);
    }
    return set;
}

/* ---- values at paths ---------------------------------------------------------- */

/* Does list item |item| carry the keys of element |el| (k:{...})? */
static int item_matches(actx *c, const dra_doc *item, const char *el)
{
    dra_doc *keys = NULL;
    if (dra_doc_parse_json(c->a, el + 2, strlen(el + 2), &keys, NULL) != DRA_OK ||
        keys->kind != DRA_DOC_MAP)
        return 0;
    if (item->kind != DRA_DOC_MAP)
        return 0;
    for (size_t i = 0; i < keys->u.map.n; i++) {
        const dra_doc *v = dra_doc_get(item, keys->u.map.m[i].key);
        if (!v || !dra_doc_equal(v, keys->u.map.m[i].val))
            return 0;
    }
    return 1;
}

static int value_matches(actx *c, const dra_doc *item, const char *el)
{
    dra_doc *v = NULL;
    return dra_doc_parse_json(c->a, el + 2, strlen(el + 2), &v, NULL) == DRA_OK &&
           dra_doc_equal(item, v);
}

/* Finds the node at |p| in |doc|; *parent and *index locate it. */
static dra_doc *doc_at(actx *c, dra_doc *doc, const fpath *p, dra_doc **parent, size_t *index)
{
    dra_doc *cur = doc;
    *parent = NULL;
    for (size_t i = 0; cur && i < p->n; i++) {
        const char *el = p->el[i];
        dra_doc *next = NULL;
        if (el[0] == 'f' && cur->kind == DRA_DOC_MAP) {
            for (size_t j = 0; j < cur->u.map.n && !next; j++)
                if (!strcmp(cur->u.map.m[j].key, el + 2)) {
                    next = cur->u.map.m[j].val;
                    *index = j;
                }
        } else if ((el[0] == 'k' || el[0] == 'v') && cur->kind == DRA_DOC_LIST) {
            for (size_t j = 0; j < cur->u.list.n && !next; j++)
                if (el[0] == 'k' ? item_matches(c, cur->u.list.items[j], el)
                                 : value_matches(c, cur->u.list.items[j], el)) {
                    next = cur->u.list.items[j];
                    *index = j;
                }
        }
        *parent = cur;
        cur = next;
    }
    return cur;
}

static void doc_remove(actx *c, dra_doc *doc, const fpath *p)
{
    dra_doc *parent;
    size_t index = 0;
    if (!doc_at(c, doc, p, &parent, &index) || !parent)
        return;
    if (parent->kind == DRA_DOC_MAP)
        api_patch_map_del(parent, parent->u.map.m[index].key);
    else if (parent->kind == DRA_DOC_LIST)
        api_patch_list_del(parent, index);
}

/* ---- the merge ------------------------------------------------------------------ */

static dra_err merge_apply(actx *c, dra_doc *live, dra_doc *cfg, api_oa_at ctx, dra_doc **out);

static int same_keys(const char *keys, const dra_doc *x, const dra_doc *y)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", keys);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const dra_doc *a = dra_doc_get(x, tok), *b = dra_doc_get(y, tok);
        if ((a == NULL) != (b == NULL) || (a && !dra_doc_equal(a, b)))
            return 0;
    }
    return 1;
}

static dra_err merge_list(actx *c, const api_openapi_field *f, dra_doc *live, dra_doc *cfg,
                          api_oa_at sub, dra_doc **out)
{
    dra_err err;
    for (size_t i = 0; i < cfg->u.list.n; i++) {
        dra_doc *item = cfg->u.list.items[i];
        size_t j;
        for (j = 0; j < live->u.list.n; j++)
            if (f->keys ? same_keys(f->keys, live->u.list.items[j], item)
                        : dra_doc_equal(live->u.list.items[j], item))
                break;
        if (j == live->u.list.n) {
            if ((err = dra_doc_list_push(c->a, live, item)))
                return err;
        } else if (f->keys) {
            dra_doc *m;
            if ((err = merge_apply(c, live->u.list.items[j], item, sub, &m)))
                return err;
            live->u.list.items[j] = m;
        }
    }
    *out = live;
    return DRA_OK;
}

static dra_err merge_apply(actx *c, dra_doc *live, dra_doc *cfg, api_oa_at ctx, dra_doc **out)
{
    dra_err err;
    if (!live || live->kind != DRA_DOC_MAP || cfg->kind != DRA_DOC_MAP) {
        *out = cfg;
        return DRA_OK;
    }
    for (size_t i = 0; i < cfg->u.map.n; i++) {
        const char *k = cfg->u.map.m[i].key;
        dra_doc *v = cfg->u.map.m[i].val, *lv = api_patch_map_get(live, k), *nv = v;
        api_oa_at sub;
        const api_openapi_field *f = api_openapi_step(ctx, k, &sub);
        if (v->kind == DRA_DOC_NULL) {
            api_patch_map_del(live, k);
            continue;
        }
        if (lv && lv->kind == v->kind) {
            int own = ownership(f, v, sub);
            if (own == OWN_LISTMAP || own == OWN_SET)
                err = merge_list(c, f, lv, v, sub, &nv);
            else if (own == OWN_GRANULAR)
                err = merge_apply(c, lv, v, sub, &nv);
            else
                err = DRA_OK;
            if (err)
                return err;
        }
        if ((err = dra_doc_map_set(c->a, live, k, nv)))
            return err;
    }
    *out = live;
    return DRA_OK;
}

/* ---- managed field entries ------------------------------------------------------- */

typedef struct mentry {
    const char *manager, *operation, *api_version, *time, *subresource;
    fnode *set;
} mentry;

typedef struct mlist {
    mentry *v;
    size_t n;
} mlist;

static const char *sget(const dra_doc *d, const char *k)
{
    const dra_doc *v = dra_doc_get(d, k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static int str_eq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

static void managed_read(actx *c, const dra_doc *obj, mlist *out)
{
    const dra_doc *mf = dra_doc_get(dra_doc_get(obj, "metadata"), "managedFields");
    size_t n = mf && mf->kind == DRA_DOC_LIST ? mf->u.list.n : 0;
    out->n = 0;
    out->v = dra_arena_array(c->a, n + 1, sizeof *out->v);
    if (!out->v) {
        c->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const dra_doc *e = mf->u.list.items[i];
        mentry *m = &out->v[out->n];
        /* entries upstream could not decode are dropped, not kept */
        if (!str_eq(sget(e, "fieldsType"), "FieldsV1") || !sget(e, "manager") ||
            (!str_eq(sget(e, "operation"), "Apply") && !str_eq(sget(e, "operation"), "Update")))
            continue;
        m->manager = sget(e, "manager");
        m->operation = sget(e, "operation");
        m->api_version = sget(e, "apiVersion");
        m->time = sget(e, "time");
        m->subresource = sget(e, "subresource");
        m->set = fs_new(c, NULL);
        if (m->set)
            fs_from_doc(c, m->set, dra_doc_get(e, "fieldsV1"), 0);
        out->n++;
    }
}

/* The entry of (manager, operation[, apiVersion for Update], subresource). */
static mentry *managed_find(mlist *l, const char *manager, const char *op, const char *apiv,
                            const char *sub)
{
    for (size_t i = 0; i < l->n; i++) {
        mentry *m = &l->v[i];
        if (str_eq(m->manager, manager) && str_eq(m->operation, op) && str_eq(m->subresource, sub) &&
            (!strcmp(op, "Apply") || str_eq(m->api_version, apiv)))
            return m;
    }
    return NULL;
}

static int entry_cmp(const void *x, const void *y)
{
    const mentry *p = x, *q = y;
    /* times are RFC 3339 in UTC as the server writes them: their text
     * orders like the instants */
    int r = strcmp(p->operation ? p->operation : "", q->operation ? q->operation : "");
    if (r)
        return r;
    if ((r = strcmp(p->time ? p->time : "", q->time ? q->time : "")))
        return r;
    if ((r = strcmp(p->manager ? p->manager : "", q->manager ? q->manager : "")))
        return r;
    if ((r = strcmp(p->api_version ? p->api_version : "", q->api_version ? q->api_version : "")))
        return r;
    return strcmp(p->subresource ? p->subresource : "", q->subresource ? q->subresource : "");
}

static dra_doc *dstr(actx *c, const char *s)
{
    dra_doc *d = dra_doc_new_string(c->a, s, strlen(s));
    if (!d)
        c->oom = 1;
    return d;
}

/* Writes |l| (sorted like upstream, empty sets dropped) into |obj|. */
static dra_err managed_write(actx *c, dra_doc *obj, mlist *l)
{
    dra_doc *md = api_patch_map_get(obj, "metadata"), *list;
    dra_err err;
    if (!md || md->kind != DRA_DOC_MAP) {
        if (!(md = dra_doc_new_map(c->a, 2)) || (err = dra_doc_map_set(c->a, obj, "metadata", md)))
            return DRA_ENOMEM;
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, entry_cmp);
    if (!(list = dra_doc_new_list(c->a, l->n ? l->n : 1)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        mentry *m = &l->v[i];
        dra_doc *fv = fs_to_doc(c, m->set), *e;
        if (!fv)
            continue;
        if (!(e = dra_doc_new_map(c->a, 7)))
            return DRA_ENOMEM;
        dra_doc_map_set(c->a, e, "manager", dstr(c, m->manager));
        dra_doc_map_set(c->a, e, "operation", dstr(c, m->operation));
        if (m->api_version)
            dra_doc_map_set(c->a, e, "apiVersion", dstr(c, m->api_version));
        if (m->time)
            dra_doc_map_set(c->a, e, "time", dstr(c, m->time));
        dra_doc_map_set(c->a, e, "fieldsType", dstr(c, "FieldsV1"));
        dra_doc_map_set(c->a, e, "fieldsV1", fv);
        if (m->subresource && *m->subresource)
            dra_doc_map_set(c->a, e, "subresource", dstr(c, m->subresource));
        if (dra_doc_list_push(c->a, list, e))
            return DRA_ENOMEM;
    }
    if (c->oom)
        return DRA_ENOMEM;
    if (list->u.list.n == 0) {
        api_patch_map_del(md, "managedFields");
        return DRA_OK;
    }
    return dra_doc_map_set(c->a, md, "managedFields", list);
}

/* ---- conflicts ---------------------------------------------------------------- */

/* fieldpath.Path.String(): .field, [key="v",...], [="v"]. */
static void path_str(dra_buf *b, actx *c, const fpath *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const char *el = p->el[i];
        if (el[0] == 'f') {
            dra_buf_printf(b, ".%s", el + 2);
        } else if (el[0] == 'k') {
            dra_doc *keys = NULL;
            dra_buf_putc(b, '[');
            if (dra_doc_parse_json(c->a, el + 2, strlen(el + 2), &keys, NULL) == DRA_OK &&
                keys->kind == DRA_DOC_MAP) {
                for (size_t j = 0; j < keys->u.map.n; j++) {
                    dra_buf_printf(b, "%s%s=", j ? "," : "", keys->u.map.m[j].key);
                    dra_doc_to_json(keys->u.map.m[j].val, 0, b);
                    if (b->len && b->p[b->len - 1] == '\n')
                        b->p[--b->len] = '\0';
                }
            }
            dra_buf_putc(b, ']');
        } else if (el[0] == 'v') {
            dra_buf_printf(b, "[=%s]", el + 2);
        } else {
            dra_buf_printf(b, "[%s]", el + 2);
        }
    }
}

/* printManager */
static void manager_str(dra_buf *b, const mentry *m)
{
    dra_buf_printf(b, "\"%s\"", m->manager);
    if (m->subresource && *m->subresource)
        dra_buf_printf(b, " with subresource \"%s\"", m->subresource);
    if (str_eq(m->operation, "Update"))
        dra_buf_printf(b, " using %s", m->api_version ? m->api_version : "");
}

typedef struct conflict {
    mentry *who;
    fpath path;
} conflict;

typedef struct cscan {
    actx *c;
    dra_doc *live, *applied;
    mentry *other;
    conflict *v;
    size_t n, cap;
} cscan;

static void scan_path(void *ud, const fpath *p)
{
    cscan *s = ud;
    dra_doc *parent, *vl, *va;
    size_t idx;
    const char *last = p->el[p->n - 1];
    if (!fs_has(s->other->set, p) || last[0] == 'k')
        return;
    va = doc_at(s->c, s->applied, p, &parent, &idx);
    vl = doc_at(s->c, s->live, p, &parent, &idx);
    if (vl && va && (last[0] == 'v' || dra_doc_equal(vl, va)))
        return;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 8;
        conflict *nv = dra_arena_array(s->c->a, ncap, sizeof *nv);
        if (!nv) {
            s->c->oom = 1;
            return;
        }
        if (s->n)
            memcpy(nv, s->v, s->n * sizeof *nv);
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n].who = s->other;
    s->v[s->n].path = *p;
    s->n++;
}

static dra_err report_conflicts(actx *c, cscan *s, dra_kstatus *st, dra_diag *causes)
{
    dra_buf msg, one;
    dra_buf_init(&msg, NULL);
    dra_buf_init(&one, NULL);
    if (s->n == 1) {
        dra_buf_puts(&msg, "Apply failed with 1 conflict: conflict with ");
        manager_str(&msg, s->v[0].who);
        dra_buf_puts(&msg, ": ");
        path_str(&msg, c, &s->v[0].path);
    } else {
        dra_buf_printf(&msg, "Apply failed with %zu conflicts: ", s->n);
        /* grouped by manager, managers in name order */
        const char *prev = NULL;
        for (;;) {
            const conflict *next = NULL;
            for (size_t i = 0; i < s->n; i++)
                if ((!prev || strcmp(s->v[i].who->manager, prev) > 0) &&
                    (!next || strcmp(s->v[i].who->manager, next->who->manager) < 0))
                    next = &s->v[i];
            if (!next)
                break;
            dra_buf_puts(&msg, prev ? "\nconflicts with " : "conflicts with ");
            manager_str(&msg, next->who);
            dra_buf_putc(&msg, ':');
            for (size_t i = 0; i < s->n; i++) {
                if (strcmp(s->v[i].who->manager, next->who->manager))
                    continue;
                dra_buf_puts(&msg, "\n- ");
                path_str(&msg, c, &s->v[i].path);
            }
            prev = next->who->manager;
        }
    }
    for (size_t i = 0; i < s->n && causes; i++) {
        dra_buf_reset(&one);
        path_str(&one, c, &s->v[i].path);
        dra_buf msgc;
        dra_buf_init(&msgc, NULL);
        dra_buf_puts(&msgc, "conflict with ");
        manager_str(&msgc, s->v[i].who);
        dra_diag_add(causes, one.p ? one.p : "", 0, 0, "%s", msgc.p ? msgc.p : "");
        dra_buf_fini(&msgc);
    }
    dra_err err = msg.oom ? DRA_ENOMEM : DRA_ECONFLICT;
    if (err == DRA_ECONFLICT)
        dra_kstatus_set(st, 409, "Conflict", "%s", msg.p);
    dra_buf_fini(&msg);
    dra_buf_fini(&one);
    return err;
}

/* ---- keeping entries consistent ------------------------------------------------ */

typedef struct prune {
    actx *c;
    fnode *keep; /* fields the object still has */
    fnode *set;
} prune;

static void prune_path(void *ud, const fpath *p)
{
    prune *q = ud;
    if (!fs_has(q->keep, p))
        fs_del(q->set, p);
}

/* Drops from every entry the fields |obj| no longer has. */
static void prune_entries(actx *c, mlist *l, const dra_doc *obj, const api_openapi_type *t)
{
    fnode *spec = fieldset(c, obj, t, 0), *status = fieldset(c, obj, t, 1);
    if (!spec || !status)
        return;
    for (size_t i = 0; i < l->n; i++) {
        prune q = {c, str_eq(l->v[i].subresource, "status") ? status : spec, l->v[i].set};
        fs_each(l->v[i].set, prune_path, &q);
    }
}

/* The end of every write: entries pruned to what |obj| still has, the
 * list written back into |obj|, which becomes *out. */
static dra_err finish(actx *c, mlist *l, dra_doc *obj, const api_openapi_type *t,
                      dra_doc **out)
{
    dra_err err;
    prune_entries(c, l, obj, t);
    if (c->oom)
        return DRA_ENOMEM;
    if ((err = managed_write(c, obj, l)))
        return err;
    *out = obj;
    return DRA_OK;
}

static mentry *entry_for(actx *c, mlist *l, const char *manager, const char *op,
                         const api_apply_opts *o, const char *sub)
{
    mentry *m = managed_find(l, manager, op, o->api_version, sub);
    if (m)
        return m;
    m = &l->v[l->n++];
    memset(m, 0, sizeof *m);
    m->manager = manager;
    m->operation = op;
    m->api_version = o->api_version;
    m->subresource = sub;
    m->set = fs_new(c, NULL);
    return m;
}

/* ---- apply ---------------------------------------------------------------------- */

/* Fields of |aset| other managers own with another value: 409 unless
 * |force|, when the others lose them. */
static dra_err check_conflicts(actx *c, dra_doc *cur, dra_doc *cfg, fnode *aset, mlist *l,
                               mentry *self, int force, dra_kstatus *st, dra_diag *causes)
{
    cscan s = {c, cur, cfg, NULL, NULL, 0, 0};
    for (size_t i = 0; i < l->n; i++) {
        if (&l->v[i] == self)
            continue;
        s.other = &l->v[i];
        fs_each(aset, scan_path, &s);
    }
    if (c->oom)
        return DRA_ENOMEM;
    if (s.n && !force)
        return report_conflicts(c, &s, st, causes);
    for (size_t i = 0; i < s.n; i++)
        fs_del(s.v[i].who->set, &s.v[i].path);
    return DRA_OK;
}

typedef struct rmscan {
    actx *c;
    fnode *applied;
    mlist *l;
    mentry *self;
    dra_doc *result;
} rmscan;

/* Another entry owns |p| or something below it. */
static int owned_by_other(rmscan *r, const fpath *p)
{
    for (size_t i = 0; i < r->l->n; i++) {
        const fnode *f = r->l->v[i].set;
        if (&r->l->v[i] == r->self)
            continue;
        for (size_t k = 0; f && k < p->n; k++)
            f = fs_child(NULL, (fnode *)f, p->el[k], 0);
        if (f && !fs_empty(f))
            return 1;
    }
    return 0;
}

static void remove_path(void *ud, const fpath *p)
{
    rmscan *r = ud;
    if (!fs_has(r->applied, p) && !owned_by_other(r, p))
        doc_remove(r->c, r->result, p);
}

static void drop_path(void *ud, const fpath *p)
{
    fs_del(ud, p);
}

dra_err api_patch_apply(dra_arena *a, const api_openapi_type *type, const dra_doc *live,
                        const dra_doc *applied, const api_apply_opts *opts, dra_doc **out,
                        dra_kstatus *st, dra_diag *causes)
{
    actx c = {a, 0};
    mlist l = {0};
    dra_doc *cfg, *cur, *result;
    dra_err err;
    api_oa_at ctx = {type, 0};
    const char *sub = opts && opts->subresource ? opts->subresource : "";
    int status_only = !strcmp(sub, "status");
    *out = NULL;
    if (!opts || !opts->manager || !*opts->manager) {
        dra_kstatus_set(st, 422, "Invalid",
                         "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
                         "is required for apply patch");
        return DRA_EINVALID;
    }
    if (!applied || applied->kind != DRA_DOC_MAP) {
        dra_kstatus_set(st, 400, "BadRequest",
                         "error decoding YAML: error unmarshaling JSON: while decoding JSON: "
                         "json: cannot unmarshal %s into Go value of type map[string]interface {}",
                         applied && applied->kind == DRA_DOC_LIST ? "array" : "string");
        return DRA_EINVAL;
    }
    if (!(cfg = api_patch_copy(a, applied)))
        return DRA_ENOMEM;
    api_patch_map_del(api_patch_map_get(cfg, "metadata"), "managedFields");
    cur = live ? api_patch_copy(a, live) : NULL;
    if (live && !cur)
        return DRA_ENOMEM;
    if (cur)
        managed_read(&c, cur, &l); /* leaves room for one more entry */
    else
        l.v = dra_arena_array(a, 1, sizeof *l.v);
    if (!l.v)
        return DRA_ENOMEM;
    fnode *aset = fieldset(&c, cfg, type, status_only);
    if (c.oom || !aset)
        return DRA_ENOMEM;
    mentry *self = managed_find(&l, opts->manager, "Apply", NULL, sub);
    if (cur && (err = check_conflicts(&c, cur, cfg, aset, &l, self, opts->force, st, causes)))
        return err;
    if (cur) {
        if ((err = merge_apply(&c, cur, cfg, ctx, &result)))
            return err;
    } else {
        result = cfg;
    }
    if (self) {
        rmscan r = {&c, aset, &l, self, result};
        fs_each(self->set, remove_path, &r);
    }
    self = entry_for(&c, &l, opts->manager, "Apply", opts, sub);
    if (!self || !self->set)
        return DRA_ENOMEM;
    self->set = aset;
    self->time = opts->now;
    self->api_version = opts->api_version;
    return finish(&c, &l, result, type, out);
}

/* ---- non-apply writes --------------------------------------------------------------- */

typedef struct addscan {
    actx *c;
    fnode *to;
} addscan;

static void add_path(void *ud, const fpath *p)
{
    addscan *s = ud;
    fs_add(s->c, s->to, p);
}

typedef struct chcmp {
    actx *c;
    dra_doc *old, *new_;
    fnode *changed;
} chcmp;

static void changed_leaf(void *ud, const fpath *p)
{
    chcmp *s = ud;
    dra_doc *parent, *vo = NULL, *vn;
    size_t idx;
    const char *last = p->el[p->n - 1];
    if (s->old)
        vo = doc_at(s->c, s->old, p, &parent, &idx);
    if (vo && (last[0] == 'k' || last[0] == 'v'))
        return;
    vn = doc_at(s->c, s->new_, p, &parent, &idx);
    if (vo && vn && dra_doc_equal(vo, vn))
        return;
    fs_add(s->c, s->changed, p);
}

dra_err api_patch_managed_update(dra_arena *a, const api_openapi_type *type, const dra_doc *old,
                                 const dra_doc *new_obj, const api_apply_opts *opts,
                                 dra_doc **out)
{
    actx c = {a, 0};
    mlist l = {0};
    dra_doc *cur, *prev = NULL;
    const char *sub = opts && opts->subresource ? opts->subresource : "";
    *out = NULL;
    if (!opts || !opts->manager || !new_obj || new_obj->kind != DRA_DOC_MAP)
        return DRA_EINVAL;
    if (!(cur = api_patch_copy(a, new_obj)))
        return DRA_ENOMEM;
    if (old && !(prev = api_patch_copy(a, old)))
        return DRA_ENOMEM;
    if (prev)
        managed_read(&c, prev, &l); /* leaves room for one more entry */
    else
        l.v = dra_arena_array(a, 1, sizeof *l.v);
    if (!l.v)
        return DRA_ENOMEM;
    fnode *nset = fieldset(&c, cur, type, !strcmp(sub, "status"));
    fnode *changed = fs_new(&c, NULL);
    if (c.oom || !nset || !changed)
        return DRA_ENOMEM;
    chcmp s = {&c, prev, cur, changed};
    fs_each(nset, changed_leaf, &s);
    if (!fs_empty(changed)) {
        mentry *self = entry_for(&c, &l, opts->manager, "Update", opts, sub);
        if (!self || !self->set)
            return DRA_ENOMEM;
        for (size_t i = 0; i < l.n; i++)
            if (&l.v[i] != self)
                fs_each(changed, drop_path, l.v[i].set);
        /* union: add the changed fields to the manager's set */
        addscan u = {&c, self->set};
        fs_each(changed, add_path, &u);
        self->time = opts->now;
        self->api_version = opts->api_version;
    }
    return finish(&c, &l, cur, type, out);
}
