/* Randomized allocator test. Small random inventories (devices with
 * attributes, taints and shared counters, some already allocated) and
 * claims (counts, All mode, firstAvailable, admin access, tolerations,
 * matchAttribute / distinctAttribute, a shared device with consumable
 * capacity) are allocated on one node. Every
 * allocation returned is checked against the rules by an independent
 * checker; every "unsatisfiable" is compared with a brute-force search
 * over all combinations, which must find nothing the checker accepts. */
#include "dra_test.h"

#include "dra/alloc.h"
#include "test_selectors.h"

#define MAXD 6
#define MAXR 3

typedef struct world {
    int nd;                      /* devices 0..nd-1 on node-0, pool p0 */
    int shared;                  /* device nd (if set) in pool p1, all nodes */
    char names[MAXD + 1][8];
    dra_cel_attr attrs[MAXD + 1][2];
    dra_alloc_taint taint[MAXD + 1];
    dra_alloc_counter cons_c[MAXD + 1];
    dra_alloc_counter_set cons[MAXD + 1];
    dra_alloc_device devs[MAXD + 1];
    dra_alloc_counter total_c;
    dra_alloc_counter_set total;
    dra_alloc_slice slices[3];
    int used[MAXD + 1]; /* allocated before */
    int multi;          /* the shared device with capacity "bw", or -1 */
    int bw;
    dra_alloc_capacity bwcap;
    dra_alloc_cap_request creq[2][MAXR][2];
    int mem[MAXD + 1];  /* counter consumption */
    int cap;            /* counter total */
    /* claims */
    int nclaims;
    int nreq[2];
    dra_alloc_request req[2][MAXR];
    dra_alloc_devreq subs[2][MAXR][2];
    char sel[2][MAXR][2][24];
    const char *selp[2][MAXR][2][1];
    dra_alloc_toleration tol;
    const char *rnames[MAXR];
    dra_alloc_constraint con[2];
    dra_alloc_claim claims[2];
    char attrs_s[MAXD + 1][2];
} world;

static const char *const rname[] = {"r0", "r1", "r2"};
static const char *const sname[] = {"s0", "s1"};

static int rnd(unsigned *s, int n)
{
    *s = *s * 1103515245u + 12345u;
    return (int)((*s >> 16) % (unsigned)n);
}

static void mk_devices(world *w, unsigned *s)
{
    w->nd = 2 + rnd(s, MAXD - 1);
    w->shared = rnd(s, 3) == 0;
    w->cap = 2 + rnd(s, 4);
    for (int i = 0; i < w->nd + w->shared; i++) {
        dra_alloc_device *d = &w->devs[i];
        snprintf(w->names[i], sizeof w->names[i], "d%d", i);
        w->attrs[i][0].name = "a";
        w->attrs[i][0].kind = DRA_CEL_ATTR_INT;
        w->attrs[i][0].i = rnd(s, 3);
        w->attrs_s[i][0] = rnd(s, 2) ? 'x' : 'y';
        w->attrs[i][1].name = "b";
        w->attrs[i][1].kind = DRA_CEL_ATTR_STRING;
        w->attrs[i][1].s = w->attrs_s[i];
        d->name = w->names[i];
        d->attrs = w->attrs[i];
        d->nattrs = rnd(s, 8) ? 2 : 1; /* some lack "b" */
        if (rnd(s, 4) == 0) {
            w->taint[i].key = "t";
            w->taint[i].effect = DRA_ALLOC_EFFECT_NO_SCHEDULE;
            d->taints = &w->taint[i];
            d->ntaints = 1;
        }
        w->used[i] = rnd(s, 5) == 0;
        if (i < w->nd && rnd(s, 2)) {
            w->mem[i] = 1 + rnd(s, 2);
            w->cons_c[i].name = "mem";
            w->cons_c[i].value = dra_quantity_from_int64(w->mem[i], DRA_QTY_DECIMAL_SI);
            w->cons[i].name = "cs";
            w->cons[i].counters = &w->cons_c[i];
            w->cons[i].ncounters = 1;
            d->consumes = &w->cons[i];
            d->nconsumes = 1;
        }
    }
    w->multi = -1;
    if (rnd(s, 2)) {
        w->multi = rnd(s, w->nd);
        w->bw = 2 + rnd(s, 3);
        w->bwcap.name = "bw";
        w->bwcap.value = dra_quantity_from_int64(w->bw, DRA_QTY_DECIMAL_SI);
        w->devs[w->multi].allow_multiple_allocations = 1;
        w->devs[w->multi].caps = &w->bwcap;
        w->devs[w->multi].ncaps = 1;
        w->used[w->multi] = 0;
    }
    w->total_c.name = "mem";
    w->total_c.value = dra_quantity_from_int64(w->cap, DRA_QTY_DECIMAL_SI);
    w->total.name = "cs";
    w->total.counters = &w->total_c;
    w->total.ncounters = 1;
    w->slices[0] = (dra_alloc_slice){"p0-dev", "d", "p0", 1, 2, "node-0", NULL, 0, 0,
                                     w->devs, (size_t)w->nd, NULL, 0};
    w->slices[1] = (dra_alloc_slice){"p0-ctr", "d", "p0", 1, 2, "node-0", NULL, 0, 0,
                                     NULL, 0, &w->total, 1};
    w->slices[2] = (dra_alloc_slice){"p1", "d", "p1", 1, 1, NULL, NULL, 1, 0,
                                     &w->devs[w->nd], (size_t)w->shared, NULL, 0};
}

static void mk_devreq(world *w, unsigned *s, int c, int r, int k, dra_alloc_devreq *q)
{
    memset(q, 0, sizeof *q);
    q->class_name = "c";
    if (rnd(s, 2)) {
        snprintf(w->sel[c][r][k], sizeof w->sel[c][r][k], "attr:d/a=%d", rnd(s, 3));
        w->selp[c][r][k][0] = w->sel[c][r][k];
        q->selectors = w->selp[c][r][k];
        q->nselectors = 1;
    }
    q->mode = rnd(s, 7) == 0 ? DRA_ALLOC_ALL : DRA_ALLOC_EXACT_COUNT;
    q->count = q->mode == DRA_ALLOC_ALL ? 0 : 1 + rnd(s, 2);
    q->admin_access = w->nclaims == 1 && w->multi < 0 && rnd(s, 8) == 0;
    if (w->multi >= 0 && rnd(s, 3) == 0) {
        w->creq[c][r][k].name = "bw";
        w->creq[c][r][k].value = dra_quantity_from_int64(1 + rnd(s, 2), DRA_QTY_DECIMAL_SI);
        q->cap_requests = &w->creq[c][r][k];
        q->ncap_requests = 1;
    }
    if (rnd(s, 3) == 0) {
        q->tolerations = &w->tol;
        q->ntolerations = 1;
    }
}

static void mk_claims(world *w, unsigned *s)
{
    int total = 0;
    w->nclaims = 1 + rnd(s, 2);
    w->tol.key = "t";
    w->tol.op = DRA_ALLOC_TOL_EXISTS;
    for (int c = 0; c < w->nclaims; c++) {
        dra_alloc_claim *cl = &w->claims[c];
        w->nreq[c] = 1 + rnd(s, 2);
        if (total + w->nreq[c] > MAXR)
            w->nreq[c] = MAXR - total;
        total += w->nreq[c];
        for (int r = 0; r < w->nreq[c]; r++) {
            dra_alloc_request *q = &w->req[c][r];
            memset(q, 0, sizeof *q);
            q->name = rname[r];
            if (rnd(s, 4) == 0) {
                for (int k = 0; k < 2; k++) {
                    mk_devreq(w, s, c, r, k, &w->subs[c][r][k]);
                    w->subs[c][r][k].name = sname[k];
                    w->subs[c][r][k].admin_access = 0;
                }
                q->first_available = w->subs[c][r];
                q->nfirst_available = 2;
            } else {
                mk_devreq(w, s, c, r, 0, &q->exactly);
            }
        }
        memset(cl, 0, sizeof *cl);
        cl->name = c ? "c1" : "c0";
        cl->requests = w->req[c];
        cl->nrequests = (size_t)w->nreq[c];
        if (rnd(s, 3) == 0) {
            int distinct = rnd(s, 2);
            w->con[c].match_attribute = distinct ? NULL : "d/a";
            w->con[c].distinct_attribute = distinct ? "d/b" : NULL;
            cl->constraints = &w->con[c];
            cl->nconstraints = 1;
        }
    }
}

/* ---- the independent checker --------------------------------------------- */

typedef struct assign {
    int alt[2][MAXR];
    int dev[2][MAXR][MAXD + 1];
    int n[2][MAXR];
} assign;

static const dra_alloc_devreq *alt_of(const world *w, int c, int r, int a)
{
    const dra_alloc_request *q = &w->req[c][r];
    return q->nfirst_available ? &q->first_available[a] : &q->exactly;
}

static int selects(const world *w, const dra_alloc_devreq *q, int d)
{
    if (q->ncap_requests && d != w->multi)
        return 0; /* only the shared device has the capacity */
    if (q->nselectors) {
        int want = q->selectors[0][strlen(q->selectors[0]) - 1] - '0';
        if (w->attrs[d][0].i != want)
            return 0;
    }
    return 1;
}

static int tolerated(const world *w, const dra_alloc_devreq *q, int d)
{
    return !w->devs[d].ntaints || q->ntolerations;
}

static const dra_cel_attr *attr(const world *w, int d, const char *name)
{
    for (size_t i = 0; i < w->devs[d].nattrs; i++)
        if (strcmp(w->attrs[d][i].name, name) == 0)
            return &w->attrs[d][i];
    return NULL;
}

static int constraint_ok(const world *w, int c, const assign *x)
{
    const dra_cel_attr *first = NULL;
    const char *vals[3 * MAXR * (MAXD + 1)];
    int nv = 0;
    if (!w->claims[c].nconstraints)
        return 1;
    for (int r = 0; r < w->nreq[c]; r++)
        for (int k = 0; k < x->n[c][r]; k++) {
            int d = x->dev[c][r][k];
            const dra_cel_attr *at = attr(w, d, w->con[c].match_attribute ? "a" : "b");
            if (!at)
                return 0;
            if (w->con[c].match_attribute) {
                if (first && first->i != at->i)
                    return 0;
                first = at;
            } else {
                for (int i = 0; i < nv; i++)
                    if (strcmp(vals[i], at->s) == 0)
                        return 0;
                vals[nv++] = at->s;
            }
        }
    return 1;
}

static int valid(const world *w, const assign *x)
{
    int seen[MAXD + 1] = {0}, used = 0, mem = 0, bw = 0, shared_used = 0;
    for (int d = 0; d < w->nd; d++)
        used += w->used[d] ? w->mem[d] : 0;
    for (int c = 0; c < w->nclaims; c++) {
        for (int r = 0; r < w->nreq[c]; r++) {
            const dra_alloc_devreq *q = alt_of(w, c, r, x->alt[c][r]);
            int matching = 0, in_req[MAXD + 1] = {0};
            for (int d = 0; d < w->nd + w->shared; d++)
                matching += selects(w, q, d);
            if (q->mode == DRA_ALLOC_ALL ? (x->n[c][r] != matching || !matching)
                                         : x->n[c][r] != q->count)
                return 0;
            for (int k = 0; k < x->n[c][r]; k++) {
                int d = x->dev[c][r][k];
                /* The shared device may serve several requests, once each. */
                if (in_req[d]++ || (d != w->multi && seen[d]++))
                    return 0;
                if (!selects(w, q, d) || !tolerated(w, q, d))
                    return 0;
                if (!q->admin_access && w->used[d])
                    return 0;
                if (d == w->multi) {
                    int64_t amount = w->bw;
                    if (q->ncap_requests)
                        dra_quantity_to_int64(&q->cap_requests[0].value, &amount);
                    bw += (int)amount;
                    if (!shared_used++)
                        mem += w->mem[d]; /* counters once per shared device */
                } else if (!q->admin_access && d < w->nd) {
                    mem += w->mem[d];
                }
            }
        }
        if (!constraint_ok(w, c, x))
            return 0;
    }
    if (bw > w->bw)
        return 0;
    /* Each consuming device was checked against what was in use plus what
     * came before it, so the last one checked the total. */
    return mem == 0 || used + mem <= w->cap;
}

/* Brute force: every alternative and every combination. */
static int brute(const world *w, assign *x, int c, int r, int k, int start)
{
    const dra_alloc_devreq *q;
    if (c == w->nclaims)
        return valid(w, x);
    if (r == w->nreq[c])
        return brute(w, x, c + 1, 0, 0, 0);
    if (x->alt[c][r] < 0) {
        int nalts = w->req[c][r].nfirst_available ? 2 : 1;
        for (int a = 0; a < nalts; a++) {
            x->alt[c][r] = a;
            x->n[c][r] = 0;
            if (brute(w, x, c, r, 0, 0))
                return 1;
        }
        x->alt[c][r] = -1;
        x->n[c][r] = 0;
        return 0;
    }
    q = alt_of(w, c, r, x->alt[c][r]);
    if (q->mode == DRA_ALLOC_ALL) {
        x->n[c][r] = 0;
        for (int d = 0; d < w->nd + w->shared; d++)
            if (selects(w, q, d))
                x->dev[c][r][x->n[c][r]++] = d;
        return brute(w, x, c, r + 1, 0, 0);
    }
    if (k == q->count) {
        x->n[c][r] = k;
        return brute(w, x, c, r + 1, 0, 0);
    }
    for (int d = start; d < w->nd + w->shared; d++) {
        x->dev[c][r][k] = d;
        x->n[c][r] = k + 1;
        if (brute(w, x, c, r, k + 1, d + 1))
            return 1;
    }
    x->n[c][r] = k;
    return 0;
}

static int dev_index(const world *w, const char *name)
{
    for (int d = 0; d < w->nd + w->shared; d++)
        if (strcmp(w->names[d], name) == 0)
            return d;
    return -1;
}

static void from_outcome(const world *w, const dra_alloc_outcome *o, assign *x)
{
    memset(x, 0, sizeof *x);
    for (int c = 0; c < w->nclaims; c++)
        for (size_t i = 0; i < o->claims[c].nresults; i++) {
            const dra_alloc_device_result *res = &o->claims[c].results[i];
            int r = res->request[1] - '0', a = 0;
            if (res->request[2] == '/')
                a = res->request[4] - '0';
            x->alt[c][r] = a;
            x->dev[c][r][x->n[c][r]++] = dev_index(w, res->device);
        }
}

static void test_random(void **state)
{
    int ok = 0, unsat = 0;
    (void)state;
    for (unsigned seed = 1; seed <= 1500; seed++) {
        unsigned s = seed;
        world *w = calloc(1, sizeof *w);
        dra_alloc_options opt;
        dra_allocator *a = NULL;
        dra_alloc_outcome o;
        const dra_alloc_claim *cp[2];
        const char *csel[] = {"driver=d"};
        dra_alloc_class cls = {"c", csel, 1, NULL, 0};
        assign x;
        dra_err err;
        assert_non_null(w);
        mk_devices(w, &s);
        mk_claims(w, &s);
        memset(&opt, 0, sizeof opt);
        opt.selectors = &test_selector_ops;
        assert_int_equal(dra_allocator_new(NULL, &opt, &a), DRA_OK);
        assert_int_equal(dra_allocator_add_class(a, &cls), DRA_OK);
        for (int i = 0; i < 3; i++)
            assert_int_equal(dra_allocator_add_slice(a, &w->slices[i], NULL), DRA_OK);
        for (int d = 0; d < w->nd + w->shared; d++) {
            dra_alloc_device_result r;
            memset(&r, 0, sizeof r);
            r.driver = "d";
            r.pool = d < w->nd ? "p0" : "p1";
            r.device = w->names[d];
            if (w->used[d])
                assert_int_equal(dra_allocator_mark(a, &r), DRA_OK);
        }
        cp[0] = &w->claims[0];
        cp[1] = &w->claims[1];
        dra_alloc_outcome_init(&o, NULL);
        err = dra_allocator_allocate(a, "node-0", cp, (size_t)w->nclaims, &o, NULL);
        if (err == DRA_OK) {
            from_outcome(w, &o, &x);
            if (!valid(w, &x))
                fail_msg("seed %u: the allocation breaks a rule", seed);
            ok++;
        } else if (err == DRA_EUNSAT) {
            memset(&x, 0, sizeof x);
            memset(x.alt, -1, sizeof x.alt);
            if (brute(w, &x, 0, 0, 0, 0))
                fail_msg("seed %u: unsatisfiable, but brute force found an allocation", seed);
            unsat++;
        } else if (err != DRA_ECONFLICT) { /* All over a constraint: an error by design */
            fail_msg("seed %u: %s", seed, dra_strerror(err));
        }
        dra_alloc_outcome_fini(&o);
        dra_allocator_free(a);
        free(w);
    }
    print_message("%d allocated, %d unsatisfiable\n", ok, unsat);
    assert_true(ok > 100 && unsat > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
