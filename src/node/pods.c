/*
 * pods.c: the kubelet's pod workers for one node. The pod reflector
 * hands each pod bound to the node to its worker thread, which prepares
 * the pod's claims, runs its init containers then its containers,
 * restarts them per restartPolicy with CrashLoopBackOff (10 s doubling
 * to 5 min, reset after 10 min), writes the pod status, and on deletion
 * stops the containers (SIGTERM, the grace period, SIGKILL), unprepares
 * the claims and deletes the pod. STATE/pods/<uid>.json records which
 * container instances belong to the pod, so a restarted agent follows
 * them again instead of starting new ones.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "pod_int.h"

int64_t pod_now(void)
{
    return node_now_ns();
}

/* ---- the worker's view of the pod ----------------------------------------- */

static void ctr_close(ctr_state *c)
{
    dra_node_ctr_free(c->h);
    c->h = NULL;
}

/* Takes the containers of the (new) pod document, keeping what we know
 * about each by name. */
static dra_err take_containers(pod_state *ps)
{
    const dra_doc *init = dra_doc_at(ps->pod, "spec.initContainers");
    const dra_doc *app = dra_doc_at(ps->pod, "spec.containers");
    size_t ni = init && init->kind == DRA_DOC_LIST ? init->u.list.n : 0;
    size_t na = app && app->kind == DRA_DOC_LIST ? app->u.list.n : 0;
    ctr_state *v = dra_calloc(ps->n->mem, ni + na + 1, sizeof *v);
    if (!v)
        return DRA_ENOMEM;
    for (size_t i = 0; i < ni + na; i++) {
        const dra_doc *spec = i < ni ? init->u.list.items[i] : app->u.list.items[i - ni];
        const char *name = node_doc_str(spec, "name");
        ctr_state *c = &v[i];
        for (size_t j = 0; name && j < ps->nc; j++)
            if (strcmp(ps->c[j].name, name) == 0 && (j < ps->n_init) == (i < ni)) {
                *c = ps->c[j];
                ps->c[j].h = NULL; /* moved */
            }
        snprintf(c->name, sizeof c->name, "%s", name ? name : "");
        c->spec = spec;
        c->init = i < ni;
        c->sidecar = c->init && node_doc_str(spec, "restartPolicy") &&
                     strcmp(node_doc_str(spec, "restartPolicy"), "Always") == 0;
    }
    for (size_t j = 0; j < ps->nc; j++)
        ctr_close(&ps->c[j]);
    dra_free(ps->n->mem, ps->c);
    ps->c = v;
    ps->nc = ni + na;
    ps->n_init = ni;
    return DRA_OK;
}

/* Installs a new version of the pod from its JSON text. */
static dra_err take_pod(pod_state *ps, const char *json)
{
    dra_arena next;
    dra_doc *pod;
    const char *rp;
    dra_err e;
    dra_arena_init(&next, ps->n->mem);
    if (!(pod = node_parse(&next, json, strlen(json)))) {
        dra_arena_fini(&next);
        return DRA_EPARSE;
    }
    /* Container specs point into the document: swap both together. */
    {
        dra_arena old = ps->pa;
        ps->pa = next;
        ps->pod = pod;
        e = take_containers(ps);
        dra_arena_fini(&old);
    }
    ps->uid = dra_obj_uid(pod);
    ps->ns = dra_obj_namespace(pod);
    ps->name = dra_obj_name(pod);
    rp = dra_obj_str(pod, "spec.restartPolicy");
    ps->restart_policy = rp && (!strcmp(rp, "Never") || !strcmp(rp, "OnFailure")) ? rp : "Always";
    return e;
}

/* ---- what others may read (logs) ------------------------------------------ */

static void publish(pod_state *ps)
{
    pod_worker *w = ps->w;
    pod_ctr_info *info = dra_calloc(ps->n->mem, ps->nc + 1, sizeof *info);
    if (!info)
        return;
    for (size_t i = 0; i < ps->nc; i++) {
        const ctr_state *c = &ps->c[i];
        snprintf(info[i].name, sizeof info[i].name, "%s", c->name);
        snprintf(info[i].cur_id, sizeof info[i].cur_id, "%s", c->instances ? c->cur_id : "");
        info[i].restarts = c->instances > 1 ? c->instances - 1 : 0;
        info[i].has_last = c->instances > 1;
    }
    pthread_mutex_lock(&ps->n->mu);
    dra_free(ps->n->mem, w->info);
    w->info = info;
    w->n_info = ps->nc;
    snprintf(w->ns, sizeof w->ns, "%s", ps->ns);
    snprintf(w->name, sizeof w->name, "%s", ps->name);
    snprintf(w->log_dir, sizeof w->log_dir, "%s/%s_%s_%s", ps->n->logs_dir, ps->ns, ps->name, ps->uid);
    pthread_mutex_unlock(&ps->n->mu);
}

/* ---- the pod's state file --------------------------------------------------- */

static void state_path(const pod_state *ps, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s.json", ps->n->pods_dir, ps->w->uid);
}

static void save_state(pod_state *ps)
{
    dra_arena a;
    dra_err err = DRA_OK;
    dra_doc *root, *list;
    char path[4096], *text;
    dra_arena_init(&a, ps->n->mem);
    root = dra_doc_new_map(&a, 4);
    list = dra_doc_new_list(&a, ps->nc);
    node_set(&a, root, "pod", node_doc_copy(&a, ps->pod), &err);
    node_set(&a, root, "startTime", dra_doc_new_int(&a, ps->start_ns), &err);
    for (size_t i = 0; i < ps->nc; i++) {
        const ctr_state *c = &ps->c[i];
        dra_doc *m = dra_doc_new_map(&a, 8);
        node_set_str(&a, m, "name", c->name, &err);
        node_set(&a, m, "init", dra_doc_new_bool(&a, c->init), &err);
        node_set(&a, m, "instances", dra_doc_new_int(&a, c->instances), &err);
        node_set_str(&a, m, "curId", c->cur_id, &err);
        node_set_str(&a, m, "lastId", c->has_last ? c->last_id : "", &err);
        node_set(&a, m, "backoffMs", dra_doc_new_int(&a, c->backoff_ms), &err);
        node_set(&a, m, "backoffAt", dra_doc_new_int(&a, c->backoff_at_ns), &err);
        node_set(&a, m, "done", dra_doc_new_bool(&a, c->done), &err);
        node_push(&a, list, m, &err);
    }
    node_set(&a, root, "containers", list, &err);
    state_path(ps, path, sizeof path);
    if (!err && (text = node_to_json(ps->n->mem, root)) != NULL) {
        node_write_file(path, text, strlen(text));
        dra_free(ps->n->mem, text);
    }
    dra_arena_fini(&a);
}

/* Follows container |id| again; fills the status. */
static int adopt(pod_state *ps, const char *id, dra_node_ctr **h, dra_node_ctr_status *st)
{
    dra_node_ctr *c;
    if (!id[0] || dra_node_ctr_open(ps->n->rt, id, &c, NULL) != DRA_OK)
        return 0;
    if (dra_node_ctr_status_get(c, st) != DRA_OK) {
        dra_node_ctr_free(c);
        return 0;
    }
    if (h)
        *h = c;
    else
        dra_node_ctr_free(c);
    return 1;
}

static void load_container(pod_state *ps, ctr_state *c, const dra_doc *m)
{
    const dra_doc *dn = dra_doc_get(m, "done");
    const char *cur = node_doc_str(m, "curId"), *last = node_doc_str(m, "lastId");
    c->instances = (int)node_doc_int(m, "instances", 0);
    c->backoff_ms = node_doc_int(m, "backoffMs", 0);
    c->backoff_at_ns = node_doc_int(m, "backoffAt", 0);
    c->done = dn && dn->kind == DRA_DOC_BOOL && dn->u.b;
    snprintf(c->cur_id, sizeof c->cur_id, "%s", cur ? cur : "");
    snprintf(c->last_id, sizeof c->last_id, "%s", last ? last : "");
    c->has_last = last && last[0] && adopt(ps, c->last_id, NULL, &c->last);
    if (c->cur_id[0] && adopt(ps, c->cur_id, &c->h, &c->cur))
        c->has_cur = 1;
}

/* Reads STATE/pods/<uid>.json: the instances this pod had when the
 * agent last ran. With |pod_json| (an orphan) the saved pod is taken. */
static void load_state(pod_state *ps, char **pod_json)
{
    dra_arena a;
    char path[4096], *text;
    size_t len;
    const dra_doc *root, *list;
    state_path(ps, path, sizeof path);
    dra_arena_init(&a, ps->n->mem);
    if (node_read_file(&a, path, 64u << 20, &text, &len) != 0 || !(root = node_parse(&a, text, len))) {
        dra_arena_fini(&a);
        return;
    }
    if (pod_json && dra_doc_get(root, "pod"))
        *pod_json = node_to_json(ps->n->mem, dra_doc_get(root, "pod"));
    ps->start_ns = node_doc_int(root, "startTime", 0);
    list = dra_doc_get(root, "containers");
    if (pod_json && *pod_json && take_pod(ps, *pod_json) != DRA_OK) {
        dra_arena_fini(&a);
        return;
    }
    for (size_t i = 0; list && list->kind == DRA_DOC_LIST && i < list->u.list.n; i++) {
        const dra_doc *m = list->u.list.items[i], *in = dra_doc_get(m, "init");
        const char *name = node_doc_str(m, "name");
        int init = in && in->kind == DRA_DOC_BOOL && in->u.b;
        for (size_t j = 0; name && j < ps->nc; j++)
            if (strcmp(ps->c[j].name, name) == 0 && ps->c[j].init == init)
                load_container(ps, &ps->c[j], m);
    }
    dra_arena_fini(&a);
}

/* ---- starting containers ----------------------------------------------------- */

static void log_path(const pod_state *ps, const ctr_state *c, int restart, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s_%s_%s/%s/%d.log", ps->n->logs_dir, ps->ns, ps->name, ps->uid, c->name, restart);
}

static void waiting(ctr_state *c, const char *reason, const char *msg)
{
    snprintf(c->wait_reason, sizeof c->wait_reason, "%s", reason ? reason : "");
    snprintf(c->wait_msg, sizeof c->wait_msg, "%s", msg ? msg : "");
}

/* kubelet's backoff.Next: the first restart starts the entry at the
 * initial delay, later ones double it, up to the cap; an entry not
 * touched for twice the cap starts over. */
static void backoff_next(pod_state *ps, ctr_state *c, int64_t now)
{
    int64_t max = ps->n->o.backoff_max_ms;
    if (c->backoff_ms == 0 || (now - c->backoff_at_ns) / 1000000 > 2 * max)
        c->backoff_ms = ps->n->o.backoff_initial_ms;
    else
        c->backoff_ms = c->backoff_ms * 2 > max ? max : c->backoff_ms * 2;
    c->backoff_at_ns = now;
}

/* Go's time.Duration.String() for whole seconds ("10s", "1m20s", "5m0s"). */
static void fmt_duration(int64_t ms, char *buf, size_t size)
{
    int64_t s = ms / 1000;
    if (s >= 3600)
        snprintf(buf, size, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s / 60 % 60), (long long)(s % 60));
    else if (s >= 60)
        snprintf(buf, size, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
    else
        snprintf(buf, size, "%llds", (long long)s);
}

static void start_instance(pod_state *ps, ctr_state *c)
{
    dra_arena a;
    dra_node_ctr_config cfg;
    dra_diag d;
    const char *reason;
    char id[POD_ID_MAX], path[4096], msg[1024], dir[4096];
    int restart = c->instances;
    dra_err e;
    snprintf(id, sizeof id, "%s-%s-%d", ps->uid, c->name, restart);
    log_path(ps, c, restart, path, sizeof path);
    snprintf(dir, sizeof dir, "%s/%s_%s_%s/%s", ps->n->logs_dir, ps->ns, ps->name, ps->uid, c->name);
    node_mkdirs(dir);
    dra_arena_init(&a, ps->n->mem);
    dra_diag_init(&d, ps->n->mem);
    msg[0] = '\0';
    e = pod_ctr_config(ps, c, id, path, &a, &cfg, &reason, msg, sizeof msg);
    if (!e) {
        dra_node_ctr_remove(ps->n->rt, id); /* a leftover of a crash before it started */
        e = dra_node_ctr_start(ps->n->rt, &cfg, &c->h, &d);
        reason = e == DRA_EINVAL ? "CreateContainerError" : "StartError";
        node_errf(msg, sizeof msg, "%s", dra_diag_first(&d) ? dra_diag_first(&d) : dra_strerror(e));
    }
    if (e == DRA_EEXIST && adopt(ps, id, &c->h, &c->cur))
        e = DRA_OK; /* started before a restart of ours, not recorded */
    if (e == DRA_OK || e == DRA_EIO) {
        /* An instance exists: it runs, or it failed to start (StartError). */
        if (c->has_cur) {
            c->last = c->cur;
            snprintf(c->last_id, sizeof c->last_id, "%s", c->cur_id);
            c->has_last = 1;
        }
        c->instances = restart + 1;
        snprintf(c->cur_id, sizeof c->cur_id, "%s", id);
        c->has_cur = 1;
        waiting(c, NULL, NULL);
        if (e == DRA_OK) {
            dra_node_ctr_status_get(c->h, &c->cur);
            node_event(ps->n, ps->pod, "Normal", "Created", "Created container: %s", c->name);
            node_event(ps->n, ps->pod, "Normal", "Started", "Started container %s", c->name);
        } else {
            memset(&c->cur, 0, sizeof c->cur);
            c->cur.phase = DRA_NODE_CTR_FAILED;
            c->cur.exit_code = 128;
            c->cur.finished_ns = pod_now();
            memcpy(c->cur.message, msg, sizeof c->cur.message - 1);
            c->cur.message[sizeof c->cur.message - 1] = '\0';
            node_event(ps->n, ps->pod, "Warning", "Failed", "Error: %s", msg);
        }
        save_state(ps);
    } else {
        /* Not created: wait (CreateContainerError) and try again later. */
        waiting(c, reason, msg);
        backoff_next(ps, c, pod_now());
        c->restart_at_ns = pod_now() + c->backoff_ms * 1000000;
        node_event(ps->n, ps->pod, "Warning", "Failed", "Error: %s", msg);
    }
    dra_diag_fini(&d);
    dra_arena_fini(&a);
}

/* ---- one container's step ---------------------------------------------------- */

static int should_restart(const char *policy, const dra_node_ctr_status *st)
{
    int failed = st->phase != DRA_NODE_CTR_EXITED || st->exit_code != 0;
    return strcmp(policy, "Always") == 0 || (strcmp(policy, "OnFailure") == 0 && failed);
}

/* The container ended: keep it as it is (restartPolicy), or arrange its
 * restart now or after the back-off. */
static void on_ended(pod_state *ps, ctr_state *c, const char *policy, int64_t now)
{
    char d[32], msg[1024];
    ctr_close(c);
    if (!should_restart(policy, &c->cur)) {
        c->final = 1;
        return;
    }
    /* kubelet's doBackOff: in back-off while less than the current delay
     * has passed since the container finished. */
    if (c->backoff_ms && (now - c->cur.finished_ns) / 1000000 < c->backoff_ms) {
        c->restart_at_ns = c->cur.finished_ns + c->backoff_ms * 1000000;
        c->last = c->cur;
        snprintf(c->last_id, sizeof c->last_id, "%s", c->cur_id);
        c->has_last = 1;
        c->has_cur = 0;
        fmt_duration(c->backoff_ms, d, sizeof d);
        node_errf(msg, sizeof msg, "back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c->name, ps->name,
                 ps->ns, ps->uid);
        waiting(c, "CrashLoopBackOff", msg);
        node_event(ps->n, ps->pod, "Warning", "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)",
                   c->name, ps->name, ps->ns, ps->uid);
        return;
    }
    backoff_next(ps, c, now);
    c->restart_at_ns = 0;
    start_instance(ps, c);
}

/* Brings container |c| one step towards what |policy| wants. Returns 1
 * when it is running. */
static int ctr_step(pod_state *ps, ctr_state *c, const char *policy, int64_t now)
{
    if (c->h) {
        dra_node_ctr_status_get(c->h, &c->cur);
        if (c->cur.phase == DRA_NODE_CTR_RUNNING || c->cur.phase == DRA_NODE_CTR_CREATED)
            return 1;
        on_ended(ps, c, policy, now);
        return c->h != NULL;
    }
    if (c->final)
        return 0;
    if (c->has_cur) { /* a StartError, or found ended after a restart of ours */
        on_ended(ps, c, policy, now);
        return c->h != NULL;
    }
    if (c->restart_at_ns && now < c->restart_at_ns)
        return 0;
    if (c->instances > 0 || c->restart_at_ns)
        backoff_next(ps, c, now);
    c->restart_at_ns = 0;
    start_instance(ps, c);
    if (c->h)
        save_state(ps);
    return c->h != NULL;
}

/* Init containers in order, then the containers. */
static void run_containers(pod_state *ps, int64_t now)
{
    const char *init_policy = strcmp(ps->restart_policy, "Never") == 0 ? "Never" : "OnFailure";
    for (size_t i = 0; i < ps->n_init; i++) {
        ctr_state *c = &ps->c[i];
        if (c->sidecar) {
            if (ctr_step(ps, c, "Always", now))
                c->done = 1;
            if (!c->done)
                return;
            continue;
        }
        if (c->done)
            continue;
        ctr_step(ps, c, init_policy, now);
        if (c->has_cur && !c->h && c->cur.phase == DRA_NODE_CTR_EXITED && c->cur.exit_code == 0) {
            c->done = 1;
            save_state(ps);
            continue;
        }
        return;
    }
    for (size_t i = ps->n_init; i < ps->nc; i++)
        ctr_step(ps, &ps->c[i], ps->restart_policy, now);
}

/* ---- claims ----------------------------------------------------------------- */

static int prepare(pod_state *ps, int64_t now)
{
    dra_err e;
    if (ps->prepared)
        return 1;
    if (now < ps->prep_retry_ns)
        return 0;
    dra_arena_fini(&ps->ra);
    dra_arena_init(&ps->ra, ps->n->mem);
    e = node_claims_prepare(ps->n, ps->pod, &ps->ra, &ps->refs, &ps->n_refs, ps->prep_msg, sizeof ps->prep_msg);
    if (e == DRA_OK) {
        ps->prepared = 1;
        ps->prep_backoff_ms = 0;
        return 1;
    }
    if (e == DRA_ENOMEM)
        snprintf(ps->prep_msg, sizeof ps->prep_msg, "out of memory");
    node_event(ps->n, ps->pod, "Warning", "FailedPrepareDynamicResources", "Failed to prepare dynamic resources: %s",
               ps->prep_msg);
    /* The kubelet retries the pod sync with back-off. */
    ps->prep_backoff_ms = ps->prep_backoff_ms ? ps->prep_backoff_ms * 2 : 500;
    if (ps->prep_backoff_ms > 10000)
        ps->prep_backoff_ms = 10000;
    ps->prep_retry_ns = now + ps->prep_backoff_ms * 1000000;
    return 0;
}

/* ---- termination ---------------------------------------------------------------- */

static int64_t grace_seconds(const pod_state *ps)
{
    int64_t g = node_doc_int(ps->pod, "metadata.deletionGracePeriodSeconds", -1);
    if (g < 0)
        g = node_doc_int(ps->pod, "spec.terminationGracePeriodSeconds", 30);
    return g < 0 ? 30 : g;
}

static int any_running(pod_state *ps)
{
    int any = 0;
    for (size_t i = 0; i < ps->nc; i++) {
        ctr_state *c = &ps->c[i];
        if (!c->h)
            continue;
        dra_node_ctr_status_get(c->h, &c->cur);
        if (c->cur.phase == DRA_NODE_CTR_RUNNING || c->cur.phase == DRA_NODE_CTR_CREATED)
            any = 1;
        else
            ctr_close(c);
    }
    return any;
}

static void remove_all(pod_state *ps)
{
    char path[4096];
    for (size_t i = 0; i < ps->nc; i++) {
        ctr_state *c = &ps->c[i];
        ctr_close(c);
        for (int k = 0; k < c->instances; k++) {
            char id[POD_ID_MAX];
            snprintf(id, sizeof id, "%s-%s-%d", ps->uid, c->name, k);
            dra_node_ctr_remove(ps->n->rt, id);
        }
    }
    snprintf(path, sizeof path, "%s/%s_%s_%s", ps->n->logs_dir, ps->ns, ps->name, ps->uid);
    node_rmtree(path);
    state_path(ps, path, sizeof path);
    unlink(path);
}

/* Returns the next time to look again, or -1 when the pod is gone. */
static int64_t terminate(pod_state *ps, int gone, int64_t now)
{
    char msg[1024];
    dra_delete_opts del;
    dra_kstatus st;
    if (!ps->terminating) {
        ps->terminating = 1;
        ps->kill_deadline_ns = now + grace_seconds(ps) * 1000000000;
        for (size_t i = 0; i < ps->nc; i++)
            if (ps->c[i].h) {
                node_event(ps->n, ps->pod, "Normal", "Killing", "Stopping container %s", ps->c[i].name);
                dra_node_ctr_signal(ps->c[i].h, ps->kill_deadline_ns > now ? SIGTERM : SIGKILL);
            }
    }
    if (any_running(ps)) {
        if (now < ps->kill_deadline_ns)
            return ps->kill_deadline_ns;
        if (!ps->sigkill_sent)
            for (size_t i = 0; i < ps->nc; i++)
                if (ps->c[i].h)
                    dra_node_ctr_signal(ps->c[i].h, SIGKILL);
        ps->sigkill_sent = 1;
        return now + 200000000;
    }
    if (node_claims_release(ps->n, ps->uid, msg, sizeof msg) != DRA_OK) {
        node_event(ps->n, ps->pod, "Warning", "FailedUnprepareDynamicResources",
                   "Failed to unprepare dynamic resources: %s", msg);
        return now + 1000000000;
    }
    if (!gone) {
        for (size_t i = 0; i < ps->nc; i++)
            if (!ps->c[i].has_cur && !ps->c[i].has_last)
                waiting(&ps->c[i], "ContainerCreating", NULL);
        pod_write_status(ps, 0);
        memset(&del, 0, sizeof del);
        del.grace_period_set = 1;
        del.grace_period_seconds = 0;
        del.precondition_uid = ps->uid;
        memset(&st, 0, sizeof st);
        {
            dra_err e = dra_cluster_delete(ps->n->c, &DRA_GVR_PODS, ps->ns, ps->name, &del, NULL, NULL, &st);
            if (e && e != DRA_ENOTFOUND && e != DRA_ECONFLICT)
                return now + 1000000000;
        }
    }
    remove_all(ps);
    return -1;
}

/* Node shutdown: SIGTERM to every running container, SIGKILL to what
 * is left after the pod's grace period or |max_s|, whichever is shorter.
 * The containers' ends are found by the next agent on this state. */
static void shutdown_containers(pod_state *ps, int max_s)
{
    int64_t grace = grace_seconds(ps) < max_s ? grace_seconds(ps) : max_s;
    int64_t deadline = node_mono_ms() + grace * 1000;
    if (!any_running(ps))
        return;
    for (size_t i = 0; i < ps->nc; i++)
        if (ps->c[i].h)
            dra_node_ctr_signal(ps->c[i].h, grace > 0 ? SIGTERM : SIGKILL);
    for (size_t i = 0; i < ps->nc; i++) {
        int64_t left = deadline - node_mono_ms();
        if (ps->c[i].h && dra_node_ctr_wait(ps->c[i].h, left > 0 ? (int)left : 0, NULL) != DRA_OK) {
            dra_node_ctr_signal(ps->c[i].h, SIGKILL);
            dra_node_ctr_wait(ps->c[i].h, 5000, NULL);
        }
    }
}

/* ---- one sync --------------------------------------------------------------------- */

static int terminal(const char *phase)
{
    return phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
}

/* The next deadline of the running pod: a restart, a prepare retry. */
static int64_t next_deadline(const pod_state *ps, int64_t now)
{
    int64_t next = now + 10 * (int64_t)1000000000;
    if (!ps->prepared && ps->prep_retry_ns && ps->prep_retry_ns < next)
        next = ps->prep_retry_ns;
    for (size_t i = 0; i < ps->nc; i++)
        if (ps->c[i].restart_at_ns && ps->c[i].restart_at_ns < next)
            next = ps->c[i].restart_at_ns;
    return next;
}

static int64_t sync_pod(pod_state *ps, int gone)
{
    int64_t now = pod_now();
    const char *server_phase = dra_obj_str(ps->pod, "status.phase");
    char msg[512];
    if (!ps->start_ns)
        ps->start_ns = now;
    if (gone || dra_obj_str(ps->pod, "metadata.deletionTimestamp"))
        return terminate(ps, gone, now);
    if (terminal(ps->phase) || (terminal(server_phase) && !any_running(ps))) {
        /* Done for good: the claims can go, the pod stays for its logs. */
        if (node_claims_release(ps->n, ps->uid, msg, sizeof msg) != DRA_OK)
            return now + 1000000000;
        return 0;
    }
    if (!prepare(ps, now)) {
        for (size_t i = 0; i < ps->nc; i++)
            if (!ps->c[i].has_cur && !ps->c[i].has_last)
                waiting(&ps->c[i], "ContainerCreating", NULL);
    } else {
        run_containers(ps, now);
    }
    pod_write_status(ps, 0);
    publish(ps);
    if (terminal(ps->phase)) {
        node_claims_release(ps->n, ps->uid, msg, sizeof msg);
        save_state(ps);
    }
    return next_deadline(ps, now);
}

/* ---- the thread ----------------------------------------------------------------- */

/* Waits for news: the pod changed, a container ended, or |deadline|. */
static void wait_news(pod_state *ps, int64_t deadline)
{
    struct pollfd p[65];
    int np = 0, timeout;
    int64_t now = pod_now();
    p[np++] = (struct pollfd){ps->w->wake_fd, POLLIN, 0};
    for (size_t i = 0; i < ps->nc && np < 65; i++) {
        int fd = ps->c[i].h ? dra_node_ctr_fd(ps->c[i].h) : -1;
        if (fd >= 0)
            p[np++] = (struct pollfd){fd, POLLIN, 0};
    }
    /* Without a pidfd (old kernels, valgrind) the status is polled. */
    timeout = deadline <= 0 ? 1000 : (int)((deadline - now) / 1000000);
    if (timeout > 1000)
        timeout = 1000;
    if (timeout < 0)
        timeout = 0;
    if (poll(p, (nfds_t)np, timeout) > 0 && p[0].revents) {
        uint64_t v;
        if (read(ps->w->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
            return;
    }
}

static void *pod_main(void *arg)
{
    pod_worker *w = arg;
    dra_node *n = w->n;
    pod_state ps;
    char *json = NULL;
    int gone = 0, stop = 0, loaded = 0, shutdown_s = -1;
    int64_t deadline = 0;
    uint64_t gen = 0, seen_gen = 0;
    memset(&ps, 0, sizeof ps);
    ps.w = w;
    ps.n = n;
    dra_arena_init(&ps.pa, n->mem);
    dra_arena_init(&ps.ra, n->mem);
    for (;;) {
        pthread_mutex_lock(&n->mu);
        dra_free(n->mem, json);
        json = w->json;
        w->json = NULL;
        gone = w->gone;
        stop = w->stop;
        shutdown_s = n->shutdown_s;
        gen = n->plugin_gen;
        pthread_mutex_unlock(&n->mu);
        /* A plugin (re-)registered: a waiting prepare retries now. */
        if (gen != seen_gen) {
            seen_gen = gen;
            ps.prep_retry_ns = 0;
        }
        if (stop) {
            if (shutdown_s >= 0 && ps.pod)
                shutdown_containers(&ps, shutdown_s);
            break;
        }
        if (json && take_pod(&ps, json) != DRA_OK && !ps.pod)
            break;
        if (!loaded) {
            char *saved = NULL;
            load_state(&ps, ps.pod ? NULL : &saved);
            dra_free(n->mem, saved);
            loaded = 1;
            if (!ps.pod)
                break; /* an orphan without a saved pod: nothing to do */
            publish(&ps);
        }
        deadline = sync_pod(&ps, gone);
        if (deadline < 0)
            break;
        wait_news(&ps, deadline);
    }
    dra_free(n->mem, json);
    for (size_t i = 0; i < ps.nc; i++)
        ctr_close(&ps.c[i]);
    dra_free(n->mem, ps.c);
    dra_free(n->mem, ps.last_written);
    dra_arena_fini(&ps.ra);
    dra_arena_fini(&ps.pa);
    pthread_mutex_lock(&n->mu);
    w->finished = 1;
    pthread_mutex_unlock(&n->mu);
    node_wake(n->wake_fd);
    return NULL;
}

/* ---- workers and the watch -------------------------------------------------------- */

static void worker_free(dra_node *n, pod_worker *w)
{
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    dra_free(n->mem, w->json);
    dra_free(n->mem, w->info);
    dra_free(n->mem, w);
}

/* A worker for |uid| (created and started when missing). Called with
 * n->mu held. */
static pod_worker *worker_for(dra_node *n, const char *uid)
{
    pod_worker *w = dra_map_get(&n->pods, uid, strlen(uid));
    if (w || n->stop)
        return w;
    if (!(w = dra_calloc(n->mem, 1, sizeof *w)))
        return NULL;
    w->n = n;
    snprintf(w->uid, sizeof w->uid, "%s", uid);
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0 || dra_map_put(&n->pods, w->uid, strlen(w->uid), w) != DRA_OK) {
        worker_free(n, w);
        return NULL;
    }
    if (pthread_create(&w->th, NULL, pod_main, w) != 0) {
        dra_map_del(&n->pods, w->uid, strlen(w->uid));
        worker_free(n, w);
        return NULL;
    }
    w->started = 1;
    return w;
}

void node_pods_on_event(void *ud, dra_watch_type type, const dra_doc *obj)
{
    dra_node *n = ud;
    const char *uid = dra_obj_uid(obj);
    char *json;
    pod_worker *w;
    if (!uid || strlen(uid) >= 64)
        return;
    json = type == DRA_WATCH_DELETED ? NULL : node_to_json(n->mem, obj);
    pthread_mutex_lock(&n->mu);
    w = type == DRA_WATCH_DELETED ? dra_map_get(&n->pods, uid, strlen(uid)) : worker_for(n, uid);
    if (w && type == DRA_WATCH_DELETED) {
        w->gone = 1;
    } else if (w && json) {
        dra_free(n->mem, w->json);
        w->json = json;
        json = NULL;
    }
    /* Under the lock: once it is released, housekeeping may take a
     * finished worker out of the map, close its eventfd (whose number
     * the next open may reuse) and free it. */
    if (w)
        node_wake(w->wake_fd);
    pthread_mutex_unlock(&n->mu);
    dra_free(n->mem, json);
}

void node_pods_wake_all(dra_node *n)
{
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < n->pods.n; i++)
        if (n->pods.entries[i].key)
            node_wake(((pod_worker *)n->pods.entries[i].val)->wake_fd);
    pthread_mutex_unlock(&n->mu);
}

void node_pods_on_synced(void *ud)
{
    dra_node *n = ud;
    pthread_mutex_lock(&n->mu);
    n->synced = 1;
    pthread_mutex_unlock(&n->mu);
    node_wake(n->wake_fd);
}

/* Pods with a state file but no worker after the first sync were
 * deleted while we were away: their workers stop what they left. */
static void adopt_orphans(dra_node *n)
{
    DIR *dp = opendir(n->pods_dir);
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL) {
        char uid[64];
        size_t len = strlen(de->d_name);
        pod_worker *w;
        if (len < 6 || len - 5 >= sizeof uid || strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        memcpy(uid, de->d_name, len - 5);
        uid[len - 5] = '\0';
        pthread_mutex_lock(&n->mu);
        if (!dra_map_get(&n->pods, uid, strlen(uid)) && (w = worker_for(n, uid)) != NULL)
            w->gone = 1;
        pthread_mutex_unlock(&n->mu);
    }
    if (dp)
        closedir(dp);
}

void node_pods_housekeeping(dra_node *n)
{
    pod_worker *done[64];
    size_t nd = 0;
    int orphans = 0;
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < n->pods.n && nd < 64; i++) {
        pod_worker *w = n->pods.entries[i].val;
        if (n->pods.entries[i].key && w->finished) {
            done[nd++] = w;
            dra_map_del(&n->pods, w->uid, strlen(w->uid));
        }
    }
    if (n->synced && !n->orphans_done) {
        n->orphans_done = 1;
        orphans = 1;
    }
    pthread_mutex_unlock(&n->mu);
    for (size_t i = 0; i < nd; i++) {
        pthread_join(done[i]->th, NULL);
        worker_free(n, done[i]);
    }
    if (orphans) {
        adopt_orphans(n);
        node_claims_gc(n);
    }
}

void node_pods_stop_all(dra_node *n)
{
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < n->pods.n; i++)
        if (n->pods.entries[i].key) {
            pod_worker *w = n->pods.entries[i].val;
            w->stop = 1;
            node_wake(w->wake_fd);
        }
    pthread_mutex_unlock(&n->mu);
    for (size_t i = 0; i < n->pods.n; i++) {
        pod_worker *w = n->pods.entries[i].val;
        if (!n->pods.entries[i].key)
            continue;
        if (w->started)
            pthread_join(w->th, NULL);
        worker_free(n, w);
    }
    dra_map_fini(&n->pods);
}

/* ---- logs ------------------------------------------------------------------------- */

typedef struct follow_ctx {
    dra_node *n;
    char id[POD_ID_MAX];
    const dra_node_log_opts *user;
} follow_ctx;

static int instance_done(void *ud)
{
    follow_ctx *f = ud;
    dra_node_ctr_status st;
    dra_node_ctr *c;
    int done = 1;
    if (dra_node_ctr_open(f->n->rt, f->id, &c, NULL) == DRA_OK) {
        done = dra_node_ctr_status_get(c, &st) != DRA_OK ||
               (st.phase != DRA_NODE_CTR_RUNNING && st.phase != DRA_NODE_CTR_CREATED);
        dra_node_ctr_free(c);
    }
    return done || (f->user && f->user->done && f->user->done(f->user->done_ud));
}

dra_err dra_node_logs(dra_node *n, const char *pod_uid, const char *container,
                      int previous, const dra_node_log_opts *opts,
                      int (*write)(void *ud, const char *p, size_t n),
                      void *ud, dra_kstatus *st)
{
    pod_worker *w;
    pod_ctr_info ci;
    char path[4700], pod_name[254];
    dra_node_log_opts o;
    follow_ctx f;
    int found = 0, count = 0;
    memset(&o, 0, sizeof o);
    o.tail_lines = -1;
    if (opts)
        o = *opts;
    pthread_mutex_lock(&n->mu);
    w = dra_map_get(&n->pods, pod_uid, strlen(pod_uid));
    for (size_t i = 0; w && i < w->n_info; i++) {
        if (container ? strcmp(w->info[i].name, container) == 0 : (count++ == 0)) {
            ci = w->info[i];
            found = 1;
        }
    }
    if (w) {
        snprintf(pod_name, sizeof pod_name, "%s", w->name);
        snprintf(path, sizeof path, "%s/%s/", w->log_dir, found ? ci.name : "");
    }
    pthread_mutex_unlock(&n->mu);
    if (st)
        memset(st, 0, sizeof *st);
    if (!w) {
        if (st)
            *st = (dra_kstatus){404, "NotFound", "the pod is not running on this node"};
        return DRA_ENOTFOUND;
    }
    if (!found || (!container && count > 1)) {
        if (st) {
            st->code = 400;
            snprintf(st->reason, sizeof st->reason, "BadRequest");
            snprintf(st->message, sizeof st->message, "container %s is not valid for pod %s",
                     container ? container : "", pod_name);
        }
        return DRA_EINVAL;
    }
    if ((previous && !ci.has_last) || (!previous && !ci.cur_id[0])) {
        if (st) {
            st->code = 400;
            snprintf(st->reason, sizeof st->reason, "BadRequest");
            if (previous)
                snprintf(st->message, sizeof st->message, "previous terminated container \"%s\" in pod \"%s\" not found",
                         ci.name, pod_name);
            else
                snprintf(st->message, sizeof st->message,
                         "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating", ci.name, pod_name);
        }
        return DRA_EINVAL;
    }
    snprintf(path + strlen(path), sizeof path - strlen(path), "%d.log", previous ? ci.restarts - 1 : ci.restarts);
    if (o.follow && !previous) {
        f.n = n;
        snprintf(f.id, sizeof f.id, "%s", ci.cur_id);
        f.user = opts;
        o.done = instance_done;
        o.done_ud = &f;
    } else {
        o.follow = 0;
    }
    return dra_node_log_read(path, &o, write, ud);
}

int dra_node_has_pod(dra_node *n, const char *pod_uid)
{
    int has;
    pthread_mutex_lock(&n->mu);
    has = dra_map_get(&n->pods, pod_uid, strlen(pod_uid)) != NULL;
    pthread_mutex_unlock(&n->mu);
    return has;
}
