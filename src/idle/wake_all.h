/* SPDX-License-Identifier: MIT */
/* The wake-all sleep protocol (WEFT_WAKE_ALL, the legacy Rayon sleep): one
 * sleepy worker at a time, and every event wakes every sleeper. Reached only
 * through the sleep module's entry points (sleep.h), one dispatch each. See
 * wake_all.c. */
#ifndef WEFT_WAKE_ALL_H
#define WEFT_WAKE_ALL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "idle/idle.h"
#include "idle/latch.h"

typedef struct weft__wake_all {
    /* Sleepy worker + 1 (bits 1..) | anyone asleep (bit 0). */
    alignas(WEFT__CACHELINE) _Atomic uint64_t state; /* A */
    alignas(WEFT__CACHELINE) pthread_mutex_t lock;
    _Atomic uint32_t epoch; /* A: written under lock; the sleepers' futex word */
    /* Read on every search round: a line of their own, not the lock's. */
    alignas(WEFT__CACHELINE) unsigned rounds; /* I: rounds before getting sleepy, and
                                                 again before sleeping */
    const weft__idle_env *env;                /* I */
} weft__wake_all;

WEFT__HIDDEN void weft__wake_all_init(weft__wake_all *a, const weft__idle_env *env,
                                      bool leave_fast);
WEFT__HIDDEN void weft__wake_all_destroy(weft__wake_all *a);

WEFT__HIDDEN WEFT__COLD void weft__wake_all_tickle_cold(weft__wake_all *a);

/* Any event (a new job, a set latch, a phase's warm-up): wake every sleeper
 * and make the sleepy worker start over. Seq-cst load: it follows the event
 * in the total order (the PushFence, or the latch's seq-cst exchange). */
static inline void weft__wake_all_tickle(weft__wake_all *a) {
    weft__debug_yield();
    if (atomic_load_explicit(&a->state, memory_order_seq_cst) != 0)
        weft__wake_all_tickle_cold(a);
}

/* Is any worker sleepy or asleep? Seq-cst, like every access to the state;
 * a stale answer costs parallelism, never progress. */
static inline bool weft__wake_all_wants_work(weft__wake_all *a) {
    return atomic_load_explicit(&a->state, memory_order_seq_cst) != 0;
}

/* A search found nothing: search again, get sleepy, or sleep once. */
WEFT__HIDDEN void weft__wake_all_no_work_found(weft__wake_all *a, weft__idle *idle,
                                               weft__latch *latch, uint64_t now);

/* The search loop ends (work found, or its latch set): a sleepy worker gives
 * up being the sleepy one. */
WEFT__HIDDEN void weft__wake_all_stop_looking(weft__wake_all *a, weft__idle *idle);
/* Set a worker's latch and wake it (sleep.h, weft__sleep_set_latch). */
WEFT__HIDDEN void weft__wake_all_set_latch(weft__wake_all *a, weft__latch *l);

#endif
