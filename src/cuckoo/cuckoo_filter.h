/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the cuckoo filter object behind the public handle — a list of tables that grows.
 *
 * Each table has a level, the step of growth that made its shape: the table of level l (0 the first) has
 * buckets(0) * expansion^l buckets (each level's a multiple of the one before) and enough fingerprint bits that
 * its error bound is at most bound(0) * c / (l+1)^2, c = 1 / (pi^2/6 - 1), so the sum over any number of levels
 * stays under 2 * bound(0). Growth adds the next level; a merge that finds no room for a source table in the
 * tables of its level adds a copy of it beside them, a sibling of the same shape (its bound counts once more).
 * Tables lie in order of level (0, 1, ..., each level once or more). Every table takes its bucket offsets from
 * the same low fingerprint bits (offset_bits = f of table 0), so a key's bucket pair in a table reduces, modulo
 * the smaller size, to its pair in every older table: compaction moves fingerprints down exactly. */
#ifndef NIDUS_SRC_CUCKOO_FILTER_H
#define NIDUS_SRC_CUCKOO_FILTER_H

#include <stddef.h>

#include "codec.h"
#include "cuckoo_table.h"
#include "file_io.h"
#include "nidus/cuckoo.h"
#include "nidus/inline_cuckoo.h"

typedef struct nidus_cuckoo_loader nidus_cuckoo_loader;

/* The full form of a filter (184 bytes on x86-64, pinned in cuckoo_packed.h). Small filters are kept packed instead
 * (cuckoo_packed.h): a public handle is one of those or this, told apart by the first byte, which for this form says
 * which kernel serves it (cuckoo_dispatch.h). The first 104 bytes are the view the inline path reads
 * (nidus/inline_cuckoo.h: the same fields in the same order, checked below), kept by nidus_cuckoo_redispatch with
 * the dispatch byte. */
struct nidus_cuckoo {
    uint32_t tag;           /* byte 0: the dispatch byte, NIDUS_DISPATCH_* other than PACKED and FORWARD */
    uint8_t view_fp_bits;   /* view: table 0's f, b, bucket bytes and offset shift */
    uint8_t view_bucket_size;
    uint8_t view_bucket_bytes;
    uint8_t view_offset_shift;
    const nidus_allocator *alloc; /* the caller's hook (it must outlive the filter) or the libc one */
    uint64_t seed;
    uint64_t hash8_flip;    /* nidus_hash8_flip(seed): hashing an 8-byte key costs less with it */
    uint8_t *view_data;     /* view: table 0's data, buckets, xor_limit, occupied count, SWAR masks */
    uint64_t view_buckets;
    uint64_t view_xor_limit;
    uint64_t *view_occupied;
    uint64_t view_ones;
    uint64_t view_high;
    const uint16_t *view_semi_unrank;
    const uint16_t *view_semi_rank_part;
    uint32_t view_fp_mask;
    /* Narrow fields together (every filter pays for this struct): each holds its checked range. */
    uint8_t max_tables;     /* 1..NIDUS_CUCKOO_MAX_TABLES */
    uint8_t ntables;
    bool read_only;         /* a view: tables borrow their data */
    uint8_t compact_table;  /* a stepped compaction's cursor: the table it empties (>= 1), 0 when none runs */
    uint16_t max_kicks;     /* 1..NIDUS_CUCKOO_MAX_KICKS */
    uint16_t expansion;     /* 0: never grow; at most NIDUS_CUCKOO_MAX_EXPANSION */
    nidus_table_shape base; /* table 0's shape: bucket size, f0, offset bits, reach, semi-sorting */
    uint64_t max_memory;    /* 0: no limit */
    uint64_t deleted;       /* removes since creation or the last compaction */
    uint64_t compact_bucket; /* ... and the next bucket of that table it visits */
    nidus_table *tables;    /* ntables of them, allocated to exactly that many */
    struct nidus_mapping *mapping; /* the mapped file of nidus_cuckoo_map_file, unmapped by free */
    nidus_cuckoo_loader *loader; /* while chunks are being loaded: the tables are incomplete */
};

#define NIDUS_SAME_FIELD_(a, b)                                                                                  \
    (offsetof(struct nidus_cuckoo, a) == offsetof(struct nidus_cuckoo_view, b) &&                                      \
     sizeof(((struct nidus_cuckoo *)0)->a) == sizeof(((struct nidus_cuckoo_view *)0)->b))
_Static_assert(NIDUS_SAME_FIELD_(tag, tag) && NIDUS_SAME_FIELD_(view_fp_bits, fp_bits) &&
                   NIDUS_SAME_FIELD_(view_bucket_size, bucket_size) &&
                   NIDUS_SAME_FIELD_(view_bucket_bytes, bucket_bytes) &&
                   NIDUS_SAME_FIELD_(view_offset_shift, offset_shift) && NIDUS_SAME_FIELD_(alloc, reserved0) &&
                   NIDUS_SAME_FIELD_(seed, seed) && NIDUS_SAME_FIELD_(hash8_flip, hash8_flip) &&
                   NIDUS_SAME_FIELD_(view_data, data) && NIDUS_SAME_FIELD_(view_buckets, buckets) &&
                   NIDUS_SAME_FIELD_(view_xor_limit, xor_limit) && NIDUS_SAME_FIELD_(view_occupied, occupied) &&
                   NIDUS_SAME_FIELD_(view_ones, ones) && NIDUS_SAME_FIELD_(view_high, high) &&
                   NIDUS_SAME_FIELD_(view_semi_unrank, semi_unrank) &&
                   NIDUS_SAME_FIELD_(view_semi_rank_part, semi_rank_part) &&
                   NIDUS_SAME_FIELD_(view_fp_mask, fp_mask) &&
                   offsetof(struct nidus_cuckoo, max_tables) == offsetof(struct nidus_cuckoo_view, reserved1),
               "struct nidus_cuckoo begins with the published view, field for field");
#undef NIDUS_SAME_FIELD_

_Static_assert(NIDUS_CUCKOO_MAX_KICKS <= UINT16_MAX && NIDUS_CUCKOO_MAX_EXPANSION <= UINT16_MAX &&
                   NIDUS_CUCKOO_MAX_TABLES <= UINT8_MAX,
               "the narrow fields of struct nidus_cuckoo hold every accepted value");

/* Writes are refused on views and on filters still loading; lookups on the latter. */
static inline bool nidus_cuckoo_writable(const nidus_cuckoo *cf) { return !cf->read_only && !cf->loader; }

/* Releases the chunk loader's state, if any. */
void nidus_cuckoo_loader_free(nidus_cuckoo *cf);

/* The error bound a table of level k may have: see above. */
double nidus_cuckoo_table_budget(double base_bound, unsigned k);

/* The shape growth gives a table of `level` (>= 1) after the newest table: expansion times its buckets, no fewer
 * fingerprint bits than it has (compaction moves fingerprints only down to tables with no more bits), within the
 * level's budget. NIDUS_ERR_LIMIT_TABLES when no f up to 32 meets the budget, NIDUS_ERR_TOO_LARGE when the size
 * overflows. */
nidus_status nidus_cuckoo_next_shape(const nidus_cuckoo *cf, unsigned level, nidus_table_shape *out);

/* What a table of `shape` costs when created: its slots, not yet any overflow map. New, growth and decoders
 * all measure against max_memory with this one figure. */
uint64_t nidus_cuckoo_table_cost(const nidus_table_shape *shape);

/* True when `need` more bytes fit beside `held` under `max_memory` (0: no limit). Never wraps: `held` may
 * already be past the limit (overflow maps grow without asking), and then nothing more fits. */
bool nidus_cuckoo_fits(uint64_t max_memory, uint64_t held, uint64_t need);

/* Adds a table for growth, if max_tables, max_memory and the fingerprint bits allow; the filter is unchanged
 * on failure (NIDUS_ERR_LIMIT_TABLES, NIDUS_ERR_LIMIT_MEMORY, NIDUS_ERR_TOO_LARGE, NIDUS_ERR_NO_MEMORY). The
 * memory test counts everything the tables hold now, overflow maps included, plus the new table's cost. */
nidus_status nidus_cuckoo_grow(nidus_cuckoo *cf);

/* Sum of the tables' memory through the allocator (data, overflow maps). */
uint64_t nidus_cuckoo_tables_memory(const nidus_cuckoo *cf);

/* Items stored in all of a full filter's tables, copies counted; UINT64_MAX when the sum does not fit (a filter
 * holds at most NIDUS_TABLE_MAX_ITEMS: decoders and merges check it). */
uint64_t nidus_cuckoo_items(const nidus_cuckoo *cf);

/* Checks the filter-level parameters shared by new and decoded filters. */
nidus_status nidus_cuckoo_check_limits(unsigned expansion, unsigned max_tables, unsigned max_kicks);

/* Decodes (copies, views or borrows) a whole encoding or a file body, as `target` and `mode` say (codec.h). */
nidus_status nidus_cuckoo_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                      nidus_decode_target target, nidus_decode_mode mode, nidus_cuckoo **out);

/* nidus_cuckoo_map_file with the blocks' checks left to `prepare` (file_io.h: NIDUS_DEFINE_FILE_FUNCTIONS). */
nidus_status nidus_cuckoo_map_file_lazy(const char *path, const nidus_allocator *allocator,
                                        nidus_file_prepare_fn prepare, void *ctx, nidus_cuckoo **out);

/* For a filter borrowed from a file body (NIDUS_DECODE_BORROW) of `len` bytes: writes the parts of the body
 * that are not table bytes (prefix, overflow entries) for its current state, in place, where they changed.
 * NIDUS_ERR_UNSUPPORTED when the layout moved (growth, compaction, another count of overflow entries): then
 * the whole filter must be written anew. */
nidus_status nidus_cuckoo_rewrite_body(const nidus_cuckoo *cf, uint8_t *body, size_t len);

/* ---- The full form's calls (struct nidus_cuckoo itself, not a packed or forward handle). cuckoo_dispatch.c
 * chooses among them by the dispatch byte; they never call the public API back. The general ones serve any
 * full filter (they check the loader, read-only and the table count themselves); the _plain / _semi / _bits ones
 * only filters whose byte says so (NIDUS_DISPATCH_PLAIN, _SEMI, _BITS and their read-only and v3 variants), in the copy
 * their suffix names (isa_impl.h). Writes that can change the byte end with nidus_cuckoo_redispatch. */

void nidus_full_free(nidus_cuckoo *cf);
nidus_status nidus_full_add_hash(nidus_cuckoo *cf, uint64_t hash);
nidus_status nidus_full_add_key(nidus_cuckoo *cf, const void *key, size_t len);
nidus_status nidus_full_add_unique_hash(nidus_cuckoo *cf, uint64_t hash, bool *added);
bool nidus_full_contains_hash(const nidus_cuckoo *cf, uint64_t hash);
uint64_t nidus_full_count_hash(const nidus_cuckoo *cf, uint64_t hash);
nidus_status nidus_full_remove_hash(nidus_cuckoo *cf, uint64_t hash);
nidus_status nidus_full_clear(nidus_cuckoo *cf);
void nidus_full_get_stats(const nidus_cuckoo *cf, nidus_cuckoo_stats *s);
nidus_status nidus_full_get_table_stats(const nidus_cuckoo *cf, unsigned index, nidus_cuckoo_table_stats *s);
/* Batched lookups of any full filter, the general way (cuckoo_batch.c): every table, hashes prefetched ahead. */
void nidus_full_contains_many_hash(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out);
nidus_status nidus_full_compact(nidus_cuckoo *cf, unsigned *freed);
/* Stepped compaction (nidus_cuckoo_compact_begin and friends). */
nidus_status nidus_full_compact_begin(nidus_cuckoo *cf);
nidus_status nidus_full_compact_step(nidus_cuckoo *cf, uint64_t budget, bool *done);
nidus_status nidus_full_compact_resume(nidus_cuckoo *cf, const nidus_cuckoo_compaction *at);
uint64_t nidus_full_encoded_size(const nidus_cuckoo *cf);
nidus_status nidus_full_encode(const nidus_cuckoo *cf, void *buf, size_t cap, size_t *written);
nidus_status nidus_full_dump_chunk(const nidus_cuckoo *cf, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                   uint64_t *next, nidus_dump_sum *sum);
/* nidus_cuckoo_merge of two full structs (cuckoo_merge.c): the union built aside, in *out (a full filter that owns
 * all its memory, for nidus_cuckoo_replace), `d` and `s` unchanged; and nidus_cuckoo_merge_difference's text. */
nidus_status nidus_full_merge(const nidus_cuckoo *d, const nidus_cuckoo *s, nidus_cuckoo **out);
size_t nidus_full_merge_difference(const nidus_cuckoo *d, const nidus_cuckoo *s, char *buf, size_t cap);
/* nidus_cuckoo_load_chunk for *filter NULL (a header chunk makes one) or a full filter; `loading`: *filter is one
 * still waiting for chunks (anything else refuses every chunk but a header with NIDUS_ERR_SEQUENCE). */
nidus_status nidus_full_load_chunk(nidus_cuckoo **filter, const void *chunk, size_t len, uint64_t max_bytes,
                                   const nidus_allocator *allocator, bool loading);

#endif
