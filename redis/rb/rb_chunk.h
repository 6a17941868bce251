/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's SCANDUMP positions, shared by its two kinds: after the header chunk, position p >= 1 names byte
 * p-1 of the filter's arrays (sub-filters or layers, oldest first) as if laid end to end; a data chunk never
 * crosses an array, and SCANDUMP returns the position after it, which LOADCHUNK gets back with it. */
#ifndef NIDUS_REDIS_RB_CHUNK_H
#define NIDUS_REDIS_RB_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RB_SCANDUMP_MAX (16u << 20) /* RedisBloom's largest data chunk */

/* Array `i` of filter `f`, its size in bytes and its start (the bytes of the arrays before it, which the filter
 * keeps: positions start + 1 .. start + size are its bytes); NULL past the last one. */
typedef uint8_t *(*rb_array_fn)(const void *f, unsigned i, uint64_t *size, uint64_t *start);

/* The chunk at position `pos` (at most `limit` bytes) and the next position; false past the end. Finds the
 * array by bisection over the arrays' starts: O(log arrays) calls of `array`, as is rb_chunk_put. */
bool rb_chunk_get(const void *f, rb_array_fn array, uint64_t pos, size_t limit, const uint8_t **data,
                  size_t *len, uint64_t *next);

/* Copies a LOADCHUNK data chunk in: `pos` is the position after it. False when it does not fit in one array
 * (or is empty and `empty_ok` is false, as RedisBloom's cuckoo loader refuses empty chunks). */
bool rb_chunk_put(void *f, rb_array_fn array, uint64_t pos, const void *data, size_t len, bool empty_ok);

/* n-byte little-endian fields of RedisBloom's packed headers. */
void rb_put_le(uint8_t *p, uint64_t v, unsigned n);
uint64_t rb_get_le(const uint8_t *p, unsigned n);

#endif
