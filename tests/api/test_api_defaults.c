/* Tests of kube-apiserver's defaulting in the api module
 * (dra_api_default, dra_api_default_doc): the seed pod comes out with
 * exactly the fields kube-apiserver adds, in its field order; the cases
 * in tests/data/api/defaults/cases (input, then expected; update cases
 * start with the stored object) for pods, volumes, pod-level resources,
 * nodes, namespaces and events; defaulting twice equals once; values
 * the user set are kept; admission refusals with kube's messages; image
 * reference rules; milli rounding; a failmalloc loop. */
#include <dirent.h>

#include "dra_test.h"

#include "api/defaults_int.h"
#include "dra/api.h"
#include "dra/codec.h"

/* ---- helpers ------------------------------------------------------------------------ */

static char *json_of(const dra_doc *doc)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    assert_int_equal(dra_doc_to_json(doc, 2, &b), DRA_OK);
    return dra_buf_detach(&b);
}

/* Order-sensitive: the JSON texts must be identical. */
static void assert_same_json(const dra_doc *want, const dra_doc *got, const char *what)
{
    char *w = json_of(want), *g = json_of(got);
    if (strcmp(w, g)) {
        fprintf(stderr, "%s: documents differ\n--- want\n%s\n--- got\n%s\n", what, w, g);
        free(w);
        free(g);
        fail();
    }
    free(w);
    free(g);
}

static dra_doc **parse_file(dra_arena *a, const char *path, size_t *n)
{
    size_t len;
    char *text = dra_test_slurp(path, &len);
    dra_doc **docs = NULL;
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(a, text, len, &docs, n, &d) != DRA_OK)
        fail_msg("%s: %s", path, dra_diag_first(&d));
    dra_diag_fini(&d);
    free(text);
    return docs;
}

static int typed_kind(const dra_doc *doc)
{
    const dra_doc *av = dra_doc_get(doc, "apiVersion"), *k = dra_doc_get(doc, "kind");
    return av && k && dra_api_kind_lookup(av->u.str.s, k->u.str.s) != DRA_KIND_UNKNOWN;
}

/* Defaults |doc| (in place for untyped kinds) as a write of kind |op|,
 * with |old| the stored object on update; *out is the result as kube
 * would print it. Returns dra_api_default's code. */
static dra_err run(dra_arena *a, dra_doc *doc, dra_api_op op, const dra_doc *old,
                   dra_doc **out, dra_diag *d)
{
    dra_object *o = NULL, *oo = NULL;
    dra_err e;
    if (!typed_kind(doc)) {
        e = dra_api_default_doc(a, doc, op, d);
        *out = doc;
        return e;
    }
    if ((e = dra_api_decode(a, doc, &o, d)))
        return e;
    if (old && (e = dra_api_decode(a, old, &oo, d)))
        return e;
    if ((e = dra_api_default(a, o, op, oo, d)))
        return e;
    return dra_api_encode(a, o, out);
}

static dra_doc *run_ok(dra_arena *a, dra_doc *doc, dra_api_op op, const dra_doc *old)
{
    dra_doc *out = NULL;
    dra_diag d;
    dra_err e;
    dra_diag_init(&d, NULL);
    e = run(a, doc, op, old, &out, &d);
    if (e != DRA_OK)
        fail_msg("default: %s: %s", dra_errname(e), dra_diag_first(&d));
    dra_diag_fini(&d);
    return out;
}

/* The result printed, read back and defaulted again equals the result:
 * what a stored object gets on its next write. */
static void assert_idempotent(dra_arena *a, const dra_doc *once, dra_api_op op,
                              const dra_doc *old, const char *what)
{
    char *text = json_of(once);
    dra_doc *again, *twice;
    dra_diag d;
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_doc_parse_json(a, text, strlen(text), &again, &d), DRA_OK);
    dra_diag_fini(&d);
    free(text);
    twice = run_ok(a, again, op, old);
    assert_same_json(once, twice, what);
}

/* ---- the seed pod --------------------------------------------------------------------- */

static void test_seed_pod(void **state)
{
    dra_arena a;
    dra_doc **in, **want, *got;
    dra_object *o = NULL;
    size_t n;
    dra_diag d;
    (void)state;
    dra_arena_init(&a, NULL);
    in = parse_file(&a, DRA_SOURCE_DIR "/examples/pod-gpu-test.yaml", &n);
    assert_int_equal(n, 1);
    want = parse_file(&a, DRA_TEST_DATA "/api/defaults/pod-gpu-test.yaml", &n);
    assert_int_equal(n, 1);
    got = run_ok(&a, in[0], DRA_API_OP_CREATE, NULL);
    assert_same_json(want[0], got, "seed pod");
    assert_idempotent(&a, got, DRA_API_OP_CREATE, NULL, "seed pod twice");
    assert_idempotent(&a, got, DRA_API_OP_UPDATE, got, "seed pod updated unchanged");
    /* Twice on the same typed object, without a round trip. */
    dra_diag_init(&d, NULL);
    in = parse_file(&a, DRA_SOURCE_DIR "/examples/pod-gpu-test.yaml", &n);
    assert_int_equal(dra_api_decode(&a, in[0], &o, &d), DRA_OK);
    assert_int_equal(dra_api_default(&a, o, DRA_API_OP_CREATE, NULL, &d), DRA_OK);
    assert_int_equal(dra_api_default(&a, o, DRA_API_OP_CREATE, NULL, &d), DRA_OK);
    assert_int_equal(dra_api_encode(&a, o, &got), DRA_OK);
    assert_same_json(want[0], got, "seed pod defaulted twice in place");
    /* Nothing kube-apiserver does not know about was added. */
    assert_int_equal(dra_api_unknown_fields(o, NULL), 0);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* ---- data-driven cases -------------------------------------------------------------- */

static dra_api_op op_of(const char *name)
{
    if (!strncmp(name, "create-", 7))
        return DRA_API_OP_CREATE;
    if (!strncmp(name, "update-", 7))
        return DRA_API_OP_UPDATE;
    assert_true(!strncmp(name, "decode-", 7));
    return DRA_API_OP_DECODE;
}

static void run_case(const char *dir, const char *name)
{
    char path[1024];
    dra_arena a;
    dra_doc **docs, *got, *old = NULL;
    dra_api_op op = op_of(name);
    size_t n, i = 0;
    dra_arena_init(&a, NULL);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    docs = parse_file(&a, path, &n);
    assert_int_equal(n, op == DRA_API_OP_UPDATE ? 3 : 2);
    if (op == DRA_API_OP_UPDATE)
        old = docs[i++];
    got = run_ok(&a, docs[i], op, old);
    assert_same_json(docs[i + 1], got, name);
    assert_idempotent(&a, got, op, old, name);
    dra_arena_fini(&a);
}

static void test_cases(void **state)
{
    const char *dir = DRA_TEST_DATA "/api/defaults/cases";
    DIR *dp = opendir(dir);
    struct dirent *de;
    int count = 0;
    (void)state;
    assert_non_null(dp);
    while ((de = readdir(dp))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
            continue;
        run_case(dir, de->d_name);
        count++;
    }
    closedir(dp);
    assert_true(count >= 10);
}

/* ---- admission ------------------------------------------------------------------------ */

static const char pod_head[] =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
    "spec:\n  containers: [{name: c, image: busybox}]\n";

static dra_err run_text(dra_arena *a, const char *spec_tail, dra_api_op op, dra_doc **out,
                        dra_diag *d)
{
    char text[1024];
    dra_doc **docs;
    size_t n;
    snprintf(text, sizeof text, "%s%s", pod_head, spec_tail);
    assert_int_equal(dra_doc_parse_yaml(a, text, strlen(text), &docs, &n, d), DRA_OK);
    assert_int_equal(n, 1);
    return run(a, docs[0], op, NULL, out, d);
}

static void test_priority_refusals(void **state)
{
    static const struct {
        const char *tail;
        const char *msg;
    } cases[] = {
        {"  priorityClassName: high\n", "no PriorityClass with name high was found"},
        {"  priority: 7\n",
         "the integer value of priority (7) must not be provided in pod spec; priority "
         "admission controller computed 0 from the given PriorityClass name"},
        /* YAML types 7.0 as a float; kube compares the number. */
        {"  priority: 7.0\n",
         "the integer value of priority (7) must not be provided in pod spec; priority "
         "admission controller computed 0 from the given PriorityClass name"},
        {"  priorityClassName: system-cluster-critical\n  priority: 0\n",
         "the integer value of priority (0) must not be provided in pod spec; priority "
         "admission controller computed 2000000000 from the given PriorityClass name"},
        {"  preemptionPolicy: Never\n",
         "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
         "priority admission controller computed PreemptLowerPriority from the given "
         "PriorityClass name"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_arena a;
        dra_diag d;
        dra_doc *out = NULL;
        dra_arena_init(&a, NULL);
        dra_diag_init(&d, NULL);
        assert_int_equal(run_text(&a, cases[i].tail, DRA_API_OP_CREATE, &out, &d),
                         DRA_EFORBIDDEN);
        assert_string_equal(dra_diag_first(&d), cases[i].msg);
        /* Admission only judges creates: the same pod decodes fine. */
        dra_diag_clear(&d);
        assert_int_equal(run_text(&a, cases[i].tail, DRA_API_OP_DECODE, &out, &d), DRA_OK);
        dra_diag_fini(&d);
        dra_arena_fini(&a);
    }
}

static void test_mirror_pod_keeps_no_account(void **state)
{
    static const char text[] =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: m\n  namespace: default\n"
        "  annotations: {kubernetes.io/config.mirror: abc}\n"
        "spec:\n  containers: [{name: c, image: busybox}]\n";
    dra_arena a;
    dra_doc **docs, *out;
    const dra_doc *spec;
    size_t n;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a, text, strlen(text), &docs, &n, NULL), DRA_OK);
    out = run_ok(&a, docs[0], DRA_API_OP_CREATE, NULL);
    spec = dra_doc_get(out, "spec");
    assert_null(dra_doc_get(spec, "serviceAccountName"));
    assert_null(dra_doc_get(spec, "serviceAccount"));
    assert_non_null(dra_doc_get(spec, "priority"));
    dra_arena_fini(&a);
}

/* Kinds without defaults are left alone; bad arguments are refused. */
static void test_other_kinds_and_args(void **state)
{
    dra_arena a;
    dra_doc **docs, *out;
    size_t n;
    dra_object obj;
    (void)state;
    dra_arena_init(&a, NULL);
    docs = parse_file(&a, DRA_SOURCE_DIR "/examples/resourceslice-gb200.yaml", &n);
    out = run_ok(&a, docs[0], DRA_API_OP_CREATE, NULL);
    {
        dra_object *o = NULL;
        dra_doc *plain;
        assert_int_equal(dra_api_decode(&a, docs[0], &o, NULL), DRA_OK);
        assert_int_equal(dra_api_encode(&a, o, &plain), DRA_OK);
        assert_same_json(plain, out, "slice unchanged");
    }
    memset(&obj, 0, sizeof obj);
    assert_int_equal(dra_api_default(&a, &obj, DRA_API_OP_CREATE, NULL, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_default(NULL, &obj, DRA_API_OP_CREATE, NULL, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_default_doc(&a, NULL, DRA_API_OP_CREATE, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_default_doc(&a, dra_doc_new_list(&a, 0), DRA_API_OP_CREATE, NULL),
                     DRA_EINVAL);
    /* A ConfigMap document is not ours to default. */
    {
        static const char cm[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{}}";
        dra_doc *doc;
        char *before, *after;
        assert_int_equal(dra_doc_parse_json(&a, cm, strlen(cm), &doc, NULL), DRA_OK);
        before = json_of(doc);
        assert_int_equal(dra_api_default_doc(&a, doc, DRA_API_OP_CREATE, NULL), DRA_OK);
        after = json_of(doc);
        assert_string_equal(before, after);
        free(before);
        free(after);
    }
    dra_arena_fini(&a);
}

/* ---- image references and rounding ------------------------------------------------------ */

static void test_pull_policy(void **state)
{
    static const struct {
        const char *image, *want;
    } cases[] = {
        {"busybox", "Always"},
        {"busybox:latest", "Always"},
        {"busybox:1.36", "IfNotPresent"},
        {"library/busybox", "Always"},
        {"docker.io/library/busybox:latest", "Always"},
        {"localhost:5000/app", "Always"},
        {"localhost:5000/app:v2", "IfNotPresent"},
        {"localhost:5000", "IfNotPresent"}, /* name localhost, tag 5000 */
        {"[::1]:5000/app", "Always"},
        {"MyRegistry/app", "Always"}, /* a capitalised first part is a registry */
        {"Ubuntu", "IfNotPresent"},   /* invalid: upper case in the path */
        {"ubuntu:", "IfNotPresent"},
        {"ubuntu:-x", "IfNotPresent"},
        {"", "IfNotPresent"},
        {"a__b/c.d-e--f", "Always"},
        {"a___b", "IfNotPresent"},
        {"a..b", "IfNotPresent"},
        {"-a", "IfNotPresent"},
        {"reg-.io/x", "IfNotPresent"},
        {"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "IfNotPresent"},
        {"x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
         "IfNotPresent"},
        {"x:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
         "Always"},
        {"x@sha256:0123", "IfNotPresent"},
        {"x@md5:0123456789abcdef0123456789abcdef", "IfNotPresent"},
        {"x@sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
         "IfNotPresent"},
        {"x@sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "IfNotPresent"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(def_pull_policy(cases[i].image), cases[i].want))
            fail_msg("%s: want %s, got %s", cases[i].image, cases[i].want,
                     def_pull_policy(cases[i].image));
    assert_string_equal(def_pull_policy(NULL), "IfNotPresent");
    {
        /* The length limit counts docker.io/library/. */
        char name[300];
        memset(name, 'a', sizeof name);
        name[255 - 18] = '\0';
        assert_string_equal(def_pull_policy(name), "Always");
        name[255 - 18] = 'a';
        name[256 - 18] = '\0';
        assert_string_equal(def_pull_policy(name), "IfNotPresent");
    }
}

static void test_round_milli(void **state)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"100u", "1m"}, {"1n", "1m"}, {"1001u", "2m"}, {"1m", "1m"},
        {"0.0005", "1m"}, {"-1n", "-1m"}, {"1Gi", "1Gi"}, {"0", "0"},
        {"1e-40", "1e-3"}, /* the exponent format is kept, as upstream */
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dra_quantity q;
        char buf[DRA_QTY_STR_MAX];
        assert_int_equal(dra_quantity_parse(cases[i].in, strlen(cases[i].in), &q), DRA_OK);
        def_round_milli(&q);
        dra_quantity_str(&q, buf, sizeof buf);
        if (strcmp(buf, cases[i].want))
            fail_msg("%s: want %s, got %s", cases[i].in, cases[i].want, buf);
    }
}

/* ---- failmalloc ----------------------------------------------------------------------- */

static dra_err failmalloc_once(const dra_mem *mem, const char *text, size_t len,
                               dra_api_op op)
{
    dra_arena a;
    dra_doc **docs, *out;
    size_t n;
    dra_diag d;
    dra_err e;
    dra_arena_init(&a, mem);
    dra_diag_init(&d, mem);
    e = dra_doc_parse_yaml(&a, text, len, &docs, &n, &d);
    if (!e)
        e = run(&a, docs[0], op, NULL, &out, &d);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return e;
}

static void failmalloc_file(const char *path, dra_api_op op)
{
    size_t len;
    char *text = dra_test_slurp(path, &len);
    long k;
    assert_int_equal(failmalloc_once(NULL, text, len, op), DRA_OK);
    for (k = 0;; k++) {
        dra_failmem fm;
        dra_err e;
        dra_failmem_init(&fm, k);
        e = failmalloc_once(&fm.mem, text, len, op);
        assert_int_equal(fm.live, 0);
        if (!fm.failed) {
            assert_int_equal(e, DRA_OK);
            break;
        }
        assert_true(e == DRA_ENOMEM || e == DRA_OK);
    }
    assert_true(k > 0);
    free(text);
}

static void test_failmalloc(void **state)
{
    (void)state;
    failmalloc_file(DRA_SOURCE_DIR "/examples/pod-gpu-test.yaml", DRA_API_OP_CREATE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/create-pod-containers.yaml",
                    DRA_API_OP_CREATE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/create-pod-volumes.yaml",
                    DRA_API_OP_CREATE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/create-pod-level-resources.yaml",
                    DRA_API_OP_CREATE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/decode-pod-status.yaml",
                    DRA_API_OP_DECODE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/decode-node.yaml", DRA_API_OP_DECODE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/create-namespace.yaml",
                    DRA_API_OP_CREATE);
    failmalloc_file(DRA_TEST_DATA "/api/defaults/cases/create-event.yaml", DRA_API_OP_CREATE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_pod),
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_priority_refusals),
        cmocka_unit_test(test_mirror_pod_keeps_no_account),
        cmocka_unit_test(test_other_kinds_and_args),
        cmocka_unit_test(test_pull_policy),
        cmocka_unit_test(test_round_milli),
        cmocka_unit_test(test_failmalloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
