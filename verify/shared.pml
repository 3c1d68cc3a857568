/* SPDX-License-Identifier: MIT */
/* What the models of both sleep protocols share: the latches, the injector
 * with the submitter's store buffer, the C11 visibility ghosts, the final
 * injector check, running a job, the outside owner of the pending latch and
 * weft_pool_destroy. Included at the top of sleep.pml (targeted) and
 * wake_all.pml (wake-all); shared_procs.pml has the shared processes.
 *
 * A model provides, before its first process:
 *   W, NJOBS (defaults below)
 *   set_latch(l, o)     weft__latch_set of latch l owned by worker o
 *   normalize_model()   its own ghosts raised to `pops` (see normalize)
 * and may define PENDING_EXTRA, counts of the pending latch held by workers'
 * own jobs (default 0).
 */

#ifndef W
#define W 2
#endif
#ifndef NJOBS
#define NJOBS 2
#endif
#ifndef PENDING_EXTRA
#define PENDING_EXTRA 0
#endif

/* latch states (latch.h) */
#define UNSET    0
#define SLEEPY   1
#define SLEEPING 2
#define SET      3

/* where a worker is in its search (weft__idle.sleepy and .spent) */
#define SEARCHING 0 /* !sleepy, !spent: search again (leave policy) or get sleepy */
#define AT_SLEEPY 1 /* !sleepy, spent: get sleepy at the next miss (targeted)   */
#define IS_SLEEPY 2 /* sleepy: fall asleep at the next miss                     */

#define LJOB W       /* latch[LJOB]: the job latch worker 0 waits for first */
#define LCTX (W + 1) /* latch[LCTX]: the context's latch (targeted, CONTEXT) */

/* ---- shared state -------------------------------------------------------- */

/* the injector, as its `length` word: memory's value, and sb = the
 * submitter's store buffer holds its last push (length store + unlock) */
byte length = 0;
bit sb = 0;
bit uf = 0;            /* ghost: memory holds a push whose PushFence has not run */

/* Ghosts for C11 visibility (not used under TSO). A relaxed load of `length`
 * may return a stale value, but not older than the last push that
 * happens-before it. Each process has `kn`: how many of the submitter's
 * pushes happen-before its next step. Knowledge travels along the
 * synchronisation the code has: every access to the protocol's word (the
 * targeted protocol's counters, the wake-all protocol's state) is
 * seq-cst (acquire; the word only ever changes by RMWs, so every later reader
 * synchronises with every earlier writer: `rel`), the injector lock (`lrel`),
 * and what a model adds (targeted: a waker's release store of AWAKE read by
 * the sleeper, `wk`). The model leaves out other synchronisation (the slot
 * locks, the wake-all lock, futexes), which only makes it allow more stale reads.
 * Knowledge below `pops` means the same as `pops` (those jobs are gone), so a
 * pop raises every value to at least `pops`: equal states get equal ghosts. */
byte pushes = 0;       /* jobs the submitter has pushed */
byte pops = 0;         /* jobs the workers have popped (FIFO: the injector holds pushes pops..) */
byte rel = 0;          /* knowledge released into the protocol's word */
byte lrel = 0;         /* knowledge released through the injector lock */
byte know[4 + W];      /* each process's knowledge, by _pid (Submitter 0, Setter 1,
                        * Workers 4..); `kn` is the running process's */
#define kn know[_pid]

/* latches: 0..W-1 the terminate latches, LJOB worker 0's job latch, LCTX */
byte latch[W + 2];
bit lsb = 0;           /* the setter's SET of LJOB waits in its store buffer
                        * (wake-all, LATCH_RELEASE only) */

/* the pending count latch (weft_pool_destroy holds one count); its owner is
 * the outside submitter */
byte pending = NJOBS + 1 + PENDING_EXTRA;
byte olatch = UNSET;
bit ofutex_q = 0;

#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* ghost updates: C11 only (G: plain statement list) */
#ifndef TSO
#define G(x) x
#else
#define G(x) skip
#endif

/* a seq-cst load of the protocol's word (acquire) / a read-modify-write of it */
inline cnt_acq() {
    G(kn = MAX(kn, rel))
}
inline cnt_rmw() {
    G(kn = MAX(kn, rel); rel = kn)
}

/* after a pop: knowledge below `pops` is raised to it (same meaning) */
inline normalize() {
    know[0] = MAX(know[0], pops); know[1] = MAX(know[1], pops);
    know[4] = MAX(know[4], pops); know[5] = MAX(know[5], pops);
#if W == 3
    know[6] = MAX(know[6], pops);
#endif
    normalize_model();
    rel = MAX(rel, pops); lrel = MAX(lrel, pops)
}

/* The submitter's locked instructions drain its store buffer (TSO); as with
 * the Memory process, the push is then visible but not yet fenced. */
inline drain_if_submitter() {
    if
    :: _pid == 0 && sb -> length++; sb = 0; G(uf = 1; lrel = pushes)
    :: else
    fi
}

/* ---- the injector ---------------------------------------------------------- */

/* find_work's injector pop (weft__injector_pop), or a miss; sets `got`.
 * Under C11 the relaxed is_empty check may read a stale 0 (nothing that
 * happens-before this step pushed a job still in the injector). */
inline pop_or_miss() {
    if
    :: length > 0 -> length--; got = 1; G(pops++; kn = MAX(kn, lrel); lrel = kn; normalize())
    :: length == 0
#ifndef TSO
    :: length > 0 && pops >= kn    /* the relaxed is_empty check read a stale 0 */
#endif
    fi
}

/* weft__injector_push: the lock is a locked RMW (drains our buffer); the
 * length store and the unlock go to the store buffer. Then the PushFence of
 * weft__sleep_new_injected_jobs, which drains it. */
inline injector_push() {
    atomic { if :: sb -> length++; G(uf = 1; lrel = pushes) :: else fi; sb = 1; pushes++; G(kn = pushes) }
#ifndef NO_PUSH_FENCE
    atomic { if :: sb -> length++; sb = 0; G(lrel = pushes) :: else fi; G(uf = 0) }
#endif
}

/* The final check (pool.c's final_check: the injectors; broadcasts are not
 * modelled), a relaxed load of `length`, after the SleepFence.
 * C11 (default): seq-cst fences are totally ordered; if the submitter's
 * PushFence came first, its push is visible here; if ours came first we may
 * miss it (and the submitter's read of the protocol's word sees us). In the
 * model a push stays in the store buffer until its PushFence, so a check
 * before that fence misses it; and one the Memory process flushed early (uf)
 * may be missed too while its fence has not run. Without the SleepFence
 * nothing orders this load but happens-before: like the searches, it may be
 * stale. TSO: the load reads memory; the sleeper's locked RMW before it
 * (targeted: the counting CAS; wake-all: the CAS to ASLEEP) orders it, so no
 * fence is needed for that (NO_SLEEP_FENCE changes nothing). */
inline fenced_check() {
#if defined(TSO)
    nonempty = (length > 0)
#else
    if
    :: nonempty = (length > 0)
    :: uf && length == 1 -> nonempty = 0
    fi
#endif
}

inline final_check() {
#if defined(NO_FINAL_CHECK)
    nonempty = 0
#elif defined(NO_SLEEP_FENCE) && !defined(TSO)
    if
    :: nonempty = (length > 0)
    :: pops >= kn -> nonempty = 0
    fi
#else
    fenced_check()
#endif
}

/* ---- jobs and the pending latch ------------------------------------------- */

/* A job (or a worker's own job that was waiting for a latch) ends: it counts
 * the pending latch down and the last one sets it (set_outside: swap SET,
 * futex-wake if SLEEPING) */
inline job_done() {
    atomic {
        pending--;
        if
        :: pending == 0 -> old = olatch; olatch = SET
        :: else
        fi
    }
    if
    :: old == SLEEPING -> ofutex_q = 0
    :: else
    fi;
    old = 0
}

/* weft_pool_destroy: drop our count of the pending latch (the last one sets
 * it), wait_outside on it, then stop_workers: set each terminate latch */
inline destroy() {
    atomic {
        pending--;
        if
        :: pending == 0 -> olatch = SET
        :: else
        fi
    }
    s = olatch;
    do
    :: s == SET -> break
    :: s == UNSET ->
        atomic { if :: olatch == UNSET -> olatch = SLEEPING; s = SLEEPING :: else -> s = olatch fi }
    :: s == SLEEPING ->
        atomic { if :: olatch == SLEEPING -> ofutex_q = 1 :: else fi };   /* futex_wait */
        ofutex_q == 0;
        s = olatch                         /* acquire load */
    od;
    assert(pending == 0 && length == 0 && sb == 0);

    i = 0;
    do
    :: i < W -> set_latch(i, i); i++
    :: else -> break
    od
}
