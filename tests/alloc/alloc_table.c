/* The allocator scenario runner (shared by test_alloc_table and
 * test_alloc_k8s): a YAML file holds documents, one scenario each, run
 * through the API adapter and the real CEL engine. A document with
 * `defaults:` supplies objects (and a node) that every later scenario of
 * the file starts with.
 *
 *   name: simple                  # unique
 *   node: node-1                  # allocate there; absent: first node that fits
 *   claims: [c1, c2]              # which unallocated claims (default: all), together
 *   maxSteps: 100                 # search bound (optional)
 *   objects: [...]                # API objects; apiVersion may be left out
 *   expect:
 *     devices: {c1: ["req driver/pool/device", "req/sub d/p/x admin share"]}
 *     node: node-1                # the node chosen
 *     nodeSelector: {c1: local}   # local | none | ["key Op v1,v2", ...]
 *     allocation: {c1: {...}}     # status.allocation exactly (shareID ignored)
 *     error: "substring"          # fails with an error (not "unsatisfiable")
 *     unsat: "substring"          # unsatisfiable; explanation contains it
 *     explanation: ["s1", "s2"]   # the explanation (any outcome) contains each
 *     absent: ["s"]               # neither explanation nor error message has it
 *     lines: 4                    # the explanation has exactly this many lines
 *     why: {c1: {gpu: "s"}}       # the data form: request gpu's sentence contains s
 */
#include "dra_test.h"

#include "dra/alloc.h"
#include "dra/api.h"
#include "dra/codec.h"
#include "alloc_table.h"

typedef struct run {
    dra_arena ar;
    dra_diag d;
    dra_buf why;
    const dra_doc *sc, *defaults;
} run;

static const char *str(const dra_doc *d)
{
    return d && d->kind == DRA_DOC_STRING ? d->u.str.s : NULL;
}

static int bad(run *r, const char *fmt, ...) DRA_PRINTF(2, 3);
static int bad(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dra_buf_vprintf(&r->why, fmt, ap);
    va_end(ap);
    return 0;
}

static dra_err decode(run *r, const dra_doc *src, dra_object **out)
{
    dra_doc *copy = (dra_doc *)src;
    const char *kind = str(dra_doc_get(src, "kind"));
    if (!dra_doc_get(src, "apiVersion") && kind) {
        const char *v = strcmp(kind, "Node") == 0 || strcmp(kind, "Pod") == 0
                            ? "v1" : "resource.k8s.io/v1";
        copy = dra_doc_new_map(&r->ar, src->u.map.n + 1);
        if (!copy)
            return DRA_ENOMEM;
        dra_doc_map_set(&r->ar, copy, "apiVersion", dra_doc_new_string(&r->ar, v, strlen(v)));
        for (size_t i = 0; i < src->u.map.n; i++)
            dra_doc_map_set(&r->ar, copy, src->u.map.m[i].key, src->u.map.m[i].val);
    }
    dra_err err = dra_api_decode(&r->ar, copy, out, &r->d);
    if (err == DRA_OK)
        dra_api_set_defaults(*out);
    return err;
}

static int collect(run *r, const dra_doc *list, dra_object **objs, size_t *n)
{
    for (size_t i = 0; list && list->kind == DRA_DOC_LIST && i < list->u.list.n; i++)
        if (decode(r, list->u.list.items[i], &objs[(*n)++]) != DRA_OK)
            return bad(r, "object #%zu does not decode: %s", i,
                        dra_diag_first(&r->d) ? dra_diag_first(&r->d) : "?");
    return 1;
}

static int wanted(const dra_doc *names, const char *name)
{
    if (!names)
        return 1;
    for (size_t i = 0; i < names->u.list.n; i++)
        if (strcmp(str(names->u.list.items[i]), name) == 0)
            return 1;
    return 0;
}

static void device_line(dra_buf *b, const dra_alloc_device_result *x)
{
    dra_buf_printf(b, "%s %s/%s/%s%s%s", x->request, x->driver, x->pool, x->device,
                   x->admin_access ? " admin" : "", x->share_id ? " share" : "");
}

static int check_devices(run *r, const dra_alloc_claim_result *cr, const dra_doc *want)
{
    dra_buf got;
    int ok = want && want->kind == DRA_DOC_LIST && want->u.list.n == cr->nresults;
    dra_buf_init(&got, NULL);
    for (size_t i = 0; i < cr->nresults; i++) {
        size_t mark = got.len;
        device_line(&got, &cr->results[i]);
        if (ok && strcmp(got.p + mark, str(want->u.list.items[i]) ? str(want->u.list.items[i]) : "") != 0)
            ok = 0;
        dra_buf_puts(&got, "; ");
    }
    if (!ok)
        bad(r, "claim %s: got devices [%s]", cr->claim->name, got.p ? got.p : "");
    dra_buf_fini(&got);
    return ok;
}

static int check_selector(run *r, const dra_alloc_claim_result *cr, const dra_doc *want,
                          const char *node)
{
    const dra_alloc_node_selector *s = cr->node_selector;
    const char *w = str(want);
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    if (w && strcmp(w, "none") == 0)
        return s ? bad(r, "claim %s: expected no node selector", cr->claim->name) : 1;
    if (!s || s->nterms != 1)
        return bad(r, "claim %s: expected a one-term node selector", cr->claim->name);
    if (w && strcmp(w, "local") == 0) {
        const dra_alloc_ns_term *t = &s->terms[0];
        if (t->nexprs || t->nfields != 1 || strcmp(t->fields[0].key, "metadata.name") != 0 ||
            t->fields[0].nvalues != 1 || strcmp(t->fields[0].values[0], node) != 0)
            return bad(r, "claim %s: expected metadata.name In [%s]", cr->claim->name, node);
        return 1;
    }
    if (!want || want->kind != DRA_DOC_LIST || want->u.list.n != s->terms[0].nexprs)
        return bad(r, "claim %s: node selector has %zu expressions", cr->claim->name,
                    s->terms[0].nexprs);
    for (size_t i = 0; i < s->terms[0].nexprs; i++) {
        const dra_alloc_ns_req *q = &s->terms[0].exprs[i];
        dra_buf b;
        int same;
        dra_buf_init(&b, NULL);
        dra_buf_printf(&b, "%s %s ", q->key, ops[q->op]);
        for (size_t k = 0; k < q->nvalues; k++)
            dra_buf_printf(&b, "%s%s", k ? "," : "", q->values[k]);
        same = strcmp(b.p, str(want->u.list.items[i]) ? str(want->u.list.items[i]) : "") == 0;
        if (!same)
            bad(r, "claim %s: node selector expression #%zu is \"%s\"", cr->claim->name, i, b.p);
        dra_buf_fini(&b);
        if (!same)
            return 0;
    }
    return 1;
}

/* Drop shareID members (generated) from an encoded allocation. */
static void strip_share_ids(dra_doc *d)
{
    if (!d)
        return;
    if (d->kind == DRA_DOC_LIST)
        for (size_t i = 0; i < d->u.list.n; i++)
            strip_share_ids(d->u.list.items[i]);
    if (d->kind != DRA_DOC_MAP)
        return;
    for (size_t i = 0; i < d->u.map.n; i++) {
        if (strcmp(d->u.map.m[i].key, "shareID") == 0) {
            d->u.map.m[i] = d->u.map.m[--d->u.map.n];
            i--;
            continue;
        }
        strip_share_ids(d->u.map.m[i].val);
    }
}

static int check_allocation(run *r, const dra_alloc_claim_result *cr, const dra_doc *want)
{
    dra_allocation_result *res;
    dra_object *o = dra_api_object_new(&r->ar, DRA_KIND_RESOURCE_CLAIM);
    dra_doc *enc;
    const dra_doc *got;
    if (!o || dra_alloc_result_to_api(&r->ar, cr, &res) != DRA_OK)
        return bad(r, "out of memory");
    o->meta.name = "x";
    o->u.claim.status.allocation = res;
    if (dra_api_encode(&r->ar, o, &enc) != DRA_OK)
        return bad(r, "encode failed");
    got = dra_doc_get(dra_doc_get(enc, "status"), "allocation");
    strip_share_ids((dra_doc *)got);
    if (!dra_doc_equal(got, want)) {
        dra_buf b;
        dra_buf_init(&b, NULL);
        dra_doc_to_json(got, 0, &b);
        bad(r, "claim %s: allocation is %s", cr->claim->name, b.p ? b.p : "null");
        dra_buf_fini(&b);
        return 0;
    }
    return 1;
}

static int check_outcome(run *r, const dra_alloc_outcome *o, const dra_doc *expect)
{
    const dra_doc *devs = dra_doc_get(expect, "devices"), *sel = dra_doc_get(expect, "nodeSelector");
    const dra_doc *alloc = dra_doc_get(expect, "allocation");
    const char *node = str(dra_doc_get(expect, "node"));
    if (node && strcmp(node, o->node) != 0)
        return bad(r, "allocated on node %s, expected %s", o->node, node);
    for (size_t i = 0; i < o->nclaims; i++) {
        const dra_alloc_claim_result *cr = &o->claims[i];
        const dra_doc *w;
        if (devs && !check_devices(r, cr, dra_doc_get(devs, cr->claim->name)))
            return 0;
        if (sel && (w = dra_doc_get(sel, cr->claim->name)) && !check_selector(r, cr, w, o->node))
            return 0;
        if (alloc && (w = dra_doc_get(alloc, cr->claim->name)) && !check_allocation(r, cr, w))
            return 0;
    }
    return 1;
}

/* A string or a list of strings: each must be in |text|. */
static int contains_all(run *r, const char *what, const dra_doc *want, const char *text)
{
    size_t n = want && want->kind == DRA_DOC_LIST ? want->u.list.n : 1;
    for (size_t i = 0; want && i < n; i++) {
        const char *w = str(want->kind == DRA_DOC_LIST ? want->u.list.items[i] : want);
        if (!w || !text || !strstr(text, w))
            return bad(r, "%s does not contain \"%s\": %s", what, w ? w : "(not a string)",
                       text ? text : "(none)");
    }
    return 1;
}

static int check_why(run *r, const dra_alloc_outcome *o, const dra_doc *want)
{
    for (size_t i = 0; want && want->kind == DRA_DOC_MAP && i < want->u.map.n; i++) {
        const dra_doc *reqs = want->u.map.m[i].val;
        const dra_alloc_why_claim *w = NULL;
        for (size_t k = 0; k < o->nwhy; k++)
            if (strcmp(o->why[k].claim->name, want->u.map.m[i].key) == 0)
                w = &o->why[k];
        if (!w)
            return bad(r, "no explanation data for claim %s", want->u.map.m[i].key);
        for (size_t j = 0; reqs && reqs->kind == DRA_DOC_MAP && j < reqs->u.map.n; j++) {
            const dra_alloc_why_request *q = NULL;
            for (size_t k = 0; k < w->nrequests; k++)
                if (strcmp(w->requests[k].request, reqs->u.map.m[j].key) == 0)
                    q = &w->requests[k];
            if (!q)
                return bad(r, "no explanation data for request %s", reqs->u.map.m[j].key);
            if (!contains_all(r, "the request's sentence", reqs->u.map.m[j].val, q->text))
                return 0;
        }
    }
    return 1;
}

/* explanation, absent, lines, why: checked whatever the outcome. */
static int check_explanation(run *r, const dra_alloc_outcome *o, const char *msg)
{
    const dra_doc *expect = dra_doc_get(r->sc, "expect");
    const dra_doc *ex = dra_doc_get(expect, "explanation"), *ab = dra_doc_get(expect, "absent");
    const dra_doc *lines = dra_doc_get(expect, "lines");
    if (ex && !contains_all(r, "the explanation", ex, o->explanation))
        return 0;
    for (size_t i = 0; ab && ab->kind == DRA_DOC_LIST && i < ab->u.list.n; i++) {
        const char *w = str(ab->u.list.items[i]);
        if (w && ((o->explanation && strstr(o->explanation, w)) || (msg && strstr(msg, w))))
            return bad(r, "\"%s\" should not appear: %s", w,
                       o->explanation ? o->explanation : msg);
    }
    if (lines && lines->kind == DRA_DOC_INT) {
        int64_t n = o->explanation ? 1 : 0;
        for (const char *p = o->explanation; p && *p; p++)
            n += *p == '\n';
        if (n != lines->u.i)
            return bad(r, "the explanation has %lld lines, expected %lld: %s", (long long)n,
                       (long long)lines->u.i, o->explanation ? o->explanation : "");
    }
    return check_why(r, o, dra_doc_get(expect, "why"));
}

static int check_result(run *r, dra_err err, const dra_alloc_outcome *o)
{
    const dra_doc *expect = dra_doc_get(r->sc, "expect");
    const dra_doc *e = dra_doc_get(expect, "error"), *u = dra_doc_get(expect, "unsat");
    dra_buf msg;
    int ok = 1;
    dra_buf_init(&msg, NULL);
    dra_diag_format(&r->d, &msg);
    if (e) {
        if (err == DRA_OK || err == DRA_EUNSAT)
            ok = bad(r, "expected an error, got %s: %s", dra_errname(err),
                     o->explanation ? o->explanation : msg.p ? msg.p : "");
        else
            ok = contains_all(r, "the error", e, msg.p);
    } else if (u) {
        if (err != DRA_EUNSAT)
            ok = bad(r, "expected unsatisfiable, got %s: %s", dra_errname(err),
                     msg.p ? msg.p : "");
        else
            ok = contains_all(r, "the explanation", u, o->explanation);
    } else if (err != DRA_OK) {
        ok = bad(r, "%s: %s", dra_errname(err), msg.p ? msg.p : "");
    } else {
        ok = check_outcome(r, o, expect);
    }
    if (ok)
        ok = check_explanation(r, o, msg.p);
    dra_buf_fini(&msg);
    return ok;
}

static int run_scenario(run *r)
{
    const dra_doc *objs = dra_doc_get(r->sc, "objects"), *names = dra_doc_get(r->sc, "claims");
    const dra_doc *dobjs = dra_doc_get(r->defaults, "objects");
    const dra_doc *ms = dra_doc_get(r->sc, "maxSteps");
    const dra_doc *nd = dra_doc_get(r->sc, "node");
    const char *node = nd ? str(nd) : str(dra_doc_get(r->defaults, "node"));
    size_t cap = (objs ? objs->u.list.n : 0) + (dobjs ? dobjs->u.list.n : 0) + 1, n = 0, nc = 0;
    dra_object **o = dra_arena_array(&r->ar, cap, sizeof *o);
    const dra_alloc_claim **claims = dra_arena_array(&r->ar, cap, sizeof *claims);
    dra_alloc_options opt;
    dra_allocator *a = NULL;
    dra_alloc_outcome out;
    dra_err err;
    int ok;
    if (!o || !claims || !collect(r, dobjs, o, &n) || !collect(r, objs, o, &n))
        return 0;
    memset(&opt, 0, sizeof opt);
    opt.explain = 1;
    opt.max_steps = ms && ms->kind == DRA_DOC_INT ? (uint64_t)ms->u.i : 0;
    if ((err = dra_allocator_new(NULL, &opt, &a)) != DRA_OK)
        return bad(r, "allocator: %s", dra_strerror(err));
    dra_alloc_outcome_init(&out, NULL);
    err = dra_alloc_load_api(a, &r->ar, o, n, &r->d);
    for (size_t i = 0; err == DRA_OK && i < n; i++) {
        dra_alloc_claim *c;
        if (o[i]->kind != DRA_KIND_RESOURCE_CLAIM || o[i]->u.claim.status.allocation ||
            !wanted(names, o[i]->meta.name))
            continue;
        err = dra_alloc_claim_from_api(&r->ar, &o[i]->meta, &o[i]->u.claim.spec, &c, &r->d);
        claims[nc++] = c;
    }
    if (err == DRA_OK)
        err = node ? dra_allocator_allocate(a, node, claims, nc, &out, &r->d)
                   : dra_allocator_schedule(a, claims, nc, &out, &r->d);
    ok = check_result(r, err, &out);
    dra_alloc_outcome_fini(&out);
    dra_allocator_free(a);
    return ok;
}

int alloc_table_run_file(const char *path, size_t *count)
{
    size_t len, ndocs = 0;
    char *text = dra_test_slurp(path, &len);
    dra_arena ar;
    dra_doc **docs = NULL;
    dra_diag d;
    /* A file that does not parse counts as one failure. */
    const dra_doc *defaults = NULL;
    int failed = 0;
    dra_arena_init(&ar, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&ar, text, len, &docs, &ndocs, &d) != DRA_OK) {
        print_error("%s: %s\n", path, dra_diag_first(&d));
        failed = 1;
    }
    for (size_t i = 0; docs && i < ndocs; i++) {
        run r;
        if (dra_doc_get(docs[i], "defaults")) {
            defaults = dra_doc_get(docs[i], "defaults");
            continue;
        }
        memset(&r, 0, sizeof r);
        dra_arena_init(&r.ar, NULL);
        dra_diag_init(&r.d, NULL);
        dra_buf_init(&r.why, NULL);
        r.sc = docs[i];
        r.defaults = defaults;
        (*count)++;
        if (!run_scenario(&r)) {
            print_error("%s: scenario %s: %s\n", path, str(dra_doc_get(docs[i], "name")),
                        r.why.p ? r.why.p : "failed");
            failed++;
        }
        dra_buf_fini(&r.why);
        dra_diag_fini(&r.d);
        dra_arena_fini(&r.ar);
    }
    dra_diag_fini(&d);
    dra_arena_fini(&ar);
    free(text);
    return failed;
}

