/* SPDX-License-Identifier: MIT */
/* Linux: the futex itself, on a 32-bit word (futex.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "os/futex.h"

static long futex(_Atomic uint32_t *word, int op, uint32_t val) {
    return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void weft__os_wait(_Atomic uint32_t *word, uint32_t expected) {
    /* EAGAIN: the word changed before we slept; EINTR: a signal. Both return
     * to the caller, whose loop rechecks in user space. */
    futex(word, FUTEX_WAIT, expected);
}

bool weft__os_wait_until(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns) {
    struct timespec at = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
                          .tv_nsec = (long)(deadline_ns % 1000000000u)};
    /* WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline (plain WAIT a
     * relative one), so a spurious return needs no recomputation. */
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
                     &at, NULL, FUTEX_BITSET_MATCH_ANY);
    return !(r == -1 && errno == ETIMEDOUT);
}

void weft__os_wake_one(_Atomic uint32_t *word) {
    futex(word, FUTEX_WAKE, 1);
}

void weft__os_wake_all(_Atomic uint32_t *word) {
    futex(word, FUTEX_WAKE, INT_MAX);
}

/* A futex is the word itself: nothing process-wide to repair after fork(). */
void weft__os_fork_child(void) {}
