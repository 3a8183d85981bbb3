/*
 * defaults_doc.c: the document side of kube-apiserver's defaulting.
 * Small edits on dra_doc maps that keep Go's field order, rounding of
 * resource lists, the image reference rules behind imagePullPolicy, and
 * the defaults of the kinds this module keeps untyped (Namespace, Event:
 * dra_api_default_doc). Typed kinds are in defaults_core.c and
 * defaults_pod.c.
 */
#include <stdio.h>
#include <string.h>

#include "defaults_int.h"

/* ---- lookups ------------------------------------------------------------------ */

dra_doc *def_get(const dra_doc *m, const char *key)
{
    size_t len = strlen(key);
    if (!m || m->kind != DRA_DOC_MAP)
        return NULL;
    for (size_t i = 0; i < m->u.map.n; i++)
        if (m->u.map.m[i].keylen == len && !memcmp(m->u.map.m[i].key, key, len))
            return m->u.map.m[i].val;
    return NULL;
}

dra_doc *def_map(const dra_doc *m, const char *key)
{
    dra_doc *v = def_get(m, key);
    return v && v->kind == DRA_DOC_MAP ? v : NULL;
}

dra_doc *def_list(const dra_doc *m, const char *key)
{
    dra_doc *v = def_get(m, key);
    return v && v->kind == DRA_DOC_LIST ? v : NULL;
}

const char *def_str(const dra_doc *m, const char *key)
{
    const dra_doc *v = def_get(m, key);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

int def_int(const dra_doc *v, int64_t *out)
{
    if (v && v->kind == DRA_DOC_INT) {
        *out = v->u.i;
        return 1;
    }
    if (v && v->kind == DRA_DOC_FLOAT && v->u.f.f >= -9.2e18 && v->u.f.f <= 9.2e18 &&
        (double)(int64_t)v->u.f.f == v->u.f.f) {
        *out = (int64_t)v->u.f.f;
        return 1;
    }
    return 0;
}

int def_is_unset(const dra_doc *v, def_unset how)
{
    int64_t i;
    if (!v || v->kind == DRA_DOC_NULL)
        return 1;
    if (how != DEF_ZERO)
        return 0;
    /* A YAML 0.0 or .0 is Go's zero too (see def_int). */
    return (v->kind == DRA_DOC_STRING && v->u.str.len == 0) || (def_int(v, &i) && i == 0);
}

/* ---- edits in Go order ---------------------------------------------------------- */

static size_t rank(const char *key, size_t len, const char *const *order)
{
    for (size_t i = 0; order && order[i]; i++)
        if (strlen(order[i]) == len && !memcmp(order[i], key, len))
            return i;
    return (size_t)-1;
}

/* Moves the last member of |m| to index |at|. */
static void rotate_last(dra_doc *m, size_t at)
{
    size_t n = m->u.map.n;
    dra_doc_member last = m->u.map.m[n - 1];
    memmove(&m->u.map.m[at + 1], &m->u.map.m[at], (n - 1 - at) * sizeof last);
    m->u.map.m[at] = last;
}

dra_err def_set(dra_arena *a, dra_doc *m, const char *key, dra_doc *v,
                const char *const *order)
{
    size_t n, len = strlen(key), r, at;
    dra_err e;
    if (!v)
        return DRA_ENOMEM;
    if (!m || m->kind != DRA_DOC_MAP)
        return DRA_EINVAL;
    n = m->u.map.n;
    for (size_t i = 0; i < n; i++)
        if (m->u.map.m[i].keylen == len && !memcmp(m->u.map.m[i].key, key, len)) {
            m->u.map.m[i].val = v;
            return DRA_OK;
        }
    if ((e = dra_doc_map_set(a, m, key, v)))
        return e;
    r = rank(key, len, order);
    for (at = 0; at < n; at++)
        if (rank(m->u.map.m[at].key, m->u.map.m[at].keylen, order) > r)
            break;
    if (at < n)
        rotate_last(m, at);
    return DRA_OK;
}

dra_err def_put(dra_arena *a, dra_doc *m, const char *key, dra_doc *v,
                const char *const *order, def_unset how)
{
    if (!def_is_unset(def_get(m, key), how))
        return DRA_OK;
    return def_set(a, m, key, v, order);
}

dra_err def_put_str(dra_arena *a, dra_doc *m, const char *key, const char *s,
                    const char *const *order, def_unset how)
{
    if (!def_is_unset(def_get(m, key), how))
        return DRA_OK;
    return def_set(a, m, key, dra_doc_new_string(a, s, strlen(s)), order);
}

dra_err def_put_int(dra_arena *a, dra_doc *m, const char *key, int64_t i,
                    const char *const *order, def_unset how)
{
    if (!def_is_unset(def_get(m, key), how))
        return DRA_OK;
    return def_set(a, m, key, dra_doc_new_int(a, i), order);
}

void def_del(dra_doc *m, const char *key)
{
    size_t len = strlen(key);
    if (!m || m->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < m->u.map.n; i++)
        if (m->u.map.m[i].keylen == len && !memcmp(m->u.map.m[i].key, key, len)) {
            memmove(&m->u.map.m[i], &m->u.map.m[i + 1],
                    (m->u.map.n - i - 1) * sizeof m->u.map.m[i]);
            m->u.map.n--;
            return;
        }
}

dra_err def_set_sorted(dra_arena *a, dra_doc *m, const char *key, dra_doc *v)
{
    size_t n, len = strlen(key), at;
    dra_err e;
    if (!v)
        return DRA_ENOMEM;
    if (def_get(m, key))
        return def_set(a, m, key, v, NULL);
    n = m->u.map.n;
    if ((e = dra_doc_map_set(a, m, key, v)))
        return e;
    for (at = 0; at < n; at++) {
        const dra_doc_member *mm = &m->u.map.m[at];
        size_t k = mm->keylen < len ? mm->keylen : len;
        int c = memcmp(mm->key, key, k);
        if (c > 0 || (c == 0 && mm->keylen > len))
            break;
    }
    if (at < n)
        rotate_last(m, at);
    return DRA_OK;
}

dra_doc *def_child(dra_arena *a, dra_doc *m, const char *key, const char *const *order,
                   dra_err *e)
{
    dra_doc *v = def_get(m, key);
    *e = DRA_OK;
    if (v && v->kind == DRA_DOC_MAP)
        return v;
    if (v && v->kind != DRA_DOC_NULL)
        return NULL;
    v = dra_doc_new_map(a, 2);
    if ((*e = def_set(a, m, key, v, order)))
        return NULL;
    return v;
}

dra_doc *def_extra(dra_arena *a, dra_doc **extra)
{
    if (!*extra)
        *extra = dra_doc_new_map(a, 4);
    return *extra;
}

void def_reorder(dra_doc *m, const char *const *order)
{
    if (!m || m->kind != DRA_DOC_MAP)
        return;
    /* Insertion sort: stable, no allocation, and these maps are small. */
    for (size_t i = 1; i < m->u.map.n; i++) {
        dra_doc_member x = m->u.map.m[i];
        size_t r = rank(x.key, x.keylen, order), j = i;
        while (j > 0 && rank(m->u.map.m[j - 1].key, m->u.map.m[j - 1].keylen, order) > r) {
            m->u.map.m[j] = m->u.map.m[j - 1];
            j--;
        }
        m->u.map.m[j] = x;
    }
}

/* ---- resource lists --------------------------------------------------------------- */

int def_round_milli(dra_quantity *q)
{
    __int128 div = 1, rem;
    int32_t shift;
    if (q->scale >= -3)
        return 0;
    /* Past 10^38 every mantissa this type holds is below one milli. */
    shift = -3 - q->scale;
    if (shift > 38) {
        rem = q->mant;
        q->mant = 0;
    } else {
        for (int32_t i = 0; i < shift; i++)
            div *= 10;
        rem = q->mant % div;
        q->mant /= div;
    }
    if (rem > 0)
        q->mant += 1;
    else if (rem < 0)
        q->mant -= 1;
    q->scale = -3;
    q->flags &= ~DRA_QTY_F_TEXT;
    return 1;
}

/* Parses one ResourceList value as kube's JSON decoder reads it: a
 * string, or a bare number by its text. */
static int value_qty(const dra_doc *v, dra_quantity *q)
{
    char tmp[32];
    const char *s = NULL;
    size_t len = 0;
    dra_buf b;
    int ok;
    if (v->kind == DRA_DOC_STRING) {
        s = v->u.str.s;
        len = v->u.str.len;
    } else if (v->kind == DRA_DOC_INT) {
        int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v->u.i);
        s = tmp;
        len = n > 0 ? (size_t)n : 0;
    } else if (v->kind == DRA_DOC_FLOAT && v->u.f.num) {
        s = v->u.f.num;
        len = strlen(s);
    } else if (v->kind == DRA_DOC_FLOAT) {
        /* A YAML number with no JSON text of its own (0297, .5): by the
         * JSON it prints as, which is what kube's decoder would see. */
        dra_buf_init(&b, NULL);
        ok = dra_doc_to_json(v, 0, &b) == DRA_OK && b.p &&
             dra_quantity_parse(b.p, b.len, q) == DRA_OK;
        dra_buf_fini(&b);
        return ok;
    }
    return s && dra_quantity_parse(s, len, q) == DRA_OK;
}

dra_err def_round_list(dra_arena *a, dra_doc *list)
{
    if (!list || list->kind != DRA_DOC_MAP)
        return DRA_OK;
    for (size_t i = 0; i < list->u.map.n; i++) {
        dra_doc **v = &list->u.map.m[i].val;
        dra_quantity q;
        char buf[DRA_QTY_STR_MAX];
        int changed;
        size_t n;
        if (!value_qty(*v, &q))
            continue;
        changed = def_round_milli(&q);
        /* Text upstream keeps verbatim (canonical-looking input) stays. */
        if (!changed && (*v)->kind == DRA_DOC_STRING && (q.flags & DRA_QTY_F_TEXT))
            continue;
        n = dra_quantity_str(&q, buf, sizeof buf);
        if (!(*v = dra_doc_new_string(a, buf, n < sizeof buf ? n : sizeof buf - 1)))
            return DRA_ENOMEM;
    }
    return DRA_OK;
}

/* ---- image references ---------------------------------------------------------------
 * The grammar of github.com/distribution/reference, which kubelet's
 * parsers.ParseImageName uses through ParseNormalizedNamed. */

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static int hexdig(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* path-component: [a-z0-9]+ joined by "." "_" "__" or runs of "-". */
static int path_component_ok(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t b = i;
        while (i < n && lower_alnum(s[i]))
            i++;
        if (i == b)
            return 0;
        if (i == n)
            return 1;
        if (s[i] == '.')
            i++;
        else if (s[i] == '_')
            i += i + 1 < n && s[i + 1] == '_' ? 2 : 1;
        else if (s[i] == '-')
            while (i < n && s[i] == '-')
                i++;
        else
            return 0;
        if (i == n)
            return 0;
    }
    return 0;
}

static int path_ok(const char *s, size_t n)
{
    size_t st = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '/') {
            if (!path_component_ok(s + st, i - st))
                return 0;
            st = i + 1;
        }
    return 1;
}

/* host[:port], host a dotted name of [a-zA-Z0-9-] labels (no '-' at
 * either end) or a bracketed IPv6 address. */
static int domain_ok(const char *s, size_t n)
{
    size_t i = 0;
    if (n && s[0] == '[') {
        for (i = 1; i < n && (hexdig(s[i]) || s[i] == ':'); i++)
            ;
        if (i == 1 || i >= n || s[i] != ']')
            return 0;
        i++;
    } else {
        for (;;) {
            size_t b = i;
            while (i < n && (alnum(s[i]) || s[i] == '-'))
                i++;
            if (i == b || s[b] == '-' || s[i - 1] == '-')
                return 0;
            if (i < n && s[i] == '.' && ++i)
                continue;
            break;
        }
    }
    if (i == n)
        return 1;
    if (s[i] != ':' || ++i == n)
        return 0;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
static int tag_ok(const char *s, size_t n)
{
    if (!n || n > 128 || !(alnum(s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(alnum(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
            return 0;
    return 1;
}

/* A digest go-digest accepts: a registered algorithm and lowercase hex
 * of its length. */
static int digest_ok(const char *s, size_t n)
{
    static const struct { const char *alg; size_t hex; } algs[] = {
        {"sha256", 64}, {"sha384", 96}, {"sha512", 128}};
    for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++) {
        size_t al = strlen(algs[k].alg);
        if (n != al + 1 + algs[k].hex || memcmp(s, algs[k].alg, al) || s[al] != ':')
            continue;
        for (size_t i = al + 1; i < n; i++)
            if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                return 0;
        return 1;
    }
    return 0;
}

/* splitDockerDomain: the first component is a registry when it has a
 * dot, a colon or capitals, or is "localhost". */
static size_t domain_len(const char *s)
{
    const char *slash = strchr(s, '/');
    size_t n;
    if (!slash)
        return 0;
    n = (size_t)(slash - s);
    if (n == 9 && !memcmp(s, "localhost", 9))
        return n;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.' || s[i] == ':' || (s[i] >= 'A' && s[i] <= 'Z'))
            return n;
    return 0;
}

/* Parses |image|; 1 when valid, with its tag (NULL when none) and
 * whether a digest was given. */
static int parse_image(const char *image, const char **tag, size_t *taglen, int *digest)
{
    size_t len = strlen(image), dom = domain_len(image), n, k = 0, norm;
    const char *rest = dom ? image + dom + 1 : image, *at;
    size_t last_slash = (size_t)-1, last_colon = (size_t)-1;
    *tag = NULL;
    *taglen = 0;
    *digest = 0;
    while (k < len && ((image[k] >= '0' && image[k] <= '9') || (image[k] >= 'a' && image[k] <= 'f')))
        k++;
    if (len == 64 && k == 64) /* an image ID, refused as a name */
        return 0;
    if (dom && !domain_ok(image, dom))
        return 0;
    at = strchr(rest, '@');
    n = at ? (size_t)(at - rest) : strlen(rest);
    if (at && !(*digest = digest_ok(at + 1, strlen(at + 1))))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (rest[i] == '/')
            last_slash = i;
        else if (rest[i] == ':')
            last_colon = i;
    }
    /* A colon after the last slash starts the tag. */
    if (last_colon != (size_t)-1 && (last_slash == (size_t)-1 || last_colon > last_slash)) {
        *tag = rest + last_colon + 1;
        *taglen = n - last_colon - 1;
        if (!tag_ok(*tag, *taglen))
            return 0;
        n = last_colon;
    }
    if (!path_ok(rest, n))
        return 0;
    /* The length limit is on the normalised name (docker.io/library/x). */
    norm = (dom ? dom : 9) + 1 + n + (!dom && !memchr(rest, '/', n) ? 8 : 0);
    return norm <= 255;
}

const char *def_pull_policy(const char *image)
{
    const char *tag;
    size_t taglen;
    int digest;
    if (!image || !parse_image(image, &tag, &taglen, &digest))
        return "IfNotPresent";
    if (tag ? taglen == 6 && !memcmp(tag, "latest", 6) : !digest)
        return "Always";
    return "IfNotPresent";
}

/* ---- Namespace and Event -------------------------------------------------------------- */

static const char *const meta_order[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
    "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
    "labels", "annotations", "ownerReferences", "finalizers", "managedFields", NULL};
static const char *const ns_order[] = {"kind", "apiVersion", "metadata", "spec", "status", NULL};
static const char *const ns_status_order[] = {"phase", "conditions", NULL};
static const char *const event_order[] = {
    "kind", "apiVersion", "metadata", "involvedObject", "reason", "message", "source",
    "firstTimestamp", "lastTimestamp", "count", "type", "eventTime", "series", "action",
    "related", "reportingComponent", "reportingInstance", NULL};

/* On create the namespace controller's finalizer is added to whatever
 * the client sent (the registry's PrepareForCreate). */
static dra_err ns_finalizer(dra_arena *a, dra_doc *obj)
{
    dra_err e;
    dra_doc *spec = def_child(a, obj, "spec", ns_order, &e), *fin;
    if (!spec)
        return e;
    fin = def_get(spec, "finalizers");
    if (fin && fin->kind == DRA_DOC_LIST)
        for (size_t i = 0; i < fin->u.list.n; i++)
            if (fin->u.list.items[i]->kind == DRA_DOC_STRING &&
                !strcmp(fin->u.list.items[i]->u.str.s, "kubernetes"))
                return DRA_OK;
    if (fin && fin->kind != DRA_DOC_LIST && fin->kind != DRA_DOC_NULL)
        return DRA_OK;
    if (!fin || fin->kind == DRA_DOC_NULL) {
        if ((e = def_set(a, spec, "finalizers", dra_doc_new_list(a, 1), NULL)))
            return e;
        fin = def_get(spec, "finalizers");
    }
    {
        dra_doc *s = dra_doc_new_string(a, "kubernetes", 10);
        return s ? dra_doc_list_push(a, fin, s) : DRA_ENOMEM;
    }
}

/* SetDefaults_Namespace (the kubernetes.io/metadata.name label, which
 * always follows the name), SetDefaults_NamespaceStatus, and on create
 * the registry's status {phase: Active} and finalizer. */
static dra_err ns_defaults(const def_ctx *c, dra_doc *obj)
{
    dra_doc *meta = def_map(obj, "metadata"), *labels, *status;
    const char *name = def_str(meta, "name");
    dra_err e = DRA_OK;
    if (name && *name) {
        if (!(labels = def_child(c->a, meta, "labels", meta_order, &e)))
            return e;
        if ((e = def_set_sorted(c->a, labels, "kubernetes.io/metadata.name",
                                dra_doc_new_string(c->a, name, strlen(name)))))
            return e;
    }
    if (c->op == DRA_API_OP_CREATE) {
        if ((e = def_set(c->a, obj, "status", dra_doc_new_map(c->a, 1), ns_order)) ||
            (e = ns_finalizer(c->a, obj)))
            return e;
    } else if (def_get(obj, "spec") == NULL &&
               (e = def_set(c->a, obj, "spec", dra_doc_new_map(c->a, 0), ns_order))) {
        return e;
    }
    if ((status = def_child(c->a, obj, "status", ns_order, &e)) &&
        (e = def_put_str(c->a, status, "phase", "Active", ns_status_order, DEF_ZERO)))
        return e;
    def_reorder(obj, ns_order);
    return e;
}

/* core/v1 Event has no defaulter; what kube-apiserver adds are the zero
 * values its encoder writes for fields without omitempty (or struct
 * fields, which omitempty never drops), in Go's field order. */
static dra_err event_defaults(const def_ctx *c, dra_doc *obj)
{
    static const char *const nulls[] = {"firstTimestamp", "lastTimestamp", "eventTime"};
    dra_err e;
    if ((e = def_put(c->a, obj, "involvedObject", dra_doc_new_map(c->a, 0), event_order, DEF_NIL)) ||
        (e = def_put(c->a, obj, "source", dra_doc_new_map(c->a, 0), event_order, DEF_NIL)) ||
        (e = def_put_str(c->a, obj, "reportingComponent", "", event_order, DEF_NIL)) ||
        (e = def_put_str(c->a, obj, "reportingInstance", "", event_order, DEF_NIL)))
        return e;
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (!def_get(obj, nulls[i]) &&
            (e = def_set(c->a, obj, nulls[i], dra_doc_new_null(c->a), event_order)))
            return e;
    def_reorder(obj, event_order);
    return DRA_OK;
}

dra_err dra_api_default_doc(dra_arena *a, dra_doc *obj, dra_api_op op, dra_diag *d)
{
    def_ctx c = {a, op, d};
    const char *av = def_str(obj, "apiVersion"), *kind = def_str(obj, "kind");
    if (!a || !obj || obj->kind != DRA_DOC_MAP)
        return DRA_EINVAL;
    if (!av || strcmp(av, "v1") || !kind)
        return DRA_OK;
    if (!strcmp(kind, "Namespace"))
        return ns_defaults(&c, obj);
    if (!strcmp(kind, "Event"))
        return event_defaults(&c, obj);
    return DRA_OK;
}
