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
 * A decoder re-derives everything else (the shape's offset bits and reach, g, the per-age counts) and checks
 * every field against what a filter could have written. Files are this encoding framed with block checksums
 * (file_io.h); chunks cut it as every kind's are (codec.h), the segments being the table's slots and the
 * sorted overflow entries. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bits_impl.h"
#include "codec.h"
#include "cuckoo_table_impl.h"
#include "hash_impl.h"
#include "overflow.h"
#include "window_filter.h"

enum { META_BYTES = 8 * 4 + 1 + 1 + 2 + 1 + 8 * 5 + 4, OVERFLOW_ENTRY_BYTES = 8 + 4 + 8 };
enum { PREFIX_BYTES = NIDUS_CODEC_PREFIX_FIXED + META_BYTES };

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
    uint32_t entries = w->loader ? w->pending_entries : w->table.overflow.used;
    return PREFIX_BYTES + table_bytes(w) + (uint64_t)entries * OVERFLOW_ENTRY_BYTES + NIDUS_CODEC_CHECKSUM_BYTES;
}

/* The prefix and meta (PREFIX_BYTES) of an encoding of `total` bytes. */
static void put_prefix(const nidus_window *w, uint8_t *out, uint64_t total)
{
    const nidus_table *t = &w->table;
    nidus_writer wr = {out};
    nidus_codec_put_prefix(&wr, NIDUS_FORMAT_VERSION, NIDUS_KIND_WINDOW, total, META_BYTES);
    nidus_put_u64(&wr, w->capacity);
    nidus_put_u64(&wr, w->window);
    nidus_put_u64(&wr, w->seed);
    nidus_put_u64(&wr, t->shape.buckets);
    nidus_put_u8(&wr, t->shape.bucket_size);
    nidus_put_u8(&wr, w->f);
    nidus_put_u8(&wr, w->max_kicks & 0xff);
    nidus_put_u8(&wr, w->max_kicks >> 8);
    nidus_put_u8(&wr, w->written);
    nidus_put_u64(&wr, w->latest);
    nidus_put_u64(&wr, w->latest_tick);
    nidus_put_u64(&wr, w->cursor);
    nidus_put_u64(&wr, w->owed);
    nidus_put_u64(&wr, w->credit);
    nidus_put_u32(&wr, t->overflow.used);
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
    uint8_t *out = buf;
    put_prefix(w, out, total);
    memcpy(out + PREFIX_BYTES, w->table.data, (size_t)table_bytes(w));
    put_entries(w, out + PREFIX_BYTES + table_bytes(w));
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

/* The meta's fields, checked against what a filter could have written. */
typedef struct window_meta {
    uint64_t capacity, window, seed, latest, latest_tick, cursor, owed, credit;
    nidus_table_shape shape;
    unsigned kicks, written;
    uint32_t overflow;
} window_meta;

static nidus_status read_meta(nidus_reader *r, window_meta *m)
{
    if (r->left != META_BYTES)
        return NIDUS_ERR_CORRUPT;
    m->capacity = nidus_get_u64(r);
    m->window = nidus_get_u64(r);
    m->seed = nidus_get_u64(r);
    uint64_t buckets = nidus_get_u64(r);
    unsigned b = nidus_get_u8(r), f = nidus_get_u8(r);
    m->kicks = nidus_get_u8(r);
    m->kicks |= nidus_get_u8(r) << 8;
    m->written = nidus_get_u8(r);
    m->latest = nidus_get_u64(r);
    m->latest_tick = nidus_get_u64(r);
    m->cursor = nidus_get_u64(r);
    m->owed = nidus_get_u64(r);
    m->credit = nidus_get_u64(r);
    m->overflow = nidus_get_u32(r);
    if (r->bad || m->capacity < 1 || m->window < 1 || m->window > NIDUS_WINDOW_MAX_TICKS || m->written > 1 ||
        m->kicks < 1 || f < NIDUS_CUCKOO_MIN_FINGERPRINT_BITS || f > 32 - NIDUS_WINDOW_AGE_BITS)
        return NIDUS_ERR_CORRUPT;
    m->shape = nidus_window_shape(buckets, b, f);
    if (nidus_table_check_shape(&m->shape) != NIDUS_OK)
        return NIDUS_ERR_CORRUPT;
    uint64_t g = nidus_window_epoch_ticks(m->window);
    /* the sweep's clock may be a few epochs past the latest write's: an advance that still owed a pass stayed in
     * the latest write's epoch */
    if (m->cursor >= buckets || m->owed > buckets || m->credit >= g ||
        (m->written ? m->latest > m->latest_tick / g || m->latest_tick / g - m->latest >= NIDUS_WINDOW_LIVE_EPOCHS
                    : m->latest || m->latest_tick || m->cursor || m->owed || m->credit))
        return NIDUS_ERR_CORRUPT;
    return NIDUS_OK;
}

/* An empty filter of the meta's shape and state (table owned, or borrowed from `borrow`). */
static nidus_status from_meta(const window_meta *m, const nidus_allocator *a, const uint8_t *borrow, bool writable,
                              nidus_window **out)
{
    nidus_window *w;
    nidus_status st = nidus_window_make(a, &m->shape, m->kicks, borrow, writable, &w);
    if (st)
        return st;
    w->capacity = m->capacity;
    w->window = m->window;
    w->epoch_ticks = nidus_window_epoch_ticks(m->window);
    w->epoch_inverse = UINT64_MAX / w->epoch_ticks;
    w->seed = m->seed;
    w->hash8_flip = nidus_hash8_flip(m->seed);
    w->written = m->written;
    w->latest = m->latest;
    w->latest_tick = m->latest_tick;
    w->cursor = m->cursor;
    w->owed = m->owed;
    w->credit = m->credit;
    nidus_window_clock_changed(w);
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

/* Windowed filters came with encoding version 7 and file version 8: no older format holds them. */
static nidus_status check_version(const uint8_t *buf, nidus_decode_mode mode)
{
    return buf[5] == (mode == NIDUS_DECODE_WHOLE ? NIDUS_FORMAT_VERSION : NIDUS_FILE_FORMAT_VERSION)
               ? NIDUS_OK
               : NIDUS_ERR_VERSION;
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
    nidus_status st = nidus_codec_open(in, len, NIDUS_KIND_WINDOW, NIDUS_FORMAT_VERSION, mode, &meta, &prefix, &tail);
    if (st || (st = check_version(in, mode)) || (st = read_meta(&meta, &m)))
        return st;
    /* the table and the overflow entries must be in the buffer before anything is allocated for them */
    uint64_t body = len - prefix - tail, tbytes = nidus_table_shape_bytes(&m.shape);
    if (tbytes > body || (body - tbytes) / OVERFLOW_ENTRY_BYTES != m.overflow || (body - tbytes) % OVERFLOW_ENTRY_BYTES)
        return NIDUS_ERR_CORRUPT;
    /* a view or a borrowed table reads its words in place: the slack past the table must be in the buffer (the
     * overflow entries, the checksum, a file's block table and footer), else the table is copied */
    const uint8_t *table = in + prefix;
    bool in_place = target != NIDUS_DECODE_COPY && len - prefix - tbytes >= NIDUS_BITS_SLACK;
    nidus_window *w;
    if ((st = from_meta(&m, nidus_alloc_pick(allocator), in_place ? table : NULL,
                        target == NIDUS_DECODE_BORROW, &w)))
        return st;
    if (!in_place)
        memcpy(w->table.data, table, (size_t)tbytes);
    w->read_only = target == NIDUS_DECODE_VIEW;
    if ((st = finish(w, table + tbytes, m.overflow))) {
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
    if (w->loader || total - NIDUS_CODEC_CHECKSUM_BYTES != len || !w->table.borrowed ||
        w->table.data != body + PREFIX_BYTES)
        return NIDUS_ERR_UNSUPPORTED; /* the same size means the same count of overflow entries: same layout */
    uint8_t prefix[PREFIX_BYTES];
    put_prefix(w, prefix, total);
    nidus_codec_put_if_changed(body, prefix, PREFIX_BYTES);
    size_t n = (size_t)w->table.overflow.used * OVERFLOW_ENTRY_BYTES;
    if (n) {
        uint8_t *entries = nidus_malloc(w->alloc, n);
        if (!entries)
            return NIDUS_ERR_NO_MEMORY;
        put_entries(w, entries);
        nidus_codec_put_if_changed(body + PREFIX_BYTES + tbytes, entries, n);
        nidus_free(w->alloc, entries);
    }
    return NIDUS_OK;
}

/* ---- chunks ---- */

bool nidus_window_loading(const nidus_window *w) { return w && w->loader; }

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
    if (w->loader) {
        nidus_segment segs[2] = {{w->table.data, table_bytes(w)},
                                 {w->pending, (uint64_t)w->pending_entries * OVERFLOW_ENTRY_BYTES}};
        return nidus_codec_dump_received(w->loader, segs, 2, cursor, buf, cap, len, next);
    }
    size_t n = (size_t)w->table.overflow.used * OVERFLOW_ENTRY_BYTES;
    uint8_t *entries = n ? nidus_malloc(w->alloc, n) : NULL;
    if (n && !entries)
        return NIDUS_ERR_NO_MEMORY;
    if (n)
        put_entries(w, entries);
    uint8_t prefix[PREFIX_BYTES];
    put_prefix(w, prefix, nidus_window_encoded_size(w));
    nidus_segment segs[2] = {{w->table.data, table_bytes(w)}, {entries, n}};
    nidus_status st = nidus_codec_dump_chunk(prefix, PREFIX_BYTES, segs, 2, cursor, buf, cap, len, next, sum);
    nidus_free(w->alloc, entries);
    return st;
}

/* The header chunk: an empty filter of its shape, loading. */
static nidus_status load_header(const uint8_t *payload, uint32_t n, uint64_t token, uint64_t max_bytes,
                                const nidus_allocator *allocator, nidus_window **out)
{
    nidus_reader meta;
    uint64_t total;
    window_meta m;
    nidus_status st = nidus_codec_open_header(payload, n, token, NIDUS_KIND_WINDOW, NIDUS_FORMAT_VERSION, &meta, &total);
    if (st || (st = check_version(payload, NIDUS_DECODE_WHOLE)) || (st = read_meta(&meta, &m)))
        return st;
    uint64_t tbytes = nidus_table_shape_bytes(&m.shape), ebytes = (uint64_t)m.overflow * OVERFLOW_ENTRY_BYTES;
    if (total < n || total - n != tbytes + ebytes + NIDUS_CODEC_CHECKSUM_BYTES)
        return NIDUS_ERR_CORRUPT;
    if (max_bytes && total > max_bytes)
        return NIDUS_ERR_LIMIT_MEMORY;
    nidus_window *w;
    if ((st = from_meta(&m, nidus_alloc_pick(allocator), NULL, false, &w)))
        return st;
    if (ebytes && !(w->pending = nidus_malloc(w->alloc, (size_t)ebytes)))
        st = NIDUS_ERR_NO_MEMORY;
    w->pending_entries = m.overflow;
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
    nidus_segment segs[2] = {{w->table.data, table_bytes(w)},
                             {w->pending, (uint64_t)w->pending_entries * OVERFLOW_ENTRY_BYTES}};
    bool complete;
    st = nidus_chunk_accept(w->loader, seq, token, payload, n, segs, 2, &complete);
    if (st || !complete)
        return st;
    if ((st = finish(w, w->pending, w->pending_entries))) {
        w->loader->failed = true; /* the table may hold part of the entries: it stays loading, to be freed */
        return st;
    }
    nidus_chunk_loader_release(&w->loader, w->alloc);
    nidus_window_clock_changed(w);
    nidus_free(w->alloc, w->pending);
    w->pending = NULL;
    w->pending_entries = 0;
    return NIDUS_OK;
}

NIDUS_DEFINE_FILE_FUNCTIONS(nidus_window, nidus_window)
