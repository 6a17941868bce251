/* SPDX-License-Identifier: BSD-3-Clause */
/* The public cuckoo filter: hashing once, then the tables from the newest to the oldest. */
#include <math.h>

#include "alloc.h"
#include "cuckoo_add_impl.h"
#include "cuckoo_filter.h"
#include "cuckoo_packed.h"
#include "file_io.h"
#include "params.h"

nidus_status nidus_cuckoo_check_limits(unsigned expansion, unsigned max_tables, unsigned max_kicks)
{
    if (expansion > NIDUS_CUCKOO_MAX_EXPANSION || max_tables < 1 || max_tables > NIDUS_CUCKOO_MAX_TABLES ||
        max_kicks < 1 || max_kicks > NIDUS_CUCKOO_MAX_KICKS)
        return NIDUS_ERR_INVALID_ARGUMENT;
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_new(const nidus_cuckoo_params *params, nidus_cuckoo **out)
{
    if (!params || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_cuckoo_plan plan;
    nidus_table_shape shape;
    unsigned max_kicks;
    nidus_status st = nidus_cuckoo_resolve(params, &plan, &shape, &max_kicks);
    if (st)
        return st;
    unsigned max_tables = params->max_tables ? params->max_tables : NIDUS_CUCKOO_DEFAULT_MAX_TABLES;
    st = nidus_cuckoo_check_limits(params->expansion, max_tables, max_kicks);
    if (st)
        return st;
    if (!nidus_cuckoo_fits(params->max_memory, 0, nidus_cuckoo_table_cost(&shape)))
        return NIDUS_ERR_LIMIT_MEMORY;
    const nidus_allocator *alloc = nidus_alloc_pick(params->allocator);
    if (nidus_cuckoo_packable_shape(&shape))
        return nidus_cuckoo_packed_new(alloc, &shape, params->seed, max_kicks, params->expansion, max_tables,
                                       params->max_memory, out);
    nidus_cuckoo *cf = nidus_calloc(alloc, 1, sizeof *cf);
    if (!cf)
        return NIDUS_ERR_NO_MEMORY;
    *cf = (nidus_cuckoo){
        .alloc = alloc,
        .seed = params->seed,
        .hash8_flip = nidus_hash8_flip(params->seed),
        .base = shape,
        .max_kicks = max_kicks,
        .expansion = params->expansion,
        .max_tables = max_tables,
        .max_memory = params->max_memory,
    };
    cf->tables = nidus_malloc(alloc, sizeof *cf->tables);
    st = cf->tables ? nidus_table_init(&cf->tables[0], &shape, max_kicks, alloc)
                    : NIDUS_ERR_NO_MEMORY;
    if (st) {
        nidus_free(alloc, cf->tables);
        nidus_free(alloc, cf);
        return st;
    }
    cf->ntables = 1;
    *out = cf;
    return NIDUS_OK;
}

void nidus_cuckoo_free(nidus_cuckoo *cf)
{
    if (!cf)
        return;
    if (nidus_cuckoo_form(cf)) {
        nidus_cuckoo_packed_free(cf);
        return;
    }
    const nidus_allocator *alloc = cf->alloc;
    for (unsigned k = 0; k < cf->ntables; k++)
        nidus_table_release(&cf->tables[k], alloc);
    nidus_free(alloc, cf->tables);
    nidus_cuckoo_loader_free(cf);
    nidus_mapping_release(cf->mapping, alloc);
    nidus_free(alloc, cf);
}

uint64_t nidus_cuckoo_hash(const nidus_cuckoo *cf, const void *key, size_t len)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_hash(cf, key, len);
    return nidus_hash_bytes(key, len, cf->seed);
}

bool nidus_cuckoo_is_read_only(const nidus_cuckoo *cf)
{
    const nidus_cuckoo *full = nidus_cuckoo_full_of(cf);
    return full && full->read_only;
}

/* Every bucket pair of the key is full: make room in the newest table, or grow. Out of line, so that the common
 * add needs no stack frame for it. */
static __attribute__((noinline)) nidus_status add_slow(nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table *newest = &cf->tables[cf->ntables - 1];
    nidus_table_locate(newest, hash, &i, &fp);
    nidus_status st = nidus_table_add_full(newest, cf->alloc, i, fp);
    if (st != NIDUS_ERR_FULL || cf->expansion == 0)
        return st;
    if ((st = nidus_cuckoo_grow(cf)))
        return st;
    newest = &cf->tables[cf->ntables - 1];
    nidus_table_locate(newest, hash, &i, &fp);
    return nidus_table_add(newest, cf->alloc, i, fp); /* an empty table: a free slot */
}

/* Any filter: a free slot in any table, from the newest, else add_slow. */
static __attribute__((noinline)) nidus_status add_any(nidus_cuckoo *cf, uint64_t hash)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    for (unsigned k = cf->ntables; k-- > 0;) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        if (nidus_table_place_free(&cf->tables[k], i, fp))
            return NIDUS_OK;
    }
    return add_slow(cf, hash);
}

/* A writable filter that never grew, whose table's kernel is `fast` (NIDUS_FAST_PLAIN: b=4 f=12 and other
 * one-word plain buckets; NIDUS_FAST_SEMI: semi-sorted f=13): the common cases, added to without a loop. */
static inline bool add_fast_ok(const nidus_cuckoo *cf, unsigned char fast)
{
    return cf->ntables == 1 && !cf->loader && !cf->read_only && cf->tables->fast == fast;
}

/* XXH3 of a short key; an 8-byte key (the common case: integers, hashes) with the seed's part precomputed. */
static inline __attribute__((always_inline)) uint64_t hash_short(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return len == 8 ? nidus_hash8(key, cf->hash8_flip) : nidus_hash_short(key, len, cf->seed);
}

/* The add of such a table: both buckets read with one load each, the item put into the emptier one with one
 * store; both full (or a duplicate that fills its pair) is a tail call to add_slow. `semi` is a constant at
 * every call, so each caller compiles one kernel. */
static inline __attribute__((always_inline)) nidus_status add_one_word(nidus_cuckoo *cf, uint64_t hash, bool semi)
{
    nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
    if (!(semi ? nidus_table_semi_put_pair(t, i, j, fp) : nidus_table_word_put_pair(t, i, j, fp)))
        return add_slow(cf, hash);
    t->occupied++;
    return NIDUS_OK;
}

static __attribute__((noinline)) nidus_status add_key_any(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_add_hash(cf, nidus_hash_bytes(key, len, cf->seed));
}

/* Everything but the plain one-word case, out of line so that the plain add keeps no stack frame (the
 * semi-sorted kernel needs more registers): a semi-sorted one-word table inline here, the rest further out. */
static inline __attribute__((always_inline)) nidus_status add_hash_rest(nidus_cuckoo *cf, uint64_t hash)
{
    if (add_fast_ok(cf, NIDUS_FAST_SEMI))
        return add_one_word(cf, hash, true);
    return add_any(cf, hash);
}

static inline __attribute__((always_inline)) nidus_status add_key_rest(nidus_cuckoo *cf, const void *key,
                                                                       size_t len)
{
    if (len <= 16 && add_fast_ok(cf, NIDUS_FAST_SEMI))
        return add_one_word(cf, hash_short(cf, key, len), true);
    return add_key_any(cf, key, len);
}

/* One copy of the out-of-line rest per instruction set; `rest` below is the copy of the caller's. */
typedef nidus_status (*add_hash_fn)(nidus_cuckoo *cf, uint64_t hash);
typedef nidus_status (*add_key_fn)(nidus_cuckoo *cf, const void *key, size_t len);

static __attribute__((noinline)) nidus_status add_hash_rest_base(nidus_cuckoo *cf, uint64_t hash)
{
    return add_hash_rest(cf, hash);
}

static __attribute__((noinline)) nidus_status add_key_rest_base(nidus_cuckoo *cf, const void *key, size_t len)
{
    return add_key_rest(cf, key, len);
}

static inline __attribute__((always_inline)) nidus_status add_hash(nidus_cuckoo *cf, uint64_t hash,
                                                                   add_hash_fn rest)
{
    if (add_fast_ok(cf, NIDUS_FAST_PLAIN))
        return add_one_word(cf, hash, false);
    return rest(cf, hash);
}

/* By key: XXH3's short-key branch inlined too (as in nidus_cuckoo_contains). */
static inline __attribute__((always_inline)) nidus_status add_key(nidus_cuckoo *cf, const void *key, size_t len,
                                                                  add_key_fn rest)
{
    if (len <= 16 && add_fast_ok(cf, NIDUS_FAST_PLAIN))
        return add_one_word(cf, hash_short(cf, key, len), false);
    return rest(cf, key, len);
}

/* The same compiled for x86-64-v3 (isa_impl.h), taken when the filter's first table chose it: shifts by a
 * table's field without the shift-count register, fewer moves. A single add at 10M items is bound by how many
 * adds fit in the core's window while their buckets are read, so every instruction counts. */
#if NIDUS_HAVE_ISA_V3
static NIDUS_TARGET_V3 __attribute__((noinline)) nidus_status add_hash_rest_v3(nidus_cuckoo *cf, uint64_t hash)
{
    return add_hash_rest(cf, hash);
}
static NIDUS_TARGET_V3 __attribute__((noinline)) nidus_status add_key_rest_v3(nidus_cuckoo *cf, const void *key,
                                                                              size_t len)
{
    return add_key_rest(cf, key, len);
}
static NIDUS_TARGET_V3 __attribute__((noinline)) nidus_status add_hash_v3(nidus_cuckoo *cf, uint64_t hash)
{
    return add_hash(cf, hash, add_hash_rest_v3);
}
static NIDUS_TARGET_V3 __attribute__((noinline)) nidus_status add_key_v3(nidus_cuckoo *cf, const void *key,
                                                                         size_t len)
{
    return add_key(cf, key, len, add_key_rest_v3);
}
#endif

nidus_status nidus_cuckoo_add_hash(nidus_cuckoo *cf, uint64_t hash)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_add_hash(cf, hash);
#if NIDUS_HAVE_ISA_V3
    if (cf->tables[0].isa == NIDUS_ISA_V3)
        return add_hash_v3(cf, hash);
#endif
    return add_hash(cf, hash, add_hash_rest_base);
}

/* Out of line: a nested call in nidus_cuckoo_add would give it a stack frame on every path. */
static __attribute__((noinline)) nidus_status add_key_packed(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_packed_add_hash(cf, nidus_cuckoo_packed_hash(cf, key, len));
}

nidus_status nidus_cuckoo_add(nidus_cuckoo *cf, const void *key, size_t len)
{
    if (nidus_cuckoo_form(cf))
        return add_key_packed(cf, key, len);
#if NIDUS_HAVE_ISA_V3
    if (cf->tables[0].isa == NIDUS_ISA_V3)
        return add_key_v3(cf, key, len);
#endif
    return add_key(cf, key, len, add_key_rest_base);
}

nidus_status nidus_cuckoo_add_unique_hash(nidus_cuckoo *cf, uint64_t hash, bool *added)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_add_unique_hash(cf, hash, added);
    bool dummy;
    if (!added)
        added = &dummy;
    *added = false;
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    if (nidus_cuckoo_contains_hash(cf, hash))
        return NIDUS_OK;
    nidus_status st = nidus_cuckoo_add_hash(cf, hash);
    *added = st == NIDUS_OK;
    return st;
}

nidus_status nidus_cuckoo_add_unique(nidus_cuckoo *cf, const void *key, size_t len, bool *added)
{
    return nidus_cuckoo_add_unique_hash(cf, nidus_cuckoo_hash(cf, key, len), added);
}

/* Any filter: every table from the oldest (none while loading). */
static bool contains_any(const nidus_cuckoo *cf, uint64_t hash)
{
    if (cf->loader)
        return false;
    for (unsigned k = 0; k < cf->ntables; k++)
        if (nidus_table_lookup(&cf->tables[k], hash))
            return true;
    return false;
}

static __attribute__((noinline)) bool contains_key_any(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return contains_any(cf, nidus_hash_bytes(key, len, cf->seed));
}


/* Lookups in a filter of one t->fast table (one that never grew, the common case): leaf functions, one per
 * kernel and instruction set, that the public calls reach by a tail call after testing the filter once, so
 * that neither needs a stack frame. */
#define NIDUS_FAST_KERNELS(SUFFIX, TARGET)                                                                         \
    static TARGET __attribute__((noinline)) bool plain_key_##SUFFIX(const nidus_cuckoo *cf, const nidus_table *t, \
                                                                    const void *key, size_t len)                \
    {                                                                                                            \
        uint64_t i, j;                                                                                           \
        uint32_t fp = nidus_table_fast_locate(t, hash_short(cf, key, len), &i, &j);                             \
        return nidus_table_plain_probe(t, i, j, fp);                                                             \
    }                                                                                                            \
    static TARGET __attribute__((noinline)) bool semi_key_##SUFFIX(const nidus_cuckoo *cf, const nidus_table *t,  \
                                                                   const void *key, size_t len)                 \
    {                                                                                                            \
        uint64_t i, j;                                                                                           \
        uint32_t fp = nidus_table_fast_locate(t, hash_short(cf, key, len), &i, &j);                             \
        return nidus_table_semi_probe(t, i, j, fp);                                                              \
    }                                                                                                            \
    static TARGET __attribute__((noinline)) bool plain_hash_##SUFFIX(const nidus_table *t, uint64_t hash)       \
    {                                                                                                            \
        uint64_t i, j;                                                                                           \
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);                                                  \
        return nidus_table_plain_probe(t, i, j, fp);                                                             \
    }                                                                                                            \
    static TARGET __attribute__((noinline)) bool semi_hash_##SUFFIX(const nidus_table *t, uint64_t hash)        \
    {                                                                                                            \
        uint64_t i, j;                                                                                           \
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);                                                  \
        return nidus_table_semi_probe(t, i, j, fp);                                                              \
    }

NIDUS_FAST_KERNELS(base, )
#if NIDUS_HAVE_ISA_V3
NIDUS_FAST_KERNELS(v3, NIDUS_TARGET_V3)
#endif

/* The table of a filter that takes a fast kernel, or NULL. */
static inline const nidus_table *fast_table(const nidus_cuckoo *cf)
{
    return cf->ntables == 1 && !cf->loader && cf->tables[0].fast != NIDUS_FAST_NONE ? cf->tables : NULL;
}

static inline __attribute__((always_inline)) bool contains_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    if (cf->ntables == 1 && !cf->loader)
        return nidus_table_lookup(cf->tables, hash);
    return contains_any(cf, hash);
}

static inline __attribute__((always_inline)) uint64_t count_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t n = 0;
    if (cf->loader)
        return 0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        n += nidus_table_count_pair(&cf->tables[k], i, fp);
    }
    return n;
}

/* Out of line, so that the public call, whose fast case is a tail call to a leaf kernel, keeps no stack frame. */
static __attribute__((noinline)) bool contains_hash_base(const nidus_cuckoo *cf, uint64_t hash)
{
    return contains_hash(cf, hash);
}

/* The general paths compiled for x86-64-v3 (isa_impl.h) too, taken when the filter's first table chose it. */
#if NIDUS_HAVE_ISA_V3
static NIDUS_TARGET_V3 __attribute__((noinline)) bool contains_hash_v3(const nidus_cuckoo *cf, uint64_t hash)
{
    return contains_hash(cf, hash);
}
static NIDUS_TARGET_V3 __attribute__((noinline)) uint64_t count_hash_v3(const nidus_cuckoo *cf, uint64_t hash)
{
    return count_hash(cf, hash);
}
#define NIDUS_V3(cf) ((cf)->tables[0].isa == NIDUS_ISA_V3)
#endif

bool nidus_cuckoo_contains(const nidus_cuckoo *cf, const void *key, size_t len)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_contains_hash(cf, nidus_cuckoo_packed_hash(cf, key, len));
    const nidus_table *t = fast_table(cf);
    if (t && len <= 16) {
#if NIDUS_HAVE_ISA_V3
        if (t->isa == NIDUS_ISA_V3)
            return t->fast == NIDUS_FAST_PLAIN ? plain_key_v3(cf, t, key, len) : semi_key_v3(cf, t, key, len);
#endif
        return t->fast == NIDUS_FAST_PLAIN ? plain_key_base(cf, t, key, len) : semi_key_base(cf, t, key, len);
    }
    return contains_key_any(cf, key, len);
}

bool nidus_cuckoo_contains_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_contains_hash(cf, hash);
    const nidus_table *t = fast_table(cf);
#if NIDUS_HAVE_ISA_V3
    if (t && t->isa == NIDUS_ISA_V3)
        return t->fast == NIDUS_FAST_PLAIN ? plain_hash_v3(t, hash) : semi_hash_v3(t, hash);
    if (NIDUS_V3(cf))
        return contains_hash_v3(cf, hash);
#endif
    if (t)
        return t->fast == NIDUS_FAST_PLAIN ? plain_hash_base(t, hash) : semi_hash_base(t, hash);
    return contains_hash_base(cf, hash);
}

uint64_t nidus_cuckoo_count_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_count_hash(cf, hash);
#if NIDUS_HAVE_ISA_V3
    if (NIDUS_V3(cf))
        return count_hash_v3(cf, hash);
#endif
    return count_hash(cf, hash);
}

static uint64_t total_items(const nidus_cuckoo *cf)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < cf->ntables; k++)
        n += nidus_table_items(&cf->tables[k]);
    return n;
}

nidus_status nidus_cuckoo_remove_hash(nidus_cuckoo *cf, uint64_t hash)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_remove_hash(cf, hash);
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    for (unsigned k = cf->ntables; k-- > 0;) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        if (nidus_table_remove(&cf->tables[k], i, fp)) {
            cf->deleted++;
            /* As RedisBloom: once removes pass a tenth of the items, try to give back whole tables. */
            if (cf->ntables > 1 && (double)cf->deleted > 0.10 * (double)total_items(cf))
                nidus_cuckoo_compact(cf, NULL);
            return NIDUS_OK;
        }
    }
    return NIDUS_ERR_NOT_FOUND;
}

nidus_status nidus_cuckoo_remove(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_remove_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

uint64_t nidus_cuckoo_count(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_count_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

nidus_status nidus_cuckoo_clear(nidus_cuckoo *cf)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_clear(cf);
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    while (cf->ntables > 1)
        nidus_table_release(&cf->tables[--cf->ntables], cf->alloc);
    nidus_table_clear(&cf->tables[0]);
    cf->deleted = 0;
    return NIDUS_OK;
}

uint64_t nidus_cuckoo_tables_memory(const nidus_cuckoo *cf)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < cf->ntables; k++)
        n += nidus_table_memory(&cf->tables[k]);
    return n;
}

void nidus_cuckoo_get_stats(const nidus_cuckoo *cf, nidus_cuckoo_stats *s)
{
    if (nidus_cuckoo_form(cf)) {
        nidus_cuckoo_packed_get_stats(cf, s);
        return;
    }
    const nidus_table *t0 = &cf->tables[0];
    uint64_t items = 0, overflow = 0, occupied = 0, slots = 0;
    double bound = 0.0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        items += nidus_table_items(t);
        overflow += t->overflow.total;
        occupied += t->occupied;
        slots += t->shape.buckets * t->shape.bucket_size;
        bound += nidus_cuckoo_error_bound(t->shape.bucket_size, t->shape.fp_bits);
    }
    uint64_t memory = sizeof *cf + cf->ntables * sizeof *cf->tables + nidus_cuckoo_tables_memory(cf);
    uint64_t capacity = 0; /* what each table was sized to hold */
    for (unsigned k = 0; k < cf->ntables; k++)
        capacity += nidus_cuckoo_capacity_of(&cf->tables[k].shape, cf->max_kicks);
    *s = (nidus_cuckoo_stats){
        .items = items,
        .overflow_items = overflow,
        .buckets = t0->shape.buckets,
        .slots = t0->shape.buckets * t0->shape.bucket_size,
        .bucket_size = t0->shape.bucket_size,
        .fingerprint_bits = t0->shape.fp_bits,
        .max_kicks = cf->max_kicks,
        .semi_sort = t0->shape.semi_sort,
        .load = (double)occupied / (double)slots,
        .memory_bytes = memory,
        .capacity = capacity,
        .bits_per_item = (double)memory * 8.0 / (double)(capacity ? capacity : 1),
        .error_bound = bound < 1.0 ? bound : 1.0,
        .target_error = nidus_cuckoo_error_bound(cf->base.bucket_size, cf->base.fp_bits),
        .tables = cf->ntables,
        .expansion = cf->expansion,
        .max_tables = cf->max_tables,
        .max_memory = cf->max_memory,
        .total_slots = slots,
        .items_deleted = cf->deleted,
    };
}

nidus_status nidus_cuckoo_get_table_stats(const nidus_cuckoo *cf, unsigned index, nidus_cuckoo_table_stats *s)
{
    if (nidus_cuckoo_form(cf))
        return nidus_cuckoo_packed_get_table_stats(cf, index, s);
    if (index >= cf->ntables || !s)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const nidus_table *t = &cf->tables[index];
    *s = (nidus_cuckoo_table_stats){
        .buckets = t->shape.buckets,
        .items = nidus_table_items(t),
        .fingerprint_bits = t->shape.fp_bits,
        .load = (double)t->occupied / (double)(t->shape.buckets * t->shape.bucket_size),
        .error_bound = nidus_cuckoo_error_bound(t->shape.bucket_size, t->shape.fp_bits),
        .memory_bytes = nidus_table_memory(t),
    };
    return NIDUS_OK;
}
