/* SPDX-License-Identifier: MIT */
/* The fault injector of tests/faults.h. */
#include "faults.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* Calls left before the one that fails; -1: disarmed. Process-wide, because
 * weft allocates on its workers too (deque growth, reduce accumulators). */
static _Atomic long faults_countdown = -1;
static _Atomic bool faults_fired;

bool faults_should_fail(void) {
    long n = atomic_load(&faults_countdown);
    while (n >= 0) {
        if (atomic_compare_exchange_weak(&faults_countdown, &n, n - 1)) {
            if (n == 0)
                atomic_store(&faults_fired, true);
            return n == 0;
        }
    }
    return false;
}

void faults_arm(long k) {
    atomic_store(&faults_fired, false);
    atomic_store(&faults_countdown, k);
}

bool faults_disarm(void) {
    atomic_store(&faults_countdown, -1);
    return atomic_load(&faults_fired);
}

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

void *__wrap_malloc(size_t size) {
    return faults_should_fail() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size) {
    return faults_should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size) {
    return faults_should_fail() ? NULL : __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size) {
    return faults_should_fail() ? NULL : __real_aligned_alloc(align, size);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
    return faults_should_fail() ? EAGAIN : __real_pthread_create(t, a, fn, arg);
}
