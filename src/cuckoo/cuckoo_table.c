/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "alloc.h"
#include "cuckoo_add_impl.h"
#include "hugepage.h"

nidus_status nidus_table_check_shape(const nidus_table_shape *s)
{
    unsigned b = s->bucket_size;
    if (b != 1 && b != 2 && b != 4 && b != 8)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (s->fp_bits < 4 || s->fp_bits > 32 || (s->semi_sort && (b != 4 || s->fp_bits < 5)))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (s->offset_bits < 1 || s->offset_bits > s->fp_bits || s->reach_log2 < 1 || s->reach_log2 > 32)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (s->buckets < 2 || s->buckets % 2)
        return NIDUS_ERR_INVALID_ARGUMENT;
    /* Range placement: the first table's size (buckets / stride) is even too, the size alt works in. */
    uint64_t stride = s->stride ? s->stride : 1;
    if (!s->mod_placement && (s->buckets % stride || (s->buckets / stride) % 2))
        return NIDUS_ERR_INVALID_ARGUMENT;
    unsigned bucket_bits = s->semi_sort ? 4u * s->fp_bits - 4 : b * s->fp_bits;
    if (s->buckets > (UINT64_MAX - 7) / bucket_bits)
        return NIDUS_ERR_TOO_LARGE;
    uint64_t bytes = nidus_table_shape_bytes(s);
    if (bytes > (uint64_t)SIZE_MAX - NIDUS_BITS_SLACK || bytes > UINT64_MAX / 2)
        return NIDUS_ERR_TOO_LARGE;
    return NIDUS_OK;
}

uint64_t nidus_table_shape_bytes(const nidus_table_shape *s)
{
    unsigned bucket_bits = s->semi_sort ? 4 * s->fp_bits - 4 : s->bucket_size * s->fp_bits;
    return (s->buckets * bucket_bits + 7) / 8;
}

/* Plain buckets are matched a word at a time: as many whole fields as fit in 64 bits (nidus_table_read_raw
 * returns 64 valid bits at any bit offset), so a bucket of b*f <= 64 bits is one read, and the widest
 * (b = 8, f > 16) four. */
static void plan_chunks(nidus_table *t)
{
    unsigned b = t->shape.bucket_size, f = t->shape.fp_bits;
    unsigned per = 64 / f < b ? 64 / f : b;
    t->fields_per_chunk = per;
    t->chunks = (b + per - 1) / per;
    for (unsigned c = 0; c < t->chunks; c++) {
        unsigned fields = (c + 1) * per <= b ? per : b - c * per;
        t->chunk_bits[c] = fields * f;
        t->chunk_swar[c] = nidus_swar_make(f, fields);
    }
}

uint64_t nidus_table_data_bytes(const nidus_table_shape *shape)
{
    return nidus_table_shape_bytes(shape) + NIDUS_BITS_SLACK;
}

/* Everything but the memory: derived constants of the shape. */
static nidus_status setup(nidus_table *t, const nidus_table_shape *shape, unsigned max_kicks)
{
    memset(t, 0, sizeof *t);
    nidus_status st = nidus_table_check_shape(shape);
    if (st)
        return st;
    if (max_kicks < 1 || max_kicks > 65535)
        return NIDUS_ERR_INVALID_ARGUMENT;
    t->shape = *shape;
    if (shape->mod_placement || !shape->stride)
        t->shape.stride = 1;
    t->bucket_bits = shape->semi_sort ? 4 * shape->fp_bits - 4 : shape->bucket_size * shape->fp_bits;
    /* Offsets are reduced modulo the first table's size (this table's own under mod placement, where it is
     * also the primary bucket's divisor). */
    t->bucket_mod = nidus_fastmod_make(shape->buckets / t->shape.stride);
    if (!shape->mod_placement)
        t->xor_limit = nidus_range_xor_limit(t->bucket_mod.d, shape->reach_log2);
    t->fp_mask = (uint32_t)nidus_low_mask(shape->fp_bits);
    t->offset_mask = (uint32_t)nidus_low_mask(shape->offset_bits);
    t->slot_of_bit = (65536 + shape->fp_bits - 1) / shape->fp_bits;
    t->max_kicks = max_kicks;
    plan_chunks(t);
    if (shape->semi_sort && t->bucket_bits <= 64) { /* wider buckets are decoded, not matched in a word */
        unsigned hb = shape->fp_bits - 4;
        t->semi_swar = nidus_swar_make(hb, 4);
        if (hb >= 4)
            for (unsigned k = 0; k < 4; k++)
                t->semi_gather |= UINT64_C(1) << (k * (hb - 1));
    }
    nidus_table_plan_probe(t);
    return NIDUS_OK;
}

nidus_status nidus_table_init(nidus_table *t, const nidus_table_shape *shape, unsigned max_kicks,
                              const nidus_allocator *a)
{
    nidus_status st = setup(t, shape, max_kicks);
    if (st)
        return st;
    t->data = nidus_calloc(a, (size_t)nidus_table_bytes(t), 1);
    if (!t->data) {
        nidus_table_release(t, a);
        return NIDUS_ERR_NO_MEMORY;
    }
    nidus_hugepage_advise(t->data, (size_t)nidus_table_bytes(t));
    return NIDUS_OK;
}

nidus_status nidus_table_init_borrowed(nidus_table *t, const nidus_table_shape *shape, const uint8_t *data)
{
    nidus_status st = setup(t, shape, 1);
    if (st)
        return st;
    t->data = (uint8_t *)(uintptr_t)data; /* written only after nidus_table_borrow_writable */
    t->borrowed = true;
    return NIDUS_OK;
}

nidus_status nidus_table_borrow_writable(nidus_table *t, unsigned max_kicks, const nidus_allocator *a)
{
    if (max_kicks < 1 || max_kicks > 65535)
        return NIDUS_ERR_INVALID_ARGUMENT;
    (void)a; /* nothing to allocate: adds keep no kick log */
    t->max_kicks = max_kicks;
    return NIDUS_OK;
}

void nidus_table_release(nidus_table *t, const nidus_allocator *a)
{
    if (!t->borrowed)
        nidus_free(a, t->data);
    nidus_overflow_release(&t->overflow, a);
    t->data = NULL;
}

uint64_t nidus_table_memory(const nidus_table *t)
{
    /* A borrowed table's bytes count too (a mapped file's figures are the filter's, as when loaded). */
    uint64_t own = nidus_table_bytes(t);
    return own + nidus_overflow_memory(&t->overflow);
}

void nidus_table_clear(nidus_table *t)
{
    memset(t->data, 0, (size_t)nidus_table_bytes(t));
    t->occupied = 0;
    nidus_overflow_clear(&t->overflow);
    nidus_table_overflow_changed(t);
}

/* A map of up to 16 entries (capacity 32) is scanned for its bits: a stash holds at most 8; a larger map (many
 * duplicated keys) is asked on every miss, as it was before there was a signature. */
static uint32_t overflow_signature(const nidus_overflow *ov)
{
    if (!ov->used)
        return 0;
    if (ov->capacity > 32)
        return UINT32_MAX;
    uint32_t sig = 0;
    for (uint32_t e = 0; e < ov->capacity; e++)
        if (ov->entries[e].count)
            sig |= nidus_overflow_sig_bit(ov->entries[e].bucket, ov->entries[e].fingerprint);
    return sig;
}

void nidus_table_overflow_changed(nidus_table *t)
{
    t->fast = nidus_table_plan_fast(t);
    t->overflow_sig = overflow_signature(&t->overflow);
}

/* ---- bucket mutation: plain buckets edit one field in place; semi-sorted ones are decoded, edited and
 * re-encoded, since any change can reorder them. */

static uint64_t slot_pos(const nidus_table *t, uint64_t i, unsigned slot)
{
    return i * t->bucket_bits + (uint64_t)slot * t->shape.fp_bits;
}

/* The first slot of plain bucket i holding `value` (0 finds a free slot), or -1. */
static int plain_find(const nidus_table *t, uint64_t i, uint32_t value)
{
    uint64_t pos = i * t->bucket_bits;
    for (unsigned c = 0; c < t->chunks; c++) {
        uint64_t hit = nidus_swar_match(&t->chunk_swar[c], nidus_table_read_raw(t->data, pos), value);
        if (hit) {
            unsigned bit = (unsigned)__builtin_ctzll(hit);
            return (int)(c * t->fields_per_chunk + ((bit * t->slot_of_bit) >> 16));
        }
        pos += t->chunk_bits[c];
    }
    return -1;
}

static void semi_encode(nidus_table *t, uint64_t i, uint32_t fp[4])
{
    nidus_semisort_sort4(fp);
    uint64_t pos = i * t->bucket_bits;
    unsigned hb = t->shape.fp_bits - 4;
    nidus_bits_write(t->data, pos, NIDUS_SEMISORT_RANK_BITS, nidus_semisort_rank(fp));
    pos += NIDUS_SEMISORT_RANK_BITS;
    for (unsigned s = 0; s < 4; s++, pos += hb)
        nidus_bits_write(t->data, pos, hb, fp[s] >> 4);
}

/* Replaces one copy of `from` in bucket i with `to`; false when bucket i holds no `from`. Inserting is
 * replacing an empty slot (0), removing is replacing with 0. */
static bool bucket_replace(nidus_table *t, uint64_t i, uint32_t from, uint32_t to)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD) { /* one load, one store */
        uint8_t *p = t->data + i * t->bucket_bytes;
        uint64_t w = nidus_load_le64(p), hit = nidus_swar_match(&t->chunk_swar[0], w, from);
        if (!hit)
            return false;
        unsigned shift = (unsigned)__builtin_ctzll(hit) - (t->shape.fp_bits - 1u);
        nidus_store_le64(p, w ^ ((uint64_t)(from ^ to) << shift));
        return true;
    }
    if (t->probe == NIDUS_PROBE_SEMI_WORD) { /* the keys decoded from one word, re-sorted, encoded */
        uint8_t *p = t->data + i * t->bucket_bytes;
        uint64_t w = nidus_load_le64(p);
        uint32_t k[4], kf = ((from & 15u) << 28) | (from >> 4), kt = ((to & 15u) << 28) | (to >> 4);
        nidus_table_semi_word_keys(t, w, k);
        unsigned s = 0;
        while (s < 4 && k[s] != kf)
            s++;
        if (s == 4)
            return false;
        k[s] = kt;
        nidus_table_semi_keys_sort(k);
        nidus_store_le64(p, (w & ~nidus_low_mask(t->bucket_bits)) | nidus_table_semi_word_encode(t, k));
        return true;
    }
    if (!t->shape.semi_sort) {
        int slot = plain_find(t, i, from);
        if (slot < 0)
            return false;
        nidus_bits_write(t->data, slot_pos(t, i, (unsigned)slot), t->shape.fp_bits, to);
        return true;
    }
    if (from == 0 ? !nidus_table_semi_has_free(t, i) : nidus_table_semi_count(t, i, from) == 0)
        return false;
    uint32_t fp[4];
    nidus_table_semi_decode(t, i, fp);
    for (unsigned s = 0; s < 4; s++) {
        if (fp[s] == from) {
            fp[s] = to;
            semi_encode(t, i, fp);
            return true;
        }
    }
    return false;
}

/* Has bucket i a free slot? */
static bool bucket_has_free(const nidus_table *t, uint64_t i)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD)
        return nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_word(t, i)) != 0;
    if (t->probe == NIDUS_PROBE_PLAIN_BITS)
        return nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_bits_word(t, i)) != 0;
    return t->shape.semi_sort ? nidus_table_semi_has_free(t, i) : plain_find(t, i, 0) >= 0;
}

/* nidus_table_read_bucket, inline for one-word buckets (the search reads every bucket it expands). */
static inline void read_fps(const nidus_table *t, uint64_t i, uint32_t *fps)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD || t->probe == NIDUS_PROBE_PLAIN_BITS) {
        uint64_t w = t->probe == NIDUS_PROBE_PLAIN_WORD ? nidus_table_word(t, i) : nidus_table_bits_word(t, i);
        for (unsigned s = 0; s < t->shape.bucket_size; s++, w >>= t->shape.fp_bits)
            fps[s] = (uint32_t)w & t->fp_mask;
        return;
    }
    if (t->probe == NIDUS_PROBE_SEMI_WORD) {
        uint32_t k[4];
        nidus_table_semi_word_keys(t, nidus_table_word(t, i), k);
        for (unsigned s = 0; s < 4; s++)
            fps[s] = ((k[s] & 0x0fffffffu) << 4) | (k[s] >> 28);
        return;
    }
    nidus_table_read_bucket(t, i, fps);
}

/* One bucket the search reached: the fingerprint it would receive from its parent's bucket (where that
 * fingerprint lies now), the parent's index and the number of moves from a root (the item's two buckets). */
typedef struct search_node {
    uint64_t bucket;
    uint32_t fp;
    uint16_t parent;
    uint16_t depth;
} search_node;

/* Buckets already reached, as node index + 1 (0: empty), open addressing: the search is over buckets, not paths,
 * so each is examined once. Half full at most. */
#define SEARCH_SEEN_SLOTS (2 * NIDUS_TABLE_SEARCH_NODES)

/* Marks `bucket` as node `n` unless it was reached before; true when it is new. */
static bool first_visit(uint16_t *seen, const search_node *nodes, uint64_t bucket, unsigned n)
{
    unsigned h = (unsigned)((bucket * UINT64_C(0x9E3779B97F4A7C15)) >> 40) & (SEARCH_SEEN_SLOTS - 1);
    while (seen[h]) {
        if (nodes[seen[h] - 1].bucket == bucket)
            return false;
        h = (h + 1) & (SEARCH_SEEN_SLOTS - 1);
    }
    seen[h] = (uint16_t)(n + 1);
    return true;
}

/* Carries out the path ending at node n, whose bucket has a free slot: from the free end back to the root,
 * each bucket takes its parent's fingerprint in place of the one it passed on, and the root takes fp. The
 * buckets of a path are distinct (each bucket is reached once, by a shortest path) and unchanged since the
 * search read them, so each replace finds its value. */
static void apply_path(nidus_table *t, const search_node *nodes, unsigned n, uint32_t fp)
{
    uint32_t out = 0; /* what the bucket gives up: nothing at the free end */
    while (nodes[n].depth) {
        bucket_replace(t, nodes[n].bucket, out, nodes[n].fp);
        out = nodes[n].fp;
        n = nodes[n].parent;
    }
    bucket_replace(t, nodes[n].bucket, out, fp);
    t->occupied++;
}

/* Both buckets of fp are full: look for the shortest way to free a slot in one of them, breadth first over
 * the buckets the fingerprints held there could move to, at most max_kicks moves deep and
 * NIDUS_TABLE_SEARCH_NODES distinct buckets wide. Nothing moves until a path is found, so giving up changes
 * nothing and needs no undo log; and the search depends only on the table and the item, so replicas applying
 * the same adds end byte for byte equal.
 *
 * One level at a time: every bucket of the next level is computed from the (cached) buckets of this one and
 * asked for at once, and only then are they tested, in order. So a level costs about one memory latency
 * however wide it is, where testing each child as it is computed waits for each in turn. At 95 % load most
 * searches end in the first level (the eight buckets the pair's fingerprints could move to). The index of
 * buckets reached (4 KiB) is cleared only when a search goes past that first level. 20 KiB of stack. */
static nidus_status search_and_move(nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    search_node nodes[NIDUS_TABLE_SEARCH_NODES];
    uint16_t seen[SEARCH_SEEN_SLOTS];
    bool seen_ready = false;
    unsigned b = t->shape.bucket_size, max_depth = t->max_kicks;
    nodes[0] = (search_node){i, 0, 0, 0};
    nodes[1] = (search_node){j, 0, 1, 0};
    unsigned level = 0, end = 2; /* this level's nodes: [level, end) */
    uint32_t fps[8];
    for (unsigned depth = 1; depth <= max_depth && level < end; depth++) {
        /* Children of this level, tentatively appended after it and asked for. */
        unsigned top = end;
        for (unsigned n = level; n < end && top + b <= NIDUS_TABLE_SEARCH_NODES; n++) {
            uint64_t at = nodes[n].bucket;
            read_fps(t, at, fps);
            for (unsigned s = 0; s < b; s++) {
                uint64_t c = nidus_table_alt(t, at, fps[s]);
                nidus_table_prefetch(t, c);
                nodes[top++] = (search_node){c, fps[s], (uint16_t)n, (uint16_t)depth};
            }
        }
        if (top == end)
            return NIDUS_ERR_FULL; /* no room left for another level */
        /* Tested in order: the first with a free slot ends the search; the full ones not reached before are
         * kept, compacted, as the next level. A bucket reached before is full (it was tested then). */
        unsigned keep = end;
        for (unsigned n = end; n < top; n++) {
            if (bucket_has_free(t, nodes[n].bucket)) {
                apply_path(t, nodes, n, fp);
                return NIDUS_OK;
            }
            if (!seen_ready) { /* first level: compare with the roots and the children before */
                if (depth == 1) {
                    bool dup = nodes[n].bucket == i || nodes[n].bucket == j;
                    for (unsigned k = end; k < keep && !dup; k++)
                        dup = nodes[k].bucket == nodes[n].bucket;
                    if (!dup)
                        nodes[keep++] = nodes[n];
                    continue;
                }
                memset(seen, 0, sizeof seen);
                for (unsigned k = 0; k < end; k++)
                    first_visit(seen, nodes, nodes[k].bucket, k);
                seen_ready = true;
            }
            nodes[keep] = nodes[n];
            if (first_visit(seen, nodes, nodes[n].bucket, keep))
                keep++;
        }
        level = end;
        end = keep;
    }
    return NIDUS_ERR_FULL;
}

/* Puts fp into the bucket of i and j with more free slots (i on a tie), without moving anything; false when
 * both are full. Filling the emptier bucket keeps the buckets' loads even, so fewer adds find both of their
 * buckets full and need a search (DESIGN-NOTES, "Adds"); the word kernels (cuckoo_add_impl.h) do the same. */
static bool put_pair(nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    bool put;
    if (t->probe == NIDUS_PROBE_PLAIN_WORD)
        put = nidus_table_word_put_pair(t, i, j, fp);
    else if (t->probe == NIDUS_PROBE_PLAIN_BITS)
        put = nidus_table_bits_put_pair(t, i, j, fp, false);
    else if (t->probe == NIDUS_PROBE_SEMI_WORD)
        put = nidus_table_semi_put_pair(t, i, j, fp);
    else {
        unsigned fi = nidus_table_bucket_count(t, i, 0), fj = nidus_table_bucket_count(t, j, 0);
        put = (fi | fj) && bucket_replace(t, fj > fi ? j : i, 0, fp);
    }
    t->occupied += put;
    return put;
}

nidus_status nidus_table_add(nidus_table *t, const nidus_allocator *a, uint64_t i, uint32_t fp)
{
    if (put_pair(t, i, nidus_table_alt(t, i, fp), fp))
        return NIDUS_OK;
    return nidus_table_add_full(t, a, i, fp);
}

/* One more copy of fp counted in the overflow map for the pair (i, j). */
static nidus_status overflow_put(nidus_table *t, const nidus_allocator *a, uint64_t i, uint64_t j, uint32_t fp)
{
    nidus_status st = nidus_overflow_add(&t->overflow, a, i < j ? i : j, fp);
    nidus_table_overflow_changed(t);
    return st;
}

nidus_status nidus_table_add_full(nidus_table *t, const nidus_allocator *a, uint64_t i, uint32_t fp)
{
    uint64_t j = nidus_table_alt(t, i, fp);
    /* When fp already fills its share of the pair, moving things would mostly shuffle its own copies between
     * the two buckets: count the copy on the side instead (a duplicate entry). */
    unsigned copies = nidus_table_bucket_count(t, i, fp) + nidus_table_bucket_count(t, j, fp);
    if (copies >= t->shape.bucket_size)
        return overflow_put(t, a, i, j, fp);
    nidus_status st = search_and_move(t, i, j, fp);
    if (st != NIDUS_ERR_FULL)
        return st;
    /* No slot can be freed within the search's bounds: the copy waits in the stash, beside its full pair (the
     * search left both buckets as they were), while the map stays small. A copy of a (pair, fp) already there
     * joins its entry. Lookups and counts consult the map of such a table; removes refill the pair from it.
     * A two-bucket table has no stash: every key's pair is its two buckets, so its 2b slots hold 2b items every
     * time without one, and it is full when they are, as RedisBloom's filter of that size (a nonscaling
     * CF.RESERVE k 4 refuses the fifth item: RedisBloom's test_expansion_0). */
    const nidus_overflow *ov = &t->overflow;
    if (t->shape.buckets > 2 && (ov->used < NIDUS_TABLE_STASH || nidus_overflow_get(ov, i < j ? i : j, fp)))
        return overflow_put(t, a, i, j, fp);
    return NIDUS_ERR_FULL;
}

/* Is the overflow entry (pair of lo, fp) a stash entry: fewer than bucket_size copies of fp in the pair's slots? */
static bool is_stash(const nidus_table *t, uint64_t lo, uint32_t fp)
{
    uint64_t hi = nidus_table_alt(t, lo, fp);
    return nidus_table_bucket_count(t, lo, fp) + nidus_table_bucket_count(t, hi, fp) < t->shape.bucket_size;
}

uint64_t nidus_table_stash_entries(const nidus_table *t)
{
    const nidus_overflow *ov = &t->overflow;
    uint64_t n = 0;
    for (uint64_t e = 0; ov->used && e < ov->capacity; e++)
        n += ov->entries[e].count && is_stash(t, ov->entries[e].bucket, ov->entries[e].fingerprint);
    return n;
}

/* Bucket x just gained a free slot: a stash entry (fewer than bucket_size copies of its fingerprint in its pair's
 * slots) whose pair holds x moves one copy into it, so that every stash entry's pair stays full (validation relies
 * on it, and an add of its fingerprint finds the pair full and joins the entry). At most one is needed: x is full
 * again. Of several, the least (bucket, fingerprint) moves: the choice depends on the table's contents alone, not
 * on where the map keeps its entries (a decoded copy, or a packed filter's side block, lays them out otherwise),
 * so copies of a filter stay byte for byte equal through the same removes. Scans the map, which is empty in most
 * tables and a few entries in the others. */
void nidus_table_stash_refill(nidus_table *t, uint64_t x)
{
    const nidus_overflow *ov = &t->overflow;
    const nidus_overflow_entry *pick = NULL;
    for (uint64_t e = 0; ov->used && e < ov->capacity; e++) {
        const nidus_overflow_entry *en = &ov->entries[e];
        if (!en->count || (en->bucket != x && nidus_table_alt(t, en->bucket, en->fingerprint) != x) ||
            (pick && (en->bucket > pick->bucket ||
                      (en->bucket == pick->bucket && en->fingerprint > pick->fingerprint))) ||
            !is_stash(t, en->bucket, en->fingerprint))
            continue;
        pick = en;
    }
    if (!pick)
        return;
    uint64_t lo = pick->bucket;
    uint32_t fp = pick->fingerprint;
    if (!bucket_replace(t, x, 0, fp)) /* x had no free slot after all */
        return;
    t->occupied++;
    nidus_overflow_take(&t->overflow, lo, fp);
    nidus_table_overflow_changed(t);
}

/* Overflow copies go first: a duplicate entry's pair keeps at least bucket_size copies in its slots while it has
 * any counted on the side (kicks move copies only between the pair's two buckets), and a stash entry's pair stays
 * full. A copy taken from a slot makes room for a stash entry of that bucket. */
bool nidus_table_remove(nidus_table *t, uint64_t i, uint32_t fp)
{
    uint64_t j = nidus_table_alt(t, i, fp);
    if (t->overflow.used && nidus_overflow_take(&t->overflow, i < j ? i : j, fp)) {
        nidus_table_overflow_changed(t);
        return true;
    }
    uint64_t x = i;
    if (!bucket_replace(t, x, fp, 0) && !bucket_replace(t, x = j, fp, 0))
        return false;
    t->occupied--;
    nidus_table_stash_refill(t, x);
    return true;
}

uint64_t nidus_table_count(const nidus_table *t, uint64_t i, uint32_t fp)
{
    return nidus_table_count_pair(t, i, fp);
}

bool nidus_table_place_free(nidus_table *t, uint64_t i, uint32_t fp)
{
    uint64_t j = nidus_table_alt(t, i, fp);
    nidus_table_prefetch(t, j);
    return put_pair(t, i, j, fp);
}

void nidus_table_read_bucket(const nidus_table *t, uint64_t i, uint32_t *fps)
{
    if (t->shape.semi_sort) {
        nidus_table_semi_decode(t, i, fps);
        return;
    }
    if (t->probe == NIDUS_PROBE_PLAIN_WORD) {
        uint64_t w = nidus_table_word(t, i);
        for (unsigned s = 0; s < t->shape.bucket_size; s++, w >>= t->shape.fp_bits)
            fps[s] = (uint32_t)w & t->fp_mask;
        return;
    }
    for (unsigned s = 0; s < t->shape.bucket_size; s++)
        fps[s] = (uint32_t)nidus_bits_read(t->data, slot_pos(t, i, s), t->shape.fp_bits);
}

bool nidus_table_take(nidus_table *t, uint64_t i, uint32_t fp)
{
    if (!bucket_replace(t, i, fp, 0))
        return false;
    t->occupied--;
    return true;
}

uint64_t nidus_table_overflow_count(const nidus_table *t, uint64_t i, uint32_t fp)
{
    if (!t->overflow.used)
        return 0;
    uint64_t j = nidus_table_alt(t, i, fp);
    return nidus_overflow_get(&t->overflow, i < j ? i : j, fp);
}

/* A semi-sorted bucket is canonical when its rank is one of the 3876 codes and, among slots with equal low
 * nibbles, the high parts ascend (the rank fixes the nibble order; the high parts must follow sort4's). */
static bool semi_bucket_valid(const nidus_table *t, uint64_t i)
{
    if ((nidus_bits_read(t->data, i * t->bucket_bits, NIDUS_SEMISORT_RANK_BITS)) >= NIDUS_SEMISORT_CODES)
        return false;
    uint32_t fp[4];
    nidus_table_semi_decode(t, i, fp);
    for (unsigned s = 1; s < 4; s++)
        if ((fp[s] & 15) == (fp[s - 1] & 15) && fp[s] < fp[s - 1])
            return false;
    return true;
}

nidus_status nidus_table_validate_buckets(const nidus_table *t, uint64_t from, uint64_t to, uint64_t *occupied)
{
    unsigned b = t->shape.bucket_size;
    uint32_t fps[8];
    for (uint64_t i = from; i < to; i++) {
        if (t->shape.semi_sort && !semi_bucket_valid(t, i))
            return NIDUS_ERR_CORRUPT;
        nidus_table_read_bucket(t, i, fps);
        for (unsigned s = 0; s < b; s++)
            *occupied += fps[s] != 0;
    }
    return NIDUS_OK;
}

nidus_status nidus_table_validate(nidus_table *t)
{
    uint64_t occupied = 0;
    nidus_status st = nidus_table_validate_buckets(t, 0, t->shape.buckets, &occupied);
    if (!st && !(st = nidus_table_validate_rest(t)))
        t->occupied = occupied;
    return st;
}

nidus_status nidus_table_validate_rest(const nidus_table *t)
{
    uint64_t m = t->shape.buckets;
    /* Past the last bucket: the unused bits of the last byte, then the slack, all zero. */
    uint64_t used_bits = m * t->bucket_bits, bytes = nidus_table_shape_bytes(&t->shape);
    if (used_bits % 8 && (t->data[bytes - 1] >> (used_bits % 8)))
        return NIDUS_ERR_CORRUPT;
    for (uint64_t k = bytes; k < nidus_table_bytes(t); k++)
        if (t->data[k])
            return NIDUS_ERR_CORRUPT;
    return nidus_table_validate_overflow(t);
}

nidus_status nidus_table_validate_overflow(const nidus_table *t)
{
    uint64_t m = t->shape.buckets;
    unsigned b = t->shape.bucket_size;
    /* Overflow copies exist only where nidus_table_add puts them: for a fingerprint that fills its share of its
     * pair (a duplicate), or for one whose pair is full (a stash entry; removes keep it full). How many stash
     * entries is the add's policy, not a property of valid data. */
    const nidus_overflow *ov = &t->overflow;
    for (uint64_t e = 0; e < ov->capacity; e++) {
        const nidus_overflow_entry *en = &ov->entries[e];
        if (!en->count)
            continue;
        uint64_t i = en->bucket;
        uint32_t fp = en->fingerprint;
        if (i >= m || fp == 0 || fp > t->fp_mask)
            return NIDUS_ERR_CORRUPT;
        uint64_t j = nidus_table_alt(t, i, fp);
        if (j < i)
            return NIDUS_ERR_CORRUPT;
        bool duplicate = nidus_table_bucket_count(t, i, fp) + nidus_table_bucket_count(t, j, fp) >= b;
        if (!duplicate && (bucket_has_free(t, i) || bucket_has_free(t, j)))
            return NIDUS_ERR_CORRUPT;
    }
    return NIDUS_OK;
}
