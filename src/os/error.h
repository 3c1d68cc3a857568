/* SPDX-License-Identifier: MIT */
/* Why the last call failed, in words: the calling thread's message behind
 * weft_error_message (weft.h). See error.c.
 *
 * Here, at the bottom, because errors are answered in every layer above:
 * api/ checks arguments, core/ creates and destroys pools and hands out
 * contexts, idle/ sets the CPU budget (weft_set_concurrency). os/ is the one
 * layer all of them may include, and the module needs nothing of weft: a
 * buffer per thread and a formatter, which the compiler (_Thread_local) and
 * the C library (vsnprintf, strerror_r) provide.
 *
 * The rule for callers: the thread that returns an errno from a public call
 * sets the message just before, on its own thread, naming the argument or
 * field, the bad value and the limit where there is one. A failure found on
 * another thread (a worker's allocation inside weft_reduce) is reported by
 * the caller when the errno reaches it, since the message is per thread. */
#ifndef WEFT_ERROR_H
#define WEFT_ERROR_H

#include "os/atomics.h"

/* Set the message from a printf format; returns err, so that an error path
 * reads `return weft__error_set(EINVAL, "...", ...);`. Never fails: a
 * message longer than the buffer is cut. */
WEFT__HIDDEN WEFT__COLD int weft__error_set(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* weft__error_set, followed by ": " and the C library's words for err, for
 * an errno that comes from the operating system (a thread, a file). */
WEFT__HIDDEN WEFT__COLD int weft__error_set_sys(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Put prefix in front of the message set last (the inner call's reason
 * becomes the outer call's detail); returns err. */
WEFT__HIDDEN WEFT__COLD int weft__error_prefix(int err, const char *prefix);

#endif
