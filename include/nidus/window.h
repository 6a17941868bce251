/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — windowed cuckoo filters: items that expire.
 *
 * A windowed filter answers "was this key added within the last W ticks?". The caller passes the time (`now`:
 * milliseconds, or any tick that never decreases on purpose) to every call; the library never reads a clock, so a
 * filter is deterministic: the same calls with the same times give the same bytes.
 *
 * Each slot holds a fingerprint and the item's epoch modulo 8 in 3 bits, where an epoch is g = ceil(W / 5) ticks
 * of an absolute grid (epoch = now / g, so filters of one W share epochs and a saved filter keeps its items'
 * ages). The guarantee, exactly:
 *   - an item added at t answers present at every now in [t, t + W] (no false negative inside its window);
 *   - from t + 6g on (at most t + 1.2 W + 4.8 ticks) it answers as an absent item does: present only by a
 *     fingerprint collision with a live item, at the filter's error rate.
 * A lookup reads the same two buckets as a plain cuckoo filter and checks the age of a matching slot, whatever W:
 * it never probes one structure per age. The table is sized for 1.2 x capacity items, since entries stay until
 * they are 6 epochs old; expired entries' slots are reused by adds, and writes sweep the table (a pass an epoch,
 * paid in proportion to the time since the previous write) so that ages never alias. A write after a silence
 * of more than one epoch may pay for a whole pass; after 6 epochs of silence every item has expired and the
 * table is cleared at memset speed.
 *
 * A time earlier than the filter's latest write (an advance counts as one) is read as that time (a clock that goes
 * backwards never expires an item early); a lookup's time earlier than that is read likewise.
 *
 * Thread-safety: calls on different filters are independent. On one filter, lookups (contains, count, stats,
 * encode, dump_chunk) may run concurrently with each other, never with a write (add, add_unique, remove,
 * advance, merge into it, load_chunk). */
#ifndef NIDUS_WINDOW_H
#define NIDUS_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nidus/alloc.h"
#include "nidus/api.h"
#include "nidus/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIDUS_WINDOW_MAX_TICKS (UINT64_C(1) << 48) /* the longest window: about 8,900 years of milliseconds */
#define NIDUS_WINDOW_AGE_BITS 3u                    /* bits of age beside each fingerprint */
#define NIDUS_WINDOW_MAX_EXPANSION 32768u           /* the largest growth factor (as RedisBloom's EXPANSION) */
#define NIDUS_WINDOW_MAX_TABLES 32u                 /* tables a filter may hold, the first one included */

typedef struct nidus_window nidus_window;

/* What the caller asks for. Zero in any field but `window` and `capacity` means "choose for me". */
typedef struct nidus_window_params {
    uint64_t capacity;         /* the most items added within any one window (>= 1) */
    uint64_t window;           /* W in ticks, [1, NIDUS_WINDOW_MAX_TICKS] */
    double error_rate;         /* target false-positive rate over live items in (0, 1); 0: 1 % */
    unsigned fingerprint_bits; /* f in [4, 29] (f + 3 bits a slot); 0: the smallest f meeting error_rate */
    unsigned bucket_size;      /* b in {1, 2, 4, 8}; 0: the b that costs the fewest bits per item */
    unsigned max_kicks;        /* fingerprints one add may move to make room, [1, 65535]; 0: 500 */
    uint64_t seed;             /* hash seed (nidus_hash) */
    const nidus_allocator *allocator; /* NULL: the C library's; else kept by pointer: must outlive the filter */
    /* Growth. 0 (the default) never grows: an add that finds no room fails with NIDUS_ERR_FULL. Otherwise, in
     * [1, NIDUS_WINDOW_MAX_EXPANSION], an add that finds no room in any table makes a table of level k (one more
     * than the newest's) sized for capacity * expansion^k, its fingerprint wide enough that the tables' error
     * bounds sum to at most twice the first's. A grown table is released at the first write that finds no live
     * item in it. */
    unsigned expansion;
    /* Bytes the tables' slots and overflow maps may hold in all, 0: no limit. Creation fails rather than pass
     * it, and so does growth (a new table, grown or a merge's), counted before anything is allocated; the maps of
     * duplicates themselves are never refused. Kept only by a filter that grows (expansion > 0). */
    uint64_t max_memory;
} nidus_window_params;

typedef struct nidus_window_stats {
    uint64_t capacity;      /* items within one window the filter is sized for */
    uint64_t window;        /* W in ticks */
    uint64_t epoch_ticks;   /* g = ceil(W / 5) */
    uint64_t entries;       /* fingerprints stored, expired ones not yet swept included */
    uint64_t live;          /* of those, the ones alive at the `now` the stats were taken at */
    uint64_t buckets;
    uint64_t slots;
    unsigned bucket_size;
    unsigned fingerprint_bits; /* f, without the age bits */
    unsigned max_kicks;     /* fingerprints one add may move to make room */
    uint64_t memory_bytes;  /* everything the filter holds through its allocator */
    double bits_per_item;   /* memory bits / capacity */
    double error_bound;     /* false-positive bound with every slot holding a live item: the tables' bounds summed */
    uint64_t latest_write;  /* the epoch of the latest write, times g: a tick in it */
    uint64_t sweep_cursor;  /* the next bucket the sweep visits (the first table's) */
    unsigned tables;        /* tables held: 1, or more once grown; buckets, slots and fingerprint_bits are the first's */
    unsigned expansion;     /* the growth factor, 0: never grows */
    uint64_t total_capacity; /* items within one window the tables are sized for, in all */
    uint64_t total_slots;   /* slots of every table */
    uint64_t max_memory;    /* the bound on growth, 0: none (always 0 for a filter that never grows) */
} nidus_window_stats;

/* Makes an empty windowed filter (one table). NIDUS_ERR_INVALID_ARGUMENT for a parameter out of range, NIDUS_ERR_TOO_LARGE
 * when the table would not fit, NIDUS_ERR_LIMIT_MEMORY when its slots would pass max_memory, NIDUS_ERR_NO_MEMORY
 * from the allocator. `*out` is set only on success. */
NIDUS_API nidus_status nidus_window_new(const nidus_window_params *params, nidus_window **out);

/* Sets the bound on a growing filter's memory (nidus_window_params.max_memory; 0: none), loading or not, so that a
 * copy bounds its growth as the original does: NIDUS_ERR_INVALID_ARGUMENT when its tables' slots already take
 * more, NIDUS_ERR_READ_ONLY for a view; a filter with expansion 0 keeps none (NIDUS_OK, nothing changes). */
NIDUS_API nidus_status nidus_window_set_max_memory(nidus_window *w, uint64_t max_memory);

/* Frees the filter and everything it holds; NULL is allowed. */
NIDUS_API void nidus_window_free(nidus_window *w);

/* Adds one copy of the key at time `now` (every add makes a copy with its own age, as in a cuckoo filter) to the
 * oldest table holding fewer live items than it is sized for, else the next one with room, else (expansion > 0)
 * a new table. NIDUS_ERR_FULL when no room is found among live entries and the filter does not grow: nothing
 * was added (expired entries may have been swept, which no answer shows); NIDUS_ERR_LIMIT_TABLES or
 * NIDUS_ERR_TOO_LARGE when growth would pass NIDUS_WINDOW_MAX_TABLES, 29 fingerprint bits or the address
 * space; NIDUS_ERR_LIMIT_MEMORY when the new table would pass max_memory (nothing is allocated for it);
 * NIDUS_ERR_NO_MEMORY when a new table or a duplicate's overflow map could not be allocated. */
NIDUS_API nidus_status nidus_window_add(nidus_window *w, const void *key, size_t len, uint64_t now);
NIDUS_API nidus_status nidus_window_add_hash(nidus_window *w, uint64_t hash, uint64_t now);

/* A Bloom filter's add: when a live copy exists, its age becomes `now` and `*added` is false; otherwise a copy is
 * added and `*added` is true (`added` may be NULL). Errors as nidus_window_add. */
NIDUS_API nidus_status nidus_window_add_unique(nidus_window *w, const void *key, size_t len, uint64_t now,
                                               bool *added);

/* Whether a live copy of the key exists at `now`. */
NIDUS_API bool nidus_window_contains(const nidus_window *w, const void *key, size_t len, uint64_t now);
NIDUS_API bool nidus_window_contains_hash(const nidus_window *w, uint64_t hash, uint64_t now);

/* Batched lookups at `now`: out[k] tells whether keys[k] (lens[k] bytes), or hashes[k], has a live copy. Locates
 * and prefetches both buckets of a block of keys before probing them, so their memory latency overlaps; the
 * answers equal one-at-a-time calls. */
NIDUS_API void nidus_window_contains_many(const nidus_window *w, const void *const *keys, const size_t *lens,
                                          size_t n, uint64_t now, bool *out);
NIDUS_API void nidus_window_contains_many_hash(const nidus_window *w, const uint64_t *hashes, size_t n,
                                               uint64_t now, bool *out);

/* Live copies of the key at `now` (an upper bound, as a cuckoo filter's count: collisions add to it). */
NIDUS_API uint64_t nidus_window_count(const nidus_window *w, const void *key, size_t len, uint64_t now);

/* Removes the oldest live copy of the key at `now`, whichever table holds it. NIDUS_ERR_NOT_FOUND when there is
 * none (an expired copy is not removable: it is gone already). */
NIDUS_API nidus_status nidus_window_remove(nidus_window *w, const void *key, size_t len, uint64_t now);

/* Sweeps at most `max_buckets` buckets at time `now` (a step of bounded work the caller can drive from a timer,
 * so that writes seldom owe a sweep); `*done` (may be NULL) is true when the sweep owes nothing more at `now`. */
NIDUS_API nidus_status nidus_window_advance(nidus_window *w, uint64_t now, uint64_t max_buckets, bool *done);

/* Figures of the filter at time `now` (`live` depends on it). */
NIDUS_API void nidus_window_get_stats(const nidus_window *w, uint64_t now, nidus_window_stats *stats);

/* One table of a filter: the first (0), or a grown one (1 .. tables - 1, in order of level). */
typedef struct nidus_window_table_stats {
    uint64_t capacity;      /* items within one window it is sized for: capacity * expansion^level */
    uint64_t live;          /* its entries alive at the `now` the stats were taken at */
    uint64_t buckets;
    unsigned fingerprint_bits;
    unsigned level;         /* its growth step (0: the first table, or a merge's sibling of it) */
    uint64_t memory_bytes;
    double error_bound;
} nidus_window_table_stats;

/* Figures of table k at time `now`; false (nothing written) when k is not below nidus_window_stats.tables. */
NIDUS_API bool nidus_window_get_table_stats(const nidus_window *w, unsigned k, uint64_t now,
                                            nidus_window_table_stats *stats);

/* The key's 64-bit hash, as the _hash calls take it (nidus_hash with the filter's seed). */
NIDUS_API uint64_t nidus_window_hash(const nidus_window *w, const void *key, size_t len);

/* nidus_window_count and nidus_window_remove of a key's hash (nidus_window_hash). */
NIDUS_API uint64_t nidus_window_count_hash(const nidus_window *w, uint64_t hash, uint64_t now);
NIDUS_API nidus_status nidus_window_remove_hash(nidus_window *w, uint64_t hash, uint64_t now);

/* True for a read-only view (nidus_window_view, nidus_window_map_file) or a filter still loading chunks: writes
 * fail with NIDUS_ERR_READ_ONLY. */
NIDUS_API bool nidus_window_is_read_only(const nidus_window *w);

/* Offers the filter's blocks to mover->move from *cursor on (nidus_cuckoo_relocate's contract: true past the
 * last block, false when mover->stop paused it); `*filter` may move. A view, a mapped filter and one still
 * loading stay where they are: true. */
NIDUS_API bool nidus_window_relocate(nidus_window **filter, const nidus_mover *mover, uint64_t *cursor);

/* Merges src into dst: each live copy of src (at the later of the two filters' latest times) is added to dst
 * with its own age, into dst's table of the level of the copy's table (made when dst has none), so the union
 * answers as one filter given both filters' adds would. The filters must have the same window, first-table
 * shape (buckets, bucket size, fingerprint bits), seed and expansion, else NIDUS_ERR_INCOMPATIBLE;
 * NIDUS_ERR_READ_ONLY for a dst that is a view or loading; NIDUS_ERR_FULL, NIDUS_ERR_LIMIT_TABLES,
 * NIDUS_ERR_LIMIT_MEMORY (a new table would pass dst's max_memory), NIDUS_ERR_TOO_LARGE (the union would hold
 * more than 2^63 - 1 entries, copies counted: what a decoder accepts), NIDUS_ERR_NO_MEMORY. On any failure dst
 * is unchanged (the union is built in a copy first). */
NIDUS_API nidus_status nidus_window_merge(nidus_window *dst, const nidus_window *src);

/* What keeps src from merging into dst ("window 60000, not 1000": src's, then dst's), or "" and 0 when nothing
 * does. Returns the length snprintf would, truncating to cap. */
NIDUS_API size_t nidus_window_merge_difference(const nidus_window *dst, const nidus_window *src, char *buf,
                                               size_t cap);

/* ---- Encoding (nidus/codec.h's format, kind NIDUS_KIND_WINDOW), files and chunks ---- */

/* Bytes nidus_window_encode writes. A filter that never grows (expansion 0) is written as encoding version 7 (file
 * version 8); one with an expansion, grown or not, as NIDUS_FORMAT_VERSION_WINDOW_GROWN (file version
 * NIDUS_FILE_FORMAT_VERSION_WINDOW_GROWN), which also holds every grown table. */
NIDUS_API uint64_t nidus_window_encoded_size(const nidus_window *w);

/* Writes the filter's encoding into `buf`, its length in `*written` (may be NULL): NIDUS_ERR_TOO_LARGE when
 * `cap` is below nidus_window_encoded_size, NIDUS_ERR_READ_ONLY while it is loading, NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_window_encode(const nidus_window *w, void *buf, size_t cap, size_t *written);

/* Reads an encoding, checking every field, the table's contents and the checksum: NIDUS_ERR_CORRUPT for
 * anything malformed, NIDUS_ERR_VERSION for a format this build cannot read, NIDUS_ERR_NO_MEMORY. `allocator`
 * as in the parameters. `*out` is set only on success. */
NIDUS_API nidus_status nidus_window_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                           nidus_window **out);

/* As nidus_window_decode, read-only: the table is read in place when `buf` holds 16 bytes past it (a file
 * always does; `buf` must then outlive the filter), else copied. */
NIDUS_API nidus_status nidus_window_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                         nidus_window **out);

/* Writes the filter to `path` atomically (temporary file, fsync, rename), framed with per-block checksums as
 * every kind's files are. NIDUS_ERR_IO (errno tells why), NIDUS_ERR_NOT_REGULAR, NIDUS_ERR_READ_ONLY while
 * loading, NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_window_save_file(const nidus_window *w, const char *path);

/* Reads a filter file into a new, writable filter, every block checked first: NIDUS_ERR_IO, NIDUS_ERR_CORRUPT,
 * NIDUS_ERR_VERSION, NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_window_load_file(const char *path, const nidus_allocator *allocator,
                                              nidus_window **out);

/* Maps a filter file read-only and views it in place, every block checked first; nidus_window_free unmaps it.
 * Statuses as nidus_window_load_file. */
NIDUS_API nidus_status nidus_window_map_file(const char *path, const nidus_allocator *allocator,
                                             nidus_window **out);

/* The chunk at `cursor` of the encoding (SCANDUMP): cursor 0 gives the header chunk, `*next` the cursor to ask
 * for next, 0 past the last. Into `buf` of `cap` bytes (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD always
 * suffice), its length in `*len`. A filter still loading gives the chunks it has received. Statuses:
 * NIDUS_ERR_INVALID_ARGUMENT, NIDUS_ERR_TOO_LARGE (`cap` short), NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_window_dump_chunk(const nidus_window *w, uint64_t cursor, void *buf, size_t cap,
                                               size_t *len, uint64_t *next);

/* Loads one chunk (LOADCHUNK). A header chunk needs `*filter` NULL and creates a filter there, loading until its
 * last chunk lands and checks out: until then lookups answer false (count 0) and writes fail with
 * NIDUS_ERR_READ_ONLY. With `max_bytes` nonzero it is refused (NIDUS_ERR_LIMIT_MEMORY) when its tables' slots would
 * take more than that (growth's measure), or its overflow entries would, and a filter that grows keeps a
 * max_memory of at most `max_bytes`, so that whatever it grows into loads again under it. Statuses:
 * NIDUS_ERR_CORRUPT, NIDUS_ERR_VERSION, NIDUS_ERR_SEQUENCE (out of order, of another filter), NIDUS_ERR_NO_MEMORY;
 * a failed header leaves `*filter` NULL, a failed later chunk the filter loading (free it). */
NIDUS_API nidus_status nidus_window_load_chunk(nidus_window **filter, const void *chunk, size_t len,
                                               uint64_t max_bytes, const nidus_allocator *allocator);

/* True while a filter made by nidus_window_load_chunk still waits for chunks (or failed its final check). */
NIDUS_API bool nidus_window_loading(const nidus_window *w);

#ifdef __cplusplus
}
#endif

#endif
