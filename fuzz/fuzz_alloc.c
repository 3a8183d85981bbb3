/* libFuzzer target for the allocator, driven the way dractl allocate
 * drives it: the input is a YAML/JSON stream of ResourceSlices,
 * DeviceClasses, Nodes, ResourceClaims (allocated ones count as in use),
 * ResourceClaimTemplates and Pods. Everything is loaded into one
 * allocator with the CEL selector backend and a small step bound; then
 * every unallocated claim, every template's claim and every pod's named
 * claims (together, on the pod's node when it has one) are allocated,
 * successful outcomes committed, converted back to status.allocation,
 * encoded, and finally released again. Objects are not validated first,
 * just as dractl does not, so the allocator and its adapter must cope with
 * whatever decodes. Nothing may crash, leak or take long. */
#include <stdlib.h>
#include <string.h>

#include "dra/alloc.h"
#include "dra/api.h"
#include "dra/codec.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Small enough that a pathological search stops in well under a second. */
#define FUZZ_MAX_STEPS 10000
/* Bounds the work per input: each job may search every node. */
#define FUZZ_MAX_JOBS 16

typedef struct fuzz_state {
    dra_arena ar;
    dra_diag d;
    dra_allocator *alloc;
    dra_object **objs;
    size_t n;
    dra_alloc_outcome *done; /* committed outcomes, released at the end */
    size_t ndone;
    size_t jobs;
} fuzz_state;

/* Errors the allocator documents for a claim that cannot be placed or a
 * bad input; anything else (or ENOMEM with libc malloc) is a bug. */
static int expected_error(dra_err err)
{
    switch (err) {
    case DRA_OK:
    case DRA_EUNSAT:
    case DRA_ENOTFOUND:
    case DRA_EEVAL:
    case DRA_ETYPE:
    case DRA_EPARSE:
    case DRA_ELIMIT:
    case DRA_ECONFLICT:
    case DRA_EINVALID:
    case DRA_EINVAL:
    case DRA_EEXIST: /* a Node twice */
        return 1;
    default:
        return 0;
    }
}

static dra_object *find_claim(fuzz_state *s, const char *ns, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        dra_object *o = s->objs[i];
        if (o->kind == DRA_KIND_RESOURCE_CLAIM && o->meta.name && name &&
            strcmp(o->meta.name, name) == 0 &&
            strcmp(o->meta.namespace_ ? o->meta.namespace_ : "", ns ? ns : "") == 0)
            return o;
    }
    return NULL;
}

/* Allocates |n| claims together (on |node| when not NULL), commits and
 * encodes the result. */
static void run_job(fuzz_state *s, const char *node, const dra_alloc_claim **mc,
                    dra_object **api, size_t n)
{
    dra_alloc_outcome *o = &s->done[s->ndone];
    dra_err err;
    if (s->jobs++ >= FUZZ_MAX_JOBS)
        return;
    dra_alloc_outcome_init(o, NULL);
    err = node ? dra_allocator_allocate(s->alloc, node, mc, n, o, &s->d)
               : dra_allocator_schedule(s->alloc, mc, n, o, &s->d);
    dra_diag_clear(&s->d);
    if (!expected_error(err))
        abort();
    if (err != DRA_OK) {
        dra_alloc_outcome_fini(o);
        return;
    }
    if (o->nclaims != n || !o->node)
        abort();
    if (dra_allocator_commit(s->alloc, o) != DRA_OK)
        abort();
    s->ndone++;
    for (size_t i = 0; i < n; i++) {
        dra_allocation_result *res;
        dra_doc *doc;
        if (o->claims[i].nresults > DRA_ALLOC_MAX_RESULTS)
            abort();
        if (dra_alloc_result_to_api(&s->ar, &o->claims[i], &res) != DRA_OK)
            abort();
        if (api[i]) {
            api[i]->u.claim.status.allocation = res;
            if (dra_api_encode(&s->ar, api[i], &doc) != DRA_OK)
                abort();
        }
    }
}

static void claim_job(fuzz_state *s, dra_object *api, const dra_object_meta *meta,
                      const dra_claim_spec *spec)
{
    const dra_alloc_claim *mc[1];
    if (dra_alloc_claim_from_api(&s->ar, meta, spec, (dra_alloc_claim **)&mc[0], &s->d) ==
        DRA_OK)
        run_job(s, NULL, mc, &api, 1);
    dra_diag_clear(&s->d);
}

/* A pod's claims that name an unallocated ResourceClaim, together. */
static void pod_job(fuzz_state *s, dra_object *pod)
{
    const dra_pod_spec *sp = &pod->u.pod.spec;
    const dra_alloc_claim **mc = dra_arena_array(&s->ar, sp->n_resource_claims + 1, sizeof *mc);
    dra_object **api = dra_arena_array(&s->ar, sp->n_resource_claims + 1, sizeof *api);
    size_t n = 0;
    if (!mc || !api)
        abort();
    for (size_t k = 0; k < sp->n_resource_claims; k++) {
        dra_object *c = find_claim(s, pod->meta.namespace_,
                                   sp->resource_claims[k].resource_claim_name);
        if (!c || c->u.claim.status.allocation)
            continue;
        if (dra_alloc_claim_from_api(&s->ar, &c->meta, &c->u.claim.spec,
                                     (dra_alloc_claim **)&mc[n], &s->d) != DRA_OK) {
            dra_diag_clear(&s->d);
            return;
        }
        api[n++] = c;
    }
    if (n)
        run_job(s, sp->node_name, mc, api, n);
}

static void allocate_all(fuzz_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        dra_object *o = s->objs[i];
        if (o->kind == DRA_KIND_POD)
            pod_job(s, o);
        else if (o->kind == DRA_KIND_RESOURCE_CLAIM && !o->u.claim.status.allocation)
            claim_job(s, o, &o->meta, &o->u.claim.spec);
        else if (o->kind == DRA_KIND_RESOURCE_CLAIM_TEMPLATE)
            claim_job(s, NULL, &o->u.claim_template.meta, &o->u.claim_template.spec);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    fuzz_state s;
    dra_alloc_options opt;
    dra_err err;
    if (size > (1u << 15))
        return 0;
    memset(&s, 0, sizeof s);
    memset(&opt, 0, sizeof opt);
    opt.max_steps = FUZZ_MAX_STEPS;
    opt.explain = size & 1; /* both with and without explanations */
    dra_arena_init(&s.ar, NULL);
    dra_diag_init(&s.d, NULL);
    s.d.max = 16;
    (void)dra_api_decode_stream(&s.ar, (const char *)data, size, &s.objs, &s.n, &s.d);
    dra_diag_clear(&s.d);
    for (size_t i = 0; i < s.n; i++)
        dra_api_set_defaults(s.objs[i]);
    if (dra_allocator_new(NULL, &opt, &s.alloc) != DRA_OK)
        abort();
    if (!(s.done = dra_arena_array(&s.ar, FUZZ_MAX_JOBS, sizeof *s.done)))
        abort();
    err = dra_alloc_load_api(s.alloc, &s.ar, s.objs, s.n, &s.d);
    dra_diag_clear(&s.d);
    if (err == DRA_OK)
        allocate_all(&s);
    else if (!expected_error(err))
        abort();
    /* Releasing in reverse must undo every commit without complaint. */
    while (s.ndone > 0) {
        dra_alloc_outcome *o = &s.done[--s.ndone];
        if (dra_allocator_release(s.alloc, o) != DRA_OK)
            abort();
        dra_alloc_outcome_fini(o);
    }
    dra_allocator_free(s.alloc);
    dra_diag_fini(&s.d);
    dra_arena_fini(&s.ar);
    return 0;
}
