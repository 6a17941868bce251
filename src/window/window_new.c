/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters: making one, its figures, and its encoding.
 *
 * Encoding (nidus/codec.h's prefix, kind NIDUS_KIND_WINDOW):
 *     meta:     capacity u64 | window u64 | seed u64 | buckets u64 | bucket_size u8 | f u8 | max_kicks u16 |
 *               written u8 | latest u64 | latest_tick u64 | cursor u64 | owed u64 | credit u64 |
 *               overflow entries u32
 *     segments: the table's slots (nidus_table_shape_bytes), then each overflow entry as
 *               bucket u64 | value u32 | count u64, ordered by (bucket, value): not the map's slot order, which
 *               depends on the order of the adds and on the map's size, so equal filters encode equally and a
 *               decoded filter re-encodes to the same bytes
 * A decoder re-derives everything else (the shape's offset bits and reach, g, the per-age counts) and checks
 * every field against what a filter could have written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "codec.h"
#include "cuckoo_table_impl.h"
#include "overflow.h"
#include "params.h"
#include "window_filter.h"

enum { META_BYTES = 8 * 4 + 1 + 1 + 2 + 1 + 8 * 5 + 4, OVERFLOW_ENTRY_BYTES = 8 + 4 + 8 };

static uint64_t epoch_ticks_of(uint64_t window) { return window / 5 + (window % 5 != 0); }

/* The table shape of f-bit fingerprints with their ages: placement by the fingerprint bits alone. */
static nidus_table_shape shape_of(uint64_t buckets, unsigned b, unsigned f)
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

static nidus_status make(const nidus_allocator *a, const nidus_table_shape *shape, unsigned max_kicks,
                         nidus_window **out)
{
    nidus_window *w = nidus_calloc(a, 1, sizeof *w);
    if (!w)
        return NIDUS_ERR_NO_MEMORY;
    nidus_status st = nidus_table_init(&w->table, shape, max_kicks, a);
    if (st) {
        nidus_free(a, w);
        return st;
    }
    w->alloc = a;
    w->f = shape->offset_bits;
    w->fp_mask = (uint32_t)((UINT64_C(1) << w->f) - 1);
    w->fp_fields = w->fp_mask * w->table.chunk_swar[0].ones;
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
    nidus_table_shape shape = shape_of(base.buckets, plan.bucket_size, plan.fingerprint_bits);
    if ((st = nidus_table_check_shape(&shape)))
        return st;
    nidus_window *w;
    if ((st = make(nidus_alloc_pick(p->allocator), &shape, kicks, &w)))
        return st;
    w->capacity = p->capacity;
    w->window = p->window;
    w->epoch_ticks = epoch_ticks_of(p->window);
    w->epoch_inverse = UINT64_MAX / w->epoch_ticks;
    w->seed = p->seed;
    *out = w;
    return NIDUS_OK;
}

void nidus_window_free(nidus_window *w)
{
    if (!w)
        return;
    const nidus_allocator *a = w->alloc;
    nidus_table_release(&w->table, a);
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
    if (w->written) {
        uint64_t e = now / w->epoch_ticks, seen = w->latest_tick / w->epoch_ticks;
        uint64_t d = (e > seen ? e : seen) - w->latest; /* read as window.c's reading_epoch */
        for (unsigned a = 0; a < NIDUS_WINDOW_AGES; a++)
            if (((w->latest - a) & (NIDUS_WINDOW_AGES - 1)) + d < NIDUS_WINDOW_LIVE_EPOCHS)
                s->live += w->per_age[a];
        s->latest_write = w->latest * w->epoch_ticks;
    }
    s->buckets = t->shape.buckets;
    s->bucket_size = t->shape.bucket_size;
    s->slots = t->shape.buckets * t->shape.bucket_size;
    s->fingerprint_bits = w->f;
    s->memory_bytes = sizeof *w + nidus_table_memory(t);
    s->bits_per_item = (double)s->memory_bytes * 8.0 / (double)w->capacity;
    s->error_bound = nidus_cuckoo_error_bound(t->shape.bucket_size, w->f);
    s->sweep_cursor = w->cursor;
}

/* ---- encoding ---- */

static uint64_t table_bytes(const nidus_window *w) { return nidus_table_shape_bytes(&w->table.shape); }

/* Orders serialised overflow entries by (bucket, value): little-endian fields, so compare the values. */
static int entry_order(const void *a, const void *b)
{
    nidus_reader ra = {a, OVERFLOW_ENTRY_BYTES, false}, rb = {b, OVERFLOW_ENTRY_BYTES, false};
    uint64_t ba = nidus_get_u64(&ra), bb = nidus_get_u64(&rb);
    if (ba != bb)
        return ba < bb ? -1 : 1;
    uint32_t va = nidus_get_u32(&ra), vb = nidus_get_u32(&rb);
    return (va > vb) - (va < vb);
}

uint64_t nidus_window_encoded_size(const nidus_window *w)
{
    if (!w)
        return 0;
    return NIDUS_CODEC_PREFIX_FIXED + META_BYTES + table_bytes(w) +
           (uint64_t)w->table.overflow.used * OVERFLOW_ENTRY_BYTES + NIDUS_CODEC_CHECKSUM_BYTES;
}

nidus_status nidus_window_encode(const nidus_window *w, uint8_t *buf, size_t cap)
{
    if (!w || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint64_t total = nidus_window_encoded_size(w);
    if (cap < total)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const nidus_table *t = &w->table;
    nidus_writer wr = {buf};
    nidus_codec_put_prefix(&wr, NIDUS_FORMAT_VERSION, NIDUS_KIND_WINDOW, total, META_BYTES);
    nidus_put_u64(&wr, w->capacity);
    nidus_put_u64(&wr, w->window);
    nidus_put_u64(&wr, w->seed);
    nidus_put_u64(&wr, t->shape.buckets);
    nidus_put_u8(&wr, t->shape.bucket_size);
    nidus_put_u8(&wr, w->f);
    nidus_put_u8(&wr, t->max_kicks & 0xff);
    nidus_put_u8(&wr, t->max_kicks >> 8);
    nidus_put_u8(&wr, w->written);
    nidus_put_u64(&wr, w->latest);
    nidus_put_u64(&wr, w->latest_tick);
    nidus_put_u64(&wr, w->cursor);
    nidus_put_u64(&wr, w->owed);
    nidus_put_u64(&wr, w->credit);
    nidus_put_u32(&wr, t->overflow.used);
    nidus_put_bytes(&wr, t->data, (size_t)table_bytes(w));
    uint8_t *entries = wr.p;
    for (uint32_t k = 0; t->overflow.used && k < t->overflow.capacity; k++) {
        const nidus_overflow_entry *e = &t->overflow.entries[k];
        if (!e->count)
            continue;
        nidus_put_u64(&wr, e->bucket);
        nidus_put_u32(&wr, e->fingerprint);
        nidus_put_u64(&wr, e->count);
    }
    qsort(entries, t->overflow.used, OVERFLOW_ENTRY_BYTES, entry_order);
    uint64_t sum = nidus_codec_checksum(buf, (size_t)(total - NIDUS_CODEC_CHECKSUM_BYTES), NULL, 0);
    nidus_put_u64(&wr, sum);
    return NIDUS_OK;
}

/* Counts the entries of each age value, refusing a slot whose fingerprint bits are zero beside a nonzero age. */
static nidus_status recount(nidus_window *w)
{
    const nidus_table *t = &w->table;
    uint32_t vals[8];
    uint64_t total = 0;
    memset(w->per_age, 0, sizeof w->per_age);
    for (uint64_t i = 0; i < t->shape.buckets; i++) {
        nidus_table_read_bucket(t, i, vals);
        for (unsigned k = 0; k < t->shape.bucket_size; k++) {
            if (!vals[k])
                continue;
            if (!(vals[k] & w->fp_mask))
                return NIDUS_ERR_CORRUPT;
            w->per_age[vals[k] >> w->f]++;
            total++;
        }
    }
    for (uint32_t k = 0; t->overflow.used && k < t->overflow.capacity; k++) {
        const nidus_overflow_entry *e = &t->overflow.entries[k];
        if (!e->count)
            continue;
        if (!(e->fingerprint & w->fp_mask) || total > UINT64_MAX - e->count)
            return NIDUS_ERR_CORRUPT; /* the entries in all, not only each age's, must fit in a counter */
        w->per_age[e->fingerprint >> w->f] += e->count;
        total += e->count;
    }
    return NIDUS_OK;
}

nidus_status nidus_window_decode(const uint8_t *buf, size_t len, const nidus_allocator *allocator,
                                 nidus_window **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_reader meta;
    size_t prefix_bytes;
    nidus_status st = nidus_codec_open_whole(buf, len, NIDUS_KIND_WINDOW, &meta, &prefix_bytes);
    if (st)
        return st;
    if (buf[5] != NIDUS_FORMAT_VERSION) /* windowed filters came with this version: no older one holds them */
        return NIDUS_ERR_VERSION;
    if (meta.left != META_BYTES)
        return NIDUS_ERR_CORRUPT;
    uint64_t capacity = nidus_get_u64(&meta), window = nidus_get_u64(&meta), seed = nidus_get_u64(&meta);
    uint64_t buckets = nidus_get_u64(&meta);
    unsigned b = nidus_get_u8(&meta), f = nidus_get_u8(&meta);
    unsigned kicks = nidus_get_u8(&meta);
    kicks |= nidus_get_u8(&meta) << 8;
    unsigned written = nidus_get_u8(&meta);
    uint64_t latest = nidus_get_u64(&meta), latest_tick = nidus_get_u64(&meta), cursor = nidus_get_u64(&meta);
    uint64_t owed = nidus_get_u64(&meta), credit = nidus_get_u64(&meta);
    uint32_t overflow = nidus_get_u32(&meta);
    if (meta.bad || capacity < 1 || window < 1 || window > NIDUS_WINDOW_MAX_TICKS || written > 1 || kicks < 1 ||
        f < NIDUS_CUCKOO_MIN_FINGERPRINT_BITS || f > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_CORRUPT;
    nidus_table_shape shape = shape_of(buckets, b, f);
    if (nidus_table_check_shape(&shape) != NIDUS_OK)
        return NIDUS_ERR_CORRUPT;
    uint64_t g = epoch_ticks_of(window), tbytes = nidus_table_shape_bytes(&shape);
    /* the sweep's clock may be a few epochs past the latest write's: an advance that still owed a pass stayed in
     * the latest write's epoch */
    if (cursor >= buckets || owed > buckets || credit >= g ||
        (written ? latest > latest_tick / g || latest_tick / g - latest >= NIDUS_WINDOW_LIVE_EPOCHS
                 : latest || latest_tick || cursor || owed || credit))
        return NIDUS_ERR_CORRUPT;
    /* the table and the overflow entries must be in the buffer before anything is allocated for them */
    uint64_t body = len - prefix_bytes - NIDUS_CODEC_CHECKSUM_BYTES;
    if (tbytes > body || (body - tbytes) / OVERFLOW_ENTRY_BYTES != overflow ||
        (body - tbytes) % OVERFLOW_ENTRY_BYTES)
        return NIDUS_ERR_CORRUPT;
    nidus_window *w;
    if ((st = make(nidus_alloc_pick(allocator), &shape, kicks, &w)))
        return st;
    w->capacity = capacity;
    w->window = window;
    w->epoch_ticks = g;
    w->epoch_inverse = UINT64_MAX / g;
    w->seed = seed;
    w->written = written;
    w->latest = latest;
    w->latest_tick = latest_tick;
    w->cursor = cursor;
    w->owed = owed;
    w->credit = credit;
    nidus_reader r = {buf + prefix_bytes, (size_t)body, false};
    memcpy(w->table.data, nidus_get_bytes(&r, (size_t)tbytes), (size_t)tbytes);
    for (uint32_t k = 0; k < overflow && !st; k++) {
        const uint8_t *entry = r.p;
        uint64_t bucket = nidus_get_u64(&r);
        uint32_t value = nidus_get_u32(&r);
        uint64_t count = nidus_get_u64(&r);
        if (bucket >= buckets || !count || (uint64_t)value >> (f + NIDUS_WINDOW_AGE_BITS) ||
            (k > 0 && entry_order(entry - OVERFLOW_ENTRY_BYTES, entry) >= 0)) /* canonical: in order, no repeat */
            st = NIDUS_ERR_CORRUPT;
        else
            st = nidus_overflow_set(&w->table.overflow, w->alloc, bucket, value, count);
    }
    if (!st) {
        nidus_table_overflow_changed(&w->table);
        st = nidus_table_validate(&w->table);
    }
    if (!st)
        st = recount(w);
    if (!st && !written && nidus_window_entries(w))
        st = NIDUS_ERR_CORRUPT;
    if (st) {
        nidus_window_free(w);
        return st;
    }
    *out = w;
    return NIDUS_OK;
}
