/* YAML stream -> dra_doc trees, over libyaml's event parser. Plain
 * scalars are typed the way go-yaml v2 (sigs.k8s.io/yaml, kubectl) types
 * them, map keys become strings the way sigs.k8s.io/yaml converts them,
 * duplicate keys are rejected like strict decoding, aliases share the
 * anchored subtree and their expansion is bounded (billion laughs). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "codec_int.h"

/* Alias expansion allowed on top of the real nodes: a fixed allowance
 * plus a multiple of the document's own size. */
#define YP_ALIAS_BASE 10000u
#define YP_ALIAS_RATIO 10u

typedef struct yent {
    const char *key;
    size_t keylen;
    dra_doc *val;
    int line;
    int merged;
} yent;

typedef struct yp {
    dra_arena *a;
    dra_diag *d;
    const char *text;
    yaml_parser_t parser;
    yaml_event_t ev;
    int have_ev;
    dra_err err;
    int depth;
    size_t real, total; /* nodes built; nodes incl. alias expansions */
    dra_map anchors;    /* name -> anchor record (arena) */
    yent *stk;
    size_t n, cap;
} yp;

typedef struct yanchor {
    dra_doc *node;
    size_t size;
} yanchor;

static void *yp_fail(yp *y, int line, int col, dra_err err, const char *fmt, ...)
    DRA_PRINTF(5, 6);
static void *yp_fail(yp *y, int line, int col, dra_err err, const char *fmt, ...)
{
    va_list ap;
    if (y->err)
        return NULL;
    y->err = err;
    va_start(ap, fmt);
    dra_diag_vadd(y->d, "", line, col, fmt, ap);
    va_end(ap);
    return NULL;
}

static void *yp_oom(yp *y)
{
    return yp_fail(y, 0, 0, DRA_ENOMEM, "out of memory");
}

/* Turn libyaml's error into "line:col: problem". Reader errors only carry
 * a byte offset, so their position is counted from the text. */
static void yp_libyaml_error(yp *y)
{
    yaml_parser_t *p = &y->parser;
    int line, col;
    if (p->error == YAML_MEMORY_ERROR) {
        yp_oom(y);
        return;
    }
    if (p->error == YAML_READER_ERROR) {
        line = 1, col = 1;
        for (size_t i = 0; i < p->problem_offset && y->text[i]; i++) {
            if (y->text[i] == '\n')
                line++, col = 1;
            else if (((unsigned char)y->text[i] & 0xC0) != 0x80)
                col++;
        }
        yp_fail(y, line, col, DRA_EPARSE, "%s", p->problem ? p->problem : "invalid input");
        return;
    }
    line = (int)p->problem_mark.line + 1;
    col = (int)p->problem_mark.column + 1;
    if (p->context && p->problem)
        yp_fail(y, line, col, DRA_EPARSE, "%s %s", p->problem, p->context);
    else
        yp_fail(y, line, col, DRA_EPARSE, "%s", p->problem ? p->problem : "syntax error");
}

static int yp_next(yp *y)
{
    if (y->have_ev)
        yaml_event_delete(&y->ev);
    y->have_ev = 0;
    if (!yaml_parser_parse(&y->parser, &y->ev)) {
        yp_libyaml_error(y);
        return 0;
    }
    y->have_ev = 1;
    return 1;
}

static int ev_line(const yaml_event_t *e) { return (int)e->start_mark.line + 1; }
static int ev_col(const yaml_event_t *e) { return (int)e->start_mark.column + 1; }

static int is_tag(const yaml_char_t *tag, const char *name)
{
    return tag && strcmp((const char *)tag, name) == 0;
}

static dra_doc *yp_node(yp *y, dra_doc_kind kind)
{
    dra_doc *d = codec_node(y->a, kind, ev_line(&y->ev), ev_col(&y->ev));
    if (!d)
        return yp_oom(y);
    y->real++;
    y->total++;
    return d;
}

/* A scalar node; |is_key| keeps non-finite floats (sigs.k8s.io/yaml turns
 * such keys into ".inf" etc.), values must fit JSON. */
static dra_doc *yp_scalar(yp *y, int is_key)
{
    const char *s = (const char *)y->ev.data.scalar.value;
    size_t len = y->ev.data.scalar.length;
    const yaml_char_t *tag = y->ev.data.scalar.tag;
    int plain = y->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    codec_yval v;
    codec_yres r = CODEC_Y_STR;
    dra_doc *d = yp_node(y, DRA_DOC_STRING);
    if (!d)
        return NULL;
    if (tag && strncmp((const char *)tag, "tag:yaml.org,2002:", 18) == 0 &&
        !is_tag(tag, "tag:yaml.org,2002:str") && !is_tag(tag, "tag:yaml.org,2002:binary")) {
        /* An explicit core tag must agree with the text, as in go-yaml. */
        const char *want = (const char *)tag + 18;
        int good;
        r = codec_yaml_resolve(s, len, &v);
        if (strcmp(want, "float") == 0 && (r == CODEC_Y_INT || r == CODEC_Y_UINT)) {
            v.f = r == CODEC_Y_INT ? (double)v.i : (double)v.u;
            r = CODEC_Y_FLOAT;
        }
        good = (strcmp(want, "null") == 0 && r == CODEC_Y_NULL) ||
               (strcmp(want, "bool") == 0 && r == CODEC_Y_BOOL) ||
               (strcmp(want, "int") == 0 && (r == CODEC_Y_INT || r == CODEC_Y_UINT)) ||
               (strcmp(want, "float") == 0 && r == CODEC_Y_FLOAT);
        if (!good)
            return yp_fail(y, d->line, d->col, DRA_EPARSE, "cannot decode `%.*s` as a !!%s",
                           (int)(len > 64 ? 64 : len), s, want);
    } else if (plain && !tag) {
        r = codec_yaml_resolve(s, len, &v);
    }
    switch (r) {
    case CODEC_Y_NULL:
        d->kind = DRA_DOC_NULL;
        return d;
    case CODEC_Y_BOOL:
        d->kind = DRA_DOC_BOOL;
        d->u.b = v.b;
        return d;
    case CODEC_Y_INT:
        d->kind = DRA_DOC_INT;
        d->u.i = v.i;
        return d;
    case CODEC_Y_UINT:
        d->kind = DRA_DOC_FLOAT;
        d->u.f.f = (double)v.u;
        if (!(d->u.f.num = dra_arena_sprintf(y->a, "%llu", (unsigned long long)v.u)))
            return yp_oom(y);
        return d;
    case CODEC_Y_FLOAT:
        d->kind = DRA_DOC_FLOAT;
        d->u.f.f = v.f;
        if (!is_key && !isfinite(v.f))
            return yp_fail(y, d->line, d->col, DRA_EPARSE,
                           "%.*s: infinity and NaN cannot be represented in JSON",
                           (int)(len > 64 ? 64 : len), s);
        /* Keep the text when JSON can carry it verbatim (big numbers). */
        if (codec_is_json_number(s, len) && !(d->u.f.num = dra_arena_strndup(y->a, s, len)))
            return yp_oom(y);
        return d;
    default:
        break;
    }
    if (!(d->u.str.s = dra_arena_strndup(y->a, s, len)))
        return yp_oom(y);
    d->u.str.len = len;
    return d;
}

static int yp_push(yp *y, const char *key, size_t keylen, dra_doc *val, int line, int merged)
{
    void *v = y->stk;
    if (dra_grow(y->a->mem, &v, &y->cap, y->n + 1, sizeof *y->stk) != DRA_OK) {
        yp_oom(y);
        return 0;
    }
    y->stk = v;
    y->stk[y->n] = (yent){key, keylen, val, line, merged};
    y->n++;
    return 1;
}

static dra_doc *yp_value(yp *y, int is_key);

static dra_doc *yp_seq(yp *y)
{
    dra_doc *d = yp_node(y, DRA_DOC_LIST), *item;
    size_t base = y->n;
    if (!d)
        return NULL;
    for (;;) {
        if (!yp_next(y))
            return NULL;
        if (y->ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        if (!(item = yp_value(y, 0)) || !yp_push(y, NULL, 0, item, 0, 0))
            return NULL;
    }
    d->u.list.n = y->n - base;
    if (!(d->u.list.items = codec_items(y->a, d->u.list.n)) && d->u.list.n)
        return yp_oom(y);
    for (size_t i = 0; i < d->u.list.n; i++)
        d->u.list.items[i] = y->stk[base + i].val;
    y->n = base;
    return d;
}

/* The string sigs.k8s.io/yaml makes of a non-string key. */
static const char *yp_key_string(yp *y, const dra_doc *k, size_t *len)
{
    dra_buf b;
    char *s;
    switch (k->kind) {
    case DRA_DOC_STRING:
        *len = k->u.str.len;
        return k->u.str.s;
    case DRA_DOC_BOOL:
        s = dra_arena_strdup(y->a, k->u.b ? "true" : "false");
        break;
    case DRA_DOC_INT:
        s = dra_arena_sprintf(y->a, "%lld", (long long)k->u.i);
        break;
    case DRA_DOC_FLOAT:
        if (k->u.f.num && !strpbrk(k->u.f.num, ".eE")) {
            s = dra_arena_strdup(y->a, k->u.f.num); /* an unsigned integer */
            break;
        }
        /* Floats become strconv.FormatFloat(f, 'g', -1, 32). */
        dra_buf_init(&b, y->a->mem);
        codec_put_g_float(&b, k->u.f.f, 1);
        s = b.oom ? NULL : dra_arena_strndup(y->a, b.p, b.len);
        dra_buf_fini(&b);
        break;
    case DRA_DOC_NULL:
        return yp_fail(y, k->line, k->col, DRA_EPARSE, "unsupported map key: null");
    default:
        return yp_fail(y, k->line, k->col, DRA_EPARSE,
                       "unsupported map key: a %s cannot be a key",
                       k->kind == DRA_DOC_MAP ? "mapping" : "sequence");
    }
    if (!s)
        return yp_oom(y);
    *len = strlen(s);
    return s;
}

/* Strict decoding: a key may appear once (merged keys excepted). Small
 * maps scan; from 32 keys on a hash index maps key -> line. */
static int yp_dup_check(yp *y, size_t base, dra_map *idx, size_t *nexplicit,
                        const char *key, size_t klen, const dra_doc *k)
{
    int prev = 0;
    if (*nexplicit < 32) {
        for (size_t i = base; i < y->n && !prev; i++)
            if (!y->stk[i].merged && y->stk[i].keylen == klen &&
                memcmp(y->stk[i].key, key, klen) == 0)
                prev = y->stk[i].line;
    } else {
        if (idx->live == 0)
            for (size_t i = base; i < y->n; i++)
                if (!y->stk[i].merged &&
                    dra_map_put(idx, y->stk[i].key, y->stk[i].keylen,
                                (void *)(intptr_t)y->stk[i].line) != DRA_OK)
                    goto oom;
        prev = (int)(intptr_t)dra_map_get(idx, key, klen);
        if (!prev && dra_map_put(idx, key, klen, (void *)(intptr_t)k->line) != DRA_OK)
            goto oom;
    }
    if (prev) {
        yp_fail(y, k->line, k->col, DRA_EPARSE,
                "mapping key \"%s\" already defined at line %d", key, prev);
        return 1;
    }
    (*nexplicit)++;
    return 0;
oom:
    yp_oom(y);
    return 1;
}

/* "<<: *base" or "<<: [*a, *b]": queue the members of the merged maps. */
static int yp_merge(yp *y, const dra_doc *v, int line, int col)
{
    if (v->kind == DRA_DOC_MAP) {
        for (size_t i = 0; i < v->u.map.n; i++)
            if (!yp_push(y, v->u.map.m[i].key, v->u.map.m[i].keylen, v->u.map.m[i].val, line, 1))
                return 0;
        return 1;
    }
    if (v->kind == DRA_DOC_LIST) {
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (v->u.list.items[i]->kind != DRA_DOC_MAP) {
                yp_fail(y, line, col, DRA_EPARSE, "map merge requires map or sequence of maps as the value");
                return 0;
            }
            if (!yp_merge(y, v->u.list.items[i], line, col))
                return 0;
        }
        return 1;
    }
    yp_fail(y, line, col, DRA_EPARSE, "map merge requires map or sequence of maps as the value");
    return 0;
}

/* Builds the member array. With merges, explicit keys win over merged
 * ones and earlier merge sources over later ones (YAML merge spec). */
static int yp_map_finish(yp *y, dra_doc *d, size_t base, int merges)
{
    size_t n = 0, k = 0;
    dra_map seen;
    int ok = 1;
    dra_map_init(&seen, y->a->mem);
    if (merges) {
        for (size_t i = base; i < y->n && ok; i++)
            if (!y->stk[i].merged)
                ok = dra_map_put(&seen, y->stk[i].key, y->stk[i].keylen, &seen) == DRA_OK;
        for (size_t i = base; i < y->n && ok; i++) {
            yent *e = &y->stk[i];
            if (!e->merged)
                continue;
            if (dra_map_get(&seen, e->key, e->keylen))
                e->val = NULL; /* shadowed */
            else
                ok = dra_map_put(&seen, e->key, e->keylen, &seen) == DRA_OK;
        }
    }
    dra_map_fini(&seen);
    if (!ok) {
        yp_oom(y);
        return 0;
    }
    for (size_t i = base; i < y->n; i++)
        n += y->stk[i].val != NULL;
    d->u.map.n = n;
    if (!(d->u.map.m = codec_members(y->a, n)) && n) {
        yp_oom(y);
        return 0;
    }
    for (size_t i = base; i < y->n; i++) {
        if (!y->stk[i].val)
            continue;
        d->u.map.m[k].key = y->stk[i].key;
        d->u.map.m[k].keylen = y->stk[i].keylen;
        d->u.map.m[k].val = y->stk[i].val;
        k++;
    }
    y->n = base;
    return 1;
}

static int is_merge_key(const yaml_event_t *e)
{
    return e->type == YAML_SCALAR_EVENT && e->data.scalar.length == 2 &&
           memcmp(e->data.scalar.value, "<<", 2) == 0 &&
           e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
           (!e->data.scalar.tag || is_tag(e->data.scalar.tag, "tag:yaml.org,2002:merge"));
}

static dra_doc *yp_mapping(yp *y)
{
    dra_doc *d = yp_node(y, DRA_DOC_MAP), *k, *v;
    size_t base = y->n, nexplicit = 0;
    int merges = 0, ok = 0;
    dra_map idx;
    if (!d)
        return NULL;
    dra_map_init(&idx, y->a->mem);
    for (;;) {
        const char *key;
        size_t klen = 0;
        if (!yp_next(y))
            goto out;
        if (y->ev.type == YAML_MAPPING_END_EVENT)
            break;
        if (is_merge_key(&y->ev)) {
            int line = ev_line(&y->ev), col = ev_col(&y->ev);
            if (!yp_next(y) || !(v = yp_value(y, 0)) || !yp_merge(y, v, line, col))
                goto out;
            merges = 1;
            continue;
        }
        if (!(k = yp_value(y, 1)) || !(key = yp_key_string(y, k, &klen)))
            goto out;
        if (yp_dup_check(y, base, &idx, &nexplicit, key, klen, k))
            goto out;
        if (!yp_next(y) || !(v = yp_value(y, 0)) || !yp_push(y, key, klen, v, k->line, 0))
            goto out;
    }
    ok = yp_map_finish(y, d, base, merges);
out:
    dra_map_fini(&idx);
    return ok ? d : NULL;
}

static dra_doc *yp_alias(yp *y)
{
    const char *name = (const char *)y->ev.data.alias.anchor;
    yanchor *an = dra_map_get(&y->anchors, name, strlen(name));
    if (!an)
        return yp_fail(y, ev_line(&y->ev), ev_col(&y->ev), DRA_EPARSE,
                       "unknown anchor '%s' referenced", name);
    y->total += an->size;
    if (y->total - y->real > YP_ALIAS_BASE + YP_ALIAS_RATIO * y->real)
        return yp_fail(y, ev_line(&y->ev), ev_col(&y->ev), DRA_ELIMIT,
                       "document contains excessive aliasing");
    return an->node;
}

static int yp_anchor(yp *y, const yaml_char_t *anchor, dra_doc *node, size_t total0)
{
    yanchor *an;
    char *name;
    if (!anchor)
        return 1;
    an = dra_arena_alloc(y->a, sizeof *an);
    name = dra_arena_strdup(y->a, (const char *)anchor);
    if (!an || !name || dra_map_put(&y->anchors, name, strlen(name), an) != DRA_OK) {
        yp_oom(y);
        return 0;
    }
    an->node = node;
    an->size = y->total - total0;
    return 1;
}

/* The node whose first event is y->ev. */
static dra_doc *yp_value(yp *y, int is_key)
{
    size_t total0 = y->total;
    const yaml_char_t *anchor = NULL;
    yaml_char_t *anchor_copy = NULL;
    dra_doc *d;
    switch (y->ev.type) {
    case YAML_ALIAS_EVENT:
        return yp_alias(y);
    case YAML_SCALAR_EVENT:
        anchor = y->ev.data.scalar.anchor;
        d = yp_scalar(y, is_key);
        return d && yp_anchor(y, anchor, d, total0) ? d : NULL;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (y->depth >= DRA_DOC_MAX_DEPTH)
            return yp_fail(y, ev_line(&y->ev), ev_col(&y->ev), DRA_ELIMIT,
                           "exceeded max depth of %d", DRA_DOC_MAX_DEPTH);
        /* The anchor name dies with this event; keep it in the arena. */
        anchor = y->ev.type == YAML_SEQUENCE_START_EVENT ? y->ev.data.sequence_start.anchor
                                                         : y->ev.data.mapping_start.anchor;
        if (anchor && !(anchor_copy = (yaml_char_t *)dra_arena_strdup(y->a, (const char *)anchor)))
            return yp_oom(y);
        y->depth++;
        d = y->ev.type == YAML_SEQUENCE_START_EVENT ? yp_seq(y) : yp_mapping(y);
        y->depth--;
        return d && yp_anchor(y, anchor_copy, d, total0) ? d : NULL;
    default:
        return yp_fail(y, ev_line(&y->ev), ev_col(&y->ev), DRA_EPARSE, "unexpected YAML event");
    }
}

/* Collected documents grow in a dra_mem array, copied to the arena once. */
typedef struct ydocs {
    dra_doc **v;
    size_t n, cap;
} ydocs;

static int yp_stream(yp *y, ydocs *docs)
{
    if (!yp_next(y) || y->ev.type != YAML_STREAM_START_EVENT)
        return 0;
    for (;;) {
        dra_doc *root;
        void *v;
        if (!yp_next(y))
            return 0;
        if (y->ev.type == YAML_STREAM_END_EVENT)
            return 1;
        /* DOCUMENT_START, root node, DOCUMENT_END. */
        if (!yp_next(y) || !(root = yp_value(y, 0)) || !yp_next(y))
            return 0;
        dra_map_fini(&y->anchors); /* anchors do not cross documents */
        dra_map_init(&y->anchors, y->a->mem);
        if (root->kind == DRA_DOC_NULL)
            continue; /* empty documents are skipped, as kubectl does */
        v = docs->v;
        if (dra_grow(y->a->mem, &v, &docs->cap, docs->n + 1, sizeof *docs->v) != DRA_OK) {
            yp_oom(y);
            return 0;
        }
        docs->v = v;
        docs->v[docs->n++] = root;
    }
}

/* A stream that is one JSON document is decoded by the JSON parser: the
 * result is the same tree (JSON is YAML, and the typing agrees), it is
 * several times faster, and it accepts \uD83D\uDE00 surrogate pairs that
 * libyaml refuses. Anything else, errors included, goes through libyaml
 * so that messages speak YAML. */
static dra_err json_shortcut(dra_arena *a, const char *text, size_t len,
                             dra_doc ***docs_out, size_t *n_out)
{
    size_t i = 0;
    dra_doc *doc;
    dra_doc **v;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i == len || (text[i] != '{' && text[i] != '['))
        return DRA_EINVAL;
    if (dra_doc_parse_json(a, text, len, &doc, NULL) != DRA_OK)
        return DRA_EINVAL;
    if (!(v = dra_arena_array(a, 1, sizeof *v)))
        return DRA_ENOMEM;
    v[0] = doc;
    *docs_out = v;
    *n_out = 1;
    return DRA_OK;
}

dra_err dra_doc_parse_yaml(dra_arena *a, const char *text, size_t len,
                           dra_doc ***docs_out, size_t *n_out, dra_diag *d)
{
    yp y;
    ydocs docs = {0};
    *docs_out = NULL;
    *n_out = 0;
    if (len > DRA_DOC_MAX_BYTES) {
        dra_diag_add(d, "", 0, 0, "input of %zu bytes exceeds the limit of %u bytes",
                     len, (unsigned)DRA_DOC_MAX_BYTES);
        return DRA_ELIMIT;
    }
    if (json_shortcut(a, text, len, docs_out, n_out) == DRA_OK)
        return DRA_OK;
    memset(&y, 0, sizeof y);
    y.a = a;
    y.d = d;
    y.text = text;
    dra_map_init(&y.anchors, a->mem);
    if (!yaml_parser_initialize(&y.parser)) {
        dra_map_fini(&y.anchors);
        dra_diag_add(d, "", 0, 0, "out of memory");
        return DRA_ENOMEM;
    }
    yaml_parser_set_input_string(&y.parser, (const unsigned char *)text, len);
    if (yp_stream(&y, &docs) && docs.n) {
        *docs_out = dra_arena_array(a, docs.n, sizeof **docs_out);
        if (*docs_out) {
            memcpy(*docs_out, docs.v, docs.n * sizeof *docs.v);
            *n_out = docs.n;
        } else {
            yp_oom(&y);
        }
    }
    if (!y.err && !y.have_ev)
        yp_fail(&y, 0, 0, DRA_EPARSE, "invalid YAML stream");
    if (y.have_ev)
        yaml_event_delete(&y.ev);
    yaml_parser_delete(&y.parser);
    dra_map_fini(&y.anchors);
    dra_free(a->mem, y.stk);
    dra_free(a->mem, docs.v);
    if (y.err) {
        *docs_out = NULL;
        *n_out = 0;
    }
    return y.err;
}

dra_err dra_doc_flatten_lists(dra_arena *a, dra_doc ***docs, size_t *n)
{
    size_t total = 0, k = 0;
    int lists = 0;
    dra_doc **out;
    for (size_t i = 0; i < *n; i++) {
        const dra_doc *items = dra_doc_get((*docs)[i], "items");
        const dra_doc *kind = dra_doc_get((*docs)[i], "kind");
        int is_list = kind && kind->kind == DRA_DOC_STRING &&
                      strcmp(kind->u.str.s, "List") == 0 && items &&
                      items->kind == DRA_DOC_LIST;
        total += is_list ? items->u.list.n : 1;
        lists += is_list;
    }
    if (!lists)
        return DRA_OK;
    if (!(out = dra_arena_array(a, total ? total : 1, sizeof *out)))
        return DRA_ENOMEM;
    for (size_t i = 0; i < *n; i++) {
        const dra_doc *items = dra_doc_get((*docs)[i], "items");
        const dra_doc *kind = dra_doc_get((*docs)[i], "kind");
        if (kind && kind->kind == DRA_DOC_STRING && strcmp(kind->u.str.s, "List") == 0 &&
            items && items->kind == DRA_DOC_LIST) {
            for (size_t j = 0; j < items->u.list.n; j++)
                out[k++] = items->u.list.items[j];
        } else {
            out[k++] = (*docs)[i];
        }
    }
    *docs = out;
    *n = total;
    return DRA_OK;
}
