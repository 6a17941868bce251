/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging Bloom filters: layers of the same size OR together (counting ones add their counters, saturating).
 *
 * Filters made with the same parameters (seed, error, expansion, layout, first layer) probe a key alike in layers
 * of the same index, so the union of two filters is the union of their layers, index by index. A source grown
 * further than the destination lends copies of its newer layers; everything is allocated and checked against
 * the destination's limits before the first bit changes, so a failure leaves it as it was. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "bloom_filter.h"

static bool same_layer(const nidus_bloom_layer *a, const nidus_bloom_layer *b)
{
    return a->size == b->size && a->capacity == b->capacity && a->k == b->k && a->layout == b->layout;
}

static void or_bits(uint8_t *dst, const uint8_t *src, uint64_t bytes)
{
    if (dst == src)
        return;
    for (uint64_t i = 0; i < bytes; i++)
        dst[i] |= src[i];
}

nidus_status nidus_bloom_merge(nidus_bloom *dst, const nidus_bloom *src)
{
    if (!dst || !src)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (dst->read_only || nidus_bloom_loader(dst))
        return NIDUS_ERR_READ_ONLY;
    if (nidus_bloom_loader(src))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (dst->hash8_flip != src->hash8_flip || dst->error_rate != src->error_rate ||
        dst->expansion != src->expansion || dst->layout != src->layout)
        return NIDUS_ERR_INCOMPATIBLE;
    unsigned shared = dst->nlayers < src->nlayers ? dst->nlayers : src->nlayers;
    for (unsigned i = 0; i < shared; i++)
        if (!same_layer(nidus_bloom_layer_at(dst, i), nidus_bloom_layer_at(src, i)))
            return NIDUS_ERR_INCOMPATIBLE;
    uint64_t items = 0; /* every layer's count and their sum stay in 64 bits (decoders refuse a sum that wraps) */
    for (unsigned i = 0; i < dst->nlayers; i++)
        items += nidus_bloom_layer_at(dst, i)->items;
    for (unsigned i = 0; i < src->nlayers; i++) {
        uint64_t n = nidus_bloom_layer_at(src, i)->items;
        if (n > UINT64_MAX - items)
            return NIDUS_ERR_TOO_LARGE;
        items += n;
    }
    unsigned extra = src->nlayers - shared;
    if (src->nlayers > dst->max_layers)
        return NIDUS_ERR_LIMIT_TABLES;
    if (dst->max_memory && extra) { /* what growth checks, for the layers dst takes, without wrapping */
        uint64_t have = 0, need = 0;
        for (unsigned i = 0; i < dst->nlayers; i++)
            have = nidus_add_sat(have, nidus_bloom_layer_memory(nidus_bloom_layer_at(dst, i)));
        for (unsigned i = shared; i < src->nlayers; i++)
            need = nidus_add_sat(need, nidus_bloom_layer_budget(nidus_bloom_layer_at(src, i)));
        if (have > dst->max_memory || need > dst->max_memory - have)
            return NIDUS_ERR_LIMIT_MEMORY;
    }
    nidus_bloom_layer copies[NIDUS_BLOOM_MAX_LAYERS];
    for (unsigned n = 0; n < extra; n++) {
        const nidus_bloom_layer *s = nidus_bloom_layer_at(src, shared + n);
        copies[n] = (nidus_bloom_layer){.size = s->size, .capacity = s->capacity, .items = s->items, .k = s->k,
                                        .layout = s->layout};
        nidus_status st = nidus_bloom_layer_alloc(&copies[n], dst->alloc);
        if (st) {
            while (n--)
                nidus_bloom_layer_release(&copies[n], dst->alloc);
            return st;
        }
        memcpy(copies[n].data, s->data, (size_t)nidus_bloom_layer_bytes(s));
    }
    if (extra) { /* the last allocation: nothing after it can fail */
        struct nidus_bloom_more *m = nidus_bloom_more(dst, src->nlayers - 1u);
        if (!m) {
            for (unsigned n = 0; n < extra; n++)
                nidus_bloom_layer_release(&copies[n], dst->alloc);
            return NIDUS_ERR_NO_MEMORY;
        }
    }
    for (unsigned i = 0; i < shared; i++) {
        nidus_bloom_layer *d = nidus_bloom_layer_at(dst, i);
        const nidus_bloom_layer *s = nidus_bloom_layer_at(src, i);
        /* the sum bounds the union's keys from above (BF.CARD of a merge is the sum of the cards); it may pass
         * the layer's capacity: a count of adds, not a bound, and a layer at or past its capacity makes the next
         * add grow as a full one does */
        d->items += s->items;
        or_bits(d->data, s->data, nidus_bloom_layer_bytes(d));
    }
    if (extra) {
        for (unsigned n = 0; n < extra; n++)
            dst->more->layers[shared + n - 1u] = copies[n];
        dst->nlayers = src->nlayers;
        nidus_bloom_refresh_dispatch(dst);
    }
    return NIDUS_OK;
}

nidus_status nidus_counting_bloom_merge(nidus_counting_bloom *dst, const nidus_counting_bloom *src)
{
    if (!dst || !src)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (dst->read_only || dst->loader)
        return NIDUS_ERR_READ_ONLY;
    if (src->loader)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (dst->seed != src->seed || dst->error != src->error || !same_layer(&dst->layer, &src->layer))
        return NIDUS_ERR_INCOMPATIBLE;
    /* every byte holds two 4-bit counters; each adds, stopping at 15 */
    uint8_t *d = dst->layer.data;
    const uint8_t *s = src->layer.data;
    uint64_t bytes = nidus_bloom_layer_bytes(&dst->layer);
    for (uint64_t i = 0; i < bytes; i++) {
        unsigned lo = (d[i] & 15u) + (s[i] & 15u), hi = (unsigned)(d[i] >> 4) + (unsigned)(s[i] >> 4);
        d[i] = (uint8_t)((lo > 15u ? 15u : lo) | (hi > 15u ? 15u : hi) << 4);
    }
    dst->items = nidus_add_sat(dst->items, src->items);
    dst->layer.items = nidus_add_sat(dst->layer.items, src->layer.items);
    return NIDUS_OK;
}

size_t nidus_bloom_merge_difference(const nidus_bloom *dst, const nidus_bloom *src, char *buf, size_t cap)
{
    nidus_bloom_stats x, y;
    nidus_bloom_layer_stats lx = {0}, ly = {0};
    nidus_bloom_get_stats(dst, &x);
    nidus_bloom_get_stats(src, &y);
    (void)nidus_bloom_get_layer_stats(dst, 0, &lx);
    (void)nidus_bloom_get_layer_stats(src, 0, &ly);
    unsigned shared = dst->nlayers < src->nlayers ? dst->nlayers : src->nlayers, i = 0;
    while (i < shared && same_layer(nidus_bloom_layer_at(dst, i), nidus_bloom_layer_at(src, i)))
        i++;
    int n = 0;
    if (dst->hash8_flip != src->hash8_flip)
        n = snprintf(buf, cap, "another hash seed");
    else if (x.error_rate != y.error_rate)
        n = snprintf(buf, cap, "error rate %g, not %g", y.error_rate, x.error_rate);
    else if (lx.capacity != ly.capacity)
        n = snprintf(buf, cap, "capacity %llu, not %llu", (unsigned long long)ly.capacity,
                     (unsigned long long)lx.capacity);
    else if (x.expansion != y.expansion)
        n = snprintf(buf, cap, "expansion %u, not %u", y.expansion, x.expansion);
    else if (x.layout != y.layout)
        n = snprintf(buf, cap, "layout %s, not %s", y.layout ? "blocked" : "compact", x.layout ? "blocked" : "compact");
    else if (i < shared)
        n = snprintf(buf, cap, "layers of other sizes (written by another format version)");
    else if (cap)
        buf[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

size_t nidus_counting_bloom_merge_difference(const nidus_counting_bloom *dst, const nidus_counting_bloom *src,
                                             char *buf, size_t cap)
{
    int n = 0;
    if (dst->seed != src->seed)
        n = snprintf(buf, cap, "another hash seed");
    else if (dst->error != src->error)
        n = snprintf(buf, cap, "error rate %g, not %g", src->error, dst->error);
    else if (dst->layer.capacity != src->layer.capacity)
        n = snprintf(buf, cap, "capacity %llu, not %llu", (unsigned long long)src->layer.capacity,
                     (unsigned long long)dst->layer.capacity);
    else if (!same_layer(&dst->layer, &src->layer))
        n = snprintf(buf, cap, "a table of another size");
    else if (cap)
        buf[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}
