/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's SCANDUMP positions: see rb_chunk.h. */
#include <limits.h>
#include <string.h>

#include "rb_chunk.h"

/* The array holding byte `*offset`, which becomes the offset inside it; NULL past the end. The arrays' starts
 * never decrease: a gallop over indices 1, 2, 4, ... finds one past the byte, then bisection the last array
 * starting at or before it (an empty array shares its start with the next, which is taken). */
static uint8_t *array_at(const void *f, rb_array_fn array, uint64_t *offset, uint64_t *size)
{
    uint64_t start, s;
    if (!array(f, 0, size, &start))
        return NULL;
    uint64_t lo = 0, hi = 1; /* array lo starts at or before the byte; hi after it, or is past the last */
    while (hi <= UINT_MAX && array(f, (unsigned)hi, &s, &start) && start <= *offset) {
        lo = hi;
        hi *= 2; /* a power of two, so at most UINT_MAX + 1 */
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (array(f, (unsigned)mid, &s, &start) && start <= *offset)
            lo = mid;
        else
            hi = mid;
    }
    uint8_t *a = array(f, (unsigned)lo, size, &start);
    *offset -= start;
    return *offset < *size ? a : NULL;
}

bool rb_chunk_get(const void *f, rb_array_fn array, uint64_t pos, size_t limit, const uint8_t **data,
                  size_t *len, uint64_t *next)
{
    uint64_t offset = pos - 1, size;
    const uint8_t *a = pos ? array_at(f, array, &offset, &size) : NULL;
    if (!a)
        return false;
    uint64_t left = size - offset;
    *len = left < limit ? (size_t)left : limit;
    *data = a + offset;
    *next = pos + *len;
    return true;
}

bool rb_chunk_put(void *f, rb_array_fn array, uint64_t pos, const void *data, size_t len, bool empty_ok)
{
    if ((len == 0 && !empty_ok) || pos == 0 || pos - 1 < len)
        return false;
    uint64_t offset = pos - 1 - len, size;
    uint8_t *a = array_at(f, array, &offset, &size);
    if (!a || len > size - offset)
        return false;
    if (len)
        memcpy(a + offset, data, len);
    return true;
}

void rb_put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t rb_get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

