/* Every allocation of the scheduler core failing in turn: loading the
 * seed and five pods into a snapshot and scheduling them must fail with
 * DRA_ENOMEM (or succeed), never crash, and leave nothing allocated. */
#include "sched_test.h"

static dra_err run(const dra_mem *mem, dra_doc **docs, size_t n)
{
    dra_sched_opts o;
    dra_sched_sim *s = NULL;
    dra_arena a;
    dra_sched_decision d;
    dra_err e;
    char name[32];
    memset(&o, 0, sizeof o);
    o.mem = mem;
    if ((e = dra_sched_sim_new(&o, &s)) != DRA_OK)
        return e;
    dra_arena_init(&a, NULL);
    for (size_t i = 0; i < n && e == DRA_OK; i++)
        e = dra_sched_sim_add(s, docs[i], NULL);
    for (int i = 0; i < 5 && e == DRA_OK; i++) {
        snprintf(name, sizeof name, "gpu-test-pod-%d", i);
        e = dra_sched_sim_schedule(s, "default", name, &a, &d);
    }
    if (e == DRA_OK)
        e = dra_sched_sim_explain_claim(s, "default", "big", &a, &d);
    dra_arena_fini(&a);
    dra_sched_sim_free(s);
    return e;
}

static void test_failmem(void **state)
{
    char *text = dra_test_slurp(DRA_TEST_DATA "/sched/dractl/five-pods.yaml", NULL);
    dra_arena a;
    dra_doc **docs = NULL;
    size_t n = 0;
    long k;
    (void)state;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a, text, strlen(text), &docs, &n, NULL), DRA_OK);
    for (k = 0; k < 1000000; k++) {
        dra_failmem fm;
        dra_err e;
        dra_failmem_init(&fm, k);
        e = run(&fm.mem, docs, n);
        if (fm.live != 0)
            fail_msg("allocation %ld failing: %ld blocks left (%s)", k, fm.live, dra_strerror(e));
        if (!fm.failed) {
            assert_int_equal(e, DRA_OK);
            break;
        }
        if (e != DRA_ENOMEM && e != DRA_OK)
            fail_msg("allocation %ld failing: %s, want ENOMEM", k, dra_strerror(e));
    }
    print_message("%ld allocations failed in turn\n", k);
    dra_arena_fini(&a);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failmem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
