/* SPDX-License-Identifier: MIT */
/* Latches: a one-shot "done" flag with exactly one owner thread, the thread
 * that waits for it. See latch.c. */
#ifndef WEFT_LATCH_H
#define WEFT_LATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/atomics.h"

typedef struct weft_pool weft_pool;

/* Core latch states (Rayon's sleep RFC, Appendix A). */
enum { WEFT__LATCH_UNSET = 0, WEFT__LATCH_SLEEPY, WEFT__LATCH_SLEEPING, WEFT__LATCH_SET };

#define WEFT__LATCH_OUTSIDE UINT32_MAX /* owner is a thread outside any pool */

typedef struct weft__latch {
    _Atomic uint32_t state; /* A: futex word for an outside owner */
    uint32_t owner;         /* I: owner's worker index, or WEFT__LATCH_OUTSIDE */
    weft_pool *pool;        /* I: owner's pool (NULL for an outside owner) */
} weft__latch;

/* A latch set when its count drops to zero (scopes, pool shutdown). */
typedef struct weft__count_latch {
    _Atomic size_t count; /* A */
    weft__latch latch;
} weft__count_latch;

/* Owned by worker `index` of pool. */
static inline void weft__latch_init_owned(weft__latch *l, weft_pool *pool, unsigned index) {
    atomic_init(&l->state, WEFT__LATCH_UNSET);
    l->owner = index;
    l->pool = pool;
}

/* Owner only: has the latch been set? Acquire: pairs with the release in
 * weft__latch_set, so whatever the setter did before is visible. */
static inline bool weft__latch_probe(weft__latch *l) {
    return atomic_load_explicit(&l->state, memory_order_acquire) == WEFT__LATCH_SET;
}

/* The same for a latch whose owner is an outside thread (latch.c). */
WEFT__HIDDEN void weft__latch_set_outside(weft__latch *l);
WEFT__HIDDEN void weft__latch_wait_outside(weft__latch *l);

/* Owner only, with nothing else to do: poll for budget_ns; true if the
 * latch got set meanwhile, false once that time is spent or as soon as
 * stop(arg) (NULL: none; asked now and then) is true: the owner has found
 * something else to do. How long is the caller's choice (latch.c, context.c). */
WEFT__HIDDEN bool weft__latch_poll_until(weft__latch *l, bool (*stop)(void *arg), void *arg,
                                         uint64_t budget_ns);

/* Owner only, used by the sleep module: the Appendix A transitions.
 * get_sleepy: UNSET -> SLEEPY; fall_asleep: SLEEPY -> SLEEPING; both fail
 * (return false) only when the latch was set. wake_up: back to UNSET unless
 * set meanwhile. */
WEFT__HIDDEN bool weft__latch_get_sleepy(weft__latch *l);
WEFT__HIDDEN bool weft__latch_fall_asleep(weft__latch *l);
WEFT__HIDDEN void weft__latch_wake_up(weft__latch *l);

#endif
