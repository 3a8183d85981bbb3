/*
 * explain.c: says why claims could not be allocated. After a failed
 * search, each request (and each firstAvailable alternative) is checked
 * against every device on its own, and the devices are counted by the
 * first rule that rejects them, with a few examples each. When enough
 * devices pass every check on their own, the failure lies in combining
 * them (constraints, or several requests wanting the same devices), and
 * the text says so.
 */
#include <inttypes.h>
#include <string.h>

#include "alloc_int.h"

/* ORDER reason: the order of the checks and of the text. */
typedef enum reason {
    R_CLASS,
    R_SELECTOR,
    R_SELERR,
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

typedef struct tally {
    size_t n[R_N];
    const a_dev *ex[R_N][3];
    char *err; /* first selector error */
} tally;

/* Selector result ignoring errors for devices the search never sees. */
static int sel_ok(s_state *S, const s_alt *alt, size_t from, size_t to, a_dev *v, tally *t,
                  int visible)
{
    for (size_t i = from; i < to; i++) {
        dra_diag d;
        int r;
        dra_diag_init(&d, S->a->mem);
        r = alloc_prog_eval(S->a, alt->sel[i], v, &d);
        if (r < 0 && visible && !t->err && dra_diag_first(&d))
            t->err = dra_arena_sprintf(S->ar, "%s/%s/%s: %s", v->s->driver, v->s->pool,
                                       v->d->name, dra_diag_first(&d));
        dra_diag_fini(&d);
        if (r == DRA_ENOMEM)
            return r;
        if (r < 0)
            return visible ? -2 : 0;
        if (!r)
            return 0;
    }
    return 1;
}

static int classify(s_state *S, const s_alt *alt, a_dev *v, tally *t, reason *out)
{
    const a_pool *p = &S->a->pools[v->pool];
    int visible = !S->node || alloc_dev_matches_node(S->a, v, S->node);
    int r = sel_ok(S, alt, 0, alt->nclass_sel, v, t, visible);
    if (r == DRA_ENOMEM)
        return r;
    if (r <= 0) {
        *out = r == -2 ? R_SELERR : R_CLASS;
        return visible ? 1 : 0; /* other nodes' devices of other classes: not news */
    }
    r = sel_ok(S, alt, alt->nclass_sel, alt->nsel, v, t, visible);
    if (r == DRA_ENOMEM)
        return r;
    if (r <= 0) {
        *out = r == -2 ? R_SELERR : R_SELECTOR;
        return visible ? 1 : 0;
    }
    if (!visible)
        *out = R_NODE;
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

static void put_tally(dra_buf *b, const tally *t)
{
    size_t total = 0;
    int first = 1;
    for (int r = 0; r < R_N; r++)
        total += t->n[r];
    dra_buf_printf(b, "%zu device%s considered", total, total == 1 ? "" : "s");
    for (int r = 0; r < R_N; r++) {
        if (!t->n[r])
            continue;
        dra_buf_printf(b, "%s %zu %s", first ? ":" : ";", t->n[r], reason_text[t->n[r] == 1][r]);
        first = 0;
        for (int k = 0; k < 3 && t->ex[r][k] && r != R_CLASS; k++)
            dra_buf_printf(b, "%s%s/%s/%s", k ? ", " : " (e.g. ", t->ex[r][k]->s->driver,
                           t->ex[r][k]->s->pool, t->ex[r][k]->d->name);
        if (t->ex[r][0] && r != R_CLASS)
            dra_buf_puts(b, t->n[r] > 3 ? ", ...)" : ")");
    }
    if (t->err)
        dra_buf_printf(b, "; selector error: %s", t->err);
}

static dra_err explain_alt(s_state *S, const s_alt *alt, dra_buf *b, int *enough)
{
    tally t;
    int64_t need = alt->r->mode == DRA_ALLOC_ALL ? 0 : alt->count;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < S->a->ndevs; i++) {
        reason r;
        int c = classify(S, alt, &S->a->devs[i], &t, &r);
        if (c == DRA_ENOMEM)
            return DRA_ENOMEM;
        if (!c)
            continue;
        if (t.n[r] < 3)
            t.ex[r][t.n[r]] = &S->a->devs[i];
        t.n[r]++;
    }
    if (alt->r->mode == DRA_ALLOC_ALL)
        dra_buf_printf(b, "class %s, all matching devices%s: ", alt->cls->name,
                       alt->r->admin_access ? ", admin access" : "");
    else
        dra_buf_printf(b, "class %s, %" PRId64 " device%s%s: ", alt->cls->name, need,
                       need == 1 ? "" : "s", alt->r->admin_access ? ", admin access" : "");
    put_tally(b, &t);
    if (alt->r->mode == DRA_ALLOC_ALL) {
        size_t matching = 0;
        for (int r = R_NODE + 1; r < R_N; r++)
            matching += t.n[r];
        *enough = matching > 0 && t.n[R_USABLE] == matching && !t.n[R_INCOMPLETE] &&
                  !t.n[R_INVALID];
        if (!matching)
            dra_buf_puts(b, "; All mode needs at least one matching device");
        else if (!*enough)
            dra_buf_puts(b, "; All mode needs every matching device to be usable");
    } else {
        *enough = (int64_t)t.n[R_USABLE] >= need;
        if (!*enough)
            dra_buf_printf(b, "; %zu usable, %" PRId64 " needed", t.n[R_USABLE], need);
    }
    return DRA_OK;
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
static int usable_for(s_state *S, uint32_t ci, const s_con *c, a_dev *v, int64_t *need)
{
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
            if (!covered)
                continue;
            if (q->alts[k].count < best)
                best = q->alts[k].count;
            memset(&t, 0, sizeof t);
            if (v && !any && classify(S, &q->alts[k], v, &t, &r) == 1 && r == R_USABLE)
                any = 1;
        }
        if (need && best != INT64_MAX)
            *need += best;
    }
    return any;
}

/* For matchAttribute: how many usable devices share each value; for
 * distinctAttribute: how many different values there are. */
static dra_err explain_constraint(s_state *S, uint32_t ci, const s_con *c, dra_buf *b)
{
    vcount vc[16];
    size_t nv = 0, more = 0, without = 0;
    int64_t need = 0;
    usable_for(S, ci, c, NULL, &need);
    for (size_t i = 0; i < S->a->ndevs; i++) {
        a_dev *v = &S->a->devs[i];
        const dra_cel_attr *at;
        size_t k = 0;
        if (!usable_for(S, ci, c, v, NULL))
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
    dra_buf_printf(b, "  constraint %s %s (%" PRId64 " device%s together): ",
                   c->distinct ? "distinctAttribute" : "matchAttribute", c->attr, need,
                   need == 1 ? "" : "s");
    if (c->distinct) {
        dra_buf_printf(b, "%zu%s different value%s among the usable devices", nv,
                       more ? "+" : "", nv == 1 ? "" : "s");
    } else {
        dra_buf_puts(b, nv ? "usable devices per value:" : "no usable device has it");
        for (size_t k = 0; k < nv; k++) {
            dra_buf_puts(b, k ? ", " : " ");
            put_value(b, vc[k].v);
            dra_buf_printf(b, ": %zu", vc[k].n);
        }
        if (more)
            dra_buf_printf(b, ", %zu more", more);
    }
    if (without)
        dra_buf_printf(b, "; %zu usable device%s lack%s the attribute", without,
                       without == 1 ? "" : "s", without == 1 ? "s" : "");
    dra_buf_putc(b, '\n');
    return b->oom ? DRA_ENOMEM : DRA_OK;
}

static dra_err explain_claim(s_state *S, uint32_t ci, dra_buf *b, int *all_enough)
{
    const dra_alloc_claim *cl = S->claims[ci];
    dra_err err;
    dra_buf_printf(b, "claim %s:\n", alloc_claim_name(S->ar, cl));
    for (uint32_t i = S->claim_req0[ci]; i < S->claim_req0[ci + 1]; i++) {
        const s_req *q = &S->reqs[i];
        int any = 0;
        for (size_t k = 0; k < q->nalts; k++) {
            int enough = 0;
            dra_buf_printf(b, "  request %s: ", q->alts[k].name);
            if ((err = explain_alt(S, &q->alts[k], b, &enough)) != DRA_OK)
                return err;
            dra_buf_putc(b, '\n');
            any |= enough;
        }
        *all_enough &= any;
    }
    for (size_t k = 0; k < cl->nconstraints; k++)
        if ((err = explain_constraint(S, ci, &S->cons[S->claim_con0[ci] + k], b)) != DRA_OK)
            return err;
    return DRA_OK;
}

dra_err alloc_explain(s_state *S, dra_alloc_outcome *out)
{
    dra_buf b;
    int all_enough = 1;
    dra_err err = DRA_OK;
    dra_buf_init(&b, S->a->mem);
    if (S->node)
        dra_buf_printf(&b, "cannot allocate all claims on node %s\n", S->node->name);
    else
        dra_buf_printf(&b, "cannot allocate all claims on any node (%zu node%s)\n",
                       S->a->nnodes, S->a->nnodes == 1 ? "" : "s");
    for (uint32_t ci = 0; err == DRA_OK && ci < S->nclaims; ci++)
        err = explain_claim(S, ci, &b, &all_enough);
    if (err == DRA_OK && all_enough)
        dra_buf_printf(&b, "every request has enough usable devices on its own, but not "
                           "together%s: the constraints cannot be met, or the requests "
                           "compete for the same devices\n",
                       S->node ? "" : " on a single node");
    if (b.len && b.p[b.len - 1] == '\n')
        b.p[--b.len] = '\0';
    if (err == DRA_OK && !b.oom && !(out->explanation = dra_arena_strdup(&out->arena, b.p)))
        err = DRA_ENOMEM;
    if (b.oom)
        err = DRA_ENOMEM;
    dra_buf_fini(&b);
    return err;
}
