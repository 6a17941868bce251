/* SPDX-License-Identifier: BSD-3-Clause */
/* The fuzz targets' allocator for filters they write to. Adds may grow a decoded filter as far as its encoding
 * allows: a windowed filter of expansion 32768 and no bound asks for a table of hundreds of gigabytes. This
 * allocator refuses any block past 64 MiB, as a machine without the memory would, so the fuzzer meets the
 * library's NIDUS_ERR_NO_MEMORY path rather than the sanitizer's out-of-memory abort. */
#ifndef NIDUS_FUZZ_ALLOC_H
#define NIDUS_FUZZ_ALLOC_H

#include <stdlib.h>

#include <nidus/alloc.h>

#define FUZZ_BLOCK_MAX ((size_t)64 << 20)

static void *fuzz_capped_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return n > FUZZ_BLOCK_MAX ? NULL : malloc(n);
}

static void *fuzz_capped_calloc(void *ctx, size_t count, size_t n)
{
    (void)ctx;
    return n && count > FUZZ_BLOCK_MAX / n ? NULL : calloc(count, n);
}

static void *fuzz_capped_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return n > FUZZ_BLOCK_MAX ? NULL : realloc(p, n);
}

static void fuzz_capped_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const nidus_allocator fuzz_capped_allocator = {fuzz_capped_malloc, fuzz_capped_calloc, fuzz_capped_realloc,
                                                      fuzz_capped_free, NULL};

#endif
