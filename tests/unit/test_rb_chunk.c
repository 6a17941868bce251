/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's SCANDUMP positions (redis/rb/rb_chunk.c) over 65536 arrays, as many sub-filters as a RedisBloom
 * cuckoo filter can have: every chunk rb_chunk_get gives is the one a walk of the arrays in order gives (same
 * bytes, length and next position, empty arrays skipped, the limit splitting long ones), rb_chunk_put lands each
 * chunk at its place and refuses one crossing an array; and each call asks for O(log arrays) arrays, never a walk
 * of all of them (counted, not timed: a walk per chunk made a dump of the 65536 quadratic). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rb/rb_chunk.h"

#define NARRAYS 65536u
#define LIMIT 3 /* the largest chunk: arrays of 4 bytes and more take two */

typedef struct arrays {
    uint8_t *bytes;   /* the arrays laid end to end */
    uint64_t *start;  /* NARRAYS + 1 starts: array i is bytes[start[i] .. start[i + 1]) */
    uint64_t *calls;  /* calls of array_of */
} arrays;

static uint8_t *array_of(const void *f, unsigned i, uint64_t *size, uint64_t *start)
{
    const arrays *a = f;
    ++*a->calls;
    if (i >= NARRAYS)
        return NULL;
    *start = a->start[i];
    *size = a->start[i + 1] - a->start[i];
    return a->bytes + a->start[i];
}

/* Sizes 0 .. 6 in a fixed pattern (a seventh of the arrays empty); bytes numbered by position. */
static arrays make_arrays(uint64_t *calls)
{
    arrays a = {NULL, malloc((NARRAYS + 1) * sizeof(uint64_t)), calls};
    assert_non_null(a.start);
    a.start[0] = 0;
    for (unsigned i = 0; i < NARRAYS; i++)
        a.start[i + 1] = a.start[i] + (i * 5u + 3u) % 7u;
    a.bytes = malloc((size_t)a.start[NARRAYS]);
    assert_non_null(a.bytes);
    for (uint64_t p = 0; p < a.start[NARRAYS]; p++)
        a.bytes[p] = (uint8_t)(p * 131 + 7);
    return a;
}

static void free_arrays(arrays *a)
{
    free(a->bytes);
    free(a->start);
}

/* The most calls one lookup may make: a gallop and a bisection over the 17 bits of 65536, and the answer. */
static const uint64_t max_calls = 2 * 17 + 4;

/* The stream from position 1, checked chunk by chunk against a walk of the arrays in order. */
static void test_get_gives_every_chunk_in_order(void **state)
{
    (void)state;
    uint64_t calls = 0, chunks = 0, most = 0;
    arrays a = make_arrays(&calls);
    uint64_t pos = 1;
    for (unsigned i = 0; i < NARRAYS; i++) {
        uint64_t size = a.start[i + 1] - a.start[i];
        for (uint64_t off = 0; off < size; off += LIMIT) {
            const uint8_t *data;
            size_t len;
            uint64_t next;
            calls = 0;
            assert_true(rb_chunk_get(&a, array_of, pos, LIMIT, &data, &len, &next));
            most = calls > most ? calls : most;
            uint64_t want = size - off < LIMIT ? size - off : LIMIT;
            assert_ptr_equal(data, a.bytes + a.start[i] + off);
            assert_int_equal(len, want);
            assert_int_equal(next, pos + want);
            pos = next;
            chunks++;
        }
    }
    assert_int_equal(pos, a.start[NARRAYS] + 1);
    const uint8_t *data;
    size_t len;
    uint64_t next;
    assert_false(rb_chunk_get(&a, array_of, pos, LIMIT, &data, &len, &next)); /* past the end */
    assert_false(rb_chunk_get(&a, array_of, 0, LIMIT, &data, &len, &next));
    assert_true(chunks > NARRAYS);
    assert_true(most <= max_calls);
    free_arrays(&a);
}

/* Every chunk put back at its position (the one after it) lands there; one crossing into the next array, one
 * past the end and an empty one where they are not taken are refused. */
static void test_put_lands_each_chunk_in_place(void **state)
{
    (void)state;
    uint64_t calls = 0, most = 0;
    arrays a = make_arrays(&calls);
    uint64_t total = a.start[NARRAYS];
    uint8_t *want = malloc((size_t)total);
    assert_non_null(want);
    memcpy(want, a.bytes, (size_t)total);
    memset(a.bytes, 0, (size_t)total);
    for (unsigned i = 0; i < NARRAYS; i++) {
        uint64_t size = a.start[i + 1] - a.start[i];
        for (uint64_t off = 0; off < size; off += LIMIT) {
            size_t len = (size_t)(size - off < LIMIT ? size - off : LIMIT);
            calls = 0;
            assert_true(rb_chunk_put(&a, array_of, a.start[i] + off + len + 1, want + a.start[i] + off, len, false));
            most = calls > most ? calls : most;
        }
    }
    assert_memory_equal(a.bytes, want, (size_t)total);
    assert_true(most <= max_calls);
    /* array 0 holds bytes 0 .. 2 (positions 1 .. 3), array 1 byte 3, array 2 bytes 4 .. 9 */
    assert_int_equal(a.start[1], 3);
    assert_int_equal(a.start[2], 4);
    assert_false(rb_chunk_put(&a, array_of, 6, want + 3, 2, false)); /* bytes 3 and 4: two arrays */
    assert_true(rb_chunk_put(&a, array_of, 5, want + 3, 1, false));
    assert_false(rb_chunk_put(&a, array_of, total + 2, want, 1, false)); /* past the end */
    assert_false(rb_chunk_put(&a, array_of, 5, want, 0, false));         /* empty */
    assert_true(rb_chunk_put(&a, array_of, 5, want, 0, true));
    assert_false(rb_chunk_put(&a, array_of, 0, want, 0, true));
    free(want);
    free_arrays(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_gives_every_chunk_in_order),
        cmocka_unit_test(test_put_lands_each_chunk_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
