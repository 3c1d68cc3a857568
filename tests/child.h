/* SPDX-License-Identifier: MIT */
/* Run part of a test in a forked child and capture what it prints on stderr:
 * for code that must abort (a debug-build assertion) or that prints a warning
 * once per process. The child gets a copy of the parent's memory but only the
 * calling thread: it must not use a pool the parent made before the fork
 * (the default pool included), only pools it creates itself. */
#ifndef WEFT_TEST_CHILD_H
#define WEFT_TEST_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* At file scope in a test whose fork children start threads (a pool of
 * their own): TSan's die_after_fork would kill such a child. Set in the
 * program rather than through ctest's ENVIRONMENT, which would replace the
 * TSAN_OPTIONS the suite runs with (halt_on_error=1); TSAN_OPTIONS from the
 * environment still override it. */
#ifdef WEFT__TSAN
#define CHILDREN_START_THREADS()                                                                   \
    const char *__tsan_default_options(void);                                                      \
    const char *__tsan_default_options(void) {                                                     \
        return "die_after_fork=0";                                                                 \
    }                                                                                              \
    typedef int weft_test_children_start_threads
#else
#define CHILDREN_START_THREADS() typedef int weft_test_children_start_threads
#endif

/* Run body() in a child with stderr going to a file; the child exits 0 when
 * body returns. Returns the child's wait status; what it wrote on stderr, up
 * to cap - 1 bytes and NUL-terminated, is in err, and copied to our stderr
 * so that a failing test shows it. */
static inline int child_run(void (*body)(void), char *err, size_t cap) {
    FILE *f = tmpfile();
    CHECK(f != NULL);
    fflush(stderr);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        dup2(fileno(f), STDERR_FILENO);
        signal(SIGABRT, SIG_DFL);
        body();
        fflush(stderr);
        _exit(0);
    }
    int status = 0;
    CHECK_EQ(waitpid(child, &status, 0), child);
    rewind(f); /* the child moved the shared offset */
    size_t len = fread(err, 1, cap - 1, f);
    err[len] = '\0';
    fclose(f);
    fprintf(stderr, "child %s %d; its stderr: %s",
            WIFSIGNALED(status) ? "killed by signal" : "exited",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), len ? err : "(empty)\n");
    return status;
}

static inline bool child_exited_ok(int status) {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* gcc 12's AddressSanitizer runtime takes no lock of its allocator around
 * fork(): a child forked while another thread is inside malloc may block
 * for ever in its first malloc. Under ASan a test waits with this, before it
 * forks, until every other thread is blocked in a futex wait, where it holds
 * no allocator lock. */
#if defined(__SANITIZE_ADDRESS__) && defined(__linux__)
#include <dirent.h>
#include <stdlib.h>
#include <sys/syscall.h>

/* Is every thread of this process but the calling one inside a futex wait
 * (/proc's view of the system call it is blocked in)? */
static inline bool others_in_futex_waits(void) {
    DIR *dir = opendir("/proc/self/task");
    CHECK(dir != NULL);
    bool all = true;
    long self = syscall(SYS_gettid);
    for (struct dirent *e; all && (e = readdir(dir)) != NULL;) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == self)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
        FILE *f = fopen(path, "r");
        long nr = -1;
        all = f && fscanf(f, "%ld", &nr) == 1 && nr == SYS_futex;
        if (f)
            fclose(f);
    }
    closedir(dir);
    return all;
}

/* Until every other thread is blocked in a futex wait, where it holds no
 * allocator lock (a worker counted asleep may still be recording its sleep,
 * which can grow its trace buffer). */
static inline void wait_others_blocked(void) {
    double deadline = check_now() + 10;
    while (!others_in_futex_waits()) {
        CHECK(check_now() < deadline);
        check_sleep_us(200);
    }
}
#else
static inline void wait_others_blocked(void) {}
#endif

#endif
