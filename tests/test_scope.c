/* SPDX-License-Identifier: MIT */
/* Scopes and spawn: each job exactly once, nested scopes, spawns from
 * outside, and spawns under failing allocations. */
#include <errno.h>
#include <stdatomic.h>

#include "check.h"
#include "pools.h"
#include "failmalloc.h"
#include "weft.h"

static _Atomic long counted;

static void count_one(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
}

static _Atomic long released;

static void release_one(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&released, 1, memory_order_relaxed);
}

static void million(weft_scope *s, void *arg) {
    long n = *(long *)arg;
    for (long i = 0; i < n; i++)
        CHECK_EQ(weft_scope_spawn(s, count_one, NULL), 0);
}

TEST(scope_runs_a_million_spawns) {
    weft_pool *pool = make_pool(2);
    atomic_store(&counted, 0);
    long n = scaled(1000000);
    weft_scope_run(pool, million, &n);
    CHECK_EQ(atomic_load(&counted), n); /* all finished before it returned */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct tree {
    weft_scope *scope;
    int depth;
} tree;

static void tree_node(void *arg);

static void tree_spawn_children(weft_scope *s, int depth) {
    for (int i = 0; i < 3; i++) {
        tree *t = malloc(sizeof *t);
        CHECK(t != NULL);
        *t = (tree){s, depth - 1};
        CHECK_EQ(weft_scope_spawn(s, tree_node, t), 0);
    }
}

static void tree_node(void *arg) {
    tree t = *(tree *)arg;
    free(arg);
    atomic_fetch_add(&counted, 1);
    if (t.depth > 0)
        tree_spawn_children(t.scope, t.depth);
}

static void inner_scope(weft_scope *s, void *arg) {
    (void)arg;
    tree_spawn_children(s, 5);
}

static void outer_scope(weft_scope *s, void *arg) {
    weft_pool *pool = arg;
    tree_spawn_children(s, 5);
    long before = atomic_load(&counted);
    weft_scope_run(pool, inner_scope, NULL); /* nested: returns when its own tree is done */
    CHECK(atomic_load(&counted) >= before + 363);
}

TEST(scopes_nest_and_spawn_from_jobs) {
    weft_pool *pool = make_pool(3);
    atomic_store(&counted, 0);
    weft_scope_run(pool, outer_scope, pool);
    CHECK_EQ(atomic_load(&counted), 2 * 363); /* 3 + 9 + 27 + 81 + 243 per tree */
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

TEST(spawn_from_outside_finishes_before_destroy) {
    weft_pool *pool = make_pool(2);
    atomic_store(&counted, 0);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(weft_spawn(pool, count_one, NULL), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    CHECK_EQ(atomic_load(&counted), 1000);
}

/* ---- out of memory ----------------------------------------------------------- */

TEST(spawn_reports_enomem) {
    weft_pool *pool = make_pool(2);
    failmalloc_arm(0);
    int err = weft_spawn(pool, count_one, NULL);
    failmalloc_disarm();
    CHECK_EQ(err, ENOMEM);
    CHECK_EQ(weft_pool_destroy(pool), 0); /* the failed job is not waited for */
}

static void starve_scope(weft_scope *s, void *arg) {
    long *errors = arg;
    failmalloc_arm(0); /* this worker can no longer allocate */
    for (int i = 0; i < 300; i++) {
        /* Half of them with a release: an error calls neither function. */
        int err = i % 2 ? weft_scope_spawn_release(s, count_one, release_one, NULL)
                        : weft_scope_spawn(s, count_one, NULL);
        CHECK(err == 0 || err == ENOMEM); /* recycled jobs still succeed */
        *errors += err == ENOMEM;
    }
    failmalloc_disarm();
}

TEST(scope_spawn_reports_enomem) {
    weft_pool *pool = make_pool(1);
    atomic_store(&counted, 0);
    atomic_store(&released, 0);
    long errors = 0;
    weft_scope_run(pool, starve_scope, &errors);
    CHECK(errors > 0);
    CHECK_EQ(atomic_load(&counted), 300 - errors); /* the rest all ran */
    CHECK_EQ(atomic_load(&released), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
