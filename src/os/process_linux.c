/* SPDX-License-Identifier: MIT */
/* Linux: the process's CPUs (sched_getaffinity), its barrier (membarrier)
 * and its pin on the object that holds weft (dladdr, dlopen) (process.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/process.h"

void weft__os_keep_loaded(void) {
    Dl_info self;
    /* The object this function is in: libweft.so, a plugin with weft linked
     * in, or the executable (whose pin changes nothing). RTLD_NOLOAD finds
     * it without loading anything; RTLD_NODELETE marks it, for good, as an
     * object that no dlclose unmaps. The handle's own reference goes back
     * at once: the mark stays. */
    if (!dladdr((void *)weft__os_keep_loaded, &self) || !self.dli_fname)
        return;
    void *handle = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle)
        dlclose(handle);
}

static long membarrier(int cmd) {
    return syscall(SYS_membarrier, cmd, 0, 0);
}

bool weft__os_barrier_init(void) {
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

/* The registration is the process's (a fork child inherits it), so the call
 * cannot fail once it succeeded; if the kernel ever said otherwise, going on
 * would risk running a job twice. */
void weft__os_barrier(void) {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        perror("weft: membarrier");
        abort();
    }
}

unsigned weft__os_cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}
