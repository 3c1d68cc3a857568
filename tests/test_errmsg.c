/* SPDX-License-Identifier: MIT */
/* weft_error_message: every errno that a public call documents comes with a
 * message that names what went wrong (the argument or field, its value and
 * the limit), set on the calling thread by the failing call itself.
 *
 * Before each provoked failure the thread's message is made a known other
 * one (weft_set_concurrency above its maximum), so a call that returned an
 * errno without setting its own message fails the check instead of passing
 * on a leftover. Allocation and thread failures come from the fault
 * injector (tests/faults.h), fork-child answers from a forked child. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "faults.h"
#include "jobs.h"
#include "pools.h"
#include "weft.h"

/* The message a provoked failure must replace. */
#define STALE "max_running 4097 is above WEFT_CONCURRENCY_MAX 4096"

static void stale(void) {
    CHECK_EQ(weft_set_concurrency(WEFT_CONCURRENCY_MAX + 1), EINVAL);
    CHECK(strcmp(weft_error_message(), STALE) == 0);
}

/* got is what `call` returned; it must be want, with a message of this
 * call's own that contains every one of words. */
static void expect(int got, int want, const char *call, const char *const *words) {
    const char *m = weft_error_message();
    if (got != want) {
        fprintf(stderr, "%s returned %d, not %d (message \"%s\")\n", call, got, want, m);
        abort();
    }
    CHECK(m != NULL);
    if (m[0] == '\0' || strcmp(m, STALE) == 0) {
        fprintf(stderr, "%s returned %d without a message of its own\n", call, got);
        abort();
    }
    for (; *words; words++)
        if (!strstr(m, *words)) {
            fprintf(stderr, "%s: message \"%s\" does not name \"%s\"\n", call, m, *words);
            abort();
        }
    fprintf(stderr, "%s: %s\n", call, m);
}

/* EXPECT(call, errno, words...): call, after stale(), fails as described. */
#define EXPECT(call, err, ...)                                                                     \
    do {                                                                                           \
        stale();                                                                                   \
        int expect_got_ = (call);                                                                  \
        expect(expect_got_, (err), #call, (const char *const[]){__VA_ARGS__, NULL});               \
    } while (0)

/* EXPECT with the k-th allocation or thread creation from now failing
 * (tests/faults.h). may_pass: the call may also get around the fault, or
 * not reach it, and return 0. */
#define EXPECT_FAULT(k, may_pass, call, err, ...)                                                  \
    do {                                                                                           \
        stale();                                                                                   \
        faults_arm(k);                                                                             \
        int expect_got_ = (call);                                                                  \
        faults_disarm();                                                                           \
        if (expect_got_ || !(may_pass))                                                            \
            expect(expect_got_, (err), #call, (const char *const[]){__VA_ARGS__, NULL});           \
    } while (0)

static _Atomic int ran;

static void mark(void *arg) {
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

static void mark_at(unsigned index, void *arg) {
    (void)index;
    mark(arg);
}

/* ---- The contract --------------------------------------------------------- */

static void *fresh_thread(void *arg) {
    (void)arg;
    const char *m = weft_error_message();
    CHECK(m != NULL && m[0] == '\0'); /* nothing failed on this thread yet */
    EXPECT(weft_spawn(NULL, NULL, NULL), EINVAL, "fn");
    return NULL;
}

TEST(never_null_per_thread_and_kept_by_success) {
    stale();
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fresh_thread, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(strcmp(weft_error_message(), STALE) == 0); /* the other thread's is its own */
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_spawn(pool, mark, NULL), 0);
    CHECK(strcmp(weft_error_message(), STALE) == 0); /* a success clears nothing */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Pools ---------------------------------------------------------------- */

TEST(pool_create_names_the_field) {
    weft_pool *pool = NULL;
    EXPECT(weft_pool_create(NULL, NULL), EINVAL, "pool");
    EXPECT(weft_pool_create(&pool, &(weft_config){.threads = 100000}), EINVAL, "config.threads",
           "100000", "WEFT_THREADS_MAX", "4096");
    EXPECT(weft_pool_create(&pool, &(weft_config){.contexts = 5000}), EINVAL, "config.contexts",
           "5000", "4096");
    EXPECT(weft_pool_create(&pool, &(weft_config){.callers = 4097}), EINVAL, "config.callers",
           "4097");
    EXPECT(weft_pool_create(&pool, &(weft_config){.threads = 4000, .contexts = 90, .callers = 7}),
           EINVAL, "threads 4000", "contexts 90", "callers 7", "WEFT_THREADS_MAX");
    EXPECT(weft_pool_create(&pool, &(weft_config){.stack_size = 4096}), EINVAL,
           "config.stack_size 4096", "65536");
    EXPECT(weft_pool_create(&pool, &(weft_config){.leave = (weft_leave)7}), EINVAL,
           "config.leave 7");
    EXPECT(weft_pool_create(&pool, &(weft_config){.wake = (weft_wake)-1}), EINVAL,
           "config.wake -1");
    struct {
        weft_config c;
        unsigned char future[8];
    } newer = {.c = {.threads = 1}, .future = {0, 0, 1}};
    EXPECT(weft_pool_create_sized(&pool, &newer.c, sizeof newer), EINVAL, "config_size",
           "is not 0");
    CHECK(pool == NULL);
}

/* Every allocation and thread creation of weft_pool_create fails in turn. */
TEST(pool_create_out_of_memory_or_threads) {
    bool thread_failed = false;
    for (long k = 0;; k++) {
        stale();
        weft_pool *pool;
        faults_arm(k);
        int err = weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1});
        bool fired = faults_disarm();
        if (!fired) {
            CHECK_EQ(err, 0);
            CHECK_EQ(weft_pool_destroy(pool), 0);
            break;
        }
        if (err == EAGAIN) {
            expect(err, EAGAIN, "weft_pool_create", (const char *const[]){"thread", NULL});
            thread_failed = true;
        } else {
            expect(err, ENOMEM, "weft_pool_create", (const char *const[]){"out of memory", NULL});
        }
    }
    CHECK(thread_failed);
}

static weft_pool *outer_pool;

static void destroy_outer(void *arg) {
    (void)arg;
    EXPECT(weft_pool_destroy(outer_pool), EDEADLK, "waits for");
}

static void destroy_own(void *arg) {
    weft_pool *other = arg;
    EXPECT(weft_pool_destroy(outer_pool), EDEADLK, "job of the pool");
    weft_run(other, destroy_outer, NULL); /* other's worker serves outer_pool's wait */
}

/* A thread that holds context 0 of a pool from hold_start to hold_end. */
typedef struct holder {
    weft_pool *pool;
    _Atomic int stage; /* 1: acquired; 2: told to release */
    pthread_t thread;
} holder;

static void *hold(void *arg) {
    holder *h = arg;
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(h->pool, &ctx), 0);
    EXPECT(weft_pool_destroy(h->pool), EBUSY, "calling thread holds context 0");
    atomic_store(&h->stage, 1);
    while (atomic_load(&h->stage) != 2)
        check_sleep_us(100);
    weft_context_release(ctx);
    return NULL;
}

static void hold_start(holder *h, weft_pool *pool) {
    h->pool = pool;
    atomic_store(&h->stage, 0);
    CHECK_EQ(pthread_create(&h->thread, NULL, hold, h), 0);
    while (atomic_load(&h->stage) != 1)
        check_sleep_us(100);
}

static void hold_end(holder *h) {
    atomic_store(&h->stage, 2);
    CHECK_EQ(pthread_join(h->thread, NULL), 0);
}

TEST(pool_destroy_says_who_holds_it) {
    EXPECT(weft_pool_destroy(NULL), EINVAL, "pool is NULL");
    weft_pool *def = weft_pool_default();
    CHECK(def != NULL);
    EXPECT(weft_pool_destroy(def), EINVAL, "default pool");

    weft_pool *pool, *other = make_pool(1);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    outer_pool = pool;
    weft_run(pool, destroy_own, other);

    holder h;
    hold_start(&h, pool);
    EXPECT(weft_pool_destroy(pool), EBUSY, "context 0", "still acquired");
    hold_end(&h);
    CHECK_EQ(weft_pool_destroy(pool), 0);

    weft_pool *p2 = make_pool(1);
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, p2, 1), 0);
    CHECK_EQ(weft_event_then(e, mark, NULL), 0);
    EXPECT(weft_pool_destroy(p2), EBUSY, "follow-ups", "weft_event_then");
    weft_event_destroy(e);
    CHECK_EQ(weft_pool_destroy(p2), 0);
    CHECK_EQ(weft_pool_destroy(other), 0);
}

TEST(set_concurrency_names_the_limit) {
    EXPECT(weft_set_concurrency(5000), EINVAL, "max_running 5000", "WEFT_CONCURRENCY_MAX 4096");
}

/* ---- Jobs ------------------------------------------------------------------- */

static void spawn_in_body(weft_scope *scope, void *arg) {
    (void)arg;
    EXPECT(weft_scope_spawn(NULL, mark, NULL), EINVAL, "scope is NULL");
    EXPECT(weft_scope_spawn(scope, NULL, NULL), EINVAL, "fn is NULL");
    EXPECT(weft_scope_spawn_priority(scope, mark, NULL, (weft_priority)9), EINVAL, "priority 9");
    EXPECT(weft_scope_spawn_release_priority(scope, mark, mark, NULL, (weft_priority)-2), EINVAL,
           "priority -2");
    EXPECT(weft_scope_spawn_release(NULL, mark, mark, NULL), EINVAL, "scope is NULL");
    weft_scope_cancel(scope);
    EXPECT(weft_scope_spawn(scope, mark, NULL), ECANCELED, "scope", "cancelled");
}

TEST(job_arguments) {
    atomic_store(&ran, 0);
    weft_pool *pool = make_pool(2);
    EXPECT(weft_spawn(pool, NULL, NULL), EINVAL, "fn is NULL");
    EXPECT(weft_spawn_priority(pool, mark, NULL, (weft_priority)7), EINVAL, "priority 7",
           "weft_priority");
    EXPECT(weft_run_priority(pool, NULL, NULL, WEFT_PRIORITY_HIGH), EINVAL, "fn is NULL");
    EXPECT(weft_run_priority(pool, mark, NULL, (weft_priority)INT_MIN), EINVAL, "priority");
    EXPECT(weft_broadcast(pool, NULL, NULL), EINVAL, "fn is NULL");
    weft_scope_run(pool, spawn_in_body, NULL);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* From on_exit the pool is closed to detached work. */
static void submit_on_exit(unsigned worker, void *user) {
    if (worker != 0)
        return;
    weft_pool *pool = *(weft_pool **)user;
    EXPECT(weft_spawn(pool, mark, NULL), ESHUTDOWN, "closed");
    EXPECT(weft_broadcast(pool, mark_at, NULL), ESHUTDOWN, "closed");
    weft_event *e;
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    EXPECT(weft_event_then(e, mark, NULL), ESHUTDOWN, "weft_pool_destroy");
    weft_event_destroy(e);
    EXPECT(weft_trace_stop(pool), EINVAL, "not tracing", "closed");
}

TEST(closed_pool) {
    static weft_pool *pool;
    CHECK_EQ(weft_pool_create(
                 &pool, &(weft_config){.threads = 2, .on_exit = submit_on_exit, .user = &pool}),
             0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* Spawns, scope spawns and follow-ups out of memory: every allocation of
 * each fails in turn, on whichever thread. */
static void scope_spawns(weft_scope *scope, void *arg) {
    (void)arg;
    for (long k = 0; k < 4; k++)
        EXPECT_FAULT(k, true, weft_scope_spawn(scope, mark, NULL), ENOMEM, "out of memory");
}

TEST(jobs_out_of_memory) {
    weft_pool *pool = make_pool(2);
    for (long k = 0; k < 4; k++)
        EXPECT_FAULT(k, true, weft_spawn(pool, mark, NULL), ENOMEM, "out of memory");
    weft_scope_run(pool, scope_spawns, NULL);
    weft_event *e;
    EXPECT_FAULT(0, false, weft_event_create(&e, pool, 1), ENOMEM, "out of memory", "event");
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    EXPECT_FAULT(0, false, weft_event_then(e, mark, NULL), ENOMEM, "out of memory");
    weft_event_signal(e);
    weft_event_destroy(e);
    weft_cancel_source *s;
    EXPECT_FAULT(0, false, weft_cancel_source_create(&s), ENOMEM, "out of memory", "cancel source");
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Cancellation ------------------------------------------------------------ */

static void cancel_self(void *arg) {
    (void)arg;
    weft_cancel();
}

TEST(cancel_sources_and_runs) {
    weft_pool *pool = make_pool(2);
    weft_cancel_source *s;
    EXPECT(weft_cancel_source_create(NULL), EINVAL, "source is NULL");
    CHECK_EQ(weft_cancel_source_create(&s), 0);
    EXPECT(weft_run_cancellable(pool, NULL, mark, NULL), EINVAL, "source is NULL");
    EXPECT(weft_run_cancellable(pool, s, NULL, NULL), EINVAL, "fn is NULL");
    EXPECT(weft_run_cancellable(pool, s, cancel_self, NULL), ECANCELED, "weft_cancel");
    weft_cancel_source_cancel(s);
    EXPECT(weft_run_cancellable(pool, s, mark, NULL), ECANCELED, "cancel source");
    weft_cancel_source_destroy(s);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Contexts ----------------------------------------------------------------- */

static void acquire_on_worker(void *arg) {
    weft_context *ctx;
    EXPECT(weft_context_acquire(arg, &ctx), EINVAL, "worker");
}

static void acquire_in_run(void *arg) {
    weft_context *ctx;
    if (weft_thread_index() >= (int)weft_pool_threads(arg)) /* on our caller slot */
        EXPECT(weft_context_acquire(arg, &ctx), EINVAL, "weft_run", "caller slot");
}

TEST(contexts) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 1, .contexts = 1}), 0);
    weft_context *ctx, *other;
    EXPECT(weft_context_acquire(pool, NULL), EINVAL, "context is NULL");
    CHECK_EQ(weft_spawn(pool, acquire_on_worker, pool), 0);
    weft_run(pool, acquire_in_run, pool);
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    EXPECT(weft_context_acquire(pool, &other), EINVAL, "already holds context 0");
    weft_context_release(ctx);
    holder h;
    hold_start(&h, pool); /* takes the only slot */
    EXPECT(weft_context_acquire(pool, &ctx), EBUSY, "all 1 context slots", "config.contexts");
    hold_end(&h);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Loops and sorts ------------------------------------------------------------ */

static void init_big(void *acc, void *arg) {
    (void)arg;
    memset(acc, 0, 512);
}

static void fold_big(size_t begin, size_t end, void *acc, void *arg) {
    (void)arg;
    *(size_t *)acc += end - begin;
}

static void fold_cancel(size_t begin, size_t end, void *acc, void *arg) {
    fold_big(begin, end, acc, arg);
    weft_cancel();
}

static void combine_big(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(size_t *)acc += *(const size_t *)rhs;
}

static int cmp_int(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

static void sort_cancelled(weft_scope *scope, void *arg) {
    static int v[10000];
    (void)arg;
    weft_scope_cancel(scope);
    EXPECT(weft_sort(NULL, v, 10000, sizeof *v, cmp_int), ECANCELED, "group", "cancelled");
}

TEST(reduce_and_sort) {
    weft_pool *pool = make_pool(2);
    unsigned char result[512];
    weft_reducer r = {512, init_big, fold_big, combine_big, NULL};
    EXPECT(weft_reduce(pool, 0, 10, 0, NULL, result), EINVAL, "reducer is NULL");
    EXPECT(weft_reduce(pool, 0, 10, 0, &r, NULL), EINVAL, "result is NULL");
    r.size = 0;
    EXPECT(weft_reduce(pool, 0, 10, 0, &r, result), EINVAL, "reducer->size is 0");
    r.size = 512;
    r.combine = NULL;
    EXPECT(weft_reduce(pool, 0, 10, 0, &r, result), EINVAL, "reducer->combine is NULL");
    r.combine = combine_big;
    r.fold = fold_cancel;
    EXPECT(weft_reduce(pool, 0, 100000, 10, &r, result), ECANCELED, "reduction", "cancelled");
    r.fold = fold_big;
    /* Every allocation of a reduction of 512-byte accumulators fails in
     * turn, the root's on this thread and the pieces' on the workers. */
    for (long k = 0;; k++) {
        stale();
        faults_arm(k);
        int err = weft_reduce(pool, 0, 100000, 1000, &r, result);
        bool fired = faults_disarm();
        if (!fired) {
            CHECK_EQ(err, 0);
            break;
        }
        if (err)
            expect(err, ENOMEM, "weft_reduce",
                   (const char *const[]){"out of memory", "accumulator of 512 bytes", NULL});
    }
    int v[4] = {3, 1, 2, 0};
    EXPECT(weft_sort(pool, NULL, 4, sizeof *v, cmp_int), EINVAL, "base is NULL", "n is 4");
    EXPECT(weft_sort(pool, v, 4, 0, cmp_int), EINVAL, "size is 0");
    EXPECT(weft_sort(pool, v, 4, sizeof *v, NULL), EINVAL, "cmp is NULL");
    EXPECT(weft_sort_r(pool, v, SIZE_MAX / 2, 4, NULL, NULL), EINVAL, "cmp is NULL");
    EXPECT(weft_sort(pool, v, SIZE_MAX / 2, 4, cmp_int), EINVAL, "overflows");
    weft_scope_run(pool, sort_cancelled, NULL);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Events ----------------------------------------------------------------------- */

TEST(events) {
    weft_pool *pool = make_pool(1);
    weft_event *e;
    EXPECT(weft_event_create(NULL, pool, 1), EINVAL, "event is NULL");
    CHECK_EQ(weft_event_create(&e, pool, 1), 0);
    EXPECT(weft_event_then(NULL, mark, NULL), EINVAL, "event is NULL");
    EXPECT(weft_event_then(e, NULL, NULL), EINVAL, "fn is NULL");
    weft_event_destroy(e);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Graphs ------------------------------------------------------------------------- */

static weft_graph *running_graph;
static weft_node *running_node;

static void edit_while_running(void *arg) {
    weft_node *n;
    (void)arg;
    EXPECT(weft_graph_add(running_graph, mark, NULL, &n), EBUSY, "running");
    EXPECT(weft_graph_edge(running_graph, running_node, running_node), EBUSY, "running");
    EXPECT(weft_graph_run(running_graph, NULL), EBUSY, "already running");
}

TEST(graphs) {
    atomic_store(&ran, 0);
    weft_pool *pool = make_pool(2);
    weft_graph *g, *h;
    weft_node *n[4], *elsewhere;
    EXPECT(weft_graph_create(NULL), EINVAL, "graph is NULL");
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_create(&h), 0);
    EXPECT(weft_graph_add(NULL, mark, NULL, &n[0]), EINVAL, "graph is NULL");
    EXPECT(weft_graph_add(g, NULL, NULL, &n[0]), EINVAL, "fn is NULL");
    EXPECT(weft_graph_add(g, mark, NULL, NULL), EINVAL, "node is NULL");
    for (int i = 0; i < 4; i++)
        CHECK_EQ(weft_graph_add(g, mark, NULL, &n[i]), 0);
    CHECK_EQ(weft_graph_add(h, mark, NULL, &elsewhere), 0);
    EXPECT(weft_graph_edge(NULL, n[0], n[1]), EINVAL, "graph is NULL");
    EXPECT(weft_graph_edge(g, NULL, n[1]), EINVAL, "before is NULL");
    EXPECT(weft_graph_edge(g, n[0], NULL), EINVAL, "after is NULL");
    EXPECT(weft_graph_edge(g, elsewhere, n[1]), EINVAL, "before", "another graph");
    EXPECT(weft_graph_edge(g, n[0], elsewhere), EINVAL, "after", "another graph");
    EXPECT(weft_graph_run(NULL, pool), EINVAL, "graph is NULL");
    /* 0 -> 1 -> 3 -> 2 -> 3: the cycle is 2 <-> 3, entered from 1. */
    CHECK_EQ(weft_graph_edge(g, n[0], n[1]), 0);
    CHECK_EQ(weft_graph_edge(g, n[1], n[3]), 0);
    CHECK_EQ(weft_graph_edge(g, n[3], n[2]), 0);
    CHECK_EQ(weft_graph_edge(g, n[2], n[3]), 0);
    EXPECT(weft_graph_run(g, pool), ELOOP, "cycle", "node 2");
    EXPECT(weft_graph_run(g, pool), ELOOP, "node 2"); /* the check's answer is kept */
    CHECK_EQ(atomic_load(&ran), 0);
    /* A self-loop on h's only node. */
    CHECK_EQ(weft_graph_edge(h, elsewhere, elsewhere), 0);
    EXPECT(weft_graph_run(h, pool), ELOOP, "node 0");
    weft_graph_destroy(h);

    /* Edits and runs while the graph runs. */
    CHECK_EQ(weft_graph_create(&h), 0);
    running_graph = h;
    CHECK_EQ(weft_graph_add(h, edit_while_running, NULL, &running_node), 0);
    CHECK_EQ(weft_graph_run(h, pool), 0);
    weft_graph_destroy(h);

    /* Cancelled runs, full and empty. */
    CHECK_EQ(weft_graph_create(&h), 0);
    CHECK_EQ(weft_graph_add(h, cancel_self, NULL, &elsewhere), 0);
    EXPECT(weft_graph_run(h, pool), ECANCELED, "weft_cancel");
    weft_graph_destroy(h);
    weft_graph_destroy(g);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void run_empty_graph(weft_scope *scope, void *arg) {
    weft_scope_cancel(scope);
    EXPECT(weft_graph_run(arg, NULL), ECANCELED, "group", "cancelled");
}

TEST(graphs_out_of_memory_and_cancelled) {
    weft_pool *pool = make_pool(2);
    weft_graph *g;
    weft_node *n[20];
    EXPECT_FAULT(0, false, weft_graph_create(&g), ENOMEM, "out of memory", "graph");
    CHECK_EQ(weft_graph_create(&g), 0);
    weft_scope_run(pool, run_empty_graph, g);
    for (int i = 0; i < 20; i++) {
        /* The node's struct, or the array's growth. */
        EXPECT_FAULT(0, false, weft_graph_add(g, mark, NULL, &n[i]), ENOMEM,
                     "out of memory for node");
        CHECK_EQ(weft_graph_add(g, mark, NULL, &n[i]), 0);
    }
    EXPECT_FAULT(0, false, weft_graph_edge(g, n[3], n[4]), ENOMEM, "out of memory", "node 3");
    CHECK_EQ(weft_graph_edge(g, n[3], n[4]), 0);
    EXPECT_FAULT(0, false, weft_graph_run(g, pool), ENOMEM, "cycle check of 20 nodes");
    CHECK_EQ(weft_graph_run(g, pool), 0);
    weft_graph_destroy(g);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Traces ---------------------------------------------------------------------------- */

TEST(traces) {
    weft_pool *pool = make_pool(2);
    char path[] = "/tmp/weft_errmsg_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    EXPECT(weft_trace_start(pool, NULL), EINVAL, "path is NULL");
    EXPECT(weft_trace_start(pool, "/nonexistent-weft-dir/trace.json"), ENOENT,
           "\"/nonexistent-weft-dir/trace.json\"", "No such file");
    EXPECT(weft_trace_stop(pool), EINVAL, "not tracing");
    EXPECT_FAULT(0, false, weft_trace_start(pool, path), ENOMEM, "out of memory", "2 workers");
    CHECK_EQ(weft_trace_start(pool, path), 0);
    EXPECT(weft_trace_start(pool, path), EBUSY, "already tracing");
    CHECK_EQ(weft_trace_stop(pool), 0);
    /* /dev/full takes the open and refuses the write. */
    if (weft_trace_start(pool, "/dev/full") == 0)
        EXPECT(weft_trace_stop(pool), ENOSPC, "writing the trace file", "No space");
    unlink(path);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- Fork children ------------------------------------------------------------------------ */

static weft_pool *parents_pool;

static void parents_pool_in_child(void) {
    weft_pool *p = parents_pool;
    weft_event *e;
    weft_context *ctx;
    weft_cancel_source *s;
    weft_graph *g;
    uint64_t sum;
    weft_reducer r = sum_of_indices;
    EXPECT(weft_spawn(p, mark, NULL), ECHILD, "forked");
    EXPECT(weft_spawn_priority(p, mark, NULL, WEFT_PRIORITY_HIGH), ECHILD, "forked");
    EXPECT(weft_broadcast(p, mark_at, NULL), ECHILD, "forked");
    EXPECT(weft_event_create(&e, p, 1), ECHILD, "forked");
    EXPECT(weft_context_acquire(p, &ctx), ECHILD, "forked");
    EXPECT(weft_trace_start(p, "/dev/null"), ECHILD, "forked");
    EXPECT(weft_trace_stop(p), ECHILD, "forked");
    EXPECT(weft_reduce(p, 0, 10, 0, &r, &sum), ECHILD, "forked");
    CHECK_EQ(weft_cancel_source_create(&s), 0);
    EXPECT(weft_run_cancellable(p, s, mark, NULL), ECHILD, "forked");
    weft_cancel_source_destroy(s);
    CHECK_EQ(weft_graph_create(&g), 0);
    EXPECT(weft_graph_run(g, p), ECHILD, "forked");
    weft_graph_destroy(g);
}

static weft_event *parents_event;

static void parents_event_in_child(void) {
    EXPECT(weft_event_then(parents_event, mark, NULL), ECHILD, "forked");
}

/* The child's first use of the default pool fails: every entry point that
 * needs it answers EAGAIN and says why the pool could not be made. */
static void no_default_pool_in_child(void) {
    weft_event *e;
    weft_context *ctx;
    stale();
    faults_arm(0);
    CHECK(weft_pool_default() == NULL);
    faults_disarm();
    const char *m = weft_error_message();
    CHECK(strstr(m, "default pool could not be created") && strstr(m, "out of memory"));
#define NO_POOL(call) EXPECT_FAULT(0, false, call, EAGAIN, "default pool could not be created")
    NO_POOL(weft_spawn(NULL, mark, NULL));
    NO_POOL(weft_broadcast(NULL, mark_at, NULL));
    NO_POOL(weft_event_create(&e, NULL, 1));
    NO_POOL(weft_context_acquire(NULL, &ctx));
    NO_POOL(weft_trace_start(NULL, "/dev/null"));
    NO_POOL(weft_trace_stop(NULL));
#undef NO_POOL
}

static void expect_child_ok(void (*body)(void)) {
    char err[8192];
    CHECK(child_exited_ok(child_run(body, err, sizeof err)));
}

TEST(fork_children) {
    parents_pool = make_pool(1);
    CHECK_EQ(weft_event_create(&parents_event, parents_pool, 1), 0);
    expect_child_ok(parents_pool_in_child);
    expect_child_ok(parents_event_in_child);
    expect_child_ok(no_default_pool_in_child);
    weft_event_destroy(parents_event);
    CHECK_EQ(weft_pool_destroy(parents_pool), 0);
}
