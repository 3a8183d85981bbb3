/*
 * table.c: the Table framework (column definitions, rows, row objects as
 * PartialObjectMetadata or the full object, list metadata), ages with
 * apimachinery's HumanDuration, RFC 3339 parsing, and the printers of
 * the resource.k8s.io kinds. The core/v1 printers live in table_core.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "table_int.h"

const char api_tdesc_name[] =
    "Name must be unique within a namespace. Is required when creating resources, "
    "although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const char api_tdesc_age[] =
    "CreationTimestamp is a timestamp representing the server time when this object "
    "was created. It is not guaranteed to be set in happens-before order across "
    "separate operations. Clients may not set this value. It is represented in "
    "RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for "
    "lists. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata";

/* ---- small builders ---------------------------------------------------- */

dra_doc *api_t_str(tctx *t, const char *s)
{
    dra_doc *d = dra_doc_new_string(t->a, s ? s : "", s ? strlen(s) : 0);
    if (!d)
        t->oom = 1;
    return d;
}

dra_doc *api_t_int(tctx *t, int64_t v)
{
    dra_doc *d = dra_doc_new_int(t->a, v);
    if (!d)
        t->oom = 1;
    return d;
}

dra_doc *api_t_null(tctx *t)
{
    dra_doc *d = dra_doc_new_null(t->a);
    if (!d)
        t->oom = 1;
    return d;
}

void api_t_push(tctx *t, dra_doc *list, dra_doc *v)
{
    if (!list || !v || dra_doc_list_push(t->a, list, v) != DRA_OK)
        t->oom = 1;
}

void api_t_set(tctx *t, dra_doc *map, const char *k, dra_doc *v)
{
    if (!map || !v || dra_doc_map_set(t->a, map, k, v) != DRA_OK)
        t->oom = 1;
}

const char *api_t_fmt(tctx *t, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    char *s = dra_arena_strdup(t->a, tmp);
    if (!s)
        t->oom = 1;
    return s ? s : "";
}

const dra_doc *api_t_get(const dra_doc *obj, const char *path)
{
    char key[64];
    const dra_doc *cur = obj;
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = dra_doc_get(cur, key);
        path += n + (dot ? 1 : 0);
    }
    return cur;
}

const char *api_t_gets(const dra_doc *obj, const char *path)
{
    const dra_doc *v = api_t_get(obj, path);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

int64_t api_t_geti(const dra_doc *obj, const char *path, int64_t dflt)
{
    const dra_doc *v = api_t_get(obj, path);
    if (v && v->kind == DRA_DOC_INT)
        return v->u.i;
    if (v && v->kind == DRA_DOC_FLOAT)
        return (int64_t)v->u.f.f;
    return dflt;
}

/* ---- time --------------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int api_table_parse_time(const char *s, int64_t *ns)
{
    int y, mo, d, h, mi, sec, oh = 0, om = 0;
    int64_t frac = 0, scale = 1000000000;
    if (!s || strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' ||
        !digits(s + 5, 2, &mo) || s[7] != '-' || !digits(s + 8, 2, &d) ||
        (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &h) || s[13] != ':' ||
        !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return 0;
    s += 19;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9') {
            if (scale > 1) {
                scale /= 10;
                frac += (*s - '0') * scale;
            }
            s++;
        }
    }
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s == '-' ? -1 : 1;
        if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om))
            return 0;
        oh *= sign;
        om *= sign;
        s += 6;
    } else {
        return 0;
    }
    if (*s)
        return 0;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
                   (oh * 3600 + om * 60);
    *ns = secs * 1000000000 + frac;
    return 1;
}

char *api_table_human_duration(int64_t d, char *buf, size_t size)
{
    const int64_t S = 1000000000, M = 60 * S, H = 60 * M;
    int64_t seconds = d / S, minutes, hours;
    if (seconds < -1) {
        snprintf(buf, size, "<invalid>");
    } else if (seconds < 0) {
        snprintf(buf, size, "0s");
    } else if (seconds < 120) {
        snprintf(buf, size, "%llds", (long long)seconds);
    } else if ((minutes = d / M) < 10) {
        int64_t s = (d / S) % 60;
        if (s == 0)
            snprintf(buf, size, "%lldm", (long long)minutes);
        else
            snprintf(buf, size, "%lldm%llds", (long long)minutes, (long long)s);
    } else if (minutes < 60 * 3) {
        snprintf(buf, size, "%lldm", (long long)minutes);
    } else if ((hours = d / H) < 8) {
        int64_t m = (d / M) % 60;
        if (m == 0)
            snprintf(buf, size, "%lldh", (long long)hours);
        else
            snprintf(buf, size, "%lldh%lldm", (long long)hours, (long long)m);
    } else if (hours < 48) {
        snprintf(buf, size, "%lldh", (long long)hours);
    } else if (hours < 24 * 8) {
        if (hours % 24 == 0)
            snprintf(buf, size, "%lldd", (long long)(hours / 24));
        else
            snprintf(buf, size, "%lldd%lldh", (long long)(hours / 24), (long long)(hours % 24));
    } else if (hours < 24 * 365 * 2) {
        snprintf(buf, size, "%lldd", (long long)(hours / 24));
    } else if (hours < 24 * 365 * 8) {
        int64_t dy = (hours / 24) % 365;
        if (dy == 0)
            snprintf(buf, size, "%lldy", (long long)(hours / 24 / 365));
        else
            snprintf(buf, size, "%lldy%lldd", (long long)(hours / 24 / 365), (long long)dy);
    } else {
        snprintf(buf, size, "%lldy", (long long)(hours / 24 / 365));
    }
    return buf;
}

int api_t_has_time(const char *ts)
{
    int64_t ns;
    return ts && api_table_parse_time(ts, &ns);
}

const char *api_t_since(tctx *t, const char *ts)
{
    char buf[32];
    int64_t ns;
    if (!ts || !api_table_parse_time(ts, &ns))
        return "<unknown>";
    api_table_human_duration(t->now_ns - ns, buf, sizeof buf);
    return api_t_fmt(t, "%s", buf);
}

/* ---- resource.k8s.io printers ------------------------------------------- */

static const tcol cols_name_age[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Age", "string", "", api_tdesc_age, 0},
};

static void row_name_age(tctx *t, const dra_doc *obj, dra_doc *cells, dra_doc **cond)
{
    (void)cond;
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "metadata.name")));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(obj, "metadata.creationTimestamp"))));
}

static const tcol cols_claim[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"State", "string", "", "A summary of the current state (allocated, pending, reserved, etc.).", 0},
    {"Age", "string", "", api_tdesc_age, 0},
};

static void row_claim(tctx *t, const dra_doc *obj, dra_doc *cells, dra_doc **cond)
{
    char state[64] = "";
    int deleting = api_t_has_time(api_t_gets(obj, "metadata.deletionTimestamp"));
    const dra_doc *alloc = api_t_get(obj, "status.allocation");
    const dra_doc *rf = api_t_get(obj, "status.reservedFor");
    (void)cond;
    if (deleting)
        strcat(state, "deleted");
    if (!alloc || alloc->kind == DRA_DOC_NULL) {
        if (!deleting)
            strcat(state, "pending");
    } else {
        strcat(state, deleting ? ",allocated" : "allocated");
        if (rf && rf->kind == DRA_DOC_LIST && rf->u.list.n > 0)
            strcat(state, ",reserved");
    }
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "metadata.name")));
    api_t_push(t, cells, api_t_str(t, state));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(obj, "metadata.creationTimestamp"))));
}

static const tcol cols_slice[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Node", "string", "",
     "NodeName identifies the node which provides the resources in this pool. A field "
     "selector can be used to list only ResourceSlice objects belonging to a certain "
     "node.\n\nThis field can be used to limit access from nodes to ResourceSlices "
     "with the same node name. It also indicates to autoscalers that adding new nodes "
     "of the same type as some old node might also make new resources available.\n\n"
     "Exactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection "
     "must be set. This field is immutable.", 0},
    {"Driver", "string", "",
     "Driver identifies the DRA driver providing the capacity information. A field "
     "selector can be used to list only ResourceSlice objects with a certain driver "
     "name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the "
     "vendor of the driver. It should use only lower case characters. This field is "
     "immutable.", 0},
    {"Pool", "string", "",
     "Name is used to identify the pool. For node-local devices, this is often the "
     "node name, but this is not required.\n\nIt must not be longer than 253 "
     "characters and must consist of one or more DNS sub-domains separated by "
     "slashes. This field is immutable.", 0},
    {"Age", "string", "", api_tdesc_age, 0},
};

static void row_slice(tctx *t, const dra_doc *obj, dra_doc *cells, dra_doc **cond)
{
    const char *node = api_t_gets(obj, "spec.nodeName");
    (void)cond;
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "metadata.name")));
    /* v1's nodeName is a pointer: unset prints as a null cell (blank) */
    api_t_push(t, cells, node ? api_t_str(t, node) : api_t_null(t));
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "spec.driver")));
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "spec.pool.name")));
    api_t_push(t, cells, api_t_str(t, api_t_since(t, api_t_gets(obj, "metadata.creationTimestamp"))));
}

#define NCOLS(c) (sizeof c / sizeof c[0])
static const tprinter p_name_age = {cols_name_age, NCOLS(cols_name_age), row_name_age};
static const tprinter p_claim = {cols_claim, NCOLS(cols_claim), row_claim};
static const tprinter p_slice = {cols_slice, NCOLS(cols_slice), row_slice};

/* Upstream's default for kinds without a printer. */
static const tcol cols_default[] = {
    {"Name", "string", "name", api_tdesc_name, 0},
    {"Created At", "date", "", api_tdesc_age, 0},
};

static void row_default(tctx *t, const dra_doc *obj, dra_doc *cells, dra_doc **cond)
{
    const char *ts = api_t_gets(obj, "metadata.creationTimestamp");
    (void)cond;
    api_t_push(t, cells, api_t_str(t, api_t_gets(obj, "metadata.name")));
    api_t_push(t, cells, ts ? api_t_str(t, ts) : api_t_null(t));
}

static const tprinter p_default = {cols_default, NCOLS(cols_default), row_default};

static const tprinter *printer_for(const api_resource *r)
{
    if (!*r->group) {
        const tprinter *p = api_t_core_printer(r->resource);
        return p ? p : &p_default;
    }
    if (!strcmp(r->group, "resource.k8s.io")) {
        if (!strcmp(r->resource, "resourceclaims"))
            return &p_claim;
        if (!strcmp(r->resource, "resourceslices"))
            return &p_slice;
        if (!strcmp(r->resource, "deviceclasses") ||
            !strcmp(r->resource, "resourceclaimtemplates"))
            return &p_name_age;
    }
    return &p_default;
}

/* ---- the Table ------------------------------------------------------------ */

static dra_doc *columns(tctx *t, const tprinter *p)
{
    dra_doc *l = dra_doc_new_list(t->a, p->ncols);
    if (!l)
        t->oom = 1;
    for (size_t i = 0; i < p->ncols; i++) {
        dra_doc *c = dra_doc_new_map(t->a, 5);
        if (!c)
            t->oom = 1;
        api_t_set(t, c, "name", api_t_str(t, p->cols[i].name));
        api_t_set(t, c, "type", api_t_str(t, p->cols[i].type));
        api_t_set(t, c, "format", api_t_str(t, p->cols[i].format));
        api_t_set(t, c, "description", api_t_str(t, p->cols[i].desc));
        api_t_set(t, c, "priority", api_t_int(t, p->cols[i].priority));
        api_t_push(t, l, c);
    }
    return l;
}

static dra_doc *row_object(tctx *t, const dra_doc *obj, api_table_include inc)
{
    if (inc == API_TABLE_NONE)
        return api_t_null(t);
    if (inc == API_TABLE_OBJECT)
        return (dra_doc *)obj;
    dra_doc *m = dra_doc_new_map(t->a, 3);
    if (!m)
        t->oom = 1;
    api_t_set(t, m, "kind", api_t_str(t, "PartialObjectMetadata"));
    api_t_set(t, m, "apiVersion", api_t_str(t, "meta.k8s.io/v1"));
    const dra_doc *md = dra_doc_get(obj, "metadata");
    if (md)
        api_t_set(t, m, "metadata", (dra_doc *)md);
    else
        api_t_set(t, m, "metadata", dra_doc_new_map(t->a, 0));
    return m;
}

static dra_doc *row(tctx *t, const tprinter *p, const dra_doc *obj, api_table_include inc)
{
    dra_doc *r = dra_doc_new_map(t->a, 3), *cells = dra_doc_new_list(t->a, p->ncols);
    dra_doc *cond = NULL;
    if (!r || !cells)
        t->oom = 1;
    p->row(t, obj, cells, &cond);
    api_t_set(t, r, "cells", cells);
    if (cond)
        api_t_set(t, r, "conditions", cond);
    api_t_set(t, r, "object", row_object(t, obj, inc));
    return r;
}

dra_err api_table_build(dra_arena *a, const api_resource *res,
                        const dra_doc *const *objs, size_t n,
                        const api_table_opts *opts, dra_doc **out)
{
    tctx t = {a, opts ? opts->now_ns : 0, 0};
    api_table_opts dflt = {0};
    if (!a || !res || !out || (n && !objs))
        return DRA_EINVAL;
    if (!opts)
        opts = &dflt;
    *out = NULL;
    const tprinter *p = printer_for(res);
    dra_doc *tab = dra_doc_new_map(a, 5), *meta = dra_doc_new_map(a, 3);
    dra_doc *rows = dra_doc_new_list(a, n ? n : 1);
    if (!tab || !meta || !rows)
        return DRA_ENOMEM;
    api_t_set(&t, tab, "kind", api_t_str(&t, "Table"));
    api_t_set(&t, tab, "apiVersion", api_t_str(&t, "meta.k8s.io/v1"));
    if (opts->resource_version && *opts->resource_version)
        api_t_set(&t, meta, "resourceVersion", api_t_str(&t, opts->resource_version));
    if (opts->continue_ && *opts->continue_) {
        api_t_set(&t, meta, "continue", api_t_str(&t, opts->continue_));
        if (opts->has_remaining)
            api_t_set(&t, meta, "remainingItemCount", dra_doc_new_int(a, opts->remaining));
    }
    api_t_set(&t, tab, "metadata", meta);
    api_t_set(&t, tab, "columnDefinitions", opts->no_headers ? api_t_null(&t) : columns(&t, p));
    for (size_t i = 0; i < n; i++)
        api_t_push(&t, rows, row(&t, p, objs[i], opts->include));
    api_t_set(&t, tab, "rows", rows);
    if (t.oom)
        return DRA_ENOMEM;
    *out = tab;
    return DRA_OK;
}

dra_err api_table_parse_include(const char *s, api_table_include *out, dra_kstatus *st)
{
    if (!s || !*s || !strcmp(s, "Metadata"))
        *out = API_TABLE_METADATA;
    else if (!strcmp(s, "None"))
        *out = API_TABLE_NONE;
    else if (!strcmp(s, "Object"))
        *out = API_TABLE_OBJECT;
    else {
        if (st) {
            st->code = 400;
            snprintf(st->reason, sizeof st->reason, "BadRequest");
            snprintf(st->message, sizeof st->message,
                     "includeObject: Unsupported value: \"%.200s\": supported values: "
                     "\"Metadata\", \"None\", \"Object\"", s);
        }
        return DRA_EINVAL;
    }
    return DRA_OK;
}
