/* SPDX-License-Identifier: MIT */
/* Atomics helpers shared by every protocol file: cache-line size, the CPU
 * pause, fences that ThreadSanitizer can see, and the random-yield hook
 * between atomic steps. atomics.c holds their out-of-line parts.
 *
 * TSan does not model standalone fences (atomic_thread_fence): code that relies
 * on a fence for ordering looks racy to it. Under WEFT__TSAN every seq-cst fence
 * becomes a seq-cst read-modify-write of one global word. Those RMWs are
 * totally ordered and each one acquires what the previous one released, so TSan
 * sees at least the happens-before that a pair of seq-cst fences implies. Places
 * that use a release fence before a relaxed store use a release store instead
 * (see weft__deque_push). */
#ifndef WEFT_ATOMICS_H
#define WEFT_ATOMICS_H

#include <stdatomic.h>

#if !defined(WEFT__TSAN) && defined(__SANITIZE_THREAD__)
#define WEFT__TSAN 1
#endif
#if !defined(WEFT__TSAN) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT__TSAN 1
#endif
#endif

/* Two lines: Intel's adjacent-line prefetcher pulls pairs of 64-byte lines, so
 * fields written by different threads must sit 128 bytes apart. */
#define WEFT__CACHELINE 128

#define WEFT__HIDDEN      __attribute__((visibility("hidden")))
#define WEFT__COLD        __attribute__((cold, noinline))
#define WEFT__LIKELY(x)   __builtin_expect(!!(x), 1)
#define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef WEFT__TSAN
WEFT__HIDDEN extern _Atomic unsigned long weft__tsan_fence_word;
static inline void weft__fence_seq_cst(void) {
    atomic_fetch_add_explicit(&weft__tsan_fence_word, 1, memory_order_seq_cst);
}
#else
static inline void weft__fence_seq_cst(void) {
    atomic_thread_fence(memory_order_seq_cst);
}
#endif

/* One spin-wait step: tells the core we are spinning (lower power, and the
 * sibling hyperthread gets the pipeline). */
static inline void weft__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* The random-yield hook (liburcu's debug-yield), placed at every atomic
 * step of the protocols (deque, sleep, latches, pending work, the
 * injector, events) that, in a build configured with -DWEFT_DEBUG_YIELD=ON,
 * sometimes yields the CPU or spins a little. It widens the windows between
 * the steps of a protocol, so that interleavings a stress test would hit once
 * in a million runs (a thread preempted between its exchange and its wake-up)
 * happen in every run.
 *
 * Reproducible: each thread draws from its own PRNG, seeded from
 * $WEFT_DEBUG_YIELD_SEED (read once; 1 when unset) plus the order in which
 * threads first reach a hook. The schedule still depends on the OS, so a seed
 * names a distribution of interleavings, not one.
 *
 * In every other build the hook is ((void)0): no code, no cost.
 */
#ifdef WEFT_DEBUG_YIELD
/* Any thread: maybe sched_yield, maybe spin a few hundred pauses, maybe
 * nothing. Touches no shared state but the seed and a thread counter. */
WEFT__HIDDEN void weft__debug_yield_slow(void);
#define weft__debug_yield() weft__debug_yield_slow()
#else
#define weft__debug_yield() ((void)0)
#endif

#endif
