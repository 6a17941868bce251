/* The scalable blocked Bloom filter: layers of 64-byte blocks, RedisBloom's BF semantics, a bounded error. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "bloom_sizing.h"
#include "file_io.h"
#include "hash_impl.h"

double nidus_bloom_layer_error(double error, unsigned expansion, unsigned i)
{
    return expansion == 0 ? error : ldexp(error, -(int)(i + 1));
}

nidus_status nidus_bloom_layer_init(nidus_bloom_layer *l, const nidus_allocator *a, uint64_t capacity,
                                    double error, unsigned slots)
{
    memset(l, 0, sizeof *l);
    uint64_t blocks;
    unsigned k;
    nidus_status st = nidus_blocked_size(capacity, error, slots, &blocks, &k);
    if (st)
        return st;
    if (blocks > (SIZE_MAX - NIDUS_BLOCK_BYTES) / NIDUS_BLOCK_BYTES)
        return NIDUS_ERR_TOO_LARGE;
    /* one cache line a block: align the blocks to 64 bytes within a slightly larger allocation */
    uint8_t *raw = nidus_calloc(a, (size_t)(blocks * NIDUS_BLOCK_BYTES + NIDUS_BLOCK_BYTES - 1), 1);
    if (!raw)
        return NIDUS_ERR_NO_MEMORY;
    *l = (nidus_bloom_layer){.blocks = blocks, .capacity = capacity, .error = error, .k = k, .raw = raw};
    l->data = raw + ((NIDUS_BLOCK_BYTES - (uintptr_t)raw % NIDUS_BLOCK_BYTES) % NIDUS_BLOCK_BYTES);
    return NIDUS_OK;
}

void nidus_bloom_layer_release(nidus_bloom_layer *l, const nidus_allocator *a)
{
    nidus_free(a, l->raw);
    l->raw = NULL;
    l->data = NULL;
}

uint64_t nidus_bloom_layer_memory(const nidus_bloom_layer *l)
{
    /* Borrowed blocks (a view) count too: a mapped file's figures are the filter's, as when loaded. */
    return l->blocks * NIDUS_BLOCK_BYTES + (l->raw ? NIDUS_BLOCK_BYTES - 1 : 0);
}

void nidus_chunk_loader_release(nidus_chunk_loader **l, const nidus_allocator *a)
{
    if (!*l)
        return;
    nidus_free(a, (*l)->prefix);
    nidus_free(a, *l);
    *l = NULL;
}

static bool valid_error(double e) { return e > 0.0 && e < 1.0; }

nidus_status nidus_bloom_new(const nidus_bloom_params *p, nidus_bloom **out)
{
    if (!p || !out || p->capacity < 1 || !valid_error(p->error_rate) || p->expansion > NIDUS_BLOOM_MAX_EXPANSION ||
        p->max_layers > NIDUS_BLOOM_MAX_LAYERS)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_allocator alloc;
    nidus_alloc_resolve(p->allocator, &alloc);
    nidus_bloom *bf = nidus_calloc(&alloc, 1, sizeof *bf);
    if (!bf)
        return NIDUS_ERR_NO_MEMORY;
    *bf = (nidus_bloom){.alloc = alloc, .seed = p->seed, .error_rate = p->error_rate, .expansion = p->expansion,
                        .max_layers = p->max_layers ? p->max_layers : NIDUS_BLOOM_DEFAULT_MAX_LAYERS,
                        .max_memory = p->max_memory};
    bf->layers = nidus_malloc(&alloc, sizeof *bf->layers);
    nidus_status st = bf->layers ? nidus_bloom_layer_init(&bf->layers[0], &alloc, p->capacity,
                                                          nidus_bloom_layer_error(p->error_rate, p->expansion, 0),
                                                          NIDUS_BLOCK_BITS)
                                 : NIDUS_ERR_NO_MEMORY;
    if (!st && p->max_memory && nidus_bloom_layer_memory(&bf->layers[0]) > p->max_memory) {
        nidus_bloom_layer_release(&bf->layers[0], &alloc);
        st = NIDUS_ERR_LIMIT_MEMORY;
    }
    if (st) {
        nidus_free(&alloc, bf->layers);
        nidus_free(&alloc, bf);
        return st;
    }
    bf->nlayers = 1;
    *out = bf;
    return NIDUS_OK;
}

void nidus_bloom_free(nidus_bloom *bf)
{
    if (!bf)
        return;
    nidus_allocator alloc = bf->alloc;
    for (unsigned i = 0; i < bf->nlayers; i++)
        nidus_bloom_layer_release(&bf->layers[i], &alloc);
    nidus_free(&alloc, bf->layers);
    nidus_chunk_loader_release(&bf->loader, &alloc);
    nidus_file_unmap(bf->mapping, bf->mapping_bytes);
    nidus_free(&alloc, bf);
}

uint64_t nidus_bloom_hash(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_hash_bytes(key, len, bf->seed);
}

bool nidus_bloom_is_read_only(const nidus_bloom *bf) { return bf->read_only; }
bool nidus_bloom_loading(const nidus_bloom *bf) { return bf->loader != NULL; }

static bool layer_has(const nidus_bloom_layer *l, unsigned i, uint64_t hash)
{
    nidus_probe p = nidus_probe_of(hash, i, l->blocks);
    uint64_t mask[8];
    nidus_bloom_mask(&p, l->k, mask);
    return nidus_bloom_block_has(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
}

bool nidus_bloom_contains_hash(const nidus_bloom *bf, uint64_t hash)
{
    if (bf->loader)
        return false;
    for (unsigned i = 0; i < bf->nlayers; i++)
        if (layer_has(&bf->layers[i], i, hash))
            return true;
    return false;
}

bool nidus_bloom_contains(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_bloom_contains_hash(bf, nidus_bloom_hash(bf, key, len));
}

static uint64_t layers_memory(const nidus_bloom *bf)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < bf->nlayers; i++)
        n += nidus_bloom_layer_memory(&bf->layers[i]);
    return n;
}

static nidus_status grow(nidus_bloom *bf)
{
    if (bf->expansion == 0)
        return NIDUS_ERR_FULL;
    if (bf->nlayers >= bf->max_layers)
        return NIDUS_ERR_LIMIT_TABLES;
    const nidus_bloom_layer *last = &bf->layers[bf->nlayers - 1];
    if (last->capacity > UINT64_MAX / bf->expansion)
        return NIDUS_ERR_TOO_LARGE;
    nidus_bloom_layer l;
    nidus_status st = nidus_bloom_layer_init(&l, &bf->alloc, last->capacity * bf->expansion,
                                             nidus_bloom_layer_error(bf->error_rate, bf->expansion, bf->nlayers),
                                             NIDUS_BLOCK_BITS);
    if (st)
        return st;
    if (bf->max_memory && nidus_bloom_layer_memory(&l) > bf->max_memory - layers_memory(bf)) {
        nidus_bloom_layer_release(&l, &bf->alloc);
        return NIDUS_ERR_LIMIT_MEMORY;
    }
    nidus_bloom_layer *layers = nidus_realloc(&bf->alloc, bf->layers, (bf->nlayers + 1) * sizeof *layers);
    if (!layers) {
        nidus_bloom_layer_release(&l, &bf->alloc);
        return NIDUS_ERR_NO_MEMORY;
    }
    layers[bf->nlayers++] = l;
    bf->layers = layers;
    return NIDUS_OK;
}

nidus_status nidus_bloom_add_hash(nidus_bloom *bf, uint64_t hash, bool *added)
{
    bool dummy;
    if (!added)
        added = &dummy;
    *added = false;
    if (bf->read_only || bf->loader)
        return NIDUS_ERR_READ_ONLY;
    unsigned last = bf->nlayers - 1;
    for (unsigned i = 0; i < last; i++)
        if (layer_has(&bf->layers[i], i, hash))
            return NIDUS_OK;
    /* The newest layer's probe is computed once: checked, and set if the key is new and the layer has room. */
    nidus_bloom_layer *l = &bf->layers[last];
    nidus_probe p = nidus_probe_of(hash, last, l->blocks);
    uint64_t mask[8];
    nidus_bloom_mask(&p, l->k, mask);
    uint8_t *block = l->data + p.block * NIDUS_BLOCK_BYTES;
    if (nidus_bloom_block_has(block, mask))
        return NIDUS_OK;
    if (l->items >= l->capacity) {
        nidus_status st = grow(bf);
        if (st)
            return st;
        last = bf->nlayers - 1;
        l = &bf->layers[last];
        p = nidus_probe_of(hash, last, l->blocks);
        nidus_bloom_mask(&p, l->k, mask);
        block = l->data + p.block * NIDUS_BLOCK_BYTES;
    }
    nidus_bloom_block_set(block, mask);
    l->items++;
    *added = true;
    return NIDUS_OK;
}

nidus_status nidus_bloom_add(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return nidus_bloom_add_hash(bf, nidus_bloom_hash(bf, key, len), added);
}

#define AHEAD 16u

void nidus_bloom_contains_many_hash(const nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *out)
{
    for (size_t k = 0; k < n; k++)
        out[k] = false;
    if (bf->loader)
        return;
    for (unsigned i = 0; i < bf->nlayers; i++) {
        const nidus_bloom_layer *l = &bf->layers[i];
        nidus_probe ring[AHEAD];
        for (size_t k = 0; k < n && k < AHEAD; k++) {
            ring[k] = nidus_probe_of(hashes[k], i, l->blocks);
            nidus_block_prefetch(l->data, ring[k].block);
        }
        for (size_t k = 0; k < n; k++) {
            nidus_probe p = ring[k % AHEAD];
            if (k + AHEAD < n) {
                ring[k % AHEAD] = nidus_probe_of(hashes[k + AHEAD], i, l->blocks);
                nidus_block_prefetch(l->data, ring[k % AHEAD].block);
            }
            if (!out[k]) {
                uint64_t mask[8];
                nidus_bloom_mask(&p, l->k, mask);
                out[k] = nidus_bloom_block_has(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
            }
        }
    }
}

nidus_status nidus_bloom_clear(nidus_bloom *bf)
{
    if (bf->read_only || bf->loader)
        return NIDUS_ERR_READ_ONLY;
    while (bf->nlayers > 1)
        nidus_bloom_layer_release(&bf->layers[--bf->nlayers], &bf->alloc);
    memset(bf->layers[0].data, 0, (size_t)(bf->layers[0].blocks * NIDUS_BLOCK_BYTES));
    bf->layers[0].items = 0;
    return NIDUS_OK;
}

void nidus_bloom_get_stats(const nidus_bloom *bf, nidus_bloom_stats *s)
{
    uint64_t capacity = 0, items = 0;
    double bound = 0.0;
    for (unsigned i = 0; i < bf->nlayers; i++) {
        capacity += bf->layers[i].capacity;
        items += bf->layers[i].items;
        bound += bf->layers[i].error;
    }
    uint64_t memory = sizeof *bf + bf->nlayers * sizeof *bf->layers + layers_memory(bf);
    *s = (nidus_bloom_stats){
        .capacity = capacity,
        .items = items,
        .memory_bytes = memory,
        .layers = bf->nlayers,
        .expansion = bf->expansion,
        .hashes = bf->layers[0].k,
        .error_rate = bf->error_rate,
        .error_bound = bound,
        .bits_per_item = (double)memory * 8.0 / (double)capacity,
    };
}
