/* SPDX-License-Identifier: MIT */
/* A latch and its owner (latch_owner.h). latch.c has the latch protocol and
 * outside owners; a worker's latch is the pool's business: its owner waits
 * in the search loop and sleeps through the pool's sleep module, which wakes
 * it. */
#include "core/latch_owner.h"
#include "core/current.h"
#include "core/worker.h"

void weft__count_latch_init(weft__count_latch *c, size_t count) {
    atomic_init(&c->count, count);
    weft__latch_init(&c->latch);
}

void weft__latch_init(weft__latch *l) {
    weft__worker *w = weft__current_worker();
    if (w)
        weft__latch_init_owned(l, w->pool, w->index);
    else
        weft__latch_init_owned(l, NULL, WEFT__LATCH_OUTSIDE);
}

void weft__latch_set(weft__latch *l) {
    weft_pool *pool = l->pool; /* copy: l may be gone right after the swap */
    if (!pool) {
        weft__latch_set_outside(l);
        return;
    }
    /* A setter from outside the owner's pool holds a reference on it across
     * the wake-up: the owner, once it returns, may destroy its pool. */
    weft__worker *self = weft__current_worker();
    bool foreign = !self || self->pool != pool;
    if (foreign)
        weft__pool_ref(pool);
    weft__debug_yield();
    weft__sleep_set_latch(&pool->sleep, l); /* l may be gone once this swaps SET in */
    weft__debug_yield();
    if (foreign)
        weft__pool_unref(pool);
}

void weft__latch_wait(weft__latch *l) {
    if (l->owner == WEFT__LATCH_OUTSIDE)
        weft__latch_wait_outside(l);
    else
        weft__worker_wait_until(weft__current_worker(), l);
}
