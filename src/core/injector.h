/* SPDX-License-Identifier: MIT */
/* The injector: a FIFO for jobs submitted from outside the pool. */
#ifndef WEFT_INJECTOR_H
#define WEFT_INJECTOR_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "core/job.h"

typedef struct weft__injector {
    alignas(WEFT__CACHELINE) pthread_mutex_t lock;
    weft__job *head;         /* L */
    weft__job *tail;         /* L */
    _Atomic uint64_t length; /* A: written under L, read without it */
} weft__injector;

WEFT__HIDDEN void weft__injector_init(weft__injector *q);
WEFT__HIDDEN void weft__injector_destroy(weft__injector *q);
/* Any thread. Links the jobs first..last (already chained through next). */
WEFT__HIDDEN void weft__injector_push(weft__injector *q, weft__job *first, weft__job *last,
                                      uint64_t count);
/* Any thread. The oldest job, or NULL. */
WEFT__HIDDEN weft__job *weft__injector_pop(weft__injector *q);

/* Any thread. The sleep protocol's final check reads this after its seq-cst
 * fence; the push that it must not miss stored length before the pusher's
 * fence (docs/sleep.md). */
static inline bool weft__injector_is_empty(weft__injector *q) {
    /* Relaxed: ordered by the seq-cst fences of the sleep protocol; a pop
     * that follows takes the lock, which gives the acquire. */
    return atomic_load_explicit(&q->length, memory_order_relaxed) == 0;
}

#endif
