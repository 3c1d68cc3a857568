/* SPDX-License-Identifier: MIT */
/* The soak: weft's whole surface at once, oversubscribed, for as long as
 * asked, checking that every job runs exactly once, that nothing is lost and
 * that nothing hangs. `make soak` runs it under TSan and under the
 * random-yield build (WEFT_DEBUG_YIELD); it is not a ctest test (it runs for
 * minutes).
 *
 *   soak [seconds [seed]]     (default 60 s, seed 1)
 *
 * SOAK_CONCURRENCY=n sets the CPU budget (weft_set_concurrency) before the
 * pools exist; SOAK_HOLD=1 keeps a stalled run alive for a debugger instead
 * of aborting (the watchdog pauses; everything else runs on).
 *
 * Three pools of 8, 24 and 32 workers (64 on a machine of a few cores), with
 * both sleep protocols and both leave policies, and these actors, each a
 * plain pthread:
 *  - submitters: weft_spawn batches from outside, weft_run of jobs that
 *    weft_join (fib), weft_for and weft_run into another pool;
 *  - a context holder: weft_context_acquire, then weft_for, weft_scope_run;
 *  - an event actor: events with follow-ups, signalled by jobs and by a
 *    plain thread, waited for from outside and from inside a job;
 *  - a graph runner: one graph per pool run over and over, each node checking
 *    its predecessors ran first in this run;
 *  - a phase actor: weft_phase_begin, parallel work, weft_phase_end;
 *  - a churner: creates a small pool, submits to it (spawn, run, an event
 *    signalled from a plain thread racing the destroy), destroys it;
 *  - a canceller: scopes, loops and reductions whose jobs cancel them part
 *    way (each scope job runs or is released exactly once).
 *
 * Checks: every batch's slots are exactly 1 when the batch is done; at the
 * end the tracked jobs submitted equal those executed. A watchdog aborts
 * with every actor's position if nothing moved for STALL_SECONDS. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobs.h"

#include "weft.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "soak: %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* No progress at all (no job, no actor step) for this long is a hang: under
 * TSan a step of 64 oversubscribed threads takes well under a second, so
 * this is far from any slow but healthy run. */
#define STALL_SECONDS 60

#define NPOOLS 3
static weft_pool *pools[NPOOLS];

static _Atomic bool stop;
static _Atomic uint64_t progress;  /* anything happened */
static _Atomic uint64_t submitted; /* tracked jobs handed to weft */
static _Atomic uint64_t executed;  /* tracked jobs that ran */
static _Atomic uint64_t pools_created;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0) {
    }
}

static void tick(void) {
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

/* Per-thread xorshift, seeded per actor. */
static _Thread_local uint64_t rng;

static unsigned rnd(unsigned n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* ---- Actors and the watchdog ---------------------------------------------- */

typedef struct actor {
    const char *name;
    void *(*fn)(void *);
    pthread_t thread;
    _Atomic(const char *) where; /* what it is doing now, for the watchdog */
    _Atomic uint64_t rounds;
    _Atomic uint64_t steps; /* moves of `where`: the watchdog's per-actor progress */
    uint64_t seed;
} actor;

static void at(actor *a, const char *where) {
    atomic_store_explicit(&a->where, where, memory_order_relaxed);
    atomic_fetch_add_explicit(&a->steps, 1, memory_order_relaxed);
    tick();
}

/* ---- A batch: n tracked jobs, each with its own slot ---------------------- */

typedef struct batch {
    _Atomic unsigned char *hits;
    size_t n;
    _Atomic size_t remaining;
} batch;

typedef struct slot_ref {
    batch *b;
    size_t i;
} slot_ref;

static batch *batch_new(size_t n) {
    batch *b = malloc(sizeof *b);
    CHECK(b);
    b->hits = calloc(n, 1);
    CHECK(b->hits);
    b->n = n;
    atomic_init(&b->remaining, n);
    return b;
}

/* Every slot exactly once, then free. */
static void batch_check_free(batch *b) {
    CHECK(atomic_load(&b->remaining) == 0);
    for (size_t i = 0; i < b->n; i++)
        CHECK(atomic_load_explicit(&b->hits[i], memory_order_relaxed) == 1);
    free((void *)b->hits);
    free(b);
}

/* Wait (from outside any pool) until the batch's jobs have all run. */
static void batch_wait(actor *a, batch *b, const char *where) {
    at(a, where);
    while (atomic_load_explicit(&b->remaining, memory_order_acquire) != 0)
        sleep_us(100);
}

static void hit(void *arg) {
    slot_ref *r = arg;
    batch *b = r->b;
    size_t i = r->i;
    free(r);
    atomic_fetch_add_explicit(&b->hits[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&executed, 1, memory_order_relaxed);
    tick();
    /* Release: the batch's owner reads the hits after seeing 0 (acquire). */
    atomic_fetch_sub_explicit(&b->remaining, 1, memory_order_release);
}

static slot_ref *slot_of(batch *b, size_t i) {
    slot_ref *r = malloc(sizeof *r);
    CHECK(r);
    r->b = b;
    r->i = i;
    atomic_fetch_add_explicit(&submitted, 1, memory_order_relaxed);
    return r;
}

/* Spawn every job of b into pool; the pool is open, so each must be taken. */
static void spawn_batch(weft_pool *pool, batch *b) {
    for (size_t i = 0; i < b->n; i++)
        CHECK(weft_spawn(pool, hit, slot_of(b, i)) == 0);
}

/* ---- Nested work: join, for, cross-pool run -------------------------------- */

static long fib_serial(int n) {
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static void count_range(size_t begin, size_t end, void *arg) {
    _Atomic unsigned char *hits = arg;
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
    tick();
}

/* weft_for over n indices; each exactly once. */
static void checked_for(weft_pool *pool, size_t n, size_t grain) {
    _Atomic unsigned char *hits = calloc(n, 1);
    CHECK(hits);
    weft_for(pool, 0, n, grain, count_range, (void *)hits);
    for (size_t i = 0; i < n; i++)
        CHECK(atomic_load_explicit(&hits[i], memory_order_relaxed) == 1);
    free((void *)hits);
}

typedef struct nested {
    int kind;
    weft_pool *other;
} nested;

static void checked_fib(weft_pool *pool, int n) {
    fib f = {n, 0};
    weft_run(pool, fib_job, &f);
    CHECK(f.r == fib_serial(n));
}

/* A job that forks inside its pool, or waits on another pool. */
static void nested_job(void *arg) {
    nested *x = arg;
    switch (x->kind) {
    case 0: {
        fib f = {16, 0};
        fib_job(&f);
        CHECK(f.r == 987);
        break;
    }
    case 1:
        checked_for(NULL, 5000, 0);
        break;
    default:
        checked_fib(x->other, 14); /* weft_run into another pool from a worker */
        break;
    }
    tick();
}

/* ---- Submitters from outside ------------------------------------------------ */

static void *submitter(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_pool *pool = pools[rnd(NPOOLS)];
        at(a, "spawn batch");
        batch *b = batch_new(50 + rnd(300));
        spawn_batch(pool, b);
        at(a, "weft_run nested");
        nested x = {(int)rnd(3), pools[rnd(NPOOLS)]};
        weft_run(pool, nested_job, &x);
        batch_wait(a, b, "wait spawn batch");
        batch_check_free(b);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- A context holder -------------------------------------------------------- */

static void scope_body(weft_scope *s, void *arg) {
    batch *b = arg;
    for (size_t i = 0; i < b->n; i++)
        CHECK(weft_scope_spawn(s, hit, slot_of(b, i)) == 0);
}

static void *context_holder(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_pool *pool = pools[rnd(NPOOLS)];
        weft_context *c;
        at(a, "context acquire");
        int err = weft_context_acquire(pool, &c);
        CHECK(err == 0 || err == EBUSY);
        if (err)
            continue;
        at(a, "context weft_for");
        checked_for(pool, 2000 + rnd(20000), rnd(2) ? 0 : 64);
        at(a, "context scope");
        batch *b = batch_new(100 + rnd(400));
        weft_scope_run(pool, scope_body, b);
        CHECK(atomic_load(&b->remaining) == 0); /* the scope waited for all */
        batch_check_free(b);
        at(a, "context join");
        fib f = {15, 0};
        weft_run(pool, fib_job, &f);
        CHECK(f.r == 610);
        at(a, "context release");
        weft_context_release(c);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- Events with follow-ups --------------------------------------------------- */

static void signal_job(void *arg) {
    weft_event_signal(arg);
    tick();
}

static void *signal_thread(void *arg) {
    weft_event_signal(arg);
    return NULL;
}

typedef struct wait_in_job {
    weft_event *e;
} wait_in_job;

static void wait_job(void *arg) {
    wait_in_job *w = arg;
    weft_event_wait(w->e); /* a worker participates while it waits */
    CHECK(weft_event_is_set(w->e));
}

static void *event_actor(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_pool *pool = pools[rnd(NPOOLS)];
        unsigned deps = 1 + rnd(8);
        weft_event *e;
        at(a, "event create");
        CHECK(weft_event_create(&e, pool, deps) == 0);
        batch *b = batch_new(1 + rnd(20));
        for (size_t i = 0; i < b->n; i++)
            CHECK(weft_event_then(e, hit, slot_of(b, i)) == 0);
        at(a, "event signal");
        pthread_t t;
        CHECK(pthread_create(&t, NULL, signal_thread, e) == 0); /* one from a plain thread */
        for (unsigned i = 1; i < deps; i++)
            CHECK(weft_spawn(pools[rnd(NPOOLS)], signal_job, e) == 0);
        wait_in_job w = {e};
        at(a, "event wait in job");
        weft_run(pool, wait_job, &w);
        at(a, "event wait outside");
        weft_event_wait(e);
        CHECK(pthread_join(t, NULL) == 0);
        batch_wait(a, b, "event follow-ups");
        batch_check_free(b);
        /* A set event may still have a signaller inside: weft keeps it alive. */
        weft_event_destroy(e);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- Graphs -------------------------------------------------------------------- */

#define GRAPH_LAYERS 4
#define GRAPH_WIDTH  5

typedef struct gnode {
    _Atomic uint64_t runs;
    struct gnode *preds[GRAPH_WIDTH];
    int npreds;
} gnode;

static void gnode_fn(void *arg) {
    gnode *n = arg;
    uint64_t mine = atomic_load_explicit(&n->runs, memory_order_relaxed) + 1;
    for (int i = 0; i < n->npreds; i++) /* each predecessor has run this run */
        CHECK(atomic_load_explicit(&n->preds[i]->runs, memory_order_relaxed) == mine);
    atomic_store_explicit(&n->runs, mine, memory_order_relaxed);
    tick();
}

static void *graph_actor(void *arg) {
    actor *a = arg;
    rng = a->seed;
    static gnode nodes[NPOOLS][GRAPH_LAYERS][GRAPH_WIDTH];
    weft_graph *g[NPOOLS];
    for (int p = 0; p < NPOOLS; p++) {
        CHECK(weft_graph_create(&g[p]) == 0);
        weft_node *wn[GRAPH_LAYERS][GRAPH_WIDTH];
        for (int l = 0; l < GRAPH_LAYERS; l++)
            for (int i = 0; i < GRAPH_WIDTH; i++) {
                gnode *n = &nodes[p][l][i];
                atomic_init(&n->runs, 0);
                CHECK(weft_graph_add(g[p], gnode_fn, n, &wn[l][i]) == 0);
                for (int j = 0; l > 0 && j < GRAPH_WIDTH; j++)
                    if (j == i || rnd(2)) {
                        n->preds[n->npreds++] = &nodes[p][l - 1][j];
                        CHECK(weft_graph_edge(g[p], wn[l - 1][j], wn[l][i]) == 0);
                    }
            }
    }
    uint64_t runs[NPOOLS] = {0};
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        int p = (int)rnd(NPOOLS);
        at(a, "graph run");
        CHECK(weft_graph_run(g[p], pools[p]) == 0);
        runs[p]++;
        for (int l = 0; l < GRAPH_LAYERS; l++)
            for (int i = 0; i < GRAPH_WIDTH; i++)
                CHECK(atomic_load(&nodes[p][l][i].runs) == runs[p]);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    for (int p = 0; p < NPOOLS; p++)
        weft_graph_destroy(g[p]);
    return NULL;
}

/* ---- Parallel phases ------------------------------------------------------------ */

static void *phase_actor(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_pool *pool = pools[rnd(NPOOLS)];
        at(a, "phase begin");
        weft_phase_begin(pool);
        for (unsigned i = 0, n = 1 + rnd(4); i < n; i++) {
            at(a, "phase for");
            checked_for(pool, 1000 + rnd(10000), 0);
        }
        at(a, "phase end");
        weft_phase_end(pool, rnd(2));
        sleep_us(rnd(2000)); /* let the pool leave, sleep, and be woken again */
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- Pools created and destroyed underneath ------------------------------------ */

static void *churner(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_config c = {.threads = 1 + rnd(4),
                         .contexts = rnd(2),
                         .wake = rnd(2) ? WEFT_WAKE_ALL : WEFT_WAKE_TARGETED,
                         .leave = rnd(2) ? WEFT_LEAVE_FAST : WEFT_LEAVE_AUTOMATIC,
                         .callers = rnd(3)}; /* 0: the default of its protocol */
        weft_pool *pool;
        at(a, "churn create");
        CHECK(weft_pool_create(&pool, &c) == 0);
        atomic_fetch_add_explicit(&pools_created, 1, memory_order_relaxed);
        batch *b = batch_new(1 + rnd(200));
        at(a, "churn spawn");
        spawn_batch(pool, b);
        if (rnd(2)) {
            at(a, "churn run");
            checked_fib(pool, 12);
        }
        /* An event whose last signal comes from a plain thread while we
         * destroy: destroy answers EBUSY until it is set, then waits for the
         * follow-up (tests/test_lifecycle.c). */
        weft_event *e;
        CHECK(weft_event_create(&e, pool, 1) == 0);
        batch *f = batch_new(1);
        CHECK(weft_event_then(e, hit, slot_of(f, 0)) == 0);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, signal_thread, e) == 0);
        at(a, "churn destroy");
        int err;
        while ((err = weft_pool_destroy(pool)) == EBUSY)
            sched_yield();
        CHECK(err == 0);
        /* Destroy finished the pool's work: nothing left to wait for. */
        CHECK(atomic_load(&b->remaining) == 0 && atomic_load(&f->remaining) == 0);
        CHECK(pthread_join(t, NULL) == 0);
        weft_event_destroy(e);
        batch_check_free(b);
        batch_check_free(f);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- Cancellation ------------------------------------------------------------------ */

/* A scope job that may cancel its scope; its release is hit itself, so each
 * slot is accounted exactly once whether the job ran or was skipped. */
typedef struct cancel_scope {
    batch *b;
    unsigned odds; /* a job cancels the scope with probability 1/odds */
} cancel_scope;

static cancel_scope *cancelling; /* the actor's current scope (read by its jobs) */

static void maybe_cancel_hit(void *arg) {
    slot_ref *r = arg;
    if ((r->i * 0x9e3779b97f4a7c15ull >> 32) % cancelling->odds == 0)
        weft_cancel();
    hit(arg);
}

static void cancel_scope_body(weft_scope *s, void *arg) {
    cancel_scope *c = arg;
    for (size_t i = 0; i < c->b->n; i++) {
        slot_ref *r = slot_of(c->b, i);
        int err = weft_scope_spawn_release(s, maybe_cancel_hit, hit, r);
        CHECK(err == 0 || err == ECANCELED);
        if (err)
            hit(r); /* refused: accounted here */
    }
}

typedef struct cancel_loop {
    _Atomic unsigned char *hits;
    size_t at; /* the index whose piece cancels the loop */
} cancel_loop;

static void cancel_range(size_t begin, size_t end, void *arg) {
    cancel_loop *c = arg;
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
    if (c->at >= begin && c->at < end)
        weft_cancel();
    tick();
}

/* The sum of the indices (jobs.h), cancelled at index *arg. */
static void cancelling_fold(size_t begin, size_t end, void *acc, void *arg) {
    for (size_t i = begin; i < end; i++) {
        if (i == *(size_t *)arg)
            weft_cancel();
        *(uint64_t *)acc += i;
    }
}

/* Scopes, loops and reductions that cancel themselves part way: every scope
 * job runs or is released exactly once, no loop index runs twice, a
 * reduction gives the exact sum or leaves its result. */
static void *canceller(void *arg) {
    actor *a = arg;
    rng = a->seed;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        weft_pool *pool = pools[rnd(NPOOLS)];
        at(a, "cancel scope");
        cancel_scope c = {batch_new(100 + rnd(1000)), 1 + rnd(200)};
        cancelling = &c;
        weft_scope_run(pool, cancel_scope_body, &c);
        CHECK(atomic_load(&c.b->remaining) == 0); /* nothing runs after the scope */
        batch_check_free(c.b);
        at(a, "cancel loop");
        size_t n = 1000 + rnd(50000);
        cancel_loop l = {calloc(n, 1), rnd((unsigned)n + n / 4)}; /* some never cancel */
        CHECK(l.hits);
        weft_for(pool, 0, n, rnd(2) ? 0 : 1 + rnd(64), cancel_range, &l);
        for (size_t i = 0; i < n; i++) { /* never twice; all of it if nobody cancelled */
            unsigned h = atomic_load_explicit(&l.hits[i], memory_order_relaxed);
            CHECK(h <= 1 && (h == 1 || l.at < n));
        }
        if (l.at < n) /* the piece that cancelled ran */
            CHECK(atomic_load_explicit(&l.hits[l.at], memory_order_relaxed) == 1);
        free((void *)l.hits);
        at(a, "cancel reduce");
        size_t at_index = rnd((unsigned)n + n / 4);
        weft_reducer r = {sizeof(uint64_t), sum_init, cancelling_fold, sum_combine, &at_index};
        uint64_t result = 7;
        int err = weft_reduce(pool, 0, n, rnd(2) ? 0 : 1 + rnd(64), &r, &result);
        CHECK(err == ECANCELED ? result == 7 : err == 0 && result == (uint64_t)n * (n - 1) / 2);
        CHECK(at_index >= n || err == ECANCELED);
        atomic_fetch_add_explicit(&a->rounds, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- Main ------------------------------------------------------------------------- */

static actor actors[] = {
    {.name = "submitter 1", .fn = submitter},  {.name = "submitter 2", .fn = submitter},
    {.name = "context", .fn = context_holder}, {.name = "events", .fn = event_actor},
    {.name = "graphs", .fn = graph_actor},     {.name = "phases", .fn = phase_actor},
    {.name = "churner", .fn = churner},        {.name = "canceller", .fn = canceller},
};
#define NACTORS (sizeof actors / sizeof actors[0])

static void report(FILE *out) {
    for (size_t i = 0; i < NACTORS; i++)
        fprintf(out, "  %-12s rounds %llu, at: %s\n", actors[i].name,
                (unsigned long long)atomic_load(&actors[i].rounds),
                atomic_load_explicit(&actors[i].where, memory_order_relaxed));
    fprintf(out, "  tracked jobs: %llu submitted, %llu executed\n",
            (unsigned long long)atomic_load(&submitted),
            (unsigned long long)atomic_load(&executed));
    for (int p = 0; p < NPOOLS; p++) {
        weft_stats st;
        weft_pool_stats(pools[p], &st);
        fprintf(out, "  pool %d: %u workers, %llu jobs run\n", p, weft_pool_threads(pools[p]),
                (unsigned long long)st.jobs);
    }
}

static void stalled(const char *what) {
    fprintf(stderr, "soak: %s made no progress for %d s; where everyone is:\n", what,
            STALL_SECONDS);
    report(stderr);
    if (getenv("SOAK_HOLD")) { /* keep the hang for a debugger: gdb -p <pid> */
        fprintf(stderr, "soak: holding, pid %ld\n", (long)getpid());
        for (;;)
            pause();
    }
    abort();
}

/* Runs until main stops it; aborts when the jobs as a whole, or any one
 * actor, stop moving (one hung actor does not stop the others' progress). */
static void *watchdog(void *arg) {
    (void)arg;
    uint64_t last = atomic_load(&progress), steps[NACTORS];
    double since = now_s(), actor_since[NACTORS];
    for (size_t i = 0; i < NACTORS; i++)
        steps[i] = atomic_load(&actors[i].steps), actor_since[i] = since;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        sleep_us(200000);
        double now = now_s();
        uint64_t p = atomic_load_explicit(&progress, memory_order_relaxed);
        if (p != last)
            last = p, since = now;
        else if (now - since > STALL_SECONDS)
            stalled("the whole soak");
        for (size_t i = 0; i < NACTORS; i++) {
            uint64_t s = atomic_load_explicit(&actors[i].steps, memory_order_relaxed);
            if (s != steps[i])
                steps[i] = s, actor_since[i] = now;
            else if (now - actor_since[i] > STALL_SECONDS)
                stalled(actors[i].name);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    const weft_config configs[NPOOLS] = {
        {.threads = 8, .contexts = 2},
        {.threads = 24, .contexts = 2, .wake = WEFT_WAKE_ALL},
        {.threads = 32, .contexts = 2, .leave = WEFT_LEAVE_FAST},
    };
    if (getenv("SOAK_CONCURRENCY")) /* a CPU budget other than the default */
        CHECK(weft_set_concurrency((unsigned)atoi(getenv("SOAK_CONCURRENCY"))) == 0);
    for (int p = 0; p < NPOOLS; p++)
        CHECK(weft_pool_create(&pools[p], &configs[p]) == 0);
    double t0 = now_s();
    pthread_t dog;
    CHECK(pthread_create(&dog, NULL, watchdog, NULL) == 0);
    for (size_t i = 0; i < NACTORS; i++) {
        actors[i].seed = seed * 0x9e3779b97f4a7c15ull + i + 1;
        atomic_init(&actors[i].where, "starting");
        CHECK(pthread_create(&actors[i].thread, NULL, actors[i].fn, &actors[i]) == 0);
    }
    while (now_s() - t0 < seconds)
        sleep_us(100000);
    atomic_store(&stop, true);
    for (size_t i = 0; i < NACTORS; i++)
        CHECK(pthread_join(actors[i].thread, NULL) == 0);
    CHECK(pthread_join(dog, NULL) == 0);
    for (int p = 0; p < NPOOLS; p++)
        CHECK(weft_pool_destroy(pools[p]) == 0);
    uint64_t sub = atomic_load(&submitted), ran = atomic_load(&executed);
    if (sub != ran) {
        fprintf(stderr, "soak: %llu tracked jobs submitted, %llu executed\n",
                (unsigned long long)sub, (unsigned long long)ran);
        abort();
    }
    uint64_t rounds = 0;
    for (size_t i = 0; i < NACTORS; i++)
        rounds += atomic_load(&actors[i].rounds);
    printf("soak: ok: %llu tracked jobs run exactly once, %llu actor rounds, %llu pools created "
           "and destroyed, %.0f s (seed %llu)\n",
           (unsigned long long)ran, (unsigned long long)rounds,
           (unsigned long long)atomic_load(&pools_created) + NPOOLS, now_s() - t0,
           (unsigned long long)seed);
    return 0;
}
