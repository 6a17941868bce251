/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — checking a filter file through, with a report of the check that failed and where.
 *
 * The _load_file and _map_file calls of each kind check the same things and say only NIDUS_ERR_CORRUPT; this call
 * also says which part of the file failed (a header or footer field, the block table, a block, the encoded
 * fields), at which bytes, and how many blocks are damaged. It prints nothing: the caller words the report. */
#ifndef NIDUS_VERIFY_H
#define NIDUS_VERIFY_H

#include <stdint.h>

#include "alloc.h"
#include "codec.h"
#include "status.h"

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nidus_file_report.block when the failed part is not one block. */
#define NIDUS_FILE_NO_BLOCK UINT64_MAX

/* What a check of a filter file found. Every field is set, whatever the outcome. */
typedef struct nidus_file_report {
    /* The part whose check failed, NULL when none did; a constant string: "file", "magic", "format version",
     * "kind", "flags", "total length", "meta length", "whole-file checksum" (odd versions), "footer magic",
     * "footer block size", "footer reserved field", "footer body length", "footer block count", "footer body
     * length and block count", "header", "block table or footer", "block", "encoded fields". */
    const char *part;
    const char *problem; /* what is wrong with it, a constant phrase to follow the part ("does not match ...") */
    uint64_t offset;     /* the part's first byte in the file */
    uint64_t length;     /* the part's bytes */
    uint64_t block;      /* part "block": its number, from 0; else NIDUS_FILE_NO_BLOCK */
    uint64_t bad_blocks; /* part "block": the blocks that fail their checksums, in all */
    uint64_t blocks;     /* blocks of a framed file (even versions), once its footer was read; else 0 */
    uint64_t block_bytes; /* bytes of a block (the last may be shorter), once the footer was read; else 0 */
    uint64_t file_bytes;
    unsigned version;    /* the file's format version byte (NIDUS_FILE_FORMAT_VERSION is this build's), 0 if unread */
    nidus_kind kind;     /* the kind byte, 0 if unread */
} nidus_file_report;

/* Reads the filter file at `path` whole and checks what _map_file checks: the framing, every block's checksum,
 * every field of the encoding; fills `*report` (may be NULL) with the first check that failed. NIDUS_OK,
 * NIDUS_ERR_CORRUPT, NIDUS_ERR_VERSION (report part "format version"), NIDUS_ERR_IO (errno; part "file"),
 * NIDUS_ERR_NO_MEMORY. */
NIDUS_API nidus_status nidus_file_verify(const char *path, const nidus_allocator *allocator,
                                         nidus_file_report *report);

#ifdef __cplusplus
}
#endif

#endif
