/* SPDX-License-Identifier: BSD-3-Clause */
/* The kind-generic handle (nidus/filter.h), through the public API only: every kind created, filled, encoded,
 * saved, opened in each mode (with and without a block guard), written in place and after growth, refused when
 * damaged; dumped and loaded by chunks, half-loaded included; merged; its stats; its allocator hook, with every
 * allocation of new and open made to fail in turn. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <unistd.h>

#include <nidus/nidus.h>

#include "test_util.h"
#include "failing_alloc.h"
#include "scratch_dir.h"
#include "filter_chunks_util.h"

static const nidus_kind KINDS[] = {NIDUS_KIND_CUCKOO, NIDUS_KIND_BLOOM, NIDUS_KIND_COUNTING_BLOOM};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

static nidus_filter *make(nidus_kind kind, uint64_t capacity, unsigned expansion)
{
    nidus_filter_params p = {.kind = kind, .capacity = capacity, .error_rate = 0.001, .expansion = expansion};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_OK);
    assert_non_null(f);
    return f;
}

static void add_keys(nidus_filter *f, const char *ns, uint64_t from, uint64_t to)
{
    char key[64];
    for (uint64_t i = from; i < to; i++)
        assert_int_equal(nidus_filter_add(f, key, test_key(key, sizeof key, ns, i)), NIDUS_OK);
}

/* Every key of [from, to) is found, by key, by hash, in a batch, and counted at least once. */
static void assert_has(const nidus_filter *f, const char *ns, uint64_t from, uint64_t to)
{
    char key[64];
    uint64_t hashes[256];
    bool found[256];
    size_t n = 0;
    for (uint64_t i = from; i < to; i++) {
        size_t len = test_key(key, sizeof key, ns, i);
        assert_true(nidus_filter_contains(f, key, len));
        assert_true(nidus_filter_count(f, key, len) >= 1);
        hashes[n++] = nidus_filter_hash(f, key, len);
        assert_true(nidus_filter_contains_hash(f, hashes[n - 1]));
        if (n == 256 || i + 1 == to) {
            memset(found, 0, sizeof found);
            nidus_filter_contains_many_hash(f, hashes, n, found);
            for (size_t k = 0; k < n; k++)
                assert_true(found[k]);
            n = 0;
        }
    }
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, n, out), n);
    assert_int_equal(fclose(out), 0);
}

static void test_every_kind_adds_removes_counts_and_reports(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_filter *f = make(KINDS[k], 1000, 0);
        assert_int_equal(nidus_filter_kind(f), KINDS[k]);
        assert_true((nidus_filter_cuckoo(f) != NULL) == (KINDS[k] == NIDUS_KIND_CUCKOO));
        assert_true((nidus_filter_bloom(f) != NULL) == (KINDS[k] == NIDUS_KIND_BLOOM));
        assert_true((nidus_filter_counting_bloom(f) != NULL) == (KINDS[k] == NIDUS_KIND_COUNTING_BLOOM));
        assert_false(nidus_filter_is_read_only(f));
        add_keys(f, "in", 0, 500);
        assert_has(f, "in", 0, 500);

        nidus_filter_stats s;
        nidus_filter_get_stats(f, &s);
        assert_int_equal(s.kind, KINDS[k]);
        assert_int_equal(s.items, 500);
        assert_int_equal(s.sub_filters, 1);
        assert_false(s.read_only);
        assert_true(s.capacity >= 1000);
        assert_true(s.memory_bytes > 0 && s.bits_per_item > 0);
        assert_true(s.error_bound > 0 && s.error_bound <= 0.001 * 1.0001);

        /* the same figures as the kind's own stats, through the typed handle */
        if (nidus_filter_cuckoo(f)) {
            nidus_cuckoo_stats c;
            nidus_cuckoo_get_stats(nidus_filter_cuckoo(f), &c);
            assert_int_equal(c.items, s.items);
            assert_int_equal(c.memory_bytes, s.memory_bytes);
        } else if (nidus_filter_bloom(f)) {
            nidus_bloom_stats b;
            nidus_bloom_get_stats(nidus_filter_bloom(f), &b);
            assert_int_equal(b.items, s.items);
            assert_int_equal(b.capacity, s.capacity);
        } else {
            nidus_counting_bloom_stats c;
            nidus_counting_bloom_get_stats(nidus_filter_counting_bloom(f), &c);
            assert_int_equal(c.items, s.items);
        }

        char key[64];
        size_t len = test_key(key, sizeof key, "in", 7);
        if (KINDS[k] == NIDUS_KIND_BLOOM) {
            assert_int_equal(nidus_filter_remove(f, key, len), NIDUS_ERR_UNSUPPORTED);
            assert_int_equal(nidus_filter_count(f, key, len), 1);
        } else {
            assert_int_equal(nidus_filter_add(f, key, len), NIDUS_OK);
            assert_true(nidus_filter_count(f, key, len) >= 2);
            assert_int_equal(nidus_filter_remove(f, key, len), NIDUS_OK);
            assert_int_equal(nidus_filter_remove_hash(f, nidus_filter_hash(f, key, len)), NIDUS_OK);
            nidus_filter_get_stats(f, &s);
            assert_int_equal(s.items, 499);
            len = test_key(key, sizeof key, "never", 1);
            assert_int_equal(nidus_filter_remove(f, key, len), NIDUS_ERR_NOT_FOUND);
        }
        assert_int_equal(nidus_filter_add_hash(f, nidus_filter_hash(f, "h", 1)), NIDUS_OK);
        assert_true(nidus_filter_contains(f, "h", 1));
        nidus_filter_free(f);
    }
    nidus_filter_free(NULL);
}

static void test_bad_parameters_are_refused(void **state)
{
    (void)state;
    nidus_filter *f = NULL;
    nidus_filter_params p = {.kind = (nidus_kind)9, .capacity = 10};
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    p.kind = NIDUS_KIND_COUNTING_BLOOM, p.expansion = 2; /* it never grows: not silently dropped */
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    p.kind = NIDUS_KIND_BLOOM, p.expansion = 0, p.capacity = 0;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    p.capacity = 10, p.error_rate = 1.5;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    assert_null(f);
    assert_int_equal(nidus_filter_new(NULL, &f), NIDUS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nidus_filter_add(NULL, "k", 1), NIDUS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nidus_filter_open("/nonexistent/nidus/f", NIDUS_FILTER_MAP, NULL, NULL, &f), NIDUS_ERR_IO);
    assert_int_equal(nidus_filter_open("x", (nidus_filter_open_mode)7, NULL, NULL, &f), NIDUS_ERR_INVALID_ARGUMENT);

    /* the kind's own parameters replace the generic ones */
    nidus_cuckoo_params c = {.capacity = 100, .fingerprint_bits = 16, .bucket_size = 4, .semi_sort = true};
    nidus_filter_params q = {.kind = NIDUS_KIND_CUCKOO, .capacity = 1, .kind_params = &c};
    assert_int_equal(nidus_filter_new(&q, &f), NIDUS_OK);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(f), &s);
    assert_int_equal(s.fingerprint_bits, 16);
    assert_true(s.semi_sort);
    nidus_filter_free(f);
}

static void test_encodings_round_trip_and_damage_is_refused(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_filter *f = make(KINDS[k], 2000, 0);
        add_keys(f, "enc", 0, 1000);
        size_t n = (size_t)nidus_filter_encoded_size(f), written = 0;
        uint8_t *buf = malloc(n);
        assert_int_not_equal(nidus_filter_encode(f, buf, n - 1, &written), NIDUS_OK);
        assert_int_equal(nidus_filter_encode(f, buf, n, &written), NIDUS_OK);
        assert_int_equal(written, n);

        nidus_filter *g = NULL, *v = NULL;
        assert_int_equal(nidus_filter_decode(buf, n, NULL, &g), NIDUS_OK);
        assert_int_equal(nidus_filter_kind(g), KINDS[k]);
        assert_has(g, "enc", 0, 1000);
        assert_int_equal(nidus_filter_add(g, "more", 4), NIDUS_OK);
        assert_int_equal(nidus_filter_view(buf, n, NULL, &v), NIDUS_OK);
        assert_true(nidus_filter_is_read_only(v));
        assert_has(v, "enc", 0, 1000);
        assert_int_equal(nidus_filter_add(v, "more", 4), NIDUS_ERR_READ_ONLY);
        nidus_filter_free(v);
        nidus_filter_free(g);

        buf[n / 2] ^= 0x10; /* a table byte: the checksum catches it */
        assert_int_equal(nidus_filter_decode(buf, n, NULL, &g), NIDUS_ERR_CORRUPT);
        buf[n / 2] ^= 0x10;
        buf[6] = 9; /* a kind this build has no decoder for */
        assert_int_equal(nidus_filter_decode(buf, n, NULL, &g), NIDUS_ERR_CORRUPT);
        assert_int_equal(nidus_filter_decode(buf, 10, NULL, &g), NIDUS_ERR_CORRUPT);
        free(buf);
        nidus_filter_free(f);
    }
}

/* A filter made by nidus_filter_load_chunk that has not had its last chunk: false to every lookup, refuses
 * writes, and its chunks so far load into another filter in the same state. */
static void assert_half_loaded(const nidus_filter *f, nidus_kind kind)
{
    assert_true(nidus_filter_loading(f));
    assert_int_equal(nidus_filter_kind(f), kind);
    assert_false(nidus_filter_contains(f, "chunk-0", 7));
    assert_false(nidus_filter_contains_hash(f, 1));
}

/* Every kind that chunks, new and (cuckoo, Bloom) grown, through nidus_filter_dump_chunk and
 * nidus_filter_load_chunk one chunk at a time: loading until the last chunk (a half-loaded filter's own chunks
 * load into a third filter, still loading, which the rest completes), then the same encoding, the same keys,
 * and the same again after a save and an open. Misuse gets statuses; the fuse kind has no chunks. */
static void test_every_kind_dumps_and_loads_chunks(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        for (int grown = 0; grown < 2; grown++) {
            if (grown && KINDS[k] == NIDUS_KIND_COUNTING_BLOOM)
                continue; /* never grows */
            /* large enough for several data chunks of 4 MiB, or grown into several sub-filters */
            uint64_t large = KINDS[k] == NIDUS_KIND_COUNTING_BLOOM ? 600000 : 3000000;
            nidus_filter *f = grown ? make(KINDS[k], 500, 2) : make(KINDS[k], large, 0);
            add_keys(f, "chunk", 0, grown ? 6000 : 2000);
            nidus_filter_stats st;
            nidus_filter_get_stats(f, &st);
            if (grown)
                assert_true(st.sub_filters > 1);
            chunk_list c;
            dump_all(f, &c);
            assert_true(c.n >= (grown ? 2u : 3u));

            nidus_filter *l = NULL, *h = NULL;
            assert_int_equal(nidus_filter_load_chunk(&l, KINDS[k], c.data[1], c.len[1], 0, NULL), NIDUS_ERR_SEQUENCE);
            assert_null(l);
            assert_int_equal(nidus_filter_load_chunk(&l, KINDS[k], c.data[0], c.len[0], 0, NULL), NIDUS_OK);
            assert_non_null(l);
            assert_half_loaded(l, KINDS[k]);
            assert_int_equal(nidus_filter_add(l, "x", 1), NIDUS_ERR_READ_ONLY);
            assert_int_equal(nidus_filter_load_chunk(&l, KINDS[k], c.data[0], c.len[0], 0, NULL), NIDUS_ERR_SEQUENCE);
            nidus_kind other = KINDS[k] == NIDUS_KIND_CUCKOO ? NIDUS_KIND_BLOOM : NIDUS_KIND_CUCKOO;
            assert_int_equal(nidus_filter_load_chunk(&l, other, c.data[1], c.len[1], 0, NULL),
                             NIDUS_ERR_INVALID_ARGUMENT);
            for (unsigned i = 1; i < c.n; i++) {
                if (i == c.n - 1) { /* half-loaded: its chunks so far into h */
                    assert_half_loaded(l, KINDS[k]);
                    chunk_list half;
                    dump_all(l, &half);
                    for (unsigned j = 0; j < half.n; j++)
                        assert_int_equal(nidus_filter_load_chunk(&h, KINDS[k], half.data[j], half.len[j], 0, NULL),
                                         NIDUS_OK);
                    assert_half_loaded(h, KINDS[k]);
                    free_chunks(&half);
                }
                assert_int_equal(nidus_filter_load_chunk(&l, KINDS[k], c.data[i], c.len[i], 0, NULL), NIDUS_OK);
            }
            assert_false(nidus_filter_loading(l));
            assert_int_equal(nidus_filter_load_chunk(&h, KINDS[k], c.data[c.n - 1], c.len[c.n - 1], 0, NULL),
                             NIDUS_OK);
            assert_false(nidus_filter_loading(h));
            assert_same_encoding(f, l);
            assert_same_encoding(f, h);
            assert_has(l, "chunk", 0, grown ? 6000 : 2000);
            assert_int_equal(nidus_filter_add(l, "x", 1), NIDUS_OK);
            assert_int_equal(nidus_filter_add(f, "x", 1), NIDUS_OK);

            char path[128];
            path_of(path, sizeof path, "chunked.nidus");
            assert_int_equal(nidus_filter_save_file(l, path), NIDUS_OK);
            nidus_filter *o = NULL;
            assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, &o), NIDUS_OK);
            assert_same_encoding(f, o);
            nidus_filter_free(o);
            nidus_filter_free(h);
            nidus_filter_free(l);
            free_chunks(&c);
            nidus_filter_free(f);
        }
    }
    nidus_filter *l = NULL;
    uint8_t junk[64] = {0};
    assert_int_equal(nidus_filter_load_chunk(&l, NIDUS_KIND_FUSE, junk, sizeof junk, 0, NULL), NIDUS_ERR_UNSUPPORTED);
    assert_int_equal(nidus_filter_load_chunk(&l, (nidus_kind)9, junk, sizeof junk, 0, NULL),
                     NIDUS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nidus_filter_load_chunk(&l, NIDUS_KIND_BLOOM, junk, sizeof junk, 0, NULL), NIDUS_ERR_CORRUPT);
    assert_null(l);
}

static void *offer_count(void *ctx, void *block)
{
    (void)block;
    ++*(unsigned *)ctx;
    return NULL; /* left where it is */
}

/* A nidus_filter_ref around typed handles the caller keeps: every call goes through it as through a handle of
 * its own (adds, lookups, stats, chunks, merges, relocation); the header chunk loads into a ref around no filter
 * with one allocation fewer than into a new handle (the handle's), the typed handle a load's last chunk makes is
 * read back, and nidus_filter_free frees the typed filter, never the ref. */
static void test_a_ref_wraps_a_typed_handle_without_allocating(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        bool counting = KINDS[k] == NIDUS_KIND_COUNTING_BLOOM;
        nidus_filter *f = make(KINDS[k], counting ? 3000 : 500, counting ? 0 : 2);
        add_keys(f, "ref", 0, 2000);
        nidus_filter_ref r, rl;
        nidus_filter *v = nidus_filter_ref_init(&r, KINDS[k], nidus_filter_typed(f));
        assert_ptr_equal(v, (nidus_filter *)&r);
        assert_int_equal(nidus_filter_kind(v), KINDS[k]);
        assert_ptr_equal(nidus_filter_typed(v), nidus_filter_typed(f));
        assert_has(v, "ref", 0, 2000);
        nidus_filter_stats a, b;
        nidus_filter_get_stats(f, &a);
        nidus_filter_get_stats(v, &b);
        assert_int_equal(a.items, b.items);
        assert_int_equal(a.memory_bytes, b.memory_bytes);
        assert_int_equal(nidus_filter_add(v, "through-ref", 11), NIDUS_OK); /* writes the typed filter */
        assert_true(nidus_filter_contains(f, "through-ref", 11));

        chunk_list c;
        dump_all(v, &c);
        g_fail = (failing){0};
        nidus_filter *h = NULL;
        for (unsigned i = 0; i < c.n; i++)
            assert_int_equal(nidus_filter_load_chunk(&h, KINDS[k], c.data[i], c.len[i], 0, &g_hook), NIDUS_OK);
        long with_handle = g_fail.live;
        nidus_filter_free(h);
        assert_int_equal(g_fail.live, 0);
        nidus_filter *l = nidus_filter_ref_init(&rl, KINDS[k], NULL), *before = l;
        assert_null(nidus_filter_typed(l));
        for (unsigned i = 0; i < c.n; i++) {
            assert_int_equal(nidus_filter_load_chunk(&l, KINDS[k], c.data[i], c.len[i], 0, &g_hook), NIDUS_OK);
            assert_ptr_equal(l, before);
            assert_non_null(nidus_filter_typed(l));
            assert_true(nidus_filter_loading(l) == (i + 1 < c.n));
        }
        assert_int_equal(g_fail.live, with_handle - 1); /* no handle: the filter's own blocks */
        assert_same_encoding(f, l);
        assert_has(l, "ref", 0, 2000);

        assert_int_equal(nidus_filter_merge(l, v), NIDUS_OK);
        assert_has(l, "ref", 0, 2000);
        unsigned offers = 0;
        nidus_mover m = {offer_count, NULL, &offers};
        uint64_t cursor = 0;
        assert_true(nidus_filter_relocate(l, &m, &cursor));
        assert_int_equal(cursor, 0);
        assert_true(counting ? offers == 0 : offers > 0); /* a counting Bloom filter does not relocate */
        nidus_filter_free(l); /* the typed filter's blocks, not the ref on the stack */
        assert_int_equal(g_fail.live, 0);
        free_chunks(&c);
        nidus_filter_free(f);
    }
    nidus_filter_ref r;
    assert_null(nidus_filter_ref_init(&r, (nidus_kind)9, NULL));
    assert_null(nidus_filter_ref_init(NULL, NIDUS_KIND_CUCKOO, NULL));
}

/* A fuse filter (decoded into the generic handle) neither chunks nor merges. */
static nidus_filter *fuse_filter(uint64_t seed)
{
    uint64_t hashes[100];
    for (uint64_t i = 0; i < 100; i++)
        hashes[i] = test_splitmix(&seed);
    nidus_fuse_params p = {.fingerprint_bits = 8};
    nidus_fuse *fu = NULL;
    assert_int_equal(nidus_fuse_build_hash(&p, hashes, 100, &fu), NIDUS_OK);
    size_t n = (size_t)nidus_fuse_encoded_size(fu), written = 0;
    uint8_t *buf = malloc(n);
    assert_int_equal(nidus_fuse_encode(fu, buf, n, &written), NIDUS_OK);
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_decode(buf, n, NULL, &f), NIDUS_OK);
    free(buf);
    nidus_fuse_free(fu);
    return f;
}

/* nidus_filter_merge for every kind: the union of two filters of the same parameters, grown ones too; kinds or
 * parameters that differ are NIDUS_ERR_INCOMPATIBLE and leave dst as it was; the fuse kind is unsupported. */
static void test_every_kind_merges(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        for (int grown = 0; grown < 2; grown++) {
            unsigned expansion = grown && KINDS[k] != NIDUS_KIND_COUNTING_BLOOM ? 2 : 0;
            uint64_t n = expansion ? 3000 : 1000;
            nidus_filter *a = make(KINDS[k], expansion ? 500 : 4000, expansion);
            nidus_filter *b = make(KINDS[k], expansion ? 500 : 4000, expansion);
            add_keys(a, "left", 0, n);
            add_keys(b, "right", 0, n);
            assert_int_equal(nidus_filter_merge(a, b), NIDUS_OK);
            assert_has(a, "left", 0, n);
            assert_has(a, "right", 0, n);
            assert_has(b, "right", 0, n);

            nidus_filter *other = make(KINDS[(k + 1) % NKINDS], 4000, 0), *wider = make(KINDS[k], 40000, 0);
            size_t before_n;
            uint8_t *before = encoding_of(a, &before_n);
            assert_int_equal(nidus_filter_merge(a, other), NIDUS_ERR_INCOMPATIBLE);
            assert_int_equal(nidus_filter_merge(a, wider), NIDUS_ERR_INCOMPATIBLE);
            size_t after_n;
            uint8_t *after = encoding_of(a, &after_n);
            assert_int_equal(before_n, after_n);
            assert_memory_equal(before, after, before_n);
            free(before);
            free(after);
            nidus_filter_free(wider);
            nidus_filter_free(other);
            nidus_filter_free(b);
            nidus_filter_free(a);
        }
    }
    nidus_filter *x = fuse_filter(test_seed()), *y = fuse_filter(test_seed() + 1);
    assert_int_equal(nidus_filter_merge(x, y), NIDUS_ERR_UNSUPPORTED);
    uint8_t buf[256];
    size_t len = 0;
    uint64_t next = 0;
    assert_int_equal(nidus_filter_dump_chunk(x, 0, buf, sizeof buf, &len, &next), NIDUS_ERR_UNSUPPORTED);
    assert_false(nidus_filter_loading(x));
    nidus_filter_free(y);
    nidus_filter_free(x);
}

/* A guard that keeps no fault handler: it checks every block when asked (as its contract allows), counts its
 * calls, and reports either nothing written (the save compares) or every block written. */
typedef struct test_guard {
    int prepared, released;
    bool decline, all_written;
    uint64_t blocks;
    unsigned char *flags;
} test_guard;

static nidus_status tg_prepare(void *ctx, const nidus_file_blocks *b)
{
    test_guard *t = ctx;
    if (t->decline)
        return NIDUS_ERR_UNSUPPORTED;
    for (uint64_t k = 0; k < b->blocks; k++)
        if (nidus_file_block_check(b, k) != NIDUS_OK)
            return NIDUS_ERR_CORRUPT;
    assert_int_equal(nidus_file_block_check(b, b->blocks), NIDUS_ERR_INVALID_ARGUMENT);
    t->prepared++;
    t->blocks = b->blocks;
    return NIDUS_OK;
}

static const unsigned char *tg_written(void *ctx)
{
    test_guard *t = ctx;
    if (!t->all_written)
        return NULL;
    free(t->flags);
    t->flags = malloc((size_t)t->blocks);
    memset(t->flags, 1, (size_t)t->blocks);
    return t->flags;
}

static void tg_release(void *ctx) { ((test_guard *)ctx)->released++; }

/* Blocks of 64 KiB that differ between two files of the same length. */
static unsigned blocks_differing(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *x = test_read_all(a, &na), *y = test_read_all(b, &nb);
    assert_int_equal(na, nb);
    unsigned d = 0;
    for (size_t at = 0; at < na; at += 65536)
        d += memcmp(x + at, y + at, na - at < 65536 ? na - at : 65536) != 0;
    free(x), free(y);
    return d;
}

static void assert_file_ok(const char *path)
{
    nidus_file_report r;
    assert_int_equal(nidus_file_verify(path, NULL, &r), NIDUS_OK);
}

static void test_files_open_in_every_mode_and_patch_in_place(void **state)
{
    (void)state;
    char path[128], before[128];
    path_of(path, sizeof path, "f.nidus");
    path_of(before, sizeof before, "before.nidus");
    for (size_t k = 0; k < NKINDS; k++) {
        /* big enough for several 64 KiB blocks, so a patch leaves most of them as they were */
        nidus_filter *f = make(KINDS[k], 400000, 0);
        add_keys(f, "file", 0, 2000);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        assert_int_equal(nidus_filter_save_file(f, before), NIDUS_OK);
        nidus_filter_free(f);
        size_t n;
        free(test_read_all(path, &n));
        assert_true(n > 4 * 65536);

        const nidus_filter_open_mode modes[] = {NIDUS_FILTER_LOAD, NIDUS_FILTER_MAP, NIDUS_FILTER_MAP_WRITABLE};
        for (size_t m = 0; m < 3; m++) {
            test_guard t = {0};
            nidus_file_guard guard = {tg_prepare, tg_written, tg_release, &t};
            assert_int_equal(nidus_filter_open(path, modes[m], NULL, &guard, &f), NIDUS_OK);
            assert_int_equal(t.prepared, modes[m] == NIDUS_FILTER_LOAD ? 0 : 1); /* a copy is checked whole */
            assert_int_equal(nidus_filter_kind(f), KINDS[k]);
            assert_has(f, "file", 0, 2000);
            assert_int_equal(nidus_filter_is_read_only(f), modes[m] == NIDUS_FILTER_MAP);
            nidus_filter_stats s;
            nidus_filter_get_stats(f, &s);
            assert_int_equal(s.items, 2000);
            if (modes[m] == NIDUS_FILTER_MAP)
                assert_int_equal(nidus_filter_add(f, "x", 1), NIDUS_ERR_READ_ONLY);
            nidus_filter_free(f);
            assert_int_equal(t.released, t.prepared);
        }

        /* written in place, with no guard: the save compares the blocks with the file and patches those */
        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, NULL, NULL, &f), NIDUS_OK);
        add_keys(f, "more", 0, 1);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        assert_has(f, "more", 0, 1); /* usable after the save */
        nidus_filter_free(f);
        assert_file_ok(path);
        /* the key's blocks (cuckoo: two buckets; Bloom: its probes), block 0 (the counts), the block table and
         * footer: a handful of the file's blocks */
        unsigned changed = blocks_differing(path, before);
        print_message("# %u blocks of %zu changed\n", changed, (n + 65535) / 65536);
        unsigned limit = KINDS[k] == NIDUS_KIND_BLOOM ? 16 : 5;
        assert_true(changed >= 2 && changed <= limit);
        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, &f), NIDUS_OK);
        assert_has(f, "file", 0, 2000);
        assert_has(f, "more", 0, 1);
        nidus_filter_free(f);

        /* a guard that says every block was written: the file is written through, still whole and right */
        test_guard t = {.all_written = true};
        nidus_file_guard guard = {tg_prepare, tg_written, tg_release, &t};
        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, NULL, &guard, &f), NIDUS_OK);
        add_keys(f, "more", 1, 100);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        nidus_filter_free(f);
        free(t.flags);
        assert_int_equal(t.released, 1);
        assert_file_ok(path);
        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP, NULL, NULL, &f), NIDUS_OK);
        assert_has(f, "file", 0, 2000);
        assert_has(f, "more", 0, 100);
        nidus_filter_stats s;
        nidus_filter_get_stats(f, &s);
        assert_int_equal(s.items, 2100);
        nidus_filter_free(f);
    }
}

/* Adds and removes some keys in the file at `from`, opened as `mode`, and saves it to `to`. */
static void edit_file(const char *from, nidus_filter_open_mode mode, const char *to)
{
    nidus_filter *f;
    assert_int_equal(nidus_filter_open(from, mode, NULL, NULL, &f), NIDUS_OK);
    add_keys(f, "edit", 500, 900);
    char key[64];
    for (uint64_t i = 0; i < 100 && nidus_filter_kind(f) != NIDUS_KIND_BLOOM; i++)
        assert_int_equal(nidus_filter_remove(f, key, test_key(key, sizeof key, "edit", i)), NIDUS_OK);
    assert_int_equal(nidus_filter_save_file(f, to), NIDUS_OK);
    nidus_filter_free(f);
}

static void test_a_patched_file_is_what_a_whole_save_writes(void **state)
{
    (void)state;
    char orig[128], patched[128], whole[128];
    path_of(orig, sizeof orig, "orig.nidus");
    path_of(patched, sizeof patched, "patched.nidus");
    path_of(whole, sizeof whole, "whole.nidus");
    for (size_t k = 0; k < NKINDS; k++) {
        for (int big = 0; big < 2; big++) { /* one block; many */
            nidus_filter *f = make(KINDS[k], big ? 400000 : 1000, 0);
            add_keys(f, "edit", 0, 500);
            assert_int_equal(nidus_filter_save_file(f, orig), NIDUS_OK);
            nidus_filter_free(f);
            edit_file(orig, NIDUS_FILTER_MAP_WRITABLE, patched);
            edit_file(orig, NIDUS_FILTER_LOAD, whole);
            size_t np, nw;
            uint8_t *p = test_read_all(patched, &np), *w = test_read_all(whole, &nw);
            assert_int_equal(np, nw);
            assert_memory_equal(p, w, np);
            free(p), free(w);
        }
    }
}

static void test_a_writable_file_grows_and_is_written_whole(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "grow.nidus");
    const nidus_kind growing[] = {NIDUS_KIND_CUCKOO, NIDUS_KIND_BLOOM};
    for (size_t k = 0; k < 2; k++) {
        nidus_filter *f = make(growing[k], 5000, 2);
        add_keys(f, "g", 0, 1000);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        nidus_filter_free(f);

        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, NULL, NULL, &f), NIDUS_OK);
        add_keys(f, "g", 1000, 30000); /* six times its capacity: new sub-filters, the layout moves */
        nidus_filter_stats s;
        nidus_filter_get_stats(f, &s);
        assert_true(s.sub_filters > 1);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        nidus_filter_free(f);
        assert_file_ok(path);

        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP, NULL, NULL, &f), NIDUS_OK);
        assert_has(f, "g", 0, 30000);
        nidus_filter_stats t;
        nidus_filter_get_stats(f, &t);
        assert_int_equal(t.sub_filters, s.sub_filters);
        assert_int_equal(t.items, s.items);
        nidus_filter_free(f);
    }
}

static void test_damaged_files_are_refused_in_every_mode(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "bad.nidus");
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_filter *f = make(KINDS[k], 400000, 0);
        add_keys(f, "bad", 0, 100);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        nidus_filter_free(f);
        size_t n;
        uint8_t *bytes = test_read_all(path, &n);
        bytes[2 * 65536 + 100] ^= 0x01; /* inside block 2 */
        write_file(path, bytes, n);
        free(bytes);
        const nidus_filter_open_mode modes[] = {NIDUS_FILTER_LOAD, NIDUS_FILTER_MAP, NIDUS_FILTER_MAP_WRITABLE};
        for (size_t m = 0; m < 3; m++) {
            f = NULL;
            assert_int_equal(nidus_filter_open(path, modes[m], NULL, NULL, &f), NIDUS_ERR_CORRUPT);
            assert_null(f);
            test_guard t = {0}, declining = {.decline = true};
            nidus_file_guard guard = {tg_prepare, tg_written, tg_release, &t};
            assert_int_equal(nidus_filter_open(path, modes[m], NULL, &guard, &f), NIDUS_ERR_CORRUPT);
            guard.ctx = &declining; /* declined: the library checks every block itself */
            assert_int_equal(nidus_filter_open(path, modes[m], NULL, &guard, &f), NIDUS_ERR_CORRUPT);
            assert_int_equal(t.released, t.prepared);
        }
    }
}

static void test_an_encoding_file_opened_writable_is_loaded(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "whole.nidus");
    nidus_filter *f = make(NIDUS_KIND_CUCKOO, 1000, 1);
    add_keys(f, "w", 0, 100);
    size_t n = (size_t)nidus_filter_encoded_size(f), written;
    uint8_t *buf = malloc(n);
    assert_int_equal(nidus_filter_encode(f, buf, n, &written), NIDUS_OK);
    nidus_filter_free(f);
    write_file(path, buf, n); /* an odd version: one checksum over everything, no blocks to patch */
    free(buf);
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, NULL, NULL, &f), NIDUS_OK);
    assert_false(nidus_filter_is_read_only(f));
    add_keys(f, "w", 100, 200);
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    nidus_filter_free(f);
    nidus_file_report r;
    assert_int_equal(nidus_file_verify(path, NULL, &r), NIDUS_OK);
    assert_int_equal(r.version, NIDUS_FILE_FORMAT_VERSION); /* written anew as a framed file */
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP, NULL, NULL, &f), NIDUS_OK);
    assert_has(f, "w", 0, 200);
    nidus_filter_free(f);
}

static void test_the_allocator_hook_is_used_and_failures_are_statuses(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "alloc.nidus");
    for (size_t k = 0; k < NKINDS; k++) {
        g_fail = (failing){0};
        nidus_filter_params p = {.kind = KINDS[k], .capacity = 300000, .allocator = &g_hook};
        nidus_filter *f = NULL;
        assert_int_equal(nidus_filter_new(&p, &f), NIDUS_OK);
        assert_true(g_fail.live >= 2); /* the handle and the filter's memory */
        add_keys(f, "a", 0, 50);
        assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
        nidus_filter_free(f);
        assert_int_equal(g_fail.live, 0);

        /* every allocation of new and of each open, failing in turn: a status, nothing left allocated */
        for (int op = 0; op < 4; op++) {
            long injected = 0;
            for (long at = 1;; at++) {
                g_fail = (failing){.fail_at = at};
                nidus_status st = op == 0 ? nidus_filter_new(&p, &f)
                                          : nidus_filter_open(path, (nidus_filter_open_mode)(op - 1), &g_hook, NULL, &f);
                if (st == NIDUS_OK) {
                    nidus_filter_free(f);
                    assert_int_equal(g_fail.live, 0);
                    if (g_fail.calls < at)
                        break; /* no allocation left to fail */
                    continue;
                }
                injected++;
                assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
                assert_int_equal(g_fail.live, 0);
            }
            assert_true(injected >= 2);
        }

        /* and the save of a file written in place (it compares the blocks): the old file stays whole */
        long injected = 0;
        for (long at = 1;; at++) {
            g_fail = (failing){0};
            assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, &g_hook, NULL, &f), NIDUS_OK);
            add_keys(f, "b", 0, 1);
            g_fail.calls = 0, g_fail.fail_at = at;
            nidus_status st = nidus_filter_save_file(f, path);
            long calls = g_fail.calls;
            g_fail.fail_at = 0;
            nidus_filter_free(f);
            assert_int_equal(g_fail.live, 0);
            assert_file_ok(path);
            if (st == NIDUS_OK && calls < at)
                break;
            injected += st == NIDUS_ERR_NO_MEMORY;
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_NO_MEMORY);
        }
        assert_true(injected >= 1);
        assert_file_ok(path);
    }
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_adds_removes_counts_and_reports),
        cmocka_unit_test(test_bad_parameters_are_refused),
        cmocka_unit_test(test_encodings_round_trip_and_damage_is_refused),
        cmocka_unit_test_setup_teardown(test_every_kind_dumps_and_loads_chunks, make_dir, remove_dir),
        cmocka_unit_test(test_every_kind_merges),
        cmocka_unit_test(test_a_ref_wraps_a_typed_handle_without_allocating),
        cmocka_unit_test_setup_teardown(test_files_open_in_every_mode_and_patch_in_place, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_patched_file_is_what_a_whole_save_writes, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_writable_file_grows_and_is_written_whole, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_damaged_files_are_refused_in_every_mode, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_an_encoding_file_opened_writable_is_loaded, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_the_allocator_hook_is_used_and_failures_are_statuses, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
