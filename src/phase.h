/* SPDX-License-Identifier: MIT */
/* Parallel phases (oneTBB's): a reference count of active phases and the
 * one-time fast leave. See phase.c. */
#ifndef WEFT_PHASE_H
#define WEFT_PHASE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"

/* How long a worker inside a phase keeps searching with no work at all
 * before it sleeps anyway (phase.c explains the number). */
#define WEFT__PHASE_RETAIN_NS ((uint64_t)10 * 1000 * 1000)

typedef struct weft__phase {
    alignas(WEFT__CACHELINE) _Atomic uint32_t active; /* A: phases begun and not ended */
    _Atomic uint32_t fast_once;                       /* A: the last end asked for a fast leave */
} weft__phase;

/* Any thread. Relaxed loads: hints read on every search round; a stale value
 * makes a worker search a little longer or sleep a little sooner, nothing
 * more (the sleep protocol's correctness does not depend on it). */
static inline bool weft__phase_active(weft__phase *p) {
    return atomic_load_explicit(&p->active, memory_order_relaxed) != 0;
}

static inline bool weft__phase_fast_leave(weft__phase *p) {
    return atomic_load_explicit(&p->fast_once, memory_order_relaxed) != 0;
}

/* New work arrived: a one-time fast leave is over (oneTBB: "restored when
 * new work is submitted"). Called on the cold submission paths only. */
static inline void weft__phase_new_work(weft__phase *p) {
    if (WEFT__UNLIKELY(weft__phase_fast_leave(p)))
        atomic_store_explicit(&p->fast_once, 0, memory_order_relaxed);
}

/* weft_pool_destroy: a pool destroyed inside a phase ends it (as in oneTBB). */
WEFT__HIDDEN void weft__phase_end_all(weft__phase *p);

#endif
