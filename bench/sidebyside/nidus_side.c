/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus through its public API (libnidus.a), four ways for the cuckoo filter:
 *   key   nidus_cuckoo_add / nidus_cuckoo_contains on the 8 key bytes (the library hashes them with XXH3)
 *   hash  nidus_cuckoo_add_hash / _contains_hash on a cheap mixer of the key (murmur3's fmix64 of key+seed,
 *         the same mixer as fastfilter's SimpleMixSplit), computed inside the timed loop
 *   bhash nidus_cuckoo_add_many_hash / _contains_many_hash, blocks of BLOCK keys, mixer as above (timed)
 *   bkey  nidus_cuckoo_add_many / _contains_many on key pointers and lengths, blocks of BLOCK keys
 * five for the binary fuse filter (nidus_fuse, 8 and 16 bits: hash, bhash, and key for 8 bits; see below),
 * and three for the Bloom filter (nidus_bloom, non-scaling): key, hash, bhash (add_many_hash / contains_many_hash,
 * blocks of BLOCK, mixer as above), in each of its two layouts: `nidus-bloom-blocked-*`
 * (NIDUS_BLOOM_LAYOUT_BLOCKED: one block a key, what fastfilter's blocked Bloom is) and `nidus-bloom-compact-*`
 * (the default, RedisBloom's plain bit array: k cache lines a key).
 * With nidus's internal headers at hand, also "-base" entries: key and bkey on the baseline copy of the
 * lookup kernels (see force_base below).
 * Compiled with nidus's own Release flags (-O3 -DNDEBUG, no -march). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <nidus/nidus.h>

#include "sbs.h"

#define BLOCK 1024u
#define MIX_SEED UINT64_C(0x5851f42d4c957f2d)

static inline uint64_t mix(uint64_t k)
{
    uint64_t h = k + MIX_SEED;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

static nidus_cuckoo *cf_new(size_t n, unsigned f, bool semi)
{
    nidus_cuckoo_params p = {0};
    p.capacity = n;
    p.fingerprint_bits = f;
    p.bucket_size = 4;
    p.semi_sort = semi;
    p.seed = 42;
    nidus_cuckoo *cf = NULL;
    nidus_status st = nidus_cuckoo_new(&p, &cf);
    if (st) {
        fprintf(stderr, "nidus_cuckoo_new: %s\n", nidus_strerror(st));
        exit(1);
    }
    return cf;
}

static void *cf_build_key(const uint64_t *keys, size_t n, unsigned f, bool semi, uint64_t *failed)
{
    nidus_cuckoo *cf = cf_new(n, f, semi);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += nidus_cuckoo_add(cf, &keys[i], sizeof keys[i]) != NIDUS_OK;
    *failed = bad;
    return cf;
}

static void *cf_build_hash(const uint64_t *keys, size_t n, unsigned f, bool semi, uint64_t *failed)
{
    nidus_cuckoo *cf = cf_new(n, f, semi);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += nidus_cuckoo_add_hash(cf, mix(keys[i])) != NIDUS_OK;
    *failed = bad;
    return cf;
}

static void *cf_build_bhash(const uint64_t *keys, size_t n, unsigned f, bool semi, uint64_t *failed)
{
    nidus_cuckoo *cf = cf_new(n, f, semi);
    uint64_t hashes[BLOCK], bad = 0;
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = mix(keys[base + k]);
        size_t done = 0;
        while (done < m) {
            size_t added = 0;
            if (nidus_cuckoo_add_many_hash(cf, hashes + done, m - done, &added) == NIDUS_OK) {
                done = m;
            } else {
                bad++;
                done += added + 1; /* skip the failing key, go on with the rest */
            }
        }
    }
    *failed = bad;
    return cf;
}

static void *cf_build_bkey(const uint64_t *keys, size_t n, unsigned f, bool semi, uint64_t *failed)
{
    nidus_cuckoo *cf = cf_new(n, f, semi);
    const void *ptrs[BLOCK];
    size_t lens[BLOCK];
    uint64_t bad = 0;
    for (size_t k = 0; k < BLOCK; k++)
        lens[k] = sizeof(uint64_t);
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        for (size_t k = 0; k < m; k++)
            ptrs[k] = &keys[base + k];
        size_t done = 0;
        while (done < m) {
            size_t added = 0;
            if (nidus_cuckoo_add_many(cf, ptrs + done, lens + done, m - done, &added) == NIDUS_OK) {
                done = m;
            } else {
                bad++;
                done += added + 1;
            }
        }
    }
    *failed = bad;
    return cf;
}

static uint64_t cf_lookup_key(const void *f, const uint64_t *keys, size_t n)
{
    const nidus_cuckoo *cf = f;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += nidus_cuckoo_contains(cf, &keys[i], sizeof keys[i]);
    return hits;
}

static uint64_t cf_lookup_hash(const void *f, const uint64_t *keys, size_t n)
{
    const nidus_cuckoo *cf = f;
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += nidus_cuckoo_contains_hash(cf, mix(keys[i]));
    return hits;
}

static uint64_t cf_lookup_bhash(const void *f, const uint64_t *keys, size_t n)
{
    const nidus_cuckoo *cf = f;
    uint64_t hashes[BLOCK], hits = 0;
    bool out[BLOCK];
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = mix(keys[base + k]);
        nidus_cuckoo_contains_many_hash(cf, hashes, m, out);
        for (size_t k = 0; k < m; k++)
            hits += out[k];
    }
    return hits;
}

static uint64_t cf_lookup_bkey(const void *f, const uint64_t *keys, size_t n)
{
    const nidus_cuckoo *cf = f;
    const void *ptrs[BLOCK];
    size_t lens[BLOCK];
    bool out[BLOCK];
    uint64_t hits = 0;
    for (size_t k = 0; k < BLOCK; k++)
        lens[k] = sizeof(uint64_t);
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        for (size_t k = 0; k < m; k++)
            ptrs[k] = &keys[base + k];
        nidus_cuckoo_contains_many(cf, ptrs, lens, m, out);
        for (size_t k = 0; k < m; k++)
            hits += out[k];
    }
    return hits;
}

static uint64_t cf_bytes(const void *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    return s.memory_bytes;
}

static void cf_destroy(void *f) { nidus_cuckoo_free(f); }

#define CF_BUILDERS(F, SEMI)                                                                                   \
    static void *b_key_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)                 \
    {                                                                                                          \
        (void)o;                                                                                               \
        return cf_build_key(k, n, F, SEMI, fl);                                                                \
    }                                                                                                          \
    static void *b_hash_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)                \
    {                                                                                                          \
        (void)o;                                                                                               \
        return cf_build_hash(k, n, F, SEMI, fl);                                                               \
    }                                                                                                          \
    static void *b_bhash_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)               \
    {                                                                                                          \
        (void)o;                                                                                               \
        return cf_build_bhash(k, n, F, SEMI, fl);                                                              \
    }                                                                                                          \
    static void *b_bkey_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)                \
    {                                                                                                          \
        (void)o;                                                                                               \
        return cf_build_bkey(k, n, F, SEMI, fl);                                                               \
    }

CF_BUILDERS(12, 0)
CF_BUILDERS(13, 1)
CF_BUILDERS(8, 0)

/* The "-base" entries: the same filters with their lookups forced onto the baseline copy of the kernels
 * (isa_impl.h), for measuring both copies in one run on a CPU that has x86-64-v3. Needs nidus's internal
 * headers (build.sh passes -DSBS_NIDUS_INTERNAL when $NIDUS_SRC/src/common/isa_impl.h, or src/isa_impl.h in
 * checkouts before the folders, exists). */
#ifdef SBS_NIDUS_INTERNAL
#include "cuckoo_filter.h"
#include "isa_impl.h"

static void *force_base(void *f)
{
    nidus_cuckoo *cf = f;
    for (unsigned t = 0; t < cf->ntables; t++)
        cf->tables[t].isa = NIDUS_ISA_BASE;
    return f;
}

#define CF_BASE_BUILDERS(F, SEMI)                                                                              \
    static void *b_key_base_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)            \
    {                                                                                                          \
        return force_base(b_key_##F##SEMI(k, n, o, fl));                                                       \
    }                                                                                                          \
    static void *b_bkey_base_##F##SEMI(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)           \
    {                                                                                                          \
        return force_base(b_bkey_##F##SEMI(k, n, o, fl));                                                      \
    }
CF_BASE_BUILDERS(12, 0)
CF_BASE_BUILDERS(13, 1)
#endif

/* ---- Bloom ---- */

static nidus_bloom *bf_new(size_t n, const sbs_opts *o, unsigned layout)
{
    nidus_bloom_params p = {0};
    p.capacity = n;
    p.error_rate = o->bloom_error;
    p.expansion = 0; /* non-scaling */
    p.seed = 42;
    p.layout = layout;
    nidus_bloom *bf = NULL;
    nidus_status st = nidus_bloom_new(&p, &bf);
    if (st) {
        fprintf(stderr, "nidus_bloom_new: %s\n", nidus_strerror(st));
        exit(1);
    }
    return bf;
}

static void *bf_build_key(const uint64_t *keys, size_t n, const sbs_opts *o, unsigned layout, uint64_t *failed)
{
    nidus_bloom *bf = bf_new(n, o, layout);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += nidus_bloom_add(bf, &keys[i], sizeof keys[i], NULL) != NIDUS_OK;
    *failed = bad;
    return bf;
}

static void *bf_build_hash(const uint64_t *keys, size_t n, const sbs_opts *o, unsigned layout, uint64_t *failed)
{
    nidus_bloom *bf = bf_new(n, o, layout);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += nidus_bloom_add_hash(bf, mix(keys[i]), NULL) != NIDUS_OK;
    *failed = bad;
    return bf;
}

static void *bf_build_bhash(const uint64_t *keys, size_t n, const sbs_opts *o, unsigned layout, uint64_t *failed)
{
    nidus_bloom *bf = bf_new(n, o, layout);
    uint64_t hashes[BLOCK], bad = 0;
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK, done = 0;
        for (size_t k = 0; k < m; k++)
            hashes[k] = mix(keys[base + k]);
        while (done < m) {
            size_t took = 0;
            if (nidus_bloom_add_many_hash(bf, hashes + done, m - done, NULL, &took) == NIDUS_OK) {
                done = m;
            } else {
                bad++;
                done += took + 1; /* skip the failing key, go on with the rest */
            }
        }
    }
    *failed = bad;
    return bf;
}

#define BF_BUILDERS(NAME, LAYOUT)                                                                              \
    static void *b_bf_key_##NAME(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)                 \
    {                                                                                                          \
        return bf_build_key(k, n, o, LAYOUT, fl);                                                              \
    }                                                                                                          \
    static void *b_bf_hash_##NAME(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)                \
    {                                                                                                          \
        return bf_build_hash(k, n, o, LAYOUT, fl);                                                             \
    }                                                                                                          \
    static void *b_bf_bhash_##NAME(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)               \
    {                                                                                                          \
        return bf_build_bhash(k, n, o, LAYOUT, fl);                                                            \
    }
BF_BUILDERS(blocked, NIDUS_BLOOM_LAYOUT_BLOCKED)
BF_BUILDERS(compact, NIDUS_BLOOM_LAYOUT_COMPACT)

static uint64_t bf_lookup_key(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += nidus_bloom_contains(f, &keys[i], sizeof keys[i]);
    return hits;
}

static uint64_t bf_lookup_hash(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += nidus_bloom_contains_hash(f, mix(keys[i]));
    return hits;
}

static uint64_t bf_lookup_bhash(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hashes[BLOCK], hits = 0;
    bool out[BLOCK];
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = mix(keys[base + k]);
        nidus_bloom_contains_many_hash(f, hashes, m, out);
        for (size_t k = 0; k < m; k++)
            hits += out[k];
    }
    return hits;
}

static uint64_t bf_bytes(const void *f)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    return s.memory_bytes;
}

static void bf_destroy(void *f) { nidus_bloom_free(f); }

/* ---- binary fuse (static: built once from every key) ----
 * hash: nidus_fuse_build_hash / _contains_hash with the key itself as the 64-bit hash, as fastfilter's
 * binary_fuse8_populate / _contain take it (both then mix it with the construction seed); bhash: the same
 * lookups through _contains_many_hash in blocks of BLOCK; key: nidus_fuse_build / _contains on the 8 key bytes
 * (XXH3 inside). */

static void *fuse_build(const uint64_t *keys, size_t n, unsigned bits, int by_key, uint64_t *failed)
{
    nidus_fuse_params p = {0};
    p.fingerprint_bits = bits;
    p.seed = 42;
    nidus_fuse *f = NULL;
    nidus_status st;
    if (by_key) {
        const void **ptrs = malloc((n ? n : 1) * sizeof *ptrs);
        size_t *lens = malloc((n ? n : 1) * sizeof *lens);
        if (!ptrs || !lens)
            exit(1);
        for (size_t i = 0; i < n; i++) {
            ptrs[i] = &keys[i];
            lens[i] = sizeof keys[i];
        }
        st = nidus_fuse_build(&p, ptrs, lens, n, &f);
        free(ptrs);
        free(lens);
    } else {
        st = nidus_fuse_build_hash(&p, keys, n, &f);
    }
    if (st) {
        fprintf(stderr, "nidus_fuse_build: %s\n", nidus_strerror(st));
        exit(1);
    }
    *failed = 0;
    return f;
}

static void *b_fuse8_hash(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)
{
    (void)o;
    return fuse_build(k, n, 8, 0, fl);
}
static void *b_fuse8_key(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)
{
    (void)o;
    return fuse_build(k, n, 8, 1, fl);
}
static void *b_fuse16_hash(const uint64_t *k, size_t n, const sbs_opts *o, uint64_t *fl)
{
    (void)o;
    return fuse_build(k, n, 16, 0, fl);
}

/* Under NIDUS_INLINE each width's row calls that width's inline entry (nidus/inline_fuse.h), as fastfilter's
 * caller picks binary_fuse8_contain or binary_fuse16_contain; otherwise both call nidus_fuse_contains_hash. */
#ifdef NIDUS_INLINE
#define FUSE8_CONTAINS_HASH nidus_inline_fuse8_contains_hash
#define FUSE16_CONTAINS_HASH nidus_inline_fuse16_contains_hash
#else
#define FUSE8_CONTAINS_HASH nidus_fuse_contains_hash
#define FUSE16_CONTAINS_HASH nidus_fuse_contains_hash
#endif

static uint64_t fuse8_lookup_hash(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += FUSE8_CONTAINS_HASH(f, keys[i]);
    return hits;
}

static uint64_t fuse16_lookup_hash(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += FUSE16_CONTAINS_HASH(f, keys[i]);
    return hits;
}

static uint64_t fuse_lookup_bhash(const void *f, const uint64_t *keys, size_t n)
{
    bool out[BLOCK];
    uint64_t hits = 0;
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t m = n - base < BLOCK ? n - base : BLOCK;
        nidus_fuse_contains_many_hash(f, keys + base, m, out);
        for (size_t k = 0; k < m; k++)
            hits += out[k];
    }
    return hits;
}

static uint64_t fuse_lookup_key(const void *f, const uint64_t *keys, size_t n)
{
    uint64_t hits = 0;
    for (size_t i = 0; i < n; i++)
        hits += nidus_fuse_contains(f, &keys[i], sizeof keys[i]);
    return hits;
}

static uint64_t fuse_bytes(const void *f)
{
    nidus_fuse_stats s;
    nidus_fuse_get_stats(f, &s);
    return s.memory_bytes;
}

static void fuse_destroy(void *f) { nidus_fuse_free(f); }

static const sbs_impl impls[] = {
    {"nidus-fuse8-hash", "fuse8", "hash", 0, 2, b_fuse8_hash, fuse8_lookup_hash, fuse_bytes, fuse_destroy},
    {"nidus-fuse8-bhash", "fuse8", "bhash", 0, 2, b_fuse8_hash, fuse_lookup_bhash, fuse_bytes, fuse_destroy},
    {"nidus-fuse8-key", "fuse8", "key", 0, 2, b_fuse8_key, fuse_lookup_key, fuse_bytes, fuse_destroy},
    {"nidus-fuse16-hash", "fuse16", "hash", 0, 2, b_fuse16_hash, fuse16_lookup_hash, fuse_bytes, fuse_destroy},
    {"nidus-fuse16-bhash", "fuse16", "bhash", 0, 2, b_fuse16_hash, fuse_lookup_bhash, fuse_bytes, fuse_destroy},
    {"nidus-c12-key", "c12", "key", 1, 0, b_key_120, cf_lookup_key, cf_bytes, cf_destroy},
    {"nidus-c12-hash", "c12", "hash", 1, 0, b_hash_120, cf_lookup_hash, cf_bytes, cf_destroy},
    {"nidus-c12-bhash", "c12", "bhash", 1, 1, b_bhash_120, cf_lookup_bhash, cf_bytes, cf_destroy},
    {"nidus-c12-bkey", "c12", "bkey", 1, 1, b_bkey_120, cf_lookup_bkey, cf_bytes, cf_destroy},
    {"nidus-ss13-key", "ss13", "key", 0, 0, b_key_131, cf_lookup_key, cf_bytes, cf_destroy},
    {"nidus-ss13-hash", "ss13", "hash", 0, 0, b_hash_131, cf_lookup_hash, cf_bytes, cf_destroy},
    {"nidus-ss13-bhash", "ss13", "bhash", 0, 1, b_bhash_131, cf_lookup_bhash, cf_bytes, cf_destroy},
    {"nidus-ss13-bkey", "ss13", "bkey", 0, 1, b_bkey_131, cf_lookup_bkey, cf_bytes, cf_destroy},
    {"nidus-c8-key", "c8", "key", 0, 0, b_key_80, cf_lookup_key, cf_bytes, cf_destroy},
    {"nidus-c8-hash", "c8", "hash", 0, 0, b_hash_80, cf_lookup_hash, cf_bytes, cf_destroy},
    {"nidus-c8-bhash", "c8", "bhash", 0, 1, b_bhash_80, cf_lookup_bhash, cf_bytes, cf_destroy},
    {"nidus-c8-bkey", "c8", "bkey", 0, 1, b_bkey_80, cf_lookup_bkey, cf_bytes, cf_destroy},
#ifdef SBS_NIDUS_INTERNAL
    {"nidus-c12-key-base", "c12", "key-base", 1, 0, b_key_base_120, cf_lookup_key, cf_bytes, cf_destroy},
    {"nidus-c12-bkey-base", "c12", "bkey-base", 1, 1, b_bkey_base_120, cf_lookup_bkey, cf_bytes, cf_destroy},
    {"nidus-ss13-key-base", "ss13", "key-base", 0, 0, b_key_base_131, cf_lookup_key, cf_bytes, cf_destroy},
    {"nidus-ss13-bkey-base", "ss13", "bkey-base", 0, 1, b_bkey_base_131, cf_lookup_bkey, cf_bytes, cf_destroy},
#endif
    /* config "bbloom" (paired with fastfilter's blocked Bloom) is the blocked layout; "bloom-compact" the default */
    {"nidus-bloom-blocked-key", "bbloom", "key", 0, 0, b_bf_key_blocked, bf_lookup_key, bf_bytes, bf_destroy},
    {"nidus-bloom-blocked-hash", "bbloom", "hash", 0, 0, b_bf_hash_blocked, bf_lookup_hash, bf_bytes, bf_destroy},
    {"nidus-bloom-blocked-bhash", "bbloom", "bhash", 0, 1, b_bf_bhash_blocked, bf_lookup_bhash, bf_bytes, bf_destroy},
    {"nidus-bloom-compact-key", "bloom-compact", "key", 0, 0, b_bf_key_compact, bf_lookup_key, bf_bytes, bf_destroy},
    {"nidus-bloom-compact-hash", "bloom-compact", "hash", 0, 0, b_bf_hash_compact, bf_lookup_hash, bf_bytes,
     bf_destroy},
    {"nidus-bloom-compact-bhash", "bloom-compact", "bhash", 0, 1, b_bf_bhash_compact, bf_lookup_bhash, bf_bytes,
     bf_destroy},
};

const sbs_impl *sbs_nidus_impls(size_t *count)
{
    *count = sizeof impls / sizeof impls[0];
    return impls;
}
