/* SPDX-License-Identifier: MIT */
/* Jobs that keep a pool's workers busy until the test says stop: for tests
 * whose premise is that no other worker will ever come free (a waiting
 * thread must then run what it owns itself). A pool that runs them should
 * be outside the CPU budget (weft_config.outside_budget): they hold their
 * slots, which a second pool (the default) makes binding. */
#ifndef WEFT_TEST_SPINNERS_H
#define WEFT_TEST_SPINNERS_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "weft.h"

static _Atomic bool spinners_stop;
static _Atomic unsigned spinners_started;

static inline void spin_until_stopped(void *arg) {
    (void)arg;
    atomic_fetch_add(&spinners_started, 1);
    while (!atomic_load(&spinners_stop))
        sched_yield();
}

/* Detach n spinners into pool and return once every one runs. */
static inline void spinners_start(weft_pool *pool, unsigned n) {
    atomic_store(&spinners_stop, false);
    atomic_store(&spinners_started, 0);
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ(weft_spawn(pool, spin_until_stopped, NULL), 0);
    while (atomic_load(&spinners_started) < n)
        sched_yield();
}

/* Let them return (the pool's destroy waits for them). */
static inline void spinners_stop_all(void) {
    atomic_store(&spinners_stop, true);
}

#endif
