/* SPDX-License-Identifier: BSD-3-Clause */
/* The exported hash (nidus/hash.h): the one the filters' key-based calls use, for callers that hash once. */
#include "nidus/hash.h"

#include "hash_impl.h"

uint64_t nidus_hash(const void *key, size_t len, uint64_t seed) { return nidus_hash_bytes(key, len, seed); }
