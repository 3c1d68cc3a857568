/* SPDX-License-Identifier: MIT */
/* The CPUs this process may use: its affinity mask (os_*.c), and on Linux the
 * CPU quota of its cgroup v2 and of every ancestor (cpu.max), as Go, Java and
 * .NET read it. A container limited to 1.5 CPUs on a 64-CPU host gets 2
 * workers, not 64 that the kernel would throttle in turn.
 *
 * Where the quota lives. /proc/self/cgroup names the process's cgroup v2 in
 * its "0::" line, relative to the root of its cgroup namespace;
 * /proc/self/mountinfo says where cgroup2 is mounted, and which cgroup (its
 * root field) appears at the mount point. Without a cgroup namespace (older
 * container runtimes) that root is the container's own cgroup, a prefix of
 * the path, which is dropped. Each level from the process's cgroup up to the
 * mount point may hold a cpu.max of "QUOTA PERIOD" (microseconds of CPU per
 * period) or "max QUOTA"; the least QUOTA / PERIOD applies, rounded up: a
 * pool of 1.5 CPUs' worth runs two workers that are throttled a little
 * rather than one that leaves half a CPU unused.
 *
 * Anything missing or unreadable (cgroup v1 only, no /proc, another OS)
 * means no quota: the affinity mask alone decides. Every path is read under a
 * root prefix, "" for the real files; tests point it at a fake tree.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/cpus.h"

#include "os/process.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

const char *weft__cpus_root = "";

/* The next whole line of f into line (size PATH_MAX); false at the end. A
 * longer line (mountinfo's overlay mounts can exceed a page) is skipped
 * whole: its tail must not be read as a line of its own. */
static bool next_line(FILE *f, char *line) {
    while (fgets(line, PATH_MAX, f)) {
        if (strchr(line, '\n') || feof(f))
            return true;
        int c;
        while ((c = fgetc(f)) != EOF && c != '\n') {
        }
    }
    return false;
}

/* root/path opened for reading, or NULL. */
static FILE *open_under(const char *root, const char *path) {
    char name[PATH_MAX];
    if (snprintf(name, sizeof name, "%s%s", root, path) >= (int)sizeof name)
        return NULL;
    return fopen(name, "r");
}

/* The first line of root/path that starts with prefix, without the prefix
 * and the newline, into out (size PATH_MAX); false if none. */
static bool read_line(const char *root, const char *path, const char *prefix, char *out) {
    FILE *f = open_under(root, path);
    if (!f)
        return false;
    bool found = false;
    size_t n = strlen(prefix);
    while (!found && next_line(f, out)) {
        if (strncmp(out, prefix, n) != 0)
            continue;
        memmove(out, out + n, strlen(out + n) + 1);
        out[strcspn(out, "\n")] = '\0';
        found = true;
    }
    fclose(f);
    return found;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo: undo it in
 * place. */
static void unescape(char *s) {
    char *out = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

/* The cgroup2 mount: its mount point and the cgroup at it, each PATH_MAX. A
 * mountinfo line is "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS] - TYPE ...". */
static bool cgroup2_mount(const char *root, char *point, char *at) {
    char line[PATH_MAX];
    FILE *f = open_under(root, "/proc/self/mountinfo");
    if (!f)
        return false;
    bool found = false;
    while (!found && next_line(f, line)) {
        const char *dash = strstr(line, " - cgroup2 ");
        char *save, *field = strtok_r(line, " ", &save);
        for (int i = 1; field && i < 4; i++)
            field = strtok_r(NULL, " ", &save);
        char *mount_root = field, *mount_point = strtok_r(NULL, " ", &save);
        if (!dash || !mount_root || !mount_point || (const char *)mount_point > dash)
            continue;
        snprintf(at, PATH_MAX, "%s", mount_root);
        snprintf(point, PATH_MAX, "%s", mount_point);
        unescape(at);
        unescape(point);
        found = true;
    }
    fclose(f);
    return found;
}

/* The whole CPUs a cpu.max at dir allows, quota / period rounded up; 0 for
 * none. (The least of these over the levels is the least quota rounded up:
 * rounding up keeps the order.) */
static unsigned level_cpus(const char *root, const char *dir) {
    char path[PATH_MAX], value[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/cpu.max", dir) >= (int)sizeof path ||
        !read_line(root, path, "", value))
        return 0;
    char *end, *after;
    unsigned long long quota = strtoull(value, &end, 10), period = strtoull(end, &after, 10);
    if (end == value || after == end || quota == 0 || period == 0)
        return 0; /* "max", or nothing we understand: no limit here */
    unsigned long long cpus = quota / period + (quota % period != 0);
    return cpus > UINT_MAX ? UINT_MAX : (unsigned)cpus;
}

unsigned weft__cgroup_cpu_limit(const char *root) {
    char path[PATH_MAX], point[PATH_MAX], at[PATH_MAX];
    if (!read_line(root, "/proc/self/cgroup", "0::", path) || !cgroup2_mount(root, point, at))
        return 0;
    /* The cgroup as seen below the mount point. */
    size_t at_len = strcmp(at, "/") == 0 ? 0 : strlen(at);
    if (strncmp(path, at, at_len) != 0 || (path[at_len] != '/' && path[at_len] != '\0'))
        return 0; /* not under this mount: nothing to read */
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s%s", point, path + at_len) >= (int)sizeof dir)
        return 0;
    unsigned least = 0;
    size_t point_len = strlen(point);
    for (;;) {
        unsigned cpus = level_cpus(root, dir);
        if (cpus && (!least || cpus < least))
            least = cpus;
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= point_len || !slash)
            break;
        *slash = '\0'; /* the parent, up to the mount point */
    }
    return least;
}

unsigned weft__cpus_available(void) {
    unsigned n = weft__os_cpu_count();
    unsigned quota = weft__cgroup_cpu_limit(weft__cpus_root);
    return quota && quota < n ? quota : n;
}
