/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding and decoding of cuckoo filters: identity, views, files, chunks, and refusal of bad input. */
#define _POSIX_C_SOURCE 200809L
#include "cuckoo_test_util.h"
#include "test_util.h"

#include <errno.h>
#include <unistd.h>

#include <nidus/nidus.h>

#include "codec.h"

#define KEYS 3000

static uint64_t key_hash(const nidus_cuckoo *cf, const char *ns, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, ns, i);
    return nidus_cuckoo_hash(cf, buf, n);
}

/* A filter with everything an encoding must carry: grown tables, overflow copies, removes. */
static nidus_cuckoo *make_filled(unsigned b, unsigned f, bool semi, unsigned expansion, uint64_t capacity)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .fingerprint_bits = f, .semi_sort = semi,
                             .expansion = expansion, .max_kicks = 100, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (uint64_t k = 0; k < KEYS; k++)
        if (nidus_cuckoo_add_hash(cf, key_hash(cf, "in", k)) != NIDUS_OK)
            break;
    for (int k = 0; k < 40; k++) /* duplicates beyond 2b: overflow entries */
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "dup", 0)), NIDUS_OK);
    nidus_cuckoo_remove_hash(cf, key_hash(cf, "in", 0));
    return cf;
}

/* Same answers for every added key and for absent ones, same counters. */
static void assert_same_filter(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    nidus_cuckoo_stats sa, sb;
    nidus_cuckoo_get_stats(a, &sa);
    nidus_cuckoo_get_stats(b, &sb);
    assert_int_equal(sa.items, sb.items);
    assert_int_equal(sa.tables, sb.tables);
    assert_int_equal(sa.items_deleted, sb.items_deleted);
    assert_int_equal(sa.overflow_items, sb.overflow_items);
    assert_true(sa.error_bound == sb.error_bound);
    for (uint64_t k = 0; k < KEYS; k++) {
        assert_int_equal(nidus_cuckoo_contains_hash(a, key_hash(a, "in", k)),
                         nidus_cuckoo_contains_hash(b, key_hash(b, "in", k)));
        assert_int_equal(nidus_cuckoo_contains_hash(a, key_hash(a, "out", k)),
                         nidus_cuckoo_contains_hash(b, key_hash(b, "out", k)));
    }
    assert_int_equal(nidus_cuckoo_count_hash(a, key_hash(a, "dup", 0)), nidus_cuckoo_count_hash(b, key_hash(b, "dup", 0)));
}

static const unsigned kinds[][5] = {
    /* b, f, semi, expansion, capacity */
    {2, 8, 0, 1, 500}, {4, 12, 0, 2, 300}, {4, 13, 1, 1, 400}, {4, 21, 1, 0, 4000}, {8, 16, 0, 2, 200},
    {1, 10, 0, 2, 900}, {4, 32, 0, 0, 4000}, {4, 5, 1, 2, 700}, {2, 27, 0, 1, 600},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static nidus_cuckoo *make_kind(size_t k)
{
    return make_filled(kinds[k][0], kinds[k][1], kinds[k][2], kinds[k][3], kinds[k][4]);
}

static void test_encode_decode_identity_for_every_kind_of_table(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_cuckoo *cf = make_kind(k), *back = NULL;
        size_t len, len2;
        uint8_t *buf = test_cuckoo_encode(cf, &len);
        assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &back), NIDUS_OK);
        assert_same_filter(cf, back);
        uint8_t *again = test_cuckoo_encode(back, &len2); /* canonical: re-encoding gives the same bytes */
        assert_int_equal(len, len2);
        assert_memory_equal(buf, again, len);
        /* a decoded filter is writable and keeps working */
        assert_int_equal(nidus_cuckoo_remove_hash(back, key_hash(back, "dup", 0)), NIDUS_OK);
        free(again);
        free(buf);
        nidus_cuckoo_free(back);
        nidus_cuckoo_free(cf);
    }
}

static void test_view_answers_in_place_and_refuses_writes(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_cuckoo *cf = make_kind(k), *view = NULL;
        size_t len;
        uint8_t *buf = test_cuckoo_encode(cf, &len);
        assert_int_equal(nidus_cuckoo_view(buf, len, NULL, &view), NIDUS_OK);
        assert_true(nidus_cuckoo_is_read_only(view));
        assert_same_filter(cf, view);
        uint64_t h = key_hash(view, "in", 1);
        assert_int_equal(nidus_cuckoo_add_hash(view, h), NIDUS_ERR_READ_ONLY);
        assert_int_equal(nidus_cuckoo_remove_hash(view, h), NIDUS_ERR_READ_ONLY);
        assert_int_equal(nidus_cuckoo_compact(view, NULL), NIDUS_ERR_READ_ONLY);
        assert_int_equal(nidus_cuckoo_clear(view), NIDUS_ERR_READ_ONLY);
        size_t added = 7;
        assert_int_equal(nidus_cuckoo_add_many_hash(view, &h, 1, &added), NIDUS_ERR_READ_ONLY);
        assert_int_equal(added, 0);
        bool batch[2];
        uint64_t hs[2] = {h, key_hash(view, "in", 2)};
        nidus_cuckoo_contains_many_hash(view, hs, 2, batch);
        assert_true(batch[0] && batch[1]);
        nidus_cuckoo_free(view);
        free(buf);
        nidus_cuckoo_free(cf);
    }
}

/* ---- refusal of bad input ---- */

static void test_every_flipped_byte_and_every_truncation_is_refused(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 60, .bucket_size = 4, .fingerprint_bits = 9, .semi_sort = true,
                             .expansion = 1, .seed = test_seed()};
    nidus_cuckoo *cf = NULL, *back = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (uint64_t k = 0; k < 90; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "c", k)), NIDUS_OK);
    for (int k = 0; k < 12; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "dup", 0)), NIDUS_OK);
    size_t len;
    uint8_t *buf = test_cuckoo_encode(cf, &len);
    for (size_t at = 0; at < len; at++)
        for (unsigned bit = 0; bit < 8; bit++) {
            buf[at] ^= (uint8_t)(1u << bit);
            nidus_status st = nidus_cuckoo_decode(buf, len, NULL, &back);
            if (st == NIDUS_OK)
                fail_msg("flipping bit %u of byte %zu went unnoticed", bit, at);
            assert_int_equal(nidus_cuckoo_view(buf, len, NULL, &back), st);
            buf[at] ^= (uint8_t)(1u << bit);
        }
    for (size_t cut = 0; cut < len; cut++)
        assert_int_not_equal(nidus_cuckoo_decode(buf, cut, NULL, &back), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &back), NIDUS_OK);
    nidus_cuckoo_free(back);
    free(buf);
    nidus_cuckoo_free(cf);
}

/* Hostile input carries a valid checksum: every field must still be checked. */
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* The checksum is XXH3-64 of everything before it; recompute it the way a forger would. */
static void reseal(uint8_t *buf, size_t len) { put_u64(buf + len - 8, nidus_codec_hash(buf, len - 8)); }

static nidus_status decode_forged(const uint8_t *orig, size_t len, size_t at, const uint8_t *bytes, size_t n)
{
    uint8_t *buf = malloc(len);
    memcpy(buf, orig, len);
    memcpy(buf + at, bytes, n);
    reseal(buf, len);
    nidus_cuckoo *back = NULL, *view = NULL;
    nidus_status st = nidus_cuckoo_decode(buf, len, NULL, &back);
    nidus_status st2 = nidus_cuckoo_view(buf, len, NULL, &view);
    assert_int_equal(st, st2);
    nidus_cuckoo_free(back);
    nidus_cuckoo_free(view);
    free(buf);
    return st;
}

static void test_forged_fields_with_valid_checksum_are_refused(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make_filled(4, 9, true, 2, 300);
    size_t len;
    uint8_t *buf = test_cuckoo_encode(cf, &len);
    /* layout: prefix 20 bytes, meta (40 fixed + 32 per table), segments, checksum */
    const size_t meta = 20, table0 = meta + 40;
    uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f};
    uint8_t one = 1, zero = 0, big = 200, three = 3, four = 4;
    assert_int_equal(decode_forged(buf, len, 5, &big, 1), NIDUS_ERR_VERSION);
    assert_int_equal(decode_forged(buf, len, 6, &three, 1), NIDUS_ERR_UNSUPPORTED);
    assert_int_equal(decode_forged(buf, len, 7, &one, 1), NIDUS_ERR_CORRUPT);              /* flags */
    assert_int_equal(decode_forged(buf, len, 8, huge, 8), NIDUS_ERR_CORRUPT);              /* total length */
    assert_int_equal(decode_forged(buf, len, 16, huge, 4), NIDUS_ERR_CORRUPT);             /* meta length */
    assert_int_equal(decode_forged(buf, len, meta + 32, &three, 1), NIDUS_ERR_CORRUPT);    /* bucket size */
    assert_int_equal(decode_forged(buf, len, meta + 33, &big, 1), NIDUS_ERR_CORRUPT);      /* fingerprint bits */
    assert_int_equal(decode_forged(buf, len, meta + 35, &four, 1), NIDUS_ERR_CORRUPT);     /* meta flags */
    assert_int_equal(decode_forged(buf, len, meta + 36, &zero, 1), NIDUS_ERR_CORRUPT);     /* tables */
    assert_int_equal(decode_forged(buf, len, meta + 36, &big, 1), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(buf, len, meta + 28, huge, 4), NIDUS_ERR_CORRUPT);      /* expansion */
    assert_int_equal(decode_forged(buf, len, table0, huge, 8), NIDUS_ERR_CORRUPT);         /* buckets */
    assert_int_equal(decode_forged(buf, len, table0 + 8, huge, 8), NIDUS_ERR_CORRUPT);     /* overflow count */
    assert_int_equal(decode_forged(buf, len, table0 + 16, &one, 1), NIDUS_ERR_CORRUPT);    /* occupied */
    assert_int_equal(decode_forged(buf, len, table0 + 24, &big, 1), NIDUS_ERR_CORRUPT);    /* table f */
    assert_int_equal(decode_forged(buf, len, table0 + 25, &one, 1), NIDUS_ERR_CORRUPT);    /* padding */
    /* a semi-sorted bucket whose rank is past the 3876 codes: find the first table's data after its overflow
     * entries and forge bucket 0's 12-bit rank to 4095 */
    uint64_t ov = 0;
    for (int k = 0; k < 8; k++)
        ov |= (uint64_t)buf[table0 + 8 + k] << (8 * k);
    size_t tables = buf[meta + 36];
    size_t data0 = table0 + 32 * tables + (size_t)ov * 20;
    uint8_t rank[2] = {0xff, (uint8_t)(buf[data0 + 1] | 0x0f)};
    assert_int_equal(decode_forged(buf, len, data0, rank, 2), NIDUS_ERR_CORRUPT);
    /* the slack after the last table (just before the checksum) must stay zero */
    assert_int_equal(decode_forged(buf, len, len - 9, &one, 1), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(buf, len, len - 9, &zero, 1), NIDUS_OK); /* the forger's baseline */
    free(buf);
    nidus_cuckoo_free(cf);
}

/* A copy of the encoding with 8 bytes at `at` set to v and the checksum resealed, decoded (NULL when refused). */
static nidus_cuckoo *decode_with_u64(const uint8_t *orig, size_t len, size_t at, uint64_t v, nidus_status *st)
{
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    memcpy(buf, orig, len);
    put_u64(buf + at, v);
    reseal(buf, len);
    nidus_cuckoo *cf = NULL;
    *st = nidus_cuckoo_decode(buf, len, NULL, &cf);
    free(buf);
    return cf;
}

static uint64_t items_of(const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    return s.items;
}

/* A filter holds at most 2^63 - 1 items in all its tables, copies counted: a decoder refuses more, though each
 * table's count fits (the tables' sum could wrap), and a merge that would pass it fails with NIDUS_ERR_TOO_LARGE,
 * leaving dst as it was. At the bound the filter saves and loads again. */
static void test_items_bound(void **state)
{
    (void)state;
    const uint64_t max = UINT64_MAX / 2;
    nidus_cuckoo_params p = {.capacity = 300, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 2,
                             .max_kicks = 100, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (int k = 0; k < 40; k++) /* 8 copies in the pair's slots, 32 in table 0's overflow map */
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "dup", 0)), NIDUS_OK);
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "in", k)), NIDUS_OK);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_true(s.tables >= 2);
    size_t len;
    uint8_t *buf = test_cuckoo_encode(cf, &len);
    /* table 0's overflow entries (bucket u64, count u64, fingerprint u32: stash entries and the duplicates)
     * follow the meta of every table; the duplicates' is the one entry with a count above 1 */
    const size_t table0 = 20 + 40, tables = buf[20 + 36], entries = table0 + 32 * tables;
    size_t count_at = 0;
    for (size_t e = 0; e < buf[table0 + 8]; e++)
        if (buf[entries + 20 * e + 8] > 1) {
            assert_int_equal(count_at, 0);
            count_at = entries + 20 * e + 8;
        }
    assert_int_not_equal(count_at, 0);
    assert_int_equal(buf[count_at], 32);
    uint64_t others = s.items - 32;

    nidus_status st;
    nidus_cuckoo *at_max = decode_with_u64(buf, len, count_at, max - others, &st);
    assert_int_equal(st, NIDUS_OK);
    assert_int_equal(items_of(at_max), max);
    assert_int_equal(nidus_cuckoo_count_hash(at_max, key_hash(at_max, "dup", 0)), max - others + 8);
    size_t n2;
    uint8_t *again = test_cuckoo_encode(at_max, &n2);
    nidus_cuckoo *back = NULL;
    assert_int_equal(nidus_cuckoo_decode(again, n2, NULL, &back), NIDUS_OK);
    assert_int_equal(items_of(back), max);
    nidus_cuckoo_free(back);
    free(again);
    nidus_cuckoo_free(at_max);
    /* table 0 alone stays within the bound; with the other tables' items the filter does not */
    assert_null(decode_with_u64(buf, len, count_at, max - others + 1, &st));
    assert_int_equal(st, NIDUS_ERR_CORRUPT);

    /* merges: a third of the bound, twice, fits; a third time it does not */
    nidus_cuckoo *third = decode_with_u64(buf, len, count_at, max / 3, &st);
    assert_int_equal(st, NIDUS_OK);
    nidus_cuckoo *dst = NULL;
    assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &dst), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_merge(dst, third), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_merge(dst, third), NIDUS_OK);
    assert_true(items_of(dst) > max / 3 * 2 && items_of(dst) <= max);
    size_t before_n, after_n;
    uint8_t *before = test_cuckoo_encode(dst, &before_n);
    assert_int_equal(nidus_cuckoo_merge(dst, third), NIDUS_ERR_TOO_LARGE);
    uint8_t *after = test_cuckoo_encode(dst, &after_n);
    assert_int_equal(before_n, after_n);
    assert_memory_equal(before, after, before_n);
    assert_int_equal(nidus_cuckoo_decode(after, after_n, NULL, &back), NIDUS_OK);
    nidus_cuckoo_free(back);
    free(before);
    free(after);
    nidus_cuckoo_free(dst);
    nidus_cuckoo_free(third);
    free(buf);
    nidus_cuckoo_free(cf);
}

static void test_bad_arguments_and_foreign_bytes(void **state)
{
    (void)state;
    nidus_cuckoo *out = NULL;
    uint8_t junk[64] = "not a filter at all, just some bytes";
    assert_int_equal(nidus_cuckoo_decode(NULL, 10, NULL, &out), NIDUS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nidus_cuckoo_decode(junk, sizeof junk, NULL, &out), NIDUS_ERR_CORRUPT);
    assert_int_equal(nidus_cuckoo_decode(junk, 0, NULL, &out), NIDUS_ERR_CORRUPT);
    assert_null(out);
    nidus_kind kind;
    assert_int_equal(nidus_codec_peek(junk, sizeof junk, &kind), NIDUS_ERR_CORRUPT);
    nidus_cuckoo *cf = make_filled(2, 8, false, 0, 4000);
    size_t len;
    uint8_t *buf = test_cuckoo_encode(cf, &len);
    assert_int_equal(nidus_codec_peek(buf, len, &kind), NIDUS_OK);
    assert_int_equal(kind, NIDUS_KIND_CUCKOO);
    free(buf);
    nidus_cuckoo_free(cf);
}

/* ---- files ---- */

static void test_files_save_load_map(void **state)
{
    (void)state;
    char dir[] = "/tmp/nidus-codec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], other[128];
    snprintf(path, sizeof path, "%s/f.nidus", dir);
    snprintf(other, sizeof other, "%s/missing.nidus", dir);
    nidus_cuckoo *cf = make_filled(4, 13, true, 2, 500), *loaded = NULL, *mapped = NULL;
    assert_int_equal(nidus_cuckoo_save_file(cf, path), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_load_file(path, NULL, &loaded), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &mapped), NIDUS_OK);
    assert_same_filter(cf, loaded);
    assert_same_filter(cf, mapped);
    assert_true(nidus_cuckoo_is_read_only(mapped));
    assert_false(nidus_cuckoo_is_read_only(loaded));
    /* saving again replaces the file whole and leaves no temporary file behind */
    assert_int_equal(nidus_cuckoo_add_hash(loaded, key_hash(loaded, "more", 1)), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_save_file(loaded, path), NIDUS_OK);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    nidus_cuckoo_free(mapped); /* unmaps */
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &mapped), NIDUS_OK);
    assert_true(nidus_cuckoo_contains_hash(mapped, key_hash(mapped, "more", 1)));
    nidus_cuckoo_free(mapped);
    errno = 0;
    assert_int_equal(nidus_cuckoo_load_file(other, NULL, &mapped), NIDUS_ERR_IO);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(nidus_cuckoo_map_file(dir, NULL, &mapped), NIDUS_ERR_IO);
    /* a truncated file is refused */
    assert_int_equal(truncate(path, 100), 0);
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &mapped), NIDUS_ERR_CORRUPT);
    assert_int_equal(nidus_cuckoo_load_file(path, NULL, &mapped), NIDUS_ERR_CORRUPT);
    /* writing into a directory that does not exist fails cleanly */
    assert_int_equal(nidus_cuckoo_save_file(cf, "/nonexistent-nidus-dir/x.nidus"), NIDUS_ERR_IO);
    unlink(path);
    rmdir(dir);
    nidus_cuckoo_free(loaded);
    nidus_cuckoo_free(cf);
}

/* ---- chunks ---- */

typedef struct chunks {
    uint8_t *data[64];
    size_t len[64];
    size_t n;
} chunks;

static void dump_all(const nidus_cuckoo *cf, chunks *c)
{
    uint64_t cursor = 0, next;
    c->n = 0;
    static uint8_t buf[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    for (;;) {
        size_t len;
        assert_int_equal(nidus_cuckoo_dump_chunk(cf, cursor, buf, sizeof buf, &len, &next), NIDUS_OK);
        if (len == 0) {
            assert_int_equal(next, 0);
            break;
        }
        assert_true(c->n < 64);
        c->data[c->n] = malloc(len);
        memcpy(c->data[c->n], buf, len);
        c->len[c->n++] = len;
        cursor = next;
    }
}

static void free_chunks(chunks *c)
{
    for (size_t k = 0; k < c->n; k++)
        free(c->data[k]);
}

static nidus_cuckoo *load_all(const chunks *c)
{
    nidus_cuckoo *cf = NULL;
    for (size_t k = 0; k < c->n; k++) {
        assert_true(k == 0 || nidus_cuckoo_loading(cf));
        assert_int_equal(nidus_cuckoo_load_chunk(&cf, c->data[k], c->len[k], 0, NULL), NIDUS_OK);
    }
    assert_false(nidus_cuckoo_loading(cf));
    return cf;
}

static void test_chunk_round_trip_is_identical(void **state)
{
    (void)state;
    for (size_t k = 0; k < NKINDS; k++) {
        nidus_cuckoo *cf = make_kind(k);
        chunks c;
        dump_all(cf, &c);
        nidus_cuckoo *back = load_all(&c);
        assert_same_filter(cf, back);
        test_assert_same_cuckoo_encoding(cf, back);
        free_chunks(&c);
        nidus_cuckoo_free(back);
        nidus_cuckoo_free(cf);
    }
}

static void test_large_filter_spans_several_chunks(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 6000000, .bucket_size = 4, .fingerprint_bits = 12, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (uint64_t k = 0; k < 200000; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "in", k)), NIDUS_OK);
    chunks c;
    dump_all(cf, &c);
    assert_true(c.n >= 4); /* a header and 9.5 MB of table in chunks of at most 4 MiB */
    for (size_t k = 1; k < c.n; k++)
        assert_true(c.len[k] <= NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD);
    nidus_cuckoo *back = load_all(&c);
    for (uint64_t k = 0; k < 200000; k += 13)
        assert_true(nidus_cuckoo_contains_hash(back, key_hash(back, "in", k)));
    /* a limit below the encoding's size refuses the header chunk before allocating */
    nidus_cuckoo *limited = NULL;
    assert_int_equal(nidus_cuckoo_load_chunk(&limited, c.data[0], c.len[0], 1 << 20, NULL), NIDUS_ERR_LIMIT_MEMORY);
    assert_null(limited);
    free_chunks(&c);
    nidus_cuckoo_free(back);
    nidus_cuckoo_free(cf);
}

static void test_chunks_out_of_order_foreign_or_damaged_are_refused(void **state)
{
    (void)state;
    nidus_cuckoo *a = make_filled(4, 12, false, 2, 300), *b = make_filled(4, 12, false, 2, 300);
    nidus_cuckoo_add_hash(b, key_hash(b, "only-b", 1));
    chunks ca, cb;
    dump_all(a, &ca);
    dump_all(b, &cb);
    assert_true(ca.n >= 2 && cb.n >= 2);
    nidus_cuckoo *cf = NULL;
    /* a data chunk first, with no header */
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[1], ca.len[1], 0, NULL), NIDUS_ERR_SEQUENCE);
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[0], ca.len[0], 0, NULL), NIDUS_OK);
    /* a second header, a data chunk of another filter, damaged chunks: all refused, nothing changes */
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[0], ca.len[0], 0, NULL), NIDUS_ERR_SEQUENCE);
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, cb.data[1], cb.len[1], 0, NULL), NIDUS_ERR_SEQUENCE);
    uint8_t *bad = malloc(ca.len[1]);
    memcpy(bad, ca.data[1], ca.len[1]);
    bad[ca.len[1] / 2] ^= 0x40;
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, bad, ca.len[1], 0, NULL), NIDUS_ERR_CORRUPT);
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, bad, ca.len[1] - 1, 0, NULL), NIDUS_ERR_CORRUPT);
    free(bad);
    assert_true(nidus_cuckoo_loading(cf));
    assert_false(nidus_cuckoo_contains_hash(cf, key_hash(cf, "in", 1))); /* incomplete: no answers yet */
    assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "in", 1)), NIDUS_ERR_READ_ONLY);
    /* the right chunks, in order, still complete it */
    for (size_t k = 1; k < ca.n; k++) {
        assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[k], ca.len[k], 0, NULL), NIDUS_OK);
        if (k + 1 < ca.n) /* a repeated chunk is out of sequence */
            assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[k], ca.len[k], 0, NULL), NIDUS_ERR_SEQUENCE);
    }
    assert_false(nidus_cuckoo_loading(cf));
    assert_same_filter(a, cf);
    /* a chunk after the last one */
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, ca.data[1], ca.len[1], 0, NULL), NIDUS_ERR_SEQUENCE);
    nidus_cuckoo_free(cf);
    free_chunks(&ca);
    free_chunks(&cb);
    nidus_cuckoo_free(a);
    nidus_cuckoo_free(b);
}

/* A load cut off after k data chunks dumps exactly the chunks it received; those load into the same state,
 * and the rest of the original chunks then complete it into the source filter. */
static void test_partial_load_dumps_what_it_received(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 3000000, .bucket_size = 4, .fingerprint_bits = 12, .seed = test_seed()};
    nidus_cuckoo *src = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &src), NIDUS_OK);
    for (uint64_t k = 0; k < 50000; k++)
        assert_int_equal(nidus_cuckoo_add_hash(src, key_hash(src, "in", k)), NIDUS_OK);
    chunks c;
    dump_all(src, &c);
    assert_true(c.n >= 3);
    for (size_t got = 1; got < c.n; got++) { /* the header and got - 1 data chunks */
        nidus_cuckoo *part = NULL;
        for (size_t k = 0; k < got; k++)
            assert_int_equal(nidus_cuckoo_load_chunk(&part, c.data[k], c.len[k], 0, NULL), NIDUS_OK);
        assert_true(nidus_cuckoo_loading(part));
        chunks again;
        dump_all(part, &again);
        assert_int_equal(again.n, got);
        for (size_t k = 0; k < got; k++) {
            assert_int_equal(again.len[k], c.len[k]);
            assert_memory_equal(again.data[k], c.data[k], c.len[k]);
        }
        nidus_cuckoo *copy = NULL;
        for (size_t k = 0; k < got; k++)
            assert_int_equal(nidus_cuckoo_load_chunk(&copy, again.data[k], again.len[k], 0, NULL), NIDUS_OK);
        for (size_t k = got; k < c.n; k++)
            assert_int_equal(nidus_cuckoo_load_chunk(&copy, c.data[k], c.len[k], 0, NULL), NIDUS_OK);
        assert_false(nidus_cuckoo_loading(copy));
        assert_same_filter(src, copy);
        free_chunks(&again);
        nidus_cuckoo_free(copy);
        nidus_cuckoo_free(part);
    }
    free_chunks(&c);
    nidus_cuckoo_free(src);
}

/* A load limit measures what creation and growth measure (the slots), and the loaded filter keeps growing only
 * within it: what grows after the load loads again under the same limit. (Tables have no kick log any more, so
 * MAXITERATIONS 65535 costs nothing and a limit below the slots is what refuses the load.) */
static void test_chunk_load_limit_is_the_write_limit(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 1000, .max_kicks = 65535, .expansion = 1, .seed = test_seed()};
    nidus_cuckoo *src = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &src), NIDUS_OK);
    chunks c;
    dump_all(src, &c);
    nidus_cuckoo_table_stats t0;
    assert_int_equal(nidus_cuckoo_get_table_stats(src, 0, &t0), NIDUS_OK);
    assert_true(t0.memory_bytes < 8192); /* no 512 KiB kick log */
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_load_chunk(&cf, c.data[0], c.len[0], t0.memory_bytes - 1, NULL),
                     NIDUS_ERR_LIMIT_MEMORY);
    assert_null(cf);
    uint64_t limit = 8 * t0.memory_bytes; /* room for a few more tables, fewer than max_tables */
    for (size_t k = 0; k < c.n; k++)
        assert_int_equal(nidus_cuckoo_load_chunk(&cf, c.data[k], c.len[k], limit, NULL), NIDUS_OK);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_int_equal(s.max_memory, limit); /* was 0, no limit */
    nidus_status st = NIDUS_OK;
    for (uint64_t k = 0; st == NIDUS_OK; k++)
        st = nidus_cuckoo_add_hash(cf, key_hash(cf, "grow", k));
    assert_int_equal(st, NIDUS_ERR_LIMIT_MEMORY);
    chunks again;
    dump_all(cf, &again);
    nidus_cuckoo *back = NULL;
    for (size_t k = 0; k < again.n; k++)
        assert_int_equal(nidus_cuckoo_load_chunk(&back, again.data[k], again.len[k], limit, NULL), NIDUS_OK);
    assert_same_filter(cf, back);
    free_chunks(&again);
    free_chunks(&c);
    nidus_cuckoo_free(back);
    nidus_cuckoo_free(cf);
    nidus_cuckoo_free(src);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_decode_identity_for_every_kind_of_table),
        cmocka_unit_test(test_view_answers_in_place_and_refuses_writes),
        cmocka_unit_test(test_every_flipped_byte_and_every_truncation_is_refused),
        cmocka_unit_test(test_forged_fields_with_valid_checksum_are_refused),
        cmocka_unit_test(test_bad_arguments_and_foreign_bytes),
        cmocka_unit_test(test_files_save_load_map),
        cmocka_unit_test(test_chunk_round_trip_is_identical),
        cmocka_unit_test(test_large_filter_spans_several_chunks),
        cmocka_unit_test(test_chunks_out_of_order_foreign_or_damaged_are_refused),
        cmocka_unit_test(test_partial_load_dumps_what_it_received),
        cmocka_unit_test(test_chunk_load_limit_is_the_write_limit),
        cmocka_unit_test(test_items_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
