/* SPDX-License-Identifier: MIT */
/* Typed tasks (WEFT_TASK, weft/join.h): results by value on every path
 * (inline, taken by a thief, run by a waiting owner, from outside every
 * pool, with a serial head), open forks nested, exactly once while frames
 * are taken by force, the forking job's group, and a wait between fork and
 * sync that runs the forked call itself; each for WEFT_FORK/WEFT_SYNC and
 * for WEFT_JOIN. */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"
#include "pools.h"
#include "spinners.h"
#include "weft.h"

/* ---- fib, with the argument and result by value ------------------------- */

WEFT_TASK(long, fib, int, n) {
    if (n < 2)
        return n;
    WEFT_FORK(fib, t, n - 1);
    long k = WEFT_CALL(fib, n - 2);
    return WEFT_SYNC(fib, t) + k;
}

static long fib_serial(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

typedef struct fib_call {
    int n;
    long r;
} fib_call;

static void fib_root(void *arg) {
    fib_call *f = arg;
    f->r = fib(f->n);
}

/* The body with a serial head, as where no pool can run it (join.h). */
static long fib_serial_head(int n) {
    struct weft__worker_head s;
    weft__serial_head_init(&s);
    return weft__task_body_fib(&s, NULL, n);
}

TEST(task_computes_fib_in_pools_and_outside) {
    int n = scaled(1) == 1 ? 27 : 21;
    CHECK_EQ(fib(n), fib_serial(n)); /* outside every pool: on the default pool */
    CHECK_EQ(fib_serial_head(n), fib_serial(n));
    for (unsigned threads = 1; threads <= 4; threads++) {
        weft_pool *pool = threads % 2 ? make_pool(threads) : make_waiting_pool(threads);
        fib_call f = {n, 0};
        weft_run(pool, fib_root, &f);
        CHECK_EQ(f.r, fib_serial(n));
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* ---- several arguments ---------------------------------------------------
 * Up to six, each its own parameter: a four-argument sum split in halves,
 * a declaration and definition apart (mutual recursion), and a void task
 * of six whose arguments must all arrive intact on every path. */

WEFT_TASK_DECL(long, sum_odd_level, const long *, size_t, size_t, long);

static long leaf_sum(const long *a, size_t lo, size_t hi, long bias) {
    long s = 0;
    for (size_t i = lo; i < hi; i++)
        s += a[i] + bias;
    return s;
}

WEFT_TASK(long, sum_even_level, const long *, a, size_t, lo, size_t, hi, long, bias) {
    if (hi - lo <= 3)
        return leaf_sum(a, lo, hi, bias);
    size_t mid = lo + (hi - lo) / 2;
    WEFT_FORK(sum_odd_level, t, a, mid, hi, bias);
    long k = WEFT_CALL(sum_odd_level, a, lo, mid, bias);
    return k + WEFT_SYNC(sum_odd_level, t);
}

WEFT_TASK_DEF(long, sum_odd_level, const long *, a, size_t, lo, size_t, hi, long, bias) {
    if (hi - lo <= 3)
        return WEFT_CALL(sum_even_level, a, lo, hi, bias);
    size_t mid = lo + (hi - lo) / 2;
    WEFT_FORK(sum_even_level, t, a, mid, hi, bias);
    long k = WEFT_CALL(sum_even_level, a, lo, mid, bias);
    return k + WEFT_SYNC(sum_even_level, t);
}

#define SIX_LEAVES 729 /* 3^6 */
static _Atomic int six_seen[SIX_LEAVES];

/* A leaf's index in base 3 from its five digits and the level left; the
 * digits pass through every fork and sync as separate arguments. */
WEFT_VOID_TASK(six, int, d1, int, d2, int, d3, int, d4, int, d5, int, level) {
    if (level == 0) {
        atomic_fetch_add(&six_seen[(((d1 * 3 + d2) * 3 + d3) * 3 + d4) * 3 + d5], 1);
        return;
    }
    /* Shift a new digit in (the oldest falls out): after five levels the
     * five digits name the leaf. */
    WEFT_FORK(six, t0, d2, d3, d4, d5, 0, level - 1);
    WEFT_FORK(six, t1, d2, d3, d4, d5, 1, level - 1);
    WEFT_CALL(six, d2, d3, d4, d5, 2, level - 1);
    WEFT_SYNC(six, t1);
    WEFT_SYNC(six, t0);
}

/* Five arguments: the body reads the worker's newest frame where it starts
 * instead of taking it as a parameter (weft/join.h, WEFT__TOP_T5); a
 * WEFT_JOIN whose offered half runs as a loop, and a count of the calls. */
WEFT_TASK(long, sum_five, const long *, a, size_t, lo, size_t, hi, long, bias, long *, calls) {
    /* Relaxed: a count, read after weft_run, which orders it. */
    __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED);
    if (hi - lo <= 3) {
        long s = 0;
        for (size_t i = lo; i < hi; i++)
            s += a[i] + bias;
        return s;
    }
    size_t mid = lo + (hi - lo) / 2;
    long x, y;
    WEFT_JOIN(x, sum_five, (a, lo, mid, bias, calls), y, sum_five, (a, mid, hi, bias, calls));
    return x + y;
}

typedef struct sums {
    const long *a;
    size_t n;
    long r, r5, calls;
} sums;

static void sums_root(void *arg) {
    sums *s = arg;
    s->r = sum_even_level(s->a, 0, s->n, 1);
    s->r5 = sum_five(s->a, 0, s->n, 1, &s->calls);
    six(0, 0, 0, 0, 0, 5);
}

TEST(task_with_several_arguments) {
    enum { N = 1000 };
    static long a[N];
    long want = 0;
    for (long i = 0; i < N; i++) {
        a[i] = i * 7 % 13;
        want += a[i] + 1;
    }
    struct weft__worker_head serial;
    weft__serial_head_init(&serial);
    CHECK_EQ(weft__task_body_sum_odd_level(&serial, NULL, a, 0, N, 1), want); /* no pool */
    CHECK_EQ(sum_even_level(a, 0, N, 1), want); /* outside: the default pool */
    long serial_calls = 0;
    CHECK_EQ(weft__task_body_sum_five(&serial, NULL, a, 0, N, 1, &serial_calls), want);
    CHECK(serial_calls > N / 4);
    for (unsigned threads = 1; threads <= 4; threads++) {
        weft_pool *pool = threads % 2 ? make_pool(threads) : make_waiting_pool(threads);
        for (int i = 0; i < SIX_LEAVES; i++)
            atomic_store(&six_seen[i], 0);
        sums s = {a, N, 0, 0, 0};
        weft_run(pool, sums_root, &s);
        CHECK_EQ(s.r, want);
        CHECK_EQ(s.r5, want);
        CHECK_EQ(s.calls, serial_calls); /* every call once: none lost, none twice */
        /* Five levels of three: each of the 3^5 five-digit leaves once. */
        for (int i = 0; i < SIX_LEAVES; i++)
            CHECK_EQ(atomic_load(&six_seen[i]), i < 243 ? 1 : 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* ---- several open forks, a struct argument, a void task ----------------- */

typedef struct span {
    _Atomic int *hits;
    unsigned lo, hi;
} span;

/* Three forks open at once, synced in reverse: each quarter (the last
 * inline) visited once. */
WEFT_VOID_TASK(visit, span, s) {
    unsigned n = s.hi - s.lo;
    if (n < 4) {
        for (unsigned i = s.lo; i < s.hi; i++)
            atomic_fetch_add(&s.hits[i], 1);
        return;
    }
    unsigned q = n / 4;
    WEFT_FORK(visit, t1, ((span){s.hits, s.lo, s.lo + q}));
    WEFT_FORK(visit, t2, ((span){s.hits, s.lo + q, s.lo + 2 * q}));
    WEFT_FORK(visit, t3, ((span){s.hits, s.lo + 2 * q, s.lo + 3 * q}));
    WEFT_CALL(visit, ((span){s.hits, s.lo + 3 * q, s.hi}));
    WEFT_SYNC(visit, t3);
    WEFT_SYNC(visit, t2);
    WEFT_SYNC(visit, t1);
}

static void visit_root(void *arg) {
    visit(*(span *)arg);
}

TEST(task_open_forks_sync_in_reverse) {
    enum { N = 1 << 14 };
    static _Atomic int hits[N];
    for (unsigned threads = 1; threads <= 8; threads *= 2) {
        weft_pool *pool = make_pool(threads);
        for (int round = 0; round < scaled(20); round++) {
            for (unsigned i = 0; i < N; i++)
                atomic_store(&hits[i], 0);
            span s = {hits, 0, N};
            weft_run(pool, visit_root, &s);
            for (unsigned i = 0; i < N; i++)
                CHECK_EQ(atomic_load(&hits[i]), 1);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* ---- frames taken by force ---------------------------------------------- */

/* Leaves that spin without calling weft, some long enough that an idle
 * worker takes a private frame by force: every leaf once, every sum right. */
static void spin_us(double us) {
    double end = check_now() + us * 1e-6;
    while (check_now() < end) {
    }
}

static _Atomic int leaf_runs[1 << 10];

/* id in the high bits, depth in the low 8. */
WEFT_TASK(long, tree, unsigned, id_depth) {
    unsigned id = id_depth >> 8, depth = id_depth & 0xff;
    if (depth == 0) {
        atomic_fetch_add(&leaf_runs[id], 1);
        spin_us(id % 7 == 0 ? 200 : id % 3);
        return id;
    }
    WEFT_FORK(tree, t, ((id + (1u << (depth - 1))) << 8) | (depth - 1));
    long a = WEFT_CALL(tree, (id << 8) | (depth - 1));
    return a + WEFT_SYNC(tree, t);
}

static void tree_root(void *arg) {
    *(long *)arg = tree(10);
}

TEST(task_runs_once_while_frames_are_taken) {
    for (unsigned threads = 2; threads <= 8; threads *= 2) {
        weft_pool *pool = make_pool(threads);
        for (int round = 0; round < scaled(20); round++) {
            for (unsigned i = 0; i < 1u << 10; i++)
                atomic_store(&leaf_runs[i], 0);
            long sum = 0;
            weft_run(pool, tree_root, &sum);
            CHECK_EQ(sum, (long)((1u << 10) * ((1u << 10) - 1) / 2));
            for (unsigned i = 0; i < 1u << 10; i++)
                CHECK_EQ(atomic_load(&leaf_runs[i]), 1);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* ---- the forking job's group -------------------------------------------- */

static _Atomic bool polled_started;

/* Runs on another worker (its forker waits for it to start before it
 * cancels): it belongs to the forking job's scope all the same. */
WEFT_TASK(int, poll_cancel, int, x) {
    atomic_store(&polled_started, true);
    while (!weft_cancelled())
        sched_yield();
    return x + 1;
}

/* The scope's body forks through a task: WEFT_FORK is for task bodies. */
WEFT_TASK(int, fork_then_cancel_task, int, x) {
    WEFT_FORK(poll_cancel, t, x);
    while (!atomic_load(&polled_started))
        sched_yield();
    weft_cancel();
    return WEFT_SYNC(poll_cancel, t);
}

static void fork_then_cancel(weft_scope *scope, void *arg) {
    (void)scope;
    *(int *)arg = fork_then_cancel_task(41);
}

/* body's result, run as a scope on a pool of two. */
static int in_a_scope(void (*body)(weft_scope *scope, void *arg)) {
    weft_pool *pool = make_pool(2);
    atomic_store(&polled_started, false);
    int r = 0;
    weft_scope_run(pool, body, &r);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    return r;
}

TEST(task_belongs_to_the_forking_group) {
    CHECK_EQ(in_a_scope(fork_then_cancel), 42);
}

/* ---- a wait between fork and sync runs the forked call ------------------ */

/* The waiting job's every other worker spins until it is done: only the
 * waiting thread can run the forked call (test_join.c, the same for
 * weft_join). */
WEFT_TASK(int, signal_it, weft_event *, e) {
    weft_event_signal(e);
    return 7;
}

WEFT_VOID_TASK(nothing_task, int, x) {
    (void)x;
}

/* The outer fork is the episode's first (it may be published); the inner
 * one stays private while the event is waited for. The wait publishes
 * both and runs t's call; t stays the worker's newest frame until its
 * sync, so a fork after the wait links over it (weft/join.h, why the
 * body's weft__top stays current). */
WEFT_VOID_TASK(wait_for_own_task, weft_event *, e) {
    WEFT_FORK(nothing_task, outer, 0);
    WEFT_FORK(signal_it, t, e);
    weft_event_wait(e);
    WEFT_FORK(nothing_task, after, 1);
    WEFT_SYNC(nothing_task, after);
    CHECK_EQ(WEFT_SYNC(signal_it, t), 7);
    WEFT_SYNC(nothing_task, outer);
    spinners_stop_all();
}

static void wait_for_own_task_job(void *arg) {
    wait_for_own_task(arg);
}

/* job(e) on pools of one to three threads, on a worker and on a caller,
 * while every other thread of the pool spins until job stops them. */
static void wait_with_the_others_busy(weft_fn *job) {
    for (int kind = 0; kind < 2; kind++) /* on a worker, on a caller */
        for (unsigned threads = 1; threads <= 3; threads++) {
            /* Outside the CPU budget: the spinners hold their slots (a budget
             * binds once the default pool exists too: weft.h). */
            weft_config c = {.threads = threads,
                             .callers_wait = kind == 0,
                             .callers = kind,
                             .outside_budget = true};
            weft_pool *pool;
            CHECK_EQ(weft_pool_create(&pool, &c), 0);
            unsigned busy = kind == 0 ? threads - 1 : threads;
            spinners_start(pool, busy);
            weft_event *e;
            CHECK_EQ(weft_event_create(&e, pool, 1), 0);
            weft_run(pool, job, e);
            CHECK(weft_event_is_set(e));
            weft_event_destroy(e);
            CHECK_EQ(weft_pool_destroy(pool), 0);
        }
}

TEST(task_wait_runs_its_own_fork) {
    wait_with_the_others_busy(wait_for_own_task_job);
}

/* ---- WEFT_JOIN: the same cases, the fork and sync in one statement ------ */

WEFT_TASK(long, fib_join, int, n) {
    if (n < 2)
        return n;
    long a, b;
    WEFT_JOIN(a, fib_join, (n - 2), b, fib_join, (n - 1));
    return a + b;
}

/* Two tasks, four arguments each, joined across: the first call's task is
 * not the offered one's. */
WEFT_TASK_DECL(long, join_odd, const long *, size_t, size_t, long);

WEFT_TASK(long, join_even, const long *, a, size_t, lo, size_t, hi, long, bias) {
    if (hi - lo <= 3)
        return leaf_sum(a, lo, hi, bias);
    size_t mid = lo + (hi - lo) / 2;
    long x, y;
    WEFT_JOIN(x, join_odd, (a, lo, mid, bias), y, join_even, (a, mid, hi, bias));
    return x + y;
}

WEFT_TASK_DEF(long, join_odd, const long *, a, size_t, lo, size_t, hi, long, bias) {
    if (hi - lo <= 3)
        return WEFT_CALL(join_even, a, lo, hi, bias);
    size_t mid = lo + (hi - lo) / 2;
    long x, y;
    WEFT_JOIN(x, join_even, (a, lo, mid, bias), y, join_odd, (a, mid, hi, bias));
    return x + y;
}

/* Void halves whose leaves spin, some long enough that an idle worker takes
 * a private frame by force: every leaf once. */
WEFT_VOID_TASK(tree_join, unsigned, id, unsigned, depth) {
    if (depth == 0) {
        atomic_fetch_add(&leaf_runs[id], 1);
        spin_us(id % 7 == 0 ? 200 : id % 3);
        return;
    }
    WEFT_JOIN_VOID(tree_join, (id, depth - 1), tree_join, (id + (1u << (depth - 1)), depth - 1));
}

typedef struct joins_call {
    int n;
    long fib, sum;
    const long *a;
    size_t len;
} joins_call;

static void joins_root(void *arg) {
    joins_call *c = arg;
    c->fib = fib_join(c->n);
    c->sum = join_even(c->a, 0, c->len, 1);
}

static void tree_join_root(void *arg) {
    (void)arg;
    tree_join(0, 10);
}

TEST(join_computes_in_pools_and_outside) {
    enum { N = 1000 };
    static long a[N];
    long want = 0;
    for (long i = 0; i < N; i++) {
        a[i] = i * 5 % 11;
        want += a[i] + 1;
    }
    int n = scaled(1) == 1 ? 27 : 21;
    CHECK_EQ(fib_join(n), fib_serial(n)); /* outside every pool */
    struct weft__worker_head serial;
    weft__serial_head_init(&serial);
    CHECK_EQ(weft__task_body_fib_join(&serial, NULL, n), fib_serial(n)); /* no pool */
    CHECK_EQ(weft__task_body_join_odd(&serial, NULL, a, 0, N, 1), want);
    for (unsigned threads = 1; threads <= 4; threads++) {
        weft_pool *pool = threads % 2 ? make_pool(threads) : make_waiting_pool(threads);
        joins_call c = {n, 0, 0, a, N};
        weft_run(pool, joins_root, &c);
        CHECK_EQ(c.fib, fib_serial(n));
        CHECK_EQ(c.sum, want);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

TEST(join_runs_once_while_frames_are_taken) {
    for (unsigned threads = 2; threads <= 8; threads *= 2) {
        weft_pool *pool = make_pool(threads);
        for (int round = 0; round < scaled(20); round++) {
            for (unsigned i = 0; i < 1u << 10; i++)
                atomic_store(&leaf_runs[i], 0);
            weft_run(pool, tree_join_root, NULL);
            for (unsigned i = 0; i < 1u << 10; i++)
                CHECK_EQ(atomic_load(&leaf_runs[i]), 1);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* The first call waits for the offered one to start elsewhere, then
 * cancels: the offered call belongs to the joining job's scope. */
WEFT_TASK(int, start_then_cancel, int, x) {
    while (!atomic_load(&polled_started))
        sched_yield();
    weft_cancel();
    return x;
}

WEFT_TASK(int, join_then_cancel_task, int, x) {
    int a, b;
    WEFT_JOIN(a, start_then_cancel, (x), b, poll_cancel, (x));
    return a + b;
}

static void join_then_cancel(weft_scope *scope, void *arg) {
    (void)scope;
    *(int *)arg = join_then_cancel_task(41);
}

TEST(join_belongs_to_the_joining_group) {
    CHECK_EQ(in_a_scope(join_then_cancel), 41 + 42);
}

/* The first call waits for what the offered one signals, while every other
 * worker spins: only the waiting thread can run it. */
/* A, whose wait runs B from the join's frame, then joins two calls over
 * that frame, still the worker's newest. */
WEFT_TASK(int, wait_it, weft_event *, e) {
    weft_event_wait(e);
    long x, y;
    WEFT_JOIN(x, fib, (10), y, fib, (9));
    CHECK_EQ(x + y, 89);
    return 5;
}

WEFT_VOID_TASK(join_wait_for_own, weft_event *, e) {
    int a, b;
    WEFT_JOIN(a, wait_it, (e), b, signal_it, (e));
    CHECK_EQ(a + b, 12);
    spinners_stop_all();
}

static void join_wait_for_own_job(void *arg) {
    join_wait_for_own(arg);
}

TEST(join_wait_runs_its_own_call) {
    wait_with_the_others_busy(join_wait_for_own_job);
}
