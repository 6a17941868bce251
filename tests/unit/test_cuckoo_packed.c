/* SPDX-License-Identifier: BSD-3-Clause */
/* Small cuckoo filters kept packed: one allocation, the same answers as the full form, every
 * state saved and loaded, the handle moving to a full filter and back as its contents require. White box: the
 * form of a handle is read through cuckoo_dispatch.h (nidus_cuckoo_form, nidus_cuckoo_inspect). */
#include <stdlib.h>
#include <string.h>

#include "cuckoo_test_util.h"
#include "test_util.h"

#include "cuckoo_dispatch.h"
#include "cuckoo_table_impl.h"
#include <nidus/nidus.h>

/* An allocator that counts live blocks and can be told to fail. */
typedef struct counting {
    long live;
    long fail_after; /* -1: never; else the number of allocations still allowed */
} counting;

static bool allow(counting *c)
{
    if (c->fail_after == 0)
        return false;
    if (c->fail_after > 0)
        c->fail_after--;
    c->live++;
    return true;
}
static void *c_malloc(void *ctx, size_t n) { return allow(ctx) ? malloc(n) : NULL; }
static void *c_calloc(void *ctx, size_t n, size_t m) { return allow(ctx) ? calloc(n, m) : NULL; }
static void *c_realloc(void *ctx, void *p, size_t n)
{
    counting *c = ctx;
    if (c->fail_after == 0)
        return NULL;
    if (!p)
        c->live++;
    return realloc(p, n);
}
static void c_free(void *ctx, void *p)
{
    if (p)
        ((counting *)ctx)->live--;
    free(p);
}

static counting g_count = {0, -1};
static const nidus_allocator g_hook = {c_malloc, c_calloc, c_realloc, c_free, &g_count};

static nidus_cuckoo *make(uint64_t capacity, unsigned b, unsigned expansion)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .error_rate = 0.01, .max_kicks = 20,
                             .expansion = expansion, .seed = test_seed(), .allocator = &g_hook};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

static uint64_t hash_of(const nidus_cuckoo *cf, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, "packed", i);
    return nidus_cuckoo_hash(cf, buf, n);
}

/* A copy of cf made by dumping it in chunks and loading them. */
static nidus_cuckoo *chunk_copy(const nidus_cuckoo *cf)
{
    nidus_cuckoo *copy = NULL;
    uint8_t *chunk = malloc(NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD);
    assert_non_null(chunk);
    for (uint64_t cursor = 0;;) {
        size_t len;
        uint64_t next;
        assert_int_equal(nidus_cuckoo_dump_chunk(cf, cursor, chunk, NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD,
                                                 &len, &next), NIDUS_OK);
        if (len == 0)
            break;
        assert_int_equal(nidus_cuckoo_load_chunk(&copy, chunk, len, 0, &g_hook), NIDUS_OK);
        cursor = next;
    }
    free(chunk);
    return copy;
}

/* Two handles hold the same filter: their encodings are equal byte for byte. */
/* A small reservation is one allocation: its stats count the header and the slots, nothing else. */
static void test_small_filter_is_one_allocation(void **state)
{
    (void)state;
    unsigned sizes[] = {1, 2, 4, 8};
    for (size_t s = 0; s < 4; s++) {
        long live = g_count.live;
        nidus_cuckoo *cf = make(100, sizes[s], 0);
        assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
        assert_int_equal(g_count.live - live, 1);
        nidus_cuckoo_stats st;
        nidus_cuckoo_get_stats(cf, &st);
        nidus_cuckoo_table_stats ts;
        assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &ts), NIDUS_OK);
        /* the table's figure is its full form's (slots + 16 slack bytes: what max_memory measures) */
        assert_int_equal(st.memory_bytes, sizeof(nidus_cuckoo_packed) + ts.memory_bytes - NIDUS_BITS_SLACK);
        nidus_cuckoo_free(cf);
        assert_int_equal(g_count.live, live);
    }
    /* past NIDUS_CUCKOO_PACKED_MAX_BYTES of slots, the full form */
    nidus_cuckoo *big = make(100000, 4, 0);
    assert_int_equal(nidus_cuckoo_form(big), NIDUS_FORM_FULL);
    nidus_cuckoo_free(big);
}

/* The side entries of a packed handle; -1 for another form. */
static int side_entries(const nidus_cuckoo *cf)
{
    if (nidus_cuckoo_form(cf) != NIDUS_FORM_PACKED)
        return -1;
    return (int)nidus_cuckoo_packed_side_entries((const nidus_cuckoo_packed *)(const void *)cf);
}

/* Packed and full filters given the same adds and removes answer alike and encode to the same bytes: over 300
 * keys (few duplicates), and over 12 added and removed alike (many: the handle moves between no side block,
 * a side block of 1-4 entries and a forward). */
static void test_packed_matches_full(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        for (unsigned keys = 300; keys; keys = keys == 300 ? 12 : 0) {
            nidus_cuckoo *packed = make(200, b, 0);
            nidus_cuckoo *handle = make(200, b, 0);
            nidus_cuckoo *full = nidus_cuckoo_unpack(handle); /* called directly: never packed again */
            assert_non_null(full);
            assert_int_equal(nidus_cuckoo_form(handle), NIDUS_FORM_FORWARD);
            assert_int_equal(nidus_cuckoo_form(full), NIDUS_FORM_FULL);
            uint64_t seed = test_seed() ^ b ^ ((uint64_t)keys << 8);
            bool seen_side = false;
            for (int step = 0; step < 3000; step++) {
                uint64_t i = test_splitmix(&seed) % keys, h = hash_of(packed, i);
                nidus_status a, c;
                if (test_splitmix(&seed) % (keys == 300 ? 3 : 2)) {
                    a = nidus_cuckoo_add_hash(packed, h);
                    c = nidus_cuckoo_add_hash(full, h);
                } else {
                    a = nidus_cuckoo_remove_hash(packed, h);
                    c = nidus_cuckoo_remove_hash(full, h);
                }
                assert_int_equal(a, c);
                assert_int_equal(nidus_cuckoo_count_hash(packed, h), nidus_cuckoo_count_hash(full, h));
                /* packed exactly when the full one's overflow map fits a side block */
                uint32_t used = full->tables[0].overflow.used;
                assert_int_equal(side_entries(packed), used <= NIDUS_CUCKOO_SIDE_ENTRIES ? (int)used : -1);
                seen_side |= used > 0 && used <= NIDUS_CUCKOO_SIDE_ENTRIES;
            }
            for (uint64_t i = 0; i < 400; i++) {
                uint64_t h = hash_of(packed, i);
                assert_int_equal(nidus_cuckoo_contains_hash(packed, h), nidus_cuckoo_contains_hash(full, h));
            }
            test_assert_same_cuckoo_encoding(packed, full);
            if (keys == 12 && b <= 2) /* each key's count wanders past the 2b copies its pair holds */
                assert_true(seen_side);
            nidus_cuckoo_free(packed);
            nidus_cuckoo_free(handle);
        }
    }
}

static uint64_t memory_of(const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats st;
    nidus_cuckoo_get_stats(cf, &st);
    return st.memory_bytes;
}

/* Whether the bucket pair of hash `h` shares a bucket with the pair of any of `avoid` (or is one bucket). */
static bool pair_clashes(const nidus_table *t, uint64_t h, const uint64_t *avoid, size_t navoid)
{
    uint64_t i, ie;
    uint32_t fp;
    nidus_table_locate(t, h, &i, &fp);
    uint64_t j = nidus_table_alt(t, i, fp);
    bool clash = i == j;
    for (size_t e = 0; e < navoid && !clash; e++) {
        nidus_table_locate(t, avoid[e], &ie, &fp);
        uint64_t je = nidus_table_alt(t, ie, fp);
        clash = i == ie || i == je || j == ie || j == je;
    }
    return clash;
}

/* n hashes of duplicated keys whose bucket pairs share no bucket: copies of each fill their own pair and then
 * count in their own overflow entry. */
static void disjoint_hashes(const nidus_cuckoo *cf, uint64_t *h, size_t n)
{
    nidus_cuckoo_thawed w;
    const nidus_table *t = &nidus_cuckoo_inspect(cf, &w)->tables[0];
    for (uint64_t k = 0, have = 0; have < n; k++) {
        uint64_t cand = hash_of(cf, 90000 + k);
        if (!pair_clashes(t, cand, h, have))
            h[have++] = cand;
    }
}

/* n hashes of distinct keys whose buckets avoid the pairs the duplicated keys fill (an add there could only
 * fail: a kick out of such a pair lands in its other full bucket). */
static void hashes_avoiding(const nidus_cuckoo *cf, const uint64_t *dup, size_t ndup, uint64_t *out, size_t n)
{
    nidus_cuckoo_thawed w;
    const nidus_table *t = &nidus_cuckoo_inspect(cf, &w)->tables[0];
    for (uint64_t k = 0, have = 0; have < n; k++) {
        uint64_t cand = hash_of(cf, k);
        if (!pair_clashes(t, cand, dup, ndup))
            out[have++] = cand;
    }
}

/* Key e of a side test gets 2b + 1 + e copies: 1 + e of them in its overflow entry. */
static uint64_t copies_of(unsigned b, size_t e) { return 2u * b + 1u + e; }

static void add_copies(nidus_cuckoo *cf, uint64_t h, uint64_t n)
{
    for (uint64_t c = 0; c < n; c++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, h), NIDUS_OK);
}

/* Every key where it should be: the distinct ones found, each duplicated key counted exactly. */
static void assert_holds(const nidus_cuckoo *cf, const uint64_t *items, size_t nitems, const uint64_t *dup,
                         const uint64_t *count, size_t ndup)
{
    for (size_t i = 0; i < nitems; i++)
        assert_true(nidus_cuckoo_contains_hash(cf, items[i]));
    for (size_t e = 0; e < ndup; e++) {
        assert_true(nidus_cuckoo_contains_hash(cf, dup[e]));
        assert_int_equal(nidus_cuckoo_count_hash(cf, dup[e]), count[e]);
    }
}

/* The same filter after an encode/decode and after a chunked dump/load: same form, side entries, memory figure
 * and encoding. */
static void assert_reloads_alike(const nidus_cuckoo *cf)
{
    size_t n;
    uint8_t *enc = test_cuckoo_encode(cf, &n);
    nidus_cuckoo *copies[2] = {NULL, chunk_copy(cf)};
    assert_int_equal(nidus_cuckoo_decode(enc, n, &g_hook, &copies[0]), NIDUS_OK);
    free(enc);
    for (int c = 0; c < 2; c++) {
        assert_false(nidus_cuckoo_loading(copies[c]));
        assert_int_equal(nidus_cuckoo_form(copies[c]), nidus_cuckoo_form(cf));
        assert_int_equal(side_entries(copies[c]), side_entries(cf));
        assert_int_equal(memory_of(copies[c]), memory_of(cf));
        nidus_cuckoo_stats a, b;
        nidus_cuckoo_get_stats(cf, &a);
        nidus_cuckoo_get_stats(copies[c], &b);
        assert_int_equal(a.items, b.items);
        assert_int_equal(a.overflow_items, b.overflow_items);
        assert_int_equal(a.items_deleted, b.items_deleted);
        assert_int_equal(a.max_memory, b.max_memory);
        test_assert_same_cuckoo_encoding(cf, copies[c]);
        nidus_cuckoo_free(copies[c]);
    }
}

/* Up to NIDUS_CUCKOO_SIDE_ENTRIES overflow entries keep a filter packed, for one side block that exists only while
 * there are entries: 48 bytes up to NIDUS_CUCKOO_SIDE_SMALL entries, 80 above, whichever way the count moves. One
 * entry more makes it a forward, and draining brings it back. Counts stay exact, every state reloads alike (the
 * same memory figure too), and no block leaks. */
static void test_overflow_entries_stay_packed(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        long live = g_count.live;
        nidus_cuckoo_params p = {.capacity = 100 + 64 * b, .bucket_size = b, .error_rate = 0.01, .max_kicks = 20,
                                 .max_memory = 123456, .seed = test_seed() ^ b, .allocator = &g_hook};
        nidus_cuckoo *cf = NULL;
        assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
        assert_int_equal(side_entries(cf), 0);
        const uint64_t bare = memory_of(cf);
        uint64_t dup[NIDUS_CUCKOO_SIDE_ENTRIES + 1], count[NIDUS_CUCKOO_SIDE_ENTRIES + 1];
        disjoint_hashes(cf, dup, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
        for (size_t e = 0; e < NIDUS_CUCKOO_SIDE_ENTRIES; e++) {
            add_copies(cf, dup[e], count[e] = copies_of(b, e));
            assert_int_equal(side_entries(cf), (int)e + 1);
            assert_int_equal(g_count.live - live, 2); /* the handle and its side block */
            assert_int_equal(memory_of(cf), bare + (e < NIDUS_CUCKOO_SIDE_SMALL ? 48 : 80));
            assert_holds(cf, NULL, 0, dup, count, e + 1);
            /* the stack copy has the entries in its map, and its lookups ask the map (a stash entry has no copy
             * in the slots) */
            nidus_cuckoo_thawed w;
            const nidus_table *t = &nidus_cuckoo_inspect(cf, &w)->tables[0];
            assert_int_equal(t->overflow.used, e + 1);
            assert_int_equal(t->overflow.total, (e + 1) * (e + 2) / 2);
            assert_int_equal(t->fast, NIDUS_FAST_NONE);
        }
        /* distinct items around them, on the packed path and (kicks) through the full form and back */
        uint64_t items[20];
        hashes_avoiding(cf, dup, NIDUS_CUCKOO_SIDE_ENTRIES + 1, items, 20);
        for (size_t i = 0; i < 20; i++)
            assert_int_equal(nidus_cuckoo_add_hash(cf, items[i]), NIDUS_OK);
        assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_ENTRIES);
        assert_holds(cf, items, 20, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES);
        nidus_cuckoo_stats st;
        nidus_cuckoo_get_stats(cf, &st);
        assert_int_equal(st.max_memory, 123456); /* kept in the side block meanwhile */
        assert_int_equal(st.overflow_items, NIDUS_CUCKOO_SIDE_ENTRIES * (NIDUS_CUCKOO_SIDE_ENTRIES + 1) / 2);
        assert_reloads_alike(cf);

        /* one entry more: a forward; its removal packs the filter again */
        const size_t extra = NIDUS_CUCKOO_SIDE_ENTRIES;
        add_copies(cf, dup[extra], count[extra] = copies_of(b, 0));
        assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
        assert_holds(cf, items, 20, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
        assert_reloads_alike(cf);
        assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[extra]), NIDUS_OK);
        count[extra]--;
        assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_ENTRIES);
        assert_int_equal(g_count.live - live, 2);
        assert_int_equal(memory_of(cf), bare + 80);
        assert_holds(cf, items, 20, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);

        /* removes drain the entries on the packed path, in a block of the size the entries left take (a reload
         * would make that one); the last one frees the block */
        for (size_t e = 0; e < NIDUS_CUCKOO_SIDE_ENTRIES; e++) {
            for (uint64_t c = 0; c < 1 + e; c++, count[e]--)
                assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[e]), NIDUS_OK);
            size_t left = NIDUS_CUCKOO_SIDE_ENTRIES - 1 - e;
            assert_int_equal(side_entries(cf), (int)left);
            assert_int_equal(memory_of(cf), bare + (left == 0 ? 0 : left <= NIDUS_CUCKOO_SIDE_SMALL ? 48 : 80));
            assert_holds(cf, items, 20, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
            if (left == NIDUS_CUCKOO_SIDE_SMALL || left == 2)
                assert_reloads_alike(cf); /* the first state in a small block again; two entries */
        }
        assert_int_equal(g_count.live - live, 1);
        assert_int_equal(memory_of(cf), bare);
        nidus_cuckoo_get_stats(cf, &st);
        assert_int_equal(st.max_memory, 123456);
        assert_int_equal(st.overflow_items, 0);
        assert_reloads_alike(cf);

        /* a clear frees the block too; freeing a filter with one frees it */
        add_copies(cf, dup[0], 2);
        assert_int_equal(side_entries(cf), 1);
        assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
        assert_int_equal(side_entries(cf), 0);
        assert_int_equal(g_count.live - live, 1);
        nidus_cuckoo_get_stats(cf, &st);
        assert_int_equal(st.items, 0);
        assert_int_equal(st.max_memory, 123456);
        add_copies(cf, dup[1], 2 * b + 1);
        assert_int_equal(side_entries(cf), 1);
        nidus_cuckoo_free(cf);
        assert_int_equal(g_count.live, live);
    }
}

/* A side entry whose item has no copy in the slots (a stash entry: an item the add's search could not place).
 * Made here by taking a duplicated key's slot copies out of the packed slots behind the library's back; lookups
 * (which skip installing the entries: side_has), counts, unique adds and removes must all still see it. */
static void test_entry_without_slot_copies_is_found(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        long live = g_count.live;
        nidus_cuckoo *cf = make(100 + 64 * b, b, 0);
        uint64_t dup[2], items[20];
        disjoint_hashes(cf, dup, 2);
        hashes_avoiding(cf, dup, 2, items, 20);
        for (size_t i = 0; i < 20; i++)
            assert_int_equal(nidus_cuckoo_add_hash(cf, items[i]), NIDUS_OK);
        add_copies(cf, dup[0], 2 * b + 3); /* 3 on the side */
        add_copies(cf, dup[1], 2 * b + 1); /* 1 on the side */
        assert_int_equal(side_entries(cf), 2);
        /* out of the slots: every copy of dup[0] */
        nidus_cuckoo_packed *p = (nidus_cuckoo_packed *)(void *)cf;
        nidus_cuckoo_thawed w;
        nidus_table *t = &((nidus_cuckoo *)(uintptr_t)nidus_cuckoo_inspect(cf, &w))->tables[0];
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(t, dup[0], &i, &fp);
        uint64_t j = nidus_table_alt(t, i, fp);
        unsigned taken = 0;
        while (nidus_table_take(t, i, fp) || nidus_table_take(t, j, fp))
            taken++;
        assert_int_equal(taken, 2 * b);
        memcpy(p->slots, w.data, (size_t)nidus_table_shape_bytes(&t->shape));
        p->occupied = (uint32_t)t->occupied;

        uint64_t count[2] = {3, 2 * b + 1};
        assert_holds(cf, items, 20, dup, count, 2);
        bool found[3];
        uint64_t probe[3] = {dup[0], dup[1], items[7]};
        nidus_cuckoo_contains_many_hash(cf, probe, 3, found);
        assert_true(found[0] && found[1] && found[2]);
        bool added = true;
        assert_int_equal(nidus_cuckoo_add_unique_hash(cf, dup[0], &added), NIDUS_OK);
        assert_false(added);
        assert_int_equal(nidus_cuckoo_count_hash(cf, dup[0]), 3);
        nidus_cuckoo_stats st;
        nidus_cuckoo_get_stats(cf, &st);
        assert_int_equal(st.overflow_items, 3 + 1);
        for (int c = 0; c < 3; c++)
            assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[0]), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[0]), NIDUS_ERR_NOT_FOUND);
        assert_int_equal(nidus_cuckoo_count_hash(cf, dup[0]), 0);
        assert_int_equal(side_entries(cf), 1);
        count[0] = 0;
        assert_holds(cf, items, 20, dup + 1, count + 1, 1);
        nidus_cuckoo_free(cf);
        assert_int_equal(g_count.live, live);
    }
}

/* A filter filled until an add fails keeps the items its search could not place in the stash (NIDUS_TABLE_STASH
 * overflow entries): still packed, with a side block. Every item is found, one by one and batched, it reloads
 * alike, and removes pull the stash back into the slots until the block is freed. */
static void test_stash_entries_stay_packed(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        long live = g_count.live;
        nidus_cuckoo *cf = make(100, b, 0);
        const uint64_t bare = memory_of(cf);
        uint64_t n = 0;
        nidus_status st;
        while ((st = nidus_cuckoo_add_hash(cf, hash_of(cf, n))) == NIDUS_OK)
            n++;
        assert_int_equal(st, NIDUS_ERR_FULL);
        assert_true(n >= 100);
        /* The map is full: NIDUS_TABLE_STASH entries, stash and duplicate-type ones together (an item whose
         * fingerprint already fills its share of its full pair: at b=1 one colliding key does), or more when a
         * duplicate-type entry came after the stash filled (those are never refused: seed 1795479189, b=1, 387
         * items, 4 + 1 with the 4-entry stash). Past NIDUS_CUCKOO_SIDE_ENTRIES entries the handle is a forward. */
        nidus_cuckoo_thawed w;
        const nidus_table *t0 = &nidus_cuckoo_inspect(cf, &w)->tables[0];
        assert_true(t0->overflow.used >= NIDUS_TABLE_STASH);
        assert_true(nidus_table_stash_entries(t0) <= NIDUS_TABLE_STASH);
        if (t0->overflow.used <= NIDUS_CUCKOO_SIDE_ENTRIES) {
            assert_int_equal(side_entries(cf), (int)t0->overflow.used);
            assert_int_equal(g_count.live - live, 2);
            assert_int_equal(memory_of(cf), bare + nidus_cuckoo_side_bytes((unsigned)t0->overflow.used));
        } else {
            assert_int_equal(side_entries(cf), -1);
        }
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(cf, &s);
        assert_int_equal(s.items, n);
        assert_true(s.overflow_items >= NIDUS_TABLE_STASH);
        uint64_t *hashes = malloc(n * sizeof *hashes);
        bool *found = malloc(n * sizeof *found);
        assert_true(hashes && found);
        for (uint64_t i = 0; i < n; i++) {
            hashes[i] = hash_of(cf, i);
            assert_true(nidus_cuckoo_contains_hash(cf, hashes[i]));
            assert_true(nidus_cuckoo_count_hash(cf, hashes[i]) >= 1);
        }
        nidus_cuckoo_contains_many_hash(cf, hashes, n, found);
        for (uint64_t i = 0; i < n; i++) {
            assert_true(found[i]);
            bool added = true;
            assert_int_equal(nidus_cuckoo_add_unique_hash(cf, hashes[i], &added), NIDUS_OK);
            assert_false(added);
        }
        assert_reloads_alike(cf);
        /* removes: whatever stays is found; the stash drains into the freed slots */
        for (uint64_t i = 0; i < n; i++) {
            assert_int_equal(nidus_cuckoo_remove_hash(cf, hashes[i]), NIDUS_OK);
            if (i % 16 == 0 || i + 1 == n)
                for (uint64_t k = i + 1; k < n; k++)
                    assert_true(nidus_cuckoo_contains_hash(cf, hashes[k]));
        }
        assert_int_equal(side_entries(cf), 0);
        assert_int_equal(g_count.live - live, 1);
        assert_int_equal(memory_of(cf), bare);
        nidus_cuckoo_get_stats(cf, &s);
        assert_int_equal(s.items, 0);
        free(found);
        free(hashes);
        nidus_cuckoo_free(cf);
        assert_int_equal(g_count.live, live);
    }
}

/* Allocations that fail while a filter has side entries: the full form for an add (its structs, its overflow
 * map), the side block when a forward packs back, a decode. Each refuses or stays larger; nothing changes,
 * nothing leaks. */
static void test_side_allocation_failures(void **state)
{
    (void)state;
    long live = g_count.live;
    nidus_cuckoo *cf = make(100, 2, 0);
    uint64_t dup[NIDUS_CUCKOO_SIDE_ENTRIES + 1], count[NIDUS_CUCKOO_SIDE_ENTRIES + 1];
    disjoint_hashes(cf, dup, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
    for (size_t e = 0; e < NIDUS_CUCKOO_SIDE_ENTRIES; e++)
        add_copies(cf, dup[e], count[e] = copies_of(2, e));
    size_t n0, n1;
    uint8_t *before = test_cuckoo_encode(cf, &n0);
    for (long k = 0; k < 3; k++) { /* the filter struct, the table struct, the overflow map */
        g_count.fail_after = k;
        assert_int_equal(nidus_cuckoo_add_hash(cf, dup[0]), NIDUS_ERR_NO_MEMORY);
        g_count.fail_after = -1;
        assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_ENTRIES);
        assert_int_equal(g_count.live - live, 2);
        uint8_t *after = test_cuckoo_encode(cf, &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(before, after, n0);
        free(after);
    }
    free(before);
    assert_holds(cf, NULL, 0, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES);

    /* a forward with one entry too many loses one with no memory for a side block: still right, a forward */
    const size_t extra = NIDUS_CUCKOO_SIDE_ENTRIES;
    add_copies(cf, dup[extra], count[extra] = copies_of(2, 0));
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    g_count.fail_after = 0;
    assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[extra]), NIDUS_OK);
    g_count.fail_after = -1;
    count[extra]--;
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    assert_holds(cf, NULL, 0, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
    assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[extra]), NIDUS_OK); /* the next write packs it */
    count[extra]--;
    assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_ENTRIES);
    assert_holds(cf, NULL, 0, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);

    /* decoding with each allocation failing in turn: an error, or a filter that holds everything */
    size_t n;
    uint8_t *enc = test_cuckoo_encode(cf, &n);
    for (long k = 0;; k++) {
        nidus_cuckoo *copy = NULL;
        long at = g_count.live;
        g_count.fail_after = k;
        nidus_status st = nidus_cuckoo_decode(enc, n, &g_hook, &copy);
        long left = g_count.fail_after;
        g_count.fail_after = -1;
        if (st) {
            assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
            assert_int_equal(g_count.live, at);
            continue;
        }
        assert_holds(copy, NULL, 0, dup, count, NIDUS_CUCKOO_SIDE_ENTRIES + 1);
        test_assert_same_cuckoo_encoding(cf, copy);
        bool spare = left > 0; /* allocations to spare: every one decoding makes has failed in turn before */
        if (spare)
            assert_int_equal(side_entries(copy), NIDUS_CUCKOO_SIDE_ENTRIES);
        nidus_cuckoo_free(copy);
        assert_int_equal(g_count.live, at);
        if (spare)
            break;
    }
    free(enc);

    /* A remove that leaves NIDUS_CUCKOO_SIDE_SMALL entries moves them from the 80-byte block to a 48-byte one
     * (a reload's size): with no memory for that block it is refused, and nothing changes. */
    size_t e = 0;
    for (; side_entries(cf) > (int)NIDUS_CUCKOO_SIDE_SMALL + 1; e++)
        for (; count[e]; count[e]--)
            assert_int_equal(nidus_cuckoo_remove_hash(cf, dup[e]), NIDUS_OK);
    assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_SMALL + 1);
    const uint64_t large = memory_of(cf);
    bool refused = false;
    while (side_entries(cf) > (int)NIDUS_CUCKOO_SIDE_SMALL) {
        assert_true(count[e] > 0);
        before = test_cuckoo_encode(cf, &n0);
        g_count.fail_after = 0;
        nidus_status st = nidus_cuckoo_remove_hash(cf, dup[e]);
        g_count.fail_after = -1;
        if (st == NIDUS_ERR_NO_MEMORY) {
            refused = true;
            uint8_t *after = test_cuckoo_encode(cf, &n1);
            assert_int_equal(n0, n1);
            assert_memory_equal(before, after, n0);
            free(after);
            assert_int_equal(side_entries(cf), NIDUS_CUCKOO_SIDE_SMALL + 1);
            assert_int_equal(memory_of(cf), large);
            st = nidus_cuckoo_remove_hash(cf, dup[e]);
        }
        free(before);
        assert_int_equal(st, NIDUS_OK);
        count[e]--;
    }
    assert_true(refused);
    assert_int_equal(memory_of(cf), large - 80 + 48);
    assert_int_equal(g_count.live - live, 2);
    assert_holds(cf, NULL, 0, dup + e, count + e, NIDUS_CUCKOO_SIDE_ENTRIES + 1 - e);
    assert_reloads_alike(cf);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_count.live, live);
}

/* A side entry counts up to 2^16 - 1 copies: one more makes the handle a forward (the full form counts on), a
 * remove brings it back, and the count stays exact throughout. */
static void test_side_count_limit(void **state)
{
    (void)state;
    long live = g_count.live;
    nidus_cuckoo *cf = make(100, 2, 0);
    uint64_t key = hash_of(cf, 7);
    uint64_t in_slots = 2 * 2; /* a key's copies fill its pair's 2b slots before any is counted on the side */
    for (uint64_t c = 0; c < in_slots + UINT16_MAX; c++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key), NIDUS_OK);
    assert_int_equal(side_entries(cf), 1);
    assert_int_equal(nidus_cuckoo_count_hash(cf, key), in_slots + UINT16_MAX);
    assert_int_equal(nidus_cuckoo_add_hash(cf, key), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    assert_int_equal(nidus_cuckoo_count_hash(cf, key), in_slots + UINT16_MAX + 1);
    assert_reloads_alike(cf);
    assert_int_equal(nidus_cuckoo_remove_hash(cf, key), NIDUS_OK);
    assert_int_equal(side_entries(cf), 1);
    assert_int_equal(nidus_cuckoo_count_hash(cf, key), in_slots + UINT16_MAX);
    assert_reloads_alike(cf);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_count.live, live);
}

/* Growth forwards to a full filter with two tables; nothing is lost; a clear packs it again. */
static void test_growth_forwards_and_clear_packs(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(20, 2, 2);
    uint64_t n = 0;
    while (n < 500 && nidus_cuckoo_add_hash(cf, hash_of(cf, n)) == NIDUS_OK)
        n++;
    assert_int_equal(n, 500);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    nidus_cuckoo_stats st;
    nidus_cuckoo_get_stats(cf, &st);
    assert_true(st.tables > 1);
    for (uint64_t i = 0; i < n; i++)
        assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, i)));
    /* a reloaded copy has the same form and the same figures (replicas and DEBUG RELOAD report alike) */
    size_t len;
    uint8_t *enc = test_cuckoo_encode(cf, &len);
    nidus_cuckoo *copy = NULL;
    assert_int_equal(nidus_cuckoo_decode(enc, len, &g_hook, &copy), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_FORWARD);
    nidus_cuckoo_stats s2;
    nidus_cuckoo_get_stats(copy, &s2);
    assert_int_equal(st.memory_bytes, s2.memory_bytes);
    for (uint64_t i = 0; i < n; i++)
        assert_true(nidus_cuckoo_contains_hash(copy, hash_of(cf, i)));
    nidus_cuckoo_free(copy);
    free(enc);
    assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, 7)), NIDUS_OK);
    assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, 7)));
    nidus_cuckoo_free(cf);
}

/* A filter that never grows stays packed when full: a failed add changes no byte, even when it needed the
 * full form to search (and that form could not be allocated). */
static void test_failed_add_changes_nothing(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(30, 2, 0);
    uint64_t i = 0;
    size_t n0, n1;
    for (;; i++) {
        uint8_t *before = test_cuckoo_encode(cf, &n0);
        nidus_status st = nidus_cuckoo_add_hash(cf, hash_of(cf, 1000 + i));
        if (st == NIDUS_OK) {
            free(before);
            continue;
        }
        assert_int_equal(st, NIDUS_ERR_FULL);
        assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED); /* its stash entries in a side block */
        assert_int_equal(side_entries(cf), NIDUS_TABLE_STASH);
        uint8_t *after = test_cuckoo_encode(cf, &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(before, after, n0);
        free(after);
        /* the same add with no memory for the full form: refused, nothing changed */
        g_count.fail_after = 0;
        assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, 1000 + i)), NIDUS_ERR_NO_MEMORY);
        g_count.fail_after = -1;
        after = test_cuckoo_encode(cf, &n1);
        assert_memory_equal(before, after, n0);
        free(after);
        free(before);
        break;
    }
    assert_true(i >= 30); /* the reservation held */
    for (uint64_t k = 0; k < i; k++)
        assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, 1000 + k)));
    nidus_cuckoo_free(cf);
}

/* Chunks: a packed filter dumps as the full one does, and the loader hands back a packed copy at the end. */
static void test_chunks_round_trip(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(100, 4, 1);
    for (uint64_t i = 0; i < 80; i++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, i)), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_remove_hash(cf, hash_of(cf, 3)), NIDUS_OK);
    nidus_cuckoo *copy = chunk_copy(cf);
    assert_false(nidus_cuckoo_loading(copy));
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_PACKED);
    test_assert_same_cuckoo_encoding(cf, copy);
    nidus_cuckoo_free(copy);
    nidus_cuckoo_free(cf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_filter_is_one_allocation),
        cmocka_unit_test(test_packed_matches_full),
        cmocka_unit_test(test_overflow_entries_stay_packed),
        cmocka_unit_test(test_side_allocation_failures),
        cmocka_unit_test(test_side_count_limit),
        cmocka_unit_test(test_stash_entries_stay_packed),
        cmocka_unit_test(test_entry_without_slot_copies_is_found),
        cmocka_unit_test(test_growth_forwards_and_clear_packs),
        cmocka_unit_test(test_failed_add_changes_nothing),
        cmocka_unit_test(test_chunks_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
