/* SPDX-License-Identifier: MIT */
/* libweft-alpi: the ALPI interface (weft/alpi.h) over weft's public API.
 *
 * Each call checks its arguments, answers ALPI's code for what it rejects,
 * then makes the weft call that does the work: a task is a weft_task, block
 * and unblock are weft_task_block/unblock, a timed wait is a sleep inside a
 * blocking region, events are weft_task_events_increase/decrease, a spawn is
 * weft_spawn. Only weft.h is used, so the library follows weft's ABI line
 * through the shared libweft and needs nothing of its internals.
 *
 * Two things weft does not answer are kept here: the events outstanding
 * that ALPI asks about (alpi_task_events_test; weft only takes increases
 * and decreases), counted per task for the events made through this
 * interface; and a spawned task's completion callback, run after a
 * weft_run of the body, which returns once the body's events are done. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getcpu, SCHED_BATCH */
#endif
#include <sched.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft.h>

#include "alpi.h"

/* ---- Errors, versions, information ---------------------------------------- */

ALPI_API const char *alpi_error_string(alpi_error_t error) {
    switch (error) {
    case ALPI_SUCCESS:
        return "success";
    case ALPI_ERR_VERSION:
        return "the requested ALPI version is not implemented by weft";
    case ALPI_ERR_NOT_INITIALIZED:
        return "weft has no pool to run the task in";
    case ALPI_ERR_PARAMETER:
        return "an argument is NULL, unknown or out of range";
    case ALPI_ERR_OUT_OF_MEMORY:
        return "out of memory";
    case ALPI_ERR_OUTSIDE_TASK:
        return "the call needs a running weft job";
    case ALPI_ERR_UNKNOWN:
        return "an unexpected error in weft";
    case ALPI_ERR_FEATURE_UNKNOWN:
        return "an optional ALPI feature weft does not provide";
    default:
        return "not an ALPI error code";
    }
}

/* What weft's errno values mean to an ALPI caller. The pool-less ones
 * (the default pool could not be created, a closed pool; ECHILD, a
 * parent's pool in a fork child, cannot come from the NULL pool this file
 * passes, and maps the same for completeness) say the runtime cannot take
 * work: NOT_INITIALIZED. */
static int from_errno(int err) {
    switch (err) {
    case 0:
        return ALPI_SUCCESS;
    case EINVAL:
    case EOVERFLOW:
        return ALPI_ERR_PARAMETER;
    case ENOMEM:
        return ALPI_ERR_OUT_OF_MEMORY;
    case EAGAIN:
    case ESHUTDOWN:
    case ECHILD:
        return ALPI_ERR_NOT_INITIALIZED;
    default:
        return ALPI_ERR_UNKNOWN;
    }
}

ALPI_API int alpi_info_get(alpi_info_t query, char *buffer, size_t max_length, int *length) {
    const char *text;
    switch (query) {
    case ALPI_INFO_RUNTIME_NAME:
    case ALPI_INFO_RUNTIME_VENDOR: /* weft has no vendor apart from itself */
        text = "weft";
        break;
    case ALPI_INFO_VERSION:
        text = weft_version();
        break;
    default:
        return ALPI_ERR_PARAMETER;
    }
    if (!buffer || max_length == 0)
        return ALPI_ERR_PARAMETER;
    size_t n = strlen(text);
    if (n > max_length - 1)
        n = max_length - 1;
    memcpy(buffer, text, n);
    buffer[n] = '\0';
    if (length)
        *length = (int)n;
    return ALPI_SUCCESS;
}

#define FEATURES_PROVIDED (ALPI_FEATURE_BLOCKING | ALPI_FEATURE_EVENTS | ALPI_FEATURE_RESOURCES)

ALPI_API int alpi_feature_check(int feature_bitmask) {
    return (feature_bitmask & ~FEATURES_PROVIDED) ? ALPI_ERR_FEATURE_UNKNOWN : ALPI_SUCCESS;
}

/* Minor versions only add calls: a caller of 1.0 or 1.1 runs on 1.2. */
ALPI_API int alpi_version_check(int major, int minor) {
    if (major != ALPI_VERSION_MAJOR || minor < 0 || minor > ALPI_VERSION_MINOR)
        return ALPI_ERR_VERSION;
    return ALPI_SUCCESS;
}

ALPI_API int alpi_version_get(int *major, int *minor) {
    if (!major || !minor)
        return ALPI_ERR_PARAMETER;
    *major = ALPI_VERSION_MAJOR;
    *minor = ALPI_VERSION_MINOR;
    return ALPI_SUCCESS;
}

/* ---- Tasks: self, block, unblock, timed wait ------------------------------ */

ALPI_API int alpi_task_self(struct alpi_task **task) {
    if (!task)
        return ALPI_ERR_PARAMETER;
    *task = (struct alpi_task *)weft_task_self();
    return ALPI_SUCCESS;
}

/* weft_task_block suspends the calling job; a handle of another job would
 * have it suspend the wrong one, so that is refused instead. */
ALPI_API int alpi_task_block(struct alpi_task *task) {
    if (!task)
        return ALPI_ERR_PARAMETER;
    weft_task *self = weft_task_self();
    if (!self)
        return ALPI_ERR_OUTSIDE_TASK;
    if ((weft_task *)task != self)
        return ALPI_ERR_PARAMETER;
    return from_errno(weft_task_block());
}

ALPI_API int alpi_task_unblock(struct alpi_task *task) {
    if (!task)
        return ALPI_ERR_PARAMETER;
    return from_errno(weft_task_unblock((weft_task *)task));
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sleep until the monotonic clock reaches deadline_ns: an absolute deadline,
 * so that a signal's interruption resumes the same wait instead of adding
 * the time already slept again. */
static void sleep_until(uint64_t deadline_ns) {
    struct timespec until = {(time_t)(deadline_ns / 1000000000u),
                             (long)(deadline_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
}

/* weft's workers run SCHED_BATCH (weft_pool_create): a batch thread that
 * wakes does not preempt the thread running on its CPU, it waits for that
 * thread's time slice to end. That suits a worker woken for queued work;
 * it does not suit a timed wait, whose caller wants to run when the time is
 * up. TAMPI's polling loop is one: a wait of 100 microseconds each turn,
 * then the MPI progress that resumes other tasks. On a CPU busy with the
 * pool's jobs each turn took a time slice, milliseconds, and every MPI
 * call as many turns. So the thread waits as an ordinary one (SCHED_OTHER,
 * the policy weft's workers switched from) and is a batch thread again
 * after. Returns the policy to restore, or -1 for none to restore. */
static int wake_as_ordinary_thread(struct sched_param *param) {
#if defined(SCHED_BATCH)
    int policy;
    if (pthread_getschedparam(pthread_self(), &policy, param) == 0 && policy == SCHED_BATCH &&
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &(struct sched_param){0}) == 0)
        return policy;
#else
    (void)param;
#endif
    return -1;
}

/* A timed wait cannot be cut short (ALPI allows no unblock of it), so it is
 * a plain sleep; inside a blocking region when the thread runs a job, so
 * that the job's thread is not the pool's thread for that long. A zero wait
 * skips the region: it would call a spare for nothing. */
ALPI_API int alpi_task_waitfor_ns(uint64_t target_ns, uint64_t *actual_ns) {
    uint64_t start = now_ns();
    if (target_ns > 0) {
        bool region = weft_task_self() != NULL && weft_blocking_begin() == 0;
        struct sched_param param;
        int policy = wake_as_ordinary_thread(&param);
        sleep_until(start + target_ns);
        if (policy >= 0)
            pthread_setschedparam(pthread_self(), policy, &param);
        if (region)
            weft_blocking_end();
    }
    if (actual_ns)
        *actual_ns = now_ns() - start;
    return ALPI_SUCCESS;
}

/* ---- Events ------------------------------------------------------------------
 * weft counts a job's events but does not say how many are outstanding;
 * alpi_task_events_test needs to know whether any are. So this file keeps
 * its own count for each task that has events made through ALPI, in a hash
 * table of locked buckets: a task is in it exactly while that count is
 * above zero, so an entry never outlives its task (a task completes only
 * once its count is zero) and a task record reused at the same address
 * starts without one.
 *
 * Order against weft's count: an increase is made in weft first, then
 * counted here; a decrease is checked and taken here first, then made in
 * weft, whose last decrease may complete the task and end the handle's
 * life. Both under the bucket's lock, so that two decreases of one task
 * cannot both pass the check for the same events. */

/* Buckets: enough that the tasks with events outstanding at once (TAMPI:
 * the tasks with non-blocking operations in flight) rarely share a lock. */
#define EVENT_BUCKETS 64

typedef struct event_count {
    weft_task *task;
    uint64_t outstanding; /* > 0 while listed */
    struct event_count *next;
} event_count;

static struct event_bucket {
    pthread_mutex_t lock;
    event_count *head; /* L: lock */
} event_buckets[EVENT_BUCKETS];
static pthread_once_t event_buckets_once = PTHREAD_ONCE_INIT;

static void event_buckets_init(void) {
    for (int i = 0; i < EVENT_BUCKETS; i++) {
        pthread_mutex_init(&event_buckets[i].lock, NULL);
        event_buckets[i].head = NULL;
    }
}

/* Task records are aligned structures on job stacks: the low bits say
 * nothing, so they are shifted out and higher ones folded in. */
static struct event_bucket *bucket_of(weft_task *task) {
    uintptr_t h = (uintptr_t)task;
    h = (h >> 4) ^ (h >> 10) ^ (h >> 16);
    pthread_once(&event_buckets_once, event_buckets_init);
    return &event_buckets[h % EVENT_BUCKETS];
}

/* The entry's link for task in b (L: b->lock), or the NULL link at the end. */
static event_count **find_event_count(struct event_bucket *b, weft_task *task) {
    event_count **at = &b->head;
    while (*at && (*at)->task != task)
        at = &(*at)->next;
    return at;
}

ALPI_API int alpi_task_events_increase(struct alpi_task *task, uint64_t increment) {
    if (!task)
        return ALPI_ERR_PARAMETER;
    if (!weft_task_self())
        return ALPI_ERR_OUTSIDE_TASK;
    if (increment == 0)
        return ALPI_SUCCESS;
    if (increment > UINT_MAX) /* weft keeps at most UINT32_MAX outstanding */
        return ALPI_ERR_PARAMETER;
    weft_task *t = (weft_task *)task;
    struct event_bucket *b = bucket_of(t);
    pthread_mutex_lock(&b->lock);
    event_count **at = find_event_count(b, t);
    if (!*at && !(*at = calloc(1, sizeof **at))) {
        pthread_mutex_unlock(&b->lock);
        return ALPI_ERR_OUT_OF_MEMORY;
    }
    int err = weft_task_events_increase(t, (unsigned)increment);
    if (err == 0) {
        (*at)->task = t;
        (*at)->outstanding += increment;
    } else if ((*at)->outstanding == 0) { /* the entry made above: not needed */
        free(*at);
        *at = NULL;
    }
    pthread_mutex_unlock(&b->lock);
    return from_errno(err);
}

ALPI_API int alpi_task_events_test(struct alpi_task *task, uint64_t *has_events) {
    if (!task || !has_events)
        return ALPI_ERR_PARAMETER;
    if (!weft_task_self())
        return ALPI_ERR_OUTSIDE_TASK;
    struct event_bucket *b = bucket_of((weft_task *)task);
    pthread_mutex_lock(&b->lock);
    *has_events = *find_event_count(b, (weft_task *)task) != NULL;
    pthread_mutex_unlock(&b->lock);
    return ALPI_SUCCESS;
}

ALPI_API int alpi_task_events_decrease(struct alpi_task *task, uint64_t decrement) {
    if (!task)
        return ALPI_ERR_PARAMETER;
    if (decrement == 0)
        return ALPI_SUCCESS;
    weft_task *t = (weft_task *)task;
    struct event_bucket *b = bucket_of(t);
    pthread_mutex_lock(&b->lock);
    event_count **at = find_event_count(b, t);
    if (!*at || (*at)->outstanding < decrement) {
        pthread_mutex_unlock(&b->lock);
        return ALPI_ERR_PARAMETER;
    }
    (*at)->outstanding -= decrement;
    if ((*at)->outstanding == 0) {
        event_count *gone = *at;
        *at = gone->next;
        free(gone);
    }
    /* Cannot fail: this file made every event it takes back (the check
     * above), and decrement <= outstanding <= UINT32_MAX. */
    int err = weft_task_events_decrease(t, (unsigned)decrement);
    pthread_mutex_unlock(&b->lock);
    return from_errno(err);
}

/* ---- Attributes: weft has none, so an attribute object is only a token ---- */

struct alpi_attr {
    unsigned char reserved; /* no attribute yet; C has no empty struct */
};

ALPI_API int alpi_attr_create(struct alpi_attr **attr) {
    if (!attr)
        return ALPI_ERR_PARAMETER;
    struct alpi_attr *a = malloc(sizeof *a);
    if (!a)
        return ALPI_ERR_OUT_OF_MEMORY;
    alpi_attr_init(a);
    *attr = a;
    return ALPI_SUCCESS;
}

ALPI_API int alpi_attr_destroy(struct alpi_attr *attr) {
    if (!attr)
        return ALPI_ERR_PARAMETER;
    free(attr);
    return ALPI_SUCCESS;
}

ALPI_API int alpi_attr_init(struct alpi_attr *attr) {
    if (!attr)
        return ALPI_ERR_PARAMETER;
    attr->reserved = 0;
    return ALPI_SUCCESS;
}

ALPI_API int alpi_attr_size(uint64_t *attr_size) {
    if (!attr_size)
        return ALPI_ERR_PARAMETER;
    *attr_size = sizeof(struct alpi_attr);
    return ALPI_SUCCESS;
}

/* ---- Spawn ------------------------------------------------------------------ */

typedef struct spawned {
    void (*body)(void *);
    void *body_args;
    void (*completed)(void *);
    void *completed_args;
} spawned;

static void run_body(void *arg) {
    spawned *s = arg;
    s->body(s->body_args);
}

/* The detached job. ALPI's callback comes when the task has completed, its
 * events included, but nothing waits for a detached job's events; the body
 * runs as a weft_run job of its own instead (on a worker, at once, on this
 * thread), and weft_run returns only once that job's events are done. */
static void run_spawned(void *arg) {
    spawned *s = arg;
    weft_run(NULL, run_body, s);
    s->completed(s->completed_args);
    free(s);
}

ALPI_API int alpi_task_spawn(void (*body)(void *), void *body_args,
                             void (*completion_callback)(void *), void *completion_args,
                             const char *label, const struct alpi_attr *attr) {
    (void)label;
    (void)attr;
    if (!body || !completion_callback)
        return ALPI_ERR_PARAMETER;
    spawned *s = malloc(sizeof *s);
    if (!s)
        return ALPI_ERR_OUT_OF_MEMORY;
    *s = (spawned){body, body_args, completion_callback, completion_args};
    int err = weft_spawn(NULL, run_spawned, s);
    if (err)
        free(s);
    return from_errno(err);
}

/* ---- CPUs --------------------------------------------------------------------- */

ALPI_API int alpi_cpu_count(uint64_t *count) {
    if (!count)
        return ALPI_ERR_PARAMETER;
    *count = weft_pool_slots(NULL);
    return ALPI_SUCCESS;
}

/* The calling task's slot in *slot: the rule both CPU ids share (a task,
 * on a thread of a pool), nothing written otherwise. */
static int task_slot(uint64_t *slot) {
    if (!slot)
        return ALPI_ERR_PARAMETER;
    int index = weft_thread_index();
    if (!weft_task_self() || index < 0)
        return ALPI_ERR_OUTSIDE_TASK;
    *slot = (uint64_t)index;
    return ALPI_SUCCESS;
}

ALPI_API int alpi_cpu_logical_id(uint64_t *logical_id) {
    return task_slot(logical_id);
}

ALPI_API int alpi_cpu_system_id(uint64_t *system_id) {
    int err = task_slot(system_id);
#if defined(__linux__)
    int cpu = err == ALPI_SUCCESS ? sched_getcpu() : -1;
    if (cpu >= 0) /* else the slot stands in */
        *system_id = (uint64_t)cpu;
#endif
    return err;
}

/* ---- Suspension: not provided ----------------------------------------------- */

ALPI_API int alpi_task_suspend_mode_set(struct alpi_task *task, alpi_suspend_mode_t suspend_mode,
                                        uint64_t args) {
    (void)task;
    (void)suspend_mode;
    (void)args;
    return ALPI_ERR_FEATURE_UNKNOWN;
}

ALPI_API int alpi_task_suspend(struct alpi_task *task) {
    (void)task;
    return ALPI_ERR_FEATURE_UNKNOWN;
}
