/* SPDX-License-Identifier: MIT */
/* weft_sort, weft_sort_r: the order qsort gives, at sizes around the
 * cutoffs, on random, sorted, reverse-sorted, all-equal and duplicate-heavy
 * arrays, on pools of one worker and oversubscribed ones; elements of odd
 * sizes; the context of weft_sort_r; the compares equal keys cost; a
 * broken comparison; sorts inside jobs; cancellation and every documented
 * errno. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "pools.h"
#include "weft.h"

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

/* Sort a copy of v[0, n) with qsort and with weft_sort on pool, and compare:
 * the same keys in the same order (for integers, the same array). */
static void check_like_qsort(weft_pool *pool, const uint64_t *v, size_t n) {
    uint64_t *want = malloc(n * sizeof *want + 1), *got = malloc(n * sizeof *got + 1);
    CHECK(want && got);
    memcpy(want, v, n * sizeof *v);
    memcpy(got, v, n * sizeof *v);
    qsort(want, n, sizeof *want, cmp_u64);
    CHECK_EQ(weft_sort(pool, got, n, sizeof *got, cmp_u64), 0);
    CHECK(memcmp(want, got, n * sizeof *got) == 0);
    free(want);
    free(got);
}

/* The sizes around the cutoffs (insertion, ninther, the parallel one) and
 * large ones; the pools: one worker, three, eight on however few cores. */
static const size_t sizes[] = {0, 1, 2, 3, 12, 13, 127, 128, 2047, 2048, 2049, 4097, 65537};
static const unsigned pool_sizes[] = {1, 3, 8};
#define NSIZES (sizeof sizes / sizeof sizes[0])

TEST(sorts_like_qsort_at_every_size) {
    size_t big = (size_t)scaled(1000003);
    uint64_t *v = malloc(big * sizeof *v);
    CHECK(v);
    for (int t = 0; t < 3; t++) {
        weft_pool *pool = make_pool(pool_sizes[t]);
        for (size_t k = 0; k <= NSIZES; k++) {
            size_t n = k < NSIZES ? sizes[k] : big;
            for (size_t i = 0; i < n; i++)
                v[i] = mix(n + i);
            check_like_qsort(pool, v, n);
            for (size_t i = 0; i < n; i++)
                v[i] = mix(i) % 5; /* mostly duplicates */
            check_like_qsort(pool, v, n);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    for (size_t i = 0; i < big; i++)
        v[i] = mix(i);
    check_like_qsort(NULL, v, big); /* the default pool, from outside */
    free(v);
}

TEST(sorts_sorted_reverse_equal_and_organ_pipe_arrays) {
    size_t n = (size_t)scaled(1 << 20);
    uint64_t *v = malloc(n * sizeof *v);
    CHECK(v);
    for (int t = 0; t < 3; t++) {
        weft_pool *pool = make_pool(pool_sizes[t]);
        for (int shape = 0; shape < 5; shape++) {
            for (size_t i = 0; i < n; i++) {
                switch (shape) {
                case 0:
                    v[i] = i;
                    break; /* sorted */
                case 1:
                    v[i] = n - i;
                    break; /* reverse-sorted */
                case 2:
                    v[i] = 42;
                    break; /* all equal */
                case 3:
                    v[i] = i < n / 2 ? i : n - i;
                    break; /* organ pipe */
                default:
                    v[i] = i % 1000 ? i : mix(i);
                    break; /* sorted, a few strays */
                }
            }
            check_like_qsort(pool, v, n);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    free(v);
}

/* Elements of 3, 24 and 100 bytes (above the swap buffer's 64), the key in
 * their first 2 bytes and their index after it: the order of keys as qsort
 * gives it, and every index still there once. */
static int cmp_key16(const void *a, const void *b) {
    uint16_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

TEST(sorts_elements_of_any_size) {
    size_t n = (size_t)scaled(100000);
    static const size_t elem_sizes[] = {3, 24, 100};
    weft_pool *pool = make_pool(3);
    for (int k = 0; k < 3; k++) {
        size_t size = elem_sizes[k];
        unsigned char *v = malloc(n * size);
        char *seen = calloc(n, 1);
        CHECK(v && seen);
        for (size_t i = 0; i < n; i++) {
            memset(v + i * size, 0, size);
            uint16_t key = (uint16_t)(mix(i) % 1000);
            memcpy(v + i * size, &key, sizeof key);
            uint32_t index = (uint32_t)i;
            if (size >= 6)
                memcpy(v + i * size + 2, &index, sizeof index);
            else
                v[i * size + 2] = (unsigned char)i;
        }
        CHECK_EQ(weft_sort(pool, v, n, size, cmp_key16), 0);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                CHECK(cmp_key16(v + (i - 1) * size, v + i * size) <= 0);
            if (size >= 6) {
                uint32_t index;
                memcpy(&index, v + i * size + 2, sizeof index);
                CHECK(index < n && !seen[index]);
                seen[index] = 1;
                uint16_t key;
                memcpy(&key, v + i * size, sizeof key);
                CHECK_EQ(key, mix(index) % 1000);
            }
        }
        free(v);
        free(seen);
    }
    CHECK_EQ(weft_pool_destroy(pool), 0);
}

/* weft_sort_r: indices ordered by the keys they point at, through arg. */
static int cmp_by_key(const void *a, const void *b, void *arg) {
    const uint64_t *keys = arg;
    uint32_t i, j;
    memcpy(&i, a, sizeof i);
    memcpy(&j, b, sizeof j);
    return (keys[i] > keys[j]) - (keys[i] < keys[j]);
}

TEST(sort_r_passes_its_context) {
    size_t n = (size_t)scaled(300000);
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *idx = malloc(n * sizeof *idx);
    CHECK(keys && idx);
    for (size_t i = 0; i < n; i++) {
        keys[i] = mix(i) % 10000;
        idx[i] = (uint32_t)i;
    }
    weft_pool *pool = make_pool(3);
    CHECK_EQ(weft_sort_r(pool, idx, n, sizeof *idx, cmp_by_key, keys), 0);
    for (size_t i = 1; i < n; i++)
        CHECK(keys[idx[i - 1]] <= keys[idx[i]]);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    free(keys);
    free(idx);
}

/* Keys equal to a piece's left neighbour are set aside in one pass: an
 * all-equal array costs a few compares a key, not log2(n) of them; two
 * keys a few more. Counted, in pools and on one thread. */
static atomic_size_t compares;

static int cmp_counted(const void *a, const void *b) {
    atomic_fetch_add_explicit(&compares, 1, memory_order_relaxed);
    return cmp_u64(a, b);
}

TEST(compares_equal_keys_a_bounded_number_of_times) {
    size_t n = (size_t)scaled(1 << 18);
    uint64_t *v = malloc(n * sizeof *v);
    CHECK(v);
    for (size_t t = 0; t < sizeof pool_sizes / sizeof pool_sizes[0]; t++) {
        weft_pool *pool = make_pool(pool_sizes[t]);
        for (uint64_t keys = 1; keys <= 2; keys++) {
            for (size_t i = 0; i < n; i++)
                v[i] = mix(i + t) % keys;
            atomic_store(&compares, 0);
            CHECK_EQ(weft_sort(pool, v, n, sizeof *v, cmp_counted), 0);
            for (size_t i = 1; i < n; i++)
                CHECK(v[i - 1] <= v[i]);
            CHECK(atomic_load(&compares) <= (2 * keys + 1) * n);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    free(v);
}

/* A comparison that is no total order (a coin toss) is the caller's error,
 * but the sort stays inside the array (ASan would see a read outside it)
 * and keeps every element. */
static atomic_uint_fast64_t tosses;

static int cmp_toss(const void *a, const void *b) {
    (void)a;
    (void)b;
    return (int)(mix(atomic_fetch_add_explicit(&tosses, 1, memory_order_relaxed)) % 3) - 1;
}

TEST(stays_in_the_array_under_a_broken_comparison) {
    size_t n = (size_t)scaled(100000);
    uint64_t *v = malloc(n * sizeof *v), *want = malloc(n * sizeof *want);
    CHECK(v && want);
    for (size_t t = 0; t < sizeof pool_sizes / sizeof pool_sizes[0]; t++) {
        weft_pool *pool = make_pool(pool_sizes[t]);
        for (size_t i = 0; i < n; i++)
            want[i] = v[i] = mix(i) % 50;
        CHECK_EQ(weft_sort(pool, v, n, sizeof *v, cmp_toss), 0);
        qsort(v, n, sizeof *v, cmp_u64);
        qsort(want, n, sizeof *want, cmp_u64);
        CHECK(memcmp(v, want, n * sizeof *v) == 0);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    free(v);
    free(want);
}

/* McIlroy's adversary ("A killer adversary for quicksort", 1999): every key
 * starts as gas, above every solid key; a compare of two gas keys freezes
 * one of them, the one likelier to be the pivot, to the next solid value.
 * A quicksort against it splits a few keys off each partition, so only
 * the budget's heap sort keeps the compares near n log n. It answers as
 * one strict weak order would (frozen keys keep their values, gas sorts
 * after them), so the result must be sorted by the final values. The lock
 * makes one history of the compares of concurrent pieces. */
typedef struct adversary {
    pthread_mutex_t lock;
    size_t *value; /* a key's value; gas until frozen */
    size_t gas, solid, candidate, compares;
} adversary;

static int cmp_adversary(const void *a, const void *b, void *arg) {
    adversary *k = arg;
    uint32_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    pthread_mutex_lock(&k->lock);
    k->compares++;
    if (k->value[x] == k->gas && k->value[y] == k->gas)
        k->value[x == k->candidate ? x : y] = k->solid++;
    if (k->value[x] == k->gas)
        k->candidate = x;
    else if (k->value[y] == k->gas)
        k->candidate = y;
    int c = (k->value[x] > k->value[y]) - (k->value[x] < k->value[y]);
    pthread_mutex_unlock(&k->lock);
    return c;
}

/* The adversary's keys, sorted on one thread (a piece of the cutoff) and in
 * pools: sorted by the values it gave, in at most 5 n log2(n) compares:
 * 2 log2(n) levels of partitions of about n compares each, then a heap
 * sort's 2 n log2(n). Without the heap sort the count grows as n^2. */
TEST(stays_n_log_n_against_a_killer_adversary) {
    size_t sizes_[] = {2048, (size_t)scaled(1 << 15)};
    for (size_t t = 0; t < sizeof pool_sizes / sizeof pool_sizes[0]; t++) {
        weft_pool *pool = make_pool(pool_sizes[t]);
        for (int s = 0; s < 2; s++) {
            size_t n = sizes_[s], log2n = 0;
            for (size_t m = n; m > 1; m >>= 1)
                log2n++;
            adversary k = {.gas = n, .candidate = 0};
            CHECK_EQ(pthread_mutex_init(&k.lock, NULL), 0);
            uint32_t *idx = malloc(n * sizeof *idx);
            k.value = malloc(n * sizeof *k.value);
            CHECK(idx && k.value);
            for (size_t i = 0; i < n; i++) {
                idx[i] = (uint32_t)i;
                k.value[i] = k.gas;
            }
            CHECK_EQ(weft_sort_r(pool, idx, n, sizeof *idx, cmp_adversary, &k), 0);
            for (size_t i = 1; i < n; i++)
                CHECK(k.value[idx[i - 1]] <= k.value[idx[i]]);
            CHECK(k.compares <= 5 * n * log2n);
            pthread_mutex_destroy(&k.lock);
            free(idx);
            free(k.value);
        }
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
}

/* Sorts inside the pieces of a loop: each on the worker that runs it,
 * which takes part in its own sort. */
typedef struct nested {
    uint64_t *v;
    size_t each;
} nested;

static void sort_each(size_t b, size_t e, void *arg) {
    nested *s = arg;
    for (size_t i = b; i < e; i++)
        CHECK_EQ(weft_sort(NULL, s->v + i * s->each, s->each, sizeof(uint64_t), cmp_u64), 0);
}

TEST(sorts_inside_jobs) {
    nested s = {NULL, (size_t)scaled(20000)};
    size_t parts = 16;
    s.v = malloc(parts * s.each * sizeof *s.v);
    CHECK(s.v);
    for (size_t i = 0; i < parts * s.each; i++)
        s.v[i] = mix(i);
    weft_pool *pool = make_pool(3);
    weft_for(pool, 0, parts, 1, sort_each, &s);
    for (size_t p = 0; p < parts; p++)
        for (size_t i = 1; i < s.each; i++)
            CHECK(s.v[p * s.each + i - 1] <= s.v[p * s.each + i]);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    free(s.v);
}

/* ---- cancellation -------------------------------------------------------------- */

static atomic_long calls;
static long cancel_after;

static int cmp_then_cancel(const void *a, const void *b) {
    if (atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed) == cancel_after)
        weft_cancel(); /* the group of the job that compares: the scope */
    return cmp_u64(a, b);
}

typedef struct cancelled_sort {
    uint64_t *v;
    size_t n;
    int rc;
} cancelled_sort;

static void sort_in_scope(weft_scope *scope, void *arg) {
    (void)scope;
    cancelled_sort *c = arg;
    c->rc = weft_sort(NULL, c->v, c->n, sizeof *c->v, cmp_then_cancel);
}

/* A cancel from the comparator skips the pieces not started: ECANCELED, and
 * the array still holds every element. Before the first compare, after
 * the last one (too late to skip anything: still ECANCELED), and in
 * between. Outside any group, weft_cancel does nothing and the sort ends. */
TEST(a_cancelled_group_stops_the_sort) {
    size_t n = (size_t)scaled(200000);
    cancelled_sort c = {malloc(n * sizeof(uint64_t)), n, -1};
    uint64_t *sorted = malloc(n * sizeof *sorted);
    CHECK(c.v && sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = mix(i);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    weft_pool *pool = make_pool(3);
    long afters[] = {0, 1000, 100000, 1L << 40};
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < n; i++)
            c.v[i] = mix(i);
        atomic_store(&calls, 0);
        cancel_after = afters[k];
        weft_scope_run(pool, sort_in_scope, &c);
        CHECK_EQ(c.rc, k < 3 ? ECANCELED : 0);
        qsort(c.v, n, sizeof *c.v, cmp_u64);
        CHECK(memcmp(c.v, sorted, n * sizeof *sorted) == 0); /* a permutation */
    }
    for (size_t i = 0; i < n; i++)
        c.v[i] = mix(i);
    atomic_store(&calls, 0);
    cancel_after = 10;
    CHECK_EQ(weft_sort(pool, c.v, n, sizeof *c.v, cmp_then_cancel), 0); /* no group */
    CHECK(memcmp(c.v, sorted, n * sizeof *sorted) == 0);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    free(c.v);
    free(sorted);
}

/* ---- errors ---------------------------------------------------------------------- */

TEST(rejects_bad_arguments) {
    uint64_t v[4] = {4, 3, 2, 1};
    CHECK_EQ(weft_sort(NULL, NULL, 4, sizeof *v, cmp_u64), EINVAL);
    CHECK_EQ(weft_sort(NULL, v, 4, 0, cmp_u64), EINVAL);
    CHECK_EQ(weft_sort(NULL, v, 4, sizeof *v, NULL), EINVAL);
    CHECK_EQ(weft_sort(NULL, v, SIZE_MAX / 4, 8, cmp_u64), EINVAL); /* n * size overflows */
    CHECK_EQ(weft_sort_r(NULL, v, 4, sizeof *v, NULL, NULL), EINVAL);
    CHECK_EQ(v[0], 4);                                         /* untouched */
    CHECK_EQ(weft_sort(NULL, NULL, 0, sizeof *v, cmp_u64), 0); /* nothing to sort */
    CHECK_EQ(weft_sort(NULL, v, 1, sizeof *v, cmp_u64), 0);
    CHECK_EQ(v[0], 4);
    CHECK_EQ(weft_sort(NULL, v, 4, sizeof *v, cmp_u64), 0);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4);
}
