/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding of the Bloom kinds, on the common codec (codec.h). Metas (format version 2):
 *   Bloom:    seed u64 | max_memory u64 | error f64 | expansion u32 | max_layers u8 | layers u8 | layout u8 | 0
 *             per layer: size u64 | capacity u64 | items u64 | error f64 | k u16 | layer layout u8 | 5 zeros
 *   Counting: seed u64 | items u64 | then one layer as above (layer layout 0)
 * and the segments are the layers' bytes as in memory: `size` 64-byte blocks, or `size` bits for a plain layer
 * (bloom_filter.h has the layer layouts). Doubles are IEEE-754 bit patterns.
 * Format version 1 wrote the same bytes with k u8 and zeros after it, where version 2 has k's high byte and
 * the layer layout (0: legacy blocks), and a zero where the filter's layout is: it reads as a blocked filter of
 * legacy layers, which grows in split blocks. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "bloom_sizing.h"
#include "file_io.h"

#define BLOOM_META_FIXED 32u
#define COUNTING_META_FIXED 16u
#define LAYER_META 40u
#define PREFIX_MAX (NIDUS_CODEC_PREFIX_FIXED + BLOOM_META_FIXED + LAYER_META * NIDUS_BLOOM_MAX_LAYERS)

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void put_layer(nidus_writer *w, const nidus_bloom_layer *l, double error)
{
    nidus_put_u64(w, l->size);
    nidus_put_u64(w, l->capacity);
    nidus_put_u64(w, l->items);
    nidus_put_u64(w, bits_of(error));
    nidus_put_u8(w, l->k & 0xff);
    nidus_put_u8(w, l->k >> 8);
    nidus_put_u8(w, l->layout);
    for (unsigned z = 0; z < 5; z++)
        nidus_put_u8(w, 0);
}

/* Whether a layer's size and k are what its layout allows. */
static bool layer_shape_ok(const nidus_bloom_layer *l, bool counting)
{
    if (counting)
        return l->layout == NIDUS_LAYER_COUNTING && l->size >= 1 && l->size <= NIDUS_BLOCKS_MAX && l->k >= 1 &&
               l->k <= NIDUS_BLOCK_COUNTERS / 8;
    switch (l->layout) {
    case NIDUS_LAYER_LEGACY:
        return l->size >= 1 && l->size <= NIDUS_BLOCKS_MAX && l->k >= 1 && l->k <= NIDUS_BLOCK_BITS / 8;
    case NIDUS_LAYER_SPLIT:
        return l->size >= 1 && l->size <= NIDUS_BLOCKS_MAX && l->k >= 1 && l->k <= NIDUS_SPLIT_K_MAX;
    case NIDUS_LAYER_PLAIN:
        return l->size >= 64 && l->size <= NIDUS_PLAIN_BITS_MAX && l->size % 64 == 0 && l->k >= 1 && l->k <= l->size;
    default:
        return false;
    }
}

/* Whether the layer's bits can hold its capacity at its error rate: every layout needs at least the classic
 * -ln(error) / ln(2)^2 bits an entry (blocks and counters more); half that, and a block, pass. A layer claiming
 * more would answer past its bound, and the growth after it is sized from its capacity. */
static bool capacity_fits(const nidus_bloom_layer *l, double error)
{
    double bits = (double)nidus_bloom_layer_bytes(l) * 8;
    return (double)l->capacity * (-log(error) / (0.6931471805599453 * 0.6931471805599453)) <= 2 * (bits + 8 * NIDUS_BLOCK_BYTES);
}

/* Reads a layer's meta into `l` (no data yet) and its error, and checks them; format 1 had no layouts but the
 * legacy one. */
static nidus_status get_layer(nidus_reader *r, nidus_bloom_layer *l, double *error, bool counting, unsigned version)
{
    memset(l, 0, sizeof *l);
    l->size = nidus_get_u64(r);
    l->capacity = nidus_get_u64(r);
    l->items = nidus_get_u64(r);
    *error = double_of(nidus_get_u64(r));
    l->k = (uint16_t)nidus_get_u8(r);
    l->k |= (uint16_t)(nidus_get_u8(r) << 8);
    l->layout = (uint8_t)nidus_get_u8(r);
    unsigned zero = 0;
    for (unsigned z = 0; z < 5; z++)
        zero |= nidus_get_u8(r);
    if (r->bad || zero || (version < 2 && (l->layout != NIDUS_LAYER_LEGACY || l->k > 255)) || l->capacity < 1 ||
        !(*error > 0.0 && *error < 1.0) || !layer_shape_ok(l, counting) || !capacity_fits(l, *error))
        return NIDUS_ERR_CORRUPT;
    return NIDUS_OK;
}

#define layer_bytes nidus_bloom_layer_bytes

/* Gives layer `l` (whose meta is read) its bytes: a zeroed allocation, or borrowed from `view`. */
static nidus_status attach(nidus_bloom_layer *l, const nidus_allocator *a, const uint8_t *view)
{
    if (l->data) /* a first layer in its filter's allocation */
        return NIDUS_OK;
    if (view) {
        l->data = (uint8_t *)(uintptr_t)view; /* never written: views refuse every write */
        return NIDUS_OK;
    }
    return nidus_bloom_layer_alloc(l, a);
}

/* ==== scalable Bloom ==== */

static size_t bloom_prefix(const nidus_bloom *bf, uint8_t *out, uint64_t total)
{
    nidus_writer w = {out};
    nidus_codec_put_prefix(&w, NIDUS_FORMAT_VERSION, NIDUS_KIND_BLOOM, total, BLOOM_META_FIXED + LAYER_META * bf->nlayers);
    nidus_put_u64(&w, nidus_bloom_seed(bf));
    nidus_put_u64(&w, bf->max_memory);
    nidus_put_u64(&w, bits_of(bf->error_rate));
    nidus_put_u32(&w, bf->expansion);
    nidus_put_u8(&w, bf->max_layers);
    nidus_put_u8(&w, bf->nlayers);
    nidus_put_u8(&w, bf->layout);
    nidus_put_u8(&w, 0);
    for (unsigned i = 0; i < bf->nlayers; i++)
        put_layer(&w, nidus_bloom_layer_at(bf, i), nidus_bloom_layer_error(bf->error_rate, bf->expansion, i));
    return (size_t)(w.p - out);
}

static unsigned bloom_segments(const nidus_bloom *bf, nidus_segment *segs)
{
    for (unsigned i = 0; i < bf->nlayers; i++) {
        const nidus_bloom_layer *l = nidus_bloom_layer_at(bf, i);
        segs[i] = (nidus_segment){l->data, layer_bytes(l)};
    }
    return bf->nlayers;
}

uint64_t nidus_bloom_encoded_size(const nidus_bloom *bf)
{
    uint64_t n = NIDUS_CODEC_PREFIX_FIXED + BLOOM_META_FIXED + LAYER_META * bf->nlayers + NIDUS_CODEC_CHECKSUM_BYTES;
    for (unsigned i = 0; i < bf->nlayers; i++)
        n += layer_bytes(nidus_bloom_layer_at(bf, i));
    return n;
}

nidus_status nidus_bloom_encode(const nidus_bloom *bf, void *buf, size_t cap, size_t *written)
{
    if (!bf || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (nidus_bloom_loader(bf))
        return NIDUS_ERR_READ_ONLY;
    uint64_t total = nidus_bloom_encoded_size(bf);
    if (total > cap)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t prefix[PREFIX_MAX];
    nidus_segment segs[NIDUS_BLOOM_MAX_LAYERS];
    size_t prefix_bytes = bloom_prefix(bf, prefix, total);
    nidus_codec_write_whole(buf, total, prefix, prefix_bytes, segs, bloom_segments(bf, segs));
    if (written)
        *written = (size_t)total;
    return NIDUS_OK;
}

/* Parses a Bloom meta into a filter with its layers' metas (no blocks yet); `*stream` gets the segment and
 * checksum bytes it implies. Checks every field, and that the layers are what growth would have made. */
/* `inline_bits`: a copy, whose plain first layer can live in the filter's own allocation (not a view). */
static nidus_status bloom_from_meta(nidus_reader *r, const nidus_allocator *hook, bool inline_bits, nidus_bloom **out,
                                    uint64_t *stream)
{
    unsigned version = nidus_codec_meta_version(r);
    uint64_t seed = nidus_get_u64(r), max_memory = nidus_get_u64(r);
    double error = double_of(nidus_get_u64(r));
    unsigned expansion = nidus_get_u32(r), max_layers = nidus_get_u8(r), nlayers = nidus_get_u8(r);
    unsigned layout = nidus_get_u8(r), zero = nidus_get_u8(r);
    if (version < 2) /* format 1 filters were all blocked */
        zero |= layout, layout = NIDUS_BLOOM_LAYOUT_BLOCKED;
    if (r->bad || zero || layout > NIDUS_BLOOM_LAYOUT_BLOCKED || !(error > 0.0 && error < 1.0) ||
        expansion > NIDUS_BLOOM_MAX_EXPANSION ||
        max_layers < 1 || max_layers > NIDUS_BLOOM_MAX_LAYERS || nlayers < 1 || nlayers > max_layers ||
        (expansion == 0 && nlayers != 1) || r->left != (size_t)nlayers * LAYER_META)
        return NIDUS_ERR_CORRUPT;
    nidus_bloom_layer layers[NIDUS_BLOOM_MAX_LAYERS];
    uint64_t bytes = NIDUS_CODEC_CHECKSUM_BYTES, memory = 0, items = 0;
    for (unsigned i = 0; i < nlayers; i++) {
        nidus_bloom_layer *l = &layers[i];
        double e;
        if (get_layer(r, l, &e, false, version) || e != nidus_bloom_layer_error(error, expansion, i) ||
            (i > 0 && (layers[i - 1].capacity > UINT64_MAX / expansion ||
                       l->capacity != layers[i - 1].capacity * expansion || layers[i - 1].items < layers[i - 1].capacity)) ||
            l->items > UINT64_MAX - items) /* a merged layer counts past its capacity; the sum never wraps */
            return NIDUS_ERR_CORRUPT;
        items += l->items;
        bytes += layer_bytes(l);
        memory += nidus_bloom_layer_budget(l); /* what growth would have admitted under max_memory */
    }
    if (max_memory && memory > max_memory)
        return NIDUS_ERR_CORRUPT;
    const nidus_allocator *alloc = nidus_alloc_pick(hook);
    nidus_bloom *bf = nidus_bloom_alloc_struct(alloc, &layers[0], inline_bits);
    if (!bf)
        return NIDUS_ERR_NO_MEMORY;
    bf->alloc = alloc;
    if (nlayers > 1) { /* the layers after the first */
        if (!nidus_bloom_more(bf, nlayers - 1)) {
            nidus_free(alloc, bf);
            return NIDUS_ERR_NO_MEMORY;
        }
        memcpy(bf->more->layers, layers + 1, (nlayers - 1) * sizeof layers[0]);
    }
    bf->hash8_flip = nidus_hash8_flip(seed);
    bf->error_rate = error;
    bf->expansion = (uint16_t)expansion;
    bf->max_layers = max_layers & 127u;
    bf->max_memory = max_memory;
    bf->nlayers = nlayers & 127u;
    bf->layout = layout & 1u;
    bf->tag = nidus_isa_detect() == NIDUS_ISA_V3 ? NIDUS_BLOOM_STATE_V3 : 0; /* the copy; the state once decoded */
    *out = bf;
    *stream = bytes;
    return NIDUS_OK;
}

static nidus_status bloom_decode(const void *buf, size_t len, const nidus_allocator *hook,
                                 nidus_decode_target target, nidus_decode_mode mode, nidus_bloom **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_reader meta;
    size_t prefix, tail;
    uint64_t stream;
    nidus_bloom *bf;
    nidus_status st = nidus_codec_open(buf, len, NIDUS_KIND_BLOOM, NIDUS_FORMAT_VERSION, mode, &meta, &prefix, &tail);
    if (st || (st = bloom_from_meta(&meta, hook, target == NIDUS_DECODE_COPY, &bf, &stream)))
        return st;
    if (prefix + stream - NIDUS_CODEC_CHECKSUM_BYTES + tail != len) {
        nidus_bloom_free(bf);
        return NIDUS_ERR_CORRUPT;
    }
    bool view = target != NIDUS_DECODE_COPY;
    const uint8_t *p = (const uint8_t *)buf + prefix;
    for (unsigned i = 0; i < bf->nlayers && !st; i++) {
        nidus_bloom_layer *l = nidus_bloom_layer_at(bf, i);
        if (!(st = attach(l, bf->alloc, view ? p : NULL)) && !view)
            memcpy(l->data, p, (size_t)layer_bytes(l));
        p += layer_bytes(l);
    }
    if (st) {
        nidus_bloom_free(bf);
        return st;
    }
    bf->read_only = target == NIDUS_DECODE_VIEW;
    nidus_bloom_refresh_dispatch(bf);
    *out = bf;
    return NIDUS_OK;
}

nidus_status nidus_bloom_decode(const void *buf, size_t len, const nidus_allocator *allocator, nidus_bloom **out)
{
    return bloom_decode(buf, len, allocator, NIDUS_DECODE_COPY, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_bloom_view(const void *buf, size_t len, const nidus_allocator *allocator, nidus_bloom **out)
{
    return bloom_decode(buf, len, allocator, NIDUS_DECODE_VIEW, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                     nidus_decode_target target, nidus_decode_mode mode, nidus_bloom **out)
{
    return bloom_decode(buf, len, allocator, target, mode, out); /* any bits are valid: trusted = body */
}

nidus_status nidus_bloom_rewrite_body(const nidus_bloom *bf, uint8_t *body, size_t len)
{
    uint64_t total = nidus_bloom_encoded_size(bf);
    if (nidus_bloom_loader(bf) || total - NIDUS_CODEC_CHECKSUM_BYTES != len)
        return NIDUS_ERR_UNSUPPORTED;
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = bloom_prefix(bf, prefix, total);
    uint64_t at = prefix_bytes;
    for (unsigned i = 0; i < bf->nlayers; i++) { /* every layer still where it was borrowed from */
        const nidus_bloom_layer *l = nidus_bloom_layer_at(bf, i);
        if (l->owned || l->data != body + at)
            return NIDUS_ERR_UNSUPPORTED;
        at += layer_bytes(l);
    }
    nidus_codec_put_if_changed(body, prefix, prefix_bytes);
    return NIDUS_OK;
}

nidus_status nidus_bloom_dump_chunk(const nidus_bloom *bf, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                    uint64_t *next)
{
    return nidus_bloom_dump_chunk_sum(bf, cursor, buf, cap, len, next, NULL);
}

nidus_status nidus_bloom_dump_chunk_sum(const nidus_bloom *bf, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                        uint64_t *next, nidus_dump_sum *sum)
{
    if (!bf || !buf || !len || !next || cursor > UINT32_MAX)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_segment segs[NIDUS_BLOOM_MAX_LAYERS];
    if (nidus_bloom_loader(bf))
        return nidus_codec_dump_received(nidus_bloom_loader(bf), segs, bloom_segments(bf, segs), cursor, buf, cap, len,
                                         next);
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = bloom_prefix(bf, prefix, nidus_bloom_encoded_size(bf));
    return nidus_codec_dump_chunk(prefix, prefix_bytes, segs, bloom_segments(bf, segs), cursor, buf, cap, len,
                                  next, sum);
}

nidus_status nidus_bloom_load_chunk(nidus_bloom **filter, const void *chunk, size_t len, uint64_t max_bytes,
                                    const nidus_allocator *allocator)
{
    if (!filter || !chunk)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint32_t seq, n;
    uint64_t token, total, stream;
    const uint8_t *payload;
    nidus_reader meta;
    nidus_status st = nidus_chunk_parse(chunk, len, &seq, &token, &payload, &n);
    if (st)
        return st;
    nidus_bloom *bf = *filter;
    if (seq == 0) {
        if (bf)
            return NIDUS_ERR_SEQUENCE;
        if ((st = nidus_codec_open_header(payload, n, token, NIDUS_KIND_BLOOM, NIDUS_FORMAT_VERSION, &meta, &total)) ||
            (st = bloom_from_meta(&meta, allocator, true, &bf, &stream)))
            return st;
        uint64_t memory = 0; /* by the measure creation and growth check against max_memory */
        for (unsigned i = 0; i < bf->nlayers; i++)
            memory += nidus_bloom_layer_budget(nidus_bloom_layer_at(bf, i));
        st = n + stream != total              ? NIDUS_ERR_CORRUPT
             : max_bytes && memory > max_bytes ? NIDUS_ERR_LIMIT_MEMORY
             : !nidus_bloom_more(bf, 0)        ? NIDUS_ERR_NO_MEMORY
                                               : nidus_chunk_loader_begin(&bf->more->loader, bf->alloc, payload, n, token, stream);
        if (max_bytes && (bf->max_memory == 0 || bf->max_memory > max_bytes))
            bf->max_memory = max_bytes; /* it grows here within this limit, so it always loads here again */
        for (unsigned i = 0; i < bf->nlayers && !st; i++)
            st = attach(nidus_bloom_layer_at(bf, i), bf->alloc, NULL);
        if (st) {
            nidus_bloom_free(bf);
            return st;
        }
        nidus_bloom_refresh_dispatch(bf); /* loading: no fast case until the last chunk lands */
        *filter = bf;
        return NIDUS_OK;
    }
    if (!bf || !nidus_bloom_loader(bf))
        return NIDUS_ERR_SEQUENCE;
    nidus_segment segs[NIDUS_BLOOM_MAX_LAYERS];
    bool complete;
    st = nidus_chunk_accept(bf->more->loader, seq, token, payload, n, segs, bloom_segments(bf, segs), &complete);
    if (!st && complete) {
        nidus_chunk_loader_release(&bf->more->loader, bf->alloc);
        if (bf->nlayers == 1 && !bf->more->mapping) { /* loaded: a small filter is one allocation again */
            nidus_free(bf->alloc, bf->more);
            bf->more = NULL;
        }
        nidus_bloom_refresh_dispatch(bf);
    }
    return st;
}

NIDUS_DEFINE_FILE_FUNCTIONS_AT(nidus_bloom, nidus_bloom, nidus_bloom_mapping_slot)

/* ==== counting Bloom ==== */

static size_t counting_prefix(const nidus_counting_bloom *cb, uint8_t *out, uint64_t total)
{
    nidus_writer w = {out};
    nidus_codec_put_prefix(&w, NIDUS_FORMAT_VERSION, NIDUS_KIND_COUNTING_BLOOM, total, COUNTING_META_FIXED + LAYER_META);
    nidus_put_u64(&w, cb->seed);
    nidus_put_u64(&w, cb->items);
    put_layer(&w, &cb->layer, cb->error);
    return (size_t)(w.p - out);
}

uint64_t nidus_counting_bloom_encoded_size(const nidus_counting_bloom *cb)
{
    return NIDUS_CODEC_PREFIX_FIXED + COUNTING_META_FIXED + LAYER_META + layer_bytes(&cb->layer) +
           NIDUS_CODEC_CHECKSUM_BYTES;
}

nidus_status nidus_counting_bloom_encode(const nidus_counting_bloom *cb, void *buf, size_t cap, size_t *written)
{
    if (!cb || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (cb->loader)
        return NIDUS_ERR_READ_ONLY;
    uint64_t total = nidus_counting_bloom_encoded_size(cb);
    if (total > cap)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t prefix[PREFIX_MAX];
    nidus_segment seg = {cb->layer.data, layer_bytes(&cb->layer)};
    size_t prefix_bytes = counting_prefix(cb, prefix, total);
    nidus_codec_write_whole(buf, total, prefix, prefix_bytes, &seg, 1);
    if (written)
        *written = (size_t)total;
    return NIDUS_OK;
}

static nidus_status counting_from_meta(nidus_reader *r, const nidus_allocator *hook, nidus_counting_bloom **out)
{
    unsigned version = nidus_codec_meta_version(r);
    uint64_t seed = nidus_get_u64(r), items = nidus_get_u64(r);
    nidus_bloom_layer l;
    double error;
    if (r->bad || r->left != LAYER_META || get_layer(r, &l, &error, true, version) || l.items != 0)
        return NIDUS_ERR_CORRUPT;
    const nidus_allocator *alloc = nidus_alloc_pick(hook);
    nidus_counting_bloom *cb = nidus_calloc(alloc, 1, sizeof *cb);
    if (!cb)
        return NIDUS_ERR_NO_MEMORY;
    *cb = (nidus_counting_bloom){.alloc = alloc, .seed = seed, .items = items, .error = error, .layer = l};
    *out = cb;
    return NIDUS_OK;
}

static nidus_status counting_decode(const void *buf, size_t len, const nidus_allocator *hook,
                                    nidus_decode_target target, nidus_decode_mode mode, nidus_counting_bloom **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_reader meta;
    size_t prefix, tail;
    nidus_counting_bloom *cb;
    nidus_status st = nidus_codec_open(buf, len, NIDUS_KIND_COUNTING_BLOOM, NIDUS_FORMAT_VERSION, mode, &meta, &prefix, &tail);
    if (st || (st = counting_from_meta(&meta, hook, &cb)))
        return st;
    const uint8_t *p = (const uint8_t *)buf + prefix;
    if (prefix + layer_bytes(&cb->layer) + tail != len)
        st = NIDUS_ERR_CORRUPT;
    else if (!(st = attach(&cb->layer, cb->alloc, target != NIDUS_DECODE_COPY ? p : NULL)) &&
             target == NIDUS_DECODE_COPY)
        memcpy(cb->layer.data, p, (size_t)layer_bytes(&cb->layer));
    if (st) {
        nidus_counting_bloom_free(cb);
        return st;
    }
    cb->read_only = target == NIDUS_DECODE_VIEW;
    *out = cb;
    return NIDUS_OK;
}

nidus_status nidus_counting_bloom_decode(const void *buf, size_t len, const nidus_allocator *allocator,
                                         nidus_counting_bloom **out)
{
    return counting_decode(buf, len, allocator, NIDUS_DECODE_COPY, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_counting_bloom_view(const void *buf, size_t len, const nidus_allocator *allocator,
                                       nidus_counting_bloom **out)
{
    return counting_decode(buf, len, allocator, NIDUS_DECODE_VIEW, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_counting_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                              nidus_decode_target target, nidus_decode_mode mode,
                                              nidus_counting_bloom **out)
{
    return counting_decode(buf, len, allocator, target, mode, out);
}

nidus_status nidus_counting_bloom_rewrite_body(const nidus_counting_bloom *cb, uint8_t *body, size_t len)
{
    uint64_t total = nidus_counting_bloom_encoded_size(cb);
    if (cb->loader || total - NIDUS_CODEC_CHECKSUM_BYTES != len)
        return NIDUS_ERR_UNSUPPORTED;
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = counting_prefix(cb, prefix, total);
    if (cb->layer.owned || cb->layer.data != body + prefix_bytes)
        return NIDUS_ERR_UNSUPPORTED;
    nidus_codec_put_if_changed(body, prefix, prefix_bytes);
    return NIDUS_OK;
}

nidus_status nidus_counting_bloom_dump_chunk(const nidus_counting_bloom *cb, uint64_t cursor, void *buf,
                                             size_t cap, size_t *len, uint64_t *next)
{
    return nidus_counting_bloom_dump_chunk_sum(cb, cursor, buf, cap, len, next, NULL);
}

nidus_status nidus_counting_bloom_dump_chunk_sum(const nidus_counting_bloom *cb, uint64_t cursor, void *buf,
                                                 size_t cap, size_t *len, uint64_t *next, nidus_dump_sum *sum)
{
    if (!cb || !buf || !len || !next || cursor > UINT32_MAX)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_segment seg = {cb->layer.data, layer_bytes(&cb->layer)};
    if (cb->loader)
        return nidus_codec_dump_received(cb->loader, &seg, 1, cursor, buf, cap, len, next);
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = counting_prefix(cb, prefix, nidus_counting_bloom_encoded_size(cb));
    return nidus_codec_dump_chunk(prefix, prefix_bytes, &seg, 1, cursor, buf, cap, len, next, sum);
}

nidus_status nidus_counting_bloom_load_chunk(nidus_counting_bloom **filter, const void *chunk, size_t len,
                                             uint64_t max_bytes, const nidus_allocator *allocator)
{
    if (!filter || !chunk)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint32_t seq, n;
    uint64_t token, total;
    const uint8_t *payload;
    nidus_reader meta;
    nidus_status st = nidus_chunk_parse(chunk, len, &seq, &token, &payload, &n);
    if (st)
        return st;
    nidus_counting_bloom *cb = *filter;
    if (seq == 0) {
        if (cb)
            return NIDUS_ERR_SEQUENCE;
        if ((st = nidus_codec_open_header(payload, n, token, NIDUS_KIND_COUNTING_BLOOM, NIDUS_FORMAT_VERSION, &meta, &total)) ||
            (st = counting_from_meta(&meta, allocator, &cb)))
            return st;
        uint64_t stream = layer_bytes(&cb->layer) + NIDUS_CODEC_CHECKSUM_BYTES;
        st = n + stream != total ? NIDUS_ERR_CORRUPT
             : max_bytes && total > max_bytes ? NIDUS_ERR_LIMIT_MEMORY
                                              : nidus_chunk_loader_begin(&cb->loader, cb->alloc, payload, n, token, stream);
        if (!st)
            st = attach(&cb->layer, cb->alloc, NULL);
        if (st) {
            nidus_counting_bloom_free(cb);
            return st;
        }
        *filter = cb;
        return NIDUS_OK;
    }
    if (!cb || !cb->loader)
        return NIDUS_ERR_SEQUENCE;
    nidus_segment seg = {cb->layer.data, layer_bytes(&cb->layer)};
    bool complete;
    st = nidus_chunk_accept(cb->loader, seq, token, payload, n, &seg, 1, &complete);
    if (!st && complete)
        nidus_chunk_loader_release(&cb->loader, cb->alloc);
    return st;
}

NIDUS_DEFINE_FILE_FUNCTIONS(nidus_counting_bloom, nidus_counting_bloom)
