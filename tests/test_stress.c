/* SPDX-License-Identifier: MIT */
/* Oversubscribed stress: pools of 8, 32 and 64 workers on a 2-core machine,
 * under both protocols, checking invariants while racing: fork trees compute
 * the right sum, every loop index and every spawned job runs exactly once,
 * sporadic outside jobs all start (no lost wake-up), and the same again with
 * random yields injected at the sleep protocol's points. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "jobs.h"
#include "core/current.h"
#include "weft.h"

static void count_index(size_t begin, size_t end, void *arg) {
    _Atomic unsigned char *hits = arg;
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
}

static _Atomic long spawned_ran;

static void spawned(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&spawned_ran, 1, memory_order_relaxed);
}

static void spawn_many(weft_scope *s, void *arg) {
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        CHECK_EQ(weft_scope_spawn(s, spawned, NULL), 0);
}

static void mixed_round(weft_pool *pool) {
    fib f = {scaled(1) == 1 ? 22 : 17, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, scaled(1) == 1 ? 17711 : 1597);

    size_t n = (size_t)scaled(200000);
    _Atomic unsigned char *hits = calloc(n, 1);
    weft_for(pool, 0, n, 0, count_index, (void *)hits);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(hits[i], 1);
    free((void *)hits);

    long jobs = scaled(20000);
    atomic_store(&spawned_ran, 0);
    weft_scope_run(pool, spawn_many, &jobs);
    CHECK_EQ(atomic_load(&spawned_ran), jobs);
}

static void sporadic(weft_pool *pool) {
    for (int i = 0; i < scaled(300); i++) {
        if (i % 3)
            check_sleep_us(i % 200);
        weft_run(pool, nothing, NULL);
    }
}

static void oversubscribed(unsigned threads) {
    const weft_wake wakes[] = {WEFT_WAKE_TARGETED, WEFT_WAKE_ALL};
    const weft_leave leaves[] = {WEFT_LEAVE_AUTOMATIC, WEFT_LEAVE_FAST};
    for (int w = 0; w < 2; w++)
        for (int l = 0; l < 2; l++) {
            weft_config c = {.threads = threads, .wake = wakes[w], .leave = leaves[l]};
            weft_pool *pool;
            CHECK_EQ(weft_pool_create(&pool, &c), 0);
            mixed_round(pool);
            sporadic(pool);
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
}

TEST(oversubscribed_8) {
    oversubscribed(8);
}

TEST(oversubscribed_32) {
    oversubscribed(32);
}

TEST(oversubscribed_64) {
    oversubscribed(64);
}

/* Random yields at the sleep protocol's points widen every race window. */
static _Atomic unsigned yield_rng = 1;

static void random_yield(void *arg, weft__debug_point p) {
    (void)arg;
    (void)p;
    unsigned r = atomic_fetch_add_explicit(&yield_rng, 2654435761u, memory_order_relaxed);
    if ((r >> 13) & 1)
        sched_yield();
}

TEST(random_yields_at_protocol_points) {
    atomic_store(&weft__idle_debug_hook, random_yield);
    oversubscribed(16);
    atomic_store(&weft__idle_debug_hook, NULL);
}

/* Outside threads hammer one oversubscribed pool at once. */
static void *hammer(void *arg) {
    weft_pool *pool = arg;
    for (int i = 0; i < scaled(50); i++) {
        fib f = {12, 0};
        weft_run(pool, fib_job, &f);
        CHECK_EQ(f.r, 144);
        CHECK_EQ(weft_spawn(pool, spawned, NULL), 0);
    }
    return NULL;
}

/* Targeted, wake-all (its callers only wait), and wake-all with four caller
 * slots for six callers: some take part, the others wait. */
TEST(outside_threads_hammer_an_oversubscribed_pool) {
    for (int k = 0; k < 3; k++) {
        weft_config c = {.threads = 32,
                         .wake = k ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED,
                         .callers = k == 2 ? 4 : 0};
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        atomic_store(&spawned_ran, 0);
        enum { CALLERS = 6 };
        pthread_t t[CALLERS];
        for (int i = 0; i < CALLERS; i++)
            pthread_create(&t[i], NULL, hammer, pool);
        for (int i = 0; i < CALLERS; i++)
            pthread_join(t[i], NULL);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&spawned_ran), CALLERS * scaled(50));
    }
}

/* Seed 003's model under oversubscription: threads holding contexts run
 * loops, reductions, event waits and high-priority spawns on a pool of 32
 * workers while outside threads flood it; every index and job exactly once. */
static void signal_event(void *arg) {
    weft_event_signal((weft_event *)arg);
}

static void *context_user(void *arg) {
    weft_pool *pool = arg;
    weft_context *ctx;
    while (weft_context_acquire(pool, &ctx) == EBUSY)
        sched_yield();
    for (int round = 0; round < scaled(40); round++) {
        size_t n = 5000 + (size_t)round;
        uint64_t r = 0;
        CHECK_EQ(weft_reduce(pool, 0, n, (size_t)round % 3, &sum_of_indices, &r), 0);
        CHECK_EQ(r, n * (n - 1) / 2);
        _Atomic unsigned char *hits = calloc(n, 1);
        weft_for(pool, 0, n, 0, count_index, (void *)hits);
        for (size_t i = 0; i < n; i++)
            CHECK_EQ(hits[i], 1);
        free((void *)hits);
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 8), 0);
        for (int i = 0; i < 8; i++)
            CHECK_EQ(weft_spawn_priority(pool, signal_event, e, (weft_priority)(i & 1)), 0);
        weft_event_wait(e);
        weft_event_destroy(e);
    }
    weft_context_release(ctx);
    return NULL;
}

TEST(contexts_events_and_priorities_oversubscribed) {
    for (int w = 0; w < 2; w++) {
        weft_config c = {
            .threads = 32, .contexts = 3, .wake = w ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED};
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        atomic_store(&spawned_ran, 0);
        pthread_t users[4], flooders[2];
        for (int i = 0; i < 4; i++) /* four threads share three contexts */
            pthread_create(&users[i], NULL, context_user, pool);
        for (int i = 0; i < 2; i++)
            pthread_create(&flooders[i], NULL, hammer, pool);
        for (int i = 0; i < 4; i++)
            pthread_join(users[i], NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(flooders[i], NULL);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&spawned_ran), 2 * scaled(50));
    }
}
