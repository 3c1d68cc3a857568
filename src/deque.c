/* SPDX-License-Identifier: MIT */
/* The work-stealing deque: a split deque.
 *
 * Overview. Jobs occupy indices [top, bottom) of a growable circular buffer.
 * A split point divides them: [top, split) is public, thieves take its oldest
 * job; [split, bottom) is private to the owner, who pushes and pops at the
 * bottom with plain loads and stores, no fence and no read-modify-write. The
 * owner moves jobs from private to public ("shares") when someone could take
 * them: when a worker is idle (weft__worker_push), when a thief found nothing
 * public and raised `movesplit` (next pop), and before waking a sleeper. When
 * the private part is empty, pop takes back half of the public part with one
 * CAS. This is the idea of Lace's split deque (van Dijk and van de Pol, "Lace:
 * non-blocking split deque for work-stealing", 2014): a work-first join pays
 * for synchronisation only when work actually moves between threads.
 * (Chase-Lev, which this replaced, needs a seq-cst fence on every pop: fib(30)
 * at one thread took 4.1 times a same-shape serial fib with it, 2.4 with this
 * deque; commit 26840f0.)
 *
 * Invariants:
 *  1. top <= split <= bottom (as distances; indices are 32-bit and wrap).
 *  2. top and split live in one 64-bit word, ts. Thieves advance top only by
 *     a CAS of ts that requires top < split; only the owner moves split, also
 *     by CAS of ts. So a thief's CAS made with an old split fails, and the
 *     owner never hands out a job a thief has claimed, nor the reverse.
 *  3. Slot i is written only by the owner, before index i is made public, and
 *     rewritten (as index i + capacity) only after top passed i, which the
 *     owner learns through an acquire load of ts (top_seen).
 *  4. Only the owner reads bottom; thieves never touch private jobs.
 *  5. Whenever a thief may CAS, split > top: the owner never lowers split to
 *     top (it takes the last public job by advancing top instead). So index
 *     top stays public, and its slot unchanged, for as long as ts shows it at
 *     the top, even if ts returns to an earlier value (ABA): a thief whose
 *     CAS succeeds with an old ts took the job it read.
 *
 * Memory orders: a job's contents and its slot are published by the release
 * CAS that moves split past it, and read by a thief after its acquire load of
 * ts. A thief reads the slot before its CAS claims it (the CAS then proves the
 * slot was not reused, invariant 3), as in Chase-Lev.
 */
#include <stdlib.h>

#include "deque.h"
#include "debug_yield.h"

static uint64_t ts_pack(uint32_t top, uint32_t split) {
    return ((uint64_t)split << 32) | top;
}

static weft__deque_buf *buf_new(uint32_t capacity) {
    weft__deque_buf *b = malloc(sizeof *b + (size_t)capacity * sizeof(_Atomic(weft__job *)));
    if (!b)
        return NULL;
    b->mask = capacity - 1;
    b->retired = NULL;
    return b;
}

int weft__deque_init(weft__deque *d, size_t capacity) {
    uint32_t cap = 16;
    while (cap < capacity && cap < (1u << 30))
        cap *= 2;
    weft__deque_buf *b = buf_new(cap);
    if (!b)
        return ENOMEM;
    atomic_init(&d->ts, 0);
    atomic_init(&d->movesplit, 0);
    atomic_init(&d->buf, b);
    d->bottom = d->split = d->top_seen = d->unannounced = 0;
    d->obuf = b;
    return 0;
}

void weft__deque_destroy(weft__deque *d) {
    weft__deque_buf *b = d->obuf;
    while (b) {
        weft__deque_buf *older = b->retired;
        free(b);
        b = older;
    }
}

/* Copy the live window [top_seen, bottom) into a buffer twice as large. Old
 * buffers are kept until the deque is destroyed: a thief may still read a
 * slot of one (at most doubling memory). */
static weft__deque_buf *grow(weft__deque *d) {
    weft__deque_buf *old = d->obuf;
    if (old->mask >= (1u << 30) - 1)
        return NULL;
    weft__deque_buf *nb = buf_new((old->mask + 1) * 2);
    if (!nb)
        return NULL;
    for (uint32_t i = d->top_seen; i != d->bottom; i++) {
        /* Relaxed: only the owner writes slots. */
        weft__job *j = atomic_load_explicit(&old->slot[i & old->mask], memory_order_relaxed);
        atomic_store_explicit(&nb->slot[i & nb->mask], j, memory_order_relaxed);
    }
    nb->retired = old;
    weft__debug_yield();
    /* Release: a thief that loads the new buffer (acquire) sees its slots. */
    atomic_store_explicit(&d->buf, nb, memory_order_release);
    d->obuf = nb;
    return nb;
}

int weft__deque_push_cold(weft__deque *d, weft__job *job) {
    weft__debug_yield();
    /* Acquire: pairs with the thieves' CAS of ts, so the slots they claimed
     * were read before we reuse them (invariant 3). */
    d->top_seen = weft__deque_top(atomic_load_explicit(&d->ts, memory_order_acquire));
    if (d->bottom - d->top_seen > d->obuf->mask && !grow(d))
        return ENOMEM;
    return weft__deque_push(d, job);
}

/* Move split to new_split (owner). Release: publishes the slots (and the
 * jobs they point to) below new_split to thieves' acquire loads of ts. */
static void move_split(weft__deque *d, uint32_t new_split) {
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    weft__debug_yield();
    while (!atomic_compare_exchange_weak_explicit(&d->ts, &ts,
                                                  ts_pack(weft__deque_top(ts), new_split),
                                                  memory_order_release, memory_order_relaxed)) {
        weft__debug_yield();
    }
    d->split = new_split;
    d->top_seen = weft__deque_top(ts);
}

unsigned weft__deque_share(weft__deque *d) {
    /* Relaxed: a hint; clearing it before sharing means a request that
     * arrives meanwhile is kept. */
    atomic_store_explicit(&d->movesplit, 0, memory_order_relaxed);
    weft__debug_yield();
    unsigned n = d->bottom - d->split;
    if (n)
        move_split(d, d->bottom);
    return n;
}

/* Private part empty: take back the newer half of the public part, or the
 * last public job from the top (invariant 5), or find that thieves took all. */
static weft__job *reclaim(weft__deque *d) {
    /* Acquire: pairs with thieves' CAS (top_seen, invariant 3). */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_acquire);
    for (;;) {
        uint32_t t = weft__deque_top(ts), s = weft__deque_split(ts), n = s - t;
        d->top_seen = t;
        if (n == 0)
            return NULL; /* all stolen: bottom == split == top */
        uint64_t want = n == 1 ? ts_pack(t + 1, s) : ts_pack(t, t + n / 2);
        weft__debug_yield();
        /* Acq_rel: ordered with the thieves' CAS on the same word; failure
         * means a thief moved top, and we look again. */
        if (atomic_compare_exchange_weak_explicit(&d->ts, &ts, want, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            if (n == 1) {
                d->top_seen = s; /* taken from the top, as a thief would */
            } else {
                d->split = t + n / 2;
                d->bottom = s - 1; /* s - 1 >= the new split: now private */
            }
            weft__debug_yield();
            return atomic_load_explicit(&d->obuf->slot[(s - 1) & d->obuf->mask],
                                        memory_order_relaxed);
        }
    }
}

weft__job *weft__deque_pop_cold(weft__deque *d) {
    uint32_t b = d->bottom;
    if (b == d->split)
        return reclaim(d);
    /* A thief asked for work: share all but the job we take now, and leave
     * the count for the caller to announce (the thief may be asleep by now). */
    atomic_store_explicit(&d->movesplit, 0, memory_order_relaxed);
    weft__debug_yield();
    if (b - d->split >= 2) {
        d->unannounced += b - 1 - d->split;
        move_split(d, b - 1);
    }
    d->bottom = b - 1;
    /* Relaxed: a private slot, written by this thread. */
    return atomic_load_explicit(&d->obuf->slot[(b - 1) & d->obuf->mask], memory_order_relaxed);
}

weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job) {
    /* Acquire: pairs with the owner's release CAS that published the job. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_acquire);
    uint32_t t = weft__deque_top(ts), s = weft__deque_split(ts);
    weft__debug_yield();
    if (t == s) {
        /* Relaxed: a request, not a promise; checked before written so the
         * line stays shared while thieves keep asking. */
        if (!atomic_load_explicit(&d->movesplit, memory_order_relaxed))
            atomic_store_explicit(&d->movesplit, 1, memory_order_relaxed);
        return WEFT__STEAL_EMPTY;
    }
    weft__debug_yield();
    /* Acquire: pairs with the release store of a grown buffer. */
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_acquire);
    weft__job *j = atomic_load_explicit(&buf->slot[t & buf->mask], memory_order_relaxed);
    weft__debug_yield();
    /* Acq_rel: claims index t; release lets the owner's acquire loads of ts
     * know we are done with the slot (invariant 3). Failure: another thief or
     * the owner changed ts, and what we read may be stale. */
    if (!atomic_compare_exchange_strong_explicit(&d->ts, &ts, ts_pack(t + 1, s),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    weft__debug_yield();
    *job = j;
    return WEFT__STEAL_OK;
}
