/* SPDX-License-Identifier: BSD-3-Clause */
/* Filter files (format version 2): per-block checksums, the header checksum, reading version 1 files, and
 * damage found in whichever block it is. */
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "bloom_filter.h"
#include "codec.h"
#include "cuckoo_filter.h"
#include "file_format.h"
#include "file_io.h"
#include "semisort.h"

static char *temp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "/tmp/nidus-test-ff-%ld-%s", (long)getpid(), name);
    return buf;
}

static void write_all(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
}

/* A cuckoo filter of a few blocks, saved: the file is version 2 and loads back equal. */
static nidus_cuckoo *saved_filter(const char *path, uint64_t capacity, int keys)
{
    nidus_cuckoo_params p = {.capacity = capacity, .fingerprint_bits = 12, .seed = test_seed()};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    char key[32];
    for (int i = 0; i < keys; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, test_key(key, sizeof key, "ff", (uint64_t)i)), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_save_file(cf, path), NIDUS_OK);
    return cf;
}

static void test_saved_files_are_version_2_and_load_back(void **state)
{
    (void)state;
    char path[128];
    temp_path(path, sizeof path, "v2");
    nidus_cuckoo *cf = saved_filter(path, 200000, 20000);
    size_t len;
    uint8_t *file = test_read_all(path, &len);
    nidus_file_layout l;
    assert_int_equal(nidus_file_parse(file, len, &l), NIDUS_OK);
    assert_int_equal(l.version, 2);
    assert_true(l.blocks >= 3);
    assert_int_equal(nidus_file_size_for_body(l.body_bytes), len);
    assert_int_equal(l.body_bytes + 8, nidus_cuckoo_encoded_size(cf));
    assert_int_equal(nidus_file_verify_all(&l, NULL), NIDUS_OK);
    nidus_cuckoo *loaded, *mapped;
    assert_int_equal(nidus_cuckoo_load_file(path, NULL, &loaded), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &mapped), NIDUS_OK);
    size_t n = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
    assert_int_equal(nidus_cuckoo_encode(cf, a, n, NULL), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_encode(loaded, b, n, NULL), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_encode(mapped, c, n, NULL), NIDUS_OK);
    assert_memory_equal(a, b, n);
    assert_memory_equal(a, c, n);
    /* the body is the encoding but for version, total and checksum */
    assert_memory_equal(file + 16, a + 16, l.body_bytes - 16);
    nidus_cuckoo_stats s1, s2;
    nidus_cuckoo_get_stats(cf, &s1);
    nidus_cuckoo_get_stats(mapped, &s2);
    assert_int_equal(s1.items, s2.items);
    assert_true(s2.memory_bytes > len / 2); /* a view's figures count its mapped tables */
    free(a), free(b), free(c), free(file);
    nidus_cuckoo_free(cf), nidus_cuckoo_free(loaded), nidus_cuckoo_free(mapped);
    unlink(path);
}

/* Where nidus_file_verify says the damage is: the part's bytes hold the flipped byte `at`, but for a header
 * that fails with block 0, which may be block 0's entry in the block table (at body_bytes) instead. */
static void assert_report_covers(const nidus_file_report *r, size_t at, uint64_t body_bytes)
{
    assert_non_null(r->part);
    assert_non_null(r->problem);
    if (!strcmp(r->part, "header") && at >= body_bytes)
        assert_true(at < body_bytes + 8);
    else
        assert_true(at >= r->offset && at - r->offset < r->length);
}

/* One flipped bit anywhere: parse fails (header, table, footer) or exactly the damaged block fails; the
 * checked openers refuse the file either way, and nidus_file_verify names the part that holds the bit. */
static void test_damage_is_found_in_its_block(void **state)
{
    (void)state;
    char path[128], bad[128];
    temp_path(path, sizeof path, "good");
    temp_path(bad, sizeof bad, "bad");
    nidus_cuckoo_free(saved_filter(path, 200000, 5000));
    size_t len;
    uint8_t *file = test_read_all(path, &len);
    nidus_file_layout good;
    assert_int_equal(nidus_file_parse(file, len, &good), NIDUS_OK);
    uint64_t body_bytes = good.body_bytes;
    nidus_file_report r;
    assert_int_equal(nidus_file_verify(path, NULL, &r), NIDUS_OK);
    assert_null(r.part);
    assert_int_equal(r.blocks, good.blocks);
    assert_int_equal(r.file_bytes, len);
    assert_int_equal(r.version, NIDUS_FILE_FORMAT_VERSION);
    assert_int_equal(r.kind, NIDUS_KIND_CUCKOO);
    uint64_t rng = test_seed();
    for (int round = 0; round < 60; round++) {
        size_t at = round < 20 ? (size_t)(test_splitmix(&rng) % 64)                        /* the prefix */
                    : round < 30 ? len - 1 - (size_t)(test_splitmix(&rng) % 200)            /* table, footer */
                                 : (size_t)(test_splitmix(&rng) % len);
        file[at] ^= (uint8_t)(1u << (test_splitmix(&rng) % 8));
        write_all(bad, file, len);
        nidus_file_layout l;
        nidus_status st = nidus_file_parse(file, len, &l);
        nidus_status verified = nidus_file_verify(bad, NULL, &r);
        assert_report_covers(&r, at, body_bytes);
        if (st == NIDUS_OK && l.version == 1) {
            /* the version byte turned odd (8 -> 9): the parse takes it for a whole encoding, whose checksum the
             * loader then finds wrong; verify names the version byte */
            assert_int_equal(at, 5);
            assert_string_equal(r.part, "format version");
        } else if (st == NIDUS_OK) {
            uint64_t block;
            assert_true(at < l.body_bytes);
            assert_int_equal(nidus_file_verify_all(&l, &block), NIDUS_ERR_CORRUPT);
            assert_int_equal(block, at / l.block_bytes);
            assert_false(nidus_file_block_ok(&l, block));
            assert_string_equal(r.part, "block");
            assert_int_equal(r.block, block);
            assert_int_equal(r.offset, block * l.block_bytes);
            assert_int_equal(r.bad_blocks, 1);
        } else {
            assert_int_equal(r.block, NIDUS_FILE_NO_BLOCK);
        }
        nidus_cuckoo *cf;
        st = nidus_cuckoo_load_file(bad, NULL, &cf);
        assert_true(st == NIDUS_ERR_CORRUPT || st == NIDUS_ERR_VERSION);
        assert_int_equal(verified, st);
        st = nidus_cuckoo_map_file(bad, NULL, &cf);
        assert_true(st == NIDUS_ERR_CORRUPT || st == NIDUS_ERR_VERSION);
        free(file);
        file = test_read_all(path, &len);
    }
    for (size_t cut = 1; cut < 200; cut += 7) { /* truncated */
        nidus_file_layout l;
        assert_int_not_equal(nidus_file_parse(file, len - cut, &l), NIDUS_OK);
        write_all(bad, file, len - cut);
        assert_int_equal(nidus_file_verify(bad, NULL, &r), NIDUS_ERR_CORRUPT);
        assert_non_null(r.part);
    }
    assert_int_equal(nidus_file_verify(bad, NULL, NULL), NIDUS_ERR_CORRUPT); /* the report is optional */
    free(file);
    unlink(path);
    unlink(bad);
}

static nidus_status trust_all(void *ctx, const nidus_file_layout *l, void *map, size_t bytes)
{
    (void)l, (void)map, (void)bytes;
    (*(int *)ctx)++;
    return NIDUS_OK;
}

/* The lazy map trusts its caller to check blocks: it neither hashes nor scans them, so a damaged middle block
 * opens, and only the caller's check (the CLI's, block by block) finds it. */
static void test_lazy_map_leaves_blocks_to_the_caller(void **state)
{
    (void)state;
    char path[128];
    temp_path(path, sizeof path, "lazy");
    nidus_cuckoo_free(saved_filter(path, 200000, 5000));
    size_t len;
    uint8_t *file = test_read_all(path, &len);
    nidus_file_layout l;
    assert_int_equal(nidus_file_parse(file, len, &l), NIDUS_OK);
    file[l.block_bytes + 17] ^= 4;
    write_all(path, file, len);
    int calls = 0;
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_map_file_lazy(path, NULL, trust_all, &calls, &cf), NIDUS_OK);
    assert_int_equal(calls, 1);
    nidus_cuckoo_free(cf);
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &cf), NIDUS_ERR_CORRUPT);
    free(file);
    unlink(path);
}

/* Files written by format version 1 (committed fixtures) are still read, by every opener. */
static void test_version_1_files_are_read(void **state)
{
    (void)state;
    static const char *const names[] = {"cuckoo", "bloom", "counting-bloom", "cuckoo-semisort-grown"};
    for (unsigned n = 0; n < 4; n++) {
        char path[512];
        snprintf(path, sizeof path, "%s/v1-%s.nidus", NIDUS_FIXTURES_DIR, names[n]);
        size_t len;
        uint8_t *file = test_read_all(path, &len);
        nidus_kind kind;
        assert_int_equal(nidus_codec_peek(file, len, &kind), NIDUS_OK);
        assert_int_equal(file[5], 1);
        char key[32];
        for (int lazy = 0; lazy < 3; lazy++) {
            int calls = 0;
            bool all = true;
            if (kind == NIDUS_KIND_CUCKOO) {
                nidus_cuckoo *cf;
                assert_int_equal(lazy == 0   ? nidus_cuckoo_load_file(path, NULL, &cf)
                                 : lazy == 1 ? nidus_cuckoo_map_file(path, NULL, &cf)
                                             : nidus_cuckoo_map_file_lazy(path, NULL, trust_all, &calls, &cf),
                                 NIDUS_OK);
                for (int i = 1; i <= 500; i++)
                    all &= nidus_cuckoo_contains(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i));
                nidus_cuckoo_free(cf);
            } else if (kind == NIDUS_KIND_BLOOM) {
                nidus_bloom *bf;
                assert_int_equal(lazy == 0   ? nidus_bloom_load_file(path, NULL, &bf)
                                 : lazy == 1 ? nidus_bloom_map_file(path, NULL, &bf)
                                             : nidus_bloom_map_file_lazy(path, NULL, trust_all, &calls, &bf),
                                 NIDUS_OK);
                for (int i = 1; i <= 500; i++)
                    all &= nidus_bloom_contains(bf, key, (size_t)snprintf(key, sizeof key, "key-%d", i));
                nidus_bloom_free(bf);
            } else {
                nidus_counting_bloom *cb;
                assert_int_equal(lazy == 0 ? nidus_counting_bloom_load_file(path, NULL, &cb)
                                 : lazy == 1
                                     ? nidus_counting_bloom_map_file(path, NULL, &cb)
                                     : nidus_counting_bloom_map_file_lazy(path, NULL, trust_all, &calls, &cb),
                                 NIDUS_OK);
                for (int i = 1; i <= 500; i++)
                    all &= nidus_counting_bloom_count(cb, key, (size_t)snprintf(key, sizeof key, "key-%d", i)) > 0;
                nidus_counting_bloom_free(cb);
            }
            assert_true(all);
            assert_int_equal(calls, 0); /* version 1: checked whole, nothing left to the caller */
        }
        free(file);
    }
}

/* Ranks no bucket encodes to (3876..4095 of the 12-bit field) decode as a full bucket of nibbles 15, from a
 * table that covers the whole field: what makes unvalidated semi-sorted slots safe to read. */
static void test_every_rank_field_value_decodes(void **state)
{
    (void)state;
    assert_int_equal(sizeof nidus_semisort_unrank, (1u << NIDUS_SEMISORT_RANK_BITS) * sizeof(uint16_t));
    for (unsigned r = NIDUS_SEMISORT_CODES; r < NIDUS_SEMISORT_RANKS; r++)
        assert_int_equal(nidus_semisort_unrank[r], 0xffff);
    for (uint64_t raw = 0; raw < (UINT64_C(1) << 14); raw++)
        assert_int_equal(nidus_semisort_nibbles(raw), nidus_semisort_unrank[raw % NIDUS_SEMISORT_RANKS]);
}

/* The body of a version 2 file of a one-table semi-sorted filter of `f` bits with its slots overwritten by
 * `pattern` (0: random bytes, else that byte): checksums aside, a hostile file. `*slots` is where they begin. */
static uint8_t *garbage_semi_body(unsigned f, unsigned expansion, int pattern, uint64_t *rng, size_t *body_bytes,
                                  size_t *slots)
{
    nidus_cuckoo_params p = {.capacity = 3000, .fingerprint_bits = f, .bucket_size = 4, .semi_sort = true,
                             .expansion = expansion, .max_kicks = 50, .seed = test_seed()};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (uint64_t k = 0; k < 100; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, test_splitmix(rng)), NIDUS_OK);
    size_t n = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *buf = malloc((size_t)nidus_file_size_for_body(n - NIDUS_CODEC_CHECKSUM_BYTES));
    assert_int_equal(nidus_cuckoo_encode(cf, buf, n, NULL), NIDUS_OK);
    nidus_cuckoo_free(cf);
    size_t len = nidus_file_from_encoding(buf, n);
    nidus_file_layout l;
    assert_int_equal(nidus_file_parse(buf, len, &l), NIDUS_OK);
    *body_bytes = l.body_bytes;
    /* one table, no overflow entries: the slots (and their slack) are everything after the prefix */
    *slots = NIDUS_CODEC_PREFIX_FIXED + nidus_read_le32(buf + 16);
    for (size_t at = *slots; at < l.body_bytes; at++)
        buf[at] = pattern ? (uint8_t)pattern : (uint8_t)test_splitmix(rng);
    return buf;
}

/* A lazily verified file is decoded without the scan of its slots (NIDUS_DECODE_BODY_TRUSTED), semi-sorted
 * ones too: whatever its slots hold (ranks no bucket encodes to, buckets out of order, slack not zero), every
 * lookup, count, batched lookup, add, remove and compaction stays inside the filter's memory, at every
 * fingerprint width a semi-sorted filter takes (under ASan and valgrind an overrun fails this test). The
 * checked decoders still refuse such a body. */
static void test_trusted_semi_sorted_slots_are_safe_whatever_their_bits(void **state)
{
    (void)state;
    uint64_t rng = test_seed() ^ 0x5e;
    for (unsigned f = 5; f <= 32; f++) {
        for (int pattern = 0; pattern < 2; pattern++) {
            size_t body_bytes, slots;
            uint8_t *body = garbage_semi_body(f, pattern ? 0 : 2, pattern ? 0xff : 0, &rng, &body_bytes, &slots);
            nidus_cuckoo *cf;
            assert_int_equal(nidus_cuckoo_decode_mode(body, body_bytes, NULL, NIDUS_DECODE_COPY, NIDUS_DECODE_BODY,
                                                      &cf), NIDUS_ERR_CORRUPT);
            /* read-only view: lookups of every kind. All ones: every slot decodes as fingerprint 2^f - 1, so a
             * key's two buckets hold 8 copies of it or none of it, and every kernel says the same. */
            assert_int_equal(nidus_cuckoo_decode_mode(body, body_bytes, NULL, NIDUS_DECODE_VIEW,
                                                      NIDUS_DECODE_BODY_TRUSTED, &cf), NIDUS_OK);
            uint64_t hashes[256], counts[256];
            bool out[256];
            for (int round = 0; round < 8; round++) {
                for (size_t k = 0; k < 256; k++) {
                    hashes[k] = test_splitmix(&rng);
                    counts[k] = nidus_cuckoo_count_hash(cf, hashes[k]);
                    assert_true(nidus_cuckoo_contains_hash(cf, hashes[k]) == (counts[k] != 0) || !pattern);
                    assert_true(counts[k] == 0 || counts[k] == 8 || !pattern);
                }
                nidus_cuckoo_contains_many_hash(cf, hashes, 256, out);
                for (size_t k = 0; k < 256 && pattern; k++)
                    assert_int_equal(out[k], counts[k] != 0);
            }
            nidus_cuckoo_stats s;
            nidus_cuckoo_get_stats(cf, &s);
            nidus_cuckoo_free(cf);
            /* borrowed and written in place, as `nidus add` / `nidus del` do. All ones (no growth): an add
             * finds every bucket full: a key of fingerprint 2^f - 1, whose pair holds 8 copies already, is
             * counted on the side; others wait in the stash while it has room (NIDUS_TABLE_STASH entries in
             * the map), then fail without a change. */
            assert_int_equal(nidus_cuckoo_decode_mode(body, body_bytes, NULL, NIDUS_DECODE_BORROW,
                                                      NIDUS_DECODE_BODY_TRUSTED, &cf), NIDUS_OK);
            int full = 0;
            for (int k = 0; k < 200 && pattern; k++) {
                uint64_t h = test_splitmix(&rng), c = nidus_cuckoo_count_hash(cf, h);
                nidus_status st = nidus_cuckoo_add_hash(cf, h);
                if (c >= 8)
                    assert_int_equal(st, NIDUS_OK);
                else if (st != NIDUS_OK)
                    assert_int_equal(st, NIDUS_ERR_FULL);
                full += st == NIDUS_ERR_FULL;
                assert_int_equal(nidus_cuckoo_count_hash(cf, h), st == NIDUS_OK ? c + 1 : c);
            }
            assert_true(!pattern || full >= 150);
            for (int k = 0; k < 400; k++) {
                uint64_t h = test_splitmix(&rng);
                nidus_status st = nidus_cuckoo_add_hash(cf, h);
                if (st != NIDUS_OK && st != NIDUS_ERR_FULL && st != NIDUS_ERR_LIMIT_TABLES)
                    fail_msg("f %u pattern %d: add: %s", f, pattern, nidus_strerror(st));
                (void)nidus_cuckoo_remove_hash(cf, k % 2 ? h : test_splitmix(&rng));
                (void)nidus_cuckoo_count_hash(cf, h);
            }
            size_t added;
            for (size_t k = 0; k < 256; k++)
                hashes[k] = test_splitmix(&rng);
            (void)nidus_cuckoo_add_many_hash(cf, hashes, 256, &added);
            assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
            nidus_cuckoo_free(cf);
            free(body);
        }
    }
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saved_files_are_version_2_and_load_back),
        cmocka_unit_test(test_damage_is_found_in_its_block),
        cmocka_unit_test(test_lazy_map_leaves_blocks_to_the_caller),
        cmocka_unit_test(test_version_1_files_are_read),
        cmocka_unit_test(test_every_rank_field_value_decodes),
        cmocka_unit_test(test_trusted_semi_sorted_slots_are_safe_whatever_their_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
