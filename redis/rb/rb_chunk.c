/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's SCANDUMP positions: see rb_chunk.h. */
#include <string.h>

#include "rb_chunk.h"

/* The array holding byte `*offset`, which becomes the offset inside it; NULL past the end. */
static uint8_t *array_at(const void *f, rb_array_fn array, uint64_t *offset, uint64_t *size)
{
    uint8_t *a;
    for (unsigned i = 0; (a = array(f, i, size)) != NULL; i++) {
        if (*offset < *size)
            return a;
        *offset -= *size;
    }
    return NULL;
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

