/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks the blocks of a mapped filter file as they are first read, so that `check`, `count` and `info` of a
 * huge file read and hash only what they use. The blocks between the first and the last are mapped without
 * access; the first read of one faults, the handler checks the block's checksum and opens it for reading, or,
 * if it is damaged, ends the process with exit status 2 and one line on stderr, before a wrong answer. */
#ifndef NIDUS_CLI_LAZY_VERIFY_H
#define NIDUS_CLI_LAZY_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include <nidus/filter.h>

/* The guard to open FILE (`path`, named in the message) with: nidus_filter_open calls it back. It takes the
 * blocks of one mapping at a time; for a writable one (NIDUS_FILTER_MAP_WRITABLE) it also notes which blocks
 * are written. It declines (NIDUS_ERR_UNSUPPORTED: the library checks every block at open, and a save compares
 * the blocks with the file) when the blocks cannot be guarded: page size, a file under 3 blocks, a second file. */
const nidus_file_guard *lazy_verify_guard(const char *path);

/* Blocks checked so far (for tests and measurements). */
uint64_t lazy_verify_checked_blocks(void);

#endif
