/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters: making one and its figures (the encoding is window_codec.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuckoo_filter.h"
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
    w->read_only = borrow && !writable;
    const nidus_swar *sw = &w->table.chunk_swar[0];
    nidus_window_lanes *l = &w->lanes;
    for (unsigned k = 0; k < 2; k++) {
        l->fp_fields[k] = w->fp_mask * sw->ones;
        l->age_low[k] = (NIDUS_WINDOW_AGES - 1) * sw->ones;
        l->age_carry[k] = NIDUS_WINDOW_AGES * sw->ones;
        l->ones[k] = sw->ones;
        l->high[k] = sw->high;
    }
    l->shift[0] = w->f;
    w->hash8_flip = nidus_hash8_flip(0);
    w->kernel = w->kernel_one = nidus_window_plan_kernel(w);
    nidus_window_clock_changed(w);
    *out = w;
    return NIDUS_OK;
}

/* The table shape (and kicks) of a windowed filter of these parameters: entries stay for 6 epochs of W/5, so the
 * table is sized for 1.2 windows of items at the plain filter's design load. */
static nidus_status plan(const nidus_window_params *p, nidus_table_shape *shape, unsigned *kicks)
{
    if (p->capacity < 1 || p->window < 1 || p->window > NIDUS_WINDOW_MAX_TICKS ||
        p->expansion > NIDUS_WINDOW_MAX_EXPANSION)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->fingerprint_bits && (p->fingerprint_bits < NIDUS_CUCKOO_MIN_FINGERPRINT_BITS ||
                                p->fingerprint_bits > 32 - NIDUS_WINDOW_AGE_BITS))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->capacity > UINT64_MAX / 2)
        return NIDUS_ERR_TOO_LARGE;
    nidus_cuckoo_params cp = {
        .capacity = p->capacity + p->capacity / 5 + (p->capacity % 5 != 0),
        .error_rate = p->error_rate,
        .fingerprint_bits = p->fingerprint_bits,
        .bucket_size = p->bucket_size,
        .max_kicks = p->max_kicks,
    };
    nidus_cuckoo_plan cplan;
    nidus_table_shape base;
    nidus_status st = nidus_cuckoo_resolve(&cp, &cplan, &base, kicks);
    if (st)
        return st;
    if (cplan.fingerprint_bits > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_INVALID_ARGUMENT; /* the error rate needs more bits than a slot has beside the age */
    *shape = nidus_window_shape(base.buckets, cplan.bucket_size, cplan.fingerprint_bits);
    return nidus_table_check_shape(shape);
}

/* The fields every table of a filter of these parameters has beside its table. */
static void set_fields(nidus_window *w, uint64_t capacity, uint64_t window, uint64_t seed)
{
    w->capacity = capacity;
    w->window = window;
    w->epoch_ticks = nidus_window_epoch_ticks(window);
    w->epoch_inverse = UINT64_MAX / w->epoch_ticks;
    w->seed = seed;
    w->hash8_flip = nidus_hash8_flip(seed);
}

nidus_status nidus_window_new(const nidus_window_params *p, nidus_window **out)
{
    if (!p || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_table_shape shape;
    unsigned kicks;
    nidus_status st = plan(p, &shape, &kicks);
    if (!st && !nidus_cuckoo_fits(p->max_memory, sizeof(nidus_window), nidus_cuckoo_table_cost(&shape)))
        st = NIDUS_ERR_LIMIT_MEMORY;
    nidus_window *w;
    if (st || (st = nidus_window_make(nidus_alloc_pick(p->allocator), &shape, kicks, NULL, false, &w)))
        return st;
    set_fields(w, p->capacity, p->window, p->seed);
    w->expansion = p->expansion;
    w->max_memory = p->expansion ? p->max_memory : 0; /* a filter that never grows needs no bound */
    *out = w;
    return NIDUS_OK;
}

nidus_status nidus_window_level_shape(const nidus_window_base *base, unsigned level, uint64_t *capacity,
                                      nidus_table_shape *shape)
{
    if (level > UINT8_MAX || !base->expansion || base->expansion > NIDUS_WINDOW_MAX_EXPANSION)
        return NIDUS_ERR_LIMIT_TABLES;
    if (!level) { /* a sibling of the first table (a merge's): its shape */
        *capacity = base->capacity;
        *shape = nidus_window_shape(base->buckets, base->bucket_size, base->f);
        return nidus_table_check_shape(shape);
    }
    uint64_t cap = base->capacity;
    for (unsigned k = 0; k < level; k++) {
        if (cap > UINT64_MAX / 2 / base->expansion)
            return NIDUS_ERR_TOO_LARGE;
        cap *= base->expansion;
    }
    unsigned b = base->bucket_size, f = base->f;
    double budget = nidus_cuckoo_table_budget(nidus_cuckoo_error_bound(b, base->f), level);
    while (f <= 32 - NIDUS_WINDOW_AGE_BITS && nidus_cuckoo_error_bound(b, f) > budget)
        f++;
    if (f > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_window_params p = {.capacity = cap, .window = base->window, .fingerprint_bits = f, .bucket_size = b,
                             .max_kicks = base->max_kicks};
    unsigned kicks;
    nidus_status st = plan(&p, shape, &kicks);
    if (!st)
        *capacity = cap;
    return st == NIDUS_ERR_INVALID_ARGUMENT ? NIDUS_ERR_LIMIT_TABLES : st;
}

nidus_status nidus_window_first_shape(const nidus_window_base *base, nidus_table_shape *shape)
{
    nidus_window_params p = {.capacity = base->capacity, .window = base->window, .fingerprint_bits = base->f,
                             .bucket_size = base->bucket_size, .max_kicks = base->max_kicks};
    unsigned kicks;
    return plan(&p, shape, &kicks);
}

nidus_window_base nidus_window_base_of(const nidus_window *w)
{
    return (nidus_window_base){.capacity = w->capacity, .window = w->window, .buckets = w->table.shape.buckets,
                               .bucket_size = w->table.shape.bucket_size, .f = w->f, .max_kicks = w->max_kicks,
                               .expansion = w->expansion};
}

nidus_status nidus_window_table_new(const nidus_allocator *a, const nidus_table_shape *shape, unsigned max_kicks,
                                    uint64_t capacity, uint64_t window, uint64_t seed, nidus_window **out)
{
    nidus_window *g;
    nidus_status st = nidus_window_make(a, shape, max_kicks, NULL, false, &g);
    if (st)
        return st;
    set_fields(g, capacity, window, seed);
    *out = g;
    return NIDUS_OK;
}

nidus_status nidus_window_level_new(const nidus_window *w, unsigned level, nidus_window **out)
{
    nidus_table_shape shape;
    uint64_t cap;
    nidus_window_base base = nidus_window_base_of(w);
    nidus_window *g;
    nidus_status st = nidus_window_level_shape(&base, level, &cap, &shape);
    if (!st && !nidus_cuckoo_fits(w->max_memory, nidus_window_held(w),
                                  nidus_cuckoo_table_cost(&shape) + sizeof(nidus_window) + sizeof(nidus_window *)))
        st = NIDUS_ERR_LIMIT_MEMORY;
    if (st || (st = nidus_window_table_new(w->alloc, &shape, w->max_kicks, cap, w->window, w->seed, &g)))
        return st;
    g->level = level;
    g->written = w->written;
    g->latest = w->latest;
    g->latest_tick = w->latest_tick;
    nidus_window_clock_changed(g);
    *out = g;
    return NIDUS_OK;
}

nidus_status nidus_window_set_max_memory(nidus_window *w, uint64_t max_memory)
{
    if (!w)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (w->read_only)
        return NIDUS_ERR_READ_ONLY;
    if (!w->expansion)
        return NIDUS_OK;
    uint64_t slots = 0; /* as decoders check the bound: every stored bound loads again */
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        uint64_t cost = nidus_cuckoo_table_cost(&nidus_window_table_at(w, k)->table.shape);
        if (!nidus_cuckoo_fits(max_memory, slots, cost))
            return NIDUS_ERR_INVALID_ARGUMENT;
        slots += cost; /* tables in memory: no wrap */
    }
    w->max_memory = max_memory;
    return NIDUS_OK;
}

uint64_t nidus_window_held(const nidus_window *w)
{
    uint64_t n = (uint64_t)w->ngrown * sizeof *w->grown;
    for (uint32_t k = 0; k <= w->ngrown; k++) /* tables in memory: no wrap */
        n += sizeof(nidus_window) + nidus_table_memory(&nidus_window_table_at(w, k)->table);
    return n;
}

nidus_status nidus_window_attach(nidus_window *w, nidus_window *g)
{
    nidus_window **a = nidus_realloc(w->alloc, w->grown, ((size_t)w->ngrown + 1) * sizeof *a);
    if (!a)
        return NIDUS_ERR_NO_MEMORY;
    w->grown = a;
    uint32_t k = w->ngrown;
    while (k > 0 && a[k - 1]->level > g->level) {
        a[k] = a[k - 1];
        k--;
    }
    a[k] = g;
    w->ngrown++;
    w->kernel_one = NIDUS_WKERNEL_GENERAL;
    return NIDUS_OK;
}

void nidus_window_detach(nidus_window *w, uint32_t k)
{
    nidus_window_free(w->grown[k - 1]);
    memmove(&w->grown[k - 1], &w->grown[k], (size_t)(w->ngrown - k) * sizeof *w->grown);
    if (!--w->ngrown) {
        nidus_free(w->alloc, w->grown);
        w->grown = NULL;
        w->kernel_one = w->kernel;
    }
}

uint64_t nidus_window_live_at(const nidus_window *t, uint64_t now)
{
    unsigned live = nidus_window_live_mask(t, now);
    uint64_t n = 0;
    for (unsigned a = 0; a < NIDUS_WINDOW_AGES; a++)
        if (live >> a & 1)
            n += t->per_age[a];
    return n;
}

void nidus_window_free(nidus_window *w)
{
    if (!w)
        return;
    const nidus_allocator *a = w->alloc;
    for (uint32_t k = 0; k < w->ngrown; k++)
        nidus_window_free(w->grown[k]);
    nidus_free(a, w->grown);
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
    s->tables = 1 + w->ngrown;
    s->expansion = w->expansion;
    s->max_memory = w->max_memory;
    s->memory_bytes = nidus_window_held(w);
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        const nidus_window *x = nidus_window_table_at(w, k);
        s->entries += nidus_window_entries(x);
        s->live += nidus_window_live_at(x, now);
        s->total_capacity += x->capacity;
        s->total_slots += x->table.shape.buckets * x->table.shape.bucket_size;
        s->error_bound += nidus_cuckoo_error_bound(x->table.shape.bucket_size, x->f);
    }
    if (w->written)
        s->latest_write = w->latest * w->epoch_ticks;
    s->buckets = t->shape.buckets;
    s->bucket_size = t->shape.bucket_size;
    s->slots = t->shape.buckets * t->shape.bucket_size;
    s->fingerprint_bits = w->f;
    s->max_kicks = w->max_kicks;
    s->bits_per_item = (double)s->memory_bytes * 8.0 / (double)s->total_capacity;
    s->sweep_cursor = w->cursor;
}

bool nidus_window_get_table_stats(const nidus_window *w, unsigned k, uint64_t now, nidus_window_table_stats *s)
{
    if (!w || !s || k > w->ngrown)
        return false;
    const nidus_window *x = nidus_window_table_at(w, k);
    memset(s, 0, sizeof *s);
    s->live = nidus_window_live_at(x, now);
    s->capacity = x->capacity;
    s->buckets = x->table.shape.buckets;
    s->fingerprint_bits = x->f;
    s->level = x->level;
    s->memory_bytes = sizeof *x + nidus_table_memory(&x->table);
    s->error_bound = nidus_cuckoo_error_bound(x->table.shape.bucket_size, x->f);
    return true;
}

/* Positions: the struct 0, the grown tables' array 1, the first table's slots 2 and overflow entries 3, then each
 * grown table's struct, slots and overflow entries. */
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
    nidus_window **grown = nidus_walk_offer(&walk, w->grown);
    if (grown)
        w->grown = grown;
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        nidus_window *x = nidus_window_table_at(w, k);
        if (k && (moved = nidus_walk_offer(&walk, x)))
            w->grown[k - 1] = x = moved;
        uint8_t *data = nidus_walk_offer(&walk, x->table.borrowed ? NULL : x->table.data);
        if (data)
            x->table.data = data;
        nidus_overflow_entry *entries = nidus_walk_offer(&walk, x->table.overflow.entries);
        if (entries)
            x->table.overflow.entries = entries;
    }
    return nidus_walk_end(&walk, cursor);
}
