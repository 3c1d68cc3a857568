/* SPDX-License-Identifier: MIT */
/* The fork's cold path for callers that keep their registers (x86-64 ELF).
 *
 * include/weft/join.h enters the fork's cold path with an asm call that
 * tells the compiler no general register changes, so that a fork costs its
 * caller no callee-saved registers (see WEFT__JOIN_FORK_KEEPS there). This
 * entry makes that true: it saves every caller-saved general register the C
 * cold path may change (rax, rcx, rdx, rsi, rdi, r8-r11; the callee-saved
 * ones the C function keeps itself), aligns the stack for the call and
 * restores them. Flags, the vector registers and the x87 stack are the
 * asm's declared clobbers, as they are a call's.
 *
 * The caller moved its stack pointer 128 bytes down before the call, over
 * its red zone (a function that calls nothing else may keep locals there),
 * and moves it back after. Its unwind tables do not know that, so this
 * entry's do: the canonical frame address, the caller's stack pointer
 * before the asm, is 8 + 128 bytes above the return address's slot at
 * entry; unwinders (gdb, perf, sanitizers' reports) then see the caller as
 * it is (but for the caller's two instructions around the call, whose
 * rows are the compiler's: a profiler's sample there may unwind wrong).
 * Each saved register is described too, for a debugger's view of the
 * caller. The C cold path's PLT slot may bind lazily here: its resolver
 * changes r10 and r11, saved by then.
 *
 * `used`, here and on the C cold path (frame.c): each is called from asm
 * alone, which link-time optimisation does not see. */
#include "core/frame.h"

#ifdef WEFT__JOIN_KEEP_ENTRY

/* The directives where the compiler emits unwind tables as CFI directives
 * (it defines __GCC_HAVE_DWARF2_CFI_ASM then); nothing where it emits none,
 * where a stray directive would not assemble. */
#ifdef __GCC_HAVE_DWARF2_CFI_ASM
#define CFI(...) __VA_ARGS__ "\n\t"
#else
#define CFI(...) ""
#endif

/* Naked: the body is the whole function, with no prologue of the
 * compiler's. rbp holds the entry's frame, so that the restores need no
 * count of the alignment. Offsets from the canonical frame address: the
 * return address at -136, rbp at -144, then the nine saves. */
/* clang-format off */
__attribute__((naked, used, no_instrument_function)) void weft__join_fork_cold_keep(void) {
    __asm__(CFI(".cfi_def_cfa_offset 136")      /* the caller's red zone, then the call */
            CFI(".cfi_offset %rip, -136")       /* the return address */
            "push %rbp\n\t"
            CFI(".cfi_def_cfa_offset 144")
            CFI(".cfi_offset %rbp, -144")
            "mov %rsp, %rbp\n\t"
            CFI(".cfi_def_cfa_register %rbp")
            "push %rax\n\t"
            CFI(".cfi_offset %rax, -152")
            "push %rcx\n\t"
            CFI(".cfi_offset %rcx, -160")
            "push %rdx\n\t"
            CFI(".cfi_offset %rdx, -168")
            "push %rsi\n\t"
            CFI(".cfi_offset %rsi, -176")
            "push %rdi\n\t"
            CFI(".cfi_offset %rdi, -184")
            "push %r8\n\t"
            CFI(".cfi_offset %r8, -192")
            "push %r9\n\t"
            CFI(".cfi_offset %r9, -200")
            "push %r10\n\t"
            CFI(".cfi_offset %r10, -208")
            "push %r11\n\t"
            CFI(".cfi_offset %r11, -216")
            "and $-16, %rsp\n\t"                /* the ABI's alignment at a call */
            "call " WEFT__JOIN_STR(weft__join_fork_cold) "@PLT\n\t" /* rdi, rsi: as the caller set them */
            "lea -72(%rbp), %rsp\n\t"           /* the nine saves */
            "pop %r11\n\t"
            "pop %r10\n\t"
            "pop %r9\n\t"
            "pop %r8\n\t"
            "pop %rdi\n\t"
            "pop %rsi\n\t"
            "pop %rdx\n\t"
            "pop %rcx\n\t"
            "pop %rax\n\t"
            "pop %rbp\n\t"
            CFI(".cfi_def_cfa %rsp, 136")
            "ret\n\t");
}
/* clang-format on */

#endif
