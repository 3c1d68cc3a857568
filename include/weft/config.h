/* SPDX-License-Identifier: MIT */
/* How the library was built, as far as the inline fast paths of the headers
 * (weft/join.h) must know. This copy describes the default build (Linux,
 * membarrier). An install writes the configured one instead, which defines
 * WEFT_FENCE_SYMMETRIC when the library was built with the POSIX seam's
 * symmetric fences (src/os/fence.h); inside the project every target sees that
 * definition from the build. */
#ifndef WEFT_CONFIG_H
#define WEFT_CONFIG_H

#endif
