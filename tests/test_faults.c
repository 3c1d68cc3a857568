/* SPDX-License-Identifier: MIT */
/* Fault injection at every allocation and thread creation, SQLite-style: for
 * k = 0, 1, 2, ... the k-th call to malloc, calloc, realloc, aligned_alloc or
 * pthread_create made by weft (on any thread) while an entry point runs fails
 * once, until the entry point completes without reaching a k-th call. Each
 * run must give a documented errno or succeed, run every job whose submission
 * returned 0 exactly once, leave the pool working, and leak nothing (the
 * ASan stage's LeakSanitizer checks at exit). A hang fails by ctest's timeout.
 * The injector is tests/faults.h. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "faults.h"
#include "jobs.h"
#include "weft.h"

/* One attempt of an entry point under a fault at call k; returns its errno. */
typedef int attempt_fn(void *ctx);

/* Is err one of the errnos the entry point documents for a failed call? */
static bool allowed(int err, const int *errs) {
    for (; *errs; errs++)
        if (err == *errs)
            return true;
    return false;
}

/* Run attempt for k = 0, 1, ... until a run reaches no k-th call; every run
 * answers 0 or an allowed errno. Returns how many runs saw a fault. */
static long sweep(attempt_fn *attempt, void *ctx, const int *errs) {
    for (long k = 0;; k++) {
        faults_arm(k);
        int err = attempt(ctx);
        bool fired = faults_disarm();
        if (err != 0 && !allowed(err, errs)) {
            fprintf(stderr, "fault at call %ld: unexpected errno %d\n", k, err);
            abort();
        }
        if (!fired) {
            CHECK_EQ(err, 0); /* no fault, no excuse */
            fprintf(stderr, "%ld runs with a fault\n", k);
            return k;
        }
    }
}

static const int enomem[] = {ENOMEM, 0};
static const int enomem_eagain[] = {ENOMEM, EAGAIN, 0};

static _Atomic long ran;

static void bump(void *arg) {
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

static void check_pool_works(weft_pool *pool) {
    fib f = {18, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 2584);
}

static weft_pool *make_pool(unsigned threads) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads, .contexts = 1}), 0);
    return pool;
}

/* ---- Pool creation ---------------------------------------------------------- */

static int create_pool(void *ctx) {
    (void)ctx;
    weft_pool *pool = NULL;
    int err = weft_pool_create(&pool, &(weft_config){.threads = 3, .contexts = 1});
    if (err) {
        CHECK(pool == NULL);
        return err;
    }
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    return 0;
}

TEST(pool_create) {
    CHECK(sweep(create_pool, NULL, enomem_eagain) > 3);
}

/* The default pool: a failed creation is retried by the next call. */
static long default_ok;

static int spawn_on_default(void *ctx) {
    (void)ctx;
    int err = weft_spawn(NULL, bump, NULL);
    default_ok += err == 0;
    return err;
}

TEST(default_pool) {
    atomic_store(&ran, 0);
    CHECK(sweep(spawn_on_default, NULL, enomem_eagain) > 0);
    CHECK(weft_pool_default() != NULL);
    while (atomic_load(&ran) < default_ok) /* detached: wait for each */
        check_sleep_us(100);
    CHECK_EQ(atomic_load(&ran), default_ok);
}

/* ---- Detached jobs ----------------------------------------------------------- */

typedef struct spawns {
    weft_pool *pool;
    long ok; /* submissions that returned 0 */
} spawns;

/* Enough jobs from one worker to grow its deque past its first capacity. */
enum { SPAWNS = 600 };

static void spawn_many(void *arg) {
    spawns *s = arg;
    for (int i = 0; i < SPAWNS; i++) {
        int err = weft_spawn(NULL, bump, NULL);
        CHECK(err == 0 || err == ENOMEM);
        s->ok += err == 0;
    }
}

static int spawn_from_worker(void *ctx) {
    spawns *s = ctx;
    long before = s->ok;
    weft_run(s->pool, spawn_many, s);
    return s->ok - before == SPAWNS ? 0 : ENOMEM;
}

static int spawn_from_outside(void *ctx) {
    spawns *s = ctx;
    int err = weft_spawn(s->pool, bump, NULL);
    s->ok += err == 0;
    return err;
}

TEST(spawn) {
    atomic_store(&ran, 0);
    spawns s = {make_pool(2), 0};
    sweep(spawn_from_outside, &s, enomem);
    sweep(spawn_from_worker, &s, enomem);
    check_pool_works(s.pool);
    CHECK_EQ(weft_pool_destroy(s.pool), 0); /* waits for every job */
    CHECK_EQ(atomic_load(&ran), s.ok);      /* nothing lost, nothing twice */
}

/* ---- Scopes ------------------------------------------------------------------ */

typedef struct scoped {
    long ok;
    int err;
} scoped;

static void scope_body(weft_scope *scope, void *arg) {
    scoped *s = arg;
    for (int i = 0; i < 4; i++) {
        int err = weft_scope_spawn(scope, bump, NULL);
        s->ok += err == 0;
        if (err)
            s->err = err;
    }
}

static int scope_spawns(void *ctx) {
    weft_pool *pool = ctx;
    scoped s = {0, 0};
    atomic_store(&ran, 0);
    weft_scope_run(pool, scope_body, &s);
    CHECK_EQ(atomic_load(&ran), s.ok); /* the scope waited for each queued job */
    return s.err;
}

TEST(scope_spawn) {
    weft_pool *pool = make_pool(2);
    sweep(scope_spawns, pool, enomem);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Events -------------------------------------------------------------------- */

static int event_then_signal(void *ctx) {
    weft_pool *pool = ctx;
    atomic_store(&ran, 0);
    weft_event *e;
    int err = weft_event_create(&e, pool, 1);
    if (err)
        return err;
    long ok = 0;
    for (int i = 0; i < 3; i++) {
        int r = weft_event_then(e, bump, NULL);
        ok += r == 0;
        err = err ? err : r;
    }
    weft_event_signal(e);
    weft_event_wait(e);
    weft_event_destroy(e);
    while (atomic_load(&ran) < ok) /* follow-ups are detached: wait for them */
        check_sleep_us(100);
    CHECK_EQ(atomic_load(&ran), ok);
    return err;
}

TEST(event) {
    weft_pool *pool = make_pool(2);
    CHECK(sweep(event_then_signal, pool, enomem) > 0);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Graphs ---------------------------------------------------------------------- */

static int build_and_run_graph(void *ctx) {
    weft_pool *pool = ctx;
    weft_graph *g;
    int err = weft_graph_create(&g);
    if (err)
        return err;
    enum { NODES = 6 };
    weft_node *nodes[NODES];
    for (int i = 0; i < NODES && !err; i++)
        err = weft_graph_add(g, bump, NULL, &nodes[i]);
    for (int i = 1; i < NODES && !err; i++)
        err = weft_graph_edge(g, nodes[i - 1], nodes[i]);
    if (!err) {
        atomic_store(&ran, 0);
        err = weft_graph_run(g, pool);
        CHECK_EQ(atomic_load(&ran), err ? 0 : NODES); /* all or nothing */
    }
    weft_graph_destroy(g);
    return err;
}

TEST(graph) {
    weft_pool *pool = make_pool(2);
    CHECK(sweep(build_and_run_graph, pool, enomem) > 0);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Contexts ------------------------------------------------------------------------ */

static int context_join(void *ctx) {
    weft_pool *pool = ctx;
    weft_context *c;
    int err = weft_context_acquire(pool, &c);
    if (err)
        return err;
    fib f = {16, 0};
    fib_job(&f); /* joins on the context's own queues */
    CHECK_EQ(f.r, 987);
    weft_context_release(c);
    return 0;
}

TEST(context) {
    weft_pool *pool = make_pool(2);
    sweep(context_join, pool, enomem);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Reductions with accumulators on the heap ---------------------------------------- */

typedef struct big {
    double v[64]; /* 512 bytes: above the on-stack limit */
} big;

static void big_init(void *acc, void *arg) {
    (void)arg;
    *(big *)acc = (big){{0}};
}

static void big_fold(size_t begin, size_t end, void *acc, void *arg) {
    (void)arg;
    for (size_t i = begin; i < end; i++)
        ((big *)acc)->v[i % 64] += 1;
}

static void big_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    for (int i = 0; i < 64; i++)
        ((big *)acc)->v[i] += ((const big *)rhs)->v[i];
}

static int reduce_big(void *ctx) {
    weft_pool *pool = ctx;
    weft_reducer r = {sizeof(big), big_init, big_fold, big_combine, NULL};
    big result;
    for (int i = 0; i < 64; i++)
        result.v[i] = -1; /* untouched on error */
    int err = weft_reduce(pool, 0, 6400, 100, &r, &result);
    for (int i = 0; i < 64; i++)
        CHECK(result.v[i] == (err ? -1 : 100));
    return err;
}

TEST(reduce) {
    weft_pool *pool = make_pool(2);
    CHECK(sweep(reduce_big, pool, enomem) > 0);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Tracing ----------------------------------------------------------------------------- */

static int trace_round(void *ctx) {
    weft_pool *pool = ctx;
    char path[] = "/tmp/weft-faults-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    int err = weft_trace_start(pool, path);
    if (!err) {
        check_pool_works(pool);
        err = weft_trace_stop(pool);
        if (err) /* a failed stop leaves the pool not tracing */
            CHECK_EQ(weft_trace_stop(pool), EINVAL);
    }
    unlink(path);
    return err;
}

TEST(trace) {
    weft_pool *pool = make_pool(2);
    CHECK(sweep(trace_round, pool, enomem) > 0);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Spare threads ------------------------------------------------------------------------ */

typedef struct spare_fault {
    _Atomic bool in_region, go_on;
    bool failed; /* the spare's thread creation was the call that failed */
} spare_fault;

/* The pool's only worker enters a blocking region whose spare cannot be
 * created (the first wrapped call after arming is that pthread_create): the
 * job still runs on once the test lets it, uncompensated. */
static void block_without_spare(void *arg) {
    spare_fault *f = arg;
    faults_arm(0);
    CHECK_EQ(weft_blocking_begin(), 0);
    f->failed = faults_disarm();
    atomic_store(&f->in_region, true);
    while (!atomic_load(&f->go_on))
        usleep(100);
    weft_blocking_end();
}

static void write_a_byte(void *arg) {
    int *fd = arg;
    CHECK_EQ(write(fd[1], "x", 1), 1);
}

static void blocks_on_a_pipe(void *arg) {
    int *fd = arg;
    char c;
    CHECK_EQ(weft_blocking_begin(), 0);
    CHECK_EQ(read(fd[0], &c, 1), 1);
    weft_blocking_end();
}

/* A spare whose thread cannot be created leaves its slot usable: the next
 * block creates it, and the pool's other work runs on it (the job writing
 * the pipe can only run there: the one worker is blocked reading it). */
TEST(spare_thread) {
    weft_pool *pool;
    /* One spare slot: the one whose creation failed is the one that serves. */
    CHECK_EQ(
        weft_pool_create(&pool, &(weft_config){.threads = 1, .callers_wait = true, .spares = 1}),
        0);
    spare_fault f = {.in_region = false, .go_on = false, .failed = false};
    CHECK_EQ(weft_spawn(pool, block_without_spare, &f), 0);
    while (!atomic_load(&f.in_region))
        usleep(100);
    atomic_store(&f.go_on, true);
    check_pool_works(pool); /* on the worker, once its job ran on */
    CHECK(f.failed);
    int fd[2];
    CHECK_EQ(pipe(fd), 0);
    CHECK_EQ(weft_spawn(pool, blocks_on_a_pipe, fd), 0);
    CHECK_EQ(weft_spawn(pool, write_a_byte, fd), 0); /* after the reader: the injector is FIFO */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    close(fd[0]);
    close(fd[1]);
}
