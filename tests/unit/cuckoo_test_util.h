/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the cuckoo unit tests: a filter's whole encoding, and two filters' encodings compared. */
#ifndef NIDUS_CUCKOO_TEST_UTIL_H
#define NIDUS_CUCKOO_TEST_UTIL_H

#include "nidus/cuckoo.h"
#include "test_util.h"

/* cf's encoding (malloc'd), `*len` bytes: exactly nidus_cuckoo_encoded_size, which a buffer one byte shorter
 * cannot take (the test fails otherwise). */
static inline uint8_t *test_cuckoo_encode(const nidus_cuckoo *cf, size_t *len)
{
    uint64_t size = nidus_cuckoo_encoded_size(cf);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, (size_t)size - 1, len), NIDUS_ERR_TOO_LARGE);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, (size_t)size, len), NIDUS_OK);
    assert_int_equal(*len, size);
    return buf;
}

/* a and b encode to the same bytes. */
static inline void test_assert_same_cuckoo_encoding(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    size_t la, lb;
    uint8_t *ea = test_cuckoo_encode(a, &la), *eb = test_cuckoo_encode(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ea, eb, la);
    free(ea);
    free(eb);
}

#endif
