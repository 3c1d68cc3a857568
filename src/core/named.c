/* SPDX-License-Identifier: MIT */
/* Job names for the trace.
 *
 * weft_trace_name sets the name in force on the calling thread. A call the
 * thread makes then (weft_run, and everything that goes through it: loops,
 * scopes, graph runs, joins from outside) gives its work that name with a
 * group of its own that only names (group.h), on whichever thread its
 * function runs; a spawn (a scope's, a detached one, an event's follow-up)
 * keeps the name in the job (job.h), and its thread runs it under such a
 * group when the name differs from its group's. Everything forked inside
 * carries the group, and so the name, on the fork's fast path without a
 * word more: a join's B carries its group already (include/weft/join.h),
 * and groups nested in a named one take its name (weft__group_init).
 *
 * A thread records a running slice, named for its group, where it starts
 * a job (weft__worker_run_and_set, and each kind of job) and where it goes
 * back to the job it waited in. Names are pointers, stored in the trace
 * buffers and read when the trace is written: they must outlive the trace
 * (weft.h, weft_trace_name).
 */
#include "core/named.h"

#include "core/current.h"

_Thread_local const char *weft__trace_name_tls;

void weft__named_run(weft__worker *w, const char *name, weft_fn *fn, void *arg) {
    if (!w) {
        fn(arg);
        return;
    }
    if (name == weft__group_name(w->h.group)) {
        weft__worker_trace_run(w);
        fn(arg);
        return;
    }
    weft__group g;
    weft__group *outer = weft__worker_enter_new(w, &g);
    g.name = name;
    g.name_only = true;
    weft__worker_trace_run(w);
    fn(arg);
    weft__worker_leave(w, outer);
}

void weft__named_call(void *named) {
    const weft__named *n = named;
    weft__named_run(weft__current_worker(), n->name, n->fn, n->arg);
}
