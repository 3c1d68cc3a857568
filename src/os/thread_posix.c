/* SPDX-License-Identifier: MIT */
/* Portable POSIX fallback for thread.h: POSIX.1-2008 has no timer slack,
 * no batch policy and no thread names, so each is a documented no-op. */
#include "os/thread.h"

void weft__os_precise_timers(void) {}

/* POSIX names no batch policy (SCHED_OTHER is all it promises). */
void weft__os_batch_policy(void) {}

bool weft__os_has_batch_policy(void) {
    return false;
}

void weft__os_set_thread_name(const char *name) {
    (void)name; /* no portable way; names are a debugging aid */
}

bool weft__os_names_threads(void) {
    return false;
}
