/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters: making one and its figures (the encoding is window_codec.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "codec.h"
#include "hash_impl.h"
#include "cuckoo_table_impl.h"
#include "overflow.h"
#include "params.h"
#include "window_filter.h"
#include "window_kernels.h"

nidus_table_shape nidus_window_shape(uint64_t buckets, unsigned b, unsigned f)
{
    return (nidus_table_shape){
        .buckets = buckets,
        .bucket_size = (uint8_t)b,
        .fp_bits = (uint8_t)(f + NIDUS_WINDOW_AGE_BITS),
        .offset_bits = (uint8_t)f,
        .reach_log2 = NIDUS_REACH_LOG2,
        .stride = 1,
    };
}

nidus_status nidus_window_make(const nidus_allocator *a, const nidus_table_shape *shape, unsigned max_kicks,
                              const uint8_t *borrow, bool writable, nidus_window **out)
{
    nidus_window *w = nidus_calloc(a, 1, sizeof *w);
    if (!w)
        return NIDUS_ERR_NO_MEMORY;
    nidus_status st = !borrow ? nidus_table_init(&w->table, shape, max_kicks, a)
                              : nidus_table_init_borrowed(&w->table, shape, borrow);
    if (!st && borrow && writable)
        st = nidus_table_borrow_writable(&w->table, max_kicks, a);
    if (st) {
        nidus_table_release(&w->table, a);
        nidus_free(a, w);
        return st;
    }
    w->alloc = a;
    w->max_kicks = max_kicks;
    w->f = shape->offset_bits;
    w->fp_mask = (uint32_t)((UINT64_C(1) << w->f) - 1);
    w->fp_fields = w->fp_mask * w->table.chunk_swar[0].ones;
    w->fp_high = (w->fp_mask ^ (w->fp_mask >> 1)) * w->table.chunk_swar[0].ones;
    w->read_only = borrow && !writable;
    w->age_low = (NIDUS_WINDOW_AGES - 1) * w->table.chunk_swar[0].ones;
    w->age_carry = NIDUS_WINDOW_AGES * w->table.chunk_swar[0].ones;
    w->hash8_flip = nidus_hash8_flip(0);
    w->kernel = nidus_window_plan_kernel(w);
    nidus_window_clock_changed(w);
    *out = w;
    return NIDUS_OK;
}

nidus_status nidus_window_new(const nidus_window_params *p, nidus_window **out)
{
    if (!p || !out || p->capacity < 1 || p->window < 1 || p->window > NIDUS_WINDOW_MAX_TICKS)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->fingerprint_bits && (p->fingerprint_bits < NIDUS_CUCKOO_MIN_FINGERPRINT_BITS ||
                                p->fingerprint_bits > 32 - NIDUS_WINDOW_AGE_BITS))
        return NIDUS_ERR_INVALID_ARGUMENT;
    /* entries stay for 6 epochs of W/5: sized for 1.2 windows of items */
    if (p->capacity > UINT64_MAX / 2)
        return NIDUS_ERR_TOO_LARGE;
    nidus_cuckoo_params cp = {
        .capacity = p->capacity + p->capacity / 5 + (p->capacity % 5 != 0),
        .error_rate = p->error_rate,
        .fingerprint_bits = p->fingerprint_bits,
        .bucket_size = p->bucket_size,
        .max_kicks = p->max_kicks,
    };
    nidus_cuckoo_plan plan;
    nidus_table_shape base;
    unsigned kicks;
    nidus_status st = nidus_cuckoo_resolve(&cp, &plan, &base, &kicks);
    if (st)
        return st;
    if (plan.fingerprint_bits > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_INVALID_ARGUMENT; /* the error rate needs more bits than a slot has beside the age */
    nidus_table_shape shape = nidus_window_shape(base.buckets, plan.bucket_size, plan.fingerprint_bits);
    if ((st = nidus_table_check_shape(&shape)))
        return st;
    nidus_window *w;
    if ((st = nidus_window_make(nidus_alloc_pick(p->allocator), &shape, kicks, NULL, false, &w)))
        return st;
    w->capacity = p->capacity;
    w->window = p->window;
    w->epoch_ticks = nidus_window_epoch_ticks(p->window);
    w->epoch_inverse = UINT64_MAX / w->epoch_ticks;
    w->seed = p->seed;
    w->hash8_flip = nidus_hash8_flip(p->seed);
    *out = w;
    return NIDUS_OK;
}

void nidus_window_free(nidus_window *w)
{
    if (!w)
        return;
    const nidus_allocator *a = w->alloc;
    nidus_table_release(&w->table, a);
    nidus_chunk_loader_release(&w->loader, a);
    nidus_free(a, w->pending);
    nidus_mapping_release(w->mapping, a);
    nidus_free(a, w);
}

void nidus_window_get_stats(const nidus_window *w, uint64_t now, nidus_window_stats *s)
{
    if (!w || !s)
        return;
    const nidus_table *t = &w->table;
    memset(s, 0, sizeof *s);
    s->capacity = w->capacity;
    s->window = w->window;
    s->epoch_ticks = w->epoch_ticks;
    s->entries = nidus_window_entries(w);
    unsigned live = nidus_window_live_mask(w, now);
    for (unsigned a = 0; a < NIDUS_WINDOW_AGES; a++)
        if (live >> a & 1)
            s->live += w->per_age[a];
    if (w->written)
        s->latest_write = w->latest * w->epoch_ticks;
    s->buckets = t->shape.buckets;
    s->bucket_size = t->shape.bucket_size;
    s->slots = t->shape.buckets * t->shape.bucket_size;
    s->fingerprint_bits = w->f;
    s->memory_bytes = sizeof *w + nidus_table_memory(t);
    s->bits_per_item = (double)s->memory_bytes * 8.0 / (double)w->capacity;
    s->error_bound = nidus_cuckoo_error_bound(t->shape.bucket_size, w->f);
    s->sweep_cursor = w->cursor;
}

/* Positions: the struct 0, the table's slots 1, its overflow entries 2. */
bool nidus_window_relocate(nidus_window **filter, const nidus_mover *mover, uint64_t *cursor)
{
    nidus_window *w = *filter;
    if (w->loader || w->read_only || w->mapping) {
        *cursor = 0;
        return true;
    }
    nidus_walk walk = nidus_walk_start(mover, *cursor);
    nidus_window *moved = nidus_walk_offer(&walk, w);
    if (moved)
        *filter = w = moved;
    uint8_t *data = nidus_walk_offer(&walk, w->table.borrowed ? NULL : w->table.data);
    if (data)
        w->table.data = data;
    nidus_overflow_entry *entries = nidus_walk_offer(&walk, w->table.overflow.entries);
    if (entries)
        w->table.overflow.entries = entries;
    return nidus_walk_end(&walk, cursor);
}
