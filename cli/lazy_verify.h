/* Checks the blocks of a mapped filter file as they are first read, so that `check`, `count` and `info` of a
 * huge file read and hash only what they use. The blocks between the first and the last are mapped without
 * access; the first read of one faults, the handler checks the block's checksum and opens it for reading, or,
 * if it is damaged, ends the process with exit status 2 and one line on stderr, before a wrong answer. */
#ifndef NIDUS_CLI_LAZY_VERIFY_H
#define NIDUS_CLI_LAZY_VERIFY_H

#include <stdint.h>

#include "file_io.h"

/* A nidus_file_prepare_fn; `ctx` is the file's path (for the message). Falls back to checking every block
 * when the blocks cannot be guarded (page size, a tiny file, a second file). */
nidus_status lazy_verify_prepare(void *ctx, const nidus_file_layout *l, void *map, size_t bytes);

/* Guarded blocks checked so far (for tests and measurements). */
uint64_t lazy_verify_checked_blocks(void);

#endif
