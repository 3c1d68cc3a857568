/* SPDX-License-Identifier: MIT */
/* The atomics toolkit's out-of-line parts (atomics.h): ThreadSanitizer's
 * fence word, and the random-yield build's hook, compiled to nothing unless
 * WEFT_DEBUG_YIELD is defined. */
#include "os/atomics.h"

#ifdef WEFT__TSAN
_Atomic unsigned long weft__tsan_fence_word;
#endif

#ifdef WEFT_DEBUG_YIELD

#include <stdint.h>
#include <stdlib.h>

#include "os/thread.h"

/* Out of 64 draws: how many yield the CPU, how many spin. A yield lets
 * another thread of the same core run its whole protocol step in our window;
 * a spin only stretches the window on a machine with a free core. Together a
 * quarter of the hooks do something: often enough that every protocol window
 * is widened many times per test case, rarely enough that the suite still
 * finishes under ctest's timeouts. */
#define YIELD_IN_64 6
#define SPIN_IN_64  10
/* A spin lasts up to this many pauses: a few hundred cycles to a few
 * microseconds, around the length of one protocol step on another core. */
#define SPIN_MAX_PAUSES 512

static _Atomic uint64_t seed;        /* A: relaxed; 0 until read from the env */
static _Atomic uint64_t thread_seq;  /* A: relaxed; threads that drew so far */
static _Thread_local uint64_t state; /* this thread's xorshift64* state */

static uint64_t base_seed(void) {
    /* Relaxed: every thread computes the same value; a race only reads the
     * environment twice. */
    uint64_t s = atomic_load_explicit(&seed, memory_order_relaxed);
    if (s == 0) {
        const char *env = getenv("WEFT_DEBUG_YIELD_SEED");
        s = env ? strtoull(env, NULL, 0) : 1;
        s = s * 0x9e3779b97f4a7c15ull + 1; /* never 0 again */
        atomic_store_explicit(&seed, s, memory_order_relaxed);
    }
    return s;
}

static uint64_t next(void) {
    if (WEFT__UNLIKELY(state == 0)) {
        uint64_t n = atomic_fetch_add_explicit(&thread_seq, 1, memory_order_relaxed);
        state = base_seed() ^ ((n + 1) * 0xbf58476d1ce4e5b9ull);
        if (state == 0)
            state = 1;
    }
    /* xorshift64* (Vigna): enough for choosing a schedule. */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dull;
}

void weft__debug_yield_slow(void) {
    uint64_t r = next();
    unsigned pick = (unsigned)(r >> 58); /* 0..63, from the best bits */
    if (pick < YIELD_IN_64) {
        weft__os_yield();
    } else if (pick < YIELD_IN_64 + SPIN_IN_64) {
        for (unsigned i = (unsigned)(r % SPIN_MAX_PAUSES); i > 0; i--)
            weft__cpu_relax();
    }
}

#endif

#if !defined(WEFT__TSAN) && !defined(WEFT_DEBUG_YIELD)
typedef int weft__atomics_unused; /* ISO C: a translation unit declares something */
#endif
