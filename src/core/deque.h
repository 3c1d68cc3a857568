/* SPDX-License-Identifier: MIT */
/* The work-stealing deque: a split deque whose private jobs a starving thief
 * can still take. See deque.c for the protocol. */
#ifndef WEFT_DEQUE_H
#define WEFT_DEQUE_H

#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os/atomics.h"
#include "os/fence.h"
#include "core/job.h"

typedef struct weft__deque_buf {
    uint32_t mask;                   /* capacity - 1; capacity a power of two <= 2^30 */
    struct weft__deque_buf *retired; /* O: older buffers, freed with the deque */
    _Atomic(weft__job *) slot[];     /* A: relaxed; published through ts */
} weft__deque_buf;

typedef struct weft__deque {
    /* Shared: thieves CAS ts and set movesplit; the owner moves split. */
    alignas(WEFT__CACHELINE) _Atomic uint64_t ts; /* A: split (high 32) | top (low 32) */
    _Atomic uint32_t movesplit;                   /* A: a thief found nothing public */
    _Atomic uint32_t answers;                     /* A: requests the owner cleared (wraps) */
    _Atomic(weft__deque_buf *) buf;               /* A: owner stores, thieves load */
    /* The owner's line: thieves read bottom only to take a private job. */
    alignas(WEFT__CACHELINE) _Atomic uint32_t bottom; /* A: next index to push; owner stores */
    uint32_t split;        /* O: a lower bound of ts's split (forced steals raise ts's unseen) */
    uint32_t top_seen;     /* O: a lower bound of ts's top */
    weft__deque_buf *obuf; /* O: buf, without the atomic load */
    uint32_t unannounced;  /* O: jobs a pop shared on a thief's request, to announce */
} weft__deque;

static_assert(offsetof(weft__deque, bottom) - offsetof(weft__deque, ts) >= WEFT__CACHELINE,
              "the owner's fields share a prefetch pair with the thieves' word");

typedef enum { WEFT__STEAL_EMPTY, WEFT__STEAL_RETRY, WEFT__STEAL_OK } weft__steal_result;

WEFT__HIDDEN int weft__deque_init(weft__deque *d, size_t capacity);
WEFT__HIDDEN void weft__deque_destroy(weft__deque *d);

/* Any thread. The oldest public job in *job on WEFT__STEAL_OK; on
 * WEFT__STEAL_EMPTY the owner is asked to share more. */
WEFT__HIDDEN weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job);

/* Any thread, rarely: take the oldest private job, for a thief whose request
 * (movesplit) the owner has left unanswered. Costs a process-wide barrier
 * (fence.h). WEFT__STEAL_RETRY: public jobs appeared, the owner answered the
 * request, or another thief or the owner took the job; WEFT__STEAL_EMPTY:
 * nothing private, or no barrier here. On WEFT__STEAL_OK, *more tells whether private jobs
 * remain (the caller hands them over to a sleeper). */
WEFT__HIDDEN WEFT__COLD weft__steal_result weft__deque_steal_private(weft__deque *d,
                                                                     weft__job **job, bool *more);

/* Owner: count one answered request (deque.c, answer): its own, or a join
 * frame's published on request (frame.c), which ends spent sweeps alike. */
WEFT__HIDDEN void weft__deque_count_answer(weft__deque *d);

/* Any thread: how many raised requests the owner has cleared so far (it
 * wraps; only changes matter). A thief whose forced steal found nothing
 * relies on its request until the owner clears it (worker.c). Read after
 * the caller's SleepFence (deque.c, answer, says which fences order it);
 * acquire pairs with the count's release store. */
static inline uint32_t weft__deque_answers(weft__deque *d) {
    return atomic_load_explicit(&d->answers, memory_order_acquire);
}

/* Owner only: make every private job public (stealable); returns how many. */
WEFT__HIDDEN WEFT__COLD unsigned weft__deque_share(weft__deque *d);

/* Owner only, cold paths of push and pop. */
WEFT__HIDDEN WEFT__COLD int weft__deque_push_cold(weft__deque *d, weft__job *job);
WEFT__HIDDEN WEFT__COLD weft__job *weft__deque_pop_cold(weft__deque *d, uint32_t b, uint64_t ts);

static inline uint32_t weft__deque_top(uint64_t ts) {
    return (uint32_t)ts;
}

static inline uint32_t weft__deque_split(uint64_t ts) {
    return (uint32_t)(ts >> 32);
}

/* How many jobs lie in [from, to): 32-bit indices wrap, so as a signed
 * distance; negative while a pop has lowered bottom below split. */
static inline int32_t weft__deque_span(uint32_t from, uint32_t to) {
    return (int32_t)(to - from);
}

/* Owner: bottom, which only this thread stores. */
static inline uint32_t weft__deque_bottom(weft__deque *d) {
    return atomic_load_explicit(&d->bottom, memory_order_relaxed);
}

/* Owner only: push a private job. 0, or ENOMEM when the deque is full and
 * cannot grow (nothing is lost). No atomic read-modify-write, no fence. */
static inline int weft__deque_push(weft__deque *d, weft__job *job) {
    uint32_t b = weft__deque_bottom(d);
    weft__deque_buf *buf = d->obuf;
    if (WEFT__UNLIKELY(b - d->top_seen > buf->mask))
        return weft__deque_push_cold(d, job);
    weft__debug_yield();
    /* Relaxed: published with bottom below, or by a later release CAS of ts. */
    atomic_store_explicit(&buf->slot[b & buf->mask], job, memory_order_relaxed);
    /* Release: a thief taking a private job reads bottom (acquire) and then
     * the slot and the job. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return 0;
}

/* Owner only, right after a push: is the job just pushed the first private
 * one as far as the owner knows (it begins an episode, deque.c)? Forced
 * steals may have ended the previous episode unseen; deque.c argues why the
 * owner need not know. */
static inline bool weft__deque_first_private(weft__deque *d) {
    return weft__deque_bottom(d) - 1 == d->split;
}

/* Owner only, in the cold path of the push that began an episode, after its
 * fence: ts as it is now, noting its split. */
static inline uint64_t weft__deque_episode_ts(weft__deque *d) {
    /* Relaxed: ordered after the push by the caller's seq-cst fence. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    d->split = weft__deque_split(ts);
    return ts;
}

/* Owner only: the newest job, or NULL. The common case (another private job
 * below it, no thief asking for more) is plain loads and stores and a
 * compiler barrier: bottom is lowered first, then ts read, so a thief taking
 * the oldest private job and this pop cannot both take one (deque.c). */
static inline weft__job *weft__deque_pop(weft__deque *d) {
    uint32_t b = weft__deque_bottom(d) - 1;
    weft__debug_yield();
    /* Relaxed: ordered before the load of ts by the light fence, against a
     * thief's heavy one. */
    atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
    weft__fence_light();
    weft__debug_yield();
    /* Relaxed: ts decides only whether index b is ours, by the fences; the
     * movesplit request is a hint, honoured on the cold path. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    if (WEFT__UNLIKELY(weft__deque_span(weft__deque_split(ts), b) <= 0 ||
                       atomic_load_explicit(&d->movesplit, memory_order_relaxed) != 0))
        return weft__deque_pop_cold(d, b, ts);
    weft__debug_yield();
    return atomic_load_explicit(&d->obuf->slot[b & d->obuf->mask], memory_order_relaxed);
}

/* Any thread; a hint only (stale by the time it is used): how many private
 * jobs the deque seems to hold. */
static inline int32_t weft__deque_private_count(weft__deque *d) {
    /* Relaxed: a hint for a sleeper's look after its SleepFence
     * (private_work.c); deque.c, "the episode", argues what it can miss. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    return weft__deque_span(weft__deque_split(ts),
                            atomic_load_explicit(&d->bottom, memory_order_relaxed));
}

/* Any thread; a hint only (stale by the time it is used): nothing public. */
static inline bool weft__deque_public_empty(weft__deque *d) {
    /* Relaxed: a heuristic for wake-up decisions; steal confirms. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    return weft__deque_top(ts) == weft__deque_split(ts);
}

#endif
