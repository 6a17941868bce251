/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the allocator hook through which the library gets all of its memory. */
#ifndef NIDUS_ALLOC_H
#define NIDUS_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

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

#ifdef __cplusplus
}
#endif

#endif
