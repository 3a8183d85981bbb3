/* The scheduler core on its own, without a cluster: the scheduling queue
 * (backoff, unschedulable pods moved by events, PreEnqueue gating), the
 * controller's work queue, the claim controller's plans (claims from
 * templates, orphans, reservedFor pruning, deallocation, finalizer,
 * deletion), the cache's version guard and device counts, and the
 * documents the writes send. */
#include "sched_test.h"

#include "sched/sched_int.h"

/* ---- helpers --------------------------------------------------------------------- */

static sc_core *core_new(void)
{
    sc_core *c = calloc(1, sizeof *c);
    dra_sched_opts o;
    memset(&o, 0, sizeof o);
    o.scheduler = 1;
    o.claim_controller = 1;
    assert_non_null(c);
    assert_int_equal(sched_core_init(c, &o), DRA_OK);
    return c;
}

static void core_free(sc_core *c)
{
    sched_core_fini(c);
    free(c);
}

/* Applies every object of |yaml| as |type| at time |now|. */
static void apply(sc_core *c, dra_watch_type type, const char *yaml, int64_t now)
{
    dra_arena a;
    dra_doc **docs = NULL;
    size_t n = 0;
    dra_diag d;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, yaml, strlen(yaml), &docs, &n, &d))
        fail_msg("yaml: %s", dra_diag_first(&d));
    for (size_t i = 0; i < n; i++) {
        const char *av = dra_obj_str(docs[i], "apiVersion"), *k = dra_obj_str(docs[i], "kind");
        dra_kind kind = dra_api_kind_lookup(av ? av : "", k ? k : "");
        if (sched_apply(c, kind, type, docs[i], now, &d) != DRA_OK)
            fail_msg("apply: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static sc_pod *pod(sc_core *c, const char *name)
{
    char k[128];
    snprintf(k, sizeof k, "default/%s", name);
    return sched_pod_get(c, k);
}

static const char *class_yaml =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one, namespace: default}\n"
    "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1}\n"
    "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, resourceSliceCount: 1},"
    " devices: [{name: g0}, {name: g1}]}\n";

#define POD_PLAIN "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: up}\n" \
                  "spec: {containers: [{name: c}]}\n"

/* ---- scheduling queue ------------------------------------------------------------- */

static void test_queue_backoff(void **state)
{
    sc_core *c = core_new();
    sc_pod *p;
    (void)state;
    apply(c, DRA_WATCH_ADDED, POD_PLAIN, 0);
    p = pod(c, "p");
    assert_int_equal(p->q, SC_Q_ACTIVE);
    assert_ptr_equal(sched_queue_pop(c, 0), p);
    assert_int_equal(p->q, SC_Q_CYCLE);
    assert_null(sched_queue_pop(c, 0));
    /* Unschedulable: parked until an event, then backoff (1 s) first. */
    sched_queue_failed(c, p, 0, 0);
    assert_int_equal(p->q, SC_Q_UNSCHED);
    assert_null(sched_queue_pop(c, 500));
    sched_queue_move_all(c, 500);
    assert_int_equal(p->q, SC_Q_BACKOFF);
    assert_null(sched_queue_pop(c, 999));
    assert_ptr_equal(sched_queue_pop(c, 1000), p);
    /* The backoff doubles per attempt up to 10 s. */
    for (int i = 2; i <= 6; i++) {
        int64_t want = i == 2 ? 2000 : i == 3 ? 4000 : i == 4 ? 8000 : 10000;
        sched_queue_failed(c, p, 10000 * i, 1);
        assert_int_equal(p->q, SC_Q_BACKOFF);
        assert_int_equal(p->backoff_until_ms - 10000 * i, want);
        assert_ptr_equal(sched_queue_pop(c, p->backoff_until_ms), p);
    }
    core_free(c);
}

/* An event that arrives while the pod is being scheduled sends a failed
 * pod to backoff, not to wait for another event; an update of the pod
 * itself re-admits it. */
static void test_queue_event_during_cycle(void **state)
{
    sc_core *c = core_new();
    sc_pod *p;
    (void)state;
    apply(c, DRA_WATCH_ADDED, POD_PLAIN, 0);
    p = sched_queue_pop(c, 0);
    assert_non_null(p);
    apply(c, DRA_WATCH_ADDED, "apiVersion: v1\nkind: Node\nmetadata: {name: n9}\n", 10);
    sched_queue_failed(c, p, 20, 0);
    assert_int_equal(p->q, SC_Q_BACKOFF);
    /* Unschedulable pods flush back after five minutes without events. */
    assert_ptr_equal(sched_queue_pop(c, 2000), p);
    sched_queue_failed(c, p, 3000, 0);
    assert_int_equal(p->q, SC_Q_UNSCHED);
    assert_null(sched_queue_pop(c, 3000 + SC_UNSCHED_FLUSH_MS - 1));
    assert_ptr_equal(sched_queue_pop(c, 3000 + SC_UNSCHED_FLUSH_MS), p);
    core_free(c);
}

/* Pods that are not ours: another scheduler's, bound, finished. */
static void test_queue_not_ours(void **state)
{
    sc_core *c = core_new();
    (void)state;
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: default, uid: u1}\n"
          "spec: {schedulerName: dra-scheduler, containers: [{name: c}]}\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: bound, namespace: default, uid: u2}\n"
          "spec: {nodeName: n1, containers: [{name: c}]}\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: done, namespace: default, uid: u3}\n"
          "spec: {containers: [{name: c}]}\nstatus: {phase: Succeeded}\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: gated, namespace: default, uid: u4}\n"
          "spec: {schedulingGates: [{name: wait}], containers: [{name: c}]}\n", 0);
    assert_int_equal(pod(c, "other")->q, SC_Q_NONE);
    assert_int_equal(pod(c, "bound")->q, SC_Q_NONE);
    assert_int_equal(pod(c, "done")->q, SC_Q_NONE);
    assert_int_equal(pod(c, "gated")->q, SC_Q_GATED);
    assert_null(sched_queue_pop(c, 0));
    core_free(c);
}

/* PreEnqueue: a template claim not generated yet gates the pod until the
 * pod's status names it, and then until the claim exists. */
static void test_queue_gated_claims(void **state)
{
    sc_core *c = core_new();
    const char *pod_yaml =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, uid: up, resourceVersion: \"%d\"}\n"
        "spec: {containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n%s";
    char buf[1024];
    (void)state;
    apply(c, DRA_WATCH_ADDED, class_yaml, 0);
    snprintf(buf, sizeof buf, pod_yaml, 1, "");
    apply(c, DRA_WATCH_ADDED, buf, 0);
    assert_int_equal(pod(c, "p")->q, SC_Q_GATED);
    snprintf(buf, sizeof buf, pod_yaml, 2,
             "status: {resourceClaimStatuses: [{name: gpu, resourceClaimName: p-gpu-abcde}]}\n");
    apply(c, DRA_WATCH_MODIFIED, buf, 1);
    assert_int_equal(pod(c, "p")->q, SC_Q_GATED); /* the claim is not there yet */
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: p-gpu-abcde\n"
          "  namespace: default\n  uid: c1\n  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: up,"
          " controller: true}]\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 2);
    assert_int_equal(pod(c, "p")->q, SC_Q_ACTIVE);
    core_free(c);
}

/* ---- the controller's work queue ------------------------------------------------------- */

static void test_work_queue(void **state)
{
    sc_wq q;
    const char *k;
    (void)state;
    sched_wq_init(&q, NULL);
    assert_int_equal(sched_wq_add(&q, "pod:a"), DRA_OK);
    assert_int_equal(sched_wq_add(&q, "pod:a"), DRA_OK); /* deduplicated */
    assert_int_equal(sched_wq_add(&q, "pod:b"), DRA_OK);
    assert_int_equal(sched_wq_len(&q), 2);
    k = sched_wq_get(&q);
    assert_string_equal(k, "pod:a");
    sched_wq_add(&q, "pod:a"); /* while busy: once more after it is done */
    sched_wq_done(&q, "pod:a", 1, 0);
    assert_string_equal(sched_wq_get(&q), "pod:b");
    assert_string_equal(sched_wq_get(&q), "pod:a");
    assert_null(sched_wq_get(&q));
    /* Failures come back after 5 ms, then 10 ms. */
    sched_wq_done(&q, "pod:a", 0, 100);
    assert_int_equal(sched_wq_tick(&q, 104), 105);
    assert_null(sched_wq_get(&q));
    sched_wq_tick(&q, 105);
    assert_string_equal(sched_wq_get(&q), "pod:a");
    sched_wq_done(&q, "pod:a", 0, 200);
    assert_int_equal(sched_wq_tick(&q, 200), 210);
    sched_wq_tick(&q, 210);
    assert_string_equal(sched_wq_get(&q), "pod:a");
    sched_wq_done(&q, "pod:a", 1, 300);
    sched_wq_done(&q, "pod:b", 1, 300);
    assert_int_equal(sched_wq_len(&q), 0);
    sched_wq_fini(&q);
}

/* ---- claim controller plans ------------------------------------------------------------- */

static const sc_action *find_op(const sc_plan *pl, sc_op op)
{
    for (size_t i = 0; i < pl->n; i++)
        if (pl->v[i].op == op)
            return &pl->v[i];
    return NULL;
}

static const char *doc_json(const dra_doc *d)
{
    static char buf[8192];
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_doc_to_json(d, 0, &b);
    snprintf(buf, sizeof buf, "%s", b.p ? b.p : "");
    dra_buf_fini(&b);
    return buf;
}

static void test_cc_create_from_template(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    const sc_action *a;
    const char *js;
    (void)state;
    apply(c, DRA_WATCH_ADDED, class_yaml, 0);
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, uid: uw}\n"
          "spec: {containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n", 0);
    assert_non_null(sched_wq_get(&c->wq)); /* the pod was queued for the controller */
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "pod:default/web", NULL, 0, 0, &pl), DRA_OK);
    assert_non_null(a = find_op(&pl, SC_OP_CREATE_CLAIM));
    assert_string_equal(a->pod_claim, "gpu");
    js = doc_json(a->doc);
    assert_contains(js, "\"generateName\":\"web-gpu-\"");
    assert_contains(js, "\"resource.kubernetes.io/pod-claim-name\":\"gpu\"");
    assert_contains(js, "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"web\","
                        "\"uid\":\"uw\",\"controller\":true,\"blockOwnerDeletion\":true}]");
    assert_contains(js, "\"finalizers\":[\"resource.kubernetes.io/delete-protection\"]");
    assert_contains(js, "\"deviceClassName\":\"gpu\"");
    assert_int_equal(pl.need_statuses, 1);
    sched_plan_fini(&pl);
    /* A claim made before a crash (owner and annotation) is reused. */
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: web-gpu-xyz12\n"
          "  namespace: default\n  uid: c1\n  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n"
          "  ownerReferences: [{apiVersion: v1, kind: Pod, name: web, uid: uw, controller: true}]\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 1);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "pod:default/web", NULL, 0, 0, &pl), DRA_OK);
    assert_null(find_op(&pl, SC_OP_CREATE_CLAIM));
    assert_int_equal(pl.need_statuses, 1);
    assert_int_equal(pl.nst, 1);
    assert_string_equal(pl.st[0].claim, "web-gpu-xyz12");
    assert_string_equal(sched_claim_statuses_patch(&pl.ar, pl.st, pl.nst),
                        "{\"status\":{\"resourceClaimStatuses\":[{\"name\":\"gpu\","
                        "\"resourceClaimName\":\"web-gpu-xyz12\"}]}}");
    sched_plan_fini(&pl);
    core_free(c);
}

static void test_cc_missing_template(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    (void)state;
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, uid: uw}\n"
          "spec: {containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: nope}]}\n", 0);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "pod:default/web", NULL, 0, 0, &pl), DRA_OK);
    assert_string_equal(pl.ev_reason, "FailedResourceClaimCreation");
    assert_contains(pl.ev_msg, "PodResourceClaim gpu: resource claim template \"nope\"");
    assert_null(find_op(&pl, SC_OP_CREATE_CLAIM));
    sched_plan_fini(&pl);
    core_free(c);
}

#define GEN_CLAIM(extra)                                                                       \
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: web-gpu-xyz12\n"  \
    "  namespace: default\n  uid: c1\n  resourceVersion: \"5\"\n"                              \
    "  finalizers: [resource.kubernetes.io/delete-protection]\n"                               \
    "  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n"                            \
    "  ownerReferences: [{apiVersion: v1, kind: Pod, name: web, uid: uw, controller: true}]\n"   \
    "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n" extra

#define ALLOCATED                                                                              \
    "status:\n  allocation:\n    devices: {results: [{request: gpu, driver: gpu.example.com,"    \
    " pool: n1, device: g0}]}\n    nodeSelector: {nodeSelectorTerms: [{matchFields: [{key:"      \
    " metadata.name, operator: In, values: [n1]}]}]}\n  reservedFor: [{resource: pods, name: web," \
    " uid: uw}]\n"

#define WEB_POD(status) \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, uid: uw}\n"            \
    "spec: {nodeName: n1, containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one}]}\n" \
    "status: {phase: " status ", resourceClaimStatuses: [{name: gpu, resourceClaimName: web-gpu-xyz12}]}\n"

/* The pod ended: its reservation goes, the claim is deallocated (status
 * first, then the finalizer), and the generated claim is deleted. */
static void test_cc_release_done_pod(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    const sc_action *a;
    (void)state;
    apply(c, DRA_WATCH_ADDED, class_yaml, 0);
    apply(c, DRA_WATCH_ADDED, WEB_POD("Running"), 0);
    apply(c, DRA_WATCH_ADDED, GEN_CLAIM(ALLOCATED), 0);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 0, &pl), DRA_OK);
    assert_int_equal(pl.n, 0); /* running: nothing to do */
    sched_plan_fini(&pl);
    assert_int_equal(sched_rebuild(c), DRA_OK);
    assert_int_equal(c->nodes[0]->free, 1); /* g0 in use */
    apply(c, DRA_WATCH_MODIFIED, WEB_POD("Succeeded"), 1);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 0, &pl), DRA_OK);
    assert_non_null(a = find_op(&pl, SC_OP_CLAIM_STATUS));
    assert_true(a->dealloc && a->then_unfinalize);
    assert_null(strstr(doc_json(a->doc), "\"allocation\""));
    assert_contains(doc_json(a->doc), "\"status\":{}");
    assert_contains(doc_json(a->doc), "\"resourceVersion\":\"5\"");
    assert_non_null(a = find_op(&pl, SC_OP_CLAIM_DELETE));
    assert_string_equal(a->uid, "c1");
    sched_plan_fini(&pl);
    core_free(c);
}

/* A consumer the cache does not know is looked up first; once the API
 * says it is gone, the reservation goes. A deleted pod needs no lookup. */
static void test_cc_unknown_consumer(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    const char *gone[] = {"uw"};
    (void)state;
    apply(c, DRA_WATCH_ADDED, class_yaml, 0);
    apply(c, DRA_WATCH_ADDED, GEN_CLAIM(ALLOCATED), 0);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 0, &pl), DRA_OK);
    assert_int_equal(pl.n, 1);
    assert_int_equal(pl.v[0].op, SC_OP_POD_CHECK);
    assert_string_equal(pl.v[0].name, "web");
    sched_plan_fini(&pl);
    /* Checked: still there, nothing to do. */
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 1, &pl), DRA_OK);
    assert_null(find_op(&pl, SC_OP_CLAIM_STATUS));
    sched_plan_fini(&pl);
    /* Checked: gone. */
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", gone, 1, 1, &pl), DRA_OK);
    assert_non_null(find_op(&pl, SC_OP_CLAIM_STATUS));
    assert_non_null(find_op(&pl, SC_OP_CLAIM_DELETE));
    sched_plan_fini(&pl);
    /* Known deleted (a DELETED event): no lookup. */
    apply(c, DRA_WATCH_ADDED, WEB_POD("Running"), 1);
    apply(c, DRA_WATCH_DELETED, WEB_POD("Running"), 2);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 0, &pl), DRA_OK);
    assert_null(find_op(&pl, SC_OP_POD_CHECK));
    assert_non_null(find_op(&pl, SC_OP_CLAIM_STATUS));
    assert_non_null(find_op(&pl, SC_OP_CLAIM_DELETE));
    sched_plan_fini(&pl);
    core_free(c);
}

/* Being deleted, unreserved, not allocated: the finalizer is removed. */
static void test_cc_finalizer_on_delete(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    const sc_action *a;
    (void)state;
    apply(c, DRA_WATCH_ADDED, GEN_CLAIM("---\n") "", 0);
    apply(c, DRA_WATCH_MODIFIED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: web-gpu-xyz12\n"
          "  namespace: default\n  uid: c1\n  resourceVersion: \"6\"\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n"
          "  finalizers: [resource.kubernetes.io/delete-protection, example.com/keep]\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 1);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "claim:default/web-gpu-xyz12", NULL, 0, 0, &pl), DRA_OK);
    assert_non_null(a = find_op(&pl, SC_OP_CLAIM_UPDATE));
    assert_contains(doc_json(a->doc), "\"finalizers\":[\"example.com/keep\"]");
    sched_plan_fini(&pl);
    core_free(c);
}

/* A claim the controller has nothing to do for (no reservation, no
 * owning pod, no finalizer while deleting) queues no work; one that may
 * need work does, as before. */
static void test_cc_idle_claims(void **state)
{
    sc_core *c = core_new();
    (void)state;
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: free, namespace: default, uid: f1}\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 0);
    assert_int_equal(sched_wq_len(&c->wq), 0);
    apply(c, DRA_WATCH_MODIFIED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: free\n  namespace: default\n"
          "  uid: f1\n  resourceVersion: \"3\"\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n"
          "  finalizers: [example.com/keep]\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 0);
    assert_int_equal(sched_wq_len(&c->wq), 0);
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: used, namespace: default, uid: u1}\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
          "status: {reservedFor: [{resource: pods, name: gone, uid: g1}]}\n", 0);
    assert_int_equal(sched_wq_len(&c->wq), 1);
    apply(c, DRA_WATCH_ADDED, GEN_CLAIM("") "", 0);
    assert_int_equal(sched_wq_len(&c->wq), 2);
    assert_string_equal(sched_wq_get(&c->wq), "claim:default/used");
    assert_string_equal(sched_wq_get(&c->wq), "claim:default/web-gpu-xyz12");
    core_free(c);
}

/* A pod bound without the scheduler reserves the allocated claim. */
static void test_cc_reserve_for_bound_pod(void **state)
{
    sc_core *c = core_new();
    sc_plan pl;
    const sc_action *a;
    (void)state;
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: mine, namespace: default, uid: m1}\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
          "status: {allocation: {devices: {results: [{request: gpu, driver: d, pool: p, device: x}]}}}\n", 0);
    apply(c, DRA_WATCH_ADDED,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: direct, namespace: default, uid: ud}\n"
          "spec: {nodeName: n1, containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimName: mine}]}\n", 0);
    sched_plan_init(&pl, NULL);
    assert_int_equal(sched_cc_plan(c, "pod:default/direct", NULL, 0, 0, &pl), DRA_OK);
    assert_non_null(a = find_op(&pl, SC_OP_CLAIM_STATUS));
    assert_contains(doc_json(a->doc), "\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"direct\",\"uid\":\"ud\"}]");
    sched_plan_fini(&pl);
    core_free(c);
}

/* ---- cache -------------------------------------------------------------------------------- */

/* Our own write is in the cache first; the older watch event that
 * follows must not undo it, and a deallocation frees the device and moves
 * unschedulable pods. */
static void test_cache_versions_and_counts(void **state)
{
    sc_core *c = core_new();
    sc_claim *cl;
    sc_pod *p;
    (void)state;
    apply(c, DRA_WATCH_ADDED, class_yaml, 0);
    apply(c, DRA_WATCH_ADDED, POD_PLAIN, 0);
    assert_int_equal(sched_rebuild(c), DRA_OK);
    assert_int_equal(c->nodes[0]->total, 2);
    apply(c, DRA_WATCH_ADDED, GEN_CLAIM(ALLOCATED), 0);
    assert_int_equal(c->nodes[0]->free, 1);
    cl = sched_claim_get(c, "default", "web-gpu-xyz12");
    assert_non_null(cl->obj->u.claim.status.allocation);
    /* Version 4 after 5: ignored. */
    apply(c, DRA_WATCH_MODIFIED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: web-gpu-xyz12,"
          " namespace: default, uid: c1, resourceVersion: \"4\"}\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 1);
    assert_non_null(cl->obj->u.claim.status.allocation);
    assert_int_equal(c->nodes[0]->free, 1);
    p = sched_queue_pop(c, 1);
    sched_queue_failed(c, p, 1, 0);
    assert_int_equal(p->q, SC_Q_UNSCHED);
    /* Version 6 without the allocation: deallocated. */
    apply(c, DRA_WATCH_MODIFIED,
          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: web-gpu-xyz12,"
          " namespace: default, uid: c1, resourceVersion: \"6\"}\n"
          "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n", 2);
    assert_null(cl->obj->u.claim.status.allocation);
    assert_int_equal(c->nodes[0]->free, 2);
    assert_int_not_equal(p->q, SC_Q_UNSCHED);
    core_free(c);
}

/* ---- documents ---------------------------------------------------------------------------- */

static void test_generate_name(void **state)
{
    dra_arena a;
    char pod[64], pc[32];
    (void)state;
    dra_arena_init(&a, NULL);
    assert_string_equal(sched_generate_name(&a, "web", "gpu"), "web-gpu-");
    memset(pod, 'p', 40);
    pod[40] = 0;
    memset(pc, 'c', 20);
    pc[20] = 0;
    /* 62 bytes: both cut in proportion, 40*57/62 = 36 and 20*57/62 = 18. */
    {
        const char *g = sched_generate_name(&a, pod, pc);
        assert_int_equal(strlen(g), 36 + 1 + 18);
        assert_int_equal(g[36], '-');
    }
    dra_arena_fini(&a);
}

static void test_redo_and_unreserve(void **state)
{
    dra_arena a;
    dra_doc **docs, *alloc;
    size_t n;
    const char *why;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a,
        "{metadata: {name: c, resourceVersion: '9'}, status: {reservedFor: [{resource: pods, name: x, uid: ux}]}}\n---\n"
        "{devices: {results: [{request: gpu, driver: d, pool: p, device: g0}]}}\n---\n"
        "{metadata: {name: c}, status: {allocation: {devices: {results: [{request: gpu, driver: d, pool: p, device: g1}]}}}}\n",
        strlen("{metadata: {name: c, resourceVersion: '9'}, status: {reservedFor: [{resource: pods, name: x, uid: ux}]}}\n---\n"
               "{devices: {results: [{request: gpu, driver: d, pool: p, device: g0}]}}\n---\n"
               "{metadata: {name: c}, status: {allocation: {devices: {results: [{request: gpu, driver: d, pool: p, device: g1}]}}}}\n"),
        &docs, &n, NULL), DRA_OK);
    alloc = docs[1];
    assert_int_equal(sched_claim_redo(&a, docs[0], alloc, "me", "um", &why), 1);
    assert_contains(doc_json(docs[0]), "\"device\":\"g0\"");
    assert_contains(doc_json(docs[0]), "{\"resource\":\"pods\",\"name\":\"me\",\"uid\":\"um\"}");
    /* Allocated differently meanwhile: not ours to redo. */
    assert_int_equal(sched_claim_redo(&a, docs[2], alloc, "me", "um", &why), 0);
    assert_contains(why, "allocated elsewhere");
    /* Rollback: our reservation out; the allocation stays while x uses it. */
    assert_non_null(sched_claim_unreserve_doc(&a, docs[0], "um", 1));
    assert_null(strstr(doc_json(docs[0]), "\"um\""));
    assert_contains(doc_json(docs[0]), "\"device\":\"g0\"");
    assert_non_null(sched_claim_unreserve_doc(&a, docs[0], "ux", 1));
    assert_contains(doc_json(docs[0]), "\"allocation\":null");
    dra_arena_fini(&a);
}

static void test_messages(void **state)
{
    dra_arena a;
    sc_hist h;
    (void)state;
    dra_arena_init(&a, NULL);
    sched_hist_init(&h, NULL);
    sched_hist_add(&h, "node(s) were unschedulable");
    sched_hist_add(&h, "cannot allocate all claims");
    sched_hist_add(&h, "cannot allocate all claims");
    assert_string_equal(sched_fit_message(&a, 3, NULL, &h, NULL),
                        "0/3 nodes are available: 1 node(s) were unschedulable, 2 cannot allocate all claims.");
    assert_string_equal(sched_fit_message(&a, 3, NULL, &h, "cannot allocate all claims on any node (3 nodes)\n"
                                                           "claim default/x:\n  request gpu: none fits\n"
                                                           "  request nic: none fits\n"),
                        "0/3 nodes are available: 1 node(s) were unschedulable, 2 cannot allocate all claims. "
                        "cannot allocate all claims on any node (3 nodes); claim default/x: request gpu: none fits; "
                        "request nic: none fits");
    assert_string_equal(sched_fit_message(&a, 0, NULL, NULL, NULL), "no nodes available to schedule pods");
    {
        char big[4000];
        const char *m;
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = 0;
        for (int i = 100; i < 3900; i += 100)
            big[i] = '\n';
        m = sched_fit_message(&a, 1, NULL, &h, big);
        assert_true(strlen(m) <= 1024);
        assert_contains(m, " ...");
    }
    sched_hist_fini(&h);
    dra_arena_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_backoff),
        cmocka_unit_test(test_queue_event_during_cycle),
        cmocka_unit_test(test_queue_not_ours),
        cmocka_unit_test(test_queue_gated_claims),
        cmocka_unit_test(test_work_queue),
        cmocka_unit_test(test_cc_create_from_template),
        cmocka_unit_test(test_cc_missing_template),
        cmocka_unit_test(test_cc_release_done_pod),
        cmocka_unit_test(test_cc_unknown_consumer),
        cmocka_unit_test(test_cc_finalizer_on_delete),
        cmocka_unit_test(test_cc_idle_claims),
        cmocka_unit_test(test_cc_reserve_for_bound_pod),
        cmocka_unit_test(test_cache_versions_and_counts),
        cmocka_unit_test(test_generate_name),
        cmocka_unit_test(test_redo_and_unreserve),
        cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
