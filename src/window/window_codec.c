/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters: the encoding.
 *
 * Encoding (nidus/codec.h's prefix, kind NIDUS_KIND_WINDOW):
 *     meta:     capacity u64 | window u64 | seed u64 | buckets u64 | bucket_size u8 | f u8 | max_kicks u16 |
 *               written u8 | latest u64 | latest_tick u64 | cursor u64 | owed u64 | credit u64 |
 *               overflow entries u32
 *     segments: the table's slots (nidus_table_shape_bytes), then each overflow entry as
 *               bucket u64 | value u32 | count u64, ordered by (bucket, value): not the map's slot order, which
 *               depends on the order of the adds and on the map's size, so equal filters encode equally and a
 *               decoded filter re-encodes to the same bytes
 * A filter with an expansion (grown or not) is written as NIDUS_FORMAT_VERSION_WINDOW_GROWN: the meta above, then
 *               expansion u32 | max_memory u64 | grown tables u8, then for each grown table, in order of level (a merge's
 *               siblings of a level, level 0 included, in the order they were made):
 *               level u8 | capacity u64 | buckets u64 | f u8 | written u8 | latest u64 | latest_tick u64 |
 *               cursor u64 | owed u64 | credit u64 | overflow entries u32
 *     segments: each table's slots and overflow entries as above, the first table's, then the grown ones'
 * A decoder re-derives everything else (the shape's offset bits and reach, g, the per-age counts, a grown table's
 * capacity and shape from its level) and checks every field against what a filter could have written (the
 * tables' slots within max_memory, as growth keeps them). Files are this encoding framed with block checksums
 * (file_io.h); chunks cut it as every kind's are (codec.h), the segments being the table's slots and the
 * sorted overflow entries. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bits_impl.h"
#include "codec.h"
#include "cuckoo_filter.h"
#include "cuckoo_table_impl.h"
#include "hash_impl.h"
#include "overflow.h"
#include "window_filter.h"

enum { META_BYTES = 8 * 4 + 1 + 1 + 2 + 1 + 8 * 5 + 4, OVERFLOW_ENTRY_BYTES = 8 + 4 + 8 };
enum { PREFIX_BYTES = NIDUS_CODEC_PREFIX_FIXED + META_BYTES };
enum { GROWTH_BYTES = 4 + 8 + 1, GROWN_META_BYTES = 1 + 8 + 8 + 1 + 1 + 8 * 5 + 4 };
enum { MAX_GROWN = NIDUS_WINDOW_MAX_TABLES - 1, MAX_SEGMENTS = 2 * NIDUS_WINDOW_MAX_TABLES };

static uint64_t table_bytes(const nidus_window *w) { return nidus_table_shape_bytes(&w->table.shape); }

/* The prefix and meta's bytes: the grown tables' metas after the first's for a filter with an expansion. */
static size_t prefix_bytes(const nidus_window *w)
{
    return PREFIX_BYTES + (w->expansion ? GROWTH_BYTES + (size_t)w->ngrown * GROWN_META_BYTES : 0);
}

/* A table's overflow entries: the map's, or while loading, the pending ones. */
static uint32_t entry_count(const nidus_window *t, const nidus_window *w)
{
    return w->loader ? t->pending_entries : t->table.overflow.used;
}

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
    uint64_t n = prefix_bytes(w) + NIDUS_CODEC_CHECKSUM_BYTES;
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(w, k);
        n += table_bytes(t) + (uint64_t)entry_count(t, w) * OVERFLOW_ENTRY_BYTES;
    }
    return n;
}

/* A table's clock and sweep. */
static void put_clock(nidus_writer *wr, const nidus_window *t)
{
    nidus_put_u8(wr, t->written);
    nidus_put_u64(wr, t->latest);
    nidus_put_u64(wr, t->latest_tick);
    nidus_put_u64(wr, t->cursor);
    nidus_put_u64(wr, t->owed);
    nidus_put_u64(wr, t->credit);
}

/* The prefix and meta (prefix_bytes) of an encoding of `total` bytes. */
static void put_prefix(const nidus_window *w, uint8_t *out, uint64_t total)
{
    const nidus_table *t = &w->table;
    nidus_writer wr = {out};
    nidus_codec_put_prefix(&wr, w->expansion ? NIDUS_FORMAT_VERSION_WINDOW_GROWN : NIDUS_FORMAT_VERSION,
                           NIDUS_KIND_WINDOW, total, (uint32_t)(prefix_bytes(w) - NIDUS_CODEC_PREFIX_FIXED));
    nidus_put_u64(&wr, w->capacity);
    nidus_put_u64(&wr, w->window);
    nidus_put_u64(&wr, w->seed);
    nidus_put_u64(&wr, t->shape.buckets);
    nidus_put_u8(&wr, t->shape.bucket_size);
    nidus_put_u8(&wr, w->f);
    nidus_put_u8(&wr, w->max_kicks & 0xff);
    nidus_put_u8(&wr, w->max_kicks >> 8);
    put_clock(&wr, w);
    nidus_put_u32(&wr, entry_count(w, w));
    if (!w->expansion)
        return;
    nidus_put_u32(&wr, w->expansion);
    nidus_put_u64(&wr, w->max_memory);
    nidus_put_u8(&wr, (uint8_t)w->ngrown);
    for (uint32_t k = 0; k < w->ngrown; k++) {
        const nidus_window *g = w->grown[k];
        nidus_put_u8(&wr, (uint8_t)g->level);
        nidus_put_u64(&wr, g->capacity);
        nidus_put_u64(&wr, g->table.shape.buckets);
        nidus_put_u8(&wr, (uint8_t)g->f);
        put_clock(&wr, g);
        nidus_put_u32(&wr, entry_count(g, w));
    }
}

/* The overflow entries as the encoding orders them, into `out` (used * OVERFLOW_ENTRY_BYTES bytes). */
static void put_entries(const nidus_window *w, uint8_t *out)
{
    const nidus_table *t = &w->table;
    nidus_writer wr = {out};
    for (uint32_t k = 0; t->overflow.used && k < t->overflow.capacity; k++) {
        const nidus_overflow_entry *e = &t->overflow.entries[k];
        if (!e->count)
            continue;
        nidus_put_u64(&wr, e->bucket);
        nidus_put_u32(&wr, e->fingerprint);
        nidus_put_u64(&wr, e->count);
    }
    qsort(out, t->overflow.used, OVERFLOW_ENTRY_BYTES, entry_order);
}

nidus_status nidus_window_encode(const nidus_window *w, void *buf, size_t cap, size_t *written)
{
    if (!w || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (w->loader)
        return NIDUS_ERR_READ_ONLY;
    uint64_t total = nidus_window_encoded_size(w);
    if (cap < total)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *out = buf, *at = out + prefix_bytes(w);
    put_prefix(w, out, total);
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(w, k);
        memcpy(at, t->table.data, (size_t)table_bytes(t));
        at += table_bytes(t);
        put_entries(t, at);
        at += (size_t)t->table.overflow.used * OVERFLOW_ENTRY_BYTES;
    }
    uint64_t sum = nidus_codec_checksum(out, (size_t)(total - NIDUS_CODEC_CHECKSUM_BYTES), NULL, 0);
    nidus_writer wr = {out + total - NIDUS_CODEC_CHECKSUM_BYTES};
    nidus_put_u64(&wr, sum);
    if (written)
        *written = (size_t)total;
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

/* A table's meta fields, checked against what a filter could have written. */
typedef struct table_meta {
    uint64_t capacity, latest, latest_tick, cursor, owed, credit;
    nidus_table_shape shape;
    unsigned written, level;
    uint32_t overflow;
} table_meta;

/* The meta's fields: the first table's and the filter's, then the grown tables'. */
typedef struct window_meta {
    uint64_t window, seed, max_memory;
    unsigned kicks, expansion, ngrown;
    table_meta t[NIDUS_WINDOW_MAX_TABLES];
} window_meta;

/* A table's clock and sweep against its shape and g: the sweep's clock may be a few epochs past the latest
 * write's (an advance that still owed a pass stayed in the latest write's epoch). */
static bool clock_ok(const table_meta *t, uint64_t g)
{
    uint64_t buckets = t->shape.buckets;
    return t->written <= 1 && t->cursor < buckets && t->owed <= buckets && t->credit < g &&
           (t->written ? t->latest <= t->latest_tick / g && t->latest_tick / g - t->latest < NIDUS_WINDOW_LIVE_EPOCHS
                       : !t->latest && !t->latest_tick && !t->cursor && !t->owed && !t->credit);
}

static void read_clock(nidus_reader *r, table_meta *t)
{
    t->written = nidus_get_u8(r);
    t->latest = nidus_get_u64(r);
    t->latest_tick = nidus_get_u64(r);
    t->cursor = nidus_get_u64(r);
    t->owed = nidus_get_u64(r);
    t->credit = nidus_get_u64(r);
}

/* The grown tables' metas (version 11), each checked against the shape its level gives. */
static nidus_status read_growth(nidus_reader *r, window_meta *m)
{
    const table_meta *first = &m->t[0];
    if (r->left < GROWTH_BYTES)
        return NIDUS_ERR_CORRUPT;
    m->expansion = nidus_get_u32(r);
    m->max_memory = nidus_get_u64(r);
    m->ngrown = nidus_get_u8(r);
    if (m->expansion < 1 || m->expansion > NIDUS_WINDOW_MAX_EXPANSION || m->ngrown > MAX_GROWN ||
        r->left != (size_t)m->ngrown * GROWN_META_BYTES || (m->ngrown && !first->written))
        return NIDUS_ERR_CORRUPT;
    nidus_window_base base = {.capacity = first->capacity, .window = m->window, .buckets = first->shape.buckets,
                              .bucket_size = first->shape.bucket_size, .f = first->shape.offset_bits,
                              .max_kicks = m->kicks, .expansion = m->expansion};
    uint64_t g = nidus_window_epoch_ticks(m->window);
    for (unsigned k = 1; k <= m->ngrown; k++) {
        table_meta *t = &m->t[k];
        t->level = nidus_get_u8(r);
        t->capacity = nidus_get_u64(r);
        uint64_t buckets = nidus_get_u64(r), capacity;
        unsigned f = nidus_get_u8(r);
        read_clock(r, t);
        t->overflow = nidus_get_u32(r);
        if (r->bad || t->level < m->t[k - 1].level ||
            nidus_window_level_shape(&base, t->level, &capacity, &t->shape) || capacity != t->capacity ||
            buckets != t->shape.buckets || f != t->shape.offset_bits || !t->written || !clock_ok(t, g) ||
            t->latest_tick != first->latest_tick)
            return NIDUS_ERR_CORRUPT; /* every table's clock moves with the first's */
    }
    /* creation and growth never let the tables' slots pass max_memory (growth counts the overflow maps too,
     * which a load therefore need not): anything a write produced loads, a forged bound below its tables not */
    uint64_t slots = 0;
    for (unsigned k = 0; k <= m->ngrown; k++) {
        uint64_t cost = nidus_cuckoo_table_cost(&m->t[k].shape);
        if (!nidus_cuckoo_fits(m->max_memory, slots, cost))
            return NIDUS_ERR_CORRUPT;
        slots = m->max_memory ? slots + cost : 0; /* within max_memory: no wrap */
    }
    return NIDUS_OK;
}

static nidus_status read_meta(nidus_reader *r, unsigned version, window_meta *m)
{
    table_meta *t = &m->t[0];
    memset(m, 0, sizeof *m);
    if (version == NIDUS_FORMAT_VERSION ? r->left != META_BYTES : r->left < META_BYTES)
        return NIDUS_ERR_CORRUPT;
    t->capacity = nidus_get_u64(r);
    m->window = nidus_get_u64(r);
    m->seed = nidus_get_u64(r);
    uint64_t buckets = nidus_get_u64(r);
    unsigned b = nidus_get_u8(r), f = nidus_get_u8(r);
    m->kicks = nidus_get_u8(r);
    m->kicks |= nidus_get_u8(r) << 8;
    read_clock(r, t);
    t->overflow = nidus_get_u32(r);
    if (r->bad || t->capacity < 1 || m->window < 1 || m->window > NIDUS_WINDOW_MAX_TICKS || t->written > 1 ||
        m->kicks < 1 || f < NIDUS_CUCKOO_MIN_FINGERPRINT_BITS || f > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_CORRUPT;
    t->shape = nidus_window_shape(buckets, b, f);
    nidus_window_base base = {.capacity = t->capacity, .window = m->window, .bucket_size = b, .f = f,
                              .max_kicks = m->kicks};
    nidus_table_shape planned;
    if (nidus_table_check_shape(&t->shape) != NIDUS_OK || !clock_ok(t, nidus_window_epoch_ticks(m->window)) ||
        nidus_window_first_shape(&base, &planned) != NIDUS_OK || planned.buckets != buckets)
        return NIDUS_ERR_CORRUPT; /* a table nidus_window_new would not have made for this capacity */
    return version == NIDUS_FORMAT_VERSION ? NIDUS_OK : read_growth(r, m);
}

/* The bytes of the tables' slots and overflow entries the meta announces, or UINT64_MAX past `limit` (summed
 * without wrapping: each term is checked against what is left of the limit first). */
static uint64_t body_bytes(const window_meta *m, uint64_t limit)
{
    uint64_t n = 0;
    for (unsigned k = 0; k <= m->ngrown; k++) {
        uint64_t t = nidus_table_shape_bytes(&m->t[k].shape), e = (uint64_t)m->t[k].overflow * OVERFLOW_ENTRY_BYTES;
        if (t > limit - n || e > limit - n - t)
            return UINT64_MAX;
        n += t + e;
    }
    return n;
}

/* A table's clock and sweep from its meta. */
static void set_clock(nidus_window *w, const table_meta *t)
{
    w->capacity = t->capacity;
    w->level = t->level;
    w->written = t->written;
    w->latest = t->latest;
    w->latest_tick = t->latest_tick;
    w->cursor = t->cursor;
    w->owed = t->owed;
    w->credit = t->credit;
}

/* An empty filter of the meta's shapes and state (the first table owned, or borrowed from `borrow`; the grown
 * ones owned), each table still to be filled. */
static nidus_status from_meta(const window_meta *m, const nidus_allocator *a, const uint8_t *borrow, bool writable,
                              nidus_window **out)
{
    nidus_window *w;
    nidus_status st = nidus_window_make(a, &m->t[0].shape, m->kicks, borrow, writable, &w);
    if (st)
        return st;
    w->window = m->window;
    w->epoch_ticks = nidus_window_epoch_ticks(m->window);
    w->epoch_inverse = UINT64_MAX / w->epoch_ticks;
    w->seed = m->seed;
    w->hash8_flip = nidus_hash8_flip(m->seed);
    w->expansion = m->expansion;
    w->max_memory = m->max_memory;
    set_clock(w, &m->t[0]);
    nidus_window_clock_changed(w);
    for (unsigned k = 1; k <= m->ngrown && !st; k++) {
        nidus_window *g;
        st = nidus_window_table_new(a, &m->t[k].shape, m->kicks, m->t[k].capacity, m->window, m->seed, &g);
        if (!st) {
            set_clock(g, &m->t[k]);
            nidus_window_clock_changed(g);
            if ((st = nidus_window_attach(w, g)))
                nidus_window_free(g);
        }
    }
    if (st) {
        nidus_window_free(w);
        return st;
    }
    *out = w;
    return NIDUS_OK;
}

/* nidus_table_validate but for the slack past the slots, which the encoding does not hold: a table read in place
 * has the bytes after it there (never read as slots: probes mask them off). */
static nidus_status validate_table(nidus_table *t)
{
    uint64_t occupied = 0, used_bits = t->shape.buckets * t->bucket_bits;
    nidus_status st = nidus_table_validate_buckets(t, 0, t->shape.buckets, &occupied);
    if (!st && used_bits % 8 && (t->data[nidus_table_shape_bytes(&t->shape) - 1] >> (used_bits % 8)))
        st = NIDUS_ERR_CORRUPT; /* the unused bits of the last byte */
    if (!st)
        st = nidus_table_validate_overflow(t);
    if (!st)
        t->occupied = occupied;
    return st;
}

/* The overflow entries from their bytes (`count` of them, in the encoding's order), then the table validated and
 * the per-age counts taken. */
static nidus_status finish(nidus_window *w, const uint8_t *entries, uint32_t count)
{
    nidus_reader r = {entries, (size_t)count * OVERFLOW_ENTRY_BYTES, false};
    nidus_status st = NIDUS_OK;
    for (uint32_t k = 0; k < count && !st; k++) {
        const uint8_t *entry = r.p;
        uint64_t bucket = nidus_get_u64(&r);
        uint32_t value = nidus_get_u32(&r);
        uint64_t n = nidus_get_u64(&r);
        if (bucket >= w->table.shape.buckets || !n || (uint64_t)value >> (w->f + NIDUS_WINDOW_AGE_BITS) ||
            (k > 0 && entry_order(entry - OVERFLOW_ENTRY_BYTES, entry) >= 0)) /* canonical: in order, no repeat */
            st = NIDUS_ERR_CORRUPT;
        else
            st = nidus_overflow_set(&w->table.overflow, w->alloc, bucket, value, n);
    }
    if (!st) {
        nidus_table_overflow_changed(&w->table);
        st = validate_table(&w->table);
    }
    if (!st)
        st = recount(w);
    if (!st && !w->written && nidus_window_entries(w))
        st = NIDUS_ERR_CORRUPT;
    return st;
}

/* Windowed filters came with encoding version 7 and file version 8: no older format holds them; those with an
 * expansion are 11 and 12. The encoding version of the buffer's, or 0 for one this build does not read. */
static unsigned encoding_version(const uint8_t *buf, nidus_decode_mode mode)
{
    unsigned v = buf[5] - (mode == NIDUS_DECODE_WHOLE ? 0u : 1u);
    return v == NIDUS_FORMAT_VERSION || v == NIDUS_FORMAT_VERSION_WINDOW_GROWN ? v : 0;
}

nidus_status nidus_window_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                      nidus_decode_target target, nidus_decode_mode mode, nidus_window **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const uint8_t *in = buf;
    nidus_reader meta;
    size_t prefix, tail;
    window_meta m;
    nidus_status st = nidus_codec_open(in, len, NIDUS_KIND_WINDOW, NIDUS_FORMAT_VERSION_WINDOW_GROWN, mode, &meta, &prefix, &tail);
    unsigned version = st ? 0 : encoding_version(in, mode);
    if (st || (st = version ? NIDUS_OK : NIDUS_ERR_VERSION) || (st = read_meta(&meta, version, &m)))
        return st;
    /* every table and its overflow entries must be in the buffer before anything is allocated for them */
    uint64_t body = len - prefix - tail, tbytes = nidus_table_shape_bytes(&m.t[0].shape);
    if (body_bytes(&m, body) != body)
        return NIDUS_ERR_CORRUPT;
    /* a view or a borrowed table reads its words in place: the slack past the table must be in the buffer (the
     * overflow entries, the checksum, a file's block table and footer), else the table is copied; grown tables
     * are always copied */
    const uint8_t *table = in + prefix;
    bool in_place = target != NIDUS_DECODE_COPY && len - prefix - tbytes >= NIDUS_BITS_SLACK;
    nidus_window *w;
    if ((st = from_meta(&m, nidus_alloc_pick(allocator), in_place ? table : NULL,
                        target == NIDUS_DECODE_BORROW, &w)))
        return st;
    w->read_only = target == NIDUS_DECODE_VIEW;
    const uint8_t *at = table;
    for (uint32_t k = 0; k <= w->ngrown && !st; k++) {
        nidus_window *t = nidus_window_table_at(w, k);
        uint64_t n = table_bytes(t);
        if (k || !in_place)
            memcpy(t->table.data, at, (size_t)n);
        at += n;
        st = finish(t, at, m.t[k].overflow);
        at += (size_t)m.t[k].overflow * OVERFLOW_ENTRY_BYTES;
    }
    if (!st && nidus_window_all_entries(w) > NIDUS_TABLE_MAX_ITEMS)
        st = NIDUS_ERR_CORRUPT; /* more entries than a filter can have */
    if (st) {
        nidus_window_free(w);
        return st;
    }
    *out = w;
    return NIDUS_OK;
}

nidus_status nidus_window_decode(const void *buf, size_t len, const nidus_allocator *allocator, nidus_window **out)
{
    return nidus_window_decode_mode(buf, len, allocator, NIDUS_DECODE_COPY, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_window_view(const void *buf, size_t len, const nidus_allocator *allocator, nidus_window **out)
{
    return nidus_window_decode_mode(buf, len, allocator, NIDUS_DECODE_VIEW, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_window_rewrite_body(const nidus_window *w, uint8_t *body, size_t len)
{
    uint64_t total = nidus_window_encoded_size(w), tbytes = table_bytes(w);
    if (w->loader || w->ngrown || total - NIDUS_CODEC_CHECKSUM_BYTES != len || !w->table.borrowed ||
        w->table.data != body + prefix_bytes(w))
        return NIDUS_ERR_UNSUPPORTED; /* the same size means the same count of overflow entries: same layout
                                       * (a grown filter is saved whole) */
    uint8_t prefix[PREFIX_BYTES + GROWTH_BYTES];
    put_prefix(w, prefix, total);
    nidus_codec_put_if_changed(body, prefix, prefix_bytes(w));
    size_t n = (size_t)w->table.overflow.used * OVERFLOW_ENTRY_BYTES;
    if (n) {
        uint8_t *entries = nidus_malloc(w->alloc, n);
        if (!entries)
            return NIDUS_ERR_NO_MEMORY;
        put_entries(w, entries);
        nidus_codec_put_if_changed(body + prefix_bytes(w) + tbytes, entries, n);
        nidus_free(w->alloc, entries);
    }
    return NIDUS_OK;
}

/* ---- chunks ---- */

bool nidus_window_loading(const nidus_window *w) { return w && w->loader; }

/* The encoding's segments after the prefix: each table's slots, then its overflow entries (`entries[k]` for
 * table k, or the pending ones while loading). Returns their count. */
static unsigned segments(const nidus_window *w, uint8_t *const *entries, nidus_segment *segs)
{
    unsigned n = 0;
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(w, k);
        segs[n++] = (nidus_segment){t->table.data, table_bytes(t)};
        segs[n++] = w->loader ? (nidus_segment){t->pending, (uint64_t)t->pending_entries * OVERFLOW_ENTRY_BYTES}
                              : (nidus_segment){entries[k], (uint64_t)t->table.overflow.used * OVERFLOW_ENTRY_BYTES};
    }
    return n;
}

nidus_status nidus_window_dump_chunk(const nidus_window *w, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                     uint64_t *next)
{
    return nidus_window_dump_chunk_sum(w, cursor, buf, cap, len, next, NULL);
}

nidus_status nidus_window_dump_chunk_sum(const nidus_window *w, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                         uint64_t *next, nidus_dump_sum *sum)
{
    if (!w || !buf || !len || !next || cursor > UINT32_MAX)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_segment segs[MAX_SEGMENTS];
    if (w->loader)
        return nidus_codec_dump_received(w->loader, segs, segments(w, NULL, segs), cursor, buf, cap, len, next);
    uint8_t *entries[NIDUS_WINDOW_MAX_TABLES] = {0};
    nidus_status st = NIDUS_OK;
    for (uint32_t k = 0; k <= w->ngrown && !st; k++) {
        const nidus_window *t = nidus_window_table_at(w, k);
        size_t n = (size_t)t->table.overflow.used * OVERFLOW_ENTRY_BYTES;
        if (n && !(entries[k] = nidus_malloc(w->alloc, n)))
            st = NIDUS_ERR_NO_MEMORY;
        else if (n)
            put_entries(t, entries[k]);
    }
    if (!st) {
        uint8_t prefix[PREFIX_BYTES + GROWTH_BYTES + MAX_GROWN * GROWN_META_BYTES];
        put_prefix(w, prefix, nidus_window_encoded_size(w));
        st = nidus_codec_dump_chunk(prefix, prefix_bytes(w), segs, segments(w, entries, segs), cursor, buf, cap,
                                    len, next, sum);
    }
    for (uint32_t k = 0; k <= w->ngrown; k++)
        nidus_free(w->alloc, entries[k]);
    return st;
}

/* The header chunk: an empty filter of its shapes, loading. */
static nidus_status load_header(const uint8_t *payload, uint32_t n, uint64_t token, uint64_t max_bytes,
                                const nidus_allocator *allocator, nidus_window **out)
{
    nidus_reader meta;
    uint64_t total;
    window_meta m;
    nidus_status st = nidus_codec_open_header(payload, n, token, NIDUS_KIND_WINDOW, NIDUS_FORMAT_VERSION_WINDOW_GROWN,
                                                 &meta, &total);
    unsigned version = st ? 0 : encoding_version(payload, NIDUS_DECODE_WHOLE);
    if (st || (st = version ? NIDUS_OK : NIDUS_ERR_VERSION) || (st = read_meta(&meta, version, &m)))
        return st;
    if (total < n || total - n < NIDUS_CODEC_CHECKSUM_BYTES ||
        body_bytes(&m, total - n - NIDUS_CODEC_CHECKSUM_BYTES) != total - n - NIDUS_CODEC_CHECKSUM_BYTES)
        return NIDUS_ERR_CORRUPT;
    /* the tables' slots by the measure creation and growth check against max_memory, and apart from them the
     * overflow entries held until they are applied: each within max_bytes, before anything is allocated */
    uint64_t slots = 0, entries = 0;
    for (unsigned k = 0; k <= m.ngrown; k++) {
        uint64_t cost = nidus_cuckoo_table_cost(&m.t[k].shape), e = (uint64_t)m.t[k].overflow * OVERFLOW_ENTRY_BYTES;
        if (!nidus_cuckoo_fits(max_bytes, slots, cost) || !nidus_cuckoo_fits(max_bytes, entries, e))
            return NIDUS_ERR_LIMIT_MEMORY;
        slots += cost, entries += e; /* each below the body's bytes (body_bytes): no wrap */
    }
    nidus_window *w;
    if ((st = from_meta(&m, nidus_alloc_pick(allocator), NULL, false, &w)))
        return st;
    if (max_bytes && w->expansion && (!w->max_memory || w->max_memory > max_bytes))
        w->max_memory = max_bytes; /* it grows here within this limit, so it always loads here again */
    for (uint32_t k = 0; k <= w->ngrown && !st; k++) {
        nidus_window *t = nidus_window_table_at(w, k);
        uint64_t ebytes = (uint64_t)m.t[k].overflow * OVERFLOW_ENTRY_BYTES;
        if (ebytes && !(t->pending = nidus_malloc(w->alloc, (size_t)ebytes)))
            st = NIDUS_ERR_NO_MEMORY;
        t->pending_entries = m.t[k].overflow;
    }
    if (!st)
        st = nidus_chunk_loader_begin(&w->loader, w->alloc, payload, n, token, total - n);
    nidus_window_clock_changed(w); /* loading: every lookup false */
    if (st) {
        nidus_window_free(w);
        return st;
    }
    *out = w;
    return NIDUS_OK;
}

nidus_status nidus_window_load_chunk(nidus_window **filter, const void *chunk, size_t len, uint64_t max_bytes,
                                     const nidus_allocator *allocator)
{
    if (!filter || !chunk)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint32_t seq, n;
    uint64_t token;
    const uint8_t *payload;
    nidus_status st = nidus_chunk_parse(chunk, len, &seq, &token, &payload, &n);
    if (st)
        return st;
    nidus_window *w = *filter;
    if (seq == 0) {
        if (w)
            return NIDUS_ERR_SEQUENCE;
        return load_header(payload, n, token, max_bytes, allocator, filter);
    }
    if (!w || !w->loader)
        return NIDUS_ERR_SEQUENCE;
    if (w->loader->failed)
        return NIDUS_ERR_CORRUPT;
    nidus_segment segs[MAX_SEGMENTS];
    bool complete;
    st = nidus_chunk_accept(w->loader, seq, token, payload, n, segs, segments(w, NULL, segs), &complete);
    if (st || !complete)
        return st;
    for (uint32_t k = 0; k <= w->ngrown && !st; k++) {
        nidus_window *t = nidus_window_table_at(w, k);
        st = finish(t, t->pending, t->pending_entries);
    }
    if (!st && nidus_window_all_entries(w) > NIDUS_TABLE_MAX_ITEMS)
        st = NIDUS_ERR_CORRUPT; /* more entries than a filter can have */
    if (st) {
        w->loader->failed = true; /* the tables may hold part of the entries: it stays loading, to be freed */
        return st;
    }
    nidus_chunk_loader_release(&w->loader, w->alloc);
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        nidus_window *t = nidus_window_table_at(w, k);
        nidus_window_clock_changed(t);
        nidus_free(w->alloc, t->pending);
        t->pending = NULL;
        t->pending_entries = 0;
    }
    return NIDUS_OK;
}

NIDUS_DEFINE_FILE_FUNCTIONS(nidus_window, nidus_window)
