/* SPDX-License-Identifier: MIT */
/* Per-worker statistics behind weft_pool_stats.
 *
 * Each counter has one writer, its worker, and any thread may read it, so
 * they are atomics updated with a relaxed load and store (a plain add, no
 * locked instruction) and read with relaxed loads: a snapshot may mix values
 * from slightly different moments, which is all statistics promise. Time is
 * taken only when a worker changes state (starts or stops searching, falls
 * asleep, wakes), never per job. */
#ifndef WEFT_STATS_H
#define WEFT_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "os/atomics.h"
#include "obs/trace_buf.h"

typedef struct weft__stats {
    _Atomic uint64_t jobs;           /* A: jobs executed */
    _Atomic uint64_t steals;         /* A: taken from another worker's deque */
    _Atomic uint64_t forced_steals;  /* A: of steals, private jobs (deque.c) */
    _Atomic uint64_t injected;       /* A: taken from the injector */
    _Atomic uint64_t sleeps;         /* A: times it blocked */
    _Atomic uint64_t wakeups;        /* A: times it was woken */
    _Atomic uint64_t futile_wakeups; /* A: woken, then blocked again with no job run */
    _Atomic uint64_t early_wakeups;  /* A: woke itself before predicted work (leave.c) */
    _Atomic uint64_t search_ns;      /* A: time searching (excluding sleep) */
    _Atomic uint64_t sleep_ns;       /* A: time blocked */
    _Atomic uint64_t asleep_since;   /* A: when the current sleep began; 0: awake */
    _Atomic uint64_t search_since;   /* A: when the current search began; 0: none */
    uint64_t started_ns;             /* I: when the worker started */
    bool woken_without_job;          /* O: for futile_wakeups */
    weft__trace_buf trace;           /* O: timeline events (trace.c) */
} weft__stats;

/* Owner only. Relaxed load and store: the owner is the only writer. */
static inline void weft__stat_add(_Atomic uint64_t *counter, uint64_t n) {
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline uint64_t weft__stat_get(const _Atomic uint64_t *counter) {
    return atomic_load_explicit((_Atomic uint64_t *)counter, memory_order_relaxed);
}

#endif
