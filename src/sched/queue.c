/*
 * queue.c: kube-scheduler's scheduling queue, simplified: an active FIFO,
 * a backoff heap (1 s doubling to 10 s per failed attempt), the
 * unschedulable pods that wait for a cluster event that may help (or a
 * 5-minute flush), and pods gated by PreEnqueue until their claims exist.
 * Also the claim controller's work queue (client-go's rate-limited
 * workqueue: one worker per key at a time, 5 ms doubling retries).
 */
#include <stdio.h>
#include <string.h>

#include "sched_int.h"

/* ---- lists ------------------------------------------------------------------ */

static void list_push(sc_pod **head, sc_pod **tail, sc_pod *p)
{
    p->qnext = NULL;
    p->qprev = *tail;
    if (*tail)
        (*tail)->qnext = p;
    else
        *head = p;
    *tail = p;
}

static void list_del(sc_pod **head, sc_pod **tail, sc_pod *p)
{
    if (p->qprev)
        p->qprev->qnext = p->qnext;
    else
        *head = p->qnext;
    if (p->qnext)
        p->qnext->qprev = p->qprev;
    else
        *tail = p->qprev;
    p->qprev = p->qnext = NULL;
}

/* ---- backoff heap ----------------------------------------------------------- */

static int heap_less(const sc_pod *a, const sc_pod *b)
{
    return a->backoff_until_ms < b->backoff_until_ms;
}

static void heap_set(sc_core *c, size_t i, sc_pod *p)
{
    c->backoff[i] = p;
    p->heap_idx = i;
}

static void heap_up(sc_core *c, size_t i)
{
    sc_pod *p = c->backoff[i];
    while (i > 0 && heap_less(p, c->backoff[(i - 1) / 2])) {
        heap_set(c, i, c->backoff[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(c, i, p);
}

static void heap_down(sc_core *c, size_t i)
{
    sc_pod *p = c->backoff[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        sc_pod *best = p;
        if (l < c->nbackoff && heap_less(c->backoff[l], best))
            m = l, best = c->backoff[l];
        if (l + 1 < c->nbackoff && heap_less(c->backoff[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        heap_set(c, i, c->backoff[m]);
        i = m;
    }
    heap_set(c, i, p);
}

static int heap_push(sc_core *c, sc_pod *p)
{
    if (dra_grow(c->mem, (void **)&c->backoff, &c->capbackoff, c->nbackoff + 1,
                 sizeof *c->backoff))
        return 0;
    heap_set(c, c->nbackoff++, p);
    heap_up(c, c->nbackoff - 1);
    return 1;
}

static void heap_del(sc_core *c, sc_pod *p)
{
    size_t i = p->heap_idx;
    sc_pod *last = c->backoff[--c->nbackoff];
    if (i < c->nbackoff) {
        heap_set(c, i, last);
        heap_down(c, i);
        heap_up(c, last->heap_idx);
    }
}

/* ---- positions ----------------------------------------------------------------- */

void sched_queue_remove(sc_core *c, sc_pod *p)
{
    switch (p->q) {
    case SC_Q_ACTIVE:
        list_del(&c->active, &c->active_tail, p);
        break;
    case SC_Q_UNSCHED:
        list_del(&c->unsched, &c->unsched_tail, p);
        break;
    case SC_Q_GATED:
        list_del(&c->gated, &c->gated_tail, p);
        break;
    case SC_Q_BACKOFF:
        heap_del(c, p);
        break;
    default:
        return; /* NONE, CYCLE, BINDING: nothing to unlink */
    }
    c->npending--;
    p->q = SC_Q_NONE;
}

static void put(sc_core *c, sc_pod *p, sc_qstate q, int64_t now_ms)
{
    p->q = q;
    p->queued_ms = now_ms;
    c->npending++;
    switch (q) {
    case SC_Q_ACTIVE:
        list_push(&c->active, &c->active_tail, p);
        break;
    case SC_Q_UNSCHED:
        list_push(&c->unsched, &c->unsched_tail, p);
        break;
    case SC_Q_GATED:
        list_push(&c->gated, &c->gated_tail, p);
        break;
    case SC_Q_BACKOFF:
        if (!heap_push(c, p)) /* out of memory: active rather than lost */
            list_push(&c->active, &c->active_tail, p), p->q = SC_Q_ACTIVE;
        break;
    default:
        c->npending--;
        break;
    }
}

/* Active, or backoff while the pod's backoff has not expired. */
static void requeue(sc_core *c, sc_pod *p, int64_t now_ms)
{
    put(c, p, p->backoff_until_ms > now_ms ? SC_Q_BACKOFF : SC_Q_ACTIVE, now_ms);
}

int sched_pod_ours(const sc_core *c, const sc_podinfo *p)
{
    return c->scheduler && !p->node_name && !p->deleting && !sched_pod_terminal(p) &&
           !strcmp(p->scheduler_name, c->sched_name);
}

int sched_pre_enqueue(sc_core *c, const sc_podinfo *p, const char **wait, dra_buf *why)
{
    *wait = NULL;
    for (size_t i = 0; i < p->nclaims; i++) {
        const sc_pclaim *pc = &p->claims[i];
        const char *name;
        sc_claim *cl;
        dra_err e = sched_pod_claim_name(p, pc, &name);
        if (e == DRA_ENOTFOUND) {
            if (why)
                dra_buf_printf(why, "pod \"%s/%s\": ResourceClaim not created yet", p->ns, p->name);
            return 0;
        }
        if (e != DRA_OK) {
            if (why)
                dra_buf_printf(why, "pod \"%s/%s\", spec.resourceClaim \"%s\": none of the "
                               "supported fields are set", p->ns, p->name, pc->name);
            return 0;
        }
        if (!name)
            continue;
        cl = sched_claim_get(c, p->ns, name);
        if (!cl) {
            *wait = name;
            if (why)
                dra_buf_printf(why, "resourceclaim.resource.k8s.io \"%s\" not found", name);
            return 0;
        }
        if (cl->deleting) {
            *wait = name;
            if (why)
                dra_buf_printf(why, "resourceclaim \"%s\" is being deleted", name);
            return 0;
        }
        if (pc->template_name && (!cl->owner_uid || strcmp(cl->owner_uid, p->uid))) {
            *wait = name;
            if (why)
                dra_buf_printf(why, "ResourceClaim %s/%s was not created for pod %s/%s (pod is "
                               "not owner)", p->ns, name, p->ns, p->name);
            return 0;
        }
    }
    return 1;
}

void sched_queue_admit(sc_core *c, sc_pod *p, int64_t now_ms)
{
    const char *wait;
    if (p->q == SC_Q_CYCLE || p->q == SC_Q_BINDING) {
        p->updated = 1;
        return;
    }
    sched_queue_remove(c, p);
    if (!sched_pod_ours(c, p->info) || p->assumed_node)
        return;
    if (p->info->gated || !sched_pre_enqueue(c, p->info, &wait, NULL)) {
        put(c, p, SC_Q_GATED, now_ms);
        return;
    }
    requeue(c, p, now_ms);
}

sc_pod *sched_queue_pop(sc_core *c, int64_t now_ms)
{
    sc_pod *p;
    sched_queue_tick(c, now_ms);
    if (!(p = c->active))
        return NULL;
    list_del(&c->active, &c->active_tail, p);
    c->npending--;
    p->q = SC_Q_CYCLE;
    p->updated = 0;
    p->cycle_move_seq = c->move_seq;
    return p;
}

static int64_t backoff_ms(int attempts)
{
    int64_t d = SC_BACKOFF_INITIAL_MS;
    for (int i = 1; i < attempts && d < SC_BACKOFF_MAX_MS; i++)
        d *= 2;
    return d < SC_BACKOFF_MAX_MS ? d : SC_BACKOFF_MAX_MS;
}

void sched_queue_failed(sc_core *c, sc_pod *p, int64_t now_ms, int backoff_only)
{
    p->q = SC_Q_NONE;
    p->attempts++;
    p->backoff_until_ms = now_ms + backoff_ms(p->attempts);
    if (p->updated) {
        p->updated = 0;
        sched_queue_admit(c, p, now_ms);
        return;
    }
    if (!sched_pod_ours(c, p->info) || p->assumed_node)
        return;
    /* An event that could have helped arrived during the attempt: do not
     * park the pod waiting for another one. */
    if (backoff_only || p->cycle_move_seq != c->move_seq)
        put(c, p, SC_Q_BACKOFF, now_ms);
    else
        put(c, p, SC_Q_UNSCHED, now_ms);
}

void sched_queue_wait(sc_core *c, sc_pod *p, int64_t now_ms)
{
    p->q = SC_Q_NONE;
    if (p->updated) {
        p->updated = 0;
        sched_queue_admit(c, p, now_ms);
        return;
    }
    if (sched_pod_ours(c, p->info) && !p->assumed_node)
        put(c, p, SC_Q_GATED, now_ms);
}

void sched_queue_move_all(sc_core *c, int64_t now_ms)
{
    c->move_seq++;
    while (c->unsched) {
        sc_pod *p = c->unsched;
        sched_queue_remove(c, p);
        requeue(c, p, now_ms);
    }
}

void sched_queue_wake_claim(sc_core *c, const char *key, int64_t now_ms)
{
    if (!key) {
        size_t n = 0;
        for (sc_pod *p = c->gated; p; p = p->qnext)
            n++;
        /* Each pod once: one still gated goes back to the tail. */
        while (n-- > 0 && c->gated) {
            sc_pod *p = c->gated;
            sched_queue_remove(c, p);
            sched_queue_admit(c, p, now_ms);
        }
        return;
    }
    size_t n;
    sc_pod **v = sched_claim_users(c, key, &n);
    for (size_t i = 0; i < n; i++)
        if (v[i]->q == SC_Q_GATED || v[i]->q == SC_Q_UNSCHED)
            sched_queue_admit(c, v[i], now_ms);
        else if (v[i]->q == SC_Q_CYCLE)
            v[i]->updated = 1;
}

int64_t sched_queue_tick(sc_core *c, int64_t now_ms)
{
    int64_t next = -1;
    while (c->nbackoff && c->backoff[0]->backoff_until_ms <= now_ms) {
        sc_pod *p = c->backoff[0];
        sched_queue_remove(c, p);
        put(c, p, SC_Q_ACTIVE, now_ms);
    }
    while (c->unsched && c->unsched->queued_ms + SC_UNSCHED_FLUSH_MS <= now_ms) {
        sc_pod *p = c->unsched;
        sched_queue_remove(c, p);
        requeue(c, p, now_ms);
    }
    /* Gated pods are looked at again as rarely, in case an event was lost. */
    while (c->gated && c->gated->queued_ms + SC_UNSCHED_FLUSH_MS <= now_ms) {
        sc_pod *p = c->gated;
        sched_queue_remove(c, p);
        sched_queue_admit(c, p, now_ms);
        if (p->q == SC_Q_GATED)
            p->queued_ms = now_ms;
    }
    if (c->nbackoff)
        next = c->backoff[0]->backoff_until_ms;
    if (c->unsched && (next < 0 || c->unsched->queued_ms + SC_UNSCHED_FLUSH_MS < next))
        next = c->unsched->queued_ms + SC_UNSCHED_FLUSH_MS;
    if (c->gated && (next < 0 || c->gated->queued_ms + SC_UNSCHED_FLUSH_MS < next))
        next = c->gated->queued_ms + SC_UNSCHED_FLUSH_MS;
    return next;
}

/* ---- the controller's work queue ---------------------------------------------------- */

enum { WQ_IDLE = 0, WQ_QUEUED, WQ_BUSY, WQ_BUSY_DIRTY, WQ_DELAYED };

void sched_wq_init(sc_wq *q, const dra_mem *mem)
{
    memset(q, 0, sizeof *q);
    q->mem = mem;
    dra_map_init(&q->items, mem);
}

void sched_wq_fini(sc_wq *q)
{
    for (size_t i = 0; i < q->items.n; i++)
        if (q->items.entries[i].key)
            dra_free(q->mem, q->items.entries[i].val);
    dra_map_fini(&q->items);
    dra_free(q->mem, q->delayed);
    memset(q, 0, sizeof *q);
}

static void fifo_push(sc_wq *q, sc_wq_item *it)
{
    it->next = NULL;
    it->state = WQ_QUEUED;
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
}

static void dheap_swap(sc_wq *q, size_t i, size_t j)
{
    sc_wq_item *t = q->delayed[i];
    q->delayed[i] = q->delayed[j];
    q->delayed[j] = t;
}

static void dheap_fix(sc_wq *q, size_t i)
{
    while (i > 0 && q->delayed[i]->not_before_ms < q->delayed[(i - 1) / 2]->not_before_ms) {
        dheap_swap(q, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < q->ndelayed && q->delayed[l]->not_before_ms < q->delayed[m]->not_before_ms)
            m = l;
        if (l + 1 < q->ndelayed && q->delayed[l + 1]->not_before_ms < q->delayed[m]->not_before_ms)
            m = l + 1;
        if (m == i)
            return;
        dheap_swap(q, i, m);
        i = m;
    }
}

static void dheap_remove_at(sc_wq *q, size_t i)
{
    q->delayed[i] = q->delayed[--q->ndelayed];
    if (i < q->ndelayed)
        dheap_fix(q, i);
}

dra_err sched_wq_add(sc_wq *q, const char *key)
{
    size_t len = strlen(key);
    sc_wq_item *it = dra_map_get(&q->items, key, len);
    if (!it) {
        if (!(it = dra_calloc(q->mem, 1, sizeof *it + len + 1)))
            return DRA_ENOMEM;
        it->key = memcpy((char *)(it + 1), key, len + 1);
        if (dra_map_put(&q->items, it->key, len, it)) {
            dra_free(q->mem, it);
            return DRA_ENOMEM;
        }
    }
    switch (it->state) {
    case WQ_IDLE:
        fifo_push(q, it);
        break;
    case WQ_BUSY:
        it->state = WQ_BUSY_DIRTY;
        break;
    case WQ_DELAYED:
        for (size_t i = 0; i < q->ndelayed; i++)
            if (q->delayed[i] == it) {
                dheap_remove_at(q, i);
                break;
            }
        fifo_push(q, it);
        break;
    default:
        break; /* queued or dirty already */
    }
    return DRA_OK;
}

int64_t sched_wq_tick(sc_wq *q, int64_t now_ms)
{
    while (q->ndelayed && q->delayed[0]->not_before_ms <= now_ms) {
        sc_wq_item *it = q->delayed[0];
        dheap_remove_at(q, 0);
        fifo_push(q, it);
    }
    return q->ndelayed ? q->delayed[0]->not_before_ms : -1;
}

const char *sched_wq_get(sc_wq *q)
{
    sc_wq_item *it = q->head;
    if (!it)
        return NULL;
    q->head = it->next;
    if (!q->head)
        q->tail = NULL;
    it->state = WQ_BUSY;
    return it->key;
}

static void drop(sc_wq *q, sc_wq_item *it)
{
    dra_map_del(&q->items, it->key, strlen(it->key));
    dra_free(q->mem, it);
}

void sched_wq_done(sc_wq *q, const char *key, int ok, int64_t now_ms)
{
    sc_wq_item *it = dra_map_get(&q->items, key, strlen(key));
    int64_t delay = 5;
    if (!it)
        return;
    if (ok) {
        it->failures = 0;
        if (it->state == WQ_BUSY_DIRTY)
            fifo_push(q, it);
        else
            drop(q, it);
        return;
    }
    if (it->state == WQ_BUSY_DIRTY) {
        fifo_push(q, it);
        return;
    }
    for (int i = 0; i < it->failures && delay < 30000; i++)
        delay *= 2;
    it->failures++;
    it->not_before_ms = now_ms + (delay < 30000 ? delay : 30000);
    if (dra_grow(q->mem, (void **)&q->delayed, &q->capdelayed, q->ndelayed + 1,
                 sizeof *q->delayed)) {
        fifo_push(q, it); /* no memory for the timer: retry at once */
        return;
    }
    it->state = WQ_DELAYED;
    q->delayed[q->ndelayed++] = it;
    dheap_fix(q, q->ndelayed - 1);
}

size_t sched_wq_len(const sc_wq *q)
{
    size_t n = 0;
    for (const sc_wq_item *it = q->head; it; it = it->next)
        n++;
    return n + q->ndelayed;
}
