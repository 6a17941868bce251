/* SPDX-License-Identifier: BSD-3-Clause */
/* The two filter types as the shared code sees them: one table of functions each. */
#include "commands.h"
#include "common.h"

static nidus_status cf_dump(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_cuckoo_dump_chunk(f, c, b, cap, l, n);
}
static nidus_status cf_load(void **f, const void *chunk, size_t len, uint64_t max_bytes)
{
    return nidus_cuckoo_load_chunk((nidus_cuckoo **)f, chunk, len, max_bytes, &mod_allocator);
}
static bool cf_loading(const void *f) { return nidus_cuckoo_loading(f); }
static bool cf_relocate(void **f, const nidus_mover *m, uint64_t *cursor)
{
    return nidus_cuckoo_relocate((nidus_cuckoo **)f, m, cursor);
}
static void cf_destroy(void *f) { nidus_cuckoo_free(f); }
static uint64_t cf_memory(const void *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    return s.memory_bytes;
}
static uint64_t cf_items(const void *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    return s.items;
}

static nidus_status bf_dump(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_bloom_dump_chunk(f, c, b, cap, l, n);
}
static nidus_status bf_load(void **f, const void *chunk, size_t len, uint64_t max_bytes)
{
    return nidus_bloom_load_chunk((nidus_bloom **)f, chunk, len, max_bytes, &mod_allocator);
}
static bool bf_loading(const void *f) { return nidus_bloom_loading(f); }
static bool bf_relocate(void **f, const nidus_mover *m, uint64_t *cursor)
{
    return nidus_bloom_relocate((nidus_bloom **)f, m, cursor);
}
static void bf_destroy(void *f) { nidus_bloom_free(f); }
static uint64_t bf_memory(const void *f)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    return s.memory_bytes;
}
static uint64_t bf_items(const void *f)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    return s.items;
}

const mod_filter_ops mod_cf_ops = {
    &mod_cf_type, cf_dump, cf_load, cf_loading, cf_destroy, cf_memory, cf_items, false, false,
    NIDUS_CF_LOADCHUNK, "Couldn't load chunk!", "Invalid position", "Invalid position", "Couldn't create filter!",
    "Invalid header", MOD_MSG_CF_LOADING, cf_relocate,
};

const mod_filter_ops mod_bf_ops = {
    &mod_bf_type, bf_dump, bf_load, bf_loading, bf_destroy, bf_memory, bf_items, true, true,
    NIDUS_BF_LOADCHUNK, "ERR received bad data", "ERR Second argument must be numeric", "Second argument must be numeric",
    "ERR received bad data", "ERR received bad data", MOD_MSG_BF_LOADING, bf_relocate,
};
