/*
 * k8spb.c: Kubernetes protobuf request bodies -> dra_doc. A bounded,
 * checked reader of protobuf's wire format (varints and length-delimited
 * fields) drives static schemas written from upstream's field numbers
 * (apimachinery runtime and meta/v1, api core/v1 generated.proto); the
 * decoded object is then written out with Go's JSON rules, so the API
 * server's JSON write path sees what the same object sent as JSON gives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "k8spb.h"

/* ---- schemas ------------------------------------------------------------------ */

typedef enum pb_kind {
    PB_STR,     /* string, wire type 2 */
    PB_BOOL,    /* varint */
    PB_I64,     /* varint */
    PB_I32,     /* varint, truncated to 32 bits as Go does */
    PB_TIME,    /* metav1.Time: {seconds 1, nanos 2}; JSON RFC 3339 or null */
    PB_MSG,     /* an embedded message with its own schema */
    PB_MAP,     /* map<string,string>: entries {key 1, value 2} */
    PB_RAWJSON  /* metav1.FieldsV1 {Raw 1}: JSON text, emitted as that JSON */
} pb_kind;

/* How Go's JSON encoder treats the field: without a flag it is a value
 * field with omitempty (left out when zero); PB_PTR is a pointer (kept
 * whenever it was on the wire); PB_ALWAYS has no omitempty (or is a struct,
 * which omitempty does not drop) and is written even when absent. */
enum { PB_REP = 1, PB_PTR = 2, PB_ALWAYS = 4 };

typedef struct pb_msg pb_msg;
typedef struct pb_field {
    uint32_t num;
    unsigned char kind, flags;
    const char *json;
    const pb_msg *sub; /* PB_MSG */
} pb_field;
struct pb_msg {
    const pb_field *f; /* in Go struct order, which is JSON order */
    size_t n;
};
#define PB_MSGDEF(name, ...)                                                    \
    static const pb_field name##_f[] = {__VA_ARGS__};                           \
    static const pb_msg name = {name##_f, sizeof name##_f / sizeof name##_f[0]}

/* meta/v1 */
PB_MSGDEF(m_owner_ref,
          {5, PB_STR, PB_ALWAYS, "apiVersion", NULL},
          {1, PB_STR, PB_ALWAYS, "kind", NULL},
          {3, PB_STR, PB_ALWAYS, "name", NULL},
          {4, PB_STR, PB_ALWAYS, "uid", NULL},
          {6, PB_BOOL, PB_PTR, "controller", NULL},
          {7, PB_BOOL, PB_PTR, "blockOwnerDeletion", NULL});
PB_MSGDEF(m_managed_fields,
          {1, PB_STR, 0, "manager", NULL},
          {2, PB_STR, 0, "operation", NULL},
          {3, PB_STR, 0, "apiVersion", NULL},
          {4, PB_TIME, PB_PTR, "time", NULL},
          {6, PB_STR, 0, "fieldsType", NULL},
          {7, PB_RAWJSON, PB_PTR, "fieldsV1", NULL},
          {8, PB_STR, 0, "subresource", NULL});
PB_MSGDEF(m_object_meta,
          {1, PB_STR, 0, "name", NULL},
          {2, PB_STR, 0, "generateName", NULL},
          {3, PB_STR, 0, "namespace", NULL},
          {4, PB_STR, 0, "selfLink", NULL},
          {5, PB_STR, 0, "uid", NULL},
          {6, PB_STR, 0, "resourceVersion", NULL},
          {7, PB_I64, 0, "generation", NULL},
          {8, PB_TIME, 0, "creationTimestamp", NULL},
          {9, PB_TIME, PB_PTR, "deletionTimestamp", NULL},
          {10, PB_I64, PB_PTR, "deletionGracePeriodSeconds", NULL},
          {11, PB_MAP, 0, "labels", NULL},
          {12, PB_MAP, 0, "annotations", NULL},
          {13, PB_MSG, PB_REP, "ownerReferences", &m_owner_ref},
          {14, PB_STR, PB_REP, "finalizers", NULL},
          {17, PB_MSG, PB_REP, "managedFields", &m_managed_fields});
PB_MSGDEF(m_preconditions,
          {1, PB_STR, PB_PTR, "uid", NULL},
          {2, PB_STR, PB_PTR, "resourceVersion", NULL});
PB_MSGDEF(m_delete_options,
          {1, PB_I64, PB_PTR, "gracePeriodSeconds", NULL},
          {2, PB_MSG, PB_PTR, "preconditions", &m_preconditions},
          {3, PB_BOOL, PB_PTR, "orphanDependents", NULL},
          {4, PB_STR, PB_PTR, "propagationPolicy", NULL},
          {5, PB_STR, PB_REP, "dryRun", NULL},
          {6, PB_BOOL, PB_PTR, "ignoreStoreReadErrorWithClusterBreakingPotential", NULL});

/* core/v1 */
PB_MSGDEF(m_ns_condition,
          {1, PB_STR, PB_ALWAYS, "type", NULL},
          {2, PB_STR, PB_ALWAYS, "status", NULL},
          {4, PB_TIME, PB_ALWAYS, "lastTransitionTime", NULL},
          {5, PB_STR, 0, "reason", NULL},
          {6, PB_STR, 0, "message", NULL});
PB_MSGDEF(m_ns_spec, {1, PB_STR, PB_REP, "finalizers", NULL});
PB_MSGDEF(m_ns_status,
          {1, PB_STR, 0, "phase", NULL},
          {2, PB_MSG, PB_REP, "conditions", &m_ns_condition});
PB_MSGDEF(m_namespace,
          {1, PB_MSG, PB_ALWAYS, "metadata", &m_object_meta},
          {2, PB_MSG, PB_ALWAYS, "spec", &m_ns_spec},
          {3, PB_MSG, PB_ALWAYS, "status", &m_ns_status});

/* The decodable kinds; NULL api_version: any version (options kinds are
 * registered in every group version). */
static const struct {
    const char *api_version, *kind;
    const pb_msg *m;
} kinds[] = {
    {"v1", "Namespace", &m_namespace},
    {NULL, "DeleteOptions", &m_delete_options},
};

static const pb_msg *kind_schema(const char *av, const char *kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i].kind) &&
            (!kinds[i].api_version || !strcmp(av, kinds[i].api_version)))
            return kinds[i].m;
    return NULL;
}

int k8spb_kind_known(const char *api_version, const char *kind)
{
    return kind && kind_schema(api_version ? api_version : "", kind) != NULL;
}

/* ---- the reader ------------------------------------------------------------------ */

typedef struct pb_ctx {
    dra_arena *a;
    dra_diag *d;
    const unsigned char *base; /* the body, for byte offsets in messages */
    size_t items;
    char path[256];
    size_t plen;
} pb_ctx;

typedef struct pb_rd {
    const unsigned char *p, *end;
} pb_rd;

/* Records the failure at the current path; returns |e|. */
static dra_err fail(pb_ctx *c, dra_err e, const unsigned char *at, const char *fmt, ...)
    DRA_PRINTF(4, 5);
static dra_err fail(pb_ctx *c, dra_err e, const unsigned char *at, const char *fmt, ...)
{
    char msg[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at && c->base && at > c->base)
        dra_diag_add(c->d, c->path, 0, 0, "%s (at byte %zu)", msg, (size_t)(at - c->base));
    else
        dra_diag_add(c->d, c->path, 0, 0, "%s", msg);
    return e;
}

/* Appends ".name" (or "name" at the top) or "[i]" to the path; returns
 * the old length for path_pop. A path longer than the buffer is cut. */
static size_t path_push(pb_ctx *c, const char *name, long idx)
{
    size_t old = c->plen, cap = sizeof c->path - c->plen;
    int n = idx >= 0 ? snprintf(c->path + c->plen, cap, "[%ld]", idx)
                     : snprintf(c->path + c->plen, cap, "%s%s", c->plen ? "." : "", name);
    if (n > 0)
        c->plen = (size_t)n < cap ? c->plen + (size_t)n : sizeof c->path - 1;
    return old;
}

static void path_pop(pb_ctx *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

static dra_err count_item(pb_ctx *c, const unsigned char *at)
{
    if (++c->items > K8SPB_MAX_ITEMS)
        return fail(c, DRA_ELIMIT, at, "more than %u values in the body", K8SPB_MAX_ITEMS);
    return DRA_OK;
}

static dra_err rd_varint(pb_ctx *c, pb_rd *r, uint64_t *v)
{
    const unsigned char *start = r->p;
    uint64_t x = 0;
    *v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        unsigned char b;
        if (r->p >= r->end)
            return fail(c, DRA_EPARSE, start, "unexpected end of data in a varint");
        b = *r->p++;
        /* The tenth byte may carry only bit 63. */
        if (shift == 63 && b > 1)
            break;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return DRA_OK;
        }
    }
    return fail(c, DRA_EPARSE, start, "a varint overflows 64 bits");
}

/* A length-delimited payload: its bytes, checked against what is left. */
static dra_err rd_bytes(pb_ctx *c, pb_rd *r, pb_rd *out)
{
    const unsigned char *start = r->p;
    uint64_t n;
    dra_err e;
    out->p = out->end = r->p;
    if ((e = rd_varint(c, r, &n)))
        return e;
    if (n > (uint64_t)(r->end - r->p))
        return fail(c, DRA_EPARSE, start,
                    "a length of %llu bytes runs past the end of its message (%zu left)",
                    (unsigned long long)n, (size_t)(r->end - r->p));
    out->p = r->p;
    out->end = r->p + n;
    r->p += n;
    return DRA_OK;
}

static dra_err rd_tag(pb_ctx *c, pb_rd *r, uint32_t *num, unsigned *wt)
{
    const unsigned char *start = r->p;
    uint64_t v;
    dra_err e;
    *num = 0;
    *wt = 0;
    if ((e = rd_varint(c, r, &v)))
        return e;
    if (v >> 32 || (v >> 3) == 0)
        return fail(c, DRA_EPARSE, start, "an invalid field number");
    *num = (uint32_t)(v >> 3);
    *wt = (unsigned)(v & 7);
    return DRA_OK;
}

/* Skips one field of wire type |wt| (its tag already read). Groups (wire
 * types 3 and 4, obsolete but valid) are skipped to their end tag with
 * their nesting bounded. */
static dra_err rd_skip(pb_ctx *c, pb_rd *r, uint32_t num, unsigned wt)
{
    uint32_t open[K8SPB_MAX_DEPTH];
    size_t depth = 0;
    const unsigned char *start = r->p;
    for (;;) {
        uint64_t v;
        pb_rd sub;
        dra_err e = DRA_OK;
        switch (wt) {
        case 0: e = rd_varint(c, r, &v); break;
        case 1:
        case 5:
            if ((size_t)(r->end - r->p) < (wt == 1 ? 8u : 4u))
                return fail(c, DRA_EPARSE, start, "unexpected end of data in a fixed-size field");
            r->p += wt == 1 ? 8 : 4;
            break;
        case 2: e = rd_bytes(c, r, &sub); break;
        case 3:
            if (depth == K8SPB_MAX_DEPTH)
                return fail(c, DRA_ELIMIT, start, "groups nested too deeply");
            open[depth++] = num;
            break;
        case 4:
            if (!depth || open[depth - 1] != num)
                return fail(c, DRA_EPARSE, start, "an end-group tag without its group");
            depth--;
            break;
        default:
            return fail(c, DRA_EPARSE, start, "an invalid wire type (6 or 7)");
        }
        if (e || !depth)
            return e;
        if ((e = rd_tag(c, r, &num, &wt)))
            return e;
    }
}

/* ---- decoded state ---------------------------------------------------------------- */

typedef struct pb_obj pb_obj;
typedef struct pb_slot {
    dra_doc *v;            /* scalar, string list, string map, time, raw JSON */
    pb_obj *obj, **tail;   /* PB_MSG: the message, or the list of repeated ones */
    size_t n;              /* repeated messages in the list */
} pb_slot;
struct pb_obj {
    const pb_msg *m;
    pb_slot *s; /* one per field of m */
    pb_obj *next;
};

static pb_obj *obj_new(pb_ctx *c, const pb_msg *m)
{
    pb_obj *o = dra_arena_zalloc(c->a, sizeof *o);
    if (!o || !(o->s = dra_arena_array(c->a, m->n, sizeof *o->s)))
        return NULL;
    o->m = m;
    return o;
}

static dra_err msg_read(pb_ctx *c, pb_obj *o, pb_rd r);

static dra_err str_doc(pb_ctx *c, pb_rd b, dra_doc **out)
{
    dra_err e;
    if ((e = count_item(c, b.p)))
        return e;
    *out = dra_doc_new_string(c->a, (const char *)b.p, (size_t)(b.end - b.p));
    return *out ? DRA_OK : DRA_ENOMEM;
}

/* metav1.Time's Unmarshal: empty is the zero time (JSON null); otherwise
 * the seconds (nanoseconds are dropped, as upstream drops them), written
 * as RFC 3339 in UTC. */
static dra_err time_doc(pb_ctx *c, pb_rd b, dra_doc **out)
{
    int64_t secs = 0;
    char buf[80];
    struct tm tm;
    time_t t;
    dra_err e;
    if (b.p == b.end) {
        *out = dra_doc_new_null(c->a);
        return *out ? DRA_OK : DRA_ENOMEM;
    }
    while (b.p < b.end) {
        uint32_t num;
        unsigned wt;
        uint64_t v;
        if ((e = rd_tag(c, &b, &num, &wt)))
            return e;
        if (num == 1 && wt == 0) {
            if ((e = rd_varint(c, &b, &v)))
                return e;
            secs = (int64_t)v;
        } else if ((num == 1 || num == 2) && wt != 0) {
            return fail(c, DRA_EPARSE, b.p, "a time field with a wire type other than varint");
        } else if ((e = rd_skip(c, &b, num, wt))) {
            return e;
        }
    }
    /* 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z, Timestamp's range. */
    if (secs < -62135596800LL || secs > 253402300799LL)
        return fail(c, DRA_EPARSE, b.p, "a time outside years 1 to 9999");
    t = (time_t)secs;
    if (!gmtime_r(&t, &tm))
        return fail(c, DRA_EPARSE, b.p, "a time that cannot be represented");
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if ((e = count_item(c, b.p)))
        return e;
    *out = dra_doc_new_string(c->a, buf, strlen(buf));
    return *out ? DRA_OK : DRA_ENOMEM;
}

/* One map<string,string> entry into the map |*m| (created on first use);
 * a missing key or value is "", a repeated key keeps its last value. */
static dra_err map_entry(pb_ctx *c, pb_rd b, dra_doc **m)
{
    pb_rd kv[2] = {{b.p, b.p}, {b.p, b.p}};
    dra_doc *val;
    char *key;
    dra_err e;
    while (b.p < b.end) {
        uint32_t num;
        unsigned wt;
        if ((e = rd_tag(c, &b, &num, &wt)))
            return e;
        if ((num == 1 || num == 2) && wt != 2)
            return fail(c, DRA_EPARSE, b.p, "a map key or value that is not length-delimited");
        if ((num == 1 || num == 2) ? (e = rd_bytes(c, &b, &kv[num - 1]))
                                   : (e = rd_skip(c, &b, num, wt)))
            return e;
    }
    if (memchr(kv[0].p, 0, (size_t)(kv[0].end - kv[0].p)))
        return fail(c, DRA_EPARSE, kv[0].p, "a map key with a NUL byte");
    if ((e = str_doc(c, kv[1], &val)))
        return e;
    if (!*m && !(*m = dra_doc_new_map(c->a, 4)))
        return DRA_ENOMEM;
    key = dra_arena_strndup(c->a, (const char *)kv[0].p, (size_t)(kv[0].end - kv[0].p));
    if (!key)
        return DRA_ENOMEM;
    return dra_doc_map_set(c->a, *m, key, val);
}

/* metav1.FieldsV1: its Raw (field 1, the last one wins) is JSON text.
 * A FieldsV1 without Raw keeps what an earlier one gave (messages merge),
 * or is null. */
static dra_err rawjson_doc(pb_ctx *c, pb_rd b, dra_doc **out)
{
    pb_rd raw = {NULL, NULL};
    dra_diag jd;
    dra_err e;
    while (b.p < b.end) {
        uint32_t num;
        unsigned wt;
        if ((e = rd_tag(c, &b, &num, &wt)))
            return e;
        if (num == 1 && wt != 2)
            return fail(c, DRA_EPARSE, b.p, "Raw is not length-delimited");
        if (num == 1 ? (e = rd_bytes(c, &b, &raw)) : (e = rd_skip(c, &b, num, wt)))
            return e;
    }
    if (!raw.p || raw.p == raw.end) {
        if (!*out && !(*out = dra_doc_new_null(c->a)))
            return DRA_ENOMEM;
        return DRA_OK;
    }
    if ((e = count_item(c, raw.p)))
        return e;
    dra_diag_init(&jd, c->a->mem);
    jd.max = 1;
    e = dra_doc_parse_json(c->a, (const char *)raw.p, (size_t)(raw.end - raw.p), out, &jd);
    if (e && e != DRA_ENOMEM) {
        const char *why = dra_diag_first(&jd);
        e = fail(c, e == DRA_ELIMIT ? DRA_ELIMIT : DRA_EPARSE, raw.p, "Raw is not JSON: %s",
                 why ? why : "malformed");
    }
    dra_diag_fini(&jd);
    return e;
}

static dra_err list_push(pb_ctx *c, dra_doc **list, dra_doc *item)
{
    if (!*list && !(*list = dra_doc_new_list(c->a, 4)))
        return DRA_ENOMEM;
    return dra_doc_list_push(c->a, *list, item);
}

/* A length-delimited field of message-like kind: decoded into slot |s|. */
static dra_err field_delimited(pb_ctx *c, const pb_field *f, pb_slot *s, pb_rd b)
{
    dra_doc *v;
    pb_obj *o;
    dra_err e;
    switch ((pb_kind)f->kind) {
    case PB_STR:
        if ((e = str_doc(c, b, &v)))
            return e;
        if (f->flags & PB_REP)
            return list_push(c, &s->v, v);
        s->v = v;
        return DRA_OK;
    case PB_TIME:
        /* Time's own Unmarshal resets it: the last occurrence wins. */
        return time_doc(c, b, &s->v);
    case PB_MAP:
        return map_entry(c, b, &s->v);
    case PB_RAWJSON:
        return rawjson_doc(c, b, &s->v);
    case PB_MSG:
        if (!(f->flags & PB_REP) && s->obj) {
            o = s->obj; /* a repeated embedded message merges */
        } else {
            if ((e = count_item(c, b.p)))
                return e;
            if (!(o = obj_new(c, f->sub)))
                return DRA_ENOMEM;
            if (!s->tail)
                s->tail = &s->obj;
            *s->tail = o;
            s->tail = &o->next;
            s->n++;
        }
        return msg_read(c, o, b);
    default:
        return DRA_EINVAL;
    }
}

static dra_err field_varint(pb_ctx *c, const pb_field *f, pb_slot *s, uint64_t v,
                            const unsigned char *at)
{
    dra_err e;
    if ((e = count_item(c, at)))
        return e;
    if (f->kind == PB_BOOL)
        s->v = dra_doc_new_bool(c->a, v != 0);
    else if (f->kind == PB_I32)
        s->v = dra_doc_new_int(c->a, (int32_t)(uint32_t)v);
    else
        s->v = dra_doc_new_int(c->a, (int64_t)v);
    return s->v ? DRA_OK : DRA_ENOMEM;
}

static const char *wire_name(unsigned wt)
{
    static const char *const names[] = {"varint", "fixed64", "length-delimited",
                                        "start-group", "end-group", "fixed32",
                                        "invalid (6)", "invalid (7)"};
    return names[wt & 7];
}

/* One field whose tag has been read. */
static dra_err field_read(pb_ctx *c, pb_obj *o, size_t i, unsigned wt, pb_rd *r)
{
    const pb_field *f = &o->m->f[i];
    pb_slot *s = &o->s[i];
    int varint = f->kind == PB_BOOL || f->kind == PB_I64 || f->kind == PB_I32;
    const unsigned char *at = r->p;
    size_t old = path_push(c, f->json, -1);
    dra_err e;
    if (f->kind == PB_MSG && (f->flags & PB_REP))
        path_push(c, "", (long)s->n);
    if (wt != (varint ? 0u : 2u)) {
        e = fail(c, DRA_EPARSE, at, "the field has wire type %s, not %s", wire_name(wt),
                 varint ? "varint" : "length-delimited");
    } else if (varint) {
        uint64_t v;
        e = rd_varint(c, r, &v);
        if (!e)
            e = field_varint(c, f, s, v, at);
    } else {
        pb_rd b;
        e = rd_bytes(c, r, &b);
        if (!e)
            e = field_delimited(c, f, s, b);
    }
    path_pop(c, old);
    return e;
}

static dra_err msg_read(pb_ctx *c, pb_obj *o, pb_rd r)
{
    while (r.p < r.end) {
        uint32_t num;
        unsigned wt;
        size_t i;
        dra_err e;
        if ((e = rd_tag(c, &r, &num, &wt)))
            return e;
        for (i = 0; i < o->m->n && o->m->f[i].num != num; i++)
            ;
        e = i < o->m->n ? field_read(c, o, i, wt, &r) : rd_skip(c, &r, num, wt);
        if (e)
            return e;
    }
    return DRA_OK;
}

/* ---- writing the object out as Go's JSON encoder would ----------------------------- */

static int doc_is_zero(const dra_doc *v)
{
    switch (v->kind) {
    case DRA_DOC_STRING: return v->u.str.len == 0;
    case DRA_DOC_BOOL: return !v->u.b;
    case DRA_DOC_INT: return v->u.i == 0;
    case DRA_DOC_LIST: return v->u.list.n == 0;
    case DRA_DOC_MAP: return v->u.map.n == 0;
    case DRA_DOC_NULL: return 1; /* a zero metav1.Time */
    default: return 0;
    }
}

/* The JSON of a field that never came on the wire but is written anyway. */
static dra_doc *zero_doc(pb_ctx *c, const pb_field *f)
{
    switch ((pb_kind)f->kind) {
    case PB_STR: return dra_doc_new_string(c->a, "", 0);
    case PB_BOOL: return dra_doc_new_bool(c->a, 0);
    case PB_I64:
    case PB_I32: return dra_doc_new_int(c->a, 0);
    case PB_MSG: return dra_doc_new_map(c->a, 0);
    default: return dra_doc_new_null(c->a);
    }
}

static dra_err obj_emit(pb_ctx *c, const pb_obj *o, dra_doc *m);

static dra_err field_emit(pb_ctx *c, const pb_field *f, const pb_slot *s, dra_doc **out)
{
    dra_doc *v = NULL;
    dra_err e;
    *out = NULL;
    if (f->kind == PB_MSG && (f->flags & PB_REP)) {
        if (!s->n)
            return DRA_OK;
        if (!(v = dra_doc_new_list(c->a, s->n)))
            return DRA_ENOMEM;
        for (const pb_obj *p = s->obj; p; p = p->next) {
            dra_doc *item = dra_doc_new_map(c->a, p->m->n);
            if (!item)
                return DRA_ENOMEM;
            if ((e = obj_emit(c, p, item)) || (e = dra_doc_list_push(c->a, v, item)))
                return e;
        }
    } else if (f->kind == PB_MSG && s->obj) {
        if (!(v = dra_doc_new_map(c->a, s->obj->m->n)))
            return DRA_ENOMEM;
        if ((e = obj_emit(c, s->obj, v)))
            return e;
    } else if (f->kind != PB_MSG && s->v) {
        v = s->v;
        if (!(f->flags & (PB_PTR | PB_ALWAYS)) && doc_is_zero(v))
            v = NULL;
    }
    if (!v && (f->flags & PB_ALWAYS) && !(v = zero_doc(c, f)))
        return DRA_ENOMEM;
    *out = v;
    return DRA_OK;
}

/* The fields of |o| into the map |m|, in schema (Go struct) order. The
 * recursion follows the static schemas, so its depth is theirs. */
static dra_err obj_emit(pb_ctx *c, const pb_obj *o, dra_doc *m)
{
    for (size_t i = 0; i < o->m->n; i++) {
        dra_doc *v;
        dra_err e = field_emit(c, &o->m->f[i], &o->s[i], &v);
        if (!e && v)
            e = dra_doc_map_set(c->a, m, o->m->f[i].json, v);
        if (e)
            return e;
    }
    return DRA_OK;
}

/* ---- the envelope ------------------------------------------------------------------ */

typedef struct pb_unknown {
    pb_rd av, kind; /* runtime.TypeMeta {apiVersion 1, kind 2} */
    pb_rd raw;
} pb_unknown;

static dra_err type_meta_read(pb_ctx *c, pb_rd b, pb_unknown *u)
{
    while (b.p < b.end) {
        uint32_t num;
        unsigned wt;
        dra_err e;
        if ((e = rd_tag(c, &b, &num, &wt)))
            return e;
        if ((num == 1 || num == 2) && wt != 2)
            return fail(c, DRA_EPARSE, b.p, "typeMeta: field %u has wire type %s, not "
                        "length-delimited", (unsigned)num, wire_name(wt));
        e = num == 1   ? rd_bytes(c, &b, &u->av)
            : num == 2 ? rd_bytes(c, &b, &u->kind)
                       : rd_skip(c, &b, num, wt);
        if (e)
            return e;
    }
    return DRA_OK;
}

/* runtime.Unknown {typeMeta 1, raw 2, contentEncoding 3, contentType 4}.
 * The last raw wins; typeMeta merges. contentEncoding and contentType are
 * checked and ignored: kube-apiserver's decoder reads raw as protobuf
 * whatever they say. */
static dra_err unknown_read(pb_ctx *c, pb_rd r, pb_unknown *u)
{
    while (r.p < r.end) {
        uint32_t num;
        unsigned wt;
        pb_rd b;
        dra_err e;
        if ((e = rd_tag(c, &r, &num, &wt)))
            return e;
        if (num >= 1 && num <= 4 && wt != 2)
            return fail(c, DRA_EPARSE, r.p, "runtime.Unknown: field %u has wire type %s, not "
                        "length-delimited", (unsigned)num, wire_name(wt));
        if (num < 1 || num > 4) {
            e = rd_skip(c, &r, num, wt);
        } else if (!(e = rd_bytes(c, &r, &b))) {
            if (num == 1)
                e = type_meta_read(c, b, u);
            else if (num == 2)
                u->raw = b;
        }
        if (e)
            return e;
    }
    return DRA_OK;
}

static char *rd_str(pb_ctx *c, pb_rd b)
{
    return b.p ? dra_arena_strndup(c->a, (const char *)b.p, (size_t)(b.end - b.p))
               : dra_arena_strdup(c->a, "");
}

/* The object: apiVersion and kind from the envelope, then its fields. */
static dra_err object_doc(pb_ctx *c, const pb_msg *m, const char *av, const char *kind,
                          pb_rd raw, dra_doc **out)
{
    pb_obj *o = obj_new(c, m);
    dra_doc *d = dra_doc_new_map(c->a, m->n + 2);
    dra_doc *s;
    dra_err e;
    if (!o || !d)
        return DRA_ENOMEM;
    if ((e = msg_read(c, o, raw)))
        return e;
    if (*av && (!(s = dra_doc_new_string(c->a, av, strlen(av))) ||
                dra_doc_map_set(c->a, d, "apiVersion", s)))
        return DRA_ENOMEM;
    if (*kind && (!(s = dra_doc_new_string(c->a, kind, strlen(kind))) ||
                  dra_doc_map_set(c->a, d, "kind", s)))
        return DRA_ENOMEM;
    if ((e = obj_emit(c, o, d)))
        return e;
    *out = d;
    return DRA_OK;
}

dra_err k8spb_decode(dra_arena *a, const void *body, size_t len, const char *dflt_av,
                     const char *dflt_kind, dra_doc **out, dra_diag *d)
{
    static const unsigned char magic[4] = {'k', '8', 's', 0};
    pb_ctx c;
    pb_unknown u;
    const pb_msg *m;
    const char *av, *kind, *bav, *bkind;
    dra_err e;
    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&u, 0, sizeof u);
    c.a = a;
    c.d = d;
    c.base = body;
    if (!a || (!body && len))
        return DRA_EINVAL;
    if (len > K8SPB_MAX_BYTES)
        return fail(&c, DRA_ELIMIT, c.base, "the body is over %u bytes", K8SPB_MAX_BYTES);
    /* upstream's messages for the three cases its decoder checks first */
    if (!len)
        return fail(&c, DRA_EPARSE, c.base, "empty data");
    if (len < 4 || memcmp(body, magic, 4))
        return fail(&c, DRA_EPARSE, c.base, "provided data does not appear to be a protobuf "
                    "message, expected prefix [107 56 115 0]");
    if (len == 4)
        return fail(&c, DRA_EPARSE, c.base, "empty body");
    if ((e = unknown_read(&c, (pb_rd){c.base + 4, c.base + len}, &u)))
        return e;
    if (!(bav = rd_str(&c, u.av)) || !(bkind = rd_str(&c, u.kind)))
        return DRA_ENOMEM;
    av = *bav ? bav : dflt_av ? dflt_av : "";
    kind = *bkind ? bkind : dflt_kind ? dflt_kind : "";
    if (!*kind)
        return fail(&c, DRA_EPARSE, c.base, "Object 'Kind' is missing in "
                    "'runtime.TypeMeta{APIVersion:\"%.64s\", Kind:\"\"}'", bav);
    if (!(m = kind_schema(av, kind))) {
        dra_diag_add(d, "", 0, 0, "%.64s in version \"%.64s\" cannot be decoded from protobuf",
                     kind, av);
        return DRA_EUNSUPPORTED;
    }
    if (!u.raw.p)
        u.raw = (pb_rd){c.base, c.base};
    return object_doc(&c, m, bav, bkind, u.raw, out);
}
