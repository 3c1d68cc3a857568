/* SPDX-License-Identifier: MIT */
/* Submitting: how a job reaches a pool from any thread, onto the caller's
 * deque or into the pool's injector (submit.c). */
#ifndef WEFT_SUBMIT_H
#define WEFT_SUBMIT_H

#include "weft.h"

#include "core/pool.h"
#include "core/job.h"

/* Queue a job in the pool's injector of priority prio (any thread) and wake
 * a worker. */
WEFT__HIDDEN void weft__pool_inject(weft_pool *pool, weft__job *job, weft_priority prio);

/* Queue a job at priority prio: on the caller's deque if it is a worker of
 * pool, else inject. 0 or ENOMEM (a full deque that cannot grow). */
WEFT__HIDDEN int weft__pool_submit_prio(weft_pool *pool, weft__job *job, weft_priority prio);

/* The same at the caller's current priority (normal outside the pool); a
 * full deque falls back to the injector, so it cannot fail. */
WEFT__HIDDEN void weft__pool_submit(weft_pool *pool, weft__job *job);

/* Where a detached job goes (weft_spawn, event follow-ups): like
 * weft__pool_submit_prio, except that a context injects it, since a context
 * runs its own queue only while it waits. */
WEFT__HIDDEN int weft__pool_submit_detached(weft_pool *pool, weft__job *job, weft_priority prio);

#endif
