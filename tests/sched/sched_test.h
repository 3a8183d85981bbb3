/* Helpers shared by the scheduler tests: snapshots (dra_sched_sim) and
 * cores loaded from YAML text and files. */
#ifndef SCHED_TEST_H
#define SCHED_TEST_H

#include "dra_test.h"

#include "dra/codec.h"
#include "dra/sched.h"

/* Adds every object of the YAML stream |text| to |s|; fails the test on
 * a parse or decode error. */
static inline void sim_add_yaml(dra_sched_sim *s, const char *text)
{
    dra_arena a;
    dra_doc **docs = NULL;
    size_t n = 0;
    dra_diag d;
    dra_arena_init(&a, NULL);
    dra_diag_init(&d, NULL);
    if (dra_doc_parse_yaml(&a, text, strlen(text), &docs, &n, &d) ||
        dra_doc_flatten_lists(&a, &docs, &n))
        fail_msg("yaml: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    for (size_t i = 0; i < n; i++)
        if (dra_sched_sim_add(s, docs[i], &d))
            fail_msg("add #%zu: %s", i, dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

static inline void sim_add_file(dra_sched_sim *s, const char *path)
{
    char *text = dra_test_slurp(path, NULL);
    sim_add_yaml(s, text);
    free(text);
}

static inline dra_sched_sim *sim_new(dra_sched_score score)
{
    dra_sched_opts o;
    dra_sched_sim *s = NULL;
    memset(&o, 0, sizeof o);
    o.score = score;
    assert_int_equal(dra_sched_sim_new(&o, &s), DRA_OK);
    return s;
}

/* Schedules |name| in namespace default; returns the node or NULL. The
 * decision's strings live in |a|. */
static inline const char *sim_sched(dra_sched_sim *s, const char *name, dra_arena *a,
                                    dra_sched_decision *out)
{
    assert_int_equal(dra_sched_sim_schedule(s, "default", name, a, out), DRA_OK);
    return out->scheduled ? out->node : NULL;
}

/* Schedules |name| and checks it lands on |node| (NULL: nowhere). */
#define assert_sched(s, name, a, d, node)                                                 \
    do {                                                                                  \
        const char *got_ = sim_sched((s), (name), (a), (d));                              \
        const char *want_ = (node);                                                       \
        if ((got_ == NULL) != (want_ == NULL) || (got_ && strcmp(got_, want_)))           \
            fail_msg("pod %s: got node %s, want %s (%s)", (name), got_ ? got_ : "none",   \
                     want_ ? want_ : "none", (d)->message ? (d)->message : "");           \
    } while (0)

static inline const char *claim_devices(const dra_sched_decision *d, const char *pod_claim)
{
    for (size_t i = 0; i < d->nclaims; i++)
        if (!strcmp(d->claims[i].pod_claim, pod_claim))
            return d->claims[i].devices;
    return NULL;
}

#define assert_contains(hay, needle)                                                  \
    do {                                                                              \
        const char *h_ = (hay);                                                       \
        if (!h_ || !strstr(h_, (needle)))                                             \
            fail_msg("expected \"%s\" in \"%s\"", (needle), h_ ? h_ : "(null)");      \
    } while (0)

#endif
