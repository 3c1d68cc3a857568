/* SPDX-License-Identifier: MIT */
/* A pool's configuration (pool_config.h): the caller's weft_config read at
 * its size and checked, each refusal naming the field, its value and the
 * limit (os/error.h); then what its zeros stand for. */
#include <string.h>
#include <errno.h>

#include "core/pool_config.h"
#include "os/env.h"
#include "os/error.h"

/* The smallest stack_size (weft.h): a worker's loop and a few nested joins. */
#define STACK_SIZE_MIN ((size_t)64 << 10)

static int above_max(const char *field, unsigned value) {
    return weft__error_set(EINVAL, "config.%s %u is above WEFT_THREADS_MAX %u", field, value,
                           WEFT_THREADS_MAX);
}

static int check(const weft_config *c) {
    if (c->threads > WEFT_THREADS_MAX)
        return above_max("threads", c->threads);
    if (c->contexts > WEFT_THREADS_MAX)
        return above_max("contexts", c->contexts);
    if (c->callers > WEFT_THREADS_MAX && !c->callers_wait)
        return above_max("callers", c->callers);
    if (c->spares > WEFT_THREADS_MAX && c->spares != WEFT_SPARES_NONE)
        return above_max("spares", c->spares);
    if (c->stack_size != 0 && c->stack_size < STACK_SIZE_MIN)
        return weft__error_set(EINVAL, "config.stack_size %zu is below the minimum of %zu (64 KiB)",
                               c->stack_size, STACK_SIZE_MIN);
    if ((unsigned)c->leave > WEFT_LEAVE_FAST)
        return weft__error_set(EINVAL, "config.leave %d is not a weft_leave enumerator",
                               (int)c->leave);
    if ((unsigned)c->wake > WEFT_WAKE_ALL)
        return weft__error_set(EINVAL, "config.wake %d is not a weft_wake enumerator",
                               (int)c->wake);
    return 0;
}

/* The caller's config as this library's struct: copy what the caller has,
 * defaults (zeros) for what it does not; a larger struct's tail must be zero. */
static int import(weft_config *c, const weft_config *config, size_t size) {
    *c = (weft_config){0};
    if (!config)
        return 0;
    memcpy(c, config, size < sizeof *c ? size : sizeof *c);
    for (size_t i = sizeof *c; i < size; i++)
        if (((const unsigned char *)config)[i] != 0) /* asks for what this library does not know */
            return weft__error_set(EINVAL,
                                   "config_size %zu: byte %zu is not 0, beyond the %zu bytes of "
                                   "this library's weft_config",
                                   size, i, sizeof *c);
    return 0;
}

int weft__pool_config_import(weft_config *c, const weft_config *config, size_t size) {
    int err = import(c, config, size);
    return err ? err : check(c);
}

unsigned weft__pool_config_threads(unsigned threads, unsigned cpus) {
    if (threads)
        return threads;
    return weft__env_threads(cpus > WEFT_THREADS_MAX ? WEFT_THREADS_MAX : cpus);
}

unsigned weft__pool_config_callers(const weft_config *c, unsigned used) {
    /* on_start: jobs may need its work on their thread (weft.h). Wake-all:
     * the legacy protocol as legacy Rayon runs it, whose outside callers
     * inject and block; a caller that pushed its own jobs one by one would
     * wake every sleeper at each push. */
    if (c->callers_wait || (!c->callers && (c->on_start || c->wake == WEFT_WAKE_ALL)))
        return 0;
    if (c->callers)
        return c->callers;
    unsigned room = used < WEFT_THREADS_MAX ? WEFT_THREADS_MAX - used : 0;
    return room < WEFT_CALLERS_DEFAULT ? room : WEFT_CALLERS_DEFAULT;
}

unsigned weft__pool_config_spares(const weft_config *c, unsigned used) {
    /* on_start: a spare runs the pool's jobs, which may need its work on
     * their thread (weft.h); only spares asked for run it. */
    if (c->spares == WEFT_SPARES_NONE || (!c->spares && c->on_start))
        return 0;
    if (c->spares)
        return c->spares;
    unsigned room = used < WEFT_THREADS_MAX ? WEFT_THREADS_MAX - used : 0;
    return room < WEFT_SPARES_DEFAULT ? room : WEFT_SPARES_DEFAULT;
}
