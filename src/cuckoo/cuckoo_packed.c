/* SPDX-License-Identifier: BSD-3-Clause */
/* Small cuckoo filters in one allocation: see cuckoo_packed.h. */
#include <string.h>

#include "alloc.h"
#include "cuckoo_dispatch.h"
#include "hash_impl.h"
#include "params.h"

typedef nidus_cuckoo_thawed thawed;

static nidus_cuckoo_packed *packed_of(const nidus_cuckoo *h)
{
    return (nidus_cuckoo_packed *)(uintptr_t)(const void *)h;
}

static nidus_cuckoo_forward *forward_of(const nidus_cuckoo *h)
{
    return (nidus_cuckoo_forward *)(uintptr_t)(const void *)h;
}

static nidus_table_shape shape_of(const nidus_cuckoo_packed *p)
{
    return (nidus_table_shape){.buckets = p->buckets, .bucket_size = (uint8_t)(1u << (p->layout & 3)),
                               .fp_bits = p->fp_bits, .offset_bits = p->fp_bits, .reach_log2 = NIDUS_REACH_LOG2,
                               .semi_sort = (p->layout & NIDUS_PACKED_SEMI_SORT) != 0,
                               .mod_placement = (p->layout & NIDUS_PACKED_MOD_PLACEMENT) != 0, .stride = 1};
}

/* The layout byte of a packable shape, with no side entries. */
static uint8_t layout_of(const nidus_table_shape *shape)
{
    unsigned log2b = shape->bucket_size == 8 ? 3 : shape->bucket_size == 4 ? 2 : shape->bucket_size == 2 ? 1 : 0;
    return (uint8_t)(log2b | (shape->semi_sort ? NIDUS_PACKED_SEMI_SORT : 0) |
                     (shape->mod_placement ? NIDUS_PACKED_MOD_PLACEMENT : 0));
}

static unsigned side_entries(const nidus_cuckoo_packed *p) { return nidus_cuckoo_packed_side_entries(p); }

static void set_side_entries(nidus_cuckoo_packed *p, unsigned n)
{
    p->layout = (uint8_t)((p->layout & ((1u << NIDUS_PACKED_SIDE_SHIFT) - 1)) | n << NIDUS_PACKED_SIDE_SHIFT);
}

static uint64_t max_memory_of(const nidus_cuckoo_packed *p)
{
    return side_entries(p) ? p->side->max_memory : p->max_memory;
}

static size_t slot_bytes(const nidus_cuckoo_packed *p)
{
    nidus_table_shape s = shape_of(p);
    return (size_t)nidus_table_shape_bytes(&s);
}

/* The packed handle's allocations: what MEMORY USAGE and the stats report for it. */
static uint64_t packed_bytes(const nidus_cuckoo_packed *p)
{
    return sizeof *p + slot_bytes(p) + (side_entries(p) ? nidus_cuckoo_side_bytes(side_entries(p)) : 0);
}

/* Drops the side block (its entries are gone or moved): the header holds max_memory again. */
static void drop_side(nidus_cuckoo_packed *p)
{
    if (!side_entries(p))
        return;
    nidus_cuckoo_side *side = p->side;
    set_side_entries(p, 0);
    p->max_memory = side->max_memory;
    nidus_free(p->alloc, side);
}

/* Puts the side entries into an empty overflow map: the stack copy's (no allocation: its capacity is at least
 * twice the entries, so nidus_overflow_set never grows it), or a full table's (may allocate). */
static nidus_status install_side(const nidus_cuckoo_packed *p, nidus_overflow *ov)
{
    const nidus_cuckoo_side *side = p->side;
    for (unsigned e = 0; e < side_entries(p); e++) {
        const nidus_cuckoo_side_entry *en = &side->entry[e];
        nidus_status st = nidus_overflow_set(ov, p->alloc, en->bucket, en->fingerprint, en->count);
        if (st)
            return st;
    }
    return NIDUS_OK;
}

/* Whether a table's overflow map fits a side block. */
static bool side_fits(const nidus_overflow *ov)
{
    if (ov->used > NIDUS_CUCKOO_SIDE_ENTRIES)
        return false;
    for (uint32_t e = 0; e < ov->capacity && ov->used; e++) {
        const nidus_overflow_entry *en = &ov->entries[e];
        if (en->count > UINT16_MAX || en->bucket > UINT16_MAX)
            return false;
    }
    return true;
}

/* Writes a map that side_fits into `side` (room for them all); the number of entries. */
static uint8_t write_side(nidus_cuckoo_side *side, const nidus_overflow *ov)
{
    uint8_t n = 0;
    for (uint32_t e = 0; e < ov->capacity && n < ov->used; e++) {
        const nidus_overflow_entry *en = &ov->entries[e];
        if (!en->count)
            continue;
        side->entry[n++] = (nidus_cuckoo_side_entry){.fingerprint = en->fingerprint,
                                                     .bucket = (uint16_t)en->bucket, .count = (uint16_t)en->count};
    }
    return n;
}

static uint64_t handle_bytes(const nidus_table_shape *shape);

bool nidus_cuckoo_packable_shape(const nidus_table_shape *shape)
{
    return shape->buckets <= UINT16_MAX && shape->offset_bits == shape->fp_bits &&
           shape->reach_log2 == NIDUS_REACH_LOG2 && nidus_table_shape_bytes(shape) <= NIDUS_CUCKOO_PACKED_MAX_BYTES;
}

/* thaw's part for the side entries: out of line, so that the common call (no entries) inlines thaw. */
static __attribute__((noinline)) void thaw_side(const nidus_cuckoo_packed *p, thawed *w)
{
    uint32_t capacity = nidus_overflow_capacity_for(side_entries(p));
    for (unsigned e = 0; e < capacity; e++) /* a zero count marks an empty entry; */
        w->map[e].count = 0;                /* a memset of the whole map cost more */
    w->t.overflow = (nidus_overflow){.entries = w->map, .capacity = capacity};
    (void)install_side(p, &w->t.overflow); /* cannot fail: the map has room (see install_side) */
    nidus_table_overflow_changed(&w->t);    /* lookups must ask the map */
}

/* Rebuilds the full form in `w`. `grows`: keep the filter's expansion; adds on the stack copy pass 0, so that
 * they fail rather than grow (growth reallocates the table list, which is not the heap's here). `entries`: put
 * the side entries into the copy's overflow map; lookups and adds pass false (installing them cost ~300
 * instructions a call, more than the rest of a lookup): lookups then ask side_has on a miss, and an add only
 * places into free slots, which never reads the map. */
static inline void thaw(const nidus_cuckoo_packed *p, thawed *w, bool grows, bool entries)
{
    nidus_table_shape shape = shape_of(p);
    size_t bytes = (size_t)nidus_table_shape_bytes(&shape);
    memcpy(w->data, p->slots, bytes);
    memset(w->data + bytes, 0, NIDUS_BITS_SLACK);
    /* cannot fail: the shape and max_kicks were checked when the filter was made */
    (void)nidus_table_init_borrowed(&w->t, &shape, w->data);
    (void)nidus_table_borrow_writable(&w->t, p->max_kicks, p->alloc);
    w->t.occupied = p->occupied;
    if (entries && side_entries(p))
        thaw_side(p, w);
    w->cf = (nidus_cuckoo){.alloc = p->alloc, .seed = p->seed,
                           .hash8_flip = nidus_hash8_flip(p->seed), .base = shape,
                           .max_memory = max_memory_of(p), .deleted = p->deleted, .tables = &w->t,
                           .max_kicks = p->max_kicks, .expansion = grows ? p->expansion : 0,
                           .max_tables = p->max_tables, .ntables = 1};
    nidus_cuckoo_redispatch(&w->cf);
}

const nidus_cuckoo *nidus_packed_inspect(const nidus_cuckoo *h, nidus_cuckoo_thawed *w)
{
    thaw(packed_of(h), w, true, true);
    return &w->cf;
}

/* Makes the side block the size `entries` take (nidus_cuckoo_side_bytes), before a freeze that leaves that many:
 * a large block whose entries drop to a small one's moves them to a small block, so that the handle's memory
 * follows from its contents alone, as a reloaded copy's does. False when that block could not be allocated
 * (nothing changed). */
static bool side_fits_size(nidus_cuckoo_packed *p, uint64_t entries)
{
    unsigned have = side_entries(p);
    if (!have || !entries || nidus_cuckoo_side_bytes(have) == nidus_cuckoo_side_bytes((unsigned)entries))
        return true;
    nidus_cuckoo_side *small = nidus_malloc(p->alloc, nidus_cuckoo_side_bytes((unsigned)entries));
    if (!small)
        return false;
    memcpy(small, p->side, nidus_cuckoo_side_bytes((unsigned)entries)); /* freeze rewrites the entries */
    nidus_free(p->alloc, p->side);
    p->side = small;
    return true;
}

/* Copies a stack copy's slots, counters and overflow entries back. It holds nothing the packed form cannot:
 * stack copies only place into free slots and take copies away, so its map has no more entries than the side
 * block, which is rewritten in place, or freed when the last entry went. A copy thawed without its entries
 * leaves the side block as it is. */
static void freeze(nidus_cuckoo_packed *p, const thawed *w)
{
    memcpy(p->slots, w->data, slot_bytes(p));
    p->occupied = (uint16_t)w->t.occupied;
    p->deleted = (uint32_t)w->cf.deleted;
    if (!side_entries(p) || w->t.overflow.entries != w->map)
        return;
    if (w->t.overflow.used == 0)
        drop_side(p);
    else
        set_side_entries(p, write_side(p->side, &w->t.overflow));
}

/* The packed (and forward) handle of a first table of this shape. */
static uint64_t handle_bytes(const nidus_table_shape *shape)
{
    return sizeof(nidus_cuckoo_packed) + nidus_table_shape_bytes(shape);
}

/* Field by field: shapes have padding, which memcmp would compare and which nobody initialises. */
static bool same_shape(const nidus_table_shape *a, const nidus_table_shape *b)
{
    return a->buckets == b->buckets && a->bucket_size == b->bucket_size && a->fp_bits == b->fp_bits &&
           a->offset_bits == b->offset_bits && a->reach_log2 == b->reach_log2 && a->semi_sort == b->semi_sort &&
           a->mod_placement == b->mod_placement && (a->stride ? a->stride : 1) == (b->stride ? b->stride : 1);
}

/* A full filter whose first table a handle can hold: small, the base shape, writable, in memory it owns (or in
 * its forward handle, for `in_handle`). */
static bool handle_holds(const nidus_cuckoo *cf, bool in_handle)
{
    const nidus_table *t = &cf->tables[0];
    return !cf->loader && !cf->read_only && !cf->mapping &&
           (in_handle || !t->borrowed) && same_shape(&t->shape, &cf->base) &&
           nidus_cuckoo_packable_shape(&t->shape);
}

/* Whether everything of such a filter fits the packed form (header, slots and a side block). */
static bool fits_packed(const nidus_cuckoo *cf)
{
    return cf->ntables == 1 && side_fits(&cf->tables[0].overflow) && cf->deleted <= UINT32_MAX;
}

/* The packed header of a full filter that fits, with its side block when its table has overflow entries;
 * false when that block could not be allocated. */
static bool header_of(const nidus_cuckoo *cf, nidus_cuckoo_packed *hdr)
{
    const nidus_table *t = &cf->tables[0];
    *hdr = (nidus_cuckoo_packed){.form = NIDUS_FORM_PACKED, .layout = layout_of(&t->shape),
                                 .fp_bits = t->shape.fp_bits, .max_tables = cf->max_tables, .alloc = cf->alloc,
                                 .seed = cf->seed, .max_memory = cf->max_memory,
                                 .buckets = (uint16_t)t->shape.buckets, .occupied = (uint16_t)t->occupied,
                                 .deleted = (uint32_t)cf->deleted,
                                 .max_kicks = cf->max_kicks, .expansion = cf->expansion};
    if (t->overflow.used == 0)
        return true;
    nidus_cuckoo_side *side = nidus_calloc(cf->alloc, 1, nidus_cuckoo_side_bytes(t->overflow.used));
    if (!side)
        return false;
    side->max_memory = cf->max_memory;
    set_side_entries(hdr, write_side(side, &t->overflow));
    hdr->side = side;
    return true;
}

nidus_status nidus_cuckoo_packed_new(const nidus_allocator *a, const nidus_table_shape *shape, uint64_t seed,
                                     unsigned max_kicks, unsigned expansion, unsigned max_tables, uint64_t max_memory,
                                     nidus_cuckoo **out)
{
    nidus_cuckoo_packed *p = nidus_calloc(a, 1, (size_t)handle_bytes(shape));
    if (!p)
        return NIDUS_ERR_NO_MEMORY;
    *p = (nidus_cuckoo_packed){.form = NIDUS_FORM_PACKED, .layout = layout_of(shape), .fp_bits = shape->fp_bits,
                               .max_tables = (uint8_t)max_tables, .alloc = a, .seed = seed,
                               .max_memory = max_memory, .buckets = (uint16_t)shape->buckets,
                               .max_kicks = (uint16_t)max_kicks,
                               .expansion = (uint16_t)expansion};
    *out = (nidus_cuckoo *)(void *)p;
    return NIDUS_OK;
}

void nidus_cuckoo_pack(nidus_cuckoo **f)
{
    nidus_cuckoo *cf = *f;
    if (!cf || !handle_holds(cf, false))
        return;
    nidus_table *t = &cf->tables[0];
    void *h = nidus_malloc(cf->alloc, (size_t)handle_bytes(&t->shape));
    if (!h)
        return;
    nidus_cuckoo_packed hdr;
    if (fits_packed(cf) && header_of(cf, &hdr)) {
        memcpy(h, &hdr, sizeof hdr);
        memcpy(((nidus_cuckoo_packed *)h)->slots, t->data, (size_t)nidus_table_shape_bytes(&t->shape));
        nidus_full_free(cf);
    } else { /* the first table's slots move into the handle */
        nidus_cuckoo_forward *fw = h;
        memcpy(fw->data, t->data, (size_t)nidus_table_bytes(t));
        nidus_free(cf->alloc, t->data);
        t->data = fw->data;
        t->borrowed = true;
        nidus_cuckoo_redispatch(cf); /* the view's data moved */
        fw->form = NIDUS_FORM_FORWARD;
        fw->alloc = cf->alloc;
        fw->full = cf;
    }
    *f = h;
}

nidus_cuckoo *nidus_packed_unpack(nidus_cuckoo *h)
{
    const nidus_cuckoo_packed hdr = *packed_of(h); /* the header, before the forward's fields overwrite it */
    const nidus_allocator *a = hdr.alloc;
    nidus_cuckoo *cf = nidus_calloc(a, 1, sizeof *cf);
    nidus_table *t = nidus_calloc(a, 1, sizeof *t);
    nidus_overflow ov = {NULL, 0, 0, 0};
    if (!cf || !t || (side_entries(&hdr) && install_side(&hdr, &ov))) {
        nidus_overflow_release(&ov, a);
        nidus_free(a, t);
        nidus_free(a, cf);
        return NULL;
    }
    uint64_t max_memory = max_memory_of(&hdr);
    drop_side(packed_of(h)); /* its entries are in `ov` now (hdr.side is gone with it) */
    /* the slots move down over the header's tail, and get their slack */
    nidus_table_shape shape = shape_of(&hdr);
    size_t bytes = (size_t)nidus_table_shape_bytes(&shape);
    nidus_cuckoo_forward *fw = forward_of(h);
    memmove(fw->data, packed_of(h)->slots, bytes);
    memset(fw->data + bytes, 0, NIDUS_BITS_SLACK);
    (void)nidus_table_init_borrowed(t, &shape, fw->data); /* the shape was checked when the filter was made */
    (void)nidus_table_borrow_writable(t, hdr.max_kicks, a);
    t->occupied = hdr.occupied;
    t->overflow = ov;
    nidus_table_overflow_changed(t);
    *cf = (nidus_cuckoo){.alloc = a, .seed = hdr.seed,
                         .hash8_flip = nidus_hash8_flip(hdr.seed), .base = shape,
                         .max_memory = max_memory, .deleted = hdr.deleted, .tables = t, .max_kicks = hdr.max_kicks,
                         .expansion = hdr.expansion, .max_tables = hdr.max_tables, .ntables = 1};
    nidus_cuckoo_redispatch(cf);
    fw->form = NIDUS_FORM_FORWARD;
    fw->alloc = a;
    fw->full = cf;
    return cf;
}

/* After a write through a forward: back to packed when the full filter fits again (an add that moved or
 * counted on the side, a remove that left at most NIDUS_CUCKOO_SIDE_ENTRIES overflow entries, a clear or
 * compaction that dropped its tables). Stays a forward when the side block cannot be allocated. */
static void settle(nidus_cuckoo *h)
{
    nidus_cuckoo *full = forward_of(h)->full;
    nidus_cuckoo_packed hdr;
    if (!fits_packed(full) || !handle_holds(full, true) || !header_of(full, &hdr))
        return;
    memmove(packed_of(h)->slots, full->tables[0].data, (size_t)nidus_table_shape_bytes(&full->tables[0].shape));
    memcpy(h, &hdr, sizeof hdr);
    nidus_full_free(full); /* its first table's data is the handle's: borrowed, not freed */
}

void nidus_packed_free(nidus_cuckoo *h)
{
    const nidus_allocator *a = packed_of(h)->alloc;
    drop_side(packed_of(h));
    nidus_free(a, h);
}

void nidus_forward_free(nidus_cuckoo *h)
{
    const nidus_allocator *a = forward_of(h)->alloc;
    nidus_full_free(forward_of(h)->full);
    nidus_free(a, h);
}

nidus_status nidus_packed_add_hash(nidus_cuckoo *h, uint64_t hash)
{
    thawed w;
    thaw(packed_of(h), &w, false, false);
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(&w.t, hash, &i, &fp);
    if (nidus_table_place_free(&w.t, i, fp)) {
        freeze(packed_of(h), &w);
        return NIDUS_OK;
    }
    /* Both buckets full: moves, a duplicate counted on the side, or growth. The full form's add does them on a
     * full copy, and the handle goes back to packed if what it did fits (a failed add leaves the handle packed,
     * with its allocations). */
    if (!nidus_packed_unpack(h))
        return NIDUS_ERR_NO_MEMORY;
    nidus_status st = nidus_full_add_hash(forward_of(h)->full, hash);
    settle(h);
    return st;
}

nidus_status nidus_packed_add_key(nidus_cuckoo *h, const void *key, size_t len)
{
    return nidus_packed_add_hash(h, nidus_hash_bytes(key, len, packed_of(h)->seed));
}

nidus_status nidus_forward_add_key(nidus_cuckoo *h, const void *key, size_t len)
{
    return nidus_forward_add_hash(h, nidus_hash_bytes(key, len, forward_of(h)->full->seed));
}

nidus_status nidus_forward_add_hash(nidus_cuckoo *h, uint64_t hash)
{
    nidus_status st = nidus_full_add_hash(forward_of(h)->full, hash);
    if (st == NIDUS_OK)
        settle(h);
    return st;
}

nidus_status nidus_packed_add_unique_hash(nidus_cuckoo *h, uint64_t hash, bool *added)
{
    *added = false;
    if (nidus_packed_contains_hash(h, hash))
        return NIDUS_OK;
    nidus_status st = nidus_packed_add_hash(h, hash);
    *added = st == NIDUS_OK;
    return st;
}

/* ---- lookups on the packed slots themselves: no stack copy, no table struct.
 * What nidus_table_locate, nidus_table_offset and nidus_table_alt compute for a packable shape (offset bits = f,
 * reach NIDUS_REACH_LOG2 above any packed table's size, so no XOR block: xor_limit is 0 and the offset is
 * reduced modulo the buckets), then the two buckets read field by field. The slots have no slack after them,
 * so a read near their end goes byte by byte. */

/* The last bytes of the slots, from byte `at`, as a little-endian word: out of line (rare, and its loop would
 * crowd the lookup). */
static __attribute__((noinline)) uint64_t slots_tail(const uint8_t *slots, size_t bytes, size_t at)
{
    uint64_t w = 0;
    for (size_t k = at; k < bytes; k++)
        w |= (uint64_t)slots[k] << (8 * (k - at));
    return w;
}

/* 64 bits of the slots from bit `pos` (the bits above what the caller needs are not masked). */
static inline uint64_t slots_read(const uint8_t *slots, size_t bytes, uint64_t pos)
{
    size_t at = (size_t)(pos >> 3);
    uint64_t w = at + 8 <= bytes ? nidus_load_le64(slots + at) : slots_tail(slots, bytes, at);
    return w >> (pos & 7);
}

/* Buckets wider than 57 bits, field by field: out of line, so that the common shapes' code stays small. */
static __attribute__((noinline)) bool wide_pair_has(const uint8_t *slots, size_t bytes, uint64_t i, uint64_t j,
                                                    unsigned b, unsigned f, uint32_t fp)
{
    uint64_t mask = nidus_low_mask(f), bits = (uint64_t)b * f;
    bool hit = false;
    for (unsigned s = 0; s < b; s++) {
        hit |= (slots_read(slots, bytes, i * bits + s * f) & mask) == fp;
        hit |= (slots_read(slots, bytes, j * bits + s * f) & mask) == fp;
    }
    return hit;
}

/* Whether bucket i or j, each b fields of f bits, holds fp. `b` is a constant at each call. A bucket of up to 57
 * bits is one read, matched by SWAR (Mycroft's zero-field test on the word XOR fp in every field: exact for
 * "some field is zero"; the bits above the bucket only borrow upwards, out of its fields); wider ones field by
 * field. */
static inline __attribute__((always_inline)) bool plain_pair_has(const uint8_t *slots, size_t bytes, uint64_t i,
                                                                 uint64_t j, unsigned b, unsigned f, uint32_t fp)
{
    unsigned bits = b * f;
    if (bits <= 57) {
        uint64_t ones = 1;
        for (unsigned k = 1; k < b; k <<= 1)
            ones |= ones << (k * f);
        uint64_t pattern = fp * ones, high = ones << (f - 1);
        uint64_t xi = slots_read(slots, bytes, i * bits) ^ pattern, xj = slots_read(slots, bytes, j * bits) ^ pattern;
        return (((xi - ones) & ~xi) | ((xj - ones) & ~xj)) & high;
    }
    return wide_pair_has(slots, bytes, i, j, b, f, fp);
}

/* A semi-sorted bucket at bit `pos` (its rank, then four high parts of f - 4 bits) holds fp. */
static __attribute__((noinline)) bool semi_has(const uint8_t *slots, size_t bytes, uint64_t pos, unsigned f, uint32_t fp)
{
    unsigned hb = f - 4u, nibbles = nidus_semisort_nibbles(slots_read(slots, bytes, pos));
    uint64_t hmask = nidus_low_mask(hb), high = 0;
    pos += NIDUS_SEMISORT_RANK_BITS;
    bool one_read = 4u * hb <= 57u;
    if (one_read)
        high = slots_read(slots, bytes, pos);
    bool hit = false;
    for (unsigned s = 0; s < 4; s++) {
        uint64_t part = one_read ? high >> (s * hb) : slots_read(slots, bytes, pos + s * hb);
        hit |= (uint32_t)(((part & hmask) << 4) | ((nibbles >> (4 * s)) & 15)) == fp;
    }
    return hit;
}

/* Whether bucket i or j holds fp. */
static inline bool packed_pair_has(const nidus_cuckoo_packed *p, uint64_t i, uint64_t j, uint32_t fp)
{
    unsigned f = p->fp_bits, log2b = p->layout & 3;
    uint64_t m = p->buckets;
    if (p->layout & NIDUS_PACKED_SEMI_SORT) {
        unsigned bits = 4u * f - 4u;
        size_t bytes = (size_t)((m * bits + 7) / 8);
        return semi_has(p->slots, bytes, i * bits, f, fp) || semi_has(p->slots, bytes, j * bits, f, fp);
    }
    unsigned bits = f << log2b;
    size_t bytes = (size_t)((m * bits + 7) / 8);
    switch (log2b) {
    case 0:
        return plain_pair_has(p->slots, bytes, i, j, 1, f, fp);
    case 1:
        return plain_pair_has(p->slots, bytes, i, j, 2, f, fp);
    case 2:
        return plain_pair_has(p->slots, bytes, i, j, 4, f, fp);
    default:
        return plain_pair_has(p->slots, bytes, i, j, 8, f, fp);
    }
}

_Static_assert(UINT16_MAX < (UINT32_C(1) << NIDUS_REACH_LOG2), "a packed table is smaller than one block of the reach");

bool nidus_packed_contains_hash(const nidus_cuckoo *h, uint64_t hash)
{
    const nidus_cuckoo_packed *p = packed_of(h);
    uint64_t m = p->buckets, i;
    uint32_t mask = (uint32_t)nidus_low_mask(p->fp_bits), fp;
    bool mod = (p->layout & NIDUS_PACKED_MOD_PLACEMENT) != 0;
    if (mod) {
        i = hash % m;
        fp = nidus_inline_cuckoo_fingerprint(nidus_fingerprint_source_mod(hash), mask);
    } else {
        i = nidus_range_reduce(hash, m);
        fp = nidus_inline_cuckoo_fingerprint((uint32_t)hash, mask);
    }
    uint64_t r = nidus_inline_cuckoo_offset(fp, 32u - NIDUS_REACH_LOG2); /* offset bits: all of fp, never 0 */
    if (r >= m) /* both below 2^16: a 32-bit division */
        r = (uint32_t)r % (uint32_t)m;
    uint64_t j = nidus_table_alt_by(i, r, m);
    if (packed_pair_has(p, i, j, fp))
        return true;
    if (!side_entries(p))
        return false;
    uint64_t lower = i < j ? i : j;
    for (unsigned e = 0; e < side_entries(p); e++)
        if (p->side->entry[e].bucket == lower && p->side->entry[e].fingerprint == fp)
            return true;
    return false;
}

bool nidus_packed_contains_key(const nidus_cuckoo *h, const void *key, size_t len)
{
    uint64_t seed = packed_of(h)->seed;
    return nidus_packed_contains_hash(h, len == 8 ? nidus_hash8(key, nidus_hash8_flip(seed))
                                                  : nidus_hash_bytes(key, len, seed));
}

void nidus_packed_contains_many_hash(const nidus_cuckoo *h, const uint64_t *hashes, size_t n, bool *out)
{
    for (size_t k = 0; k < n; k++)
        out[k] = nidus_packed_contains_hash(h, hashes[k]);
}

uint64_t nidus_packed_count_hash(const nidus_cuckoo *h, uint64_t hash)
{
    thawed w;
    thaw(packed_of(h), &w, true, true);
    return nidus_full_count_hash(&w.cf, hash);
}

nidus_status nidus_packed_remove_hash(nidus_cuckoo *h, uint64_t hash)
{
    if (packed_of(h)->deleted < UINT32_MAX) {
        thawed w;
        thaw(packed_of(h), &w, true, true);
        nidus_status st = nidus_full_remove_hash(&w.cf, hash); /* one table: nothing to compact */
        if (st == NIDUS_OK && !side_fits_size(packed_of(h), w.t.overflow.used))
            return NIDUS_ERR_NO_MEMORY; /* the stack copy goes: nothing changed */
        if (st == NIDUS_OK)
            freeze(packed_of(h), &w);
        return st;
    }
    /* a remove counter about to pass what the packed form holds */
    if (!nidus_packed_unpack(h))
        return NIDUS_ERR_NO_MEMORY;
    return nidus_forward_remove_hash(h, hash);
}

nidus_status nidus_forward_remove_hash(nidus_cuckoo *h, uint64_t hash)
{
    nidus_status st = nidus_full_remove_hash(forward_of(h)->full, hash);
    settle(h);
    return st;
}

nidus_status nidus_packed_clear(nidus_cuckoo *h)
{
    nidus_cuckoo_packed *p = packed_of(h);
    memset(p->slots, 0, slot_bytes(p));
    p->occupied = 0;
    p->deleted = 0;
    drop_side(p);
    return NIDUS_OK;
}

nidus_status nidus_forward_clear(nidus_cuckoo *h)
{
    nidus_status st = nidus_full_clear(forward_of(h)->full);
    settle(h);
    return st;
}

nidus_status nidus_packed_compact(nidus_cuckoo *h, unsigned *freed)
{
    if (freed) /* one table: compaction only resets the remove count */
        *freed = 0;
    packed_of(h)->deleted = 0;
    return NIDUS_OK;
}

nidus_status nidus_forward_compact(nidus_cuckoo *h, unsigned *freed)
{
    nidus_status st = nidus_full_compact(forward_of(h)->full, freed);
    settle(h);
    return st;
}

nidus_status nidus_forward_compact_begin(nidus_cuckoo *h)
{
    nidus_status st = nidus_full_compact_begin(forward_of(h)->full);
    settle(h);
    return st;
}

nidus_status nidus_forward_compact_step(nidus_cuckoo *h, uint64_t budget, bool *done)
{
    nidus_status st = nidus_full_compact_step(forward_of(h)->full, budget, done);
    settle(h);
    return st;
}

void nidus_packed_get_stats(const nidus_cuckoo *h, nidus_cuckoo_stats *s)
{
    thawed w;
    thaw(packed_of(h), &w, true, true);
    nidus_full_get_stats(&w.cf, s);
    s->memory_bytes = packed_bytes(packed_of(h));
    s->bits_per_item = (double)s->memory_bytes * 8.0 / (double)(s->capacity ? s->capacity : 1);
}

void nidus_forward_get_stats(const nidus_cuckoo *h, nidus_cuckoo_stats *s)
{
    const nidus_table *t0 = &forward_of(h)->full->tables[0]; /* its data is counted as the handle */
    nidus_full_get_stats(forward_of(h)->full, s);
    s->memory_bytes = s->memory_bytes - nidus_table_bytes(t0) + handle_bytes(&t0->shape);
    s->bits_per_item = (double)s->memory_bytes * 8.0 / (double)(s->capacity ? s->capacity : 1);
}

nidus_status nidus_packed_get_table_stats(const nidus_cuckoo *h, unsigned index, nidus_cuckoo_table_stats *s)
{
    thawed w; /* a table's figures are its full form's (what max_memory measures); the packing is the filter's */
    thaw(packed_of(h), &w, true, true);
    return nidus_full_get_table_stats(&w.cf, index, s);
}

uint64_t nidus_packed_encoded_size(const nidus_cuckoo *h)
{
    thawed w;
    thaw(packed_of(h), &w, true, true);
    return nidus_full_encoded_size(&w.cf);
}

nidus_status nidus_packed_encode(const nidus_cuckoo *h, void *buf, size_t cap, size_t *written)
{
    thawed w;
    thaw(packed_of(h), &w, true, true);
    return nidus_full_encode(&w.cf, buf, cap, written);
}

nidus_status nidus_packed_dump_chunk(const nidus_cuckoo *h, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                     uint64_t *next, nidus_dump_sum *sum)
{
    thawed w;
    thaw(packed_of(h), &w, true, true);
    return nidus_full_dump_chunk(&w.cf, cursor, buf, cap, len, next, sum);
}

void nidus_full_replace(nidus_cuckoo *h, nidus_cuckoo *full)
{
    /* the struct's contents trade places: the caller's pointer stays valid */
    for (unsigned k = 0; k < h->ntables && k < full->ntables; k++) {
        nidus_table *o = &h->tables[k], *n = &full->tables[k];
        /* a table borrowed from a writable mapping keeps its place there, if the table now at its position
         * has its size (a merge's sibling may have taken the position: then the file is written anew) */
        if (!o->borrowed || nidus_table_bytes(o) != nidus_table_bytes(n))
            continue;
        memcpy(o->data, n->data, (size_t)nidus_table_bytes(n));
        nidus_free(full->alloc, n->data);
        n->data = o->data;
        n->borrowed = true; /* o keeps pointing at it, borrowed: the release below leaves it */
    }
    nidus_cuckoo old = *h;
    *h = *full;
    *full = old;
    h->mapping = old.mapping;
    full->mapping = NULL;
    nidus_cuckoo_redispatch(h);
    nidus_full_free(full);
}

/* A packed or forward handle (`old`: the forward's full filter, else NULL) becomes a forward to `full`, whose
 * first table's slots move into the handle (it was sized for that shape's slots and their slack), then packs
 * again when the contents fit. */
static void handle_replace(nidus_cuckoo *h, nidus_cuckoo *old, nidus_cuckoo *full)
{
    nidus_table *t = &full->tables[0];
    nidus_cuckoo_forward *fw = forward_of(h);
    memcpy(fw->data, t->data, (size_t)nidus_table_bytes(t));
    nidus_free(full->alloc, t->data);
    t->data = fw->data;
    t->borrowed = true;
    nidus_cuckoo_redispatch(full);
    fw->form = NIDUS_FORM_FORWARD;
    fw->alloc = full->alloc;
    fw->full = full;
    if (old)
        nidus_full_free(old); /* its first table's data is the handle's: borrowed, not freed */
    settle(h);
}

void nidus_packed_replace(nidus_cuckoo *h, nidus_cuckoo *full)
{
    drop_side(packed_of(h));
    handle_replace(h, NULL, full);
}

void nidus_forward_replace(nidus_cuckoo *h, nidus_cuckoo *full) { handle_replace(h, forward_of(h)->full, full); }
