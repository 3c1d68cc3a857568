/* Chase-Lev work-stealing deque.
 *
 * Overview: the owner pushes and pops at the bottom, thieves steal at the top.
 * The buffer is a circular array that the owner doubles when full; old
 * buffers stay allocated until the deque is destroyed, because a thief may
 * still be reading a slot of one (the retired chain at most doubles memory).
 *
 * Invariants:
 *  1. top only grows, and only by a successful CAS (thief, or owner on the
 *     last job); bottom is written by the owner only.
 *  2. Slots [top, bottom) hold the jobs; a slot is written only while it is
 *     outside that window as seen by every thief (at index bottom, before
 *     bottom is published).
 *  3. When one job remains, owner and thieves race for it with a CAS on top;
 *     exactly one wins.
 *
 * Protocol and memory orders: Lê, Pop, Cohen, Zappa Nardelli, "Correct and
 * Efficient Work-Stealing for Weak Memory Models", PPoPP 2013, figure 1. Each
 * order below names the access it pairs with.
 */
#include <errno.h>
#include <stdlib.h>

#include "deque.h"

static weft__deque_buf *buf_new(int64_t capacity) {
    weft__deque_buf *b = malloc(sizeof *b + (size_t)capacity * sizeof(_Atomic(weft__job *)));
    if (!b)
        return NULL;
    b->mask = capacity - 1;
    b->retired = NULL;
    return b;
}

int weft__deque_init(weft__deque *d, size_t capacity) {
    size_t cap = 16;
    while (cap < capacity)
        cap *= 2;
    weft__deque_buf *b = buf_new((int64_t)cap);
    if (!b)
        return ENOMEM;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    atomic_init(&d->buf, b);
    return 0;
}

void weft__deque_destroy(weft__deque *d) {
    weft__deque_buf *b = atomic_load_explicit(&d->buf, memory_order_relaxed);
    while (b) {
        weft__deque_buf *older = b->retired;
        free(b);
        b = older;
    }
}

weft__deque_buf *weft__deque_grow(weft__deque *d, weft__deque_buf *old, int64_t t, int64_t b) {
    weft__deque_buf *nb = buf_new((old->mask + 1) * 2);
    if (!nb)
        return NULL;
    for (int64_t i = t; i < b; i++) {
        /* Relaxed: only the owner writes slots; thieves read them after
         * loading buf with acquire, which pairs with the release below. */
        weft__job *j = atomic_load_explicit(&old->slot[i & old->mask], memory_order_relaxed);
        atomic_store_explicit(&nb->slot[i & nb->mask], j, memory_order_relaxed);
    }
    nb->retired = old;
    /* Release: a thief that loads the new buffer (acquire) sees its slots. */
    atomic_store_explicit(&d->buf, nb, memory_order_release);
    return nb;
}

weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job) {
    /* Acquire: pairs with the CAS of the previous thief. */
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    /* Seq-cst fence: pairs with the owner's fence in pop (see there). */
    weft__fence_seq_cst();
    /* Acquire: pairs with the owner's release fence (store) in push. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if (t >= b)
        return WEFT_STEAL_EMPTY;
    /* Acquire: pairs with the release store of a grown buffer. */
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_acquire);
    weft__job *j = atomic_load_explicit(&buf->slot[t & buf->mask], memory_order_relaxed);
    /* Seq-cst CAS: claims slot t; failure means another thief or the owner
     * took it, and the value we read may be stale. */
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return WEFT_STEAL_RETRY;
    *job = j;
    return WEFT_STEAL_OK;
}
