/* A store and an API server in a temporary directory, and a request
 * helper that returns the status code and the parsed body, for the
 * handler-level tests of src/apiserver. */
#ifndef DRA_TEST_API_FIXTURE_H
#define DRA_TEST_API_FIXTURE_H

#include "dra_test.h"

#include <time.h>
#include <unistd.h>

#include "dra/apiserver.h"
#include "dra/codec.h"
#include "dra/store.h"

typedef struct fx {
    char dir[128], db[160];
    dra_store *store;
    dra_apiserver *srv;
    dra_arena a;
    /* The last answer. */
    int code;
    char *body;
    char warning[512];
    dra_doc *doc;
} fx;

static inline void fx_open(fx *f, const dra_store_opts *so, int graceful)
{
    dra_diag d;
    dra_apiserver_opts o;
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/dra-api-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/state.db", f->dir);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_store_open(f->db, so, NULL, &f->store, &d), DRA_OK);
    memset(&o, 0, sizeof o);
    o.store = f->store;
    o.graceful_pods = graceful;
    o.gc_period_ms = 200;
    o.bookmark_ms = 300;
    if (dra_apiserver_new(&o, NULL, &f->srv, &d))
        fail_msg("server: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    dra_arena_init(&f->a, NULL);
}

static inline void fx_close(fx *f)
{
    char cmd[200];
    free(f->body);
    dra_apiserver_free(f->srv);
    dra_store_close(f->store);
    dra_arena_fini(&f->a);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

/* One request; |path| may carry "?query". Returns the code. */
static inline int fx_req_ct(fx *f, const char *method, const char *path,
                            const char *ct, const char *accept, const char *body,
                            size_t body_len)
{
    dra_apiserver_req q;
    dra_apiserver_resp r;
    char p[1024];
    char *qm;
    snprintf(p, sizeof p, "%s", path);
    qm = strchr(p, '?');
    if (qm)
        *qm++ = '\0';
    memset(&q, 0, sizeof q);
    q.method = method;
    q.path = p;
    q.query = qm;
    q.accept = accept ? accept : "application/json";
    q.content_type = body ? (ct ? ct : "application/json") : NULL;
    q.body = body;
    q.body_len = body_len;
    dra_apiserver_resp_init(&r, NULL);
    assert_int_equal(dra_apiserver_handle(f->srv, &q, &r), DRA_OK);
    assert_null(r.stream);
    free(f->body);
    f->body = strdup(r.body.p ? r.body.p : "");
    snprintf(f->warning, sizeof f->warning, "%s", r.warning);
    f->code = r.code;
    f->doc = NULL;
    if (*f->body == '{')
        dra_doc_parse_json(&f->a, f->body, strlen(f->body), &f->doc, NULL);
    dra_apiserver_resp_fini(&r);
    return f->code;
}

static inline int fx_req(fx *f, const char *method, const char *path,
                         const char *body)
{
    return fx_req_ct(f, method, path, NULL, NULL, body, body ? strlen(body) : 0);
}

/* The string at a dotted path of the last answer ("metadata.name"). */
static inline const char *fx_str(fx *f, const char *dotted)
{
    const dra_doc *d = f->doc;
    char buf[256], *save = NULL, *tok;
    snprintf(buf, sizeof buf, "%s", dotted);
    for (tok = strtok_r(buf, ".", &save); tok && d; tok = strtok_r(NULL, ".", &save))
        d = dra_doc_get(d, tok);
    return d && d->kind == DRA_DOC_STRING ? d->u.str.s : NULL;
}

static inline int64_t fx_int(fx *f, const char *dotted)
{
    const dra_doc *d = f->doc;
    char buf[256], *save = NULL, *tok;
    snprintf(buf, sizeof buf, "%s", dotted);
    for (tok = strtok_r(buf, ".", &save); tok && d; tok = strtok_r(NULL, ".", &save))
        d = dra_doc_get(d, tok);
    return d && d->kind == DRA_DOC_INT ? d->u.i : -1;
}

/* Number of items of a List answer. */
static inline size_t fx_items(fx *f)
{
    const dra_doc *it = f->doc ? dra_doc_get(f->doc, "items") : NULL;
    return it && it->kind == DRA_DOC_LIST ? it->u.list.n : (size_t)-1;
}

/* Waits (polling, up to 20 s) until GET |path| answers |code|. */
static inline int fx_wait_code(fx *f, const char *path, int code)
{
    for (int i = 0; i < 400; i++) {
        if (fx_req(f, "GET", path, NULL) == code)
            return 1;
        usleep(50 * 1000);
    }
    return 0;
}

#define FX_ASSERT_CODE(f, c)                                                     \
    do {                                                                         \
        if ((f)->code != (c))                                                    \
            fail_msg("expected %d, got %d: %s", (c), (f)->code, (f)->body);     \
    } while (0)

#endif
