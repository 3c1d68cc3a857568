/* SPDX-License-Identifier: MIT */
/* What the sleep protocols need from a pool, built by the pool
 * (idle_env.c): the idle layer sees the pool only through it. */
#ifndef WEFT_IDLE_ENV_H
#define WEFT_IDLE_ENV_H

#include <stdint.h>

#include "core/pool.h"
#include "idle/idle.h"

/* What the sleep protocols need from pool: its final check (the injectors
 * and broadcasts a worker must not sleep on), its trace hook (idle_env.c). */
WEFT__HIDDEN weft__idle_env weft__worker_idle_env(weft_pool *pool);

#endif
