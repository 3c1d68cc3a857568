/* SPDX-License-Identifier: MIT */
/* Spare threads (src/core/spare.c): jobs that block call spares, which run
 * the pool's work until released, then park.
 *
 * Each of NJ jobs enters a blocking region ROUNDS times and, blocked, waits
 * for a piece of work that only a called spare can run (every worker thread
 * of the pool is taken: the blocked jobs' own, or busy for ever), so a block
 * left without a spare waits for ever: an invalid end state. Spare slots:
 * NS, threads created on the first need (seen, a prefix), never exiting
 * here (the idle exit only shortens the prefix of parked ones). The lock of
 * spare.c is an atomic block; the latch a release sets is `released`, read
 * by the spare between pieces of work; a spare's participating wait is the
 * loop that takes work until then.
 *
 * Checked: after every begin and end, called <= blocked, and a block left
 * uncompensated (called < blocked) has no spare to call (every started one
 * called or released, every slot started); every block is served; every
 * spare parks in the end. -DNO_RECALL: a released spare parks without
 * taking a call that a begin could not serve meanwhile (must be rejected:
 * a job waits for ever). */

#ifndef NJ
#define NJ 2
#endif
#ifndef NS
#define NS 1
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

mtype = { PARKED, CALLED, RELEASED };

mtype st[NS];
bool released[NS];
byte seen, blocked, called;
bool want[NJ], served[NJ];

inline check_counts() {
    assert(called <= blocked);
    if
    :: called < blocked ->
        byte k;
        assert(seen == NS);
        for (k : 0 .. NS - 1) { assert(st[k] != PARKED) }
    :: else
    fi
}

/* Under the lock: a spare for one more blocked job, if one is left. */
inline call_one() {
    byte i = 0;
    do
    :: i < seen && st[i] == PARKED -> st[i] = CALLED; released[i] = 0; called++; break
    :: i < seen && st[i] != PARKED -> i++
    :: i == seen && seen < NS -> st[seen] = CALLED; released[seen] = 0; called++;
                                 run Spare(seen); seen++; break
    :: i == seen && seen == NS -> break
    od
}

inline release_one() {
    byte r = seen;
    do
    :: r > 0 && st[r - 1] == CALLED -> st[r - 1] = RELEASED; called--; released[r - 1] = 1; break
    :: r > 0 && st[r - 1] != CALLED -> r--
    :: r == 0 -> assert(false) /* called > blocked >= 0: some spare is called */
    od
}

proctype Spare(byte me) {
    byte j;
work:
    do
    :: released[me] -> break
    :: else ->
        /* one piece of the pool's work: a blocked job's */
        atomic {
            j = 0;
            do
            :: j < NJ && want[j] -> want[j] = 0; served[j] = 1; break
            :: j < NJ && !want[j] -> j++
            :: j == NJ -> break
            od
        }
        (released[me] || want[0] || want[NJ / 2] || want[NJ - 1])
    od;
    atomic {
#ifndef NO_RECALL
        if
        :: called < blocked -> st[me] = CALLED; released[me] = 0; called++; goto work
        :: else
        fi;
#endif
        st[me] = PARKED
    }
end_parked:
    atomic { st[me] == CALLED -> skip };
    goto work
}

proctype Job(byte me) {
    byte round;
    for (round : 1 .. ROUNDS) {
        atomic { blocked++; if :: called < blocked -> call_one() :: else fi; check_counts() }
        atomic { want[me] = 1 };
        served[me];   /* blocked until a spare runs its work */
        served[me] = 0;
        atomic { blocked--; if :: called > blocked -> release_one() :: else fi; check_counts() }
    }
}

init {
    atomic {
        byte j;
        for (j : 0 .. NJ - 1) { run Job(j) }
    }
}
