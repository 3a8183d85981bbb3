/* Failmalloc: decode and encode representative documents with allocation
 * k failing, for every k until one run needs no failure. Each run must
 * fail cleanly (DRA_ENOMEM, no output, no leak) or succeed exactly. */
#include "dra_test.h"
#include "dra/codec.h"

typedef dra_err (*scenario)(const dra_mem *mem, const char *text, size_t len, char **out);

/* Decode, then encode both ways; *out gets the encodings (libc). */
static dra_err run_json(const dra_mem *mem, const char *text, size_t len, char **out)
{
    dra_arena a;
    dra_diag d;
    dra_buf b;
    dra_doc *doc;
    dra_err err;
    dra_arena_init(&a, mem);
    dra_diag_init(&d, mem);
    dra_buf_init(&b, mem);
    err = dra_doc_parse_json(&a, text, len, &doc, &d);
    if (!err)
        err = dra_doc_to_json(doc, 2, &b);
    if (!err) { /* the copy the in-process transport makes, encoded too */
        dra_doc *cp;
        err = dra_doc_copy_json(&a, doc, SIZE_MAX, &cp);
        if (!err)
            err = dra_doc_to_json(cp, 0, &b);
        else if (err == DRA_EUNSUPPORTED) /* floats */
            err = DRA_OK;
    }
    if (!err)
        err = dra_doc_to_yaml(doc, &b);
    if (!err)
        *out = strdup(b.p);
    dra_buf_fini(&b);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return err;
}

static dra_err run_yaml(const dra_mem *mem, const char *text, size_t len, char **out)
{
    dra_arena a;
    dra_diag d;
    dra_buf b;
    dra_doc **docs;
    size_t n = 0;
    dra_err err;
    dra_arena_init(&a, mem);
    dra_diag_init(&d, mem);
    dra_buf_init(&b, mem);
    err = dra_doc_parse_yaml(&a, text, len, &docs, &n, &d);
    if (!err)
        err = dra_doc_flatten_lists(&a, &docs, &n);
    for (size_t i = 0; !err && i < n; i++) {
        err = dra_doc_to_yaml(docs[i], &b);
        if (!err)
            err = dra_doc_to_json(docs[i], 0, &b);
    }
    if (!err)
        *out = strdup(b.p ? b.p : "");
    dra_buf_fini(&b);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    return err;
}

static void failmem_loop(scenario fn, const char *file)
{
    char path[512], *text, *want = NULL;
    size_t len;
    long k;
    snprintf(path, sizeof path, "%s/codec/%s", DRA_TEST_DATA, file);
    text = dra_test_slurp(path, &len);
    assert_int_equal(fn(NULL, text, len, &want), DRA_OK);
    for (k = 0;; k++) {
        dra_failmem fm;
        char *got = NULL;
        dra_err err;
        dra_failmem_init(&fm, k);
        err = fn(&fm.mem, text, len, &got);
        if (fm.live != 0)
            fail_msg("%s: k=%ld leaks %ld blocks", file, k, fm.live);
        if (!fm.failed) {
            assert_int_equal(err, DRA_OK);
            assert_string_equal(got, want);
            free(got);
            break;
        }
        if (err == DRA_OK) {
            /* A failure the code could absorb must not change the output. */
            assert_string_equal(got, want);
            free(got);
        } else if (err != DRA_ENOMEM) {
            fail_msg("%s: k=%ld returned %s", file, k, dra_errname(err));
        }
    }
    assert_true(k > 10); /* the loop really exercised allocations */
    free(want);
    free(text);
}

static void test_failmem_json(void **state)
{
    (void)state;
    failmem_loop(run_json, "resourceclaim.json");
    failmem_loop(run_json, "style.json");
}

static void test_failmem_yaml(void **state)
{
    (void)state;
    failmem_loop(run_yaml, "resourceclaimtemplate.yaml");
    failmem_loop(run_yaml, "style.yaml");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failmem_json),
        cmocka_unit_test(test_failmem_yaml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
