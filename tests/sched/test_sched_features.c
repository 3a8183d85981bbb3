/* The scheduler's behaviours as data: every YAML file in tests/data/sched is a
 * snapshot (objects) plus one `kind: SchedTest` document saying which
 * node each pod gets, with which devices per pod claim, or which message
 * says why not; claims can be explained too. One test per file. */
#include <dirent.h>

#include "sched_test.h"

static const char *dstr(const dra_doc *m, const char *k)
{
    const dra_doc *v = dra_doc_get(m, k);
    return v && v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
}

static void check_pod(dra_sched_sim *s, const dra_doc *e, dra_arena *a, const char *file)
{
    const char *pod = dstr(e, "pod"), *want = dstr(e, "node"), *msg = dstr(e, "message");
    const dra_doc *devs = dra_doc_get(e, "devices");
    dra_sched_decision d;
    const char *got = sim_sched(s, pod, a, &d);
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want)))
        fail_msg("%s: pod %s: got node %s, want %s (%s)", file, pod, got ? got : "none",
                 want ? want : "none", d.message ? d.message : "");
    if (msg && (!d.message || !strstr(d.message, msg)))
        fail_msg("%s: pod %s: message \"%s\" lacks \"%s\"", file, pod,
                 d.message ? d.message : "(none)", msg);
    for (size_t i = 0; devs && devs->kind == DRA_DOC_MAP && i < devs->u.map.n; i++) {
        const dra_doc *v = devs->u.map.m[i].val;
        const char *have = claim_devices(&d, devs->u.map.m[i].key);
        const char *expect = v->kind == DRA_DOC_STRING ? v->u.str.s : NULL;
        if ((have == NULL || !*have) != (expect == NULL) || (have && expect && strcmp(have, expect)))
            fail_msg("%s: pod %s, claim %s: devices \"%s\", want \"%s\"", file, pod,
                     devs->u.map.m[i].key, have ? have : "(none)", expect ? expect : "(none)");
    }
}

static void check_claim(dra_sched_sim *s, const dra_doc *e, dra_arena *a, const char *file)
{
    const char *claim = dstr(e, "claim"), *msg = dstr(e, "message");
    dra_sched_decision d;
    assert_int_equal(dra_sched_sim_explain_claim(s, "default", claim, a, &d), DRA_OK);
    if (msg && (!d.message || !strstr(d.message, msg)))
        fail_msg("%s: claim %s: message \"%s\" lacks \"%s\"", file, claim,
                 d.message ? d.message : "(none)", msg);
}

static void run_file(void **state)
{
    const char *path = *state, *file = strrchr(path, '/') + 1;
    char *text = dra_test_slurp(path, NULL);
    dra_arena a;
    dra_doc **docs = NULL, *test = NULL;
    size_t n = 0;
    dra_diag d;
    dra_sched_score score = DRA_SCHED_LEAST_ALLOCATED;
    dra_sched_sim *s;
    const dra_doc *exp;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, text, strlen(text), &docs, &n, &d) ||
        dra_doc_flatten_lists(&a, &docs, &n))
        fail_msg("%s: %s", file, dra_diag_first(&d) ? dra_diag_first(&d) : "parse error");
    for (size_t i = 0; i < n; i++)
        if (dstr(docs[i], "kind") && !strcmp(dstr(docs[i], "kind"), "SchedTest"))
            test = docs[i];
    if (!test)
        fail_msg("%s: no SchedTest document", file);
    if (dstr(test, "score") && dra_sched_score_parse(dstr(test, "score"), &score))
        fail_msg("%s: bad score", file);
    s = sim_new(score);
    for (size_t i = 0; i < n; i++)
        if (docs[i] != test && dra_sched_sim_add(s, docs[i], &d))
            fail_msg("%s: object #%zu: %s", file, i, dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    exp = dra_doc_get(test, "expect");
    for (size_t i = 0; exp && exp->kind == DRA_DOC_LIST && i < exp->u.list.n; i++) {
        const dra_doc *e = exp->u.list.items[i];
        if (dstr(e, "pod"))
            check_pod(s, e, &a, file);
        else if (dstr(e, "claim"))
            check_claim(s, e, &a, file);
    }
    dra_sched_sim_free(s);
    dra_diag_fini(&d);
    dra_arena_fini(&a);
    free(text);
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(void)
{
    const char *dir = DRA_TEST_DATA "/sched";
    DIR *dp = opendir(dir);
    struct dirent *e;
    char *paths[256];
    struct CMUnitTest tests[256];
    size_t n = 0;
    int rc;
    if (!dp) {
        fprintf(stderr, "cannot open %s\n", dir);
        return 1;
    }
    while ((e = readdir(dp)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
            paths[n] = malloc(strlen(dir) + len + 2);
            sprintf(paths[n], "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(dp);
    qsort(paths, n, sizeof *paths, cmp_name);
    for (size_t i = 0; i < n; i++) {
        memset(&tests[i], 0, sizeof tests[i]);
        tests[i].name = strrchr(paths[i], '/') + 1;
        tests[i].test_func = run_file;
        tests[i].initial_state = paths[i];
    }
    rc = _cmocka_run_group_tests("sched features", tests, n, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    return rc;
}
