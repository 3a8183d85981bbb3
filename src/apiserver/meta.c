/*
 * meta.c: the document-level helpers of the API server: members of maps,
 * ObjectMeta fields and their order, uids, timestamps, generated names,
 * request bodies, and the JSON text handed to the store with a hole for
 * the resourceVersion the store assigns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "apiserver_int.h"
#include "k8spb.h"

dra_doc *api_doc_at(const dra_doc *m, const char *key)
{
    if (!m || m->kind != DRA_DOC_MAP)
        return NULL;
    for (size_t i = 0; i < m->u.map.n; i++)
        if (!strcmp(m->u.map.m[i].key, key))
            return m->u.map.m[i].val;
    return NULL;
}

const char *api_doc_str(const dra_doc *m, const char *key)
{
    const dra_doc *v = api_doc_at(m, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

int api_doc_del(dra_doc *m, const char *key)
{
    if (!m || m->kind != DRA_DOC_MAP)
        return 0;
    for (size_t i = 0; i < m->u.map.n; i++) {
        if (strcmp(m->u.map.m[i].key, key))
            continue;
        memmove(&m->u.map.m[i], &m->u.map.m[i + 1],
                (m->u.map.n - i - 1) * sizeof m->u.map.m[0]);
        m->u.map.n--;
        return 1;
    }
    return 0;
}

dra_err api_doc_set_str(dra_arena *a, dra_doc *m, const char *key,
                        const char *val)
{
    dra_doc *v = dra_doc_new_string(a, val, strlen(val));
    return v ? dra_doc_map_set(a, m, key, v) : DRA_ENOMEM;
}

dra_err api_doc_set_int(dra_arena *a, dra_doc *m, const char *key, int64_t i)
{
    dra_doc *v = dra_doc_new_int(a, i);
    return v ? dra_doc_map_set(a, m, key, v) : DRA_ENOMEM;
}

dra_doc *api_doc_map(dra_arena *a, dra_doc *m, const char *key)
{
    dra_doc *v = api_doc_at(m, key);
    if (v)
        return v->kind == DRA_DOC_MAP ? v : NULL;
    if (!m || m->kind != DRA_DOC_MAP || !(v = dra_doc_new_map(a, 4)) ||
        dra_doc_map_set(a, m, key, v))
        return NULL;
    return v;
}

static dra_doc *copy_rec(dra_arena *a, const dra_doc *d, int depth)
{
    dra_doc *c;
    if (depth > DRA_DOC_MAX_DEPTH || !(c = dra_arena_alloc(a, sizeof *c)))
        return NULL;
    *c = *d;
    if (d->kind == DRA_DOC_LIST) {
        c->u.list.items = dra_arena_array(a, d->u.list.n ? d->u.list.n : 1,
                                          sizeof *c->u.list.items);
        if (!c->u.list.items)
            return NULL;
        for (size_t i = 0; i < d->u.list.n; i++)
            if (!(c->u.list.items[i] = copy_rec(a, d->u.list.items[i], depth + 1)))
                return NULL;
    } else if (d->kind == DRA_DOC_MAP) {
        c->u.map.m = dra_arena_array(a, d->u.map.n ? d->u.map.n : 1,
                                     sizeof *c->u.map.m);
        if (!c->u.map.m)
            return NULL;
        for (size_t i = 0; i < d->u.map.n; i++) {
            c->u.map.m[i] = d->u.map.m[i];
            c->u.map.m[i].key = dra_arena_strndup(a, d->u.map.m[i].key,
                                                  d->u.map.m[i].keylen);
            if (!c->u.map.m[i].key ||
                !(c->u.map.m[i].val = copy_rec(a, d->u.map.m[i].val, depth + 1)))
                return NULL;
        }
    } else if (d->kind == DRA_DOC_STRING) {
        /* Strings are copied too: the copy may outlive the source arena. */
        if (!(c->u.str.s = dra_arena_strndup(a, d->u.str.s, d->u.str.len)))
            return NULL;
    } else if (d->kind == DRA_DOC_FLOAT && d->u.f.num) {
        if (!(c->u.f.num = dra_arena_strdup(a, d->u.f.num)))
            return NULL;
    }
    return c;
}

dra_doc *api_doc_clone(dra_arena *a, const dra_doc *d)
{
    return d ? copy_rec(a, d, 0) : NULL;
}

dra_err api_doc_parse(dra_arena *a, const char *json, size_t len, dra_doc **out)
{
    return dra_doc_parse_json(a, json, len, out, NULL);
}

dra_doc *api_meta(const dra_doc *obj)
{
    dra_doc *m = api_doc_at(obj, "metadata");
    return m && m->kind == DRA_DOC_MAP ? m : NULL;
}

const char *api_meta_str(const dra_doc *obj, const char *key)
{
    return api_doc_str(api_meta(obj), key);
}

dra_doc *api_meta_list(const dra_doc *obj, const char *key)
{
    dra_doc *l = api_doc_at(api_meta(obj), key);
    return l && l->kind == DRA_DOC_LIST && l->u.list.n ? l : NULL;
}

int api_has_finalizer(const dra_doc *obj, const char *f)
{
    dra_doc *l = api_meta_list(obj, "finalizers");
    for (size_t i = 0; l && i < l->u.list.n; i++)
        if (l->u.list.items[i]->kind == DRA_DOC_STRING &&
            !strcmp(l->u.list.items[i]->u.str.s, f))
            return 1;
    return 0;
}

int api_drop_finalizer(dra_doc *obj, const char *f)
{
    dra_doc *l = api_meta_list(obj, "finalizers");
    int found = 0;
    size_t j = 0;
    for (size_t i = 0; l && i < l->u.list.n; i++) {
        dra_doc *it = l->u.list.items[i];
        if (it->kind == DRA_DOC_STRING && !strcmp(it->u.str.s, f)) {
            found = 1;
            continue;
        }
        l->u.list.items[j++] = it;
    }
    if (l)
        l->u.list.n = j;
    if (l && !j)
        api_doc_del(api_meta(obj), "finalizers");
    return found;
}

dra_err api_add_finalizer(dra_arena *a, dra_doc *obj, const char *f)
{
    dra_doc *m = api_meta(obj), *l, *s;
    if (!m)
        return DRA_EINVAL;
    if (api_has_finalizer(obj, f))
        return DRA_OK;
    l = api_doc_at(m, "finalizers");
    if (!l || l->kind != DRA_DOC_LIST) {
        if (!(l = dra_doc_new_list(a, 2)) || dra_doc_map_set(a, m, "finalizers", l))
            return DRA_ENOMEM;
    }
    s = dra_doc_new_string(a, f, strlen(f));
    return s ? dra_doc_list_push(a, l, s) : DRA_ENOMEM;
}

/* ORDER: ObjectMeta's fields as Go declares them. */
static const char *const meta_order[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
    "generation", "creationTimestamp", "deletionTimestamp",
    "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
    "finalizers", "managedFields"};
static const char *const top_order[] = {"kind", "apiVersion", "metadata"};

static size_t rank(const char *key, const char *const *order, size_t n,
                   size_t pos)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(key, order[i]))
            return i;
    return n + pos;
}

/* Stable reorder of a map's members by |order|, then their old order. */
static void reorder(dra_doc *m, const char *const *order, size_t n)
{
    size_t cnt, *rk;
    if (!m || m->kind != DRA_DOC_MAP || m->u.map.n < 2 || m->u.map.n > 4096)
        return;
    cnt = m->u.map.n;
    /* Ranks fit on the stack for any real object (ObjectMeta has 15
     * fields); a larger map is left as it is. */
    size_t buf[256];
    if (cnt > 256)
        return;
    rk = buf;
    for (size_t i = 0; i < cnt; i++)
        rk[i] = rank(m->u.map.m[i].key, order, n, i);
    for (size_t i = 1; i < cnt; i++) {
        dra_doc_member mm = m->u.map.m[i];
        size_t r = rk[i], j = i;
        while (j > 0 && rk[j - 1] > r) {
            m->u.map.m[j] = m->u.map.m[j - 1];
            rk[j] = rk[j - 1];
            j--;
        }
        m->u.map.m[j] = mm;
        rk[j] = r;
    }
}

void api_order(dra_doc *obj)
{
    reorder(obj, top_order, sizeof top_order / sizeof top_order[0]);
    reorder(api_meta(obj), meta_order, sizeof meta_order / sizeof meta_order[0]);
}

void api_now(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void random_bytes(unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(p + got, n - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    /* getrandom only fails before the pool is seeded or on EINTR; fall
     * back to something that is at least not constant. */
    for (; got < n; got++)
        p[got] = (unsigned char)(rand() ^ (int)time(NULL));
}

/* The UUID of 16 random bytes, in the 8-4-4-4-12 form (printf costs
 * as much as drawing the bytes). */
static void uuid_of(unsigned char b[16], char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    char u[37], *o = u;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *o++ = '-';
        *o++ = hex[b[i] >> 4];
        *o++ = hex[b[i] & 15];
    }
    *o = '\0';
    snprintf(buf, cap, "%s", u);
}

/* |n| characters of apimachinery's utilrand alphabet (no vowels, no
 * confusable digits) from |n| random bytes. */
static void suffix_of(const unsigned char *b, char *buf, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    for (size_t i = 0; i < n; i++)
        buf[i] = alphabet[b[i] % (sizeof alphabet - 1)];
    buf[n] = '\0';
}

void api_uuid(char *buf, size_t cap)
{
    unsigned char b[16];
    random_bytes(b, sizeof b);
    uuid_of(b, buf, cap);
}

void api_uuid_suffix(char *uid, size_t cap, char *suf, size_t n)
{
    unsigned char b[32];
    if (n > 16)
        n = 16;
    random_bytes(b, 16 + n);
    uuid_of(b, uid, cap);
    suffix_of(b + 16, suf, n);
}

#define RV_SENTINEL "@@dra-rv@@"

dra_err api_encode_for_store(dra_arena *a, dra_doc *obj, dra_buf *out,
                             size_t *rv_at)
{
    static const char pat[] = "\"resourceVersion\":\"" RV_SENTINEL "\"";
    dra_doc *m = api_meta(obj);
    dra_err e;
    char *at;
    if (!m)
        return DRA_EINVAL;
    if ((e = api_doc_set_str(a, m, "resourceVersion", RV_SENTINEL)))
        return e;
    api_order(obj);
    if ((e = dra_doc_to_json(obj, 0, out)))
        return e;
    /* metadata comes right after kind and apiVersion, and quotes inside
     * strings are escaped, so the first match is the member just set. */
    at = strstr(out->p, pat);
    if (!at)
        return DRA_EINVAL;
    at += sizeof pat - 2 - (sizeof RV_SENTINEL - 1);
    memmove(at, at + sizeof RV_SENTINEL - 1,
            out->len - (size_t)(at - out->p) - (sizeof RV_SENTINEL - 1) + 1);
    out->len -= sizeof RV_SENTINEL - 1;
    *rv_at = (size_t)(at - out->p);
    return DRA_OK;
}

/* The media type of a Content-Type value, without parameters, in |buf|. */
static const char *media_type(const char *ct, char *buf, size_t cap)
{
    size_t n = 0;
    if (!ct)
        return "";
    while (*ct == ' ')
        ct++;
    while (ct[n] && ct[n] != ';' && ct[n] != ' ' && n + 1 < cap) {
        char c = ct[n];
        buf[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    buf[n] = '\0';
    return buf;
}

dra_err api_body(api_req *r, dra_doc **out)
{
    char mt[96];
    const char *t = media_type(r->in->content_type, mt, sizeof mt);
    dra_diag d;
    dra_err e;
    *out = NULL;
    if (r->body_doc) { /* read before the request came (in process) */
        *out = r->body_doc;
        goto is_object;
    }
    if (!r->in->body || !r->in->body_len) {
        api_bad_request(r, "the request body is empty");
        return DRA_EPARSE;
    }
    dra_diag_init(&d, r->srv->mem);
    d.max = 1;
    if (!*t || !strcmp(t, "application/json") || !strcmp(t, "*/*")) {
        e = dra_doc_parse_json(&r->a, r->in->body, r->in->body_len, out, &d);
    } else if (!strcmp(t, "application/yaml") || !strcmp(t, "text/yaml")) {
        dra_doc **docs = NULL;
        size_t n = 0;
        e = dra_doc_parse_yaml(&r->a, r->in->body, r->in->body_len, &docs, &n, &d);
        if (!e && n != 1) {
            dra_diag_fini(&d);
            api_bad_request(r, "the request body must hold exactly one object, not %zu", n);
            return DRA_EPARSE;
        }
        if (!e)
            *out = docs[0];
    } else if (!strcmp(t, "application/vnd.kubernetes.protobuf")) {
        dra_diag_fini(&d);
        return api_k8spb_body(r, out);
    } else {
        dra_diag_fini(&d);
        api_fail(r, 415, "UnsupportedMediaType", NULL, NULL,
                 "the body of the request was in an unknown format - accepted "
                 "media types include: application/json, application/yaml");
        return DRA_EPARSE;
    }
    if (e == DRA_ENOMEM) {
        dra_diag_fini(&d);
        return e;
    }
    if (e) {
        dra_buf b;
        dra_buf_init(&b, r->srv->mem);
        dra_diag_format(&d, &b);
        while (b.len && b.p[b.len - 1] == '\n')
            b.p[--b.len] = '\0';
        api_bad_request(r, "couldn't get version/kind; %s parse error: %s",
                        *t && strcmp(t, "application/json") ? "yaml" : "json",
                        b.p ? b.p : "malformed input");
        dra_buf_fini(&b);
        dra_diag_fini(&d);
        return DRA_EPARSE;
    }
    dra_diag_fini(&d);
is_object:
    if ((*out)->kind != DRA_DOC_MAP) {
        api_bad_request(r, "couldn't get version/kind; json parse error: the "
                           "body is not a JSON object");
        return DRA_EPARSE;
    }
    return DRA_OK;
}
