/* SPDX-License-Identifier: MIT */
/* What most tests start from: a pool of some workers, a job that does
 * nothing, and one that uses the default pool. */
#ifndef WEFT_TEST_POOLS_H
#define WEFT_TEST_POOLS_H

#include <stdatomic.h>

#include "check.h"
#include "weft.h"

/* A pool of `threads` workers, every other setting the default; the test
 * fails if it cannot be created. */
static inline weft_pool *make_pool(unsigned threads) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads}), 0);
    return pool;
}

/* The same, but outside callers only wait (callers_wait): the root of a
 * weft_run from the test's thread runs on a worker, for tests whose premise
 * is what the pool's workers alone do (one worker busy with the body, every
 * job counted in weft_stats). */
static inline weft_pool *make_waiting_pool(unsigned threads) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads, .callers_wait = true}), 0);
    return pool;
}

static inline void nothing(void *arg) {
    (void)arg;
}

/* Use the default pool (its first use creates it) and count the use in
 * *(_Atomic int *)arg. */
static inline void use_the_default_pool(void *arg) {
    CHECK(weft_pool_default() != NULL);
    atomic_fetch_add((_Atomic int *)arg, 1);
}

#endif
