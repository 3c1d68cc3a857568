/* SPDX-License-Identifier: MIT */
/* The processes both sleep models share (shared.pml has the state). Included
 * at the end of sleep.pml and wake_all.pml, after their Worker and Submitter:
 * the Submitter is declared first, so that it is _pid 0, the Setter 1,
 * Memory 2, init 3 and the workers 4.. (the ghosts `know` rely on it). */

/* Any other thread setting LJOB (and, with CONTEXT, the context's latch) at
 * any moment: weft__latch_set + weft__sleep_set_latch */
active proctype Setter() {
    byte old, seen;
    bit woke, ok;
#ifndef CONTEXT
    set_latch(LJOB, 0)
#else
    if
    :: set_latch(LJOB, 0); set_latch(LCTX, W)
    :: set_latch(LCTX, W); set_latch(LJOB, 0)
    fi
#endif
}

/* Drains the store buffers at any moment: the submitter's push; the setter's
 * SET (wake-all, LATCH_RELEASE: never filled otherwise) */
active proctype Memory() {
end:
    do
    :: atomic { sb -> length++; sb = 0; G(uf = 1; lrel = pushes) }
    :: atomic { lsb -> latch[LJOB] = SET; lsb = 0 }
    od
}

init {
    atomic {
        run Worker(0);
        run Worker(1);
#if W == 3
        run Worker(2);
#endif
#ifdef CONTEXT
        run Context();
#endif
    }
}
