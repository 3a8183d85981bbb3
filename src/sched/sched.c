/*
 * sched.c: the live scheduler and claim controller over a dra_cluster.
 * One reflector thread per resource feeds the core (cache.c) under one
 * mutex; the scheduling thread pops pods and runs cycles; binding
 * workers write claims (finalizer, status with resourceVersion checks,
 * retried on conflict, rolled back on failure) and the binding, then
 * report back; controller workers run the claim controller's plans.
 * Responses of our own writes go into the cache at once (newer versions
 * only), so the next cycle sees them before the watch does.
 */
#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched_int.h"

#define NKINDS 6

typedef struct sched_refl {
    struct dra_sched *s;
    dra_kind kind;
    dra_gvr gvr;
} sched_refl;

/* One claim written by a bind job. */
typedef struct job_claim {
    const char *key, *ns, *name;
    dra_doc *doc;       /* the claim to PUT to /status (NULL for create) */
    dra_doc *alloc;     /* status.allocation we add, or NULL */
    int add_finalizer;
    int create;         /* the extended-resource claim: POST |create_doc| first */
    dra_doc *create_doc;
    dra_doc *written;   /* after success: the claim as stored */
    int allocated;      /* we wrote its allocation */
} job_claim;

typedef enum { JOB_BIND, JOB_UNSCHED } job_kind;

typedef struct sched_job {
    struct sched_job *next;
    job_kind kind;
    dra_arena ar;
    const char *key, *ns, *pod, *uid, *node;
    job_claim *claims;
    size_t nclaims;
    const char **assumed; /* claim keys assumed for this pod */
    size_t nassumed;
    const dra_claim_spec *ext_spec; /* extended-resource claim's spec (copied) */
    sc_podinfo *pod_info;           /* a copy for the documents */
    const char *message;            /* JOB_UNSCHED: the FailedScheduling message */
    int error;                      /* JOB_UNSCHED from an error (no condition change) */
    int write_condition;
} sched_job;

/* One event waiting to be sent (see post_event). */
typedef struct sched_event {
    struct sched_event *next;
    dra_arena ar;
    const char *ns, *pod, *uid, *type, *reason, *component, *msg;
} sched_event;

/* Events wait in a bounded queue and what does not fit is dropped, as
 * with client-go's recorder; its broadcaster holds 1,000, this one
 * 10,000 (about 3 MiB), so that a burst of 10,000 pods created at once
 * keeps its Scheduled events (with 1,000, half were dropped). */
#define SCHED_EVENT_QUEUE 10000

struct dra_sched {
    const dra_mem *mem;
    dra_cluster *c;
    dra_sched_opts o;
    char *name, *host;
    pthread_mutex_t mu;
    pthread_cond_t sched_cv, cc_cv, job_cv, idle_cv;
    sc_core core;
    sched_refl rk[NKINDS];
    dra_reflector *refl[NKINDS];
    int synced[NKINDS];
    int all_synced;
    int stop;
    int no_patch;          /* the server answered PATCH with 5xx/415: GET+PUT */
    pthread_t sched_thread;
    pthread_t *workers;
    size_t nworkers;
    int sched_started;
    sched_job *jobs, *jobs_tail;
    /* events: their own lock, queue and sender thread */
    pthread_mutex_t ev_mu;
    pthread_cond_t ev_cv;
    sched_event *ev_head, *ev_tail;
    size_t nev;
    uint64_t ev_dropped;
    int ev_stop, ev_started;
    pthread_t ev_thread;
};

/* ---- time and logs ---------------------------------------------------------------- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(dra_sched *s, int level, const char *fmt, ...) DRA_PRINTF(3, 4);
static void logf_(dra_sched *s, int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!s->o.log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->o.log(s->o.log_ud, level, buf);
}

static void wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t due_ms)
{
    struct timespec ts;
    int64_t now = mono_ms(), d;
    if (due_ms < 0) {
        pthread_cond_wait(cv, mu);
        return;
    }
    d = due_ms > now ? due_ms - now : 0;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += d / 1000;
    ts.tv_nsec += (long)(d % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

/* ---- the cache: reflectors and our own writes ---------------------------------------- */

/* Wakes whoever has work now: the scheduling loop when a pod is ready
 * (or a timer may have moved), a controller worker when a key is queued.
 * Waking them on every event would cost more than the events. */
static void wake_all(dra_sched *s)
{
    if (s->core.active || s->core.nbackoff)
        pthread_cond_signal(&s->sched_cv);
    if (s->core.wq.head || s->core.wq.ndelayed)
        pthread_cond_signal(&s->cc_cv);
}

static void apply_locked(dra_sched *s, dra_kind kind, dra_watch_type type, const dra_doc *obj)
{
    dra_diag d;
    dra_err err;
    dra_diag_init(&d, s->mem);
    err = sched_apply(&s->core, kind, type, obj, mono_ms(), &d);
    if (err != DRA_OK)
        logf_(s, DRA_SCHED_LOG_ERROR, "%s %s/%s: %s%s%s", dra_api_kind_name(kind),
              dra_obj_namespace(obj) ? dra_obj_namespace(obj) : "",
              dra_obj_name(obj) ? dra_obj_name(obj) : "?", dra_strerror(err),
              dra_diag_first(&d) ? ": " : "", dra_diag_first(&d) ? dra_diag_first(&d) : "");
    dra_diag_fini(&d);
}

static void on_event(void *ud, dra_watch_type type, const dra_doc *obj)
{
    sched_refl *r = ud;
    dra_sched *s = r->s;
    pthread_mutex_lock(&s->mu);
    apply_locked(s, r->kind, type, obj);
    wake_all(s);
    pthread_mutex_unlock(&s->mu);
}

static void on_synced(void *ud)
{
    sched_refl *r = ud;
    dra_sched *s = r->s;
    int all = 1;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < NKINDS; i++) {
        if (&s->rk[i] == r)
            s->synced[i] = 1;
        all &= s->synced[i];
    }
    s->all_synced = all;
    pthread_cond_broadcast(&s->sched_cv);
    pthread_cond_broadcast(&s->cc_cv);
    pthread_mutex_unlock(&s->mu);
}

/* A response of our own write into the cache (the apply keeps newer
 * versions the watch brought meanwhile). */
static void inject(dra_sched *s, dra_kind kind, const dra_doc *obj)
{
    if (!obj || obj->kind != DRA_DOC_MAP)
        return;
    pthread_mutex_lock(&s->mu);
    apply_locked(s, kind, DRA_WATCH_MODIFIED, obj);
    wake_all(s);
    pthread_mutex_unlock(&s->mu);
}

/* Sets pod status member |field| to |val|: a JSON merge patch, or, when
 * the server cannot patch (drad before its patch engine, 501), a read
 * of the pod and a PUT of its status, retried on conflict. |uid| (may
 * be NULL) must still match. The answer goes into the cache. */
static dra_err set_pod_status_field(dra_sched *s, dra_arena *ar, const char *ns, const char *name,
                                    const char *uid, const char *field, dra_doc *val,
                                    dra_kstatus *st)
{
    static const dra_gvr pods = DRA_GVR_PODS;
    dra_doc *out = NULL;
    dra_err err = DRA_EUNSUPPORTED;
    int no_patch;
    pthread_mutex_lock(&s->mu);
    no_patch = s->no_patch;
    pthread_mutex_unlock(&s->mu);
    if (!no_patch) {
        dra_doc *root = dra_doc_new_map(ar, 1), *stat = dra_doc_new_map(ar, 1);
        char *patch;
        if (!root || !stat || dra_doc_map_set(ar, stat, field, val) ||
            dra_doc_map_set(ar, root, "status", stat) || !(patch = sched_doc_json(ar, root)))
            return DRA_ENOMEM;
        err = dra_cluster_patch(s->c, &pods, ns, name, "status", DRA_PATCH_MERGE, patch,
                                strlen(patch), NULL, ar, &out, st);
        if (err == DRA_OK) {
            inject(s, DRA_KIND_POD, out);
            return DRA_OK;
        }
        if (err != DRA_EUNAVAILABLE && err != DRA_EUNSUPPORTED)
            return err;
        pthread_mutex_lock(&s->mu);
        s->no_patch = 1;
        pthread_mutex_unlock(&s->mu);
        logf_(s, DRA_SCHED_LOG_INFO, "the server does not patch pods/status (%s): read and write instead",
              st->message);
    }
    for (int attempt = 0; attempt < 8; attempt++) {
        dra_doc *pod = NULL, *status;
        if ((err = dra_cluster_get(s->c, &pods, ns, name, ar, &pod, st)) != DRA_OK)
            return err;
        if (uid && (!dra_obj_uid(pod) || strcmp(dra_obj_uid(pod), uid)))
            return DRA_ENOTFOUND;
        status = (dra_doc *)dra_doc_get(pod, "status");
        if (!status || status->kind != DRA_DOC_MAP) {
            if (!(status = dra_doc_new_map(ar, 1)) || dra_doc_map_set(ar, pod, "status", status))
                return DRA_ENOMEM;
        }
        if (dra_doc_map_set(ar, status, field, val))
            return DRA_ENOMEM;
        err = dra_cluster_update(s->c, &pods, ns, name, "status", pod, ar, &out, st);
        if (err != DRA_ECONFLICT)
            break;
    }
    if (err == DRA_OK)
        inject(s, DRA_KIND_POD, out);
    return err;
}

/* ---- events ---------------------------------------------------------------------------- */

/* Queues an event about pod |ns|/|pod| for the sender thread: writing it
 * is not part of binding or of the controller's work, as with
 * kube-scheduler's recorder. Dropped (and counted) when the queue is
 * full or memory runs out: events are best effort. */
static void post_event(dra_sched *s, const char *ns, const char *pod, const char *uid,
                       const char *type, const char *reason, const char *component,
                       const char *fmt, ...) DRA_PRINTF(8, 9);
static void post_event(dra_sched *s, const char *ns, const char *pod, const char *uid,
                       const char *type, const char *reason, const char *component,
                       const char *fmt, ...)
{
    sched_event *e = dra_calloc(s->mem, 1, sizeof *e);
    dra_buf b;
    va_list ap;
    if (!e) {
        pthread_mutex_lock(&s->ev_mu);
        s->ev_dropped++;
        pthread_mutex_unlock(&s->ev_mu);
        return;
    }
    dra_arena_init(&e->ar, s->mem);
    dra_buf_init(&b, s->mem);
    va_start(ap, fmt);
    dra_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    e->ns = dra_arena_strdup(&e->ar, ns);
    e->pod = dra_arena_strdup(&e->ar, pod);
    e->uid = uid ? dra_arena_strdup(&e->ar, uid) : NULL;
    e->type = type;          /* static strings */
    e->reason = dra_arena_strdup(&e->ar, reason);
    e->component = component;
    e->msg = dra_arena_strdup(&e->ar, b.p ? b.p : "");
    dra_buf_fini(&b);
    pthread_mutex_lock(&s->ev_mu);
    if (b.oom || !e->ns || !e->pod || (uid && !e->uid) || !e->reason || !e->msg ||
        s->nev >= SCHED_EVENT_QUEUE || s->ev_stop) {
        s->ev_dropped++;
        pthread_mutex_unlock(&s->ev_mu);
        dra_arena_fini(&e->ar);
        dra_free(s->mem, e);
        return;
    }
    if (s->ev_tail)
        s->ev_tail->next = e;
    else
        s->ev_head = e;
    s->ev_tail = e;
    s->nev++;
    pthread_cond_signal(&s->ev_cv);
    pthread_mutex_unlock(&s->ev_mu);
}

static void event_free(dra_sched *s, sched_event *e)
{
    dra_arena_fini(&e->ar);
    dra_free(s->mem, e);
}

static void *event_main(void *arg)
{
    dra_sched *s = arg;
    pthread_mutex_lock(&s->ev_mu);
    while (!s->ev_stop) {
        sched_event *e = s->ev_head;
        dra_doc *ref;
        if (!e) {
            pthread_cond_wait(&s->ev_cv, &s->ev_mu);
            continue;
        }
        s->ev_head = e->next;
        if (!s->ev_head)
            s->ev_tail = NULL;
        s->nev--;
        pthread_mutex_unlock(&s->ev_mu);
        if ((ref = sched_pod_ref_doc(&e->ar, e->ns, e->pod, e->uid)))
            dra_cluster_event(s->c, ref, e->type, e->reason, e->component, s->host, "%s",
                              e->msg);
        event_free(s, e);
        pthread_mutex_lock(&s->ev_mu);
    }
    pthread_mutex_unlock(&s->ev_mu);
    return NULL;
}

/* ---- jobs --------------------------------------------------------------------------- */

static sched_job *job_new(dra_sched *s, job_kind kind, const sc_podinfo *p)
{
    sched_job *j = dra_calloc(s->mem, 1, sizeof *j);
    if (!j)
        return NULL;
    dra_arena_init(&j->ar, s->mem);
    j->kind = kind;
    j->ns = dra_arena_strdup(&j->ar, p->ns);
    j->pod = dra_arena_strdup(&j->ar, p->name);
    j->uid = dra_arena_strdup(&j->ar, p->uid);
    j->key = dra_arena_sprintf(&j->ar, "%s/%s", p->ns, p->name);
    if (!j->ns || !j->pod || !j->uid || !j->key) {
        dra_arena_fini(&j->ar);
        dra_free(s->mem, j);
        return NULL;
    }
    return j;
}

static void job_free(dra_sched *s, sched_job *j)
{
    if (!j)
        return;
    dra_arena_fini(&j->ar);
    dra_free(s->mem, j);
}

static void job_push(dra_sched *s, sched_job *j)
{
    j->next = NULL;
    if (s->jobs_tail)
        s->jobs_tail->next = j;
    else
        s->jobs = j;
    s->jobs_tail = j;
    pthread_cond_signal(&s->job_cv);
}

/* Deep copy of the pod fields the documents need (name, ns, uid, the
 * extended requests) into the job. */
static sc_podinfo *podinfo_copy(dra_arena *ar, const sc_podinfo *p)
{
    sc_podinfo *c = dra_arena_zalloc(ar, sizeof *c);
    if (!c)
        return NULL;
    c->ns = dra_arena_strdup(ar, p->ns);
    c->name = dra_arena_strdup(ar, p->name);
    c->uid = dra_arena_strdup(ar, p->uid);
    if (p->nereqs) {
        if (!(c->ereqs = dra_arena_array(ar, p->nereqs, sizeof *c->ereqs)))
            return NULL;
        memcpy(c->ereqs, p->ereqs, p->nereqs * sizeof *c->ereqs);
        for (size_t i = 0; i < p->nereqs; i++)
            c->ereqs[i].container_name = dra_arena_strdup(ar, p->ereqs[i].container_name
                                                                  ? p->ereqs[i].container_name : "");
        c->nereqs = p->nereqs;
    }
    return c->ns && c->name && c->uid ? c : NULL;
}

/* Encodes an allocation result as its JSON document (deep copy). */
static dra_doc *alloc_doc(dra_arena *ar, const sc_claim *cl, const dra_allocation_result *res)
{
    dra_object o = *cl->obj;
    dra_doc *d = NULL;
    o.u.claim.status.allocation = (dra_allocation_result *)res;
    if (dra_api_encode(ar, &o, &d) != DRA_OK)
        return NULL;
    return (dra_doc *)dra_doc_get(dra_doc_get(d, "status"), "allocation");
}

/* The extended-resource claim of a bind job: created first, then given
 * |res|. 0 on ENOMEM. */
static int ext_job_claim(sched_job *j, job_claim *jc, const dra_allocation_result *res,
                         const dra_claim_spec *spec)
{
    /* The allocation as a document: encoded inside a scratch claim. */
    sc_claim tmp;
    dra_object o;
    memset(&tmp, 0, sizeof tmp);
    memset(&o, 0, sizeof o);
    o.kind = DRA_KIND_RESOURCE_CLAIM;
    tmp.obj = &o;
    jc->create = 1;
    jc->allocated = 1;
    jc->ns = j->ns;
    jc->create_doc = sched_ext_claim_doc(&j->ar, j->pod_info, spec);
    jc->alloc = alloc_doc(&j->ar, &tmp, res);
    return jc->create_doc && jc->alloc;
}

/* The request names of |spec| (for the pod's extendedResourceClaimStatus),
 * copied into |ar|. */
static const dra_claim_spec *spec_names(dra_arena *ar, const dra_claim_spec *spec)
{
    dra_claim_spec *sp = dra_arena_zalloc(ar, sizeof *sp);
    if (!sp || !(sp->requests = dra_arena_array(ar, spec->n_requests + 1, sizeof *sp->requests)))
        return NULL;
    for (size_t i = 0; i < spec->n_requests; i++)
        if (!(sp->requests[i].name = dra_arena_strdup(ar, spec->requests[i].name)))
            return NULL;
    sp->n_requests = spec->n_requests;
    return sp;
}

/* The bind job for a successful cycle: every claim to reserve, with the
 * documents built now, under the lock, from the cached objects. */
static sched_job *bind_job(dra_sched *s, sc_pod *p, sc_cycle *cy)
{
    sched_job *j = job_new(s, JOB_BIND, p->info);
    size_t n = 0;
    if (!j)
        return NULL;
    j->node = dra_arena_strdup(&j->ar, cy->node->name);
    j->claims = dra_arena_array(&j->ar, cy->nclaims + 1, sizeof *j->claims);
    j->assumed = dra_arena_array(&j->ar, cy->nclaims + 1, sizeof *j->assumed);
    j->pod_info = podinfo_copy(&j->ar, p->info);
    if (!j->node || !j->claims || !j->assumed || !j->pod_info)
        goto fail;
    for (size_t i = 0; i < cy->nclaims; i++) {
        const sc_cclaim *cc = &cy->claims[i];
        job_claim *jc = &j->claims[n];
        if (i == (size_t)cy->ext) {
            if (!cy->ext_spec || !p->ext_res)
                continue;
            if (!ext_job_claim(j, jc, p->ext_res, cy->ext_spec))
                goto fail;
            n++;
            continue;
        }
        if (!cc->reserve)
            continue;
        jc->key = dra_arena_strdup(&j->ar, cc->cl->key);
        jc->ns = j->ns;
        jc->name = dra_arena_strdup(&j->ar, cc->cl->obj->meta.name);
        jc->add_finalizer = cc->allocate >= 0 && !cc->cl->finalizer;
        jc->allocated = cc->allocate >= 0;
        if (jc->allocated) {
            j->assumed[j->nassumed++] = jc->key;
            if (!(jc->alloc = alloc_doc(&j->ar, cc->cl, cc->cl->assumed)))
                goto fail;
        }
        if (!(jc->doc = sched_claim_reserve_doc(&j->ar, cc->cl, jc->allocated ? cc->cl->assumed : NULL,
                                                p->info, jc->add_finalizer)))
            goto fail;
        n++;
    }
    j->nclaims = n;
    if (cy->ext_spec && !(j->ext_spec = spec_names(&j->ar, cy->ext_spec)))
        goto fail;
    return j;
fail:
    job_free(s, j);
    return NULL;
}

static void unsched_job(dra_sched *s, sc_pod *p, const char *msg, int error)
{
    sched_job *j;
    if (!msg)
        return;
    if (!(j = job_new(s, JOB_UNSCHED, p->info)))
        return;
    j->message = dra_arena_strdup(&j->ar, msg);
    j->error = error;
    j->write_condition = !p->info->cond_msg || strcmp(p->info->cond_msg, msg);
    if (!j->message) {
        job_free(s, j);
        return;
    }
    job_push(s, j);
}

/* ---- the scheduling loop ------------------------------------------------------------------ */

static void handle_cycle(dra_sched *s, sc_pod *p, sc_cycle *cy, int64_t now)
{
    sc_core *c = &s->core;
    sched_job *j;
    switch (cy->rc) {
    case SC_RC_OK:
        if (sched_cycle_assume(c, p, cy) != DRA_OK || !(j = bind_job(s, p, cy))) {
            sched_cycle_forget(c, p, NULL, 0);
            for (size_t i = 0; i < cy->nclaims; i++)
                if (cy->claims[i].cl && cy->claims[i].allocate >= 0)
                    sched_claim_assume(c, cy->claims[i].cl, NULL, NULL, NULL);
            sched_queue_failed(c, p, now, 1);
            return;
        }
        p->q = SC_Q_BINDING;
        job_push(s, j);
        return;
    case SC_RC_WAIT:
        logf_(s, DRA_SCHED_LOG_DEBUG, "pod %s waits: %s", p->key, cy->message ? cy->message : "");
        sched_queue_wait(c, p, now);
        return;
    case SC_RC_UNSCHED:
    case SC_RC_ERROR:
        logf_(s, DRA_SCHED_LOG_INFO, "pod %s: %s", p->key, cy->message ? cy->message : "");
        unsched_job(s, p, cy->message, cy->rc == SC_RC_ERROR);
        sched_queue_failed(c, p, now, cy->rc == SC_RC_ERROR);
        return;
    }
}

static void *sched_main(void *arg)
{
    dra_sched *s = arg;
    sc_core *c = &s->core;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        int64_t now = mono_ms(), next;
        sc_pod *p;
        sc_cycle cy;
        if (!s->all_synced) {
            pthread_cond_wait(&s->sched_cv, &s->mu);
            continue;
        }
        next = sched_queue_tick(c, now);
        if (!(p = sched_queue_pop(c, now))) {
            wait_until(&s->sched_cv, &s->mu, next);
            continue;
        }
        sched_cycle_init(&cy, s->mem);
        if (sched_cycle_run(c, p, &cy, 0) != DRA_OK) {
            logf_(s, DRA_SCHED_LOG_ERROR, "pod %s: out of memory", p->key);
            sched_queue_failed(c, p, now, 1);
        } else {
            handle_cycle(s, p, &cy, now);
        }
        sched_cycle_fini(&cy);
        /* Let the reflectors in between two pods. */
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- binding -------------------------------------------------------------------------------- */

static const dra_gvr claims_gvr = DRA_GVR_CLAIMS;
static const dra_gvr pods_gvr = DRA_GVR_PODS;

/* PUT |jc|'s status, re-reading and redoing the change after conflicts. */
static dra_err write_claim_status(dra_sched *s, sched_job *j, job_claim *jc, dra_kstatus *st,
                                  const char **why)
{
    dra_doc *doc = jc->doc, *out = NULL;
    dra_err err = DRA_ECONFLICT;
    for (int attempt = 0; attempt < 8 && err == DRA_ECONFLICT; attempt++) {
        if (attempt) {
            dra_doc *fresh = NULL;
            pthread_mutex_lock(&s->mu);
            s->core.st.conflicts++;
            pthread_mutex_unlock(&s->mu);
            if ((err = dra_cluster_get(s->c, &claims_gvr, jc->ns, jc->name, &j->ar, &fresh, st)))
                return err;
            if (!sched_claim_redo(&j->ar, fresh, jc->alloc, j->pod, j->uid, why))
                return DRA_ECONFLICT;
            doc = fresh;
        }
        err = dra_cluster_update(s->c, &claims_gvr, jc->ns, jc->name, "status", doc, &j->ar,
                                 &out, st);
    }
    if (err == DRA_OK) {
        jc->written = out;
        inject(s, DRA_KIND_RESOURCE_CLAIM, out);
    }
    return err;
}

/* The finalizer goes on with a normal update before the allocation. */
static dra_err add_finalizer(dra_sched *s, sched_job *j, job_claim *jc, dra_kstatus *st)
{
    dra_doc *out = NULL, *md = (dra_doc *)dra_doc_get(jc->doc, "metadata");
    dra_err err = dra_cluster_update(s->c, &claims_gvr, jc->ns, jc->name, NULL, jc->doc, &j->ar,
                                     &out, st);
    const dra_doc *rv;
    if (err != DRA_OK)
        return err;
    /* The status write follows with the new resourceVersion. */
    rv = dra_doc_get(dra_doc_get(out, "metadata"), "resourceVersion");
    if (md && rv)
        dra_doc_map_set(&j->ar, md, "resourceVersion", (dra_doc *)rv);
    return DRA_OK;
}

static dra_err create_ext_claim(dra_sched *s, sched_job *j, job_claim *jc, dra_kstatus *st)
{
    dra_doc *out = NULL;
    const char *why;
    dra_err err = dra_cluster_create(s->c, &claims_gvr, jc->ns, jc->create_doc, &j->ar, &out, st);
    if (err != DRA_OK)
        return err;
    jc->name = dra_obj_name(out) ? dra_arena_strdup(&j->ar, dra_obj_name(out)) : NULL;
    jc->key = jc->name ? dra_arena_sprintf(&j->ar, "%s/%s", jc->ns, jc->name) : NULL;
    jc->written = out; /* created: the rollback deletes it */
    if (!jc->name || !jc->key || !sched_claim_redo(&j->ar, out, jc->alloc, j->pod, j->uid, &why))
        return DRA_ENOMEM;
    jc->doc = out;
    return DRA_OK;
}

static dra_err ext_pod_status(dra_sched *s, sched_job *j, const job_claim *jc, dra_kstatus *st)
{
    dra_doc *e = sched_ext_status_doc(&j->ar, j->pod_info, j->ext_spec, jc->name);
    if (!e)
        return DRA_ENOMEM;
    return set_pod_status_field(s, &j->ar, j->ns, j->pod, j->uid, "extendedResourceClaimStatus", e, st);
}

/* Undoes the claim writes of a failed bind, best effort: our reservation
 * out, our allocation cleared when nobody else reserves the claim, a
 * created extended-resource claim deleted. */
static void rollback(dra_sched *s, sched_job *j)
{
    for (size_t i = 0; i < j->nclaims; i++) {
        job_claim *jc = &j->claims[i];
        dra_kstatus st;
        dra_doc *out = NULL, *d;
        if (!jc->written)
            continue;
        if (jc->create) {
            dra_doc *md = (dra_doc *)dra_doc_get(jc->written, "metadata");
            if (md)
                dra_doc_map_set(&j->ar, md, "finalizers", dra_doc_new_list(&j->ar, 0));
            dra_cluster_update(s->c, &claims_gvr, jc->ns, jc->name, NULL, jc->written, &j->ar,
                               NULL, &st);
            dra_cluster_delete(s->c, &claims_gvr, jc->ns, jc->name, NULL, &j->ar, NULL, &st);
            continue;
        }
        for (int attempt = 0; attempt < 4; attempt++) {
            if (attempt && dra_cluster_get(s->c, &claims_gvr, jc->ns, jc->name, &j->ar,
                                           &jc->written, &st) != DRA_OK)
                break;
            if (attempt && jc->allocated && jc->alloc &&
                !dra_doc_equal(dra_doc_get(dra_doc_get(jc->written, "status"), "allocation"), jc->alloc))
                jc->allocated = 0; /* somebody else's allocation now: keep it */
            if (!(d = sched_claim_unreserve_doc(&j->ar, jc->written, j->uid, jc->allocated)))
                break;
            if (dra_cluster_update(s->c, &claims_gvr, jc->ns, jc->name, "status", d, &j->ar,
                                   &out, &st) != DRA_ECONFLICT) {
                inject(s, DRA_KIND_RESOURCE_CLAIM, out);
                break;
            }
        }
    }
}

static dra_err run_bind(dra_sched *s, sched_job *j, dra_kstatus *st, const char **why)
{
    dra_err err;
    *why = NULL;
    for (size_t i = 0; i < j->nclaims; i++) {
        job_claim *jc = &j->claims[i];
        if (jc->create && (err = create_ext_claim(s, j, jc, st)) != DRA_OK)
            return err;
        if (jc->add_finalizer && (err = add_finalizer(s, j, jc, st)) != DRA_OK)
            return err;
        if ((err = write_claim_status(s, j, jc, st, why)) != DRA_OK)
            return err;
        if (jc->create && (err = ext_pod_status(s, j, jc, st)) != DRA_OK)
            return err;
    }
    return dra_cluster_bind(s->c, j->ns, j->pod, j->uid, j->node, st);
}

static void bind_done(dra_sched *s, sched_job *j, dra_err err, const char *msg)
{
    sc_core *c = &s->core;
    sc_pod *p;
    int64_t now = mono_ms();
    pthread_mutex_lock(&s->mu);
    p = sched_pod_get(c, j->key);
    if (p && strcmp(p->info->uid, j->uid))
        p = NULL;
    /* Pods waiting for these claims look again. */
    for (size_t i = 0; i < j->nassumed; i++)
        sched_queue_wake_claim(c, j->assumed[i], now);
    if (err == DRA_OK) {
        c->st.scheduled++;
        /* The written claims are in the cache: the assumptions go. */
        for (size_t i = 0; i < j->nassumed; i++) {
            sc_claim *cl = dra_map_get(&c->claims, j->assumed[i], strlen(j->assumed[i]));
            if (cl && cl->assumed && cl->assumed_pod && !strcmp(cl->assumed_pod, j->uid))
                sched_claim_assume(c, cl, NULL, NULL, NULL);
        }
        if (p) {
            sched_ext_unassume(c, p);
            if (p->q == SC_Q_BINDING)
                p->q = SC_Q_NONE;
        }
    } else {
        c->st.bind_errors++;
        sched_cycle_forget(c, p, j->assumed, j->nassumed);
        if (p && p->q == SC_Q_BINDING) {
            sched_queue_failed(c, p, now, 1);
            unsched_job(s, p, msg, 1);
        }
    }
    wake_all(s);
    pthread_mutex_unlock(&s->mu);
}

static void do_bind(dra_sched *s, sched_job *j)
{
    dra_kstatus st;
    const char *why;
    dra_err err;
    memset(&st, 0, sizeof st);
    err = run_bind(s, j, &st, &why);
    if (err == DRA_OK) {
        if (!s->o.no_scheduled_events)
            post_event(s, j->ns, j->pod, j->uid, "Normal", "Scheduled", s->name,
                       "Successfully assigned %s/%s to %s", j->ns, j->pod, j->node);
        bind_done(s, j, DRA_OK, NULL);
        return;
    }
    {
        const char *detail = why ? why : st.message[0] ? st.message : dra_strerror(err);
        const char *msg = dra_arena_sprintf(&j->ar, "running Reserve/PreBind or Bind for node %s: %s",
                                            j->node, detail);
        logf_(s, DRA_SCHED_LOG_INFO, "pod %s: binding failed: %s", j->key, detail);
        rollback(s, j);
        bind_done(s, j, err, msg);
    }
}

/* PodScheduled=False, reason Unschedulable: read, change, write back. */
static void set_condition(dra_sched *s, sched_job *j)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        dra_doc *pod = NULL, *status, *conds, *cond, *out = NULL;
        const char *ts = NULL;
        dra_kstatus st;
        size_t i;
        if (dra_cluster_get(s->c, &pods_gvr, j->ns, j->pod, &j->ar, &pod, &st) != DRA_OK)
            return;
        if (!dra_obj_uid(pod) || strcmp(dra_obj_uid(pod), j->uid) || dra_obj_str(pod, "spec.nodeName"))
            return;
        status = (dra_doc *)dra_doc_get(pod, "status");
        if (!status || status->kind != DRA_DOC_MAP) {
            if (!(status = dra_doc_new_map(&j->ar, 2)) || dra_doc_map_set(&j->ar, pod, "status", status))
                return;
        }
        conds = (dra_doc *)dra_doc_get(status, "conditions");
        if (!conds || conds->kind != DRA_DOC_LIST) {
            if (!(conds = dra_doc_new_list(&j->ar, 1)) ||
                dra_doc_map_set(&j->ar, status, "conditions", conds))
                return;
        }
        for (i = 0; i < conds->u.list.n; i++) {
            const char *t = dra_obj_str(conds->u.list.items[i], "type");
            if (t && !strcmp(t, "PodScheduled"))
                break;
        }
        cond = i < conds->u.list.n ? conds->u.list.items[i] : dra_doc_new_map(&j->ar, 6);
        if (!cond || (i == conds->u.list.n && dra_doc_list_push(&j->ar, conds, cond)))
            return;
        {
            const char *prev = dra_obj_str(cond, "status");
            ts = prev && !strcmp(prev, "False") ? dra_obj_str(cond, "lastTransitionTime") : NULL;
            if (!ts)
                ts = sched_rfc3339(&j->ar, (int64_t)time(NULL));
        }
        if (dra_doc_map_set(&j->ar, cond, "type", dra_doc_new_string(&j->ar, "PodScheduled", 12)) ||
            dra_doc_map_set(&j->ar, cond, "status", dra_doc_new_string(&j->ar, "False", 5)) ||
            dra_doc_map_set(&j->ar, cond, "lastProbeTime", dra_doc_new_null(&j->ar)) ||
            dra_doc_map_set(&j->ar, cond, "lastTransitionTime",
                            dra_doc_new_string(&j->ar, ts ? ts : "", ts ? strlen(ts) : 0)) ||
            dra_doc_map_set(&j->ar, cond, "reason", dra_doc_new_string(&j->ar, "Unschedulable", 13)) ||
            dra_doc_map_set(&j->ar, cond, "message",
                            dra_doc_new_string(&j->ar, j->message, strlen(j->message))))
            return;
        if (dra_cluster_update(s->c, &pods_gvr, j->ns, j->pod, "status", pod, &j->ar, &out, &st) !=
            DRA_ECONFLICT) {
            inject(s, DRA_KIND_POD, out);
            return;
        }
    }
}

static void do_unsched(dra_sched *s, sched_job *j)
{
    post_event(s, j->ns, j->pod, j->uid, "Warning", "FailedScheduling", s->name, "%s",
               j->message);
    if (j->write_condition)
        set_condition(s, j);
}

/* ---- the claim controller ------------------------------------------------------------------ */

typedef struct cc_run {
    dra_sched *s;
    sc_plan *pl;
    dra_kstatus st;
    dra_arena ar;
} cc_run;

static dra_err cc_create(cc_run *r, sc_action *a)
{
    dra_doc *out = NULL;
    dra_err err = dra_cluster_create(r->s->c, &claims_gvr, a->ns, a->doc, &r->ar, &out, &r->st);
    sc_pstatus *v;
    if (err != DRA_OK)
        return err;
    inject(r->s, DRA_KIND_RESOURCE_CLAIM, out);
    pthread_mutex_lock(&r->s->mu);
    r->s->core.st.claims_created++;
    pthread_mutex_unlock(&r->s->mu);
    if (!(v = dra_arena_array(&r->pl->ar, r->pl->nst + 1, sizeof *v)))
        return DRA_ENOMEM;
    if (r->pl->nst)
        memcpy(v, r->pl->st, r->pl->nst * sizeof *v);
    v[r->pl->nst].name = a->pod_claim;
    v[r->pl->nst].claim = dra_obj_name(out) ? dra_arena_strdup(&r->pl->ar, dra_obj_name(out)) : NULL;
    r->pl->st = v;
    r->pl->nst++;
    return DRA_OK;
}

static dra_err cc_unfinalize(cc_run *r, sc_action *a, dra_doc *claim)
{
    dra_doc *md = (dra_doc *)dra_doc_get(claim, "metadata"), *nl, *out = NULL;
    const dra_doc *fz = md ? dra_doc_get(md, "finalizers") : NULL;
    dra_err err;
    if (!fz || fz->kind != DRA_DOC_LIST || !(nl = dra_doc_new_list(&r->ar, fz->u.list.n)))
        return DRA_OK;
    for (size_t i = 0; i < fz->u.list.n; i++) {
        const dra_doc *f = fz->u.list.items[i];
        if (!(f->kind == DRA_DOC_STRING && !strcmp(f->u.str.s, SC_FINALIZER)) &&
            dra_doc_list_push(&r->ar, nl, (dra_doc *)f))
            return DRA_ENOMEM;
    }
    if (nl->u.list.n == fz->u.list.n)
        return DRA_OK;
    if (dra_doc_map_set(&r->ar, md, "finalizers", nl))
        return DRA_ENOMEM;
    err = dra_cluster_update(r->s->c, &claims_gvr, a->ns, a->name, NULL, claim, &r->ar, &out, &r->st);
    if (err == DRA_OK)
        inject(r->s, DRA_KIND_RESOURCE_CLAIM, out);
    return err == DRA_ENOTFOUND ? DRA_OK : err;
}

static dra_err cc_action(cc_run *r, sc_action *a)
{
    dra_doc *out = NULL;
    dra_err err;
    switch (a->op) {
    case SC_OP_CREATE_CLAIM:
        return cc_create(r, a);
    case SC_OP_CLAIM_STATUS:
        err = dra_cluster_update(r->s->c, &claims_gvr, a->ns, a->name, "status", a->doc, &r->ar,
                                 &out, &r->st);
        if (err != DRA_OK)
            return err == DRA_ENOTFOUND ? DRA_OK : err;
        inject(r->s, DRA_KIND_RESOURCE_CLAIM, out);
        if (a->dealloc) {
            pthread_mutex_lock(&r->s->mu);
            r->s->core.st.claims_deallocated++;
            pthread_mutex_unlock(&r->s->mu);
        }
        if (a->then_unfinalize && !dra_doc_get(dra_doc_get(out, "status"), "allocation"))
            return cc_unfinalize(r, a, out);
        return DRA_OK;
    case SC_OP_CLAIM_UPDATE:
        err = dra_cluster_update(r->s->c, &claims_gvr, a->ns, a->name, NULL, a->doc, &r->ar, &out,
                                 &r->st);
        if (err == DRA_OK)
            inject(r->s, DRA_KIND_RESOURCE_CLAIM, out);
        return err == DRA_ENOTFOUND ? DRA_OK : err;
    case SC_OP_CLAIM_DELETE: {
        dra_delete_opts o;
        memset(&o, 0, sizeof o);
        o.precondition_uid = a->uid;
        err = dra_cluster_delete(r->s->c, &claims_gvr, a->ns, a->name, &o, &r->ar, NULL, &r->st);
        if (err == DRA_OK) {
            pthread_mutex_lock(&r->s->mu);
            r->s->core.st.claims_deleted++;
            pthread_mutex_unlock(&r->s->mu);
        }
        return err == DRA_ENOTFOUND ? DRA_OK : err;
    }
    default:
        return DRA_OK;
    }
}

/* Looks up the pods a claim's plan is unsure about; their UIDs that the
 * API no longer has go to |gone|. */
static dra_err cc_checks(cc_run *r, const char ***gone, size_t *ngone)
{
    const char **g = dra_arena_array(&r->ar, r->pl->n + 1, sizeof *g);
    size_t n = 0;
    if (!g)
        return DRA_ENOMEM;
    for (size_t i = 0; i < r->pl->n; i++) {
        sc_action *a = &r->pl->v[i];
        dra_doc *pod = NULL;
        dra_err err;
        if (a->op != SC_OP_POD_CHECK)
            continue;
        err = dra_cluster_get(r->s->c, &pods_gvr, a->ns, a->name, &r->ar, &pod, &r->st);
        if (err == DRA_ENOTFOUND || (err == DRA_OK && (!dra_obj_uid(pod) || strcmp(dra_obj_uid(pod), a->uid))))
            g[n++] = dra_arena_strdup(&r->ar, a->uid);
        else if (err != DRA_OK)
            return err;
    }
    *gone = g;
    *ngone = n;
    return DRA_OK;
}

static dra_err cc_run_plan(cc_run *r)
{
    dra_err err;
    for (size_t i = 0; i < r->pl->n; i++)
        if ((err = cc_action(r, &r->pl->v[i])) != DRA_OK)
            return err;
    if (r->pl->need_statuses) {
        dra_doc *l = sched_claim_statuses_doc(&r->ar, r->pl->st, r->pl->nst);
        if (!l)
            return DRA_ENOMEM;
        err = set_pod_status_field(r->s, &r->ar, r->pl->pod_ns, r->pl->pod_name, r->pl->pod_uid,
                                   "resourceClaimStatuses", l, &r->st);
        if (err != DRA_OK)
            return err == DRA_ENOTFOUND ? DRA_OK : err;
    }
    return DRA_OK;
}

static int has_checks(const sc_plan *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        if (pl->v[i].op == SC_OP_POD_CHECK)
            return 1;
    return 0;
}

/* One work item, lock held on entry and exit. */
static void cc_work(dra_sched *s, const char *key)
{
    sc_plan pl;
    cc_run r;
    dra_err err;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.pl = &pl;
    sched_plan_init(&pl, s->mem);
    dra_arena_init(&r.ar, s->mem);
    err = sched_cc_plan(&s->core, key, NULL, 0, 0, &pl);
    pthread_mutex_unlock(&s->mu);
    if (err == DRA_OK && has_checks(&pl)) {
        const char **gone = NULL;
        size_t ngone = 0;
        if ((err = cc_checks(&r, &gone, &ngone)) == DRA_OK) {
            pthread_mutex_lock(&s->mu);
            sched_plan_fini(&pl);
            sched_plan_init(&pl, s->mem);
            err = sched_cc_plan(&s->core, key, gone, ngone, 1, &pl);
            pthread_mutex_unlock(&s->mu);
        }
    }
    if (err == DRA_OK)
        err = cc_run_plan(&r);
    if (pl.ev_reason && pl.pod_name) {
        post_event(s, pl.pod_ns ? pl.pod_ns : "", pl.pod_name, pl.pod_uid, "Warning",
                   pl.ev_reason, "resource_claim", "%s", pl.ev_msg ? pl.ev_msg : "");
        if (err == DRA_OK)
            err = DRA_ENOTFOUND; /* retried with backoff until the template exists */
    }
    if (err != DRA_OK && !pl.ev_reason)
        logf_(s, DRA_SCHED_LOG_INFO, "%s: %s%s%s", key, dra_strerror(err), r.st.message[0] ? ": " : "",
              r.st.message);
    pthread_mutex_lock(&s->mu);
    sched_wq_done(&s->core.wq, key, err == DRA_OK, mono_ms());
    sched_plan_fini(&pl);
    dra_arena_fini(&r.ar);
}

/* ---- workers ------------------------------------------------------------------------------- */

typedef struct worker_arg {
    dra_sched *s;
    int controller;
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    dra_sched *s = w->s;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        if (w->controller) {
            int64_t next;
            const char *key;
            char buf[700];
            if (!s->all_synced) {
                pthread_cond_wait(&s->cc_cv, &s->mu);
                continue;
            }
            next = sched_wq_tick(&s->core.wq, mono_ms());
            if (!(key = sched_wq_get(&s->core.wq))) {
                wait_until(&s->cc_cv, &s->mu, next);
                continue;
            }
            snprintf(buf, sizeof buf, "%s", key);
            cc_work(s, buf);
        } else {
            sched_job *j = s->jobs;
            if (!j) {
                pthread_cond_wait(&s->job_cv, &s->mu);
                continue;
            }
            s->jobs = j->next;
            if (!s->jobs)
                s->jobs_tail = NULL;
            pthread_mutex_unlock(&s->mu);
            if (j->kind == JOB_BIND)
                do_bind(s, j);
            else
                do_unsched(s, j);
            job_free(s, j);
            pthread_mutex_lock(&s->mu);
        }
    }
    pthread_mutex_unlock(&s->mu);
    dra_free(s->mem, w);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------------------- */

static const struct {
    dra_kind kind;
    dra_gvr gvr;
} kinds[NKINDS] = {
    {DRA_KIND_NODE, DRA_GVR_NODES},
    {DRA_KIND_DEVICE_CLASS, DRA_GVR_CLASSES},
    {DRA_KIND_RESOURCE_SLICE, DRA_GVR_SLICES},
    {DRA_KIND_RESOURCE_CLAIM_TEMPLATE, DRA_GVR_TEMPLATES},
    {DRA_KIND_RESOURCE_CLAIM, DRA_GVR_CLAIMS},
    {DRA_KIND_POD, DRA_GVR_PODS},
};

static dra_err start_worker(dra_sched *s, int controller)
{
    worker_arg *w = dra_calloc(s->mem, 1, sizeof *w);
    if (!w)
        return DRA_ENOMEM;
    w->s = s;
    w->controller = controller;
    if (pthread_create(&s->workers[s->nworkers], NULL, worker_main, w)) {
        dra_free(s->mem, w);
        return DRA_EIO;
    }
    s->nworkers++;
    return DRA_OK;
}

static dra_err start_threads(dra_sched *s)
{
    int nb = s->o.scheduler ? (s->o.bind_workers > 0 ? s->o.bind_workers : 16) : 0;
    int nc = s->o.claim_controller ? (s->o.controller_workers > 0 ? s->o.controller_workers : 16) : 0;
    dra_err err = DRA_OK;
    if (pthread_create(&s->ev_thread, NULL, event_main, s))
        return DRA_EIO;
    s->ev_started = 1;
    if (!(s->workers = dra_calloc(s->mem, (size_t)(nb + nc) + 1, sizeof *s->workers)))
        return DRA_ENOMEM;
    for (int i = 0; i < nb && err == DRA_OK; i++)
        err = start_worker(s, 0);
    for (int i = 0; i < nc && err == DRA_OK; i++)
        err = start_worker(s, 1);
    if (err == DRA_OK && s->o.scheduler) {
        if (pthread_create(&s->sched_thread, NULL, sched_main, s))
            err = DRA_EIO;
        else
            s->sched_started = 1;
    }
    for (int i = 0; i < NKINDS && err == DRA_OK; i++) {
        dra_reflector_opts ro;
        s->rk[i].s = s;
        s->rk[i].kind = kinds[i].kind;
        s->rk[i].gvr = kinds[i].gvr;
        memset(&ro, 0, sizeof ro);
        ro.gvr = kinds[i].gvr;
        ro.on_event = on_event;
        ro.on_synced = on_synced;
        ro.ud = &s->rk[i];
        err = dra_reflector_start(s->c, &ro, &s->refl[i]);
    }
    return err;
}

dra_err dra_sched_start(dra_cluster *c, const dra_sched_opts *o, dra_sched **out)
{
    dra_sched *s;
    dra_err err;
    *out = NULL;
    if (!c || !o || (!o->scheduler && !o->claim_controller))
        return DRA_EINVAL;
    if (!(s = dra_calloc(o->mem, 1, sizeof *s)))
        return DRA_ENOMEM;
    s->mem = o->mem;
    s->c = c;
    s->o = *o;
    s->name = dra_strdup(s->mem, o->scheduler_name ? o->scheduler_name : DRA_SCHED_DEFAULT_NAME);
    s->host = o->host ? dra_strdup(s->mem, o->host) : NULL;
    s->o.scheduler_name = s->name;
    s->o.host = s->host;
    {
        /* The cache's lock is held for short steps by many threads (the
         * reflectors, the workers, the scheduler): spinning a little
         * before sleeping saves most futex wake-ups on two cores. */
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
        pthread_mutex_init(&s->mu, &ma);
        pthread_mutexattr_destroy(&ma);
    }
    pthread_mutex_init(&s->ev_mu, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->sched_cv, &ca);
        pthread_cond_init(&s->cc_cv, &ca);
        pthread_cond_init(&s->job_cv, &ca);
        pthread_cond_init(&s->idle_cv, &ca);
        pthread_cond_init(&s->ev_cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (!s->name || (o->host && !s->host) || (err = sched_core_init(&s->core, &s->o)) != DRA_OK) {
        err = DRA_ENOMEM;
        goto fail;
    }
    if ((err = start_threads(s)) != DRA_OK)
        goto fail;
    *out = s;
    return DRA_OK;
fail:
    dra_sched_stop(s);
    return err;
}

void dra_sched_stop(dra_sched *s)
{
    if (!s)
        return;
    for (int i = 0; i < NKINDS; i++)
        dra_reflector_stop(s->refl[i]);
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->sched_cv);
    pthread_cond_broadcast(&s->cc_cv);
    pthread_cond_broadcast(&s->job_cv);
    pthread_mutex_unlock(&s->mu);
    if (s->sched_started)
        pthread_join(s->sched_thread, NULL);
    for (size_t i = 0; i < s->nworkers; i++)
        pthread_join(s->workers[i], NULL);
    /* Events still queued are dropped; the one being sent finishes. */
    pthread_mutex_lock(&s->ev_mu);
    s->ev_stop = 1;
    pthread_cond_broadcast(&s->ev_cv);
    pthread_mutex_unlock(&s->ev_mu);
    if (s->ev_started)
        pthread_join(s->ev_thread, NULL);
    while (s->ev_head) {
        sched_event *e = s->ev_head;
        s->ev_head = e->next;
        event_free(s, e);
    }
    while (s->jobs) {
        sched_job *j = s->jobs;
        s->jobs = j->next;
        job_free(s, j);
    }
    sched_core_fini(&s->core);
    pthread_cond_destroy(&s->sched_cv);
    pthread_cond_destroy(&s->cc_cv);
    pthread_cond_destroy(&s->job_cv);
    pthread_cond_destroy(&s->idle_cv);
    pthread_cond_destroy(&s->ev_cv);
    pthread_mutex_destroy(&s->ev_mu);
    pthread_mutex_destroy(&s->mu);
    dra_free(s->mem, s->workers);
    dra_free(s->mem, s->name);
    dra_free(s->mem, s->host);
    dra_free(s->mem, s);
}

int dra_sched_synced(dra_sched *s)
{
    int r;
    pthread_mutex_lock(&s->mu);
    r = s->all_synced;
    pthread_mutex_unlock(&s->mu);
    return r;
}

void dra_sched_get_stats(dra_sched *s, dra_sched_stats *st)
{
    pthread_mutex_lock(&s->mu);
    *st = s->core.st;
    st->pending = s->core.npending;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&s->ev_mu);
    st->events_dropped = s->ev_dropped;
    pthread_mutex_unlock(&s->ev_mu);
}
