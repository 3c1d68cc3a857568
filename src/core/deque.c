/* SPDX-License-Identifier: MIT */
/* The work-stealing deque: a split deque whose private jobs a starving thief
 * can still take.
 *
 * Overview. Jobs occupy indices [top, bottom) of a growable circular buffer.
 * A split point divides them: [top, split) is public, thieves take its oldest
 * job; [split, bottom) is private to the owner, who pushes and pops at the
 * bottom with plain loads and stores, no fence and no read-modify-write. The
 * owner moves jobs from private to public ("shares") when someone could take
 * them: when a worker is idle (weft__worker_push), when a thief found nothing
 * public and raised `movesplit` (next push or pop), and before waking a
 * sleeper. When the private part is empty, pop takes back half of the public
 * part with one CAS. This is the idea of Lace's split deque (van Dijk and van
 * de Pol, "Lace: non-blocking split deque for work-stealing", 2014): a
 * work-first join pays for synchronisation only when work moves between
 * threads. (Chase-Lev, which it replaced, needs a seq-cst fence on every
 * pop, a full barrier on the owner's fast path; docs/performance.md has
 * what each cost.)
 *
 * A split deque alone can strand work: an owner that pushed jobs and then
 * runs one long job answers no request until it returns, while thieves idle.
 * So a thief whose request stays unanswered for a whole search may take the
 * oldest private job itself (weft__deque_steal_private): it claims index
 * split by a CAS of ts that moves top and split past it, as Chase-Lev's
 * thieves claim top. The owner's pop pays nothing for this on its fast path,
 * because the thief pays a process-wide barrier instead (fence.h):
 *
 *   owner pop:  bottom = b (relaxed); light fence; read ts
 *   thief:      read ts (top == split == s); heavy fence; read bottom;
 *               take s only if bottom > s, by CAS of ts from (s, s)
 *
 * The heavy fence lands in the owner's program before its store of bottom,
 * and then the thief reads the lowered bottom, or after it, and then the
 * owner's read of ts sees at least the thief's (s, s). So if both go for
 * index s, the owner sees b == split and top == split and takes s only by
 * the same CAS; one of the two CASes wins. An owner that reads top < split
 * while popping index split takes it without CAS: no thief can claim it,
 * since top never decreases and a thief that read (s, s) before its fence
 * would make the owner read it too. Pops above split (another private job
 * between) are plain: thieves claim only index split, one at a time, each
 * after seeing a bottom above it.
 *
 * The episode. A sleeper must not sleep on a private job that nobody will
 * share. A private part's episode begins with the push that finds it empty
 * (as far as the owner knows: its split is a lower bound of ts's). That push
 * is followed by a seq-cst fence before the pusher reads the sleep counters
 * and movesplit (weft__worker_push_first); a worker going to sleep counts
 * itself and makes its SleepFence before its final check reads every deque's
 * ts and bottom. Either the pusher sees the sleeper (and shares and wakes
 * it, unless it also sees a searcher) or the sleeper sees bottom above split
 * (and does not sleep, and takes the job by force if its owner still does
 * not answer). A searcher the pusher saw ends the same way when it sleeps,
 * or, leaving for other work as the last searcher while someone sleeps, makes
 * a fence, sees the job and wakes a sleeper (weft__idle_left_behind). Later
 * pushes of the episode need no fence: bottom stays above split for the
 * whole episode, whichever of its stores a reader sees.
 *
 * Forced steals can end an episode without the owner knowing, so its next
 * push, which it takes for a later one, goes unfenced. That push is not
 * lost: the thief raised movesplit before its barrier and checks it is
 * still raised after. If the owner's read of movesplit in that push comes
 * after the barrier, it sees the request and shares; if before, the push's
 * store of bottom, earlier in its program, comes before the barrier too, and
 * the thief sees it: it knows private jobs remain (`more`) and hands them to
 * a sleeper as any thief that leaves work behind does.
 *
 * The owner counts the requests it clears (`answers`): a thief whose forced
 * steal found nothing relies on its request only until some owner answers
 * one (private_work.c, weft__private_check).
 *
 * verify/deque.pml checks all of this under x86-TSO with SPIN: every job
 * taken once, and no thief asleep while an owner that stopped for good holds
 * a job; without the heavy fence, the owner's CAS for its last private job,
 * the episode's fence, the sleepers' look at private jobs, or a reclaim's
 * lowering of bottom first, it finds the counterexample.
 *
 * Invariants:
 *  1. top <= split <= bottom (as distances; indices are 32-bit and wrap),
 *     except while an owner's pop has lowered bottom by one below split.
 *  2. top and split live in one 64-bit word, ts. Public thieves advance top
 *     only by a CAS that requires top < split; a forced thief moves top and
 *     split from (s, s) to (s + 1, s + 1); the owner moves split by CAS. So a
 *     CAS made with an old ts fails, and no job is handed out twice.
 *  3. Slot i is written only by the owner, before index i is made public or
 *     bottom passes it (release), and rewritten (as index i + capacity) only
 *     after top passed i, which the owner learns through an acquire load of
 *     ts (top_seen).
 *  4. Top never decreases. Whenever a public thief may CAS, split > top: the
 *     owner never lowers split to top (it takes the last public job by
 *     advancing top instead). So index top stays public, and its slot
 *     unchanged, for as long as ts shows it at the top, even if ts returns
 *     to an earlier value (ABA): a thief whose CAS succeeds with an old ts
 *     took the job it read. A forced thief's (s, s) cannot recur either once
 *     changed: every change from it moves top.
 *  5. The owner lowers bottom (a reclaim) before the CAS that makes jobs
 *     private again, so a forced thief that sees the new split sees the new
 *     bottom.
 *
 * Memory orders: a job's contents and its slot are published by the release
 * CAS that moves split past it, or to a forced thief by the release store of
 * bottom above it, and read by a thief after its acquire load of ts or
 * bottom. A thief reads the slot before its CAS claims it (the CAS then
 * proves the slot was not reused, invariants 3 and 4), as in Chase-Lev.
 */
#include <stdlib.h>

#include "core/deque.h"

static uint64_t ts_pack(uint32_t top, uint32_t split) {
    return ((uint64_t)split << 32) | top;
}

static weft__deque_buf *buf_new(uint32_t capacity) {
    weft__deque_buf *b = malloc(sizeof *b + (size_t)capacity * sizeof(_Atomic(weft__job *)));
    if (!b)
        return NULL;
    b->mask = capacity - 1;
    b->retired = NULL;
    return b;
}

int weft__deque_init(weft__deque *d, size_t capacity) {
    uint32_t cap = 16;
    while (cap < capacity && cap < (1u << 30))
        cap *= 2;
    weft__deque_buf *b = buf_new(cap);
    if (!b)
        return ENOMEM;
    atomic_init(&d->ts, 0);
    atomic_init(&d->movesplit, 0);
    atomic_init(&d->answers, 0);
    atomic_init(&d->buf, b);
    atomic_init(&d->bottom, 0);
    d->split = d->top_seen = d->unannounced = 0;
    d->obuf = b;
    return 0;
}

void weft__deque_destroy(weft__deque *d) {
    weft__deque_buf *b = d->obuf;
    while (b) {
        weft__deque_buf *older = b->retired;
        free(b);
        b = older;
    }
}

/* Copy the live window [top_seen, bottom) into a buffer twice as large. Old
 * buffers are kept until the deque is destroyed: a thief may still read a
 * slot of one (at most doubling memory). */
static weft__deque_buf *grow(weft__deque *d) {
    weft__deque_buf *old = d->obuf;
    if (old->mask >= (1u << 30) - 1)
        return NULL;
    weft__deque_buf *nb = buf_new((old->mask + 1) * 2);
    if (!nb)
        return NULL;
    for (uint32_t i = d->top_seen, b = weft__deque_bottom(d); i != b; i++) {
        /* Relaxed: only the owner writes slots. */
        weft__job *j = atomic_load_explicit(&old->slot[i & old->mask], memory_order_relaxed);
        atomic_store_explicit(&nb->slot[i & nb->mask], j, memory_order_relaxed);
    }
    nb->retired = old;
    weft__debug_yield();
    /* Release: a thief that loads the new buffer (acquire) sees its slots. */
    atomic_store_explicit(&d->buf, nb, memory_order_release);
    d->obuf = nb;
    return nb;
}

int weft__deque_push_cold(weft__deque *d, weft__job *job) {
    weft__debug_yield();
    /* Acquire: pairs with the thieves' CAS of ts, so the slots they claimed
     * were read before we reuse them (invariant 3). */
    d->top_seen = weft__deque_top(atomic_load_explicit(&d->ts, memory_order_acquire));
    if (weft__deque_bottom(d) - d->top_seen > d->obuf->mask && !grow(d))
        return ENOMEM;
    return weft__deque_push(d, job);
}

/* Make [split, new_split) public (owner); returns how many jobs that was.
 * Forced thieves may move split meanwhile (never past new_split, which is at
 * most bottom): the CAS retries with what they left. Release: publishes the
 * slots (and the jobs they point to) below new_split to thieves' acquire
 * loads of ts. Seq-cst: the pusher's counter read comes next
 * (weft__worker_offer), and with this CAS it is the PushFence a leaving
 * searcher's fence pairs with (idle.h). */
static unsigned move_split(weft__deque *d, uint32_t new_split) {
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    weft__debug_yield();
    while (!atomic_compare_exchange_weak_explicit(&d->ts, &ts,
                                                  ts_pack(weft__deque_top(ts), new_split),
                                                  memory_order_seq_cst, memory_order_relaxed)) {
        weft__debug_yield();
    }
    d->split = new_split;
    d->top_seen = weft__deque_top(ts);
    int32_t n = weft__deque_span(weft__deque_split(ts), new_split);
    return n > 0 ? (unsigned)n : 0;
}

/* Owner: answer the thieves' request, if one is raised, and count it.
 * Relaxed movesplit: a hint; cleared before the share or pop that answers
 * it, so a request that arrives meanwhile is kept. The count is stored
 * before that share or pop, so it orders nothing the answer does; what
 * makes a reader see it is the fence pair a spent sweep relies on anyway:
 * the reader's SleepFence before its read (private_work.c, weft__private_check) against
 * the owner's episode fence before it keeps a later job private
 * (verify/deque.pml, which reads the count with the deque in one step).
 * Release: costs nothing on the owner's cold path and keeps the reader's
 * acquire honest on weaker machines than the model's TSO. */
static void answer(weft__deque *d) {
    if (!atomic_load_explicit(&d->movesplit, memory_order_relaxed))
        return;
    atomic_store_explicit(&d->movesplit, 0, memory_order_relaxed);
    weft__deque_count_answer(d);
}

void weft__deque_count_answer(weft__deque *d) {
    uint32_t n = atomic_load_explicit(&d->answers, memory_order_relaxed); /* only we store it */
    atomic_store_explicit(&d->answers, n + 1, memory_order_release);
}

unsigned weft__deque_share(weft__deque *d) {
    answer(d);
    weft__debug_yield();
    /* Relaxed: a hint; move_split's CAS decides. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_relaxed);
    uint32_t b = weft__deque_bottom(d);
    if (weft__deque_span(weft__deque_split(ts), b) > 0)
        return move_split(d, b);
    d->split = weft__deque_split(ts);
    return 0;
}

/* Private part empty (bottom == split): take back the newer half of the
 * public part, or the last public job from the top (invariant 4), or find
 * that thieves took all. */
static weft__job *reclaim(weft__deque *d) {
    /* Acquire: pairs with thieves' CAS (top_seen, invariant 3). */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_acquire);
    for (;;) {
        uint32_t t = weft__deque_top(ts), s = weft__deque_split(ts), n = s - t;
        d->top_seen = t;
        d->split = s;
        if (n == 0)
            return NULL; /* all stolen: bottom == split == top */
        if (n >= 2) {
            /* Relaxed, before the CAS that releases it (invariant 5): index
             * s - 1 is ours, [t + n / 2, s - 1) private once the CAS lands. */
            atomic_store_explicit(&d->bottom, s - 1, memory_order_relaxed);
        }
        uint64_t want = n == 1 ? ts_pack(t + 1, s) : ts_pack(t, t + n / 2);
        weft__debug_yield();
        /* Acq_rel: ordered with the thieves' CAS on the same word; failure
         * means a thief moved top, and we look again. */
        if (atomic_compare_exchange_weak_explicit(&d->ts, &ts, want, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            if (n == 1)
                d->top_seen = s; /* taken from the top, as a thief would */
            else
                d->split = t + n / 2;
            weft__debug_yield();
            return atomic_load_explicit(&d->obuf->slot[(s - 1) & d->obuf->mask],
                                        memory_order_relaxed);
        }
        if (n >= 2) /* Relaxed: still all public; nothing private to show. */
            atomic_store_explicit(&d->bottom, s, memory_order_relaxed);
    }
}

/* The pop's cold path: bottom is already lowered to b (the index to take),
 * and ts read after it. */
weft__job *weft__deque_pop_cold(weft__deque *d, uint32_t b, uint64_t ts) {
    uint32_t t = weft__deque_top(ts), s = weft__deque_split(ts);
    weft__deque_buf *buf = d->obuf;
    int32_t above = weft__deque_span(s, b);
    d->split = s;
    if (above < 0) {
        /* Private part empty (forced thieves never claim at or above the
         * bottom they saw, so s == b + 1): restore bottom, look at the
         * public part. Relaxed: bottom == split shows nothing private. */
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        return reclaim(d);
    }
    /* Answer the request, with the jobs shared below or with nothing if
     * this is the last private one. */
    answer(d);
    weft__debug_yield();
    if (above > 0) {
        /* A thief asked for work: share all below the job we take now, and
         * leave the count for the caller to announce (the thief may be
         * asleep by now). */
        d->unannounced += move_split(d, b);
    } else if (t == s) {
        /* The last private job, nothing public: a forced thief may be
         * claiming it too (see the top). The same CAS decides. Acq_rel:
         * ordered with the thieves' CAS. */
        if (!atomic_compare_exchange_strong_explicit(&d->ts, &ts, ts_pack(s + 1, s + 1),
                                                     memory_order_acq_rel, memory_order_relaxed)) {
            /* A thief took it: ts is (s + 1, s + 1). Relaxed: empty. */
            atomic_store_explicit(&d->bottom, s + 1, memory_order_relaxed);
            d->split = d->top_seen = s + 1;
            return NULL;
        }
        /* Relaxed: index s is consumed as if from the top; empty now. */
        atomic_store_explicit(&d->bottom, s + 1, memory_order_relaxed);
        d->split = d->top_seen = s + 1;
    }
    /* else: the last private job above public ones; no thief can claim it. */
    weft__debug_yield();
    return atomic_load_explicit(&buf->slot[b & buf->mask], memory_order_relaxed);
}

weft__steal_result weft__deque_steal(weft__deque *d, weft__job **job) {
    /* Acquire: pairs with the owner's release CAS that published the job. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_acquire);
    uint32_t t = weft__deque_top(ts), s = weft__deque_split(ts);
    weft__debug_yield();
    if (t == s) {
        /* Relaxed: a request, not a promise; checked before written so the
         * line stays shared while thieves keep asking. */
        if (!atomic_load_explicit(&d->movesplit, memory_order_relaxed))
            atomic_store_explicit(&d->movesplit, 1, memory_order_relaxed);
        return WEFT__STEAL_EMPTY;
    }
    weft__debug_yield();
    /* Acquire: pairs with the release store of a grown buffer. */
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_acquire);
    weft__job *j = atomic_load_explicit(&buf->slot[t & buf->mask], memory_order_relaxed);
    weft__debug_yield();
    /* Acq_rel: claims index t; release lets the owner's acquire loads of ts
     * know we are done with the slot (invariant 3). Failure: another thief or
     * the owner changed ts, and what we read may be stale. */
    if (!atomic_compare_exchange_strong_explicit(&d->ts, &ts, ts_pack(t + 1, s),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    weft__debug_yield();
    *job = j;
    return WEFT__STEAL_OK;
}

/* bottom, for a thief. Acquire: pairs with the push's release store, so the
 * slots below it and their jobs are visible. */
static uint32_t thief_bottom(weft__deque *d) {
    return atomic_load_explicit(&d->bottom, memory_order_acquire);
}

weft__steal_result weft__deque_steal_private(weft__deque *d, weft__job **job, bool *more) {
    if (!weft__fence_heavy_available())
        return WEFT__STEAL_EMPTY; /* no barrier, no forced steal (fence.h) */
    /* Acquire: as in weft__deque_steal. */
    uint64_t ts = atomic_load_explicit(&d->ts, memory_order_acquire);
    uint32_t s = weft__deque_split(ts);
    if (weft__deque_top(ts) != s)
        return WEFT__STEAL_RETRY; /* public jobs: a plain steal */
    if (weft__deque_span(s, thief_bottom(d)) <= 0)
        return WEFT__STEAL_EMPTY;
    weft__debug_yield();
    weft__fence_heavy(); /* against the owner's pop and push (see the top) */
    weft__debug_yield();
    /* Relaxed: the owner answered our request since (shared, or popped its
     * last private job): what it shared is announced, and a plain steal
     * finds it. A race lost: the caller may force again (worker.c). */
    if (!atomic_load_explicit(&d->movesplit, memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    uint32_t b = thief_bottom(d);
    if (weft__deque_span(s, b) <= 0)
        return WEFT__STEAL_EMPTY;
    /* Acquire: pairs with the release store of a grown buffer. */
    weft__deque_buf *buf = atomic_load_explicit(&d->buf, memory_order_acquire);
    weft__job *j = atomic_load_explicit(&buf->slot[s & buf->mask], memory_order_relaxed);
    weft__debug_yield();
    /* Acq_rel: claims index s against the owner's last-job CAS and other
     * thieves (invariant 2). */
    if (!atomic_compare_exchange_strong_explicit(&d->ts, &ts, ts_pack(s + 1, s + 1),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return WEFT__STEAL_RETRY;
    *job = j;
    *more = weft__deque_span(s + 1, b) > 0; /* as the barrier showed them (see the top) */
    return WEFT__STEAL_OK;
}
