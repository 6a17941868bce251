/* SPDX-License-Identifier: BSD-3-Clause */
/* What keeps two filters from merging, in the words `nidus merge` uses: the source's value, then the
 * destination's ("bucket size 4, not 2"). CF.MERGE and BF.MERGE put it after "ERR incompatible sourcekey N: ". */
#ifndef NIDUS_REDIS_MERGE_DIFFER_H
#define NIDUS_REDIS_MERGE_DIFFER_H

#include <stdbool.h>
#include <stddef.h>

#include <nidus/nidus.h>

/* The first parameter in which src differs from dst, written to buf; false (buf untouched) when the parameters
 * these compare all match. */
bool nidus_cf_difference(const nidus_cuckoo *dst, const nidus_cuckoo *src, char *buf, size_t cap);
bool nidus_bf_difference(const nidus_bloom *dst, const nidus_bloom *src, char *buf, size_t cap);

/* What to say when the library refuses filters whose compared parameters match (their sub-filters differ). */
#define NIDUS_CF_OTHER_SHAPES "placement (written by another format version) or sub-filters of other shapes"
#define NIDUS_BF_OTHER_SHAPES "layers of other sizes (written by another format version)"

#endif
