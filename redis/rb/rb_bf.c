/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's Bloom layout and probing: see rb_bf.h. */
#include <math.h>
#include <string.h>

#include "module_api.h"
#include "rb_bf.h"
#include "rb_chunk.h"
#include "rb_hash.h"

#define RB_LN2 0.693147180559945 /* the constant RedisBloom sizes its probe count with */
#define RB_LN2_SQUARED 0.480453013918201 /* ... and its bits per entry */
#define RB_BF_MAX_HASHES 1100u   /* error rates down to 1e-300 need < 1000 */

rb_bf_hash rb_bf_hash_of(const rb_bf *bf, const void *item, size_t len)
{
    rb_bf_hash h;
    if (bf->options & RB_BF_FORCE64) {
        h.a = rb_murmur64a(item, len, RB_BLOOM_SEED64);
        h.b = rb_murmur64a(item, len, h.a);
    } else {
        h.a = rb_murmur2(item, len, RB_BLOOM_SEED32);
        h.b = rb_murmur2(item, len, (uint32_t)h.a);
    }
    return h;
}

/* Tests (and with `set`, sets) the layer's probes; true when all were set before. */
static bool probe_layer(const rb_bf_layer *l, rb_bf_hash h, bool set)
{
    uint64_t mod = l->n2 ? UINT64_C(1) << l->n2 : l->bits;
    bool all = true;
    for (uint32_t i = 0; i < l->hashes; i++) {
        uint64_t x = (h.a + i * h.b) % mod;
        uint8_t mask = (uint8_t)(1u << (x & 7));
        if (l->data[x >> 3] & mask)
            continue;
        if (!set)
            return false;
        all = false;
        l->data[x >> 3] |= mask;
    }
    return all;
}

bool rb_bf_contains(const rb_bf *bf, rb_bf_hash h)
{
    for (uint32_t i = bf->nlayers; i-- > 0;)
        if (probe_layer(&bf->layers[i], h, false))
            return true;
    return false;
}

bool rb_bf_add(rb_bf *bf, rb_bf_hash h)
{
    rb_bf_layer *l = &bf->layers[bf->nlayers - 1];
    if (probe_layer(l, h, true))
        return false;
    l->items++;
    bf->items++;
    return true;
}

/* Whether the layer's capacity is one its bits can hold at its error rate: RedisBloom gives a layer
 * -ln(error) / ln(2)^2 bits an entry, rounds the bits up to a power of two or a word and counts the room that adds
 * as capacity; encodings before version 4 rounded down (to whole bits an entry, then a word). Twice that covers
 * both. A layer claiming more would answer past its error bound, and growth after it is sized from its capacity
 * (a header of 8 bits claiming 3.6e14 entries would grow a layer of max_capacity items on the first add). */
static bool sizes_match(const rb_bf_layer *l)
{
    double bits_per_entry = -log(l->error) / RB_LN2_SQUARED;
    return l->entries >= 1 && (double)l->entries * bits_per_entry <= 2 * ((double)l->bits + 64);
}

bool rb_bf_layer_valid(const rb_bf_layer *l)
{
    return l->error > 0 && l->error < 1 && l->n2 <= 63 && (l->n2 == 0 || l->bits >= UINT64_C(1) << l->n2) &&
           l->bits != 0 && l->bytes <= UINT64_MAX / 8 && l->bits == l->bytes * 8 && l->hashes <= RB_BF_MAX_HASHES &&
           l->bpe > 0 && (double)l->hashes == ceil(RB_LN2 * l->bpe) && sizes_match(l);
}

nidus_status rb_bf_merge(rb_bf *dst, const rb_bf *src)
{
    uint32_t shared = dst->nlayers < src->nlayers ? dst->nlayers : src->nlayers;
    if (src->items > UINT64_MAX - dst->items) /* the layers' counts sum to the filter's: neither can wrap */
        return NIDUS_ERR_TOO_LARGE;
    if (src->nlayers > dst->nlayers) { /* dst takes copies of the layers only src has */
        dst->layers = RedisModule_Realloc(dst->layers, src->nlayers * sizeof *dst->layers);
        uint64_t start = rb_bf_layer_bytes(dst); /* each copy starts after dst's layers before it */
        for (uint32_t i = dst->nlayers; i < src->nlayers; i++) {
            dst->layers[i] = src->layers[i];
            dst->layers[i].data = RedisModule_Alloc((size_t)src->layers[i].bytes);
            dst->layers[i].start = start;
            memcpy(dst->layers[i].data, src->layers[i].data, (size_t)src->layers[i].bytes);
            start += src->layers[i].bytes;
        }
        dst->nlayers = src->nlayers;
    }
    for (uint32_t i = 0; i < shared; i++) {
        rb_bf_layer *d = &dst->layers[i];
        const rb_bf_layer *s = &src->layers[i];
        for (uint64_t j = 0; j < d->bytes; j++)
            d->data[j] |= s->data[j];
        d->items += s->items; /* may pass the layer's capacity: a count of adds, an upper bound on its keys */
    }
    dst->items += src->items;
    return NIDUS_OK;
}

rb_bf *rb_bf_shell(uint32_t nlayers)
{
    rb_bf *bf = RedisModule_Calloc(1, sizeof *bf);
    bf->layers = RedisModule_Calloc(nlayers ? nlayers : 1, sizeof *bf->layers);
    bf->nlayers = nlayers;
    return bf;
}

void rb_bf_free(rb_bf *bf)
{
    if (!bf)
        return;
    for (uint32_t i = 0; i < bf->nlayers; i++)
        RedisModule_Free(bf->layers[i].data);
    RedisModule_Free(bf->layers);
    RedisModule_Free(bf);
}

uint64_t rb_bf_layer_bytes(const rb_bf *bf)
{
    if (!bf->nlayers)
        return 0;
    const rb_bf_layer *last = &bf->layers[bf->nlayers - 1];
    return last->start + last->bytes;
}

uint64_t rb_bf_memory(const rb_bf *bf)
{
    return sizeof *bf + (uint64_t)bf->nlayers * sizeof *bf->layers + rb_bf_layer_bytes(bf);
}

uint8_t *rb_bf_array(const void *f, unsigned i, uint64_t *size, uint64_t *start)
{
    const rb_bf *bf = f;
    if (i >= bf->nlayers)
        return NULL;
    *size = bf->layers[i].bytes;
    *start = bf->layers[i].start;
    return bf->layers[i].data;
}

static uint64_t bits_of(double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    return v;
}

static double double_of(uint64_t v)
{
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

size_t rb_bf_header_size(const rb_bf *bf) { return RB_BF_HEADER_FIXED + (size_t)bf->nlayers * RB_BF_HEADER_LINK; }

void rb_bf_header(const rb_bf *bf, uint8_t *out)
{
    rb_put_le(out, bf->items, 8);
    rb_put_le(out + 8, bf->nlayers, 4);
    rb_put_le(out + 12, bf->options, 4);
    rb_put_le(out + 16, bf->growth, 4);
    for (uint32_t i = 0; i < bf->nlayers; i++) {
        const rb_bf_layer *l = &bf->layers[i];
        uint8_t *p = out + RB_BF_HEADER_FIXED + (size_t)i * RB_BF_HEADER_LINK;
        rb_put_le(p, l->bytes, 8);
        rb_put_le(p + 8, l->bits, 8);
        rb_put_le(p + 16, l->items, 8);
        rb_put_le(p + 24, bits_of(l->error), 8);
        rb_put_le(p + 32, bits_of(l->bpe), 8);
        rb_put_le(p + 40, l->hashes, 4);
        rb_put_le(p + 44, l->entries, 8);
        p[52] = l->n2;
    }
}

/* Layer `i` of a header chunk (no data yet). */
static rb_bf_layer header_layer(const uint8_t *p, uint64_t i)
{
    const uint8_t *q = p + RB_BF_HEADER_FIXED + i * RB_BF_HEADER_LINK;
    return (rb_bf_layer){.bytes = rb_get_le(q, 8), .bits = rb_get_le(q + 8, 8), .items = rb_get_le(q + 16, 8),
                         .error = double_of(rb_get_le(q + 24, 8)), .bpe = double_of(rb_get_le(q + 32, 8)),
                         .hashes = (uint32_t)rb_get_le(q + 40, 4), .entries = rb_get_le(q + 44, 8), .n2 = q[52]};
}

nidus_status rb_bf_from_header(const void *buf, size_t len, uint64_t max_bytes, rb_bf **out)
{
    const uint8_t *p = buf;
    if (len < RB_BF_HEADER_FIXED)
        return NIDUS_ERR_CORRUPT;
    uint64_t items = rb_get_le(p, 8), n = rb_get_le(p + 8, 4);
    uint32_t options = (uint32_t)rb_get_le(p + 12, 4);
    if (n == 0 || (len - RB_BF_HEADER_FIXED) / RB_BF_HEADER_LINK != n ||
        (len - RB_BF_HEADER_FIXED) % RB_BF_HEADER_LINK ||
        (options & ~(RB_BF_NOROUND | RB_BF_ENTS_IS_BITS | RB_BF_FORCE64 | RB_BF_NO_SCALING)))
        return NIDUS_ERR_CORRUPT;
    /* every layer checked, the item counts summed and the bytes bounded, before anything is allocated */
    uint64_t total = 0, sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        rb_bf_layer l = header_layer(p, i);
        if (!rb_bf_layer_valid(&l) || l.items > UINT64_MAX - sum)
            return NIDUS_ERR_CORRUPT;
        if (l.bytes > max_bytes - total)
            return NIDUS_ERR_LIMIT_MEMORY;
        sum += l.items;
        total += l.bytes;
    }
    if (sum != items)
        return NIDUS_ERR_CORRUPT;
    rb_bf *bf = rb_bf_shell((uint32_t)n);
    bf->items = items;
    bf->options = options;
    bf->growth = (uint32_t)rb_get_le(p + 16, 4);
    total = 0;
    for (uint32_t i = 0; i < bf->nlayers; i++) {
        rb_bf_layer *l = &bf->layers[i];
        *l = header_layer(p, i);
        l->data = RedisModule_Calloc((size_t)l->bytes, 1);
        l->start = total;
        total += l->bytes;
    }
    *out = bf;
    return NIDUS_OK;
}
