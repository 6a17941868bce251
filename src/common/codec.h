/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the byte-level pieces of the encoding shared by every filter kind.
 *
 * An encoding is a prefix, a sequence of segments, and a checksum:
 *     prefix:   "NIDUS" | version u8 | kind u8 | flags u8 (0) | total bytes u64 | meta bytes u32 | meta
 *     segments: the kind's bulk data (tables, overflow entries), back to back, in an order the meta implies
 *     checksum: XXH3-64 of every byte before it, u64
 * Chunks (SCANDUMP/LOADCHUNK) cut the same bytes: chunk 0 carries the prefix, chunk n >= 1 the n-th run of at
 * most NIDUS_CHUNK_PAYLOAD_MAX bytes of segments and checksum. Each is framed as
 *     "NDCK" | sequence u32 | token u64 (XXH3 of the prefix) | payload bytes u32 | payload | XXH3-64 u64
 * so a chunk from another filter, out of order, or damaged is refused on arrival, and the whole checksum
 * catches the rest when the last one lands. All integers little-endian. */
#ifndef NIDUS_SRC_CODEC_H
#define NIDUS_SRC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nidus/alloc.h"
#include "nidus/codec.h"

/* Fuzz builds (libFuzzer's convention) accept any checksum, so the fuzzer reaches the field checks behind
 * it instead of spending its time against XXH3. Never defined in a normal build. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define NIDUS_CHECKSUMS_ENFORCED 0
#else
#define NIDUS_CHECKSUMS_ENFORCED 1
#endif

/* A checksum comparison that fuzz builds waive. */
#define NIDUS_CHECKSUM_BAD(stored, computed) (NIDUS_CHECKSUMS_ENFORCED && (stored) != (computed))

#define NIDUS_CODEC_PREFIX_FIXED 20u /* the prefix before the meta */
#define NIDUS_CODEC_CHECKSUM_BYTES 8u
#define NIDUS_CHUNK_HEADER_BYTES 20u

/* Little-endian writing into a buffer sized exactly beforehand. */
typedef struct nidus_writer {
    uint8_t *p;
} nidus_writer;

void nidus_put_u8(nidus_writer *w, unsigned v);
void nidus_put_u32(nidus_writer *w, uint32_t v);
void nidus_put_u64(nidus_writer *w, uint64_t v);
void nidus_put_bytes(nidus_writer *w, const void *src, size_t n);

/* Bounds-checked little-endian reading: past the end, reads give 0 and set `bad`, so a parser checks once. */
typedef struct nidus_reader {
    const uint8_t *p;
    size_t left;
    bool bad;
} nidus_reader;

unsigned nidus_get_u8(nidus_reader *r);
uint32_t nidus_get_u32(nidus_reader *r);
uint64_t nidus_get_u64(nidus_reader *r);
const uint8_t *nidus_get_bytes(nidus_reader *r, size_t n);

uint32_t nidus_read_le32(const uint8_t *p);

/* A run of bytes in the segment stream. */
typedef struct nidus_segment {
    const uint8_t *data;
    uint64_t bytes;
} nidus_segment;

/* Copies stream bytes [offset, offset + n) of the segments into `out`; the range must lie inside them. */
void nidus_segments_read(const nidus_segment *segs, unsigned count, uint64_t offset, uint8_t *out, uint64_t n);

/* Copies `n` bytes into stream position `offset` of the segments (whose data are writable). */
void nidus_segments_write(const nidus_segment *segs, unsigned count, uint64_t offset, const uint8_t *in,
                          uint64_t n);

/* XXH3-64 of the prefix followed by the segments: the encoding's checksum. */
uint64_t nidus_codec_checksum(const uint8_t *prefix, size_t prefix_bytes, const nidus_segment *segs,
                              unsigned count);

/* Writes the fixed prefix (through the meta length) with format `version` (NIDUS_FORMAT_VERSION, or _SIBLINGS for
 * what needs it); the caller writes the meta after it. */
void nidus_codec_put_prefix(nidus_writer *w, unsigned version, nidus_kind kind, uint64_t total, uint32_t meta_bytes);

/* Checks the fixed prefix of an encoding of `len` bytes (len = total for a whole encoding, or 0 for a chunked
 * one whose total is returned instead) and returns its meta. `newest` is the newest encoding version (odd) the
 * kind writes, in every call below that takes it: a later one is NIDUS_ERR_VERSION, as is a framed file's
 * above newest + 1. Each kind's codec passes its own, so this file names no kind's versions. */
nidus_status nidus_codec_check_prefix(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                                      uint64_t *total, nidus_reader *meta);

/* Which metas the encoding or file whose meta `meta` reads has, before anything of the meta is read (the meta
 * follows the fixed prefix, whose sixth byte is the version): 1 before Bloom layer layouts (versions 1 and 2),
 * 2 with them (versions 3 and 4), 3 with the cuckoo placement flag (versions 5 and 6), 4 with cuckoo stash entries
 * (versions 7 and 8: the same metas; stash entries have the bytes of overflow entries), 5 with cuckoo table levels
 * (versions 9 and 10: a byte of each table's meta that was zero). */
static inline unsigned nidus_codec_meta_version(const nidus_reader *meta)
{
    unsigned v = meta->p[5 - (int)NIDUS_CODEC_PREFIX_FIXED];
    return v >= 9 ? 5 : v >= 7 ? 4 : v >= 5 ? 3 : v >= 3 ? 2 : 1;
}

/* Frames `payload` as chunk `seq` into `out` (NIDUS_CHUNK_OVERHEAD + n bytes); the payload may already be at
 * out + NIDUS_CHUNK_HEADER_BYTES. */
void nidus_chunk_frame(uint8_t *out, uint32_t seq, uint64_t token, const uint8_t *payload, uint32_t n);

/* Unframes a chunk, checking its magic, length and checksum. */
nidus_status nidus_chunk_parse(const uint8_t *chunk, size_t len, uint32_t *seq, uint64_t *token,
                               const uint8_t **payload, uint32_t *n);

/* ---- what every kind does the same way, given its prefix (through the meta) and its segments ---- */

/* Writes a whole encoding of `total` bytes: prefix, segments, checksum. */
void nidus_codec_write_whole(uint8_t *out, uint64_t total, const uint8_t *prefix, size_t prefix_bytes,
                             const nidus_segment *segs, unsigned count);

/* Checks the prefix, the exact length and the checksum of a whole encoding; returns its meta and the prefix
 * length (where the segments begin). */
nidus_status nidus_codec_open_whole(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                                    nidus_reader *meta, size_t *prefix_bytes);

/* What a decoder is given: a whole encoding (checksum at its end), or the body of a version 2 file
 * (file_format.h), whose block checksums the caller checks: all of them before (BODY), or each block before it
 * is first read (BODY_TRUSTED: the decoder then skips scans of the tables that only validation needs, where
 * any content of them is safe to probe and to write over: a hostile file with valid checksums may give wrong
 * answers, never an access outside the filter's memory). */
typedef enum nidus_decode_mode { NIDUS_DECODE_WHOLE, NIDUS_DECODE_BODY, NIDUS_DECODE_BODY_TRUSTED } nidus_decode_mode;

/* Where a decoded filter's tables live: copied (writable), viewed in the buffer (read-only), or borrowed from
 * a writable buffer (a private mapping of a file) and written there: a writable filter whose table bytes stay
 * in place, so a file can be patched where it changed (nidus_X_rewrite_body, nidus_file_patch). */
typedef enum nidus_decode_target { NIDUS_DECODE_COPY, NIDUS_DECODE_VIEW, NIDUS_DECODE_BORROW } nidus_decode_target;

/* Writes `prefix` (n bytes) at the start of `body` unless it is there already (an unchanged block stays clean). */
void nidus_codec_put_if_changed(uint8_t *body, const uint8_t *bytes, size_t n);

/* nidus_codec_open_whole for any mode; `*tail` is what follows the segments: the checksum's 8 bytes, or 0. */
nidus_status nidus_codec_open(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                              nidus_decode_mode mode, nidus_reader *meta, size_t *prefix_bytes, size_t *tail);

/* The running checksum of a dump (nidus/filter.h: nidus_dump_sum): the prefix and the segment bytes of the data
 * chunks dumped in order since the header chunk, of the encoding whose prefix hashes to `token`. */
typedef struct nidus_dump_sum nidus_dump_sum; /* the same typedef as nidus/filter.h's (C11 allows both) */
struct nidus_dump_sum {
    const nidus_allocator *alloc;
    void *hash_block;          /* the block holding `hash` (64-byte aligned inside it) */
    struct XXH3_state_s *hash;
    uint64_t token;
    uint64_t next;    /* the data chunk whose bytes it takes next (1: none taken yet); 0: not begun */
    uint64_t covered; /* segment bytes taken: (next - 1) * NIDUS_CHUNK_PAYLOAD_MAX, or all of them */
    uint64_t digests; /* checksum chunks given the sum's digest */
    uint64_t wholes;  /* checksum chunks that hashed the segments whole */
};

/* Chunk `cursor` of an encoding (see nidus_cuckoo_dump_chunk for the contract). With `sum` (NULL: none), the
 * header chunk begins it unless it follows this encoding already, the data chunk it expects next adds its
 * segment bytes to it, and the chunk that carries the checksum takes the sum's digest when it covers every
 * segment byte (else the segments are hashed whole): the same bytes either way, while the encoding is unchanged. */
nidus_status nidus_codec_dump_chunk(const uint8_t *prefix, size_t prefix_bytes, const nidus_segment *segs,
                                    unsigned count, uint64_t cursor, uint8_t *buf, size_t cap, size_t *len,
                                    uint64_t *next, nidus_dump_sum *sum);

/* The kinds' dump_chunk with a running sum (the public nidus_X_dump_chunk pass NULL), for nidus_filter_dump_chunk_sum. */
struct nidus_cuckoo;
struct nidus_bloom;
struct nidus_counting_bloom;
struct nidus_window;
nidus_status nidus_cuckoo_dump_chunk_sum(const struct nidus_cuckoo *h, uint64_t cursor, void *buf, size_t cap,
                                         size_t *len, uint64_t *next, nidus_dump_sum *sum);
nidus_status nidus_bloom_dump_chunk_sum(const struct nidus_bloom *bf, uint64_t cursor, void *buf, size_t cap,
                                        size_t *len, uint64_t *next, nidus_dump_sum *sum);
nidus_status nidus_counting_bloom_dump_chunk_sum(const struct nidus_counting_bloom *cb, uint64_t cursor, void *buf,
                                                 size_t cap, size_t *len, uint64_t *next, nidus_dump_sum *sum);
nidus_status nidus_window_dump_chunk_sum(const struct nidus_window *w, uint64_t cursor, void *buf, size_t cap,
                                         size_t *len, uint64_t *next, nidus_dump_sum *sum);

/* Checks a header chunk's payload (seq 0): the prefix fills it exactly and matches the token. Returns the
 * meta and the encoding's declared total. */
nidus_status nidus_codec_open_header(const uint8_t *payload, uint32_t n, uint64_t token, nidus_kind kind,
                                     unsigned newest, nidus_reader *meta, uint64_t *total);

/* The state of a chunked load between chunks. */
typedef struct nidus_chunk_loader {
    uint64_t token;
    uint32_t next_seq;
    bool failed;     /* the final check failed: every later chunk is refused */
    uint64_t pos;    /* stream bytes received */
    uint64_t stream; /* stream bytes expected: segments and checksum */
    size_t prefix_bytes;
    uint8_t *prefix; /* a copy, for the header chunk of a dump of the load in progress */
    uint8_t checksum[NIDUS_CODEC_CHECKSUM_BYTES];
    void *hash_block; /* the block holding `hash`, from the filter's allocator */
    struct XXH3_state_s *hash; /* the running checksum: the prefix and every segment byte received so far */
} nidus_chunk_loader;

/* Starts the loader's running checksum over its prefix (the XXH3 state, 64-byte aligned inside a block from
 * `a`), so that each data chunk hashes only its own bytes. NIDUS_ERR_NO_MEMORY when the block is refused. */
nidus_status nidus_chunk_loader_hash_begin(nidus_chunk_loader *l, const nidus_allocator *a);

/* Frees the running checksum's block (nothing when there is none). */
void nidus_chunk_loader_hash_free(nidus_chunk_loader *l, const nidus_allocator *a);

/* Starts a chunked load of `stream` bytes after the header payload `prefix` (n bytes, kept for dumps of the load
 * in progress), its running checksum begun; NIDUS_ERR_NO_MEMORY. nidus_chunk_loader_release frees it and sets
 * `*l` NULL (NULL does nothing). */
nidus_status nidus_chunk_loader_begin(nidus_chunk_loader **out, const nidus_allocator *a, const uint8_t *prefix,
                                      uint32_t n, uint64_t token, uint64_t stream);
void nidus_chunk_loader_release(nidus_chunk_loader **l, const nidus_allocator *a);

/* Takes data chunk (seq, token, payload) into the segments (and the loader's checksum bytes), adding its
 * segment bytes to the running checksum. Out of order, repeated, foreign or wrongly cut: NIDUS_ERR_SEQUENCE,
 * nothing written. When it was the last, checks the whole checksum (NIDUS_ERR_CORRUPT and `failed` when wrong)
 * and sets `*complete`: the running one's digest, or without one (never begun) the segments hashed whole. */
nidus_status nidus_chunk_accept(nidus_chunk_loader *l, uint32_t seq, uint64_t token, const uint8_t *payload,
                                uint32_t n, const nidus_segment *segs, unsigned count, bool *complete);

/* Chunk `cursor` of a load in progress, as it was received: the header (cursor 0), then the data chunks that
 * have landed; past those `*len` and `*next` are 0. Loading these chunks into a new filter recreates the same
 * state, so a half-finished copy can be saved and continued. NIDUS_ERR_CORRUPT once the final check failed. */
nidus_status nidus_codec_dump_received(const nidus_chunk_loader *l, const nidus_segment *segs, unsigned count,
                                       uint64_t cursor, uint8_t *buf, size_t cap, size_t *len, uint64_t *next);

uint64_t nidus_codec_hash(const void *p, size_t n);

#endif
