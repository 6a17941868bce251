/* nidus — the cuckoo filter: approximate set membership with delete and count.
 *
 * A filter answers "maybe present" or "certainly absent". It never gives a false negative for an item that was
 * added and not removed; it gives a false positive with a probability bounded by `error_bound` in its stats.
 * Handles are not thread-safe: serialise writers, or give each thread its own filter. Read-only calls
 * (contains, count, stats) on a filter nobody is writing may run concurrently. */
#ifndef NIDUS_CUCKOO_H
#define NIDUS_CUCKOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "status.h"

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIDUS_CUCKOO_MIN_FINGERPRINT_BITS 4u
#define NIDUS_CUCKOO_MAX_FINGERPRINT_BITS 32u
#define NIDUS_CUCKOO_MAX_KICKS 65535u
#define NIDUS_CUCKOO_DEFAULT_MAX_KICKS 500u
#define NIDUS_CUCKOO_DEFAULT_ERROR_RATE 0.01

typedef struct nidus_cuckoo nidus_cuckoo;

/* What the caller asks for. Zero in any field means "choose for me"; start from `{0}` and set what matters. */
typedef struct nidus_cuckoo_params {
    uint64_t capacity;         /* items the filter must hold (>= 1) */
    double error_rate;         /* target false-positive rate in (0, 1); ignored when fingerprint_bits is set */
    unsigned fingerprint_bits; /* f in [4, 32]; 0: the smallest f that meets error_rate */
    unsigned bucket_size;      /* b in {1, 2, 4, 8}; 0: the b that costs the fewest bits per item */
    unsigned max_kicks;        /* relocations tried before an add gives up, [1, 65535]; 0: 500 */
    bool semi_sort;            /* b = 4 only: store each slot in f-1 bits at the error rate of f */
    uint64_t seed;             /* hash seed; filters must share it to share pre-computed hashes */
    const nidus_allocator *allocator; /* NULL: the C library's malloc/calloc/realloc/free */
} nidus_cuckoo_params;

/* The configuration a set of parameters resolves to, before anything is allocated. */
typedef struct nidus_cuckoo_plan {
    unsigned bucket_size;
    unsigned fingerprint_bits;
    bool semi_sort;
    uint64_t buckets;     /* any even number, not rounded to a power of two */
    uint64_t slots;       /* buckets * bucket_size */
    uint64_t table_bytes; /* memory of the fingerprint table */
    double bits_per_item; /* table bits / capacity */
    double error_bound;   /* false-positive probability bound with every slot occupied */
} nidus_cuckoo_plan;

/* Counters and derived figures of a live filter. */
typedef struct nidus_cuckoo_stats {
    uint64_t items;          /* fingerprints stored, duplicates included */
    uint64_t overflow_items; /* of those, duplicate copies counted outside the table (see nidus_cuckoo_add) */
    uint64_t buckets;
    uint64_t slots;
    unsigned bucket_size;
    unsigned fingerprint_bits;
    unsigned max_kicks;
    bool semi_sort;
    double load;          /* occupied slots / slots */
    uint64_t memory_bytes; /* everything the filter holds through its allocator */
    double bits_per_item; /* memory bits / items (0 when empty) */
    double error_bound;   /* false-positive probability bound at full occupancy */
} nidus_cuckoo_stats;

/* Resolves `params` into a plan: chooses b and f when they are 0, sizes the table for `capacity` at the load
 * that b can reach, and reports the cost. NIDUS_ERR_INVALID_ARGUMENT for any field out of range,
 * NIDUS_ERR_TOO_LARGE when the table would not fit in memory addresses. */
NIDUS_API nidus_status nidus_cuckoo_plan_params(const nidus_cuckoo_params *params, nidus_cuckoo_plan *plan);

/* Creates an empty filter; `*out` is set only on success. Fails as nidus_cuckoo_plan_params does, or with
 * NIDUS_ERR_NO_MEMORY. The table is allocated zeroed, so untouched pages of a large table cost nothing. */
NIDUS_API nidus_status nidus_cuckoo_new(const nidus_cuckoo_params *params, nidus_cuckoo **out);

/* Releases the filter and everything it holds. NULL is accepted and ignored. */
NIDUS_API void nidus_cuckoo_free(nidus_cuckoo *filter);

/* The 64-bit hash the key-based calls use for `key` (seeded XXH3). Pass it to the `_hash` variants to hash
 * once and probe several filters created with the same seed. */
NIDUS_API uint64_t nidus_cuckoo_hash(const nidus_cuckoo *filter, const void *key, size_t len);

/* Adds one copy of the key. The same key may be added many times; copies beyond what its two buckets hold
 * are counted in a side table, so count and remove stay exact and nothing kicks or fails for them.
 * NIDUS_ERR_FULL when no room was found within max_kicks relocations: the filter is then unchanged.
 * NIDUS_ERR_NO_MEMORY only when the duplicate side table had to grow. */
NIDUS_API nidus_status nidus_cuckoo_add(nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_cuckoo_add_hash(nidus_cuckoo *filter, uint64_t hash);

/* Adds the key only if it is not (maybe) present already; `*added` tells which happened. This is the safe way
 * to keep remove exact: a false positive here skips the add rather than storing a copy remove could not tell
 * from another key's. Fails as nidus_cuckoo_add does. */
NIDUS_API nidus_status nidus_cuckoo_add_unique(nidus_cuckoo *filter, const void *key, size_t len, bool *added);
NIDUS_API nidus_status nidus_cuckoo_add_unique_hash(nidus_cuckoo *filter, uint64_t hash, bool *added);

/* True when the key may be present; false means it was certainly never added (or was removed). */
NIDUS_API bool nidus_cuckoo_contains(const nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API bool nidus_cuckoo_contains_hash(const nidus_cuckoo *filter, uint64_t hash);

/* Batched lookups: out[k] tells whether keys[k] (lens[k] bytes) may be present. Hashes ahead and prefetches
 * both buckets of upcoming keys, so their memory latency overlaps; the answers equal one-at-a-time calls. */
NIDUS_API void nidus_cuckoo_contains_many(const nidus_cuckoo *filter, const void *const *keys, const size_t *lens,
                                          size_t n, bool *out);
NIDUS_API void nidus_cuckoo_contains_many_hash(const nidus_cuckoo *filter, const uint64_t *hashes, size_t n,
                                               bool *out);

/* Batched adds, in order, with the same prefetching. Stops at the first failure and returns its status;
 * `*added` (may be NULL) receives how many keys were added, which on failure is the failing key's index. */
NIDUS_API nidus_status nidus_cuckoo_add_many(nidus_cuckoo *filter, const void *const *keys, const size_t *lens,
                                             size_t n, size_t *added);
NIDUS_API nidus_status nidus_cuckoo_add_many_hash(nidus_cuckoo *filter, const uint64_t *hashes, size_t n,
                                                  size_t *added);

/* Removes one copy of the key. NIDUS_ERR_NOT_FOUND when none is present. Removing a key that was never added
 * but collides with one that was removes the other's copy: use add_unique to keep that from happening. */
NIDUS_API nidus_status nidus_cuckoo_remove(nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_cuckoo_remove_hash(nidus_cuckoo *filter, uint64_t hash);

/* Number of copies of the key's fingerprint in its two buckets and the duplicate side table: never below the
 * number of times the key was added and not removed; above it only through fingerprint collisions. */
NIDUS_API uint64_t nidus_cuckoo_count(const nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API uint64_t nidus_cuckoo_count_hash(const nidus_cuckoo *filter, uint64_t hash);

/* Removes every item; keeps the memory and the parameters. */
NIDUS_API void nidus_cuckoo_clear(nidus_cuckoo *filter);

/* Fills `*stats` with the filter's current figures. */
NIDUS_API void nidus_cuckoo_get_stats(const nidus_cuckoo *filter, nidus_cuckoo_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
