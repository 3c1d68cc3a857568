/* SPDX-License-Identifier: MIT */
/* Linux: futex wait/wake on a 32-bit word, sched_getaffinity, prctl names,
 * SCHED_BATCH workers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "os.h"

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

void weft__os_precise_timers(void) {
    prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us; the default is 50 us */
}

void weft__os_keep_loaded(void) {
    Dl_info self;
    /* The object this function is in: libweft.so, a plugin with weft linked
     * in, or the executable (whose pin changes nothing). RTLD_NOLOAD finds
     * it without loading anything; RTLD_NODELETE marks it, for good, as an
     * object that no dlclose unmaps. The handle's own reference goes back
     * at once: the mark stays. */
    if (!dladdr((void *)weft__os_keep_loaded, &self) || !self.dli_fname)
        return;
    void *handle = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle)
        dlclose(handle);
}

void weft__os_batch_policy(void) {
    /* Pid 0: the calling thread alone. Needs no privilege; a refusal (a
     * seccomp filter) leaves the default policy, which only costs switches. */
    if (sched_getscheduler(0) == SCHED_OTHER)
        sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){.sched_priority = 0});
}

bool weft__os_has_batch_policy(void) {
    return true;
}

void weft__os_wake_one(_Atomic uint32_t *word) {
    futex(word, FUTEX_WAKE, 1);
}

void weft__os_wake_all(_Atomic uint32_t *word) {
    futex(word, FUTEX_WAKE, INT_MAX);
}

/* A futex is the word itself: nothing process-wide to repair after fork(). */
void weft__os_fork_child(void) {}

static long membarrier(int cmd) {
    return syscall(SYS_membarrier, cmd, 0, 0);
}

bool weft__os_barrier_init(void) {
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

/* The registration is the process's (a fork child inherits it), so the call
 * cannot fail once it succeeded; if the kernel ever said otherwise, going on
 * would risk running a job twice. */
void weft__os_barrier(void) {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        perror("weft: membarrier");
        abort();
    }
}

unsigned weft__os_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void weft__os_set_thread_name(const char *name) {
    char buf[16]; /* the kernel keeps 15 characters */
    size_t i = 0;
    for (; name[i] && i < sizeof buf - 1; i++)
        buf[i] = name[i];
    buf[i] = '\0';
    pthread_setname_np(pthread_self(), buf);
}

bool weft__os_names_threads(void) {
    return true;
}
