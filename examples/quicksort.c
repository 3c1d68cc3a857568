/* SPDX-License-Identifier: MIT */
/* Parallel quicksort with weft_join.
 *
 * Partition, then sort the two sides with weft_join: the second side is
 * offered to idle workers while this thread sorts the first, and taken back
 * and sorted here if nobody took it. Below a cutoff the C library's qsort is
 * faster than splitting further. The result is checked against qsort.
 *
 *   example_quicksort [n]     (default: 2,000,000 ints)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <weft.h>

/* Below this many elements a side is sorted serially: a join costs about as
 * much as sorting a few hundred ints, and small pieces give thieves nothing
 * worth stealing. */
#define SERIAL_CUTOFF 4096

typedef struct sort_task {
    int *a;
    size_t n;
} sort_task;

static int compare_ints(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void swap(int *a, size_t i, size_t j) {
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Hoare partition around the median of the first, middle and last elements.
 * Returns k with 0 < k < n such that a[0..k) <= pivot <= a[k..n). */
static size_t partition(int *a, size_t n) {
    size_t mid = n / 2;
    if (a[mid] < a[0])
        swap(a, mid, 0);
    if (a[n - 1] < a[0])
        swap(a, n - 1, 0);
    if (a[n - 1] < a[mid])
        swap(a, n - 1, mid);
    int pivot = a[mid]; /* a[0] <= pivot <= a[n-1]: both scans stop in bounds */
    size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot)
            i++;
        while (a[j] > pivot)
            j--;
        if (i >= j)
            return j + 1;
        swap(a, i++, j--);
    }
}

static void quicksort(void *arg) {
    sort_task *t = arg;
    if (t->n <= SERIAL_CUTOFF) {
        qsort(t->a, t->n, sizeof *t->a, compare_ints);
        return;
    }
    size_t k = partition(t->a, t->n);
    sort_task left = {t->a, k}, right = {t->a + k, t->n - k};
    /* Both tasks live in this frame: weft_join returns only when both are
     * sorted, and it allocates nothing. */
    weft_join(quicksort, &left, quicksort, &right);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    int *a = malloc(n * sizeof *a), *expected = malloc(n * sizeof *a);
    if (!a || !expected) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t x = 88172645463325252ull; /* xorshift64: the same input every run */
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (int)(x % 1000000); /* duplicates included */
    }
    memcpy(expected, a, n * sizeof *a);

    double t0 = now();
    qsort(expected, n, sizeof *expected, compare_ints);
    double t1 = now();
    sort_task all = {a, n};
    weft_run(NULL, quicksort, &all); /* sort in the default pool, this thread taking part */
    double t2 = now();

    int ok = memcmp(a, expected, n * sizeof *a) == 0;
    printf("sorted %zu ints: qsort %.3f s, weft quicksort %.3f s on %u workers: %s\n", n, t1 - t0,
           t2 - t1, weft_pool_threads(NULL), ok ? "same result" : "MISMATCH");
    free(a);
    free(expected);
    return ok ? 0 : 1;
}
