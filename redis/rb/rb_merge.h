/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging keys loaded from RedisBloom (rb_types.h): each part into the same part, RedisBloom's by its layout
 * (rb_cf_merge, rb_bf_merge), the growth part by the library's merge. */
#ifndef NIDUS_REDIS_RB_MERGE_H
#define NIDUS_REDIS_RB_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "rb_types.h"

/* The first parameter in which src differs from dst, in the words of nidus_cuckoo_merge_difference, written to
 * buf; false when they can merge: the same RedisBloom parameters, and the same number of RedisBloom sub-filters
 * when either has a growth part (whose tables continue the RedisBloom ones). */
bool rb_value_difference(const rb_kind *k, const rb_value *dst, const rb_value *src, char *buf, size_t cap);

/* Adds src's items to dst, both of kind k and without a difference. On failure dst is partly merged: merge
 * into a copy (rb_value_copy). NIDUS_ERR_INCOMPATIBLE when the growth parts differ. */
nidus_status rb_value_merge(const rb_kind *k, rb_value *dst, const rb_value *src);

#endif
