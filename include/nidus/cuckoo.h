/* SPDX-License-Identifier: BSD-3-Clause */
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
#include "codec.h"
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
#define NIDUS_CUCKOO_DEFAULT_MAX_TABLES 32u
#define NIDUS_CUCKOO_MAX_TABLES 64u
#define NIDUS_CUCKOO_MAX_EXPANSION 32768u

typedef struct nidus_cuckoo nidus_cuckoo;

/* What the caller asks for. Zero in any field means "choose for me"; start from `{0}` and set what matters. */
typedef struct nidus_cuckoo_params {
    uint64_t capacity;         /* items the filter must hold (>= 1) */
    double error_rate;         /* target false-positive rate in (0, 1); ignored when fingerprint_bits is set */
    unsigned fingerprint_bits; /* f in [4, 32]; 0: the smallest f that meets error_rate */
    unsigned bucket_size;      /* b in {1, 2, 4, 8}; 0: the b that costs the fewest bits per item */
    unsigned max_kicks;        /* fingerprints one add may move to make room, [1, 65535]; 0: 500 */
    bool semi_sort;            /* b = 4 only: store each slot in f-1 bits at the error rate of f */
    uint64_t seed;             /* hash seed; filters must share it to share pre-computed hashes */
    const nidus_allocator *allocator; /* NULL: the C library's; else kept by pointer: must outlive the filter */
    /* Growth. 0 (the default) never grows: an add that finds no room fails with NIDUS_ERR_FULL. Otherwise a
     * full filter adds a table `expansion` times the buckets of its newest one, in [1, 32768]. */
    unsigned expansion;
    unsigned max_tables;       /* tables a filter may grow to, [1, 64]; 0: 32 */
    /* Bytes the tables may hold in all, 0: no limit. Creation and growth fail rather than pass it; growth counts
     * everything held, duplicate overflow maps included. Those maps themselves are never refused (a duplicate
     * add must not fail for memory while its key's count stays exact), so memory_bytes may pass the limit by
     * them; then the filter no longer grows. Slots always stay within it, and loads check that. */
    uint64_t max_memory;
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
    uint64_t overflow_items; /* of those, copies counted outside the slots: duplicates and stash (nidus_cuckoo_add) */
    uint64_t buckets;
    uint64_t slots;
    unsigned bucket_size;
    unsigned fingerprint_bits;
    unsigned max_kicks;
    bool semi_sort;
    double load;          /* occupied slots / slots */
    uint64_t memory_bytes; /* everything the filter holds through its allocator (a view: its mapped tables too) */
    uint64_t capacity;    /* items its tables are sized to hold: their slots at the design load of b */
    double bits_per_item; /* memory bits / capacity: the cost per item of a full filter, whatever it holds now */
    double error_bound;   /* false-positive bound of the whole filter: the sum of its tables' bounds */
    double target_error;  /* the bound of the first table; growth keeps error_bound under twice this (sibling
                           * tables, which merges add, each add their level's bound on top) */
    unsigned tables;      /* sub-filters, siblings included; buckets, slots and fingerprint_bits are the first one's */
    unsigned expansion;
    unsigned max_tables;
    uint64_t max_memory;
    uint64_t total_slots;   /* slots of every table */
    uint64_t items_deleted; /* removes since creation or the last compaction (as RedisBloom's CF.INFO) */
} nidus_cuckoo_stats;

/* One sub-filter of a filter. */
typedef struct nidus_cuckoo_table_stats {
    uint64_t buckets;
    uint64_t items; /* fingerprints in slots plus overflow copies */
    unsigned fingerprint_bits;
    double load;
    double error_bound;
    uint64_t memory_bytes;
    unsigned level; /* the growth step that made its shape; a merge's sibling shares its level with another table */
} nidus_cuckoo_table_stats;

/* Resolves `params` into a plan: chooses b and f when they are 0, sizes the table for `capacity` at the load
 * that b can reach, and reports the cost. NIDUS_ERR_INVALID_ARGUMENT for any field out of range,
 * NIDUS_ERR_TOO_LARGE when the table would not fit in memory addresses. */
NIDUS_API nidus_status nidus_cuckoo_plan_params(const nidus_cuckoo_params *params, nidus_cuckoo_plan *plan);

/* Creates an empty filter; `*out` is set only on success. Fails as nidus_cuckoo_plan_params does, or with
 * NIDUS_ERR_NO_MEMORY. The table is allocated zeroed, so untouched pages of a large table cost nothing. */
NIDUS_API nidus_status nidus_cuckoo_new(const nidus_cuckoo_params *params, nidus_cuckoo **out);

/* Releases the filter and everything it holds. NULL is accepted and ignored. */
NIDUS_API void nidus_cuckoo_free(nidus_cuckoo *filter);

/* Offers the blocks *filter holds to mover->move, one at a time from position *cursor (0: the first), and points
 * the filter at whatever moved; *filter itself may move. True when it went past the last block (*cursor is 0
 * again); false when mover->stop asked it to pause (*cursor says where to resume, and stays valid however the
 * filter changes meanwhile). Blocks it does not own (a view's or a mapped file's tables) and a filter still
 * loading chunks are left where they are. Answers and encoding never change. */
NIDUS_API bool nidus_cuckoo_relocate(nidus_cuckoo **filter, const nidus_mover *mover, uint64_t *cursor);

/* The 64-bit hash the key-based calls use for `key` (seeded XXH3). Pass it to the `_hash` variants to hash
 * once and probe several filters created with the same seed. */
NIDUS_API uint64_t nidus_cuckoo_hash(const nidus_cuckoo *filter, const void *key, size_t len);

/* Adds one copy of the key: into a free slot of any table, else by relocation in the newest, else into the
 * newest table's stash (up to 8 items that no relocation could place wait there, found by every call), else
 * (when expansion > 0) into a new table. The same key may be added many times; copies beyond what its two buckets
 * hold are counted in a side table, so count and remove stay exact and nothing kicks or grows for them.
 * On failure the filter is unchanged: NIDUS_ERR_FULL (no room and expansion 0), NIDUS_ERR_LIMIT_TABLES or
 * NIDUS_ERR_LIMIT_MEMORY (growth would pass max_tables or max_memory, or more fingerprint bits than 32 would
 * be needed to keep the error bound), NIDUS_ERR_NO_MEMORY, NIDUS_ERR_READ_ONLY. */
NIDUS_API nidus_status nidus_cuckoo_add(nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_cuckoo_add_hash(nidus_cuckoo *filter, uint64_t hash);

/* Adds the key only if it is not (maybe) present already; `*added` tells which happened. Fails as
 * nidus_cuckoo_add does. Not safe with remove: when a false positive skips the add, a later remove of this key
 * deletes the colliding key's fingerprint instead (a false negative). Use plain add where keys are removed. */
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

/* Removes one copy of the key, looking in the newest table first (the longest fingerprints, so the least
 * likely to match another key's). NIDUS_ERR_NOT_FOUND when none is present; NIDUS_ERR_READ_ONLY on a view.
 * Removing a key that was never added but collides with one that was removes the other's copy: remove only
 * keys that were added with nidus_cuckoo_add (an add_unique skipped on a false positive did not add). A remove
 * that takes the removes since the last compaction past 10 % of the items starts a stepped compaction (below). */
NIDUS_API nidus_status nidus_cuckoo_remove(nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_cuckoo_remove_hash(nidus_cuckoo *filter, uint64_t hash);

/* Number of copies of the key's fingerprint in its two buckets and the side table (duplicates, stash): never below the
 * number of times the key was added and not removed; above it only through fingerprint collisions. */
NIDUS_API uint64_t nidus_cuckoo_count(const nidus_cuckoo *filter, const void *key, size_t len);
NIDUS_API uint64_t nidus_cuckoo_count_hash(const nidus_cuckoo *filter, uint64_t hash);

/* Removes every item and every table but the first; keeps the parameters. NIDUS_ERR_READ_ONLY on a view. */
NIDUS_API nidus_status nidus_cuckoo_clear(nidus_cuckoo *filter);

/* Fills `*stats` with the filter's current figures. */
NIDUS_API void nidus_cuckoo_get_stats(const nidus_cuckoo *filter, nidus_cuckoo_stats *stats);

/* Figures of table `index` (0 is the oldest); NIDUS_ERR_INVALID_ARGUMENT past the last. */
NIDUS_API nidus_status nidus_cuckoo_get_table_stats(const nidus_cuckoo *filter, unsigned index,
                                                    nidus_cuckoo_table_stats *stats);

/* Moves fingerprints from newer tables into free slots of older ones (exactly: table sizes divide each other
 * and placements reduce consistently), then frees the tables left empty, all at once (work in proportion to the
 * filter's buckets: for offline use; nidus_cuckoo_compact_step bounds it). Never loses an item. Ends a stepped
 * compaction that was running. `*freed` (may be NULL) receives the number of tables freed. Fails only with
 * NIDUS_ERR_READ_ONLY. */
NIDUS_API nidus_status nidus_cuckoo_compact(nidus_cuckoo *filter, unsigned *freed);

/* ---- Stepped compaction, as Redis rehashes its dicts: a cursor over the tables (newest down to the second)
 * and their buckets; each step does a bounded amount of work from it, moving each fingerprint it can down in
 * one piece, so at every point between steps the filter is an ordinary one: lookups, counts, adds, removes and
 * merges stay exact, nothing is lost if the steps stop, and an encoding taken mid-way is a valid filter that
 * carries no cursor (it decodes with no compaction running; nidus_cuckoo_compact_resume continues it). Steps
 * with no write between them leave the bytes nidus_cuckoo_compact leaves; each step is a function of the
 * filter's bytes and the cursor. A remove that takes the removes since the last compaction past 10 % of the
 * items starts one (nothing else does the work: call the step, or nidus_cuckoo_compact). */

/* Where a stepped compaction stands: the table it is emptying into older ones and the next bucket of it. */
typedef struct nidus_cuckoo_compaction {
    unsigned table;  /* >= 1; 0: no compaction running */
    uint64_t bucket; /* next bucket of that table to visit */
} nidus_cuckoo_compaction;

/* Starts a stepped compaction at the newest table, unless one is running. A filter of one table has nothing to
 * move: its count of removes is reset, as nidus_cuckoo_compact does, and none runs. NIDUS_ERR_READ_ONLY on a
 * view or a filter still loading. */
NIDUS_API nidus_status nidus_cuckoo_compact_begin(nidus_cuckoo *filter);

/* Advances the running compaction by about `budget` units of work: a bucket read, a table passed, a
 * fingerprint's try at an older table's bucket pair (a cache miss on a large filter) each count one, and the
 * last bucket may pass the budget by at most bucket_size * (tables - 1). When it passes the last bucket, the
 * tables left empty are freed and the count of removes reset: `*done` (may be NULL) turns true, as it is when
 * none was running. NIDUS_ERR_READ_ONLY on a view or a filter still loading. */
NIDUS_API nidus_status nidus_cuckoo_compact_step(nidus_cuckoo *filter, uint64_t budget, bool *done);

/* True while a stepped compaction runs; `*at` (may be NULL) receives its cursor ({0, 0} when none runs). */
NIDUS_API bool nidus_cuckoo_compacting(const nidus_cuckoo *filter, nidus_cuckoo_compaction *at);

/* Sets the cursor (a copy's, one decoded from an encoding taken mid-compaction, a replica's): table in
 * [1, tables - 1], bucket up to that table's buckets, else NIDUS_ERR_INVALID_ARGUMENT and nothing changes.
 * NIDUS_ERR_READ_ONLY on a view or a filter still loading. */
NIDUS_API nidus_status nidus_cuckoo_compact_resume(nidus_cuckoo *filter, const nidus_cuckoo_compaction *at);

/* Adds src's items to dst level by level (dst grows as src did), counts summed, so removes stay exact; a src table
 * that dst's tables of its level cannot hold becomes a sibling table of that level (memory and error bound add).
 * Needs the same seed, first-table shape (buckets, b, f, semi-sort, placement) and expansion, else
 * NIDUS_ERR_INCOMPATIBLE; NIDUS_ERR_FULL when a filter that never grows (expansion 0) lacks room for src's items,
 * NIDUS_ERR_LIMIT_TABLES / _LIMIT_MEMORY past dst's limits, and NIDUS_ERR_TOO_LARGE when the union would hold
 * more than 2^63 - 1 items, copies counted (what a decoder accepts). On any failure dst is unchanged. src may be
 * dst. */
NIDUS_API nidus_status nidus_cuckoo_merge(nidus_cuckoo *dst, const nidus_cuckoo *src);

/* Writes the first parameter keeping src from merging into dst, src's value then dst's ("bucket size 4, not 2"),
 * or "" and 0 when none differs (a merge can still refuse a level grown after a compaction). Returns the length
 * snprintf would, truncating to cap like it. */
NIDUS_API size_t nidus_cuckoo_merge_difference(const nidus_cuckoo *dst, const nidus_cuckoo *src, char *buf, size_t cap);

/* True for a read-only view (nidus_cuckoo_view, nidus_cuckoo_map_file): every write fails with
 * NIDUS_ERR_READ_ONLY. */
NIDUS_API bool nidus_cuckoo_is_read_only(const nidus_cuckoo *filter);

/* ---- Encoding (format in nidus/codec.h). Every decoder checks the length, the checksum and every field before
 * it allocates: bad input gives NIDUS_ERR_CORRUPT (NIDUS_ERR_VERSION for another format version,
 * NIDUS_ERR_UNSUPPORTED for another filter kind), never a crash or an allocation the input does not imply. */

/* Bytes nidus_cuckoo_encode writes for the filter as it is now. */
NIDUS_API uint64_t nidus_cuckoo_encoded_size(const nidus_cuckoo *filter);

/* Encodes the whole filter into buf; NIDUS_ERR_TOO_LARGE when `cap` is below nidus_cuckoo_encoded_size. */
NIDUS_API nidus_status nidus_cuckoo_encode(const nidus_cuckoo *filter, void *buf, size_t cap, size_t *written);

/* A new filter from an encoding, copied: `buf` may be freed afterwards. */
NIDUS_API nidus_status nidus_cuckoo_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                           nidus_cuckoo **out);

/* A read-only filter over an encoding, without copying its tables: `buf` must outlive the filter. Lookups and
 * counts work; writes fail with NIDUS_ERR_READ_ONLY. The contents are validated once, here. */
NIDUS_API nidus_status nidus_cuckoo_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                         nidus_cuckoo **out);

/* Writes the filter to `path` atomically: a temporary file beside it, fsync, rename, fsync of the directory.
 * Through a symbolic link, the file it leads to is replaced. A new file gets mode 0666 less the umask; a
 * rewrite keeps the old file's mode (and owner and group, where permitted). A directory, device or fifo is
 * refused with NIDUS_ERR_NOT_REGULAR. On NIDUS_ERR_IO errno tells why; the old file (if any) is untouched.
 * The same holds for the Bloom kinds' _save_file. */
NIDUS_API nidus_status nidus_cuckoo_save_file(const nidus_cuckoo *filter, const char *path);

/* Reads a filter file into a new, writable filter, every block checked first. NIDUS_ERR_IO when the file cannot be
 * opened, is not a regular file or cannot be mapped (errno tells why), NIDUS_ERR_CORRUPT for an empty or damaged
 * file, NIDUS_ERR_VERSION, NIDUS_ERR_UNSUPPORTED for a file of another kind, NIDUS_ERR_NO_MEMORY,
 * NIDUS_ERR_INVALID_ARGUMENT for a NULL argument. */
NIDUS_API nidus_status nidus_cuckoo_load_file(const char *path, const nidus_allocator *allocator,
                                              nidus_cuckoo **out);

/* Maps a filter file read-only and views it in place (see nidus_cuckoo_view), every block checked first;
 * nidus_cuckoo_free unmaps it. Statuses as nidus_cuckoo_load_file. */
NIDUS_API nidus_status nidus_cuckoo_map_file(const char *path, const nidus_allocator *allocator,
                                             nidus_cuckoo **out);

/* ---- Chunks, for Redis's SCANDUMP / LOADCHUNK. */

/* Chunk `cursor` of the filter's encoding into buf (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD bytes always
 * suffice). Cursor 0 gives the header chunk; `*next` is the cursor to ask for next. Past the last chunk,
 * `*len` is 0 and `*next` is 0. The filter must not change between the calls of one dump. A filter still
 * loading gives the chunks it has received, which load into a filter in the same loading state (so a copy
 * cut off half-way can be saved, restored and continued); NIDUS_ERR_CORRUPT once its final check failed. */
NIDUS_API nidus_status nidus_cuckoo_dump_chunk(const nidus_cuckoo *filter, uint64_t cursor, void *buf, size_t cap,
                                               size_t *len, uint64_t *next);

/* Loads one chunk. A header chunk needs `*filter` NULL and creates a filter there. With `max_bytes` nonzero it
 * is refused (NIDUS_ERR_LIMIT_MEMORY) when its tables would cost more than that by the measure creation and
 * growth check against max_memory, and the filter's own max_memory becomes at most `max_bytes`: whatever it
 * grows into afterwards loads again under the same `max_bytes`. Later chunks must come
 * in the order they were dumped, from the same filter, else NIDUS_ERR_SEQUENCE and nothing changes. Until the
 * last one has landed and the whole checksum and contents check out, the filter is loading: lookups answer
 * false, writes fail. If that final check fails (NIDUS_ERR_CORRUPT), the filter stays unusable: free it.
 * When the last chunk completes a small filter, `*filter` is replaced by a smaller copy (the loading one is
 * freed): whoever holds the old pointer must take the new one. */
NIDUS_API nidus_status nidus_cuckoo_load_chunk(nidus_cuckoo **filter, const void *chunk, size_t len,
                                               uint64_t max_bytes, const nidus_allocator *allocator);

/* True while a filter created by nidus_cuckoo_load_chunk still waits for chunks (or failed its final check). */
NIDUS_API bool nidus_cuckoo_loading(const nidus_cuckoo *filter);

#ifdef __cplusplus
}
#endif

#endif
