/* SPDX-License-Identifier: MIT */
/* The calling thread's error message (error.h, weft.h's weft_error_message).
 *
 * One fixed buffer per thread: setting a message never allocates, so an
 * ENOMEM is reported in words too, and there is nothing to free at thread
 * exit. Only the thread itself writes or reads its buffer, so no
 * synchronisation is needed. The default TLS model (not initial-exec, as
 * weft__tls_worker is): errors are a cold path, and a libweft.so loaded by
 * dlopen should not spend the C library's scarce static TLS on it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "weft.h"
#include "os/error.h"

/* Room for a message that quotes a path (weft_trace_start). */
enum { MESSAGE_BYTES = 512 };

/* "" until the thread's first failure: weft_error_message never returns
 * NULL. */
static _Thread_local char message[MESSAGE_BYTES];

static void set_v(const char *fmt, va_list ap) {
    /* A negative result (an encoding error) leaves a partial message;
     * terminate it whatever happened. */
    vsnprintf(message, sizeof message, fmt, ap);
    message[sizeof message - 1] = '\0';
}

int weft__error_set(int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_v(fmt, ap);
    va_end(ap);
    return err;
}

int weft__error_set_sys(int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_v(fmt, ap);
    va_end(ap);
    size_t len = strlen(message);
    char words[128];
    /* The POSIX strerror_r (the library is built without _GNU_SOURCE):
     * strerror's static buffer is not safe across threads. */
    if (strerror_r(err, words, sizeof words) != 0)
        snprintf(words, sizeof words, "error %d", err);
    snprintf(message + len, sizeof message - len, ": %s", words);
    return err;
}

int weft__error_prefix(int err, const char *prefix) {
    size_t n = strlen(prefix), len = strlen(message);
    if (n > sizeof message - 1)
        n = sizeof message - 1;
    if (len > sizeof message - 1 - n)
        len = sizeof message - 1 - n; /* the inner reason's end is cut */
    memmove(message + n, message, len);
    memcpy(message, prefix, n);
    message[n + len] = '\0';
    return err;
}

const char *weft_error_message(void) {
    return message;
}
