/* SPDX-License-Identifier: MIT */
/* Unloading a plugin that used weft: the host survives. A shared object that
 * ran work on the default pool and is then dlclosed must not take the code
 * that the pool's workers run with it (they live until exit): weft keeps its
 * object loaded (src/os/process.h, weft__os_keep_loaded). Each case loads, uses and
 * unloads the plugin three times, then lets the workers run on; before the
 * pin, a worker ran unmapped code and the host died of SIGSEGV. The plugin
 * is tests/plugin.c, linked to libweft.so (WEFT_PLUGIN_SHARED) and with
 * libweft.a inside (WEFT_PLUGIN_STATIC). The host itself has no weft. */
#include <dlfcn.h>

#include "check.h"

#define PLUGIN_EXPECTED (10000 + 64) /* tests/plugin.c: PLUGIN_ITEMS + PLUGIN_SPAWNS */

static void load_use_unload(const char *path) {
    for (int round = 0; round < 3; round++) {
        void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!plugin)
            fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        CHECK(plugin);
        long (*work)(void) = (long (*)(void))dlsym(plugin, "plugin_work");
        CHECK(work);
        CHECK_EQ(work(), PLUGIN_EXPECTED);
        CHECK_EQ(dlclose(plugin), 0);
        /* The workers spin, then sleep, after the plugin's last job: let
         * them run while the plugin is gone. */
        check_sleep_us(100 * 1000);
    }
}

TEST(a_plugin_linked_to_the_shared_library_unloads) {
    load_use_unload(WEFT_PLUGIN_SHARED);
}

TEST(a_plugin_with_the_static_library_inside_unloads) {
    load_use_unload(WEFT_PLUGIN_STATIC);
}
