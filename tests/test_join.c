/* SPDX-License-Identifier: MIT */
/* weft_join and weft_run: deep nesting, fib, which pool NULL means, and a
 * join whose deque cannot grow. */
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "failmalloc.h"
#include "jobs.h"
#include "weft.h"

typedef struct deep {
    long depth;
    long leaves;
} deep;

static void leaf(void *arg) {
    ((deep *)arg)->leaves = 1;
}

static void nest(void *arg) {
    deep *d = arg;
    if (d->depth == 0) {
        d->leaves = 1;
        return;
    }
    deep a = {d->depth - 1, 0}, b = {0, 0};
    weft_join(nest, &a, leaf, &b);
    d->leaves = a.leaves + b.leaves;
}

TEST(join_nests_ten_thousand_deep) {
    deep d = {10000, 0};
    weft_join(nest, &d, nothing, NULL); /* from outside: the default pool */
    CHECK_EQ(d.leaves, 10001);
    weft_pool *pool = make_pool(2);
    deep e = {10000, 0};
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

TEST(run_places_work_in_the_pool) {
    int idx = -2;
    weft_join(on_worker, &idx, nothing, NULL);
    CHECK(idx >= 0);
    weft_pool *pool = make_pool(2);
    idx = -2;
    weft_run(pool, on_worker, &idx);
    CHECK(idx == 0 || idx == 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- out of memory ----------------------------------------------------------- */

static void starved_join(void *arg) {
    deep *d = arg;
    failmalloc_arm(0); /* the deque cannot grow past its first buffer */
    nest(d);
    failmalloc_disarm();
}

TEST(join_runs_inline_when_the_deque_cannot_grow) {
    weft_pool *pool = make_pool(1);
    deep d = {2000, 0};
    weft_run(pool, starved_join, &d);
    CHECK_EQ(d.leaves, 2001);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
