/* SPDX-License-Identifier: MIT */
/* Priorities: what a worker's jobs run at, what its forks inherit, and the
 * pool's sticky notes that high-priority work was ever seen, which keep the
 * checks for it off every path of a pool that never sees any. */
#ifndef WEFT_PRIORITY_H
#define WEFT_PRIORITY_H

#include <stdbool.h>

#include "weft.h"

#include "core/pool.h"
#include "core/worker.h"
#include "os/atomics.h"

/* Remember that high-priority work was submitted (high_seen). Relaxed, as
 * high_pushed: a stale false delays a high job by a piece of normal work,
 * never loses it; the load first keeps the line shared. */
static inline void weft__pool_note_high_seen(weft_pool *pool) {
    if (!atomic_load_explicit(&pool->high_seen, memory_order_relaxed))
        atomic_store_explicit(&pool->high_seen, true, memory_order_relaxed);
}

/* Remember that a deque may from now on hold a high-priority job. */
static inline void weft__pool_note_high(weft_pool *pool) {
    /* Relaxed: a stale false costs parallelism, never a job. The pusher sees
     * its own store, so it runs the job itself if nobody steals it; a worker
     * woken for the job synchronises with its waker (the slot lock, the JEC
     * CAS) and so sees the flag. The load first keeps the line shared once
     * the flag is set. */
    if (!atomic_load_explicit(&pool->high_pushed, memory_order_relaxed))
        atomic_store_explicit(&pool->high_pushed, true, memory_order_relaxed);
    weft__pool_note_high_seen(pool);
}

/* w runs at priority prio from now on: what it forks is pushed there. Every
 * raise of a worker's priority goes through here (restoring an outer one needs
 * no note: it was noted when set), and weft__pool_submit_prio notes explicit
 * high submissions, so no high job reaches a deque unnoted while
 * weft__worker_push_prio stays free of the check. */
static inline void weft__worker_set_prio(weft__worker *w, weft_priority prio) {
    if (WEFT__UNLIKELY(prio == WEFT_PRIORITY_HIGH))
        weft__pool_note_high(w->pool);
    if (prio != w->h.prio) {
        weft__worker_retag_begin(w);
        w->h.prio = prio;
    }
}

/* Call fn(arg) on w at priority prio (what it forks inherits it), then give
 * w back the priority it had. */
static inline void weft__worker_call_at(weft__worker *w, weft_priority prio, void (*fn)(void *arg),
                                        void *arg) {
    weft_priority outer = w->h.prio;
    weft__worker_set_prio(w, prio);
    fn(arg);
    if (w->h.prio != outer) {
        weft__worker_retag_begin(w);
        w->h.prio = outer; /* no note: it was noted when set */
    }
}

/* weft__worker_high_waits for w (NULL: not a worker), with the common
 * answer inline: a pool that never saw high work has none waiting. */
static inline bool weft__worker_should_give_way(weft__worker *w) {
    /* Relaxed: see weft__pool_note_high_seen. */
    return w && WEFT__UNLIKELY(atomic_load_explicit(&w->pool->high_seen, memory_order_relaxed)) &&
           weft__worker_high_waits(w);
}

#endif
