/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the framed file format around a filter's encoding, for every kind. "Version 2" below names the
 * framed layout (even format versions: 2, 4 since the Bloom layer layouts, 6 since cuckoo range placement, 8 since
 * the stash), "version 1" a whole encoding
 * (odd versions).
 *
 * A filter file is the kind's encoding (codec.h) without its whole-encoding checksum, with version byte 2 and
 * total = the body's length, followed by a trailer of per-block checksums:
 *     body:    prefix (through the meta) | segments                            body_bytes
 *     blocks:  XXH3-64 of each block_size run of the body (the last may be short), u64 each
 *     footer:  "NIDUSBLK" | block_size u32 | 0 u32 | body_bytes u64 | blocks u64 | header checksum u64
 * The header checksum covers the prefix, the block checksums and the footer before it, so opening a file reads
 * and checks a few kilobytes whatever its size; each block is then checked when first read (or all of them by
 * nidus_file_verify_all). The prefix must lie inside block 0. Version 1 files (one checksum over everything)
 * are still read. All integers little-endian. */
#ifndef NIDUS_SRC_FILE_FORMAT_H
#define NIDUS_SRC_FILE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nidus/alloc.h"
#include "nidus/codec.h"
#include "nidus/status.h"
#include "nidus/verify.h"

#define NIDUS_FILE_BLOCK_BYTES 65536u
#define NIDUS_FILE_FOOTER_BYTES 40u
/* The footer's first 8 bytes (no terminator counted: compare NIDUS_FILE_FOOTER_MAGIC_BYTES of them). */
#define NIDUS_FILE_FOOTER_MAGIC "NIDUSBLK"
#define NIDUS_FILE_FOOTER_MAGIC_BYTES 8u

/* Where the parts of a mapped file lie. */
typedef struct nidus_file_layout {
    unsigned version;        /* 1 (whole checksum) or 2 (per block) */
    const uint8_t *body;     /* version 2: the encoding without checksum; version 1: the whole encoding */
    size_t body_bytes;
    const uint8_t *checksums; /* version 2: `blocks` u64 */
    uint64_t blocks;
    uint32_t block_bytes;
} nidus_file_layout;

/* Bytes of the version 2 file whose body is `body_bytes` long. */
uint64_t nidus_file_size_for_body(uint64_t body_bytes);

/* Turns a whole encoding of `len` bytes in `buf` (whose capacity is nidus_file_size_for_body(len - 8)) into a
 * version 2 file in place; returns the file's length. */
size_t nidus_file_from_encoding(uint8_t *buf, size_t len);

/* Parses a file's framing: for version 2, the footer, the block table and the header checksum (not the
 * blocks). NIDUS_ERR_CORRUPT or NIDUS_ERR_VERSION when it is not a filter file this build reads. */
nidus_status nidus_file_parse(const uint8_t *file, size_t len, nidus_file_layout *out);

/* Checks block `k` of a version 2 body against its checksum. */
bool nidus_file_block_ok(const nidus_file_layout *l, uint64_t k);

/* Checks every block (version 2); NIDUS_ERR_CORRUPT at the first bad one (its index in `*bad` if not NULL). */
nidus_status nidus_file_verify_all(const nidus_file_layout *l, uint64_t *bad);

/* nidus_file_verify over the `len` bytes of a file at `f` (the fuzz target's entry): `*r` must have been
 * cleared as nidus_file_verify clears it. */
nidus_status nidus_file_verify_bytes(const uint8_t *f, uint64_t len, const nidus_allocator *allocator,
                                     nidus_file_report *r);

/* The trailer (block table and footer, nidus_file_size_for_body(l->body_bytes) - l->body_bytes bytes) of a
 * version 2 file whose body is now `body` (same length as l's), into `out`: the old checksums but for the
 * blocks flagged in `dirty` (non-zero), which are hashed again from `body`, and a new header checksum. */
void nidus_file_trailer(const nidus_file_layout *l, const uint8_t *body, const unsigned char *dirty, uint8_t *out);

/* Marks a body patched in place as a version 2 body again (version byte and total), as
 * nidus_file_from_encoding does. */
void nidus_file_mark_body(uint8_t *body, size_t body_bytes);

#endif
