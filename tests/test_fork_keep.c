/* SPDX-License-Identifier: MIT */
/* The fork's cold path keeps the caller's registers (x86-64 ELF): join.h
 * calls it by an asm that says no general register changes, and the entry
 * (src/core/frame_keep.c) makes that true. Built twice: against the static
 * library, and against the shared one with lazy binding, where a first
 * call through a PLT slot would run the dynamic linker's resolver (which
 * changes r10 and r11) before the entry. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pools.h"
#include "weft.h"

#ifdef WEFT__JOIN_FORK_KEEPS
/* The caller-saved general registers after join.h's asm call of the fork's
 * cold path, each set to its own pattern before it (rdi and rsi carry the
 * head and the frame): the asm tells the compiler that none changes. */
enum { KEPT = 9 };
static const uint64_t kept_pattern[KEPT - 2] = {
    0x0123456789abcd01u, 0x0123456789abcd02u, 0x0123456789abcd03u, 0x0123456789abcd08u,
    0x0123456789abcd09u, 0x0123456789abcd0au, 0x0123456789abcd0bu,
};

static void fork_cold_with_patterns(struct weft__worker_head *w, struct weft__join_frame *fr,
                                    uint64_t out[KEPT]) {
    /* rbx holds out: callee-saved, kept by every C function. */
    /* clang-format off */
    __asm__ volatile("mov 0(%%rbx), %%rax\n\t"
                     "mov 8(%%rbx), %%rcx\n\t"
                     "mov 16(%%rbx), %%rdx\n\t"
                     "mov 24(%%rbx), %%r8\n\t"
                     "mov 32(%%rbx), %%r9\n\t"
                     "mov 40(%%rbx), %%r10\n\t"
                     "mov 48(%%rbx), %%r11\n\t"
                     WEFT__JOIN_FORK_COLD_CALL
                     "mov %%rax, 0(%%rbx)\n\t"
                     "mov %%rcx, 8(%%rbx)\n\t"
                     "mov %%rdx, 16(%%rbx)\n\t"
                     "mov %%r8, 24(%%rbx)\n\t"
                     "mov %%r9, 32(%%rbx)\n\t"
                     "mov %%r10, 40(%%rbx)\n\t"
                     "mov %%r11, 48(%%rbx)\n\t"
                     "mov %%rdi, 56(%%rbx)\n\t"
                     "mov %%rsi, 64(%%rbx)"
                     :
                     : "D"(w), "S"(fr), "b"(out)
                     : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "memory", "cc",
                       WEFT__JOIN_VECTOR_CLOBBERS);
    /* clang-format on */
}

/* A fork whose cold path is that call: the fork's stores, as join.h's. */
static void fork_keeping_check(struct weft__worker_head *w, weft_fn *b, void *b_arg) {
    struct weft__join_frame fr;
    struct weft__join_frame *prev = atomic_load_explicit(&w->frames, memory_order_relaxed);
    fr.fork.fn = b;
    fr.fork.arg = b_arg;
    fr.fork.prev = (uintptr_t)prev;
    atomic_store_explicit(&w->frames, &fr, memory_order_release);
    uint64_t regs[KEPT];
    memcpy(regs, kept_pattern, sizeof kept_pattern);
    fork_cold_with_patterns(w, &fr, regs);
    for (int i = 0; i < KEPT - 2; i++)
        CHECK_EQ(regs[i], kept_pattern[i]);
    CHECK_EQ(regs[KEPT - 2], (uint64_t)(uintptr_t)w);
    CHECK_EQ(regs[KEPT - 1], (uint64_t)(uintptr_t)&fr);
    if (weft__join_pop(w, &fr, prev))
        b(b_arg);
}

static void count_run(void *arg) {
    atomic_fetch_add((_Atomic int *)arg, 1);
}

/* On a worker: the episode's first frame, which the cold path publishes
 * (nothing of the worker's deque is public), so the pop takes it back. */
static void keeping_on_a_worker(void *arg) {
    fork_keeping_check(weft__tls_worker, count_run, arg);
}
#endif

TEST(the_fork_cold_path_keeps_the_callers_registers) {
#ifdef WEFT__JOIN_FORK_KEEPS
    _Atomic int runs = 0;
    for (unsigned threads = 1; threads <= 3; threads++) {
        weft_pool *pool = make_pool(threads);
        for (int i = 0; i < 100; i++)
            weft_run(pool, keeping_on_a_worker, &runs);
        CHECK_EQ(weft_pool_destroy(pool), 0);
    }
    CHECK_EQ(atomic_load(&runs), 300);
    /* A serial head (no pool), whose cold fork does nothing: B runs at the pop. */
    struct weft__worker_head serial;
    weft__serial_head_init(&serial);
    fork_keeping_check(&serial, count_run, &runs);
    CHECK_EQ(atomic_load(&runs), 301);
#else
    fprintf(stderr, "this target calls the fork's cold path plainly\n");
#endif
}
