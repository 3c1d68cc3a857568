/* SPDX-License-Identifier: MIT */
/* weft_join's fast path, compiled into the caller (included by weft.h).
 *
 * In C11 with GNU C (gcc, clang), weft_join is this static inline function:
 * the fork and the pop after A are a handful of loads and stores with a and b
 * known at the call site, so the compiler makes direct calls to them, and the
 * library is entered only on the slow paths (the first fork of an episode, a
 * thief's request, a stolen B). C++ and other compilers call the library's
 * weft_join, which runs the same protocol; define WEFT_NO_INLINE_JOIN to get
 * that call in C too. The out-of-line symbol stays for FFI and old binaries.
 *
 * What this makes ABI, and nothing more (the names with two underscores are
 * not API: use weft_join):
 *  - the thread-local pointer to the running worker's head;
 *  - the head: the newest join frame, the running job's group and priority,
 *    a count of B run inline, and the claim word on a line of its own;
 *  - a frame's fork part: B's function and argument, the group, and the link
 *    to the older frame with B's priority in its low bit; then room for the
 *    library's job header and latch, written only once the frame stops being
 *    private;
 *  - the claim word's meaning: the newest frame that is not private, and two
 *    low bits, a thief's request and a lock.
 * src/frame.c argues the protocol; verify/frames.pml checks it. The cold
 * paths' names carry WEFT__JOIN_ABI and the fence flavour, so a binary built
 * against another layout, or against the other fence, fails to link instead
 * of running wrong. */
#ifndef WEFT_JOIN_H
#define WEFT_JOIN_H

/* The layout, for C11 with atomics (the library is built so). */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L &&           \
    !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>

#include "weft/config.h" /* WEFT_FENCE_SYMMETRIC: how the library was built */

/* The layout's version. The slow paths' names below carry it (_1m, _1s):
 * a new layout renames them, so that old binaries fail to link. */
#define WEFT__JOIN_ABI 1

/* What a fork writes. */
struct weft__fork {
    weft_fn *fn;               /* B */
    void *arg;                 /* B's argument */
    struct weft__group *group; /* the group B runs in: the forking job's */
    uintptr_t prev;            /* the older frame, B's priority in the low bit */
};

/* A join frame: the fork part, then the library's (a job header and a latch,
 * written when the frame stops being private): four words on 64-bit
 * targets, five on 32-bit ones (the latch's two 32-bit words and a pointer). */
#if UINTPTR_MAX > 0xffffffffu
#define WEFT__JOIN_LIBRARY_WORDS 4
#else
#define WEFT__JOIN_LIBRARY_WORDS 5
#endif
struct weft__join_frame {
    struct weft__fork fork;
    void *library[WEFT__JOIN_LIBRARY_WORDS];
};

/* The start of a worker: what a fork and its pop touch. */
struct weft__worker_head {
    /* First: a 64-bit atomic's alignment differs between compilers on
     * 32-bit x86, so nothing follows it that could move. */
    _Atomic uint64_t joins;                    /* B run inline (weft_stats.jobs) */
    _Atomic(struct weft__join_frame *) frames; /* the owner's newest frame */
    struct weft__group *group;                 /* the running job's group (NULL: none) */
    uint32_t prio;                             /* the running job's weft_priority */
    /* Written by thieves too: 128 bytes from the owner's words (the
     * adjacent-line prefetcher pulls 64-byte lines in pairs). */
    _Alignas(128) _Atomic uintptr_t claim;
};

enum { WEFT__CLAIM_REQUEST = 1, WEFT__CLAIM_LOCK = 2, WEFT__CLAIM_BITS = 3 };

/* The worker running on this thread, or NULL outside every pool.
 * initial-exec: one load from the thread pointer, no __tls_get_addr call (the
 * library is loaded at start-up, or dlopen'ed while the C library still has
 * static TLS to spare). */
#ifdef __GNUC__
#define WEFT__TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define WEFT__TLS_IE
#endif
WEFT_API extern _Thread_local struct weft__worker_head *weft__tls_worker WEFT__TLS_IE;

/* The slow paths, in the library (src/frame.c), in both fence flavours: a
 * library defines the pair of its own. */
WEFT_API void weft__join_fork_cold_1m(struct weft__worker_head *w, struct weft__join_frame *fr);
WEFT_API void weft__join_pop_cold_1m(struct weft__worker_head *w, struct weft__join_frame *fr);
WEFT_API void weft__join_fork_cold_1s(struct weft__worker_head *w, struct weft__join_frame *fr);
WEFT_API void weft__join_pop_cold_1s(struct weft__worker_head *w, struct weft__join_frame *fr);

/* The pop's side of the asymmetric fence (src/fence.h): a compiler barrier
 * where the library's thieves use Linux membarrier; a seq-cst fence where
 * they cannot (the POSIX seam builds with WEFT_FENCE_SYMMETRIC). */
#if defined(__linux__) && !defined(WEFT_FENCE_SYMMETRIC)
#define WEFT__JOIN_FENCE()   atomic_signal_fence(memory_order_seq_cst)
#define weft__join_fork_cold weft__join_fork_cold_1m
#define weft__join_pop_cold  weft__join_pop_cold_1m
#else
#define WEFT__JOIN_FENCE()   atomic_thread_fence(memory_order_seq_cst)
#define weft__join_fork_cold weft__join_fork_cold_1s
#define weft__join_pop_cold  weft__join_pop_cold_1s
#endif

/* A hook between the fork's steps: nothing, except in the library's own
 * weft_join of its random-yield build (src/join.c). */
#ifndef WEFT__JOIN_YIELD
#define WEFT__JOIN_YIELD() ((void)0)
#endif

/* The fast path itself, in GNU C (for the attribute and the branch hints);
 * the library's weft_join runs it too. */
#ifdef __GNUC__
static inline __attribute__((always_inline)) void weft__join(weft_fn *a, void *a_arg, weft_fn *b,
                                                             void *b_arg) {
    struct weft__worker_head *w = weft__tls_worker;
    struct weft__join_frame fr, *prev;
    uintptr_t c;
    /* Outside a pool, or a NULL function: the library's answer. */
    if (__builtin_expect(!w || !a || !b, 0)) {
        (weft_join)(a, a_arg, b, b_arg);
        return;
    }
    fr.fork.fn = b;
    fr.fork.arg = b_arg;
    fr.fork.group = w->group;
    /* Relaxed: only this thread stores frames. */
    prev = atomic_load_explicit(&w->frames, memory_order_relaxed);
    fr.fork.prev = (uintptr_t)prev | (uintptr_t)w->prio;
    /* Release: a thief that reads frames (acquire) sees fr's fork part. */
    atomic_store_explicit(&w->frames, &fr, memory_order_release);
    WEFT__JOIN_YIELD();
    /* Relaxed: the episode's first private frame, or a raised bit, takes the
     * fenced cold path. */
    c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if (__builtin_expect(
            (c & ~(uintptr_t)WEFT__CLAIM_BITS) == (uintptr_t)prev || (c & WEFT__CLAIM_BITS), 0))
        weft__join_fork_cold(w, &fr);
    a(a_arg);
    /* Release: a thief reading frames sees the fork parts of what it links. */
    atomic_store_explicit(&w->frames, prev, memory_order_release);
    WEFT__JOIN_FENCE(); /* our store of frames, then claim: against a thief's barrier */
    WEFT__JOIN_YIELD();
    /* Relaxed: ordered by the fence pair. */
    c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if (__builtin_expect(!(c & WEFT__CLAIM_BITS) && c != (uintptr_t)&fr, 1)) {
        /* Still private: nobody else can have B. Relaxed load and store: we
         * are the only writer (a plain add), weft_pool_stats reads. */
        atomic_store_explicit(&w->joins, atomic_load_explicit(&w->joins, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        b(b_arg);
        return;
    }
    weft__join_pop_cold(w, &fr);
}

/* weft_join, inline, unless the program asks for the library's call. */
#ifndef WEFT_NO_INLINE_JOIN
#define WEFT_INLINE_JOIN              1
#define weft_join(a, a_arg, b, b_arg) weft__join((a), (a_arg), (b), (b_arg))
#endif
#endif /* __GNUC__ */
#endif /* C11 */
#endif /* WEFT_JOIN_H */
