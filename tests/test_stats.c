/* SPDX-License-Identifier: MIT */
/* weft_pool_stats: the counters add up, and they show the difference between
 * the protocols: targeted wake-ups are never futile for sporadic jobs, while
 * wake-all wakes every sleeper for each one. */
#include <stdatomic.h>

#include "asleep.h"
#include "check.h"
#include "jobs.h"
#include "core/current.h"
#include "pools.h"
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

/* Until the pool's counters stop changing (a sleep counted a moment after
 * the worker blocked, and what it counts as futile). Only after a wait for
 * the state itself (asleep.h): "nothing changed for 30 ms" alone also holds
 * while a worker on its way to sleep is kept off its CPU for 30 ms. */
static weft_stats settle(weft_pool *pool) {
    weft_stats a, b;
    weft_pool_stats(pool, &b);
    do {
        a = b;
        check_sleep_us(30000);
        weft_pool_stats(pool, &b);
    } while (a.sleeps != b.sleeps || a.wakeups != b.wakeups ||
             a.futile_wakeups != b.futile_wakeups);
    return b;
}

/* Sporadic jobs, each posted when every worker sleeps. Targeted: each wakes
 * one sleeper, and the pool is quiet again once every worker has blocked.
 * Wake-all: each wakes every sleeper, and the pool is quiet again once every
 * worker has been woken and sleeps again (a sleeper it missed fails there). */
static weft_stats sporadic(weft_wake wake, int jobs) {
    enum { THREADS = 8 };
    weft_config c = {.threads = THREADS, .wake = wake, .leave = WEFT_LEAVE_FAST};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    uint64_t woken[THREADS];
    if (wake == WEFT_WAKE_ALL)
        wait_all_in_a_sleep(pool); /* nobody was woken yet: everybody blocked */
    else
        wait_all_blocked(pool);
    weft_stats before = settle(pool);
    note_wakeups(pool, woken);
    for (int i = 0; i < jobs; i++) {
        _Atomic int flag = 0;
        CHECK_EQ(weft_spawn(pool, set_flag, &flag), 0);
        wait_flag(&flag);
        if (wake == WEFT_WAKE_ALL)
            wait_woken_and_asleep(pool, woken);
        else
            wait_all_blocked(pool);
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

/* A join's second half that its own thread runs after the first is a call,
 * not a job (weft_stats.jobs): on a pool of one worker (the caller only
 * waits) fib(20) is the root job and its 10945 inline halves, of which only
 * frames published when nothing else was public ran as jobs. */
/* fib(20) from outside on a new pool of `threads` workers whose caller
 * only waits (every job runs on a worker). */
static weft_pool *fib20_on_workers(unsigned threads) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads, .callers_wait = true}), 0);
    fib f = {20, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 6765);
    return pool;
}

TEST(inline_halves_are_not_jobs) {
    weft_pool *pool = fib20_on_workers(1);
    weft_stats s;
    weft_pool_stats(pool, &s);
    /* 11 here: frames published while nothing else was public. The bound
     * only has to tell that from 10946, every half counted. */
    CHECK(s.jobs >= 1 && s.jobs <= 100);
    CHECK_EQ(s.steals, 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(counters_add_up) {
    weft_pool *pool = fib20_on_workers(3);
    wait_all_blocked(pool);
    weft_stats s = settle(pool);
    /* fib(20) makes 10945 joins. The root is a job, and so is each second
     * half another worker took; one run inline after its first half is a
     * call, not counted. */
    CHECK(s.jobs >= 1 && s.jobs <= 10945 + 1);
    CHECK_EQ(s.injected, 1);
    CHECK(s.steals <= s.jobs);
    CHECK(s.sleeps >= 3); /* everybody is asleep now */
    CHECK(s.busy_seconds >= 0 && s.search_seconds >= 0);
    /* Sleeps in progress count too: while everybody sleeps, the sleep time
     * grows and the busy time does not, so the first overtakes the second,
     * however long a loaded machine made fib(20) (busy time is wall time).
     * Were they not counted, busy time (life less search and sleep) would
     * grow instead, and the deadline fails. */
    double deadline = check_now() + 60;
    while (weft_pool_stats(pool, &s), !(s.sleep_seconds > s.busy_seconds)) {
        CHECK(check_now() < deadline);
        check_sleep_us(1000);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
    /* NULL outside every pool: the default pool, whose worker takes this
     * detached job from its injector (counted once it has run). */
    CHECK_EQ(weft_spawn(NULL, nothing, NULL), 0);
    weft_stats d;
    deadline = check_now() + 60;
    while (weft_pool_stats(NULL, &d), !(d.injected >= 1 && d.jobs >= 1)) {
        CHECK(check_now() < deadline);
        check_sleep_us(1000);
    }
}

/* Stats during destroy, from the pool's own threads, which destroy waits
 * for: a detached job it drains and every worker's on_exit (weft.h: other
 * threads must not overlap destroy). Under TSan: no race with the stop. */
static weft_pool *stats_pool;
static _Atomic unsigned stats_read;

static void read_own_stats(void *arg) {
    (void)arg;
    weft_stats st;
    weft_pool_stats(NULL, &st); /* the current pool */
    atomic_fetch_add(&stats_read, 1);
}

static void read_stats_on_exit(unsigned worker, void *user) {
    (void)worker;
    weft_stats st;
    weft_pool_stats(*(weft_pool **)user, &st);
    atomic_fetch_add(&stats_read, 1);
}

TEST(stats_from_the_pools_own_threads_during_destroy) {
    for (int round = 0; round < scaled(20); round++) {
        atomic_store(&stats_read, 0);
        weft_config c = {.threads = 3, .on_exit = read_stats_on_exit, .user = &stats_pool};
        CHECK_EQ(weft_pool_create(&stats_pool, &c), 0);
        for (int i = 0; i < 4; i++)
            CHECK_EQ(weft_spawn(stats_pool, read_own_stats, NULL), 0);
        CHECK_EQ(weft_pool_destroy(stats_pool), 0); /* drains the jobs, runs on_exit */
        CHECK_EQ(atomic_load(&stats_read), 4 + 3);
    }
}

/* A loop of exactly PIECES pieces (grain g > 0 over PIECES * g indices:
 * PIECES - 1 joins, whose second halves are jobs where another thread took
 * them) whose pieces each note the thread they ran on, by
 * weft_thread_index(). */
enum { PIECES = 64, GRAIN = 16 };

typedef struct on_threads {
    _Atomic unsigned pieces;
    _Atomic unsigned off_workers; /* pieces run on a context or caller */
    unsigned workers;
} on_threads;

static void note_piece(size_t begin, size_t end, void *arg) {
    on_threads *o = arg;
    CHECK_EQ(end - begin, GRAIN);
    atomic_fetch_add(&o->pieces, 1);
    if (weft_thread_index() >= (int)o->workers)
        atomic_fetch_add(&o->off_workers, 1);
    check_sleep_us(200); /* long enough for the workers to take some */
}

static on_threads loop_of_pieces(weft_pool *pool) {
    on_threads o = {.workers = weft_pool_threads(pool)};
    weft_for(pool, 0, PIECES * GRAIN, GRAIN, note_piece, &o);
    CHECK_EQ(atomic_load(&o.pieces), PIECES);
    CHECK(atomic_load(&o.off_workers) >= 1); /* the caller's first leaf, at least */
    return o;
}

/* The caller takes part (a caller slot): what it runs counts as the workers'
 * jobs do; caller_jobs is its share of them. Every piece a worker ran came
 * to it as a job (workers start nothing of their own). */
TEST(callers_jobs_are_counted) {
    weft_pool *pool = make_pool(2);
    fib f = {20, 0};
    weft_run(pool, fib_job, &f); /* fib(20): 10945 joins, plus the root */
    CHECK_EQ(f.r, 6765);
    weft_stats s;
    weft_pool_stats(pool, &s); /* exact: every job it counts ended before weft_run returned */
    CHECK(s.jobs >= 1 && s.jobs <= 10945 + 1);
    CHECK(s.caller_jobs >= 1 && s.caller_jobs <= s.jobs); /* the root, at least */
    CHECK_EQ(s.injected, 0);                              /* nothing went through the injector */
    on_threads o = loop_of_pieces(pool);
    weft_stats t;
    weft_pool_stats(pool, &t);
    uint64_t jobs = t.jobs - s.jobs, caller = t.caller_jobs - s.caller_jobs;
    CHECK(jobs >= 1 && jobs <= PIECES); /* the loop's root, and second halves taken */
    CHECK(caller >= 1 && caller <= atomic_load(&o.off_workers));
    CHECK(jobs - caller >= (atomic_load(&o.off_workers) < PIECES ? 1u : 0u));
    CHECK(t.steals <= t.jobs);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A context's loop: its thread's own code calls weft_for, as a job of a
 * worker would, so the loop's root is no job of its own; a second half is
 * where another thread took it, and every piece a worker ran came so. */
TEST(contexts_jobs_are_counted) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    on_threads o = loop_of_pieces(pool);
    weft_stats s;
    weft_pool_stats(pool, &s);
    CHECK(s.jobs <= PIECES - 1);
    CHECK(s.caller_jobs <= atomic_load(&o.off_workers));
    CHECK(s.jobs - s.caller_jobs >= (atomic_load(&o.off_workers) < PIECES ? 1u : 0u));
    weft_context_release(ctx);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
