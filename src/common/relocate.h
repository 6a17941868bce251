/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the walk behind nidus_cuckoo_relocate and nidus_bloom_relocate. Each kind names its blocks in a fixed
 * order and offers each one through nidus_walk_offer, which counts positions, skips those before the cursor and
 * every one after mover->stop asked for a pause; the kind sets the pointers to what moved. */
#ifndef NIDUS_SRC_RELOCATE_H
#define NIDUS_SRC_RELOCATE_H

#include <stdint.h>

#include "nidus/alloc.h"

typedef struct nidus_walk {
    const nidus_mover *mover;
    uint64_t pos;    /* the position of the next block offered */
    uint64_t from;   /* the first position to offer (the caller's cursor) */
    uint64_t resume; /* when paused: the position to start from next time */
    bool paused;
} nidus_walk;

static inline nidus_walk nidus_walk_start(const nidus_mover *mover, uint64_t cursor)
{
    return (nidus_walk){.mover = mover, .from = cursor};
}

/* The block's new address when the walk offered it and it moved, else NULL (not reached, paused, NULL block, or
 * left in place). Every call takes one position, a NULL block too, so positions follow the structure. */
static inline void *nidus_walk_offer(nidus_walk *w, void *block)
{
    uint64_t pos = w->pos++;
    if (w->paused || pos < w->from || !block)
        return NULL;
    void *to = w->mover->move(w->mover->ctx, block);
    if (w->mover->stop && w->mover->stop(w->mover->ctx)) {
        w->paused = true;
        w->resume = pos + 1;
    }
    return to;
}

/* Ends a walk: true (cursor 0) when it went to the end, false with the cursor to resume from when it paused. */
static inline bool nidus_walk_end(const nidus_walk *w, uint64_t *cursor)
{
    *cursor = w->paused ? w->resume : 0;
    return !w->paused;
}

#endif
