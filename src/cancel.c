/* SPDX-License-Identifier: MIT */
/* Cancellation from a job: weft_cancel and weft_cancelled ask about the group
 * the running job belongs to (group.h says which one that is). */
#include "pool.h"

void weft_cancel(void) {
    weft__group *g = weft__current_group();
    if (g) /* outside every group: nothing to cancel (weft.h) */
        weft__group_cancel(g);
}

bool weft_cancelled(void) {
    return weft__group_cancelled(weft__current_group());
}
