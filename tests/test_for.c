/* SPDX-License-Identifier: MIT */
/* weft_for: each index exactly once, the same pieces for a given grain on
 * every run and thread count, leaves that hand on their rest when asked, and
 * a caller counted among the threads a loop splits for. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "handed_on.h"
#include "check.h"
#include "pools.h"
#include "visits.h"
#include "weft.h"

static void check_for(weft_pool *pool, size_t begin, size_t end, size_t grain) {
    size_t n = end - begin;
    visits v = {.base = begin, .grain = grain, .total = n};
    v.hits = calloc(n ? n : 1, 1);
    weft_for(pool, begin, end, grain, visit, &v);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(v.hits[i], 1);
    CHECK_EQ(v.short_pieces, 0);
    free((void *)v.hits);
}

TEST(for_visits_each_index_once) {
    weft_pool *pool = make_pool(3);
    size_t grains[] = {0, 1, 7, 1000};
    for (int g = 0; g < 4; g++) {
        check_for(pool, 0, 1, grains[g]);
        check_for(pool, 5, 5 + 999, grains[g]);
        check_for(pool, 1000, 1000 + (size_t)scaled(300000), grains[g]);
    }
    visits v = {0};
    weft_for(pool, 10, 10, 0, visit, &v); /* empty: body never called */
    weft_for(pool, 10, 3, 0, visit, &v);
    CHECK_EQ(v.pieces, 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* grain > 0 gives the same pieces on every run and thread count. */
static void record_piece(size_t begin, size_t end, void *arg) {
    _Atomic size_t *ends = arg;
    atomic_store(&ends[begin], end);
}

TEST(for_with_grain_splits_the_same_way) {
    enum { N = 10007, GRAIN = 37 };
    static _Atomic size_t first[N], again[N];
    weft_pool *p1 = make_pool(1), *p4 = make_pool(4);
    weft_for(p1, 0, N, GRAIN, record_piece, first);
    weft_for(p4, 0, N, GRAIN, record_piece, again);
    size_t pieces = 0;
    for (size_t i = 0; i < N; i++) {
        CHECK_EQ(first[i], again[i]);
        if (first[i]) {
            CHECK(first[i] - i >= GRAIN && first[i] - i < 2 * GRAIN);
            pieces++;
        }
    }
    CHECK(pieces > 100);
    CHECK_EQ(weft_pool_destroy(p1), 0);
    CHECK_EQ(weft_pool_destroy(p4), 0);
}

TEST(a_leaf_hands_on_its_rest_when_asked) {
    asked a = {.pool = make_pool(1), .caller = pthread_self(), .n = 1024};
    weft_for(a.pool, 0, a.n, 0, answer_when_asked, &a);
    check_asked(&a);
}

/* The caller of a loop counts among the threads it splits for: from a
 * caller of a pool of one worker, the leaves are the quarters of the range,
 * as for two threads (a leaf's steps never cross one), not its halves. The
 * worker is kept busy meanwhile, so no steal or request reshapes the tree. */
typedef struct busy_worker {
    _Atomic bool started, release;
} busy_worker;

static void hold_the_worker(void *arg) {
    busy_worker *b = arg;
    atomic_store(&b->started, true);
    double deadline = check_now() + 10;
    while (!atomic_load(&b->release))
        CHECK(check_now() < deadline);
}

/* A pool of one worker, held busy until b->release. */
static weft_pool *pool_with_busy_worker(busy_worker *b) {
    weft_pool *pool = make_pool(1);
    CHECK_EQ(weft_spawn(pool, hold_the_worker, b), 0);
    double deadline = check_now() + 10;
    while (!atomic_load(&b->started))
        CHECK(check_now() < deadline);
    return pool;
}

typedef struct quarters {
    size_t n;
    _Atomic int crossings;
} quarters;

static void count_crossings(size_t begin, size_t end, void *arg) {
    quarters *q = arg;
    for (size_t k = 1; k < 4; k++)
        if (begin < k * q->n / 4 && end > k * q->n / 4)
            atomic_fetch_add(&q->crossings, 1);
}

TEST(a_callers_loop_splits_for_the_caller_too) {
    busy_worker b = {0};
    weft_pool *pool = pool_with_busy_worker(&b);
    quarters q = {.n = 1000}; /* quarters that no halving of a half's steps meets */
    weft_for(pool, 0, q.n, 0, count_crossings, &q);
    atomic_store(&b.release, true);
    CHECK_EQ(atomic_load(&q.crossings), 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* No step is longer than a 128th of the loop's range (loop.c, LOOP_STEPS),
 * however long the leaves: from a caller whose one worker is busy, the
 * leaves are the range's quarters, whose eighths are 32nds of it. */
typedef struct longest {
    _Atomic size_t len;
} longest;

static void record_longest(size_t begin, size_t end, void *arg) {
    longest *l = arg;
    size_t seen = atomic_load(&l->len);
    while (end - begin > seen && !atomic_compare_exchange_weak(&l->len, &seen, end - begin)) {
    }
}

TEST(no_step_is_longer_than_a_128th_of_the_loop) {
    busy_worker b = {0};
    weft_pool *pool = pool_with_busy_worker(&b);
    longest l = {0};
    weft_for(pool, 0, 128 * 1000, 0, record_longest, &l);
    atomic_store(&b.release, true);
    CHECK(atomic_load(&l.len) <= 1000);
    CHECK(atomic_load(&l.len) > 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* With grain 0 a call of body on 4096 indices or more ends on a multiple of
 * 64, or at the range's end (weft.h): the next call starts on a cache line of
 * an aligned array. */
enum { CUT_ALIGN = 64, CUT_ALIGN_MIN = 4096, MAX_CALLS = 1 << 16 };

typedef struct calls {
    _Atomic size_t n;
    size_t begin[MAX_CALLS], end[MAX_CALLS];
} calls;

static void record_call(size_t begin, size_t end, void *arg) {
    calls *c = arg;
    size_t k = atomic_fetch_add(&c->n, 1);
    CHECK(k < MAX_CALLS);
    c->begin[k] = begin;
    c->end[k] = end;
}

static int by_begin(const void *a, const void *b) {
    const size_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The calls of c, sorted by begin, cover [begin, end) once; returns how many
 * follow a call of at least CUT_ALIGN_MIN indices, each checked to start on a
 * multiple of CUT_ALIGN. */
static size_t check_aligned_cuts(calls *c, size_t begin, size_t end) {
    size_t n = atomic_load(&c->n), (*pair)[2] = malloc(n * sizeof *pair), checked = 0;
    CHECK(n > 0 && pair);
    for (size_t k = 0; k < n; k++) {
        pair[k][0] = c->begin[k];
        pair[k][1] = c->end[k];
    }
    qsort(pair, n, sizeof *pair, by_begin);
    CHECK_EQ(pair[0][0], begin);
    CHECK_EQ(pair[n - 1][1], end);
    for (size_t k = 1; k < n; k++) {
        CHECK_EQ(pair[k][0], pair[k - 1][1]);
        if (pair[k - 1][1] - pair[k - 1][0] >= CUT_ALIGN_MIN) {
            CHECK_EQ(pair[k][0] % CUT_ALIGN, 0);
            checked++;
        }
    }
    free(pair);
    return checked;
}

TEST(cuts_fall_on_aligned_indices) {
    /* The caller alone (its worker busy): leaves are the quarters and steps
     * a 128th of 128 * 5001 indices, an odd count no halving aligns. */
    static calls c;
    busy_worker b = {0};
    weft_pool *pool = pool_with_busy_worker(&b);
    weft_for(pool, 10, 10 + 128 * 5001, 0, record_call, &c);
    atomic_store(&b.release, true);
    CHECK(check_aligned_cuts(&c, 10, 10 + 128 * 5001) >= 100);
    /* There every cut, a split's middle as well as a step's end, cuts a part
     * long enough to be aligned (a middle follows a quarter's short last
     * step, which the check above does not count). */
    for (size_t k = 0; k < atomic_load(&c.n); k++)
        CHECK(c.begin[k] == 10 || c.begin[k] % CUT_ALIGN == 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    /* Workers that steal and ask for work: the cuts they cause as well (the
     * rests handed on and the pieces stolen; how many calls qualify depends
     * on the steals, so only the check of each is strict). */
    pool = make_pool(3);
    size_t checked = 0;
    for (int r = 0; r < 20; r++) {
        atomic_store(&c.n, 0);
        weft_for(pool, 3, 3 + 128 * 5001, 0, record_call, &c);
        checked += check_aligned_cuts(&c, 3, 3 + 128 * 5001);
    }
    CHECK(checked > 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- weft_for_2d ------------------------------------------------------------
 * Every cell of rectangles of many shapes (strips either way, a single
 * cell, odd sizes, far from 0) visited exactly once, with weft's blocks and
 * with grains (every block of the grain's size but a dimension's last),
 * on pools of one to four workers and the default pool; an empty rectangle
 * calls nothing; a cancel from a block skips the blocks not started. */

#define GRID_CELLS (97 * 61)

typedef struct grid_check {
    size_t r_begin, r_end, c_begin, c_end, r_grain, c_grain;
    _Atomic int hits[GRID_CELLS];
    _Atomic int bad; /* a block outside the rectangle, empty, or off its grain */
    _Atomic long blocks;
} grid_check;

static void mark_block(size_t r0, size_t r1, size_t c0, size_t c1, void *arg) {
    grid_check *g = arg;
    atomic_fetch_add(&g->blocks, 1);
    if (r0 < g->r_begin || r1 > g->r_end || r0 >= r1 || c0 < g->c_begin || c1 > g->c_end ||
        c0 >= c1 || (g->r_grain && r1 - r0 != g->r_grain && r1 != g->r_end) ||
        (g->c_grain && c1 - c0 != g->c_grain && c1 != g->c_end) ||
        (g->r_grain && (r0 - g->r_begin) % g->r_grain) ||
        (g->c_grain && (c0 - g->c_begin) % g->c_grain)) {
        atomic_store(&g->bad, 1);
        return;
    }
    size_t cols = g->c_end - g->c_begin;
    for (size_t r = r0; r < r1; r++)
        for (size_t c = c0; c < c1; c++)
            atomic_fetch_add(&g->hits[(r - g->r_begin) * cols + (c - g->c_begin)], 1);
}

static void check_grid(weft_pool *pool, size_t rows, size_t cols, size_t r_grain, size_t c_grain) {
    static grid_check g;
    size_t base = (size_t)1 << 40; /* far from 0: no index is an offset by accident */
    g.r_begin = base + 3;
    g.r_end = g.r_begin + rows;
    g.c_begin = base * 2 + 5;
    g.c_end = g.c_begin + cols;
    g.r_grain = r_grain;
    g.c_grain = c_grain;
    atomic_store(&g.bad, 0);
    atomic_store(&g.blocks, 0);
    for (size_t i = 0; i < rows * cols; i++)
        atomic_store(&g.hits[i], 0);
    weft_for_2d(pool, g.r_begin, g.r_end, g.c_begin, g.c_end, r_grain, c_grain, mark_block, &g);
    CHECK_EQ(atomic_load(&g.bad), 0);
    for (size_t i = 0; i < rows * cols; i++)
        CHECK_EQ(atomic_load(&g.hits[i]), 1);
    if (r_grain && c_grain) /* the blocks are the grain's, exactly */
        CHECK_EQ(atomic_load(&g.blocks),
                 (long)(((rows + r_grain - 1) / r_grain) * ((cols + c_grain - 1) / c_grain)));
}

TEST(for_2d_visits_each_cell_once) {
    static const size_t shapes[][2] = {{1, 1},   {1, 61}, {97, 1}, {97, 61},
                                       {64, 64}, {3, 61}, {97, 2}, {17, 19}};
    static const size_t grains[][2] = {{0, 0}, {1, 1}, {4, 7}, {0, 5}, {6, 0}, {200, 200}};
    for (unsigned threads = 0; threads <= 4; threads++) { /* 0: the default pool */
        weft_pool *pool =
            threads ? (threads % 2 ? make_pool(threads) : make_waiting_pool(threads)) : NULL;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t k = 0; k < sizeof grains / sizeof grains[0]; k++)
                check_grid(pool, shapes[s][0], shapes[s][1], grains[k][0], grains[k][1]);
        if (pool)
            CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

static _Atomic long blocks_run;

static void cancel_at_first(size_t r0, size_t r1, size_t c0, size_t c1, void *arg) {
    (void)r0, (void)r1, (void)c0, (void)c1, (void)arg;
    atomic_fetch_add(&blocks_run, 1);
    weft_cancel(); /* the loop's group: no further block starts */
}

static void never(size_t r0, size_t r1, size_t c0, size_t c1, void *arg) {
    (void)r0, (void)r1, (void)c0, (void)c1, (void)arg;
    CHECK(!"called for an empty rectangle");
}

TEST(for_2d_empty_and_cancelled) {
    weft_pool *pool = make_waiting_pool(2);
    weft_for_2d(pool, 5, 5, 0, 10, 0, 0, never, NULL);
    weft_for_2d(pool, 0, 10, 7, 3, 0, 0, never, NULL);
    atomic_store(&blocks_run, 0);
    /* 256 blocks of one cell; the first cancels: only the blocks already
     * running by then (at most one a thread) run. */
    weft_for_2d(pool, 0, 16, 0, 16, 1, 1, cancel_at_first, NULL);
    CHECK(atomic_load(&blocks_run) >= 1);
    if (atomic_load(&blocks_run) > 2)
        fprintf(stderr, "%ld blocks ran\n", atomic_load(&blocks_run));
    CHECK(atomic_load(&blocks_run) <= 2);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}
