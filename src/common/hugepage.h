/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: asking for huge pages under large tables. */
#ifndef NIDUS_SRC_HUGEPAGE_H
#define NIDUS_SRC_HUGEPAGE_H

#include <stddef.h>

/* Bytes from which a table's memory is worth a huge-page hint. */
#define NIDUS_HUGEPAGE_MIN_BYTES ((size_t)4 << 20)

/* Hints the kernel to back the 2 MiB-aligned interior of [p, p + n) with huge pages (Linux transparent huge
 * pages, which are often enabled only for memory that asks: mode "madvise"). A lookup in a large table reads
 * two random places; with 4 KiB pages each is a TLB miss and a page walk, with 2 MiB pages mostly not.
 * Only a hint: nothing changes where the kernel or the platform does not support it. */
void nidus_hugepage_advise(void *p, size_t n);

#endif
