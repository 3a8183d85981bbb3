/*
 * explain_sel.c: says in words why a CEL selector rejected a device, for
 * the explanations of explain.c: "memory is 189471Mi, needs more than
 * 200Gi". A selector is split at its top-level `&&`; each term is compiled
 * as a selector of its own (cached like any other), the first term that is
 * false on the device is the cause, and the values that term reads are
 * shown, with the requirement when the term has a common shape (a
 * comparison, compareTo/isGreaterThan, startsWith/matches, `in`, has()).
 * This reads the expression text only; the CEL engine stays the judge.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_int.h"

/* ---- tokens ------------------------------------------------------------------ */

typedef enum tkind { T_END, T_ID, T_STR, T_NUM, T_OP, T_OTHER } tkind;

typedef struct tok {
    tkind k;
    const char *p; /* in the expression */
    size_t n;
    const char *s; /* T_STR: the decoded value */
} tok;

#define MAX_TOKS 512

typedef struct toks {
    tok v[MAX_TOKS];
    size_t n;
} toks;

static int is_id0(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A string literal at |p| (after an optional r/R prefix already skipped
 * when |raw|): decoded into the arena. Escapes beyond the simple ones are
 * kept as written, which only affects how the value is shown. */
static const char *lex_string(dra_arena *ar, const char *p, int raw, size_t *used)
{
    char q = *p;
    int triple = p[1] == q && p[2] == q;
    size_t open = triple ? 3 : 1, i = open;
    dra_buf b;
    const char *out = NULL;
    dra_buf_init(&b, ar->mem);
    for (;;) {
        if (!p[i])
            goto done; /* unterminated: the compiler said so already */
        if (triple ? (p[i] == q && p[i + 1] == q && p[i + 2] == q) : p[i] == q)
            break;
        if (!triple && p[i] == '\n')
            goto done;
        if (p[i] == '\\' && !raw && p[i + 1]) {
            const char *m = strchr("nrt\\'\"", p[i + 1]);
            dra_buf_putc(&b, m ? "\n\r\t\\'\""[m - "nrt\\'\""] : p[i]);
            if (!m)
                dra_buf_putc(&b, p[i + 1]);
            i += 2;
            continue;
        }
        dra_buf_putc(&b, p[i++]);
    }
    *used = i + open;
    out = b.oom ? NULL : dra_arena_strndup(ar, b.p ? b.p : "", b.len);
done:
    dra_buf_fini(&b);
    return out;
}

/* Splits |e| into tokens; 0 when it cannot (too long, a string it does
 * not understand): the caller then explains without the term analysis. */
static int lex(dra_arena *ar, const char *e, toks *t)
{
    static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
    const char *p = e;
    t->n = 0;
    while (t->n + 1 < MAX_TOKS) {
        tok *k = &t->v[t->n];
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        k->p = p;
        k->s = NULL;
        if (!*p) {
            k->k = T_END;
            k->n = 0;
            return 1;
        }
        if ((*p == 'r' || *p == 'R') && (p[1] == '\'' || p[1] == '"')) {
            size_t used;
            if (!(k->s = lex_string(ar, p + 1, 1, &used)))
                return 0;
            k->k = T_STR;
            k->n = used + 1;
        } else if (*p == '\'' || *p == '"') {
            size_t used;
            if (!(k->s = lex_string(ar, p, 0, &used)))
                return 0;
            k->k = T_STR;
            k->n = used;
        } else if (is_id0(*p)) {
            size_t n = 1;
            while (is_id0(p[n]) || is_digit(p[n]))
                n++;
            k->k = (p[n] == '\'' || p[n] == '"') ? T_OTHER : T_ID; /* b'..' bytes */
            k->n = n;
        } else if (is_digit(*p) || (*p == '.' && is_digit(p[1]))) {
            size_t n = 1;
            while (is_digit(p[n]) || is_id0(p[n]) || p[n] == '.' ||
                   ((p[n] == '+' || p[n] == '-') && (p[n - 1] == 'e' || p[n - 1] == 'E')))
                n++;
            k->k = T_NUM;
            k->n = n;
        } else {
            k->k = T_OP;
            k->n = 1;
            for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
                if (p[0] == two[i][0] && p[1] == two[i][1])
                    k->n = 2;
        }
        if (k->k == T_OTHER)
            return 0;
        p += k->n;
        t->n++;
    }
    return 0;
}

static int is_op(const tok *k, const char *op)
{
    return k->k == T_OP && k->n == strlen(op) && memcmp(k->p, op, k->n) == 0;
}

static int is_id(const tok *k, const char *id)
{
    return k->k == T_ID && k->n == strlen(id) && memcmp(k->p, id, k->n) == 0;
}

/* ---- shapes ------------------------------------------------------------------ */

typedef enum rkind { REF_ATTR, REF_CAP, REF_DRIVER, REF_MULTI } rkind;

typedef struct ref {
    rkind k;
    const char *domain, *id; /* attributes and capacity; id NULL: the map */
} ref;

#define MAX_REFS 6

/* One term of a selector: the values it reads and, for a known shape,
 * what it needs of them. */
typedef struct term {
    uint32_t prog;
    ref refs[MAX_REFS];
    size_t nrefs;
    const char *needs; /* "needs more than 200Gi"; NULL: unknown shape */
    const char *text;  /* the term as written, for unknown shapes */
    int presence;      /* `'x' in device.attributes[d]`, has(): missing values only */
} term;

typedef struct split {
    term *terms;
    size_t nterms;
    int fixed; /* alloc_sel_why_fixed's answer: -1 not known yet */
} split;

/* device.driver, device.allowMultipleAllocations, device.attributes[D]
 * (.id | [S])?, device.capacity[D](.id | [S])?; the index after it, or 0. */
static size_t parse_ref(const toks *t, size_t i, ref *r)
{
    const tok *v = t->v;
    if (i + 2 >= t->n || !is_id(&v[i], "device") || !is_op(&v[i + 1], "."))
        return 0;
    if (is_id(&v[i + 2], "driver") || is_id(&v[i + 2], "allowMultipleAllocations")) {
        r->k = is_id(&v[i + 2], "driver") ? REF_DRIVER : REF_MULTI;
        r->domain = r->id = NULL;
        return i + 3;
    }
    if (!is_id(&v[i + 2], "attributes") && !is_id(&v[i + 2], "capacity"))
        return 0;
    if (i + 5 >= t->n || !is_op(&v[i + 3], "[") || v[i + 4].k != T_STR || !is_op(&v[i + 5], "]"))
        return 0;
    r->k = is_id(&v[i + 2], "attributes") ? REF_ATTR : REF_CAP;
    r->domain = v[i + 4].s;
    r->id = NULL;
    i += 6;
    if (i + 1 < t->n && is_op(&v[i], ".") && v[i + 1].k == T_ID && !is_op(&v[i + 2], "(")) {
        r->id = v[i + 1].p; /* NUL-ended below by the caller's copy */
        return i + 2;
    }
    if (i + 2 < t->n && is_op(&v[i], "[") && v[i + 1].k == T_STR && is_op(&v[i + 2], "]")) {
        r->id = v[i + 1].s;
        return i + 3;
    }
    return i;
}

/* A literal: string, number, bool, quantity('..'), semver('..'); its
 * text as shown (strings quoted); the index after it, or 0. */
static size_t parse_lit(dra_arena *ar, const toks *t, size_t i, const char **text)
{
    const tok *v = t->v;
    /* Out of memory the literal is not read: no words for the term (the
     * failing allocations after it end the explanation with ENOMEM). */
    if (i >= t->n)
        return 0;
    if (v[i].k == T_STR) {
        *text = dra_arena_sprintf(ar, "\"%s\"", v[i].s);
        return *text ? i + 1 : 0;
    }
    if (v[i].k == T_NUM || is_id(&v[i], "true") || is_id(&v[i], "false")) {
        *text = dra_arena_strndup(ar, v[i].p, v[i].n);
        return *text ? i + 1 : 0;
    }
    if (is_op(&v[i], "-") && i + 1 < t->n && v[i + 1].k == T_NUM) {
        *text = dra_arena_sprintf(ar, "-%.*s", (int)v[i + 1].n, v[i + 1].p);
        return *text ? i + 2 : 0;
    }
    if ((is_id(&v[i], "quantity") || is_id(&v[i], "semver")) && i + 3 < t->n &&
        is_op(&v[i + 1], "(") && v[i + 2].k == T_STR && is_op(&v[i + 3], ")")) {
        *text = v[i + 2].s;
        return i + 4;
    }
    return 0;
}

static const char *const cmp_ops[] = {"==", "!=", ">", ">=", "<", "<="};
static const char *const cmp_words[] = {"needs", "must not be", "needs more than",
                                        "needs at least", "needs less than", "needs at most"};

static int cmp_op(const tok *k)
{
    for (int i = 0; i < 6; i++)
        if (is_op(k, cmp_ops[i]))
            return i;
    return -1;
}

/* `x op lit` read the other way round. */
static int flip(int op)
{
    static const int f[] = {0, 1, 4, 5, 2, 3};
    return op < 0 ? op : f[op];
}

/* compareTo(c) OP n: the signs it accepts, as a phrase. */
static const char *compare_to_words(int op, long n)
{
    unsigned set = 0;
    for (int s = -1; s <= 1; s++) {
        int ok = op == 0 ? s == n : op == 1 ? s != n : op == 2 ? s > n : op == 3 ? s >= n
                 : op == 4 ? s < n : s <= n;
        if (ok)
            set |= 1u << (s + 1);
    }
    switch (set) {
    case 4: return "needs more than";
    case 6: return "needs at least";
    case 1: return "needs less than";
    case 3: return "needs at most";
    case 2: return "needs";
    case 5: return "must not be";
    default: return NULL;
    }
}

static const char *method_words(const tok *m, int neg)
{
    static const char *const names[] = {"startsWith", "endsWith", "contains", "matches"};
    static const char *const yes[] = {"needs to start with", "needs to end with",
                                      "needs to contain", "needs to match"};
    static const char *const no[] = {"must not start with", "must not end with",
                                     "must not contain", "must not match"};
    for (int i = 0; i < 4; i++)
        if (is_id(m, names[i]))
            return neg ? no[i] : yes[i];
    if (is_id(m, "isGreaterThan"))
        return neg ? "needs at most" : "needs more than";
    if (is_id(m, "isLessThan"))
        return neg ? "needs at least" : "needs less than";
    return NULL;
}

/* `ref.method(lit) [op n]` from |i| (just after the ref) to |end|. */
static const char *method_shape(dra_arena *ar, const toks *t, size_t i, size_t end, int neg)
{
    const tok *v = t->v;
    const char *lit, *w;
    size_t j;
    if (i + 2 >= end || !is_op(&v[i], ".") || v[i + 1].k != T_ID || !is_op(&v[i + 2], "("))
        return NULL;
    if (!(j = parse_lit(ar, t, i + 3, &lit)) || j >= end || !is_op(&v[j], ")"))
        return NULL;
    j++;
    if (is_id(&v[i + 1], "compareTo")) {
        const char *n;
        int op = j < end ? cmp_op(&v[j]) : -1;
        size_t k;
        if (neg || op < 0 || !(k = parse_lit(ar, t, j + 1, &n)) || k != end)
            return NULL;
        w = compare_to_words(op, strtol(n, NULL, 10));
    } else {
        w = j == end ? method_words(&v[i + 1], neg) : NULL;
    }
    return w ? dra_arena_sprintf(ar, "%s %s", w, lit) : NULL;
}

/* `ref in [lit, ...]` from |i| (at `in`). */
static const char *in_list_shape(dra_arena *ar, const toks *t, size_t i, size_t end)
{
    dra_buf b;
    const char *out = NULL;
    if (i + 2 >= end || !is_id(&t->v[i], "in") || !is_op(&t->v[i + 1], "["))
        return NULL;
    dra_buf_init(&b, ar->mem);
    dra_buf_puts(&b, "needs one of ");
    for (i += 2; i < end && !is_op(&t->v[i], "]");) {
        const char *lit;
        size_t j = parse_lit(ar, t, i, &lit);
        if (!j)
            goto done;
        dra_buf_printf(&b, "%s%s", is_op(&t->v[i - 1], "[") ? "" : ", ", lit);
        i = j < end && is_op(&t->v[j], ",") ? j + 1 : j;
    }
    if (i + 1 == end && !b.oom)
        out = dra_arena_strndup(ar, b.p, b.len);
done:
    dra_buf_fini(&b);
    return out;
}

static void add_ref(term *tm, const ref *r)
{
    for (size_t i = 0; i < tm->nrefs; i++)
        if (tm->refs[i].k == r->k && (tm->refs[i].domain == r->domain ||
                                      (tm->refs[i].domain && r->domain &&
                                       strcmp(tm->refs[i].domain, r->domain) == 0)) &&
            (tm->refs[i].id == r->id ||
             (tm->refs[i].id && r->id && strcmp(tm->refs[i].id, r->id) == 0)))
            return;
    if (tm->nrefs < MAX_REFS)
        tm->refs[tm->nrefs++] = *r;
}

/* Reads the shape of tokens [b, e) of |t| into |tm|. */
static void shape(dra_arena *ar, const toks *t, size_t b, size_t e, term *tm)
{
    const tok *v = t->v;
    ref r;
    size_t j;
    int neg = 0, op;
    const char *lit;
    while (e - b >= 2 && is_op(&v[b], "(") && is_op(&v[e - 1], ")")) {
        int depth = 0, outer = 1; /* strip only parentheses around everything */
        for (size_t i = b; i < e - 1 && outer; i++) {
            depth += is_op(&v[i], "(") - is_op(&v[i], ")");
            outer = depth > 0;
        }
        if (!outer)
            break;
        b++, e--;
    }
    while (b < e && is_op(&v[b], "!"))
        neg ^= 1, b++;
    if ((j = parse_ref(t, b, &r)) && (r.id || r.k == REF_DRIVER || r.k == REF_MULTI)) {
        add_ref(tm, &r);
        if (j == e)
            tm->needs = neg ? "needs false" : "needs true";
        else if (!neg && (op = cmp_op(&v[j])) >= 0 && parse_lit(ar, t, j + 1, &lit) == e)
            tm->needs = dra_arena_sprintf(ar, "%s %s", cmp_words[op], lit);
        else if (!neg && is_id(&v[j], "in"))
            tm->needs = in_list_shape(ar, t, j, e);
        else
            tm->needs = method_shape(ar, t, j, e, neg);
    } else if (!neg && (j = parse_lit(ar, t, b, &lit)) && j < e && (op = cmp_op(&v[j])) >= 0 &&
               parse_ref(t, j + 1, &r) == e && r.id) {
        add_ref(tm, &r);
        tm->needs = dra_arena_sprintf(ar, "%s %s", cmp_words[flip(op)], lit);
    } else if (!neg && b + 2 < e && v[b].k == T_STR && is_id(&v[b + 1], "in") &&
               parse_ref(t, b + 2, &r) == e && !r.id && (r.k == REF_ATTR || r.k == REF_CAP)) {
        r.id = v[b].s;
        add_ref(tm, &r);
        tm->presence = 1;
        tm->needs = "";
    } else if (!neg && b + 3 < e && is_id(&v[b], "has") && is_op(&v[b + 1], "(") &&
               (j = parse_ref(t, b + 2, &r)) && j + 1 == e && is_op(&v[j], ")") && r.id) {
        add_ref(tm, &r);
        tm->presence = 1;
        tm->needs = "";
    }
    if (tm->needs)
        return;
    tm->nrefs = 0; /* unknown shape: every value the term reads */
    for (size_t i = b; i < e; i++)
        if (parse_ref(t, i, &r) && (r.id || r.k == REF_DRIVER || r.k == REF_MULTI))
            add_ref(tm, &r);
}

/* Gives the ids that point into the expression their own strings. */
static int fix_ids(dra_arena *ar, term *tm, const char *expr, size_t len)
{
    for (size_t i = 0; i < tm->nrefs; i++) {
        const char *id = tm->refs[i].id;
        if (id && id >= expr && id < expr + len) {
            size_t n = 0;
            while (is_id0(id[n]) || is_digit(id[n]))
                n++;
            if (!(tm->refs[i].id = dra_arena_strndup(ar, id, n)))
                return 0;
        }
    }
    return 1;
}

/* Builds the terms of program |id| (once; NULL on ENOMEM). */
static split *get_split(dra_allocator *a, uint32_t id)
{
    const char *expr = a->progs[id].expr;
    size_t len = strlen(expr), cut[65], ncut = 0, depth = 0;
    toks *t;
    split *sp;
    int ok = 1;
    if (a->progs[id].why)
        return a->progs[id].why;
    if (!(t = dra_malloc(a->mem, sizeof *t)) || !(sp = dra_arena_zalloc(&a->arena, sizeof *sp))) {
        dra_free(a->mem, t);
        return NULL;
    }
    /* Split at top-level && unless a top-level || or ?: binds looser. */
    ok = lex(&a->arena, expr, t);
    cut[ncut++] = 0;
    for (size_t i = 0; ok && i < t->n; i++) {
        if (is_op(&t->v[i], "(") || is_op(&t->v[i], "[") || is_op(&t->v[i], "{"))
            depth++;
        else if ((is_op(&t->v[i], ")") || is_op(&t->v[i], "]") || is_op(&t->v[i], "}")) && depth)
            depth--;
        else if (!depth && (is_op(&t->v[i], "||") || is_op(&t->v[i], "?")))
            ncut = 1, ok = 0;
        else if (!depth && is_op(&t->v[i], "&&") && ncut < 64)
            cut[ncut++] = i + 1;
    }
    if (!ok)
        ncut = 1;
    sp->nterms = ncut;
    sp->fixed = -1;
    sp->terms = dra_arena_array(&a->arena, ncut, sizeof *sp->terms);
    for (size_t k = 0; sp->terms && k < ncut; k++) {
        term *tm = &sp->terms[k];
        size_t b = cut[k], e = k + 1 < ncut ? cut[k + 1] - 1 : t->n;
        const char *from = ok && b < t->n ? t->v[b].p : expr;
        const char *to = ok && e > b ? t->v[e - 1].p + t->v[e - 1].n : expr + len;
        if (!(tm->text = dra_arena_strndup(&a->arena, from, (size_t)(to - from))))
            goto oom;
        if (ncut == 1)
            tm->prog = id;
        else if (alloc_prog_id(a, tm->text, &tm->prog) != DRA_OK)
            goto oom;
        if (ok)
            shape(&a->arena, t, b, e, tm);
        if (!fix_ids(&a->arena, tm, expr, len))
            goto oom;
    }
    if (!sp->terms)
        goto oom;
    dra_free(a->mem, t);
    a->progs[id].why = sp;
    return sp;
oom:
    dra_free(a->mem, t);
    return NULL;
}

/* ---- values ------------------------------------------------------------------ */

static const dra_alloc_capacity *cap_lookup(const char *driver, const dra_alloc_device *d,
                                            const char *domain, const char *id)
{
    for (size_t i = 0; i < d->ncaps; i++) {
        const char *n = d->caps[i].name, *slash = strchr(n, '/');
        if (slash ? (strlen(domain) == (size_t)(slash - n) && memcmp(n, domain, (size_t)(slash - n)) == 0 &&
                     strcmp(slash + 1, id) == 0)
                  : (strcmp(domain, driver) == 0 && strcmp(n, id) == 0))
            return &d->caps[i];
    }
    return NULL;
}

static void put_name(dra_buf *b, const char *driver, const ref *r)
{
    if (r->k == REF_DRIVER)
        dra_buf_puts(b, "driver");
    else if (r->k == REF_MULTI)
        dra_buf_puts(b, "allowMultipleAllocations");
    else if (strcmp(r->domain, driver) == 0)
        dra_buf_puts(b, r->id);
    else
        dra_buf_printf(b, "%s/%s", r->domain, r->id);
}

/* "memory is 189471Mi", "productName is missing". */
static void put_value(dra_buf *b, const a_dev *v, const ref *r, int presence)
{
    const char *drv = v->s->driver;
    put_name(b, drv, r);
    if (r->k == REF_DRIVER) {
        dra_buf_printf(b, " is \"%s\"", drv);
    } else if (r->k == REF_MULTI) {
        dra_buf_puts(b, v->d->allow_multiple_allocations ? " is true" : " is false");
    } else if (r->k == REF_CAP) {
        const dra_alloc_capacity *c = cap_lookup(drv, v->d, r->domain, r->id);
        char q[DRA_QTY_STR_MAX];
        if (!c) {
            dra_buf_puts(b, " is missing");
        } else if (!presence) {
            dra_quantity_str(&c->value, q, sizeof q);
            dra_buf_printf(b, " is %s", q);
        }
    } else {
        const dra_cel_attr *at;
        dra_buf name;
        dra_buf_init(&name, b->mem);
        dra_buf_printf(&name, "%s/%s", r->domain, r->id);
        at = name.p ? dra_alloc_attr_lookup(drv, v->d, name.p) : NULL;
        dra_buf_fini(&name);
        if (!at)
            dra_buf_puts(b, " is missing");
        else if (presence)
            ;
        else if (at->kind == DRA_CEL_ATTR_INT)
            dra_buf_printf(b, " is %" PRId64, at->i);
        else if (at->kind == DRA_CEL_ATTR_BOOL)
            dra_buf_puts(b, at->b ? " is true" : " is false");
        else if (at->kind == DRA_CEL_ATTR_VERSION)
            dra_buf_printf(b, " is %s", at->s ? at->s : "");
        else
            dra_buf_printf(b, " is \"%s\"", at->s ? at->s : "");
    }
}

/* A term as written, cut short: explanations stay sentences. */
static void put_text(dra_buf *b, const char *text)
{
    size_t n = strlen(text);
    if (n <= 120)
        dra_buf_puts(b, text);
    else
        dra_buf_printf(b, "%.100s ...", text);
}

/* The words for why |tm| is false on |v|. */
static void put_term(dra_buf *b, const a_dev *v, const term *tm)
{
    size_t n = 0;
    for (size_t i = 0; i < tm->nrefs; i++) {
        size_t mark = b->len;
        if (n)
            dra_buf_puts(b, ", ");
        put_value(b, v, &tm->refs[i], tm->presence);
        if (tm->presence && b->len >= 8 && memcmp(b->p + b->len - 8, " missing", 8) != 0) {
            b->len = mark; /* present: says nothing */
            b->p[b->len] = '\0';
            continue;
        }
        n++;
    }
    if (tm->needs && *tm->needs) {
        dra_buf_printf(b, "%s%s", n ? ", " : "", tm->needs);
    } else if (!tm->needs || !n) {
        dra_buf_puts(b, n ? "; " : "");
        put_text(b, tm->text);
        dra_buf_puts(b, " is false");
    }
}

/* A value shown for |r| is one the whole program reads: the same lookup
 * (a domain with a '/' never matches in CEL, so it is not counted). */
static int ref_read(dra_allocator *a, uint32_t id, const ref *r)
{
    if (r->k == REF_DRIVER || r->k == REF_MULTI)
        return alloc_reads_has(a, id, r->k == REF_MULTI, NULL, NULL);
    if (!r->domain || !r->id || strchr(r->domain, '/'))
        return 0;
    return alloc_reads_has(a, id, r->k == REF_CAP, r->domain, r->id);
}

int alloc_sel_why_fixed(dra_allocator *a, uint32_t id)
{
    split *sp = get_split(a, id);
    int fixed = 1;
    if (!sp)
        return 0;
    if (sp->fixed >= 0)
        return sp->fixed;
    for (size_t k = 0; fixed && k < sp->nterms; k++) {
        const term *tm = &sp->terms[k];
        fixed = alloc_reads_within(a, tm->prog, id);
        for (size_t i = 0; fixed && i < tm->nrefs; i++)
            fixed = ref_read(a, id, &tm->refs[i]);
    }
    /* The program itself when no term is false: its text, no values. */
    sp->fixed = fixed && a->progs[id].nreads >= 0;
    return sp->fixed;
}

dra_err alloc_sel_why(dra_allocator *a, uint32_t id, a_dev *v, dra_buf *b)
{
    split *sp = get_split(a, id);
    if (!sp)
        return DRA_ENOMEM;
    for (size_t k = 0; k < sp->nterms; k++) {
        int r = alloc_prog_eval(a, sp->terms[k].prog, v, NULL);
        if (r == DRA_ENOMEM)
            return DRA_ENOMEM;
        if (r == 0) {
            put_term(b, v, &sp->terms[k]);
            return b->oom ? DRA_ENOMEM : DRA_OK;
        }
    }
    /* No single term is false (errors absorbed by &&, say): the whole. */
    put_text(b, a->progs[id].expr);
    dra_buf_puts(b, " is false");
    return b->oom ? DRA_ENOMEM : DRA_OK;
}
