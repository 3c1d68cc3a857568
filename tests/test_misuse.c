/* SPDX-License-Identifier: MIT */
/* Misuse answers instead of crashing (issue 18, defects 2 and 9): every
 * public function that returns int reports EINVAL for a NULL it cannot use
 * or an enum argument that is not an enumerator, and runs nothing; every one
 * that returns void does nothing in release builds and fails a debug-build
 * assertion naming the function. Either way the pool still works afterwards.
 *
 * The void cases run in a forked child whose stderr goes to a file: with
 * NDEBUG (RelWithDebInfo, Release) the child must exit 0 after checking the
 * no-op and the pool; without it (Debug, the sanitizer builds) it must die of
 * SIGABRT with the assertion's message on stderr. Children create their own
 * pools and never touch the default pool, whose threads a fork does not copy.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "child.h"
#include "jobs.h"
#include "weft.h"

/* The pool still runs fork-join work. */
static void check_pool_works(weft_pool *pool) {
    fib f = {15, 0};
    weft_run(pool, fib_job, &f);
    CHECK_EQ(f.r, 610);
}

static _Atomic int ran;

static void mark(void *arg) {
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

/* ---- Enum arguments (defect 2) -------------------------------------------- */

/* Priorities that are not enumerators: past the end, far past, negative. */
static const int bad_priorities[] = {2, 7, -1, INT_MIN};
enum { BAD_PRIORITIES = sizeof bad_priorities / sizeof bad_priorities[0] };

/* On a worker: a bad priority is refused before it becomes the worker's
 * priority (which indexes its deques), also for another pool. */
static void bad_priority_on_worker(void *arg) {
    weft_pool *other = arg;
    for (int i = 0; i < BAD_PRIORITIES; i++) {
        weft_priority p = (weft_priority)bad_priorities[i];
        CHECK_EQ(weft_run_priority(NULL, fib_job, &(fib){10, 0}, p), EINVAL);
        CHECK_EQ(weft_run_priority(other, mark, NULL, p), EINVAL);
        CHECK_EQ(weft_spawn_priority(NULL, mark, NULL, p), EINVAL);
    }
    fib f = {12, 0};
    fib_job(&f); /* this worker's own priority is intact: its forks run */
    CHECK_EQ(f.r, 144);
}

static void bad_priority_in_scope(weft_scope *scope, void *arg) {
    (void)arg;
    for (int i = 0; i < BAD_PRIORITIES; i++) {
        CHECK_EQ(weft_scope_spawn_priority(scope, mark, NULL, (weft_priority)bad_priorities[i]),
                 EINVAL);
        CHECK_EQ(weft_scope_spawn_release_priority(scope, mark, mark, NULL,
                                                   (weft_priority)bad_priorities[i]),
                 EINVAL);
    }
}

TEST(unknown_priority_is_einval_and_runs_nothing) {
    weft_pool *pool = make_pool(2), *other = make_pool(1);
    atomic_store(&ran, 0);
    for (int i = 0; i < BAD_PRIORITIES; i++) {
        weft_priority p = (weft_priority)bad_priorities[i];
        CHECK_EQ(weft_run_priority(pool, mark, NULL, p), EINVAL); /* from outside */
        CHECK_EQ(weft_spawn_priority(pool, mark, NULL, p), EINVAL);
    }
    weft_run(pool, bad_priority_on_worker, other);
    weft_scope_run(pool, bad_priority_in_scope, NULL);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(weft_run_priority(pool, mark, NULL, WEFT_PRIORITY_HIGH), 0);
    CHECK_EQ(weft_run_priority(pool, mark, NULL, WEFT_PRIORITY_NORMAL), 0);
    CHECK_EQ(atomic_load(&ran), 2);
    check_pool_works(pool);
    check_pool_works(other);
    CHECK_EQ(weft_pool_destroy(other), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(unknown_leave_or_wake_is_einval) {
    weft_pool *pool = NULL;
    const int bad[] = {2, -1, INT_MAX};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.leave = (weft_leave)bad[i]}), EINVAL);
        CHECK_EQ(weft_pool_create(&pool, &(weft_config){.wake = (weft_wake)bad[i]}), EINVAL);
    }
    CHECK(pool == NULL);
}

/* ---- NULL where a function returns int (defect 9) --------------------------- */

static void nothing_in_scope(weft_scope *scope, void *arg) {
    (void)scope;
    (void)arg;
}

TEST(null_arguments_are_einval) {
    weft_pool *pool = make_pool(2);
    atomic_store(&ran, 0);
    CHECK_EQ(weft_pool_create(NULL, NULL), EINVAL);
    CHECK_EQ(weft_pool_destroy(NULL), EINVAL);
    CHECK_EQ(weft_run_priority(pool, NULL, NULL, WEFT_PRIORITY_NORMAL), EINVAL);
    CHECK_EQ(weft_run_priority(pool, NULL, NULL, WEFT_PRIORITY_HIGH), EINVAL);
    CHECK_EQ(weft_spawn(pool, NULL, NULL), EINVAL);
    CHECK_EQ(weft_spawn_priority(pool, NULL, NULL, WEFT_PRIORITY_HIGH), EINVAL);
    CHECK_EQ(weft_scope_spawn(NULL, mark, NULL), EINVAL);
    CHECK_EQ(weft_scope_spawn_priority(NULL, mark, NULL, WEFT_PRIORITY_NORMAL), EINVAL);
    CHECK_EQ(weft_scope_spawn_release(NULL, mark, mark, NULL), EINVAL);
    CHECK_EQ(weft_scope_spawn_release_priority(NULL, mark, mark, NULL, WEFT_PRIORITY_HIGH), EINVAL);
    CHECK_EQ(weft_trace_start(pool, NULL), EINVAL);
    CHECK_EQ(weft_context_acquire(pool, NULL), EINVAL);

    uint64_t sum = 7;
    weft_reducer r = sum_of_indices;
    CHECK_EQ(weft_reduce(pool, 0, 10, 0, NULL, &sum), EINVAL);
    CHECK_EQ(weft_reduce(pool, 0, 10, 0, &r, NULL), EINVAL);
    r.fold = NULL;
    CHECK_EQ(weft_reduce(pool, 0, 10, 0, &r, &sum), EINVAL);
    r = (weft_reducer){0};
    CHECK_EQ(weft_reduce(pool, 0, 0, 0, &r, &sum), EINVAL); /* also for an empty range */
    CHECK_EQ(sum, 7);

    weft_event *e = NULL;
    CHECK_EQ(weft_event_create(NULL, pool, 1), EINVAL);
    CHECK_EQ(weft_event_then(NULL, mark, NULL), EINVAL);
    CHECK_EQ(weft_event_create(&e, pool, 0), 0);
    CHECK_EQ(weft_event_then(e, NULL, NULL), EINVAL);
    weft_event_destroy(e);
    weft_event_destroy(NULL); /* as free(NULL): allowed, does nothing */

    weft_graph *g = NULL;
    weft_node *n = NULL, *m = NULL;
    CHECK_EQ(weft_graph_create(NULL), EINVAL);
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_add(NULL, mark, NULL, &n), EINVAL);
    CHECK_EQ(weft_graph_add(g, NULL, NULL, &n), EINVAL);
    CHECK_EQ(weft_graph_add(g, mark, NULL, NULL), EINVAL);
    CHECK_EQ(weft_graph_add(g, mark, NULL, &n), 0);
    CHECK_EQ(weft_graph_add(g, mark, NULL, &m), 0);
    CHECK_EQ(weft_graph_edge(NULL, n, m), EINVAL);
    CHECK_EQ(weft_graph_edge(g, NULL, m), EINVAL);
    CHECK_EQ(weft_graph_edge(g, n, NULL), EINVAL);
    CHECK_EQ(weft_graph_run(NULL, pool), EINVAL);
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK_EQ(weft_graph_run(g, pool), 0);
    CHECK_EQ(atomic_load(&ran), 2);
    weft_graph_destroy(g);
    weft_graph_destroy(NULL); /* as free(NULL) */

    weft_scope_run(pool, nothing_in_scope, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- NULL where a function returns void (defect 9) -------------------------- */

/* Run misuse() in a child: it must exit 0 in a release build (misuse returns
 * having done nothing, and checks so itself) and die of SIGABRT with
 * `message` on stderr in a debug build. */
static void expect_misuse(void (*misuse)(void), const char *message) {
    char err[4096];
    int status = child_run(misuse, err, sizeof err);
#ifdef NDEBUG
    (void)message;
    CHECK(child_exited_ok(status));
#else
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(err, message) != NULL);
#endif
}

static void run_null_fn(void) {
    weft_pool *pool = make_pool(2);
    weft_run(pool, NULL, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(run_null_fn_does_nothing) {
    expect_misuse(run_null_fn, "weft_run: fn is NULL");
}

static void join_null_halves(void *arg) {
    (void)arg;
    atomic_store(&ran, 0);
    weft_join(NULL, NULL, mark, NULL);
    weft_join(mark, NULL, NULL, NULL);
    weft_join(NULL, NULL, NULL, NULL);
    CHECK_EQ(atomic_load(&ran), 0); /* neither half of a misused join runs */
}

static void join_null_on_worker(void) {
    weft_pool *pool = make_pool(2);
    weft_run(pool, join_null_halves, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(join_null_on_a_worker_does_nothing) {
    expect_misuse(join_null_on_worker, "weft_join: a or b is NULL");
}

/* From outside, weft_join goes to the default pool: the child makes it
 * (the parent never did, so the fork copied no half-made one). */
static void join_null_outside(void) {
    join_null_halves(NULL);
    weft_pool *pool = make_pool(1);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(join_null_outside_does_nothing) {
    expect_misuse(join_null_outside, "weft_join: a or b is NULL");
}

static void for_null_body(void) {
    weft_pool *pool = make_pool(2);
    weft_for(pool, 0, 1000, 0, NULL, NULL);
    weft_for(pool, 0, 1000, 10, NULL, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(for_null_body_does_nothing) {
    expect_misuse(for_null_body, "weft_for: body is NULL");
}

static void scope_null_body(void) {
    weft_pool *pool = make_pool(2);
    weft_scope_run(pool, NULL, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(scope_run_null_body_does_nothing) {
    expect_misuse(scope_null_body, "weft_scope_run: body is NULL");
}

static void scope_cancel_null(void) {
    weft_pool *pool = make_pool(2);
    weft_scope_cancel(NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(scope_cancel_null_does_nothing) {
    expect_misuse(scope_cancel_null, "weft_scope_cancel: scope is NULL");
}

/* weft_broadcast returns int: a NULL fn is EINVAL, with nothing run. */
TEST(broadcast_null_fn_is_einval) {
    weft_pool *pool = make_pool(2);
    CHECK_EQ(weft_broadcast(pool, NULL, NULL), EINVAL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void stats_null(void) {
    weft_pool *pool = make_pool(2);
    weft_pool_stats(pool, NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(pool_stats_null_does_nothing) {
    expect_misuse(stats_null, "weft_pool_stats: stats is NULL");
}

static void event_signal_null(void) {
    weft_pool *pool = make_pool(2);
    weft_event_signal(NULL);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(event_signal_null_does_nothing) {
    expect_misuse(event_signal_null, "weft_event_signal: event is NULL");
}

static void event_wait_null(void) {
    weft_pool *pool = make_pool(2);
    weft_event_wait(NULL); /* returns at once */
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(event_wait_null_returns) {
    expect_misuse(event_wait_null, "weft_event_wait: event is NULL");
}

static void event_is_set_null(void) {
    weft_pool *pool = make_pool(2);
    CHECK(!weft_event_is_set(NULL));
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(event_is_set_null_is_false) {
    expect_misuse(event_is_set_null, "weft_event_is_set: event is NULL");
}

static void context_release_null(void) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    weft_context_release(NULL); /* ctx stays held */
    CHECK_EQ(weft_thread_index(), 2);
    weft_context_release(ctx);
    CHECK_EQ(weft_thread_index(), -1);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(context_release_null_does_nothing) {
    expect_misuse(context_release_null, "weft_context_release: context is NULL");
}

static void *release_elsewhere(void *arg) {
    weft_context_release(arg); /* not this thread's: ignored */
    return NULL;
}

static void context_release_by_another_thread(void) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 2, .contexts = 1}), 0);
    weft_context *ctx;
    CHECK_EQ(weft_context_acquire(pool, &ctx), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, release_elsewhere, ctx), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), EBUSY); /* still held */
    weft_context_release(ctx);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(context_release_by_another_thread_does_nothing) {
    expect_misuse(context_release_by_another_thread,
                  "weft_context_release: the context is not the calling thread's");
}

static void phase_end_without_begin(void) {
    weft_pool *pool = make_pool(2);
    weft_phase_end(pool, false);
    check_pool_works(pool);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(phase_end_without_begin_does_nothing) {
    expect_misuse(phase_end_without_begin, "weft_phase_end without weft_phase_begin");
}
