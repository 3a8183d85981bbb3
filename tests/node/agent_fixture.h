/* A store, drad's API server (graceful pod deletion on), the in-process
 * cluster and a node agent in a temporary directory, plus helpers that
 * create objects from YAML and wait for a pod to reach a state, for the
 * agent tests. Waits have generous limits: they bound a failing test,
 * they are not timing assertions. */
#ifndef DRA_TEST_AGENT_FIXTURE_H
#define DRA_TEST_AGENT_FIXTURE_H

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dra_test.h"

#include "dra/apiserver.h"
#include "dra/cluster.h"
#include "dra/node.h"
#include "dra/store.h"

typedef struct agent_env {
    char dir[160];
    dra_store *store;
    dra_apiserver *srv;
    dra_cluster *c;
    dra_node *node;
    dra_node_group *group;
    dra_node_opts o;
    char state[200], reg[200], cdi[200];
    const char *cdi_dirs[1];
} agent_env;

static inline void env_start_node(agent_env *e)
{
    dra_diag d;
    dra_diag_init(&d, NULL);
    if (dra_node_start(e->c, &e->o, NULL, &e->node, &d) != DRA_OK)
        fail_msg("node: %s", dra_diag_first(&d) ? dra_diag_first(&d) : "?");
    dra_diag_fini(&d);
    assert_int_equal(dra_node_group_add(e->group, e->node), DRA_OK);
}

static inline void env_stop_node(agent_env *e)
{
    dra_node_group_remove(e->group, e->node);
    dra_node_stop(e->node);
    e->node = NULL;
}

/* |base|: where the temporary directory goes (NULL: /tmp). Containers
 * have a private /tmp, so files they must see through host paths (a
 * fake driver root) cannot live under /tmp. */
static inline void env_open_in(agent_env *e, const char *base, const char *node_name)
{
    dra_diag d;
    dra_apiserver_opts ao;
    char db[200];
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "%s/dra-agent-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(e->dir));
    snprintf(db, sizeof db, "%s/state.db", e->dir);
    dra_diag_init(&d, NULL);
    assert_int_equal(dra_store_open(db, NULL, NULL, &e->store, &d), DRA_OK);
    memset(&ao, 0, sizeof ao);
    ao.store = e->store;
    ao.graceful_pods = 1;
    ao.gc_period_ms = 200;
    assert_int_equal(dra_apiserver_new(&ao, NULL, &e->srv, &d), DRA_OK);
    dra_diag_fini(&d);
    assert_non_null(e->c = dra_apiserver_cluster(e->srv));
    assert_int_equal(dra_node_group_new(NULL, &e->group), DRA_OK);
    dra_apiserver_set_log_source(e->srv, dra_node_log_source, e->group);
    snprintf(e->state, sizeof e->state, "%s/node", e->dir);
    snprintf(e->reg, sizeof e->reg, "%s/plugins_registry", e->dir);
    snprintf(e->cdi, sizeof e->cdi, "%s/cdi", e->dir);
    mkdir(e->cdi, 0755);
    e->cdi_dirs[0] = e->cdi;
    e->o.name = node_name;
    e->o.state_dir = e->state;
    e->o.registrar_dir = e->reg;
    e->o.cdi_dirs = e->cdi_dirs;
    e->o.n_cdi_dirs = 1;
    e->o.heartbeat_s = 1;
    e->o.backoff_initial_ms = 300;
    e->o.backoff_max_ms = 1200;
    e->o.prepare_timeout_ms = 5000;
}

static inline void env_open(agent_env *e, const char *node_name)
{
    env_open_in(e, NULL, node_name);
}

/* Kills what the agent's containers left (by the pids their shims
 * recorded), then stops everything and removes the directory. A shim
 * outlives its agent by design (restart safety), so one no state file
 * names as running yet would be left behind: every dra-shim whose
 * command line names the directory is ended too, by its pid from
 * /proc/PID/cmdline (its bwrap sandbox dies with it). */
static inline void env_close(agent_env *e)
{
    char cmd[1200];
    if (e->node)
        env_stop_node(e);
    snprintf(cmd, sizeof cmd,
             "for f in '%s'/node/containers/*/state; do [ -f \"$f\" ] || continue; "
             "p=$(sed -n 's/^pid=//p' \"$f\"); s=$(sed -n 's/^status=//p' \"$f\"); "
             "[ \"$s\" = running ] && [ \"$p\" -gt 1 ] 2>/dev/null && kill -9 \"$p\" 2>/dev/null; done; "
             "for f in /proc/[0-9]*/cmdline; do "
             "a=$(tr '\\0' '\\n' 2>/dev/null <\"$f\") || continue; "
             "case \"$(printf '%%s\\n' \"$a\" | head -n 1)\" in dra-shim|*/dra-shim) ;; *) continue ;; esac; "
             "case \"$a\" in *'%s/'*) p=${f#/proc/}; kill -9 \"${p%%/cmdline}\" 2>/dev/null ;; esac; done; "
             "sleep 0.2; rm -rf '%s'",
             e->dir, e->dir, e->dir);
    dra_apiserver_set_log_source(e->srv, NULL, NULL);
    dra_node_group_free(e->group);
    dra_cluster_free(e->c);
    dra_apiserver_free(e->srv);
    dra_store_close(e->store);
    assert_int_equal(system(cmd), 0);
}

/* Whether real containers can run here: a runtime with its state in
 * |probe_dir| (removed again) whose probe starts a sandbox. Prints why
 * not; the tests then skip (77). */
static inline int env_can_run(const char *probe_dir)
{
    dra_node_runtime *rt;
    dra_node_runtime_opts ro = {probe_dir, NULL, NULL};
    dra_diag d;
    int probe;
    dra_diag_init(&d, NULL);
    probe = dra_node_runtime_new(&ro, NULL, &rt, &d) == DRA_OK && dra_node_runtime_probe(rt, &d) == DRA_OK;
    if (!probe)
        printf("skipping: %s\n", dra_diag_first(&d) ? dra_diag_first(&d) : "no runtime");
    dra_node_runtime_free(rt);
    dra_diag_fini(&d);
    rmdir(probe_dir);
    return probe;
}

/* Creates every object of a YAML text (namespaced ones in "default"). */
static inline void env_apply(agent_env *e, const char *yaml)
{
    dra_arena a;
    dra_doc **docs;
    size_t n;
    dra_kstatus st;
    dra_arena_init(&a, NULL);
    assert_int_equal(dra_doc_parse_yaml(&a, yaml, strlen(yaml), &docs, &n, NULL), DRA_OK);
    for (size_t i = 0; i < n; i++) {
        const char *kind = dra_obj_str(docs[i], "kind");
        const dra_gvr *g = !strcmp(kind, "Pod")             ? &DRA_GVR_PODS
                           : !strcmp(kind, "ResourceClaim") ? &DRA_GVR_CLAIMS
                           : !strcmp(kind, "DeviceClass")   ? &DRA_GVR_CLASSES
                                                            : NULL;
        assert_non_null(g);
        memset(&st, 0, sizeof st);
        if (dra_cluster_create(e->c, g, !strcmp(kind, "DeviceClass") ? NULL : "default", docs[i], &a, NULL, &st))
            fail_msg("create %s: %s", kind, st.message);
    }
    dra_arena_fini(&a);
}

static inline dra_doc *env_pod(agent_env *e, dra_arena *a, const char *name)
{
    dra_doc *pod = NULL;
    if (dra_cluster_get(e->c, &DRA_GVR_PODS, "default", name, a, &pod, NULL) != DRA_OK)
        return NULL;
    return pod;
}

/* The first container status of |pod| (or of its init containers). */
static inline const dra_doc *ctr_status(const dra_doc *pod, int init)
{
    const dra_doc *st = dra_doc_get(pod, "status");
    const dra_doc *l = dra_doc_get(st, init ? "initContainerStatuses" : "containerStatuses");
    return l && l->kind == DRA_DOC_LIST && l->u.list.n ? l->u.list.items[0] : NULL;
}

static inline const char *cs_str(const dra_doc *cs, const char *dotted)
{
    return dra_obj_str(cs, dotted);
}

static inline int64_t cs_int(const dra_doc *cs, const char *key)
{
    const dra_doc *v = dra_doc_get(cs, key);
    return v && v->kind == DRA_DOC_INT ? v->u.i : -1;
}

static inline int cond_true(const dra_doc *pod, const char *type)
{
    const dra_doc *l = dra_doc_get(dra_doc_get(pod, "status"), "conditions");
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *t = dra_obj_str(l->u.list.items[i], "type");
        const char *s = dra_obj_str(l->u.list.items[i], "status");
        if (t && s && !strcmp(t, type))
            return !strcmp(s, "True");
    }
    return 0;
}

/* Polls the pod until |pred| holds (pod NULL when it is gone), up to
 * |limit_ms|. Returns the pod in |a| (or NULL). */
typedef int (*pod_pred)(const dra_doc *pod, void *ud);
static inline dra_doc *env_wait(agent_env *e, dra_arena *a, const char *name, pod_pred pred, void *ud,
                                int limit_ms, const char *what)
{
    for (int waited = 0;; waited += 50) {
        dra_doc *pod;
        dra_arena_reset(a);
        pod = env_pod(e, a, name);
        if (pred(pod, ud))
            return pod;
        if (waited > limit_ms) {
            dra_buf b;
            dra_buf_init(&b, NULL);
            if (pod)
                dra_doc_to_json(dra_doc_get(pod, "status"), 2, &b);
            fail_msg("pod %s: %s did not happen; status: %s", name, what, b.p ? b.p : "(gone)");
        }
        usleep(50000);
    }
}

static inline int is_phase(const dra_doc *pod, void *ud)
{
    const char *p = pod ? dra_obj_str(pod, "status.phase") : NULL;
    return p && !strcmp(p, ud);
}

static inline int is_running_ready(const dra_doc *pod, void *ud)
{
    (void)ud;
    return is_phase(pod, (void *)"Running") && cond_true(pod, "Ready");
}

static inline int is_gone(const dra_doc *pod, void *ud)
{
    (void)ud;
    return pod == NULL;
}

/* GET pods/NAME/log?QUERY through the handler: the status code, the
 * body in |out|. */
static inline int env_logs(agent_env *e, const char *name, const char *query, char *out, size_t size)
{
    dra_apiserver_req q;
    dra_apiserver_resp r;
    char path[256];
    int code;
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/log", name);
    memset(&q, 0, sizeof q);
    q.method = "GET";
    q.path = path;
    q.query = query;
    dra_apiserver_resp_init(&r, NULL);
    assert_int_equal(dra_apiserver_handle(e->srv, &q, &r), DRA_OK);
    code = r.code;
    snprintf(out, size, "%s", r.body.p ? r.body.p : "");
    dra_stream_close(r.stream);
    dra_apiserver_resp_fini(&r);
    return code;
}

#endif
