/* SPDX-License-Identifier: MIT */
/* The work-stealing deque: a split deque. See deque.c for the protocol. */
#ifndef WEFT_DEQUE_H
#define WEFT_DEQUE_H

#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "debug_yield.h"
#include "job.h"

typedef struct weft__deque_buf {
    uint32_t mask;                   /* capacity - 1; capacity a power of two <= 2^30 */
    struct weft__deque_buf *retired; /* O: older buffers, freed with the deque */
    _Atomic(weft__job *) slot[];     /* A: relaxed; published through ts */
} weft__deque_buf;

typedef struct weft__deque {
    /* Shared: thieves CAS ts and set movesplit; the owner moves split. */
    alignas(WEFT__CACHELINE) _Atomic uint64_t ts; /* A: split (high 32) | top (low 32) */
    _Atomic uint32_t movesplit;                   /* A: a thief found nothing public */
    _Atomic(weft__deque_buf *) buf;               /* A: owner stores, thieves load */
    /* Owner only. */
    alignas(WEFT__CACHELINE) uint32_t bottom; /* O: next index to push */
    uint32_t split;                           /* O: ts's split; only the owner moves it */
    uint32_t top_seen;                        /* O: a lower bound of ts's top */
    weft__deque_buf *obuf;                    /* O: buf, without the atomic load */
    uint32_t unannounced; /* O: jobs a pop shared on a thief's request, to announce */
} weft__deque;

static_assert(offsetof(weft__deque, bottom) - offsetof(weft__deque, ts) >= WEFT__CACHELINE,
              "the owner's fields share a prefetch pair with the thieves' word");

typedef enum { WEFT__STEAL_EMPTY, WEFT__STEAL_RETRY, WEFT__STEAL_OK } weft__steal_result;

WEFT__HIDDEN int weft__deque_init(weft__deque *d, size_t capacity);
WEFT__HIDDEN void weft__deque_destroy(weft__deque *d);

/* Any thread. The oldest public job in *job on WEFT__STEAL_OK; on
 * WEFT__STEAL_EMPTY the owner is asked to share more. */
WEFT__HIDDEN weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job);

/* Owner only: make every private job public (stealable); returns how many. */
WEFT__HIDDEN WEFT__COLD unsigned weft__deque_share(weft__deque *d);

/* Owner only, cold paths of push and pop. */
WEFT__HIDDEN WEFT__COLD int weft__deque_push_cold(weft__deque *d, weft__job *job);
WEFT__HIDDEN WEFT__COLD weft__job *weft__deque_pop_cold(weft__deque *d);

static inline uint32_t weft__deque_top(uint64_t ts) {
    return (uint32_t)ts;
}

static inline uint32_t weft__deque_split(uint64_t ts) {
    return (uint32_t)(ts >> 32);
}

/* Owner only: push a private job. 0, or ENOMEM when the deque is full and
 * cannot grow (nothing is lost). No atomic read-modify-write, no fence:
 * thieves never look at private jobs. */
static inline int weft__deque_push(weft__deque *d, weft__job *job) {
    uint32_t b = d->bottom;
    weft__deque_buf *buf = d->obuf;
    if (WEFT__UNLIKELY(b - d->top_seen > buf->mask))
        return weft__deque_push_cold(d, job);
    weft__debug_yield();
    /* Relaxed: published to thieves only by a later release CAS of ts. */
    atomic_store_explicit(&buf->slot[b & buf->mask], job, memory_order_relaxed);
    d->bottom = b + 1;
    return 0;
}

/* Owner only: the newest job, or NULL. The common case (a private job, no
 * thief asking for more) is plain loads and stores. */
static inline weft__job *weft__deque_pop(weft__deque *d) {
    uint32_t b = d->bottom;
    weft__debug_yield();
    /* Relaxed: a hint from thieves; honoured on the cold path. */
    if (WEFT__UNLIKELY(b == d->split ||
                       atomic_load_explicit(&d->movesplit, memory_order_relaxed) != 0))
        return weft__deque_pop_cold(d);
    d->bottom = b - 1;
    weft__debug_yield();
    return atomic_load_explicit(&d->obuf->slot[(b - 1) & d->obuf->mask], memory_order_relaxed);
}

/* Owner only: are there private jobs? */
static inline bool weft__deque_has_private(const weft__deque *d) {
    return d->bottom != d->split;
}

/* Any thread; a hint only (stale by the time it is used): nothing public. */
static inline bool weft__deque_public_empty(weft__deque *d) {
    /* Relaxed: a heuristic for wake-up decisions; steal confirms. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    return weft__deque_top(ts) == weft__deque_split(ts);
}

/* Owner only, after a push: is the job just pushed the deque's only one? */
static inline bool weft__deque_only_job(weft__deque *d) {
    return d->bottom - 1 == d->split && weft__deque_public_empty(d);
}

#endif
