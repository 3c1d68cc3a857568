/* SPDX-License-Identifier: MIT */
/* Linux: timer slack, SCHED_BATCH and names for the calling thread
 * (thread.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include "os/thread.h"

void weft__os_precise_timers(void) {
    prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us; the default is 50 us */
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
