/* SPDX-License-Identifier: MIT */
/* Waiting for a quiet pool by what its workers are doing, not by how long
 * nothing changed: a loaded machine may keep a worker off its CPU for longer
 * than any quiet interval a test could afford, and a test that took "nothing
 * changed for 20 ms" for "everybody sleeps" then compares counters of a pool
 * that was not quiet yet. Each wait has a generous deadline: a worker that
 * never gets there is a lost wake-up or a hang, and fails. */
#ifndef WEFT_TEST_ASLEEP_H
#define WEFT_TEST_ASLEEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "core/current.h"

/* Workers counted asleep now (targeted protocol). */
static inline unsigned sleeping(weft_pool *pool) {
    return weft__counters_sleeping(weft__sleep_debug_counters(&pool->sleep));
}

/* Targeted protocol: has every worker passed its final check and blocked
 * (slot word ASLEEP, stored in block()), and do the counters say so too
 * (inactive == sleeping == threads)? A worker that was woken but has not run
 * yet has its slot word AWAKE, so this is false until it blocked again. */
static inline bool all_blocked(weft_pool *pool) {
    uint64_t c = weft__sleep_debug_counters(&pool->sleep);
    if (weft__counters_sleeping(c) != pool->threads)
        return false;
    for (unsigned i = 0; i < pool->threads; i++)
        if (atomic_load(&pool->sleep.slots[i].word) != WEFT__SLOT_ASLEEP)
            return false;
    CHECK_EQ(weft__counters_inactive(c), pool->threads);
    return true;
}

static inline void wait_all_blocked(weft_pool *pool) {
    CHECK(!pool->sleep.wake_all); /* wake-all keeps no slot words: wait_woken_and_asleep */
    double deadline = check_now() + 10;
    while (!all_blocked(pool)) {
        CHECK(check_now() < deadline);
        check_sleep_us(200);
    }
}

/* Either protocol, from the workers' own counters: a worker is inside a
 * sleep when it has blocked once more than it was woken (it counts the sleep
 * before it blocks and the wake-up once it runs again). Worker i's wake-ups
 * so far go to woken[i] (NULL: not wanted). */
static inline bool in_a_sleep(const weft__worker *w, uint64_t *wakeups) {
    uint64_t a = weft__stat_get(&w->stats.wakeups);
    uint64_t s = weft__stat_get(&w->stats.sleeps);
    uint64_t b = weft__stat_get(&w->stats.wakeups);
    if (wakeups)
        *wakeups = b;
    return a == b && s == b + 1;
}

/* Every worker inside a sleep: at pool start-up (nobody has been woken
 * yet), this is every worker blocked, under either protocol. */
static inline void wait_all_in_a_sleep(weft_pool *pool) {
    double deadline = check_now() + 10;
    for (unsigned i = 0; i < pool->threads; i++)
        while (!in_a_sleep(&pool->workers[i], NULL)) {
            CHECK(check_now() < deadline);
            check_sleep_us(200);
        }
}

/* Each worker has been woken since its count was woken[i] (the property a
 * wake-all tickle must have when every worker slept) and is inside a sleep
 * again; woken[i] becomes its new count. A worker that a later wake-up got
 * to before it ran again counts that wake-up as the awaited one. */
static inline void wait_woken_and_asleep(weft_pool *pool, uint64_t *woken) {
    double deadline = check_now() + 10;
    for (unsigned i = 0; i < pool->threads; i++) {
        uint64_t now;
        while (!in_a_sleep(&pool->workers[i], &now) || now == woken[i]) {
            CHECK(check_now() < deadline); /* a sleeper the wake-up missed */
            check_sleep_us(200);
        }
        woken[i] = now;
    }
}

static inline void note_wakeups(weft_pool *pool, uint64_t *woken) {
    for (unsigned i = 0; i < pool->threads; i++)
        woken[i] = weft__stat_get(&pool->workers[i].stats.wakeups);
}

#endif
