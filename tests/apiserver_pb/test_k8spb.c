/* Unit tests of src/apiserver/k8spb.c (compiled in directly): the bodies
 * real kubectl 1.32/1.33 sent (tests/apiserver_pb/data), every field of
 * Namespace, ObjectMeta and DeleteOptions encoded by protobuf-c (an
 * encoder independent of our decoder) and compared with the JSON Go
 * would write, protobuf's merge rules, skipped unknown fields, malformed
 * and hostile input with the path and message of each error, limits, and
 * a failmalloc loop. */
#include "dra_test.h"

#include "apiserver/k8spb.h"
#include "dra/codec.h"
#include "k8s_pb_test.pb-c.h"
#include "pb_enc.h"

/* ---- decoding and comparing ------------------------------------------------------- */

typedef struct res {
    dra_arena a;
    dra_diag d;
    dra_doc *doc;
    dra_err e;
} res;

static void dec(res *r, const void *body, size_t len, const char *dav, const char *dkind)
{
    dra_arena_init(&r->a, NULL);
    dra_diag_init(&r->d, NULL);
    r->e = k8spb_decode(&r->a, body, len, dav, dkind, &r->doc, &r->d);
}

static void res_fini(res *r)
{
    dra_diag_fini(&r->d);
    dra_arena_fini(&r->a);
}

/* Asserts the decoded document equals the JSON |want| (maps as sets). */
static void assert_doc(const res *r, const char *want)
{
    dra_arena a;
    dra_doc *w = NULL;
    dra_buf got;
    if (r->e)
        fail_msg("decode: %s: %s: %s", dra_errname(r->e),
                 r->d.n ? r->d.v[0].path : "", dra_diag_first(&r->d));
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_json(&a, want, strlen(want), &w, NULL), DRA_OK);
    if (!dra_doc_equal(r->doc, w)) {
        dra_buf_init(&got, NULL);
        dra_doc_to_json(r->doc, 0, &got);
        fail_msg("got  %s\nwant %s", got.p, want);
    }
    dra_arena_fini(&a);
}

static void check(const void *body, size_t len, const char *want)
{
    res r;
    dec(&r, body, len, NULL, NULL);
    assert_doc(&r, want);
    res_fini(&r);
}

/* Asserts the error, the path and that the message contains |msg|. */
static void check_err(const void *body, size_t len, dra_err want, const char *path,
                      const char *msg)
{
    res r;
    dec(&r, body, len, NULL, NULL);
    if (r.e != want)
        fail_msg("want %s, got %s (%s)", dra_errname(want), dra_errname(r.e),
                 dra_diag_first(&r.d) ? dra_diag_first(&r.d) : "");
    assert_null(r.doc);
    assert_int_equal(r.d.n, 1);
    if (strcmp(r.d.v[0].path, path))
        fail_msg("path: want '%s', got '%s' (%s)", path, r.d.v[0].path, r.d.v[0].msg);
    if (!strstr(r.d.v[0].msg, msg))
        fail_msg("message: want '%s' in '%s'", msg, r.d.v[0].msg);
    res_fini(&r);
}

static char *slurp_data(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/apiserver_pb/data/%s", DRA_SOURCE_DIR, name);
    return dra_test_slurp(path, len);
}

/* ---- what kubectl sent ------------------------------------------------------------ */

static void test_kubectl_bodies(void **state)
{
    static const struct {
        const char *file, *want;
    } cases[] = {
        {"kubectl-1.33-create-namespace.pb",
         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"pbx\"},"
         "\"spec\":{},\"status\":{}}"},
        {"kubectl-1.32-create-namespace.pb",
         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"pbx\"},"
         "\"spec\":{},\"status\":{}}"},
        {"kubectl-1.33-create-namespace-dry-run.pb",
         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"pby\"},"
         "\"spec\":{},\"status\":{}}"},
        {"kubectl-1.33-create-namespace-save-config.pb",
         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"pbs\","
         "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
         "\"{\\\"kind\\\":\\\"Namespace\\\",\\\"apiVersion\\\":\\\"v1\\\",\\\"metadata\\\":"
         "{\\\"name\\\":\\\"pbs\\\",\\\"creationTimestamp\\\":null},\\\"spec\\\":{},"
         "\\\"status\\\":{}}\\n\"}},\"spec\":{},\"status\":{}}"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *body = slurp_data(cases[i].file, &len);
        check(body, len, cases[i].want);
        free(body);
    }
}

/* ---- every field, encoded by protobuf-c --------------------------------------------- */

/* Packs |msg| as the raw of an Unknown {av, kind} behind the magic. */
static unsigned char *pack_body(const ProtobufCMessage *msg, const char *av, const char *kind,
                                size_t *len)
{
    Dra__Pbtest__Unknown u = DRA__PBTEST__UNKNOWN__INIT;
    Dra__Pbtest__TypeMeta tm = DRA__PBTEST__TYPE_META__INIT;
    size_t rn = protobuf_c_message_get_packed_size(msg), un;
    unsigned char *raw = malloc(rn + 1), *out;
    assert_non_null(raw);
    protobuf_c_message_pack(msg, raw);
    tm.api_version = (char *)av;
    tm.kind = (char *)kind;
    u.type_meta = &tm;
    u.has_raw = 1;
    u.raw.data = raw;
    u.raw.len = rn;
    u.content_type = (char *)"";
    un = dra__pbtest__unknown__get_packed_size(&u);
    out = malloc(un + 4);
    assert_non_null(out);
    memcpy(out, "k8s", 4);
    dra__pbtest__unknown__pack(&u, out + 4);
    free(raw);
    *len = un + 4;
    return out;
}

static const char full_ns_json[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
    "\"name\":\"team-a\",\"generateName\":\"team-\",\"namespace\":\"ignored\","
    "\"selfLink\":\"/api/v1/namespaces/team-a\",\"uid\":\"u-1\",\"resourceVersion\":\"42\","
    "\"generation\":3,\"creationTimestamp\":\"2026-12-03T10:00:00Z\","
    "\"deletionTimestamp\":\"1969-12-31T23:59:59Z\",\"deletionGracePeriodSeconds\":0,"
    "\"labels\":{\"app\":\"gpu\",\"tier\":\"\"},\"annotations\":{\"note\":\"x\\ny\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n1\","
    "\"uid\":\"nu\",\"controller\":true,\"blockOwnerDeletion\":false},"
    "{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"\",\"uid\":\"\"}],"
    "\"finalizers\":[\"a/b\",\"c\"],"
    "\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Apply\","
    "\"apiVersion\":\"v1\",\"time\":\"0001-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\","
    "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}},\"subresource\":\"status\"}]},"
    "\"spec\":{\"finalizers\":[\"kubernetes\"]},"
    "\"status\":{\"phase\":\"Terminating\",\"conditions\":[{\"type\":\"NamespaceDeletionContentFailure\","
    "\"status\":\"False\",\"lastTransitionTime\":\"9999-12-31T23:59:59Z\",\"reason\":\"R\","
    "\"message\":\"M\"},{\"type\":\"T\",\"status\":\"\",\"lastTransitionTime\":null}]}}";

static unsigned char *full_namespace(size_t *len)
{
    Dra__Pbtest__Namespace ns = DRA__PBTEST__NAMESPACE__INIT;
    Dra__Pbtest__ObjectMeta om = DRA__PBTEST__OBJECT_META__INIT;
    Dra__Pbtest__Time ct = DRA__PBTEST__TIME__INIT, dt = DRA__PBTEST__TIME__INIT,
                      mt = DRA__PBTEST__TIME__INIT, lt = DRA__PBTEST__TIME__INIT;
    Dra__Pbtest__ObjectMeta__LabelsEntry l1 = DRA__PBTEST__OBJECT_META__LABELS_ENTRY__INIT,
                                         l2 = DRA__PBTEST__OBJECT_META__LABELS_ENTRY__INIT;
    Dra__Pbtest__ObjectMeta__LabelsEntry *ls[] = {&l1, &l2};
    Dra__Pbtest__ObjectMeta__AnnotationsEntry a1 =
        DRA__PBTEST__OBJECT_META__ANNOTATIONS_ENTRY__INIT;
    Dra__Pbtest__ObjectMeta__AnnotationsEntry *as[] = {&a1};
    Dra__Pbtest__OwnerReference o1 = DRA__PBTEST__OWNER_REFERENCE__INIT,
                                o2 = DRA__PBTEST__OWNER_REFERENCE__INIT;
    Dra__Pbtest__OwnerReference *os[] = {&o1, &o2};
    char *fins[] = {(char *)"a/b", (char *)"c"}, *sfins[] = {(char *)"kubernetes"};
    Dra__Pbtest__ManagedFieldsEntry mf = DRA__PBTEST__MANAGED_FIELDS_ENTRY__INIT;
    Dra__Pbtest__ManagedFieldsEntry *mfs[] = {&mf};
    Dra__Pbtest__FieldsV1 f1 = DRA__PBTEST__FIELDS_V1__INIT;
    static const char fjson[] = "{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}}";
    Dra__Pbtest__NamespaceSpec spec = DRA__PBTEST__NAMESPACE_SPEC__INIT;
    Dra__Pbtest__NamespaceStatus st = DRA__PBTEST__NAMESPACE_STATUS__INIT;
    Dra__Pbtest__NamespaceCondition c1 = DRA__PBTEST__NAMESPACE_CONDITION__INIT,
                                    c2 = DRA__PBTEST__NAMESPACE_CONDITION__INIT;
    Dra__Pbtest__NamespaceCondition *cs[] = {&c1, &c2};

    om.name = (char *)"team-a";
    om.generate_name = (char *)"team-";
    om.namespace_ = (char *)"ignored";
    om.self_link = (char *)"/api/v1/namespaces/team-a";
    om.uid = (char *)"u-1";
    om.resource_version = (char *)"42";
    om.has_generation = 1;
    om.generation = 3;
    ct.has_seconds = 1;
    ct.seconds = 1796292000; /* 2026-12-03T10:00:00Z */
    ct.has_nanos = 1;
    ct.nanos = 999; /* dropped, as upstream drops it */
    om.creation_timestamp = &ct;
    dt.has_seconds = 1;
    dt.seconds = -1;
    om.deletion_timestamp = &dt;
    om.has_deletion_grace_period_seconds = 1; /* a pointer: 0 is kept */
    l1.key = (char *)"app";
    l1.value = (char *)"gpu";
    l2.key = (char *)"tier";
    l2.value = (char *)"";
    om.n_labels = 2;
    om.labels = ls;
    a1.key = (char *)"note";
    a1.value = (char *)"x\ny";
    om.n_annotations = 1;
    om.annotations = as;
    o1.api_version = (char *)"v1";
    o1.kind = (char *)"Node";
    o1.name = (char *)"n1";
    o1.uid = (char *)"nu";
    o1.has_controller = 1;
    o1.controller = 1;
    o1.has_block_owner_deletion = 1;
    om.n_owner_references = 2;
    om.owner_references = os;
    om.n_finalizers = 2;
    om.finalizers = fins;
    mf.manager = (char *)"kubectl";
    mf.operation = (char *)"Apply";
    mf.api_version = (char *)"v1";
    mt.has_seconds = 1;
    mt.seconds = -62135596800LL;
    mf.time = &mt;
    mf.fields_type = (char *)"FieldsV1";
    f1.has_raw = 1;
    f1.raw.data = (uint8_t *)fjson;
    f1.raw.len = strlen(fjson);
    mf.fields_v1 = &f1;
    mf.subresource = (char *)"status";
    om.n_managed_fields = 1;
    om.managed_fields = mfs;
    ns.metadata = &om;
    spec.n_finalizers = 1;
    spec.finalizers = sfins;
    ns.spec = &spec;
    st.phase = (char *)"Terminating";
    c1.type = (char *)"NamespaceDeletionContentFailure";
    c1.status = (char *)"False";
    lt.has_seconds = 1;
    lt.seconds = 253402300799LL;
    c1.last_transition_time = &lt;
    c1.reason = (char *)"R";
    c1.message = (char *)"M";
    c2.type = (char *)"T";
    st.n_conditions = 2;
    st.conditions = cs;
    ns.status = &st;
    return pack_body(&ns.base, "v1", "Namespace", len);
}

static void test_full_namespace(void **state)
{
    size_t len;
    unsigned char *b = full_namespace(&len);
    (void)state;
    check(b, len, full_ns_json);
    free(b);
}

static void test_delete_options(void **state)
{
    Dra__Pbtest__DeleteOptions o = DRA__PBTEST__DELETE_OPTIONS__INIT;
    Dra__Pbtest__Preconditions p = DRA__PBTEST__PRECONDITIONS__INIT;
    char *dry[] = {(char *)"All"};
    unsigned char *b;
    size_t len;
    (void)state;
    o.has_grace_period_seconds = 1; /* 0 on the wire stays: it is a pointer */
    p.uid = (char *)"u-1";
    p.resource_version = (char *)"";
    o.preconditions = &p;
    o.has_orphan_dependents = 1;
    o.propagation_policy = (char *)"Foreground";
    o.n_dry_run = 1;
    o.dry_run = dry;
    o.has_ignore_store_read_error_with_cluster_breaking_potential = 1;
    b = pack_body(&o.base, "meta.k8s.io/v1", "DeleteOptions", &len);
    check(b, len,
          "{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"DeleteOptions\","
          "\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"u-1\",\"resourceVersion\":\"\"},"
          "\"orphanDependents\":false,\"propagationPolicy\":\"Foreground\",\"dryRun\":[\"All\"],"
          "\"ignoreStoreReadErrorWithClusterBreakingPotential\":false}");
    free(b);
    /* client-go's core client names it in its own version */
    memset(&o, 0, sizeof o);
    o = (Dra__Pbtest__DeleteOptions)DRA__PBTEST__DELETE_OPTIONS__INIT;
    b = pack_body(&o.base, "v1", "DeleteOptions", &len);
    check(b, len, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\"}");
    free(b);
}

/* ---- Go's JSON rules, protobuf's merge rules, skipped fields ------------------------ */

static void test_zero_values(void **state)
{
    pbuf meta = {{0}, 0}, ns = {{0}, 0}, body;
    (void)state;
    /* gogo writes every value field, zero or not: all of these are zero */
    put_str(&meta, 1, "z");
    put_str(&meta, 2, "");
    put_tag(&meta, 7 /* generation */, 0);
    put_varint(&meta, 0);
    put_bytes(&meta, 8, "", 0); /* zero creationTimestamp */
    put_msg(&ns, 1, &meta);
    put_bytes(&ns, 2, "", 0);
    envelope(&body, "v1", "Namespace", &ns);
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"z\"},"
          "\"spec\":{},\"status\":{}}");
    /* no raw at all: an empty Namespace, as kube decodes it */
    envelope(&body, "v1", "Namespace", NULL);
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{},\"spec\":{},"
          "\"status\":{}}");
}

static void test_merge_rules(void **state)
{
    pbuf m1 = {{0}, 0}, m2 = {{0}, 0}, e1 = {{0}, 0}, e2 = {{0}, 0}, r1 = {{0}, 0},
         r2 = {{0}, 0}, t = {{0}, 0}, ns = {{0}, 0}, body = {{0}, 0}, tm = {{0}, 0};
    (void)state;
    put_str(&m1, 1, "first");
    put_str(&m1, 1, "second"); /* a repeated scalar: the last wins */
    put_str(&e1, 1, "k");
    put_str(&e1, 2, "v1");
    put_msg(&m1, 11, &e1);
    put_str(&e2, 1, "k");
    put_str(&e2, 2, "v2");
    put_msg(&m1, 11, &e2); /* a repeated map key: the last wins */
    put_str(&r1, 3, "o1");
    put_msg(&m1, 13, &r1);
    put_varint(&t, 8);
    put_varint(&t, 0);
    put_msg(&m1, 8, &t); /* epoch, then replaced below */
    put_str(&m2, 14, "f");
    put_str(&r2, 3, "o2");
    put_msg(&m2, 13, &r2); /* repeated messages append */
    t.n = 0;
    put_varint(&t, 8);
    put_varint(&t, 60);
    put_msg(&m2, 8, &t);
    put_msg(&ns, 1, &m1);
    put_msg(&ns, 1, &m2); /* an embedded message merges */
    /* Unknown: typeMeta in two parts, raw twice (the last wins) */
    put(&body, "k8s", 4);
    put_str(&tm, 1, "v1");
    put_msg(&body, 1, &tm);
    tm.n = 0;
    put_str(&tm, 2, "Namespace");
    put_msg(&body, 1, &tm);
    put_bytes(&body, 2, "\x0a\x02\x0a\x00", 4);
    put_msg(&body, 2, &ns);
    put_str(&body, 3, "");
    put_str(&body, 4, "application/vnd.kubernetes.protobuf");
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"second\","
          "\"creationTimestamp\":\"1970-01-01T00:01:00Z\",\"labels\":{\"k\":\"v2\"},"
          "\"ownerReferences\":[{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"o1\",\"uid\":\"\"},"
          "{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"o2\",\"uid\":\"\"}],"
          "\"finalizers\":[\"f\"]},\"spec\":{},\"status\":{}}");
}

static void test_unknown_fields_skipped(void **state)
{
    pbuf meta = {{0}, 0}, ns = {{0}, 0}, body;
    (void)state;
    put_tag(&meta, 99, 0);
    put_varint(&meta, UINT64_MAX);
    put_tag(&meta, 100, 1);
    put(&meta, "12345678", 8);
    put_tag(&meta, 101, 5);
    put(&meta, "1234", 4);
    put_str(&meta, 102, "skipped");
    put_tag(&meta, 103, 3); /* a group with a nested group inside */
    put_tag(&meta, 1, 0);
    put_varint(&meta, 7);
    put_tag(&meta, 104, 3);
    put_tag(&meta, 104, 4);
    put_tag(&meta, 103, 4);
    put_str(&meta, 1, "kept");
    put_tag(&meta, (1u << 29) - 1, 0); /* the largest field number */
    put_varint(&meta, 1);
    put_msg(&ns, 1, &meta);
    put_str(&ns, 15, "future field");
    envelope(&body, "v1", "Namespace", &ns);
    put_str(&body, 9, "unknown envelope field");
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kept\"},"
          "\"spec\":{},\"status\":{}}");
}

/* ---- kinds ---------------------------------------------------------------------------- */

static void test_kinds(void **state)
{
    pbuf ns = {{0}, 0}, meta = {{0}, 0}, body;
    res r;
    (void)state;
    put_str(&meta, 1, "n");
    put_msg(&ns, 1, &meta);
    /* an empty typeMeta takes the endpoint's kind, but the document
     * keeps them empty (the write path fills them) */
    envelope(&body, NULL, NULL, &ns);
    dec(&r, body.b, body.n, "v1", "Namespace");
    assert_doc(&r, "{\"metadata\":{\"name\":\"n\"},\"spec\":{},\"status\":{}}");
    res_fini(&r);
    envelope(&body, NULL, "Namespace", &ns);
    dec(&r, body.b, body.n, "v1", "Pod");
    assert_doc(&r, "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\"},\"spec\":{},"
                   "\"status\":{}}");
    res_fini(&r);
    /* kinds without a schema: 415 material, the object is not read */
    envelope(&body, "v1", "Pod", &ns);
    check_err(body.b, body.n, DRA_EUNSUPPORTED, "", "Pod in version \"v1\"");
    envelope(&body, "v2", "Namespace", &ns);
    check_err(body.b, body.n, DRA_EUNSUPPORTED, "", "Namespace in version \"v2\"");
    envelope(&body, "resource.k8s.io/v1", "ResourceClaim", NULL);
    check_err(body.b, body.n, DRA_EUNSUPPORTED, "", "ResourceClaim");
    /* no kind anywhere: upstream's MissingKind message */
    envelope(&body, "v1", NULL, &ns);
    check_err(body.b, body.n, DRA_EPARSE, "",
              "Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:\"v1\", Kind:\"\"}'");
    assert_true(k8spb_kind_known("v1", "Namespace"));
    assert_true(k8spb_kind_known("meta.k8s.io/v1", "DeleteOptions"));
    assert_false(k8spb_kind_known("v1", "Pod"));
    assert_false(k8spb_kind_known(NULL, NULL));
}

/* ---- malformed and hostile input ----------------------------------------------------- */

static void ns_body(pbuf *body, const pbuf *meta)
{
    pbuf ns = {{0}, 0};
    put_msg(&ns, 1, meta);
    envelope(body, "v1", "Namespace", &ns);
}

static void test_malformed(void **state)
{
    pbuf m = {{0}, 0}, body, x = {{0}, 0};
    (void)state;
    check_err("", 0, DRA_EPARSE, "", "empty data");
    check_err("{\"kind\":1}", 10, DRA_EPARSE, "", "does not appear to be a protobuf message");
    check_err("k8s", 3, DRA_EPARSE, "", "expected prefix [107 56 115 0]");
    check_err("k8s", 4, DRA_EPARSE, "", "empty body");
    check_err("k8s\0\xff\xff", 6, DRA_EPARSE, "", "unexpected end of data in a varint");
    check_err("k8s\0\x0a\x05\x0a", 7, DRA_EPARSE, "", "runs past the end");
    check_err("k8s\0\x00", 5, DRA_EPARSE, "", "invalid field number");
    check_err("k8s\0\x2e", 5, DRA_EPARSE, "", "invalid wire type");
    check_err("k8s\0\x2c", 5, DRA_EPARSE, "", "end-group tag without its group");
    check_err("k8s\0\x08\x01", 6, DRA_EPARSE, "", "runtime.Unknown: field 1 has wire type varint");
    check_err("k8s\0\x0a\x02\x08\x01", 8, DRA_EPARSE, "", "typeMeta: field 1 has wire type");
    check_err("k8s\0\x58\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 15, DRA_EPARSE, "",
              "overflows 64 bits");
    check_err("k8s\0\x58\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 15, DRA_EPARSE, "",
              "overflows 64 bits");
    check_err("k8s\0\x5d\x01\x02", 7, DRA_EPARSE, "", "fixed-size field");
    /* a known field with the wrong wire type names its path */
    put_tag(&m, 1, 0);
    put_varint(&m, 5);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.name",
              "the field has wire type varint, not length-delimited");
    m.n = 0;
    put_str(&m, 7, "3");
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.generation",
              "wire type length-delimited, not varint");
    /* ... inside the second owner reference */
    m.n = 0;
    put_str(&x, 3, "a");
    put_msg(&m, 13, &x);
    x.n = 0;
    put_tag(&x, 4, 5);
    put(&x, "abcd", 4);
    put_msg(&m, 13, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.ownerReferences[1].uid",
              "wire type fixed32");
    /* a length past the end of its (nested) message */
    m.n = 0;
    put_tag(&m, 2, 2);
    put_varint(&m, 40);
    put(&m, "abc", 3);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.generateName", "a length of 40 bytes");
    /* times */
    m.n = 0;
    x.n = 0;
    put_tag(&x, 1, 0);
    put_varint(&x, (uint64_t)(-62135596801LL));
    put_msg(&m, 8, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.creationTimestamp", "outside years 1 to 9999");
    m.n = 0;
    x.n = 0;
    put_varint(&x, 8);
    put_varint(&x, 253402300800LL);
    put_msg(&m, 9, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.deletionTimestamp", "outside years");
    m.n = 0;
    x.n = 0;
    put_str(&x, 2, "9");
    put_msg(&m, 8, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.creationTimestamp", "wire type other than varint");
    /* map entries */
    m.n = 0;
    x.n = 0;
    put_bytes(&x, 1, "a\0b", 3);
    put_msg(&m, 11, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.labels", "a map key with a NUL byte");
    m.n = 0;
    x.n = 0;
    put_tag(&x, 2, 0);
    put_varint(&x, 1);
    put_msg(&m, 12, &x);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.annotations", "not length-delimited");
}

static void test_managed_fields(void **state)
{
    pbuf m = {{0}, 0}, e = {{0}, 0}, f = {{0}, 0}, body;
    (void)state;
    put_str(&f, 1, "{\"f:a\":");
    put_msg(&e, 7, &f);
    put_msg(&m, 17, &e);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_EPARSE, "metadata.managedFields[0].fieldsV1", "Raw is not JSON");
    /* an empty Raw is null, as FieldsV1's MarshalJSON writes it; a map
     * entry with neither key nor value is "": "" */
    m.n = e.n = f.n = 0;
    put_str(&e, 1, "m");
    put_msg(&e, 7, &f);
    put_msg(&m, 17, &e);
    put_bytes(&m, 11, "", 0);
    ns_body(&body, &m);
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"labels\":{\"\":\"\"},"
          "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":null}]},\"spec\":{},\"status\":{}}");
}

static void test_limits(void **state)
{
    pbuf m = {{0}, 0}, body;
    unsigned char *big;
    size_t n = 0, fields = K8SPB_MAX_ITEMS + 1;
    (void)state;
    /* groups nested deeper than K8SPB_MAX_DEPTH */
    for (int i = 0; i <= K8SPB_MAX_DEPTH; i++)
        put_tag(&m, 50, 3);
    ns_body(&body, &m);
    check_err(body.b, body.n, DRA_ELIMIT, "metadata", "groups nested too deeply");
    /* exactly K8SPB_MAX_DEPTH levels are fine */
    m.n = 0;
    for (int i = 0; i < K8SPB_MAX_DEPTH; i++)
        put_tag(&m, 50, 3);
    for (int i = 0; i < K8SPB_MAX_DEPTH; i++)
        put_tag(&m, 50, 4);
    ns_body(&body, &m);
    check(body.b, body.n,
          "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{},\"spec\":{},"
          "\"status\":{}}");
    /* more values than K8SPB_MAX_ITEMS: empty finalizers, 2 bytes each,
     * in one DeleteOptions dryRun list (3 varint bytes of length) */
    big = malloc(fields * 2 + 64);
    assert_non_null(big);
    envelope(&body, "v1", "DeleteOptions", NULL);
    memcpy(big, body.b, body.n);
    n = body.n;
    big[n++] = 0x12; /* raw */
    for (size_t v = fields * 2; v; v >>= 7)
        big[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    for (size_t i = 0; i < fields; i++) {
        big[n++] = 0x2a; /* dryRun, "" */
        big[n++] = 0;
    }
    check_err(big, n, DRA_ELIMIT, "dryRun", "more than 1048576 values");
    free(big);
    check_err("k8s", (size_t)K8SPB_MAX_BYTES + 1, DRA_ELIMIT, "", "over");
}

/* ---- out of memory ---------------------------------------------------------------------- */

static void test_failmalloc(void **state)
{
    size_t len;
    unsigned char *b = full_namespace(&len);
    long k;
    (void)state;
    for (k = 0;; k++) {
        dra_failmem fm;
        dra_arena a;
        dra_doc *doc;
        dra_err e;
        dra_failmem_init(&fm, k);
        dra_arena_init(&a, &fm.mem);
        e = k8spb_decode(&a, b, len, NULL, NULL, &doc, NULL);
        dra_arena_fini(&a);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(e, DRA_OK);
            break;
        }
        assert_int_equal(e, DRA_ENOMEM);
        assert_null(doc);
    }
    assert_true(k > 0);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_bodies),
        cmocka_unit_test(test_full_namespace),
        cmocka_unit_test(test_delete_options),
        cmocka_unit_test(test_zero_values),
        cmocka_unit_test(test_merge_rules),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_managed_fields),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_failmalloc),
    };
    if (getenv("DRA_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DRA_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
