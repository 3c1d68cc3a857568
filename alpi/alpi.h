/* SPDX-License-Identifier: MIT */
/* ALPI, the tasking interface that Task-Aware MPI (TAMPI) calls, as
 * libweft-alpi implements it over weft's jobs (alpi/README.md).
 *
 * The names, signatures and numeric values below are the interface's,
 * version 1.2: a library that looks the functions up by name (TAMPI does, with
 * dlsym) finds these and calls them as it would any other runtime's. The
 * comments say what weft does for each call. Installed as <weft/alpi.h>, so
 * that it never shadows another runtime's alpi.h in the same prefix.
 *
 * A task is a weft job (weft.h, "Jobs that wait"): a job of a weft_run,
 * scope, loop, join half or spawn, on any pool. The calls that count CPUs
 * and name the calling thread's CPU answer for the pool of the calling
 * thread (NULL in weft.h's sense), which for a thread outside every pool is
 * the default pool.
 *
 * Every call returns 0 (ALPI_SUCCESS) or one of alpi_error_t's codes; none
 * sets errno, prints or exits. Any thread may call any function except where
 * it says "inside a task". */
#ifndef WEFT_ALPI_H
#define WEFT_ALPI_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ALPI_API __attribute__((visibility("default")))
#else
#define ALPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The interface version implemented: a caller built for 1.x with x <= 2 works. */
#define ALPI_VERSION_MAJOR 1
#define ALPI_VERSION_MINOR 2

/* Optional parts of the interface, for alpi_feature_check. */
#define ALPI_FEATURE_BLOCKING  (1 << 0) /* alpi_task_block/unblock: supported */
#define ALPI_FEATURE_EVENTS    (1 << 1) /* alpi_task_events_*: supported */
#define ALPI_FEATURE_RESOURCES (1 << 2) /* alpi_cpu_*: supported */
#define ALPI_FEATURE_SUSPEND   (1 << 3) /* alpi_task_suspend*: not supported */

/* A task handle: a weft_task of weft.h, never dereferenced by the caller. */
struct alpi_task;
/* Spawn attributes; weft has none to set, so the object only exists. */
struct alpi_attr;

typedef enum {
    ALPI_SUCCESS = 0,
    ALPI_ERR_VERSION,         /* the requested version is not implemented */
    ALPI_ERR_NOT_INITIALIZED, /* no pool to run in (the default pool could not be
                                 created, or it is being destroyed) */
    ALPI_ERR_PARAMETER,       /* an argument is NULL, unknown or out of range */
    ALPI_ERR_OUT_OF_MEMORY,
    ALPI_ERR_OUTSIDE_TASK, /* the call needs a task and the thread runs none */
    ALPI_ERR_UNKNOWN,
    ALPI_ERR_FEATURE_UNKNOWN, /* an optional feature weft does not provide */
    ALPI_ERR_MAX
} alpi_error_t;

typedef enum {
    ALPI_INFO_RUNTIME_NAME,   /* "weft" */
    ALPI_INFO_RUNTIME_VENDOR, /* "weft" */
    ALPI_INFO_VERSION         /* weft_version(), "MAJOR.MINOR.PATCH" */
} alpi_info_t;

typedef enum {
    ALPI_SUSPEND_NONE = 0,
    ALPI_SUSPEND_SUBMIT,
    ALPI_SUSPEND_TIMEOUT_SUBMIT,
    ALPI_SUSPEND_EVENT_SUBMIT
} alpi_suspend_mode_t;

/* The code in words; a fixed text for a code that is not one of the
 * enumerators. Never NULL; the string is static. */
ALPI_API const char *alpi_error_string(alpi_error_t error);

/* Write the query's text into buffer (at most max_length bytes, NUL
 * included: a longer text is cut) and its stored length, NUL excluded, into
 * *length unless length is NULL. ALPI_ERR_PARAMETER: buffer NULL, max_length
 * 0, or query not an enumerator. */
ALPI_API int alpi_info_get(alpi_info_t query, char *buffer, size_t max_length, int *length);

/* 0 when every feature in the mask is provided (an empty mask included),
 * ALPI_ERR_FEATURE_UNKNOWN when one is not: SUSPEND, or a bit the interface
 * does not define. */
ALPI_API int alpi_feature_check(int feature_bitmask);

/* 0 when a caller built for major.minor can use this library (the same
 * major, a minor no higher than ALPI_VERSION_MINOR), else ALPI_ERR_VERSION. */
ALPI_API int alpi_version_check(int major, int minor);

/* The implemented version. ALPI_ERR_PARAMETER: a pointer is NULL. */
ALPI_API int alpi_version_get(int *major, int *minor);

/* *task = the job the calling thread runs (weft_task_self), NULL outside
 * any. ALPI_ERR_PARAMETER: task is NULL. */
ALPI_API int alpi_task_self(struct alpi_task **task);

/* Inside a task, task being the calling one: suspend it until
 * alpi_task_unblock(task) (weft_task_block). Its thread sleeps; the pool
 * runs its other work on a spare thread meanwhile. An unblock that came
 * first is kept (one permit) and the call returns at once.
 * ALPI_ERR_PARAMETER: task NULL or not the calling task;
 * ALPI_ERR_OUTSIDE_TASK: the thread runs no task. */
ALPI_API int alpi_task_block(struct alpi_task *task);

/* Resume task, or give it the permit for its next block (weft_task_unblock).
 * Any thread. ALPI_ERR_PARAMETER: task NULL. */
ALPI_API int alpi_task_unblock(struct alpi_task *task);

/* Sleep about target_ns nanoseconds; *actual_ns (unless NULL) gets the time
 * slept, measured on the monotonic clock. Inside a task the sleep is a
 * blocking region (weft_blocking_begin/end): the pool's other work runs on
 * a spare meanwhile. Outside a task the thread just sleeps, and the call
 * succeeds too: TAMPI's MPI_Finalize waits in a loop of these on the
 * program's main thread, outside any job, and takes an error for a fatal
 * one; a thread that runs no job holds no pool thread while it sleeps. */
ALPI_API int alpi_task_waitfor_ns(uint64_t target_ns, uint64_t *actual_ns);

/* Inside a task: hold task's completion (whatever waits for it) until
 * increment more events are completed by alpi_task_events_decrease
 * (weft_task_events_increase). 0 events does nothing.
 * ALPI_ERR_PARAMETER: task NULL, or the outstanding events would pass
 * UINT32_MAX; ALPI_ERR_OUTSIDE_TASK; ALPI_ERR_OUT_OF_MEMORY. */
ALPI_API int alpi_task_events_increase(struct alpi_task *task, uint64_t increment);

/* Inside a task: *has_events = 1 if task has events outstanding that were
 * increased through this interface, else 0 (a 0 is exact; a 1 may be stale
 * by the time the caller reads it, as another thread may decrease).
 * ALPI_ERR_PARAMETER: task or has_events NULL; ALPI_ERR_OUTSIDE_TASK. */
ALPI_API int alpi_task_events_test(struct alpi_task *task, uint64_t *has_events);

/* Complete decrement of task's events (weft_task_events_decrease); the last
 * one, once its body has returned, completes the task. Any thread. 0 events
 * does nothing. ALPI_ERR_PARAMETER: task NULL, or decrement above the events
 * outstanding (nothing changes). */
ALPI_API int alpi_task_events_decrease(struct alpi_task *task, uint64_t decrement);

/* Attributes: created with defaults, reset, destroyed; alpi_attr_size gives
 * the bytes a caller-allocated one needs (then alpi_attr_init it, never
 * alpi_attr_destroy it). ALPI_ERR_PARAMETER: a NULL pointer;
 * ALPI_ERR_OUT_OF_MEMORY from create. */
ALPI_API int alpi_attr_create(struct alpi_attr **attr);
ALPI_API int alpi_attr_destroy(struct alpi_attr *attr);
ALPI_API int alpi_attr_init(struct alpi_attr *attr);
ALPI_API int alpi_attr_size(uint64_t *attr_size);

/* Run body(body_args) as a detached job of the calling thread's pool
 * (weft_spawn), then, once the job has completed (returned, and its events
 * completed), completion_callback(completion_args) on the thread that saw it
 * complete. label and attr are accepted and unused. Memory: everything
 * before the call is visible to body; everything body wrote, to the
 * callback. ALPI_ERR_PARAMETER: body or completion_callback NULL;
 * ALPI_ERR_OUT_OF_MEMORY; ALPI_ERR_NOT_INITIALIZED: no pool to run in
 * (the default pool could not be created, or weft_pool_destroy has
 * closed the pool the task would run in). */
ALPI_API int alpi_task_spawn(void (*body)(void *), void *body_args,
                             void (*completion_callback)(void *), void *completion_args,
                             const char *label, const struct alpi_attr *attr);

/* The number of CPU ids alpi_cpu_logical_id can answer: weft_pool_slots of
 * the calling thread's pool (workers, contexts, caller slots and spares),
 * not its workers alone. A logical id is the slot of the thread that runs a
 * task, and two threads never hold one slot at once: callers of the
 * interface keep data per logical id (TAMPI keeps single-producer queues)
 * and need that, while weft runs jobs on callers and spare threads beside
 * the workers. ALPI_ERR_PARAMETER: count NULL. */
ALPI_API int alpi_cpu_count(uint64_t *count);

/* Inside a task: the calling thread's slot in its pool (weft_thread_index),
 * below alpi_cpu_count. ALPI_ERR_PARAMETER: logical_id NULL;
 * ALPI_ERR_OUTSIDE_TASK (nothing written). */
ALPI_API int alpi_cpu_logical_id(uint64_t *logical_id);

/* Inside a task: the system's number of the CPU the thread runs on now
 * (sched_getcpu on Linux; the logical id elsewhere). ALPI_ERR_PARAMETER:
 * system_id NULL; ALPI_ERR_OUTSIDE_TASK (nothing written). */
ALPI_API int alpi_cpu_system_id(uint64_t *system_id);

/* Suspension (resubmitting a task when its body returns) is not provided:
 * both answer ALPI_ERR_FEATURE_UNKNOWN, as alpi_feature_check says, and
 * change nothing. TAMPI then polls with alpi_task_waitfor_ns. */
ALPI_API int alpi_task_suspend_mode_set(struct alpi_task *task, alpi_suspend_mode_t suspend_mode,
                                        uint64_t args);
ALPI_API int alpi_task_suspend(struct alpi_task *task);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_ALPI_H */
