/* SPDX-License-Identifier: MIT */
/* Priorities: high-priority jobs run before queued normal ones, priority is
 * inherited by forked work, explicit priorities, and exactly-once under an
 * oversubscribed mixed load. */
#include <errno.h>
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "pool.h"
#include "weft.h"

static _Atomic int gate;
static _Atomic int order[64];
static _Atomic int next_slot;

static void blocker(void *arg) {
    (void)arg;
    while (!atomic_load(&gate))
        check_sleep_us(100);
}

static void record(void *arg) {
    atomic_store(&order[atomic_fetch_add(&next_slot, 1)], (int)(intptr_t)arg);
}

TEST(high_runs_before_queued_normal_jobs) {
    weft_pool *pool = make_pool(1); /* one worker: the order is exact */
    atomic_store(&gate, 0);
    atomic_store(&next_slot, 0);
    CHECK_EQ(weft_spawn(pool, blocker, NULL), 0);
    check_sleep_us(2000); /* the worker is inside blocker */
    for (intptr_t i = 1; i <= 10; i++)
        CHECK_EQ(weft_spawn(pool, record, (void *)i), 0);
    CHECK_EQ(weft_spawn_priority(pool, record, (void *)100, WEFT_PRIORITY_HIGH), 0);
    atomic_store(&gate, 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&next_slot), 11);
    CHECK_EQ(atomic_load(&order[0]), 100); /* the high job first */
    for (int i = 1; i <= 10; i++)
        CHECK_EQ(atomic_load(&order[i]), i); /* then the normal ones, FIFO */
}

static _Atomic int wrong_priority;

static void expect_high(void *arg) {
    (void)arg;
    weft__worker *w = weft__current_worker();
    if (!w || w->h.prio != WEFT_PRIORITY_HIGH)
        atomic_fetch_add(&wrong_priority, 1);
}

static void expect_high_range(size_t b, size_t e, void *arg) {
    (void)b, (void)e;
    expect_high(arg);
}

static void spawn_inherited(weft_scope *s, void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_scope_spawn(s, expect_high, NULL), 0);
}

static void high_tree(void *arg) {
    weft_pool *pool = arg;
    expect_high(NULL);
    weft_join(expect_high, NULL, expect_high, NULL);
    weft_for(pool, 0, 10000, 10, expect_high_range, NULL);
    weft_scope_run(pool, spawn_inherited, NULL);
}

TEST(forked_work_inherits_the_priority) {
    weft_pool *pool = make_pool(3);
    atomic_store(&wrong_priority, 0);
    for (int i = 0; i < scaled(50); i++)
        weft_run_priority(pool, high_tree, pool, WEFT_PRIORITY_HIGH);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* (spawns inside finished before) */
    CHECK_EQ(atomic_load(&wrong_priority), 0);
}

static void expect_normal(void *arg) {
    (void)arg;
    weft__worker *w = weft__current_worker();
    if (!w || w->h.prio != WEFT_PRIORITY_NORMAL)
        atomic_fetch_add(&wrong_priority, 1);
}

static void explicit_in_scope(weft_scope *s, void *arg) {
    (void)arg;
    CHECK_EQ(weft_scope_spawn_priority(s, expect_high, NULL, WEFT_PRIORITY_HIGH), 0);
    CHECK_EQ(weft_scope_spawn_priority(s, expect_normal, NULL, WEFT_PRIORITY_NORMAL), 0);
    CHECK_EQ(weft_scope_spawn_priority(s, expect_normal, NULL, (weft_priority)5), EINVAL);
}

TEST(explicit_priorities_and_bad_input) {
    weft_pool *pool = make_pool(2);
    atomic_store(&wrong_priority, 0);
    weft_scope_run(pool, explicit_in_scope, NULL);
    weft_run(pool, expect_normal, NULL);
    CHECK_EQ(weft_spawn_priority(pool, expect_high, NULL, WEFT_PRIORITY_HIGH), 0);
    CHECK_EQ(weft_spawn_priority(pool, expect_high, NULL, (weft_priority)7), EINVAL);
    CHECK_EQ(weft_spawn_priority(pool, NULL, NULL, WEFT_PRIORITY_HIGH), EINVAL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&wrong_priority), 0);
}

static _Atomic long ran;

static void count(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static void mixed(weft_scope *s, void *arg) {
    (void)arg;
    for (int i = 0; i < scaled(20000); i++)
        CHECK_EQ(weft_scope_spawn_priority(s, count, NULL, (weft_priority)(i % 3 == 0)), 0);
}

TEST(mixed_priorities_on_an_oversubscribed_pool) {
    for (int w = 0; w < 2; w++) {
        weft_pool *pool;
        CHECK_EQ(
            weft_pool_create(&pool, &(weft_config){.threads = 32,
                                                   .wake = w ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED}),
            0);
        atomic_store(&ran, 0);
        weft_scope_run(pool, mixed, NULL);
        CHECK_EQ(atomic_load(&ran), scaled(20000));
        for (int i = 0; i < 500; i++)
            CHECK_EQ(weft_spawn_priority(pool, count, NULL, (weft_priority)(i & 1)), 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&ran), scaled(20000) + 500);
    }
}

/* A job that sits on a busy worker's deque must be stolen, whatever its
 * priority: the worker here waits for it in a leaf that neither pushes nor
 * pops. Fails without sharing a deque's only job (the job stays private when
 * the thief went idle after the push) and without noting high work
 * (weft__pool_note_high: thieves skip the high deques until then). The wait is
 * bounded: a miss fails, it does not hang. */
static _Atomic int stolen;

static void mark_stolen(void *arg) {
    (void)arg;
    atomic_store(&stolen, 1);
}

static void wait_until_stolen(void *arg) {
    (void)arg;
    for (int i = 0; i < 100000 && !atomic_load(&stolen); i++)
        check_sleep_us(100);
    CHECK(atomic_load(&stolen)); /* set by another worker while this one waited */
}

static void spawn_high_then_wait(weft_scope *s, void *arg) {
    CHECK_EQ(weft_scope_spawn_priority(s, mark_stolen, NULL, WEFT_PRIORITY_HIGH), 0);
    wait_until_stolen(arg);
}

static void explicit_high(void *pool) {
    weft_scope_run(pool, spawn_high_then_wait, NULL);
}

static void fork_then_wait(void *arg) {
    weft_join(wait_until_stolen, arg, mark_stolen, arg); /* at the running priority */
}

TEST(a_busy_workers_only_job_is_stolen) {
    /* Fresh pools, so no high work is noted yet; repeated, since the
     * thief's timing decides whether the push saw it idle. The busy thread
     * is a worker (the caller only waits) or the outside caller itself, in
     * its caller slot. */
    for (int round = 0; round < 20; round++) {
        /* A high spawn from a normal job, a fork in a high job, a plain fork. */
        weft_fn *paths[] = {explicit_high, fork_then_wait, fork_then_wait};
        for (int i = 0; i < 3; i++) {
            weft_pool *pool = round % 2 ? make_pool(2) : make_waiting_pool(2);
            atomic_store(&stolen, 0);
            weft_run_priority(pool, paths[i], pool, (weft_priority)(i == 1));
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
    }
}
