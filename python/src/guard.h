/* SPDX-License-Identifier: BSD-3-Clause */
/* Lazy verification of the files nidus.open maps: each 64 KiB block of a framed file is checked against its
 * checksum when it is first read, so an open costs the header and the block table, not the file. The blocks
 * between the first and the last are mapped without access; the first read of one faults, and a SIGSEGV handler
 * checks the block and opens it for reading. A block that fails its check is replaced by zeros (an empty stretch
 * of table, which every kind reads safely) and the mapping is marked corrupt: the call that touched it, and every
 * later call on that object, raises nidus.CorruptFile. Faults outside these mappings go to the handler that was
 * there before. The registry is process-wide (a fault handler cannot be told otherwise); a mapping that finds it
 * full is checked whole at open instead. */
#ifndef NIDUS_PY_GUARD_H
#define NIDUS_PY_GUARD_H

#include <stdint.h>

#include <nidus/filter.h>

typedef struct py_guard py_guard;

/* A free slot, or NULL when all are taken (the caller opens without a guard: every block checked at open).
 * Call with the GIL held. */
py_guard *py_guard_claim(void);

/* The callbacks to hand nidus_filter_open for this slot; stays valid until py_guard_free. */
const nidus_file_guard *py_guard_callbacks(py_guard *g);

/* Whether a block of the mapping failed its check (then zeros stand in its place). */
int py_guard_corrupt(const py_guard *g);

/* The block that failed, for the message. */
uint64_t py_guard_corrupt_block(const py_guard *g);

/* Blocks checked so far. */
uint64_t py_guard_checked_blocks(const py_guard *g);

/* Gives the slot back; the filter that used it must have been freed (its release callback ran). GIL held. */
void py_guard_free(py_guard *g);

#endif
