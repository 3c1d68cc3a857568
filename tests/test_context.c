/* SPDX-License-Identifier: MIT */
/* Contexts (seed 003): identity and errors, participation in join, for,
 * scope, events and graphs; a busy pool leaves the whole workload to the
 * submitter; idle workers help; jobs only ever run on their submitter or on
 * workers; per-slot data is never used by two threads at once. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "weft.h"

enum { THREADS = 2, CONTEXTS = 2 };

static weft_pool *make_pool(weft_wake wake) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(
                 &pool, &(weft_config){.threads = THREADS, .contexts = CONTEXTS, .wake = wake}),
             0);
    return pool;
}

static void *acquire_and_hold(void *arg) {
    weft_pool *pool = arg;
    weft_context *c;
    if (weft_context_acquire(pool, &c) != 0)
        return (void *)1;
    int idx = weft_thread_index();
    check_sleep_us(20000);
    weft_context_release(c);
    return (void *)(intptr_t)(idx >= THREADS && idx < THREADS + CONTEXTS ? 0 : 2);
}

static void try_acquire_on_worker(void *arg) {
    weft_context *c;
    CHECK_EQ(weft_context_acquire((weft_pool *)arg, &c), EINVAL);
}

TEST(acquire_release_and_errors) {
    weft_pool *pool = make_pool(WEFT_WAKE_TARGETED);
    CHECK_EQ(weft_pool_slots(pool),
             THREADS + CONTEXTS + WEFT_CALLERS_DEFAULT + WEFT_SPARES_DEFAULT);
    weft_context *c;
    CHECK_EQ(weft_context_acquire(pool, NULL), EINVAL);
    CHECK_EQ(weft_context_acquire(pool, &c), 0);
    int me = weft_thread_index();
    CHECK(me >= THREADS && me < THREADS + CONTEXTS);
    weft_context *again;
    CHECK_EQ(weft_context_acquire(pool, &again), EINVAL); /* already holds one */
    CHECK_EQ(weft_pool_destroy(pool), EBUSY);             /* still acquired */
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, acquire_and_hold, pool);
    void *r[2];
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &r[i]);
    /* One of the two got the remaining slot, the other found none. */
    CHECK((r[0] == (void *)0 && r[1] == (void *)1) || (r[0] == (void *)1 && r[1] == (void *)0) ||
          (r[0] == (void *)0 && r[1] == (void *)0));
    weft_run(pool, try_acquire_on_worker, pool);
    weft_context_release(c);
    CHECK_EQ(weft_thread_index(), -1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Where did each piece run? */
typedef struct where {
    int me; /* the context's slot */
    _Atomic int on_me, on_workers, elsewhere;
    long per_slot[THREADS + CONTEXTS]; /* plain: a slot is one thread's */
    _Atomic int *hold;                 /* pieces spin while set */
} where;

static void note(where *w) {
    int idx = weft_thread_index();
    if (idx == w->me)
        atomic_fetch_add(&w->on_me, 1);
    else if (idx >= 0 && idx < THREADS)
        atomic_fetch_add(&w->on_workers, 1);
    else
        atomic_fetch_add(&w->elsewhere, 1);
    w->per_slot[idx]++;
}

static void piece(size_t b, size_t e, void *arg) {
    for (size_t i = b; i < e; i++) {
        note(arg);
        check_sleep_us(200);
    }
}

/* The same, but the submitter's first piece (index 0: the leftmost leaf, run
 * where the loop was called) waits until a worker has taken a piece: idle
 * workers must help while the submitter is busy. Waited for, not assumed of
 * the loop's duration, which a loaded machine may spend with the woken
 * workers off their CPUs. */
static void piece_awaiting_help(size_t b, size_t e, void *arg) {
    where *w = arg;
    if (b == 0 && weft_thread_index() == w->me) {
        double deadline = check_now() + 10;
        while (atomic_load(&w->on_workers) == 0) {
            CHECK(check_now() < deadline); /* the idle workers did not help */
            check_sleep_us(200);
        }
    }
    piece(b, e, arg);
}

static _Atomic int blocked_workers;

static void block_worker(void *arg) {
    atomic_fetch_add(&blocked_workers, 1);
    while (atomic_load((_Atomic int *)arg))
        check_sleep_us(200);
}

TEST(busy_pool_leaves_the_work_to_the_submitter) {
    weft_pool *pool = make_pool(WEFT_WAKE_TARGETED);
    _Atomic int hold = 1;
    atomic_store(&blocked_workers, 0);
    for (int i = 0; i < THREADS; i++)
        CHECK_EQ(weft_spawn(pool, block_worker, &hold), 0);
    while (atomic_load(&blocked_workers) < THREADS)
        check_sleep_us(100);
    weft_context *c;
    CHECK_EQ(weft_context_acquire(pool, &c), 0);
    where w = {.me = weft_thread_index()};
    weft_for(pool, 0, 40, 1, piece, &w); /* completes with every worker blocked */
    CHECK_EQ(atomic_load(&w.on_me), 40);
    CHECK_EQ(atomic_load(&w.on_workers), 0);
    weft_context_release(c);
    atomic_store(&hold, 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void foreign_job(void *arg) {
    where *w = arg;
    if (weft_thread_index() == w->me)
        atomic_fetch_add(&w->elsewhere, 1); /* a context must not run it */
}

TEST(idle_workers_help_and_jobs_stay_home) {
    for (int wake = 0; wake < 2; wake++) {
        weft_pool *pool = make_pool(wake ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED);
        weft_context *c;
        CHECK_EQ(weft_context_acquire(pool, &c), 0);
        where w = {.me = weft_thread_index()};
        where outside = {.me = w.me};
        for (int i = 0; i < 20; i++) /* injected work: never the context's */
            CHECK_EQ(weft_spawn(pool, foreign_job, &outside), 0);
        weft_for(pool, 0, 200, 1, piece_awaiting_help, &w);
        CHECK_EQ(atomic_load(&w.on_me) + atomic_load(&w.on_workers), 200);
        CHECK_EQ(atomic_load(&w.elsewhere), 0);
        CHECK(atomic_load(&w.on_workers) > 0); /* idle workers took some */
        CHECK(atomic_load(&w.on_me) > 0);      /* and the submitter did its part */
        long total = 0;
        for (int s = 0; s < THREADS + CONTEXTS; s++)
            total += w.per_slot[s];
        CHECK_EQ(total, 200);
        weft_context_release(c);
        CHECK_EQ(weft_pool_destroy(pool), 0);
        CHECK_EQ(atomic_load(&outside.elsewhere), 0);
    }
}

/* Events, scopes and graphs on a context. */
static void signal_it(void *arg) {
    weft_event_signal((weft_event *)arg);
}

static void spawn_some(weft_scope *s, void *arg) {
    for (int i = 0; i < 50; i++)
        CHECK_EQ(weft_scope_spawn(s, (weft_fn *)note, arg), 0);
}

static void node(void *arg) {
    note(arg);
}

static void *context_thread(void *arg) {
    weft_pool *pool = arg;
    weft_context *c;
    while (weft_context_acquire(pool, &c) == EBUSY)
        check_sleep_us(100);
    where w = {.me = weft_thread_index()};
    for (int round = 0; round < scaled(20); round++) {
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 10), 0);
        for (int i = 0; i < 10; i++)
            CHECK_EQ(weft_spawn(pool, signal_it, e), 0);
        weft_event_wait(e);
        weft_event_destroy(e);
        weft_scope_run(pool, spawn_some, &w);
        weft_graph *g;
        weft_node *a, *b;
        CHECK_EQ(weft_graph_create(&g), 0);
        CHECK_EQ(weft_graph_add(g, node, &w, &a), 0);
        CHECK_EQ(weft_graph_add(g, node, &w, &b), 0);
        CHECK_EQ(weft_graph_edge(g, a, b), 0);
        CHECK_EQ(weft_graph_run(g, pool), 0);
        weft_graph_destroy(g);
    }
    CHECK_EQ(atomic_load(&w.elsewhere), 0);
    CHECK_EQ(atomic_load(&w.on_me) + atomic_load(&w.on_workers), scaled(20) * 52);
    weft_context_release(c);
    return NULL;
}

TEST(events_scopes_and_graphs_on_contexts) {
    weft_pool *pool = make_pool(WEFT_WAKE_TARGETED);
    pthread_t t[3]; /* three threads share two contexts */
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, context_thread, pool);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
