/* Tests for src/api/validate*.c: the invalid fixtures in
 * tests/data/api/invalid (each with its exact expected error lines), the
 * valid fixtures, update and status-update pairs, objects built by hand,
 * the CEL hook, the format checks, and a failmalloc loop. */
#include <dirent.h>

#include "dra_test.h"

#include "api/validate.h"
#include "api/validate_int.h"
#include "dra/api.h"

/* ---- fixture runner --------------------------------------------------- */

typedef struct fixture {
    char *text;
    size_t len;
    dra_api_validate_mode mode;
    dra_buf expect; /* expected lines, each ending in \n */
} fixture;

static void fixture_load(fixture *f, const char *path)
{
    const char *p, *nl;
    f->text = dra_test_slurp(path, &f->len);
    f->mode = DRA_API_VALIDATE_CREATE;
    dra_buf_init(&f->expect, NULL);
    for (p = f->text; *p == '#'; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            break;
        if (strncmp(p, "# expect: ", 10) == 0) {
            dra_buf_append(&f->expect, p + 10, (size_t)(nl - p - 10));
            dra_buf_putc(&f->expect, '\n');
        } else if (strncmp(p, "# mode: update", 14) == 0) {
            f->mode = DRA_API_VALIDATE_UPDATE;
        } else if (strncmp(p, "# mode: status", 14) == 0) {
            f->mode = DRA_API_VALIDATE_STATUS_UPDATE;
        }
    }
}

static void fixture_free(fixture *f)
{
    free(f->text);
    dra_buf_fini(&f->expect);
}

/* Validates the fixture's objects (create: each one; update/status: the
 * first is old, the second new) and appends every error line to |got|.
 * Returns 0, or -1 with a reason in |got| when the fixture is unusable. */
static int fixture_run(const fixture *f, dra_buf *got, int *nobj)
{
    dra_arena a;
    dra_diag d, dd;
    dra_object **objs;
    size_t n = 0;
    int rc = 0;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_diag_init(&dd, NULL);
    if (dra_api_decode_stream(&a, f->text, f->len, &objs, &n, &dd) != DRA_OK) {
        dra_buf_puts(got, "decode failed:\n");
        dra_diag_format(&dd, got);
        rc = -1;
        goto out;
    }
    *nobj = (int)n;
    if (f->mode == DRA_API_VALIDATE_CREATE) {
        for (size_t i = 0; i < n; i++) {
            dra_err e = dra_api_validate(objs[i], &d);
            if ((e == DRA_OK) != (d.n == 0)) {
                dra_buf_printf(got, "return %s with %zu errors\n", dra_errname(e), d.n);
                rc = -1;
            }
        }
    } else if (n == 2) {
        dra_err e = dra_api_validate_ex(objs[1], objs[0], f->mode, NULL, &d);
        if ((e == DRA_OK) != (d.n == 0)) {
            dra_buf_printf(got, "return %s with %zu errors\n", dra_errname(e), d.n);
            rc = -1;
        }
    } else {
        dra_buf_puts(got, "an update fixture needs exactly two objects\n");
        rc = -1;
    }
    dra_diag_format(&d, got);
out:
    dra_diag_fini(&d);
    dra_diag_fini(&dd);
    dra_arena_fini(&a);
    return rc;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Runs every fixture of |dir|; |valid| fixtures must have no errors and
 * no expect lines. Returns the number of fixtures; fails on mismatch. */
static int run_dir(const char *dir, int valid, size_t *nexpect)
{
    char path[1024];
    struct dirent *de;
    DIR *dp = opendir(dir);
    int count = 0, failed = 0;
    assert_non_null(dp);
    while ((de = readdir(dp)) != NULL) {
        fixture f;
        dra_buf got;
        int nobj = 0;
        if (!ends_with(de->d_name, ".yaml"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fixture_load(&f, path);
        dra_buf_init(&got, NULL);
        int rc = fixture_run(&f, &got, &nobj);
        const char *want = f.expect.p ? f.expect.p : "";
        const char *have = got.p ? got.p : "";
        if (rc != 0 || strcmp(want, have) != 0 || (valid && *have) ||
            (!valid && !*want) || nobj == 0) {
            fprintf(stderr, "FIXTURE %s\n--- expected\n%s--- got\n%s", path, want, have);
            failed++;
        }
        for (const char *p = want; *p; p++)
            *nexpect += *p == '\n';
        dra_buf_fini(&got);
        fixture_free(&f);
        count++;
    }
    closedir(dp);
    assert_int_equal(failed, 0);
    return count;
}

static void test_invalid_fixtures(void **state)
{
    size_t lines = 0;
    (void)state;
    int n = run_dir(DRA_TEST_DATA "/api/invalid", 0, &lines);
    /* The table is meant to cover every rule: keep it from shrinking. */
    assert_true(n >= 80);
    assert_true(lines >= 200);
}

static void test_valid_fixtures(void **state)
{
    size_t lines = 0;
    (void)state;
    int n = run_dir(DRA_TEST_DATA "/api/valid", 1, &lines);
    assert_true(n >= 10);
    assert_int_equal(lines, 0);
}

static void test_examples_valid(void **state)
{
    size_t lines = 0;
    (void)state;
    assert_true(run_dir(DRA_SOURCE_DIR "/examples", 1, &lines) >= 1);
}

/* ---- hand-built objects -------------------------------------------------- */

static dra_object *claim_new(dra_arena *a)
{
    dra_object *o = dra_api_object_new(a, DRA_KIND_RESOURCE_CLAIM);
    assert_non_null(o);
    o->meta.name = "claim";
    o->meta.namespace_ = "default";
    return o;
}

static dra_device_request *requests(dra_arena *a, dra_object *o, size_t n)
{
    dra_device_request *r = dra_arena_array(a, n, sizeof *r);
    assert_non_null(r);
    o->u.claim.spec.requests = r;
    o->u.claim.spec.n_requests = n;
    o->u.claim.spec.requests_set = 1;
    return r;
}

static dra_device_request_spec *exactly(dra_arena *a, const char *cls)
{
    dra_device_request_spec *x = dra_arena_zalloc(a, sizeof *x);
    assert_non_null(x);
    x->device_class_name = cls;
    return x;
}

static char *format(const dra_diag *d)
{
    dra_buf b;
    dra_buf_init(&b, NULL);
    dra_diag_format(d, &b);
    return dra_buf_detach(&b);
}

static void test_all_errors_at_once(void **state)
{
    dra_arena a;
    dra_diag d;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_object *o = claim_new(&a);
    o->meta.name = NULL;
    dra_device_request *r = requests(&a, o, 3);
    r[0].name = "gpu";
    r[0].exactly = exactly(&a, "");
    r[0].exactly->count = -5;
    r[1].name = "gpu";
    r[2].name = "x";
    r[2].exactly = exactly(&a, "c");
    r[2].exactly->allocation_mode = "Most";
    assert_int_equal(dra_api_validate(o, &d), DRA_EINVALID);
    char *s = format(&d);
    assert_string_equal(s,
        "metadata.name: Required value: name or generateName is required\n"
        "spec.devices.requests[0].exactly.deviceClassName: Required value\n"
        "spec.devices.requests[0].exactly.count: Invalid value: -5: must be greater than zero\n"
        "spec.devices.requests[1]: Required value: exactly one of `exactly` or `firstAvailable` is required\n"
        "spec.devices.requests[2].exactly.allocationMode: Unsupported value: \"Most\": supported values: \"All\", \"ExactCount\"\n"
        "spec.devices.requests[1]: Duplicate value: \"gpu\"\n");
    free(s);
    /* Without a diagnostics list the verdict is the same. */
    assert_int_equal(dra_api_validate(o, NULL), DRA_EINVALID);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void test_defaults_are_implied(void **state)
{
    dra_arena a;
    dra_diag d;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_object *o = claim_new(&a);
    dra_device_request *r = requests(&a, o, 1);
    r[0].name = "gpu";
    r[0].exactly = exactly(&a, "gpu.example.com");
    /* No mode and count 0: kube-apiserver defaults them to ExactCount/1. */
    assert_int_equal(dra_api_validate(o, &d), DRA_OK);
    r[0].exactly->allocation_mode = "All";
    assert_int_equal(dra_api_validate(o, &d), DRA_OK);
    r[0].exactly->count = 1;
    assert_int_equal(dra_api_validate(o, &d), DRA_EINVALID);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void test_bad_arguments(void **state)
{
    dra_arena a;
    (void)state;
    dra_arena_init(&a, NULL);
    dra_object *o = claim_new(&a);
    dra_object *s = dra_api_object_new(&a, DRA_KIND_RESOURCE_SLICE);
    dra_object unknown;
    memset(&unknown, 0, sizeof unknown);
    assert_int_equal(dra_api_validate(NULL, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_validate(&unknown, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_validate_update(NULL, o, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_validate_update(s, o, NULL), DRA_EINVAL);
    assert_int_equal(dra_api_validate_status_update(s, o, NULL), DRA_EINVAL);
    dra_arena_fini(&a);
}

/* ---- CEL hook ---------------------------------------------------------------- */

typedef struct hook_state {
    int calls;
} hook_state;

static dra_api_cel_verdict cel_hook(void *ud, const char *expr, char *msg, size_t cap)
{
    hook_state *h = ud;
    h->calls++;
    if (strstr(expr, "costly"))
        return DRA_API_CEL_TOO_COSTLY;
    if (strstr(expr, "bad")) {
        snprintf(msg, cap, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'bad'");
        return DRA_API_CEL_INVALID;
    }
    return DRA_API_CEL_OK;
}

static void test_cel_hook(void **state)
{
    dra_arena a;
    dra_diag d;
    hook_state h = {0};
    dra_api_validate_opts opts = {cel_hook, &h};
    dra_device_selector sel[3];
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    memset(sel, 0, sizeof sel);
    sel[0].cel_set = sel[1].cel_set = sel[2].cel_set = 1;
    sel[0].expression = "device.driver == 'x'";
    sel[1].expression = "bad";
    sel[2].expression = "costly";
    dra_object *c = dra_api_object_new(&a, DRA_KIND_DEVICE_CLASS);
    c->meta.name = "gpu";
    c->u.device_class.spec.selectors = sel;
    c->u.device_class.spec.n_selectors = 3;
    assert_int_equal(dra_api_validate_ex(c, NULL, DRA_API_VALIDATE_CREATE, &opts, &d),
                     DRA_EINVALID);
    assert_int_equal(h.calls, 3);
    char *s = format(&d);
    assert_string_equal(s,
        "spec.selectors[1].cel.expression: Invalid value: \"bad\": compilation failed: "
        "ERROR: <input>:1:1: undeclared reference to 'bad'\n"
        "spec.selectors[2].cel.expression: Forbidden: too complex, exceeds cost limit\n");
    free(s);
    /* Unchanged selectors count as stored: the hook is not asked again. */
    dra_diag_clear(&d);
    h.calls = 0;
    assert_int_equal(dra_api_validate_ex(c, c, DRA_API_VALIDATE_UPDATE, &opts, &d), DRA_OK);
    assert_int_equal(h.calls, 0);
    /* No hook: only lengths and emptiness are judged. */
    assert_int_equal(dra_api_validate(c, &d), DRA_OK);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* ---- format checks and helpers ----------------------------------------------- */

static void test_format_checks(void **state)
{
    char l63[64], l64[65];
    vmsgs m;
    (void)state;
    memset(l63, 'a', 63);
    l63[63] = '\0';
    memset(l64, 'a', 64);
    l64[64] = '\0';
    memset(&m, 0, sizeof m);
    chk_dns_label(l63, &m);
    assert_int_equal(m.n, 0);
    chk_dns_label(l64, &m);
    assert_int_equal(m.n, 1);
    assert_string_equal(m.m[0], "must be no more than 63 characters");
    memset(&m, 0, sizeof m);
    chk_dns_label("-a", &m);
    chk_dns_label("a-", &m);
    chk_dns_label("a.b", &m);
    assert_int_equal(m.n, 3);
    assert_string_equal(m.m[2], "must not contain dots");
    memset(&m, 0, sizeof m);
    chk_dns_subdomain("a.b-c.d", &m);
    chk_dns_subdomain_prefix("gen-", &m);
    chk_qualified_name("example.com/My.Name_1", &m);
    chk_label_value("", &m);
    chk_c_identifier("_x9", &m);
    assert_int_equal(m.n, 0);
    chk_dns_subdomain("a..b", &m);
    chk_c_identifier("9x", &m);
    chk_c_identifier("", &m);
    assert_int_equal(m.n, 3);

    assert_true(chk_semver("0.0.0"));
    assert_true(chk_semver("1.2.3-alpha.0.x-y+build.007"));
    assert_true(chk_semver("10.20.30-0a"));
    assert_false(chk_semver("01.2.3"));
    assert_false(chk_semver("1.2"));
    assert_false(chk_semver("1.2.3-"));
    assert_false(chk_semver("1.2.3+"));
    assert_false(chk_semver("1.2.3-a..b"));
    assert_false(chk_semver("v1.2.3"));
    assert_false(chk_semver("1.2.3 "));

    assert_true(chk_is_extended_resource_name("example.com/gpu"));
    assert_false(chk_is_extended_resource_name("gpu"));
    assert_false(chk_is_extended_resource_name("requests.example.com/gpu"));
    assert_false(chk_is_extended_resource_name("example.com/-gpu"));
}

/* The label checks the API server's selectors share: the same rules in
 * both wordings, only the four length and multi-slash messages differ. */
static void test_label_check_wordings(void **state)
{
    const char *m[4];
    char name[65], prefix[256];
    (void)state;
    memset(name, 'a', 64);
    name[64] = '\0';
    memset(prefix, 'a', 255);
    prefix[0] = 'A';
    prefix[254] = '/'; /* "A" + 253 x 'a', then '/' and an empty name */
    prefix[255] = '\0';
    assert_int_equal(dra_api_check_label_key("example.com/My.Name_1", DRA_API_WORDING_UTIL, m, 4), 0);
    assert_int_equal(dra_api_check_label_key("example.com/My.Name_1", DRA_API_WORDING_CONTENT, m, 4), 0);
    assert_int_equal(dra_api_check_label_key(name, DRA_API_WORDING_UTIL, m, 4), 1);
    assert_string_equal(m[0], "name part must be no more than 63 characters");
    assert_int_equal(dra_api_check_label_key(name, DRA_API_WORDING_CONTENT, m, 4), 1);
    assert_string_equal(m[0], "name part must be no more than 63 bytes");
    assert_int_equal(dra_api_check_label_value(name, DRA_API_WORDING_UTIL, m, 4), 1);
    assert_string_equal(m[0], "must be no more than 63 characters");
    assert_int_equal(dra_api_check_label_value(name, DRA_API_WORDING_CONTENT, m, 4), 1);
    assert_string_equal(m[0], "must be no more than 63 bytes");
    assert_int_equal(dra_api_check_label_value("", DRA_API_WORDING_CONTENT, m, 4), 0);
    assert_int_equal(dra_api_check_label_value("-a", DRA_API_WORDING_CONTENT, m, 4), 1);
    assert_non_null(strstr(m[0], "a valid label must be an empty string"));
    /* A 254-byte upper-case prefix and an empty name: four messages. */
    assert_int_equal(dra_api_check_label_key(prefix, DRA_API_WORDING_CONTENT, m, 4), 4);
    assert_string_equal(m[0], "prefix part must be no more than 253 bytes");
    assert_non_null(strstr(m[1], "prefix part a lowercase RFC 1123 subdomain"));
    assert_string_equal(m[2], "name part must be non-empty");
    assert_non_null(strstr(m[3], "name part must consist of"));
    assert_int_equal(dra_api_check_label_key(prefix, DRA_API_WORDING_UTIL, m, 1), 4);
    assert_string_equal(m[0], "prefix part must be no more than 253 characters");
    assert_int_equal(dra_api_check_label_key("a/b/c", DRA_API_WORDING_UTIL, m, 4), 1);
    assert_true(strncmp(m[0], "a qualified name must consist", 29) == 0);
    assert_int_equal(dra_api_check_label_key("a/b/c", DRA_API_WORDING_CONTENT, m, 4), 1);
    assert_true(strncmp(m[0], "a valid label key must consist", 30) == 0);
}

static void test_quote(void **state)
{
    dra_buf b;
    (void)state;
    dra_buf_init(&b, NULL);
    dra_api_go_quote(&b, "a\"b\\c\n\t\x01\x7f\xc3\xa9\xff\xc2\x85", 14);
    assert_string_equal(b.p, "\"a\\\"b\\\\c\\n\\t\\x01\\x7f\xc3\xa9\\xff\\u0085\"");
    dra_buf_fini(&b);
    /* encoding/json: HTML-safe, invalid UTF-8 as U+FFFD, \b \f short. */
    dra_buf_init(&b, NULL);
    v_json_quote(&b, "<a&b>\"\\\b\x01\xff\xe2\x80\xa8\xc3\xa9", 15);
    assert_string_equal(b.p, "\"\\u003ca\\u0026b\\u003e\\\"\\\\\\b\\u0001\\ufffd\\u2028\xc3\xa9\"");
    dra_buf_fini(&b);
}

static void test_key_truncation(void **state)
{
    vctx v;
    char key[201];
    (void)state;
    memset(key, 'k', 200);
    key[200] = '\0';
    key[0] = 'A';
    key[199] = 'Z';
    vctx_init(&v, NULL, "m");
    v_key(&v, key, 20);
    /* 20 - 3 = 17 kept: 9 from the front, 8 from the back. */
    assert_string_equal(dra_path_str(&v.p), "m[Akkkkkkkk...kkkkkkkZ]");
    v_pop(&v);
    v_key(&v, "short", 8);
    assert_string_equal(dra_path_str(&v.p), "m[short]");
}

/* ---- robustness ------------------------------------------------------------------ */

static void test_failmalloc(void **state)
{
    static const char *const files[] = {
        DRA_TEST_DATA "/api/invalid/claim-many-errors.yaml",
        DRA_TEST_DATA "/api/invalid/slice-binding-conditions.yaml",
        DRA_TEST_DATA "/api/invalid/pod-container-claims.yaml",
        DRA_TEST_DATA "/api/invalid/status-device-network-data.yaml",
    };
    (void)state;
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        fixture f;
        dra_arena a;
        dra_object **objs;
        size_t n;
        fixture_load(&f, files[fi]);
        dra_arena_init(&a, NULL);
        assert_int_equal(dra_api_decode_stream(&a, f.text, f.len, &objs, &n, NULL), DRA_OK);
        assert_int_equal(n, 1);
        for (long k = 0;; k++) {
            dra_failmem fm;
            dra_diag d;
            dra_failmem_init(&fm, k);
            dra_diag_init(&d, &fm.mem);
            dra_err e = dra_api_validate(objs[0], &d);
            dra_diag_fini(&d);
            assert_int_equal(fm.live, 0);
            if (!fm.failed) {
                assert_int_equal(e, DRA_EINVALID);
                break;
            }
            assert_true(e == DRA_ENOMEM || e == DRA_EINVALID);
            assert_true(k < 100000);
        }
        dra_arena_fini(&a);
        fixture_free(&f);
    }
    /* Update and status update: the deep comparison allocates too. */
    static const char *const pairs[] = {
        DRA_TEST_DATA "/api/invalid/update-claim-spec.yaml",
        DRA_TEST_DATA "/api/invalid/status-allocation-immutable.yaml",
        DRA_TEST_DATA "/api/invalid/update-finalizer-while-deleting.yaml",
    };
    for (size_t fi = 0; fi < sizeof pairs / sizeof pairs[0]; fi++) {
        fixture f;
        dra_arena a;
        dra_object **objs;
        size_t n;
        fixture_load(&f, pairs[fi]);
        dra_arena_init(&a, NULL);
        assert_int_equal(dra_api_decode_stream(&a, f.text, f.len, &objs, &n, NULL), DRA_OK);
        assert_int_equal(n, 2);
        for (long k = 0;; k++) {
            dra_failmem fm;
            dra_diag d;
            dra_failmem_init(&fm, k);
            dra_diag_init(&d, &fm.mem);
            dra_err e = dra_api_validate_ex(objs[1], objs[0], f.mode, NULL, &d);
            dra_diag_fini(&d);
            assert_int_equal(fm.live, 0);
            if (!fm.failed) {
                assert_int_equal(e, DRA_EINVALID);
                break;
            }
            assert_true(e == DRA_ENOMEM || e == DRA_EINVALID);
            assert_true(k < 100000);
        }
        dra_arena_fini(&a);
        fixture_free(&f);
    }
}

/* Huge lists: the size limit answers before any per-item work, and the
 * duplicate checks stay linear. */
static void test_large_inputs(void **state)
{
    dra_arena a;
    dra_diag d;
    enum { N = 200000 };
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_object *o = claim_new(&a);
    dra_object *old = claim_new(&a);
    dra_device_result res = {0};
    dra_allocation_result alloc = {0};
    res.request = "gpu";
    res.driver = "d.example.com";
    res.pool = "p";
    res.device = "dev";
    alloc.results = &res;
    alloc.n_results = 1;
    dra_device_request *r = requests(&a, o, 1);
    r[0].name = "gpu";
    r[0].exactly = exactly(&a, "c");
    dra_consumer_ref *refs = dra_arena_array(&a, N, sizeof *refs);
    assert_non_null(refs);
    for (size_t i = 0; i < N; i++) {
        refs[i].resource = "pods";
        refs[i].name = "p";
        refs[i].uid = dra_arena_sprintf(&a, "%zu", i);
    }
    o->u.claim.status.allocation = &alloc;
    o->u.claim.status.reserved_for = refs;
    o->u.claim.status.n_reserved_for = N;
    assert_int_equal(dra_api_validate(o, &d), DRA_EINVALID);
    char *s = format(&d);
    assert_string_equal(s, "status.reservedFor: Too many: 200000: must have at most 256 items\n");
    free(s);
    /* 256 consumers with one duplicate uid. */
    dra_diag_clear(&d);
    o->u.claim.status.n_reserved_for = 256;
    refs[255].uid = refs[3].uid;
    assert_int_equal(dra_api_validate_status_update(old, o, &d), DRA_EINVALID);
    s = format(&d);
    assert_string_equal(s, "status.reservedFor[255]: Duplicate value: \"3\"\n");
    free(s);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static void test_annotation_size(void **state)
{
    dra_arena a;
    dra_diag d;
    dra_kv kv[2];
    (void)state;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    dra_object *o = claim_new(&a);
    dra_device_request *r = requests(&a, o, 1);
    r[0].name = "gpu";
    r[0].exactly = exactly(&a, "c");
    char *big = dra_arena_alloc(&a, 200 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'v', 200 * 1024);
    big[200 * 1024] = '\0';
    kv[0].key = "a";
    kv[0].val = big;
    kv[1].key = "b";
    kv[1].val = big + 200 * 1024 - (56 * 1024 - 2); /* total = 256 KiB exactly */
    o->meta.annotations.v = kv;
    o->meta.annotations.n = 2;
    assert_int_equal(dra_api_validate(o, &d), DRA_OK);
    kv[1].val--; /* one byte over */
    assert_int_equal(dra_api_validate(o, &d), DRA_EINVALID);
    char *s = format(&d);
    assert_string_equal(s, "metadata.annotations: Too long: may not be more than 262144 bytes\n");
    free(s);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* Mutated fixtures: whatever the decoder makes of them, validation
 * answers with a verdict (under ASan/UBSan and valgrind this also proves
 * it neither crashes nor leaks on half-broken objects). */
static void mutate_dir(const char *dir, uint32_t *seed, size_t *runs)
{
    static const char alphabet[] = ":-[]{}\"'#0123456789aZ_./ \n\t";
    char path[1024];
    struct dirent *de;
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    while ((de = readdir(dp)) != NULL) {
        size_t len;
        char *text;
        if (!ends_with(de->d_name, ".yaml"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        text = dra_test_slurp(path, &len);
        for (int k = 0; k < 40 && len > 0; k++) {
            char *m = malloc(len + 1);
            dra_arena a;
            dra_object **objs = NULL;
            size_t n = 0;
            assert_non_null(m);
            memcpy(m, text, len + 1);
            for (int j = 0; j < 1 + k % 4; j++) {
                *seed = *seed * 1103515245u + 12345u;
                size_t at = (*seed >> 8) % len;
                *seed = *seed * 1103515245u + 12345u;
                m[at] = alphabet[(*seed >> 8) % (sizeof alphabet - 1)];
            }
            dra_arena_init(&a, NULL);
            dra_err e = dra_api_decode_stream(&a, m, len, &objs, &n, NULL);
            if (e == DRA_EPARSE)
                n = 0;
            for (size_t i = 0; i < n; i++) {
                dra_diag d;
                dra_diag_init(&d, NULL);
                e = dra_api_validate(objs[i], &d);
                assert_true(e == DRA_OK || e == DRA_EINVALID);
                assert_true((e == DRA_OK) == (d.n == 0));
                if (i > 0 && objs[i - 1]->kind == objs[i]->kind) {
                    e = dra_api_validate_update(objs[i - 1], objs[i], &d);
                    assert_true(e == DRA_OK || e == DRA_EINVALID);
                    e = dra_api_validate_status_update(objs[i - 1], objs[i], &d);
                    assert_true(e == DRA_OK || e == DRA_EINVALID);
                }
                dra_diag_fini(&d);
                (*runs)++;
            }
            dra_arena_fini(&a);
            free(m);
        }
        free(text);
    }
    closedir(dp);
}

static void test_mutated_fixtures(void **state)
{
    uint32_t seed = 42;
    size_t runs = 0;
    (void)state;
    mutate_dir(DRA_TEST_DATA "/api/invalid", &seed, &runs);
    mutate_dir(DRA_TEST_DATA "/api/valid", &seed, &runs);
    /* Most mutants still decode to something worth validating. */
    assert_true(runs > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_fixtures),
        cmocka_unit_test(test_valid_fixtures),
        cmocka_unit_test(test_examples_valid),
        cmocka_unit_test(test_all_errors_at_once),
        cmocka_unit_test(test_defaults_are_implied),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_cel_hook),
        cmocka_unit_test(test_format_checks),
        cmocka_unit_test(test_label_check_wordings),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_key_truncation),
        cmocka_unit_test(test_failmalloc),
        cmocka_unit_test(test_large_inputs),
        cmocka_unit_test(test_annotation_size),
        cmocka_unit_test(test_mutated_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
