/* SPDX-License-Identifier: BSD-3-Clause */
/* The public calls on a cuckoo handle: the one place that reads a handle's first byte (cuckoo_dispatch.h) and so
 * chooses which form and which kernel serves a call.
 *
 * Each call is one switch on that byte, cached in the filter when its state changed, and a tail call into the
 * form that serves it: the full form's kernels (cuckoo_kernels.h) and general paths (cuckoo_filter.h), the packed
 * form, or the forward's writes (cuckoo_packed.h). A forward's reads are its full filter's: the same call again
 * on that filter, whose own byte chooses. A call by key that no kernel takes by key (a longer key, or a state
 * without a by-key kernel) hashes the key and takes the by-hash call's switch. Batches, merges and the calls
 * that change a handle's form choose here too. No form calls back into these. */
#include "cuckoo_dispatch.h"
#include "cuckoo_kernels.h"
#include "hash_impl.h"

/* A handle's first byte: a full filter's dispatch byte, or its form (NIDUS_DISPATCH_PACKED, _FORWARD). */
static inline unsigned dispatch_of(const nidus_cuckoo *h) { return *(const unsigned char *)h; }

static inline nidus_cuckoo *forward_full(const nidus_cuckoo *h)
{
    return ((const nidus_cuckoo_forward *)(const void *)h)->full;
}

static inline uint64_t packed_seed(const nidus_cuckoo *h)
{
    return ((const nidus_cuckoo_packed *)(const void *)h)->seed;
}

/* The bytes of one copy's fast forms (V: empty for the baseline copy, _V3 for the x86-64-v3 one): writable, and
 * all of them (the read-only views serve lookups). One list per copy, so a new form is named in one place. */
#define WRITABLE_FAST(V)                                                                                         \
    case NIDUS_DISPATCH_PLAIN##V:                                                                                \
    case NIDUS_DISPATCH_PLAIN_INLINE##V:                                                                         \
    case NIDUS_DISPATCH_SEMI##V:                                                                                 \
    case NIDUS_DISPATCH_SEMI_INLINE##V:                                                                          \
    case NIDUS_DISPATCH_BITS##V:                                                                                 \
    case NIDUS_DISPATCH_BITS_INLINE##V
#define ANY_FAST(V)                                                                                              \
    WRITABLE_FAST(V):                                                                                            \
    case NIDUS_DISPATCH_PLAIN_RO##V:                                                                             \
    case NIDUS_DISPATCH_SEMI_RO##V:                                                                              \
    case NIDUS_DISPATCH_BITS_RO##V

/* Each fast form's own kernel of an operation (OP: key or hash), for one copy (V as above; v: _base or _v3). */
#define ADD_KERNELS(V, v, OP, ...)                                                                               \
    case NIDUS_DISPATCH_PLAIN##V:                                                                                \
    case NIDUS_DISPATCH_PLAIN_INLINE##V:                                                                         \
        return nidus_kernel_add_plain_##OP##v(__VA_ARGS__);                                                      \
    case NIDUS_DISPATCH_SEMI##V:                                                                                 \
    case NIDUS_DISPATCH_SEMI_INLINE##V:                                                                          \
        return nidus_kernel_add_semi_##OP##v(__VA_ARGS__);                                                       \
    case NIDUS_DISPATCH_BITS##V:                                                                                 \
    case NIDUS_DISPATCH_BITS_INLINE##V:                                                                          \
        return nidus_kernel_add_bits_##OP##v(__VA_ARGS__)
#define LOOKUP_KERNELS(V, v, OP, ...)                                                                            \
    case NIDUS_DISPATCH_PLAIN_INLINE##V:                                                                         \
        return nidus_kernel_view_plain_##OP##v(__VA_ARGS__);                                                     \
    case NIDUS_DISPATCH_SEMI_INLINE##V:                                                                          \
        return nidus_kernel_view_semi_##OP##v(__VA_ARGS__);                                                      \
    case NIDUS_DISPATCH_PLAIN##V:                                                                                \
    case NIDUS_DISPATCH_PLAIN_RO##V:                                                                             \
        return nidus_kernel_plain_##OP##v(__VA_ARGS__);                                                          \
    case NIDUS_DISPATCH_SEMI##V:                                                                                 \
    case NIDUS_DISPATCH_SEMI_RO##V:                                                                              \
        return nidus_kernel_semi_##OP##v(__VA_ARGS__);                                                           \
    case NIDUS_DISPATCH_BITS##V:                                                                                 \
    case NIDUS_DISPATCH_BITS_INLINE##V:                                                                          \
    case NIDUS_DISPATCH_BITS_RO##V:                                                                              \
        return nidus_kernel_bits_##OP##v(__VA_ARGS__)

void nidus_cuckoo_free(nidus_cuckoo *h)
{
    if (!h)
        return;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        nidus_packed_free(h);
        return;
    case NIDUS_DISPATCH_FORWARD:
        nidus_forward_free(h);
        return;
    }
    nidus_full_free(h);
}

uint64_t nidus_cuckoo_hash(const nidus_cuckoo *h, const void *key, size_t len)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_hash_bytes(key, len, packed_seed(h));
    case NIDUS_DISPATCH_FORWARD:
        return nidus_hash_bytes(key, len, forward_full(h)->seed);
    }
    return nidus_hash_bytes(key, len, h->seed);
}

bool nidus_cuckoo_is_read_only(const nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return false;
    case NIDUS_DISPATCH_FORWARD:
        return forward_full(h)->read_only;
    }
    return h->read_only;
}

bool nidus_cuckoo_loading(const nidus_cuckoo *h) { return dispatch_of(h) == NIDUS_DISPATCH_LOADING; }

/* ---- adds */

static inline __attribute__((always_inline)) nidus_status add_hash(nidus_cuckoo *h, uint64_t hash);

/* A key no fast kernel takes (a longer key, another form): out of line, so that the public call's kernels are
 * reached by a tail call with no frame to set up. */
static __attribute__((noinline)) nidus_status add_key_rest(nidus_cuckoo *h, const void *key, size_t len)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_add_key(h, key, len);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_add_key(h, key, len);
    }
    return add_hash(h, nidus_hash_bytes(key, len, h->seed));
}

nidus_status nidus_cuckoo_add(nidus_cuckoo *h, const void *key, size_t len)
{
    if (len <= 16) {
        switch (dispatch_of(h)) {
            ADD_KERNELS(, _base, key, h, key, len);
#if NIDUS_HAVE_ISA_V3
            ADD_KERNELS(_V3, _v3, key, h, key, len);
#endif
        }
    }
    return add_key_rest(h, key, len);
}

nidus_status nidus_cuckoo_add_hash(nidus_cuckoo *h, uint64_t hash) { return add_hash(h, hash); }

/* The one switch of adds by hash: the public call's, and each add of a batch's (the byte may change with any add
 * that took the slow path). */
static inline __attribute__((always_inline)) nidus_status add_hash(nidus_cuckoo *h, uint64_t hash)
{
    switch (dispatch_of(h)) {
        ADD_KERNELS(, _base, hash, h, hash);
#if NIDUS_HAVE_ISA_V3
        ADD_KERNELS(_V3, _v3, hash, h, hash);
#endif
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_add_hash(h, hash);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_add_hash(h, hash);
    }
    return nidus_full_add_hash(h, hash);
}

nidus_status nidus_cuckoo_add_unique_hash(nidus_cuckoo *h, uint64_t hash, bool *added)
{
    bool dummy;
    if (!added)
        added = &dummy;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_add_unique_hash(h, hash, added);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_full_add_unique_hash(forward_full(h), hash, added);
    }
    return nidus_full_add_unique_hash(h, hash, added);
}

nidus_status nidus_cuckoo_add_unique(nidus_cuckoo *h, const void *key, size_t len, bool *added)
{
    return nidus_cuckoo_add_unique_hash(h, nidus_cuckoo_hash(h, key, len), added);
}

/* ---- lookups */

/* Lookups: the most common byte (a large one-table filter, this CPU's x86-64-v3 copy) is tested before the
 * switch's jump table. */

/* A lookup by key no fast kernel takes: out of line, as add_key_rest. */
static __attribute__((noinline)) bool contains_key_rest(const nidus_cuckoo *h, const void *key, size_t len)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_contains_key(h, key, len);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_cuckoo_contains(forward_full(h), key, len);
    case NIDUS_DISPATCH_LOADING:
        return false;
    }
    return nidus_cuckoo_contains_hash(h, nidus_hash_bytes(key, len, h->seed));
}

bool nidus_cuckoo_contains(const nidus_cuckoo *h, const void *key, size_t len)
{
    if (len <= 16) {
        unsigned d = dispatch_of(h);
#if NIDUS_HAVE_ISA_V3
        if (d == NIDUS_DISPATCH_PLAIN_INLINE_V3)
            return nidus_kernel_view_plain_key_v3(h, key, len);
#endif
        switch (d) {
            LOOKUP_KERNELS(, _base, key, h, key, len);
#if NIDUS_HAVE_ISA_V3
            LOOKUP_KERNELS(_V3, _v3, key, h, key, len);
#endif
        }
    }
    return contains_key_rest(h, key, len);
}

bool nidus_cuckoo_contains_hash(const nidus_cuckoo *h, uint64_t hash)
{
    unsigned d = dispatch_of(h);
#if NIDUS_HAVE_ISA_V3
    if (d == NIDUS_DISPATCH_PLAIN_INLINE_V3)
        return nidus_kernel_view_plain_hash_v3(h, hash);
#endif
    switch (d) {
        LOOKUP_KERNELS(, _base, hash, h, hash);
#if NIDUS_HAVE_ISA_V3
        LOOKUP_KERNELS(_V3, _v3, hash, h, hash);
    case NIDUS_DISPATCH_GENERAL_V3:
    case NIDUS_DISPATCH_ONE_V3:
        return nidus_kernel_contains_hash_v3(h, hash);
#endif
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_contains_hash(h, hash);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_cuckoo_contains_hash(forward_full(h), hash);
    case NIDUS_DISPATCH_LOADING:
        return false;
    }
    return nidus_kernel_contains_hash_base(h, hash);
}

uint64_t nidus_cuckoo_count_hash(const nidus_cuckoo *h, uint64_t hash)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_count_hash(h, hash);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_cuckoo_count_hash(forward_full(h), hash);
    case NIDUS_DISPATCH_LOADING:
        return 0;
#if NIDUS_HAVE_ISA_V3
    case NIDUS_DISPATCH_GENERAL_V3:
    case NIDUS_DISPATCH_ONE_V3:
    ANY_FAST(_V3):
        return nidus_kernel_count_hash_v3(h, hash);
#endif
    }
    return nidus_kernel_count_hash_base(h, hash);
}

uint64_t nidus_cuckoo_count(const nidus_cuckoo *h, const void *key, size_t len)
{
    return nidus_cuckoo_count_hash(h, nidus_cuckoo_hash(h, key, len));
}

/* ---- batches */

void nidus_cuckoo_contains_many_hash(const nidus_cuckoo *h, const uint64_t *hashes, size_t n, bool *out)
{
    switch (dispatch_of(h)) {
    ANY_FAST():
        nidus_kernel_many_hash_base(h, hashes, n, out);
        return;
#if NIDUS_HAVE_ISA_V3
    ANY_FAST(_V3):
        nidus_kernel_many_hash_v3(h, hashes, n, out);
        return;
#endif
    case NIDUS_DISPATCH_PACKED:
        nidus_packed_contains_many_hash(h, hashes, n, out);
        return;
    case NIDUS_DISPATCH_FORWARD:
        nidus_cuckoo_contains_many_hash(forward_full(h), hashes, n, out);
        return;
    case NIDUS_DISPATCH_LOADING:
        for (size_t k = 0; k < n; k++)
            out[k] = false;
        return;
    }
    nidus_full_contains_many_hash(h, hashes, n, out);
}

void nidus_cuckoo_contains_many(const nidus_cuckoo *h, const void *const *keys, const size_t *lens, size_t n,
                                bool *out)
{
    enum { HASH_BLOCK = 64 };
    switch (dispatch_of(h)) {
    ANY_FAST():
        nidus_kernel_many_key_base(h, keys, lens, n, out);
        return;
#if NIDUS_HAVE_ISA_V3
    ANY_FAST(_V3):
        nidus_kernel_many_key_v3(h, keys, lens, n, out);
        return;
#endif
    case NIDUS_DISPATCH_PACKED: /* one key at a time: a packed filter is small */
        for (size_t k = 0; k < n; k++)
            out[k] = nidus_packed_contains_key(h, keys[k], lens[k]);
        return;
    case NIDUS_DISPATCH_FORWARD:
        nidus_cuckoo_contains_many(forward_full(h), keys, lens, n, out);
        return;
    }
    /* the other full filters: a block of keys hashed into a local array, then the by-hash batch */
    uint64_t hashes[HASH_BLOCK];
    for (size_t base = 0; base < n; base += HASH_BLOCK) {
        size_t m = n - base < HASH_BLOCK ? n - base : HASH_BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = nidus_hash_bytes(keys[base + k], lens[base + k], h->seed);
        nidus_cuckoo_contains_many_hash(h, hashes, m, out + base);
    }
}

/* Requests the buckets a later add of `hash` reads in the full filter's newest table. */
static inline void add_prefetch(const nidus_cuckoo *cf, uint64_t hash)
{
    const nidus_table *t = &cf->tables[cf->ntables - 1];
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(t, hash, &i, &fp);
    nidus_table_prefetch(t, i);
    nidus_table_prefetch(t, nidus_table_alt(t, i, fp));
}

/* Adds make the same results as single calls (free slots in every table, kicks, growth). A writable one-table
 * filter with a fast kernel takes that kernel's batch (blocks: locate and prefetch, then put) until a slow path
 * changes its byte; the rest go one by one through add_hash's switch, a full filter's batch prefetching the
 * newest table's buckets of the keys AHEAD places on. A packed or forward handle may change form between two
 * adds, so it prefetches nothing. */
nidus_status nidus_cuckoo_add_many_hash(nidus_cuckoo *h, const uint64_t *hashes, size_t n, size_t *added)
{
    enum { AHEAD = 16 };
    unsigned d = dispatch_of(h);
    bool full = d != NIDUS_DISPATCH_PACKED && d != NIDUS_DISPATCH_FORWARD;
    size_t done = 0;
    nidus_status st = full && !nidus_cuckoo_writable(h) ? NIDUS_ERR_READ_ONLY : NIDUS_OK; /* even for n = 0 */
    if (st)
        n = 0;
    switch (d) {
    WRITABLE_FAST():
        done = nidus_kernel_add_many_hash_base(h, hashes, n, &st);
        break;
#if NIDUS_HAVE_ISA_V3
    WRITABLE_FAST(_V3):
        done = nidus_kernel_add_many_hash_v3(h, hashes, n, &st);
        break;
#endif
    }
    if (st)
        n = done;
    hashes += done, n -= done; /* the rest one by one: the byte changed */
    size_t first = done;
    done = 0;
    for (size_t k = 0; full && k < AHEAD && k < n; k++)
        add_prefetch(h, hashes[k]);
    for (; done < n; done++) {
        if (full && done + AHEAD < n)
            add_prefetch(h, hashes[done + AHEAD]);
        if ((st = add_hash(h, hashes[done])))
            break;
    }
    if (added)
        *added = first + done;
    return st;
}

/* The key variant hashes a block at a time into a local array and hands it to the hash variant. */
nidus_status nidus_cuckoo_add_many(nidus_cuckoo *h, const void *const *keys, const size_t *lens, size_t n,
                                   size_t *added)
{
    enum { HASH_BLOCK = 64 };
    uint64_t hashes[HASH_BLOCK];
    size_t total = 0;
    nidus_status st = NIDUS_OK;
    for (size_t base = 0; base < n && !st; base += HASH_BLOCK) {
        size_t m = n - base < HASH_BLOCK ? n - base : HASH_BLOCK, block_added = 0;
        for (size_t k = 0; k < m; k++)
            hashes[k] = nidus_cuckoo_hash(h, keys[base + k], lens[base + k]);
        st = nidus_cuckoo_add_many_hash(h, hashes, m, &block_added);
        total += block_added;
    }
    if (added)
        *added = total;
    return st;
}

/* ---- removes and whole-filter writes */

nidus_status nidus_cuckoo_remove_hash(nidus_cuckoo *h, uint64_t hash)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_remove_hash(h, hash);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_remove_hash(h, hash);
    }
    return nidus_full_remove_hash(h, hash);
}

nidus_status nidus_cuckoo_remove(nidus_cuckoo *h, const void *key, size_t len)
{
    return nidus_cuckoo_remove_hash(h, nidus_cuckoo_hash(h, key, len));
}

nidus_status nidus_cuckoo_clear(nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_clear(h);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_clear(h);
    }
    return nidus_full_clear(h);
}

nidus_status nidus_cuckoo_compact(nidus_cuckoo *h, unsigned *freed)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_compact(h, freed);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_compact(h, freed);
    }
    return nidus_full_compact(h, freed);
}

/* A packed filter has one table: nothing to step through (beginning only resets the count of removes). A
 * forward's full filter may have more; its handle settles after the write, as every forward write does. */
nidus_status nidus_cuckoo_compact_begin(nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_compact(h, NULL);
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_compact_begin(h);
    }
    return nidus_full_compact_begin(h);
}

nidus_status nidus_cuckoo_compact_step(nidus_cuckoo *h, uint64_t budget, bool *done)
{
    bool ignored;
    done = done ? done : &ignored;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        *done = true;
        return NIDUS_OK;
    case NIDUS_DISPATCH_FORWARD:
        return nidus_forward_compact_step(h, budget, done);
    }
    return nidus_full_compact_step(h, budget, done);
}

bool nidus_cuckoo_compacting(const nidus_cuckoo *h, nidus_cuckoo_compaction *at)
{
    nidus_cuckoo_compaction none = {0, 0}, *out = at ? at : &none;
    *out = none;
    unsigned d = dispatch_of(h);
    if (d == NIDUS_DISPATCH_PACKED)
        return false;
    const nidus_cuckoo *cf = d == NIDUS_DISPATCH_FORWARD ? forward_full(h) : h;
    if (!cf->compact_table || cf->compact_table >= cf->ntables)
        return false;
    /* a merge may have put a smaller sibling where the cursor points: past its last bucket reads as its end */
    uint64_t end = cf->tables[cf->compact_table].shape.buckets;
    *out = (nidus_cuckoo_compaction){cf->compact_table, cf->compact_bucket < end ? cf->compact_bucket : end};
    return true;
}

nidus_status nidus_cuckoo_compact_resume(nidus_cuckoo *h, const nidus_cuckoo_compaction *at)
{
    if (!at)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return NIDUS_ERR_INVALID_ARGUMENT; /* one table: no cursor is valid */
    case NIDUS_DISPATCH_FORWARD:
        h = forward_full(h); /* only sets the cursor: the handle stays as it is */
        break;
    }
    return nidus_full_compact_resume(h, at);
}

/* ---- figures */

void nidus_cuckoo_get_stats(const nidus_cuckoo *h, nidus_cuckoo_stats *s)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        nidus_packed_get_stats(h, s);
        return;
    case NIDUS_DISPATCH_FORWARD:
        nidus_forward_get_stats(h, s);
        return;
    }
    nidus_full_get_stats(h, s);
}

nidus_status nidus_cuckoo_get_table_stats(const nidus_cuckoo *h, unsigned index, nidus_cuckoo_table_stats *s)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_get_table_stats(h, index, s);
    case NIDUS_DISPATCH_FORWARD:
        h = forward_full(h);
        break;
    }
    return nidus_full_get_table_stats(h, index, s);
}

/* ---- encoding and chunks */

uint64_t nidus_cuckoo_encoded_size(const nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_encoded_size(h);
    case NIDUS_DISPATCH_FORWARD:
        h = forward_full(h);
        break;
    }
    return nidus_full_encoded_size(h);
}

nidus_status nidus_cuckoo_encode(const nidus_cuckoo *h, void *buf, size_t cap, size_t *written)
{
    if (!h || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_encode(h, buf, cap, written);
    case NIDUS_DISPATCH_FORWARD:
        h = forward_full(h);
        break;
    }
    return nidus_full_encode(h, buf, cap, written);
}

nidus_status nidus_cuckoo_dump_chunk(const nidus_cuckoo *h, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                     uint64_t *next)
{
    return nidus_cuckoo_dump_chunk_sum(h, cursor, buf, cap, len, next, NULL);
}

nidus_status nidus_cuckoo_dump_chunk_sum(const nidus_cuckoo *h, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                         uint64_t *next, nidus_dump_sum *sum)
{
    if (!h || !buf || !len || !next || cursor > UINT32_MAX)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_dump_chunk(h, cursor, buf, cap, len, next, sum);
    case NIDUS_DISPATCH_FORWARD:
        h = forward_full(h);
        break;
    }
    return nidus_full_dump_chunk(h, cursor, buf, cap, len, next, sum);
}

nidus_status nidus_cuckoo_load_chunk(nidus_cuckoo **filter, const void *chunk, size_t len, uint64_t max_bytes,
                                     const nidus_allocator *allocator)
{
    if (!filter || !chunk)
        return NIDUS_ERR_INVALID_ARGUMENT;
    bool loading = *filter && dispatch_of(*filter) == NIDUS_DISPATCH_LOADING; /* a packed filter never is */
    return nidus_full_load_chunk(filter, chunk, len, max_bytes, allocator, loading);
}

/* ---- merging */

nidus_status nidus_cuckoo_merge(nidus_cuckoo *dst, const nidus_cuckoo *src)
{
    if (!dst || !src)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_cuckoo_thawed wd, ws;
    nidus_cuckoo *merged;
    nidus_status st = nidus_full_merge(nidus_cuckoo_inspect(dst, &wd), nidus_cuckoo_inspect(src, &ws), &merged);
    if (!st)
        nidus_cuckoo_replace(dst, merged);
    return st;
}

size_t nidus_cuckoo_merge_difference(const nidus_cuckoo *dst, const nidus_cuckoo *src, char *buf, size_t cap)
{
    nidus_cuckoo_thawed wd, ws;
    return nidus_full_merge_difference(nidus_cuckoo_inspect(dst, &wd), nidus_cuckoo_inspect(src, &ws), buf, cap);
}

/* ---- forms */

unsigned nidus_cuckoo_form(const nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return NIDUS_FORM_PACKED;
    case NIDUS_DISPATCH_FORWARD:
        return NIDUS_FORM_FORWARD;
    }
    return NIDUS_FORM_FULL;
}

nidus_cuckoo *nidus_cuckoo_full_of(const nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return NULL;
    case NIDUS_DISPATCH_FORWARD:
        return forward_full(h);
    }
    return (nidus_cuckoo *)(uintptr_t)h;
}

const nidus_cuckoo *nidus_cuckoo_inspect(const nidus_cuckoo *h, nidus_cuckoo_thawed *w)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_inspect(h, w);
    case NIDUS_DISPATCH_FORWARD:
        return forward_full(h);
    }
    return h;
}

nidus_cuckoo *nidus_cuckoo_unpack(nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return nidus_packed_unpack(h);
    case NIDUS_DISPATCH_FORWARD:
        return forward_full(h);
    }
    return h;
}

void nidus_cuckoo_replace(nidus_cuckoo *h, nidus_cuckoo *full)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        nidus_packed_replace(h, full);
        return;
    case NIDUS_DISPATCH_FORWARD:
        nidus_forward_replace(h, full);
        return;
    }
    nidus_full_replace(h, full);
}

bool nidus_cuckoo_dispatch_fresh(const nidus_cuckoo *h)
{
    switch (dispatch_of(h)) {
    case NIDUS_DISPATCH_PACKED:
        return true;
    case NIDUS_DISPATCH_FORWARD:
        return nidus_full_dispatch_fresh(forward_full(h));
    }
    return nidus_full_dispatch_fresh(h);
}
