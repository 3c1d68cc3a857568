/* SPDX-License-Identifier: MIT */
/* weft_sort, weft_sort_r: qsort in parallel, on the public API alone
 * (weft_run, weft_join, weft_cancelled), and the error message (os/error.h).
 *
 * A parallel introsort in place, as weft::sort in weft.hpp, for elements
 * known only by their size and a comparison function:
 *  - a piece longer than CUTOFF is partitioned around a pivot on one thread,
 *    and its two sides are sorted by a weft_join, so that every partition
 *    offers a side to idle workers; a piece of CUTOFF or fewer is sorted on
 *    one thread by the same partitioning, recursing into the smaller side
 *    and looping on the larger (stack depth log2 n), and by insertion below
 *    INSERTION;
 *  - Hoare's partition, both scans stopping at keys equal to the pivot: equal
 *    keys split evenly between the sides, so an all-equal array halves at
 *    every level (n log n) instead of peeling one element a level (n^2);
 *  - the pivot is the median of three, or for pieces of NINTHER or more
 *    Tukey's ninther: sorted, reverse-sorted and organ-pipe arrays split
 *    near their middle;
 *  - a budget of 2 log2(n) levels of partitions, as introsort: a piece that
 *    exhausts it (an array built against the pivot rule) is heapsorted, so
 *    the worst case is n log n compares;
 *  - nothing is allocated: elements move by swaps through a small buffer on
 *    the stack, so there is no ENOMEM and any element size works.
 * Not stable, as qsort is not.
 *
 * Cancellation: the sort is no group of its own (weft_join's halves belong
 * to the caller's group). A piece that finds that group cancelled
 * (weft_cancelled) returns without sorting, and the call answers ECANCELED:
 * the array is then a permutation of its input, partly sorted. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "weft.h"
#include "os/error.h"

/* A piece this long or shorter is sorted on one thread: some 20 000
 * compares through a function pointer, tens of microseconds, against which
 * a fork that is stolen (a wake-up, a few cache misses: microseconds) is a
 * few percent. */
#define CUTOFF 2048
/* Below this many elements, insertion sort: its quadratic term is smaller
 * than a partition's overhead on a piece that fits a few cache lines. */
#define INSERTION 12
/* From this many elements on, the ninther: nine samples spread over the
 * piece are worth their six extra compares. */
#define NINTHER 128

typedef struct sorter {
    size_t size;
    int (*cmp)(const void *, const void *);
    int (*cmp_r)(const void *, const void *, void *); /* used when cmp is NULL */
    void *arg;
    unsigned budget;       /* levels of partitions before heapsort */
    atomic_bool cancelled; /* A: a piece saw weft_cancelled() */
} sorter;

static inline int compare(const sorter *s, const char *a, const char *b) {
    return s->cmp ? s->cmp(a, b) : s->cmp_r(a, b, s->arg);
}

static inline char *at(const sorter *s, char *base, size_t i) {
    return base + i * s->size;
}

/* Swap n bytes through a buffer on the stack. Inlined where n is a
 * constant, the copies become plain loads and stores. */
static inline void swap_bytes(char *a, char *b, size_t n) {
    unsigned char t[64];
    while (n > 0) {
        size_t k = n < sizeof t ? n : sizeof t;
        memcpy(t, a, k);
        memcpy(a, b, k);
        memcpy(b, t, k);
        a += k;
        b += k;
        n -= k;
    }
}

/* Swap two elements; the sizes of the common scalars get constant sizes. */
static void swap(const sorter *s, char *a, char *b) {
    if (s->size == sizeof(uint64_t))
        swap_bytes(a, b, sizeof(uint64_t));
    else if (s->size == sizeof(uint32_t))
        swap_bytes(a, b, sizeof(uint32_t));
    else
        swap_bytes(a, b, s->size);
}

static char *median_of_3(const sorter *s, char *a, char *b, char *c) {
    if (compare(s, a, b) < 0) {
        if (compare(s, b, c) < 0)
            return b;
        return compare(s, a, c) < 0 ? c : a;
    }
    if (compare(s, a, c) < 0)
        return a;
    return compare(s, b, c) < 0 ? c : b;
}

/* Partition base[0, n), n > INSERTION, around its median of three (or
 * ninther), and return the pivot's final index p: nothing in [0, p) orders
 * after it, nothing in (p, n) before it. The scans are bounded by each
 * other (i <= j), so a comparison function that is no total order gives a
 * wrong order but never an access outside the array. */
static size_t partition(const sorter *s, char *base, size_t n) {
    char *m;
    if (n >= NINTHER) {
        size_t e = n / 8, mid = n / 2, back = n - 1;
        m = median_of_3(
            s, median_of_3(s, at(s, base, 0), at(s, base, e), at(s, base, 2 * e)),
            median_of_3(s, at(s, base, mid - e), at(s, base, mid), at(s, base, mid + e)),
            median_of_3(s, at(s, base, back - 2 * e), at(s, base, back - e), at(s, base, back)));
    } else {
        m = median_of_3(s, at(s, base, 0), at(s, base, n / 2), at(s, base, n - 1));
    }
    swap(s, base, m);
    size_t i = 1, j = n - 1;
    for (;;) {
        /* [1, i) orders no later than the pivot, (j, n) no earlier. */
        while (i <= j && compare(s, at(s, base, i), base) < 0)
            i++;
        while (i <= j && compare(s, base, at(s, base, j)) < 0)
            j--;
        if (i >= j)
            break;
        swap(s, at(s, base, i++), at(s, base, j--));
    }
    /* j < i, or both stopped at one element equal to the pivot: base[j]
     * orders no later than the pivot, so it may go to the front. */
    swap(s, base, at(s, base, j));
    return j;
}

static void insertion_sort(const sorter *s, char *base, size_t n) {
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && compare(s, at(s, base, j), at(s, base, j - 1)) < 0; j--)
            swap(s, at(s, base, j), at(s, base, j - 1));
}

/* Heapsort, the fallback whose worst case is n log n. */
static void sift_down(const sorter *s, char *base, size_t root, size_t n) {
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && compare(s, at(s, base, child), at(s, base, child + 1)) < 0)
            child++;
        if (compare(s, at(s, base, root), at(s, base, child)) >= 0)
            return;
        swap(s, at(s, base, root), at(s, base, child));
    }
}

static void heap_sort(const sorter *s, char *base, size_t n) {
    for (size_t i = n / 2; i-- > 0;)
        sift_down(s, base, i, n);
    for (size_t end = n; end-- > 1;) {
        swap(s, base, at(s, base, end));
        sift_down(s, base, 0, end);
    }
}

/* One thread's introsort of base[0, n) with `budget` levels left. */
static void sort_serial(const sorter *s, char *base, size_t n, unsigned budget) {
    while (n > INSERTION) {
        if (budget-- == 0) {
            heap_sort(s, base, n);
            return;
        }
        size_t p = partition(s, base, n);
        if (p < n - 1 - p) {
            sort_serial(s, base, p, budget);
            base = at(s, base, p + 1);
            n -= p + 1;
        } else {
            sort_serial(s, at(s, base, p + 1), n - 1 - p, budget);
            n = p;
        }
    }
    insertion_sort(s, base, n);
}

/* A piece of the parallel sort: weft_join's argument. */
typedef struct piece {
    sorter *s;
    char *base;
    size_t n;
    unsigned budget;
} piece;

static void sort_piece(void *arg) {
    piece *pc = arg;
    sorter *s = pc->s;
    if (weft_cancelled()) {
        /* Relaxed: read after weft_run has returned, which orders it. */
        atomic_store_explicit(&s->cancelled, true, memory_order_relaxed);
        return;
    }
    if (pc->n <= CUTOFF || pc->budget == 0) {
        sort_serial(s, pc->base, pc->n, pc->budget);
        return;
    }
    size_t p = partition(s, pc->base, pc->n);
    piece left = {s, pc->base, p, pc->budget - 1};
    piece right = {s, at(s, pc->base, p + 1), pc->n - 1 - p, pc->budget - 1};
    weft_join(sort_piece, &left, sort_piece, &right);
}

/* weft_run's function: the whole array as one piece, then one more look at
 * the group, so that a cancel that came too late to skip anything is
 * reported too (as weft_reduce does). */
static void sort_root(void *arg) {
    piece *root = arg;
    sort_piece(root);
    if (weft_cancelled())
        atomic_store_explicit(&root->s->cancelled, true, memory_order_relaxed);
}

static int sort_any(weft_pool *pool, void *base, size_t n, size_t size,
                    int (*cmp)(const void *, const void *),
                    int (*cmp_r)(const void *, const void *, void *), void *arg) {
    if (!base && n > 0)
        return weft__error_set(EINVAL, "base is NULL and n is %zu", n);
    if (size == 0)
        return weft__error_set(EINVAL, "size is 0");
    if (!cmp && !cmp_r)
        return weft__error_set(EINVAL, "cmp is NULL");
    if (n > 0 && size > SIZE_MAX / n)
        return weft__error_set(EINVAL, "n %zu times size %zu overflows size_t", n, size);
    sorter s = {size, cmp, cmp_r, arg, 0, false};
    for (size_t k = n; k > 1; k >>= 1)
        s.budget += 2;
    piece root = {&s, base, n, s.budget};
    if (n <= CUTOFF) {
        sort_root(&root); /* on this thread: a pool would only add a hop */
    } else {
        weft_run(pool, sort_root, &root);
    }
    if (weft_cancelled())
        atomic_store_explicit(&s.cancelled, true, memory_order_relaxed);
    if (atomic_load_explicit(&s.cancelled, memory_order_relaxed))
        return weft__error_set(ECANCELED, "the caller's group was cancelled: the array is not "
                                          "necessarily sorted");
    return 0;
}

int weft_sort(weft_pool *pool, void *base, size_t n, size_t size,
              int (*cmp)(const void *a, const void *b)) {
    return sort_any(pool, base, n, size, cmp, NULL, NULL);
}

int weft_sort_r(weft_pool *pool, void *base, size_t n, size_t size,
                int (*cmp)(const void *a, const void *b, void *arg), void *arg) {
    return sort_any(pool, base, n, size, NULL, cmp, arg);
}
