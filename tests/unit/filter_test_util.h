/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the unit tests of nidus_filter merges: a filter's encoding (to compare it with itself before and after
 * a failure), namespaced keys added in bulk, a cuckoo filter on the failing hook. Include failing_alloc.h first. */
#ifndef NIDUS_FILTER_TEST_UTIL_H
#define NIDUS_FILTER_TEST_UTIL_H

#include <nidus/nidus.h>

#include "test_util.h"

typedef struct bytes {
    uint8_t *p;
    size_t n;
} bytes;

/* f's encoding (malloc'd), made with allocation failures disarmed. */
static inline bytes filter_bytes(const nidus_filter *f)
{
    long armed = g_fail.fail_at;
    arm(0);
    bytes b;
    size_t size = (size_t)nidus_filter_encoded_size(f);
    b.p = malloc(size);
    assert_int_equal(nidus_filter_encode(f, b.p, size, &b.n), NIDUS_OK);
    g_fail.fail_at = armed;
    return b;
}

static inline void assert_same_bytes(const nidus_filter *f, bytes before)
{
    bytes now = filter_bytes(f);
    assert_int_equal(now.n, before.n);
    assert_memory_equal(now.p, before.p, before.n);
    free(now.p);
}

/* Key i of namespace `ns` ("d" for a destination's, "s" for a source's, ...), varied by the test seed. */
static inline size_t key(char *buf, const char *ns, uint64_t i)
{
    return test_key(buf, 32, ns, i ^ test_seed() << 20);
}

/* Adds keys [from, from + n) of `ns`, each `times` times. */
static inline void add_keys(nidus_filter *f, const char *ns, uint64_t from, uint64_t n, unsigned times)
{
    char k[32];
    for (uint64_t i = from; i < from + n; i++)
        for (unsigned t = 0; t < times; t++)
            assert_int_equal(nidus_filter_add(f, k, key(k, ns, i)), NIDUS_OK);
}

static inline nidus_filter *cuckoo_with(const nidus_cuckoo_params *p)
{
    nidus_filter_params fp = {.kind = NIDUS_KIND_CUCKOO, .capacity = 1, .allocator = &g_hook, .kind_params = p};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&fp, &f), NIDUS_OK);
    return f;
}

#endif
