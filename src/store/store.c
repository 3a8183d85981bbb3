/*
 * store.c: the in-memory side of the store, the group commit and the
 * maintenance thread. Readers (get, list, watch polls) take a read lock on
 * the index; only the committing writer (the leader of a batch) changes
 * it, after the batch has been committed, so nothing unacknowledged is
 * ever visible and the counter never goes back. The database side is
 * store_sql.c.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_int.h"

#define BATCH_MAX 256
#define KEY_MAX 1024

/* A value: the public view, its reference count, and the bytes (JSON,
 * then namespace and name) right after the struct. */
typedef struct sval {
    atomic_size_t refs;
    _Atomic(dra_store_aux *) aux;
    const dra_mem *mem;
    dra_store_obj pub;
    const char *ns, *name;
} sval;

#define SVAL(o) ((sval *)((char *)(o) - offsetof(sval, pub)))

typedef struct sentry {
    sval *cur;
    int dead; /* removed from objs, still named by sorted (see sres) */
    size_t keylen;
    char key[]; /* "ns/name" */
} sentry;

typedef struct sevent {
    uint64_t rv;
    int type;
    int counted; /* obj is not its object's current state: history bytes */
    sval *obj, *prev;
} sevent;

typedef struct sres {
    char *name;
    int64_t id; /* 0 until the database knows it */
    dra_map objs; /* key -> sentry */
    /* The entries sorted by (namespace, name), for lists, so paged
     * lists and lists of one namespace read a slice of it. An update
     * keeps the order; objects that came since the last list wait in
     * |added|, and those that went stay in |sorted| marked dead (their
     * entries in |gone|, freed then), so the first list after writes
     * merges (sorting only what came) instead of sorting everything.
     * sdirty: rebuild from objs (at start, or when the pending work
     * outgrew a rebuild). Changed under the write lock, or under the
     * read lock and slock (the refresh). */
    pthread_mutex_t slock;
    sentry **sorted;
    size_t nsorted, scap;
    sentry **spare; /* the merge's output, then the old array */
    sentry **added, **gone;
    size_t spcap, nadded, cadded, ngone, cgone;
    int sdirty;
    sevent *ring; /* circular history, oldest at head */
    size_t cap, head, n;
    uint64_t compacted_rv;
    dra_store_watch *watchers;
} sres;

struct dra_store_watch {
    dra_store *s;
    sres *r;
    char *ns; /* NULL: all */
    uint64_t cursor;
    void (*notify)(void *ud);
    void *ud;
    dra_store_watch *next, *prev;
};

/* One queued write and its completion. Its producer sleeps on |sem|
 * until the write is done or the producer is made the next leader. */
typedef struct wreq {
    dra_store_write *w;
    sres *r;
    char key[KEY_MAX];
    size_t keylen;
    dra_err err;
    int done; /* set before the post that wakes the producer */
    int lead; /* set (under qlock) when this producer is to commit next */
    sem_t sem;
    sval *val;   /* built value (new state or DELETED state) */
    sval *prev;  /* the state it replaces */
    int type;
    struct wreq *next;
} wreq;

struct dra_store {
    const dra_mem *mem;
    dra_store_opts opts;
    store_db *db;
    pthread_rwlock_t lock; /* index, histories, counters */
    dra_map resmap;        /* name -> sres */
    uint64_t rv;
    size_t nobjects, live_bytes, hist_events, hist_bytes;
    uint64_t batches, writes, compactions, compact_max_us;

    /* The queue of writes. The producer that finds no commit running
     * becomes the leader: it takes the queue as one batch, commits it,
     * hands the lead to the producer at the head of what queued
     * meanwhile, and wakes its batch. So a lone writer commits on its
     * own thread, and under load one wake-up per write remains. */
    pthread_mutex_t qlock;
    pthread_cond_t idle; /* closing: the last batch is done */
    wreq *qhead, *qtail;
    int committing; /* a leader holds the lead */
    int closing;

    /* The maintenance thread: compaction steps and WAL checkpoints, off
     * the commit path. */
    pthread_t maint;
    pthread_mutex_t mlock;
    pthread_cond_t mcv;
    int mkick, mstop, maint_started;
    pthread_mutex_t clock; /* one compaction step at a time */

    pthread_mutex_t wlock;  /* watcher lists */
    pthread_mutex_t dblock; /* the database connection */
};

/* ---- values ---------------------------------------------------------------- */

/* A value of |len| JSON bytes with |rv|'s digits inserted at |rv_at|. */
static sval *sval_new(const dra_mem *mem, const char *json, size_t len,
                      size_t rv_at, uint64_t rv, const char *ns,
                      const char *name)
{
    char digits[24];
    size_t nd = 0, nsl = strlen(ns), nl = strlen(name), total;
    sval *v;
    char *p;
    if (rv_at != DRA_STORE_NO_RV)
        nd = (size_t)snprintf(digits, sizeof digits, "%llu",
                              (unsigned long long)rv);
    total = sizeof *v + len + nd + 1 + nsl + 1 + nl + 1;
    v = dra_malloc(mem, total);
    if (!v)
        return NULL;
    atomic_init(&v->refs, 1);
    atomic_init(&v->aux, NULL);
    v->mem = mem;
    p = (char *)(v + 1);
    if (rv_at == DRA_STORE_NO_RV) {
        memcpy(p, json, len);
    } else {
        memcpy(p, json, rv_at);
        memcpy(p + rv_at, digits, nd);
        memcpy(p + rv_at + nd, json + rv_at, len - rv_at);
    }
    p[len + nd] = '\0';
    v->pub.rv = rv;
    v->pub.len = len + nd;
    v->pub.json = p;
    p += len + nd + 1;
    memcpy(p, ns, nsl + 1);
    v->ns = p;
    p += nsl + 1;
    memcpy(p, name, nl + 1);
    v->name = p;
    return v;
}

static sval *sval_ref(sval *v)
{
    if (v)
        atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
    return v;
}

static void sval_unref(sval *v)
{
    if (v && atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1) {
        dra_store_aux *aux = atomic_load(&v->aux);
        if (aux)
            aux->free(aux);
        dra_free(v->mem, v);
    }
}

dra_store_aux *dra_store_obj_aux(const dra_store_obj *o)
{
    return atomic_load(&SVAL(o)->aux);
}

dra_store_aux *dra_store_obj_aux_attach(dra_store_obj *o, dra_store_aux *aux)
{
    dra_store_aux *none = NULL;
    if (atomic_compare_exchange_strong(&SVAL(o)->aux, &none, aux))
        return aux;
    return none;
}

dra_store_obj *dra_store_obj_ref(dra_store_obj *o)
{
    if (o)
        sval_ref(SVAL(o));
    return o;
}

void dra_store_obj_unref(dra_store_obj *o)
{
    if (o)
        sval_unref(SVAL(o));
}

void dra_store_event_fini(dra_store_event *ev)
{
    dra_store_obj_unref(ev->obj);
    dra_store_obj_unref(ev->prev);
    memset(ev, 0, sizeof *ev);
}

/* ---- resources and keys ----------------------------------------------------- */

static size_t make_key(char *buf, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 2 > KEY_MAX)
        return 0;
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b + 1);
    return a + 1 + b;
}

static sres *res_find(dra_store *s, const char *name)
{
    return dra_map_get(&s->resmap, name, strlen(name));
}

static void entry_free(dra_store *s, sentry *e)
{
    sval_unref(e->cur);
    dra_free(s->mem, e);
}

/* Frees the entries that went since the last refresh and forgets
 * those that came (they are in objs). */
static void sorted_drop_pending(dra_store *s, sres *r)
{
    for (size_t i = 0; i < r->ngone; i++)
        entry_free(s, r->gone[i]);
    r->ngone = 0;
    r->nadded = 0;
}

/* Marks the sorted index for a rebuild from objs (write lock held). */
static void sorted_invalidate(dra_store *s, sres *r)
{
    sorted_drop_pending(s, r);
    r->sdirty = 1;
}

/* Pending work past this (and past the sorted entries) costs more to
 * merge than a rebuild. */
#define SORTED_PENDING_MIN 1024

static int sorted_pending_full(const sres *r, size_t n)
{
    return n >= SORTED_PENDING_MIN && n >= r->nsorted;
}

/* |e| came into objs (write lock held). */
static void sorted_note_added(dra_store *s, sres *r, sentry *e)
{
    if (r->sdirty)
        return;
    if (sorted_pending_full(r, r->nadded) ||
        dra_grow(s->mem, (void **)&r->added, &r->cadded, r->nadded + 1, sizeof *r->added)) {
        sorted_invalidate(s, r);
        return;
    }
    r->added[r->nadded++] = e;
}

/* |e| left objs (write lock held): freed now, or once no sorted array
 * names it. */
static void sorted_note_gone(dra_store *s, sres *r, sentry *e)
{
    if (!r->sdirty && !sorted_pending_full(r, r->ngone) &&
        !dra_grow(s->mem, (void **)&r->gone, &r->cgone, r->ngone + 1, sizeof *r->gone)) {
        e->dead = 1;
        r->gone[r->ngone++] = e;
        return;
    }
    entry_free(s, e);
    if (!r->sdirty)
        sorted_invalidate(s, r);
}

static void res_free(dra_store *s, sres *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->objs.n; i++) {
        sentry *e = r->objs.entries[i].val;
        if (r->objs.entries[i].key && e)
            entry_free(s, e);
    }
    dra_map_fini(&r->objs);
    sorted_drop_pending(s, r);
    dra_free(s->mem, r->sorted);
    dra_free(s->mem, r->spare);
    dra_free(s->mem, r->added);
    dra_free(s->mem, r->gone);
    pthread_mutex_destroy(&r->slock);
    for (size_t i = 0; i < r->n; i++) {
        sevent *ev = &r->ring[(r->head + i) % r->cap];
        sval_unref(ev->obj);
        sval_unref(ev->prev);
    }
    dra_free(s->mem, r->ring);
    dra_free(s->mem, r->name);
    dra_free(s->mem, r);
}

/* Finds or creates the in-memory resource (the caller holds the write
 * lock). NULL on ENOMEM. */
static sres *res_get(dra_store *s, const char *name)
{
    sres *r = res_find(s, name);
    if (r)
        return r;
    r = dra_calloc(s->mem, 1, sizeof *r);
    if (!r)
        return NULL;
    r->name = dra_strdup(s->mem, name);
    dra_map_init(&r->objs, s->mem);
    pthread_mutex_init(&r->slock, NULL);
    r->sdirty = 1;
    if (!r->name || dra_map_put(&s->resmap, r->name, strlen(r->name), r)) {
        res_free(s, r);
        return NULL;
    }
    return r;
}

static sevent *ring_at(sres *r, size_t i)
{
    return &r->ring[(r->head + i) % r->cap];
}

static dra_err ring_push(dra_store *s, sres *r, const sevent *ev)
{
    if (r->n == r->cap) {
        size_t ncap = r->cap ? r->cap * 2 : 64;
        sevent *nr = dra_calloc(s->mem, ncap, sizeof *nr);
        if (!nr)
            return DRA_ENOMEM;
        for (size_t i = 0; i < r->n; i++)
            nr[i] = *ring_at(r, i);
        dra_free(s->mem, r->ring);
        r->ring = nr;
        r->cap = ncap;
        r->head = 0;
    }
    *ring_at(r, r->n) = *ev;
    r->n++;
    s->hist_events++;
    if (ev->counted)
        s->hist_bytes += ev->obj->pub.len;
    return DRA_OK;
}

/* Index of the first event with rv > |after| (r->n when none). */
static size_t ring_after(sres *r, uint64_t after);

/* The event that recorded state |rv| is superseded: its bytes now count
 * as history (the database filled them in the same transaction). */
static void ring_supersede(dra_store *s, sres *r, uint64_t rv)
{
    size_t i = ring_after(r, rv - 1);
    sevent *ev;
    if (i >= r->n || (ev = ring_at(r, i))->rv != rv || ev->counted)
        return;
    ev->counted = 1;
    s->hist_bytes += ev->obj->pub.len;
}

/* Index of the first event with rv > |after| (r->n when none). */
static size_t ring_after(sres *r, uint64_t after)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ring_at(r, mid)->rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Adds |key|, absent from |r|, with |v| (a new reference) as its state.
 * The write lock is held. */
static dra_err index_add(dra_store *s, sres *r, const char *key, size_t keylen,
                         sval *v, sentry **out)
{
    sentry *e = dra_malloc(s->mem, sizeof *e + keylen + 1);
    if (!e)
        return DRA_ENOMEM;
    memcpy(e->key, key, keylen + 1);
    e->keylen = keylen;
    e->cur = v;
    e->dead = 0;
    if (dra_map_put(&r->objs, e->key, keylen, e)) {
        dra_free(s->mem, e);
        return DRA_ENOMEM;
    }
    s->nobjects++;
    s->live_bytes += v->pub.len;
    sorted_note_added(s, r, e);
    if (out)
        *out = e;
    return DRA_OK;
}

/* Makes |v| (a new reference, or NULL to delete) the current state of
 * |key| in |r|, updating the counters. The write lock is held. */
static dra_err index_set(dra_store *s, sres *r, const char *key, size_t keylen,
                         sval *v)
{
    sentry *e = dra_map_get(&r->objs, key, keylen);
    if (!v) {
        if (e) {
            s->nobjects--;
            s->live_bytes -= e->cur->pub.len;
            dra_map_del(&r->objs, key, keylen);
            sorted_note_gone(s, r, e);
        }
        return DRA_OK;
    }
    if (e) {
        s->live_bytes -= e->cur->pub.len;
        sval_unref(e->cur);
        e->cur = v;
        s->live_bytes += v->pub.len;
        return DRA_OK;
    }
    return index_add(s, r, key, keylen, v, NULL);
}

/* ---- loading ------------------------------------------------------------------ */

typedef struct loader {
    dra_store *s;
    dra_map byid; /* id bytes -> sres */
    /* Rows that are neither a live object's current state nor history:
     * states superseded before their resource's compaction point, and
     * deletions from before it (a step that failed to delete them, or a
     * crash between). Deleted once the load is done. */
    uint64_t *garbage;
    size_t ngarbage, cgarbage;
    dra_arena a;
    int64_t last_id; /* rows come grouped: remember the last lookup */
    sres *last_r;
    struct load_pipe *pipe; /* while rows load: the indexer thread */
} loader;

static sres *load_res(loader *l, int64_t id)
{
    if (l->last_r && l->last_id == id)
        return l->last_r;
    l->last_r = dra_map_get(&l->byid, (const char *)&id, sizeof id);
    l->last_id = id;
    return l->last_r;
}

static dra_err load_resource(void *ud, int64_t id, const char *name,
                             uint64_t crv)
{
    loader *l = ud;
    sres *r = res_get(l->s, name);
    char *k;
    if (!r)
        return DRA_ENOMEM;
    r->id = id;
    r->compacted_rv = crv;
    k = dra_arena_alloc(&l->a, sizeof id);
    if (!k)
        return DRA_ENOMEM;
    memcpy(k, &id, sizeof id);
    return dra_map_put(&l->byid, k, sizeof id, r);
}

static dra_err garbage_add(loader *l, uint64_t rv)
{
    void *p = l->garbage;
    if (dra_grow(l->s->mem, &p, &l->cgarbage, l->ngarbage + 1, sizeof *l->garbage))
        return DRA_ENOMEM;
    l->garbage = p;
    l->garbage[l->ngarbage++] = rv;
    return DRA_OK;
}

/* 1 with the lengths when "ns/name" fits a key (rows any write made do). */
static int key_fits(const char *ns, const char *name, size_t *nsl, size_t *nl)
{
    *nsl = strlen(ns);
    *nl = strlen(name);
    return *nsl + *nl + 2 <= KEY_MAX;
}

/* ---- loading in two threads ---------------------------------------------------
 * Opening a store with 100,000 objects is stepping SQLite, then making
 * each row's value (an allocation, fresh pages, a copy), adding it to the
 * index (hashing, a cache miss per insert) and replaying the history
 * into the rings. The caller's thread steps SQLite and copies the rows
 * into batch buffers that are reused, so stay mapped and warm; a loader
 * thread does all the rest, in row order. Until pipe_end has joined it,
 * only that thread touches the index, the rings, the garbage list and
 * the arena (the opening thread used the arena for the resource rows,
 * before the first batch); the opening thread alone reads the id map. */
#define LOAD_BATCH 256
#define LOAD_BATCH_BYTES (256u << 10)
#define LOAD_SLOTS 8

typedef struct load_item {
    sres *r;
    uint64_t rv;
    int type;
    size_t at, len; /* JSON at buf + at, then the namespace and name */
} load_item;

typedef struct load_slot {
    size_t n, used, cap; /* items; bytes used of buf, its size */
    char *buf;
    load_item item[LOAD_BATCH];
} load_slot;

typedef struct load_pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a batch published or taken, or the end */
    pthread_t th;
    size_t head, tail; /* batches published, batches indexed */
    int done;          /* no more batches come */
    dra_err err;       /* the indexer's first failure */
    load_slot slot[LOAD_SLOTS];
} load_pipe;

static dra_err apply_event(loader *l, sres *r, uint64_t rv, int type, const char *ns,
                           const char *name, const char *value, size_t len);

static dra_err index_batch(loader *l, const load_slot *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const load_item *it = &b->item[i];
        const char *json = b->buf + it->at;
        const char *ns = json + it->len + 1;
        const char *name = ns + strlen(ns) + 1;
        dra_err e = apply_event(l, it->r, it->rv, it->type, ns, name, json, it->len);
        if (e)
            return e;
    }
    return DRA_OK;
}

static void *pipe_main(void *arg)
{
    loader *l = arg;
    load_pipe *p = l->pipe;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        load_slot *b;
        dra_err e;
        while (p->tail == p->head && !p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->tail == p->head)
            break;
        b = &p->slot[p->tail % LOAD_SLOTS];
        e = p->err;
        pthread_mutex_unlock(&p->mu);
        if (!e) /* after a failure the batches are only drained */
            e = index_batch(l, b);
        pthread_mutex_lock(&p->mu);
        if (e && !p->err)
            p->err = e;
        p->tail++;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Starts the indexer; without one (no memory, no thread) each row is
 * indexed as it comes, in the caller's thread. */
static void pipe_start(loader *l)
{
    load_pipe *p = dra_calloc(l->s->mem, 1, sizeof *p);
    if (!p)
        return;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    l->pipe = p;
    if (pthread_create(&p->th, NULL, pipe_main, l)) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        dra_free(l->s->mem, p);
        l->pipe = NULL;
    }
}

/* Hands over the batch being filled (|last|: and says it is the last);
 * waits while every slot is taken, so the next one is free. The
 * indexer's failure, if any. */
static dra_err pipe_publish(load_pipe *p, int last)
{
    dra_err e;
    pthread_mutex_lock(&p->mu);
    p->head++;
    p->done = last;
    pthread_cond_broadcast(&p->cv);
    while (!last && p->head - p->tail == LOAD_SLOTS)
        pthread_cond_wait(&p->cv, &p->mu);
    e = p->err;
    pthread_mutex_unlock(&p->mu);
    if (!last) {
        load_slot *b = &p->slot[p->head % LOAD_SLOTS];
        b->n = b->used = 0;
    }
    return e;
}

/* Ends the object rows: the last batch, the indexer joined. Safe to call
 * again. */
static dra_err pipe_end(loader *l)
{
    load_pipe *p = l->pipe;
    dra_err e;
    if (!p)
        return DRA_OK;
    pipe_publish(p, 1);
    pthread_join(p->th, NULL);
    e = p->err;
    for (size_t i = 0; i < LOAD_SLOTS; i++)
        dra_free(l->s->mem, p->slot[i].buf);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    dra_free(l->s->mem, p);
    l->pipe = NULL;
    return e;
}

/* Copies a row into the batch being filled (|ns| and |name| of |nsl|
 * and |nl| bytes); publishes the batch when full. */
static dra_err pipe_put(load_pipe *p, const dra_mem *mem, const load_item *row,
                        const char *value, const char *ns, size_t nsl, const char *name,
                        size_t nl)
{
    load_slot *b = &p->slot[p->head % LOAD_SLOTS];
    size_t need = row->len + 1 + nsl + 1 + nl + 1;
    load_item *it;
    char *d;
    if (b->cap - b->used < need) {
        size_t cap = b->cap ? b->cap : LOAD_BATCH_BYTES;
        char *nb;
        while (cap - b->used < need)
            cap *= 2;
        if (!(nb = dra_realloc(mem, b->buf, cap)))
            return DRA_ENOMEM;
        b->buf = nb;
        b->cap = cap;
    }
    it = &b->item[b->n++];
    *it = *row;
    it->at = b->used;
    d = b->buf + b->used;
    memcpy(d, value, row->len);
    d[row->len] = '\0';
    memcpy(d + row->len + 1, ns, nsl + 1);
    memcpy(d + row->len + 1 + nsl + 1, name, nl + 1);
    b->used += need;
    return b->n == LOAD_BATCH || b->used >= LOAD_BATCH_BYTES ? pipe_publish(p, 0) : DRA_OK;
}

/* A row, in version order. Before its resource's compaction point only
 * the latest state of each key matters (the live objects); after it,
 * each row is a history event as well, with the key's previous state. */
static dra_err apply_event(loader *l, sres *r, uint64_t rv, int type, const char *ns,
                           const char *name, const char *value, size_t len)
{
    char key[KEY_MAX];
    size_t kl = make_key(key, ns, name);
    sentry *e;
    sevent ev = {rv, type, type == DRA_STORE_DELETED, NULL, NULL};
    if (!kl)
        return DRA_OK;
    e = dra_map_get(&r->objs, key, kl);
    if (e) {
        /* The key's previous state is superseded: history, or garbage. */
        uint64_t prv = e->cur->pub.rv;
        if (prv > r->compacted_rv)
            ring_supersede(l->s, r, prv);
        else if (garbage_add(l, prv))
            return DRA_ENOMEM;
    }
    /* A deletion from before the point is no history either. */
    if (type == DRA_STORE_DELETED && rv <= r->compacted_rv)
        return garbage_add(l, rv) ? DRA_ENOMEM : index_set(l->s, r, key, kl, NULL);
    if (!(ev.obj = sval_new(l->s->mem, value, len, DRA_STORE_NO_RV, rv, ns, name)))
        return DRA_ENOMEM;
    if (rv > r->compacted_rv) {
        if (type != DRA_STORE_ADDED && e)
            ev.prev = sval_ref(e->cur);
        if (ring_push(l->s, r, &ev)) { /* on success the ring owns both */
            sval_unref(ev.obj);
            sval_unref(ev.prev);
            return DRA_ENOMEM;
        }
        if (type == DRA_STORE_DELETED)
            return index_set(l->s, r, key, kl, NULL);
        sval_ref(ev.obj); /* the index's reference */
    }
    if (index_set(l->s, r, key, kl, ev.obj)) {
        sval_unref(ev.obj);
        return DRA_ENOMEM;
    }
    return DRA_OK;
}

static dra_err load_event(void *ud, uint64_t rv, int type, int64_t res,
                          const char *ns, const char *name, const char *value,
                          size_t len)
{
    loader *l = ud;
    sres *r = load_res(l, res);
    size_t nsl = 0, nl = 0;
    if (!r || type < DRA_STORE_ADDED || type > DRA_STORE_DELETED)
        return DRA_OK;
    if (!key_fits(ns, name, &nsl, &nl))
        return DRA_OK; /* a key no write could make */
    if (l->pipe) {
        load_item row = {r, rv, type, 0, len};
        return pipe_put(l->pipe, l->s->mem, &row, value, ns, nsl, name, nl);
    }
    return apply_event(l, r, rv, type, ns, name, value, len);
}

static dra_err store_load(dra_store *s, dra_diag *d)
{
    loader l = {.s = s};
    sdb_load_cb cb = {load_resource, load_event, &l};
    dra_err e, ee;
    dra_map_init(&l.byid, s->mem);
    dra_arena_init(&l.a, s->mem);
    pipe_start(&l);
    e = sdb_load(s->db, &cb, &s->rv, d);
    ee = pipe_end(&l);
    if (!e)
        e = ee;
    if (!e && l.ngarbage) {
        char msg[192];
        /* Best effort: rows left now go at the next open. */
        (void)sdb_compact(s->db, l.garbage, l.ngarbage, NULL, NULL, 0, s->rv, msg,
                          sizeof msg);
    }
    dra_map_fini(&l.byid);
    dra_free(s->mem, l.garbage);
    dra_arena_fini(&l.a);
    return e;
}

/* ---- open / close ---------------------------------------------------------------- */

static void *maint_main(void *arg);

static void store_free(dra_store *s)
{
    for (size_t i = 0; i < s->resmap.n; i++)
        if (s->resmap.entries[i].key)
            res_free(s, s->resmap.entries[i].val);
    dra_map_fini(&s->resmap);
    sdb_close(s->db);
    pthread_rwlock_destroy(&s->lock);
    pthread_mutex_destroy(&s->qlock);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->mlock);
    pthread_cond_destroy(&s->mcv);
    pthread_mutex_destroy(&s->clock);
    pthread_mutex_destroy(&s->wlock);
    pthread_mutex_destroy(&s->dblock);
    dra_free(s->mem, s);
}

dra_err dra_store_open(const char *path, const dra_store_opts *opts,
                       const dra_mem *mem, dra_store **out, dra_diag *d)
{
    dra_store *s;
    dra_err e;
    *out = NULL;
    if (!path || !*path)
        return DRA_EINVAL;
    s = dra_calloc(mem, 1, sizeof *s);
    if (!s)
        return DRA_ENOMEM;
    s->mem = mem;
    if (opts)
        s->opts = *opts;
    if (!s->opts.history_min_bytes)
        s->opts.history_min_bytes = 1u << 20;
    if (!s->opts.history_max_events)
        s->opts.history_max_events = 1000000;
    if (!s->opts.compact_step)
        s->opts.compact_step = 256;
    dra_map_init(&s->resmap, mem);
    pthread_rwlock_init(&s->lock, NULL);
    pthread_mutex_init(&s->qlock, NULL);
    pthread_cond_init(&s->idle, NULL);
    pthread_mutex_init(&s->mlock, NULL);
    pthread_cond_init(&s->mcv, NULL);
    pthread_mutex_init(&s->clock, NULL);
    pthread_mutex_init(&s->wlock, NULL);
    pthread_mutex_init(&s->dblock, NULL);
    if ((e = sdb_open(path, &s->opts, mem, &s->db, d)) ||
        (e = store_load(s, d)))
        goto fail;
    if (pthread_create(&s->maint, NULL, maint_main, s)) {
        dra_diag_add(d, "", 0, 0, "cannot start the store's maintenance thread");
        e = DRA_EIO;
        goto fail;
    }
    s->maint_started = 1;
    *out = s;
    return DRA_OK;
fail:
    store_free(s);
    return e;
}

void dra_store_close(dra_store *s)
{
    if (!s)
        return;
    /* New writes are refused from here; those queued are committed by
     * the leaders already running. */
    pthread_mutex_lock(&s->qlock);
    s->closing = 1;
    while (s->committing || s->qhead)
        pthread_cond_wait(&s->idle, &s->qlock);
    pthread_mutex_unlock(&s->qlock);
    if (s->maint_started) {
        pthread_mutex_lock(&s->mlock);
        s->mstop = 1;
        pthread_cond_signal(&s->mcv);
        pthread_mutex_unlock(&s->mlock);
        pthread_join(s->maint, NULL);
    }
    store_free(s);
}

uint64_t dra_store_rv(dra_store *s)
{
    uint64_t rv;
    pthread_rwlock_rdlock(&s->lock);
    rv = s->rv;
    pthread_rwlock_unlock(&s->lock);
    return rv;
}

/* ---- reads ------------------------------------------------------------------------- */

dra_err dra_store_get(dra_store *s, const char *resource, const char *ns,
                      const char *name, dra_store_obj **out)
{
    char key[KEY_MAX];
    size_t kl = make_key(key, ns ? ns : "", name ? name : "");
    sres *r;
    sentry *e = NULL;
    *out = NULL;
    if (!kl || !resource)
        return DRA_ENOTFOUND;
    pthread_rwlock_rdlock(&s->lock);
    r = res_find(s, resource);
    if (r)
        e = dra_map_get(&r->objs, key, kl);
    if (e)
        *out = &sval_ref(e->cur)->pub;
    pthread_rwlock_unlock(&s->lock);
    return *out ? DRA_OK : DRA_ENOTFOUND;
}

/* (namespace, name) order of entries, and of an entry against a key. */
static int key_cmp(const char *ans, const char *aname, const char *bns, const char *bname)
{
    int c = strcmp(ans, bns);
    return c ? c : strcmp(aname, bname);
}

static int entry_cmp(const void *x, const void *y)
{
    const sentry *a = *(const sentry *const *)x, *b = *(const sentry *const *)y;
    return key_cmp(a->cur->ns, a->cur->name, b->cur->ns, b->cur->name);
}

/* Index of the first sorted entry after (|ns|, |name|) (|strict|) or
 * at or after it. */
static size_t sorted_bound(const sres *r, const char *ns, const char *name, int strict)
{
    size_t lo = 0, hi = r->nsorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sval *v = r->sorted[mid]->cur;
        int c = key_cmp(v->ns, v->name, ns, name);
        if (c < 0 || (strict && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Rebuilds r->sorted from objs (read lock and r->slock held). */
static dra_err sorted_rebuild(dra_store *s, sres *r)
{
    size_t k = 0;
    if (r->scap < r->objs.live) {
        size_t nc = r->objs.live + r->objs.live / 4 + 16;
        sentry **nv = dra_realloc(s->mem, r->sorted, nc * sizeof *nv);
        if (!nv)
            return DRA_ENOMEM;
        r->sorted = nv;
        r->scap = nc;
    }
    for (size_t i = 0; i < r->objs.n; i++)
        if (r->objs.entries[i].key && r->objs.entries[i].val)
            r->sorted[k++] = r->objs.entries[i].val;
    if (k > 1)
        qsort(r->sorted, k, sizeof *r->sorted, entry_cmp);
    r->nsorted = k;
    r->sdirty = 0;
    return DRA_OK;
}

static int pos_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* Folds the pending changes into r->sorted without reading the entries
 * that stay (on a large collection those reads are cache misses): what
 * came is sorted and placed, what went is found, by binary search, and
 * the array is copied in blocks into r->spare, which then takes its
 * place (read lock and r->slock held). */
static dra_err sorted_merge(dra_store *s, sres *r)
{
    size_t na = 0, nd = 0, n = r->nsorted, i, at = 0, out = 0, ia = 0, id = 0;
    size_t *apos, *dpos;
    for (i = 0; i < r->nadded; i++)
        if (!r->added[i]->dead)
            r->added[na++] = r->added[i];
    r->nadded = na;
    if (dra_grow(s->mem, (void **)&r->spare, &r->spcap, n + na, sizeof *r->spare))
        return DRA_ENOMEM;
    if (!(apos = dra_malloc(s->mem, (na + r->ngone + 1) * sizeof *apos)))
        return DRA_ENOMEM;
    dpos = apos + na;
    if (na > 1)
        qsort(r->added, na, sizeof *r->added, entry_cmp);
    for (i = 0; i < na; i++)
        apos[i] = sorted_bound(r, r->added[i]->cur->ns, r->added[i]->cur->name, 0);
    for (i = 0; i < r->ngone; i++) {
        const sentry *g = r->gone[i];
        size_t p = sorted_bound(r, g->cur->ns, g->cur->name, 0);
        if (p < n && r->sorted[p] == g) /* else it came and went since */
            dpos[nd++] = p;
    }
    if (nd > 1)
        qsort(dpos, nd, sizeof *dpos, pos_cmp);
    while (ia < na || id < nd) {
        size_t next = ia < na ? apos[ia] : n;
        if (id < nd && dpos[id] < next)
            next = dpos[id];
        memcpy(r->spare + out, r->sorted + at, (next - at) * sizeof *r->spare);
        out += next - at;
        at = next;
        if (ia < na && apos[ia] == next) {
            r->spare[out++] = r->added[ia++]; /* before the entry at |next| */
        } else {
            at = next + 1; /* the dead entry at |next| */
            id++;
        }
    }
    memcpy(r->spare + out, r->sorted + at, (n - at) * sizeof *r->spare);
    out += n - at;
    dra_free(s->mem, apos);
    {
        sentry **t = r->sorted;
        size_t c = r->scap;
        r->sorted = r->spare;
        r->scap = r->spcap;
        r->spare = t;
        r->spcap = c;
    }
    r->nsorted = out;
    /* Nothing names the dead now: readers of sorted hold slock. */
    sorted_drop_pending(s, r);
    return DRA_OK;
}

/* Makes r->sorted current (read lock and r->slock held). */
static dra_err sorted_fresh(dra_store *s, sres *r)
{
    if (r->sdirty)
        return sorted_rebuild(s, r);
    if (r->nadded || r->ngone)
        return sorted_merge(s, r);
    return DRA_OK;
}

/* Index of the first sorted entry at or after |from| in a namespace
 * after |ns|. */
static size_t ns_end(const sres *r, const char *ns, size_t from)
{
    size_t lo = from, hi = r->nsorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(r->sorted[mid]->cur->ns, ns) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The range of r->sorted a list reads: [*from, *to). */
static void list_range(const sres *r, const char *ns, const char *after_ns,
                       const char *after_name, size_t *from, size_t *to)
{
    size_t lo = 0, hi = r->nsorted;
    if (ns) {
        lo = sorted_bound(r, ns, "", 0);
        hi = ns_end(r, ns, lo);
    }
    if (after_ns && after_name) {
        size_t a = sorted_bound(r, after_ns, after_name, 1);
        if (a > lo)
            lo = a < hi ? a : hi;
    }
    *from = lo;
    *to = hi;
}

dra_err dra_store_list(dra_store *s, const char *resource, const char *ns,
                       const char *after_ns, const char *after_name,
                       size_t limit, dra_store_page *out, int *more)
{
    sres *r;
    size_t from = 0, to = 0, n;
    dra_err e = DRA_OK;
    memset(out, 0, sizeof *out);
    out->priv = (void *)s->mem;
    if (more)
        *more = 0;
    pthread_rwlock_rdlock(&s->lock);
    out->rv = s->rv;
    r = resource ? res_find(s, resource) : NULL;
    if (!r || !r->objs.live) {
        pthread_rwlock_unlock(&s->lock);
        return DRA_OK;
    }
    pthread_mutex_lock(&r->slock);
    if (!(e = sorted_fresh(s, r)))
        list_range(r, ns, after_ns, after_name, &from, &to);
    n = to - from;
    if (limit && n > limit) {
        n = limit;
        out->remaining = to - from - n;
        if (more)
            *more = 1;
    }
    if (!e && n && !(out->items = dra_calloc(s->mem, n, sizeof *out->items)))
        e = DRA_ENOMEM;
    for (size_t i = 0; !e && i < n; i++) {
        sval *v = r->sorted[from + i]->cur;
        out->items[i].ns = v->ns;
        out->items[i].name = v->name;
        out->items[i].obj = &sval_ref(v)->pub;
    }
    if (!e)
        out->n = n;
    pthread_mutex_unlock(&r->slock);
    pthread_rwlock_unlock(&s->lock);
    if (e) {
        out->remaining = 0;
        if (more)
            *more = 0;
    }
    return e;
}

dra_err dra_store_list_one(dra_store *s, const char *resource, const char *ns,
                           const char *name, dra_store_page *out)
{
    char key[KEY_MAX];
    size_t kl = make_key(key, ns ? ns : "", name ? name : "");
    sres *r;
    sentry *e = NULL;
    memset(out, 0, sizeof *out);
    out->priv = (void *)s->mem;
    out->items = dra_calloc(s->mem, 1, sizeof *out->items);
    if (!out->items)
        return DRA_ENOMEM;
    pthread_rwlock_rdlock(&s->lock);
    out->rv = s->rv;
    r = kl && resource ? res_find(s, resource) : NULL;
    if (r)
        e = dra_map_get(&r->objs, key, kl);
    if (e) {
        out->items[0].ns = e->cur->ns;
        out->items[0].name = e->cur->name;
        out->items[0].obj = &sval_ref(e->cur)->pub;
        out->n = 1;
    }
    pthread_rwlock_unlock(&s->lock);
    return DRA_OK;
}

void dra_store_page_fini(dra_store_page *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        dra_store_obj_unref(l->items[i].obj);
    dra_free(l->priv, l->items);
    memset(l, 0, sizeof *l);
}

/* ---- writes: the producer side ------------------------------------------------------ */

static void lead(dra_store *s, wreq *self);

dra_err dra_store_write_one(dra_store *s, dra_store_write *w)
{
    wreq q;
    int self_lead;
    w->rv = 0;
    w->obj = NULL;
    w->msg[0] = '\0';
    if (!w->resource || !*w->resource || !w->name || !*w->name || !w->ns ||
        (!w->json && w->len) || (w->rv_at != DRA_STORE_NO_RV && w->rv_at > w->len) ||
        w->op < DRA_STORE_CREATE || w->op > DRA_STORE_DELETE)
        return DRA_EINVAL;
    memset(&q, 0, sizeof q);
    q.w = w;
    q.keylen = make_key(q.key, w->ns, w->name);
    if (!q.keylen)
        return DRA_EINVAL;
    if (!w->json)
        w->json = "";
    if (sem_init(&q.sem, 0, 0))
        return DRA_ENOMEM;
    pthread_mutex_lock(&s->qlock);
    if (s->closing) {
        pthread_mutex_unlock(&s->qlock);
        sem_destroy(&q.sem);
        snprintf(w->msg, sizeof w->msg, "the store is closing");
        return DRA_EUNAVAILABLE;
    }
    if (s->qtail)
        s->qtail->next = &q;
    else
        s->qhead = &q;
    s->qtail = &q;
    if (!s->committing)
        s->committing = q.lead = 1;
    self_lead = q.lead;
    pthread_mutex_unlock(&s->qlock);
    /* A follower sleeps until its batch is committed (q.done) or the
     * leader before it hands it the lead (q.lead); either is set before
     * the one post that says so, and that post must be taken before q
     * leaves this frame, so neither is read before the wait. */
    if (!self_lead) {
        do {
            while (sem_wait(&q.sem) && errno == EINTR)
                ;
        } while (!q.done && !q.lead);
    }
    if (!q.done)
        lead(s, &q);
    sem_destroy(&q.sem);
    if (q.err == DRA_OK) {
        w->rv = q.val->pub.rv;
        w->obj = &q.val->pub; /* the leader left one reference for us */
    }
    return q.err;
}

/* ---- writes: the leader's batch ------------------------------------------------------ */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The state of |q|'s key as the batch so far leaves it: *found says
 * whether an earlier request in the batch decided it. */
static sval *batch_state(wreq *const *b, size_t i, int *found)
{
    for (size_t j = i; j-- > 0;) {
        if (b[j]->err || b[j]->r != b[i]->r || b[j]->keylen != b[i]->keylen ||
            memcmp(b[j]->key, b[i]->key, b[i]->keylen))
            continue;
        *found = 1;
        return b[j]->type == DRA_STORE_DELETED ? NULL : b[j]->val;
    }
    *found = 0;
    return NULL;
}

/* Resources the batch writes to get their database id first, each in
 * its own small transaction (once per resource, ever). */
static void batch_resources(dra_store *s, wreq **b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sres *r;
        int64_t id;
        /* Resources are never removed: a read lock finds the known ones. */
        pthread_rwlock_rdlock(&s->lock);
        r = res_find(s, b[i]->w->resource);
        id = r ? r->id : 0;
        pthread_rwlock_unlock(&s->lock);
        if (!r) {
            pthread_rwlock_wrlock(&s->lock);
            r = res_get(s, b[i]->w->resource);
            pthread_rwlock_unlock(&s->lock);
        }
        if (!r) {
            b[i]->err = DRA_ENOMEM;
            continue;
        }
        b[i]->r = r;
        if (!id) {
            dra_err e = sdb_resource_add(s->db, r->name, &id, b[i]->w->msg,
                                         sizeof b[i]->w->msg);
            if (e) {
                b[i]->err = e;
                continue;
            }
            /* Compaction plans read ids under the read lock. */
            pthread_rwlock_wrlock(&s->lock);
            r->id = id;
            pthread_rwlock_unlock(&s->lock);
        }
    }
}

/* Checks |q|'s precondition and builds its value; 0 when it stays in
 * the batch. */
static int batch_prepare(dra_store *s, wreq **b, size_t i, uint64_t rv)
{
    wreq *q = b[i];
    dra_store_write *w = q->w;
    int found;
    sval *cur = batch_state(b, i, &found);
    if (!found) {
        sentry *e;
        pthread_rwlock_rdlock(&s->lock);
        e = dra_map_get(&q->r->objs, q->key, q->keylen);
        cur = e ? e->cur : NULL;
        pthread_rwlock_unlock(&s->lock);
    }
    if (w->op == DRA_STORE_CREATE && cur)
        q->err = DRA_EEXIST;
    else if (w->op != DRA_STORE_CREATE && !cur)
        q->err = DRA_ENOTFOUND;
    else if (w->op != DRA_STORE_CREATE && w->expect_rv && cur->pub.rv != w->expect_rv)
        q->err = DRA_ECONFLICT;
    if (q->err)
        return 1;
    q->type = w->op == DRA_STORE_CREATE   ? DRA_STORE_ADDED
              : w->op == DRA_STORE_UPDATE ? DRA_STORE_MODIFIED
                                          : DRA_STORE_DELETED;
    q->prev = sval_ref(cur);
    q->val = sval_new(s->mem, w->json, w->len, w->rv_at, rv, w->ns, w->name);
    if (!q->val) {
        q->err = DRA_ENOMEM;
        sval_unref(q->prev);
        q->prev = NULL;
        return 1;
    }
    return 0;
}

/* A write's rows: its own, and the end of its previous state's, which
 * is kept while it is history (after the compaction point: compaction
 * deletes it then) and deleted now when it is older. */
static dra_err batch_sql(dra_store *s, wreq *q)
{
    dra_store_write *w = q->w;
    sval *v = q->val;
    dra_err e = sdb_event(s->db, v->pub.rv, q->type, q->r->id, w->ns, w->name, v->pub.json,
                          v->pub.len, w->msg, sizeof w->msg);
    if (!e && q->prev && q->prev->pub.rv <= q->r->compacted_rv)
        e = sdb_event_del(s->db, q->prev->pub.rv, w->msg, sizeof w->msg);
    return e;
}

static void batch_fail(wreq **b, size_t n, dra_err e, const char *msg)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i]->err)
            continue;
        b[i]->err = e;
        if (msg && b[i]->w->msg != msg)
            snprintf(b[i]->w->msg, sizeof b[i]->w->msg, "%s", msg);
        sval_unref(b[i]->val);
        sval_unref(b[i]->prev);
        b[i]->val = b[i]->prev = NULL;
    }
}

/* Publishes a committed batch: index, histories, counters. */
static void batch_apply(dra_store *s, wreq **b, size_t n, uint64_t rv)
{
    pthread_rwlock_wrlock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        wreq *q = b[i];
        sevent ev;
        if (q->err)
            continue;
        ev.rv = q->val->pub.rv;
        ev.type = q->type;
        ev.counted = q->type == DRA_STORE_DELETED;
        ev.obj = sval_ref(q->val);
        if (q->prev)
            ring_supersede(s, q->r, q->prev->pub.rv);
        ev.prev = q->prev; /* the event takes the request's reference */
        q->prev = NULL;
        /* Memory for the index entry or the ring can fail after the
         * commit; the write is durable and the next restart shows it,
         * so the in-memory copy only loses the history event. */
        if (index_set(s, q->r, q->key, q->keylen,
                      q->type == DRA_STORE_DELETED ? NULL : sval_ref(q->val)))
            sval_unref(q->val);
        if (ring_push(s, q->r, &ev)) {
            sval_unref(ev.obj);
            sval_unref(ev.prev);
        }
        s->writes++;
    }
    s->rv = rv;
    s->batches++;
    pthread_rwlock_unlock(&s->lock);
}

/* The resources a batch wrote to, each once, into |nt| (BATCH_MAX
 * slots, NULL-terminated when fewer). */
static void notify_collect(dra_store *s, wreq **b, size_t n, sres **nt)
{
    size_t k = 0;
    (void)s;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        if (b[i]->err)
            continue;
        for (size_t j = 0; j < k && !seen; j++)
            seen = nt[j] == b[i]->r;
        if (!seen)
            nt[k++] = b[i]->r;
    }
    if (k < BATCH_MAX)
        nt[k] = NULL;
}

/* Wakes every watcher of the resources in |nt|. */
static void notify_run(dra_store *s, sres **nt)
{
    pthread_mutex_lock(&s->wlock);
    for (size_t i = 0; i < BATCH_MAX && nt[i]; i++)
        for (dra_store_watch *w = nt[i]->watchers; w; w = w->next)
            if (w->notify)
                w->notify(w->ud);
    pthread_mutex_unlock(&s->wlock);
}

static void batch_run_locked(dra_store *s, wreq **b, size_t n)
{
    uint64_t rv = s->rv; /* only the leader (this thread) changes s->rv */
    char msg[192] = "";
    dra_err e;
    int any = 0;
    batch_resources(s, b, n);
    for (size_t i = 0; i < n; i++) {
        if (b[i]->err || batch_prepare(s, b, i, rv + 1))
            continue;
        if (!any && (e = sdb_begin(s->db, msg, sizeof msg))) {
            batch_fail(b, n, e, msg);
            return;
        }
        any = 1;
        rv++;
        if ((e = batch_sql(s, b[i]))) {
            snprintf(msg, sizeof msg, "%s", b[i]->w->msg);
            sdb_rollback(s->db);
            batch_fail(b, n, e, msg);
            return;
        }
    }
    if (!any)
        return;
    if ((e = sdb_commit(s->db, msg, sizeof msg))) {
        sdb_rollback(s->db);
        batch_fail(b, n, e, msg);
        return;
    }
    batch_apply(s, b, n, rv);
}

static void batch_run(dra_store *s, wreq **b, size_t n)
{
    pthread_mutex_lock(&s->dblock);
    batch_run_locked(s, b, n);
    pthread_mutex_unlock(&s->dblock);
}

/* ---- compaction -------------------------------------------------------------------- */

/* The history's byte budget: three quarters of the live data (so that
 * objects, history and the b-tree overhead stay near twice the live
 * data on disk), but never below history_min_bytes. */
static size_t hist_budget(const dra_store *s)
{
    size_t b = s->live_bytes / 4 * 3;
    return b > s->opts.history_min_bytes ? b : s->opts.history_min_bytes;
}

static int over_budget(dra_store *s, size_t slack_num, size_t slack_den)
{
    size_t budget = hist_budget(s);
    size_t maxev = s->opts.history_max_events;
    return s->hist_bytes * slack_den > budget * slack_num ||
           s->hist_events * slack_den > maxev * slack_num;
}

/* The resource holding the globally oldest event, or NULL. */
static sres *oldest(dra_store *s, const size_t *skip)
{
    sres *best = NULL;
    uint64_t brv = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->resmap.n; i++) {
        sres *r = s->resmap.entries[i].val;
        if (!s->resmap.entries[i].key)
            continue;
        if (skip[k] < r->n && (!best || ring_at(r, skip[k])->rv < brv)) {
            best = r;
            brv = ring_at(r, skip[k])->rv;
        }
        k++;
    }
    return best;
}

static size_t res_index(dra_store *s, sres *r)
{
    size_t k = 0;
    for (size_t i = 0; i < s->resmap.n; i++) {
        if (!s->resmap.entries[i].key)
            continue;
        if (s->resmap.entries[i].val == r)
            return k;
        k++;
    }
    return k;
}

/* A compaction step's plan: drop every event up to |upto|; resource
 * ids[i] then starts after crv[i]. */
typedef struct cplan {
    size_t *skip; /* per live resource (resmap order): events dropped */
    int64_t *ids;
    uint64_t *crv;
    size_t nc, dropped;
    uint64_t upto;
    uint64_t *rvs; /* the rows to delete: superseded states and deletions */
    size_t nrv;
} cplan;

static void cplan_fini(dra_store *s, cplan *p)
{
    dra_free(s->mem, p->skip);
    dra_free(s->mem, p->ids);
    dra_free(s->mem, p->crv);
    dra_free(s->mem, p->rvs);
}

/* The rows the step deletes: of the events up to p->upto, those whose
 * state is not its object's current one (a current state's row stays:
 * it is the object). DRA_OK or DRA_ENOMEM. */
static dra_err compact_rows(dra_store *s, cplan *p)
{
    dra_err e = DRA_OK;
    p->nrv = 0;
    if (!(p->rvs = dra_calloc(s->mem, p->dropped + 1, sizeof *p->rvs)))
        return DRA_ENOMEM;
    pthread_rwlock_rdlock(&s->lock);
    for (size_t i = 0; i < s->resmap.n && !e; i++) {
        sres *r = s->resmap.entries[i].val;
        if (!s->resmap.entries[i].key)
            continue;
        for (size_t k = 0; k < r->n && ring_at(r, k)->rv <= p->upto; k++) {
            const sevent *ev = ring_at(r, k);
            if (!ev->counted)
                continue;
            if (p->nrv == p->dropped) { /* only what the plan counted */
                e = DRA_EINVAL;
                break;
            }
            p->rvs[p->nrv++] = ev->rv;
        }
    }
    pthread_rwlock_unlock(&s->lock);
    return e;
}

/* Picks the oldest events, across resources, until the history is back
 * to 90% of its budget or compact_step events are chosen. The read lock
 * is held. DRA_OK (p->dropped may be 0) or DRA_ENOMEM. */
static dra_err compact_plan(dra_store *s, cplan *p)
{
    size_t nres = s->resmap.live, freed = 0;
    memset(p, 0, sizeof *p);
    p->skip = dra_calloc(s->mem, nres + 1, sizeof *p->skip);
    p->ids = dra_calloc(s->mem, nres + 1, sizeof *p->ids);
    p->crv = dra_calloc(s->mem, nres + 1, sizeof *p->crv);
    if (!p->skip || !p->ids || !p->crv)
        return DRA_ENOMEM;
    while (p->dropped < s->opts.compact_step) {
        sres *r = oldest(s, p->skip);
        sevent *ev;
        if (!r)
            break;
        ev = ring_at(r, p->skip[res_index(s, r)]++);
        p->upto = ev->rv;
        if (ev->counted)
            freed += ev->obj->pub.len;
        p->dropped++;
        if (s->hist_bytes - freed <= hist_budget(s) / 10 * 9 &&
            (s->hist_events - p->dropped) * 10 <= s->opts.history_max_events * 9)
            break;
    }
    for (size_t i = 0, k = 0; i < s->resmap.n; i++) {
        sres *r = s->resmap.entries[i].val;
        if (!s->resmap.entries[i].key)
            continue;
        if (p->skip[k] && r->id) {
            p->ids[p->nc] = r->id;
            p->crv[p->nc++] = ring_at(r, p->skip[k] - 1)->rv;
        }
        k++;
    }
    return DRA_OK;
}

/* Drops the events up to |upto| from memory (the write lock is held). */
static void compact_apply(dra_store *s, uint64_t upto)
{
    for (size_t i = 0; i < s->resmap.n; i++) {
        sres *r = s->resmap.entries[i].val;
        if (!s->resmap.entries[i].key)
            continue;
        while (r->n && ring_at(r, 0)->rv <= upto) {
            sevent *ev = ring_at(r, 0);
            r->compacted_rv = ev->rv;
            if (ev->counted)
                s->hist_bytes -= ev->obj->pub.len;
            s->hist_events--;
            sval_unref(ev->obj);
            sval_unref(ev->prev);
            r->head = (r->head + 1) % r->cap;
            r->n--;
        }
    }
}

/* One compaction step: the plan under the read lock, the database
 * transaction under the database lock only (readers go on), then the
 * memory under a short write lock. Returns 1 when a step was taken. Runs
 * on the maintenance thread, or from dra_store_compact. */
static int compact_step(dra_store *s)
{
    cplan p;
    uint64_t t0;
    char msg[192];
    dra_err e;
    pthread_rwlock_rdlock(&s->lock);
    if (!over_budget(s, 1, 1)) {
        pthread_rwlock_unlock(&s->lock);
        return 0;
    }
    e = compact_plan(s, &p);
    pthread_rwlock_unlock(&s->lock);
    if (e || !p.dropped) {
        cplan_fini(s, &p);
        return 0;
    }
    pthread_mutex_lock(&s->dblock);
    t0 = now_us();
    /* The rows to delete are read under the database lock: a batch in
     * between may have superseded a state the plan saw as current. s->rv
     * only changes under this lock too. */
    if (compact_rows(s, &p) ||
        sdb_compact(s->db, p.rvs, p.nrv, p.ids, p.crv, p.nc, s->rv, msg, sizeof msg)) {
        /* Retried at the next step; the history stays meanwhile. */
        pthread_mutex_unlock(&s->dblock);
        cplan_fini(s, &p);
        return 0;
    }
    t0 = now_us() - t0;
    pthread_rwlock_wrlock(&s->lock);
    compact_apply(s, p.upto);
    s->compactions++;
    if (t0 > s->compact_max_us)
        s->compact_max_us = t0;
    pthread_rwlock_unlock(&s->lock);
    /* Best effort: a failed vacuum step only leaves free pages for later. */
    (void)sdb_vacuum_step(s->db, 64);
    pthread_mutex_unlock(&s->dblock);
    cplan_fini(s, &p);
    return 1;
}

static int compact_needed(dra_store *s)
{
    int need;
    pthread_rwlock_rdlock(&s->lock);
    need = over_budget(s, 1, 1);
    pthread_rwlock_unlock(&s->lock);
    return need;
}

dra_err dra_store_compact(dra_store *s)
{
    /* Steps run here directly; the database lock serialises them with
     * the batches, the compaction lock with the maintenance thread's. */
    pthread_mutex_lock(&s->clock);
    while (compact_needed(s) && compact_step(s))
        ;
    pthread_mutex_unlock(&s->clock);
    return DRA_OK;
}

/* The maintenance thread: compaction steps whenever a commit left the
 * history over its bounds (each step holds the database only briefly,
 * between batches). */
static void *maint_main(void *arg)
{
    dra_store *s = arg;
    pthread_mutex_lock(&s->mlock);
    while (!s->mstop) {
        if (!s->mkick) {
            pthread_cond_wait(&s->mcv, &s->mlock);
            continue;
        }
        s->mkick = 0;
        pthread_mutex_unlock(&s->mlock);
        pthread_mutex_lock(&s->clock);
        while (compact_needed(s) && compact_step(s)) {
            pthread_mutex_lock(&s->mlock);
            int stop = s->mstop;
            pthread_mutex_unlock(&s->mlock);
            if (stop)
                break;
        }
        pthread_mutex_unlock(&s->clock);
        pthread_mutex_lock(&s->mlock);
    }
    pthread_mutex_unlock(&s->mlock);
    return NULL;
}

static void maint_kick(dra_store *s)
{
    pthread_mutex_lock(&s->mlock);
    s->mkick = 1;
    pthread_cond_signal(&s->mcv);
    pthread_mutex_unlock(&s->mlock);
}

/* One compaction step from a writer's thread (see lead()). */
static void compact_inline(dra_store *s)
{
    pthread_mutex_lock(&s->clock);
    compact_step(s);
    pthread_mutex_unlock(&s->clock);
}

/* Runs one batch as the leader: takes the queue (|self| at its head),
 * commits it, passes the lead on to the next queued producer (or gives
 * it up), then wakes the batch's producers and the watchers.
 *
 * Compaction stays off the commit path while it keeps up: a leader that
 * leaves nothing queued takes a step itself once its batch is
 * acknowledged (as an idle writer thread would), and under sustained
 * load the maintenance thread takes them. Should the history still grow
 * a quarter past its bounds, the leader takes a step before passing the
 * lead on, so writers wait for it and the history stays bounded. */
static void lead(dra_store *s, wreq *self)
{
    wreq *b[BATCH_MAX], *next = NULL;
    sres *nt[BATCH_MAX];
    size_t n = 0;
    int over, far;
    pthread_mutex_lock(&s->qlock);
    while (s->qhead && n < BATCH_MAX) {
        b[n++] = s->qhead;
        s->qhead = s->qhead->next;
    }
    if (!s->qhead)
        s->qtail = NULL;
    pthread_mutex_unlock(&s->qlock);
    batch_run(s, b, n);
    pthread_rwlock_rdlock(&s->lock);
    over = over_budget(s, 1, 1);
    far = over_budget(s, 5, 4);
    pthread_rwlock_unlock(&s->lock);
    if (far)
        compact_inline(s);
    pthread_mutex_lock(&s->qlock);
    if (s->qhead) {
        next = s->qhead;
        next->lead = 1;
    } else {
        s->committing = 0;
        if (s->closing)
            pthread_cond_broadcast(&s->idle);
    }
    pthread_mutex_unlock(&s->qlock);
    if (next)
        sem_post(&next->sem);
    /* The watchers of the batch's resources are collected before the
     * producers are woken: a producer may return (and its request die)
     * as soon as it is posted, so each is marked done first and not
     * touched after. */
    notify_collect(s, b, n, nt);
    for (size_t i = 0; i < n; i++) {
        if (b[i] == self)
            continue;
        b[i]->done = 1;
        sem_post(&b[i]->sem);
    }
    notify_run(s, nt);
    self->done = 1;
    if (over && !far && !next)
        compact_inline(s);
    else if (over && !far)
        maint_kick(s);
}

/* ---- watch ---------------------------------------------------------------------------- */

dra_err dra_store_watch_open(dra_store *s, const char *resource,
                             const char *ns, uint64_t from_rv,
                             void (*notify)(void *ud), void *ud,
                             dra_store_watch **out)
{
    dra_store_watch *w;
    sres *r;
    dra_err e = DRA_OK;
    *out = NULL;
    if (!resource || !*resource)
        return DRA_EINVAL;
    w = dra_calloc(s->mem, 1, sizeof *w);
    if (!w)
        return DRA_ENOMEM;
    if (ns && !(w->ns = dra_strdup(s->mem, ns))) {
        dra_free(s->mem, w);
        return DRA_ENOMEM;
    }
    w->s = s;
    w->cursor = from_rv;
    w->notify = notify;
    w->ud = ud;
    pthread_rwlock_wrlock(&s->lock);
    r = res_get(s, resource);
    if (!r)
        e = DRA_ENOMEM;
    else if (from_rv > s->rv)
        e = DRA_ERANGE;
    else if (from_rv < r->compacted_rv)
        e = DRA_EGONE;
    if (!e) {
        w->r = r;
        /* Registered under the index lock too, so no commit can slip
         * between the version check and the registration unnoticed:
         * the leader publishes under this lock before notifying. */
        pthread_mutex_lock(&s->wlock);
        w->next = r->watchers;
        if (r->watchers)
            r->watchers->prev = w;
        r->watchers = w;
        pthread_mutex_unlock(&s->wlock);
    }
    pthread_rwlock_unlock(&s->lock);
    if (e) {
        dra_free(s->mem, w->ns);
        dra_free(s->mem, w);
        return e;
    }
    *out = w;
    return DRA_OK;
}

dra_err dra_store_watch_poll(dra_store_watch *w, dra_store_event *evs,
                             size_t max, size_t *n)
{
    dra_store *s = w->s;
    sres *r = w->r;
    size_t k = 0, i;
    *n = 0;
    pthread_rwlock_rdlock(&s->lock);
    if (w->cursor < r->compacted_rv) {
        pthread_rwlock_unlock(&s->lock);
        return DRA_EGONE;
    }
    for (i = ring_after(r, w->cursor); i < r->n && k < max; i++) {
        sevent *ev = ring_at(r, i);
        w->cursor = ev->rv;
        if (w->ns && strcmp(ev->obj->ns, w->ns))
            continue;
        evs[k].type = (dra_store_event_type)ev->type;
        evs[k].rv = ev->rv;
        evs[k].ns = ev->obj->ns;
        evs[k].name = ev->obj->name;
        evs[k].obj = &sval_ref(ev->obj)->pub;
        evs[k].prev = ev->prev ? &sval_ref(ev->prev)->pub : NULL;
        k++;
    }
    pthread_rwlock_unlock(&s->lock);
    *n = k;
    return DRA_OK;
}

uint64_t dra_store_watch_rv(dra_store_watch *w)
{
    dra_store *s = w->s;
    uint64_t rv;
    pthread_rwlock_rdlock(&s->lock);
    rv = ring_after(w->r, w->cursor) < w->r->n ? w->cursor : s->rv;
    pthread_rwlock_unlock(&s->lock);
    return rv;
}

void dra_store_watch_close(dra_store_watch *w)
{
    dra_store *s;
    if (!w)
        return;
    s = w->s;
    pthread_mutex_lock(&s->wlock);
    if (w->prev)
        w->prev->next = w->next;
    else
        w->r->watchers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    pthread_mutex_unlock(&s->wlock);
    dra_free(s->mem, w->ns);
    dra_free(s->mem, w);
}

/* ---- figures ------------------------------------------------------------------------ */

dra_err dra_store_stats_get(dra_store *s, dra_store_stats *st)
{
    dra_err e;
    memset(st, 0, sizeof *st);
    pthread_rwlock_rdlock(&s->lock);
    st->objects = s->nobjects;
    st->live_bytes = s->live_bytes;
    st->history_events = s->hist_events;
    st->history_bytes = s->hist_bytes;
    st->rv = s->rv;
    st->batches = s->batches;
    st->writes = s->writes;
    st->compactions = s->compactions;
    st->compact_max_us = s->compact_max_us;
    pthread_rwlock_unlock(&s->lock);
    pthread_mutex_lock(&s->dblock);
    e = sdb_sizes(s->db, &st->db_bytes, &st->wal_bytes);
    pthread_mutex_unlock(&s->dblock);
    return e;
}
