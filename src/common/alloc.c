/* SPDX-License-Identifier: BSD-3-Clause */
#include "alloc.h"

#include <stdlib.h>

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    return calloc(n, size);
}

static void *libc_realloc(void *ctx, void *p, size_t size)
{
    (void)ctx;
    return realloc(p, size);
}

static void libc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const nidus_allocator libc_allocator = {libc_malloc, libc_calloc, libc_realloc, libc_free, NULL};

/* A hook with any function missing is replaced whole: mixing the caller's malloc with libc's free would
 * corrupt both heaps. */
const nidus_allocator *nidus_alloc_pick(const nidus_allocator *hook)
{
    if (hook && hook->malloc && hook->calloc && hook->realloc && hook->free)
        return hook;
    return &libc_allocator;
}

void nidus_alloc_resolve(const nidus_allocator *hook, nidus_allocator *out) { *out = *nidus_alloc_pick(hook); }
