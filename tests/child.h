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

#endif
