/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks the blocks of a mapped filter file as they are first read, so that `check`, `count` and `info` of a
 * huge file read and hash only what they use. The blocks between the first and the last are mapped without
 * access; the first read of one faults, the handler checks the block's checksum and opens it for reading, or,
 * if it is damaged, ends the process with exit status 2 and one line on stderr, before a wrong answer. */
#ifndef NIDUS_CLI_LAZY_VERIFY_H
#define NIDUS_CLI_LAZY_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "file_io.h"

/* A nidus_file_prepare_fn; `ctx` is the file's path (for the message). Falls back to checking every block
 * when the blocks cannot be guarded (page size, a tiny file, a second file). */
nidus_status lazy_verify_prepare(void *ctx, const nidus_file_layout *l, void *map, size_t bytes);

/* The same for a private writable mapping (nidus_file_map_private): also notes which blocks are written
 * (lazy_verify_dirty). NIDUS_ERR_UNSUPPORTED when the blocks cannot be guarded: write the file whole then. */
nidus_status lazy_verify_prepare_writable(const char *path, const nidus_file_layout *l, void *map, size_t bytes);

/* One flag a block, non-zero for those written since lazy_verify_prepare_writable. */
const unsigned char *lazy_verify_dirty(void);

/* Forgets the mapping (before it is unmapped) and gives the fault signals their old handlers back. */
void lazy_verify_release(void);

/* Blocks checked so far (for tests and measurements). */
uint64_t lazy_verify_checked_blocks(void);

#endif
