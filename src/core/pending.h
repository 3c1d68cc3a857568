/* SPDX-License-Identifier: MIT */
/* A pool's pending work: what weft_pool_destroy waits for, and how it closes
 * the pool to new detached work without losing any.
 *
 * One atomic word counts two things:
 *   runnable (bits 0-31): detached jobs queued or running (weft_spawn, the
 *     follow-ups of set events), calls from other threads under way (a
 *     weft_run in a caller slot, callers.c, or with its job injected, run.c;
 *     weft_broadcast; weft_trace_stop), plus one count the pool holds until
 *     weft_pool_destroy drops it;
 *   parked (bits 32-63): follow-ups waiting on events that are not set yet.
 *
 * Invariants:
 *  - runnable reaches 0 only after destroy dropped the pool's count, and then
 *    means "closed": weft__pending_hold and weft__pending_park fail from then
 *    on (ESHUTDOWN), so a submission that returned 0 is always waited for.
 *  - Parked follow-ups do not keep destroy waiting (an event that is never set
 *    would hang it); destroy answers EBUSY while any is parked, because a later
 *    signal would queue them into a pool that is gone.
 *  - A parked follow-up becomes runnable in one step (weft__pending_ready), so
 *    destroy, reading the word once it drained, sees either the parked count or
 *    the runnable one: never a follow-up in neither.
 *
 * The word is one atomic so that these decisions are single reads or single
 * read-modify-writes; the drained latch is owned by the thread in
 * weft_pool_destroy and set by whoever brings runnable to 0.
 */
#ifndef WEFT_PENDING_H
#define WEFT_PENDING_H

#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "core/latch_owner.h"
#include "idle/latch.h"

#define WEFT__PENDING_RUNNABLE 1ull
#define WEFT__PENDING_PARKED   (1ull << 32)

typedef struct weft__pending {
    _Atomic uint64_t word; /* A: parked << 32 | runnable */
    weft__latch drained;   /* owned by the thread in weft_pool_destroy */
} weft__pending;

static inline uint32_t weft__pending_runnable(uint64_t word) {
    return (uint32_t)word;
}

static inline uint32_t weft__pending_parked(uint64_t word) {
    return (uint32_t)(word >> 32);
}

/* The pool holds one runnable count until weft_pool_destroy. */
static inline void weft__pending_init(weft__pending *p) {
    atomic_init(&p->word, WEFT__PENDING_RUNNABLE);
}

/* Add `add` to the word unless the pool is closed (runnable == 0). */
static inline bool weft__pending_add_if_open(weft__pending *p, uint64_t add) {
    /* Relaxed: the CAS below rereads it. */
    uint64_t w = atomic_load_explicit(&p->word, memory_order_relaxed);
    do {
        if (weft__pending_runnable(w) == 0)
            return false;
        weft__debug_yield();
        /* Relaxed on success: the submitter's writes reach the job through the
         * queue it is pushed on, and destroy learns of it through the
         * acq_rel decrement that ends it. */
    } while (!atomic_compare_exchange_weak_explicit(&p->word, &w, w + add, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

/* Count a detached job about to be queued; false once the pool is closed. */
static inline bool weft__pending_hold(weft__pending *p) {
    return weft__pending_add_if_open(p, WEFT__PENDING_RUNNABLE);
}

/* Count a follow-up parked on an unset event; false once the pool is closed. */
static inline bool weft__pending_park(weft__pending *p) {
    return weft__pending_add_if_open(p, WEFT__PENDING_PARKED);
}

/* n parked follow-ups of an event that is now set become runnable. Always
 * succeeds: while they were parked, destroy could only answer EBUSY.
 * Relaxed: what destroy decides depends only on this word's modification
 * order (one location), and the follow-ups' writes reach destroy through the
 * acq_rel release that ends each of them. A thread that saw the event set
 * sees this step too: fire() makes it before its release store of `fired`. */
static inline void weft__pending_ready(weft__pending *p, uint32_t n) {
    weft__debug_yield();
    atomic_fetch_add_explicit(&p->word,
                              (uint64_t)n * WEFT__PENDING_RUNNABLE - n * WEFT__PENDING_PARKED,
                              memory_order_relaxed);
}

/* n parked follow-ups were discarded (their event was destroyed unset). */
static inline void weft__pending_unpark(weft__pending *p, uint32_t n) {
    weft__debug_yield();
    /* Relaxed: only the count matters (see weft__pending_ready); the discarded
     * jobs never ran, so there is nothing of theirs to publish. */
    atomic_fetch_sub_explicit(&p->word, n * WEFT__PENDING_PARKED, memory_order_relaxed);
}

/* A runnable count ends (a detached job returned, or destroy drops the pool's
 * count); the last one sets the drained latch. */
static inline void weft__pending_release(weft__pending *p) {
    /* Acq_rel: every job's writes happen-before the last decrement, which
     * publishes them to destroy through the latch's release. */
    weft__debug_yield();
    uint64_t old =
        atomic_fetch_sub_explicit(&p->word, WEFT__PENDING_RUNNABLE, memory_order_acq_rel);
    weft__debug_yield();
    if (weft__pending_runnable(old) == 1)
        weft__latch_set(&p->drained);
}

#endif
