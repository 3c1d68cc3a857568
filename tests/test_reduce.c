/* SPDX-License-Identifier: MIT */
/* weft_reduce: exact sums, index-order combining (a non-commutative
 * associative combine), bit-identical floating-point results across thread
 * counts with grain > 0, large accumulators, leaves that hand on their rest,
 * and every documented errno. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pools.h"
#include "jobs.h"
#include "failmalloc.h"
#include "handed_on.h"
#include "weft.h"

/* ---- sum of i ---------------------------------------------------------------- */

TEST(sums_exactly_with_any_grain) {
    weft_pool *pool = make_pool(4);
    size_t grains[] = {0, 1, 3, 1000, 1 << 20};
    for (int g = 0; g < 5; g++) {
        uint64_t n = (uint64_t)scaled(1000000), r = 7;
        CHECK_EQ(weft_reduce(pool, 0, n, grains[g], &sum_of_indices, &r), 0);
        CHECK_EQ(r, n * (n - 1) / 2);
        CHECK_EQ(weft_reduce(pool, 10, 11, grains[g], &sum_of_indices, &r), 0);
        CHECK_EQ(r, 10);
    }
    uint64_t r = 7;
    CHECK_EQ(weft_reduce(pool, 5, 5, 0, &sum_of_indices, &r), 0); /* empty: the identity */
    CHECK_EQ(r, 0);
    CHECK_EQ(weft_reduce(NULL, 0, 100, 0, &sum_of_indices, &r), 0); /* default pool, from outside */
    CHECK_EQ(r, 4950);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- 2x2 matrices mod p: associative, not commutative ----------------------- */

#define P 1000003u

typedef struct mat {
    uint64_t a, b, c, d;
} mat;

static mat mat_mul(mat x, mat y) {
    return (mat){(x.a * y.a + x.b * y.c) % P, (x.a * y.b + x.b * y.d) % P,
                 (x.c * y.a + x.d * y.c) % P, (x.c * y.b + x.d * y.d) % P};
}

static mat mat_of(size_t i) {
    return (mat){i % 7 + 1, i % 5, i % 3, i % 11 + 2};
}

static void mat_init(void *acc, void *arg) {
    (void)arg;
    *(mat *)acc = (mat){1, 0, 0, 1};
}

static void mat_fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    for (size_t i = b; i < e; i++)
        *(mat *)acc = mat_mul(*(mat *)acc, mat_of(i));
}

static void mat_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(mat *)acc = mat_mul(*(mat *)acc, *(const mat *)rhs);
}

TEST(combines_in_index_order) {
    const weft_reducer prod = {sizeof(mat), mat_init, mat_fold, mat_combine, NULL};
    size_t n = (size_t)scaled(200000);
    mat serial = {1, 0, 0, 1};
    mat_fold(0, n, &serial, NULL);
    weft_pool *pool = make_pool(3);
    for (int g = 0; g < 3; g++) {
        mat r;
        CHECK_EQ(weft_reduce(pool, 0, n, g == 0 ? 0 : (size_t)g * 17, &prod, &r), 0);
        CHECK(memcmp(&r, &serial, sizeof r) == 0);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- floating point: the same bits whatever the thread count ------------------ */

static void dsum_init(void *acc, void *arg) {
    (void)arg;
    *(double *)acc = 0;
}

static void dsum_fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    for (size_t i = b; i < e; i++)
        *(double *)acc += 1.0 / (double)(i + 1) * ((i % 3) ? 1 : -1.37);
}

static void dsum_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(double *)acc += *(const double *)rhs;
}

TEST(float_sum_is_deterministic_with_grain) {
    const weft_reducer dsum = {sizeof(double), dsum_init, dsum_fold, dsum_combine, NULL};
    size_t n = (size_t)scaled(400000);
    double first = 0;
    unsigned counts[] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        weft_pool *pool = make_pool(counts[t]);
        for (int run = 0; run < 3; run++) {
            double r;
            CHECK_EQ(weft_reduce(pool, 0, n, 64, &dsum, &r), 0);
            if (t == 0 && run == 0)
                first = r;
            CHECK(memcmp(&r, &first, sizeof r) == 0); /* bit for bit */
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* ---- large accumulators, errors ------------------------------------------------ */

typedef struct histogram {
    uint64_t bins[100]; /* 800 bytes: allocated, not on the stack */
} histogram;

static void hist_init(void *acc, void *arg) {
    (void)arg;
    memset(acc, 0, sizeof(histogram));
}

static void hist_fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    for (size_t i = b; i < e; i++)
        ((histogram *)acc)->bins[i % 100]++;
}

static void hist_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    for (int k = 0; k < 100; k++)
        ((histogram *)acc)->bins[k] += ((const histogram *)rhs)->bins[k];
}

static const weft_reducer hist = {sizeof(histogram), hist_init, hist_fold, hist_combine, NULL};

TEST(large_accumulators) {
    weft_pool *pool = make_pool(4);
    histogram h;
    CHECK_EQ(weft_reduce(pool, 0, 100000, 0, &hist, &h), 0);
    for (int k = 0; k < 100; k++)
        CHECK_EQ(h.bins[k], 1000);
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

typedef struct starved {
    weft_pool *pool;
    long allocations; /* that succeed before every one fails */
    int err;
    histogram h;
} starved;

static void reduce_starved(void *arg) {
    starved *s = arg;
    failmalloc_arm(s->allocations);
    s->err = weft_reduce(s->pool, 0, 100000, 100, &hist, &s->h);
    failmalloc_disarm();
}

TEST(reports_enomem_and_leaves_result_alone) {
    weft_pool *pool = make_pool(1); /* one worker: every allocation is its own */
    for (long k = 0; k < 4; k++) {  /* fail at the root, then deeper in the tree */
        starved s = {.pool = pool, .allocations = k};
        memset(&s.h, 0xab, sizeof s.h);
        weft_run(pool, reduce_starved, &s);
        CHECK_EQ(s.err, ENOMEM);
        for (int b = 0; b < 100; b++)
            CHECK_EQ(s.h.bins[b], 0xababababababababull);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* ---- leaves that hand on their rest (loop.c; handed_on.h) -------------------- */

/* weft_reduce's leaves hand on their rest too, and the folds of a leaf's steps and of the rest
 * it handed on combine in index order: the accumulator is the range it
 * covers, and a fold or combine that would leave a gap or an overlap spoils
 * it. */
typedef struct span {
    size_t lo, hi; /* [lo, hi); lo > hi: empty */
    bool ok;
} span;

static void span_init(void *acc, void *arg) {
    (void)arg;
    *(span *)acc = (span){.lo = 1, .hi = 0, .ok = true};
}

static void span_join(span *s, size_t lo, size_t hi, bool ok) {
    if (s->lo > s->hi)
        *s = (span){lo, hi, ok};
    else if (lo <= hi)
        *s = (span){s->lo, hi, s->ok && ok && s->hi == lo};
}

static void span_fold(size_t begin, size_t end, void *acc, void *arg) {
    answer_when_asked(begin, end, arg);
    span_join(acc, begin, end, true);
}

static void span_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    const span *r = rhs;
    span_join(acc, r->lo, r->hi, r->ok);
}

TEST(a_reduce_leaf_hands_on_its_rest_in_index_order) {
    asked a = {.pool = make_pool(1), .caller = pthread_self(), .n = 1024};
    weft_reducer r = {sizeof(span), span_init, span_fold, span_combine, &a};
    span s;
    CHECK_EQ(weft_reduce(a.pool, 0, a.n, 0, &r, &s), 0);
    CHECK(s.ok && s.lo == 0 && s.hi == a.n);
    check_asked(&a);
}

/* The rest's own accumulator, when it must be allocated and cannot be:
 * ENOMEM, the result untouched (the caller's first step arms the failure
 * of its next allocation, which is the rest's accumulator). */
typedef struct wide_span {
    span s;
    unsigned char pad[300]; /* over REDUCE_STACK_BYTES: allocated */
} wide_span;

static void wide_span_init(void *acc, void *arg) {
    memset(acc, 0, sizeof(wide_span));
    span_init(acc, arg);
}

static void fail_next_allocation(void) {
    failmalloc_arm(0);
}

TEST(a_rest_without_memory_reports_enomem) {
    asked a = {.pool = make_pool(1),
               .caller = pthread_self(),
               .n = 1024,
               .first_step = fail_next_allocation};
    weft_reducer r = {sizeof(wide_span), wide_span_init, span_fold, span_combine, &a};
    wide_span s;
    memset(&s, 0xab, sizeof s);
    int err = weft_reduce(a.pool, 0, a.n, 0, &r, &s);
    failmalloc_disarm();
    CHECK_EQ(err, ENOMEM);
    CHECK_EQ(s.s.lo, 0xababababababababull);
    CHECK_EQ(weft_pool_destroy(a.pool), 0);
}

TEST(bad_input_gets_einval) {
    uint64_t r;
    weft_reducer bad = sum_of_indices;
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, NULL, &r), EINVAL);
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, &sum_of_indices, NULL), EINVAL);
    bad.size = 0;
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, &bad, &r), EINVAL);
    bad = sum_of_indices, bad.fold = NULL;
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, &bad, &r), EINVAL);
    bad = sum_of_indices, bad.combine = NULL;
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, &bad, &r), EINVAL);
    bad = sum_of_indices, bad.init = NULL;
    CHECK_EQ(weft_reduce(NULL, 0, 10, 0, &bad, &r), EINVAL);
}
