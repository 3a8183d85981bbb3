/*
 * patch.c: JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on
 * dra_doc trees, with the behaviour of evanphx/json-patch as
 * kube-apiserver calls it, plus the tree-editing helpers the strategic
 * merge patch and server-side apply code share. Every function works on
 * a deep copy of its input, so callers' documents are never changed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch_int.h"

/* ---- tree helpers -------------------------------------------------------- */

static dra_doc *copy_rec(dra_arena *a, const dra_doc *d, int depth)
{
    dra_doc *c;
    if (!d || depth > DRA_DOC_MAX_DEPTH)
        return NULL;
    c = dra_arena_alloc(a, sizeof *c);
    if (!c)
        return NULL;
    *c = *d;
    if (d->kind == DRA_DOC_LIST) {
        c->u.list.items = d->u.list.n ? dra_arena_array(a, d->u.list.n, sizeof *c->u.list.items)
                                      : NULL;
        if (d->u.list.n && !c->u.list.items)
            return NULL;
        for (size_t i = 0; i < d->u.list.n; i++)
            if (!(c->u.list.items[i] = copy_rec(a, d->u.list.items[i], depth + 1)))
                return NULL;
    } else if (d->kind == DRA_DOC_MAP) {
        c->u.map.m = d->u.map.n ? dra_arena_array(a, d->u.map.n, sizeof *c->u.map.m) : NULL;
        if (d->u.map.n && !c->u.map.m)
            return NULL;
        for (size_t i = 0; i < d->u.map.n; i++) {
            c->u.map.m[i] = d->u.map.m[i];
            if (!(c->u.map.m[i].key = dra_arena_strndup(a, d->u.map.m[i].key,
                                                        d->u.map.m[i].keylen)) ||
                !(c->u.map.m[i].val = copy_rec(a, d->u.map.m[i].val, depth + 1)))
                return NULL;
        }
    } else if (d->kind == DRA_DOC_STRING) {
        char *s = dra_arena_strndup(a, d->u.str.s, d->u.str.len);
        if (!s)
            return NULL;
        c->u.str.s = s;
    } else if (d->kind == DRA_DOC_FLOAT && d->u.f.num) {
        if (!(c->u.f.num = dra_arena_strdup(a, d->u.f.num)))
            return NULL;
    }
    return c;
}

dra_doc *api_patch_copy(dra_arena *a, const dra_doc *doc)
{
    return copy_rec(a, doc, 0);
}

dra_doc *api_patch_map_get(dra_doc *m, const char *key)
{
    return (dra_doc *)dra_doc_get(m, key);
}

int api_patch_map_del(dra_doc *m, const char *key)
{
    if (!m || m->kind != DRA_DOC_MAP)
        return 0;
    for (size_t i = 0; i < m->u.map.n; i++) {
        if (strcmp(m->u.map.m[i].key, key))
            continue;
        memmove(m->u.map.m + i, m->u.map.m + i + 1,
                (m->u.map.n - i - 1) * sizeof *m->u.map.m);
        m->u.map.n--;
        return 1;
    }
    return 0;
}

dra_err api_patch_list_insert(dra_arena *a, dra_doc *l, size_t i, dra_doc *v)
{
    dra_err err = dra_doc_list_push(a, l, v);
    if (err)
        return err;
    memmove(l->u.list.items + i + 1, l->u.list.items + i,
            (l->u.list.n - 1 - i) * sizeof *l->u.list.items);
    l->u.list.items[i] = v;
    return DRA_OK;
}

void api_patch_list_del(dra_doc *l, size_t i)
{
    memmove(l->u.list.items + i, l->u.list.items + i + 1,
            (l->u.list.n - i - 1) * sizeof *l->u.list.items);
    l->u.list.n--;
}

static int key_cmp(const void *x, const void *y)
{
    return strcmp((*(const dra_doc_member *const *)x)->key,
                  (*(const dra_doc_member *const *)y)->key);
}

void api_patch_go_fmt(dra_buf *b, const dra_doc *d)
{
    if (!d) {
        dra_buf_puts(b, "<nil>");
        return;
    }
    switch (d->kind) {
    case DRA_DOC_NULL: dra_buf_puts(b, "<nil>"); break;
    case DRA_DOC_BOOL: dra_buf_puts(b, d->u.b ? "true" : "false"); break;
    case DRA_DOC_INT: dra_buf_printf(b, "%lld", (long long)d->u.i); break;
    case DRA_DOC_FLOAT:
        if (d->u.f.num)
            dra_buf_puts(b, d->u.f.num);
        else
            dra_buf_printf(b, "%g", d->u.f.f);
        break;
    case DRA_DOC_STRING: dra_buf_append(b, d->u.str.s, d->u.str.len); break;
    case DRA_DOC_LIST:
        dra_buf_putc(b, '[');
        for (size_t i = 0; i < d->u.list.n; i++) {
            if (i)
                dra_buf_putc(b, ' ');
            api_patch_go_fmt(b, d->u.list.items[i]);
        }
        dra_buf_putc(b, ']');
        break;
    case DRA_DOC_MAP: {
        /* Go prints map keys sorted */
        const dra_doc_member **v = d->u.map.n ? malloc(d->u.map.n * sizeof *v) : NULL;
        dra_buf_puts(b, "map[");
        if (d->u.map.n && !v) {
            b->oom = 1;
            return;
        }
        for (size_t i = 0; i < d->u.map.n; i++)
            v[i] = &d->u.map.m[i];
        if (d->u.map.n > 1)
            qsort(v, d->u.map.n, sizeof *v, key_cmp);
        for (size_t i = 0; i < d->u.map.n; i++) {
            if (i)
                dra_buf_putc(b, ' ');
            dra_buf_printf(b, "%s:", v[i]->key);
            api_patch_go_fmt(b, v[i]->val);
        }
        free(v);
        dra_buf_putc(b, ']');
        break;
    }
    }
}

/* ---- JSON merge patch ---------------------------------------------------- */

void api_patch_drop_nulls(dra_doc *d, int list_items)
{
    if (!d)
        return;
    if (d->kind == DRA_DOC_MAP) {
        for (size_t i = 0; i < d->u.map.n;) {
            if (d->u.map.m[i].val->kind == DRA_DOC_NULL) {
                api_patch_map_del(d, d->u.map.m[i].key);
                continue;
            }
            api_patch_drop_nulls(d->u.map.m[i].val, list_items);
            i++;
        }
    } else if (d->kind == DRA_DOC_LIST) {
        for (size_t i = 0; i < d->u.list.n;) {
            if (list_items && d->u.list.items[i]->kind == DRA_DOC_NULL) {
                api_patch_list_del(d, i);
                continue;
            }
            api_patch_drop_nulls(d->u.list.items[i], list_items);
            i++;
        }
    }
}

/* json-patch's pruneNulls, applied where a patch value lands on nothing:
 * null members and null list items go. */
static void prune_nulls(dra_doc *d)
{
    api_patch_drop_nulls(d, 1);
}

static dra_err merge_docs(dra_arena *a, dra_doc *doc, const dra_doc *patch);

/* The value that replaces |cur| (owned) when |patch| is merged into it. */
static dra_doc *merge_value(dra_arena *a, dra_doc *cur, const dra_doc *patch, dra_err *err)
{
    dra_doc *c;
    if (cur->kind != DRA_DOC_MAP || patch->kind != DRA_DOC_MAP) {
        if (!(c = api_patch_copy(a, patch))) {
            *err = DRA_ENOMEM;
            return NULL;
        }
        if (cur->kind != DRA_DOC_MAP)
            prune_nulls(c);
        return c;
    }
    *err = merge_docs(a, cur, patch);
    return cur;
}

static dra_err merge_docs(dra_arena *a, dra_doc *doc, const dra_doc *patch)
{
    dra_err err = DRA_OK;
    for (size_t i = 0; i < patch->u.map.n; i++) {
        const char *k = patch->u.map.m[i].key;
        const dra_doc *v = patch->u.map.m[i].val;
        dra_doc *cur = api_patch_map_get(doc, k), *nv;
        if (v->kind == DRA_DOC_NULL) {
            api_patch_map_del(doc, k);
            continue;
        }
        if (!cur || cur->kind == DRA_DOC_NULL) {
            if (!(nv = api_patch_copy(a, v)))
                return DRA_ENOMEM;
            prune_nulls(nv);
        } else if (!(nv = merge_value(a, cur, v, &err))) {
            return err;
        }
        if (err || (err = dra_doc_map_set(a, doc, k, nv)))
            return err;
    }
    return DRA_OK;
}

/* kube decodes the patched document into the kind's type; anything but
 * an object fails that decoding, which it reports as 422. */
static dra_err not_an_object(dra_arena *a, const dra_doc *d, dra_kstatus *st)
{
    static const char *const names[] = {"null", "bool", "number", "number", "string",
                                        "array", "object"};
    dra_buf b;
    dra_err err;
    (void)a;
    dra_buf_init(&b, NULL);
    err = dra_doc_to_json(d, 0, &b);
    if (err == DRA_OK && b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = '\0';
    dra_kstatus_set(st, 422, "Invalid",
                     " \"\" is invalid: patch: Invalid value: \"%.400s\": couldn't get "
                     "version/kind; json parse error: json: cannot unmarshal %s into Go "
                     "value of type struct { APIVersion string \"json:\\\"apiVersion,"
                     "omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }",
                     b.p ? b.p : "", names[d->kind]);
    dra_buf_fini(&b);
    return err == DRA_ENOMEM ? DRA_ENOMEM : DRA_EINVALID;
}

dra_err api_patch_merge(dra_arena *a, const dra_doc *orig, const dra_doc *patch,
                        dra_doc **out, dra_kstatus *st)
{
    dra_doc *doc;
    dra_err err;
    *out = NULL;
    if (!orig || orig->kind != DRA_DOC_MAP)
        return DRA_EINVAL;
    if (!patch || patch->kind == DRA_DOC_NULL) {
        dra_kstatus_set(st, 400, "BadRequest", "Invalid JSON Patch");
        return DRA_EINVAL;
    }
    if (patch->kind != DRA_DOC_MAP)
        return not_an_object(a, patch, st);
    if (!(doc = api_patch_copy(a, orig)))
        return DRA_ENOMEM;
    if ((err = merge_docs(a, doc, patch)))
        return err;
    *out = doc;
    return DRA_OK;
}

/* ---- JSON patch ------------------------------------------------------------- */

typedef struct jp {
    dra_arena *a;
    dra_doc *doc;
    dra_diag *detail;
} jp;

static dra_err jp_fail(jp *p, const char *fmt, ...) DRA_PRINTF(2, 3);
static dra_err jp_fail(jp *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (p->detail)
        dra_diag_vadd(p->detail, "", 0, 0, fmt, ap);
    va_end(ap);
    return DRA_EINVALID;
}

/* Decodes one reference token (~1 -> /, ~0 -> ~) into |a|. */
static char *token(dra_arena *a, const char *s, size_t n)
{
    char *o = dra_arena_alloc(a, n + 1);
    size_t k = 0;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '~' && i + 1 < n && (s[i + 1] == '0' || s[i + 1] == '1')) {
            o[k++] = s[i + 1] == '0' ? '~' : '/';
            i++;
        } else {
            o[k++] = s[i];
        }
    }
    o[k] = '\0';
    return o;
}

/* A list index token: decimal digits only; -1 otherwise. */
static long list_index(const char *t)
{
    long v = 0;
    if (!*t)
        return -1;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || v > 100000000)
            return -1;
        v = v * 10 + (*t - '0');
    }
    return v;
}

/* Finds the container of the last token of |path|. *parent is NULL when
 * the path does not resolve (or is not a pointer: upstream requires the
 * leading slash and has no whole-document operations). */
static dra_err resolve(jp *p, const char *path, dra_doc **parent, char **last)
{
    dra_doc *cur = p->doc;
    *parent = NULL;
    *last = NULL;
    if (path[0] != '/')
        return DRA_OK;
    path++;
    for (;;) {
        const char *slash = strchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : strlen(path);
        char *t = token(p->a, path, n);
        if (!t)
            return DRA_ENOMEM;
        if (!slash) {
            *parent = cur;
            *last = t;
            return DRA_OK;
        }
        if (cur->kind == DRA_DOC_MAP) {
            cur = api_patch_map_get(cur, t);
        } else if (cur->kind == DRA_DOC_LIST) {
            long i = list_index(t);
            cur = i >= 0 && (size_t)i < cur->u.list.n ? cur->u.list.items[i] : NULL;
        } else {
            cur = NULL;
        }
        if (!cur)
            return DRA_OK;
        path = slash + 1;
    }
}

/* The value at (parent, key), or NULL. */
static dra_doc *child(dra_doc *parent, const char *key)
{
    if (parent->kind == DRA_DOC_MAP)
        return api_patch_map_get(parent, key);
    if (parent->kind == DRA_DOC_LIST) {
        long i = list_index(key);
        return i >= 0 && (size_t)i < parent->u.list.n ? parent->u.list.items[i] : NULL;
    }
    return NULL;
}

static dra_err jp_add(jp *p, const char *op, const char *path, dra_doc *v)
{
    dra_doc *parent;
    char *key;
    dra_err err = resolve(p, path, &parent, &key);
    if (err)
        return err;
    if (!parent)
        return jp_fail(p, "%s operation does not apply: doc is missing path: \"%s\": missing value",
                       op, path);
    if (parent->kind == DRA_DOC_MAP)
        return dra_doc_map_set(p->a, parent, key, v);
    if (parent->kind != DRA_DOC_LIST)
        return jp_fail(p, "error in %s for path: '%s': invalid node", op, path);
    long i = !strcmp(key, "-") ? (long)parent->u.list.n : list_index(key);
    if (i < 0 || (size_t)i > parent->u.list.n)
        return jp_fail(p, "error in %s for path: '%s': Unable to access invalid index: %s",
                       op, path, key);
    return api_patch_list_insert(p->a, parent, (size_t)i, v);
}

/* Removes the value at |path| and returns it in *old. */
static dra_err jp_remove(jp *p, const char *op, const char *path, dra_doc **old)
{
    dra_doc *parent;
    char *key;
    dra_err err = resolve(p, path, &parent, &key);
    if (err)
        return err;
    if (!parent || !(*old = child(parent, key)))
        return jp_fail(p, "%s operation does not apply: doc is missing path: \"%s\": missing value",
                       op, path);
    if (parent->kind == DRA_DOC_MAP)
        api_patch_map_del(parent, key);
    else
        api_patch_list_del(parent, (size_t)list_index(key));
    return DRA_OK;
}

static dra_err jp_replace(jp *p, const char *path, dra_doc *v)
{
    dra_doc *parent;
    char *key;
    dra_err err = resolve(p, path, &parent, &key);
    if (err)
        return err;
    if (!parent)
        return jp_fail(p, "replace operation does not apply: doc is missing path: %s: missing value",
                       path);
    if (!child(parent, key))
        return jp_fail(p, "replace operation does not apply: doc is missing key: %s: missing value",
                       path);
    if (parent->kind == DRA_DOC_MAP)
        return dra_doc_map_set(p->a, parent, key, v);
    parent->u.list.items[list_index(key)] = v;
    return DRA_OK;
}

static dra_err jp_test(jp *p, const char *path, const dra_doc *v)
{
    dra_doc *parent, *cur;
    char *key;
    dra_err err = resolve(p, path, &parent, &key);
    if (err)
        return err;
    cur = parent ? child(parent, key) : NULL;
    if (!cur) {
        if (parent && (!v || v->kind == DRA_DOC_NULL))
            return DRA_OK; /* upstream: a missing value tests equal to null */
        return jp_fail(p, "test operation does not apply: is missing path: %s: missing value", path);
    }
    if (v ? !dra_doc_equal(cur, v) : cur->kind != DRA_DOC_NULL)
        return jp_fail(p, "testing value %s failed: test failed", path);
    return DRA_OK;
}

static const char *op_str(const dra_doc *op, const char *k)
{
    const dra_doc *v = dra_doc_get(op, k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static dra_err jp_apply_one(jp *p, const dra_doc *op)
{
    const char *kind = op_str(op, "op"), *path = op_str(op, "path");
    const char *from = op_str(op, "from");
    const dra_doc *val = dra_doc_get(op, "value");
    dra_doc *v = NULL, *old;
    dra_err err;
    if (!kind)
        return jp_fail(p, "Unexpected kind: unknown");
    if (!path)
        return jp_fail(p, "%s operation failed to decode path: missing value", kind);
    if (strcmp(kind, "remove") && strcmp(kind, "move") && strcmp(kind, "copy") &&
        strcmp(kind, "test")) {
        if (!(v = val ? api_patch_copy(p->a, val) : dra_doc_new_null(p->a)))
            return DRA_ENOMEM;
    }
    if (!strcmp(kind, "add"))
        return jp_add(p, "add", path, v);
    if (!strcmp(kind, "replace"))
        return jp_replace(p, path, v);
    if (!strcmp(kind, "remove"))
        return jp_remove(p, "remove", path, &old);
    if (!strcmp(kind, "test"))
        return jp_test(p, path, val);
    if (!strcmp(kind, "move") || !strcmp(kind, "copy")) {
        if (!from)
            return jp_fail(p, "%s operation failed to decode from: missing value", kind);
        if (!strcmp(kind, "move")) {
            if ((err = jp_remove(p, "move", from, &old)))
                return err;
            return jp_add(p, "move", path, old);
        }
        dra_doc *parent;
        char *key;
        if ((err = resolve(p, from, &parent, &key)))
            return err;
        if (!parent || !(old = child(parent, key)))
            return jp_fail(p, "copy operation does not apply: doc is missing from path: %s: missing value",
                           from);
        if (!(v = api_patch_copy(p->a, old)))
            return DRA_ENOMEM;
        return jp_add(p, "copy", path, v);
    }
    return jp_fail(p, "Unexpected kind: %s", kind);
}

/* Decoding as encoding/json unmarshals into jsonpatch.Patch. */
static dra_err jp_decode(const dra_doc *ops, dra_kstatus *st)
{
    static const char *const names[] = {"null", "bool", "number", "number", "string",
                                        "array", "object"};
    if (!ops || ops->kind == DRA_DOC_NULL)
        return DRA_OK; /* null unmarshals into an empty patch */
    if (ops->kind != DRA_DOC_LIST) {
        dra_kstatus_set(st, 400, "BadRequest",
                         "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                         names[ops->kind]);
        return DRA_EINVAL;
    }
    for (size_t i = 0; i < ops->u.list.n; i++) {
        dra_doc_kind k = ops->u.list.items[i]->kind;
        if (k != DRA_DOC_MAP && k != DRA_DOC_NULL) {
            dra_kstatus_set(st, 400, "BadRequest",
                             "json: cannot unmarshal %s into Go value of type jsonpatch.Operation",
                             names[k]);
            return DRA_EINVAL;
        }
    }
    if (ops->u.list.n > API_PATCH_MAX_JSON_OPS) {
        dra_kstatus_set(st, 413, "RequestEntityTooLarge",
                         "The allowed maximum operations in a JSON patch is %d, got %zu",
                         API_PATCH_MAX_JSON_OPS, ops->u.list.n);
        return DRA_ETOOLARGE;
    }
    return DRA_OK;
}

dra_err api_patch_json(dra_arena *a, const dra_doc *orig, const dra_doc *ops,
                       dra_doc **out, dra_kstatus *st, dra_diag *detail)
{
    jp p = {a, NULL, detail};
    dra_err err;
    *out = NULL;
    if (!orig)
        return DRA_EINVAL;
    if ((err = jp_decode(ops, st)))
        return err;
    if (!(p.doc = api_patch_copy(a, orig)))
        return DRA_ENOMEM;
    for (size_t i = 0; ops && ops->kind == DRA_DOC_LIST && i < ops->u.list.n; i++) {
        const dra_doc *op = ops->u.list.items[i];
        err = op->kind == DRA_DOC_NULL ? jp_fail(&p, "Unexpected kind: unknown")
                                       : jp_apply_one(&p, op);
        if (err == DRA_EINVALID)
            dra_kstatus_set(st, 422, "Invalid",
                             "the server rejected our request due to an error in our request");
        if (err)
            return err;
    }
    *out = p.doc;
    return DRA_OK;
}
