/*
 * podstatus.c: the pod status the kubelet owns, computed from the
 * worker's view of the pod: phase (kubelet's getPhase), the conditions
 * PodReadyToStartContainers, Initialized, ContainersReady, Ready and
 * PodScheduled, hostIP(s), podIP(s), startTime, container statuses
 * (state, lastState, ready, started, restartCount, image, imageID,
 * containerID) and qosClass. It is written through the status
 * subresource over the pod's latest version, keeping what others own
 * (resourceClaimStatuses, nominatedNodeName, other conditions), and
 * only when it changed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "pod_int.h"

static int running(const ctr_state *c)
{
    return c->h && c->has_cur && (c->cur.phase == DRA_NODE_CTR_RUNNING || c->cur.phase == DRA_NODE_CTR_CREATED);
}

static int ended(const ctr_state *c)
{
    return c->has_cur && !running(c);
}

/* Init containers not done yet; |failed| when one ended for good. */
static int init_pending(const pod_state *ps, int *failed)
{
    int pending = 0;
    *failed = 0;
    for (size_t i = 0; i < ps->n_init; i++) {
        const ctr_state *c = &ps->c[i];
        if (c->done)
            continue;
        pending = 1;
        if (c->final && ended(c) && c->cur.exit_code != 0)
            *failed = 1;
    }
    return pending;
}

const char *pod_phase(const pod_state *ps)
{
    int failed, run = 0, waiting = 0, stopped = 0, succeeded = 0;
    size_t napp = ps->nc - ps->n_init;
    int pending = init_pending(ps, &failed);
    if (failed && strcmp(ps->restart_policy, "Never") == 0)
        return "Failed";
    if (pending)
        return "Pending";
    for (size_t i = ps->n_init; i < ps->nc; i++) {
        const ctr_state *c = &ps->c[i];
        if (running(c))
            run++;
        else if (ended(c)) {
            stopped++;
            succeeded += c->cur.exit_code == 0;
        } else if (c->has_last)
            stopped++;
        else
            waiting++;
    }
    if (waiting > 0)
        return "Pending";
    if (run > 0)
        return "Running";
    if (stopped == (int)napp && napp > 0) {
        if (strcmp(ps->restart_policy, "Always") == 0)
            return "Running";
        if (stopped == succeeded)
            return "Succeeded";
        if (strcmp(ps->restart_policy, "Never") == 0)
            return "Failed";
        return "Running";
    }
    return "Pending";
}

/* ---- building the document ------------------------------------------------ */

typedef struct bld {
    dra_arena *a;
    dra_err err;
    const dra_doc *old; /* the server's status */
    char now[48];
} bld;

static dra_doc *map(bld *b)
{
    dra_doc *m = dra_doc_new_map(b->a, 4);
    if (!m)
        b->err = DRA_ENOMEM;
    return m;
}

static void put(bld *b, dra_doc *m, const char *k, dra_doc *v)
{
    node_set(b->a, m, k, v, &b->err);
}

static void puts_(bld *b, dra_doc *m, const char *k, const char *v)
{
    node_set_str(b->a, m, k, v, &b->err);
}

static void put_time(bld *b, dra_doc *m, const char *k, int64_t ns)
{
    char t[48];
    node_fmt_time(ns, 0, t, sizeof t);
    puts_(b, m, k, t);
}

static const char *ctr_id(bld *b, const char *id)
{
    return dra_arena_sprintf(b->a, "bwrap://%s", id);
}

static dra_doc *terminated(bld *b, const dra_node_ctr_status *st, const char *id)
{
    dra_doc *t = map(b);
    const char *reason = "Error", *msg = NULL;
    int code = st->exit_code;
    if (st->phase == DRA_NODE_CTR_FAILED) {
        reason = "StartError";
        msg = st->message;
        code = 128;
    } else if (st->phase == DRA_NODE_CTR_LOST) {
        reason = "ContainerStatusUnknown";
        msg = "The container could not be located when the pod was terminated";
        code = 137;
    } else if (code == 0) {
        reason = "Completed";
    }
    put(b, t, "exitCode", dra_doc_new_int(b->a, code));
    puts_(b, t, "reason", reason);
    if (msg && msg[0])
        puts_(b, t, "message", msg);
    put_time(b, t, "startedAt", st->phase == DRA_NODE_CTR_FAILED ? 0 : st->started_ns);
    put_time(b, t, "finishedAt", st->finished_ns ? st->finished_ns : pod_now());
    puts_(b, t, "containerID", ctr_id(b, id));
    return t;
}

static dra_doc *state_of(bld *b, const pod_state *ps, const ctr_state *c, int app)
{
    dra_doc *st = map(b), *inner = map(b);
    if (c->h && c->has_cur && !ended(c)) {
        put_time(b, inner, "startedAt", c->cur.started_ns);
        put(b, st, "running", inner);
    } else if (ended(c)) {
        put(b, st, "terminated", terminated(b, &c->cur, c->cur_id));
    } else {
        const char *reason = c->wait_reason[0] ? c->wait_reason : "ContainerCreating";
        /* App containers wait for the init containers as PodInitializing. */
        if (app && !c->wait_reason[0] && ps->n_init && ps->prepared)
            reason = "PodInitializing";
        puts_(b, inner, "reason", reason);
        if (c->wait_msg[0])
            puts_(b, inner, "message", c->wait_msg);
        put(b, st, "waiting", inner);
    }
    return st;
}

static dra_doc *ctr_status(bld *b, const pod_state *ps, const ctr_state *c, int app)
{
    dra_doc *m = map(b), *last = map(b);
    const char *image = node_doc_str(c->spec, "image");
    int ready = running(c);
    puts_(b, m, "name", c->name);
    put(b, m, "state", state_of(b, ps, c, app));
    if (c->has_last)
        put(b, last, "terminated", terminated(b, &c->last, c->last_id));
    put(b, m, "lastState", last);
    put(b, m, "ready", dra_doc_new_bool(b->a, ready));
    put(b, m, "restartCount", dra_doc_new_int(b->a, c->instances > 1 ? c->instances - 1 : 0));
    puts_(b, m, "image", image ? image : "");
    /* Images are not pulled: there is no image digest to report. */
    puts_(b, m, "imageID", "");
    if (c->cur_id[0] && (c->has_cur || c->h))
        puts_(b, m, "containerID", ctr_id(b, c->cur_id));
    put(b, m, "started", dra_doc_new_bool(b->a, ready));
    return m;
}

/* The old condition of |type| in the server's status, or NULL. */
static const dra_doc *old_cond(const bld *b, const char *type)
{
    const dra_doc *l = dra_doc_get(b->old, "conditions");
    for (size_t i = 0; l && l->kind == DRA_DOC_LIST && i < l->u.list.n; i++) {
        const char *t = node_doc_str(l->u.list.items[i], "type");
        if (t && strcmp(t, type) == 0)
            return l->u.list.items[i];
    }
    return NULL;
}

static void cond(bld *b, dra_doc *list, const char *type, int ok, const char *reason, const char *msg)
{
    dra_doc *m = map(b);
    const dra_doc *o = old_cond(b, type);
    const char *was = node_doc_str(o, "status"), *since = node_doc_str(o, "lastTransitionTime");
    const char *status = ok ? "True" : "False";
    puts_(b, m, "type", type);
    puts_(b, m, "status", status);
    put(b, m, "lastProbeTime", dra_doc_new_null(b->a));
    puts_(b, m, "lastTransitionTime", was && since && strcmp(was, status) == 0 ? since : b->now);
    if (reason)
        puts_(b, m, "reason", reason);
    if (msg)
        puts_(b, m, "message", msg);
    node_push(b->a, list, m, &b->err);
}

/* "containers with unready status: [a b]" for containers failing |ok|. */
static char *not_ok(bld *b, const pod_state *ps, size_t from, size_t to, int init, const char *what)
{
    dra_buf s;
    char *out;
    int any = 0;
    dra_buf_init(&s, NULL);
    dra_buf_printf(&s, "containers with %s status: [", what);
    for (size_t i = from; i < to; i++) {
        const ctr_state *c = &ps->c[i];
        if (init ? c->done : running(c))
            continue;
        dra_buf_printf(&s, "%s%s", any ? " " : "", c->name);
        any = 1;
    }
    dra_buf_putc(&s, ']');
    out = any && !s.oom ? dra_arena_strdup(b->a, s.p) : NULL;
    dra_buf_fini(&s);
    return out;
}

static void conditions(bld *b, const pod_state *ps, dra_doc *st, const char *phase)
{
    dra_doc *l = dra_doc_new_list(b->a, 6);
    const dra_doc *old = dra_doc_get(b->old, "conditions");
    char *uninit = not_ok(b, ps, 0, ps->n_init, 1, "incomplete");
    char *unready = not_ok(b, ps, ps->n_init, ps->nc, 0, "unready");
    int done = strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0;
    const char *rreason = done ? "PodCompleted" : "ContainersNotReady";
    if (!l)
        b->err = DRA_ENOMEM;
    cond(b, l, "PodReadyToStartContainers", ps->prepared && !done, NULL, NULL);
    cond(b, l, "Initialized", !uninit, uninit ? "ContainersNotInitialized" : NULL, uninit);
    cond(b, l, "Ready", !unready && !done, unready || done ? rreason : NULL, done ? NULL : unready);
    cond(b, l, "ContainersReady", !unready && !done, unready || done ? rreason : NULL, done ? NULL : unready);
    if (!old_cond(b, "PodScheduled"))
        cond(b, l, "PodScheduled", 1, NULL, NULL);
    /* Conditions others own (PodScheduled from the scheduler, ...) stay. */
    for (size_t i = 0; old && old->kind == DRA_DOC_LIST && i < old->u.list.n; i++) {
        const char *t = node_doc_str(old->u.list.items[i], "type");
        if (t && strcmp(t, "PodReadyToStartContainers") && strcmp(t, "Initialized") && strcmp(t, "Ready") &&
            strcmp(t, "ContainersReady"))
            node_push(b->a, l, node_doc_copy(b->a, old->u.list.items[i]), &b->err);
    }
    put(b, st, "conditions", l);
}

static dra_doc *ips(bld *b, const char *ip)
{
    dra_doc *l = dra_doc_new_list(b->a, 1), *m = map(b);
    puts_(b, m, "ip", ip);
    node_push(b->a, l, m, &b->err);
    return l;
}

/* kubelet's QoS class from the containers' requests and limits. */
static const char *qos(const pod_state *ps)
{
    int any = 0, guaranteed = 1;
    for (size_t i = 0; i < ps->nc; i++) {
        const dra_doc *req = dra_doc_at(ps->c[i].spec, "resources.requests");
        const dra_doc *lim = dra_doc_at(ps->c[i].spec, "resources.limits");
        for (int k = 0; k < 2; k++) {
            const char *r = k ? "memory" : "cpu";
            const dra_doc *rq = dra_doc_get(req, r), *lm = dra_doc_get(lim, r);
            any |= rq || lm;
            if (!lm || (rq && !dra_doc_equal(rq, lm)))
                guaranteed = 0;
        }
    }
    return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/* The kubelet-owned members, in PodStatus' field order. */
static dra_doc *owned_status(bld *b, const pod_state *ps, const char *phase)
{
    dra_doc *st = map(b), *init = dra_doc_new_list(b->a, ps->n_init), *app = dra_doc_new_list(b->a, ps->nc);
    const char *ip = ps->n->o.internal_ip;
    puts_(b, st, "phase", phase);
    conditions(b, ps, st, phase);
    puts_(b, st, "hostIP", ip);
    put(b, st, "hostIPs", ips(b, ip));
    if (ps->prepared) {
        puts_(b, st, "podIP", ip);
        put(b, st, "podIPs", ips(b, ip));
    }
    put_time(b, st, "startTime", ps->start_ns);
    for (size_t i = 0; i < ps->nc; i++)
        node_push(b->a, i < ps->n_init ? init : app, ctr_status(b, ps, &ps->c[i], i >= ps->n_init), &b->err);
    if (ps->n_init)
        put(b, st, "initContainerStatuses", init);
    put(b, st, "containerStatuses", app);
    puts_(b, st, "qosClass", node_doc_str(b->old, "qosClass") ? node_doc_str(b->old, "qosClass") : qos(ps));
    return st;
}

static const char *const owned_keys[] = {"phase", "conditions", "message", "reason", "hostIP", "hostIPs", "podIP",
                                         "podIPs", "startTime", "initContainerStatuses", "containerStatuses",
                                         "qosClass", NULL};

/* The whole pod to PUT: |base| with its status replaced by ours plus
 * what others own. */
static dra_doc *merged(bld *b, const dra_doc *base, const dra_doc *mine)
{
    dra_doc *pod = node_doc_copy(b->a, base), *st;
    const dra_doc *old = dra_doc_get(base, "status");
    if (!pod || !(st = node_doc_copy(b->a, mine))) {
        b->err = DRA_ENOMEM;
        return NULL;
    }
    for (size_t i = 0; old && old->kind == DRA_DOC_MAP && i < old->u.map.n; i++) {
        size_t k = 0;
        while (owned_keys[k] && strcmp(owned_keys[k], old->u.map.m[i].key) != 0)
            k++;
        if (!owned_keys[k])
            put(b, st, old->u.map.m[i].key, old->u.map.m[i].val);
    }
    put(b, pod, "status", st);
    return pod;
}

dra_err pod_write_status(pod_state *ps, int force)
{
    dra_arena a;
    dra_kstatus kst;
    dra_doc *base = ps->pod, *fresh = NULL;
    dra_err e = DRA_OK;
    const char *phase = pod_phase(ps);
    char *text = NULL;
    dra_arena_init(&a, ps->n->mem);
    for (int attempt = 0; attempt < 5; attempt++) {
        bld b = {&a, DRA_OK, dra_doc_get(base, "status"), ""};
        dra_doc *mine, *pod;
        node_fmt_time(pod_now(), 0, b.now, sizeof b.now);
        mine = owned_status(&b, ps, phase);
        if (b.err) {
            e = b.err;
            break;
        }
        dra_free(ps->n->mem, text);
        if (!(text = node_to_json(ps->n->mem, mine))) {
            e = DRA_ENOMEM;
            break;
        }
        if (!force && ps->last_written && strcmp(ps->last_written, text) == 0)
            break;
        if (!(pod = merged(&b, base, mine))) {
            e = DRA_ENOMEM;
            break;
        }
        memset(&kst, 0, sizeof kst);
        e = dra_cluster_update(ps->n->c, &DRA_GVR_PODS, ps->ns, ps->name, "status", pod, &a, NULL, &kst);
        if (e == DRA_OK) {
            dra_free(ps->n->mem, ps->last_written);
            ps->last_written = text;
            text = NULL;
            ps->phase = phase;
            break;
        }
        if (e != DRA_ECONFLICT)
            break;
        /* Someone else wrote the pod: start over from its latest. */
        if ((e = dra_cluster_get(ps->n->c, &DRA_GVR_PODS, ps->ns, ps->name, &a, &fresh, &kst)) != DRA_OK)
            break;
        if (!dra_obj_uid(fresh) || strcmp(dra_obj_uid(fresh), ps->uid) != 0) {
            e = DRA_ENOTFOUND;
            break;
        }
        base = fresh;
    }
    dra_free(ps->n->mem, text);
    dra_arena_fini(&a);
    return e;
}
