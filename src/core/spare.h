/* SPDX-License-Identifier: MIT */
/* Spare threads: a pool's extra workers while its jobs block outside weft
 * (weft_blocking_begin, weft_task_block). See spare.c. */
#ifndef WEFT_SPARE_H
#define WEFT_SPARE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"

typedef struct weft_pool weft_pool;
typedef struct weft__worker weft__worker;

typedef struct weft__spares {
    pthread_mutex_t lock;
    unsigned max;          /* I: spare slots, after the callers' */
    unsigned first;        /* I: slot index of spare 0 */
    _Atomic unsigned seen; /* A: spares started so far, a prefix (thieves read it) */
    unsigned blocked;      /* L: the pool's threads inside a blocking region */
    unsigned active;       /* L: spares called and not released */
    bool closing;          /* L: weft_pool_destroy stops the spares */
    bool hooks;            /* I: spares run on_start and on_exit (asked for explicitly) */
} weft__spares;

/* Spare states (weft__worker.spare, its futex word). */
enum {
    WEFT__SPARE_PARKED = 0,
    WEFT__SPARE_CALLED,
    WEFT__SPARE_RELEASED,
    WEFT__SPARE_EXIT, /* told to exit (destroy) */
    WEFT__SPARE_GONE  /* exited after a long park; its thread not joined yet */
};

/* How long a spare stays parked before its thread exits: a pool whose jobs
 * blocked once in a while keeps no threads for it, and one whose jobs block
 * often does not create one per block. Tokio keeps its blocking threads
 * 10 s alike. */
#define WEFT__SPARE_IDLE_NS ((uint64_t)10000000000)

/* WEFT__SPARE_IDLE_NS, but for the tests, which shorten it. */
WEFT__HIDDEN extern uint64_t weft__spare_idle_ns;
/* For the tests: waits of parked spares so far (a parked spare waits once
 * an idle period at most, unless called or woken). */
WEFT__HIDDEN extern _Atomic uint64_t weft__spare_park_waits;

WEFT__HIDDEN void weft__spares_init(weft__spares *s, unsigned first, unsigned max, bool hooks);
WEFT__HIDDEN void weft__spares_destroy(weft__spares *s);

/* A thread of pool enters / leaves its outermost blocking region: count it,
 * and call a spare / release one, so that as many spares run as threads
 * block (while spares are left). */
WEFT__HIDDEN void weft__spares_block(weft_pool *pool);
WEFT__HIDDEN void weft__spares_unblock(weft_pool *pool);

/* weft_pool_destroy, after the workers stopped: stop the spares and join
 * their threads. */
WEFT__HIDDEN void weft__spares_stop(weft_pool *pool);

/* Is slot index a spare's? */
static inline bool weft__spares_has(const weft__spares *s, unsigned index) {
    return index >= s->first;
}

#endif
