/* SPDX-License-Identifier: MIT */
/* Events: dependencies, participating waits, many waiters, follow-ups,
 * targeted wake-ups, and the documented misuse. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asleep.h"
#include "check.h"
#include "pools.h"
#include "weft.h"

static _Atomic int counter;

static void bump(void *arg) {
    (void)arg;
    atomic_fetch_add(&counter, 1);
}

TEST(zero_dependencies_is_set) {
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, NULL, 0), 0);
    CHECK(weft_event_is_set(e));
    weft_event_wait(e);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_event_then(e, bump, NULL), 0); /* queued at once */
    while (atomic_load(&counter) == 0)
        check_sleep_us(100);
    weft_event_destroy(e);
}

typedef struct signaller {
    weft_event *e;
    int value;
    int *slot;
} signaller;

static void write_and_signal(void *arg) {
    signaller *s = arg;
    *s->slot = s->value; /* published by the signal */
    weft_event_signal(s->e);
}

TEST(outside_waiter_sees_every_signal) {
    enum { N = 64 };
    weft_pool *pool = make_pool(3);
    for (int round = 0; round < scaled(50); round++) {
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, N), 0);
        int slots[N] = {0};
        signaller s[N];
        for (int i = 0; i < N; i++) {
            s[i] = (signaller){e, i + 1, &slots[i]};
            CHECK_EQ(weft_spawn(pool, write_and_signal, &s[i]), 0);
        }
        weft_event_wait(e);
        CHECK(weft_event_is_set(e));
        for (int i = 0; i < N; i++)
            CHECK_EQ(slots[i], i + 1);
        weft_event_destroy(e);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* One worker: the waiter must run the signalling jobs itself. */
static void spawn_then_wait(void *arg) {
    weft_pool *pool = arg;
    enum { N = 100 };
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, N), 0);
    int slots[N];
    signaller s[N];
    for (int i = 0; i < N; i++) {
        s[i] = (signaller){e, i, &slots[i]};
        CHECK_EQ(weft_spawn(pool, write_and_signal, &s[i]), 0);
    }
    weft_event_wait(e);
    for (int i = 0; i < N; i++)
        CHECK_EQ(slots[i], i);
    weft_event_destroy(e);
}

TEST(worker_waiter_participates) {
    weft_pool *pool = make_pool(1);
    weft_run(pool, spawn_then_wait, pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct waiter_arg {
    weft_event *e;
    _Atomic int *released;
} waiter_arg;

static void *outside_waiter(void *arg) {
    waiter_arg *w = arg;
    weft_event_wait(w->e);
    atomic_fetch_add(w->released, 1);
    return NULL;
}

static void worker_waiter(void *arg) {
    outside_waiter(arg);
}

TEST(many_waiters_and_follow_ups) {
    weft_pool *pool = make_pool(4);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 3), 0);
    _Atomic int released = 0;
    waiter_arg w = {e, &released};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, outside_waiter, &w);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_spawn(pool, worker_waiter, &w), 0);
    atomic_store(&counter, 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_event_then(e, bump, NULL), 0);
    check_sleep_us(5000);
    CHECK_EQ(atomic_load(&released), 0); /* nothing before the last signal */
    CHECK_EQ(atomic_load(&counter), 0);
    for (int i = 0; i < 3; i++)
        weft_event_signal(e);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* waits for follow-ups and waiters */
    CHECK_EQ(atomic_load(&released), 6);
    CHECK_EQ(atomic_load(&counter), 10);
    weft_event_destroy(e);
}

/* A worker waiting on an event sleeps once it has nothing to run; the last
 * signal wakes it, and nobody else. The pool is quiet when every worker has
 * blocked (asleep.h), the waiter on its latch, not when the counters stopped
 * changing for a while: a waiter kept off its CPU that long ran its wait
 * after the signal, and this thread freed the event under it. */
static _Atomic int waited;

static void wait_on(void *arg) {
    weft_event_wait((weft_event *)arg);
    atomic_store(&waited, 1); /* done with the event: it may be destroyed */
}

static weft_stats settle(weft_pool *pool) {
    wait_all_blocked(pool);
    weft_stats a, b;
    weft_pool_stats(pool, &b);
    do { /* a sleep is counted a moment after the worker blocked */
        a = b;
        check_sleep_us(20000);
        weft_pool_stats(pool, &b);
    } while (a.sleeps != b.sleeps || a.wakeups != b.wakeups ||
             a.futile_wakeups != b.futile_wakeups);
    return b;
}

TEST(last_signal_wakes_only_the_waiter) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 4, .leave = WEFT_LEAVE_FAST}), 0);
    for (int i = 0; i < 5; i++) {
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 1), 0);
        atomic_store(&waited, 0);
        CHECK_EQ(weft_spawn(pool, wait_on, e), 0);
        weft_stats before = settle(pool); /* the waiter sleeps on its latch */
        CHECK_EQ(atomic_load(&waited), 0);
        weft_event_signal(e);
        double deadline = check_now() + 10;
        while (!atomic_load(&waited)) {
            CHECK(check_now() < deadline); /* the signal did not wake the waiter */
            check_sleep_us(100);
        }
        weft_stats after = settle(pool);
        CHECK_EQ(after.wakeups - before.wakeups, 1); /* the waiter, and nobody else */
        CHECK_EQ(after.futile_wakeups - before.futile_wakeups, 0);
        weft_event_destroy(e);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A waiter may destroy the event as soon as its wait returns, while the last
 * signaller is still in weft_event_signal: the setter must be done with the
 * event by then (ASan/TSan see the use after free otherwise). */
static void signal_soon(void *arg) {
    weft_event_signal((weft_event *)arg);
}

TEST(destroy_right_after_wait) {
    weft_pool *pool = make_pool(2);
    atomic_store(&counter, 0);
    for (int i = 0; i < scaled(5000); i++) {
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 1), 0);
        CHECK_EQ(weft_event_then(e, bump, NULL), 0);
        CHECK_EQ(weft_spawn(pool, signal_soon, e), 0);
        if (i % 2)
            weft_event_wait(e);
        else
            while (!weft_event_is_set(e)) {
            }
        weft_event_destroy(e); /* follow-ups of a set event are not discarded */
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counter), scaled(5000)); /* every follow-up ran */
}

TEST(unset_event_discards_follow_ups) {
    weft_pool *pool = make_pool(2);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_event_then(e, bump, NULL), 0);
    weft_event_destroy(e);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* would hang if they were still counted */
    CHECK_EQ(atomic_load(&counter), 0);
}

TEST(bad_input) {
    CHECK_EQ(weft_event_create(NULL, NULL, 1), EINVAL);
    CHECK_EQ(weft_event_then(NULL, bump, NULL), EINVAL);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, NULL, 1), 0);
    CHECK_EQ(weft_event_then(e, NULL, NULL), EINVAL);
    weft_event_signal(e);
#ifdef NDEBUG
    weft_event_signal(e); /* one too many: ignored in release builds */
    CHECK(weft_event_is_set(e));
#else
    pid_t child = fork(); /* and caught in debug builds */
    CHECK(child >= 0);
    if (child == 0) {
        signal(SIGABRT, SIG_DFL);
        weft_event_signal(e);
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
#endif
    weft_event_destroy(e);
    weft_event_destroy(NULL);
}
