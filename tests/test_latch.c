/* SPDX-License-Identifier: MIT */
/* Latches: the Appendix A transitions, outside owners, count latches, and a
 * latch set while its (worker) owner sleeps on it, under both protocols. */
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "idle/latch.h"
#include "core/latch_owner.h"
#include "weft.h"

TEST(appendix_a_transitions) {
    weft__latch l;
    weft__latch_init_owned(&l, (weft_pool *)&l /* never dereferenced here */, 0);
    CHECK(!weft__latch_probe(&l));
    CHECK(weft__latch_get_sleepy(&l));  /* UNSET -> SLEEPY */
    CHECK(weft__latch_fall_asleep(&l)); /* SLEEPY -> SLEEPING */
    weft__latch_wake_up(&l);            /* SLEEPING -> UNSET */
    CHECK_EQ(atomic_load(&l.state), WEFT__LATCH_UNSET);
    CHECK(weft__latch_get_sleepy(&l));
    atomic_store(&l.state, WEFT__LATCH_SET); /* set while sleepy */
    CHECK(!weft__latch_fall_asleep(&l));     /* so the owner must not sleep */
    CHECK(!weft__latch_get_sleepy(&l));
    weft__latch_wake_up(&l); /* never unsets a set latch */
    CHECK(weft__latch_probe(&l));
}

typedef struct setter_arg {
    weft__latch *latch;
    long delay_us;
    int payload;
} setter_arg;

static void *setter(void *p) {
    setter_arg *a = p;
    if (a->delay_us)
        check_sleep_us(a->delay_us);
    a->payload = 42; /* published by the set */
    weft__latch_set(a->latch);
    return NULL;
}

TEST(outside_owner_blocks_until_set) {
    for (long i = 0; i < scaled(2000); i++) {
        weft__latch l;
        weft__latch_init(&l); /* this thread is outside: it owns it */
        CHECK_EQ(l.owner, WEFT__LATCH_OUTSIDE);
        setter_arg a = {.latch = &l, .delay_us = i % 7 == 0 ? 0 : i % 50};
        pthread_t t;
        pthread_create(&t, NULL, setter, &a);
        weft__latch_wait(&l);
        CHECK(weft__latch_probe(&l));
        CHECK_EQ(a.payload, 42);
        pthread_join(t, NULL);
    }
}

typedef struct count_arg {
    weft__count_latch *c;
    _Atomic int *before;
} count_arg;

static void *decrementer(void *p) {
    count_arg *a = p;
    atomic_fetch_add(a->before, 1);
    weft__count_latch_decrement(a->c);
    return NULL;
}

TEST(count_latch_sets_at_zero_only) {
    enum { N = 8 };
    for (int round = 0; round < scaled(200); round++) {
        weft__count_latch c;
        weft__count_latch_init(&c, 1);
        _Atomic int before = 0;
        count_arg a = {&c, &before};
        pthread_t t[N];
        for (int i = 0; i < N; i++) {
            weft__count_latch_increment(&c);
            pthread_create(&t[i], NULL, decrementer, &a);
        }
        CHECK(!weft__latch_probe(&c.latch)); /* our count is still held */
        weft__count_latch_decrement(&c);
        weft__latch_wait(&c.latch);
        CHECK_EQ(atomic_load(&before), N);
        for (int i = 0; i < N; i++)
            pthread_join(t[i], NULL);
    }
}

/* A job on a worker owns a latch that an outside thread sets after a delay;
 * the worker finds nothing to do, sleeps on the latch, and only the set can
 * wake it. Delays vary so the set races every step of falling asleep. */
typedef struct owner_arg {
    long delay_us;
    int payload_seen;
} owner_arg;

static void owner_job(void *p) {
    owner_arg *o = p;
    weft__latch l;
    weft__latch_init(&l);
    CHECK(l.owner != WEFT__LATCH_OUTSIDE);
    setter_arg a = {.latch = &l, .delay_us = o->delay_us};
    pthread_t t;
    pthread_create(&t, NULL, setter, &a);
    weft__latch_wait(&l);
    o->payload_seen = a.payload;
    pthread_join(t, NULL);
}

/* The owner is a worker (the caller only waits), then the outside caller
 * itself in its caller slot (it polls, then sleeps on its slot alone). */
static void latch_set_while_owner_sleeps(weft_wake wake) {
    for (int callers_wait = 1; callers_wait >= 0; callers_wait--) {
        weft_config c = {.threads = 2,
                         .wake = wake,
                         .leave = WEFT_LEAVE_FAST,
                         .callers = 1, /* a wake-all pool has none by default */
                         .callers_wait = callers_wait};
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        for (long i = 0; i < scaled(600); i++) {
            owner_arg o = {.delay_us = i % 5 == 0 ? 2000 : i % 97};
            weft_run(pool, owner_job, &o);
            CHECK_EQ(o.payload_seen, 42);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(latch_set_while_owner_sleeps_targeted) {
    latch_set_while_owner_sleeps(WEFT_WAKE_TARGETED);
}

TEST(latch_set_while_owner_sleeps_wake_all) {
    latch_set_while_owner_sleeps(WEFT_WAKE_ALL);
}
