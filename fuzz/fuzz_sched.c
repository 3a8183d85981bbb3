/* libFuzzer target for the scheduler core through its offline snapshot:
 * the input is a YAML/JSON stream of Nodes, ResourceSlices, DeviceClasses,
 * ResourceClaims, ResourceClaimTemplates and Pods, loaded as the informer
 * cache loads watch events (objects that do not decode are refused with
 * an error); then every pod is scheduled in turn (template claims made,
 * allocations assumed for the next) and every claim explained. Whatever
 * the input, nothing may crash, leak or take long. */
#include <stdlib.h>
#include <string.h>

#include "dra/codec.h"
#include "dra/sched.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define FUZZ_MAX_PODS 16
#define FUZZ_MAX_STEPS 10000

static const char *meta(const dra_doc *d, const char *k)
{
    const dra_doc *v = dra_doc_get(dra_doc_get(d, "metadata"), k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    dra_arena a;
    dra_doc **docs = NULL;
    size_t n = 0, pods = 0;
    dra_sched_opts o;
    dra_sched_sim *s = NULL;
    if (size > 1 << 16)
        return 0;
    dra_arena_init(&a, NULL);
    memset(&o, 0, sizeof o);
    o.max_steps = FUZZ_MAX_STEPS;
    if (dra_doc_parse_yaml(&a, (const char *)data, size, &docs, &n, NULL) ||
        dra_doc_flatten_lists(&a, &docs, &n) || dra_sched_sim_new(&o, &s))
        goto out;
    for (size_t i = 0; i < n; i++)
        dra_sched_sim_add(s, docs[i], NULL);
    for (size_t i = 0; i < n && pods < FUZZ_MAX_PODS; i++) {
        const dra_doc *k = dra_doc_get(docs[i], "kind");
        dra_sched_decision d;
        if (!k || k->kind != DRA_DOC_STRING || !meta(docs[i], "name"))
            continue;
        if (!strcmp(k->u.str.s, "Pod")) {
            pods++;
            if (dra_sched_sim_schedule(s, meta(docs[i], "namespace"), meta(docs[i], "name"), &a,
                                       &d) == DRA_ENOMEM)
                abort();
        } else if (!strcmp(k->u.str.s, "ResourceClaim")) {
            if (dra_sched_sim_explain_claim(s, meta(docs[i], "namespace"), meta(docs[i], "name"),
                                            &a, &d) == DRA_ENOMEM)
                abort();
        }
    }
out:
    dra_sched_sim_free(s);
    dra_arena_fini(&a);
    return 0;
}
