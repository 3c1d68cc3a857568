/* SPDX-License-Identifier: MIT */
/* A latch and its owner: who owns a latch is set when it is made, and
 * decides how a setter wakes it and how it waits: a worker keeps running its
 * pool's jobs and sleeps through the pool's sleep module; a context runs its
 * own; an outside thread blocks (latch.c has the latch itself). */
#ifndef WEFT_LATCH_OWNER_H
#define WEFT_LATCH_OWNER_H

#include <stddef.h>

#include "idle/latch.h"
#include "os/atomics.h"

/* Owned by the calling thread: a worker of its pool, or an outside thread.
 */
WEFT__HIDDEN void weft__latch_init(weft__latch *l);

/* Any thread: set the latch and wake its owner if it sleeps on it. The latch
 * may be freed by its owner as soon as this starts; it is not touched after
 * the setting store. */
WEFT__HIDDEN void weft__latch_set(weft__latch *l);

/* Owner only: return once the latch is set. A worker keeps running jobs of
 * its pool meanwhile; an outside owner blocks. */
WEFT__HIDDEN void weft__latch_wait(weft__latch *l);

WEFT__HIDDEN void weft__count_latch_init(weft__count_latch *c, size_t count);

/* Holder of a count only (count > 0 is known): add one. */
static inline void weft__count_latch_increment(weft__count_latch *c) {
    /* Relaxed: the caller holds a count, so the latch cannot be set under
     * it; the decrement that matters is acq_rel. */
    atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
}

/* Drop one count; the last one sets the latch. */
static inline void weft__count_latch_decrement(weft__count_latch *c) {
    /* Acq_rel: every holder's writes happen-before the final decrement,
     * which then publishes them all through the latch's release. */
    if (atomic_fetch_sub_explicit(&c->count, 1, memory_order_acq_rel) == 1)
        weft__latch_set(&c->latch);
}

#endif
