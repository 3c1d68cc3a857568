/* SPDX-License-Identifier: MIT */
/* weft_broadcast: exactly once on every worker, from outside or inside the
 * pool, with workers asleep or busy, several at once, both protocols. */
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "core/current.h"
#include "weft.h"

enum { MAX_WORKERS = 64 };

typedef struct tally {
    _Atomic int runs[MAX_WORKERS];
    _Atomic int wrong_index;
} tally;

static void count_run(unsigned index, void *arg) {
    tally *t = arg;
    if ((int)index != weft_thread_index())
        atomic_fetch_add(&t->wrong_index, 1);
    atomic_fetch_add(&t->runs[index], 1);
}

static void check_once_each(tally *t, unsigned threads) {
    CHECK_EQ(atomic_load(&t->wrong_index), 0);
    for (unsigned i = 0; i < threads; i++)
        CHECK_EQ(atomic_load(&t->runs[i]), 1);
}

static weft_pool *make_pool(unsigned threads, weft_wake wake) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads, .wake = wake}), 0);
    return pool;
}

static void from_inside(void *arg) {
    void **a = arg;
    weft_broadcast(weft_pool_default(), count_run, a[1]); /* another pool: participates */
    weft_broadcast((weft_pool *)a[0], count_run, a[2]);
}

TEST(once_on_every_worker) {
    for (int w = 0; w < 2; w++) {
        weft_pool *pool = make_pool(4, w ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED);
        for (int i = 0; i < scaled(200); i++) {
            tally t = {0};
            if (i % 10 == 0)
                check_sleep_us(2000); /* let everybody fall asleep first */
            weft_broadcast(pool, count_run, &t);
            check_once_each(&t, 4);
        }
        tally on_default = {0}, on_pool = {0};
        void *args[3] = {pool, &on_default, &on_pool};
        weft_run(pool, from_inside, args); /* the caller participates */
        check_once_each(&on_default, weft_pool_threads(NULL));
        check_once_each(&on_pool, 4);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

static void long_job(void *arg) {
    (void)arg;
    check_sleep_us(20000);
}

TEST(busy_workers_run_it_after_their_job) {
    weft_pool *pool = make_pool(3, WEFT_WAKE_TARGETED);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(weft_spawn(pool, long_job, NULL), 0);
    tally t = {0};
    weft_broadcast(pool, count_run, &t);
    check_once_each(&t, 3);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct caller {
    weft_pool *pool;
    unsigned threads;
} caller;

static void *broadcaster(void *arg) {
    caller *c = arg;
    for (int i = 0; i < scaled(100); i++) {
        tally t = {0};
        weft_broadcast(c->pool, count_run, &t);
        check_once_each(&t, c->threads);
    }
    return NULL;
}

TEST(concurrent_broadcasts_on_an_oversubscribed_pool) {
    for (int w = 0; w < 2; w++) {
        caller c = {make_pool(32, w ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED), 32};
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, broadcaster, &c);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        CHECK_EQ(weft_pool_destroy(c.pool), 0);
    }
}

static void nothing_job(void *arg) {
    (void)arg;
}

/* The interleaving the final check exists for: the worker searched (nothing)
 * and is about to lock its slot when a broadcast is posted; the broadcaster's
 * wake-up pass finds the worker awake and moves on. Only the check after the
 * SleepFence keeps the worker from sleeping on the broadcast. */
static _Atomic int race_armed;
static tally race_tally;
static pthread_t race_thread; /* written by the hook, joined by the test */

static void *late_broadcaster(void *arg) {
    weft_broadcast((weft_pool *)arg, count_run, &race_tally);
    return NULL;
}

static void broadcast_before_lock(void *arg, weft__debug_point p) {
    weft_pool *hooked = arg;
    if (p != WEFT__DEBUG_BEFORE_LOCK || !atomic_exchange(&race_armed, 0))
        return;
    uint64_t seq = atomic_load(&hooked->broadcasts.seq);
    pthread_create(&race_thread, NULL, late_broadcaster, hooked);
    while (atomic_load(&hooked->broadcasts.seq) == seq) /* posted... */
        check_sleep_us(10);
    check_sleep_us(5000); /* ...and its wake-up pass has gone by */
}

TEST(final_check_sees_a_broadcast_posted_while_falling_asleep) {
    weft_pool *pool;
    /* The caller only waits: its weft_run wakes the worker. */
    CHECK_EQ(
        weft_pool_create(
            &pool, &(weft_config){.threads = 1, .leave = WEFT_LEAVE_FAST, .callers_wait = true}),
        0);
    for (int i = 0; i < 5; i++) {
        check_sleep_us(2000);
        race_tally = (tally){0};
        atomic_store(&weft__idle_debug_hook, broadcast_before_lock);
        atomic_store(&race_armed, 1);
        weft_run(pool, nothing_job, NULL); /* wakes the worker; it falls asleep again */
        double deadline = check_now() + 5;
        while (atomic_load(&race_tally.runs[0]) == 0) {
            CHECK(check_now() < deadline); /* it slept on the broadcast */
            check_sleep_us(100);
        }
        atomic_store(&weft__idle_debug_hook, NULL);
        pthread_join(race_thread, NULL); /* the hook made it before the run */
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
