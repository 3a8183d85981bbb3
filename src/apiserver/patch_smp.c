/*
 * patch_smp.c: strategic merge patch as kube-apiserver applies it
 * (apimachinery's StrategicMergeMapPatch with parallel deletion lists
 * merged and unmatched nulls ignored), driven by the patch metadata in
 * the schema tables (openapi.h): which lists merge, by which key, which
 * use retainKeys. Works on copies of the inputs, edited in place.
 */
#include <string.h>

#include "patch_int.h"

#define DIRECTIVE "$patch"
#define RETAIN_KEYS "$retainKeys"
#define DELETE_PREFIX "$deleteFromPrimitiveList"
#define ORDER_PREFIX "$setElementOrder"

typedef struct smp {
    dra_arena *a;
    dra_kstatus *st;
} smp;

/* Errors: upstream's sentinel errors map to 400 or 422; anything else it
 * returns untyped, which kube-apiserver answers with 500 and no reason. */
static dra_err bad_request(smp *s, const char *msg)
{
    dra_kstatus_set(s->st, 400, "BadRequest", "%s", msg);
    return DRA_EINVAL;
}

static dra_err unprocessable(smp *s)
{
    dra_kstatus_set(s->st, 422, "Invalid",
                     "the server rejected our request due to an error in our request");
    return DRA_EINVALID;
}

static dra_err untyped(smp *s, dra_buf *msg)
{
    dra_err err = msg->oom ? DRA_ENOMEM : DRA_EIO;
    if (err == DRA_EIO)
        dra_kstatus_set(s->st, 500, "", "%s", msg->p ? msg->p : "");
    dra_buf_fini(msg);
    return err;
}

/* Go's reflect.TypeOf(x).String() of an unstructured value. */
static const char *go_type(const dra_doc *d)
{
    if (!d || d->kind == DRA_DOC_NULL)
        return "<nil>";
    switch (d->kind) {
    case DRA_DOC_MAP: return "map[string]interface {}";
    case DRA_DOC_LIST: return "[]interface {}";
    case DRA_DOC_STRING: return "string";
    case DRA_DOC_INT: return "int64";
    case DRA_DOC_FLOAT: return "float64";
    case DRA_DOC_BOOL: return "bool";
    default: return "<nil>";
    }
}

static dra_err err_no_merge_key(smp *s, const dra_doc *m, const char *key)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, "map: ");
    api_patch_go_fmt(&b, m);
    dra_buf_printf(&b, " does not contain declared merge key: %s", key);
    return untyped(s, &b);
}

static dra_err err_bad_arg_type(smp *s, const char *expected, const dra_doc *actual)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "expected a %s, but received a %s", expected, go_type(actual));
    return untyped(s, &b);
}

/* ---- scalar comparison (Go's == on interface values) ------------------------- */

static int scalar_eq(const dra_doc *x, const dra_doc *y)
{
    if (!x || !y)
        return x == y;
    if (x->kind != y->kind)
        return 0;
    switch (x->kind) {
    case DRA_DOC_NULL: return 1;
    case DRA_DOC_BOOL: return x->u.b == y->u.b;
    case DRA_DOC_INT: return x->u.i == y->u.i;
    case DRA_DOC_FLOAT: return x->u.f.f == y->u.f.f;
    case DRA_DOC_STRING:
        return x->u.str.len == y->u.str.len && !memcmp(x->u.str.s, y->u.str.s, x->u.str.len);
    default: return 0; /* maps and lists are not comparable */
    }
}

static int has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

/* ---- directives ------------------------------------------------------------- */

/* removeDirectives: drops maps carrying $patch (and, beyond upstream,
 * the other directive keys, which the typed decoding would drop anyway);
 * returns 0 when |d| itself is to be dropped. */
static int remove_directives(dra_doc *d)
{
    if (!d)
        return 1;
    if (d->kind == DRA_DOC_MAP) {
        if (dra_doc_get(d, DIRECTIVE))
            return 0;
        for (size_t i = 0; i < d->u.map.n;) {
            const char *k = d->u.map.m[i].key;
            if (!strcmp(k, RETAIN_KEYS) || has_prefix(k, ORDER_PREFIX "/") ||
                has_prefix(k, DELETE_PREFIX "/") || !remove_directives(d->u.map.m[i].val)) {
                api_patch_map_del(d, k);
                continue;
            }
            i++;
        }
    } else if (d->kind == DRA_DOC_LIST) {
        for (size_t i = 0; i < d->u.list.n;) {
            if (!remove_directives(d->u.list.items[i])) {
                api_patch_list_del(d, i);
                continue;
            }
            i++;
        }
    }
    return 1;
}

/* The part of "$prefix/key" after the slash, or NULL when malformed. */
static const char *extract_key(const char *k, const char *prefix)
{
    size_t n = strlen(prefix);
    const char *slash = strchr(k, '/');
    if (!slash || (size_t)(slash - k) != n || strncmp(k, prefix, n))
        return NULL;
    return slash + 1;
}

static dra_err apply_retain_keys(smp *s, dra_doc *orig, dra_doc *patch)
{
    dra_doc *keys = api_patch_map_get(patch, RETAIN_KEYS);
    if (!keys)
        return DRA_OK;
    api_patch_map_del(patch, RETAIN_KEYS);
    if (keys->kind != DRA_DOC_LIST)
        return bad_request(s, "invalid patch format of retainKeys");
    for (size_t i = 0; i < patch->u.map.n; i++) {
        const char *k = patch->u.map.m[i].key;
        int found = 0;
        if (patch->u.map.m[i].val->kind == DRA_DOC_NULL || has_prefix(k, DELETE_PREFIX) ||
            has_prefix(k, ORDER_PREFIX))
            continue;
        for (size_t j = 0; j < keys->u.list.n && !found; j++)
            found = keys->u.list.items[j]->kind == DRA_DOC_STRING &&
                    !strcmp(keys->u.list.items[j]->u.str.s, k);
        if (!found)
            return bad_request(s, "invalid patch format of retainKeys");
    }
    for (size_t i = 0; i < orig->u.map.n;) {
        int found = 0;
        for (size_t j = 0; j < keys->u.list.n && !found; j++)
            found = keys->u.list.items[j]->kind == DRA_DOC_STRING &&
                    !strcmp(keys->u.list.items[j]->u.str.s, orig->u.map.m[i].key);
        if (!found) {
            api_patch_map_del(orig, orig->u.map.m[i].key);
            continue;
        }
        i++;
    }
    return DRA_OK;
}

/* ---- list helpers ----------------------------------------------------------- */

typedef struct vec {
    dra_doc **v;
    size_t n, cap;
} vec;

static dra_err vec_push(dra_arena *a, vec *x, dra_doc *d)
{
    if (x->n == x->cap) {
        size_t ncap = x->cap ? x->cap * 2 : 8;
        dra_doc **nv = dra_arena_array(a, ncap, sizeof *nv);
        if (!nv)
            return DRA_ENOMEM;
        if (x->n)
            memcpy(nv, x->v, x->n * sizeof *nv);
        x->v = nv;
        x->cap = ncap;
    }
    x->v[x->n++] = d;
    return DRA_OK;
}

static dra_doc *list_from(dra_arena *a, const vec *x)
{
    dra_doc *l = dra_doc_new_list(a, x->n ? x->n : 1);
    for (size_t i = 0; l && i < x->n; i++)
        if (dra_doc_list_push(a, l, x->v[i]) != DRA_OK)
            return NULL;
    return l;
}

static void vec_of(const dra_doc *l, vec *x)
{
    x->v = l && l->kind == DRA_DOC_LIST ? l->u.list.items : NULL;
    x->n = x->cap = l && l->kind == DRA_DOC_LIST ? l->u.list.n : 0;
}

/* The element "type" of the lists (sliceElementType): DRA_DOC_* of the
 * elements, -1 with an error set when they differ or are lists. */
static int element_kind(smp *s, const vec *x, const vec *y, dra_err *err)
{
    int kind = -2;
    const vec *ls[2] = {x, y};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < ls[k]->n; i++) {
            int c = ls[k]->v[i]->kind == DRA_DOC_FLOAT ? DRA_DOC_FLOAT : (int)ls[k]->v[i]->kind;
            if (kind == -2) {
                kind = c;
                if (c == DRA_DOC_LIST) {
                    *err = unprocessable(s);
                    return -1;
                }
            } else if (kind != c) {
                dra_buf b;
                dra_buf_init(&b, NULL);
                dra_buf_puts(&b, "list element types are not identical: [");
                for (int j = 0; j < 2; j++) {
                    dra_buf_puts(&b, j ? " [" : "[");
                    for (size_t m = 0; m < ls[j]->n; m++) {
                        if (m)
                            dra_buf_putc(&b, ' ');
                        api_patch_go_fmt(&b, ls[j]->v[m]);
                    }
                    dra_buf_putc(&b, ']');
                }
                dra_buf_putc(&b, ']');
                *err = untyped(s, &b);
                return -1;
            }
        }
    }
    if (kind == -2) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_buf_puts(&b, "no elements in any of the given slices");
        *err = untyped(s, &b);
        return -1;
    }
    return kind;
}

/* The merge key value of item |d| (a map), NULL when absent. */
static const dra_doc *key_of(const dra_doc *d, const char *mk)
{
    return d && d->kind == DRA_DOC_MAP ? dra_doc_get(d, mk) : NULL;
}

/* index(): position of |v| in |l| by merge key (maps) or value. */
static long find(const vec *l, const dra_doc *v, const char *mk, int maps)
{
    for (size_t i = 0; i < l->n; i++) {
        if (maps ? scalar_eq(key_of(v, mk), key_of(l->v[i], mk)) &&
                       (key_of(v, mk) || !key_of(l->v[i], mk))
                 : scalar_eq(v, l->v[i]))
            return (long)i;
    }
    return -1;
}

static dra_err check_keys(smp *s, const vec *l, const char *mk)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i]->kind != DRA_DOC_MAP)
            return err_bad_arg_type(s, "map[string]interface {}", l->v[i]);
        if (!dra_doc_get(l->v[i], mk))
            return err_no_merge_key(s, l->v[i], mk);
    }
    return DRA_OK;
}

static int is_delete_item(const dra_doc *d)
{
    const dra_doc *p = dra_doc_get(d, DIRECTIVE);
    return p && p->kind == DRA_DOC_STRING && !strcmp(p->u.str.s, "delete");
}

/* Stable insertion sort of |x| by position in |order|: an item moves
 * before its neighbour only when both are in |order| and it comes first
 * there. */
static void insertion_sort(vec *x, const vec *order, const char *mk, int maps)
{
    for (size_t i = 1; i < x->n; i++) {
        dra_doc *v = x->v[i];
        long iv = find(order, v, mk, maps);
        size_t j = i;
        while (j > 0) {
            long ip = find(order, x->v[j - 1], mk, maps);
            if (!(iv >= 0 && ip >= 0 && iv < ip))
                break;
            x->v[j] = x->v[j - 1];
            j--;
        }
        x->v[j] = v;
    }
}

/* normalizeSliceOrder: stable sort of |x| by position in |order|;
 * maps marked $patch: delete go last. */
static dra_err sort_by(smp *s, vec *x, const vec *order, const char *mk, int maps)
{
    dra_err err;
    if (maps) {
        if ((err = check_keys(s, x, mk)) || (err = check_keys(s, order, mk)))
            return err;
        size_t k = 0;
        vec del = {0};
        for (size_t i = 0; i < x->n; i++) {
            if (is_delete_item(x->v[i])) {
                if (vec_push(s->a, &del, x->v[i]))
                    return DRA_ENOMEM;
            } else {
                x->v[k++] = x->v[i];
            }
        }
        x->n = k;
        insertion_sort(x, order, mk, 1);
        for (size_t i = 0; i < del.n; i++)
            if (vec_push(s->a, x, del.v[i]))
                return DRA_ENOMEM;
        return DRA_OK;
    }
    insertion_sort(x, order, mk, 0);
    return DRA_OK;
}

/* normalizeElementOrder + mergeSortedSlice: patch items in |porder|,
 * server-only items in |sorder|, interleaved by their place in |sorder|. */
static dra_err normalize(smp *s, vec *pitems, vec *sonly, const vec *porder, const vec *sorder,
                         const char *mk, int maps, dra_doc **out)
{
    dra_err err;
    vec res = {0};
    size_t i = 0, j = 0;
    if ((err = sort_by(s, pitems, porder, mk, maps)) || (err = sort_by(s, sonly, sorder, mk, maps)))
        return err;
    while (i < sonly->n || j < pitems->n) {
        dra_doc *pick;
        if (i >= sonly->n) {
            pick = pitems->v[j++];
        } else if (j >= pitems->n) {
            pick = sonly->v[i++];
        } else {
            long li = find(sorder, sonly->v[i], mk, maps), ri = find(sorder, pitems->v[j], mk, maps);
            pick = li >= 0 && ri >= 0 && li < ri ? sonly->v[i++] : pitems->v[j++];
        }
        if (vec_push(s->a, &res, pick))
            return DRA_ENOMEM;
    }
    *out = list_from(s->a, &res);
    return *out ? DRA_OK : DRA_ENOMEM;
}

/* Splits |merged| into items present in |by| and the rest. */
static dra_err partition(smp *s, const vec *merged, const vec *by, const char *mk, int maps,
                         vec *pitems, vec *sonly)
{
    for (size_t i = 0; i < merged->n; i++) {
        dra_doc *v = merged->v[i];
        if (maps) {
            if (v->kind != DRA_DOC_MAP)
                return err_bad_arg_type(s, "map[string]interface {}", v);
            if (!dra_doc_get(v, mk))
                return err_no_merge_key(s, v, mk);
        }
        if (vec_push(s->a, find(by, v, mk, maps) >= 0 ? pitems : sonly, v))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err merge_map(smp *s, dra_doc *orig, dra_doc *patch, api_oa_at ctx, dra_doc **out);

/* mergeSlice */
/* A list of scalars: a union (or, for a $deleteFromPrimitiveList list,
 * a difference), ordered like upstream's. */
static dra_err merge_scalars(smp *s, const vec *o, const vec *p, int delete_list, dra_doc **out)
{
    vec merged = {0}, pitems = {0}, sonly = {0};
    dra_err err;
    for (size_t i = 0; i < o->n; i++) {
        int skip = delete_list ? find(p, o->v[i], NULL, 0) >= 0 : find(&merged, o->v[i], NULL, 0) >= 0;
        if (!skip && vec_push(s->a, &merged, o->v[i]))
            return DRA_ENOMEM;
    }
    if (delete_list) {
        *out = list_from(s->a, &merged);
        return *out ? DRA_OK : DRA_ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++)
        if (find(&merged, p->v[i], NULL, 0) < 0 && vec_push(s->a, &merged, p->v[i]))
            return DRA_ENOMEM;
    if ((err = partition(s, &merged, p, NULL, 0, &pitems, &sonly)))
        return err;
    return normalize(s, &pitems, &sonly, p, o, NULL, 0, out);
}

static dra_err not_a_map(smp *s, size_t j)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "value for key %zu is not a map", j);
    return untyped(s, &b);
}

/* mergeSliceWithSpecialElements: applies the $patch items of |p| to
 * |live| and leaves the other items in |plain|. */
static dra_err special_items(smp *s, const vec *p, const char *mk, vec *live, vec *plain)
{
    int replace = 0;
    for (size_t i = 0; i < p->n; i++) {
        dra_doc *v = p->v[i];
        const dra_doc *d = dra_doc_get(v, DIRECTIVE);
        const char *ds = d && d->kind == DRA_DOC_STRING ? d->u.str.s : "";
        if (!d) {
            if (vec_push(s->a, plain, v))
                return DRA_ENOMEM;
        } else if (!strcmp(ds, "delete")) {
            const dra_doc *kv = dra_doc_get(v, mk);
            if (!kv)
                return err_no_merge_key(s, v, mk);
            for (size_t j = 0; j < live->n;) {
                if (live->v[j]->kind != DRA_DOC_MAP)
                    return not_a_map(s, j);
                if (!scalar_eq(dra_doc_get(live->v[j], mk), kv)) {
                    j++;
                    continue;
                }
                memmove(live->v + j, live->v + j + 1, (live->n - j - 1) * sizeof *live->v);
                live->n--;
            }
        } else if (!strcmp(ds, "replace")) {
            replace = 1;
        } else {
            dra_buf b;
            dra_buf_init(&b, NULL);
            if (!strcmp(ds, "merge")) {
                dra_buf_puts(&b, "merging lists cannot yet be specified in the patch");
            } else {
                dra_buf_puts(&b, "unknown patch type: ");
                api_patch_go_fmt(&b, d);
                dra_buf_puts(&b, " in map: ");
                api_patch_go_fmt(&b, v);
            }
            return untyped(s, &b);
        }
    }
    if (replace) { /* the patch's plain items become the list */
        *live = *plain;
        plain->n = 0;
    }
    return DRA_OK;
}

/* mergeSliceWithoutSpecialElements: merges |plain| into |live| by merge
 * key (matching items merged, new ones appended) into |merged|;
 * |live| keeps the merged maps in their places for ordering. */
static dra_err merge_plain(smp *s, vec *live, const vec *plain, api_oa_at ctx,
                           const char *mk, vec *merged)
{
    dra_err err;
    for (size_t i = 0; i < live->n; i++)
        if (vec_push(s->a, merged, live->v[i]))
            return DRA_ENOMEM;
    for (size_t i = 0; i < plain->n; i++) {
        dra_doc *v = plain->v[i], *m;
        const dra_doc *kv = dra_doc_get(v, mk);
        long at = -1;
        if (!kv)
            return err_no_merge_key(s, v, mk);
        for (size_t j = 0; j < merged->n && at < 0; j++) {
            if (merged->v[j]->kind != DRA_DOC_MAP)
                return not_a_map(s, j);
            if (scalar_eq(dra_doc_get(merged->v[j], mk), kv))
                at = (long)j;
        }
        if (at < 0) {
            if (vec_push(s->a, merged, v))
                return DRA_ENOMEM;
            continue;
        }
        if ((err = merge_map(s, merged->v[at], v, ctx, &m)))
            return err;
        merged->v[at] = m;
        if ((size_t)at < live->n)
            live->v[at] = m;
    }
    return DRA_OK;
}

/* mergeSlice */
static dra_err merge_slice(smp *s, dra_doc *orig, dra_doc *patch, api_oa_at ctx, const char *mk,
                           int delete_list, dra_doc **out)
{
    vec o, p, live = {0}, plain = {0}, merged = {0}, pitems = {0}, sonly = {0};
    dra_err err = DRA_OK;
    vec_of(orig, &o);
    vec_of(patch, &p);
    if (o.n == 0 && p.n == 0) {
        *out = orig;
        return DRA_OK;
    }
    int kind = element_kind(s, &o, &p, &err);
    if (kind < 0)
        return err;
    if (kind != DRA_DOC_MAP)
        return merge_scalars(s, &o, &p, delete_list, out);
    if (!mk) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_buf_printf(&b, "cannot merge lists without merge key for %s", ctx.t ? ctx.t->name : "");
        return untyped(s, &b);
    }
    for (size_t i = 0; i < o.n; i++)
        if (vec_push(s->a, &live, o.v[i]))
            return DRA_ENOMEM;
    if ((err = special_items(s, &p, mk, &live, &plain)) ||
        (err = merge_plain(s, &live, &plain, ctx, mk, &merged)) ||
        (err = partition(s, &merged, &plain, mk, 1, &pitems, &sonly)))
        return err;
    return normalize(s, &pitems, &sonly, &plain, &live, mk, 1, out);
}

/* validatePatchWithSetOrderList: the patch list's items (deletions and
 * directives aside) must appear in the $setElementOrder list, in order. */
static dra_err check_order(smp *s, const vec *patch, const vec *set, const char *mk)
{
    size_t pi = 0, si = 0;
    vec nd = {0};
    if (set->n == 0 || patch->n == 0)
        return DRA_OK;
    for (size_t i = 0; i < patch->n; i++) {
        if (mk && patch->v[i]->kind != DRA_DOC_MAP)
            return err_bad_arg_type(s, "map[string]interface {}", patch->v[i]);
        if (mk && is_delete_item(patch->v[i]))
            continue;
        if (vec_push(s->a, &nd, patch->v[i]))
            return DRA_ENOMEM;
    }
    while (pi < nd.n && si < set->n) {
        const dra_doc *l = nd.v[pi], *r = set->v[si];
        int eq;
        if (l->kind == DRA_DOC_MAP && dra_doc_get(l, DIRECTIVE)) {
            pi++;
            continue;
        }
        if (!mk) {
            eq = scalar_eq(l, r);
        } else {
            if (r->kind != DRA_DOC_MAP)
                return err_bad_arg_type(s, "map[string]interface {}", r);
            if (!dra_doc_get(l, mk))
                return err_no_merge_key(s, l, mk);
            if (!dra_doc_get(r, mk))
                return err_no_merge_key(s, r, mk);
            eq = scalar_eq(dra_doc_get(l, mk), dra_doc_get(r, mk));
        }
        if (eq)
            pi++;
        si++;
    }
    if (pi < nd.n && si >= set->n) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_buf_puts(&b, "The order in patch list:\n[");
        for (size_t i = 0; i < patch->n; i++) {
            if (i)
                dra_buf_putc(&b, ' ');
            api_patch_go_fmt(&b, patch->v[i]);
        }
        dra_buf_puts(&b, "]\n doesn't match $setElementOrder list:\n[");
        for (size_t i = 0; i < set->n; i++) {
            if (i)
                dra_buf_putc(&b, ' ');
            api_patch_go_fmt(&b, set->v[i]);
        }
        dra_buf_puts(&b, "]\n");
        return untyped(s, &b);
    }
    return DRA_OK;
}

/* mergePatchIntoOriginal: the $setElementOrder directives of |patch|. */
/* One $setElementOrder/<okey> directive with list |order|: the merged
 * list in the directive's order, server-only items where they were. */
static dra_err order_one(smp *s, dra_doc *orig, dra_doc *patch, api_oa_at ctx, const char *okey,
                         dra_doc *order)
{
    dra_err err;
    dra_doc *olist = api_patch_map_get(orig, okey), *plist = api_patch_map_get(patch, okey);
    dra_doc *merged = NULL, *both;
    api_oa_at sub;
    vec ov, pv, set, mv, pitems = {0}, sonly = {0};
    if (olist && olist->kind != DRA_DOC_LIST)
        return err_bad_arg_type(s, "[]interface {}", olist);
    if (plist && plist->kind != DRA_DOC_LIST)
        return err_bad_arg_type(s, "[]interface {}", plist);
    const api_openapi_field *f = api_openapi_step(ctx, okey, &sub);
    const char *mk = f ? f->merge_key : NULL;
    vec_of(order, &set);
    vec_of(plist, &pv);
    if ((err = check_order(s, &pv, &set, mk)))
        return err;
    if (!olist && !plist)
        return DRA_OK;
    if (!plist) {
        merged = olist;
    } else if (!olist) {
        merged = plist;
        remove_directives(merged);
    } else if (f && (f->flags & API_OA_F_SMP_MERGE)) {
        if ((err = merge_slice(s, olist, plist, sub, mk, 0, &merged)))
            return err;
    } else {
        merged = plist;
    }
    vec_of(merged, &mv);
    vec_of(olist, &ov);
    int kind = element_kind(s, &ov, &pv, &err);
    if (kind < 0)
        return err;
    if ((err = partition(s, &mv, &set, mk, mk != NULL, &pitems, &sonly)) ||
        (err = normalize(s, &pitems, &sonly, &set, &ov, mk, kind == DRA_DOC_MAP && mk, &both)) ||
        (err = dra_doc_map_set(s->a, orig, okey, both)))
        return err;
    api_patch_map_del(patch, okey);
    return DRA_OK;
}

/* mergePatchIntoOriginal: the $setElementOrder directives of |patch|,
 * each removed from the patch with the list it orders. */
static dra_err merge_order(smp *s, dra_doc *orig, dra_doc *patch, api_oa_at ctx)
{
    dra_err err;
    for (size_t i = 0; i < patch->u.map.n;) {
        const char *key = patch->u.map.m[i].key, *okey;
        dra_doc *order = patch->u.map.m[i].val;
        if (!has_prefix(key, ORDER_PREFIX)) {
            i++;
            continue;
        }
        api_patch_map_del(patch, key);
        if (order->kind != DRA_DOC_LIST)
            return err_bad_arg_type(s, "[]interface {}", order);
        if (!(okey = extract_key(key, ORDER_PREFIX)))
            return bad_request(s, "invalid patch format of setElementOrder list");
        if ((err = order_one(s, orig, patch, ctx, okey, order)))
            return err;
        i = 0; /* the patch map shrank: start over */
    }
    return DRA_OK;
}

/* Applies |patch| to the value at key |k| of |orig| (both owned). */
static dra_err merge_member(smp *s, dra_doc *orig, const char *k, dra_doc *pv, api_oa_at ctx,
                            int delete_list)
{
    dra_doc *cur = api_patch_map_get(orig, k), *nv = NULL;
    dra_err err;
    api_oa_at sub;
    if (pv->kind == DRA_DOC_NULL) {
        api_patch_map_del(orig, k);
        return DRA_OK;
    }
    if (!cur || cur->kind != pv->kind ||
        (cur->kind == DRA_DOC_FLOAT) != (pv->kind == DRA_DOC_FLOAT)) {
        if (delete_list)
            return DRA_OK;
        api_patch_drop_nulls(pv, 0); /* discardNullValuesFromPatch */
        if (!remove_directives(pv)) {
            api_patch_map_del(orig, k);
            return DRA_OK;
        }
        return dra_doc_map_set(s->a, orig, k, pv);
    }
    const api_openapi_field *f = api_openapi_step(ctx, k, &sub);
    unsigned flags = f ? f->flags : 0;
    if (cur->kind == DRA_DOC_MAP) {
        if (flags & API_OA_F_SMP_REPLACE)
            nv = pv;
        else if ((err = merge_map(s, cur, pv, sub, &nv)))
            return err;
    } else if (cur->kind == DRA_DOC_LIST) {
        if ((flags & API_OA_F_SMP_MERGE) || delete_list) {
            if ((err = merge_slice(s, cur, pv, sub, f ? f->merge_key : NULL, delete_list, &nv)))
                return err;
        } else {
            nv = pv;
        }
    } else {
        if (!remove_directives(pv)) {
            api_patch_map_del(orig, k);
            return DRA_OK;
        }
        nv = pv;
    }
    return dra_doc_map_set(s->a, orig, k, nv);
}

/* mergeMap: |orig| and |patch| are owned copies; *out may be either
 * (or an empty map for $patch: delete). */
static dra_err merge_map(smp *s, dra_doc *orig, dra_doc *patch, api_oa_at ctx, dra_doc **out)
{
    dra_err err;
    const dra_doc *dir = dra_doc_get(patch, DIRECTIVE);
    if (dir) {
        const char *d = dir->kind == DRA_DOC_STRING ? dir->u.str.s : "";
        if (!strcmp(d, "replace")) {
            api_patch_map_del(patch, DIRECTIVE);
            *out = patch;
            return DRA_OK;
        }
        if (!strcmp(d, "delete")) {
            *out = dra_doc_new_map(s->a, 0);
            return *out ? DRA_OK : DRA_ENOMEM;
        }
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_buf_puts(&b, "unknown patch type: ");
        api_patch_go_fmt(&b, dir);
        dra_buf_puts(&b, " in map: ");
        api_patch_go_fmt(&b, patch);
        return untyped(s, &b);
    }
    if (!orig || orig->kind != DRA_DOC_MAP)
        if (!(orig = dra_doc_new_map(s->a, 4)))
            return DRA_ENOMEM;
    if ((err = apply_retain_keys(s, orig, patch)) || (err = merge_order(s, orig, patch, ctx)))
        return err;
    for (size_t i = 0; i < patch->u.map.n; i++) {
        const char *k = patch->u.map.m[i].key;
        int delete_list = 0;
        if (has_prefix(k, DELETE_PREFIX)) {
            if (!(k = extract_key(k, DELETE_PREFIX)))
                return bad_request(s, "invalid patch format of primitive list");
            delete_list = 1;
        }
        if ((err = merge_member(s, orig, k, patch->u.map.m[i].val, ctx, delete_list)))
            return err;
    }
    *out = orig;
    return DRA_OK;
}

dra_err api_patch_strategic(dra_arena *a, const api_openapi_type *type, const dra_doc *orig,
                            const dra_doc *patch, dra_doc **out, dra_kstatus *st)
{
    static const char *const names[] = {"null", "bool", "number", "number", "string", "array",
                                        "object"};
    smp s = {a, st};
    api_oa_at ctx = {type, 0};
    dra_doc *o, *p;
    *out = NULL;
    if (!orig || orig->kind != DRA_DOC_MAP)
        return DRA_EINVAL;
    if (patch && patch->kind != DRA_DOC_MAP && patch->kind != DRA_DOC_NULL) {
        dra_kstatus_set(st, 400, "BadRequest",
                         "json: cannot unmarshal %s into Go value of type map[string]interface {}",
                         names[patch->kind]);
        return DRA_EINVAL;
    }
    if (!(o = api_patch_copy(a, orig)))
        return DRA_ENOMEM;
    if (!patch || patch->kind == DRA_DOC_NULL) {
        *out = o;
        return DRA_OK;
    }
    if (!(p = api_patch_copy(a, patch)))
        return DRA_ENOMEM;
    return merge_map(&s, o, p, ctx, out);
}
