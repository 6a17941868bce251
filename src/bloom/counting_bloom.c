/* SPDX-License-Identifier: BSD-3-Clause */
/* The counting Bloom filter: blocks of 128 four-bit saturating counters, one block a key. */
#include <string.h>

#include "alloc.h"
#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "file_io.h"
#include "hash_impl.h"

nidus_status nidus_counting_bloom_new(const nidus_counting_bloom_params *p, nidus_counting_bloom **out)
{
    if (!p || !out || p->capacity < 1 || !(p->error_rate > 0.0 && p->error_rate < 1.0))
        return NIDUS_ERR_INVALID_ARGUMENT;
    const nidus_allocator *alloc = nidus_alloc_pick(p->allocator);
    nidus_bloom_layer layer;
    nidus_status st = nidus_bloom_layer_size(&layer, p->capacity, p->error_rate, NIDUS_LAYER_COUNTING, true);
    if (st)
        return st;
    nidus_counting_bloom *cb = nidus_calloc(alloc, 1, sizeof *cb);
    if (!cb)
        return NIDUS_ERR_NO_MEMORY;
    cb->alloc = alloc;
    cb->seed = p->seed;
    cb->error = p->error_rate;
    cb->layer = layer;
    if ((st = nidus_bloom_layer_alloc(&cb->layer, alloc))) {
        nidus_free(alloc, cb);
        return st;
    }
    *out = cb;
    return NIDUS_OK;
}

void nidus_counting_bloom_free(nidus_counting_bloom *cb)
{
    if (!cb)
        return;
    const nidus_allocator *alloc = cb->alloc;
    nidus_bloom_layer_release(&cb->layer, alloc);
    nidus_chunk_loader_release(&cb->loader, alloc);
    nidus_mapping_release(cb->mapping, alloc);
    nidus_free(alloc, cb);
}

uint64_t nidus_counting_bloom_hash(const nidus_counting_bloom *cb, const void *key, size_t len)
{
    return nidus_hash_bytes(key, len, cb->seed);
}

bool nidus_counting_bloom_is_read_only(const nidus_counting_bloom *cb) { return cb->read_only; }
bool nidus_counting_bloom_loading(const nidus_counting_bloom *cb) { return cb->loader != NULL; }

/* The smallest of the key's counters. */
static unsigned min_counter(const nidus_counting_bloom *cb, uint64_t hash)
{
    const nidus_bloom_layer *l = &cb->layer;
    nidus_probe p = nidus_probe_of(hash, 0, l->size);
    const uint8_t *block = l->data + p.block * NIDUS_BLOCK_BYTES;
    unsigned least = 15;
    NIDUS_FOR_EACH_SLOT(&p, l->k, 7, {
        unsigned c = nidus_counter_get(block, slot);
        least = c < least ? c : least;
    });
    return least;
}

/* Moves each of the key's counters by `delta` (+1 or -1), leaving saturated ones at 15. A slot drawn twice
 * for one key moves twice, and its removal moves it back twice: the multiset of slots is what counts. */
static void step_counters(nidus_counting_bloom *cb, uint64_t hash, int delta)
{
    nidus_bloom_layer *l = &cb->layer;
    nidus_probe p = nidus_probe_of(hash, 0, l->size);
    uint8_t *block = l->data + p.block * NIDUS_BLOCK_BYTES;
    NIDUS_FOR_EACH_SLOT(&p, l->k, 7, {
        unsigned c = nidus_counter_get(block, slot);
        if (c != 15)
            nidus_counter_set(block, slot, (unsigned)((int)c + delta));
    });
}

nidus_status nidus_counting_bloom_add_hash(nidus_counting_bloom *cb, uint64_t hash)
{
    if (cb->read_only || cb->loader)
        return NIDUS_ERR_READ_ONLY;
    step_counters(cb, hash, +1);
    cb->items++;
    return NIDUS_OK;
}

nidus_status nidus_counting_bloom_add(nidus_counting_bloom *cb, const void *key, size_t len)
{
    return nidus_counting_bloom_add_hash(cb, nidus_counting_bloom_hash(cb, key, len));
}

nidus_status nidus_counting_bloom_remove_hash(nidus_counting_bloom *cb, uint64_t hash)
{
    if (cb->read_only || cb->loader)
        return NIDUS_ERR_READ_ONLY;
    if (min_counter(cb, hash) == 0)
        return NIDUS_ERR_NOT_FOUND;
    step_counters(cb, hash, -1);
    if (cb->items)
        cb->items--;
    return NIDUS_OK;
}

nidus_status nidus_counting_bloom_remove(nidus_counting_bloom *cb, const void *key, size_t len)
{
    return nidus_counting_bloom_remove_hash(cb, nidus_counting_bloom_hash(cb, key, len));
}

unsigned nidus_counting_bloom_count_hash(const nidus_counting_bloom *cb, uint64_t hash)
{
    return cb->loader ? 0 : min_counter(cb, hash);
}

unsigned nidus_counting_bloom_count(const nidus_counting_bloom *cb, const void *key, size_t len)
{
    return nidus_counting_bloom_count_hash(cb, nidus_counting_bloom_hash(cb, key, len));
}

bool nidus_counting_bloom_contains_hash(const nidus_counting_bloom *cb, uint64_t hash)
{
    return nidus_counting_bloom_count_hash(cb, hash) != 0;
}

#define AHEAD 16u

void nidus_counting_bloom_contains_many_hash(const nidus_counting_bloom *cb, const uint64_t *hashes, size_t n,
                                             bool *out)
{
    if (cb->loader) {
        for (size_t k = 0; k < n; k++)
            out[k] = false;
        return;
    }
    /* the blocks of the keys AHEAD places on are requested while this one is counted */
    for (size_t k = 0; k < n && k < AHEAD; k++)
        nidus_block_prefetch(cb->layer.data, nidus_probe_of(hashes[k], 0, cb->layer.size).block);
    for (size_t k = 0; k < n; k++) {
        if (k + AHEAD < n)
            nidus_block_prefetch(cb->layer.data, nidus_probe_of(hashes[k + AHEAD], 0, cb->layer.size).block);
        out[k] = min_counter(cb, hashes[k]) != 0;
    }
}

bool nidus_counting_bloom_contains(const nidus_counting_bloom *cb, const void *key, size_t len)
{
    return nidus_counting_bloom_contains_hash(cb, nidus_counting_bloom_hash(cb, key, len));
}

nidus_status nidus_counting_bloom_clear(nidus_counting_bloom *cb)
{
    if (cb->read_only || cb->loader)
        return NIDUS_ERR_READ_ONLY;
    memset(cb->layer.data, 0, (size_t)(cb->layer.size * NIDUS_BLOCK_BYTES));
    cb->items = 0;
    return NIDUS_OK;
}

void nidus_counting_bloom_get_stats(const nidus_counting_bloom *cb, nidus_counting_bloom_stats *s)
{
    const nidus_bloom_layer *l = &cb->layer;
    uint64_t saturated = 0;
    for (uint64_t b = 0; b < l->size && !cb->loader; b++)
        for (unsigned byte = 0; byte < NIDUS_BLOCK_BYTES; byte++) {
            uint8_t v = l->data[b * NIDUS_BLOCK_BYTES + byte];
            saturated += (v & 15) == 15;
            saturated += (v >> 4) == 15;
        }
    uint64_t memory = sizeof *cb + nidus_bloom_layer_memory(l);
    *s = (nidus_counting_bloom_stats){
        .capacity = l->capacity,
        .items = cb->items,
        .saturated = saturated,
        .memory_bytes = memory,
        .hashes = l->k,
        .error_rate = cb->error,
        .bits_per_item = (double)memory * 8.0 / (double)l->capacity,
    };
}
