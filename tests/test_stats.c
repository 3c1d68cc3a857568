/* SPDX-License-Identifier: MIT */
/* weft_pool_stats: the counters add up, and they show the difference between
 * the protocols: targeted wake-ups are never futile for sporadic jobs, while
 * wake-all wakes every sleeper for each one. */
#include <stdatomic.h>

#include "check.h"
#include "jobs.h"
#include "pool.h"
#include "weft.h"

static void set_flag(void *arg) {
    atomic_store((_Atomic int *)arg, 1);
}

static void wait_flag(_Atomic int *flag) {
    double deadline = check_now() + 5;
    while (!atomic_load(flag)) {
        CHECK(check_now() < deadline);
        check_sleep_us(50);
    }
}

/* Until every worker has blocked at least `sleeps` times in total and the
 * pool is quiet: sleeps stop changing. */
static weft_stats settle(weft_pool *pool) {
    weft_stats a, b;
    weft_pool_stats(pool, &b);
    do {
        a = b;
        check_sleep_us(30000);
        weft_pool_stats(pool, &b);
    } while (a.sleeps != b.sleeps || a.wakeups != b.wakeups);
    return b;
}

static weft_stats sporadic(weft_wake wake, int jobs) {
    weft_config c = {.threads = 8, .wake = wake, .leave = WEFT_LEAVE_FAST};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    weft_stats before = settle(pool);
    for (int i = 0; i < jobs; i++) {
        _Atomic int flag = 0;
        CHECK_EQ(weft_spawn(pool, set_flag, &flag), 0);
        wait_flag(&flag);
        settle(pool);
    }
    weft_stats after = settle(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    after.jobs -= before.jobs;
    after.injected -= before.injected;
    after.wakeups -= before.wakeups;
    after.futile_wakeups -= before.futile_wakeups;
    return after;
}

TEST(targeted_wakeups_are_not_futile) {
    weft_stats s = sporadic(WEFT_WAKE_TARGETED, 10);
    CHECK_EQ(s.jobs, 10);
    CHECK_EQ(s.injected, 10);
    CHECK(s.wakeups >= 10);        /* every job found every worker asleep */
    CHECK_EQ(s.futile_wakeups, 0); /* and woke exactly the one that ran it */
}

TEST(wake_all_wakes_everybody) {
    weft_stats s = sporadic(WEFT_WAKE_ALL, 10);
    CHECK_EQ(s.jobs, 10);
    CHECK(s.wakeups >= 10 * 7);        /* each job wakes all eight sleepers */
    CHECK(s.futile_wakeups >= 10 * 6); /* and all but one go back to sleep */
}

TEST(counters_add_up) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 3}), 0);
    fib f = {20, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 6765);
    weft_stats s = settle(pool);
    /* fib(20) makes 10945 joins: each second half ran once, plus the root. */
    CHECK_EQ(s.jobs, 10945 + 1);
    CHECK_EQ(s.injected, 1);
    CHECK(s.steals <= s.jobs);
    CHECK(s.sleeps >= 3); /* everybody is asleep now */
    CHECK(s.busy_seconds >= 0 && s.search_seconds >= 0);
    CHECK(s.sleep_seconds > s.busy_seconds); /* sleeps in progress count too */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    /* NULL outside every pool: the default pool, which took this job from
     * its injector (the latch that weft_run waits on publishes the count). */
    fib g = {10, 0};
    weft_run(NULL, fib_job, &g);
    CHECK_EQ(g.r, 55);
    weft_stats d;
    weft_pool_stats(NULL, &d);
    CHECK(d.injected >= 1 && d.jobs >= 1);
}
