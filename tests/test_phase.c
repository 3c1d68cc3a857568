/* SPDX-License-Identifier: MIT */
/* Parallel phases and leave policies (seed 004): the warm-up wakes sleepers,
 * a phase retains idle workers (within its bound), phases nest and may be
 * begun and ended concurrently, the last end with fast_leave drops CPU to ~0
 * at once and lasts until new work comes, destroy ends phases, and an end
 * without a begin is ignored in release builds. */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asleep.h"
#include "check.h"
#include "core/current.h"
#include "weft.h"

static void wait_sleeping(weft_pool *pool, unsigned n) {
    double deadline = check_now() + 10;
    while (sleeping(pool) != n) {
        CHECK(check_now() < deadline);
        check_sleep_us(100);
    }
}

static double cpu_seconds(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

static void nothing(void *arg) {
    (void)arg;
}

static weft_pool *make_pool(unsigned threads, weft_leave leave) {
    weft_pool *pool;
    /* Outside callers only wait: a weft_run from the test wakes a worker. */
    CHECK_EQ(weft_pool_create(
                 &pool, &(weft_config){.threads = threads, .leave = leave, .callers_wait = true}),
             0);
    return pool;
}

TEST(begin_wakes_sleepers_and_retains_them) {
    weft_pool *pool = make_pool(4, WEFT_LEAVE_FAST);
    wait_sleeping(pool, 4);
    weft_stats before, after;
    weft_pool_stats(pool, &before);
    double t0 = check_now();
    weft_phase_begin(pool);
    /* The warm-up woke everybody: each woken worker counts its wake-up once
     * it runs, however long the machine keeps it waiting. */
    double deadline = check_now() + 10;
    while (weft_pool_stats(pool, &after), after.wakeups - before.wakeups < 4)
        CHECK(check_now() < deadline);
    /* Retained: a fast-leave pool would be asleep again within microseconds;
     * inside the phase nobody sleeps before the 10 ms bound. Only checked if
     * this thread itself ran within that bound (a loaded machine may keep it
     * off a CPU for longer, and then the workers rightly slept). */
    check_sleep_us(1000);
    unsigned asleep = sleeping(pool);
    if (check_now() - t0 < 0.005)
        CHECK_EQ(asleep, 0);
    /* The bound: with no work at all they sleep anyway. */
    wait_sleeping(pool, 4);
    weft_phase_end(pool, false);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(phases_nest) {
    weft_pool *pool = make_pool(2, WEFT_LEAVE_FAST);
    weft_phase_begin(pool);
    weft_phase_begin(pool);
    weft_phase_end(pool, true); /* not the last: no fast leave yet */
    CHECK(weft__phase_active(&pool->phase));
    CHECK(!weft__phase_fast_leave(&pool->phase));
    weft_phase_end(pool, true);
    CHECK(!weft__phase_active(&pool->phase));
    CHECK(weft__phase_fast_leave(&pool->phase));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void *begin_end_many(void *arg) {
    weft_pool *pool = arg;
    for (int i = 0; i < scaled(2000); i++) {
        weft_phase_begin(pool);
        if (i % 3 == 0)
            weft_phase_begin(pool), weft_phase_end(pool, i % 2);
        weft_phase_end(pool, i % 5 == 0);
    }
    return NULL;
}

TEST(concurrent_begins_and_ends_balance) {
    weft_pool *pool = make_pool(3, WEFT_LEAVE_AUTOMATIC);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, begin_end_many, pool);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(atomic_load(&pool->phase.active), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* The warm-up reaches a worker that is on its way to sleep, not only the
 * counted sleepers: the hook begins a phase when the worker, sleepy, is about
 * to lock its slot, where the warm-up's pass finds it awake and moves on. The
 * worker must then search inside the phase and get sleepy again after the
 * phase's bound (a second pass through the hook); if it slept on the missed
 * warm-up, nothing wakes it and the second pass never comes. */
static _Atomic int warmup_armed, lock_passes;

static void begin_before_lock(void *arg, weft__debug_point p) {
    if (p != WEFT__DEBUG_BEFORE_LOCK)
        return;
    atomic_fetch_add(&lock_passes, 1);
    if (atomic_exchange(&warmup_armed, 0))
        weft_phase_begin((weft_pool *)arg);
}

TEST(warm_up_reaches_a_worker_falling_asleep) {
    weft_pool *pool = make_pool(1, WEFT_LEAVE_FAST);
    wait_sleeping(pool, 1);
    atomic_store(&lock_passes, 0);
    atomic_store(&warmup_armed, 1);
    atomic_store(&weft__idle_debug_hook, begin_before_lock);
    weft_run(pool, nothing, NULL); /* wakes the worker; it gets sleepy again */
    double deadline = check_now() + 10;
    while (atomic_load(&lock_passes) < 2) {
        CHECK(check_now() < deadline); /* it slept on the warm-up */
        check_sleep_us(100);
    }
    atomic_store(&weft__idle_debug_hook, NULL);
    weft_phase_end(pool, false);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Inside a phase idle workers burn CPU; after the last end with fast_leave
 * they sleep at once: the process's CPU over an idle interval drops to ~0. */
TEST(fast_leave_drops_cpu_at_once) {
    double created = check_now();
    weft_pool *pool = make_pool(2, WEFT_LEAVE_AUTOMATIC);
    weft_phase_begin(pool);
    weft_run(pool, nothing, NULL);
    double c0 = cpu_seconds(), t0 = check_now();
    check_sleep_us(2000); /* inside the phase, within its bound */
    /* Retained, searching: a search began at the pool's creation at the
     * earliest, so while this thread runs within the bound nobody sleeps (a
     * loaded machine may keep it off a CPU for longer; then they rightly do). */
    unsigned asleep = sleeping(pool);
    if (check_now() - created < 0.005)
        CHECK_EQ(asleep, 0);
    double retained = (cpu_seconds() - c0) / (check_now() - t0);
    weft_phase_end(pool, true);
    wait_sleeping(pool, 2);
    c0 = cpu_seconds(), t0 = check_now();
    check_sleep_us(200000);
    double after = (cpu_seconds() - c0) / (check_now() - t0);
    fprintf(stderr, "cpu/wall: retained %.3f, after fast leave %.4f\n", retained, after);
    CHECK(after < 0.02); /* ~0: nobody searches, nobody is woken */
    /* One-time: new work restores the default policy. */
    CHECK(weft__phase_fast_leave(&pool->phase));
    CHECK_EQ(weft_spawn(pool, nothing, NULL), 0);
    CHECK(!weft__phase_fast_leave(&pool->phase));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(destroy_ends_phases) {
    for (int i = 0; i < 5; i++) {
        weft_pool *pool = make_pool(4, WEFT_LEAVE_AUTOMATIC);
        weft_phase_begin(pool);
        weft_phase_begin(pool);
        weft_run(pool, nothing, NULL);
        CHECK_EQ(weft_pool_destroy(pool), 0); /* does not wait for the bound */
    }
}

TEST(phase_on_the_default_pool) {
    weft_phase_begin(NULL);
    weft_run(NULL, nothing, NULL);
    weft_phase_end(NULL, true);
    CHECK(!weft__phase_active(&weft_pool_default()->phase));
}

/* Release builds ignore an end without a begin; debug builds assert. */
TEST(end_without_begin_is_ignored_or_caught) {
#ifdef NDEBUG
    weft_pool *pool = make_pool(2, WEFT_LEAVE_AUTOMATIC);
    weft_phase_end(pool, true);
    CHECK_EQ(atomic_load(&pool->phase.active), 0);
    CHECK(!weft__phase_fast_leave(&pool->phase));
#else
    /* The child makes its own pool: in a fork child, a pool of the parent
     * ignores phases (weft.h, "fork()"). Forked before this process starts
     * a thread, so that TSan lets the child start its workers. */
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        signal(SIGABRT, SIG_DFL);
        weft_phase_end(make_pool(2, WEFT_LEAVE_AUTOMATIC), true); /* must not return */
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    weft_pool *pool = make_pool(2, WEFT_LEAVE_AUTOMATIC);
#endif
    weft_phase_begin(pool); /* and the count still works */
    CHECK(weft__phase_active(&pool->phase));
    weft_phase_end(pool, false);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
