/* SPDX-License-Identifier: MIT */
/* weft_broadcast: run a function once on every worker. See broadcast.c. */
#ifndef WEFT_BROADCAST_H
#define WEFT_BROADCAST_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "latch.h"

typedef struct weft__broadcast weft__broadcast;

/* The pool's active broadcasts. */
typedef struct weft__broadcasts {
    alignas(WEFT__CACHELINE) _Atomic uint64_t seq; /* A: number of the latest broadcast */
    pthread_mutex_t lock;
    weft__broadcast *head; /* L: active broadcasts, oldest first */
    weft__broadcast *tail; /* L */
} weft__broadcasts;

WEFT__HIDDEN void weft__broadcasts_init(weft__broadcasts *b);
WEFT__HIDDEN void weft__broadcasts_destroy(weft__broadcasts *b);

/* Any thread; a hint: has a broadcast begun that a worker that has run all up
 * to `seen` has not run? Relaxed: the sleep protocol's fences order it where
 * it matters (the final check); elsewhere a stale answer only delays. */
static inline bool weft__broadcast_pending(weft__broadcasts *b, uint64_t seen) {
    return atomic_load_explicit(&b->seq, memory_order_relaxed) != seen;
}

/* weft_broadcast without its checks: pool is resolved, fn is set, and the
 * workers may already be past their drain (weft_pool_destroy's trace stop). */
WEFT__HIDDEN void weft__broadcast_run(struct weft_pool *pool, void (*fn)(unsigned index, void *arg),
                                      void *arg);

/* Worker only: run every broadcast newer than *seen, in order; update *seen. */
WEFT__HIDDEN void weft__broadcast_run_pending(weft__broadcasts *b, unsigned index, uint64_t *seen);

#endif
