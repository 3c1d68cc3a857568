/* SPDX-License-Identifier: MIT */
/* Small jobs that several tests share. */
#ifndef WEFT_TEST_JOBS_H
#define WEFT_TEST_JOBS_H

#include <stdint.h>

#include "weft.h"

/* fib(n) with a weft_join at every node: the fork-join workload. */
typedef struct fib {
    int n;
    long r;
} fib;

static inline void fib_job(void *arg) {
    fib *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
    weft_join(fib_job, &a, fib_job, &b);
    f->r = a.r + b.r;
}

/* The sum of the indices, as a weft_reducer over uint64_t. */
static inline void sum_init(void *acc, void *arg) {
    (void)arg;
    *(uint64_t *)acc = 0;
}

static inline void sum_fold(size_t b, size_t e, void *acc, void *arg) {
    (void)arg;
    for (size_t i = b; i < e; i++)
        *(uint64_t *)acc += i;
}

static inline void sum_combine(void *acc, const void *rhs, void *arg) {
    (void)arg;
    *(uint64_t *)acc += *(const uint64_t *)rhs;
}

static const weft_reducer sum_of_indices = {sizeof(uint64_t), sum_init, sum_fold, sum_combine,
                                            NULL};

#endif
