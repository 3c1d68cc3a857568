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
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jobs.h"
#include "weft.h"

static weft_pool *make_pool(unsigned threads) {
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = threads}), 0);
    return pool;
}

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
    for (int i = 0; i < BAD_PRIORITIES; i++)
        CHECK_EQ(weft_scope_spawn_priority(scope, mark, NULL, (weft_priority)bad_priorities[i]),
                 EINVAL);
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
