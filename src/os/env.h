/* SPDX-License-Identifier: MIT */
/* Settings read from the environment, and the warning a bad one gets. See
 * env.c. */
#ifndef WEFT_ENV_H
#define WEFT_ENV_H

#include "os/atomics.h"

/* $WEFT_NUM_THREADS if it is a number from 1 to WEFT_THREADS_MAX, else
 * fallback; a set, non-empty value that is not gets a warning. */
WEFT__HIDDEN unsigned weft__env_threads(unsigned fallback);

/* Print "weft: ignoring NAME="value": <why>" on stderr, unless the last
 * warning about NAME was for the same value. why is a printf format. */
/* fork(): hold the warning lock across it (pool.c's atfork handlers); in the
 * child, also give WEFT_TRACE files names of their own, so that the child does
 * not overwrite its parent's. */
WEFT__HIDDEN void weft__env_fork_prepare(void);
WEFT__HIDDEN void weft__env_fork_release(void);
WEFT__HIDDEN void weft__env_fork_child(void);

/* At pool creation: start tracing pool if WEFT_TRACE says so (through the
 * public weft_trace_start; a file that cannot be created gets a warning). */
typedef struct weft_pool weft_pool;
WEFT__HIDDEN void weft__env_trace(weft_pool *pool);

WEFT__HIDDEN void weft__env_warn(const char *name, const char *value, const char *why, ...)
    __attribute__((format(printf, 3, 4)));

#endif
