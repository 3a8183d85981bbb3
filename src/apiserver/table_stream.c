/*
 * table_stream.c: Tables of stored objects written straight to the
 * answer, row by row, for lists, single objects and watch events. The
 * bytes are those api_table_build's document would encode to, but no
 * document of the whole Table is built: each row's cells come from the
 * printer over a scratch document reset per row, and each row's object
 * (PartialObjectMetadata, or the object itself) is copied from the stored
 * JSON instead of being parsed and encoded again. For the resource.k8s.io
 * kinds the scratch document holds only the members their printers read
 * (a sparse read that skips the rest, such as a slice's devices).
 */
#include <stddef.h>
#include <string.h>

#include "table_int.h"

/* ---- a sparse read of stored JSON -------------------------------------- */

/* Skips the JSON value at |p| (stored JSON: valid, compact or not);
 * returns the byte after it, or NULL when the text ends first. */
static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The byte after the string starting at |p| (a '"'). */
static const char *skip_string(const char *p, const char *end)
{
    const char *start = ++p;
    while (p < end) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        size_t bs = 0;
        if (!q)
            return NULL;
        /* Escaped when an odd run of backslashes precedes it. */
        while (q - bs > start && q[-1 - (ptrdiff_t)bs] == '\\')
            bs++;
        if (!(bs & 1))
            return q + 1;
        p = q + 1;
    }
    return NULL;
}

static const char *skip_value(const char *p, const char *end)
{
    int depth = 0;
    p = skip_ws(p, end);
    if (p >= end)
        return NULL;
    if (*p != '{' && *p != '[' && *p != '"') {
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' &&
               *p != '\n' && *p != '\r' && *p != '\t')
            p++;
        return p;
    }
    while (p < end) {
        switch (*p) {
        case '"':
            if (!(p = skip_string(p, end)))
                return NULL;
            if (!depth)
                return p;
            continue;
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            if (--depth == 0)
                return p + 1;
            break;
        default:
            break;
        }
        p++;
    }
    return NULL;
}

/* Whether |path| (dotted) is |pre| + "." + |key|, or goes below it. */
static int path_match(const char *path, const char *pre, size_t pl, const char *key,
                      size_t kl, int *below)
{
    const char *rest = path;
    if (pl) {
        if (strncmp(rest, pre, pl) || rest[pl] != '.')
            return 0;
        rest += pl + 1;
    }
    if (strncmp(rest, key, kl) || (rest[kl] && rest[kl] != '.'))
        return 0;
    *below = rest[kl] == '.';
    return 1;
}

typedef struct sparse {
    dra_arena *a;
    const char *const *paths;
    size_t npaths;
    const char *meta;   /* the top level's "metadata" value, raw */
    size_t meta_len;
    int err;
} sparse;

/* Reads the object at |p| (prefix |pre|, |pl| bytes) into map |m|,
 * keeping the members some path names or goes through. Returns the byte
 * after the object, NULL on malformed text. */
static const char *sparse_obj(sparse *sp, const char *p, const char *end,
                              const char *pre, size_t pl, dra_doc *m)
{
    char path[256];
    p = skip_ws(p, end);
    if (p >= end || *p != '{')
        return NULL;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}')
        return p + 1;
    while (p < end) {
        const char *ks, *ke, *vs, *ve;
        int want = 0, below = 0;
        size_t kl;
        if (*p != '"' || !(ke = skip_string(p, end)))
            return NULL;
        ks = p + 1;
        kl = (size_t)(ke - 1 - ks);
        p = skip_ws(ke, end);
        if (p >= end || *p != ':')
            return NULL;
        vs = skip_ws(p + 1, end);
        if (!(ve = skip_value(vs, end)))
            return NULL;
        for (size_t i = 0; i < sp->npaths && !want; i++) {
            int b = 0;
            if (path_match(sp->paths[i], pre, pl, ks, kl, &b)) {
                want = 1;
                below = b;
            }
        }
        if (!pl && kl == 8 && !memcmp(ks, "metadata", 8)) {
            sp->meta = vs;
            sp->meta_len = (size_t)(ve - vs);
        }
        if (want) {
            char *key = dra_arena_strndup(sp->a, ks, kl);
            dra_doc *v = NULL;
            if (!key) {
                sp->err = DRA_ENOMEM;
                return NULL;
            }
            if (below && *vs == '{' && pl + kl + 2 < sizeof path) {
                memcpy(path, pre, pl);
                path[pl] = '.';
                memcpy(path + (pl ? pl + 1 : 0), ks, kl);
                if (!(v = dra_doc_new_map(sp->a, 4)) ||
                    !sparse_obj(sp, vs, ve, path, (pl ? pl + 1 : 0) + kl, v))
                    return NULL;
            } else if (!below) {
                dra_err e = dra_doc_parse_json(sp->a, vs, (size_t)(ve - vs), &v, NULL);
                if (e) {
                    sp->err = e;
                    return NULL;
                }
            }
            if (v && dra_doc_map_set(sp->a, m, key, v)) {
                sp->err = DRA_ENOMEM;
                return NULL;
            }
        }
        p = skip_ws(ve, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        return p < end && *p == '}' ? p + 1 : NULL;
    }
    return NULL;
}

/* ---- printers' reads ------------------------------------------------------- */

/* What each resource.k8s.io printer reads (table.c); other kinds are
 * read whole. */
static const char *const p_meta[] = {"metadata.name", "metadata.creationTimestamp",
                                     "metadata.deletionTimestamp"};
static const char *const p_slice[] = {"metadata.name", "metadata.creationTimestamp",
                                      "spec.nodeName", "spec.driver", "spec.pool.name"};
static const char *const p_claim[] = {"metadata.name", "metadata.creationTimestamp",
                                      "metadata.deletionTimestamp", "status.allocation",
                                      "status.reservedFor"};

static const char *const *reads(const api_resource *res, size_t *n)
{
    if (strcmp(res->group, "resource.k8s.io"))
        return NULL;
    if (!strcmp(res->resource, "resourceslices")) {
        *n = sizeof p_slice / sizeof *p_slice;
        return p_slice;
    }
    if (!strcmp(res->resource, "resourceclaims")) {
        *n = sizeof p_claim / sizeof *p_claim;
        return p_claim;
    }
    *n = sizeof p_meta / sizeof *p_meta;
    return p_meta;
}

/* The object as the printer needs it, and its raw metadata. */
static dra_err read_obj(dra_arena *a, const api_resource *res, const char *json,
                        size_t len, dra_doc **out, const char **meta, size_t *meta_len)
{
    size_t n = 0;
    const char *const *paths = reads(res, &n);
    sparse sp = {a, paths, n, NULL, 0, 0};
    dra_doc *d;
    if (!paths) {
        /* Whole: the raw metadata is still found by the sparse walk,
         * which keeps nothing. */
        dra_err e = dra_doc_parse_json(a, json, len, out, NULL);
        if (e)
            return e;
        sp.npaths = 0;
        if (!(d = dra_doc_new_map(a, 1)))
            return DRA_ENOMEM;
        sparse_obj(&sp, json, json + len, "", 0, d);
        *meta = sp.meta;
        *meta_len = sp.meta_len;
        return (*out)->kind == DRA_DOC_MAP ? DRA_OK : DRA_EPARSE;
    }
    if (!(d = dra_doc_new_map(a, 4)))
        return DRA_ENOMEM;
    if (!sparse_obj(&sp, json, json + len, "", 0, d))
        return sp.err ? sp.err : DRA_EPARSE;
    *out = d;
    *meta = sp.meta;
    *meta_len = sp.meta_len;
    return DRA_OK;
}

/* ---- the Table, streamed ------------------------------------------------------ */

dra_err api_table_stream_begin(dra_arena *scratch, const api_resource *res,
                               const api_table_opts *opts, dra_buf *out)
{
    dra_doc *t;
    size_t before = out->len;
    dra_err e = api_table_build(scratch, res, NULL, 0, opts, &t);
    if (e || (e = dra_doc_to_json(t, 0, out)))
        return e;
    dra_arena_reset(scratch);
    /* The empty Table ends with "rows":[]}: rows follow from there. */
    if (out->len < before + 2 || memcmp(out->p + out->len - 2, "]}", 2))
        return DRA_EINVAL;
    out->len -= 2;
    out->p[out->len] = '\0';
    return DRA_OK;
}

static dra_err put_object(const api_table_opts *opts, const char *json, size_t len,
                          const char *meta, size_t meta_len, dra_buf *out)
{
    switch (opts->include) {
    case API_TABLE_NONE:
        return dra_buf_puts(out, "null");
    case API_TABLE_OBJECT:
        return dra_buf_append(out, json, len);
    default:
        dra_buf_puts(out, "{\"kind\":\"PartialObjectMetadata\","
                          "\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
        if (meta && meta_len && *meta == '{')
            dra_buf_append(out, meta, meta_len);
        else
            dra_buf_puts(out, "{}");
        return dra_buf_putc(out, '}');
    }
}

dra_err api_table_stream_row(dra_arena *scratch, const api_resource *res,
                             const api_table_opts *opts, int first,
                             const char *json, size_t len, dra_buf *out)
{
    api_table_opts one = *opts;
    const char *meta = NULL;
    size_t meta_len = 0, mark;
    dra_doc *obj, *t, *row;
    dra_err e = read_obj(scratch, res, json, len, &obj, &meta, &meta_len);
    if (e)
        goto done;
    /* The printer's row, with no object: its encoding ends with
     * "object":null}, where the stored bytes go instead. */
    one.include = API_TABLE_NONE;
    one.no_headers = 1;
    if ((e = api_table_build(scratch, res, (const dra_doc *const *)&obj, 1, &one, &t)))
        goto done;
    row = (dra_doc *)dra_doc_get(t, "rows");
    row = row && row->kind == DRA_DOC_LIST && row->u.list.n ? row->u.list.items[0] : NULL;
    if (!row) {
        e = DRA_EINVAL;
        goto done;
    }
    if (!first)
        dra_buf_putc(out, ',');
    mark = out->len;
    if ((e = dra_doc_to_json(row, 0, out)))
        goto done;
    if (out->len < mark + 5 || memcmp(out->p + out->len - 5, "null}", 5)) {
        e = DRA_EINVAL;
        goto done;
    }
    out->len -= 5;
    e = put_object(opts, json, len, meta, meta_len, out);
    if (!e)
        e = dra_buf_putc(out, '}');
done:
    dra_arena_reset(scratch);
    return e ? e : out->oom ? DRA_ENOMEM : DRA_OK;
}

dra_err api_table_stream_end(dra_buf *out)
{
    return dra_buf_puts(out, "]}");
}
