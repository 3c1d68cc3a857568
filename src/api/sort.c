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
 *  - block partitions (BlockQuicksort): a block of elements from each end
 *    is compared with the pivot first, the positions of those on the wrong
 *    side recorded without a branch on the outcome, then swapped in pairs,
 *    so a random array costs no mispredicted branch per element;
 *  - keys equal to the pivot go right; a piece whose left neighbour (an
 *    earlier pivot, ordering no later than the piece) is not before its own
 *    pivot starts with that key: its equal keys are set aside in one pass
 *    and are done, so an all-equal array or one of few keys takes a few
 *    compares a key (pattern-defeating quicksort's rule);
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
/* Elements a block partition compares at a time from each end (its
 * positions are bytes). */
#define BLOCK 64

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
    if (a == b)
        return; /* memcpy onto itself is undefined (a block's own place) */
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

/* Move the pivot of base[0, n), n > INSERTION, to base[0]: the median of
 * three, or the ninther. */
static void pivot_to_front(const sorter *s, char *base, size_t n) {
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
}

/* One end of a block partition: the next block's start (the left end) or
 * end (the right end), and the positions in it still to swap. */
typedef struct block_end {
    char *edge;
    unsigned char at[BLOCK];
    int from, left; /* at[from, from + left): still to swap */
} block_end;

/* Record which of the k elements from the left end (step 1) or the right
 * end (step -1) are on the wrong side of the pivot: a left one not before
 * it, a right one before it. The compare's outcome is added, not branched
 * on. */
static void block_scan(const sorter *s, const char *pivot, block_end *e, int k, int step) {
    e->from = 0;
    e->left = 0;
    for (int i = 0; i < k; i++) {
        const char *x =
            step > 0 ? e->edge + (size_t)i * s->size : e->edge - (size_t)(i + 1) * s->size;
        int c = compare(s, x, pivot);
        e->at[e->left] = (unsigned char)i;
        e->left += step > 0 ? c >= 0 : c < 0;
    }
}

/* The i-th element (i < BLOCK) of the left end's block, and of the right's. */
static char *left_at(const sorter *s, const block_end *e, int i) {
    return e->edge + (size_t)e->at[e->from + i] * s->size;
}
static char *right_at(const sorter *s, const block_end *e, int i) {
    return e->edge - (size_t)(e->at[e->from + i] + 1) * s->size;
}

/* Swap the wrong elements of both ends pairwise; an end whose list is
 * spent moves past its block of `size` elements. */
static void block_step(const sorter *s, const char *pivot, block_end *l, block_end *r, int lsize,
                       int rsize) {
    if (l->left == 0)
        block_scan(s, pivot, l, lsize, 1);
    if (r->left == 0)
        block_scan(s, pivot, r, rsize, -1);
    int k = l->left < r->left ? l->left : r->left;
    for (int i = 0; i < k; i++)
        swap(s, left_at(s, l, i), right_at(s, r, i));
    l->from += k;
    l->left -= k;
    r->from += k;
    r->left -= k;
    if (l->left == 0)
        l->edge += (size_t)lsize * s->size;
    if (r->left == 0)
        r->edge -= (size_t)rsize * s->size;
}

/* Partition base[0, n), n > INSERTION, around base[0] and return the
 * pivot's final index p: base[0, p) orders before it, nothing in (p, n)
 * before it. Every access is inside the array, whatever the comparison
 * function answers. */
static size_t block_partition(const sorter *s, char *base, size_t n) {
    block_end l = {.edge = at(s, base, 1)}, r = {.edge = at(s, base, n)};
    size_t width = (size_t)(r.edge - l.edge) / s->size; /* elements in [l, r) */
    while (width > 2 * BLOCK) {
        block_step(s, base, &l, &r, BLOCK, BLOCK);
        width = (size_t)(r.edge - l.edge) / s->size;
    }
    /* At most 2 BLOCK left, one end's block perhaps with wrong elements
     * still: the rest makes one last block at each end that has none. */
    int rest = (int)width - (l.left ? BLOCK : 0) - (r.left ? BLOCK : 0);
    int lsize = BLOCK, rsize = BLOCK;
    if (!l.left && !r.left) {
        lsize = rest / 2;
        rsize = rest - lsize;
    } else if (!l.left) {
        lsize = rest;
    } else {
        rsize = rest;
    }
    block_step(s, base, &l, &r, lsize, rsize);
    /* One end may still hold wrong elements, and [l, r) is its block: move
     * them to the block's far side, the last one first. */
    char *cut = l.edge;
    if (l.left) {
        char *end = r.edge;
        while (l.left--) {
            end -= s->size;
            swap(s, left_at(s, &l, l.left), end);
        }
        cut = end;
    } else {
        while (r.left--) {
            swap(s, right_at(s, &r, r.left), cut);
            cut += s->size;
        }
    }
    size_t p = (size_t)(cut - base) / s->size - 1;
    swap(s, base, at(s, base, p));
    return p;
}

/* Partition base[0, n) around base[0], whose key its left neighbour holds
 * too: returns how many elements equal it, which are then in place at the
 * front. */
static size_t equal_partition(const sorter *s, char *base, size_t n) {
    size_t i = 1, j = n;
    for (;;) {
        while (i < j && compare(s, base, at(s, base, i)) >= 0)
            i++;
        while (i < j && compare(s, base, at(s, base, j - 1)) < 0)
            j--;
        if (i >= j)
            return i;
        swap(s, at(s, base, i++), at(s, base, --j));
    }
}

/* One partition of base[0, n), whose left neighbour base[-1] orders no
 * later than it unless leftmost: the pivot's index p, the sides [0, p) and
 * (p, n); or n when the piece's pivot key filled its front, *rest elements
 * of it, and what follows them is what is left to sort. */
static size_t partition(const sorter *s, char *base, size_t n, bool leftmost, size_t *rest) {
    pivot_to_front(s, base, n);
    if (!leftmost && compare(s, base - s->size, base) >= 0) {
        *rest = equal_partition(s, base, n);
        return n;
    }
    size_t p = block_partition(s, base, n);
    *rest = p + 1;
    return p;
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

/* One thread's sort of base[0, n) with `budget` levels left: the smaller
 * side of each partition by recursion, the larger by the loop (stack depth
 * log2 n). leftmost: base[-1] is no neighbour of the piece. */
static void sort_serial(const sorter *s, char *base, size_t n, unsigned budget, bool leftmost) {
    while (n > INSERTION) {
        if (budget-- == 0) {
            heap_sort(s, base, n);
            return;
        }
        size_t rest, p = partition(s, base, n, leftmost, &rest);
        if (p == n) { /* the front is done */
            base = at(s, base, rest);
            n -= rest;
            leftmost = false;
        } else if (p < n - rest) {
            sort_serial(s, base, p, budget, leftmost);
            base = at(s, base, rest);
            n -= rest;
            leftmost = false;
        } else {
            sort_serial(s, at(s, base, rest), n - rest, budget, false);
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
    bool leftmost;
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
        sort_serial(s, pc->base, pc->n, pc->budget, pc->leftmost);
        return;
    }
    size_t rest, p = partition(s, pc->base, pc->n, pc->leftmost, &rest);
    piece right = {s, at(s, pc->base, rest), pc->n - rest, pc->budget - 1, false};
    if (p == pc->n) {
        sort_piece(&right);
        return;
    }
    piece left = {s, pc->base, p, pc->budget - 1, pc->leftmost};
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
    piece root = {&s, base, n, s.budget, true};
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
