/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the hash every filter's key-based calls use. */
#ifndef NIDUS_HASH_H
#define NIDUS_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XXH3-64 of the key with the given seed: what nidus_cuckoo_hash and nidus_bloom_hash return for a filter
 * made with that seed, so hashes computed once can be passed to the `_hash` calls of several filters. */
NIDUS_API uint64_t nidus_hash(const void *key, size_t len, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
