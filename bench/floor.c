/* SPDX-License-Identifier: MIT */
/* floor.c: the floors under the sporadic and fork targets, measured the
 * way the driver measures the targets themselves (bench/wl_*.c), with no
 * scheduler:
 *
 *  - sporadic: the submitter's loop (sleep until the next 500 us deadline,
 *    then one 20 us job) with the job run inline, so the CPU per wall second
 *    is the harness's own cost plus the useful load; without the job, the
 *    harness alone. No scheduler can report less than the first.
 *  - fib(35) through weft_join's shape with a join that schedules nothing:
 *    frames on the stack, both halves called through function pointers from a
 *    join the compiler cannot inline (a library call). T1/Ts of this is what
 *    a scheduler with a free join would measure against bench's serial fib.
 *  - fib(35) against the noinline serial (the fork rows' reference, Ts), with
 *    joins the compiler inlines, in three steps, each a floor for a
 *    header-inline weft_join on this machine: the job interface alone (both
 *    halves called directly, arguments and results in frames, no join); then
 *    a join that only moves a deque index kept in memory behind a
 *    thread-local pointer (the least any join does whose index is not passed
 *    in registers through every call: Lace passes it as an argument); then
 *    the same writing B's function and argument into a slot and reading one
 *    word back after A. None of them can be stolen from: a real join costs
 *    more.
 *  - wake (Linux): what the machine charges any pool whose workers sleep.
 *    The latency of a condition-variable wake-up (waker's signal to wakee
 *    running) of a thread blocked on the other CPU, after that CPU idled for
 *    50 us, 500 us or 5 ms while the waker spun (the serial gap of the burst
 *    workloads); and the placement of a chain: a thread that blocks right
 *    after waking A (as weft_run's caller does), A waking B, both then
 *    spinning 100 us: how often A and B share a CPU while the other one idles,
 *    and how long the pair takes. A pool whose workers sleep and are woken
 *    by futex pays the first on every wake-up and gets the second's placement
 *    (short of pinning its threads).
 *
 * Prints one JSON object per line. Not part of run.sh's tables (it is not a
 * peer); `build/bench/bench/floor_bench` runs it. */
#define _GNU_SOURCE /* sched_getcpu, pthread_setaffinity_np (Linux) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define US 1000u

#define PERIOD_NS (500 * US)
#define JOB_NS    (20 * US)
#define JOBS      2000

static double sporadic_floor(uint64_t job_ns) {
    bench_span span = bench_span_start();
    for (unsigned i = 0; i < JOBS; i++) {
        bench_sleep_until_ns(span.wall_ns + (uint64_t)(i + 1) * PERIOD_NS);
        bench_spin_ns(job_ns);
    }
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    return cpu / wall;
}

typedef void fn_t(void *);
typedef struct frame {
    int n;
    long r;
} frame;

/* The join a free scheduler would have: call both halves. */
__attribute__((noinline)) static void free_join(fn_t *a, void *a_arg, fn_t *b, void *b_arg) {
    a(a_arg);
    b(b_arg);
}

static void fib_job(void *arg) {
    frame *f = arg;
    if (f->n < 2) {
        f->r = f->n;
        return;
    }
    frame a = {f->n - 1, 0}, b = {f->n - 2, 0};
    free_join(fib_job, &a, fib_job, &b);
    f->r = a.r + b.r;
}

static long fib_rec(int n) {
    return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2);
}

/* Median of five timings of fn(35). */
static double time_fib(long (*fn)(int)) {
    double t[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = bench_now_ns();
        if (fn(35) != 9227465) {
            fprintf(stderr, "floor: wrong fib value\n");
            exit(1);
        }
        t[i] = 1e-9 * (double)(bench_now_ns() - t0);
    }
    bench_sort_doubles(t, 5);
    return t[2];
}

/* ---- inline joins ------------------------------------------------------ */

/* Ts: the plain recursion, one call per node, as bench's serial-noinline. */
__attribute__((noinline)) static long fib_rec_noinline(int n) {
    if (n < 2)
        return n;
    long x = fib_rec_noinline(n - 1);
    long y = fib_rec_noinline(n - 2);
    __asm__ volatile("" : "+r"(y)); /* no loop made of the second call */
    return x + y;
}

/* The least a join can keep: the owner's deque index in memory (the first
 * three kinds), a word thieves would write, slots, and for JOIN_LINKED the
 * newest join frame instead of an index. */
typedef struct floor_slot {
    _Atomic(fn_t *) fn;
    _Atomic(void *) arg;
} floor_slot;

/* JOIN_LINKED: B waits in the joining function's own frame, linked to the
 * previous one. */
typedef struct floor_frame {
    floor_slot b;
    struct floor_frame *prev;
    _Atomic(struct floor_frame *) next; /* JOIN_LINKED_BOTH: the newer frame */
    _Atomic uint32_t taken;             /* what a pop reads after unlinking */
} floor_frame;

typedef struct floor_deque {
    _Atomic uint64_t shared; /* what a pop reads after lowering the index */
    _Atomic uint32_t bottom;
    floor_slot slot[64];
    _Atomic(floor_slot *) record[64];
    floor_frame *top;
} floor_deque;

static _Thread_local floor_deque *floor_tls;

/* What a fork publishes:
 *  JOIN_NONE    nothing (the job interface alone);
 *  JOIN_INDEX   bottom, raised and lowered (no slot);
 *  JOIN_SLOT    B's function and argument in slot[bottom];
 *  JOIN_RECORD  B in the joining frame, its address in record[bottom];
 *  JOIN_LINKED  B in the joining frame, linked from top: no index, so no
 *               store's address depends on a value loaded from memory;
 *  JOIN_LINKED_BOTH  the same, and the older frame links to the newer one
 *               (what a thief would follow): one store whose address is
 *               the loaded top. */
enum { JOIN_NONE, JOIN_INDEX, JOIN_SLOT, JOIN_RECORD, JOIN_LINKED, JOIN_LINKED_BOTH };

/* B's fork and join, by kind (how is a constant: each use folds to one). */
#define FORK_AND_JOIN(how, self_, a_, b_)                                                          \
    do {                                                                                           \
        floor_deque *d = floor_tls;                                                                \
        if (how == JOIN_LINKED || how == JOIN_LINKED_BOTH) {                                       \
            floor_frame fr;                                                                        \
            atomic_init(&fr.b.fn, self_);                                                          \
            atomic_init(&fr.b.arg, b_);                                                            \
            atomic_init(&fr.taken, 0);                                                             \
            fr.prev = d->top;                                                                      \
            if (how == JOIN_LINKED_BOTH && fr.prev)                                                \
                atomic_store_explicit(&fr.prev->next, &fr, memory_order_relaxed);                  \
            atomic_signal_fence(memory_order_seq_cst);                                             \
            d->top = &fr;                                                                          \
            self_(a_);                                                                             \
            d->top = fr.prev;                                                                      \
            atomic_signal_fence(memory_order_seq_cst);                                             \
            if (atomic_load_explicit(&fr.taken, memory_order_relaxed) != 0)                        \
                abort(); /* nobody takes anything here */                                          \
            break;                                                                                 \
        }                                                                                          \
        uint32_t i = atomic_load_explicit(&d->bottom, memory_order_relaxed);                       \
        floor_slot rec;                                                                            \
        if (how == JOIN_SLOT) {                                                                    \
            atomic_store_explicit(&d->slot[i & 63].fn, self_, memory_order_relaxed);               \
            atomic_store_explicit(&d->slot[i & 63].arg, b_, memory_order_relaxed);                 \
        } else if (how == JOIN_RECORD) {                                                           \
            atomic_init(&rec.fn, self_);                                                           \
            atomic_init(&rec.arg, b_);                                                             \
            atomic_store_explicit(&d->record[i & 63], &rec, memory_order_relaxed);                 \
        }                                                                                          \
        atomic_store_explicit(&d->bottom, i + 1, memory_order_release);                            \
        self_(a_);                                                                                 \
        atomic_store_explicit(&d->bottom, i, memory_order_relaxed);                                \
        atomic_signal_fence(memory_order_seq_cst);                                                 \
        bool taken = atomic_load_explicit(&d->shared, memory_order_relaxed) != 0;                  \
        if (how == JOIN_SLOT)                                                                      \
            taken |= atomic_load_explicit(&d->slot[i & 63].arg, memory_order_relaxed) != b_;       \
        else if (how == JOIN_RECORD)                                                               \
            taken |= atomic_load_explicit(&d->record[i & 63], memory_order_relaxed) != &rec;       \
        if (taken)                                                                                 \
            abort();                                                                               \
    } while (0)

#define FIB_INLINE(name, how)                                                                      \
    static void name(void *arg) {                                                                  \
        frame *f = arg;                                                                            \
        if (f->n < 2) {                                                                            \
            f->r = f->n;                                                                           \
            return;                                                                                \
        }                                                                                          \
        frame a = {f->n - 1, 0}, b = {f->n - 2, 0};                                                \
        if (how == JOIN_NONE)                                                                      \
            name(&a);                                                                              \
        else                                                                                       \
            FORK_AND_JOIN(how, name, &a, &b);                                                      \
        name(&b);                                                                                  \
        f->r = a.r + b.r;                                                                          \
    }

FIB_INLINE(fib_job_none, JOIN_NONE)
FIB_INLINE(fib_job_index, JOIN_INDEX)
FIB_INLINE(fib_job_slot, JOIN_SLOT)
FIB_INLINE(fib_job_record, JOIN_RECORD)
FIB_INLINE(fib_job_linked, JOIN_LINKED)
FIB_INLINE(fib_job_linked_both, JOIN_LINKED_BOTH)

static long fib_through(fn_t *job, int n) {
    static floor_deque d;
    floor_tls = &d;
    frame f = {n, 0};
    job(&f);
    return f.r;
}

/* The job fib_timed runs (time_fib times a function of n alone). */
static fn_t *timed_job;

static long fib_timed(int n) {
    return fib_through(timed_job, n);
}

static void inline_join_floor(void) {
    const struct {
        const char *name;
        fn_t *job;
    } joins[] = {{"interface", fib_job_none}, {"index", fib_job_index},
                 {"slot", fib_job_slot},      {"record", fib_job_record},
                 {"linked", fib_job_linked},  {"linked_both", fib_job_linked_both}};
    double ts = time_fib(fib_rec_noinline);
    for (size_t k = 0; k < sizeof joins / sizeof joins[0]; k++) {
        timed_job = joins[k].job;
        double t = time_fib(fib_timed);
        printf("{\"floor\":\"fib35_inline_join\",\"join\":\"%s\",\"ts_noinline_s\":%.4f,"
               "\"t1_s\":%.4f,\"t1_over_ts\":%.2f,\"ns_per_fork\":%.2f}\n",
               joins[k].name, ts, t, t / ts, (t - ts) / 14930351 * 1e9);
    }
}

static long fib_free(int n) {
    frame f = {n, 0};
    fib_job(&f);
    return f.r;
}

static long fib_serial(int n) {
    return fib_rec(n);
}

#ifdef __linux__
/* ---- wake: blocked threads, woken ------------------------------------- */

#define WAKES      200
#define CHAIN_WORK (100 * US)

/* Where the chain's threads report that their work is done. */
typedef struct done_box {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned count; /* under lock */
} done_box;

/* A thread blocked on a condition variable until its counter moves. */
typedef struct sleeper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    unsigned seq;         /* under lock: wake-ups posted */
    uint64_t posted_ns;   /* under lock: when the last one was */
    atomic_uint done;     /* wake-ups the sleeper has handled */
    atomic_int cpu;       /* where it ran after the last one */
    uint64_t latency_ns;  /* the last one's latency (read after done) */
    struct sleeper *next; /* the chain: woken by this one, or NULL */
    uint64_t work_ns;     /* spun after each wake-up */
    done_box *box;        /* told when that is done, or NULL */
} sleeper;

static void sleeper_init(sleeper *t, sleeper *next, uint64_t work_ns, done_box *box) {
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    t->seq = 0;
    t->posted_ns = 0;
    atomic_init(&t->done, 0);
    atomic_init(&t->cpu, -1);
    t->latency_ns = 0;
    t->next = next;
    t->work_ns = work_ns;
    t->box = box;
}

static void sleeper_post(sleeper *t) {
    pthread_mutex_lock(&t->lock);
    t->seq++;
    t->posted_ns = bench_now_ns();
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
}

/* Wait for wake-up `seq` (0: none, the stop signal). */
static void *sleeper_main(void *arg) {
    sleeper *t = arg;
    for (unsigned seen = 0;; seen++) {
        pthread_mutex_lock(&t->lock);
        while (t->seq == seen)
            pthread_cond_wait(&t->cond, &t->lock);
        t->latency_ns = bench_now_ns() - t->posted_ns;
        bool stop = t->seq == UINT32_MAX;
        pthread_mutex_unlock(&t->lock);
        if (stop)
            return NULL;
        atomic_store(&t->cpu, sched_getcpu());
        if (t->next)
            sleeper_post(t->next);
        bench_spin_ns(t->work_ns);
        atomic_store(&t->done, seen + 1); /* seq-cst: publishes latency_ns */
        if (t->box) {
            pthread_mutex_lock(&t->box->lock);
            t->box->count++;
            pthread_cond_signal(&t->box->cond);
            pthread_mutex_unlock(&t->box->lock);
        }
    }
}

static void sleeper_stop(sleeper *t, pthread_t th) {
    pthread_mutex_lock(&t->lock);
    t->seq = UINT32_MAX;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(th, NULL);
}

static void pin(pthread_t th, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(th, sizeof set, &set); /* best effort: a floor, not a test */
}

/* Median latency, us, of WAKES wake-ups of a thread on CPU 1 by this thread
 * spinning on CPU 0 for gap_ns before each. */
static double wake_latency_us(uint64_t gap_ns) {
    sleeper t;
    sleeper_init(&t, NULL, 0, NULL);
    pthread_t th;
    pthread_create(&th, NULL, sleeper_main, &t);
    pin(th, 1);
    pin(pthread_self(), 0);
    double lat[WAKES];
    for (unsigned i = 0; i < WAKES; i++) {
        bench_spin_ns(gap_ns);
        sleeper_post(&t);
        while (atomic_load(&t.done) != i + 1)
            ;
        lat[i] = 1e-3 * (double)t.latency_ns;
    }
    sleeper_stop(&t, th);
    bench_sort_doubles(lat, WAKES);
    return lat[WAKES / 2];
}

/* The chain after 5 ms gaps, unpinned but for this thread (CPU 0): the share
 * of rounds in which A and B ran on one CPU, and the median time from waking
 * A to both done. */
static void wake_chain(double *shared, double *pair_us) {
    done_box box = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    sleeper a, b;
    sleeper_init(&b, NULL, CHAIN_WORK, &box);
    sleeper_init(&a, &b, CHAIN_WORK, &box);
    pthread_t ta, tb;
    pthread_create(&tb, NULL, sleeper_main, &b);
    pthread_create(&ta, NULL, sleeper_main, &a);
    pin(pthread_self(), 0);
    double t[WAKES];
    unsigned same = 0;
    for (unsigned i = 0; i < WAKES; i++) {
        bench_spin_ns(5000 * US);
        uint64_t t0 = bench_now_ns();
        sleeper_post(&a);
        pthread_mutex_lock(&box.lock); /* blocks, as weft_run's caller does */
        while (box.count != 2 * (i + 1))
            pthread_cond_wait(&box.cond, &box.lock);
        pthread_mutex_unlock(&box.lock);
        t[i] = 1e-3 * (double)(bench_now_ns() - t0);
        same += atomic_load(&a.cpu) == atomic_load(&b.cpu);
    }
    sleeper_stop(&a, ta);
    sleeper_stop(&b, tb);
    bench_sort_doubles(t, WAKES);
    *shared = (double)same / WAKES;
    *pair_us = t[WAKES / 2];
}

static void wake_floor(void) {
    printf("{\"floor\":\"wake\",\"after_idle_50us_us\":%.1f,\"after_idle_500us_us\":%.1f,"
           "\"after_idle_5ms_us\":%.1f}\n",
           wake_latency_us(50 * US), wake_latency_us(500 * US), wake_latency_us(5000 * US));
    double shared, pair;
    wake_chain(&shared, &pair);
    printf("{\"floor\":\"wake_chain\",\"work_us\":%u,\"one_cpu_share\":%.3f,\"pair_us\":%.1f}\n",
           CHAIN_WORK / US, shared, pair);
}
#endif

int main(void) {
    printf("{\"floor\":\"sporadic\",\"period_us\":500,\"job_us\":20,"
           "\"cpu_per_wall_inline\":%.4f,\"cpu_per_wall_no_job\":%.4f}\n",
           sporadic_floor(JOB_NS), sporadic_floor(0));
    double ts = time_fib(fib_serial), tf = time_fib(fib_free);
    printf("{\"floor\":\"fib35\",\"serial_s\":%.4f,\"free_join_s\":%.4f,\"t1_over_ts\":%.2f}\n", ts,
           tf, tf / ts);
    inline_join_floor();
#ifdef __linux__
    wake_floor();
#endif
    return 0;
}
