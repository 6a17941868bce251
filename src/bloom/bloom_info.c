/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-layer figures of a Bloom filter (for `nidus info` and other reporting). */
#include "bloom_filter.h"

nidus_status nidus_bloom_get_layer_stats(const nidus_bloom *bf, unsigned index, nidus_bloom_layer_stats *s)
{
    if (!bf || !s || index >= bf->nlayers)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const nidus_bloom_layer *l = nidus_bloom_layer_at(bf, index);
    *s = (nidus_bloom_layer_stats){.capacity = l->capacity, .items = l->items, .memory_bytes = nidus_bloom_layer_bytes(l),
                                   .hashes = l->k,
                                   .error = nidus_bloom_layer_error(bf->error_rate, bf->expansion, index)};
    return NIDUS_OK;
}
