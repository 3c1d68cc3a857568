/* SPDX-License-Identifier: MIT */
/* A futex: block while a 32-bit word holds a value, wake the threads
 * blocked on a word. The OS seam's core: futex_linux.c is the system call,
 * futex_posix.c an emulation with condition variables. */
#ifndef WEFT_OS_FUTEX_H
#define WEFT_OS_FUTEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"

/* Block while *word == expected. Returns on a wake-up, when *word differs
 * (checked atomically with going to sleep), or spuriously: callers loop and
 * recheck in user space. */
WEFT__HIDDEN void weft__os_wait(_Atomic uint32_t *word, uint32_t expected);

/* Like weft__os_wait, but also returns once CLOCK_MONOTONIC reaches
 * deadline_ns (as weft__now_ns reads it): false then, true otherwise (woken,
 * word changed, or spuriously). */
WEFT__HIDDEN bool weft__os_wait_until(_Atomic uint32_t *word, uint32_t expected,
                                      uint64_t deadline_ns);

/* Wake one / every thread blocked in weft__os_wait on word. Safe to call after
 * the memory of word was freed or reused: waiters always recheck. */
WEFT__HIDDEN void weft__os_wake_one(_Atomic uint32_t *word);
WEFT__HIDDEN void weft__os_wake_all(_Atomic uint32_t *word);

/* In a fork child, from pool.c's atfork handler while the child has a single
 * thread: make the emulation's process-wide state usable again, whatever the
 * threads that did not survive the fork were doing with it. */
WEFT__HIDDEN void weft__os_fork_child(void);

#endif
