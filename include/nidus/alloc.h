/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the allocator hook through which the library gets all of its memory. */
#ifndef NIDUS_ALLOC_H
#define NIDUS_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory functions the library calls instead of malloc & co. Pass one in a filter's parameters to route
 * that filter's memory (the Redis module passes RedisModule_Alloc and friends); NULL means the C library's.
 * A filter keeps a pointer to the structure (8 bytes a filter, not a copy), so it must outlive every filter
 * made or loaded with it (a static const one does). `ctx` is passed back untouched.
 * `calloc` must return zeroed memory: large tables rely on it to stay untouched (and unpaid) until used. */
typedef struct nidus_allocator {
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t count, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} nidus_allocator;

/* What an active defragmenter gives nidus_cuckoo_relocate and nidus_bloom_relocate. `move` is offered one block
 * the filter holds through its allocator and returns the block's new address (the contents copied there, the old
 * block freed through the same allocator), or NULL to leave it where it is: RedisModule_DefragAlloc's contract.
 * `stop` (NULL: never) is asked after each offer whether to pause. `ctx` is passed back untouched. */
typedef struct nidus_mover {
    void *(*move)(void *ctx, void *block);
    bool (*stop)(void *ctx);
    void *ctx;
} nidus_mover;

/* The walk behind nidus_cuckoo_relocate and nidus_bloom_relocate, for code that relocates its own blocks around a
 * filter's the same way (the Redis module's values). The blocks are named in a fixed order and each is offered
 * through nidus_walk_offer, which counts positions, skips those before the cursor and every one after
 * mover->stop asked for a pause; the caller sets its pointers to what moved, and nidus_walk_end gives the cursor. */
typedef struct nidus_walk {
    const nidus_mover *mover;
    uint64_t pos;    /* the position of the next block offered */
    uint64_t from;   /* the first position to offer (the caller's cursor) */
    uint64_t resume; /* when paused: the position to start from next time */
    bool paused;
} nidus_walk;

/* A walk that offers the blocks from position `cursor` on (0: from the first). */
static inline nidus_walk nidus_walk_start(const nidus_mover *mover, uint64_t cursor)
{
    nidus_walk w;
    w.mover = mover;
    w.pos = 0;
    w.from = cursor;
    w.resume = 0;
    w.paused = false;
    return w;
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

#ifdef __cplusplus
}
#endif

#endif
