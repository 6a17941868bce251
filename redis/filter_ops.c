/* SPDX-License-Identifier: BSD-3-Clause */
/* The two filter types as the shared code sees them: a kind, through which every filter call goes as a
 * nidus_filter made around the value on the stack (nidus_filter_ref_init: no allocation), and the type's own
 * reply strings. */
#include "commands.h"
#include "common.h"
#include "windowed.h"

const mod_filter_ops mod_cf_ops = {
    &mod_cf_type, NIDUS_KIND_CUCKOO, false, false, NIDUS_CF_LOADCHUNK, "Couldn't load chunk!", "Invalid position",
    "Invalid position", "Couldn't create filter!", "Invalid header", MOD_MSG_CF_LOADING,
};

const mod_filter_ops mod_bf_ops = {
    &mod_bf_type, NIDUS_KIND_BLOOM, true, true, NIDUS_BF_LOADCHUNK, "ERR received bad data",
    "ERR Second argument must be numeric", "Second argument must be numeric", "ERR received bad data",
    "ERR received bad data", MOD_MSG_BF_LOADING,
};

nidus_filter *mod_filter(nidus_filter_ref *ref, const mod_filter_ops *t, const void *value)
{
    return nidus_filter_ref_init(ref, t->kind, (void *)value);
}

uint64_t mod_filter_memory(const mod_filter_ops *t, const void *value)
{
    nidus_filter_ref ref;
    nidus_filter_stats s;
    nidus_filter_get_stats(mod_filter(&ref, t, value), &s);
    return s.memory_bytes;
}

uint64_t mod_filter_items(const mod_filter_ops *t, const void *value)
{
    nidus_filter_ref ref;
    nidus_filter_stats s;
    nidus_filter_get_stats(mod_filter(&ref, t, value), &s);
    return s.items;
}

bool mod_filter_loading(const mod_filter_ops *t, const void *value)
{
    nidus_filter_ref ref;
    return nidus_filter_loading(mod_filter(&ref, t, value));
}

void mod_filter_free(const mod_filter_ops *t, void *value)
{
    if (value && t->kind == NIDUS_KIND_WINDOW)
        mod_window_values--;
    nidus_filter_ref ref;
    nidus_filter_free(mod_filter(&ref, t, value));
}

nidus_status mod_filter_dump_chunk(const mod_filter_ops *t, const void *value, uint64_t cursor, void *buf, size_t cap,
                                   size_t *len, uint64_t *next)
{
    nidus_filter_ref ref;
    return nidus_filter_dump_chunk(mod_filter(&ref, t, value), cursor, buf, cap, len, next);
}

nidus_status mod_filter_load_chunk(const mod_filter_ops *t, void **value, const void *chunk, size_t len,
                                   uint64_t max_bytes)
{
    nidus_filter_ref ref;
    nidus_filter *f = mod_filter(&ref, t, *value);
    nidus_status st = nidus_filter_load_chunk(&f, t->kind, chunk, len, max_bytes, &mod_allocator);
    if (!*value && nidus_filter_typed(f) && t->kind == NIDUS_KIND_WINDOW)
        mod_window_values++; /* a header chunk made one */
    *value = nidus_filter_typed(f);
    return st;
}

bool mod_filter_relocate(const mod_filter_ops *t, void **value, const nidus_mover *mover, uint64_t *cursor)
{
    nidus_filter_ref ref;
    nidus_filter *f = mod_filter(&ref, t, *value);
    bool done = nidus_filter_relocate(f, mover, cursor);
    *value = nidus_filter_typed(f);
    return done;
}
