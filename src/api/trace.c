/* SPDX-License-Identifier: MIT */
/* Timeline tracing: what every worker did, when, and who woke whom.
 *
 * While a pool traces, each worker appends an event to its own buffer when it
 * starts searching, running (a job, named for its group: named.c) or
 * sleeping (so its spans follow each other and never overlap, also across
 * nested waits), and a waker records a flow start whose id the woken worker
 * records when it runs again. Nothing is shared on a worker's recording path
 * but one read-mostly flag. A context or caller slot records the same into
 * its slot's buffer, when its thread enters the pool, runs a job, waits and
 * leaves; no thread of the pool owns that buffer, so it appends under the
 * tracing lock (trace_buf.c). weft_trace_stop turns the flag off and hands
 * every worker's buffer over on its owner's thread (weft_broadcast), and the
 * slots' under the lock, so no buffer is read while written, then writes
 * Chrome's trace-event JSON, which Perfetto and chrome://tracing open: one
 * track per worker, and per context or caller that took part, with
 * "running", "searching", "sleeping" and "waiting" slices (a running
 * slice named for its job), wake-ups as flow arrows, and a track for other
 * threads outside the pool that woke workers.
 *
 * weft_trace_start creates the file at once, so that a path that cannot be
 * written is reported by the call that names it, and keeps it open until
 * stop writes it.
 *
 * WEFT_TRACE=path in the environment traces every pool from its creation to
 * its destruction (the default pool: to exit); the second and later pools
 * write path.1, path.2, ... (env.c, weft__env_trace). A file that cannot be
 * created gets a warning on stderr (once per value), and the pool runs
 * untraced. Recording itself is trace_buf.c's.
 * tools/trace2svg.py draws a trace as an SVG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/worker.h"
#include "core/named.h"

#include "api/broadcast.h"
#include "os/env.h"
#include "os/error.h"

#define OUTSIDE_TID 100000 /* the track of threads outside the pool */

/* ---- Writing the JSON ---------------------------------------------------- */

static const char *state_name(uint32_t kind) {
    return kind == WEFT__TRACE_RUN      ? "running"
           : kind == WEFT__TRACE_SEARCH ? "searching"
           : kind == WEFT__TRACE_WAIT   ? "waiting"
                                        : "sleeping";
}

/* s as the contents of a JSON string. */
static void write_escaped(FILE *f, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* The slice of state event e, until `until`: its state is its category, its
 * name the job's (or the state's, for unnamed work). A LEAVE opens none. */
static void write_slice(FILE *f, const weft__trace_event *e, uint64_t until, unsigned tid,
                        uint64_t t0) {
    if (e->kind == WEFT__TRACE_LEAVE || until <= e->ns)
        return;
    fprintf(f, ",\n{\"name\":\"");
    write_escaped(f, e->name ? e->name : state_name(e->kind));
    fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%u}",
            state_name(e->kind), 1e-3 * (double)(e->ns - t0), 1e-3 * (double)(until - e->ns), tid);
}

static void write_flow(FILE *f, const weft__trace_event *e, unsigned tid, uint64_t t0) {
    bool start = e->kind == WEFT__TRACE_WAKE;
    fprintf(f,
            ",\n{\"name\":\"wake\",\"cat\":\"wake\",\"ph\":\"%s\",%s\"id\":%u,\"ts\":%.3f,"
            "\"pid\":1,\"tid\":%u}",
            start ? "s" : "f", start ? "" : "\"bp\":\"e\",", e->arg, 1e-3 * (double)(e->ns - t0),
            tid);
}

/* A flow needs a slice to start from: an outside wake-up is drawn as a
 * "submit" slice of 1 us, cut short at the next outside wake-up so that the
 * slices of a track never overlap (the outside buffer is appended under
 * trace.lock, so its times never decrease). */
static void write_submit(FILE *f, const weft__trace_event *e, const weft__trace_event *next,
                         uint64_t t0) {
    uint64_t dur = 1000;
    if (next && next->ns - e->ns < dur)
        dur = next->ns - e->ns;
    fprintf(f,
            ",\n{\"name\":\"submit\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%u}",
            1e-3 * (double)(e->ns - t0), 1e-3 * (double)dur, OUTSIDE_TID);
}

/* A track's name: what its thread is to the pool. */
static void write_track_name(FILE *f, const weft_pool *pool, unsigned tid) {
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":",
            tid);
    if (tid == OUTSIDE_TID)
        fprintf(f, "\"outside\"}}");
    else if (tid < pool->threads)
        fprintf(f, "\"worker %u\"}}", tid);
    else if (tid < pool->threads + pool->contexts)
        fprintf(f, "\"context %u\"}}", tid - pool->threads);
    else
        fprintf(f, "\"caller %u\"}}", tid - pool->threads - pool->contexts);
}

/* One thread's track: each state event opens a slice that the next closes. */
static void write_track(FILE *f, const weft_pool *pool, const weft__trace_buf *b, unsigned tid,
                        uint64_t end) {
    uint64_t t0 = pool->trace.started_ns;
    write_track_name(f, pool, tid);
    const weft__trace_event *open = NULL;
    for (size_t i = 0; i < b->n; i++) {
        const weft__trace_event *e = &b->ev[i];
        if (e->kind == WEFT__TRACE_WAKE || e->kind == WEFT__TRACE_WOKEN) {
            if (tid == OUTSIDE_TID)
                write_submit(f, e, i + 1 < b->n ? &b->ev[i + 1] : NULL, t0);
            write_flow(f, e, tid, t0);
            continue;
        }
        if (open)
            write_slice(f, open, e->ns, tid, t0);
        open = e;
    }
    if (open)
        write_slice(f, open, end, tid, t0);
}

/* Write the trace to the file start opened, and close it. 0, or the errno
 * of writing (EIO when the stream does not say which). */
static int write_json(weft_pool *pool, uint64_t end) {
    FILE *f = pool->trace.file;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"weft\"}}");
    for (unsigned i = 0; i < weft__pool_slots_all(pool); i++)
        if (i < pool->threads || pool->trace.collected[i].n) /* slots that took part */
            write_track(f, pool, &pool->trace.collected[i], i, end);
    write_track(f, pool, &pool->trace.outside, OUTSIDE_TID, end);
    fprintf(f, "\n]}\n");
    int err = fflush(f) != 0 ? errno : ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && !err)
        err = errno;
    return err;
}

/* ---- Start and stop ------------------------------------------------------- */

static void stop_drained(weft_pool *pool);

int weft_trace_start(weft_pool *pool, const char *path) {
    if (!path)
        return weft__error_set(EINVAL, "path is NULL");
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    weft__trace_buf *collected = calloc(weft__pool_slots_all(pool), sizeof *collected);
    if (!collected)
        return weft__error_set(ENOMEM, "out of memory for the trace buffers of %u workers",
                               pool->threads);
    /* Under stop_lock, the EBUSY check comes before the file is created, so
     * a second start cannot truncate a file some other path names. A stop
     * under way has its buffers to hand over first. */
    pthread_mutex_lock(&pool->trace.stop_lock);
    if (atomic_load_explicit(&pool->trace.on, memory_order_relaxed))
        err = weft__error_set(EBUSY, "the pool is already tracing");
    else if (pool->trace.stopping)
        err = weft__error_set(EBUSY, "a stop of the pool's trace is still writing its file");
    FILE *f = NULL;
    if (!err && (f = fopen(path, "w")) == NULL) /* ENOENT, EACCES, EISDIR, ENOTDIR, ... */
        err = weft__error_set_sys(errno, "cannot create the trace file \"%s\"", path);
    if (!err) {
        pthread_mutex_lock(&pool->trace.lock);
        pool->trace.file = f;
        pool->trace.collected = collected, collected = NULL;
        pool->trace.started_ns = weft__now_ns();
        pool->trace.stop_drained = stop_drained;
        /* Release: a worker that sees the flag sees the state above. */
        atomic_store_explicit(&pool->trace.on, true, memory_order_release);
        pthread_mutex_unlock(&pool->trace.lock);
    }
    pthread_mutex_unlock(&pool->trace.stop_lock);
    free(collected);
    return err;
}

/* On every worker (weft__broadcast_run): hand the buffer over on its own thread. */
static void collect(unsigned index, void *arg) {
    weft_pool *pool = arg;
    weft__worker *w = &pool->workers[index];
    pool->trace.collected[index] = w->stats.trace;
    w->stats.trace = (weft__trace_buf){0};
}

/* stop_lock is held for the changes of state only, never across the
 * broadcast: that wait may run other jobs of this thread, and one of them may
 * stop another pool's trace, whose broadcast may need a worker that waits for
 * this lock (two stops nested in opposite orders on two threads).
 *
 * A stop's first step: turn recording off. false if it was not on (never
 * started, or another stop turned it off); then there is nothing to finish. */
static bool stop_begin(weft_pool *pool) {
    pthread_mutex_lock(&pool->trace.stop_lock);
    /* Acquire: pairs with start's release store; its file and buffers. */
    bool on = atomic_load_explicit(&pool->trace.on, memory_order_acquire);
    if (on) {
        /* Relaxed: workers that still see it on record into their own
         * buffers, which the broadcast below hands over on their threads;
         * outside wakers look again under trace.lock (trace_buf.c). */
        atomic_store_explicit(&pool->trace.on, false, memory_order_relaxed);
        pool->trace.stopping = true;
    }
    pthread_mutex_unlock(&pool->trace.stop_lock);
    return on;
}

/* The second: collect the buffers, write the file. 0, or the errno of
 * writing it. */
static int stop_finish(weft_pool *pool) {
    weft__broadcast_run(pool, collect, pool); /* each worker, between two jobs */
    uint64_t end = weft__now_ns();
    pthread_mutex_lock(&pool->trace.lock);
    /* Contexts' and callers' buffers, which their holders append to under
     * this lock, and only while tracing is on (trace_buf.c). Not the
     * spares': a spare's thread alone touches its buffer, which it empties
     * whenever it parks (spare.c): spares are not in the trace. */
    for (unsigned i = pool->threads; i < pool->spares.first; i++) {
        pool->trace.collected[i] = pool->workers[i].stats.trace;
        pool->workers[i].stats.trace = (weft__trace_buf){0};
    }
    int err = write_json(pool, end);
    for (unsigned i = 0; i < weft__pool_slots_all(pool); i++)
        weft__trace_buf_free(&pool->trace.collected[i]);
    weft__trace_buf_free(&pool->trace.outside);
    free(pool->trace.collected);
    pool->trace.collected = NULL;
    pool->trace.file = NULL; /* closed by write_json */
    pthread_mutex_unlock(&pool->trace.lock);
    pthread_mutex_lock(&pool->trace.stop_lock);
    pool->trace.stopping = false; /* a start may create the next file now */
    pthread_mutex_unlock(&pool->trace.stop_lock);
    return err;
}

/* A stop is pending work of the pool (pending.h) until it has written the
 * file: a weft_pool_destroy started meanwhile waits for it, instead of
 * stopping the workers its broadcast needs or freeing what it writes. */
int weft_trace_stop(weft_pool *pool) {
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    if (!weft__pending_hold(&pool->pending))
        return weft__error_set(EINVAL, "the pool is not tracing: weft_pool_destroy has closed it "
                                       "and stopped its trace");
    if (!stop_begin(pool))
        err = weft__error_set(EINVAL, "the pool is not tracing (or another stop turned it off "
                                      "and is writing the file)");
    else if ((err = stop_finish(pool)) != 0)
        weft__error_set_sys(err, "writing the trace file");
    weft__pending_release(&pool->pending);
    return err;
}

/* For weft_pool_destroy: the file's error has no one to go to. */
static void stop_drained(weft_pool *pool) {
    if (stop_begin(pool))
        (void)stop_finish(pool);
}

/* ---- Names ---------------------------------------------------------------- */

const char *weft_trace_name(const char *name) {
    const char *outer = weft__trace_name_tls;
    weft__trace_name_tls = name;
    return outer;
}
