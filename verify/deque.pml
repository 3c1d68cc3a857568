/* SPDX-License-Identifier: MIT */
/* The split deque's forced steal and its episode fence (src/core/deque.c), under
 * x86-TSO: the owner's stores of bottom wait in its store buffer, its loads
 * may pass them; a locked instruction (CAS) or a fence drains the buffer
 * first. The heavy fence (membarrier) drains the owner's buffer at the moment
 * it runs: the IPI makes the owner execute a full barrier between two of its
 * instructions. ts (top and split) changes only by CAS, so it is never
 * buffered.
 *
 * One owner, NT thieves. The owner pushes NJOBS jobs, popping now and then
 * (its plain fast path, its CAS for the last private job, its reclaim of
 * public jobs) and sharing when a thief asked, or when one sleeps and none
 * searches (weft__sleep_wants_work); at a nondeterministic point after its
 * last push it stops for good, as a job that runs for ever without calling
 * weft. A thief runs worker.c's search: a sweep steals a public job or asks
 * (movesplit); before sleeping it counts itself, fences and looks (the final
 * check: public jobs; the private check: private ones, once per sleep), and
 * a sweep after a private check may take the oldest private job by force. A
 * thief that takes a job stops searching, and if it was the last searcher
 * while one sleeps it looks at the deque (weft__idle_left_behind: public and
 * private jobs) and wakes a sleeper if it sees work; then it searches on or
 * runs the job for ever. The checks:
 *   - every job is taken exactly once (assert);
 *   - no thief sleeps for ever while a job is left that no running thread
 *     will take: SPIN reports that as an invalid end state.
 * Indices stay below NJOBS + 1, so no wrap-around or growth is modelled (the
 * torture in tests/test_deque.c covers both).
 */

#ifndef NJOBS
#define NJOBS 3
#endif
#ifndef NT
#define NT 2
#endif

byte top = 0, split = 0; /* ts */
byte bottom = 0;         /* memory's value */
bit sbb = 0;             /* the owner's store buffer holds a store of bottom */
byte sbv = 0;            /* ...of this value */
byte slot[NJOBS + 1];    /* job ids; written before bottom passes them */
bit movesplit = 0;
bit answered[NT + 1];    /* the owner cleared a raised request since the
                            thief's last private check (deque.c's answer
                            count: it ends a spent forced sweep) */
byte sleepers = 0;       /* thieves counted asleep (the sleep counters) */
byte searching = NT;     /* thieves inactive and not asleep (same word) */
bit wake = 0;            /* a share posted jobs while someone slept */
byte taken[NJOBS];       /* how often each job was taken */
byte ntaken = 0;

/* The owner clears a request: a raised one counts as an answer. */
#ifndef NO_ANSWER_COUNT
#define ANSWER if :: movesplit -> answered[1] = 1; answered[NT] = 1 :: else fi; movesplit = 0
#else
#define ANSWER movesplit = 0
#endif

/* the owner's buffered store of bottom, and its drain */
inline store_bottom(v) {
    atomic { if :: sbb -> bottom = sbv :: else fi; sbb = 1; sbv = v }
}
inline drain() {
    atomic { if :: sbb -> bottom = sbv; sbb = 0 :: else fi }
}

inline take(j) {
    assert(taken[j] == 0); taken[j]++; ntaken++
}

/* weft__deque_share (its CAS drains the buffer, clears the request and
 * moves split to bottom), then weft__worker_offer's post: new_jobs wakes a
 * sleeper if its read of the counters, after the CAS, sees one and nobody
 * searching (it wakes one beside searchers only for several jobs posted on
 * an empty queue; the model takes the fewer wake-ups). */
inline share(upto) {
    drain();
    atomic {
        ANSWER;
        if
        :: upto > split -> split = upto; if :: sleepers > 0 && searching == 0 -> wake = 1 :: else fi
        :: else
        fi
    };
    ls = upto
}

/* weft__sleep_wants_work: a sleeper and no searcher (one atomic read of the
 * counters), or a request. */
#define WANTED ((sleepers > 0 && searching == 0) || movesplit)

/* The private part is empty (b == split): take back the newer half of the
 * public part, or its last job, or find that thieves took all. With n >= 2
 * bottom is lowered first (invariant 5; NO_LOWER_FIRST lowers it after). */
inline reclaim() {
    do
    :: atomic { t = top; s = split };
        if
        :: t == s -> break
        :: s - t == 1 ->
            drain();
            atomic {
                if
                :: top == t && split == s -> top = t + 1; take(slot[t])
                :: else
                fi
            };
            if :: top != t -> break :: else fi
        :: s - t >= 2 ->
            j = slot[s - 1];
#ifndef NO_LOWER_FIRST
            store_bottom(s - 1);
#endif
            drain();           /* the CAS is locked */
            atomic {
                if
                :: top == t && split == s -> split = t + (s - t) / 2; ls = split; take(j); got = 1
                :: else -> got = 0
                fi
            };
            if
            :: got ->
#ifdef NO_LOWER_FIRST
                store_bottom(s - 1);
#endif
                b = s - 1; break
#ifndef NO_LOWER_FIRST
            :: else -> store_bottom(s)
#else
            :: else
#endif
            fi
        fi
    od
}

proctype Owner() {
    byte b = 0, t, s, k = 0, j;
    byte ls = 0;               /* its split: a lower bound of ts's */
    bit got;
    do
    :: k < NJOBS ->            /* push */
        slot[b] = k;
        store_bottom(b + 1);
        b++; k++;
        if
        :: b - 1 == ls ->      /* the first private job as far as the owner
                                  knows: weft__worker_push_first */
            atomic { t = top; s = split };
            ls = s;
            if
            :: t == s || WANTED -> share(b)
            :: else ->         /* the job stays private: an episode begins */
#ifndef NO_EPISODE_FENCE
                drain();       /* the episode's fence */
#endif
                if
                :: WANTED -> share(b)
                :: else
                fi
            fi
        :: else ->             /* loads that may pass the store of bottom */
            if
            :: WANTED -> share(b)
            :: else
            fi
        fi
    :: b > 0 ->                /* pop */
        b--;
        store_bottom(b);
        atomic { t = top; s = split };   /* after the light fence: no drain */
        if
        :: b > s && !movesplit -> atomic { take(slot[b]) }
        :: b > s && movesplit -> share(b); atomic { take(slot[b]) }
        :: b == s && t < s -> atomic { ANSWER }; ls = s; atomic { take(slot[b]) }
        :: b == s && t == s ->
#ifdef NO_OWNER_CAS
            atomic { take(slot[b]) };
#else
            drain();           /* the CAS is locked */
            atomic {
                if
                :: top == s && split == s -> top = s + 1; split = s + 1; ANSWER; take(slot[b])
                :: else        /* a thief took it */
                fi
            };
#endif
            b = s + 1;
            ls = b;
            store_bottom(b)
        :: b < s ->            /* private part empty: restore, then reclaim */
            b = s;
            ls = s;
            store_bottom(b);
            reclaim()
        fi
    :: k == NJOBS -> break     /* its last job runs for ever */
    od
}

/* After taking a job (weft__sleep_work_found): leave the searchers; the
 * last one while someone sleeps hands over if its steal saw more (`more`)
 * or, after its fence, its look sees jobs on the deque, public or private
 * (NO_PRIVATE_HANDOVER: public only, as before pushes kept jobs private
 * beside searchers). Then search on, or run the job for ever. */
#ifndef NO_PRIVATE_HANDOVER
#define LEFT_PRIVATE (bottom > split)
#else
#define LEFT_PRIVATE 0
#endif
inline found(more) {
    atomic { searching--; last = searching == 0 && sleepers > 0 };
    if
    :: last ->
        atomic {
            if
            :: more || top < split || LEFT_PRIVATE -> wake = 1
            :: else
            fi
        }
    :: else
    fi;
    if
    :: atomic { searching++ }
    :: break
    fi
}

/* A thief's search, as worker.c runs it: a sweep takes a public job or asks
 * (movesplit); it takes a private one by force only in the sweep after a
 * final check that saw private jobs (force), and after one such sweep that
 * found nothing it sleeps even if private jobs remain in view (tried): its
 * request, raised before the barrier, makes the owner's next push or pop
 * share and wake it, and an owner that never runs again has lost those jobs
 * to the forced steal of this or another thief. */
proctype Thief(byte me) {
    byte t, s, j, bb;
    bit more, force = 0, tried = 0, last, got;
    do
    :: ntaken == NJOBS -> break
    :: else ->
        atomic { t = top; s = split };
        if
        :: t < s ->            /* a public steal: read the slot, then CAS */
            j = slot[t];
            atomic {
                if
                :: top == t && split == s -> top = t + 1; take(j); more = top < split; tried = 0; got = 1
                :: else -> got = 0
                fi
            };
            if :: got -> found(more) :: else fi
        :: t == s && force ->  /* private jobs left unanswered: force */
            force = 0;
            movesplit = 1;
#ifndef NO_HEAVY
            drain();           /* weft__fence_heavy: lands between two owner steps */
#endif
            bb = bottom;
            if
            :: movesplit && bb > s ->
                j = slot[s];
                atomic {
                    if
                    :: top == s && split == s -> top = s + 1; split = s + 1; take(j); more = 1; tried = 0
                    :: else -> more = 0
                    fi
                };
                if
                :: more -> more = bb > s + 1; found(more)
#ifndef SPENT_ON_ANSWER
                :: !more -> tried = 0 /* lost the CAS: ts moved, so look again */
#else
                :: else
#endif
                fi
#ifndef SPENT_ON_ANSWER
            :: !movesplit -> tried = 0 /* the owner answered: the sweep is not spent */
            :: movesplit && bb <= s
#else
            :: else
#endif
            fi
        :: t == s && !force ->
            movesplit = 1;     /* ask */
            atomic { sleepers++; searching-- };   /* the counting CAS, then the SleepFence */
            if
            :: top < split ->  /* the final check (a post): search again */
                atomic { sleepers--; searching++ }
#ifndef NO_PRIVATE_CHECK
            :: top == split && bottom > split && (!tried || answered[me]) ->
                /* the private check: a spent sweep counts until the owner answers */
                atomic { sleepers--; searching++; answered[me] = 0 };
                force = 1;
                tried = 1
#endif
            :: else ->         /* sleep until a post wakes us, or all is done */
                atomic { wake == 1 || ntaken == NJOBS -> wake = 0; sleepers--; searching++ };
                tried = 0
            fi
        fi
    od
}

init {
    atomic {
        run Owner();
        run Thief(1);
#if NT >= 2
        run Thief(2);
#endif
    }
}
