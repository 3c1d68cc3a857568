/* SPDX-License-Identifier: MIT */
/* The CPUs a pool of threads = 0 sizes itself to: the cgroup v2 quota read
 * from a fake tree (cpus.c reads every path under a root prefix), capped by
 * the affinity mask, and $WEFT_NUM_THREADS above both. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "os/cpus.h"
#include "os/process.h"
#include "weft.h"

static char root[64];

/* Write root/path (creating its directories) with the formatted text. */
static void put(const char *path, const char *fmt, ...) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", root, path);
    for (char *p = name + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(name, 0700); /* EEXIST is fine */
            *p = '/';
        }
    }
    FILE *f = fopen(name, "w");
    CHECK(f != NULL);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

/* A fresh fake tree: the process in cgroup `cgroup`, cgroup2 mounted at
 * `point` showing cgroup `at` there. */
static void tree(const char *cgroup, const char *point, const char *at) {
    snprintf(root, sizeof root, "/tmp/weft-cpus-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    put("/proc/self/cgroup", "12:cpu,cpuacct:/v1/ignored\n0::%s\n", cgroup);
    put("/proc/self/mountinfo",
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "30 22 0:26 /v1 /sys/fs/cgroup/cpu rw shared:9 - cgroup cgroup rw,cpu\n"
        "31 22 0:27 %s %s rw,nosuid shared:10 - cgroup2 cgroup2 rw\n",
        at, point);
}

static void cleanup(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK_EQ(system(cmd), 0);
}

TEST(no_cgroup_v2_means_no_quota) {
    snprintf(root, sizeof root, "/tmp/weft-cpus-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    put("/proc/self/cgroup", "4:cpu:/a\n");
    put("/proc/self/mountinfo", "30 22 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 0);
    /* A cgroup v2 line, but cgroup2 mounted nowhere (a hybrid host whose
     * unified tree is not visible here). */
    put("/proc/self/cgroup", "0::/app\n");
    put("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 0);
    cleanup();
    CHECK_EQ(weft__cgroup_cpu_limit("/nonexistent-weft-root"), 0);
}

/* The quota of a process in /app whose only cpu.max says `text`. */
static unsigned limit_of(const char *text) {
    tree("/app", "/sys/fs/cgroup", "/");
    put("/sys/fs/cgroup/app/cpu.max", "%s", text);
    unsigned n = weft__cgroup_cpu_limit(root);
    cleanup();
    return n;
}

TEST(quota_is_rounded_up) {
    CHECK_EQ(limit_of("150000 100000\n"), 2);
    CHECK_EQ(limit_of("200000 100000\n"), 2);
    CHECK_EQ(limit_of("10000 100000\n"), 1); /* a tenth of a CPU: still one */
}

TEST(max_or_garbage_is_no_quota) {
    CHECK_EQ(limit_of("max 100000\n"), 0);
    CHECK_EQ(limit_of("lots\n"), 0);
    CHECK_EQ(limit_of("100000 0\n"), 0);
    CHECK_EQ(limit_of(""), 0);
}

TEST(the_least_quota_of_the_ancestors_applies) {
    tree("/kube/pod/app", "/sys/fs/cgroup", "/");
    put("/sys/fs/cgroup/kube/pod/app/cpu.max", "max 100000\n");
    put("/sys/fs/cgroup/kube/pod/cpu.max", "250000 100000\n");
    put("/sys/fs/cgroup/kube/cpu.max", "800000 100000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 3);
    put("/sys/fs/cgroup/kube/pod/app/cpu.max", "50000 50000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 1);
    cleanup();
}

/* A mountinfo line longer than a page (an overlay mount's options) whose
 * tail looks like a cgroup2 line is skipped whole. */
TEST(long_mountinfo_lines_are_skipped_whole) {
    tree("/app", "/sys/fs/cgroup", "/");
    char *opts = malloc(9000);
    memset(opts, 'x', 8999);
    opts[8999] = '\0';
    /* The tail, past 4096 bytes, reads as a line mounting cgroup2 at /wrong. */
    memcpy(opts + 6000, " 1 2 3 / /wrong rw - cgroup2 cgroup2 rw ", 41);
    char name[512];
    snprintf(name, sizeof name, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(name, "w");
    CHECK(f != NULL);
    fprintf(f, "40 22 0:50 / /var/lib/overlay rw - overlay overlay rw,lowerdir=%s\n", opts);
    fprintf(f, "31 22 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
    fclose(f);
    free(opts);
    put("/wrong/app/cpu.max", "100000 100000\n");
    put("/sys/fs/cgroup/app/cpu.max", "300000 100000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 3);
    cleanup();
}

TEST(mount_root_prefix_and_escapes) {
    /* No cgroup namespace: the container's cgroup is mounted as the root of
     * the mount, at a point whose name has a space (\040 in mountinfo). */
    tree("/docker/abc", "/sys/fs/my\\040cgroup", "/docker/abc");
    put("/sys/fs/my cgroup/cpu.max", "300000 100000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 3);
    cleanup();
    /* The process's cgroup is not under the mounted one: nothing to read. */
    tree("/other", "/sys/fs/cgroup", "/docker/abc");
    put("/sys/fs/cgroup/cpu.max", "100000 100000\n");
    CHECK_EQ(weft__cgroup_cpu_limit(root), 0);
    cleanup();
}

/* What a pool of threads = 0 gets: the quota under the affinity mask, and
 * $WEFT_NUM_THREADS over both. */
TEST(default_pool_size_follows_the_quota) {
    unsigned cpus = weft__os_cpu_count();
    tree("/app", "/sys/fs/cgroup", "/");
    put("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    weft__cpus_root = root;
    unsetenv("WEFT_NUM_THREADS");
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){0}), 0);
    CHECK_EQ(weft_pool_threads(pool), 1);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    put("/sys/fs/cgroup/app/cpu.max", "%u 100000\n", (cpus + 8) * 100000);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){0}), 0);
    CHECK_EQ(weft_pool_threads(pool), cpus); /* a quota above the mask */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    put("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    setenv("WEFT_NUM_THREADS", "3", 1);
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){0}), 0);
    CHECK_EQ(weft_pool_threads(pool), 3);
    CHECK_EQ(weft_pool_destroy(pool), 0);
    unsetenv("WEFT_NUM_THREADS");
    weft__cpus_root = "";
    cleanup();
}

/* The CPU budget's default is the same count, without $WEFT_NUM_THREADS. */
TEST(default_budget_follows_the_quota) {
    unsigned cpus = weft__os_cpu_count();
    tree("/app", "/sys/fs/cgroup", "/");
    put("/sys/fs/cgroup/app/cpu.max", "100000 100000\n");
    weft__cpus_root = root;
    setenv("WEFT_NUM_THREADS", "3", 1);
    CHECK_EQ(weft_concurrency(), 1);
    put("/sys/fs/cgroup/app/cpu.max", "150000 100000\n");
    CHECK_EQ(weft_set_concurrency(0), 0); /* the default, counted again */
    CHECK_EQ(weft_concurrency(), cpus < 2 ? cpus : 2);
    unsetenv("WEFT_NUM_THREADS");
    weft__cpus_root = "";
    cleanup();
}
