/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — one handle for a filter of any kind.
 *
 * A nidus_filter holds a cuckoo, Bloom, counting Bloom, binary fuse or windowed cuckoo filter and forwards each
 * call to that
 * kind's own function, so a tool that works on "a filter file" (the CLI: create, add, check, del, info) needs no switch over
 * the kinds. It adds no format: files and encodings are the kinds' own, and the typed handle underneath
 * (nidus_filter_cuckoo() and friends) stays available for what only one kind has (compaction, per-table
 * stats). A call a kind cannot do returns NIDUS_ERR_UNSUPPORTED (remove on a Bloom filter; and, for a kind
 * that is built once and only read, every write), so a caller tests the status, not the kind.
 *
 * Files open in one of three ways: loaded (a writable copy), mapped read-only, or mapped writable: a private
 * copy-on-write mapping whose table bytes the filter writes in place, so that nidus_filter_save_file writes the
 * file back as the old file with only the changed blocks replaced, or whole when the layout moved (the filter
 * grew, a cuckoo filter compacted). A mapped file's blocks are checked at open, all of them, unless the caller
 * hands a nidus_file_guard that checks each block before it is first read: the library cannot catch that first
 * read itself without process-wide state (a fault handler), so a program that owns the process does it.
 * A windowed filter's calls take a time (nidus/window.h): the handle keeps one, set by nidus_filter_set_time
 * (0 until then, which a windowed filter reads as the time of its latest write), and every call on it (add,
 * remove, contains, count, stats) is made at that time; other kinds ignore it.
 * Handles are not thread-safe: serialise writers (a save of a writable mapping writes too). Read-only calls
 * (contains, count, stats, encode) on a filter nobody is writing may run concurrently. */
#ifndef NIDUS_FILTER_H
#define NIDUS_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "bloom.h"
#include "codec.h"
#include "cuckoo.h"
#include "fuse.h"
#include "window.h"
#include "status.h"

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nidus_filter nidus_filter;

/* What nidus_filter_new builds. The fields every kind has come first; a kind's own parameters, when given,
 * replace them all (kind excepted). Zero means the default wherever the comment says so. */
typedef struct nidus_filter_params {
    nidus_kind kind;
    uint64_t capacity;  /* items it is sized for (>= 1) */
    double error_rate;  /* false-positive bound in (0, 1); 0: 0.01 */
    /* Growth when full: 0 never (an add then fails with NIDUS_ERR_FULL); else a cuckoo filter adds a table
     * `expansion` times its newest one's buckets, a Bloom filter a layer `expansion` times the last one's
     * capacity, a windowed filter a table of expansion^k times its capacity (nidus_window_params). A counting
     * Bloom filter never grows: it must be 0. */
    unsigned expansion;
    /* NIDUS_KIND_WINDOW: the window W in ticks, [1, NIDUS_WINDOW_MAX_TICKS] (other kinds: must be 0). */
    uint64_t window;
    /* NULL: libc. The handle's, and the filter's unless kind_params names its own; must outlive the filter. */
    const nidus_allocator *allocator;
    /* NULL, or the kind's own parameters (nidus_cuckoo_params, nidus_bloom_params,
     * nidus_counting_bloom_params, nidus_window_params), used as they are instead of the fields above. */
    const void *kind_params;
} nidus_filter_params;

/* Builds an empty filter; NIDUS_ERR_INVALID_ARGUMENT for a kind this build cannot create or a parameter out of
 * range (the kind's _new says which are), NIDUS_ERR_UNSUPPORTED for a static kind (NIDUS_KIND_FUSE: built from
 * its keys by nidus_fuse_build), NIDUS_ERR_LIMIT_MEMORY or NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_filter_new(const nidus_filter_params *params, nidus_filter **out);

/* Frees the filter and, for a mapped one, unmaps its file (after nidus_file_guard.release); NULL does nothing. */
NIDUS_API void nidus_filter_free(nidus_filter *filter);

/* The kind it holds. */
NIDUS_API nidus_kind nidus_filter_kind(const nidus_filter *filter);

/* The kind's name: "cuckoo", "bloom", "counting-bloom", "fuse" or "window" ("unknown" for any other value). */
NIDUS_API const char *nidus_kind_name(nidus_kind kind);

/* The typed handle underneath, for the kind's own calls (stats, compaction); NULL when the filter is of
 * another kind. It stays owned by `filter`: do not free it. */
NIDUS_API nidus_cuckoo *nidus_filter_cuckoo(nidus_filter *filter);
NIDUS_API nidus_bloom *nidus_filter_bloom(nidus_filter *filter);
NIDUS_API nidus_counting_bloom *nidus_filter_counting_bloom(nidus_filter *filter);
NIDUS_API nidus_fuse *nidus_filter_fuse(nidus_filter *filter);
NIDUS_API nidus_window *nidus_filter_window(nidus_filter *filter);

/* Sets the time (milliseconds, or the caller's tick) at which a windowed filter's calls through this handle are
 * made; the handle's time is 0 until set. Other kinds ignore it. */
NIDUS_API void nidus_filter_set_time(nidus_filter *filter, uint64_t now);
NIDUS_API uint64_t nidus_filter_time(const nidus_filter *filter);

/* True for a read-only view (nidus_filter_view, a file mapped with NIDUS_FILTER_MAP): writes fail with
 * NIDUS_ERR_READ_ONLY (those of a static kind with NIDUS_ERR_UNSUPPORTED, whether it is a view or not). */
NIDUS_API bool nidus_filter_is_read_only(const nidus_filter *filter);

/* The 64-bit hash the filter's _hash calls take for `key`, as the kind computes it. */
NIDUS_API uint64_t nidus_filter_hash(const nidus_filter *filter, const void *key, size_t len);

/* Merges `src` into `dst` by the kind's _merge (nidus_cuckoo_merge, nidus_bloom_merge, nidus_counting_bloom_merge,
 * nidus_window_merge: windows of one W, shape and seed),
 * whose statuses it returns: NIDUS_ERR_INCOMPATIBLE for filters of different kinds or parameters,
 * NIDUS_ERR_READ_ONLY for a dst that is a view or loading, NIDUS_ERR_UNSUPPORTED for fuse filters (built once
 * from their keys); on any failure dst is unchanged. */
NIDUS_API nidus_status nidus_filter_merge(nidus_filter *dst, const nidus_filter *src);

/* What keeps src from merging into dst, by the kind's _merge_difference, or "kind bloom, not cuckoo" (src's, then
 * dst's); "" and 0 when none differs (fuse filters: none). Returns the length snprintf would, truncating to cap. */
NIDUS_API size_t nidus_filter_merge_difference(const nidus_filter *dst, const nidus_filter *src, char *buf, size_t cap);

/* Adds one key (a cuckoo filter adds one more copy; a Bloom filter sets its bits, a key already there being
 * no error). On failure the filter is unchanged; the statuses are the kind's _add ones. */
NIDUS_API nidus_status nidus_filter_add(nidus_filter *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_filter_add_hash(nidus_filter *filter, uint64_t hash);

/* Removes one copy: NIDUS_ERR_NOT_FOUND when none is there, NIDUS_ERR_UNSUPPORTED for a Bloom filter. */
NIDUS_API nidus_status nidus_filter_remove(nidus_filter *filter, const void *key, size_t len);
NIDUS_API nidus_status nidus_filter_remove_hash(nidus_filter *filter, uint64_t hash);

/* Whether the key may be in the filter: never false for a key added and not removed. */
NIDUS_API bool nidus_filter_contains(const nidus_filter *filter, const void *key, size_t len);
NIDUS_API bool nidus_filter_contains_hash(const nidus_filter *filter, uint64_t hash);

/* out[i] = nidus_filter_contains_hash(filter, hashes[i]) for i < n, through the kind's batched lookup. */
NIDUS_API void nidus_filter_contains_many_hash(const nidus_filter *filter, const uint64_t *hashes, size_t n,
                                               bool *out);

/* How many times the key may have been added: copies (cuckoo), the counters' estimate (counting Bloom),
 * 1 or 0 (Bloom). Never 0 for a key added and not removed. */
NIDUS_API uint64_t nidus_filter_count(const nidus_filter *filter, const void *key, size_t len);
NIDUS_API uint64_t nidus_filter_count_hash(const nidus_filter *filter, uint64_t hash);

/* What every kind reports, in one shape. The kind's own figures: its _get_stats on the typed handle. */
typedef struct nidus_filter_stats {
    nidus_kind kind;
    uint64_t items;        /* keys added less keys removed (Bloom: new keys added) */
    uint64_t capacity;     /* items it holds at its design load and error, all sub-filters (cuckoo: its slots) */
    uint64_t memory_bytes; /* what it holds through the allocator or in its mapping */
    double bits_per_item;  /* memory bits / capacity, as the kinds' stats: the cost per item when full */
    double error_bound;    /* the false-positive bound at capacity, all sub-filters */
    unsigned sub_filters;  /* cuckoo tables, Bloom layers, windowed tables; 1 for a counting Bloom filter */
    bool read_only;
    uint64_t window;       /* a windowed filter's W in ticks (items then counts its live entries at the handle's
                              time, capacity the items of one window its tables are sized for); 0 for other kinds */
} nidus_filter_stats;

/* Fills `*stats` from the kind's own stats (the same items, memory and error bound). */
NIDUS_API void nidus_filter_get_stats(const nidus_filter *filter, nidus_filter_stats *stats);

/* The kind's encoding (codec.h): its length, and the encoding written into `buf` of `cap` bytes (the kind's
 * _encode statuses when `cap` is short). */
NIDUS_API uint64_t nidus_filter_encoded_size(const nidus_filter *filter);
NIDUS_API nidus_status nidus_filter_encode(const nidus_filter *filter, void *buf, size_t cap, size_t *written);

/* Decodes an encoding of any kind into a writable copy, checked as the kind's _decode checks it (length,
 * checksum, every field, before allocating); NIDUS_ERR_CORRUPT, NIDUS_ERR_VERSION, NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_filter_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                           nidus_filter **out);

/* The same, read-only, its tables left in `buf`, which must outlive the filter. */
NIDUS_API nidus_status nidus_filter_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                         nidus_filter **out);

/* ---- chunks (the module's SCANDUMP / LOADCHUNK, the CLI's push and pull) ---- */

/* The chunk at `cursor` of the filter's encoding, by the kind's _dump_chunk (nidus_cuckoo_dump_chunk: cursor 0
 * gives the header chunk, `*next` the cursor to ask for next, 0 past the last; a filter still loading gives the
 * chunks it has received). Into `buf` of `cap` bytes (NIDUS_CHUNK_MAX_BYTES + NIDUS_CHUNK_OVERHEAD always
 * suffice), its length in `*len`. NIDUS_ERR_INVALID_ARGUMENT for a NULL argument or a cursor that is not one,
 * NIDUS_ERR_TOO_LARGE when `cap` is short, NIDUS_ERR_UNSUPPORTED for a fuse filter (it has no chunks). */
NIDUS_API nidus_status nidus_filter_dump_chunk(const nidus_filter *filter, uint64_t cursor, void *buf, size_t cap,
                                               size_t *len, uint64_t *next);

/* A dump's running checksum, so that the chunk carrying the encoding's checksum costs its own bytes, not the whole
 * filter's (nidus_filter_dump_chunk_sum). Made empty by nidus_dump_sum_new (NULL when `allocator` refuses; NULL
 * allocator: libc), freed by nidus_dump_sum_free (NULL does nothing). */
typedef struct nidus_dump_sum nidus_dump_sum;
NIDUS_API nidus_dump_sum *nidus_dump_sum_new(const nidus_allocator *allocator);
NIDUS_API void nidus_dump_sum_free(nidus_dump_sum *sum);

/* Empties `sum` (NULL does nothing): the caller's duty whenever the filter it follows changes. */
NIDUS_API void nidus_dump_sum_reset(nidus_dump_sum *sum);

/* How many chunks carrying a checksum `sum` has served: by its digest, and by hashing the filter whole (it did not
 * cover every byte before). Both 0 for NULL. */
NIDUS_API void nidus_dump_sum_counts(const nidus_dump_sum *sum, uint64_t *digests, uint64_t *wholes);

/* nidus_filter_dump_chunk, the same bytes, carrying `sum` along: the header chunk begins it (unless it follows
 * this filter already), the data chunk it expects next adds its bytes, and the chunk with the checksum takes the
 * sum's digest once it covers every byte before (otherwise the filter is hashed whole). Reset `sum` whenever the
 * filter changes: a stale sum gives a wrong checksum. */
NIDUS_API nidus_status nidus_filter_dump_chunk_sum(const nidus_filter *filter, uint64_t cursor, nidus_dump_sum *sum,
                                                   void *buf, size_t cap, size_t *len, uint64_t *next);

/* Loads one chunk of a filter of `kind` (NIDUS_KIND_CUCKOO, _BLOOM, _COUNTING_BLOOM or _WINDOW) by the kind's
 * _load_chunk.
 * A header chunk needs `*filter` NULL and creates a filter there (`allocator`: its memory and the handle's; NULL:
 * libc), loading until its last chunk lands: until then lookups answer false, writes fail with
 * NIDUS_ERR_READ_ONLY, nidus_filter_loading is true and nidus_filter_dump_chunk gives the chunks so far. Later
 * chunks need the filter the header made. `max_bytes` (nonzero) caps the memory the chunks may ask for, as the
 * kind's _load_chunk says. Statuses: the kind's (NIDUS_ERR_CORRUPT, NIDUS_ERR_VERSION, NIDUS_ERR_SEQUENCE, a
 * chunk of another filter or out of order; NIDUS_ERR_LIMIT_MEMORY, NIDUS_ERR_NO_MEMORY); a failed header chunk
 * leaves `*filter` NULL, a failed later one the filter loading (free it). A ref around no filter takes the header
 * chunk in place of a NULL `*filter` (see nidus_filter_ref_init). NIDUS_ERR_INVALID_ARGUMENT for a NULL
 * argument or a `*filter` of another kind, NIDUS_ERR_UNSUPPORTED for NIDUS_KIND_FUSE. Whether the filter or the
 * typed handle under it is replaced on the last chunk is the library's business: read the typed handle anew. */
NIDUS_API nidus_status nidus_filter_load_chunk(nidus_filter **filter, nidus_kind kind, const void *chunk, size_t len,
                                               uint64_t max_bytes, const nidus_allocator *allocator);

/* True while a filter made by nidus_filter_load_chunk still waits for chunks (or failed its final check). */
NIDUS_API bool nidus_filter_loading(const nidus_filter *filter);

/* ---- a handle around a typed filter the caller keeps, without an allocation ----
 *
 * A program that keeps typed handles (one per key, say) makes a nidus_filter around one in storage it provides
 * (a nidus_filter_ref on the stack) instead of allocating a handle per filter. Every nidus_filter_* call takes
 * it as any handle. A ref around no filter yet (NULL) takes a header chunk in nidus_filter_load_chunk, the filter
 * made inside it. A call that replaces the typed handle (a load's last chunk, a relocation) replaces it in the
 * ref: read it back with nidus_filter_typed. nidus_filter_free on a ref frees the typed filter, never the ref. */

/* Room for a nidus_filter made by nidus_filter_ref_init. Its size is part of the ABI; the library checks at build
 * time that its handle fits. */
#define NIDUS_FILTER_REF_WORDS 24
typedef union nidus_filter_ref {
    uint64_t words[NIDUS_FILTER_REF_WORDS];
    void *align_pointer;
    double align_double;
} nidus_filter_ref;

/* Makes `ref` a nidus_filter around `typed`, a handle of `kind` the caller keeps (NULL: no filter yet, for a
 * header chunk), and returns it; NULL for a kind this build does not know. Allocates nothing. */
NIDUS_API nidus_filter *nidus_filter_ref_init(nidus_filter_ref *ref, nidus_kind kind, void *typed);

/* The typed handle underneath, whatever its kind (nidus_filter_cuckoo and friends name its type); NULL for a ref
 * around no filter yet whose header chunk has not loaded. */
NIDUS_API void *nidus_filter_typed(const nidus_filter *filter);

/* The kind's _relocate (nidus_cuckoo_relocate's contract: true past the last block, false when mover->stop paused
 * it); the typed handle may move (nidus_filter_typed gives it). Kinds without one (counting Bloom, fuse): true. */
NIDUS_API bool nidus_filter_relocate(nidus_filter *filter, const nidus_mover *mover, uint64_t *cursor);

/* ---- files ---- */

/* A framed file's blocks (even format versions), as a nidus_file_guard is shown them. */
typedef struct nidus_file_blocks {
    uint8_t *map;              /* the whole file, mapped; block k starts at map + k * block_bytes */
    size_t map_bytes;
    uint64_t body_bytes;       /* the blocks cover map[0, body_bytes); the last block may be short */
    uint64_t blocks;
    uint32_t block_bytes;
    const uint8_t *checksums;  /* `blocks` little-endian XXH3-64s, inside the mapping */
    bool writable;             /* a private writable mapping: the guard notes which blocks are written */
} nidus_file_blocks;

/* NIDUS_OK when block k matches its checksum, NIDUS_ERR_CORRUPT when not, NIDUS_ERR_INVALID_ARGUMENT past the
 * last block. Reads block k and its checksum only, touches no other state: safe in a signal handler. */
NIDUS_API nidus_status nidus_file_block_check(const nidus_file_blocks *blocks, uint64_t k);

/* A caller's way of checking a mapped file's blocks on first use instead of all at open. */
typedef struct nidus_file_guard {
    /* Called after the header and block table were checked, before the body is read: the guard must see to it
     * that each block passes nidus_file_block_check before it is first read (typically: protect the pages,
     * check on the fault). NIDUS_ERR_UNSUPPORTED: the library checks every block now instead; another error
     * fails the open. */
    nidus_status (*prepare)(void *ctx, const nidus_file_blocks *blocks);
    /* Writable mappings: one flag a block, non-zero for each block written since prepare; NULL (or no such
     * function) makes the save compare every block with the file instead. */
    const unsigned char *(*written)(void *ctx);
    /* The mapping is about to be unmapped: stop guarding it. May be NULL. */
    void (*release)(void *ctx);
    void *ctx;
} nidus_file_guard;

typedef enum nidus_filter_open_mode {
    NIDUS_FILTER_LOAD = 0,        /* a writable copy in memory: every block and field checked (_load_file) */
    NIDUS_FILTER_MAP = 1,         /* read-only, its tables in a mapping of the file (_map_file) */
    NIDUS_FILTER_MAP_WRITABLE = 2 /* writable, its tables in a private mapping, saved by patching (see top) */
} nidus_filter_open_mode;

/* Opens the filter file at `path`, whatever its kind. `guard` (may be NULL; must outlive the filter) applies
 * to the mapped modes of framed files; without one every block is checked at open. A file that cannot be mapped
 * writable and patched (an odd, whole-encoding version) is loaded instead. Statuses as the kinds' _load_file. */
NIDUS_API nidus_status nidus_filter_open(const char *path, nidus_filter_open_mode mode,
                                         const nidus_allocator *allocator, const nidus_file_guard *guard,
                                         nidus_filter **out);

/* Writes the filter to `path` atomically (temporary file, fsync, rename), as the kinds' _save_file. Opened
 * with NIDUS_FILTER_MAP_WRITABLE and its layout unchanged: the opened file copied with the written blocks and
 * new checksums put over it; otherwise the whole encoding. The filter stays usable. */
NIDUS_API nidus_status nidus_filter_save_file(const nidus_filter *filter, const char *path);

#ifdef __cplusplus
}
#endif

#endif
