/* SPDX-License-Identifier: BSD-3-Clause */
/* The property checker's shared parts: a seeded PRNG, a counting allocator that can fail on purpose, the
 * failure report, and encoding helpers. Each filter family (property_cuckoo.c, property_bloom.c,
 * property_fuse.c, property_window.c) runs episodes: a random configuration, then a random sequence of operations checked against
 * an exact model (for the static fuse filter: a set built once, then encoded, decoded and viewed). */
#ifndef NIDUS_PROPERTY_H
#define NIDUS_PROPERTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nidus/nidus.h>

typedef struct prop_rng {
    uint64_t s;
} prop_rng;

/* splitmix64: the whole sequence follows from the episode's seed, so an episode replays exactly. */
static inline uint64_t prop_next(prop_rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t prop_range(prop_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + prop_next(r) % (hi - lo + 1);
}

/* True with probability num / den. */
static inline bool prop_chance(prop_rng *r, unsigned num, unsigned den) { return prop_next(r) % den < num; }

/* An allocator hook that counts live blocks and, while `fail_one_in` is nonzero and `armed`, refuses one
 * request in `fail_one_in` (deterministically, from its own PRNG). */
typedef struct prop_alloc {
    nidus_allocator hook;
    prop_rng rng;
    unsigned fail_one_in;
    bool armed;
    int64_t live; /* blocks handed out and not freed */
} prop_alloc;

void prop_alloc_init(prop_alloc *a, uint64_t seed, unsigned fail_one_in);

/* Where the run is, for the report of a failure. */
typedef struct prop_where {
    uint64_t seed;    /* the run's seed */
    uint64_t episode; /* episode index: its seed is derived from (seed, episode) */
    uint64_t step;    /* operation within the episode */
    const char *family;
    const char *op;
    char config[256];
    bool no_merge;    /* --no-merge: cuckoo episodes draw the operations of the mix before merges (their op
                       * range goes to lookups), so episodes found before then replay exactly */
} prop_where;

extern prop_where prop_at;

/* Reports a broken property with the reproduction (seed, episode, step) and exits with status 1. */
_Noreturn void prop_fail(const char *file, int line, const char *what);

#define PROP_CHECK(cond)                                                                                       \
    do {                                                                                                       \
        if (!(cond))                                                                                           \
            prop_fail(__FILE__, __LINE__, #cond);                                                              \
    } while (0)

/* A growable byte buffer for encodings. */
typedef struct prop_bytes {
    uint8_t *p;
    size_t n, cap;
} prop_bytes;

void prop_bytes_reserve(prop_bytes *b, size_t n);
void prop_bytes_free(prop_bytes *b);

/* Runs `ops` operations of the family from episode seed `seed`; returns the operations done (an episode ends
 * at its own length or at `ops`). */
uint64_t prop_cuckoo_episode(uint64_t seed, uint64_t ops);
uint64_t prop_bloom_episode(uint64_t seed, uint64_t ops);
uint64_t prop_counting_episode(uint64_t seed, uint64_t ops);
uint64_t prop_fuse_episode(uint64_t seed, uint64_t ops);
uint64_t prop_window_episode(uint64_t seed, uint64_t ops);

/* Prints what the windowed episodes of the run checked (nothing when none ran). */
void prop_window_summary(void);

/* Cuckoo states checked so far with stash entries in some table (`full`: with some table's stash at its limit). */
uint64_t prop_cuckoo_stash_states(bool full);

/* Cuckoo merges so far that succeeded (`siblings`: that left the destination with a sibling table). */
uint64_t prop_cuckoo_merges(bool siblings);
/* Stepped compactions run to the end against the all-at-once one (whole), and states left mid-way. */
uint64_t prop_cuckoo_stepped_compactions(bool whole);

/* Reusable chunk buffer k (< PROP_CHUNKS_MAX) of NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD bytes, allocated
 * on first use; prop_release_buffers frees them all (at exit, so leak checkers see a clean run). */
#define PROP_CHUNKS_MAX 8
#define PROP_CHUNK_CAP (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD)
uint8_t *prop_chunk_buffer(unsigned k);
void prop_release_buffers(void);

/* The key of model id `id` (< 2^32): its 4 bytes, then 0 to 8 bytes of the episode's salt, so lengths vary
 * and distinct ids are distinct keys. */
typedef struct prop_keybuf {
    uint8_t b[12];
    size_t n;
} prop_keybuf;

static inline prop_keybuf prop_key(uint64_t salt, uint64_t id)
{
    prop_keybuf k;
    for (size_t i = 0; i < 4; i++)
        k.b[i] = (uint8_t)(id >> (8 * i));
    for (size_t i = 0; i < 8; i++)
        k.b[4 + i] = (uint8_t)(salt >> (8 * i));
    k.n = 4 + (size_t)((salt ^ id) % 9);
    return k;
}

#endif
