/*
 * pool.c: worker threads with a hand-over per idle worker (pool.h).
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "pool.h"

typedef struct pworker {
    api_pool *p;
    pthread_t t;
    sem_t sem;
    int started;
    void *job;                /* handed over while it slept */
    struct pworker *next_idle;
} pworker;

struct api_pool {
    const dra_mem *mem;
    api_pool_run run;
    void *ud;
    pthread_mutex_t lock; /* the queue, the idle stack, stopping */
    void **q;             /* jobs no worker was free for, a ring */
    size_t qcap, qhead, qn;
    pworker *w;
    int n;
    pworker *idle;
    int stopping;
};

static int queue_push(api_pool *p, void *job)
{
    if (p->qn == p->qcap) {
        size_t cap = p->qcap ? p->qcap * 2 : 64;
        void **q = dra_calloc(p->mem, cap, sizeof *q);
        if (!q)
            return -1;
        for (size_t i = 0; i < p->qn; i++)
            q[i] = p->q[(p->qhead + i) % p->qcap];
        dra_free(p->mem, p->q);
        p->q = q;
        p->qcap = cap;
        p->qhead = 0;
    }
    p->q[(p->qhead + p->qn++) % p->qcap] = job;
    return 0;
}

/* The next job: a queued one, or one handed over after sleeping idle.
 * NULL when the pool stops and nothing is queued. */
static void *worker_next(pworker *w)
{
    api_pool *p = w->p;
    void *job;
    pthread_mutex_lock(&p->lock);
    if (p->qn) {
        job = p->q[p->qhead];
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qn--;
        pthread_mutex_unlock(&p->lock);
        return job;
    }
    if (p->stopping) {
        pthread_mutex_unlock(&p->lock);
        return NULL;
    }
    /* Last in, first out: the most recently busy workers stay warm. */
    w->next_idle = p->idle;
    p->idle = w;
    pthread_mutex_unlock(&p->lock);
    while (sem_wait(&w->sem) && errno == EINTR)
        ;
    job = w->job;
    w->job = NULL;
    return job;
}

static void *worker_main(void *arg)
{
    pworker *w = arg;
    void *job;
    while ((job = worker_next(w)))
        w->p->run(job, w->p->ud);
    return NULL;
}

dra_err api_pool_submit(api_pool *p, void *job)
{
    pworker *w = NULL;
    dra_err e = DRA_OK;
    pthread_mutex_lock(&p->lock);
    if (p->stopping) {
        e = DRA_EUNAVAILABLE;
    } else if ((w = p->idle)) {
        p->idle = w->next_idle;
        w->job = job;
    } else if (queue_push(p, job)) {
        e = DRA_ENOMEM;
    }
    pthread_mutex_unlock(&p->lock);
    if (w)
        sem_post(&w->sem);
    return e;
}

static void pool_free(api_pool *p)
{
    pthread_mutex_destroy(&p->lock);
    dra_free(p->mem, p->q);
    dra_free(p->mem, p->w);
    dra_free(p->mem, p);
}

/* Idle workers are woken with no job; busy ones stop when they find
 * the queue empty. */
void api_pool_stop(api_pool *p)
{
    pworker *idle;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    idle = p->idle;
    p->idle = NULL;
    pthread_mutex_unlock(&p->lock);
    for (; idle; idle = idle->next_idle)
        sem_post(&idle->sem);
    for (int i = 0; i < p->n; i++) {
        if (p->w[i].started)
            pthread_join(p->w[i].t, NULL);
        sem_destroy(&p->w[i].sem);
    }
    pool_free(p);
}

dra_err api_pool_start(const dra_mem *mem, int n, api_pool_run run, void *ud, api_pool **out)
{
    api_pool *p = dra_calloc(mem, 1, sizeof *p);
    *out = NULL;
    if (!p)
        return DRA_ENOMEM;
    p->mem = mem;
    p->run = run;
    p->ud = ud;
    pthread_mutex_init(&p->lock, NULL);
    if (n < 1 || !(p->w = dra_calloc(mem, (size_t)n, sizeof *p->w))) {
        pool_free(p);
        return DRA_ENOMEM;
    }
    for (; p->n < n; p->n++) {
        pworker *w = &p->w[p->n];
        w->p = p;
        if (sem_init(&w->sem, 0, 0))
            break;
        if (pthread_create(&w->t, NULL, worker_main, w)) {
            sem_destroy(&w->sem);
            break;
        }
        w->started = 1;
    }
    if (!p->n) {
        pool_free(p);
        return DRA_EIO;
    }
    *out = p;
    return DRA_OK;
}
