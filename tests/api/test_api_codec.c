/* Tests of the api module's decode and encode: round trips of the
 * examples and of tests/data/api/roundtrip (every field, unknown fields
 * at every level), Go field order and omitempty rules, decode errors
 * with their exact messages, List expansion, defaults, and a failmalloc
 * loop over decode + encode. */
#include <dirent.h>

#include "dra_test.h"

#include "dra/api.h"
#include "dra/codec.h"

/* ---- helpers -------------------------------------------------------------------- */

static char *json_of(const dra_doc *doc)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(doc, 2, &b), DRA_OK);
    return dra_buf_detach(&b);
}

/* Fails with both documents printed when they differ. */
static void assert_doc_equal(const dra_doc *want, const dra_doc *got, const char *what)
{
    if (!dra_doc_equal(want, got)) {
        char *w = json_of(want), *g = json_of(got);
        fprintf(stderr, "%s: documents differ\n--- want\n%s\n--- got\n%s\n", what, w, g);
        free(w);
        free(g);
        fail();
    }
}

static char *diag_text(const dra_diag *d)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_diag_format(d, &b), DRA_OK);
    return dra_buf_detach(&b);
}

/* Parses |text| as a YAML stream with exactly one document. */
static const dra_doc *parse1(dra_arena *a, const char *text)
{
    dra_doc **docs;
    size_t n;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(a, text, strlen(text), &docs, &n, &d) != DRA_OK)
        fail_msg("YAML: %s", dra_diag_first(&d));
    dra_diag_fini(&d);
    assert_int_equal(n, 1);
    return docs[0];
}

static dra_object *decode_ok(dra_arena *a, const char *text)
{
    dra_object *o = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_api_decode(a, parse1(a, text), &o, &d) != DRA_OK)
        fail_msg("decode: %s", dra_diag_first(&d));
    dra_diag_fini(&d);
    assert_non_null(o);
    return o;
}

/* Encodes |o|, prints it (as JSON, which the YAML reader takes too),
 * reads that back and checks that the second encoding equals the first
 * (encode is a fixed point). Returns the first encoding. */
static dra_doc *encode_stable(dra_arena *a, const dra_object *o)
{
    dra_doc *e1, *e2;
    dra_object *o2 = NULL;
    dra_buf b;
    dra_diag d;
    assert_int_equal(dra_api_encode(a, o, &e1), DRA_OK);
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(e1, 0, &b), DRA_OK);
    dra_diag_init(&d, NULL);
    if (dra_api_decode(a, parse1(a, b.p), &o2, &d) != DRA_OK)
        fail_msg("re-decode: %s\n%s", dra_diag_first(&d), b.p);
    dra_diag_fini(&d);
    dra_buf_fini(&b);
    assert_int_equal(dra_api_encode(a, o2, &e2), DRA_OK);
    assert_doc_equal(e1, e2, "re-encode");
    return e1;
}

static char *slurp_rel(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DRA_SOURCE_DIR, rel);
    return dra_test_slurp(path, len);
}

static const char *key_at(const dra_doc *map, size_t i)
{
    assert_int_equal(map->kind, DRA_DOC_MAP);
    assert_true(i < map->u.map.n);
    return map->u.map.m[i].key;
}

static void assert_keys(const dra_doc *map, const char *const *keys, size_t n)
{
    assert_int_equal(map->kind, DRA_DOC_MAP);
    if (map->u.map.n != n) {
        char *j = json_of(map);
        print_error("want %zu keys, got %zu in\n%s\n", n, map->u.map.n, j);
        free(j);
        fail();
    }
    for (size_t i = 0; i < n; i++)
        assert_string_equal(key_at(map, i), keys[i]);
}
#define ASSERT_KEYS(map, ...)                                                  \
    do {                                                                       \
        static const char *const k_[] = {__VA_ARGS__};                        \
        assert_keys((map), k_, sizeof k_ / sizeof k_[0]);                      \
    } while (0)

static dra_quantity qty(const char *s)
{
    dra_quantity q;
    assert_int_equal(dra_quantity_parse(s, strlen(s), &q), DRA_OK);
    return q;
}

/* ---- examples --------------------------------------------------------------------- */

static dra_object **load_stream(dra_arena *a, const char *rel, size_t *n)
{
    size_t len;
    char *text = slurp_rel(rel, &len);
    dra_object **objs = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_api_decode_stream(a, text, len, &objs, n, &d) != DRA_OK)
        fail_msg("%s: %s", rel, dra_diag_first(&d));
    dra_diag_fini(&d);
    free(text);
    return objs;
}

static void check_seed_slice(const dra_object *o)
{
    const dra_resource_slice_spec *s = &o->u.slice.spec;
    dra_quantity mem = qty("189471Mi");
    assert_int_equal(o->kind, DRA_KIND_RESOURCE_SLICE);
    assert_string_equal(s->driver, "gpu.nvidia.com");
    assert_string_equal(s->node_name, "gb200-pod2-f06-node05");
    assert_string_equal(s->pool.name, "gb200-pod2-f06-node05");
    assert_int_equal(s->pool.resource_slice_count, 1);
    assert_int_equal(s->n_devices, 4);
    for (size_t i = 0; i < 4; i++) {
        const dra_device *dev = &s->devices[i];
        const dra_attr *at;
        char name[16];
        snprintf(name, sizeof name, "gpu-%zu", i);
        assert_string_equal(dev->name, name);
        at = dra_device_attr(dev, "cudaComputeCapability");
        assert_non_null(at);
        assert_int_equal(at->set, DRA_ATTR_VERSION);
        assert_string_equal(at->v, "10.0.0");
        at = dra_device_attr(dev, "architecture");
        assert_int_equal(at->set, DRA_ATTR_STRING);
        assert_string_equal(at->s, "Blackwell");
        at = dra_device_attr(dev, "productName");
        assert_string_equal(at->s, "NVIDIA GB200");
        at = dra_device_attr(dev, "index");
        assert_int_equal(at->set, DRA_ATTR_INT);
        assert_int_equal(at->i, (int64_t)i);
        assert_non_null(dra_device_attr(dev, "uuid"));
        assert_non_null(dra_device_attr(dev, "driverVersion"));
        assert_null(dra_device_attr(dev, "nope"));
        assert_non_null(dra_device_capacity(dev, "memory"));
        assert_int_equal(dra_quantity_cmp(&dra_device_capacity(dev, "memory")->value, &mem), 0);
    }
}

static void check_seed_class(const dra_object *o)
{
    assert_int_equal(o->kind, DRA_KIND_DEVICE_CLASS);
    assert_string_equal(o->meta.name, "gpu.nvidia.com");
    assert_int_equal(o->u.device_class.spec.n_selectors, 1);
    assert_true(o->u.device_class.spec.selectors[0].cel_set);
    assert_string_equal(o->u.device_class.spec.selectors[0].expression,
                        "device.driver == 'gpu.nvidia.com' && "
                        "device.attributes['gpu.nvidia.com'].type == 'gpu'");
}

static void check_seed_template(const dra_object *o)
{
    const dra_claim_spec *s = &o->u.claim_template.spec;
    assert_int_equal(o->kind, DRA_KIND_RESOURCE_CLAIM_TEMPLATE);
    assert_string_equal(o->meta.name, "single-gpu");
    assert_int_equal(s->n_requests, 1);
    assert_string_equal(s->requests[0].name, "gpu");
    assert_non_null(s->requests[0].exactly);
    assert_string_equal(s->requests[0].exactly->device_class_name, "gpu.nvidia.com");
    assert_false(s->requests[0].exactly->count_set);
    assert_null(s->requests[0].exactly->allocation_mode);
}

static void check_seed_pod(const dra_object *o)
{
    const dra_pod_spec *s = &o->u.pod.spec;
    assert_int_equal(o->kind, DRA_KIND_POD);
    assert_string_equal(o->meta.name, "gpu-test-pod");
    assert_int_equal(s->n_resource_claims, 1);
    assert_string_equal(s->resource_claims[0].name, "gpu-claim");
    assert_string_equal(s->resource_claims[0].resource_claim_template_name, "single-gpu");
    assert_null(s->resource_claims[0].resource_claim_name);
    assert_int_equal(s->n_containers, 1);
    assert_int_equal(s->containers[0].n_claims, 1);
    assert_string_equal(s->containers[0].claims[0].name, "gpu-claim");
    assert_non_null(s->extra); /* restartPolicy, tolerations */
}

static void test_examples(void **state)
{
    static const char *const files[] = {
        "examples/resourceslice-gb200.yaml", "examples/deviceclass-gpu.yaml",
        "examples/resourceclaimtemplate-single-gpu.yaml", "examples/pod-gpu-test.yaml"};
    void (*const checks[])(const dra_object *) = {check_seed_slice, check_seed_class,
                                                   check_seed_template, check_seed_pod};
    dra_arena a;
    dra_object **seed;
    size_t n;
    (void)state;
    dra_arena_init(&a, NULL);
    for (size_t i = 0; i < 4; i++) {
        dra_object **objs = load_stream(&a, files[i], &n);
        assert_int_equal(n, 1);
        checks[i](objs[0]);
        encode_stable(&a, objs[0]);
    }
    seed = load_stream(&a, "examples/seed.yaml", &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < 4; i++) {
        checks[i](seed[i]);
        encode_stable(&a, seed[i]);
    }
    dra_arena_fini(&a);
}

/* ---- round-trip directory ------------------------------------------------------------- */

static void roundtrip_file(const char *path, size_t *nobjs)
{
    size_t len, ndocs;
    char *text = dra_test_slurp(path, &len);
    dra_doc **docs;
    dra_arena a;
    dra_diag d;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, text, len, &docs, &ndocs, &d) != DRA_OK)
        fail_msg("%s: %s", path, dra_diag_first(&d));
    assert_true(ndocs > 0);
    for (size_t i = 0; i < ndocs; i++) {
        dra_object *o = NULL;
        dra_doc *enc;
        char what[1200];
        if (dra_api_decode(&a, docs[i], &o, &d) != DRA_OK)
            fail_msg("%s doc %zu: %s", path, i, dra_diag_first(&d));
        enc = encode_stable(&a, o);
        snprintf(what, sizeof what, "%s doc %zu", path, i);
        assert_doc_equal(docs[i], enc, what);
        (*nobjs)++;
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    free(text);
}

static void test_roundtrip_dir(void **state)
{
    const char *dir = DRA_TEST_DATA "/api/roundtrip";
    DIR *dp = opendir(dir);
    struct dirent *de;
    size_t nfiles = 0, nobjs = 0;
    (void)state;
    assert_non_null(dp);
    while ((de = readdir(dp)) != NULL) {
        char path[1024];
        size_t l = strlen(de->d_name);
        if ((l < 5 || strcmp(de->d_name + l - 5, ".yaml") != 0) &&
            (l < 5 || strcmp(de->d_name + l - 5, ".json") != 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        roundtrip_file(path, &nobjs);
        nfiles++;
    }
    closedir(dp);
    assert_true(nfiles >= 6);
    assert_true(nobjs >= 20);
}

/* ---- field order and omitempty -------------------------------------------------------- */

static void test_go_order(void **state)
{
    dra_arena a;
    size_t n;
    dra_object **objs;
    dra_doc *e;
    const dra_doc *spec, *dev, *attrs;
    (void)state;
    dra_arena_init(&a, NULL);
    objs = load_stream(&a, "examples/resourceslice-gb200.yaml", &n);
    assert_int_equal(dra_api_encode(&a, objs[0], &e), DRA_OK);
    ASSERT_KEYS(e, "kind", "apiVersion", "metadata", "spec");
    spec = dra_doc_get(e, "spec");
    ASSERT_KEYS(spec, "driver", "pool", "nodeName", "devices");
    ASSERT_KEYS(dra_doc_get(spec, "pool"), "name", "generation", "resourceSliceCount");
    dev = dra_doc_get(spec, "devices")->u.list.items[0];
    ASSERT_KEYS(dev, "name", "attributes", "capacity");
    attrs = dra_doc_get(dev, "attributes");
    /* Go sorts map keys bytewise. */
    ASSERT_KEYS(attrs, "addressingMode", "architecture", "brand", "cudaComputeCapability",
                "cudaDriverVersion", "driverVersion", "index", "minor", "pcieBusID",
                "productName", "resource.kubernetes.io/pcieRoot", "type", "uuid");
    assert_string_equal(dra_doc_get(dra_doc_get(dra_doc_get(dev, "capacity"), "memory"),
                                    "value")->u.str.s,
                        "189471Mi");

    /* kubectl order: everything sorted. */
    dra_api_doc_sort_keys(e);
    ASSERT_KEYS(e, "apiVersion", "kind", "metadata", "spec");
    ASSERT_KEYS(dra_doc_get(e, "spec"), "devices", "driver", "nodeName", "pool");
    dra_arena_fini(&a);
}

/* An object as kube-apiserver returns it (Go order, two-space indent)
 * comes back byte for byte. */
static void test_apiserver_bytes(void **state)
{
    size_t len, n;
    char *text = slurp_rel("tests/data/api/roundtrip/template-apiserver.json", &len);
    dra_arena a;
    dra_object **objs;
    dra_doc *e;
    dra_buf b;
    (void)state;
    dra_arena_init(&a, NULL);
    objs = load_stream(&a, "tests/data/api/roundtrip/template-apiserver.json", &n);
    assert_int_equal(n, 1);
    assert_int_equal(dra_api_encode(&a, objs[0], &e), DRA_OK);
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(e, 2, &b), DRA_OK);
    assert_int_equal(dra_buf_putc(&b, '\n'), DRA_OK);
    assert_string_equal(b.p, text);
    dra_buf_fini(&b);
    dra_arena_fini(&a);
    free(text);
}

static void test_omitempty(void **state)
{
    dra_arena a;
    dra_object *o;
    dra_doc *e;
    const dra_doc *spec, *req, *ex;
    (void)state;
    dra_arena_init(&a, NULL);
    /* A claim built by hand: Go writes status {} and requests null,
     * drops count 0 and empty strings under omitempty. */
    o = dra_api_object_new(&a, DRA_KIND_RESOURCE_CLAIM);
    assert_non_null(o);
    assert_int_equal(dra_api_encode(&a, o, &e), DRA_OK);
    ASSERT_KEYS(e, "kind", "apiVersion", "metadata", "spec", "status");
    assert_string_equal(dra_doc_get(e, "apiVersion")->u.str.s, "resource.k8s.io/v1");
    assert_int_equal(dra_doc_get(e, "metadata")->u.map.n, 0);
    assert_int_equal(dra_doc_get(e, "status")->u.map.n, 0);
    spec = dra_doc_get(e, "spec");
    ASSERT_KEYS(spec, "devices");
    assert_int_equal(dra_doc_get(dra_doc_get(spec, "devices"), "requests")->kind, DRA_DOC_NULL);

    o->meta.name = "c";
    o->meta.namespace_ = "";
    o->u.claim.spec.n_requests = 1;
    o->u.claim.spec.requests = dra_arena_zalloc(&a, sizeof(dra_device_request));
    o->u.claim.spec.requests[0].name = "r";
    o->u.claim.spec.requests[0].exactly = dra_arena_zalloc(&a, sizeof(dra_device_request_spec));
    o->u.claim.spec.requests[0].exactly->count = 0;
    o->u.claim.spec.requests[0].exactly->admin_access = DRA_TRI_FALSE;
    assert_int_equal(dra_api_encode(&a, o, &e), DRA_OK);
    ASSERT_KEYS(dra_doc_get(e, "metadata"), "name");
    req = dra_doc_get(dra_doc_get(dra_doc_get(e, "spec"), "devices"), "requests")->u.list.items[0];
    ASSERT_KEYS(req, "name", "exactly");
    ex = dra_doc_get(req, "exactly");
    /* deviceClassName has no omitempty; adminAccess is a *bool set to false. */
    ASSERT_KEYS(ex, "deviceClassName", "adminAccess");
    assert_string_equal(dra_doc_get(ex, "deviceClassName")->u.str.s, "");
    assert_int_equal(dra_doc_get(ex, "adminAccess")->u.b, 0);

    /* A Node always has spec and status. */
    o = dra_api_object_new(&a, DRA_KIND_NODE);
    assert_int_equal(dra_api_encode(&a, o, &e), DRA_OK);
    ASSERT_KEYS(e, "kind", "apiVersion", "metadata", "spec", "status");
    assert_string_equal(dra_doc_get(e, "apiVersion")->u.str.s, "v1");
    assert_null(dra_api_object_new(&a, DRA_KIND_UNKNOWN));
    dra_arena_fini(&a);
}

/* Unknown members sit at their Go position when Kubernetes knows them. */
static void test_extra_positions(void **state)
{
    dra_arena a;
    dra_object *o;
    dra_doc *e;
    (void)state;
    dra_arena_init(&a, NULL);
    o = decode_ok(&a, "apiVersion: v1\nkind: Pod\nzzz: 1\n"
                      "metadata: {managedFields: [], name: p, selfLink: /x, labels: {b: '2', a: '1'}}\n"
                      "spec:\n  futureField: 1\n  resourceClaims: [{name: g, resourceClaimName: cc}]\n"
                      "  schedulerName: s\n  nodeName: node-1\n  containers: [{name: c, tty: true, "
                      "image: i, env: []}]\n  volumes: []\n");
    assert_int_equal(dra_api_encode(&a, o, &e), DRA_OK);
    ASSERT_KEYS(e, "kind", "apiVersion", "metadata", "spec", "status", "zzz");
    ASSERT_KEYS(dra_doc_get(e, "metadata"), "name", "selfLink", "labels", "managedFields");
    ASSERT_KEYS(dra_doc_get(dra_doc_get(e, "metadata"), "labels"), "a", "b");
    ASSERT_KEYS(dra_doc_get(e, "spec"), "volumes", "containers", "nodeName", "schedulerName",
                "resourceClaims", "futureField");
    ASSERT_KEYS(dra_doc_get(dra_doc_get(e, "spec"), "containers")->u.list.items[0], "name",
                "image", "env", "resources", "tty");
    dra_arena_fini(&a);
}

/* ---- decode errors --------------------------------------------------------------------- */

typedef struct err_case {
    const char *yaml;
    dra_err rc;
    const char *want; /* dra_diag_format output */
} err_case;

static const err_case err_cases[] = {
    {"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nspec:\n  driver: 5\n"
     "  pool: {name: p, generation: '1', resourceSliceCount: 1.5}\n"
     "  devices:\n  - name: d\n    attributes:\n      uuid: {string: 7}\n"
     "      ok: {int: 1}\n      bad: [1]\n"
     "    capacity:\n      memory: {value: 12XB}\n      num: {value: true}\n",
     DRA_EINVALID,
     "spec.driver: Invalid value: 5: must be a string\n"
     "spec.pool.generation: Invalid value: \"1\": must be an integer\n"
     "spec.pool.resourceSliceCount: Invalid value: 1.5: must be an integer\n"
     "spec.devices[0].attributes[uuid].string: Invalid value: 7: must be a string\n"
     "spec.devices[0].attributes[bad]: Invalid value: [1]: must be an object\n"
     "spec.devices[0].capacity[memory].value: Invalid value: \"12XB\": quantities must match "
     "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
     "spec.devices[0].capacity[num].value: Invalid value: true: must be a quantity (string or "
     "number)\n"},
    {"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {labels: {a: 1}, "
     "finalizers: x}\nspec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n"
     "        deviceClassName: c\n        count: many\n        adminAccess: 'yes'\n"
     "        tolerations: {key: k}\n        capacity: {requests: {mem: [1]}}\n"
     "    - 17\n",
     DRA_EINVALID,
     "metadata.labels[a]: Invalid value: 1: must be a string\n"
     "metadata.finalizers: Invalid value: \"x\": must be a list\n"
     "spec.devices.requests[0].exactly.count: Invalid value: \"many\": must be an integer\n"
     "spec.devices.requests[0].exactly.adminAccess: Invalid value: \"yes\": must be a boolean\n"
     "spec.devices.requests[0].exactly.tolerations: Invalid value: {\"key\":\"k\"}: must be a "
     "list\n"
     "spec.devices.requests[0].exactly.capacity.requests[mem]: Invalid value: [1]: must be a "
     "quantity (string or number)\n"
     "spec.devices.requests[1]: Invalid value: 17: must be an object\n"},
    {"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec: [1, 2]\nstatus:\n"
     "  reservedFor: [{uid: 5}]\n  devices: [{driver: d, conditions: [{status: 1}]}]\n",
     DRA_EINVALID,
     "spec: Invalid value: [1,2]: must be an object\n"
     "status.reservedFor[0].uid: Invalid value: 5: must be a string\n"
     "status.devices[0].conditions[0].status: Invalid value: 1: must be a string\n"},
    {"apiVersion: resource.k8s.io/v1\nkind: Widget\n", DRA_EUNSUPPORTED,
     "1:1: no kind \"Widget\" is registered for version \"resource.k8s.io/v1\"\n"},
    {"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\n", DRA_EUNSUPPORTED,
     "1:1: no kind \"ResourceClaim\" is registered for version \"resource.k8s.io/v1beta1\"\n"},
    {"apiVersion: v1\nkind: ResourceSlice\n", DRA_EUNSUPPORTED,
     "1:1: no kind \"ResourceSlice\" is registered for version \"v1\"\n"},
    {"apiVersion: v1\nmetadata: {name: x}\n", DRA_EINVAL, "1:1: kind not set\n"},
    {"kind: Pod\n", DRA_EINVAL, "1:1: apiVersion not set\n"},
    {"apiVersion: 1\nkind: Pod\n", DRA_EINVAL, "apiVersion: Invalid value: 1: must be a string\n"},
    {"[1, 2]\n", DRA_EINVAL, "1:1: an object must be a map with apiVersion and kind\n"},
};

static void test_decode_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
        dra_arena a;
        dra_diag d;
        dra_object *o = NULL;
        char *got;
        dra_err rc;
        dra_arena_init(&a, NULL);
        dra_diag_init(&d, NULL);
        rc = dra_api_decode(&a, parse1(&a, err_cases[i].yaml), &o, &d);
        got = diag_text(&d);
        if (rc != err_cases[i].rc || strcmp(got, err_cases[i].want) != 0) {
            /* fprintf: cmocka's print_error cuts long messages. */
            fprintf(stderr, "case %zu: rc %s (want %s)\n--- want\n%s--- got\n%s", i,
                    dra_errname(rc), dra_errname(err_cases[i].rc), err_cases[i].want, got);
            fail();
        }
        /* A type error still yields the object with the good fields. */
        if (rc == DRA_EINVALID)
            assert_non_null(o);
        else
            assert_null(o);
        free(got);
        dra_diag_fini(&d);
        dra_arena_fini(&a);
    }
}

/* Errors carry the source line and column of the offending value. */
static void test_error_positions(void **state)
{
    dra_arena a;
    dra_diag d;
    dra_object **objs;
    size_t n;
    const char *text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
                       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  generation: x\n"
                       "---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n";
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_api_decode_stream(&a, text, strlen(text), &objs, &n, &d), DRA_EINVALID);
    /* The good objects come back, the bad one is left out. */
    assert_int_equal(n, 2);
    assert_string_equal(objs[0]->meta.name, "a");
    assert_string_equal(objs[1]->meta.name, "b");
    assert_int_equal(d.n, 1);
    assert_string_equal(d.v[0].path, "metadata.generation");
    assert_int_equal(d.v[0].line, 9);
    assert_int_equal(d.v[0].col, 15);
    dra_diag_clear(&d);
    assert_int_equal(dra_api_decode_stream(&a, "a: [", 4, &objs, &n, &d), DRA_EPARSE);
    assert_true(d.n >= 1);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* ---- lists, kinds, defaults, lookups -------------------------------------------------- */

static void test_lists(void **state)
{
    dra_arena a;
    dra_diag d;
    dra_object **objs;
    dra_doc *list;
    size_t n;
    const char *text =
        "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: ''}\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n"
        "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: c1}}\n"
        "---\n"
        "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaimList\", "
        "\"items\": [{\"metadata\": {\"name\": \"rc1\"}, \"spec\": {\"devices\": {}}}, "
        "{\"kind\": \"ResourceClaim\", \"apiVersion\": \"resource.k8s.io/v1beta2\", "
        "\"metadata\": {\"name\": \"rc2\"}}]}\n"
        "---\napiVersion: v1\nkind: List\nitems: []\n";
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_api_decode_stream(&a, text, strlen(text), &objs, &n, &d), DRA_OK);
    assert_int_equal(n, 4);
    assert_int_equal(objs[0]->kind, DRA_KIND_NODE);
    assert_int_equal(objs[1]->kind, DRA_KIND_DEVICE_CLASS);
    assert_int_equal(objs[2]->kind, DRA_KIND_RESOURCE_CLAIM);
    assert_string_equal(objs[2]->meta.name, "rc1");
    assert_string_equal(objs[2]->api_version, "resource.k8s.io/v1");
    assert_int_equal(objs[3]->kind, DRA_KIND_RESOURCE_CLAIM);
    assert_string_equal(objs[3]->api_version, "resource.k8s.io/v1beta2");

    assert_int_equal(dra_api_encode_list(&a, objs, n, &list), DRA_OK);
    ASSERT_KEYS(list, "apiVersion", "items", "kind", "metadata");
    assert_string_equal(dra_doc_get(list, "kind")->u.str.s, "List");
    assert_int_equal(dra_doc_get(list, "items")->u.list.n, 4);
    assert_string_equal(dra_doc_get(dra_doc_get(list, "metadata"), "resourceVersion")->u.str.s,
                        "");
    /* A List item without kind is an error (only typed lists imply one). */
    text = "apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n";
    assert_int_equal(dra_api_decode_stream(&a, text, strlen(text), &objs, &n, &d), DRA_EINVAL);
    assert_int_equal(n, 0);
    assert_string_equal(dra_diag_first(&d), "kind not set");
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void test_kinds(void **state)
{
    (void)state;
    assert_int_equal(dra_api_kind_lookup("resource.k8s.io/v1", "ResourceSlice"),
                     DRA_KIND_RESOURCE_SLICE);
    assert_int_equal(dra_api_kind_lookup("resource.k8s.io/v1beta2", "DeviceClass"),
                     DRA_KIND_DEVICE_CLASS);
    assert_int_equal(dra_api_kind_lookup("resource.k8s.io/v1beta1", "DeviceClass"),
                     DRA_KIND_UNKNOWN);
    assert_int_equal(dra_api_kind_lookup("v1", "Pod"), DRA_KIND_POD);
    assert_int_equal(dra_api_kind_lookup("resource.k8s.io/v1beta2", "Pod"), DRA_KIND_UNKNOWN);
    assert_int_equal(dra_api_kind_lookup(NULL, "Pod"), DRA_KIND_UNKNOWN);
    assert_string_equal(dra_api_kind_name(DRA_KIND_RESOURCE_CLAIM_TEMPLATE),
                        "ResourceClaimTemplate");
    assert_string_equal(dra_api_kind_version(DRA_KIND_NODE), "v1");
    assert_null(dra_api_kind_name(DRA_KIND_UNKNOWN));
    assert_null(dra_api_kind_name((dra_kind)99));
}

static void test_defaults(void **state)
{
    dra_arena a;
    dra_object *o;
    const dra_device_request *r;
    (void)state;
    dra_arena_init(&a, NULL);
    o = decode_ok(&a, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nspec:\n"
                      "  devices:\n    requests:\n"
                      "    - {name: a, exactly: {deviceClassName: c, tolerations: [{key: k}]}}\n"
                      "    - {name: b, exactly: {deviceClassName: c, allocationMode: All}}\n"
                      "    - {name: c, firstAvailable: [{name: x, deviceClassName: c, count: 3}]}\n");
    dra_api_set_defaults(o);
    r = o->u.claim.spec.requests;
    assert_string_equal(r[0].exactly->allocation_mode, "ExactCount");
    assert_int_equal(r[0].exactly->count, 1);
    assert_string_equal(r[0].exactly->tolerations[0].op, "Equal");
    assert_string_equal(r[1].exactly->allocation_mode, "All");
    assert_int_equal(r[1].exactly->count, 0);
    assert_string_equal(r[2].first_available[0].allocation_mode, "ExactCount");
    assert_int_equal(r[2].first_available[0].count, 3);
    assert_true(r[2].first_available[0].count_set);
    dra_api_set_defaults(NULL);
    dra_arena_fini(&a);
}

static void test_lookups_and_values(void **state)
{
    dra_arena a;
    dra_object *o;
    const dra_device *dev;
    dra_quantity want;
    (void)state;
    dra_arena_init(&a, NULL);
    o = decode_ok(&a, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                      "metadata: {labels: {x: why}}\nspec:\n  devices:\n  - name: d\n"
                      "    attributes: {i: {int: 9223372036854775807}, b: {bool: false},\n"
                      "      two: {int: 1, string: s}}\n"
                      "    capacity: {m: {value: 1.5Gi}, hundred: {value: 100}, e: {value: 1e3}}\n"
                      "    allNodes: true\n");
    assert_string_equal(dra_strmap_get(&o->meta.labels, "x"), "why");
    assert_null(dra_strmap_get(&o->meta.labels, "z"));
    dev = &o->u.slice.spec.devices[0];
    assert_int_equal(dra_device_attr(dev, "i")->i, INT64_MAX);
    assert_int_equal(dra_device_attr(dev, "b")->set, DRA_ATTR_BOOL);
    assert_int_equal(dra_device_attr(dev, "b")->b, 0);
    /* Both members are kept so validation can say "exactly one". */
    assert_int_equal(dra_device_attr(dev, "two")->set, DRA_ATTR_INT | DRA_ATTR_STRING);
    assert_int_equal(dev->all_nodes, DRA_TRI_TRUE);
    want = qty("1536Mi");
    assert_int_equal(dra_quantity_cmp(&dra_device_capacity(dev, "m")->value, &want), 0);
    want = qty("100");
    assert_int_equal(dra_quantity_cmp(&dra_device_capacity(dev, "hundred")->value, &want), 0);
    want = qty("1k");
    assert_int_equal(dra_quantity_cmp(&dra_device_capacity(dev, "e")->value, &want), 0);
    o = decode_ok(&a, "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n"
                      "    resources: {limits: {cpu: 2}, requests: {memory: 1Gi}}\n");
    want = qty("2");
    assert_int_equal(dra_quantity_cmp(dra_qtymap_get(&o->u.pod.spec.containers[0].limits, "cpu"),
                                      &want),
                     0);
    assert_null(dra_qtymap_get(&o->u.pod.spec.containers[0].limits, "memory"));
    dra_arena_fini(&a);
}

static void test_object_copy(void **state)
{
    dra_arena a, b;
    size_t n;
    dra_object **objs, *c;
    dra_doc *e1, *e2;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_arena_init(&b, NULL);
    objs = load_stream(&a, "tests/data/api/roundtrip/unknown-fields.yaml", &n);
    assert_int_equal(dra_api_object_copy(&b, objs[1], &c), DRA_OK);
    assert_int_equal(c->line, objs[1]->line);
    assert_int_equal(dra_api_encode(&b, c, &e2), DRA_OK);
    assert_int_equal(dra_api_encode(&a, objs[1], &e1), DRA_OK);
    assert_doc_equal(e1, e2, "copy");
    /* The copy lives in |b| alone. */
    dra_arena_fini(&a);
    assert_string_equal(c->meta.name, "unknown-claim");
    assert_int_equal(c->u.claim.spec.requests[0].exactly->selectors[0].cel_set, 1);
    assert_non_null(c->u.claim.spec.devices_extra);
    c->api_version = "resource.k8s.io/v9";
    assert_int_equal(dra_api_object_copy(&b, c, &c), DRA_EUNSUPPORTED);
    assert_null(c);
    dra_arena_fini(&b);
}

static void test_unknown_fields(void **state)
{
    dra_arena a;
    dra_diag d;
    size_t n;
    dra_object **objs;
    char *got;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    objs = load_stream(&a, "tests/data/api/roundtrip/unknown-fields.yaml", &n);
    assert_int_equal(n, 3);
    assert_int_equal(dra_api_unknown_fields(objs[0], &d), 16);
    assert_int_equal(dra_api_unknown_fields(objs[1], &d), 21);
    assert_int_equal(dra_api_unknown_fields(objs[2], &d), 5);
    got = diag_text(&d);
    /* Spot checks; selfLink, managedFields, deletionGracePeriodSeconds are
     * Kubernetes fields and not reported. */
    assert_non_null(strstr(got, "unknown field \"topLevelExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"metadata.futureMeta\"\n"));
    assert_null(strstr(got, "selfLink"));
    assert_null(strstr(got, "managedFields"));
    assert_non_null(strstr(got, "unknown field \"spec.devices[0].attributes[a].unit\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.devices[0].capacity[c].requestPolicy."
                                "validRange.rangeExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.devices[0].nodeSelector."
                                "nodeSelectorTerms[0].matchExpressions[0].reqExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.devices.requests[0].exactly."
                                "selectors[0].cel.celExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.devices.requests[0].firstAvailable[0]."
                                "adminAccess\"\n"));
    assert_non_null(strstr(got, "unknown field \"status.allocation.devices.devAllocExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.containers[0].resources.resExtra\"\n"));
    assert_non_null(strstr(got, "unknown field \"spec.futurePodField\"\n"));
    free(got);
    /* Clean objects have none. */
    dra_diag_clear(&d);
    objs = load_stream(&a, "examples/seed.yaml", &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(dra_api_unknown_fields(objs[i], &d), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(dra_api_unknown_fields(NULL, &d), 0);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* ---- failmalloc ---------------------------------------------------------------------- */

/* Decodes and encodes |text| entirely on |mem|; returns the first error. */
static dra_err exercise(const dra_mem *mem, const char *text, size_t len)
{
    dra_arena a;
    dra_diag d;
    dra_object **objs = NULL;
    dra_doc *doc;
    size_t n = 0;
    dra_err e;
    dra_arena_init(&a, mem);
    dra_diag_init(&d, mem);
    e = dra_api_decode_stream(&a, text, len, &objs, &n, &d);
    for (size_t i = 0; i < n && e == DRA_OK; i++)
        e = dra_api_encode(&a, objs[i], &doc);
    if (e == DRA_OK)
        e = dra_api_encode_list(&a, objs, n, &doc);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return e;
}

/* Reruns exercise() failing each allocation in turn: no leak, and out of
 * memory is reported as DRA_ENOMEM (or the run still ends with |want|),
 * never as some other error. */
static void failmalloc_text(const char *text, size_t len, dra_err want)
{
    long k;
    assert_int_equal(exercise(NULL, text, len), want);
    for (k = 0;; k++) {
        dra_failmem fm;
        dra_err e;
        dra_failmem_init(&fm, k);
        e = exercise(&fm.mem, text, len);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(e, want);
            break;
        }
        assert_true(e == DRA_ENOMEM || e == want);
    }
    assert_true(k > 0);
}

static void failmalloc_file(const char *rel)
{
    size_t len;
    char *text = slurp_rel(rel, &len);
    failmalloc_text(text, len, DRA_OK);
    free(text);
}

static void test_failmalloc(void **state)
{
    (void)state;
    failmalloc_file("examples/seed.yaml");
    failmalloc_file("tests/data/api/roundtrip/claim-full.yaml");
    failmalloc_file("tests/data/api/roundtrip/unknown-fields.yaml");
    failmalloc_file("tests/data/api/roundtrip/pod-node.yaml");
    /* The error paths allocate too (diagnostics, rendered values). */
    for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++)
        failmalloc_text(err_cases[i].yaml, strlen(err_cases[i].yaml),
                        err_cases[i].rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_roundtrip_dir),
        cmocka_unit_test(test_go_order),
        cmocka_unit_test(test_apiserver_bytes),
        cmocka_unit_test(test_omitempty),
        cmocka_unit_test(test_extra_positions),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_lookups_and_values),
        cmocka_unit_test(test_object_copy),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
