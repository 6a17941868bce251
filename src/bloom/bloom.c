/* SPDX-License-Identifier: BSD-3-Clause */
/* The scalable Bloom filter: RedisBloom's BF semantics and sizes (plain layers), or one cache line a key (split
 * blocks), with a bounded error. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "bloom_block_impl.h"
#include "bloom_fast_impl.h"
#include "bloom_filter.h"
#include "bloom_simd.h"
#include "bloom_sizing.h"
#include "file_io.h"
#include "hash_impl.h"
#include "hugepage.h"
#include "nidus/inline_bloom.h"

/* The struct's first 48 bytes are the published view (nidus/inline_bloom.h); its tags are the states'. */
#define VIEW_AT(field, member) _Static_assert(offsetof(nidus_bloom, field) == offsetof(nidus_inline_bloom_view, member), #field)
VIEW_AT(tag, tag);
VIEW_AT(hash8_flip, hash8_flip);
VIEW_AT(first.size, blocks);
VIEW_AT(first.capacity, capacity);
VIEW_AT(first.items, items);
VIEW_AT(first.data, data);
_Static_assert(sizeof(nidus_inline_bloom_view) == 48 && sizeof(nidus_bloom) == 88, "the view, and a filter's bytes");
_Static_assert((NIDUS_BLOOM_TAG_V1 | NIDUS_BLOOM_STATE_LOOKUP) == NIDUS_INLINE_BLOOM_TAG_LOOKUP &&
                   (NIDUS_BLOOM_TAG_V1 | NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD) == NIDUS_INLINE_BLOOM_TAG_ADD &&
                   NIDUS_BLOOM_STATE_V3 == NIDUS_INLINE_BLOOM_TAG_PRIVATE,
               "the states' tags are the view's");

double nidus_bloom_layer_error(double error, unsigned expansion, unsigned i)
{
    return expansion == 0 ? error : ldexp(error, -(int)(i + 1));
}

nidus_status nidus_bloom_layer_size(nidus_bloom_layer *l, uint64_t capacity, double error, unsigned layout,
                                    bool counting)
{
    memset(l, 0, sizeof *l);
    uint64_t size;
    unsigned k;
    nidus_status st = counting                     ? nidus_counting_size(capacity, error, &size, &k)
                      : layout == NIDUS_LAYER_SPLIT ? nidus_split_size(capacity, error, &size, &k)
                                                    : NIDUS_ERR_UNSUPPORTED;
    if (st == NIDUS_ERR_UNSUPPORTED) { /* plain asked for, or an error split blocks cannot reach */
        layout = NIDUS_LAYER_PLAIN;
        st = nidus_plain_size(capacity, error, &size, &k);
    }
    if (st)
        return st;
    *l = (nidus_bloom_layer){.size = size, .capacity = capacity, .k = (uint16_t)k,
                             .layout = (uint8_t)(counting ? NIDUS_LAYER_COUNTING : layout)};
    return NIDUS_OK;
}

uint64_t nidus_bloom_layer_bytes(const nidus_bloom_layer *l)
{
    return l->layout == NIDUS_LAYER_PLAIN ? l->size / 8 : l->size * NIDUS_BLOCK_BYTES;
}

/* Blocked layers are aligned to 64 bytes (one cache line a block) within a slightly larger allocation. */
static uint64_t layer_slack(const nidus_bloom_layer *l) { return l->layout == NIDUS_LAYER_PLAIN ? 0 : NIDUS_BLOCK_BYTES - 1; }

uint64_t nidus_bloom_layer_budget(const nidus_bloom_layer *l) { return nidus_bloom_layer_bytes(l) + layer_slack(l); }

/* Borrowed bytes (a view) count too: a mapped file's figures are the filter's, as when loaded. */
uint64_t nidus_bloom_layer_memory(const nidus_bloom_layer *l)
{
    return nidus_bloom_layer_bytes(l) + (l->owned ? layer_slack(l) : 0);
}

nidus_status nidus_bloom_layer_alloc(nidus_bloom_layer *l, const nidus_allocator *a)
{
    uint64_t bytes = nidus_bloom_layer_bytes(l), slack = layer_slack(l);
    if (bytes > SIZE_MAX - slack)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *raw = nidus_calloc(a, (size_t)(bytes + slack), 1);
    if (!raw)
        return NIDUS_ERR_NO_MEMORY;
    l->offset = (uint8_t)(slack ? (NIDUS_BLOCK_BYTES - (uintptr_t)raw % NIDUS_BLOCK_BYTES) % NIDUS_BLOCK_BYTES : 0);
    l->data = raw + l->offset;
    l->owned = true;
    /* a blocked lookup is one random line, so in a large layer mostly a TLB miss on 4 KiB pages */
    if (bytes >= NIDUS_HUGEPAGE_MIN_BYTES)
        nidus_hugepage_advise(l->data, (size_t)bytes);
    return NIDUS_OK;
}

void nidus_bloom_layer_release(nidus_bloom_layer *l, const nidus_allocator *a)
{
    if (l->owned)
        nidus_free(a, l->data - l->offset);
    l->owned = false;
    l->data = NULL;
}

/* The bytes an allocation of n takes under allocators with four size classes per power of two above 64 bytes and
 * 16-byte steps below (jemalloc's, which Redis uses; glibc's 16-byte steps never make the sum cheaper). */
static uint64_t size_class(uint64_t n)
{
    if (n <= 8)
        return 8;
    if (n <= 64)
        return (n + 15) & ~UINT64_C(15);
    uint64_t step = UINT64_C(1) << (61 - __builtin_clzll(n - 1)); /* a quarter of the power of two below n */
    return (n + step - 1) & ~(step - 1);
}

nidus_bloom *nidus_bloom_alloc_struct(const nidus_allocator *a, const nidus_bloom_layer *first, bool with_bits)
{
    uint64_t bits = with_bits && first->layout == NIDUS_LAYER_PLAIN ? nidus_bloom_layer_bytes(first) : 0;
    if (bits > SIZE_MAX - sizeof(nidus_bloom))
        return NULL;
    /* one allocation unless it falls in a size class above the two pieces' (BF.RESERVE k 0.01 500: 88 + 696
     * bytes would take 896, apart 96 + 768 = 864, RedisBloom's figure) */
    if (size_class(sizeof(nidus_bloom) + bits) > size_class(sizeof(nidus_bloom)) + size_class(bits))
        bits = 0;
    nidus_bloom *bf = nidus_calloc(a, 1, sizeof *bf + (size_t)bits);
    if (!bf)
        return NULL;
    bf->first = *first;
    bf->first.data = bits ? (uint8_t *)(bf + 1) : NULL;
    bf->first.owned = false;
    bf->nlayers = 1;
    return bf;
}

struct nidus_bloom_more *nidus_bloom_more(nidus_bloom *bf, unsigned room)
{
    struct nidus_bloom_more *m = bf->more;
    if (m && !room)
        return m;
    size_t bytes = sizeof *m + room * sizeof m->layers[0];
    m = m ? nidus_realloc(bf->alloc, m, bytes) : nidus_calloc(bf->alloc, 1, bytes);
    return m ? (bf->more = m) : NULL;
}

struct nidus_mapping **nidus_bloom_mapping_slot(nidus_bloom *bf)
{
    struct nidus_bloom_more *m = nidus_bloom_more(bf, 0);
    return m ? &m->mapping : NULL;
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

/* The layer layout that a filter layout asks growth for. */
static unsigned layer_layout(unsigned layout)
{
    return layout == NIDUS_BLOOM_LAYOUT_BLOCKED ? NIDUS_LAYER_SPLIT : NIDUS_LAYER_PLAIN;
}

nidus_status nidus_bloom_new(const nidus_bloom_params *p, nidus_bloom **out)
{
    if (!p || !out || p->capacity < 1 || !valid_error(p->error_rate) || p->expansion > NIDUS_BLOOM_MAX_EXPANSION ||
        p->max_layers > NIDUS_BLOOM_MAX_LAYERS || p->layout > NIDUS_BLOOM_LAYOUT_BLOCKED)
        return NIDUS_ERR_INVALID_ARGUMENT;
    /* sized and checked against max_memory before anything is allocated */
    nidus_bloom_layer first;
    nidus_status st = nidus_bloom_layer_size(&first, p->capacity, nidus_bloom_layer_error(p->error_rate, p->expansion, 0),
                                             layer_layout(p->layout), false);
    if (st)
        return st;
    if (p->max_memory && nidus_bloom_layer_budget(&first) > p->max_memory)
        return NIDUS_ERR_LIMIT_MEMORY;
    const nidus_allocator *alloc = nidus_alloc_pick(p->allocator);
    nidus_bloom *bf = nidus_bloom_alloc_struct(alloc, &first, true);
    if (!bf)
        return NIDUS_ERR_NO_MEMORY;
    bf->alloc = alloc;
    bf->hash8_flip = nidus_hash8_flip(p->seed);
    bf->error_rate = p->error_rate;
    bf->expansion = (uint16_t)p->expansion;
    bf->max_layers = (uint8_t)(p->max_layers ? p->max_layers : NIDUS_BLOOM_DEFAULT_MAX_LAYERS);
    bf->max_memory = p->max_memory;
    bf->layout = p->layout & 1u;
    bf->tag = nidus_isa_detect() == NIDUS_ISA_V3 ? NIDUS_BLOOM_STATE_V3 : 0; /* the copy; refreshed below */
    if (!bf->first.data && (st = nidus_bloom_layer_alloc(&bf->first, alloc))) {
        nidus_free(alloc, bf);
        return st;
    }
    nidus_bloom_refresh_dispatch(bf);
    *out = bf;
    return NIDUS_OK;
}

void nidus_bloom_free(nidus_bloom *bf)
{
    if (!bf)
        return;
    const nidus_allocator *alloc = bf->alloc;
    for (unsigned i = 0; i < bf->nlayers; i++)
        nidus_bloom_layer_release(nidus_bloom_layer_at(bf, i), alloc);
    if (bf->more) {
        nidus_chunk_loader_release(&bf->more->loader, alloc);
        nidus_mapping_release(bf->more->mapping, alloc);
        nidus_free(alloc, bf->more);
    }
    nidus_free(alloc, bf);
}

uint64_t nidus_bloom_hash(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_hash_bytes(key, len, nidus_bloom_seed(bf));
}

static uint32_t dispatch_tag(const nidus_bloom *bf)
{
    bool one = bf->nlayers == 1 && bf->first.layout == NIDUS_LAYER_SPLIT && bf->first.k == NIDUS_SPLIT_FAST_K &&
               !nidus_bloom_loader(bf);
    unsigned state = (one ? NIDUS_BLOOM_STATE_LOOKUP | (bf->read_only ? 0 : NIDUS_BLOOM_STATE_ADD) : 0) |
                     (bf->tag & NIDUS_BLOOM_STATE_V3);
    return NIDUS_BLOOM_TAG_V1 | state;
}

void nidus_bloom_refresh_dispatch(nidus_bloom *bf) { bf->tag = dispatch_tag(bf); }

bool nidus_bloom_dispatch_is_current(const nidus_bloom *bf) { return bf->tag == dispatch_tag(bf); }

bool nidus_bloom_is_read_only(const nidus_bloom *bf) { return bf->read_only; }
bool nidus_bloom_loading(const nidus_bloom *bf) { return nidus_bloom_loader(bf) != NULL; }

/* The portable split probes, out of line: the callers' common path stays a few instructions. */
__attribute__((noinline)) static bool split_has_portable(const uint8_t *block, uint64_t x, unsigned k)
{
    return nidus_split_has(block, x, k);
}

__attribute__((noinline)) static bool split_set_portable(uint8_t *block, uint64_t x, unsigned k)
{
    return nidus_split_set(block, x, k);
}

/* The same for the fast case's k (the compiler unrolls the one round). */
static bool split_has8_portable(const uint8_t *block, uint64_t x) { return nidus_split_has(block, x, NIDUS_SPLIT_FAST_K); }
static bool split_set8_portable(uint8_t *block, uint64_t x) { return nidus_split_set(block, x, NIDUS_SPLIT_FAST_K); }

/* A split layer's probes (general path), with AVX2 where the filter chose the v3 copy. */
static inline bool split_has(const nidus_bloom *bf, const nidus_bloom_layer *l, uint64_t x)
{
    const uint8_t *block = l->data + nidus_reduce(x, l->size) * NIDUS_BLOCK_BYTES;
#if NIDUS_HAVE_ISA_V3
    if (nidus_bloom_isa(bf) == NIDUS_ISA_V3)
        return nidus_split_has_avx2(block, x, l->k);
#else
    (void)bf;
#endif
    return split_has_portable(block, x, l->k);
}

static inline bool split_set(const nidus_bloom *bf, nidus_bloom_layer *l, uint64_t x)
{
    uint8_t *block = l->data + nidus_reduce(x, l->size) * NIDUS_BLOCK_BYTES;
#if NIDUS_HAVE_ISA_V3
    if (nidus_bloom_isa(bf) == NIDUS_ISA_V3)
        return nidus_split_set_avx2(block, x, l->k);
#else
    (void)bf;
#endif
    return split_set_portable(block, x, l->k);
}

static bool layer_has(const nidus_bloom *bf, const nidus_bloom_layer *l, unsigned i, uint64_t hash)
{
    uint64_t x = nidus_layer_hash(hash, i);
    switch (l->layout) {
    case NIDUS_LAYER_SPLIT:
        return split_has(bf, l, x);
    case NIDUS_LAYER_PLAIN:
        NIDUS_FOR_EACH_PLAIN_BIT(x, l->size, l->k, {
            if (!nidus_plain_get(l->data, bit))
                return false;
        });
        return true;
    default: {
        nidus_probe p = nidus_probe_of(hash, i, l->size);
        uint64_t mask[8];
        nidus_bloom_mask(&p, l->k, mask);
        return nidus_bloom_block_has(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
    }
    }
}

/* Sets the key's probes in the layer; returns whether any was unset. Inlined into each add path (a call in the
 * one-layer add cost it 16 more instructions a key, callgrind). */
static inline __attribute__((always_inline)) bool layer_set(const nidus_bloom *bf, nidus_bloom_layer *l, unsigned i,
                                                            uint64_t hash)
{
    uint64_t x = nidus_layer_hash(hash, i);
    switch (l->layout) {
    case NIDUS_LAYER_SPLIT:
        return split_set(bf, l, x);
    case NIDUS_LAYER_PLAIN: {
        bool fresh = false;
        NIDUS_FOR_EACH_PLAIN_BIT(x, l->size, l->k, fresh |= nidus_plain_set(l->data, bit));
        return fresh;
    }
    default: {
        nidus_probe p = nidus_probe_of(hash, i, l->size);
        uint64_t mask[8];
        nidus_bloom_mask(&p, l->k, mask);
        return nidus_bloom_block_set(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
    }
    }
}

/* A filter with `more`: loading, grown or mapped (apart, so that the one-layer case needs no stack frame). */
__attribute__((noinline)) static bool contains_layers(const nidus_bloom *bf, uint64_t hash)
{
    if (bf->more->loader)
        return false;
    if (layer_has(bf, &bf->first, 0, hash))
        return true;
    const nidus_bloom_layer *rest = bf->more->layers;
    for (unsigned i = 1; i < bf->nlayers; i++)
        if (layer_has(bf, &rest[i - 1], i, hash))
            return true;
    return false;
}

/* Every case but one split layer: kept out of line, so the common case pays no stack frame for it. */
__attribute__((noinline)) bool nidus_bloom_contains_any(const nidus_bloom *bf, uint64_t hash)
{
    if (!bf->more) /* one layer, not loading: a compact filter's every lookup */
        return layer_has(bf, &bf->first, 0, hash);
    return contains_layers(bf, hash);
}

__attribute__((noinline)) bool nidus_bloom_contains_key_any(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_bloom_contains_any(bf, nidus_bloom_hash(bf, key, len));
}

/* The baseline copies of the entry points' fast case (the v3 ones are in bloom_simd.c). */
static bool contains_hash_base(const nidus_bloom *bf, uint64_t hash)
{
    return nidus_bloom_fast_contains_hash(bf, hash, split_has8_portable);
}

static bool contains_key_base(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_bloom_fast_contains_key(bf, key, len, split_has8_portable);
}

static nidus_status add_hash_base(nidus_bloom *bf, uint64_t hash, bool *added)
{
    return nidus_bloom_fast_add_hash(bf, hash, added, split_set8_portable);
}

static nidus_status add_key_base(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return nidus_bloom_fast_add_key(bf, key, len, added, split_set8_portable);
}

#if NIDUS_HAVE_ISA_V3
#define V3(fn) nidus_bloom_##fn##_v3
#else
#define V3(fn) fn##_base /* no v3 copy: the state never has NIDUS_BLOOM_STATE_V3 */
#endif

/* The one dispatch point: each entry point takes the function its table holds for the filter's state, chosen
 * when the state last changed (nidus_bloom_refresh_dispatch). Indexed by NIDUS_BLOOM_STATE_* bits; ADD without
 * LOOKUP is never made. */
#define BY_STATE(general, base, v3, base_add, v3_add)                                                          \
    {general, base, general, base_add, general, v3, general, v3_add}

static bool (*const contains_hash_by_state[NIDUS_BLOOM_STATES])(const nidus_bloom *, uint64_t) = BY_STATE(
    nidus_bloom_contains_any, contains_hash_base, V3(contains_hash), contains_hash_base, V3(contains_hash));
static bool (*const contains_key_by_state[NIDUS_BLOOM_STATES])(const nidus_bloom *, const void *, size_t) = BY_STATE(
    nidus_bloom_contains_key_any, contains_key_base, V3(contains_key), contains_key_base, V3(contains_key));
static nidus_status (*const add_hash_by_state[NIDUS_BLOOM_STATES])(nidus_bloom *, uint64_t, bool *) = BY_STATE(
    nidus_bloom_add_any, nidus_bloom_add_any, nidus_bloom_add_any, add_hash_base, V3(add_hash));
static nidus_status (*const add_key_by_state[NIDUS_BLOOM_STATES])(nidus_bloom *, const void *, size_t, bool *) = BY_STATE(
    nidus_bloom_add_key_any, nidus_bloom_add_key_any, nidus_bloom_add_key_any, add_key_base, V3(add_key));

bool nidus_bloom_contains_hash(const nidus_bloom *bf, uint64_t hash)
{
    return contains_hash_by_state[nidus_bloom_state(bf)](bf, hash);
}

bool nidus_bloom_contains(const nidus_bloom *bf, const void *key, size_t len)
{
    return contains_key_by_state[nidus_bloom_state(bf)](bf, key, len);
}

nidus_status nidus_bloom_add_hash(nidus_bloom *bf, uint64_t hash, bool *added)
{
    return add_hash_by_state[nidus_bloom_state(bf)](bf, hash, added);
}

nidus_status nidus_bloom_add(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return add_key_by_state[nidus_bloom_state(bf)](bf, key, len, added);
}

static uint64_t layers_memory(const nidus_bloom *bf)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < bf->nlayers; i++)
        n += nidus_bloom_layer_memory(nidus_bloom_layer_at(bf, i));
    return n;
}

static nidus_status grow(nidus_bloom *bf)
{
    if (bf->expansion == 0)
        return NIDUS_ERR_FULL;
    if (bf->nlayers >= bf->max_layers)
        return NIDUS_ERR_LIMIT_TABLES;
    const nidus_bloom_layer *last = nidus_bloom_layer_at(bf, bf->nlayers - 1u);
    if (last->capacity > UINT64_MAX / bf->expansion)
        return NIDUS_ERR_TOO_LARGE;
    /* sized and checked against what max_memory leaves, without wrapping, before anything is allocated */
    nidus_bloom_layer l;
    nidus_status st = nidus_bloom_layer_size(&l, last->capacity * bf->expansion,
                                             nidus_bloom_layer_error(bf->error_rate, bf->expansion, bf->nlayers),
                                             layer_layout(bf->layout), false);
    if (st)
        return st;
    uint64_t have = layers_memory(bf), need = nidus_bloom_layer_budget(&l);
    if (bf->max_memory && (have > bf->max_memory || need > bf->max_memory - have))
        return NIDUS_ERR_LIMIT_MEMORY;
    /* the first layer lives in the filter itself, the others in more->layers (a failure leaves the filter as it
     * was) */
    if ((st = nidus_bloom_layer_alloc(&l, bf->alloc)))
        return st;
    struct nidus_bloom_more *m = nidus_bloom_more(bf, bf->nlayers);
    if (!m) {
        nidus_bloom_layer_release(&l, bf->alloc);
        return NIDUS_ERR_NO_MEMORY;
    }
    m->layers[bf->nlayers - 1u] = l;
    bf->nlayers++;
    nidus_bloom_refresh_dispatch(bf);
    return NIDUS_OK;
}

/* Adds to the newest layer `l` (number `last`), growing first when it is full and the key is not in it. */
static inline nidus_status add_to_newest(nidus_bloom *bf, nidus_bloom_layer *l, unsigned last, uint64_t hash,
                                         bool *added)
{
    if (l->items >= l->capacity) {
        if (layer_has(bf, l, last, hash))
            return NIDUS_OK;
        nidus_status st = grow(bf);
        if (st)
            return st;
        last = bf->nlayers - 1u;
        l = nidus_bloom_layer_at(bf, last);
    }
    /* setting the newest layer's probes tells whether the key was there: any bit that was unset */
    if (layer_set(bf, l, last, hash)) {
        l->items++;
        if (added)
            *added = true;
    }
    return NIDUS_OK;
}

/* A filter with `more`: loading, grown or mapped. */
__attribute__((noinline)) static nidus_status add_layers(nidus_bloom *bf, uint64_t hash, bool *added)
{
    if (bf->more->loader)
        return NIDUS_ERR_READ_ONLY;
    unsigned last = bf->nlayers - 1u;
    if (last == 0) /* not reached: a one-layer filter with `more` is loading or a (read-only) view */
        return add_to_newest(bf, &bf->first, 0, hash, added);
    if (layer_has(bf, &bf->first, 0, hash))
        return NIDUS_OK;
    nidus_bloom_layer *rest = bf->more->layers;
    for (unsigned i = 1; i < last; i++)
        if (layer_has(bf, &rest[i - 1], i, hash))
            return NIDUS_OK;
    return add_to_newest(bf, &rest[last - 1], last, hash, added);
}

/* A filter without `more`: one layer, not loading (a compact filter's every add). */
__attribute__((noinline)) static nidus_status add_first(nidus_bloom *bf, uint64_t hash, bool *added)
{
    return add_to_newest(bf, &bf->first, 0, hash, added);
}

/* Two tail calls, no stack frame: each case saves only the registers it uses. */
__attribute__((noinline)) nidus_status nidus_bloom_add_any(nidus_bloom *bf, uint64_t hash, bool *added)
{
    if (added)
        *added = false;
    if (bf->read_only)
        return NIDUS_ERR_READ_ONLY;
    return bf->more ? add_layers(bf, hash, added) : add_first(bf, hash, added);
}

__attribute__((noinline)) nidus_status nidus_bloom_add_key_any(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return nidus_bloom_add_any(bf, nidus_bloom_hash(bf, key, len), added);
}

#define AHEAD NIDUS_BLOOM_AHEAD

/* The block of a blocked layer that a hash probes. */
static uint64_t layer_block(const nidus_bloom_layer *l, unsigned i, uint64_t hash)
{
    return l->layout == NIDUS_LAYER_SPLIT ? nidus_reduce(nidus_layer_hash(hash, i), l->size)
                                          : nidus_probe_of(hash, i, l->size).block;
}

__attribute__((noinline)) static void contains_many_base(const nidus_bloom *bf, const uint64_t *hashes, size_t n,
                                                          bool *out)
{
    nidus_bloom_fast_contains_many(bf, hashes, n, out, split_has8_portable);
}

__attribute__((noinline)) static size_t add_many_base(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh)
{
    return nidus_bloom_fast_add_many(bf, hashes, n, fresh, split_set8_portable);
}

nidus_status nidus_bloom_add_many_hash(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh, size_t *done)
{
    size_t k = 0;
    unsigned state = nidus_bloom_state(bf);
#if NIDUS_HAVE_ISA_V3
    if (state == (NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD | NIDUS_BLOOM_STATE_V3))
        k = nidus_bloom_add_many_v3(bf, hashes, n, fresh);
#endif
    if (state == (NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD))
        k = add_many_base(bf, hashes, n, fresh);
    for (; k < n; k++) { /* past the fast case (a full layer, growth, a view...): one at a time */
        nidus_status st = nidus_bloom_add_hash(bf, hashes[k], fresh ? &fresh[k] : NULL);
        if (st) {
            if (done)
                *done = k;
            return st;
        }
    }
    if (done)
        *done = n;
    return NIDUS_OK;
}

void nidus_bloom_contains_many_hash(const nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *out)
{
    if (nidus_bloom_state(bf) & NIDUS_BLOOM_STATE_LOOKUP) {
#if NIDUS_HAVE_ISA_V3
        if (nidus_bloom_state(bf) & NIDUS_BLOOM_STATE_V3) {
            nidus_bloom_contains_many_v3(bf, hashes, n, out);
            return;
        }
#endif
        contains_many_base(bf, hashes, n, out);
        return;
    }
    for (size_t k = 0; k < n; k++)
        out[k] = false;
    if (nidus_bloom_loader(bf))
        return;
    for (unsigned i = 0; i < bf->nlayers; i++) {
        const nidus_bloom_layer *l = nidus_bloom_layer_at(bf, i);
        if (l->layout == NIDUS_LAYER_PLAIN) { /* k lines a key: its own probes overlap already */
            for (size_t k = 0; k < n; k++)
                out[k] = out[k] || layer_has(bf, l, i, hashes[k]);
            continue;
        }
        /* the blocks of the keys AHEAD places on are requested while this one is checked */
        for (size_t k = 0; k < n && k < AHEAD; k++)
            nidus_block_prefetch(l->data, layer_block(l, i, hashes[k]));
        for (size_t k = 0; k < n; k++) {
            if (k + AHEAD < n)
                nidus_block_prefetch(l->data, layer_block(l, i, hashes[k + AHEAD]));
            out[k] = out[k] || layer_has(bf, l, i, hashes[k]);
        }
    }
}

nidus_status nidus_bloom_clear(nidus_bloom *bf)
{
    if (bf->read_only || nidus_bloom_loader(bf))
        return NIDUS_ERR_READ_ONLY;
    if (bf->nlayers > 1) {
        while (bf->nlayers > 1)
            nidus_bloom_layer_release(nidus_bloom_layer_at(bf, --bf->nlayers), bf->alloc);
        nidus_free(bf->alloc, bf->more); /* no loader (refused above), no mapping (views are read-only) */
        bf->more = NULL;
    }
    memset(bf->first.data, 0, (size_t)nidus_bloom_layer_bytes(&bf->first));
    bf->first.items = 0;
    nidus_bloom_refresh_dispatch(bf);
    return NIDUS_OK;
}

/* The bytes the filter holds: its struct (with a first layer's bits when they share its allocation), `more`
 * and every layer's own allocation or borrowed bytes. */
void nidus_bloom_get_stats(const nidus_bloom *bf, nidus_bloom_stats *s)
{
    uint64_t capacity = 0, items = 0;
    double bound = 0.0;
    for (unsigned i = 0; i < bf->nlayers; i++) {
        capacity += nidus_bloom_layer_at(bf, i)->capacity;
        items += nidus_bloom_layer_at(bf, i)->items;
        bound += nidus_bloom_layer_error(bf->error_rate, bf->expansion, i);
    }
    uint64_t memory = sizeof *bf + layers_memory(bf);
    if (bf->more)
        memory += sizeof *bf->more + (bf->nlayers - 1u) * sizeof bf->more->layers[0];
    *s = (nidus_bloom_stats){
        .capacity = capacity,
        .items = items,
        .memory_bytes = memory,
        .layers = bf->nlayers,
        .expansion = bf->expansion,
        .hashes = bf->first.k,
        .layout = bf->layout,
        .error_rate = bf->error_rate,
        .error_bound = bound,
        .bits_per_item = (double)memory * 8.0 / (double)capacity,
    };
}
