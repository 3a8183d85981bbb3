/*
 * selector.c: label selectors (apimachinery's labels.Parse: a lexer, a
 * recursive descent over requirements, upstream's validation and error
 * wording) and field selectors (fields.ParseSelector plus each kind's
 * field-label conversion and selectable fields). The list and watch
 * handlers compile a selector once per request and match every object.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra/api.h"
#include "selector.h"

/* Appends |str| quoted like Go's %q. */
static void go_quote(dra_buf *b, const char *str)
{
    dra_api_go_quote(b, str, strlen(str));
}

/* ---- label key and value checks (content.IsLabelKey / IsLabelValue) ---- */

/* Joins |n| messages with "; " into |b|, as the selector's error prints
 * upstream's list; 0 when there are none (the string was valid). */
static int join_msgs(const char *const *msgs, size_t n, dra_buf *b)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            dra_buf_puts(b, "; ");
        dra_buf_puts(b, msgs[i]);
    }
    return n != 0;
}

static int label_key_msgs(const char *key, dra_buf *b)
{
    const char *msgs[4];
    size_t n = dra_api_check_label_key(key, DRA_API_WORDING_CONTENT, msgs, 4);
    return join_msgs(msgs, n < 4 ? n : 4, b);
}

static int label_value_msgs(const char *v, dra_buf *b)
{
    const char *msgs[2];
    size_t n = dra_api_check_label_value(v, DRA_API_WORDING_CONTENT, msgs, 2);
    return join_msgs(msgs, n < 2 ? n : 2, b);
}

/* ---- label selector lexer ----------------------------------------------- */

typedef enum tok {
    T_ERROR,
    T_END,
    T_CLOSE,
    T_COMMA,
    T_NOT,
    T_DEQ,
    T_EQ,
    T_GT,
    T_ID,
    T_IN,
    T_LT,
    T_NEQ,
    T_NOTIN,
    T_OPEN
} tok;

typedef struct item {
    tok t;
    const char *lit; /* NUL-terminated, in the arena */
} item;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' ||
           c == '>' || c == '<';
}

/* The token a run of special characters spells, T_ERROR when none. */
static tok special_tok(const char *s, size_t n)
{
    static const struct { const char *s; tok t; } tab[] = {
        {")", T_CLOSE}, {",", T_COMMA}, {"!", T_NOT}, {"==", T_DEQ},
        {"=", T_EQ}, {">", T_GT}, {"<", T_LT}, {"!=", T_NEQ}, {"(", T_OPEN}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].s) == n && !memcmp(tab[i].s, s, n))
            return tab[i].t;
    return T_ERROR;
}

/* Scans the whole input into |items| (ending with T_END), like the
 * upstream parser does before it starts. */
static dra_err lex_all(dra_arena *a, const char *s, item **out, size_t *nout)
{
    size_t cap = 8, n = 0, pos = 0, len = strlen(s);
    item *v = dra_arena_array(a, cap, sizeof *v);
    for (;;) {
        item it;
        if (!v)
            return DRA_ENOMEM;
        while (pos < len && is_space(s[pos]))
            pos++;
        if (pos >= len) {
            it.t = T_END;
            it.lit = "";
        } else if (is_special(s[pos])) {
            size_t start = pos, best = 0;
            tok bt = T_ERROR;
            while (pos < len && is_special(s[pos])) {
                tok t = special_tok(s + start, pos - start + 1);
                if (t != T_ERROR) {
                    bt = t;
                    best = pos - start + 1;
                } else if (bt != T_ERROR) {
                    break;
                }
                pos++;
            }
            pos = start + best;
            it.t = bt;
            it.lit = dra_arena_strndup(a, s + start, best);
        } else {
            size_t start = pos;
            while (pos < len && !is_special(s[pos]) && !is_space(s[pos]))
                pos++;
            it.lit = dra_arena_strndup(a, s + start, pos - start);
            it.t = T_ID;
            if (it.lit && !strcmp(it.lit, "in"))
                it.t = T_IN;
            else if (it.lit && !strcmp(it.lit, "notin"))
                it.t = T_NOTIN;
        }
        if (!it.lit)
            return DRA_ENOMEM;
        if (n == cap) {
            item *nv = dra_arena_array(a, cap * 2, sizeof *nv);
            if (!nv)
                return DRA_ENOMEM;
            memcpy(nv, v, n * sizeof *v);
            v = nv;
            cap *= 2;
        }
        v[n++] = it;
        if (it.t == T_END)
            break;
    }
    *out = v;
    *nout = n;
    return DRA_OK;
}

/* ---- label selector parser ---------------------------------------------- */

typedef struct lparser {
    dra_arena *a;
    item *items;
    size_t n, pos;
    dra_buf err; /* the first error's message */
    int oom;
} lparser;

/* In a value position `in` and `notin` are plain identifiers. */
static tok peek_tok(const lparser *p, int values)
{
    tok t = p->items[p->pos].t;
    if (values && (t == T_IN || t == T_NOTIN))
        t = T_ID;
    return t;
}

static const item *next_item(lparser *p, int values, tok *t)
{
    const item *it = &p->items[p->pos];
    *t = peek_tok(p, values);
    if (p->pos + 1 < p->n)
        p->pos++;
    return it;
}

static dra_err perr(lparser *p, const char *fmt, ...) DRA_PRINTF(2, 3);
static dra_err perr(lparser *p, const char *fmt, ...)
{
    va_list ap;
    dra_buf_reset(&p->err);
    va_start(ap, fmt);
    dra_buf_vprintf(&p->err, fmt, ap);
    va_end(ap);
    return DRA_EINVAL;
}

/* A value set under construction: sorted, without duplicates (sets.String). */
typedef struct strset {
    const char **v;
    size_t n, cap;
} strset;

static int set_add(dra_arena *a, strset *s, const char *val)
{
    size_t i = 0;
    while (i < s->n && strcmp(s->v[i], val) < 0)
        i++;
    if (i < s->n && !strcmp(s->v[i], val))
        return 1;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 4;
        const char **nv = dra_arena_array(a, ncap, sizeof *nv);
        if (!nv)
            return 0;
        if (s->n)
            memcpy(nv, s->v, s->n * sizeof *nv);
        s->v = nv;
        s->cap = ncap;
    }
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
    s->v[i] = val;
    s->n++;
    return 1;
}

static dra_err parse_values(lparser *p, strset *vals)
{
    tok t;
    const item *it = next_item(p, 1, &t);
    if (t != T_OPEN)
        return perr(p, "found '%s' expected: '('", it->lit);
    t = peek_tok(p, 1);
    it = &p->items[p->pos];
    if (t == T_CLOSE) {
        next_item(p, 1, &t);
        return set_add(p->a, vals, "") ? DRA_OK : DRA_ENOMEM;
    }
    if (t != T_ID && t != T_COMMA)
        return perr(p, "found '%s', expected: ',', ')' or identifier", it->lit);
    const char *open_lit = it->lit;
    for (;;) {
        const item *cur = next_item(p, 1, &t);
        if (t == T_ID) {
            if (!set_add(p->a, vals, cur->lit))
                return DRA_ENOMEM;
            tok t2 = peek_tok(p, 1);
            if (t2 == T_COMMA)
                continue;
            if (t2 == T_CLOSE)
                break;
            return perr(p, "found '%s', expected: ',' or ')'",
                        p->items[p->pos].lit);
        } else if (t == T_COMMA) {
            tok t2 = peek_tok(p, 1);
            if (vals->n == 0 && !set_add(p->a, vals, ""))
                return DRA_ENOMEM;
            if (t2 == T_CLOSE) {
                if (!set_add(p->a, vals, ""))
                    return DRA_ENOMEM;
                break;
            }
            if (t2 == T_COMMA && !set_add(p->a, vals, ""))
                return DRA_ENOMEM;
        } else {
            return perr(p, "found '%s', expected: ',', or identifier", cur->lit);
        }
    }
    if (next_item(p, 1, &t), t != T_CLOSE)
        return perr(p, "found '%s', expected: ')'", open_lit);
    return DRA_OK;
}

static dra_err parse_exact_value(lparser *p, strset *vals)
{
    tok t = peek_tok(p, 1);
    if (t == T_END || t == T_COMMA)
        return set_add(p->a, vals, "") ? DRA_OK : DRA_ENOMEM;
    const item *it = next_item(p, 1, &t);
    if (t == T_ID)
        return set_add(p->a, vals, it->lit) ? DRA_OK : DRA_ENOMEM;
    return perr(p, "found '%s', expected: identifier", it->lit);
}

static dra_err parse_operator(lparser *p, api_sel_op *op)
{
    tok t;
    const item *it = next_item(p, 0, &t);
    switch (t) {
    case T_IN: *op = API_SEL_IN; break;
    case T_EQ: *op = API_SEL_EQ; break;
    case T_DEQ: *op = API_SEL_DEQ; break;
    case T_GT: *op = API_SEL_GT; break;
    case T_LT: *op = API_SEL_LT; break;
    case T_NOTIN: *op = API_SEL_NOTIN; break;
    case T_NEQ: *op = API_SEL_NEQ; break;
    default:
        return perr(p, "found '%s', expected: in, notin, =, ==, !=, gt, lt",
                    it->lit);
    }
    return DRA_OK;
}

static int is_int64(const char *s)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return 0;
    errno = 0;
    (void)strtoll(s, &end, 10);
    return errno == 0 && *end == '\0';
}

/* NewRequirement's checks on the values; each failure is one field
 * error, aggregated as upstream prints an error list. */
static dra_err check_values(lparser *p, const char *key, api_sel_op op,
                            const strset *vals)
{
    dra_buf list, one, msgs;
    size_t nerr = 0;
    dra_buf_init(&list, NULL);
    dra_buf_init(&one, NULL);
    dra_buf_init(&msgs, NULL);
    for (size_t i = 0; (op == API_SEL_GT || op == API_SEL_LT) && i < vals->n; i++) {
        if (is_int64(vals->v[i]))
            continue;
        dra_buf_reset(&one);
        go_quote(&one, vals->v[i]);
        dra_buf_printf(&list, "%svalues[%zu]: Invalid value: %s: for 'Gt', 'Lt' "
                       "operators, the value must be an integer",
                       nerr++ ? ", " : "", i, one.p);
    }
    for (size_t i = 0; i < vals->n; i++) {
        dra_buf_reset(&msgs);
        if (!label_value_msgs(vals->v[i], &msgs))
            continue;
        dra_buf_reset(&one);
        go_quote(&one, vals->v[i]);
        dra_buf_printf(&list, "%svalues[%zu][%s]: Invalid value: %s: %s",
                       nerr++ ? ", " : "", i, key, one.p, msgs.p);
    }
    dra_err err = DRA_OK;
    if (list.oom || one.oom || msgs.oom)
        err = DRA_ENOMEM;
    else if (nerr)
        err = perr(p, "%s%s%s", nerr > 1 ? "[" : "", list.p, nerr > 1 ? "]" : "");
    dra_buf_fini(&list);
    dra_buf_fini(&one);
    dra_buf_fini(&msgs);
    return err;
}

static dra_err parse_requirement(lparser *p, api_sel_req *r)
{
    tok t;
    api_sel_op op = API_SEL_EXISTS;
    int negated = 0;
    strset vals = {0};
    const item *it = next_item(p, 1, &t);
    dra_buf msgs;
    if (t == T_NOT) {
        negated = 1;
        it = next_item(p, 1, &t);
    }
    if (t != T_ID)
        return perr(p, "found '%s', expected: identifier", it->lit);
    dra_buf_init(&msgs, NULL);
    if (label_key_msgs(it->lit, &msgs)) {
        dra_buf q;
        dra_buf_init(&q, NULL);
        go_quote(&q, it->lit);
        perr(p, "<nil>: Invalid value: %s: %s", q.p ? q.p : "", msgs.p);
        dra_buf_fini(&q);
        dra_buf_fini(&msgs);
        return DRA_EINVAL;
    }
    dra_buf_fini(&msgs);
    r->key = it->lit;
    t = peek_tok(p, 1);
    if (negated || t == T_END || t == T_COMMA) {
        r->op = negated ? API_SEL_NOT_EXISTS : API_SEL_EXISTS;
        return DRA_OK;
    }
    dra_err err = parse_operator(p, &op);
    if (err)
        return err;
    err = (op == API_SEL_IN || op == API_SEL_NOTIN) ? parse_values(p, &vals)
                                                     : parse_exact_value(p, &vals);
    if (err)
        return err;
    r->op = op;
    r->vals = vals.v;
    r->n = vals.n;
    return check_values(p, r->key, op, &vals);
}

static dra_err parse_all(lparser *p, api_label_sel *sel)
{
    size_t cap = 0;
    for (;;) {
        tok t = peek_tok(p, 1);
        const item *it = &p->items[p->pos];
        if (t == T_END)
            return DRA_OK;
        if (t != T_ID && t != T_NOT)
            return perr(p, "found '%s', expected: !, identifier, or 'end of string'",
                        it->lit);
        if (sel->n == cap) {
            size_t ncap = cap ? cap * 2 : 4;
            api_sel_req *nv = dra_arena_array(p->a, ncap, sizeof *nv);
            if (!nv)
                return DRA_ENOMEM;
            if (sel->n)
                memcpy(nv, sel->reqs, sel->n * sizeof *nv);
            sel->reqs = nv;
            cap = ncap;
        }
        api_sel_req *r = &sel->reqs[sel->n];
        memset(r, 0, sizeof *r);
        dra_err err = parse_requirement(p, r);
        if (err == DRA_EINVAL) {
            dra_buf tmp;
            dra_buf_init(&tmp, NULL);
            dra_buf_printf(&tmp, "unable to parse requirement: %s",
                           p->err.p ? p->err.p : "");
            dra_buf_reset(&p->err);
            dra_buf_puts(&p->err, tmp.p ? tmp.p : "");
            dra_buf_fini(&tmp);
        }
        if (err)
            return err;
        sel->n++;
        const item *sep = next_item(p, 1, &t);
        if (t == T_END)
            return DRA_OK;
        if (t != T_COMMA)
            return perr(p, "found '%s', expected: ',' or 'end of string'", sep->lit);
        t = peek_tok(p, 1);
        if (t != T_ID && t != T_NOT)
            return perr(p, "found '%s', expected: identifier after ','",
                        p->items[p->pos].lit);
    }
}

static int req_cmp(const void *x, const void *y)
{
    return strcmp(((const api_sel_req *)x)->key, ((const api_sel_req *)y)->key);
}

/* Stable insertion sort by key (sort.Sort is not stable upstream, but
 * equal keys only matter for printing, never for matching). */
static void sort_reqs(api_sel_req *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        api_sel_req x = v[i];
        size_t j = i;
        while (j > 0 && req_cmp(&v[j - 1], &x) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

dra_err api_sel_label_parse(dra_arena *a, const char *text,
                            api_label_sel **out, dra_kstatus *st)
{
    lparser p;
    api_label_sel *sel = dra_arena_zalloc(a, sizeof *sel);
    dra_err err;
    *out = NULL;
    if (!sel)
        return DRA_ENOMEM;
    memset(&p, 0, sizeof p);
    p.a = a;
    err = lex_all(a, text ? text : "", &p.items, &p.n);
    if (err)
        return err;
    dra_buf_init(&p.err, NULL);
    err = parse_all(&p, sel);
    if (err == DRA_EINVAL)
        dra_kstatus_set(st, 400, "BadRequest", "%s", p.err.p ? p.err.p : "");
    if (p.err.oom && err == DRA_EINVAL)
        err = DRA_ENOMEM;
    dra_buf_fini(&p.err);
    if (err)
        return err;
    sort_reqs(sel->reqs, sel->n);
    *out = sel;
    return DRA_OK;
}

/* ---- label matching ------------------------------------------------------ */

static const char *label_lookup(const dra_doc *labels, const char *key)
{
    const dra_doc *v = dra_doc_get(labels, key);
    if (!v)
        return NULL;
    return v->kind == DRA_DOC_STRING ? v->u.str.s : "";
}

static int has_value(const api_sel_req *r, const char *v)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->vals[i], v))
            return 1;
    return 0;
}

static int req_match(const api_sel_req *r, const dra_doc *labels)
{
    const char *v = label_lookup(labels, r->key);
    char *end;
    long long lv, rv;
    switch (r->op) {
    case API_SEL_IN:
    case API_SEL_EQ:
    case API_SEL_DEQ:
        return v && has_value(r, v);
    case API_SEL_NOTIN:
    case API_SEL_NEQ:
        return !v || !has_value(r, v);
    case API_SEL_EXISTS:
        return v != NULL;
    case API_SEL_NOT_EXISTS:
        return v == NULL;
    case API_SEL_GT:
    case API_SEL_LT:
        if (!v || r->n != 1 || !is_int64(v) || !is_int64(r->vals[0]))
            return 0;
        lv = strtoll(v, &end, 10);
        rv = strtoll(r->vals[0], &end, 10);
        return r->op == API_SEL_GT ? lv > rv : lv < rv;
    }
    return 0;
}

int api_sel_label_match(const api_label_sel *s, const dra_doc *labels)
{
    if (!s)
        return 1;
    for (size_t i = 0; i < s->n; i++)
        if (!req_match(&s->reqs[i], labels))
            return 0;
    return 1;
}

const char *api_sel_label_exact(const api_label_sel *s, const char *key)
{
    for (size_t i = 0; s && i < s->n; i++) {
        const api_sel_req *r = &s->reqs[i];
        if (strcmp(r->key, key))
            continue;
        if ((r->op == API_SEL_EQ || r->op == API_SEL_DEQ || r->op == API_SEL_IN) &&
            r->n == 1)
            return r->vals[0];
        return NULL;
    }
    return NULL;
}

/* ---- field selectors ------------------------------------------------------ */

/* Which fields each kind's conversion function accepts; NULL-terminated.
 * Kinds without one get upstream's DefaultMetaV1FieldSelectorConversion. */
static const char *const pod_fields[] = {
    "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
    "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
    "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
    "spec.host", NULL};
static const char *const node_fields[] = {"metadata.name", "spec.unschedulable", NULL};
static const char *const ns_fields[] = {"status.phase", "metadata.name", NULL};
static const char *const event_fields[] = {
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
    "involvedObject.uid", "involvedObject.apiVersion",
    "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
    "reportingComponent", "source", "type", "metadata.namespace",
    "metadata.name", NULL};
static const char *const slice_fields[] = {"metadata.name", "spec.nodeName",
                                           "spec.driver", NULL};
static const char *const meta_fields[] = {"metadata.name", "metadata.namespace", NULL};

static const char *const *accepted_fields(const api_resource *r, int *deflt)
{
    *deflt = 0;
    if (!strcmp(r->group, "")) {
        if (!strcmp(r->resource, "pods"))
            return pod_fields;
        if (!strcmp(r->resource, "nodes"))
            return node_fields;
        if (!strcmp(r->resource, "namespaces"))
            return ns_fields;
        if (!strcmp(r->resource, "events"))
            return event_fields;
    } else if (!strcmp(r->resource, "resourceslices")) {
        return slice_fields;
    }
    *deflt = 1;
    return meta_fields;
}

/* The conversion function's verdict on |field|: DRA_OK (with *field
 * possibly renamed) or DRA_EINVAL with upstream's message. */
static dra_err convert_field(const api_resource *r, const char **field,
                             dra_kstatus *st)
{
    int deflt;
    const char *const *ok = accepted_fields(r, &deflt);
    for (size_t i = 0; ok[i]; i++) {
        if (strcmp(ok[i], *field))
            continue;
        if (!strcmp(*field, "spec.host"))
            *field = "spec.nodeName";
        return DRA_OK;
    }
    if (deflt)
        dra_kstatus_set(st, 400, "BadRequest",
                   "\"%s\" is not a known field selector: only \"metadata.name\", "
                   "\"metadata.namespace\"", *field);
    else if (!strcmp(r->resource, "resourceslices"))
        dra_kstatus_set(st, 400, "BadRequest",
                   "field label not supported for %s/%s, Kind=%s: %s", r->group,
                   r->version, r->kind, *field);
    else
        dra_kstatus_set(st, 400, "BadRequest", "field label not supported: %s", *field);
    return DRA_EINVAL;
}

/* fields.UnescapeValue; DRA_EINVAL with upstream's message. */
static dra_err unescape(dra_arena *a, const char *s, size_t len, const char **out,
                        dra_buf *err)
{
    char *o = dra_arena_alloc(a, len + 1);
    size_t n = 0;
    int slash = 0;
    if (!o)
        return DRA_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (slash) {
            if (c != '\\' && c != ',' && c != '=') {
                uint32_t cp = (unsigned char)c;
                size_t k = dra_utf8_decode((const unsigned char *)s + i, len - i, &cp);
                dra_buf_printf(err, "invalid field selector: invalid escape sequence: \\%.*s",
                               (int)(k ? k : 1), s + i);
                return DRA_EINVAL;
            }
            o[n++] = c;
            slash = 0;
        } else if (c == '\\') {
            slash = 1;
        } else if (c == ',' || c == '=') {
            dra_buf_printf(err, "invalid field selector: unescaped character in value: %d",
                           (int)c);
            return DRA_EINVAL;
        } else {
            o[n++] = c;
        }
    }
    if (slash) {
        dra_buf_puts(err, "invalid field selector: invalid escape sequence: \\");
        return DRA_EINVAL;
    }
    o[n] = '\0';
    *out = o;
    return DRA_OK;
}

/* Splits |text| on unescaped commas into NUL-terminated terms in |a|,
 * sorted bytewise as upstream sorts them before parsing. */
static dra_err split_terms(dra_arena *a, const char *text, const char ***out,
                           size_t *nout)
{
    size_t len = strlen(text), n = 1, k = 0, start = 0;
    int slash = 0;
    for (size_t i = 0; i < len; i++) {
        if (slash)
            slash = 0;
        else if (text[i] == '\\')
            slash = 1;
        else if (text[i] == ',')
            n++;
    }
    const char **v = dra_arena_array(a, n, sizeof *v);
    if (!v)
        return DRA_ENOMEM;
    slash = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len) {
            if (slash) {
                slash = 0;
                continue;
            }
            if (text[i] == '\\') {
                slash = 1;
                continue;
            }
            if (text[i] != ',')
                continue;
        }
        if (!(v[k++] = dra_arena_strndup(a, text + start, i - start)))
            return DRA_ENOMEM;
        start = i + 1;
    }
    for (size_t i = 1; i < n; i++) {
        const char *x = v[i];
        size_t j = i;
        while (j > 0 && strcmp(v[j - 1], x) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    *out = v;
    *nout = n;
    return DRA_OK;
}

static dra_err parse_term(dra_arena *a, const char *text, const char *part,
                          api_field_term *t, dra_kstatus *st)
{
    size_t len = strlen(part), i, oplen = 0;
    dra_buf err;
    dra_err rc;
    for (i = 0; i < len; i++) {
        if (!strncmp(part + i, "!=", 2) || !strncmp(part + i, "==", 2))
            oplen = 2;
        else if (part[i] == '=')
            oplen = 1;
        if (oplen)
            break;
    }
    if (!oplen) {
        dra_kstatus_set(st, 400, "BadRequest", "invalid selector: '%s'; can't understand '%s'",
                   text, part);
        return DRA_EINVAL;
    }
    t->neq = part[i] == '!';
    if (!(t->field = dra_arena_strndup(a, part, i)))
        return DRA_ENOMEM;
    dra_buf_init(&err, NULL);
    rc = unescape(a, part + i + oplen, len - i - oplen, &t->value, &err);
    if (rc == DRA_EINVAL)
        dra_kstatus_set(st, 400, "BadRequest", "%s", err.p ? err.p : "");
    dra_buf_fini(&err);
    return rc;
}

dra_err api_sel_field_parse(dra_arena *a, const char *text,
                            const api_resource *res, api_field_sel **out,
                            dra_kstatus *st)
{
    api_field_sel *sel = dra_arena_zalloc(a, sizeof *sel);
    const char **parts = NULL;
    size_t nparts = 0;
    dra_err err;
    *out = NULL;
    if (!sel)
        return DRA_ENOMEM;
    if (text && *text) {
        if ((err = split_terms(a, text, &parts, &nparts)))
            return err;
        sel->terms = dra_arena_array(a, nparts, sizeof *sel->terms);
        if (!sel->terms)
            return DRA_ENOMEM;
    }
    for (size_t i = 0; i < nparts; i++) {
        if (!*parts[i])
            continue;
        if ((err = parse_term(a, text, parts[i], &sel->terms[sel->n], st)))
            return err;
        sel->n++;
    }
    /* Upstream runs the kind's conversion over every term after parsing. */
    for (size_t i = 0; i < sel->n; i++)
        if ((err = convert_field(res, &sel->terms[i].field, st)))
            return err;
    *out = sel;
    return DRA_OK;
}

/* ---- selectable field values ------------------------------------------ */

/* The string at dotted |path| of map keys, "" when absent or not a string. */
static const char *str_at(const dra_doc *obj, const char *path)
{
    const dra_doc *v = dra_doc_at(obj, path);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : "";
}

/* The boolean at dotted |path| as a field selector compares it. */
static const char *bool_at(const dra_doc *obj, const char *path)
{
    const dra_doc *v = dra_doc_at(obj, path);
    return v && v->kind == DRA_DOC_BOOL && v->u.b ? "true" : "false";
}

static const char *pod_ip(const dra_doc *obj)
{
    const dra_doc *ips = dra_doc_get(dra_doc_get(obj, "status"), "podIPs");
    if (ips && ips->kind == DRA_DOC_LIST && ips->u.list.n > 0)
        return str_at(ips->u.list.items[0], "ip");
    return str_at(obj, "status.podIP");
}

const char *api_sel_field_value(const api_resource *res, const dra_doc *obj,
                                const char *field)
{
    int pods = !strcmp(res->resource, "pods") && !*res->group;
    if (!strcmp(field, "metadata.namespace") && !res->namespaced)
        return "";
    if (pods && !strcmp(field, "spec.hostNetwork"))
        return bool_at(obj, "spec.hostNetwork");
    if (pods && !strcmp(field, "status.podIP"))
        return pod_ip(obj);
    if (pods && !strcmp(field, "status.podIPs"))
        return ""; /* accepted upstream but not in the pod's field set */
    if (!strcmp(field, "spec.unschedulable") && !strcmp(res->resource, "nodes"))
        return bool_at(obj, "spec.unschedulable");
    if (!strcmp(res->resource, "events") && !*res->group) {
        if (!strcmp(field, "source")) {
            const char *s = str_at(obj, "source.component");
            return *s ? s : str_at(obj, "reportingComponent");
        }
    }
    return str_at(obj, field);
}

int api_sel_field_match(const api_field_sel *s, const api_resource *res,
                        const dra_doc *obj)
{
    for (size_t i = 0; s && i < s->n; i++) {
        const api_field_term *t = &s->terms[i];
        int eq = !strcmp(api_sel_field_value(res, obj, t->field), t->value);
        if (eq == t->neq)
            return 0;
    }
    return 1;
}

const char *api_sel_field_exact(const api_field_sel *s, const char *field)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (!s->terms[i].neq && !strcmp(s->terms[i].field, field))
            return s->terms[i].value;
    return NULL;
}
