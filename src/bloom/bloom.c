/* SPDX-License-Identifier: BSD-3-Clause */
/* The scalable Bloom filter: RedisBloom's BF semantics and sizes (plain layers), or one cache line a key (split
 * blocks), with a bounded error. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "bloom_kernels.h"
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

/* The one dispatch point: each entry point is one switch on the filter's dispatch state, chosen when the state last
 * changed (nidus_bloom_refresh_dispatch), and a tail call into the copy of the kernels it names (bloom_kernels.h):
 * the fast case (LOOKUP; adds LOOKUP | ADD) or the general path, baseline or x86-64-v3 (V3). */
#define LOOKUP NIDUS_BLOOM_STATE_LOOKUP
#define ADD NIDUS_BLOOM_STATE_ADD
#define V3 NIDUS_BLOOM_STATE_V3

/* The usual state, a writable one-layer filter on the copy of the kernels this core runs (HOT), is tested before
 * the switch with one compare of the whole tag. A switch of this size compiles to a jump table: a table load and
 * two jumps, which cost the blocked layout's single lookups 8 % against a table of function pointers; the compare
 * is one predicted branch and a direct tail call. The switch still names every state. */
#if NIDUS_HAVE_ISA_V3
#define HOT V3
#define HOT_KERNEL(name) name##_v3
#else
#define HOT 0u
#define HOT_KERNEL(name) name##_base
#endif
#define IS_HOT(bf) ((bf)->tag == (NIDUS_BLOOM_TAG_V1 | HOT | LOOKUP | ADD))

bool nidus_bloom_contains_hash(const nidus_bloom *bf, uint64_t hash)
{
    if (__builtin_expect(IS_HOT(bf), 1))
        return HOT_KERNEL(nidus_bloom_kernel_contains_hash)(bf, hash);
    switch (nidus_bloom_state(bf)) {
    case LOOKUP:
    case LOOKUP | ADD:
        return nidus_bloom_kernel_contains_hash_base(bf, hash);
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP:
    case V3 | LOOKUP | ADD:
        return nidus_bloom_kernel_contains_hash_v3(bf, hash);
    case V3:
        return nidus_bloom_kernel_contains_any_v3(bf, hash);
#endif
    }
    return nidus_bloom_kernel_contains_any_base(bf, hash);
}

bool nidus_bloom_contains(const nidus_bloom *bf, const void *key, size_t len)
{
    if (__builtin_expect(IS_HOT(bf), 1))
        return HOT_KERNEL(nidus_bloom_kernel_contains_key)(bf, key, len);
    switch (nidus_bloom_state(bf)) {
    case LOOKUP:
    case LOOKUP | ADD:
        return nidus_bloom_kernel_contains_key_base(bf, key, len);
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP:
    case V3 | LOOKUP | ADD:
        return nidus_bloom_kernel_contains_key_v3(bf, key, len);
    case V3:
        return nidus_bloom_kernel_contains_key_any_v3(bf, key, len);
#endif
    }
    return nidus_bloom_kernel_contains_key_any_base(bf, key, len);
}

nidus_status nidus_bloom_add_hash(nidus_bloom *bf, uint64_t hash, bool *added)
{
    if (__builtin_expect(IS_HOT(bf), 1))
        return HOT_KERNEL(nidus_bloom_kernel_add_hash)(bf, hash, added);
    switch (nidus_bloom_state(bf)) {
    case LOOKUP | ADD:
        return nidus_bloom_kernel_add_hash_base(bf, hash, added);
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP | ADD:
        return nidus_bloom_kernel_add_hash_v3(bf, hash, added);
    case V3:
    case V3 | LOOKUP:
        return nidus_bloom_kernel_add_any_v3(bf, hash, added);
#endif
    }
    return nidus_bloom_kernel_add_any_base(bf, hash, added);
}

nidus_status nidus_bloom_add(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    if (__builtin_expect(IS_HOT(bf), 1))
        return HOT_KERNEL(nidus_bloom_kernel_add_key)(bf, key, len, added);
    switch (nidus_bloom_state(bf)) {
    case LOOKUP | ADD:
        return nidus_bloom_kernel_add_key_base(bf, key, len, added);
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP | ADD:
        return nidus_bloom_kernel_add_key_v3(bf, key, len, added);
    case V3:
    case V3 | LOOKUP:
        return nidus_bloom_kernel_add_key_any_v3(bf, key, len, added);
#endif
    }
    return nidus_bloom_kernel_add_key_any_base(bf, key, len, added);
}

/* Batches: the fast case's loop while it holds (adds: until the layer is full), then one at a time. */
nidus_status nidus_bloom_add_many_hash(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh, size_t *done)
{
    size_t k = 0;
    switch (nidus_bloom_state(bf)) {
    case LOOKUP | ADD:
        k = nidus_bloom_kernel_add_many_base(bf, hashes, n, fresh);
        break;
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP | ADD:
        k = nidus_bloom_kernel_add_many_v3(bf, hashes, n, fresh);
        break;
#endif
    }
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
    switch (nidus_bloom_state(bf)) {
    case LOOKUP:
    case LOOKUP | ADD:
        nidus_bloom_kernel_contains_many_base(bf, hashes, n, out);
        return;
#if NIDUS_HAVE_ISA_V3
    case V3 | LOOKUP:
    case V3 | LOOKUP | ADD:
        nidus_bloom_kernel_contains_many_v3(bf, hashes, n, out);
        return;
    case V3:
        nidus_bloom_kernel_contains_many_any_v3(bf, hashes, n, out);
        return;
#endif
    }
    nidus_bloom_kernel_contains_many_any_base(bf, hashes, n, out);
}

#undef LOOKUP
#undef ADD
#undef V3

static uint64_t layers_memory(const nidus_bloom *bf)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < bf->nlayers; i++)
        n += nidus_bloom_layer_memory(nidus_bloom_layer_at(bf, i));
    return n;
}

nidus_status nidus_bloom_grow(nidus_bloom *bf)
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
