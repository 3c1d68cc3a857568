/* SPDX-License-Identifier: MIT */
/* A pool's configuration: the caller's weft_config checked, and the counts
 * its zeros stand for. See pool_config.c. */
#ifndef WEFT_POOL_CONFIG_H
#define WEFT_POOL_CONFIG_H

#include <stddef.h>

#include "weft.h"
#include "os/atomics.h"

/* The caller's config (NULL: all defaults) as this library's struct in *c:
 * what the caller has, defaults (zeros) for what it does not, a larger
 * struct's tail required to be zero. 0, or EINVAL with its message
 * (os/error.h) for that tail or a field weft.h refuses. */
WEFT__HIDDEN int weft__pool_config_import(weft_config *c, const weft_config *config, size_t size);

/* threads, else $WEFT_NUM_THREADS if valid (env.c warns if not), else
 * cpus, the CPUs this process may use. */
WEFT__HIDDEN unsigned weft__pool_config_threads(unsigned threads, unsigned cpus);

/* How many caller slots (callers.c) a pool made with c gets beside `used`
 * workers and contexts: none if its callers wait, or by default with an
 * on_start; else c->callers, else as many of WEFT_CALLERS_DEFAULT as
 * WEFT_THREADS_MAX leaves room for. */
WEFT__HIDDEN unsigned weft__pool_config_callers(const weft_config *c, unsigned used);

/* How many spare threads (spare.c) a pool made with c gets beside `used`
 * workers, contexts and callers: none if c says so, or by default with an
 * on_start; else c->spares, else as many of WEFT_SPARES_DEFAULT as
 * WEFT_THREADS_MAX leaves room for. */
WEFT__HIDDEN unsigned weft__pool_config_spares(const weft_config *c, unsigned used);

#endif
