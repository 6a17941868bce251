/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the Bloom family: a scalable Bloom filter (RedisBloom's BF semantics) and a counting Bloom filter with
 * 4-bit counters.
 *
 * The scalable filter has two layouts. Compact (the default): plain Bloom layers of RedisBloom's size for the
 * same capacity and error, never more bytes. Blocked: a key's probes all fall in one 64-byte block, so a lookup
 * or an add touches one cache line; blocks fill unevenly, which costs bits (about 5 % at 1 %, 10 % at 0.1 %, 20 %
 * at 0.01 % more than compact), and below an error of 1e-8 a layer is plain anyway. The counting filter is
 * blocked. Sizing accounts for all of it, so the error measured at capacity meets the target.
 *
 * Ownership: a filter returned by _new, _decode, _view, _load_file, _map_file or _load_chunk is the caller's, freed
 * with its _free; the allocator hook it was made with, and a view's buffer, must outlive it. Handles are not
 * thread-safe: serialise writers (adds, removes, clear, merge, chunk loads), or give each thread its own filter.
 * Read-only calls (contains, count, stats, encode, dump_chunk) on a filter nobody is writing may run
 * concurrently. A filter still loading chunks answers false to every lookup (count: 0) and refuses writes with
 * NIDUS_ERR_READ_ONLY, as a view does. No call prints, aborts or keeps global state. */
#ifndef NIDUS_BLOOM_H
#define NIDUS_BLOOM_H

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

#define NIDUS_BLOOM_DEFAULT_MAX_LAYERS 32u
#define NIDUS_BLOOM_MAX_LAYERS 64u
#define NIDUS_BLOOM_MAX_EXPANSION 32768u

/* nidus_bloom_params.layout */
#define NIDUS_BLOOM_LAYOUT_COMPACT 0u /* plain layers: RedisBloom's bytes or fewer, k cache lines a key */
#define NIDUS_BLOOM_LAYOUT_BLOCKED 1u /* one 64-byte block a key: fastest, more bytes (see above) */

/* ---- scalable Bloom filter: layers of the compact (default) or blocked layout ---- */

typedef struct nidus_bloom nidus_bloom;

typedef struct nidus_bloom_params {
    uint64_t capacity;  /* items the first layer holds at error_rate (>= 1) */
    double error_rate;  /* target false-positive rate of the whole filter, in (0, 1) */
    /* 0: one layer, never grows; an add past capacity fails with NIDUS_ERR_FULL (RedisBloom's NONSCALING).
     * Otherwise each new layer holds `expansion` times the last one's capacity, [1, 32768]. Layer i is built
     * for error_rate / 2^(i+1), so the sum over all layers stays under error_rate. */
    unsigned expansion;
    unsigned max_layers; /* [1, 64]; 0: 32 */
    uint64_t max_memory; /* bytes all layers may hold; growth beyond fails; 0: no limit */
    uint64_t seed;
    const nidus_allocator *allocator;
    unsigned layout;     /* NIDUS_BLOOM_LAYOUT_COMPACT (0) or NIDUS_BLOOM_LAYOUT_BLOCKED; growth keeps it */
} nidus_bloom_params;

typedef struct nidus_bloom_stats {
    uint64_t capacity;     /* all layers */
    uint64_t items;        /* adds that found the key new (BF.CARD) */
    uint64_t memory_bytes; /* everything held through the allocator */
    unsigned layers;
    unsigned expansion;
    unsigned hashes;       /* probes per key in the first layer */
    unsigned layout;       /* NIDUS_BLOOM_LAYOUT_*: what growth makes */
    double error_rate;     /* the target */
    double error_bound;    /* sum of the layers' design errors: at most error_rate */
    double bits_per_item;  /* memory bits / capacity */
} nidus_bloom_stats;

/* Creates an empty filter. NIDUS_ERR_INVALID_ARGUMENT for parameters out of range, NIDUS_ERR_TOO_LARGE,
 * NIDUS_ERR_LIMIT_MEMORY when the first layer alone passes max_memory (checked before anything is allocated),
 * NIDUS_ERR_NO_MEMORY. Sizing costs well under a microsecond, here and at every growth step. */
NIDUS_API nidus_status nidus_bloom_new(const nidus_bloom_params *params, nidus_bloom **out);

/* Frees the filter and everything it holds (a mapped file is unmapped); NULL does nothing. */
NIDUS_API void nidus_bloom_free(nidus_bloom *filter);

/* As nidus_cuckoo_relocate: offers the blocks *filter holds to mover->move from position *cursor, points the filter
 * at whatever moved (*filter itself may move); true past the last block (*cursor 0 again), false when
 * mover->stop asked it to pause. A view, a mapped filter and one still loading are left as they are. */
NIDUS_API bool nidus_bloom_relocate(nidus_bloom **filter, const nidus_mover *mover, uint64_t *cursor);

/* The 64-bit hash the key-based calls use (seeded XXH3). */
NIDUS_API uint64_t nidus_bloom_hash(const nidus_bloom *filter, const void *key, size_t len);

/* Adds the key. `*added` (may be NULL) is false when the key was already (maybe) present: then nothing
 * changes, as BF.ADD replies 0. A new key goes to the newest layer; when that layer is at capacity a new one
 * is added first. NIDUS_ERR_FULL (expansion 0), NIDUS_ERR_LIMIT_TABLES (max_layers), NIDUS_ERR_LIMIT_MEMORY,
 * NIDUS_ERR_NO_MEMORY, NIDUS_ERR_READ_ONLY: nothing changed. */
NIDUS_API nidus_status nidus_bloom_add(nidus_bloom *filter, const void *key, size_t len, bool *added);
NIDUS_API nidus_status nidus_bloom_add_hash(nidus_bloom *filter, uint64_t hash, bool *added);

/* True when the key may be present; false means it was certainly never added (and always false while loading). */
NIDUS_API bool nidus_bloom_contains(const nidus_bloom *filter, const void *key, size_t len);
NIDUS_API bool nidus_bloom_contains_hash(const nidus_bloom *filter, uint64_t hash);

/* Batched lookups with prefetching; answers equal one-at-a-time calls. */
NIDUS_API void nidus_bloom_contains_many_hash(const nidus_bloom *filter, const uint64_t *hashes, size_t n,
                                              bool *out);

/* Batched adds, in order, with the same prefetching; the result equals one-at-a-time nidus_bloom_add_hash calls.
 * `fresh` (may be NULL) gets n answers: fresh[k] as add's *added for hashes[k]. Stops at the first failure and
 * returns its status; `*done` (may be NULL) receives how many keys were taken: on failure the failing key's
 * index (that key and the ones after it changed nothing). */
NIDUS_API nidus_status nidus_bloom_add_many_hash(nidus_bloom *filter, const uint64_t *hashes, size_t n, bool *fresh,
                                                 size_t *done);

/* Removes every item and every layer but the first. NIDUS_ERR_READ_ONLY on a view. */
NIDUS_API nidus_status nidus_bloom_clear(nidus_bloom *filter);

/* ORs `src` into `dst` layer by layer (items add, past a layer's capacity if so), dst copying the layers only src has.
 * Both need the same seed, error rate, expansion, layout and sizes of the layers both have, else
 * NIDUS_ERR_INCOMPATIBLE; on any failure (also TOO_LARGE for counts past 2^64, LIMIT_TABLES, LIMIT_MEMORY,
 * NO_MEMORY) dst is unchanged. */
NIDUS_API nidus_status nidus_bloom_merge(nidus_bloom *dst, const nidus_bloom *src);

/* Writes the first parameter keeping src from merging into dst, src's value then dst's ("error rate 0.001, not
 * 0.01"), or "" and 0 when none differs. Returns the length snprintf would, truncating to cap like it. */
NIDUS_API size_t nidus_bloom_merge_difference(const nidus_bloom *dst, const nidus_bloom *src, char *buf, size_t cap);

/* Fills `*stats` with the filter's current figures. */
NIDUS_API void nidus_bloom_get_stats(const nidus_bloom *filter, nidus_bloom_stats *stats);

/* One layer (sub-filter) of a Bloom filter; layer 0 is the first. */
typedef struct nidus_bloom_layer_stats {
    uint64_t capacity;     /* keys the layer was built for */
    uint64_t items;        /* keys added to it */
    uint64_t memory_bytes; /* its bit array */
    unsigned hashes;
    double error;          /* its design false-positive rate at capacity */
} nidus_bloom_layer_stats;

/* Figures of layer `index`; NIDUS_ERR_INVALID_ARGUMENT past the last. */
NIDUS_API nidus_status nidus_bloom_get_layer_stats(const nidus_bloom *filter, unsigned index,
                                                   nidus_bloom_layer_stats *stats);

/* ---- Encoding, files and chunks, as the nidus_cuckoo_ calls of the same names (nidus/cuckoo.h), with the same
 * statuses. Every decoder (decode, view, the files, chunks) checks the length, the checksums and every field
 * before it allocates: bad input gives NIDUS_ERR_CORRUPT (NIDUS_ERR_VERSION for another format version,
 * NIDUS_ERR_UNSUPPORTED for another filter kind), never a crash or an allocation the input does not imply. */

/* Bytes nidus_bloom_encode writes for the filter as it is now. */
NIDUS_API uint64_t nidus_bloom_encoded_size(const nidus_bloom *filter);

/* Encodes the whole filter into buf: NIDUS_ERR_TOO_LARGE when `cap` is below nidus_bloom_encoded_size,
 * NIDUS_ERR_INVALID_ARGUMENT for a NULL argument; `*written` gets the length. */
NIDUS_API nidus_status nidus_bloom_encode(const nidus_bloom *filter, void *buf, size_t cap, size_t *written);

/* A new writable filter from an encoding, copied (`buf` may be freed afterwards); NIDUS_ERR_NO_MEMORY besides the
 * decoders' statuses above. */
NIDUS_API nidus_status nidus_bloom_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                          nidus_bloom **out);

/* A read-only filter over an encoding, its layers left in `buf`, which must outlive the filter: lookups work,
 * writes fail with NIDUS_ERR_READ_ONLY. Statuses as nidus_bloom_decode. */
NIDUS_API nidus_status nidus_bloom_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                        nidus_bloom **out);

/* Writes the filter to `path` atomically, as nidus_cuckoo_save_file: NIDUS_ERR_NOT_REGULAR for a directory,
 * device or fifo, NIDUS_ERR_IO (errno tells why; the old file is untouched), NIDUS_ERR_NO_MEMORY,
 * NIDUS_ERR_INVALID_ARGUMENT for a NULL argument. */
NIDUS_API nidus_status nidus_bloom_save_file(const nidus_bloom *filter, const char *path);

/* Reads a filter file into a new writable filter (load), or maps it read-only and views it in place (map; _free
 * unmaps it), every block checked first. NIDUS_ERR_IO when the file cannot be opened, is not a regular file or
 * cannot be mapped (errno tells why), NIDUS_ERR_CORRUPT for an empty or damaged file, NIDUS_ERR_VERSION,
 * NIDUS_ERR_UNSUPPORTED for a file of another kind, NIDUS_ERR_NO_MEMORY, NIDUS_ERR_INVALID_ARGUMENT for NULL. */
NIDUS_API nidus_status nidus_bloom_load_file(const char *path, const nidus_allocator *allocator, nidus_bloom **out);
NIDUS_API nidus_status nidus_bloom_map_file(const char *path, const nidus_allocator *allocator, nidus_bloom **out);

/* The chunk at `cursor` into `buf` of `cap` bytes (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD suffice), as
 * nidus_cuckoo_dump_chunk: cursor 0 gives the header chunk, `*next` the cursor to ask for next; past the last
 * chunk `*len` is 0 and `*next` 0. A filter still loading gives the chunks it has received.
 * NIDUS_ERR_INVALID_ARGUMENT for a NULL argument or a cursor that is not one, NIDUS_ERR_TOO_LARGE for a short `cap`. */
NIDUS_API nidus_status nidus_bloom_dump_chunk(const nidus_bloom *filter, uint64_t cursor, void *buf, size_t cap,
                                              size_t *len, uint64_t *next);

/* Loads one chunk, as nidus_cuckoo_load_chunk: a header chunk needs `*filter` NULL and creates a filter there,
 * loading until its last chunk lands and the whole checksum and contents check out; `max_bytes` (nonzero) caps
 * the memory the header may ask for (NIDUS_ERR_LIMIT_MEMORY). NIDUS_ERR_SEQUENCE for a chunk out of order or of
 * another filter, NIDUS_ERR_CORRUPT, NIDUS_ERR_VERSION, NIDUS_ERR_NO_MEMORY; a failed last chunk leaves the
 * filter loading (free it). */
NIDUS_API nidus_status nidus_bloom_load_chunk(nidus_bloom **filter, const void *chunk, size_t len,
                                              uint64_t max_bytes, const nidus_allocator *allocator);

/* True while a filter made by nidus_bloom_load_chunk still waits for chunks (or failed its final check). */
NIDUS_API bool nidus_bloom_loading(const nidus_bloom *filter);

/* True for a read-only view (nidus_bloom_view, nidus_bloom_map_file): every write fails with NIDUS_ERR_READ_ONLY. */
NIDUS_API bool nidus_bloom_is_read_only(const nidus_bloom *filter);

/* ---- counting Bloom filter: 4-bit saturating counters, with remove ---- */

typedef struct nidus_counting_bloom nidus_counting_bloom;

typedef struct nidus_counting_bloom_params {
    uint64_t capacity;  /* items it holds at error_rate (>= 1); more may be added, at a higher error */
    double error_rate;  /* in (0, 1) */
    uint64_t seed;
    const nidus_allocator *allocator;
} nidus_counting_bloom_params;

typedef struct nidus_counting_bloom_stats {
    uint64_t capacity;
    uint64_t items;       /* adds minus removes */
    uint64_t saturated;   /* counters stuck at 15: they never decrease again */
    uint64_t memory_bytes;
    unsigned hashes;
    double error_rate;
    double bits_per_item; /* memory bits / capacity */
} nidus_counting_bloom_stats;

/* Creates an empty filter of one layer of 64-byte blocks of 128 counters, sized for `capacity` keys at
 * `error_rate`. NIDUS_ERR_INVALID_ARGUMENT for parameters out of range, NIDUS_ERR_TOO_LARGE, NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_counting_bloom_new(const nidus_counting_bloom_params *params,
                                                nidus_counting_bloom **out);

/* Frees the filter and everything it holds (a mapped file is unmapped); NULL does nothing. */
NIDUS_API void nidus_counting_bloom_free(nidus_counting_bloom *filter);

/* The 64-bit hash the key-based calls use (seeded XXH3). */
NIDUS_API uint64_t nidus_counting_bloom_hash(const nidus_counting_bloom *filter, const void *key, size_t len);

/* Adds one occurrence: each of the key's counters goes up by one, except those already at 15, which stay
 * (saturated counters never wrap, so the filter never gives a false negative). NIDUS_ERR_READ_ONLY on a view. */
NIDUS_API nidus_status nidus_counting_bloom_add(nidus_counting_bloom *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_counting_bloom_add_hash(nidus_counting_bloom *filter, uint64_t hash);

/* Removes one occurrence: NIDUS_ERR_NOT_FOUND (nothing changed) when some counter of the key is 0. Saturated
 * counters stay at 15. Removing a key that was never added, but whose counters happen to be all nonzero
 * (a false positive), takes occurrences from other keys and can make them false negatives: only remove what
 * was added. */
NIDUS_API nidus_status nidus_counting_bloom_remove(nidus_counting_bloom *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_counting_bloom_remove_hash(nidus_counting_bloom *filter, uint64_t hash);

/* True when every counter of the key is nonzero: false means it is certainly not present (and always while
 * loading). */
NIDUS_API bool nidus_counting_bloom_contains(const nidus_counting_bloom *filter, const void *key, size_t len);
NIDUS_API bool nidus_counting_bloom_contains_hash(const nidus_counting_bloom *filter, uint64_t hash);

/* Batched lookups with prefetching; answers equal one-at-a-time calls. */
NIDUS_API void nidus_counting_bloom_contains_many_hash(const nidus_counting_bloom *filter, const uint64_t *hashes,
                                                       size_t n, bool *out);

/* An estimate of the key's occurrences: the smallest of its counters (never below the true count unless the
 * caller removed what it did not add; 15 means 15 or more). */
NIDUS_API unsigned nidus_counting_bloom_count(const nidus_counting_bloom *filter, const void *key, size_t len);
NIDUS_API unsigned nidus_counting_bloom_count_hash(const nidus_counting_bloom *filter, uint64_t hash);

/* Sets every counter to 0. NIDUS_ERR_READ_ONLY on a view or a filter still loading. */
NIDUS_API nidus_status nidus_counting_bloom_clear(nidus_counting_bloom *filter);

/* Adds `src`'s counters to `dst`'s, each stopping at 15 (items add too). Both need the same seed, error rate and
 * capacity, else NIDUS_ERR_INCOMPATIBLE and dst is unchanged. src may be dst (every counter doubles). */
NIDUS_API nidus_status nidus_counting_bloom_merge(nidus_counting_bloom *dst, const nidus_counting_bloom *src);

/* As nidus_bloom_merge_difference, for the parameters nidus_counting_bloom_merge needs alike. */
NIDUS_API size_t nidus_counting_bloom_merge_difference(const nidus_counting_bloom *dst, const nidus_counting_bloom *src,
                                                       char *buf, size_t cap);

/* Fills `*s` with the filter's current figures (saturated counters are counted, a scan of every counter). */
NIDUS_API void nidus_counting_bloom_get_stats(const nidus_counting_bloom *filter, nidus_counting_bloom_stats *s);

/* Encoding, files and chunks: as the nidus_bloom_ calls of the same names above, with the same statuses and the
 * same rules for views, mappings, loading and ownership. */
NIDUS_API uint64_t nidus_counting_bloom_encoded_size(const nidus_counting_bloom *filter);
NIDUS_API nidus_status nidus_counting_bloom_encode(const nidus_counting_bloom *filter, void *buf, size_t cap,
                                                   size_t *written);
NIDUS_API nidus_status nidus_counting_bloom_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                                   nidus_counting_bloom **out);
NIDUS_API nidus_status nidus_counting_bloom_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                                 nidus_counting_bloom **out);
NIDUS_API nidus_status nidus_counting_bloom_save_file(const nidus_counting_bloom *filter, const char *path);
NIDUS_API nidus_status nidus_counting_bloom_load_file(const char *path, const nidus_allocator *allocator,
                                                      nidus_counting_bloom **out);
NIDUS_API nidus_status nidus_counting_bloom_map_file(const char *path, const nidus_allocator *allocator,
                                                     nidus_counting_bloom **out);
NIDUS_API nidus_status nidus_counting_bloom_dump_chunk(const nidus_counting_bloom *filter, uint64_t cursor,
                                                       void *buf, size_t cap, size_t *len, uint64_t *next);
NIDUS_API nidus_status nidus_counting_bloom_load_chunk(nidus_counting_bloom **filter, const void *chunk,
                                                       size_t len, uint64_t max_bytes,
                                                       const nidus_allocator *allocator);
NIDUS_API bool nidus_counting_bloom_loading(const nidus_counting_bloom *filter);
NIDUS_API bool nidus_counting_bloom_is_read_only(const nidus_counting_bloom *filter);

#ifdef __cplusplus
}
#endif

#endif
