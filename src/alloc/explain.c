/*
 * explain.c: says why claims could not be allocated. After a failed
 * search, each request (and each firstAvailable alternative) is checked
 * against every device on its own, and the devices are counted by the
 * first rule that rejects them, with a few examples each; devices a
 * selector rejects are grouped by the selector and the values it read
 * (explain_sel.c), so thousands of identical devices make one group. The
 * result is data (dra_alloc_why_*: one sentence per request) and the text
 * built from it. When enough devices pass every check on their own, the
 * failure lies in combining them (constraints, or several requests
 * wanting the same devices), and the text says so.
 */
#include <inttypes.h>
#include <string.h>

#include "alloc_int.h"

/* ORDER reason: the order of the checks and of the text. */
typedef enum reason {
    R_CLASS,
    R_SELECTOR,
    R_SELERR,
    R_TOTALCAP,
    R_INCOMPLETE,
    R_INVALID,
    R_NODE,
    R_ALLOCATED,
    R_TAINTED,
    R_CAPACITY,
    R_COUNTERS,
    R_USABLE,
    R_N
} reason;

static const char *const reason_text[2][R_N] = {
    {
        "do not match the device class",
        "do not match the request's selectors",
        "make a selector fail with an error",
        "cannot hold the requested capacity even when unused",
        "are in a resource pool that is incomplete (being updated)",
        "are in an invalid resource pool",
        "are not available on this node",
        "are already allocated",
        "have taints the request does not tolerate",
        "do not have enough remaining capacity",
        "would exceed their pool's shared counters",
        "are usable",
    },
    { /* one device */
        "does not match the device class",
        "does not match the request's selectors",
        "makes a selector fail with an error",
        "cannot hold the requested capacity even when unused",
        "is in a resource pool that is incomplete (being updated)",
        "is in an invalid resource pool",
        "is not available on this node",
        "is already allocated",
        "has taints the request does not tolerate",
        "does not have enough remaining capacity",
        "would exceed its pool's shared counters",
        "is usable",
    },
};

/* Devices one selector rejected for the same reason in the same words. */
#define NGROUPS 6
typedef struct group {
    int cls;       /* a class selector */
    size_t k;      /* its index */
    const char *why;
    size_t n;
    const a_dev *ex[3];
} group;

typedef struct tally {
    size_t n[R_N];
    const a_dev *ex[R_N][3];
    char *err; /* first selector error */
    group g[NGROUPS];
    size_t ng;
    size_t other[2]; /* rejected devices beyond the groups (request, class) */
} tally;

enum { W_REQ = 1, W_CLASS = 2 };

typedef struct ectx {
    s_state *S;
    dra_buf why; /* scratch for one device's words */
    int words; /* group rejected devices with words: 0 no, W_REQ, W_CLASS */
    /* Words by footprint, for one tally: a device whose selector read the
     * same values as one counted before joins its group without the
     * words being written again (key: selector, footprint). */
    dra_map seen;   /* key -> group index + 1, or NGROUPS + 1: beyond them */
    dra_arena keys;
    dra_buf key;
    /* The last few keys, compared before hashing: thousands of devices
     * usually show a handful of footprints. */
    struct {
        const char *key;
        size_t len, group;
    } recent[8];
    size_t nrecent, next_recent;
} ectx;

/* first_false: no selector rejects; one fails with an error. Both below
 * every dra_err code. */
enum { F_ALL = -1000, F_ERR = -1001 };

/* Index of the first selector in [from, to) that does not select |v|,
 * F_ALL when all do, F_ERR for an error (message kept in |t| when
 * visible), DRA_ENOMEM. */
static long first_false(ectx *E, const s_alt *alt, size_t from, size_t to, a_dev *v,
                        tally *t, int visible)
{
    s_state *S = E->S;
    for (size_t i = from; i < to; i++) {
        /* No message wanted on the common path; an error (never cached)
         * is evaluated again for its words. */
        int r = alloc_prog_eval(S->a, alt->sel[i], v, NULL);
        if (r < 0 && r != DRA_ENOMEM && visible && !t->err) {
            dra_diag d;
            dra_diag_init(&d, S->a->mem);
            r = alloc_prog_eval(S->a, alt->sel[i], v, &d);
            if (dra_diag_first(&d))
                t->err = dra_arena_sprintf(S->ar, "%s/%s/%s: %s", v->s->driver, v->s->pool,
                                           v->d->name, dra_diag_first(&d));
            dra_diag_fini(&d);
        }
        if (r == DRA_ENOMEM)
            return DRA_ENOMEM;
        if (r < 0)
            return visible ? F_ERR : (long)i;
        if (!r)
            return (long)i;
    }
    return F_ALL;
}

static void count_in(tally *t, size_t i, int cls, a_dev *v)
{
    if (i == NGROUPS) {
        t->other[cls]++;
        return;
    }
    if (t->g[i].n < 3)
        t->g[i].ex[t->g[i].n] = v;
    t->g[i].n++;
}

static void remember(ectx *E, const char *key, size_t len, size_t gi)
{
    size_t r = E->next_recent++ % 8;
    E->recent[r].key = key;
    E->recent[r].len = len;
    E->recent[r].group = gi;
    if (E->nrecent < 8)
        E->nrecent++;
}

/* The key of |v|'s words for selector |k| in E->key, when the words
 * depend only on its footprint; 0 otherwise. */
static int words_key(ectx *E, const s_alt *alt, size_t k, const a_dev *v)
{
    dra_allocator *a = E->S->a;
    uint32_t id = alt->sel[k], ord;
    if (!alloc_sel_why_fixed(a, id))
        return 0;
    if ((ord = alloc_fp_ordinal(a, id, v))) {
        /* The footprint's number: no values to read again. */
        dra_buf_reset(&E->key);
        dra_buf_putc(&E->key, 'o');
        dra_buf_append(&E->key, &ord, sizeof ord);
    } else if (!alloc_fp_key(a, id, v, &E->key)) {
        return 0;
    }
    dra_buf_append(&E->key, &k, sizeof k);
    return !E->key.oom;
}

/* Counts |v| into the group of selector |k| with its words. */
static dra_err add_group(ectx *E, tally *t, const s_alt *alt, size_t k, a_dev *v)
{
    int cls = k < alt->nclass_sel, keyed = words_key(E, alt, k, v);
    size_t kk = cls ? k : k - alt->nclass_sel, i;
    uintptr_t hit;
    char *key;
    dra_err err;
    if (E->key.oom)
        return DRA_ENOMEM;
    for (size_t r = 0; keyed && r < E->nrecent; r++)
        if (E->recent[r].len == E->key.len && !memcmp(E->recent[r].key, E->key.p, E->key.len)) {
            count_in(t, E->recent[r].group, cls, v);
            return DRA_OK;
        }
    if (keyed && (hit = (uintptr_t)dra_map_get(&E->seen, E->key.p, E->key.len))) {
        count_in(t, (size_t)hit - 1, cls, v);
        remember(E, dra_map_find(&E->seen, E->key.p, E->key.len)->key, E->key.len,
                 (size_t)hit - 1);
        return DRA_OK;
    }
    dra_buf_reset(&E->why);
    if ((err = alloc_sel_why(E->S->a, alt->sel[k], v, &E->why)) != DRA_OK)
        return err;
    for (i = 0; i < t->ng; i++)
        if (t->g[i].cls == cls && t->g[i].k == kk && strcmp(t->g[i].why, E->why.p) == 0)
            break;
    if (i == t->ng && t->ng < NGROUPS) {
        if (!(t->g[i].why = dra_arena_strdup(E->S->ar, E->why.p)))
            return DRA_ENOMEM;
        t->g[i].cls = cls;
        t->g[i].k = kk;
        t->ng++;
    }
    count_in(t, i, cls, v);
    /* words_key's buffer is untouched by alloc_sel_why (its own). */
    if (keyed && (!(key = dra_arena_alloc(&E->keys, E->key.len)) ||
                  dra_map_put(&E->seen, memcpy(key, E->key.p, E->key.len), E->key.len,
                              (void *)(uintptr_t)(i + 1))))
        return DRA_ENOMEM;
    if (keyed)
        remember(E, key, E->key.len, i);
    return DRA_OK;
}

/* Classifies |v| for |alt|: *out gets the reason; returns 1 when the
 * device counts, 0 when it is not news (another node's device of another
 * class), DRA_ENOMEM. */
static int classify(ectx *E, const s_alt *alt, a_dev *v, tally *t, reason *out)
{
    s_state *S = E->S;
    const a_pool *p = &S->a->pools[v->pool];
    int visible = !S->node || alloc_dev_matches_node(S->a, v, S->node);
    long f = first_false(E, alt, 0, alt->nclass_sel, v, t, visible);
    if (f == DRA_ENOMEM)
        return DRA_ENOMEM;
    if (f != F_ALL) {
        *out = f == F_ERR ? R_SELERR : R_CLASS;
        if (f >= 0 && visible && E->words == W_CLASS && add_group(E, t, alt, (size_t)f, v))
            return DRA_ENOMEM;
        return visible ? 1 : 0; /* other nodes' devices of other classes: not news */
    }
    f = first_false(E, alt, alt->nclass_sel, alt->nsel, v, t, visible);
    if (f == DRA_ENOMEM)
        return DRA_ENOMEM;
    if (f != F_ALL) {
        *out = f == F_ERR ? R_SELERR : R_SELECTOR;
        if (f >= 0 && visible && E->words == W_REQ && add_group(E, t, alt, (size_t)f, v))
            return DRA_ENOMEM;
        return visible ? 1 : 0;
    }
    if (!visible)
        *out = R_NODE;
    else if (!alloc_cap_fit_total(v, alt))
        *out = R_TOTALCAP;
    else if (p->state == A_POOL_INCOMPLETE)
        *out = R_INCOMPLETE;
    else if (p->state == A_POOL_INVALID)
        *out = R_INVALID;
    else if (!alt->r->admin_access && v->excl > 0)
        *out = R_ALLOCATED;
    else if (!alloc_tolerated(v, alt->r))
        *out = R_TAINTED;
    else if (!alloc_cap_fit(v, alt, NULL))
        *out = R_CAPACITY;
    else if (!alt->r->admin_access && (!v->multi || v->excl + v->shares == 0) &&
             !alloc_counters_fit(S->a, v))
        *out = R_COUNTERS;
    else
        *out = R_USABLE;
    return 1;
}

static void put_examples(dra_buf *b, const a_dev *const *ex, size_t n, const char *open)
{
    for (size_t k = 0; k < 3 && k < n && ex[k]; k++)
        dra_buf_printf(b, "%s%s/%s/%s", k ? ", " : open, ex[k]->s->driver, ex[k]->s->pool,
                       ex[k]->d->name);
    if (n && ex[0])
        dra_buf_puts(b, n > 3 ? ", ...)" : ")");
}

/* "4 do not match selector #0 (memory is 189471Mi, needs more than 200Gi;
 * e.g. ...)" for each group of class (|cls|) or request selectors. */
static void put_groups(dra_buf *b, const tally *t, int cls, size_t all, int *first)
{
    for (size_t i = 0; i < t->ng; i++) {
        const group *g = &t->g[i];
        if (g->cls != cls)
            continue;
        dra_buf_printf(b, "%s%zu %s %sselector #%zu (%s", *first ? "" : "; ", g->n,
                       g->n == 1 ? "does not match" : "do not match", cls ? "class " : "", g->k,
                       g->why);
        if (g->n < all) /* examples say nothing when it is every device */
            put_examples(b, g->ex, g->n, "; e.g. ");
        if (g->n >= all || !g->ex[0])
            dra_buf_putc(b, ')');
        *first = 0;
    }
    if (t->other[cls])
        dra_buf_printf(b, "%s%zu more %s the %s selectors", *first ? "" : "; ",
                       t->other[cls], t->other[cls] == 1 ? "does not match" : "do not match",
                       cls ? "class's" : "request's");
    *first = *first && !t->other[cls];
}

/* The reasons, in check order (class mismatches and usable devices are
 * said in the sentence's head). */
static void put_reasons(dra_buf *b, const tally *t, size_t all)
{
    int first = 1;
    put_groups(b, t, 0, all, &first);
    for (int r = R_SELERR; r < R_USABLE; r++) {
        if (!t->n[r])
            continue;
        dra_buf_printf(b, "%s%zu %s", first ? "" : "; ", t->n[r], reason_text[t->n[r] == 1][r]);
        put_examples(b, t->ex[r], t->n[r], " (e.g. ");
        first = 0;
    }
    if (t->err)
        dra_buf_printf(b, "%sselector error: %s", first ? "" : "; ", t->err);
}

static dra_err tally_alt(ectx *E, const s_alt *alt, tally *t)
{
    s_state *S = E->S;
    memset(t, 0, sizeof *t);
    /* Group indices are this tally's. */
    dra_map_fini(&E->seen);
    dra_map_init(&E->seen, S->a->mem);
    dra_arena_reset(&E->keys);
    E->nrecent = E->next_recent = 0;
    for (size_t i = 0; i < S->a->ndevs; i++) {
        reason r;
        int c = classify(E, alt, &S->a->devs[i], t, &r);
        if (c == DRA_ENOMEM)
            return DRA_ENOMEM;
        if (!c)
            continue;
        if (t->n[r] < 3)
            t->ex[r][t->n[r]] = &S->a->devs[i];
        t->n[r]++;
    }
    return DRA_OK;
}

/* One sentence for one alternative; *enough when it has the devices it
 * needs on its own. */
static dra_err explain_alt(ectx *E, const s_alt *alt, dra_buf *b, int *enough)
{
    s_state *S = E->S;
    tally t;
    size_t total = 0, of_class, usable;
    int64_t need = alt->r->mode == DRA_ALLOC_ALL ? 0 : alt->count;
    const char *where = S->node ? "on this node" : "on any node";
    dra_err err;
    if (alt->broken) {
        dra_buf_puts(b, alt->broken);
        *enough = 0;
        return DRA_OK;
    }
    E->words = W_REQ;
    if ((err = tally_alt(E, alt, &t)) != DRA_OK)
        return err;
    for (int r = 0; r < R_N; r++)
        total += t.n[r];
    /* Devices of the class on this node; those elsewhere come last. */
    of_class = total - t.n[R_CLASS] - t.n[R_NODE];
    usable = t.n[R_USABLE];
    if (!of_class && !t.n[R_NODE]) {
        /* Nothing passes the class: then the class selectors are the news. */
        E->words = W_CLASS;
        if ((err = tally_alt(E, alt, &t)) != DRA_OK)
            return err;
        dra_buf_printf(b, "no device %s matches class %s", where, alt->cls->name);
    } else if (!of_class) {
        dra_buf_printf(b, "no device of class %s is %s", alt->cls->name, where);
    } else if (of_class == 1) {
        dra_buf_printf(b, "the one device of class %s%s%s %s", alt->cls->name,
                       S->node ? " " : "", S->node ? where : "", usable ? "fits" : "does not fit");
    } else {
        const char *on = S->node ? " on this node" : "";
        if (!usable)
            dra_buf_printf(b, "none of the %zu devices of class %s%s fits", of_class,
                           alt->cls->name, on);
        else if (usable == of_class)
            dra_buf_printf(b, "all %zu devices of class %s%s fit", of_class, alt->cls->name, on);
        else
            dra_buf_printf(b, "%zu of the %zu devices of class %s%s fit%s", usable, of_class,
                           alt->cls->name, on, usable == 1 ? "s" : "");
    }
    if (alt->r->admin_access)
        dra_buf_puts(b, " (admin access)");
    if (alt->r->mode == DRA_ALLOC_ALL)
        dra_buf_puts(b, ", all needed");
    else
        dra_buf_printf(b, ", %" PRId64 " needed", need);
    if (!of_class && !t.n[R_NODE]) {
        int first = 1;
        size_t mark = b->len;
        dra_buf_printf(b, " (%zu device%s considered: ", t.n[R_CLASS], t.n[R_CLASS] == 1 ? "" : "s");
        put_groups(b, &t, 1, t.n[R_CLASS], &first);
        if (first) { /* no words for them: just the count */
            b->len = mark;
            dra_buf_printf(b, " (%zu other device%s considered", t.n[R_CLASS],
                           t.n[R_CLASS] == 1 ? "" : "s");
        }
        dra_buf_putc(b, ')');
        if (!t.n[R_CLASS]) {
            b->len = mark;
            if (b->p)
                b->p[b->len] = '\0';
        }
    } else if (usable < of_class + t.n[R_NODE]) {
        dra_buf_puts(b, ": ");
        put_reasons(b, &t, of_class + t.n[R_NODE]);
    }
    if (alt->r->mode == DRA_ALLOC_ALL) {
        size_t matching = 0;
        for (int r = R_NODE + 1; r < R_N; r++)
            matching += t.n[r];
        *enough = matching > 0 && usable == matching && !t.n[R_INCOMPLETE] && !t.n[R_INVALID];
        if (!matching)
            dra_buf_puts(b, "; All mode needs at least one matching device");
        else if (!*enough)
            dra_buf_puts(b, "; All mode needs every matching device to be usable");
    } else {
        *enough = (int64_t)usable >= need;
    }
    return b->oom ? DRA_ENOMEM : DRA_OK;
}

/* ---- constraints ------------------------------------------------------------ */

typedef struct vcount {
    const dra_cel_attr *v;
    size_t n;
} vcount;

static int same_value(const dra_cel_attr *x, const dra_cel_attr *y)
{
    if (x->kind != y->kind)
        return 0;
    if (x->kind == DRA_CEL_ATTR_INT)
        return x->i == y->i;
    if (x->kind == DRA_CEL_ATTR_BOOL)
        return !x->b == !y->b;
    return strcmp(x->s ? x->s : "", y->s ? y->s : "") == 0;
}

static void put_value(dra_buf *b, const dra_cel_attr *v)
{
    if (v->kind == DRA_CEL_ATTR_INT)
        dra_buf_printf(b, "%" PRId64, v->i);
    else if (v->kind == DRA_CEL_ATTR_BOOL)
        dra_buf_puts(b, v->b ? "true" : "false");
    else
        dra_buf_printf(b, "\"%s\"", v->s ? v->s : "");
}

/* Whether |v| is usable, on its own, for some alternative of a request
 * the constraint covers; |need| gets the devices those requests need. */
static int usable_for(ectx *E, uint32_t ci, const s_con *c, a_dev *v, int64_t *need)
{
    s_state *S = E->S;
    int any = 0;
    for (uint32_t i = S->claim_req0[ci]; i < S->claim_req0[ci + 1]; i++) {
        const s_req *q = &S->reqs[i];
        int64_t best = INT64_MAX;
        for (size_t k = 0; k < q->nalts; k++) {
            const dra_alloc_constraint *dc = c->c;
            int covered = !dc->nrequests;
            tally t;
            reason r;
            for (size_t x = 0; !covered && x < dc->nrequests; x++)
                covered = strcmp(dc->requests[x], q->r->name) == 0 ||
                          strcmp(dc->requests[x], q->alts[k].name) == 0;
            if (!covered || q->alts[k].broken)
                continue;
            if (q->alts[k].count < best)
                best = q->alts[k].count;
            memset(&t, 0, sizeof t);
            E->words = 0;
            if (v && !any) {
                int c2 = classify(E, &q->alts[k], v, &t, &r);
                if (c2 == DRA_ENOMEM)
                    return DRA_ENOMEM;
                any = c2 == 1 && r == R_USABLE;
            }
        }
        if (need && best != INT64_MAX)
            *need += best;
    }
    return any;
}

/* For matchAttribute: how many usable devices share each value; for
 * distinctAttribute: how many different values there are. */
static dra_err explain_constraint(ectx *E, uint32_t ci, const s_con *c, const char **out)
{
    s_state *S = E->S;
    vcount vc[16];
    size_t nv = 0, more = 0, without = 0;
    int64_t need = 0;
    dra_buf b;
    dra_err err = DRA_OK;
    if (usable_for(E, ci, c, NULL, &need) == DRA_ENOMEM)
        return DRA_ENOMEM;
    for (size_t i = 0; i < S->a->ndevs; i++) {
        a_dev *v = &S->a->devs[i];
        const dra_cel_attr *at;
        size_t k = 0;
        int u = usable_for(E, ci, c, v, NULL);
        if (u == DRA_ENOMEM)
            return DRA_ENOMEM;
        if (!u)
            continue;
        if (!(at = dra_alloc_attr_lookup(v->s->driver, v->d, c->attr))) {
            without++;
            continue;
        }
        while (k < nv && !same_value(vc[k].v, at))
            k++;
        if (k < nv)
            vc[k].n++;
        else if (nv < 16)
            vc[nv++] = (vcount){at, 1};
        else
            more++;
    }
    dra_buf_init(&b, S->a->mem);
    dra_buf_printf(&b, "%s %s (%" PRId64 " device%s together): ",
                   c->distinct ? "distinctAttribute" : "matchAttribute", c->attr, need,
                   need == 1 ? "" : "s");
    if (c->distinct) {
        dra_buf_printf(&b, "%zu%s different value%s among the usable devices", nv,
                       more ? "+" : "", nv == 1 ? "" : "s");
    } else {
        dra_buf_puts(&b, nv ? "usable devices per value:" : "no usable device has it");
        for (size_t k = 0; k < nv; k++) {
            dra_buf_puts(&b, k ? ", " : " ");
            put_value(&b, vc[k].v);
            dra_buf_printf(&b, ": %zu", vc[k].n);
        }
        if (more)
            dra_buf_printf(&b, ", %zu more", more);
    }
    if (without)
        dra_buf_printf(&b, "; %zu usable device%s lack%s the attribute", without,
                       without == 1 ? "" : "s", without == 1 ? "s" : "");
    if (b.oom || !(*out = dra_arena_strdup(S->ar, b.p)))
        err = DRA_ENOMEM;
    dra_buf_fini(&b);
    return err;
}

/* ---- claims and the whole text ------------------------------------------------ */

static dra_err explain_claim(ectx *E, uint32_t ci, dra_alloc_why_claim *w, int *all_enough)
{
    s_state *S = E->S;
    const dra_alloc_claim *cl = S->claims[ci];
    size_t nalts = 0, j = 0;
    dra_buf b;
    dra_err err = DRA_OK;
    for (uint32_t i = S->claim_req0[ci]; i < S->claim_req0[ci + 1]; i++)
        nalts += S->reqs[i].nalts;
    w->claim = cl;
    w->name = alloc_claim_name(S->ar, cl);
    w->requests = dra_arena_array(S->ar, nalts + 1, sizeof *w->requests);
    w->constraints = dra_arena_array(S->ar, cl->nconstraints + 1, sizeof *w->constraints);
    if (!w->name || !w->requests || !w->constraints)
        return DRA_ENOMEM;
    dra_buf_init(&b, S->a->mem);
    for (uint32_t i = S->claim_req0[ci]; err == DRA_OK && i < S->claim_req0[ci + 1]; i++) {
        const s_req *q = &S->reqs[i];
        int any = 0;
        for (size_t k = 0; err == DRA_OK && k < q->nalts; k++) {
            dra_alloc_why_request *wr = &w->requests[j++];
            dra_buf_reset(&b);
            err = explain_alt(E, &q->alts[k], &b, &wr->enough);
            wr->request = q->alts[k].name;
            if (err == DRA_OK && !(wr->text = dra_arena_strdup(S->ar, b.p ? b.p : "")))
                err = DRA_ENOMEM;
            any |= wr->enough;
        }
        *all_enough &= any;
    }
    dra_buf_fini(&b);
    w->nrequests = j;
    for (size_t k = 0; err == DRA_OK && k < cl->nconstraints; k++)
        err = explain_constraint(E, ci, &S->cons[S->claim_con0[ci] + k], &w->constraints[k]);
    if (err == DRA_OK)
        w->nconstraints = cl->nconstraints;
    return err;
}

static dra_err render(dra_alloc_outcome *out)
{
    dra_buf b;
    dra_err err = DRA_OK;
    dra_buf_init(&b, NULL);
    dra_buf_puts(&b, out->why_where);
    for (size_t i = 0; i < out->nwhy; i++) {
        const dra_alloc_why_claim *w = &out->why[i];
        dra_buf_printf(&b, "\nclaim %s:", w->name);
        for (size_t k = 0; k < w->nrequests; k++)
            dra_buf_printf(&b, "\n  request %s: %s", w->requests[k].request, w->requests[k].text);
        for (size_t k = 0; k < w->nconstraints; k++)
            dra_buf_printf(&b, "\n  constraint %s", w->constraints[k]);
    }
    if (out->why_together)
        dra_buf_printf(&b, "\n%s", out->why_together);
    if (b.oom || !(out->explanation = dra_arena_strndup(&out->arena, b.p, b.len)))
        err = DRA_ENOMEM;
    dra_buf_fini(&b);
    return err;
}

dra_err alloc_explain(s_state *S, dra_alloc_outcome *out)
{
    ectx E;
    int all_enough = 1, fatal = S->fatal != DRA_OK;
    dra_err err = DRA_OK;
    memset(&E, 0, sizeof E);
    E.S = S;
    dra_buf_init(&E.why, S->a->mem);
    dra_buf_init(&E.key, S->a->mem);
    dra_map_init(&E.seen, S->a->mem);
    dra_arena_init(&E.keys, S->a->mem);
    if (S->node)
        out->why_where = dra_arena_sprintf(S->ar, "cannot allocate all claims on node %s",
                                           S->node->name);
    else
        out->why_where = dra_arena_sprintf(S->ar, "cannot allocate all claims on any node "
                                           "(%zu node%s)", S->a->nnodes,
                                           S->a->nnodes == 1 ? "" : "s");
    out->why = dra_arena_array(S->ar, S->nclaims + 1, sizeof *out->why);
    if (!out->why_where || !out->why)
        err = DRA_ENOMEM;
    for (uint32_t ci = 0; err == DRA_OK && ci < S->nclaims; ci++)
        err = explain_claim(&E, ci, &out->why[ci], &all_enough);
    if (err == DRA_OK) {
        out->nwhy = S->nclaims;
        if (all_enough && !fatal)
            out->why_together = dra_arena_sprintf(
                S->ar, "every request has enough usable devices on its own, but not together%s: "
                       "the constraints cannot be met, or the requests compete for the same "
                       "devices", S->node ? "" : " on a single node");
        if (all_enough && !fatal && !out->why_together)
            err = DRA_ENOMEM;
    }
    if (err == DRA_OK && E.why.oom)
        err = DRA_ENOMEM;
    dra_buf_fini(&E.why);
    dra_buf_fini(&E.key);
    dra_map_fini(&E.seen);
    dra_arena_fini(&E.keys);
    if (err == DRA_OK)
        err = render(out);
    if (err != DRA_OK) {
        out->why = NULL;
        out->nwhy = 0;
        out->explanation = NULL;
    }
    return err;
}
