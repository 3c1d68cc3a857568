/* SPDX-License-Identifier: MIT */
/* The worker: a thread of the pool (or a context or caller slot) with its
 * deques and join frames; which worker runs on this thread; how it pushes,
 * pops and shares jobs, runs them, and waits running others (worker.c). */
#ifndef WEFT_WORKER_H
#define WEFT_WORKER_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "core/pool.h"
#include "core/private_work.h"
#include "core/context.h"
#include "core/deque.h"
#include "core/frame.h"
#include "core/group.h"
#include "core/job.h"
#include "idle/latch.h"
#include "obs/stats.h"
#include "os/atomics.h"

typedef struct weft__worker {
    /* What a fork and its pop touch (include/weft/join.h, ABI): the newest
     * join frame, the running job's group and priority, the count of B run
     * inline; then the claim word, written by thieves too, on its own line.
     * First, so that the thread-local head pointer is the worker's. */
    struct weft__worker_head h;
    weft__deque deques[WEFT__PRIORITIES]; /* each on its own cache lines */
    /* Set before the worker starts. */
    alignas(WEFT__CACHELINE) weft_pool *pool; /* I */
    unsigned index;                           /* I: slot; contexts, then callers, follow
                                                 the workers */
    bool is_context; /* I: a context (context.c) or a caller slot (callers.c): no thread of its own
                      */
    /* Owner only. */
    uint64_t rng;              /* O: victim selection */
    weft__heap_job *free_jobs; /* O: recycled heap jobs */
    uint64_t broadcast_seen;   /* O: last broadcast run (broadcast.c) */
    unsigned free_count;       /* O */
    weft__forced_sweep forced; /* O: taking private work by force (private_work.c) */
    weft_task *task;           /* O: the job it runs innermost (NULL: none; task.h) */
    unsigned blocking;         /* O: blocking regions it is inside (task.c) */
    /* The thread and how it is claimed and stopped. */
    alignas(WEFT__CACHELINE) _Atomic bool taken; /* A: contexts and callers: a thread holds it */
    /* The job this worker runs innermost, for a context that waits for it
     * (context.c, the take-back): its latch (NULL: no context waits for it,
     * or the worker runs no job), and the stack address below which the
     * join frames it forks lie. The owner writes them around each job it
     * runs; contexts read them. */
    _Atomic(weft__latch *) serving;  /* A */
    _Atomic uintptr_t serving_below; /* A */
    pthread_t thread;
    weft__latch terminate;  /* owned by this worker; set by weft_pool_destroy (a spare's: when
                               it is released, spare.c) */
    _Atomic uint32_t spare; /* A: a spare's WEFT__SPARE_* state, under spares.lock; futex word */
    bool spare_joinable;    /* L (spares.lock): a spare's thread was created, not yet joined */
    alignas(WEFT__CACHELINE) weft__stats stats; /* written by this worker only */
} weft__worker;

_Static_assert(offsetof(weft__worker, h) == 0, "the head is the worker's start (join.h)");
_Static_assert(offsetof(struct weft__worker_head, prio) + sizeof(uint32_t) <= 64,
               "the fields a fork and its pop write share one 64-byte line");

/* Is w a caller slot (callers.c), held by an outside thread for one call? */
static inline bool weft__is_caller(const weft__worker *w) {
    return w->index >= w->pool->threads + w->pool->contexts && w->index < w->pool->spares.first;
}

/* A broadcast that w has not run yet? Only the pool's workers run them
 * (weft_broadcast: one call per worker), not its spares. */
static inline bool weft__worker_broadcast_pending(weft__worker *w) {
    return w->index < w->pool->threads &&
           weft__broadcast_pending(&w->pool->broadcasts, w->broadcast_seen);
}

/* w is about to change the head's group or priority, what its forks
 * inherit: first its private frames that take theirs from the head get them
 * stamped (frame.c, "Stamps"). Private frames are what claim does not name
 * (a lock held is one more reason to go there: it waits for it). Relaxed
 * load of frames: our own word. Acquire load of claim: pairs with a forced
 * thief's release, so its read of the head's tag for the frame it took
 * comes before our change; with no private frame, no thief reads the tag
 * until we fork again (a release of frames after the change). */
static inline void weft__worker_retag_begin(weft__worker *w) {
    uintptr_t top = (uintptr_t)atomic_load_explicit(&w->h.frames, memory_order_relaxed);
    uintptr_t c = atomic_load_explicit(&w->h.claim, memory_order_acquire);
    if (WEFT__UNLIKELY(top != (c & ~(uintptr_t)WEFT__CLAIM_REQUEST)))
        weft__frame_stamp_private(w);
}

/* On the calling worker: fn(arg) in group, then set done, last (a stack
 * job's or a join frame's B run by whoever took it). */
WEFT__HIDDEN void weft__worker_run_and_set(weft_fn *fn, void *arg, weft__group *group,
                                           weft__latch *done);

/* Run jobs of w's pool until latch is set (participating wait). */
WEFT__HIDDEN void weft__worker_wait_until_cold(weft__worker *w, weft__latch *latch);

/* Run s->fn(s->arg) on the calling worker in group, then set the latch, last:
 * s may be gone after that (its owner, which waits for the latch, may return). */
WEFT__HIDDEN void weft__stack_job_run(weft__stack_job *s, weft__group *group);

static inline void weft__worker_wait_until(weft__worker *w, weft__latch *latch) {
    if (weft__latch_probe(latch))
        return;
    if (WEFT__UNLIKELY(w->is_context))
        weft__context_wait_until(w, latch);
    else
        weft__worker_wait_until_cold(w, latch);
}

/* Record a change of what w does in its pool's trace (name: the job's
 * name, RUN only), if the pool traces: one relaxed load when it does not.
 * Relaxed: a flag that turns recording on and off (trace_buf.h). */
WEFT__HIDDEN WEFT__COLD void weft__worker_trace_cold(weft__worker *w, weft__trace_kind kind,
                                                     const char *name);
static inline void weft__worker_trace(weft__worker *w, weft__trace_kind kind, const char *name) {
    if (WEFT__UNLIKELY(atomic_load_explicit(&w->pool->trace.on, memory_order_relaxed)))
        weft__worker_trace_cold(w, kind, name);
}

/* w runs the work of its group from now on (a job starts, or its thread
 * goes back to the job it waited in): a slice named for the group. */
static inline void weft__worker_trace_run(weft__worker *w) {
    if (WEFT__UNLIKELY(atomic_load_explicit(&w->pool->trace.on, memory_order_relaxed)))
        weft__worker_trace_cold(w, WEFT__TRACE_RUN, weft__group_name(w->h.group));
}

/* Share w's private jobs and tell the sleep module (cold path of push). */
WEFT__HIDDEN WEFT__COLD void weft__worker_offer(weft__worker *w, weft__deque *d);

/* The push that began an episode of d's private part (deque.c): fence, then
 * share if someone could take the job now. */
WEFT__HIDDEN WEFT__COLD void weft__worker_push_first(weft__worker *w, weft__deque *d);

/* What a worker serves (its `serving` fields), saved around a nested job. */
typedef struct weft__serving {
    weft__latch *latch;
    uintptr_t below;
} weft__serving;

/* w runs a job with latch (NULL: none) whose frames lie below `below`, until
 * weft__worker_serve_end; returns what it served before. Release: a context
 * that reads the latch (acquire) reads this job's `below` or a later one, a
 * deeper job's, which only refuses more (context.c, ours). */
static inline weft__serving weft__worker_serve(weft__worker *w, weft__latch *latch,
                                               uintptr_t below) {
    weft__serving outer = {atomic_load_explicit(&w->serving, memory_order_relaxed),
                           atomic_load_explicit(&w->serving_below, memory_order_relaxed)};
    atomic_store_explicit(&w->serving_below, below, memory_order_relaxed);
    atomic_store_explicit(&w->serving, latch, memory_order_release);
    return outer;
}

/* Back to the outer job. Release: as weft__worker_serve's, for its `below`. */
static inline void weft__worker_serve_end(weft__worker *w, weft__serving outer) {
    atomic_store_explicit(&w->serving_below, outer.below, memory_order_relaxed);
    atomic_store_explicit(&w->serving, outer.latch, memory_order_release);
}

/* Could someone take d's jobs now: an idle worker, or a thief that asked? */
static inline bool weft__worker_wanted(weft__worker *w, weft__deque *d) {
    /* Relaxed movesplit: a request, answered at the latest by the next push or pop. */
    return weft__sleep_wants_work(&w->pool->sleep) ||
           atomic_load_explicit(&d->movesplit, memory_order_relaxed);
}

/* Push a job on w's deque. It stays private (no synchronisation) unless some
 * worker could take it now: an idle or sleeping worker, or a thief that asked
 * this deque for work; then w shares its private jobs and wakes a sleeper if
 * needed. 0 or ENOMEM.
 * The first private job of an episode takes the cold path: a fence orders it
 * against workers going to sleep (deque.c, "the episode"), and it is shared if
 * nothing is public, so that a thief needs no barrier to take the only job of
 * a deque; that costs a public pop once per emptied deque (the right spine of
 * a stolen tree), not per job. */
static inline int weft__worker_push_prio(weft__worker *w, weft__job *job, weft_priority prio) {
    weft__deque *d = &w->deques[prio];
    int err = weft__deque_push(d, job);
    if (WEFT__UNLIKELY(err != 0))
        return err;
    if (WEFT__UNLIKELY(weft__deque_first_private(d)))
        weft__worker_push_first(w, d);
    else if (WEFT__UNLIKELY(weft__worker_wanted(w, d)))
        weft__worker_offer(w, d);
    return 0;
}

/* Push at the priority of the job running now (forked jobs inherit it). */
static inline int weft__worker_push(weft__worker *w, weft__job *job) {
    return weft__worker_push_prio(w, job, w->h.prio);
}

/* Pop w's newest job of priority prio; announce jobs the pop shared on a
 * thief's request. */
static inline weft__job *weft__worker_pop_prio(weft__worker *w, weft_priority prio) {
    weft__deque *d = &w->deques[prio];
    weft__job *job = weft__deque_pop(d);
    if (WEFT__UNLIKELY(d->unannounced != 0)) {
        unsigned n = d->unannounced;
        d->unannounced = 0;
        weft__sleep_new_jobs(&w->pool->sleep, n, false);
    }
    return job;
}

/* Pop at the priority of the job running now (where its joins pushed). */
static inline weft__job *weft__worker_pop(weft__worker *w) {
    return weft__worker_pop_prio(w, w->h.prio);
}

/* Create every worker thread, then let them run on_start and wait until all
 * have; on failure the threads created so far exit without running a hook
 * (worker.c). */
WEFT__HIDDEN int weft__workers_start(weft_pool *pool);
/* Set the terminate latches of the first `started` workers and join them. */
WEFT__HIDDEN void weft__workers_stop(weft_pool *pool, unsigned started);
/* Free a worker's (or context's) recycled heap jobs. */
WEFT__HIDDEN void weft__worker_free_jobs(weft__worker *w);

/* High-priority work queued in pool: injected, or public on a deque?
 * Hints (worker.c). */
WEFT__HIDDEN bool weft__pool_high_queued(weft_pool *pool);
/* Does high-priority work wait while w runs normal work that could give
 * way to it? And once it does, run one job of it here, at high priority,
 * if no other thread took it first (worker.c, "Normal work gives way"). */
WEFT__HIDDEN bool weft__worker_high_waits(weft__worker *w);
WEFT__HIDDEN void weft__worker_give_way(weft__worker *w);

#endif
