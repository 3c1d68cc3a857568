/* SPDX-License-Identifier: MIT */
/* weft_join's fast path, compiled into the caller (included by weft.h).
 *
 * In C11 with GNU C (gcc, clang), weft_join is this static inline function:
 * the fork and the pop after A are a handful of loads and stores with a and b
 * known at the call site, so the compiler makes direct calls to them, and the
 * library is entered only on the slow paths (the first fork of an episode, a
 * thief's request, a stolen B). Other compilers call the library's
 * weft_join, which runs the same protocol; define WEFT_NO_INLINE_JOIN to get
 * that call in C too. The out-of-line symbol stays for FFI and old binaries.
 * In C++ (gcc, clang) weft.hpp's weft::join runs the same fork and pop.
 *
 * The typed joins of weft.h (WEFT_TASK, WEFT_VOID_TASK), in C and C++, are
 * the same fork and pop around a frame that also holds B's arguments and
 * result.
 *
 * What this makes ABI, and nothing more (the names with two underscores are
 * not API: use weft_join):
 *  - the thread-local pointer to the running worker's head;
 *  - the head: the newest join frame, the running job's group and priority,
 *    and the claim word on a line of its own (its first word is unused:
 *    binaries built against 0.3.0 and 0.3.1 count B run inline there);
 *  - a frame's fork part: B's function and argument and the link to the
 *    older frame, which is all a fork writes (a typed task's fork writes no
 *    argument on 64-bit targets: a mark in the link says B's argument is
 *    the frame itself); B's group, and B's priority and a "stamped" mark in
 *    the link's low bits, which the library writes (never a fork: a frame
 *    forked under the head's group and priority takes them from the head
 *    until they change); then room for the library's job header and latch,
 *    written only once the frame stops being private;
 *  - the claim word's meaning: the newest frame that is not private, and two
 *    low bits, a thief's request and a lock.
 * src/core/frame.c argues the protocol; verify/frames.pml checks it. The cold
 * paths' names carry WEFT__JOIN_ABI and the fence flavour, so a binary built
 * against another layout, or against the other fence, fails to link instead
 * of running wrong; a library serves the layouts of its ABI line under each
 * one's names. */
#ifndef WEFT_JOIN_H
#define WEFT_JOIN_H

/* The layout, for C11 with atomics (the library is built so), and for C++
 * with gcc or clang (weft.hpp's weft::join), which reaches the words that C
 * declares _Atomic through the compilers' __atomic builtins: the same
 * representation for these sizes, on every target either supports. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L &&           \
    !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define WEFT__JOIN_LAYOUT      1
#define WEFT__JOIN_ATOMIC(T)   _Atomic(T)
#define WEFT__JOIN_ALIGNAS(n)  _Alignas(n)
#define WEFT__JOIN_THREADLOCAL _Thread_local
#elif defined(__cplusplus) && defined(__GNUC__)
#define WEFT__JOIN_LAYOUT      1
#define WEFT__JOIN_ATOMIC(T)   T
#define WEFT__JOIN_ALIGNAS(n)  alignas(n)
#define WEFT__JOIN_THREADLOCAL __thread /* no C++ TLS wrapper: a plain load */
#endif

#ifdef WEFT__JOIN_LAYOUT
#include "weft/config.h" /* WEFT_FENCE_SYMMETRIC: how the library was built */

#ifdef __cplusplus
extern "C" {
#endif

/* The layout's version. The slow paths' names below carry it (_3m, _3s):
 * a new layout renames them, so that a binary never runs on a library that
 * does not know its layout. Layout 2 (0.3.0 to 0.3.3) had no self mark; its
 * binaries, whose frames never carry one, call the _2 names, which the
 * library still exports (src/core/frame.c). */
#define WEFT__JOIN_ABI 3

/* A frame's fork part. A fork writes fn, arg and prev (the low bits clear,
 * or WEFT__FORK_SELF alone, with no arg); the library stamps group and the
 * two lowest bits (src/core/frame.c). */
struct weft__fork {
    weft_fn *fn;               /* B */
    void *arg;                 /* B's argument */
    struct weft__group *group; /* the group B runs in, once stamped */
    uintptr_t prev;            /* the older frame; once stamped, B's priority in
                                  bit 0 and WEFT__FORK_STAMPED; WEFT__FORK_SELF */
};

/* WEFT__FORK_SELF: B's argument is the frame itself, and arg was not
 * written (a typed task's frame begins with its join frame): a store less
 * at every typed fork (docs/performance.md, "Typed tasks"). Frames are
 * 8-byte aligned on 64-bit targets only, so elsewhere the mark is 0 and
 * the fork writes arg. */
#if UINTPTR_MAX > 0xffffffffu
enum { WEFT__FORK_STAMPED = 2, WEFT__FORK_SELF = 4, WEFT__FORK_BITS = 7 };
#else
enum { WEFT__FORK_STAMPED = 2, WEFT__FORK_SELF = 0, WEFT__FORK_BITS = 3 };
#endif

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
    WEFT__JOIN_ATOMIC(uint64_t) unused;                  /* counted B run inline before 0.3.2 */
    WEFT__JOIN_ATOMIC(struct weft__join_frame *) frames; /* the owner's newest frame */
    struct weft__group *group;                           /* the running job's group (NULL: none) */
    uint32_t prio;                                       /* the running job's weft_priority */
    /* Written by thieves too: 128 bytes from the owner's words (the
     * adjacent-line prefetcher pulls 64-byte lines in pairs). */
    WEFT__JOIN_ALIGNAS(128) WEFT__JOIN_ATOMIC(uintptr_t) claim;
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
WEFT_API extern WEFT__JOIN_THREADLOCAL struct weft__worker_head *weft__tls_worker WEFT__TLS_IE;

/* The slow paths, in the library (src/core/frame.c), in both fence flavours: a
 * library defines the pair of its own. Nothing leaves them by an exception
 * (C++ says so): the B a pop may run is C, a typed task's entry or one of
 * weft.hpp's trampolines, none of which lets one out. */
#ifdef __cplusplus
#define WEFT__JOIN_NOTHROW noexcept
#else
#define WEFT__JOIN_NOTHROW
#endif
WEFT_API void weft__join_fork_cold_3m(struct weft__worker_head *w,
                                      struct weft__join_frame *fr) WEFT__JOIN_NOTHROW;
WEFT_API void weft__join_pop_cold_3m(struct weft__worker_head *w,
                                     struct weft__join_frame *fr) WEFT__JOIN_NOTHROW;
WEFT_API void weft__join_fork_cold_3s(struct weft__worker_head *w,
                                      struct weft__join_frame *fr) WEFT__JOIN_NOTHROW;
WEFT_API void weft__join_pop_cold_3s(struct weft__worker_head *w,
                                     struct weft__join_frame *fr) WEFT__JOIN_NOTHROW;

/* The pop's side of the asymmetric fence (src/os/fence.h): a compiler barrier
 * where the library's thieves use Linux membarrier; a seq-cst fence where
 * they cannot (the POSIX seam builds with WEFT_FENCE_SYMMETRIC). */
#ifdef __cplusplus
}
#endif

/* A name, expanded, as a string: a cold path's name in asm. */
#define WEFT__JOIN_STR_(x) #x
#define WEFT__JOIN_STR(x)  WEFT__JOIN_STR_(x)

#if defined(__linux__) && !defined(WEFT_FENCE_SYMMETRIC)
#define WEFT__JOIN_FENCE_LIGHT    1 /* the pop's fence is a compiler barrier */
#define weft__join_fork_cold      weft__join_fork_cold_3m
#define weft__join_pop_cold       weft__join_pop_cold_3m
#define weft__join_fork_cold_keep weft__join_fork_cold_keep_3m
#else
#define weft__join_fork_cold      weft__join_fork_cold_3s
#define weft__join_pop_cold       weft__join_pop_cold_3s
#define weft__join_fork_cold_keep weft__join_fork_cold_keep_3s
#endif

/* The fork's cold path, entered so that it keeps the caller's registers
 * (x86-64 ELF, GNU C). A fork runs before A with A's arguments live, and a
 * C call on its cold branch, however rare, clobbers the caller-saved
 * registers: the compiler then keeps those arguments in callee-saved ones,
 * whose saves and restores every call of a small task pays (a knapsack
 * node pushed five registers, Lace's three). Entered by an asm call that
 * clobbers only flags, memory and the vector and x87 registers (which no
 * call keeps on x86-64), the fork costs the caller nothing else
 * (docs/performance.md, "Typed tasks"). The entry (src/core/frame_keep.c)
 * takes the head in rdi and the frame in rsi, saves the other
 * caller-saved general registers around the C cold path and describes
 * its frame to unwinders; the call steps over the caller's red zone and
 * goes through the GOT, not a PLT slot, whose lazy binding would change
 * r10 and r11. A library for x86-64 ELF always has the entry: not a C
 * function, declared here for the list of exports only. Code built
 * without SSE or the x87 (whose registers the asm could not name), with
 * APX (more caller-saved registers), for the large code model, or with
 * WEFT_NO_JOIN_ASM defined makes the plain call. */
#if defined(__x86_64__) && defined(__ELF__)
#define WEFT__JOIN_KEEP_ENTRY 1
#ifdef __cplusplus
extern "C" {
#endif
WEFT_API void weft__join_fork_cold_keep_3m(void) WEFT__JOIN_NOTHROW;
WEFT_API void weft__join_fork_cold_keep_3s(void) WEFT__JOIN_NOTHROW;
#ifdef __cplusplus
}
#endif
#if defined(__GNUC__) && defined(__SSE__) && !defined(_SOFT_FLOAT) && !defined(__APX_F__) &&       \
    !defined(__code_model_large__) && !defined(WEFT_NO_JOIN_ASM)
#define WEFT__JOIN_FORK_KEEPS 1
#endif
#endif
#endif /* WEFT__JOIN_LAYOUT */

/* The inline fast path, in C11 with atomics and in C++ with gcc or clang:
 * the head's words through C11's atomics where C declares them _Atomic,
 * through the __atomic builtins in C++ (the same representation, above). */
#ifdef WEFT__JOIN_LAYOUT
#ifdef __cplusplus
#define WEFT__LOAD(p, order)     __atomic_load_n((p), WEFT__ORDER_##order)
#define WEFT__STORE(p, v, order) __atomic_store_n((p), (v), WEFT__ORDER_##order)
#define WEFT__INIT(p, v)         (*(p) = (v))
#define WEFT__ORDER_relaxed      __ATOMIC_RELAXED
#define WEFT__ORDER_release      __ATOMIC_RELEASE
#define WEFT__SIGNAL_FENCE()     __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define WEFT__THREAD_FENCE()     __atomic_thread_fence(__ATOMIC_SEQ_CST)
/* Casts and null pointers as C++ spells them, so that a program built with
 * -Wold-style-cast or -Wzero-as-null-pointer-constant builds this header
 * too: kind is static or reinterpret. */
#define WEFT__CAST(kind, T, x) kind##_cast<T>(x)
#define WEFT__NULL(T)          nullptr
/* The task's types, which C++ would share between translation units (a
 * task is private to its file, as its static functions are). */
#define WEFT__PRIVATE_BEGIN namespace {
#define WEFT__PRIVATE_END   }
#else
#define WEFT__LOAD(p, order)     atomic_load_explicit((p), memory_order_##order)
#define WEFT__STORE(p, v, order) atomic_store_explicit((p), (v), memory_order_##order)
#define WEFT__INIT(p, v)         atomic_init((p), (v))
#define WEFT__SIGNAL_FENCE()     atomic_signal_fence(memory_order_seq_cst)
#define WEFT__THREAD_FENCE()     atomic_thread_fence(memory_order_seq_cst)
#define WEFT__CAST(kind, T, x)   ((T)(x))
#define WEFT__NULL(T)            ((T)0)
#define WEFT__PRIVATE_BEGIN
#define WEFT__PRIVATE_END
#endif
#ifdef WEFT__JOIN_FENCE_LIGHT
#define WEFT__JOIN_FENCE() WEFT__SIGNAL_FENCE()
#else
#define WEFT__JOIN_FENCE() WEFT__THREAD_FENCE()
#endif

/* The call of the fork's cold path (above). The vector registers are
 * named by their xmm halves (the whole register, to the compiler); the
 * x87 stack by all its slots, as a call leaves it empty. */
#ifdef WEFT__JOIN_FORK_KEEPS
#ifdef __AVX512F__
#define WEFT__JOIN_CLOBBERS_AVX512                                                                 \
    , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",    \
        "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k0", "k1", "k2", "k3", "k4", "k5",  \
        "k6", "k7"
#else
#define WEFT__JOIN_CLOBBERS_AVX512
#endif
/* clang-format off */
/* The call, over the red zone; tests/test_fork_keep.c makes it too. Both asm
 * dialects (-masm=intel). */
#define WEFT__JOIN_FORK_COLD_CALL                                                                  \
    "{lea -128(%%rsp), %%rsp|lea rsp, [rsp - 128]}\n\t"                                            \
    "{call *" WEFT__JOIN_STR(weft__join_fork_cold_keep) "@GOTPCREL(%%rip)"                        \
    "|call qword ptr [rip + " WEFT__JOIN_STR(weft__join_fork_cold_keep) "@GOTPCREL]}\n\t"         \
    "{lea 128(%%rsp), %%rsp|lea rsp, [rsp + 128]}\n\t"
/* clang-format on */
#define WEFT__JOIN_VECTOR_CLOBBERS                                                                 \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",       \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)",     \
        "st(5)", "st(6)", "st(7)" WEFT__JOIN_CLOBBERS_AVX512
/* The entry is named to the compiler too ("X", no code), for link-time
 * optimisation, which reads no asm and would not link it in. */
#define WEFT__JOIN_FORK_COLD(w, fr)                                                                \
    __asm__ volatile(WEFT__JOIN_FORK_COLD_CALL                                                     \
                     :                                                                             \
                     : "D"(w), "S"(fr), "X"(weft__join_fork_cold_keep)                             \
                     : "memory", "cc", WEFT__JOIN_VECTOR_CLOBBERS)
#else
#define WEFT__JOIN_FORK_COLD(w, fr) weft__join_fork_cold((w), (fr))
#endif

/* A hook between the fork's steps: nothing, except in the library's own
 * weft_join of its random-yield build (src/api/join.c). */
#ifndef WEFT__JOIN_YIELD
#define WEFT__JOIN_YIELD() ((void)0)
#endif

/* The fast path itself, in GNU C (for the attribute and the branch hints);
 * the library's weft_join runs it too. A join is a fork of B into the
 * caller's frame fr, A, and the pop of fr (weft__join_pop): true when B is
 * still private, for the caller to run it inline; otherwise the cold path
 * ran B, or waited until whoever took it had. The typed joins below share
 * the two halves. */
#ifdef __GNUC__
/* The fork of fr over prev, the worker's newest frame, where self is 0 or
 * WEFT__FORK_SELF (b_arg is then fr itself, and is not written). */
static inline __attribute__((always_inline)) void
weft__join_fork_on(struct weft__worker_head *w, struct weft__join_frame *prev,
                   struct weft__join_frame *fr, weft_fn *b, void *b_arg, uintptr_t self) {
    uintptr_t c;
    fr->fork.fn = b;
    if (!self)
        fr->fork.arg = b_arg;
    /* No group, no priority: B's are the head's until they change, and the
     * library stamps them then. */
    fr->fork.prev = WEFT__CAST(reinterpret, uintptr_t, prev) | self;
    /* Release: a thief that reads frames (acquire) sees fr's fork part. */
    WEFT__STORE(&w->frames, fr, release);
    WEFT__JOIN_YIELD();
    /* Relaxed: the episode's first private frame (claim's frame is prev),
     * or a raised bit, takes the fenced cold path. A frame's address has
     * its low bits clear, so with no bit raised claim is its frame, and one
     * compare with prev tests both (no mask of claim first). */
    c = WEFT__LOAD(&w->claim, relaxed);
    if (__builtin_expect(c == WEFT__CAST(reinterpret, uintptr_t, prev) || (c & WEFT__CLAIM_BITS),
                         0))
        WEFT__JOIN_FORK_COLD(w, fr);
}

/* The worker's newest frame. Relaxed: only this thread stores frames. */
#define WEFT__JOIN_TOP(w) WEFT__LOAD(&(w)->frames, relaxed)

/* The fork of fr over the newest frame, which it returns (the pop's prev). */
static inline __attribute__((always_inline)) struct weft__join_frame *
weft__join_fork(struct weft__worker_head *w, struct weft__join_frame *fr, weft_fn *b, void *b_arg) {
    struct weft__join_frame *prev = WEFT__JOIN_TOP(w);
    weft__join_fork_on(w, prev, fr, b, b_arg, 0);
    return prev;
}

static inline __attribute__((always_inline)) int weft__join_pop(struct weft__worker_head *w,
                                                                struct weft__join_frame *fr,
                                                                struct weft__join_frame *prev) {
    uintptr_t c;
    /* Release: a thief reading frames sees the fork parts of what it links. */
    WEFT__STORE(&w->frames, prev, release);
    WEFT__JOIN_FENCE(); /* our store of frames, then claim: against a thief's barrier */
    WEFT__JOIN_YIELD();
    /* Relaxed: ordered by the fence pair. */
    c = WEFT__LOAD(&w->claim, relaxed);
    /* Still private: nobody else can have B. Nothing is counted: a B run
     * inline is a call, not a job (weft_stats.jobs); a count here, a load
     * and a store of one word at every pop, chained from pop to pop, is
     * the slowest step of a recursion made a loop (docs/performance.md,
     * "Typed tasks"). */
    if (__builtin_expect(!(c & WEFT__CLAIM_BITS) && c != WEFT__CAST(reinterpret, uintptr_t, fr), 1))
        return 1;
    weft__join_pop_cold(w, fr);
    return 0;
}

#ifndef __cplusplus /* C++'s join is weft::join (weft.hpp) */
static inline __attribute__((always_inline)) void weft__join(weft_fn *a, void *a_arg, weft_fn *b,
                                                             void *b_arg) {
    struct weft__worker_head *w = weft__tls_worker;
    struct weft__join_frame fr, *prev;
    /* Outside a pool, or a NULL function: the library's answer. */
    if (__builtin_expect(!w || !a || !b, 0)) {
        (weft_join)(a, a_arg, b, b_arg);
        return;
    }
    prev = weft__join_fork(w, &fr, b, b_arg);
    a(a_arg);
    if (weft__join_pop(w, &fr, prev))
        b(b_arg);
}
#endif

/* Typed tasks (weft.h, WEFT_TASK). A task's body takes the running
 * worker's head as a hidden first parameter, weft__w, which WEFT_FORK,
 * WEFT_CALL and WEFT_SYNC pass on: through a recursion the head stays in a
 * register, with no thread-local load and no test for "outside every pool"
 * on the fast path. A task of up to four arguments also takes the
 * worker's newest frame, weft__top, which WEFT_FORK and WEFT_SYNC keep
 * current, so that a fork reads nothing from the head (see
 * WEFT__TOP_T1). The task's frame holds B's argument and result beside
 * the join frame; a thief's entry (weft__task_run_NAME) reads the one and
 * writes the other there, and the sync of a B still private calls the body
 * with the argument in a register and returns its result in one.
 *
 * Outside every pool the task's public entry runs it on the default pool
 * (weft_run); where no pool can run it (none can be created, a fork child),
 * the body runs with a serial head: a head on the caller's stack whose
 * claim word names the head itself, with both bits raised, so that every
 * fork and pop takes the cold path, which tells it from a worker's (whose
 * claim names a frame) and does nothing at a fork and runs B at a pop. */
static inline void weft__serial_head_init(struct weft__worker_head *s) {
    /* Plain initialisation: the head is this thread's alone; no thief ever
     * sees it, so no order is needed. */
    WEFT__INIT(&s->unused, 0);
    WEFT__INIT(&s->frames, WEFT__NULL(struct weft__join_frame *));
    s->group = WEFT__NULL(struct weft__group *);
    s->prio = 0;
    WEFT__INIT(&s->claim, WEFT__CAST(reinterpret, uintptr_t, s) |
                              WEFT__CAST(static, uintptr_t, WEFT__CLAIM_BITS));
}

/* The older frame of a task's frame, from its link (only this thread
 * writes a frame's link, a fork or a stamp: frame.c), and the frame's pop. */
#define WEFT__TASK_PREV(fr)                                                                        \
    WEFT__CAST(reinterpret, struct weft__join_frame *,                                             \
               (fr)->fork.prev & ~WEFT__CAST(static, uintptr_t, WEFT__FORK_BITS))
static inline __attribute__((always_inline)) int weft__task_pop(struct weft__worker_head *w,
                                                                struct weft__join_frame *fr) {
    return weft__join_pop(w, fr, WEFT__TASK_PREV(fr));
}

/* Argument lists. A task takes one to six arguments, each in a register
 * where the ABI has one for it, as Lace's TASK_n do: named in pairs where
 * the task is defined (A1, a1, A2, a2, ...), as types where it is only
 * declared (A1, A2, ...). Its frame holds them as weft__a1, weft__a2, ...
 * beside the result (WEFT_JOIN keeps the whole frame: see WEFT__TASK_DECL).
 * WEFT__TYPES(M, S, A1, ...) and WEFT__PAIRS(M, S, A1, a1, ...) expand
 * M(i, Ai, ai) for each (ai empty for types), with S() between two. */
#define WEFT__CAT_(a, b)                                                        a##b
#define WEFT__CAT(a, b)                                                         WEFT__CAT_(a, b)
#define WEFT__COUNT(...)                                                        WEFT__COUNT_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WEFT__COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define WEFT__COMMA()                                                           ,
#define WEFT__NONE()
#define WEFT__TYPES(M, S, ...)                 WEFT__CAT(WEFT__T, WEFT__COUNT(__VA_ARGS__))(M, S, __VA_ARGS__)
#define WEFT__T1(M, S, A1)                     M(1, A1, )
#define WEFT__T2(M, S, A1, A2)                 M(1, A1, ) S() M(2, A2, )
#define WEFT__T3(M, S, A1, A2, A3)             WEFT__T2(M, S, A1, A2) S() M(3, A3, )
#define WEFT__T4(M, S, A1, A2, A3, A4)         WEFT__T3(M, S, A1, A2, A3) S() M(4, A4, )
#define WEFT__T5(M, S, A1, A2, A3, A4, A5)     WEFT__T4(M, S, A1, A2, A3, A4) S() M(5, A5, )
#define WEFT__T6(M, S, A1, A2, A3, A4, A5, A6) WEFT__T5(M, S, A1, A2, A3, A4, A5) S() M(6, A6, )
#define WEFT__PAIRS(M, S, ...)                 WEFT__CAT(WEFT__P, WEFT__COUNT(__VA_ARGS__))(M, S, __VA_ARGS__)
#define WEFT__P2(M, S, A1, a1)                 M(1, A1, a1)
#define WEFT__P4(M, S, A1, a1, A2, a2)         M(1, A1, a1) S() M(2, A2, a2)
#define WEFT__P6(M, S, A1, a1, A2, a2, A3, a3) WEFT__P4(M, S, A1, a1, A2, a2) S() M(3, A3, a3)
#define WEFT__P8(M, S, A1, a1, A2, a2, A3, a3, A4, a4)                                             \
    WEFT__P6(M, S, A1, a1, A2, a2, A3, a3) S() M(4, A4, a4)
#define WEFT__P10(M, S, A1, a1, A2, a2, A3, a3, A4, a4, A5, a5)                                    \
    WEFT__P8(M, S, A1, a1, A2, a2, A3, a3, A4, a4) S() M(5, A5, a5)
#define WEFT__P12(M, S, A1, a1, A2, a2, A3, a3, A4, a4, A5, a5, A6, a6)                            \
    WEFT__P10(M, S, A1, a1, A2, a2, A3, a3, A4, a4, A5, a5) S() M(6, A6, a6)
/* A value moved, not copied, where C++ has class types (the frame's values
 * are read once: into the body's call, or out as the result); in C, the
 * value. decltype of the unparenthesised name or member is its declared
 * type, so the cast makes an rvalue of it. */
#ifdef __cplusplus
#define WEFT__MOVE(x) static_cast<decltype(x) &&>(x)
#else
#define WEFT__MOVE(x) (x)
#endif

/* What each argument becomes: a field of the frame, a type, a parameter
 * (the user's name, or a generated one), the frame's copy as an argument,
 * the user's name as one, a store into the frame (weft__x). */
#define WEFT__FIELD(i, A, a)  A weft__a##i;
#define WEFT__TYPE(i, A, a)   A
#define WEFT__PARAM(i, A, a)  A a
#define WEFT__GPARAM(i, A, a) A weft__p##i
#define WEFT__GSTORE(i, A, a) weft__x->weft__a##i = WEFT__MOVE(weft__p##i);
#define WEFT__FROM(i, A, a)   WEFT__MOVE(weft__x->weft__a##i)
#define WEFT__KEPT(i, A, a)   WEFT__MOVE(weft__y.weft__a##i)
#define WEFT__NAME(i, A, a)   WEFT__MOVE(a)
#define WEFT__USTORE(i, A, a) weft__x->weft__a##i = WEFT__MOVE(a);

/* A task's body on this thread, on its worker or with a serial head, with
 * the arguments in the frame weft__x: STORE(weft__x, the body's result)
 * says what to do with its result. */
#define WEFT__TASK_ON_THIS_THREAD(name, STORE, ...)                                                \
    do {                                                                                           \
        struct weft__worker_head *weft__h = weft__tls_worker;                                      \
        if (weft__h) {                                                                             \
            STORE(weft__x, weft__task_body_##name(weft__h, WEFT__JOIN_TOP(weft__h), __VA_ARGS__)); \
        } else {                                                                                   \
            struct weft__worker_head weft__serial;                                                 \
            weft__serial_head_init(&weft__serial);                                                 \
            STORE(weft__x,                                                                         \
                  weft__task_body_##name(&weft__serial, WEFT__NULL(struct weft__join_frame *),     \
                                         __VA_ARGS__));                                            \
        }                                                                                          \
    } while (0)
#define WEFT__TASK_STORE(x, call) ((x)->result = (call))
#define WEFT__VOID_STORE(x, call) (call)

#define WEFT__TASK_TYPES(name, RESULT_FIELD, ...)                                                  \
    WEFT__PRIVATE_BEGIN                                                                            \
    typedef struct weft_task_##name {                                                              \
        struct weft__join_frame frame;                                                             \
        WEFT__TYPES(WEFT__FIELD, WEFT__NONE, __VA_ARGS__)                                          \
        RESULT_FIELD                                                                               \
    } weft_task_##name;                                                                            \
    WEFT__PRIVATE_END                                                                              \
    /* the self mark needs the frame 8-byte aligned (no #pragma pack) */                           \
    typedef char weft__task_##name##_aligned                                                       \
        [__alignof__(weft_task_##name) >= 8 || WEFT__FORK_SELF == 0 ? 1 : -1]

/* The declaration: the frame's type, the body, the public entry and the
 * thief's entry, and the fork and sync of a call (inline: the arguments
 * stay in registers up to the frame's stores).
 *
 * The body is `used` and `inline`, and a WEFT_JOIN's last step
 * (weft__task_rest_NAME, below) is inline but not always_inline and takes
 * the whole frame, for gcc's sake: so gcc compiles the body first, splits
 * its leading test (fib's n < 2) out into its callers and inlines that
 * test into them, and only then inlines the rest, whose call of the body
 * becomes a jump back to its start (a recursion through WEFT_JOIN's second
 * task runs as a loop, as Lace's SYNC does). Without `used` gcc inlines the
 * rest early, makes the loop first, and no longer splits the test out:
 * every leaf then costs a call. Without `inline`, or with the rest taking
 * the frame's values alone, gcc put the split body back into its test
 * where a leaf does work (pi, knapsack): every leaf then ran the body's
 * prologue (docs/performance.md, "Typed tasks"). */
#ifdef __cplusplus
#define WEFT__TASK_NOEXCEPT noexcept
#else
#define WEFT__TASK_NOEXCEPT
#endif

/* Where the body finds the worker's newest frame. A task of up to four
 * arguments takes it as a parameter, weft__top, beside the worker (as
 * Lace's tasks take their deque head): a fork reads nothing from the
 * worker, and the worker, the frame and the arguments fit x86-64's six
 * argument registers. A task of five or six takes the worker and its
 * arguments only, and its body reads the newest frame from the worker
 * where it starts: a seventh parameter would go on the stack at every
 * call (docs/performance.md, "Typed tasks"). Every call names the body
 * with the frame: of a task of up to four arguments (REG) the body is the
 * block the user writes; of five or six (MEM) it is an always-inline
 * function that drops the frame and calls weft__task_call_NAME, which
 * reads it and runs the user's block (weft__task_block_NAME, inlined
 * into it). WEFT__TOP_Tn: the kind of a task of n arguments (where the
 * task is defined, n counts the types of its name and type pairs).
 *
 * Why weft__top is the worker's newest frame whenever the body forks or
 * syncs: the worker's frames change only by a fork (links one, newest) and
 * a pop (unlinks the newest), made by the thread that owns them, so they
 * nest as calls do. The body's own forks and syncs keep weft__top in step
 * (WEFT_FORK sets it to the new frame, WEFT_SYNC to the older one, and
 * WEFT_JOIN passes the new frame to A). Whatever the body calls between
 * them (a task, a wait that runs published work, a thief's entry, a
 * weft_join) pops every frame it forks before it returns. Publishing a
 * frame or losing it to a thief moves the claim word, not the links: the
 * frame stays the newest until its owner's pop. */
#define WEFT__TOP_T1         REG
#define WEFT__TOP_T2         REG
#define WEFT__TOP_T3         REG
#define WEFT__TOP_T4         REG
#define WEFT__TOP_T5         MEM
#define WEFT__TOP_T6         MEM
#define WEFT__GMOVE(i, A, a) WEFT__MOVE(weft__p##i)
#define WEFT__TASK_ENTRY_REG(R, RET, name, ...)                                                    \
    __attribute__((used)) static inline R weft__task_body_##name(                                  \
        struct weft__worker_head *weft__w, struct weft__join_frame *weft__top,                     \
        WEFT__TYPES(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__)) WEFT__TASK_NOEXCEPT;
#define WEFT__TASK_ENTRY_MEM(R, RET, name, ...)                                                    \
    static inline __attribute__((always_inline)) R weft__task_block_##name(                        \
        struct weft__worker_head *weft__w, struct weft__join_frame *weft__top,                     \
        WEFT__TYPES(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__)) WEFT__TASK_NOEXCEPT;                    \
    __attribute__((used)) static inline R weft__task_call_##name(                                  \
        struct weft__worker_head *weft__w, WEFT__TYPES(WEFT__GPARAM, WEFT__COMMA, __VA_ARGS__))    \
        WEFT__TASK_NOEXCEPT {                                                                      \
        RET weft__task_block_##name(weft__w, WEFT__JOIN_TOP(weft__w),                              \
                                    WEFT__TYPES(WEFT__GMOVE, WEFT__COMMA, __VA_ARGS__));           \
    }                                                                                              \
    static inline __attribute__((always_inline, unused))                                           \
    R weft__task_body_##name(struct weft__worker_head *weft__w,                                    \
                             __attribute__((unused)) struct weft__join_frame *weft__top,           \
                             WEFT__TYPES(WEFT__GPARAM, WEFT__COMMA, __VA_ARGS__))                  \
        WEFT__TASK_NOEXCEPT {                                                                      \
        RET weft__task_call_##name(weft__w, WEFT__TYPES(WEFT__GMOVE, WEFT__COMMA, __VA_ARGS__));   \
    }
#define WEFT__TASK_BLOCK_REG(R, name) __attribute__((used)) static inline R weft__task_body_##name
#define WEFT__TASK_BLOCK_MEM(R, name) static inline R weft__task_block_##name
#define WEFT__TASK_DECL(R, RET, RESULT_FIELD, name, ...)                                           \
    WEFT__TASK_TYPES(name, RESULT_FIELD, __VA_ARGS__);                                             \
    WEFT__CAT(WEFT__TASK_ENTRY_, WEFT__CAT(WEFT__TOP_T, WEFT__COUNT(__VA_ARGS__)))                 \
    (R, RET, name, __VA_ARGS__) static R name(WEFT__TYPES(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__))   \
        WEFT__TASK_NOEXCEPT;                                                                       \
    static void weft__task_run_##name(void *weft__t) WEFT__TASK_NOEXCEPT;                          \
    static inline __attribute__((always_inline, unused)) void weft__task_fork_##name(              \
        struct weft__worker_head *weft__w, struct weft__join_frame *weft__top,                     \
        weft_task_##name *weft__x, WEFT__TYPES(WEFT__GPARAM, WEFT__COMMA, __VA_ARGS__)) {          \
        WEFT__TYPES(WEFT__GSTORE, WEFT__NONE, __VA_ARGS__)                                         \
        weft__join_fork_on(weft__w, weft__top, &weft__x->frame, weft__task_run_##name, weft__x,    \
                           WEFT__FORK_SELF);                                                       \
    }                                                                                              \
    typedef int weft__task_##name##_declared

#define WEFT_TASK_DECL(R, name, ...)                                                               \
    WEFT__TASK_DECL(R, return, R result;, name, __VA_ARGS__);                                      \
    static inline __attribute__((always_inline, unused))                                           \
    R weft__task_sync_##name(struct weft__worker_head *w, struct weft__join_frame **weft__top,     \
                             weft_task_##name *weft__x) {                                          \
        struct weft__join_frame *weft__prev = WEFT__TASK_PREV(&weft__x->frame);                    \
        *weft__top = weft__prev;                                                                   \
        return weft__join_pop(w, &weft__x->frame, weft__prev)                                      \
                   ? weft__task_body_##name(w, weft__prev,                                         \
                                            WEFT__TYPES(WEFT__FROM, WEFT__COMMA, __VA_ARGS__))     \
                   : WEFT__MOVE(weft__x->result);                                                  \
    }                                                                                              \
    static inline __attribute__((unused)) R weft__task_rest_##name(                                \
        struct weft__worker_head *weft__w, int weft__popped, weft_task_##name weft__y) {           \
        return __builtin_expect(weft__popped, 1)                                                   \
                   ? weft__task_body_##name(weft__w, WEFT__TASK_PREV(&weft__y.frame),              \
                                            WEFT__TYPES(WEFT__KEPT, WEFT__COMMA, __VA_ARGS__))     \
                   : WEFT__MOVE(weft__y.result);                                                   \
    }                                                                                              \
    typedef int weft__task_##name##_synced

#define WEFT_VOID_TASK_DECL(name, ...)                                                             \
    WEFT__TASK_DECL(void, , , name, __VA_ARGS__);                                                  \
    static inline __attribute__((always_inline, unused)) void weft__task_sync_##name(              \
        struct weft__worker_head *w, struct weft__join_frame **weft__top,                          \
        weft_task_##name *weft__x) {                                                               \
        struct weft__join_frame *weft__prev = WEFT__TASK_PREV(&weft__x->frame);                    \
        *weft__top = weft__prev;                                                                   \
        if (weft__join_pop(w, &weft__x->frame, weft__prev))                                        \
            weft__task_body_##name(w, weft__prev,                                                  \
                                   WEFT__TYPES(WEFT__FROM, WEFT__COMMA, __VA_ARGS__));             \
    }                                                                                              \
    static inline __attribute__((unused)) void weft__task_rest_##name(                             \
        struct weft__worker_head *weft__w, int weft__popped, weft_task_##name weft__y) {           \
        if (__builtin_expect(weft__popped, 1))                                                     \
            weft__task_body_##name(weft__w, WEFT__TASK_PREV(&weft__y.frame),                       \
                                   WEFT__TYPES(WEFT__KEPT, WEFT__COMMA, __VA_ARGS__));             \
    }                                                                                              \
    typedef int weft__task_##name##_synced

/* The thief's entry, which is also the default pool's root (either may run
 * where no worker is: the serial head's pop, a weft_run that found no
 * pool), the public entry, and the body's signature, which the user's
 * block completes. */
#define WEFT__TASK_DEF(R, STORE, name, ...)                                                        \
    static void weft__task_run_##name(void *weft__t) WEFT__TASK_NOEXCEPT {                         \
        weft_task_##name *weft__x = WEFT__CAST(static, weft_task_##name *, weft__t);               \
        WEFT__TASK_ON_THIS_THREAD(name, STORE, WEFT__PAIRS(WEFT__FROM, WEFT__COMMA, __VA_ARGS__)); \
    }                                                                                              \
    __attribute__((unused)) static R name(WEFT__PAIRS(WEFT__PARAM, WEFT__COMMA, __VA_ARGS__))      \
        WEFT__TASK_NOEXCEPT {                                                                      \
        struct weft__worker_head *weft__h = weft__tls_worker;                                      \
        if (__builtin_expect(weft__h != WEFT__NULL(struct weft__worker_head *), 1))                \
            WEFT__RETURN_##STORE(                                                                  \
                weft__task_body_##name(weft__h, WEFT__JOIN_TOP(weft__h),                           \
                                       WEFT__PAIRS(WEFT__NAME, WEFT__COMMA, __VA_ARGS__)));        \
        {                                                                                          \
            weft_task_##name weft__c, *weft__x = &weft__c; /* off every worker only */             \
            WEFT__PAIRS(WEFT__USTORE, WEFT__NONE, __VA_ARGS__)                                     \
            weft_run(WEFT__NULL(weft_pool *), weft__task_run_##name, weft__x);                     \
            WEFT__RETURN_##STORE(WEFT__RESULT_##STORE(weft__x));                                   \
        }                                                                                          \
    }                                                                                              \
    WEFT__CAT(                                                                                     \
        WEFT__TASK_BLOCK_,                                                                         \
        WEFT__CAT(WEFT__TOP_T, WEFT__COUNT(WEFT__PAIRS(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__))))    \
    (R, name)(__attribute__((unused)) struct weft__worker_head * weft__w,                          \
              __attribute__((unused)) struct weft__join_frame * weft__top,                         \
              WEFT__PAIRS(WEFT__PARAM, WEFT__COMMA, __VA_ARGS__)) WEFT__TASK_NOEXCEPT
/* Return a call's value, or make a void call and return (ISO C has no
 * return of a void expression); the frame's result, or nothing. */
#define WEFT__RETURN_WEFT__TASK_STORE(call) return (call)
#define WEFT__RETURN_WEFT__VOID_STORE(call)                                                        \
    do {                                                                                           \
        (call);                                                                                    \
        return;                                                                                    \
    } while (0)
#define WEFT__RESULT_WEFT__TASK_STORE(x) WEFT__MOVE((x)->result)
#define WEFT__RESULT_WEFT__VOID_STORE(x) ((void)(x))

#define WEFT_TASK_DEF(R, name, ...)   WEFT__TASK_DEF(R, WEFT__TASK_STORE, name, __VA_ARGS__)
#define WEFT_VOID_TASK_DEF(name, ...) WEFT__TASK_DEF(void, WEFT__VOID_STORE, name, __VA_ARGS__)

#define WEFT_TASK(R, name, ...)                                                                    \
    WEFT_TASK_DECL(R, name, WEFT__PAIRS(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__));                    \
    WEFT_TASK_DEF(R, name, __VA_ARGS__)
#define WEFT_VOID_TASK(name, ...)                                                                  \
    WEFT_VOID_TASK_DECL(name, WEFT__PAIRS(WEFT__TYPE, WEFT__COMMA, __VA_ARGS__));                  \
    WEFT_VOID_TASK_DEF(name, __VA_ARGS__)

/* Inside a task's body: fork name(x...) into the frame t (declared here),
 * call name(x...) on this worker, and sync t (its result). */
#define WEFT_FORK(name, t, ...)                                                                    \
    weft_task_##name t;                                                                            \
    weft__task_fork_##name(weft__w, weft__top, &(t), __VA_ARGS__);                                 \
    weft__top = &(t).frame
#define WEFT_CALL(name, ...) weft__task_body_##name(weft__w, weft__top, __VA_ARGS__)
#define WEFT_SYNC(name, t)   weft__task_sync_##name(weft__w, &weft__top, &(t))

/* Inside a task's body: a = name_a(xa...) here while name_b(xb...) is
 * offered to idle workers, then b = name_b(xb...) here unless a worker
 * took it (WEFT_FORK, WEFT_CALL and WEFT_SYNC in one statement). The
 * frame lives in a block that ends before the last call, so nothing of
 * the body's is in memory when that call runs, and the compiler may make
 * it a jump (see WEFT__TASK_DECL). The argument lists come parenthesised;
 * name_b's are evaluated first, at the fork. */
#define WEFT__UNPAREN(...) __VA_ARGS__
#define WEFT__JOIN(set_a, name_a, args_a, set_b, name_b, args_b)                                   \
    do {                                                                                           \
        int weft__popped;                                                                          \
        weft_task_##name_b weft__y;                                                                \
        {                                                                                          \
            weft_task_##name_b weft__t;                                                            \
            weft__task_fork_##name_b(weft__w, weft__top, &weft__t, WEFT__UNPAREN args_b);          \
            set_a weft__task_body_##name_a(weft__w, &weft__t.frame, WEFT__UNPAREN args_a);         \
            weft__popped = weft__task_pop(weft__w, &weft__t.frame);                                \
            /* the frame: the arguments, and the result if another thread ran it */                \
            weft__y = WEFT__MOVE(weft__t);                                                         \
        }                                                                                          \
        set_b weft__task_rest_##name_b(weft__w, weft__popped, WEFT__MOVE(weft__y));                \
    } while (0)
#define WEFT_JOIN(a, name_a, args_a, b, name_b, args_b)                                            \
    WEFT__JOIN((a) =, name_a, args_a, (b) =, name_b, args_b)
#define WEFT_JOIN_VOID(name_a, args_a, name_b, args_b)                                             \
    WEFT__JOIN(, name_a, args_a, , name_b, args_b)

/* weft_join, inline in C, unless the program asks for the library's call. */
#if !defined(__cplusplus) && !defined(WEFT_NO_INLINE_JOIN)
#define WEFT_INLINE_JOIN              1
#define weft_join(a, a_arg, b, b_arg) weft__join((a), (a_arg), (b), (b_arg))
#endif
#endif /* __GNUC__ */
#endif /* the fast path */
#endif /* WEFT_JOIN_H */
