/* SPDX-License-Identifier: MIT */
/* A loop whose caller's leaf must hand on its rest (loop.c): the premise of
 * test_for's and test_reduce's tests of the steps. */
#ifndef WEFT_TEST_HANDED_ON_H
#define WEFT_TEST_HANDED_ON_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "asleep.h"
#include "check.h"

/* A leaf hands on the rest of its range when a thread asks for work. A pool
 * of one worker and the caller: the caller's first step waits until the
 * worker has taken what it could of the rest of the loop, run it, asked the
 * caller for more and blocked, so that what is left is the rest of the
 * caller's leaf (and whatever the caller did not let the worker take). Once
 * that step returns, the worker must get a part of it: each later step of
 * the caller waits for that, with a deadline. A leaf run in one call, or in
 * steps that do not look for requests, keeps its rest on the caller, and
 * the worker asleep. */
typedef struct asked {
    weft_pool *pool;
    pthread_t caller;
    size_t n;
    void (*first_step)(void); /* the caller, once the worker blocked (NULL: nothing) */
    _Atomic bool first_step_done;
    double deadline; /* for the worker's part of the rest: set with first_step_done */
    _Atomic size_t late_on_worker, visited;
} asked;

static inline void answer_when_asked(size_t begin, size_t end, void *arg) {
    asked *a = arg;
    bool on_caller = pthread_equal(pthread_self(), a->caller);
    if (on_caller && !atomic_load(&a->first_step_done)) {
        wait_all_blocked(a->pool);
        if (a->first_step)
            a->first_step();
        a->deadline = check_now() + 5;
        atomic_store(&a->first_step_done, true);
    } else if (on_caller) {
        while (atomic_load(&a->late_on_worker) == 0 && check_now() < a->deadline)
            sched_yield();
    } else if (atomic_load(&a->first_step_done)) {
        atomic_fetch_add(&a->late_on_worker, end - begin);
    }
    atomic_fetch_add(&a->visited, end - begin);
}

static inline void check_asked(const asked *a) {
    CHECK_EQ(atomic_load(&a->visited), a->n);
    CHECK(atomic_load(&a->late_on_worker) > 0);
    CHECK_EQ(weft_pool_destroy(a->pool), 0);
}

#endif
