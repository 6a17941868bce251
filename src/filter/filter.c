/* SPDX-License-Identifier: BSD-3-Clause */
/* The kind-generic handle (nidus/filter.h): the one switch over the kinds, each case one call of the kind's own
 * function. Files are in filter_file.c. */
#include <stdio.h>

#include "filter.h"

#include "alloc.h"
#include "codec.h"
#include "nidus/hash.h"

/* The default error of nidus_filter_params (RedisBloom's and the CLI's). */
#define DEFAULT_ERROR 0.01

_Static_assert(sizeof(struct nidus_filter) <= sizeof(nidus_filter_ref), "nidus_filter_ref holds a nidus_filter");
_Static_assert(_Alignof(struct nidus_filter) <= _Alignof(nidus_filter_ref), "nidus_filter_ref is aligned for one");

nidus_filter *nidus_filter_wrap(const nidus_allocator *hook, nidus_kind kind)
{
    const nidus_allocator *a = nidus_alloc_pick(hook);
    nidus_filter *f = nidus_calloc(a, 1, sizeof *f);
    if (f) {
        f->kind = kind;
        f->alloc = a;
        f->fd = -1;
    }
    return f;
}

nidus_status nidus_filter_new(const nidus_filter_params *p, nidus_filter **out)
{
    if (!p || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->kind == NIDUS_KIND_FUSE)
        return NIDUS_ERR_UNSUPPORTED; /* built from its keys (nidus_fuse_build), never empty and filled */
    if (p->kind != NIDUS_KIND_CUCKOO && p->kind != NIDUS_KIND_BLOOM && p->kind != NIDUS_KIND_COUNTING_BLOOM &&
        p->kind != NIDUS_KIND_WINDOW)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->kind == NIDUS_KIND_COUNTING_BLOOM && !p->kind_params && p->expansion)
        return NIDUS_ERR_INVALID_ARGUMENT; /* one table, never grows: an expansion would be silently dropped */
    if (p->kind != NIDUS_KIND_WINDOW && p->window)
        return NIDUS_ERR_INVALID_ARGUMENT; /* only a windowed filter has a window */
    nidus_filter *f = nidus_filter_wrap(p->allocator, p->kind);
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    double error = p->error_rate ? p->error_rate : DEFAULT_ERROR;
    nidus_status st = NIDUS_ERR_INVALID_ARGUMENT;
    switch (p->kind) {
    case NIDUS_KIND_CUCKOO: {
        nidus_cuckoo_params c = {.capacity = p->capacity, .error_rate = error, .expansion = p->expansion,
                                 .allocator = p->allocator};
        st = nidus_cuckoo_new(p->kind_params ? p->kind_params : &c, &f->f.cuckoo);
        break;
    }
    case NIDUS_KIND_BLOOM: {
        nidus_bloom_params b = {.capacity = p->capacity, .error_rate = error, .expansion = p->expansion,
                                .allocator = p->allocator};
        st = nidus_bloom_new(p->kind_params ? p->kind_params : &b, &f->f.bloom);
        break;
    }
    case NIDUS_KIND_COUNTING_BLOOM: {
        nidus_counting_bloom_params c = {.capacity = p->capacity, .error_rate = error, .allocator = p->allocator};
        st = nidus_counting_bloom_new(p->kind_params ? p->kind_params : &c, &f->f.counting);
        break;
    }
    case NIDUS_KIND_WINDOW: {
        nidus_window_params w = {.capacity = p->capacity, .window = p->window, .error_rate = error,
                                 .expansion = p->expansion, .allocator = p->allocator};
        st = nidus_window_new(p->kind_params ? p->kind_params : &w, &f->f.window);
        break;
    }
    case NIDUS_KIND_FUSE: break;
    }
    if (st) {
        nidus_free(f->alloc, f);
        return st;
    }
    *out = f;
    return NIDUS_OK;
}

void nidus_filter_free(nidus_filter *f)
{
    if (!f)
        return;
    nidus_filter_release_guard(f);
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: nidus_cuckoo_free(f->f.cuckoo); break;
    case NIDUS_KIND_BLOOM: nidus_bloom_free(f->f.bloom); break;
    case NIDUS_KIND_COUNTING_BLOOM: nidus_counting_bloom_free(f->f.counting); break;
    case NIDUS_KIND_FUSE: nidus_fuse_free(f->f.fuse); break;
    case NIDUS_KIND_WINDOW: nidus_window_free(f->f.window); break;
    }
    nidus_filter_release_map(f); /* after the filter: its tables were borrowed from the mapping */
    if (f->alloc) /* a ref's storage is its caller's */
        nidus_free(f->alloc, f);
}

nidus_filter *nidus_filter_ref_init(nidus_filter_ref *ref, nidus_kind kind, void *typed)
{
    if (!ref)
        return NULL;
    nidus_filter *f = (nidus_filter *)ref;
    *f = (nidus_filter){.kind = kind, .fd = -1};
    switch (kind) {
    case NIDUS_KIND_CUCKOO: f->f.cuckoo = typed; return f;
    case NIDUS_KIND_BLOOM: f->f.bloom = typed; return f;
    case NIDUS_KIND_COUNTING_BLOOM: f->f.counting = typed; return f;
    case NIDUS_KIND_FUSE: f->f.fuse = typed; return f;
    case NIDUS_KIND_WINDOW: f->f.window = typed; return f;
    }
    return NULL;
}

void *nidus_filter_typed(const nidus_filter *f)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return f->f.cuckoo;
    case NIDUS_KIND_BLOOM: return f->f.bloom;
    case NIDUS_KIND_COUNTING_BLOOM: return f->f.counting;
    case NIDUS_KIND_FUSE: return f->f.fuse;
    case NIDUS_KIND_WINDOW: return f->f.window;
    }
    return NULL;
}

bool nidus_filter_relocate(nidus_filter *f, const nidus_mover *mover, uint64_t *cursor)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_relocate(&f->f.cuckoo, mover, cursor);
    case NIDUS_KIND_BLOOM: return nidus_bloom_relocate(&f->f.bloom, mover, cursor);
    case NIDUS_KIND_WINDOW: return nidus_window_relocate(&f->f.window, mover, cursor);
    case NIDUS_KIND_COUNTING_BLOOM: break; /* no relocation of their own */
    case NIDUS_KIND_FUSE: break;
    }
    *cursor = 0;
    return true;
}

nidus_kind nidus_filter_kind(const nidus_filter *f) { return f->kind; }

nidus_cuckoo *nidus_filter_cuckoo(nidus_filter *f) { return f && f->kind == NIDUS_KIND_CUCKOO ? f->f.cuckoo : NULL; }
nidus_bloom *nidus_filter_bloom(nidus_filter *f) { return f && f->kind == NIDUS_KIND_BLOOM ? f->f.bloom : NULL; }
nidus_counting_bloom *nidus_filter_counting_bloom(nidus_filter *f)
{
    return f && f->kind == NIDUS_KIND_COUNTING_BLOOM ? f->f.counting : NULL;
}
nidus_fuse *nidus_filter_fuse(nidus_filter *f) { return f && f->kind == NIDUS_KIND_FUSE ? f->f.fuse : NULL; }
nidus_window *nidus_filter_window(nidus_filter *f) { return f && f->kind == NIDUS_KIND_WINDOW ? f->f.window : NULL; }

void nidus_filter_set_time(nidus_filter *f, uint64_t now)
{
    if (f)
        f->now = now;
}

uint64_t nidus_filter_time(const nidus_filter *f) { return f ? f->now : 0; }

bool nidus_filter_is_read_only(const nidus_filter *f)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_is_read_only(f->f.cuckoo);
    case NIDUS_KIND_BLOOM: return nidus_bloom_is_read_only(f->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_is_read_only(f->f.counting);
    case NIDUS_KIND_FUSE: {
        nidus_fuse_stats s;
        nidus_fuse_get_stats(f->f.fuse, &s);
        return s.read_only;
    }
    case NIDUS_KIND_WINDOW: return nidus_window_is_read_only(f->f.window);
    }
    return true;
}

uint64_t nidus_filter_hash(const nidus_filter *f, const void *key, size_t len)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_hash(f->f.cuckoo, key, len);
    case NIDUS_KIND_BLOOM: return nidus_bloom_hash(f->f.bloom, key, len);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_hash(f->f.counting, key, len);
    case NIDUS_KIND_FUSE: {
        nidus_fuse_stats s;
        nidus_fuse_get_stats(f->f.fuse, &s);
        return nidus_hash(key, len, s.seed);
    }
    case NIDUS_KIND_WINDOW: return nidus_window_hash(f->f.window, key, len);
    }
    return 0;
}

nidus_status nidus_filter_merge(nidus_filter *dst, const nidus_filter *src)
{
    if (!dst || !src)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (dst->kind != src->kind)
        return NIDUS_ERR_INCOMPATIBLE;
    switch (dst->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_merge(dst->f.cuckoo, src->f.cuckoo);
    case NIDUS_KIND_BLOOM: return nidus_bloom_merge(dst->f.bloom, src->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_merge(dst->f.counting, src->f.counting);
    case NIDUS_KIND_WINDOW: return nidus_window_merge(dst->f.window, src->f.window);
    case NIDUS_KIND_FUSE: break; /* static: built once from its keys */
    }
    return NIDUS_ERR_UNSUPPORTED;
}

const char *nidus_kind_name(nidus_kind kind)
{
    switch (kind) {
    case NIDUS_KIND_CUCKOO: return "cuckoo";
    case NIDUS_KIND_BLOOM: return "bloom";
    case NIDUS_KIND_COUNTING_BLOOM: return "counting-bloom";
    case NIDUS_KIND_FUSE: return "fuse";
    case NIDUS_KIND_WINDOW: return "window";
    }
    return "unknown";
}

size_t nidus_filter_merge_difference(const nidus_filter *dst, const nidus_filter *src, char *buf, size_t cap)
{
    if (dst->kind != src->kind) {
        int n = snprintf(buf, cap, "kind %s, not %s", nidus_kind_name(src->kind), nidus_kind_name(dst->kind));
        return n > 0 ? (size_t)n : 0;
    }
    switch (dst->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_merge_difference(dst->f.cuckoo, src->f.cuckoo, buf, cap);
    case NIDUS_KIND_BLOOM: return nidus_bloom_merge_difference(dst->f.bloom, src->f.bloom, buf, cap);
    case NIDUS_KIND_COUNTING_BLOOM:
        return nidus_counting_bloom_merge_difference(dst->f.counting, src->f.counting, buf, cap);
    case NIDUS_KIND_WINDOW: return nidus_window_merge_difference(dst->f.window, src->f.window, buf, cap);
    case NIDUS_KIND_FUSE: break; /* no parameters to merge by: nidus_filter_merge refuses it as UNSUPPORTED */
    }
    if (cap)
        buf[0] = '\0';
    return 0;
}

nidus_status nidus_filter_add_hash(nidus_filter *f, uint64_t hash)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_add_hash(f->f.cuckoo, hash);
    case NIDUS_KIND_BLOOM: return nidus_bloom_add_hash(f->f.bloom, hash, NULL);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_add_hash(f->f.counting, hash);
    case NIDUS_KIND_WINDOW: return nidus_window_add_hash(f->f.window, hash, f->now);
    case NIDUS_KIND_FUSE: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status nidus_filter_add(nidus_filter *f, const void *key, size_t len)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_add(f->f.cuckoo, key, len);
    case NIDUS_KIND_BLOOM: return nidus_bloom_add(f->f.bloom, key, len, NULL);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_add(f->f.counting, key, len);
    case NIDUS_KIND_WINDOW: return nidus_window_add(f->f.window, key, len, f->now);
    case NIDUS_KIND_FUSE: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status nidus_filter_remove_hash(nidus_filter *f, uint64_t hash)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_remove_hash(f->f.cuckoo, hash);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_remove_hash(f->f.counting, hash);
    case NIDUS_KIND_WINDOW: return nidus_window_remove_hash(f->f.window, hash, f->now);
    case NIDUS_KIND_BLOOM: break; /* bits shared between keys cannot be cleared */
    case NIDUS_KIND_FUSE: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status nidus_filter_remove(nidus_filter *f, const void *key, size_t len)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_remove(f->f.cuckoo, key, len);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_remove(f->f.counting, key, len);
    case NIDUS_KIND_WINDOW: return nidus_window_remove(f->f.window, key, len, f->now);
    case NIDUS_KIND_BLOOM: break;
    case NIDUS_KIND_FUSE: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

bool nidus_filter_contains_hash(const nidus_filter *f, uint64_t hash)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_contains_hash(f->f.cuckoo, hash);
    case NIDUS_KIND_BLOOM: return nidus_bloom_contains_hash(f->f.bloom, hash);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_contains_hash(f->f.counting, hash);
    case NIDUS_KIND_FUSE: return nidus_fuse_contains_hash(f->f.fuse, hash);
    case NIDUS_KIND_WINDOW: return nidus_window_contains_hash(f->f.window, hash, f->now);
    }
    return false;
}

bool nidus_filter_contains(const nidus_filter *f, const void *key, size_t len)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_contains(f->f.cuckoo, key, len);
    case NIDUS_KIND_BLOOM: return nidus_bloom_contains(f->f.bloom, key, len);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_contains(f->f.counting, key, len);
    case NIDUS_KIND_FUSE: return nidus_fuse_contains(f->f.fuse, key, len);
    case NIDUS_KIND_WINDOW: return nidus_window_contains(f->f.window, key, len, f->now);
    }
    return false;
}

void nidus_filter_contains_many_hash(const nidus_filter *f, const uint64_t *hashes, size_t n, bool *out)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: nidus_cuckoo_contains_many_hash(f->f.cuckoo, hashes, n, out); return;
    case NIDUS_KIND_BLOOM: nidus_bloom_contains_many_hash(f->f.bloom, hashes, n, out); return;
    case NIDUS_KIND_COUNTING_BLOOM: nidus_counting_bloom_contains_many_hash(f->f.counting, hashes, n, out); return;
    case NIDUS_KIND_FUSE: nidus_fuse_contains_many_hash(f->f.fuse, hashes, n, out); return;
    case NIDUS_KIND_WINDOW: nidus_window_contains_many_hash(f->f.window, hashes, n, f->now, out); return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = false;
}

uint64_t nidus_filter_count_hash(const nidus_filter *f, uint64_t hash)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_count_hash(f->f.cuckoo, hash);
    case NIDUS_KIND_BLOOM: return nidus_bloom_contains_hash(f->f.bloom, hash);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_count_hash(f->f.counting, hash);
    case NIDUS_KIND_FUSE: return nidus_fuse_contains_hash(f->f.fuse, hash);
    case NIDUS_KIND_WINDOW: return nidus_window_count_hash(f->f.window, hash, f->now);
    }
    return 0;
}

uint64_t nidus_filter_count(const nidus_filter *f, const void *key, size_t len)
{
    return nidus_filter_count_hash(f, nidus_filter_hash(f, key, len));
}

void nidus_filter_get_stats(const nidus_filter *f, nidus_filter_stats *s)
{
    *s = (nidus_filter_stats){.kind = f->kind, .read_only = nidus_filter_is_read_only(f)};
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: {
        nidus_cuckoo_stats c;
        nidus_cuckoo_get_stats(f->f.cuckoo, &c);
        s->items = c.items, s->capacity = c.capacity, s->memory_bytes = c.memory_bytes;
        s->bits_per_item = c.bits_per_item, s->error_bound = c.error_bound, s->sub_filters = c.tables;
        break;
    }
    case NIDUS_KIND_BLOOM: {
        nidus_bloom_stats b;
        nidus_bloom_get_stats(f->f.bloom, &b);
        s->items = b.items, s->capacity = b.capacity, s->memory_bytes = b.memory_bytes;
        s->bits_per_item = b.bits_per_item, s->error_bound = b.error_bound, s->sub_filters = b.layers;
        break;
    }
    case NIDUS_KIND_COUNTING_BLOOM: {
        nidus_counting_bloom_stats c;
        nidus_counting_bloom_get_stats(f->f.counting, &c);
        s->items = c.items, s->capacity = c.capacity, s->memory_bytes = c.memory_bytes;
        s->bits_per_item = c.bits_per_item, s->error_bound = c.error_rate, s->sub_filters = 1;
        break;
    }
    case NIDUS_KIND_FUSE: {
        nidus_fuse_stats u;
        nidus_fuse_get_stats(f->f.fuse, &u);
        s->items = u.keys, s->capacity = u.keys, s->memory_bytes = u.memory_bytes;
        s->bits_per_item = u.bits_per_item, s->error_bound = u.error_bound, s->sub_filters = 1;
        break;
    }
    case NIDUS_KIND_WINDOW: {
        nidus_window_stats w;
        nidus_window_get_stats(f->f.window, f->now, &w);
        s->items = w.live, s->capacity = w.total_capacity, s->memory_bytes = w.memory_bytes;
        s->bits_per_item = w.bits_per_item, s->error_bound = w.error_bound, s->sub_filters = w.tables;
        s->window = w.window;
        break;
    }
    }
}

uint64_t nidus_filter_encoded_size(const nidus_filter *f)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_encoded_size(f->f.cuckoo);
    case NIDUS_KIND_BLOOM: return nidus_bloom_encoded_size(f->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_encoded_size(f->f.counting);
    case NIDUS_KIND_FUSE: return nidus_fuse_encoded_size(f->f.fuse);
    case NIDUS_KIND_WINDOW: return nidus_window_encoded_size(f->f.window);
    }
    return 0;
}

nidus_status nidus_filter_encode(const nidus_filter *f, void *buf, size_t cap, size_t *written)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_encode(f->f.cuckoo, buf, cap, written);
    case NIDUS_KIND_BLOOM: return nidus_bloom_encode(f->f.bloom, buf, cap, written);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_encode(f->f.counting, buf, cap, written);
    case NIDUS_KIND_FUSE: return nidus_fuse_encode(f->f.fuse, buf, cap, written);
    case NIDUS_KIND_WINDOW: return nidus_window_encode(f->f.window, buf, cap, written);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

/* Decodes (copy) or views an encoding of the kind its prefix names. */
static nidus_status decode(const void *buf, size_t len, const nidus_allocator *hook, bool view, nidus_filter **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_kind kind;
    nidus_status st = nidus_codec_peek(buf, len, &kind);
    if (st)
        return st;
    if (kind != NIDUS_KIND_CUCKOO && kind != NIDUS_KIND_BLOOM && kind != NIDUS_KIND_COUNTING_BLOOM &&
        kind != NIDUS_KIND_FUSE && kind != NIDUS_KIND_WINDOW)
        return NIDUS_ERR_CORRUPT; /* no decoder of this build takes it */
    nidus_filter *f = nidus_filter_wrap(hook, kind);
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    switch (kind) {
    case NIDUS_KIND_CUCKOO:
        st = view ? nidus_cuckoo_view(buf, len, hook, &f->f.cuckoo) : nidus_cuckoo_decode(buf, len, hook, &f->f.cuckoo);
        break;
    case NIDUS_KIND_BLOOM:
        st = view ? nidus_bloom_view(buf, len, hook, &f->f.bloom) : nidus_bloom_decode(buf, len, hook, &f->f.bloom);
        break;
    case NIDUS_KIND_COUNTING_BLOOM:
        st = view ? nidus_counting_bloom_view(buf, len, hook, &f->f.counting)
                  : nidus_counting_bloom_decode(buf, len, hook, &f->f.counting);
        break;
    case NIDUS_KIND_FUSE:
        st = view ? nidus_fuse_view(buf, len, hook, &f->f.fuse) : nidus_fuse_decode(buf, len, hook, &f->f.fuse);
        break;
    case NIDUS_KIND_WINDOW:
        st = view ? nidus_window_view(buf, len, hook, &f->f.window)
                  : nidus_window_decode(buf, len, hook, &f->f.window);
        break;
    }
    if (st) {
        nidus_free(f->alloc, f);
        return st;
    }
    *out = f;
    return NIDUS_OK;
}

nidus_status nidus_filter_decode(const void *buf, size_t len, const nidus_allocator *allocator, nidus_filter **out)
{
    return decode(buf, len, allocator, false, out);
}

nidus_status nidus_filter_view(const void *buf, size_t len, const nidus_allocator *allocator, nidus_filter **out)
{
    return decode(buf, len, allocator, true, out);
}

nidus_status nidus_filter_dump_chunk(const nidus_filter *f, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                     uint64_t *next)
{
    return nidus_filter_dump_chunk_sum(f, cursor, NULL, buf, cap, len, next);
}

nidus_status nidus_filter_dump_chunk_sum(const nidus_filter *f, uint64_t cursor, nidus_dump_sum *sum, void *buf,
                                         size_t cap, size_t *len, uint64_t *next)
{
    if (!f)
        return NIDUS_ERR_INVALID_ARGUMENT;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_dump_chunk_sum(f->f.cuckoo, cursor, buf, cap, len, next, sum);
    case NIDUS_KIND_BLOOM: return nidus_bloom_dump_chunk_sum(f->f.bloom, cursor, buf, cap, len, next, sum);
    case NIDUS_KIND_COUNTING_BLOOM:
        return nidus_counting_bloom_dump_chunk_sum(f->f.counting, cursor, buf, cap, len, next, sum);
    case NIDUS_KIND_WINDOW: return nidus_window_dump_chunk_sum(f->f.window, cursor, buf, cap, len, next, sum);
    case NIDUS_KIND_FUSE: break; /* whole encodings only */
    }
    return NIDUS_ERR_UNSUPPORTED;
}

/* One chunk into f's typed handle (NULL: a header chunk makes one), by its kind's loader; the last chunk may
 * replace the handle (a small cuckoo filter is packed), which the kind's call writes back in place. */
static nidus_status load_typed(nidus_filter *f, const void *chunk, size_t len, uint64_t max_bytes,
                               const nidus_allocator *a)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_load_chunk(&f->f.cuckoo, chunk, len, max_bytes, a);
    case NIDUS_KIND_BLOOM: return nidus_bloom_load_chunk(&f->f.bloom, chunk, len, max_bytes, a);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_load_chunk(&f->f.counting, chunk, len, max_bytes, a);
    case NIDUS_KIND_WINDOW: return nidus_window_load_chunk(&f->f.window, chunk, len, max_bytes, a);
    case NIDUS_KIND_FUSE: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status nidus_filter_load_chunk(nidus_filter **filter, nidus_kind kind, const void *chunk, size_t len,
                                     uint64_t max_bytes, const nidus_allocator *allocator)
{
    if (!filter || !chunk || (*filter && (*filter)->kind != kind))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (kind == NIDUS_KIND_FUSE)
        return NIDUS_ERR_UNSUPPORTED; /* whole encodings only */
    if (kind != NIDUS_KIND_CUCKOO && kind != NIDUS_KIND_BLOOM && kind != NIDUS_KIND_COUNTING_BLOOM &&
        kind != NIDUS_KIND_WINDOW)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (*filter)
        return load_typed(*filter, chunk, len, max_bytes, allocator);
    nidus_filter *f = nidus_filter_wrap(allocator, kind); /* its typed handle NULL: the header chunk makes it */
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    nidus_status st = load_typed(f, chunk, len, max_bytes, allocator);
    if (st) {
        nidus_free(f->alloc, f);
        return st;
    }
    *filter = f;
    return NIDUS_OK;
}

bool nidus_filter_loading(const nidus_filter *f)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_loading(f->f.cuckoo);
    case NIDUS_KIND_BLOOM: return nidus_bloom_loading(f->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_loading(f->f.counting);
    case NIDUS_KIND_WINDOW: return nidus_window_loading(f->f.window);
    case NIDUS_KIND_FUSE: break;
    }
    return false;
}
