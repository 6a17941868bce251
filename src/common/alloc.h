/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the allocator hook, resolved once per object so every allocation goes through one place. */
#ifndef NIDUS_SRC_ALLOC_H
#define NIDUS_SRC_ALLOC_H

#include <stddef.h>

#include "nidus/alloc.h"

/* Fills `out` from the caller's hook, or with the C library's functions when `hook` is NULL or incomplete. */
void nidus_alloc_resolve(const nidus_allocator *hook, nidus_allocator *out);

/* The hook itself when it is complete, else the library's constant libc hook: filters keep this pointer (8 bytes
 * a filter, not a 40-byte copy), so a caller's hook must outlive every filter made with it. */
const nidus_allocator *nidus_alloc_pick(const nidus_allocator *hook);

static inline void *nidus_malloc(const nidus_allocator *a, size_t size) { return a->malloc(a->ctx, size); }
static inline void *nidus_calloc(const nidus_allocator *a, size_t n, size_t size)
{
    return a->calloc(a->ctx, n, size);
}
static inline void *nidus_realloc(const nidus_allocator *a, void *p, size_t size)
{
    return a->realloc(a->ctx, p, size);
}
static inline void nidus_free(const nidus_allocator *a, void *p)
{
    if (p)
        a->free(a->ctx, p);
}

#endif
