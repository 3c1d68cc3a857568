/* SPDX-License-Identifier: MIT */
/* weft_join and weft_run: deep nesting, fib, which pool NULL means, and
 * frames taken by force. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "check.h"
#include "pools.h"
#include "spinners.h"
#include "jobs.h"
#include "weft.h"

#include "os/fence.h"
#include "core/frame.h"
#include "core/current.h"

typedef struct deep {
    long depth;
    long leaves;
    double spin_us; /* the innermost A spins this long without calling weft */
} deep;

static void spin_us(double us) {
    double end = check_now() + us * 1e-6;
    while (check_now() < end) {
    }
}

static void leaf(void *arg) {
    ((deep *)arg)->leaves = 1;
}

static void nest(void *arg) {
    deep *d = arg;
    if (d->depth == 0) {
        spin_us(d->spin_us);
        d->leaves = 1;
        return;
    }
    deep a = {d->depth - 1, 0, d->spin_us}, b = {0, 0, 0};
    weft_join(nest, &a, leaf, &b);
    d->leaves = a.leaves + b.leaves;
}

TEST(join_nests_ten_thousand_deep) {
    deep d = {10000, 0, 0};
    weft_join(nest, &d, nothing, NULL); /* from outside: the default pool */
    CHECK_EQ(d.leaves, 10001);
    weft_pool *pool = make_pool(2);
    deep e = {10000, 0, 0};
    weft_run(pool, nest, &e);
    CHECK_EQ(e.leaves, 10001);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(join_computes_fib) {
    weft_pool *pool = make_pool(4);
    fib f = {scaled(1) == 1 ? 27 : 22, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, f.n == 27 ? 196418 : 17711);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* fib through the library's out-of-line weft_join (C++, FFI, programs built
 * with WEFT_NO_INLINE_JOIN), which runs the same protocol as the inline one,
 * the two mixed on one worker's chain of frames. */
static void fib_called(void *arg) {
    fib *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
    if (f->n % 2)
        (weft_join)(fib_called, &a, fib_called, &b);
    else
        weft_join(fib_called, &a, fib_called, &b);
    f->r = a.r + b.r;
}

TEST(join_out_of_line_and_inline_mix) {
    weft_pool *pool = make_waiting_pool(4); /* every join on a worker */
    fib f = {scaled(1) == 1 ? 25 : 20, 0};
    weft_run(pool, fib_called, &f);
    CHECK_EQ(f.r, f.n == 25 ? 75025 : 6765);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void on_worker(void *arg) {
    *(int *)arg = weft_thread_index();
}

/* NULL means the calling thread's own pool on a worker, the default elsewhere. */
static void null_is_here(void *arg) {
    weft_pool *pool = arg;
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(pool));
    int idx = -2;
    weft_run(NULL, on_worker, &idx); /* inline, on this very worker */
    CHECK_EQ(idx, weft_thread_index());
    weft_stats before, after;
    weft_pool_stats(NULL, &before);
    weft_pool_stats(pool, &after);
    CHECK(before.jobs <= after.jobs); /* the same pool's counters */
}

TEST(null_means_the_current_pool) {
    weft_pool *pool = make_pool(3);
    weft_run(pool, null_is_here, pool);
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(weft_pool_default()));
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* From outside, the work runs in the pool: on the caller, in its first
 * caller slot (threads + contexts + 0), or on a worker if callers wait. */
TEST(run_places_work_in_the_pool) {
    int idx = -2;
    weft_join(on_worker, &idx, nothing, NULL);
    CHECK_EQ(idx, (int)weft_pool_threads(NULL));
    CHECK_EQ(weft_thread_index(), -1); /* an outside thread again */
    weft_pool *pool = make_pool(2);
    idx = -2;
    weft_run(pool, on_worker, &idx);
    CHECK_EQ(idx, 2);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    pool = make_waiting_pool(2);
    idx = -2;
    weft_run(pool, on_worker, &idx);
    CHECK(idx == 0 || idx == 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- frames taken by force, and published ------------------------------- */

/* A tree of joins whose leaves spin without calling weft, some long enough
 * that an idle worker takes a private frame by force: every leaf runs once. */
#define TREE_DEPTH 10

typedef struct tree {
    _Atomic int *runs; /* one count per leaf */
    unsigned id;       /* this subtree's first leaf */
    int depth;
    bool layout2; /* joined as a binary built against 0.3.0 to 0.3.3 joins */
} tree;

static void join_layout2(weft_fn *a, void *a_arg, weft_fn *b, void *b_arg);

static void tree_job(void *arg) {
    tree *t = arg;
    if (t->depth == 0) {
        atomic_fetch_add(&t->runs[t->id], 1);
        spin_us(t->id % 7 == 0 ? 200 : t->id % 3); /* a long A now and then */
        return;
    }
    tree a = {t->runs, t->id, t->depth - 1, t->layout2};
    tree b = {t->runs, t->id + (1u << (t->depth - 1)), t->depth - 1, t->layout2};
    if (t->layout2)
        join_layout2(tree_job, &a, tree_job, &b);
    else
        weft_join(tree_job, &a, tree_job, &b);
}

static void tree_rounds(bool layout2) {
    static _Atomic int runs[1u << TREE_DEPTH];
    for (unsigned threads = 2; threads <= 8; threads *= 2) {
        weft_pool *pool = make_pool(threads);
        for (int round = 0; round < scaled(30); round++) {
            for (unsigned i = 0; i < 1u << TREE_DEPTH; i++)
                atomic_store(&runs[i], 0);
            tree t = {runs, 0, TREE_DEPTH, layout2};
            weft_run(pool, tree_job, &t);
            for (unsigned i = 0; i < 1u << TREE_DEPTH; i++)
                CHECK_EQ(atomic_load(&runs[i]), 1);
        }
        weft_stats st;
        weft_pool_stats(pool, &st);
        if (threads == 2)
            fprintf(stderr, "forced steals: %llu\n", (unsigned long long)st.forced_steals);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(join_b_runs_once_while_frames_are_taken) {
    tree_rounds(false);
}

/* The join of a binary built against 0.3.0 to 0.3.3 (join layout 2): B's
 * argument written, never the self mark, and layout 2's names for the cold
 * paths, which the library still exports. */
#ifdef WEFT__JOIN_FENCE_LIGHT
#define layout2_fork_cold weft__join_fork_cold_2m
#define layout2_pop_cold  weft__join_pop_cold_2m
#else
#define layout2_fork_cold weft__join_fork_cold_2s
#define layout2_pop_cold  weft__join_pop_cold_2s
#endif
void layout2_fork_cold(struct weft__worker_head *w, struct weft__join_frame *fr);
void layout2_pop_cold(struct weft__worker_head *w, struct weft__join_frame *fr);
static void join_layout2(weft_fn *a, void *a_arg, weft_fn *b, void *b_arg) {
    struct weft__worker_head *w = weft__tls_worker;
    struct weft__join_frame fr;
    fr.fork.fn = b;
    fr.fork.arg = b_arg;
    struct weft__join_frame *prev = atomic_load_explicit(&w->frames, memory_order_relaxed);
    fr.fork.prev = (uintptr_t)prev;
    atomic_store_explicit(&w->frames, &fr, memory_order_release);
    uintptr_t c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if ((c & ~(uintptr_t)WEFT__CLAIM_BITS) == (uintptr_t)prev || (c & WEFT__CLAIM_BITS))
        layout2_fork_cold(w, &fr);
    a(a_arg);
    atomic_store_explicit(&w->frames, prev, memory_order_release);
    WEFT__JOIN_FENCE();
    c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if (!(c & WEFT__CLAIM_BITS) && c != (uintptr_t)&fr)
        b(b_arg);
    else
        layout2_pop_cold(w, &fr);
}

TEST(a_layout_2_binary_joins_on_this_library) {
    tree_rounds(true);
}

/* A deep chain: the innermost A spins while 2000 frames wait under it, so
 * the idle worker takes them by force one by one, each after a walk down the
 * whole chain, and the owner publishes what is asked for when A returns. */
TEST(join_takes_frames_from_a_deep_chain) {
    weft_pool *pool = make_pool(2);
    deep d = {2000, 0, 20000};
    weft_run(pool, nest, &d);
    CHECK_EQ(d.leaves, 2001);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* A waits for what B does, on a pool of one worker, whose wait must run B
 * itself: nobody else takes a private frame there. At the top of the
 * worker's job (the episode's first frame, published because nothing else
 * is), and one join deeper, where B's frame is private and the waiting
 * worker publishes it for itself (frame.c, weft__frame_publish_own). */
static void wait_event(void *arg) {
    weft_event_wait(arg);
}

static void signal_event(void *arg) {
    weft_event_signal(arg);
}

static void consumer_and_producer(void *arg) {
    weft_join(wait_event, arg, signal_event, arg);
}

static void one_join_deeper(void *arg) {
    weft_join(consumer_and_producer, arg, nothing, NULL);
}

TEST(join_a_waits_for_b_on_a_lone_worker) {
    weft_fn *roots[] = {consumer_and_producer, one_join_deeper};
    for (int i = 0; i < 4; i++) { /* each root under each sleep protocol */
        weft_config c = {.threads = 1,
                         .callers_wait = true, /* the root on the worker */
                         .wake = i < 2 ? WEFT_WAKE_TARGETED : WEFT_WAKE_ALL};
        weft_pool *pool;
        CHECK_EQ(weft_pool_create(&pool, &c), 0);
        weft_event *e;
        CHECK_EQ(weft_event_create(&e, pool, 1), 0);
        weft_run(pool, roots[i % 2], e);
        CHECK(weft_event_is_set(e));
        weft_event_destroy(e);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* A forced look that finds the claim word locked (the owner in its cold
 * path, or another thief's walk) waits for the lock and takes the frame; it
 * does not report a lost race, which sends the thief straight back for
 * another forced sweep (worker.c, private_check): a storm of them starved
 * the holder of its CPU in oversubscribed WEFT_LEAVE_FAST pools
 * (docs/performance.md, "Join frames"). A victim without a thread: one
 * private frame, its lock held until the helper lets go. */
static weft__worker locked_victim; /* static: aligned, its words zero */

static void *unlock_soon(void *arg) {
    (void)arg;
    spin_us(20000); /* the thief reaches the lock first (not needed to pass) */
    atomic_fetch_and(&locked_victim.h.claim, ~(uintptr_t)WEFT__CLAIM_LOCK);
    return NULL;
}

TEST(forced_frame_steal_waits_for_a_held_lock) {
    weft__fence_init();
    if (!weft__fence_heavy_available())
        return; /* no forced steals without the barrier (fence.h) */
    weft__frame f = {.fork = {.fn = nothing, .prev = 0}}; /* the oldest, normal priority */
    atomic_store(&locked_victim.h.frames, (struct weft__join_frame *)&f);
    atomic_store(&locked_victim.h.claim, (uintptr_t)WEFT__CLAIM_LOCK);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, unlock_soon, NULL), 0);
    weft__job *job = NULL;
    bool more = true;
    weft_priority prio = WEFT_PRIORITY_HIGH;
    CHECK_EQ(weft__frame_steal(&locked_victim, &job, &more, &prio), WEFT__STEAL_OK);
    CHECK(job == &f.job);
    CHECK(!more);
    CHECK_EQ(prio, WEFT_PRIORITY_NORMAL);
    /* Taken: claim names it, unlocked, with the thief's request raised. */
    CHECK_EQ(atomic_load(&locked_victim.h.claim), (uintptr_t)&f | WEFT__CLAIM_REQUEST);
    CHECK_EQ(pthread_join(t, NULL), 0);
}

/* ---- a waiting thread runs what it owns ---------------------------------
 *
 * A joins B; A waits (an event, or a nested scope whose job waits) for what
 * B does; B's frame is private, one join below the top of the waiting
 * thread's work. Every other worker is busy in a job that spins until the
 * waiter is done, so nobody but the waiting thread can run B: its wait must
 * run it, whatever kind of thread waits (a worker, an outside caller in its
 * caller slot, a context), in pools of one to three workers, under both
 * sleep protocols. Without that the case hangs (ctest's timeout). */
typedef struct owned {
    weft_event *e;
    bool nested_scope; /* A waits in a scope's end, not in the event */
} owned;

static void wait_in_job(weft_scope *scope, void *arg) {
    CHECK_EQ(weft_scope_spawn(scope, wait_event, arg), 0);
}

static void owned_a(void *arg) {
    owned *o = arg;
    if (o->nested_scope)
        weft_scope_run(NULL, wait_in_job, o->e);
    else
        weft_event_wait(o->e);
}

static void owned_b(void *arg) {
    weft_event_signal(((owned *)arg)->e);
}

static void owned_join(void *arg) {
    weft_join(owned_a, arg, owned_b, arg);
}

/* B's frame private: the top join's frame is the episode's first, which
 * may be published; this one is not. */
static void owned_root(void *arg) {
    weft_join(owned_join, arg, nothing, NULL);
    spinners_stop_all(); /* the waiter is done */
}

enum owner_kind { OWNER_WORKER, OWNER_CALLER, OWNER_CONTEXT };

static void run_owned(enum owner_kind kind, unsigned threads, weft_wake wake, bool nested) {
    weft_config c = {.threads = threads,
                     .wake = wake,
                     .callers_wait = kind == OWNER_WORKER,
                     .callers = kind == OWNER_CALLER, /* with either protocol */
                     .contexts = kind == OWNER_CONTEXT,
                     /* the spinners hold CPU budget slots for good: a worker
                      * woken for the root would wait for one once a second
                      * pool (the default) exists */
                     .outside_budget = true};
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &c), 0);
    /* Every worker the root does not run on is busy. */
    unsigned busy = kind == OWNER_WORKER ? threads - 1 : threads;
    spinners_start(pool, busy);
    owned o = {.nested_scope = nested};
    CHECK_EQ(weft_event_create(&o.e, pool, 1), 0);
    if (kind == OWNER_CONTEXT) {
        weft_context *ctx;
        CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
        owned_root(&o);
        weft_context_release(ctx);
    } else {
        weft_run(pool, owned_root, &o);
    }
    CHECK(weft_event_is_set(o.e));
    weft_event_destroy(o.e);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void owned_every_pool(enum owner_kind kind) {
    for (unsigned threads = 1; threads <= 3; threads++)
        for (int wake = 0; wake < 2; wake++)
            for (int nested = 0; nested < 2; nested++)
                run_owned(kind, threads, wake ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED, nested);
}

TEST(a_waiting_worker_runs_its_own_b) {
    owned_every_pool(OWNER_WORKER);
}

TEST(a_waiting_caller_runs_its_own_b) {
    owned_every_pool(OWNER_CALLER);
}

TEST(a_waiting_context_runs_its_own_b) {
    owned_every_pool(OWNER_CONTEXT);
}

/* B runs in the group and at the priority of the job that forked it, though
 * a fork writes neither (the library stamps them when they change): here A,
 * before B leaves its frame, enters a scope that it cancels, at the other
 * priority, and waits there until B has run, by A's own thread (a wait runs
 * its own frames) or by another worker, who took it when asked or by force.
 * A B stamped with A's group would see itself cancelled, or be skipped and
 * leave A waiting (ctest's timeout). */
typedef struct tagged {
    weft_event *e;
    weft_priority forked_at;
    _Atomic unsigned wrong;
} tagged;

static void tagged_b(void *arg) {
    tagged *t = arg;
    weft__worker *w = weft__current_worker();
    if (weft_cancelled() || !w || w->h.prio != t->forked_at)
        atomic_fetch_add(&t->wrong, 1);
    weft_event_signal(t->e);
}

static void tagged_scope(weft_scope *scope, void *arg) {
    weft_scope_cancel(scope);
    weft_event_wait(((tagged *)arg)->e);
}

static void tagged_a_retagged(void *arg) {
    weft_scope_run(NULL, tagged_scope, arg);
}

static void tagged_a(void *arg) {
    tagged *t = arg;
    weft_priority other =
        t->forked_at == WEFT_PRIORITY_HIGH ? WEFT_PRIORITY_NORMAL : WEFT_PRIORITY_HIGH;
    CHECK_EQ(weft_run_priority(NULL, tagged_a_retagged, arg, other), 0);
}

static void tagged_join(void *arg) {
    weft_join(tagged_a, arg, tagged_b, arg);
}

/* As owned_root: B's frame private, not the episode's first. */
static void tagged_root(void *arg) {
    weft_join(tagged_join, arg, nothing, NULL);
}

TEST(b_keeps_the_group_and_priority_it_was_forked_under) {
    for (unsigned threads = 1; threads <= 3; threads++) {
        for (int wake = 0; wake < 2; wake++) {
            weft_config c = {.threads = threads, .wake = wake ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED};
            weft_pool *pool;
            CHECK_EQ(weft_pool_create(&pool, &c), 0);
            for (int i = 0; i < scaled(20); i++) {
                tagged t = {.forked_at = i % 2 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_NORMAL};
                CHECK_EQ(weft_event_create(&t.e, pool, 1), 0);
                CHECK_EQ(weft_run_priority(pool, tagged_root, &t, t.forked_at), 0);
                CHECK(weft_event_is_set(t.e));
                CHECK_EQ(atomic_load(&t.wrong), 0);
                weft_event_destroy(t.e);
            }
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
    }
}
