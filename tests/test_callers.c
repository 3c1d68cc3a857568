/* SPDX-License-Identifier: MIT */
/* Many callers, many pools: outside threads sharing a pool, the default
 * pool created once, a thousand pools, and pools calling into each other. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "pools.h"
#include "jobs.h"
#include "visits.h"
#include "weft.h"

static void on_worker(void *arg) {
    *(int *)arg = weft_thread_index();
}

typedef struct caller {
    weft_pool *pool;
    long ok;
} caller;

static void *outside_caller(void *arg) {
    caller *c = arg;
    for (int i = 0; i < scaled(200); i++) {
        int idx = -2;
        weft_run(c->pool, on_worker, &idx);
        CHECK(idx >= 0);
        size_t n = 1000 + (size_t)i;
        visits v = {.total = n};
        v.hits = calloc(n, 1);
        weft_for(c->pool, 0, n, (size_t)i % 3, visit, &v);
        for (size_t k = 0; k < n; k++)
            CHECK_EQ(v.hits[k], 1);
        free((void *)v.hits);
        c->ok++;
    }
    return NULL;
}

TEST(many_outside_threads_share_a_pool) {
    enum { CALLERS = 8 };
    weft_pool *pool = make_pool(3);
    pthread_t t[CALLERS];
    caller c[CALLERS];
    for (int i = 0; i < CALLERS; i++) {
        c[i] = (caller){pool, 0};
        pthread_create(&t[i], NULL, outside_caller, &c[i]);
    }
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(c[i].ok, scaled(200));
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

static void *get_default(void *arg) {
    *(weft_pool **)arg = weft_pool_default();
    return NULL;
}

TEST(default_pool_is_created_once) {
    enum { N = 8 };
    pthread_t t[N];
    weft_pool *got[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, get_default, &got[i]);
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        CHECK(got[i] != NULL && got[i] == got[0]);
    }
    CHECK_EQ(weft_pool_threads(NULL), weft_pool_threads(got[0]));
}

TEST(create_and_destroy_a_thousand_pools) {
    for (int i = 0; i < scaled(1000); i++) {
        weft_pool *pool = make_pool(1 + i % 3);
        if (i % 2) {
            fib f = {10, 0};
            weft_run(pool, fib_job, &f);
            CHECK_EQ(f.r, 55);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* Pools calling into each other: a worker of A runs work in B, which runs
 * work in A, ... Each waiting worker keeps serving its own pool. */
typedef struct ping {
    weft_pool *here, *there;
    int depth;
    long sum;
} ping;

static void ping_job(void *arg) {
    ping *p = arg;
    if (p->depth == 0) {
        fib f = {12, 0};
        fib_job(&f);
        p->sum = f.r;
        return;
    }
    ping x = {p->there, p->here, p->depth - 1, 0}, y = x;
    weft_run(p->there, ping_job, &x); /* cross-pool: participates in `here` */
    weft_join(ping_job, &y, nothing, NULL);
    p->sum = x.sum + y.sum;
}

TEST(two_pools_call_into_each_other) {
    weft_pool *a = make_pool(2), *b = make_pool(1);
    for (int i = 0; i < scaled(50); i++) {
        ping p = {a, b, 6, 0};
        weft_run(a, ping_job, &p);
        CHECK_EQ(p.sum, 144 << 6);
    }
    CHECK_EQ(weft_pool_destroy(a), 0);
    CHECK_EQ(weft_pool_destroy(b), 0);
}
