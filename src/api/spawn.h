/* SPDX-License-Identifier: MIT */
/* Heap jobs and the spawns that queue them: weft_spawn's detached jobs,
 * a scope's counted ones, event follow-ups (spawn.c). */
#ifndef WEFT_SPAWN_H
#define WEFT_SPAWN_H

#include "weft.h"

#include "core/job.h"
#include "core/pending.h"
#include "idle/latch.h"

/* Heap jobs from the calling worker's free list, or malloc. NULL: ENOMEM. */
WEFT__HIDDEN weft__heap_job *weft__heap_job_alloc(void);
WEFT__HIDDEN void weft__heap_job_free(weft__heap_job *job);

/* Make h run fn(arg), already counted in counter (a scope's) or pending (the
 * pool's) until it has run; the caller then queues it. */
WEFT__HIDDEN void weft__heap_job_init(weft__heap_job *h, weft__count_latch *counter,
                                      weft__pending *pending, weft_fn *fn, void *arg);

/* Queue a heap job like job (its fn, arg, counter, group and release; the
 * counter held by the caller), counted in the counter until it has run or
 * been skipped. 0, or ENOMEM (nothing queued, counter unchanged). */
WEFT__HIDDEN int weft__spawn_counted(weft_pool *pool, const weft__heap_job *job,
                                     weft_priority prio);

/* What every entry point that takes a job checks first: 0, or EINVAL with
 * its message (os/error.h) if fn is NULL or priority is not an enumerator
 * (it indexes the injectors and deques). */
WEFT__HIDDEN int weft__spawn_check_args(weft_fn *fn, weft_priority priority);

/* Queue fn(arg) as a detached job of the pool, counted in its pending work.
 * 0, ENOMEM, or ESHUTDOWN (weft_pool_destroy closed the pool; nothing queued). */
WEFT__HIDDEN int weft__spawn_detached(weft_pool *pool, weft_fn *fn, void *arg, weft_priority prio);

#endif
