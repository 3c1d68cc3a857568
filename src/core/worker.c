/* SPDX-License-Identifier: MIT */
/* A worker's life, and how work reaches it.
 *
 * A worker thread waits at the start gate until every worker thread exists
 * (a failed pthread_create opens it with "abort": the threads exit and no
 * hook runs in a pool that is never returned), runs on_start, then waits for
 * its terminate latch like any participating wait
 * (weft__worker_wait_until_cold: own deque, steal from a random victim, the
 * injector; when nothing is found, ask the sleep module), then on_exit.
 * Jobs reach workers through their own deques (a worker's pushes, shared
 * when someone wants work: weft__worker_offer) or the injector (anyone
 * else: weft__pool_inject). The pool's lifecycle is pool.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/frame.h"
#include "core/private_work.h"
#include "core/current.h"
#include "core/priority.h"
#include "core/context.h"
#include "core/idle_env.h"
#include "core/latch_owner.h"

#include "core/task.h"
#include "idle/budget.h"
#include "os/error.h"
#include "os/futex.h"
#include "os/clock.h"
#include "os/thread.h"

/* ---- Finding work ------------------------------------------------------- */

static unsigned random_below(weft__worker *w, unsigned n) {
    /* xorshift64*: cheap, good enough to spread thieves over victims. */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return (unsigned)(((x * 0x2545f4914f6cdd1dull) >> 32) * n >> 32);
}

/* One sweep over the other workers' deques of priority *run_prio from a
 * random start; repeat while a steal lost a race, since that means work was
 * there. *run_prio becomes the priority to run the job at (a frame taken by
 * force has its own). */
static weft__job *steal_work(weft__worker *w, bool *more, weft_priority *run_prio) {
    weft_priority prio = *run_prio;
    weft_pool *pool = w->pool;
    /* Contexts, callers and spares are victims too. */
    weft__victims vs = weft__pool_victims(pool);
    unsigned n = vs.n;
    /* After a final check that saw private jobs, the first pass tries each
     * victim that shows nothing public by force: a barrier each, so retries
     * (lost races) do not. */
    bool force = w->forced.armed;
    for (bool retry = n > 1; retry; force = false) {
        retry = false;
        unsigned i = random_below(w, n);
        for (unsigned k = 0; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
            unsigned v = weft__victim_slot(&vs, i);
            if (v == w->index)
                continue;
            weft__deque *victim = &pool->workers[v].deques[prio];
            weft__job *job;
            weft__steal_result r = weft__deque_steal(victim, &job);
            if (r == WEFT__STEAL_OK) {
                *more = !weft__deque_public_empty(victim);
                weft__stat_add(&w->stats.steals, 1);
                return job;
            }
            if (r == WEFT__STEAL_EMPTY && prio == WEFT_PRIORITY_NORMAL)
                weft__frame_request(&pool->workers[v]); /* frames of either priority */
            /* Private work whose owner has not shared it (private_work.c). */
            if (r == WEFT__STEAL_EMPTY && force &&
                (r = weft__private_take(w, &pool->workers[v], prio, &job, more, run_prio)) ==
                    WEFT__STEAL_OK)
                return job;
            retry |= r == WEFT__STEAL_RETRY;
        }
    }
    return NULL;
}

/* Own deque and steal (if `deques`), then the injector: at one priority,
 * *prio, which becomes the priority to run the job at. */
static weft__job *find_work_at(weft__worker *w, bool *more, weft_priority *run_prio, bool deques) {
    weft_priority prio = *run_prio;
    if (deques) {
        weft__job *job = weft__worker_pop_prio(w, prio);
        /* Our own private frames before other workers' jobs: a wait inside
         * A may be for one of them (frame.c, weft__frame_publish_own). */
        if (!job && weft__frame_publish_own(w))
            job = weft__worker_pop_prio(w, prio);
        if (!job)
            job = steal_work(w, more, run_prio);
        if (job)
            return job;
    }
    weft__injector *q = &w->pool->injectors[prio];
    weft__job *job = weft__injector_pop(q);
    if (job) {
        *more = !weft__injector_is_empty(q);
        weft__stat_add(&w->stats.injected, 1);
    }
    return job;
}

/* A broadcast's function belongs to no group, whatever job w interrupted. */
static void run_broadcasts(weft__worker *w) {
    weft__group *outer = weft__worker_enter(w, NULL);
    weft_task *outer_task = w->task; /* the broadcast's function is no job's part */
    w->task = NULL;
    weft__broadcast_run_pending(&w->pool->broadcasts, w->index, &w->broadcast_seen);
    w->task = outer_task;
    weft__worker_leave(w, outer);
}

/* High-priority work anywhere comes before normal work (the context-based design); *prio
 * tells which it found. The high deques are searched only once some job was
 * pushed on one (weft__pool_note_high): a pool that never sees high-priority
 * work pays one load for the option, not a second steal sweep. */
static weft__job *find_work(weft__worker *w, bool *more, weft_priority *prio) {
    *more = false;
    if (WEFT__UNLIKELY(weft__worker_broadcast_pending(w)))
        run_broadcasts(w);
    /* Relaxed: see weft__pool_note_high. */
    bool high = atomic_load_explicit(&w->pool->high_pushed, memory_order_relaxed);
    for (int p = WEFT_PRIORITY_HIGH; p >= WEFT_PRIORITY_NORMAL; p--) {
        bool deques = p == WEFT_PRIORITY_NORMAL || high;
        weft_priority run = (weft_priority)p;
        weft__job *job = find_work_at(w, more, &run, deques);
        if (job) {
            *prio = run;
            return job;
        }
    }
    return NULL;
}

/* ---- Normal work gives way to high-priority work --------------------------
 * A job runs to its end (weft preempts nothing), but a loop or a reduction
 * is many jobs' worth of normal work that runs as joins inside whichever
 * job took it: a stolen half of a loop of 400 pieces of 1 ms ran for 150 ms
 * as one job while a high-priority job waited (weft.h promises one piece).
 * So a loop looks between its pieces and its leaves' steps (loop.c) and,
 * when high-priority work waits, runs one job of it there, nested: the
 * piece's rest forked beside it, where the high job's own waits and any
 * thief can take it (a wait never depends on another thread for what the
 * waiting thread owns: frame.c, weft__frame_publish_own).
 *
 * Only a pool's own workers give way, and only from normal work: callers
 * and contexts run their own calls' work, and high work never waits for
 * high. Scopes, graphs and detached jobs need no look: each of their jobs
 * returns to the worker's search, which takes high work first.
 *
 * The cost where nothing waits: a relaxed load of the pool's sticky
 * high_seen, false in a pool that never saw high work; once it is set, the
 * look reads the high injector's and every high deque's ends, as a woken
 * worker's look does (weft__pool_high_queued). */

bool weft__pool_high_queued(weft_pool *pool) {
    if (!weft__injector_is_empty(&pool->injectors[WEFT_PRIORITY_HIGH]))
        return true;
    /* Relaxed: see weft__pool_note_high. */
    if (!atomic_load_explicit(&pool->high_pushed, memory_order_relaxed))
        return false;
    weft__victims vs = weft__pool_victims(pool);
    for (unsigned k = 0; k < vs.n; k++)
        if (!weft__deque_public_empty(
                &pool->workers[weft__victim_slot(&vs, k)].deques[WEFT_PRIORITY_HIGH]))
            return true;
    return false;
}

bool weft__worker_high_waits(weft__worker *w) {
    if (w->is_context || w->h.prio != WEFT_PRIORITY_NORMAL)
        return false;
    weft__deque *own = &w->deques[WEFT_PRIORITY_HIGH];
    return weft__deque_private_count(own) > 0 || weft__pool_high_queued(w->pool);
}

void weft__worker_give_way(weft__worker *w) {
    /* The caller has looked (weft__worker_should_give_way): no second
     * sweep here; the takes below find nothing if another thread was first.
     * `more` goes unused: no wake-up either, since every high job's
     * submission already woke a worker for it (weft__pool_inject, a push's
     * share), and this one is not idle. */
    bool more = false;
    weft_priority prio = WEFT_PRIORITY_HIGH;
    /* Our own first, then the other workers', then the injector's, as a
     * search takes them. No forced steal (w->forced.armed is false while w
     * runs a job): high jobs on deques are public or their owner's to run. */
    weft__job *job = weft__worker_pop_prio(w, prio);
    if (!job)
        job = steal_work(w, &more, &prio);
    if (!job && (job = weft__injector_pop(&w->pool->injectors[prio])) != NULL)
        weft__stat_add(&w->stats.injected, 1);
    if (!job)
        return;
    weft__stat_add(&w->stats.jobs, 1);
    weft__worker_call_at(w, prio, weft__job_call, job);
    weft__worker_trace_run(w); /* back to the piece that gave way */
}

void weft__worker_wait_until_cold(weft__worker *w, weft__latch *latch) {
    weft__sleep *s = &w->pool->sleep;
    weft__idle idle;
    weft__worker_trace(w, WEFT__TRACE_SEARCH, NULL);
    weft__sleep_start_looking(s, &idle, w->index, &w->stats);
    while (!weft__latch_probe(latch)) {
        bool more;
        weft_priority prio;
        uint32_t answers;
        bool forced = weft__forced_sweep_begin(&w->forced, w->pool, &answers);
        weft__job *job = find_work(w, &more, &prio);
        weft__forced_sweep_end(&w->forced, forced, answers, job != NULL,
                               weft__stat_get(&w->stats.sleeps));
        if (job) {
            weft__sleep_work_found(s, &idle, more);
            weft__stat_add(&w->stats.jobs, 1);
            /* The job records its running slice, named for its group, once
             * it has entered that group (run_and_set, the job kinds). */
            weft__serving outer = weft__worker_serve(w, NULL, 0); /* named in run_and_set */
            weft__worker_call_at(w, prio, weft__job_call, job);
            weft__worker_serve_end(w, outer);
            weft__worker_trace(w, WEFT__TRACE_SEARCH, NULL);
            weft__sleep_start_looking(s, &idle, w->index, &w->stats);
            weft__budget_between_jobs(latch); /* counted searching, if it waits */
        } else {
            weft__sleep_no_work_found(s, &idle, latch);
        }
    }
    weft__sleep_stop_looking(s, &idle);
    weft__worker_trace_run(w); /* back to the waiting job */
}

void weft__worker_trace_cold(weft__worker *w, weft__trace_kind kind, const char *name) {
    if (weft__spares_has(&w->pool->spares, w->index))
        return;        /* a spare records nothing: no stop collects its buffer (weft.h) */
    if (w->is_context) /* no thread of the pool owns its buffer: the stop takes it */
        weft__trace_shared(&w->pool->trace, &w->stats.trace, kind, name);
    else
        weft__trace_append(&w->stats.trace, kind, 0, name);
}

void weft__worker_run_and_set(weft_fn *fn, void *arg, weft__group *group, weft__latch *done) {
    weft__worker *w = weft__current_worker(); /* jobs run on workers and contexts */
    weft__group *outer = weft__worker_enter(w, group);
    weft__worker_trace_run(w);
    /* Named only if a context waits for it (nobody else looks, and a share
     * then reads no other thread's latch: weft__context_nudge). fn's frames
     * lie below ours: stacks grow down on weft's targets. */
    weft__latch *awaited = weft__latch_owned_by_context(done, w->pool) ? done : NULL;
    weft__serving served = weft__worker_serve(w, awaited, (uintptr_t)__builtin_frame_address(0));
    weft__task_call(w, fn, arg);
    weft__worker_serve_end(w, served);
    weft__worker_leave(w, outer);
    weft__latch_set(done); /* last: its owner may return, and free it, after this */
}

void weft__stack_job_run(weft__stack_job *s, weft__group *group) {
    weft__worker_run_and_set(s->fn, s->arg, group, &s->done);
}

void weft__worker_push_first(weft__worker *w, weft__deque *d) {
    uint64_t ts = weft__deque_episode_ts(d);
    /* Nothing public (a thief then takes the job without a barrier), or
     * someone could take it now: share, and no episode begins. */
    bool share = weft__deque_top(ts) == weft__deque_split(ts) || weft__worker_wanted(w, d);
    if (!share) {
        /* The episode's fence (deque.c): our store of bottom, then the
         * counters; a sleeper's count, then its SleepFence, then its look at
         * bottom. Only here, where the job stays private. */
        weft__fence_seq_cst();
        share = weft__worker_wanted(w, d);
    }
    if (share)
        weft__worker_offer(w, d);
}

void weft__worker_offer(weft__worker *w, weft__deque *d) {
    weft__phase_new_work(&w->pool->phase);
    bool was_empty = weft__deque_public_empty(d);
    unsigned n = weft__deque_share(d);
    if (n) { /* n jobs posted at once may wake up to n sleepers (Rayon's sleep RFC) */
        weft__sleep_new_jobs_cold(&w->pool->sleep, n, was_empty);
        weft__context_nudge(w); /* a context waiting for our job may take these back */
    }
}

/* ---- Worker threads ----------------------------------------------------- */

/* Free a worker's (or context's) recycled heap jobs. */
void weft__worker_free_jobs(weft__worker *w) {
    while (w->free_jobs) {
        weft__heap_job *h = w->free_jobs;
        w->free_jobs = (weft__heap_job *)h->job.next;
        free(h);
    }
    w->free_count = 0;
}

/* Wait until the creator opens the start gate; false: the pool is abandoned. */
static bool pass_start_gate(weft_pool *pool) {
    uint32_t s;
    /* Acquire: pairs with open_start_gate's release; the pool is built. */
    while ((s = atomic_load_explicit(&pool->start, memory_order_acquire)) == WEFT__START_GATED)
        weft__os_wait(&pool->start, WEFT__START_GATED);
    return s == WEFT__START_GO;
}

static void open_start_gate(weft_pool *pool, uint32_t how) {
    /* Release: pairs with pass_start_gate's acquire. */
    atomic_store_explicit(&pool->start, how, memory_order_release);
    weft__os_wake_all(&pool->start);
}

static void *worker_main(void *arg) {
    weft__worker *w = arg;
    weft_pool *pool = w->pool;
    if (!pass_start_gate(pool))
        return NULL;
    weft__set_current_worker(w);
    char name[32];
    snprintf(name, sizeof name, "%s-%u", pool->name, w->index);
    weft__os_set_thread_name(name);
    weft__sleep_thread_start(&pool->sleep); /* OS policy first: on_start may choose another */
    if (pool->on_start)
        pool->on_start(w->index, pool->user);
    weft__count_latch_decrement(&pool->started);
    if (pool->budgeted)
        weft__budget_enter(&w->terminate, &pool->budget_waiters);
    weft__worker_wait_until(w, &w->terminate);
    if (pool->on_exit)
        pool->on_exit(w->index, pool->user);
    weft__budget_exit();
    weft__worker_free_jobs(w);
    weft__trace_buf_free(&w->stats.trace); /* events after a stop */
    weft__set_current_worker(NULL);
    return NULL;
}

void weft__workers_stop(weft_pool *pool, unsigned started) {
    for (unsigned i = 0; i < started; i++)
        weft__latch_set(&pool->workers[i].terminate);
    if (pool->budgeted)
        weft__budget_pool_remove();
    /* A job of another pool that destroys this one blocks in the joins: it
     * gives its budget slot back meanwhile, for the stopping workers'
     * on_exit may wait for work that needs it (budget.c, liveness). */
    weft__budget_block();
    for (unsigned i = 0; i < started; i++)
        pthread_join(pool->workers[i].thread, NULL);
    weft__budget_resume();
}

/* Create every worker thread, then let them run on_start and wait until all
 * have: on failure, the threads created so far exit without running a hook. */
int weft__workers_start(weft_pool *pool) {
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (err)
        return weft__error_set_sys(err, "pthread_attr_init");
    err = pthread_attr_setstacksize(&attr, pool->stack_size);
    if (err)
        weft__error_set_sys(err, "config.stack_size %zu: pthread_attr_setstacksize",
                            pool->stack_size);
    unsigned i = 0;
    for (; i < pool->threads && !err; i++) {
        pool->workers[i].stats.started_ns = weft__now_ns(); /* before the thread: I */
        err = pthread_create(&pool->workers[i].thread, &attr, worker_main, &pool->workers[i]);
        if (err) {
            weft__error_set_sys(err, "could not create the thread of worker %u (of %u)", i,
                                pool->threads);
            break;
        }
    }
    pthread_attr_destroy(&attr);
    if (err) {
        open_start_gate(pool, WEFT__START_ABORT);
        for (unsigned k = 0; k < i; k++)
            pthread_join(pool->workers[k].thread, NULL);
        return err == EPERM ? EAGAIN : err;
    }
    weft__count_latch_init(&pool->started, pool->threads);
    weft__latch_init_owned(&pool->started.latch, NULL, WEFT__LATCH_OUTSIDE); /* budget_block_on */
    if (pool->budgeted)
        weft__budget_pool_add(pool->cpus);
    open_start_gate(pool, WEFT__START_GO);
    weft__budget_block_on(&pool->started.latch);
    return 0;
}
