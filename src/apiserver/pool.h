/*
 * pool.h: the worker threads both HTTPS front ends hand blocking jobs to
 * (writes, which wait for their group commit). Idle workers sleep on
 * their own semaphore, last in first out, and a job goes straight to one:
 * a hand-over takes the pool's lock once and wakes exactly one thread,
 * where a shared condition variable made every woken worker contend for
 * the lock again (measured: 8-10 % of drad's CPU under 64 writers).
 */
#ifndef DRA_APISERVER_POOL_H
#define DRA_APISERVER_POOL_H

#include "dra/base.h"

typedef struct api_pool api_pool;
typedef void (*api_pool_run)(void *job, void *ud);

/* Starts up to |n| workers calling run(job, ud) for each job; at least
 * one must start (else DRA_EIO; DRA_ENOMEM). */
DRA_HIDDEN dra_err api_pool_start(const dra_mem *mem, int n, api_pool_run run, void *ud,
                                  api_pool **out);
/* Queues |job| for the next free worker. DRA_OK, or DRA_ENOMEM or
 * DRA_EUNAVAILABLE (stopping): then the job was not taken. */
DRA_HIDDEN dra_err api_pool_submit(api_pool *p, void *job);
/* Lets the workers run what is queued, joins them and frees |p|. */
DRA_HIDDEN void api_pool_stop(api_pool *p);

#endif
