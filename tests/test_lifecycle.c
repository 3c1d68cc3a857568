/* SPDX-License-Identifier: MIT */
/* Pool lifecycle against the threads around it: signallers that are still
 * inside weft when the pool is destroyed, on_start and on_exit hooks that use
 * weft, submissions that race with weft_pool_destroy, events that still hold
 * follow-ups, and destroys that would wait for their own caller. Each case
 * once hung, lost a job or touched freed memory (the ASan and TSan stages of
 * make test see the last). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "core/worker.h" /* to see a job queued in the injector */
#include "weft.h"

/* Failing the k-th pthread_create of the calling thread (start_fail_create). */
static _Thread_local long create_fail_at = -1;

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    if (create_fail_at >= 0 && create_fail_at-- == 0)
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

static _Atomic int counter;

static void bump(void *arg) {
    (void)arg;
    atomic_fetch_add(&counter, 1);
}

/* ---- 1. A signaller still inside weft when the pool goes ------------------ */

static void *signal_event(void *arg) {
    weft_event_signal(arg);
    return NULL;
}

/* The follow-up runs on the pool as soon as the signaller queued it, so the
 * owner can see the event set, wait for the follow-up (destroy does) and free
 * the pool while the signaller is still waking a worker for it. */
TEST(signal_from_outside_then_destroy) {
    for (int round = 0; round < scaled(400); round++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1 + round % 2}), 0);
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 1), 0);
        atomic_store(&counter, 0);
        CHECK_EQ(weft_event_then(e, bump, NULL), 0);
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, signal_event, e), 0);
        while (!weft_event_is_set(e)) {
        }
        weft_event_destroy(e); /* allowed: the event is set */
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&counter), 1);
        pthread_join(t, NULL);
    }
}

/* The same shape through weft_spawn and weft_run from a thread outside: the
 * job finishes while its submitter is still waking a worker. */
static void *spawn_from_outside(void *arg) {
    CHECK_EQ(weft_spawn(arg, bump, NULL), 0);
    return NULL;
}

/* Run outside(pool) on a thread of its own, destroy pool once the counter
 * shows that it has begun, and join the thread. */
static void destroy_once_begun(weft_pool *pool, void *(*outside)(void *)) {
    atomic_store(&counter, 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, outside, pool), 0);
    while (atomic_load(&counter) == 0) {
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
    pthread_join(t, NULL);
}

/* The job ran, but its spawner may still be inside weft_spawn, waking a
 * worker: destroy must not free what the spawner still touches. */
TEST(spawn_from_outside_then_destroy) {
    for (int round = 0; round < scaled(400); round++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1 + round % 2}), 0);
        destroy_once_begun(pool, spawn_from_outside);
    }
}

/* ---- 2. A weft_run whose job waits in the injector when destroy starts ---- */

/* weft_run injects its job when the caller gets no caller slot, and the job
 * may still be queued when another thread destroys the pool (the call started
 * before destroy, which weft.h allows). Destroy must run it: the caller
 * blocks until it has run. Three ways to reach the injector: a callers_wait
 * pool, a pool whose only caller slot is taken, and a caller that is a worker
 * of another pool. The pool's one worker is busy with `hold` meanwhile, so the
 * job stays queued until destroy has started. */
typedef enum { RUN_WAITS, RUN_SLOT_TAKEN, RUN_FROM_A_WORKER, RUN_WAYS } run_way;

typedef struct queued_run {
    weft_pool *pool, *other; /* other: the pool whose worker calls (RUN_FROM_A_WORKER) */
    _Atomic bool release, ran;
    _Atomic int holding; /* hold() calls running */
} queued_run;

static void hold(void *arg) {
    queued_run *q = arg;
    atomic_fetch_add(&q->holding, 1);
    while (!atomic_load(&q->release)) {
    }
}

static void mark_ran(void *arg) {
    queued_run *q = arg;
    atomic_store(&q->ran, true);
}

static void run_mark_ran(void *arg) {
    queued_run *q = arg;
    weft_run(q->pool, mark_ran, q);
}

static void *hold_the_slot(void *arg) {
    queued_run *q = arg;
    weft_run(q->pool, hold, q);
    return NULL;
}

static void *run_from_outside(void *arg) {
    queued_run *q = arg;
    if (q->other)
        weft_run(q->other, run_mark_ran, q);
    else
        run_mark_ran(q);
    return NULL;
}

TEST(destroy_runs_a_queued_run_job) {
    for (int round = 0; round < scaled(60); round++) {
        run_way way = (run_way)(round % RUN_WAYS);
        queued_run q = {0};
        CHECK_EQ(weft_pool_create(
                     &q.pool,
                     &(weft_config){.threads = 1, .callers_wait = way == RUN_WAITS, .callers = 1}),
                 0);
        if (way == RUN_FROM_A_WORKER)
            CHECK_EQ(weft_pool_create(&q.other, &(weft_config){.threads = 1}), 0);
        CHECK_EQ(weft_spawn(q.pool, hold, &q), 0); /* the worker */
        pthread_t slot_holder, caller;
        if (way == RUN_SLOT_TAKEN)
            CHECK_EQ(pthread_create(&slot_holder, NULL, hold_the_slot, &q), 0);
        while (atomic_load(&q.holding) < (way == RUN_SLOT_TAKEN ? 2 : 1)) {
        } /* and so the injector is empty */
        CHECK_EQ(pthread_create(&caller, NULL, run_from_outside, &q), 0);
        while (weft__injector_is_empty(&q.pool->injectors[WEFT_PRIORITY_NORMAL])) {
        }
        atomic_store(&q.release, true);
        CHECK_EQ(weft_pool_destroy(q.pool), 0);
        CHECK(atomic_load(&q.ran));
        pthread_join(caller, NULL);
        if (way == RUN_SLOT_TAKEN)
            pthread_join(slot_holder, NULL);
        if (q.other)
            CHECK_EQ(weft_pool_destroy(q.other), 0);
    }
}

/* A call in a caller slot that started before destroy: its scope's job J,
 * stolen by the pool's only worker, spawns K into the scope once destroy has
 * begun. Destroy waits for the call (K runs on the worker, the scope ends,
 * the call returns) before it stops the worker. */
typedef struct slot_call {
    weft_pool *pool;
    weft_scope *scope;
    _Atomic bool j_started, k_ran;
} slot_call;

static void mark_k(void *arg) {
    atomic_store(&((slot_call *)arg)->k_ran, true);
}

static uint32_t pool_runnable(weft_pool *pool) {
    return weft__pending_runnable(atomic_load(&pool->pending.word));
}

static void spawn_k_once_destroy_began(void *arg) {
    slot_call *c = arg;
    uint32_t before = pool_runnable(c->pool); /* the pool's count, and the call's */
    atomic_store(&c->j_started, true);
    while (pool_runnable(c->pool) == before) { /* destroy drops the pool's count */
    }
    CHECK_EQ(weft_scope_spawn(c->scope, mark_k, c), 0);
}

static void body_waits_for_j(weft_scope *scope, void *arg) {
    slot_call *c = arg;
    c->scope = scope;
    CHECK_EQ(weft_scope_spawn(scope, spawn_k_once_destroy_began, c), 0);
    while (!atomic_load(&c->j_started)) { /* the worker took J */
    }
}

static void *call_in_a_slot(void *arg) {
    slot_call *c = arg;
    weft_scope_run(c->pool, body_waits_for_j, c);
    return NULL;
}

TEST(destroy_waits_for_a_call_in_a_caller_slot) {
    for (int round = 0; round < scaled(40); round++) {
        slot_call c = {0};
        CHECK_EQ(weft_pool_create(&c.pool, &(weft_config){.threads = 1, .callers = 1}), 0);
        pthread_t caller;
        CHECK_EQ(pthread_create(&caller, NULL, call_in_a_slot, &c), 0);
        while (!atomic_load(&c.j_started)) {
        }
        CHECK_EQ(weft_pool_destroy(c.pool), 0);
        CHECK(atomic_load(&c.k_ran));
        pthread_join(caller, NULL);
    }
}

/* weft_broadcast from outside, under way (it ran on one worker) when another
 * thread destroys the pool: destroy waits for it, and it returns having run
 * on every worker, never waiting for a worker that has exited. The signal
 * comes from the broadcast's own function: a thread that only announced its
 * call could enter weft_broadcast after destroy freed the pool, which weft.h
 * forbids (ASan caught that race in an earlier form of this test). */
static _Atomic int broadcast_runs, broadcast_err;

static void count_broadcast(unsigned index, void *arg) {
    (void)index;
    (void)arg;
    atomic_fetch_add(&broadcast_runs, 1);
    atomic_store(&counter, 1); /* under way */
}

static void *broadcast_once(void *arg) {
    atomic_store(&broadcast_err, weft_broadcast(arg, count_broadcast, NULL));
    return NULL;
}

TEST(broadcast_racing_destroy_returns) {
    for (int round = 0; round < scaled(400); round++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
        atomic_store(&broadcast_runs, 0);
        destroy_once_begun(pool, broadcast_once);
        CHECK_EQ(atomic_load(&broadcast_err), 0);
        CHECK_EQ(atomic_load(&broadcast_runs), 2);
    }
}

/* ---- 3. on_start and on_exit that use weft ------------------------------- */

static _Atomic int shares;

static void count_share(unsigned index, void *arg) {
    (void)index;
    (void)arg;
    atomic_fetch_add(&shares, 1);
}

/* Worker 0's on_start broadcasts to its own pool (weft_thread_index tells it
 * which); the other workers must run their share before they may stop. */
static void broadcast_on_start_null(unsigned worker, void *user) {
    (void)user;
    if (worker == 0)
        weft_broadcast(NULL, count_share, NULL);
}

TEST(on_start_broadcast_then_destroy) {
    for (int round = 0; round < scaled(200); round++) {
        atomic_store(&shares, 0);
        weft_pool *pool;
        weft_config c = {.threads = 4, .on_start = broadcast_on_start_null};
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&shares), 4);
    }
}

/* A later thread cannot be created while worker 0's on_start waits for a
 * broadcast: create still returns EAGAIN, with nothing left behind. */
TEST(on_start_broadcast_then_create_fails) {
    for (long fail = 1; fail < 4; fail++) {
        atomic_store(&shares, 0);
        weft_pool *pool = NULL;
        weft_config c = {.threads = 4, .on_start = broadcast_on_start_null};
        create_fail_at = fail;
        CHECK_EQ(weft_pool_create(&pool, &c), EAGAIN);
        create_fail_at = -1;
        CHECK(pool == NULL);
    }
}

/* on_start has run on every worker when weft_pool_create returns. */
static _Atomic int started, exited;

static void count_start(unsigned worker, void *user) {
    (void)worker;
    (void)user;
    atomic_fetch_add(&started, 1);
}

TEST(create_returns_after_every_on_start) {
    for (int round = 0; round < scaled(100); round++) {
        atomic_store(&started, 0);
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 3, .on_start = count_start}), 0);
        CHECK_EQ(atomic_load(&started), 3);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* No on_start or on_exit runs in a pool whose creation failed. */
static void count_exit(unsigned worker, void *user) {
    (void)worker;
    (void)user;
    atomic_fetch_add(&exited, 1);
}

TEST(failed_create_runs_no_hook) {
    atomic_store(&started, 0);
    atomic_store(&exited, 0);
    weft_pool *pool = NULL;
    weft_config c = {.threads = 3, .on_start = count_start, .on_exit = count_exit};
    create_fail_at = 2;
    CHECK_EQ(weft_pool_create(&pool, &c), EAGAIN);
    create_fail_at = -1;
    CHECK_EQ(atomic_load(&started), 0);
    CHECK_EQ(atomic_load(&exited), 0);
}

/* ---- 6. Submissions from on_exit ----------------------------------------- */

static _Atomic int exit_spawn_ok, exit_spawn_shutdown, exit_then_shutdown, exit_broadcast;

/* Events of the pool being destroyed, made once it exists: one set, one not. */
typedef struct exit_events {
    weft_event *set, *unset;
} exit_events;

static void spawn_on_exit(unsigned worker, void *user) {
    (void)worker;
    int err = weft_spawn(NULL, bump, NULL);
    if (err == 0)
        atomic_fetch_add(&exit_spawn_ok, 1);
    else if (err == ESHUTDOWN)
        atomic_fetch_add(&exit_spawn_shutdown, 1);
    exit_events *ev = user;
    /* A set event queues at once, an unset one parks: both refused. */
    if (weft_event_then(ev->set, bump, NULL) == ESHUTDOWN)
        atomic_fetch_add(&exit_then_shutdown, 1);
    if (weft_event_then(ev->unset, bump, NULL) == ESHUTDOWN)
        atomic_fetch_add(&exit_then_shutdown, 1);
    if (weft_broadcast(NULL, count_share, NULL) == ESHUTDOWN)
        atomic_fetch_add(&exit_broadcast, 1);
}

/* A spawn from on_exit either runs before destroy returns or fails with
 * ESHUTDOWN; 0 never means a job that is silently dropped (LSan sees a leaked
 * job). The same for follow-ups of the pool's events and for a broadcast. */
TEST(spawn_from_on_exit) {
    for (int round = 0; round < scaled(50); round++) {
        atomic_store(&counter, 0);
        atomic_store(&exit_spawn_ok, 0);
        atomic_store(&exit_spawn_shutdown, 0);
        atomic_store(&exit_then_shutdown, 0);
        atomic_store(&exit_broadcast, 0);
        atomic_store(&shares, 0);
        exit_events ev;
        weft_pool *pool;
        weft_config c = {.threads = 2, .on_exit = spawn_on_exit, .user = &ev};
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        /* Filled before destroy: the workers read it in on_exit, after they
         * see their terminate latch, which destroy sets. */
        CHECK_EQ(weft_event_create(&ev.set, pool, 0), 0);
        CHECK_EQ(weft_event_create(&ev.unset, pool, 1), 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&exit_spawn_shutdown), 2);
        CHECK_EQ(atomic_load(&exit_then_shutdown), 4);
        CHECK_EQ(atomic_load(&exit_broadcast), 2);
        CHECK_EQ(atomic_load(&shares), 0);
        CHECK_EQ(atomic_load(&exit_spawn_ok), 0);
        CHECK_EQ(atomic_load(&counter), 0); /* nothing ran, nothing was queued */
        weft_event_destroy(ev.set);         /* neither touches the freed pool: no follow-ups */
        weft_event_destroy(ev.unset);
    }
}

/* From on_exit, a weft_run into another pool whose job calls weft_run back
 * into the closing pool: that pool has drained and takes no job any more, so
 * the function runs on the calling thread (weft.h) instead of being queued
 * where nothing may run it. */
typedef struct closing_pools {
    weft_pool *closing, *other;
} closing_pools;

static void run_back_into_closing(void *arg) {
    closing_pools *p = arg;
    weft_run(p->closing, bump, NULL);
}

static void run_in_other_on_exit(unsigned worker, void *user) {
    (void)worker;
    closing_pools *p = user;
    weft_run(p->other, run_back_into_closing, p);
}

TEST(run_into_a_closed_pool_runs_on_the_caller) {
    for (int round = 0; round < scaled(50); round++) {
        atomic_store(&counter, 0);
        closing_pools p;
        CHECK_EQ(weft_pool_create(&p.other, &(weft_config){.threads = 1 + round % 2}), 0);
        CHECK_EQ(weft_pool_create(
                     &p.closing,
                     &(weft_config){.threads = 2, .on_exit = run_in_other_on_exit, .user = &p}),
                 0);
        CHECK_EQ(weft_pool_destroy(p.closing), 0);
        CHECK_EQ(atomic_load(&counter), 2);
        CHECK_EQ(weft_pool_destroy(p.other), 0);
    }
}

/* ---- 7. Destroy while an unset event holds follow-ups --------------------- */

TEST(destroy_with_unset_event_followup) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_event_then(e, bump, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), EBUSY); /* nothing destroyed */
    CHECK_EQ(weft_spawn(pool, bump, NULL), 0);
    weft_event_signal(e); /* the follow-up is ready now */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counter), 2);
    weft_event_destroy(e);
}

TEST(destroy_after_unset_event_destroyed) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 3), 0);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_event_then(e, bump, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), EBUSY);
    weft_event_destroy(e); /* discards the follow-up (documented) */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counter), 0);
}

/* A job that destroy waits for parks a follow-up on an unset event: destroy
 * must not wait for it forever either. */
static void park_followup(void *arg) {
    CHECK_EQ(weft_event_then(arg, bump, NULL), 0);
}

TEST(followup_parked_while_destroying) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_spawn(pool, park_followup, e), 0);
    int err = weft_pool_destroy(pool); /* the job may park before or during it */
    CHECK_EQ(err, EBUSY);
    weft_event_signal(e);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counter), 1);
    weft_event_destroy(e);
}

/* An event set while destroy drains the pool: its follow-up runs. */
static void *signal_later(void *arg) {
    check_sleep_us(1000);
    weft_event_signal(arg);
    return NULL;
}

static void wait_event(void *arg) {
    weft_event_wait(arg);
}

TEST(followup_released_while_destroying) {
    for (int round = 0; round < scaled(50); round++) {
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2}), 0);
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 1), 0);
        atomic_store(&counter, 0);
        CHECK_EQ(weft_spawn(pool, wait_event, e), 0); /* keeps destroy draining */
        CHECK_EQ(weft_event_then(e, bump, NULL), 0);
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, signal_later, e), 0);
        int err = weft_pool_destroy(pool);
        pthread_join(t, NULL);
        if (err == EBUSY) /* destroy looked before the signal */
            err = weft_pool_destroy(pool);
        CHECK_EQ(err, 0);
        CHECK_EQ(atomic_load(&counter), 1);
        weft_event_destroy(e);
    }
}

/* ---- 4. A destroy that would wait for its own caller ----------------------- */

typedef struct two_pools {
    weft_pool *a, *b;
    _Atomic int result;
} two_pools;

static void destroy_a(void *arg) {
    two_pools *p = arg;
    atomic_store(&p->result, weft_pool_destroy(p->a));
}

static void run_in_b(void *arg) {
    two_pools *p = arg;
    weft_run(p->b, destroy_a, p);
}

TEST(destroy_through_another_pool) {
    two_pools p = {.result = -1};
    CHECK_EQ(weft_pool_create(&p.a, &(weft_config){.threads = 2}), 0);
    CHECK_EQ(weft_pool_create(&p.b, &(weft_config){.threads = 2}), 0);
    weft_run(p.a, run_in_b, &p);
    CHECK_EQ(atomic_load(&p.result), EDEADLK);
    CHECK_EQ(weft_pool_destroy(p.b), 0);
    CHECK_EQ(weft_pool_destroy(p.a), 0);
}

/* Two hops: A's job runs in B, whose job runs in C, which destroys A. */
typedef struct three_pools {
    weft_pool *a, *b, *c;
    _Atomic int result;
} three_pools;

static void destroy_a3(void *arg) {
    three_pools *p = arg;
    atomic_store(&p->result, weft_pool_destroy(p->a));
}

static void run_in_c(void *arg) {
    weft_run(((three_pools *)arg)->c, destroy_a3, arg);
}

static void run_in_b3(void *arg) {
    weft_run(((three_pools *)arg)->b, run_in_c, arg);
}

TEST(destroy_through_two_pools) {
    three_pools p = {.result = -1};
    CHECK_EQ(weft_pool_create(&p.a, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_pool_create(&p.b, &(weft_config){.threads = 1}), 0);
    CHECK_EQ(weft_pool_create(&p.c, &(weft_config){.threads = 1}), 0);
    weft_run(p.a, run_in_b3, &p);
    CHECK_EQ(atomic_load(&p.result), EDEADLK);
    CHECK_EQ(weft_pool_destroy(p.c), 0);
    CHECK_EQ(weft_pool_destroy(p.b), 0);
    CHECK_EQ(weft_pool_destroy(p.a), 0);
}

/* The destroying job runs in B as a scope job that another worker of B may
 * steal, while A's job waits for the scope. */
static void scope_body_destroy_a(weft_scope *scope, void *arg) {
    for (int i = 0; i < 8; i++)
        CHECK_EQ(weft_scope_spawn(scope, destroy_a, arg), 0);
}

static void scope_in_b(void *arg) {
    two_pools *p = arg;
    weft_scope_run(p->b, scope_body_destroy_a, p);
}

TEST(destroy_from_stolen_job_through_another_pool) {
    for (int round = 0; round < scaled(20); round++) {
        two_pools p = {.result = -1};
        CHECK_EQ(weft_pool_create(&p.a, &(weft_config){.threads = 2}), 0);
        CHECK_EQ(weft_pool_create(&p.b, &(weft_config){.threads = 3}), 0);
        weft_run(p.a, scope_in_b, &p);
        CHECK_EQ(atomic_load(&p.result), EDEADLK);
        CHECK_EQ(weft_pool_destroy(p.b), 0);
        CHECK_EQ(weft_pool_destroy(p.a), 0);
    }
}

/* Not a deadlock: a job of B that no job of A waits for may destroy A, and
 * destroy then waits for A's work as usual. */
static void *destroy_a_from_b(void *arg) {
    two_pools *p = arg;
    weft_run(p->b, destroy_a, p);
    return NULL;
}

TEST(destroy_from_unrelated_job_of_another_pool) {
    two_pools p = {.result = -1};
    CHECK_EQ(weft_pool_create(&p.a, &(weft_config){.threads = 2}), 0);
    CHECK_EQ(weft_pool_create(&p.b, &(weft_config){.threads = 2}), 0);
    atomic_store(&counter, 0);
    CHECK_EQ(weft_spawn(p.a, bump, NULL), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, destroy_a_from_b, &p), 0);
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&p.result), 0);
    CHECK_EQ(atomic_load(&counter), 1);
    CHECK_EQ(weft_pool_destroy(p.b), 0);
}
