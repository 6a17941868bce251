/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the binary fuse filter: a static filter, built once from a set of keys and only read afterwards.
 *
 * A 3-wise binary fuse filter (Graf and Lemire, 2022) stores one 8- or 16-bit fingerprint a slot, about 1.13
 * slots a key for large sets: some 9 bits a key at an error of 2^-8, 18 at 2^-16, against 12.6 for a cuckoo
 * filter at 0.19 %. A lookup reads three slots. Keys cannot be added or removed: a changed set is built anew.
 * Every call but nidus_fuse_free only reads the filter, and may run concurrently with the others. */
#ifndef NIDUS_FUSE_H
#define NIDUS_FUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "api.h"
#include "codec.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The lookups only read the filter, which never changes: `pure` lets a caller's compiler keep the filter's fields
 * in registers across a loop of them (the inline path's fallback to these calls included). */
#if defined(__GNUC__) || defined(__clang__)
#define NIDUS_FUSE_PURE __attribute__((pure))
#else
#define NIDUS_FUSE_PURE
#endif

/* The most keys (hashes, duplicates included) one build takes. */
#define NIDUS_FUSE_MAX_KEYS (UINT64_C(1) << 31)

typedef struct nidus_fuse nidus_fuse;

typedef struct nidus_fuse_params {
    /* 8 or 16. 0: 8 when error_rate is 0 or at least 2^-8, else 16 (error_rate below 2^-16 is refused). */
    unsigned fingerprint_bits;
    double error_rate; /* 0 (not set), or in (0, 1): the bound the fingerprint width must meet */
    uint64_t seed;     /* the key hash's seed (nidus_hash); the construction's own seed is derived and stored */
    const nidus_allocator *allocator; /* NULL: libc; must outlive the filter */
} nidus_fuse_params;

typedef struct nidus_fuse_stats {
    uint64_t keys;          /* distinct hashes the filter was built from */
    uint64_t slots;         /* fingerprint slots, about 1.13 per key for large sets */
    uint64_t memory_bytes;  /* everything held through the allocator or in its mapping */
    double bits_per_item;   /* fingerprint array bits / keys (0 for an empty filter) */
    double error_bound;     /* false-positive rate of a key not in the set: 2^-fingerprint_bits (0 when empty) */
    uint64_t seed;          /* the key hash's seed (params.seed) */
    uint64_t construction_seed; /* the seed the fingerprints and slots were mixed with; the build found it */
    unsigned fingerprint_bits;
    bool read_only;         /* its slots are in a caller's buffer or a mapped file (_view, _map_file) */
} nidus_fuse_stats;

/* The 64-bit hash the _hash calls take for `key`: nidus_hash(key, len, params->seed) (NULL params: seed 0). */
NIDUS_API uint64_t nidus_fuse_hash(const nidus_fuse_params *params, const void *key, size_t len);

/* Builds a filter of the n keys (duplicates allowed; n = 0 gives a filter that answers "absent").
 * NIDUS_ERR_INVALID_ARGUMENT for bad parameters or NULL arrays with n > 0, NIDUS_ERR_TOO_LARGE past
 * NIDUS_FUSE_MAX_KEYS, NIDUS_ERR_NO_MEMORY, NIDUS_ERR_FULL when every construction seed tried failed. */
NIDUS_API nidus_status nidus_fuse_build(const nidus_fuse_params *params, const void *const *keys,
                                        const size_t *lens, size_t n, nidus_fuse **out);

/* The same from hashes computed by nidus_fuse_hash (or nidus_hash with params->seed). Working memory, freed
 * before it returns: about 20 bytes a key besides `hashes` and the filter (195 MB resident at 10M keys);
 * nidus_fuse_build adds 8 a key for the hashes it computes. */
NIDUS_API nidus_status nidus_fuse_build_hash(const nidus_fuse_params *params, const uint64_t *hashes, size_t n,
                                             nidus_fuse **out);

/* Frees the filter (and unmaps its file); NULL does nothing. */
NIDUS_API void nidus_fuse_free(nidus_fuse *filter);

/* True when the key may be in the set; false means it certainly was not among the keys built from. */
NIDUS_API NIDUS_FUSE_PURE bool nidus_fuse_contains(const nidus_fuse *filter, const void *key, size_t len);
NIDUS_API NIDUS_FUSE_PURE bool nidus_fuse_contains_hash(const nidus_fuse *filter, uint64_t hash);

/* Batched lookups with prefetching: out[i] as the one-at-a-time call for keys[i] / hashes[i]. */
NIDUS_API void nidus_fuse_contains_many(const nidus_fuse *filter, const void *const *keys, const size_t *lens,
                                        size_t n, bool *out);
NIDUS_API void nidus_fuse_contains_many_hash(const nidus_fuse *filter, const uint64_t *hashes, size_t n,
                                             bool *out);

/* Fills `*stats` (constant over the filter's life). */
NIDUS_API void nidus_fuse_get_stats(const nidus_fuse *filter, nidus_fuse_stats *stats);

/* Encoding and files: as the nidus_cuckoo_ functions of the same names (nidus/cuckoo.h); the decoders check
 * every size field against the input before they allocate or read. */
NIDUS_API uint64_t nidus_fuse_encoded_size(const nidus_fuse *filter);
NIDUS_API nidus_status nidus_fuse_encode(const nidus_fuse *filter, void *buf, size_t cap, size_t *written);
NIDUS_API nidus_status nidus_fuse_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                         nidus_fuse **out);
/* A filter over the encoding in `buf`, not copied: `buf` must outlive it. */
NIDUS_API nidus_status nidus_fuse_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                       nidus_fuse **out);
NIDUS_API nidus_status nidus_fuse_save_file(const nidus_fuse *filter, const char *path);
NIDUS_API nidus_status nidus_fuse_load_file(const char *path, const nidus_allocator *allocator, nidus_fuse **out);
/* Maps the file read-only and checks every block at open (nidus_filter_open with a nidus_file_guard opens it in
 * O(1) and leaves each block to be checked on first use); the slots stay in the mapping, which
 * nidus_fuse_free unmaps. */
NIDUS_API nidus_status nidus_fuse_map_file(const char *path, const nidus_allocator *allocator, nidus_fuse **out);

#ifdef __cplusplus
}
#endif

#endif
