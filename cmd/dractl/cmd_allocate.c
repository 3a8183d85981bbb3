/* dractl allocate / dractl explain: offline allocation over a set of
 * objects. Reads ResourceSlices, DeviceClasses, ResourceClaims (those with
 * status.allocation count as in use), ResourceClaimTemplates, Nodes and
 * Pods; makes each pod's template claims as the resourceclaim controller
 * would; allocates every unallocated claim (a pod's claims together, on
 * one node) with the state carried from one to the next; prints the
 * claims with status.allocation as YAML (allocate) or only the
 * explanations (explain).
 *
 * Generated claim names: generateName is "<pod>-<podclaim>-" (both parts
 * cut in proportion when longer than 57 characters, as the controller
 * does), and instead of the apiserver's 5 random characters the suffix is
 * 5 characters of the same alphabet derived from a hash of namespace, pod
 * and pod-claim name, so runs are reproducible. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dra/alloc.h"
#include "dra/api.h"
#include "dractl.h"

int dractl_allocate_main(dractl_ctx *ctx, int argc, char **argv, int explain_only);

typedef struct job {
    const char *what;        /* "pod default/x" or "claim default/y" */
    const char *node;        /* fixed node, or NULL */
    dra_object **claims;     /* claims to allocate together */
    size_t n;
    /* Node selectors of claims the pod uses that are allocated already:
     * the pod's node must satisfy them all. */
    const dra_alloc_node_selector **sels;
    size_t nsels;
} job;

static int job_node_ok(void *ud, const char *node, const dra_alloc_label *labels, size_t nlabels)
{
    const job *j = ud;
    for (size_t i = 0; i < j->nsels; i++)
        if (!dra_alloc_node_selector_match(j->sels[i], node, labels, nlabels))
            return 0;
    return 1;
}

typedef struct run {
    dractl_ctx *ctx;
    dra_arena ar;
    dra_object **objs;
    size_t nobjs;
    dra_object **out; /* allocated claims, in order */
    size_t nout;
    dra_allocator *alloc;
    const char *node;
    int explain_only;
    int failed;
    double timeout_s;      /* per allocation; 0: none */
    double deadline;       /* CLOCK_MONOTONIC seconds */
    unsigned long long max_steps;
} run;

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The allocator reads no clock; this callback holds the deadline. */
static int past_deadline(void *ud)
{
    const run *r = ud;
    return r->timeout_s > 0 && mono_now() > r->deadline ? DRA_ETIMEOUT : 0;
}

static void usage(dractl_ctx *ctx, FILE *f, int explain_only)
{
    fprintf(f,
            "usage: %s %s -f FILE [-f FILE...] [--node NAME] [--timeout SECONDS]\n"
            "       [--max-steps N]\n"
            "\n"
            "Allocates devices for every unallocated ResourceClaim in the inputs, as\n"
            "the scheduler would: ResourceSlices, DeviceClasses, Nodes, claims that\n"
            "already have status.allocation (their devices are in use), templates\n"
            "and pods (a pod's template claims are generated, named\n"
            "<pod>-<claim>-<5 characters from a hash>). A pod's claims go on one\n"
            "node: its spec.nodeName, --node, or the first node by name where they\n"
            "all fit. Other claims are allocated one by one the same way.\n"
            "--timeout bounds each allocation's time (like the scheduler's filter\n"
            "timeout), --max-steps its search (default 1000000 device tries).\n"
            "\n"
            "%s\n"
            "Exit status: 0 all allocated, 1 something could not be, 2 usage or I/O.\n",
            ctx->progname, explain_only ? "explain" : "allocate",
            explain_only ? "Prints, for each claim or pod, why it cannot be allocated (or the\n"
                           "node it would get)."
                         : "Prints the allocated claims as YAML with status.allocation; for\n"
                           "claims that cannot be allocated, the explanation goes to stderr.");
}

static dra_object *find(run *r, dra_kind kind, const char *ns, const char *name)
{
    for (size_t i = 0; i < r->nobjs; i++) {
        dra_object *o = r->objs[i];
        if (o->kind == kind && o->meta.name && strcmp(o->meta.name, name) == 0 &&
            strcmp(o->meta.namespace_ ? o->meta.namespace_ : "", ns ? ns : "") == 0)
            return o;
    }
    return NULL;
}

/* The apiserver's generateName alphabet (no vowels, no look-alikes). */
static const char suffix_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

static const char *claim_name(run *r, const dra_object *pod, const char *pc, const char **gen)
{
    const char *pn = pod->meta.name ? pod->meta.name : "";
    size_t lp = strlen(pn), lc = strlen(pc), base = lp + lc + 2;
    char sfx[6];
    uint64_t h;
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_buf_printf(&b, "%s/%s/%s", pod->meta.namespace_ ? pod->meta.namespace_ : "", pn, pc);
    h = dra_hash(b.p ? b.p : "", b.len);
    dra_buf_fini(&b);
    for (int i = 0; i < 5; i++, h /= sizeof suffix_alphabet - 1)
        sfx[i] = suffix_alphabet[h % (sizeof suffix_alphabet - 1)];
    sfx[5] = '\0';
    if (base > 57) /* both parts cut in proportion; no trailing hyphen then */
        *gen = dra_arena_sprintf(&r->ar, "%.*s-%.*s", (int)(lp * 57 / base), pn,
                                 (int)(lc * 57 / base), pc);
    else
        *gen = dra_arena_sprintf(&r->ar, "%s-%s-", pn, pc);
    return *gen ? dra_arena_sprintf(&r->ar, "%s%s", *gen, sfx) : NULL;
}

/* The claim the resourceclaim controller makes for one pod claim. */
static dra_object *make_claim(run *r, const dra_object *pod, const dra_pod_resource_claim *pc)
{
    const char *ns = pod->meta.namespace_;
    dra_object *t = find(r, DRA_KIND_RESOURCE_CLAIM_TEMPLATE, ns, pc->resource_claim_template_name);
    dra_object *c;
    dra_kv *ann;
    size_t na;
    if (!t) {
        dractl_errorf(r->ctx, "pod %s/%s: resource claim template %s does not exist", ns ? ns : "",
                      pod->meta.name, pc->resource_claim_template_name);
        return NULL;
    }
    if (!(c = dra_api_object_new(&r->ar, DRA_KIND_RESOURCE_CLAIM)))
        return NULL;
    c->meta.namespace_ = ns;
    if (!(c->meta.name = claim_name(r, pod, pc->name ? pc->name : "", &c->meta.generate_name)))
        return NULL;
    c->meta.labels = t->u.claim_template.meta.labels;
    na = t->u.claim_template.meta.annotations.n;
    if (!(ann = dra_arena_array(&r->ar, na + 1, sizeof *ann)))
        return NULL;
    if (na)
        memcpy(ann, t->u.claim_template.meta.annotations.v, na * sizeof *ann);
    ann[na].key = "resource.kubernetes.io/pod-claim-name";
    ann[na].val = pc->name;
    c->meta.annotations.v = ann;
    c->meta.annotations.n = na + 1;
    if (!(c->meta.owner_refs = dra_arena_array(&r->ar, 1, sizeof *c->meta.owner_refs)))
        return NULL;
    c->meta.n_owner_refs = 1;
    c->meta.owner_refs[0].api_version = "v1";
    c->meta.owner_refs[0].kind = "Pod";
    c->meta.owner_refs[0].name = pod->meta.name;
    c->meta.owner_refs[0].uid = pod->meta.uid ? pod->meta.uid : "";
    c->meta.owner_refs[0].controller = DRA_TRI_TRUE;
    c->meta.owner_refs[0].block_owner_deletion = DRA_TRI_TRUE;
    c->u.claim.spec = t->u.claim_template.spec;
    dra_api_set_defaults(c);
    return c;
}

/* One failure: "pod NS/NAME: " before the text, but not "claim NS/NAME: "
 * when the text names the claim already (explanations and the library's
 * errors do). */
static void report(run *r, const char *what, const char *text)
{
    FILE *f = r->explain_only ? r->ctx->out : r->ctx->err;
    size_t n = strlen(what);
    const char *at = strncmp(what, "claim ", 6) == 0 ? strstr(text, what) : NULL;
    while (at && at[n] != ':' && at[n] != ',')
        at = strstr(at + 1, what);
    if (at)
        fprintf(f, "%s\n", text);
    else
        fprintf(f, "%s: %s\n", what, text);
}

/* The node a pod is bound to must satisfy its allocated claims too. */
static int fixed_node_ok(run *r, const job *j, const char *node)
{
    const dra_object *n = find(r, DRA_KIND_NODE, NULL, node);
    dra_alloc_label *l = NULL;
    size_t nl = 0;
    if (n && dra_alloc_labels_from_api(&r->ar, n, &l, &nl) != DRA_OK)
        return 0;
    return job_node_ok((void *)j, node, l, nl);
}

/* Allocates one job; on success records the claims for output. */
static int run_job(run *r, const job *j)
{
    const dra_alloc_claim **mc = dra_arena_array(&r->ar, j->n + 1, sizeof *mc);
    const char *node = j->node ? j->node : r->node;
    dra_alloc_outcome o;
    dra_diag d;
    dra_err err = mc ? DRA_OK : DRA_ENOMEM;
    dra_alloc_outcome_init(&o, NULL);
    dra_diag_init(&d, NULL);
    r->deadline = mono_now() + r->timeout_s;
    for (size_t i = 0; err == DRA_OK && i < j->n; i++)
        err = dra_alloc_claim_from_api(&r->ar, &j->claims[i]->meta, &j->claims[i]->u.claim.spec,
                                       (dra_alloc_claim **)&mc[i], &d);
    if (err == DRA_OK && node && j->nsels && !fixed_node_ok(r, j, node)) {
        dra_diag_add(&d, "", 0, 0, "a claim it uses is allocated with a node selector that "
                                   "node %s does not match", node);
        err = DRA_EUNSAT;
    } else if (err == DRA_OK) {
        err = node ? dra_allocator_allocate(r->alloc, node, mc, j->n, &o, &d)
                   : dra_allocator_schedule_where(r->alloc, mc, j->n,
                                                  j->nsels ? job_node_ok : NULL, (void *)j, &o,
                                                  &d);
    }
    if (err == DRA_OK)
        err = dra_allocator_commit(r->alloc, &o);
    for (size_t i = 0; err == DRA_OK && i < j->n; i++) {
        dra_allocation_result *res;
        if ((err = dra_alloc_result_to_api(&r->ar, &o.claims[i], &res)) == DRA_OK) {
            j->claims[i]->u.claim.status.allocation = res;
            r->out[r->nout++] = j->claims[i];
        }
    }
    if (err == DRA_OK && r->explain_only)
        fprintf(r->ctx->out, "%s: can be allocated on node %s\n", j->what, o.node);
    if (err != DRA_OK) {
        r->failed = 1;
        if (o.explanation) /* also for a missing class: every request explained */
            report(r, j->what, o.explanation);
        else
            report(r, j->what, dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
    }
    dra_diag_fini(&d);
    dra_alloc_outcome_fini(&o);
    return err == DRA_ENOMEM ? -1 : 0;
}

static int used_by_pod(run *r, const dra_object *claim)
{
    for (size_t i = 0; i < r->nobjs; i++) {
        const dra_object *p = r->objs[i];
        if (p->kind != DRA_KIND_POD ||
            strcmp(p->meta.namespace_ ? p->meta.namespace_ : "",
                   claim->meta.namespace_ ? claim->meta.namespace_ : "") != 0)
            continue;
        for (size_t k = 0; k < p->u.pod.spec.n_resource_claims; k++) {
            const char *n = p->u.pod.spec.resource_claims[k].resource_claim_name;
            if (n && strcmp(n, claim->meta.name) == 0)
                return 1;
        }
    }
    return 0;
}

static int pod_job(run *r, dra_object *pod)
{
    const dra_pod_spec *sp = &pod->u.pod.spec;
    dra_object **cl = dra_arena_array(&r->ar, sp->n_resource_claims + 1, sizeof *cl);
    const dra_alloc_node_selector **sels =
        dra_arena_array(&r->ar, sp->n_resource_claims + 1, sizeof *sels);
    job j = {NULL, sp->node_name, cl, 0, sels, 0};
    if (!cl || !sels || !(j.what = dra_arena_sprintf(&r->ar, "pod %s/%s", pod->meta.namespace_ ? pod->meta.namespace_ : "",
                                           pod->meta.name ? pod->meta.name : "")))
        return -1;
    for (size_t k = 0; k < sp->n_resource_claims; k++) {
        const dra_pod_resource_claim *pc = &sp->resource_claims[k];
        dra_object *c = NULL;
        if (pc->resource_claim_name) {
            c = find(r, DRA_KIND_RESOURCE_CLAIM, pod->meta.namespace_, pc->resource_claim_name);
            if (!c) {
                report(r, j.what, "a resource claim it uses does not exist");
                r->failed = 1;
                return 0;
            }
            if (c->u.claim.status.allocation) {
                /* Allocated already (for another pod, say): its node
                 * selector limits where this pod can go. */
                const dra_alloc_node_selector *ns = NULL;
                if (dra_alloc_node_selector_from_api(&r->ar, c->u.claim.status.allocation->node_selector,
                                                     &ns, NULL) != DRA_OK)
                    return -1;
                if (ns)
                    sels[j.nsels++] = ns;
                continue;
            }
        } else if (pc->resource_claim_template_name) {
            if (!(c = make_claim(r, pod, pc))) {
                r->failed = 1;
                return 0;
            }
        }
        if (c)
            cl[j.n++] = c;
    }
    return j.n ? run_job(r, &j) : 0;
}

static int print_claims(run *r)
{
    dra_buf b;
    int rc = 0;
    dra_buf_init(&b, NULL);
    for (size_t i = 0; i < r->nout; i++) {
        dra_doc *doc;
        if (dra_api_encode(&r->ar, r->out[i], &doc) != DRA_OK) {
            rc = -1;
            break;
        }
        if (i)
            dra_buf_puts(&b, "---\n");
        dra_doc_to_yaml(doc, &b);
    }
    if (b.oom)
        rc = -1;
    if (rc == 0 && b.p)
        fputs(b.p, r->ctx->out);
    dra_buf_fini(&b);
    return rc;
}

static int load(run *r, const char *const *files, size_t nfiles)
{
    for (size_t f = 0; f < nfiles; f++) {
        size_t len, n = 0;
        char *text = dractl_read_file(r->ctx, files[f], &len);
        dra_object **objs = NULL, **all;
        dra_diag d;
        dra_err err;
        if (!text)
            return DRACTL_USAGE;
        dra_diag_init(&d, NULL);
        err = dra_api_decode_stream(&r->ar, text, len, &objs, &n, &d);
        free(text);
        if (err != DRA_OK) {
            dractl_errorf(r->ctx, "%s: %s", files[f], dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
            dra_diag_fini(&d);
            return DRACTL_USAGE;
        }
        dra_diag_fini(&d);
        if (!(all = dra_arena_array(&r->ar, r->nobjs + n + 1, sizeof *all)))
            return DRACTL_USAGE;
        if (r->nobjs)
            memcpy(all, r->objs, r->nobjs * sizeof *all);
        if (n)
            memcpy(all + r->nobjs, objs, n * sizeof *all);
        r->objs = all;
        r->nobjs += n;
    }
    for (size_t i = 0; i < r->nobjs; i++)
        dra_api_set_defaults(r->objs[i]);
    return DRACTL_OK;
}

static int allocate_all(run *r)
{
    dra_alloc_options opt;
    dra_diag d;
    dra_err err;
    size_t nclaims = 0;
    memset(&opt, 0, sizeof opt);
    opt.explain = 1;
    opt.max_steps = r->max_steps;
    opt.cancel = past_deadline;
    opt.cancel_ud = r;
    if ((err = dra_allocator_new(NULL, &opt, &r->alloc)) != DRA_OK) {
        dractl_errorf(r->ctx, "allocator: %s", dra_strerror(err));
        return DRACTL_USAGE;
    }
    dra_diag_init(&d, NULL);
    err = dra_alloc_load_api(r->alloc, &r->ar, r->objs, r->nobjs, &d);
    if (err != DRA_OK) {
        dractl_errorf(r->ctx, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(err));
        dra_diag_fini(&d);
        return DRACTL_FAIL;
    }
    dra_diag_fini(&d);
    for (size_t i = 0; i < r->nobjs; i++)
        nclaims += r->objs[i]->kind == DRA_KIND_POD ? r->objs[i]->u.pod.spec.n_resource_claims : 1;
    if (!(r->out = dra_arena_array(&r->ar, nclaims + 1, sizeof *r->out)))
        return DRACTL_USAGE;
    for (size_t i = 0; i < r->nobjs; i++) {
        dra_object *o = r->objs[i];
        int rc = 0;
        if (o->kind == DRA_KIND_POD) {
            rc = pod_job(r, o);
        } else if (o->kind == DRA_KIND_RESOURCE_CLAIM && !o->u.claim.status.allocation &&
                   !used_by_pod(r, o)) {
            job j = {NULL, NULL, &r->objs[i], 1, NULL, 0};
            if (!(j.what = dra_arena_sprintf(&r->ar, "claim %s/%s", o->meta.namespace_ ? o->meta.namespace_ : "",
                                             o->meta.name ? o->meta.name : "")))
                return DRACTL_USAGE;
            rc = run_job(r, &j);
        }
        if (rc < 0) {
            dractl_errorf(r->ctx, "out of memory");
            return DRACTL_USAGE;
        }
    }
    return DRACTL_OK;
}

int dractl_allocate_main(dractl_ctx *ctx, int argc, char **argv, int explain_only)
{
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t nfiles = 0;
    run r;
    int rc;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.explain_only = explain_only;
    if (!files)
        return DRACTL_USAGE;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--filename") == 0) && i + 1 < argc) {
            files[nfiles++] = argv[++i];
        } else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
            r.node = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc &&
                   (r.timeout_s = strtod(argv[i + 1], NULL)) > 0) {
            i++;
        } else if (strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc &&
                   (r.max_steps = strtoull(argv[i + 1], NULL, 10)) > 0) {
            i++;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(ctx, ctx->out, explain_only);
            free(files);
            return DRACTL_OK;
        } else {
            usage(ctx, ctx->err, explain_only);
            free(files);
            return DRACTL_USAGE;
        }
    }
    if (!nfiles) {
        usage(ctx, ctx->err, explain_only);
        free(files);
        return DRACTL_USAGE;
    }
    dra_arena_init(&r.ar, NULL);
    rc = load(&r, files, nfiles);
    if (rc == DRACTL_OK)
        rc = allocate_all(&r);
    if (rc == DRACTL_OK && !explain_only && print_claims(&r) < 0) {
        dractl_errorf(ctx, "out of memory");
        rc = DRACTL_USAGE;
    }
    if (rc == DRACTL_OK && r.failed)
        rc = DRACTL_FAIL;
    dra_allocator_free(r.alloc);
    dra_arena_fini(&r.ar);
    free(files);
    return rc;
}

int cmd_allocate(dractl_ctx *ctx, int argc, char **argv)
{
    return dractl_allocate_main(ctx, argc, argv, 0);
}
