/* SPDX-License-Identifier: MIT */
/* The pool's list of broadcasts in flight, and each worker's catching up with
 * it (weft_broadcast is broadcast.c's). See broadcast_list.c. */
#ifndef WEFT_BROADCAST_LIST_H
#define WEFT_BROADCAST_LIST_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "idle/latch.h"

/* One broadcast: lives in its caller's frame until every worker ran it. */
typedef struct weft__broadcast {
    void (*fn)(unsigned index, void *arg);
    void *arg;
    uint64_t seq;                 /* I: set under the lock before it is visible */
    weft__count_latch done;       /* a count per worker */
    struct weft__broadcast *next; /* L */
} weft__broadcast;

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

/* Number d and append it; the caller then makes the PushFence and wakes the
 * sleepers (broadcast.c). */
WEFT__HIDDEN void weft__broadcast_post(weft__broadcasts *b, weft__broadcast *d);
/* Remove d, which every worker ran. */
WEFT__HIDDEN void weft__broadcast_unlink(weft__broadcasts *b, weft__broadcast *d);

/* Worker only: run every broadcast newer than *seen, in order; update *seen. */
WEFT__HIDDEN void weft__broadcast_run_pending(weft__broadcasts *b, unsigned index, uint64_t *seen);

#endif
