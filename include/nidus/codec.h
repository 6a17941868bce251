/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — what every encoded filter has in common: its kind, and the limits of its chunks.
 *
 * Every filter kind encodes to one little-endian format: the magic "NIDUS", a format version, the kind, the
 * total length, the kind's parameters and counters, its tables, and an XXH3-64 checksum of everything before
 * it. Decoders check the length, the checksum and every field before they allocate anything. */
#ifndef NIDUS_CODEC_H
#define NIDUS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version byte of encodings (encode/decode, chunks, the module's RDB) and of filter files (_save_file: the
 * encoding with per-block checksums). Version 3 encodings and version 4 files added Bloom layer layouts (plain
 * and split blocks); version 5 encodings and 6 files the cuckoo filter's range placement (a cuckoo meta flag
 * says which placement a filter has); version 7 encodings and 8 files cuckoo stash entries (overflow entries of
 * items an add could not place, which a reader of 5 or 6 would not look up: same bytes, new meaning, so older
 * builds refuse them). Version 9 encodings and 10 files give each cuckoo table a level (the step of growth its
 * shape comes from), so that a merge can add sibling tables of a level; they are written only for cuckoo
 * filters that have a sibling table, everything else is written as 7 and 8, which the previous release reads.
 * Every earlier version, 1, 3, 5 and 7 (encodings, and whole-encoding files), 2, 4, 6 and 8 (files), is still
 * read; cuckoo filters read from them keep their placement. */
#define NIDUS_FORMAT_VERSION 7u
#define NIDUS_FILE_FORMAT_VERSION 8u
/* The newest versions this build reads and writes: cuckoo filters with sibling tables (above). */
#define NIDUS_FORMAT_VERSION_SIBLINGS 9u
#define NIDUS_FILE_FORMAT_VERSION_SIBLINGS 10u
/* Windowed filters with an expansion (grown or not: the growth factor and every grown table are in the meta);
 * only windowed filters are written as 11 and 12, a windowed filter that never grows as 7 and 8. */
#define NIDUS_FORMAT_VERSION_WINDOW_GROWN 11u
#define NIDUS_FILE_FORMAT_VERSION_WINDOW_GROWN 12u

/* Data chunks carry at most this many bytes of the encoding, plus NIDUS_CHUNK_OVERHEAD of framing. */
#define NIDUS_CHUNK_PAYLOAD_MAX (4u << 20)
#define NIDUS_CHUNK_OVERHEAD 28u

typedef enum nidus_kind {
    NIDUS_KIND_CUCKOO = 1,
    NIDUS_KIND_BLOOM = 2,
    NIDUS_KIND_COUNTING_BLOOM = 3,
    NIDUS_KIND_FUSE = 4,  /* binary fuse filter (nidus/fuse.h): encodings of version 7 and files of version 8 on */
    NIDUS_KIND_WINDOW = 5 /* windowed cuckoo filter (nidus/window.h): encodings of version 7, files of version 8 */
} nidus_kind;

/* Reads the kind of an encoded filter or filter file from its first 16 bytes, without checking the rest:
 * NIDUS_ERR_CORRUPT when the magic is missing or `len` is shorter, NIDUS_ERR_VERSION for a version this build
 * reads neither as an encoding nor as a file. */
NIDUS_API nidus_status nidus_codec_peek(const void *buf, size_t len, nidus_kind *kind);

#ifdef __cplusplus
}
#endif

#endif
