/* SPDX-License-Identifier: MIT */
/* The leave policy alone (src/idle/leave.c): its decisions from the inputs it is
 * given, with no pool, no sleep module and no clock but the times passed in.
 * Each test walks one row of the decision table at the top of leave.c. */
#include <stdatomic.h>
#include <time.h>

#include "check.h"
#include "idle/leave.h"

#define US 1000u
#define T0 ((uint64_t)1000000000u) /* a time well after 0 (0 means "none") */

/* A policy of `threads` workers on `cpus` CPUs, whose worker has measured a
 * wake-up of 20 us and timed wake-ups that run 2 us late. */
typedef struct policy {
    weft__leave_pool lp;
    weft__leave lv;
    weft__phase phase;
} policy;

static void make(policy *p, unsigned threads, unsigned cpus, bool fast) {
    weft__leave_pool_init(&p->lp, threads, cpus, fast);
    weft__leave_init(&p->lv);
    weft__phase_init(&p->phase);
    p->lv.wake_ns = 20 * US;
    p->lv.late_ns = 2 * US;
}

/* The verdict for a worker that began its search at T0, at T0 + us. */
static weft__leave_verdict decide_at(policy *p, double us, uint64_t *wake_at) {
    weft__leave_now in = {.now = T0 + (uint64_t)(us * US), .search_ns = T0, .phase = &p->phase};
    uint64_t at;
    bool sampled;
    weft__leave_verdict v =
        weft__leave_decide(&p->lp, &p->lv, &in, wake_at ? wake_at : &at, &sampled);
    CHECK(v == WEFT__LEAVE_SEARCH || v == WEFT__LEAVE_SLEEP);
    return v;
}

static bool searches(policy *p, double us) {
    return decide_at(p, us, NULL) == WEFT__LEAVE_SEARCH;
}

/* A sleep that a waker ended after `latency` ns, and whose CPU was measured. */
static void sleep_cost(policy *p, uint64_t latency, uint64_t cpu) {
    weft__leave_wake w = {.now = T0 + latency, .woken_ns = T0, .cpu_ns = cpu};
    weft__leave_woke(&p->lv, &w);
}

/* Rows 1-3: a phase searches for its bound since the last work, a fast leave
 * after it sleeps at once, WEFT_LEAVE_FAST always sleeps. */
TEST(phases_and_fast_come_first) {
    policy p;
    make(&p, 8, 2, true); /* WEFT_LEAVE_FAST */
    CHECK(!searches(&p, 1));
    atomic_store(&p.phase.active, 1);
    CHECK(searches(&p, 5000));                            /* for its bound */
    CHECK(!searches(&p, WEFT__PHASE_RETAIN_NS / US + 1)); /* past its bound */
    atomic_store(&p.phase.active, 0);
    atomic_store(&p.phase.fast_once, 1);
    make(&p, 8, 2, false);
    atomic_store(&p.phase.fast_once, 1);
    CHECK(!searches(&p, 1));
    weft__phase_new_work(&p.phase); /* new work ends the one-time fast leave */
    CHECK(searches(&p, 1));
}

/* Rows 6-7, the ski rental: search for up to the budget, unless searching
 * lost more than it saved. */
TEST(search_for_the_budget) {
    policy p;
    make(&p, 8, 2, false);
    CHECK(searches(&p, 15));     /* unmeasured: the wake-up's latency, 20 us */
    CHECK(!searches(&p, 25));    /* spent */
    for (int i = 0; i < 16; i++) /* idle periods that outlast the budget */
        weft__leave_found(&p.lp, &p.lv, 100 * US);
    CHECK(!searches(&p, 1));
    for (int i = 0; i < 16; i++) /* and ones that end within it */
        weft__leave_found(&p.lp, &p.lv, 5 * US);
    CHECK(searches(&p, 1));
}

/* Rule 6 weighs what searching saved, not how often it found work: idle
 * periods that end late within the budget save little, and a few that outlast
 * it cost more than they saved, although most periods were hits. */
TEST(late_hits_do_not_pay_for_misses) {
    policy p;
    make(&p, 8, 2, false);       /* budget: the wake-up's 20 us */
    for (int i = 0; i < 64; i++) /* three hits in five, each after 18 us */
        weft__leave_found(&p.lp, &p.lv, i % 5 < 3 ? 18 * US : 100 * US);
    CHECK(!searches(&p, 1));
    for (int i = 0; i < 64; i++) /* the same, found at once */
        weft__leave_found(&p.lp, &p.lv, i % 5 < 3 ? 0 : 100 * US);
    CHECK(searches(&p, 1));
}

/* The budget is the CPU a sleep/wake round trip costs, once measured: the
 * sleeper's share and its wakers', each a running median, which ignores the
 * tails (an interrupt charged to a thread in the kernel) a mean would follow. */
TEST(budget_is_the_cpu_cost_of_a_sleep) {
    policy p;
    make(&p, 8, 2, false);
    for (int i = 0; i < 128; i++) { /* one sample in four hit by an interrupt */
        sleep_cost(&p, 20 * US, i % 4 ? 4 * US : 150 * US);
        weft__leave_wake_call(&p.lp, i % 4 ? 4 * US : 150 * US);
    }
    CHECK(searches(&p, 5));
    CHECK(!searches(&p, 15)); /* a mean would be about 75 us */
    /* An outside waiter polls for the sleeper's share alone (latch.c); a
     * context past its first poll for a wake-up's latency too (context.c). */
    CHECK(weft__leave_block_cpu_ns() >= 3 * US && weft__leave_block_cpu_ns() <= 5 * US);
    CHECK_EQ(weft__leave_wake_latency_ns(), p.lv.wake_ns);
}

/* One sleep in eight has its CPU measured, the first one included. */
TEST(sleeps_are_sampled) {
    policy p;
    make(&p, 8, 2, false);
    p.lv.gain_ns = -1; /* sleep at once */
    int sampled = 0;
    for (int i = 0; i < 64; i++) {
        weft__leave_now in = {.now = T0, .search_ns = T0, .phase = &p.phase};
        uint64_t at;
        bool s;
        CHECK(weft__leave_decide(&p.lp, &p.lv, &in, &at, &s) == WEFT__LEAVE_SLEEP);
        CHECK(i != 0 || s);
        sampled += s;
    }
    CHECK_EQ(sampled, 8);
}

/* The pool saw quiet periods of gap +- dev ns between busy periods that
 * engaged `width` workers each, and went quiet at T0. */
static void rhythm(policy *p, uint64_t gap, uint64_t dev, unsigned width) {
    atomic_store(&p->lp.rhythm.width, width * WEFT__RHYTHM_ONE);
    atomic_store(&p->lp.rhythm.gaps, 4);
    atomic_store(&p->lp.rhythm.gap_ns, gap);
    atomic_store(&p->lp.rhythm.gap_dev_ns, dev);
    atomic_store(&p->lp.rhythm.quiet_ns, T0);
}

/* Row 4: a regular rhythm of busy periods wider than one worker is followed:
 * a worker sleeps until just before the window (early by twice its
 * lateness), searches through the window, and forgets it once the pool is
 * busy again. */
TEST(pool_work_due_is_searched_for) {
    policy p;
    make(&p, 2, 2, false);
    p.lv.gain_ns = -1; /* its own history says: sleep at once */
    uint64_t at;
    CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP && at == 0); /* nothing learnt */
    rhythm(&p, 200 * US, 5 * US, 2);
    CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + 200 * US - 5 * US - 2 * 2 * US);
    CHECK(searches(&p, 195));  /* in the window */
    CHECK(!searches(&p, 50));  /* long before it */
    CHECK(!searches(&p, 400)); /* long after it */
    weft__leave_found(&p.lp, &p.lv, 0);
    p.lv.gain_ns = -1; /* the find taught its gain; still: sleep at once */
    CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP && at == 0);
    CHECK(!searches(&p, 195));
}

/* A worker whose wake-ups wait long for a CPU (seven workers on the one CPU
 * a caller leaves free: a wake-up's measured latency is mostly the wait
 * behind the sibling that runs the jobs) still sleeps until twice its own
 * lateness before the window, not a wake-up before it: searching early would
 * hold that CPU for the whole wake-up and not shorten the wait. */
TEST(a_slow_wake_up_does_not_make_the_search_start_early) {
    policy p;
    make(&p, 8, 2, false);
    p.lv.gain_ns = -1;
    p.lv.wake_ns = 150 * US;
    rhythm(&p, 200 * US, 1 * US, 2);
    uint64_t at;
    CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + 200 * US - 1 * US - 2 * 2 * US);
    CHECK(!searches(&p, 50)); /* a wake-up before the window: still asleep */
    CHECK(!searches(&p, 190));
    CHECK(searches(&p, 196)); /* twice its lateness before the window */
    CHECK(searches(&p, 300)); /* late by up to a wake-up: still searched for */
}

/* A sleeper its deadline woke learns how late it came (the next deadline
 * is set that much earlier: due_from); one a waker woke learns nothing of
 * it. */
TEST(a_timed_wake_learns_its_lateness) {
    policy p;
    make(&p, 8, 2, false);
    uint64_t before = p.lv.late_ns; /* a prior of a few microseconds */
    CHECK(before < 10 * US);
    weft__leave_wake w = {.now = T0 + 10 * US, .deadline = T0, .woken_ns = T0 + 5 * US};
    weft__leave_woke(&p.lv, &w);
    CHECK_EQ(p.lv.late_ns, before);
    w.woken_ns = 0;
    weft__leave_woke(&p.lv, &w);
    CHECK(p.lv.late_ns > before && p.lv.late_ns <= 10 * US);
}

/* Rhythms that are not followed: irregular (a window wider than the gap),
 * long (more than 16 wake-ups: a wake-up is no visible part of it), or of
 * busy periods that engage one worker (one small job at a time: its own
 * wake-up finds the one worker it needs). */
TEST(irregular_long_or_narrow_rhythms_are_not_followed) {
    static const struct {
        uint64_t gap, dev;
        unsigned width;
    } cases[] = {{200 * US, 150 * US, 2}, {1000 * US, 5 * US, 2}, {200 * US, 5 * US, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        policy p;
        make(&p, 2, 1, false);
        p.lv.gain_ns = -1;
        rhythm(&p, cases[i].gap, cases[i].dev, cases[i].width);
        uint64_t at;
        CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP && at == 0);
        CHECK(!searches(&p, (double)cases[i].gap / US));
    }
}

/* Row 5: busy periods wider than the CPUs make an implicit phase: idle
 * workers search through the quiet period (against their gain) until its
 * window closes, and through busy periods for a phase's bound; a deviation
 * within one wake-up counts as regular there (back-to-back loop calls), not
 * in a pool no wider than its CPUs. */
TEST(oversubscribed_rhythm_is_an_implicit_phase) {
    policy p;
    make(&p, 8, 2, false);
    p.lv.gain_ns = -1;
    CHECK(!searches(&p, 50)); /* no rhythm yet */
    rhythm(&p, 200 * US, 5 * US, 3);
    CHECK(searches(&p, 50));   /* the quiet period */
    CHECK(searches(&p, 200));  /* its window */
    CHECK(!searches(&p, 400)); /* past it: sleep */
    weft__leave_found(&p.lp, &p.lv, 0);
    p.lv.gain_ns = -1;
    CHECK(searches(&p, 5000));       /* busy, as a phase */
    CHECK(!searches(&p, 20000));     /* past a phase's bound */
    rhythm(&p, 20 * US, 15 * US, 3); /* deviation 15 us, wake-up 20 us */
    CHECK(searches(&p, 10));
    CHECK(!searches(&p, 90));
    rhythm(&p, 20 * US, 25 * US, 3); /* beyond one wake-up */
    CHECK(!searches(&p, 10));
    rhythm(&p, 20 * US, 15 * US, 2); /* as wide as the CPUs: the strict rule */
    CHECK(!searches(&p, 10));
}

/* Row 5 counts the threads a busy period engages to the nearest one: a
 * caller and one worker on two CPUs, now and then helped by a second worker
 * (2.1 threads on average), are as wide as the CPUs; 2.6 threads are wider. */
TEST(a_stray_thread_does_not_make_an_implicit_phase) {
    policy p;
    make(&p, 8, 2, false);
    p.lv.gain_ns = -1;
    rhythm(&p, 200 * US, 5 * US, 1);
    atomic_store(&p.lp.rhythm.callers, WEFT__RHYTHM_ONE * 11 / 10);
    CHECK(!searches(&p, 50)); /* the quiet period, before the window: sleep */
    atomic_store(&p.lp.rhythm.callers, WEFT__RHYTHM_ONE * 16 / 10);
    CHECK(searches(&p, 50));
}

/* The pool learns the width of its busy periods (each worker that finds work
 * counts once, saturating at the worker count, averaged as it goes quiet)
 * and the time from going quiet to the next waited-for arrival; an arrival
 * while busy teaches nothing, nor does going quiet with no work found. */
TEST(pool_learns_its_rhythm) {
    policy p;
    make(&p, 2, 2, false);
    weft__rhythm_arrival(&p.lp.rhythm, T0); /* never quiet */
    CHECK_EQ(atomic_load(&p.lp.rhythm.gaps), 0);
    uint64_t t = T0;
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 5; j++)
            weft__leave_found(&p.lp, &p.lv, 0); /* counts two: two workers */
        weft__rhythm_quiet(&p.lp.rhythm, t);
        t += 300 * US;
        weft__rhythm_arrival(&p.lp.rhythm, t);
        CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0); /* busy again */
    }
    CHECK_EQ(atomic_load(&p.lp.rhythm.gaps), 6);
    CHECK_EQ(atomic_load(&p.lp.rhythm.gap_ns), 300 * US);
    CHECK_EQ(atomic_load(&p.lp.rhythm.width), 2 * WEFT__RHYTHM_ONE);
    weft__rhythm_arrival(&p.lp.rhythm, t + 1); /* not quiet since: no sample */
    CHECK_EQ(atomic_load(&p.lp.rhythm.gaps), 6);
    weft__rhythm_quiet(&p.lp.rhythm, t + 2); /* no work found since: not quiet */
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0);
    weft__leave_found(&p.lp, &p.lv, 0);
    weft__rhythm_quiet(&p.lp.rhythm, t + 3); /* one job: the width moves towards one */
    CHECK(atomic_load(&p.lp.rhythm.width) < 2 * WEFT__RHYTHM_ONE);
}

/* A call's end as weft__sleep_call_end makes it: the last call running
 * records the quiet period if its workers are inactive by then. */
static void call_end(policy *p, uint64_t now, bool workers_inactive) {
    if (weft__rhythm_call_end(&p->lp.rhythm) && workers_inactive)
        weft__rhythm_quiet(&p->lp.rhythm, now);
}

/* An outside caller that takes part in its calls (callers.c) is one of the
 * pool's threads while they run: its call is an arrival and counts among the
 * threads a busy period engages, the pool is not quiet while it runs however
 * early the workers ran out, but from its end. So a caller
 * helped by one worker (two threads) is followed, which one worker alone
 * (width one) would not be. */
/* Ten calls of 100 us, 300 us apart, ending at T0 - 200 us, each helped by
 * one worker that runs out 50 us in: the pool is quiet from each call's end.
 * Returns the time of the next call. */
static uint64_t caller_rhythm(policy *p) {
    uint64_t t = T0 - 10 * 300 * US;
    for (int i = 0; i < 10; i++) {
        weft__rhythm_call_begin(&p->lp.rhythm, t);
        weft__leave_found(&p->lp, &p->lv, 0);           /* one worker helps */
        weft__rhythm_quiet(&p->lp.rhythm, t + 50 * US); /* and runs out: not quiet */
        CHECK_EQ(atomic_load(&p->lp.rhythm.quiet_ns), 0);
        call_end(p, t + 100 * US, true);
        CHECK_EQ(atomic_load(&p->lp.rhythm.quiet_ns), t + 100 * US);
        t += 300 * US;
    }
    return t;
}

TEST(a_caller_is_one_of_the_pools_threads_during_its_call) {
    policy p;
    make(&p, 2, 2, false);
    p.lv.gain_ns = -1;
    uint64_t t = caller_rhythm(&p);
    CHECK_EQ(atomic_load(&p.lp.rhythm.gap_ns), 200 * US); /* from each call's end */
    CHECK_EQ(atomic_load(&p.lp.rhythm.width), WEFT__RHYTHM_ONE);
    CHECK_EQ(atomic_load(&p.lp.rhythm.callers), WEFT__RHYTHM_ONE);
    /* Quiet since T0 - 200 us: due at T0, searched for from twice the
     * lateness before, as pool_work_due_is_searched_for. */
    CHECK(searches(&p, 0));
    /* A call whose workers are still at work when it ends leaves the quiet
     * period to the last of them. */
    weft__rhythm_call_begin(&p.lp.rhythm, t);
    weft__leave_found(&p.lp, &p.lv, 0);
    call_end(&p, t + 100 * US, false);
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0);
    weft__rhythm_quiet(&p.lp.rhythm, t + 120 * US);
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), t + 120 * US);
}

/* A worker that runs out while the caller finishes its call (the usual end
 * of a call: the caller runs its last piece) sleeps until just before the
 * next call is due, counted from when it ran out: the pool is not quiet yet,
 * and without that count it would sleep until the next call's first push
 * woke it. A call that outlasts that window leaves it past: the sleeper
 * sleeps without a deadline (one early wake-up a call, at most); the call's
 * end then starts the quiet period as before. */
TEST(a_worker_that_runs_out_before_the_call_ends_wakes_for_the_next_call) {
    policy p;
    make(&p, 1, 2, false);
    weft__rhythm_call_begin(&p.lp.rhythm, caller_rhythm(&p));
    uint64_t gap = atomic_load(&p.lp.rhythm.gap_ns), dev = atomic_load(&p.lp.rhythm.gap_dev_ns);
    uint64_t due = gap - dev - 2 * p.lv.late_ns; /* after the quiet period starts */
    weft__leave_found(&p.lp, &p.lv, 0);
    p.lv.gain_ns = -1;                    /* the finds taught its gain; still: sleep at once */
    weft__rhythm_quiet(&p.lp.rhythm, T0); /* the worker ran out; the call runs on */
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0);
    uint64_t at;
    CHECK(decide_at(&p, 1, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + due);
    CHECK(decide_at(&p, 1000, &at) == WEFT__LEAVE_SLEEP && at == 0); /* the call outlasted it */
    call_end(&p, T0 + 1000 * US, true);
    CHECK(decide_at(&p, 1001, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + 1000 * US + due);
    /* Work found again: the workers' idleness no longer counts. */
    weft__rhythm_call_begin(&p.lp.rhythm, T0 + 1200 * US);
    weft__leave_found(&p.lp, &p.lv, 0);
    p.lv.gain_ns = -1;
    CHECK(decide_at(&p, 1201, &at) == WEFT__LEAVE_SLEEP && at == 0);
}

/* The same worker deciding as the call ends: the caller has counted the call
 * done but not yet recorded the quiet period (rhythm.c), the moment the
 * worker whose job the caller waited for decides, having run out as it set
 * the caller free. It still sleeps until just before the next call, counted
 * from when it ran out, not until the next call's first push wakes it. */
TEST(a_worker_deciding_as_the_call_ends_wakes_for_the_next_call) {
    policy p;
    make(&p, 1, 2, false);
    weft__rhythm_call_begin(&p.lp.rhythm, caller_rhythm(&p));
    uint64_t gap = atomic_load(&p.lp.rhythm.gap_ns), dev = atomic_load(&p.lp.rhythm.gap_dev_ns);
    uint64_t due = gap - dev - 2 * p.lv.late_ns;
    weft__leave_found(&p.lp, &p.lv, 0);
    p.lv.gain_ns = -1;
    weft__rhythm_quiet(&p.lp.rhythm, T0);       /* the worker ran out; the call runs on */
    CHECK(weft__rhythm_call_end(&p.lp.rhythm)); /* the caller, before its record */
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0);
    uint64_t at;
    CHECK(decide_at(&p, 5, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + due);
    weft__rhythm_quiet(&p.lp.rhythm, T0 + 6 * US); /* the caller's record */
    CHECK(decide_at(&p, 7, &at) == WEFT__LEAVE_SLEEP);
    CHECK_EQ(at, T0 + 6 * US + due);
}

/* Callers do not crowd workers out of the width: a caller helped by both
 * workers of a pool of two engages both of them, and two callers helped by
 * the one worker of a pool of one engage that worker. */
TEST(callers_and_workers_are_counted_apart) {
    policy p;
    make(&p, 2, 2, false);
    weft__rhythm_call_begin(&p.lp.rhythm, T0);
    weft__leave_found(&p.lp, &p.lv, 0);
    weft__leave_found(&p.lp, &p.lv, 0);
    call_end(&p, T0 + 100 * US, true);
    CHECK_EQ(atomic_load(&p.lp.rhythm.width), 2 * WEFT__RHYTHM_ONE);
    CHECK(weft__rhythm_wider_than(&p.lp.rhythm, 2 * WEFT__RHYTHM_ONE)); /* three threads */
    make(&p, 1, 2, false);
    weft__rhythm_call_begin(&p.lp.rhythm, T0);
    weft__rhythm_call_begin(&p.lp.rhythm, T0);
    weft__leave_found(&p.lp, &p.lv, 0);
    call_end(&p, T0 + 100 * US, true);
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0); /* one call still runs */
    call_end(&p, T0 + 100 * US, true);
}

/* The call's end and its last worker's stop, in the order that lost the
 * quiet period when the caller read the counters before it ended its call:
 * the worker, last inactive, still sees the call and leaves the record to
 * the caller, whose read of the counters now comes after (rhythm.c). */
TEST(a_call_ending_as_its_last_worker_stops_records_the_quiet_period) {
    policy p;
    make(&p, 1, 2, false);
    weft__rhythm_call_begin(&p.lp.rhythm, T0);
    weft__leave_found(&p.lp, &p.lv, 0);
    weft__rhythm_quiet(&p.lp.rhythm, T0 + 90 * US); /* the worker: a call runs */
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), 0);
    call_end(&p, T0 + 100 * US, true); /* the caller sees the worker inactive */
    CHECK_EQ(atomic_load(&p.lp.rhythm.quiet_ns), T0 + 100 * US);
}

/* The back-off spins 1, 2, ..., 32 pauses, then yields (no state left). */
TEST(backoff_spins_then_yields) {
    unsigned rounds = 0;
    for (int i = 0; i < 10; i++)
        weft__leave_backoff(&rounds);
    CHECK_EQ(rounds, 6);
}
