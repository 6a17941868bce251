/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding and decoding of cuckoo filters: whole, viewed in place, and in chunks. Layout in codec.h; the
 * cuckoo meta is
 *     seed u64 | max_memory u64 | deleted u64 | max_kicks u32 | expansion u32 |
 *     bucket_size u8 | f0 u8 | reach_log2 u8 | flags u8 (bit 0: semi-sorted; bit 1, from version 5: range
 *     placement, else the mod placement of versions 1-4: cuckoo_table_impl.h) |
 *     tables u8 | max_tables u8 | offset_bits u8 | 0 u8
 *     per table: buckets u64 | overflow entries u64 | fingerprints in slots u64 | fingerprint bits u8 |
 *                position - level u8 (from version 9; before, 0: every table's level was its position) | 6 zeros
 * and the segments are, per table, its overflow entries (bucket u64 | count u64 | fingerprint u32 each,
 * sorted by (bucket, fingerprint)) and then its bit-packed slots with their NIDUS_BITS_SLACK zero bytes, exactly as they
 * lie in memory — which is what lets a mapped file be probed without a copy. Only a filter with a sibling table
 * (a level held by two tables or more: merges make them) is written as version 9, where a table's level byte can
 * be other than 0; every other filter is written as version 7, byte for byte as before levels existed. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "codec.h"
#include "cuckoo_dispatch.h"
#include "hash_impl.h"
#include "params.h"

#define META_FIXED 40u
#define META_PER_TABLE 32u
#define OV_ENTRY_BYTES 20u
#define PREFIX_MAX (NIDUS_CODEC_PREFIX_FIXED + META_FIXED + META_PER_TABLE * NIDUS_CUCKOO_MAX_TABLES)
#define SEGS_MAX (2 * NIDUS_CUCKOO_MAX_TABLES + 1)
#define FLAG_SEMI 1u
#define FLAG_RANGE 2u

typedef struct cuckoo_meta {
    uint64_t seed, max_memory, deleted;
    unsigned max_kicks, expansion, max_tables, ntables;
    nidus_table_shape shapes[NIDUS_CUCKOO_MAX_TABLES];
    uint64_t overflow[NIDUS_CUCKOO_MAX_TABLES];
    uint64_t occupied[NIDUS_CUCKOO_MAX_TABLES];
    uint64_t stream; /* bytes of segments and checksum the meta implies */
    uint64_t memory; /* what the tables cost by the measure growth checks against max_memory */
    bool stash;      /* version 7 on: overflow entries may be stash entries (earlier writers made none) */
    bool levels;     /* version 9 on: tables may have siblings (earlier writers made none) */
} cuckoo_meta;

static uint32_t meta_bytes(unsigned ntables) { return META_FIXED + META_PER_TABLE * ntables; }

/* Whether some table shares its level with the one before it. */
static bool has_siblings(const nidus_cuckoo *cf)
{
    for (unsigned k = 1; k < cf->ntables; k++)
        if (cf->tables[k].shape.level == cf->tables[k - 1].shape.level)
            return true;
    return false;
}

/* The prefix of cf's encoding into `out` (PREFIX_MAX bytes); returns its length. */
static size_t write_prefix(const nidus_cuckoo *cf, uint8_t *out, uint64_t total)
{
    nidus_writer w = {out};
    unsigned version = has_siblings(cf) ? NIDUS_FORMAT_VERSION_SIBLINGS : NIDUS_FORMAT_VERSION;
    nidus_codec_put_prefix(&w, version, NIDUS_KIND_CUCKOO, total, meta_bytes(cf->ntables));
    nidus_put_u64(&w, cf->seed);
    nidus_put_u64(&w, cf->max_memory);
    nidus_put_u64(&w, cf->deleted);
    nidus_put_u32(&w, cf->max_kicks);
    nidus_put_u32(&w, cf->expansion);
    nidus_put_u8(&w, cf->base.bucket_size);
    nidus_put_u8(&w, cf->base.fp_bits);
    nidus_put_u8(&w, cf->base.reach_log2);
    nidus_put_u8(&w, (cf->base.semi_sort ? FLAG_SEMI : 0) | (cf->base.mod_placement ? 0 : FLAG_RANGE));
    nidus_put_u8(&w, cf->ntables);
    nidus_put_u8(&w, cf->max_tables);
    nidus_put_u8(&w, cf->base.offset_bits);
    nidus_put_u8(&w, 0);
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        nidus_put_u64(&w, t->shape.buckets);
        nidus_put_u64(&w, t->overflow.used);
        nidus_put_u64(&w, t->occupied);
        nidus_put_u8(&w, t->shape.fp_bits);
        nidus_put_u8(&w, k - t->shape.level); /* 0 without siblings */
        for (unsigned z = 0; z < 6; z++)
            nidus_put_u8(&w, 0);
    }
    return (size_t)(w.p - out);
}

static uint64_t stream_bytes(const nidus_cuckoo *cf)
{
    uint64_t n = NIDUS_CODEC_CHECKSUM_BYTES;
    for (unsigned k = 0; k < cf->ntables; k++)
        n += (uint64_t)cf->tables[k].overflow.used * OV_ENTRY_BYTES + nidus_table_bytes(&cf->tables[k]);
    return n;
}

uint64_t nidus_full_encoded_size(const nidus_cuckoo *cf)
{
    return NIDUS_CODEC_PREFIX_FIXED + meta_bytes(cf->ntables) + stream_bytes(cf);
}

/* Orders serialised entries by (bucket, fingerprint): little-endian fields, so compare the values. */
static int entry_order(const void *a, const void *b)
{
    nidus_reader ra = {a, OV_ENTRY_BYTES, false}, rb = {b, OV_ENTRY_BYTES, false};
    uint64_t ba = nidus_get_u64(&ra), bb = nidus_get_u64(&rb);
    if (ba != bb)
        return ba < bb ? -1 : 1;
    nidus_get_u64(&ra);
    nidus_get_u64(&rb);
    uint32_t fa = nidus_get_u32(&ra), fb = nidus_get_u32(&rb);
    return (fa > fb) - (fa < fb);
}

/* The entries sorted by (bucket, fingerprint), not in the map's slot order, which depends on the order they
 * were added: two equal filters (a master and its replica) must encode to equal bytes. */
static void write_overflow(const nidus_overflow *ov, uint8_t *out)
{
    nidus_writer w = {out};
    for (uint64_t e = 0; e < ov->capacity; e++) {
        const nidus_overflow_entry *en = &ov->entries[e];
        if (!en->count)
            continue;
        nidus_put_u64(&w, en->bucket);
        nidus_put_u64(&w, en->count);
        nidus_put_u32(&w, en->fingerprint);
    }
    qsort(out, (size_t)ov->used, OV_ENTRY_BYTES, entry_order);
}

/* The segments of cf: serialised overflow maps (in buffers allocated here, freed by release_segments) and the
 * tables' own bytes. The checksum is not among them. */
static nidus_status build_segments(const nidus_cuckoo *cf, nidus_segment *segs, unsigned *count)
{
    unsigned n = 0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        uint8_t *ov = NULL;
        uint64_t ov_bytes = (uint64_t)t->overflow.used * OV_ENTRY_BYTES;
        if (ov_bytes) {
            ov = nidus_malloc(cf->alloc, (size_t)ov_bytes);
            if (!ov) {
                *count = n;
                return NIDUS_ERR_NO_MEMORY;
            }
            write_overflow(&t->overflow, ov);
        }
        segs[n++] = (nidus_segment){ov, ov_bytes};
        segs[n++] = (nidus_segment){t->data, nidus_table_bytes(t)};
    }
    *count = n;
    return NIDUS_OK;
}

static void release_segments(const nidus_cuckoo *cf, nidus_segment *segs, unsigned count)
{
    for (unsigned s = 0; s < count; s += 2)
        nidus_free(cf->alloc, (void *)(uintptr_t)segs[s].data);
}

nidus_status nidus_full_encode(const nidus_cuckoo *cf, void *buf, size_t cap, size_t *written)
{
    if (cf->loader)
        return NIDUS_ERR_READ_ONLY;
    uint64_t total = nidus_full_encoded_size(cf);
    if (total > cap)
        return NIDUS_ERR_TOO_LARGE;
    nidus_segment segs[SEGS_MAX];
    unsigned count;
    nidus_status st = build_segments(cf, segs, &count);
    if (!st) {
        uint8_t prefix[PREFIX_MAX];
        size_t prefix_bytes = write_prefix(cf, prefix, total);
        nidus_codec_write_whole(buf, total, prefix, prefix_bytes, segs, count);
        if (written)
            *written = (size_t)total;
    }
    release_segments(cf, segs, count);
    return st;
}

/* ---- decoding ---- */

/* Parses and checks every field of the meta; fills `m`. Nothing is allocated. */
static nidus_status parse_meta(nidus_reader *r, cuckoo_meta *m)
{
    unsigned known_flags = nidus_codec_meta_version(r) >= 3 ? FLAG_SEMI | FLAG_RANGE : FLAG_SEMI;
    m->stash = nidus_codec_meta_version(r) >= 4;
    m->levels = nidus_codec_meta_version(r) >= 5;
    m->seed = nidus_get_u64(r);
    m->max_memory = nidus_get_u64(r);
    m->deleted = nidus_get_u64(r);
    m->max_kicks = nidus_get_u32(r);
    m->expansion = nidus_get_u32(r);
    nidus_table_shape base = {0};
    base.bucket_size = nidus_get_u8(r);
    base.fp_bits = nidus_get_u8(r);
    base.reach_log2 = nidus_get_u8(r);
    unsigned flags = nidus_get_u8(r);
    m->ntables = nidus_get_u8(r);
    m->max_tables = nidus_get_u8(r);
    base.offset_bits = nidus_get_u8(r);
    unsigned zero = nidus_get_u8(r);
    base.semi_sort = flags & FLAG_SEMI;
    base.mod_placement = !(flags & FLAG_RANGE); /* every filter of versions 1-4 */
    if (r->bad || zero || (flags & ~known_flags) || m->ntables < 1 || m->ntables > m->max_tables ||
        base.offset_bits != base.fp_bits || r->left != (size_t)m->ntables * META_PER_TABLE ||
        nidus_cuckoo_check_limits(m->expansion, m->max_tables, m->max_kicks))
        return NIDUS_ERR_CORRUPT;
    double base_bound = nidus_cuckoo_error_bound(base.bucket_size, base.fp_bits);
    uint64_t stream = NIDUS_CODEC_CHECKSUM_BYTES, memory = 0;
    bool siblings = false;
    for (unsigned k = 0; k < m->ntables; k++) {
        nidus_table_shape s = base;
        s.buckets = nidus_get_u64(r);
        m->overflow[k] = nidus_get_u64(r);
        m->occupied[k] = nidus_get_u64(r);
        s.fp_bits = nidus_get_u8(r);
        unsigned below = nidus_get_u8(r); /* position - level */
        s.stride = k == 0 || s.buckets % m->shapes[0].buckets ? 1 : s.buckets / m->shapes[0].buckets;
        for (unsigned z = 0; z < 6; z++)
            zero |= nidus_get_u8(r);
        /* Levels: 0 first, then each the one before or the next (sorted, no step skipped); none before 9. */
        unsigned prev = k == 0 ? 0 : m->shapes[k - 1].level;
        if (r->bad || zero || below > k || (below && !m->levels) || (k > 0 && k - below != prev && k - below != prev + 1))
            return NIDUS_ERR_CORRUPT;
        s.level = (uint8_t)(k - below);
        if (nidus_table_check_shape(&s))
            return NIDUS_ERR_CORRUPT;
        if (k > 0 && s.level == prev) {
            /* A sibling: the shape of the tables of its level (a copy of a merged source's table). */
            if (m->expansion == 0 || s.buckets != m->shapes[k - 1].buckets || s.fp_bits != m->shapes[k - 1].fp_bits)
                return NIDUS_ERR_CORRUPT;
            siblings = true;
        } else if (k == 0 ? s.fp_bits != base.fp_bits
                          : (m->expansion == 0 || s.buckets % m->shapes[k - 1].buckets ||
                             (s.buckets / m->shapes[k - 1].buckets) % m->expansion || s.fp_bits < base.fp_bits ||
                             nidus_cuckoo_error_bound(s.bucket_size, s.fp_bits) >
                                 nidus_cuckoo_table_budget(base_bound, s.level))) {
            /* What growth guarantees: each level's size a multiple of the expansion times the one before
             * (compaction is exact only when sizes divide each other; it may free a level, so a power of the
             * expansion), fingerprints at least f0 bits, and each table within the error budget of its level. */
            return NIDUS_ERR_CORRUPT;
        }
        uint64_t data = nidus_table_data_bytes(&s);
        /* Entries adds can make: duplicates, each beside at least bucket_size copies in the slots, and stash
         * entries, made while the map holds fewer than NIDUS_TABLE_STASH (never more than that many at once:
         * a duplicate never becomes one, cuckoo_table.c). */
        if (m->overflow[k] > UINT64_MAX / 4 / OV_ENTRY_BYTES ||
            m->overflow[k] > s.buckets * s.bucket_size + NIDUS_TABLE_STASH)
            return NIDUS_ERR_CORRUPT;
        uint64_t add = m->overflow[k] * OV_ENTRY_BYTES + data;
        if (add > UINT64_MAX / 4 - stream)
            return NIDUS_ERR_CORRUPT;
        stream += add;
        memory += nidus_cuckoo_table_cost(&s);
        m->shapes[k] = s;
    }
    /* Growth never lets the tables' own cost pass max_memory (it counts the overflow maps too, which a load
     * therefore need not): anything a write produced loads, a forged table list beyond the limit does not. */
    if (!nidus_cuckoo_fits(m->max_memory, 0, memory))
        return NIDUS_ERR_CORRUPT;
    if (m->levels && !siblings) /* the encoding is canonical: a filter without siblings is written as 7 */
        return NIDUS_ERR_CORRUPT;
    m->stream = stream;
    m->memory = memory;
    return NIDUS_OK;
}

/* An empty filter of the meta's shape. With `data` (a whole encoding), the tables borrow their bytes from it. */
static nidus_status filter_from_meta(const cuckoo_meta *m, const nidus_allocator *hook, nidus_cuckoo **out)
{
    const nidus_allocator *alloc = nidus_alloc_pick(hook);
    nidus_cuckoo *cf = nidus_calloc(alloc, 1, sizeof *cf);
    if (!cf)
        return NIDUS_ERR_NO_MEMORY;
    *cf = (nidus_cuckoo){
        .alloc = alloc,
        .seed = m->seed,
        .hash8_flip = nidus_hash8_flip(m->seed),
        .base = m->shapes[0],
        .max_kicks = m->max_kicks,
        .expansion = m->expansion,
        .max_tables = m->max_tables,
        .max_memory = m->max_memory,
        .deleted = m->deleted,
    };
    cf->tables = nidus_calloc(alloc, m->ntables, sizeof *cf->tables);
    if (!cf->tables) {
        nidus_free(alloc, cf);
        return NIDUS_ERR_NO_MEMORY;
    }
    *out = cf;
    return NIDUS_OK;
}

/* Reads `count` overflow entries into table t's map; refuses entries out of (bucket, fingerprint) order (the
 * encoding is canonical, so repeats are refused too) and counts that would overflow. */
static nidus_status load_overflow(nidus_table *t, const nidus_allocator *a, const uint8_t *p, uint64_t count)
{
    nidus_reader r = {p, (size_t)(count * OV_ENTRY_BYTES), false};
    uint64_t total = 0;
    for (uint64_t e = 0; e < count; e++) {
        const uint8_t *entry = r.p;
        uint64_t bucket = nidus_get_u64(&r), n = nidus_get_u64(&r);
        uint32_t fp = nidus_get_u32(&r);
        if (n == 0 || n > NIDUS_TABLE_MAX_ITEMS - total || (e > 0 && entry_order(entry - OV_ENTRY_BYTES, entry) >= 0))
            return NIDUS_ERR_CORRUPT;
        total += n;
        nidus_status st = nidus_overflow_set(&t->overflow, a, bucket, fp, n);
        nidus_table_overflow_changed(t);
        if (st)
            return st;
    }
    return NIDUS_OK;
}

/* The overflow map of table t, read into it and checked against its slots: version 7 on, duplicate or stash
 * entries; before, duplicates only (what their writers made, and all their readers accept). */
static nidus_status check_overflow(const nidus_table *t, bool stash)
{
    nidus_status st = nidus_table_validate_overflow(t);
    if (!st && !stash && nidus_table_stash_entries(t))
        st = NIDUS_ERR_CORRUPT;
    return st;
}

/* Decodes a whole encoding: copies the tables, or (view) points them into `buf`. */
static nidus_status decode(const void *buf, size_t len, const nidus_allocator *hook, nidus_decode_target target,
                           nidus_decode_mode mode, nidus_cuckoo **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const uint8_t *in = buf;
    nidus_reader meta;
    size_t prefix, tail;
    nidus_status st = nidus_codec_open(in, len, NIDUS_KIND_CUCKOO, NIDUS_FORMAT_VERSION_SIBLINGS, mode, &meta, &prefix, &tail);
    if (st)
        return st;
    cuckoo_meta m;
    if ((st = parse_meta(&meta, &m)))
        return st;
    if (prefix + m.stream - NIDUS_CODEC_CHECKSUM_BYTES + tail != len)
        return NIDUS_ERR_CORRUPT;

    nidus_cuckoo *cf;
    if ((st = filter_from_meta(&m, hook, &cf)))
        return st;
    bool view = target != NIDUS_DECODE_COPY;
    cf->read_only = target == NIDUS_DECODE_VIEW;
    const uint8_t *p = in + prefix;
    for (unsigned k = 0; k < m.ntables && !st; k++) {
        nidus_table *t = &cf->tables[k];
        const uint8_t *ov = p, *data = p + m.overflow[k] * OV_ENTRY_BYTES;
        if (view) {
            st = nidus_table_init_borrowed(t, &m.shapes[k], data);
            if (!st && target == NIDUS_DECODE_BORROW) /* written in place: it needs its kick log */
                st = nidus_table_borrow_writable(t, m.max_kicks, cf->alloc);
        } else if (!(st = nidus_table_init(t, &m.shapes[k], m.max_kicks, cf->alloc))) {
            memcpy(t->data, data, (size_t)nidus_table_bytes(t));
        }
        if (st)
            break;
        cf->ntables = k + 1;
        /* A trusted body skips the scan of the slots (it would read every block of a big file): any bits there
         * are safe to probe and to write over, semi-sorted ranks too (nidus_semisort_nibbles). The overflow map
         * is always checked. */
        if (!(st = load_overflow(t, cf->alloc, ov, m.overflow[k]))) {
            if (mode == NIDUS_DECODE_BODY_TRUSTED) {
                t->occupied = m.occupied[k];
                st = check_overflow(t, m.stash);
            } else if (!(st = nidus_table_validate(t)) &&
                       (t->occupied != m.occupied[k] || (st = check_overflow(t, m.stash)))) {
                st = st ? st : NIDUS_ERR_CORRUPT;
            }
        }
        p = data + nidus_table_bytes(t);
    }
    if (!st && nidus_cuckoo_items(cf) > NIDUS_TABLE_MAX_ITEMS)
        st = NIDUS_ERR_CORRUPT; /* each table's count fits, their sum does not */
    if (st) {
        nidus_full_free(cf);
        return st;
    }
    nidus_cuckoo_redispatch(cf);
    *out = cf;
    if (target == NIDUS_DECODE_COPY)
        nidus_cuckoo_pack(out); /* small filters are kept packed */
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_decode(const void *buf, size_t len, const nidus_allocator *allocator, nidus_cuckoo **out)
{
    return decode(buf, len, allocator, NIDUS_DECODE_COPY, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_cuckoo_view(const void *buf, size_t len, const nidus_allocator *allocator, nidus_cuckoo **out)
{
    return decode(buf, len, allocator, NIDUS_DECODE_VIEW, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_cuckoo_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                      nidus_decode_target target, nidus_decode_mode mode, nidus_cuckoo **out)
{
    return decode(buf, len, allocator, target, mode, out);
}

nidus_status nidus_cuckoo_rewrite_body(const nidus_cuckoo *cf, uint8_t *body, size_t len)
{
    uint64_t total = nidus_full_encoded_size(cf);
    if (cf->loader || total - NIDUS_CODEC_CHECKSUM_BYTES != len)
        return NIDUS_ERR_UNSUPPORTED;
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = write_prefix(cf, prefix, total);
    /* Every table must still lie where it was borrowed from, after overflow entries of the same count. */
    uint64_t at = prefix_bytes;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        at += (uint64_t)t->overflow.used * OV_ENTRY_BYTES;
        if (!t->borrowed || t->data != body + at)
            return NIDUS_ERR_UNSUPPORTED;
        at += nidus_table_bytes(t);
    }
    at = prefix_bytes;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        uint64_t ov_bytes = (uint64_t)t->overflow.used * OV_ENTRY_BYTES;
        if (ov_bytes) {
            uint8_t *ov = nidus_malloc(cf->alloc, (size_t)ov_bytes);
            if (!ov)
                return NIDUS_ERR_NO_MEMORY;
            write_overflow(&t->overflow, ov);
            nidus_codec_put_if_changed(body + at, ov, (size_t)ov_bytes);
            nidus_free(cf->alloc, ov);
        }
        at += ov_bytes + nidus_table_bytes(t);
    }
    nidus_codec_put_if_changed(body, prefix, prefix_bytes);
    return NIDUS_OK;
}

/* ---- chunks ---- */

struct nidus_cuckoo_loader {
    nidus_chunk_loader base;
    uint64_t overflow[NIDUS_CUCKOO_MAX_TABLES];
    uint64_t occupied[NIDUS_CUCKOO_MAX_TABLES];
    uint8_t *stage[NIDUS_CUCKOO_MAX_TABLES]; /* the overflow entries of each table, until the last chunk */
    uint64_t checked[NIDUS_CUCKOO_MAX_TABLES]; /* buckets of each table checked so far (check_received) */
    uint64_t counted[NIDUS_CUCKOO_MAX_TABLES]; /* ... and the occupied slots among them */
    bool stash; /* cuckoo_meta.stash */
};

void nidus_cuckoo_loader_free(nidus_cuckoo *cf)
{
    nidus_cuckoo_loader *l = cf->loader;
    if (!l)
        return;
    for (unsigned k = 0; k < NIDUS_CUCKOO_MAX_TABLES; k++)
        nidus_free(cf->alloc, l->stage[k]);
    nidus_chunk_loader_hash_free(&l->base, cf->alloc);
    nidus_free(cf->alloc, l->base.prefix);
    nidus_free(cf->alloc, l);
    cf->loader = NULL;
}

/* The segments of a filter being loaded: staged overflow entries and the tables' bytes. */
static unsigned loader_segments(const nidus_cuckoo *cf, nidus_segment *segs)
{
    const nidus_cuckoo_loader *l = cf->loader;
    unsigned n = 0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        segs[n++] = (nidus_segment){l->stage[k], l->overflow[k] * OV_ENTRY_BYTES};
        segs[n++] = (nidus_segment){cf->tables[k].data, nidus_table_bytes(&cf->tables[k])};
    }
    return n;
}

nidus_status nidus_full_dump_chunk(const nidus_cuckoo *cf, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                   uint64_t *next, nidus_dump_sum *sum)
{
    nidus_segment segs[SEGS_MAX];
    if (cf->loader)
        return nidus_codec_dump_received(&cf->loader->base, segs, loader_segments(cf, segs), cursor, buf, cap, len,
                                         next);
    uint8_t prefix[PREFIX_MAX];
    size_t prefix_bytes = write_prefix(cf, prefix, nidus_full_encoded_size(cf));
    unsigned count;
    nidus_status st = build_segments(cf, segs, &count);
    if (!st)
        st = nidus_codec_dump_chunk(prefix, prefix_bytes, segs, count, cursor, buf, cap, len, next, sum);
    release_segments(cf, segs, count);
    return st;
}

static nidus_status load_header(nidus_cuckoo **out, const uint8_t *payload, uint32_t n, uint64_t token,
                                uint64_t max_bytes, const nidus_allocator *hook)
{
    uint64_t total;
    nidus_reader meta;
    cuckoo_meta m;
    nidus_status st = nidus_codec_open_header(payload, n, token, NIDUS_KIND_CUCKOO, NIDUS_FORMAT_VERSION_SIBLINGS, &meta, &total);
    if (st || (st = parse_meta(&meta, &m)))
        return st;
    if (n + m.stream != total)
        return NIDUS_ERR_CORRUPT;
    if (!nidus_cuckoo_fits(max_bytes, 0, m.memory))
        return NIDUS_ERR_LIMIT_MEMORY;
    nidus_cuckoo *cf;
    if ((st = filter_from_meta(&m, hook, &cf)))
        return st;
    if (max_bytes && (cf->max_memory == 0 || cf->max_memory > max_bytes))
        cf->max_memory = max_bytes; /* it grows here within this limit, so it always loads here again */
    nidus_cuckoo_loader *l = nidus_calloc(cf->alloc, 1, sizeof *l);
    cf->loader = l;
    st = l && (l->base.prefix = nidus_malloc(cf->alloc, n)) ? NIDUS_OK : NIDUS_ERR_NO_MEMORY;
    for (unsigned k = 0; k < m.ntables && !st; k++) {
        if ((st = nidus_table_init(&cf->tables[k], &m.shapes[k], m.max_kicks, cf->alloc)))
            break;
        cf->ntables = k + 1;
        l->overflow[k] = m.overflow[k];
        l->occupied[k] = m.occupied[k];
        l->stash = m.stash;
        if (m.overflow[k] && !(l->stage[k] = nidus_malloc(cf->alloc, (size_t)(m.overflow[k] * OV_ENTRY_BYTES))))
            st = NIDUS_ERR_NO_MEMORY;
    }
    if (!st) {
        l->base.token = token;
        l->base.next_seq = 1;
        l->base.stream = m.stream;
        l->base.prefix_bytes = n;
        memcpy(l->base.prefix, payload, n);
        st = nidus_chunk_loader_hash_begin(&l->base, cf->alloc);
    }
    if (st) {
        nidus_full_free(cf);
        return st;
    }
    nidus_cuckoo_redispatch(cf); /* loading */
    *out = cf;
    return NIDUS_OK;
}

/* Checks the buckets whose bytes have all arrived since the chunk before (as nidus_table_validate would once the
 * last chunk is in), so that each chunk checks its own share of the tables: a chunk's time is bounded by its size,
 * and the last one's is not the whole filter's (15-19 s for 1.2 GB before, docs/MODULE.md). */
static nidus_status check_received(nidus_cuckoo *cf)
{
    nidus_cuckoo_loader *l = cf->loader;
    uint64_t body = l->base.stream - NIDUS_CODEC_CHECKSUM_BYTES;
    uint64_t got = l->base.pos < body ? l->base.pos : body, at = 0; /* segment bytes in, and where table k's start */
    for (unsigned k = 0; k < cf->ntables && at < got; k++) {
        const nidus_table *t = &cf->tables[k];
        at += l->overflow[k] * OV_ENTRY_BYTES;
        uint64_t have = got > at ? got - at : 0, buckets = t->shape.buckets;
        if (have < nidus_table_bytes(t) && have * 8 / t->bucket_bits < buckets)
            buckets = have * 8 / t->bucket_bits; /* the buckets whose bits have all arrived */
        if (buckets > l->checked[k]) {
            nidus_status st = nidus_table_validate_buckets(t, l->checked[k], buckets, &l->counted[k]);
            if (st)
                return st;
            l->checked[k] = buckets;
        }
        at += nidus_table_bytes(t);
    }
    return NIDUS_OK;
}

/* The last chunk landed and the checksum held: check the rest of the contents, as a whole decode would. */
static nidus_status load_finish(nidus_cuckoo *cf)
{
    nidus_cuckoo_loader *l = cf->loader;
    for (unsigned k = 0; k < cf->ntables; k++) {
        nidus_table *t = &cf->tables[k];
        nidus_status st = load_overflow(t, cf->alloc, l->stage[k], l->overflow[k]);
        if (st || (st = nidus_table_validate_buckets(t, l->checked[k], t->shape.buckets, &l->counted[k])) ||
            (st = nidus_table_validate_rest(t)) || (st = check_overflow(t, l->stash)))
            return st;
        t->occupied = l->counted[k];
        if (t->occupied != l->occupied[k])
            return NIDUS_ERR_CORRUPT;
    }
    if (nidus_cuckoo_items(cf) > NIDUS_TABLE_MAX_ITEMS)
        return NIDUS_ERR_CORRUPT; /* each table's count fits, their sum does not */
    nidus_cuckoo_loader_free(cf);
    nidus_cuckoo_redispatch(cf);
    return NIDUS_OK;
}

nidus_status nidus_full_load_chunk(nidus_cuckoo **filter, const void *chunk, size_t len, uint64_t max_bytes,
                                   const nidus_allocator *allocator, bool loading)
{
    uint32_t seq, n;
    uint64_t token;
    const uint8_t *payload;
    nidus_status st = nidus_chunk_parse(chunk, len, &seq, &token, &payload, &n);
    if (st)
        return st;
    nidus_cuckoo *cf = *filter;
    if (seq == 0)
        return cf ? NIDUS_ERR_SEQUENCE : load_header(filter, payload, n, token, max_bytes, allocator);
    if (!loading)
        return NIDUS_ERR_SEQUENCE;
    nidus_segment segs[SEGS_MAX];
    unsigned count = loader_segments(cf, segs);
    bool complete;
    st = nidus_chunk_accept(&cf->loader->base, seq, token, payload, n, segs, count, &complete);
    if (st)
        return st;
    if ((st = check_received(cf))) {
        cf->loader->base.failed = true;
        return st;
    }
    if (!complete)
        return NIDUS_OK;
    if ((st = load_finish(cf)))
        cf->loader->base.failed = true;
    else
        nidus_cuckoo_pack(filter); /* complete: small filters are kept packed (*filter changes) */
    return st;
}
