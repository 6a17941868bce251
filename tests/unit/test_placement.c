/* SPDX-License-Identifier: BSD-3-Clause */
/* Cuckoo placement across format versions. Filters of versions 1-4 (mod placement: bucket = hash mod m,
 * fingerprint from a murmur3 remix) keep their placement when read, re-encoded, grown and compacted; new filters
 * take range placement (bucket = floor(hash * m / 2^64), fingerprint = the hash's low bits) and say so in the
 * meta. The fixtures were written by the library when it wrote format versions 3 and 4 (mod placement):
 *   v3-cuckoo.bin, v4-cuckoo.nidus   capacity 4000, b=4 f=12, seed 11: "key-1".."key-3000", then "key-7" 12 times
 *                                    more (13 copies, overflow beyond its pair)
 *   v3-cuckoo-grown.bin              capacity 500, error 0.01, b=4, expansion 2, seed 5: "key-1".."key-5000"
 *                                    added (several tables), then "key-1".."key-1000" removed
 *   v3-cuckoo-semisort-grown.bin,    capacity 1000, f=13 semi-sorted, expansion 3, seed 3: "key-1".."key-6000"
 *   v4-cuckoo-semisort-grown.nidus
 *   v3-cuckoo-small.bin              capacity 100, error 0.01, b=4, seed 13: "key-1".."key-90" (kept packed) */
#include "cuckoo_test_util.h"
#include "test_util.h"

#include <nidus/nidus.h>

#include "cuckoo_dispatch.h"

#define META 20u          /* the meta follows the 20-byte prefix */
#define META_FLAGS 35u    /* bucket_size at 32, f0, reach_log2, then flags */
#define FLAG_RANGE 2u

static uint8_t *read_fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", NIDUS_FIXTURES_DIR, name);
    return test_read_all(path, len);
}

static bool has(const nidus_cuckoo *cf, const char *ns, int i)
{
    char key[32];
    return nidus_cuckoo_contains(cf, key, (size_t)snprintf(key, sizeof key, "%s-%d", ns, i));
}

static bool all_present(const nidus_cuckoo *cf, const char *ns, int from, int to)
{
    bool all = true;
    for (int i = from; i <= to; i++)
        all &= has(cf, ns, i);
    return all;
}

/* Hits among `n` keys never added, and the filter's bound: a placement read wrongly finds nothing (present
 * keys missing, caught above) or, for fingerprints read from the wrong bits, more than the bound allows. */
static void assert_error_within_bound(const nidus_cuckoo *cf, int n)
{
    uint64_t hits = 0;
    for (int i = 0; i < n; i++)
        hits += has(cf, "absent", i);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_true((double)hits / n <= test_rate_ceiling(s.error_bound, n));
}

/* Decodes `buf`, checks that it re-encodes at the current version with the same placement flag and otherwise the
 * same bytes (the version byte and the checksum aside), and returns the re-decoded filter. */
static nidus_cuckoo *decode_and_round_trip(const uint8_t *buf, size_t len, bool range)
{
    nidus_cuckoo *cf, *again;
    assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &cf), NIDUS_OK);
    size_t n;
    uint8_t *enc = test_cuckoo_encode(cf, &n);
    assert_int_equal(n, len);
    assert_int_equal(enc[5], NIDUS_FORMAT_VERSION);
    assert_int_equal((enc[META + META_FLAGS] & FLAG_RANGE) != 0, range);
    assert_memory_equal(enc + 6, buf + 6, len - 6 - 8);
    assert_int_equal(nidus_cuckoo_decode(enc, n, NULL, &again), NIDUS_OK);
    free(enc);
    nidus_cuckoo_free(cf);
    return again;
}

static void test_mod_placement_filter_is_read_and_keeps_working(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("v3-cuckoo.bin", &len);
    assert_int_equal(buf[5], 3);
    nidus_cuckoo *cf = decode_and_round_trip(buf, len, false);
    assert_true(all_present(cf, "key", 1, 3000));
    assert_int_equal(nidus_cuckoo_count(cf, "key-7", 5), 13);
    assert_error_within_bound(cf, 200000);
    /* adds and removes go on under the filter's own placement */
    char key[32];
    for (int i = 1; i <= 600; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, (size_t)snprintf(key, sizeof key, "new-%d", i)), NIDUS_OK);
    assert_true(all_present(cf, "key", 1, 3000) && all_present(cf, "new", 1, 600));
    for (int c = 0; c < 13; c++)
        assert_int_equal(nidus_cuckoo_remove(cf, "key-7", 5), NIDUS_OK);
    assert_true(all_present(cf, "key", 8, 3000) && all_present(cf, "new", 1, 600));
    nidus_cuckoo_free(cf);
    free(buf);
}

/* A grown filter of mod placement: read, compacted, grown further (its new tables take its placement too, so
 * compaction stays exact), compacted again. */
static void test_mod_placement_grown_filter_grows_and_compacts(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("v3-cuckoo-grown.bin", &len);
    nidus_cuckoo *cf = decode_and_round_trip(buf, len, false);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_true(s.tables >= 3);
    assert_true(all_present(cf, "key", 1001, 5000));
    assert_error_within_bound(cf, 100000);
    assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
    assert_true(all_present(cf, "key", 1001, 5000));
    char key[32];
    for (int i = 5001; i <= 14000; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i)), NIDUS_OK);
    for (int i = 1001; i <= 13000; i++)
        assert_int_equal(nidus_cuckoo_remove(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i)), NIDUS_OK);
    /* (removes already freed the tables they emptied) compaction moves fingerprints down into table 0 */
    nidus_cuckoo_table_stats t0, t0_after;
    assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &t0), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &t0_after), NIDUS_OK);
    assert_true(t0_after.items > t0.items);
    assert_true(all_present(cf, "key", 13001, 14000));
    free(buf);
    buf = test_cuckoo_encode(cf, &len);
    nidus_cuckoo_free(cf);
    cf = decode_and_round_trip(buf, len, false);
    assert_true(all_present(cf, "key", 13001, 14000));
    nidus_cuckoo_free(cf);
    free(buf);
}

static void test_mod_placement_semi_sorted_grown_filter_is_read(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("v3-cuckoo-semisort-grown.bin", &len);
    nidus_cuckoo *cf = decode_and_round_trip(buf, len, false);
    assert_true(all_present(cf, "key", 1, 6000));
    assert_error_within_bound(cf, 100000);
    nidus_cuckoo_free(cf);
    free(buf);
}

/* A small filter of mod placement is kept packed (cuckoo_packed.h): the packed header keeps its placement
 * through adds, removes, the full form (for adds past a full pair) and back, and re-encoding. */
static void test_mod_placement_small_filter_stays_mod_when_packed(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("v3-cuckoo-small.bin", &len);
    nidus_cuckoo *cf = decode_and_round_trip(buf, len, false);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    assert_true(all_present(cf, "key", 1, 90));
    assert_error_within_bound(cf, 100000);
    char key[32];
    for (int i = 91; i <= 100; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i)), NIDUS_OK);
    /* duplicates past the pair: added on the full form, an overflow entry, packed back with it in a side block */
    for (int c = 0; c < 10; c++)
        assert_int_equal(nidus_cuckoo_add(cf, "key-5", 5), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    assert_int_equal(nidus_cuckoo_packed_side_entries((const nidus_cuckoo_packed *)(const void *)cf), 1);
    assert_true(all_present(cf, "key", 1, 100));
    for (int c = 0; c < 10; c++)
        assert_int_equal(nidus_cuckoo_remove(cf, "key-5", 5), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    assert_true(all_present(cf, "key", 1, 100));
    free(buf);
    buf = test_cuckoo_encode(cf, &len);
    nidus_cuckoo_free(cf);
    cf = decode_and_round_trip(buf, len, false);
    assert_true(all_present(cf, "key", 1, 100));
    nidus_cuckoo_free(cf);
    free(buf);
}

/* Files of version 4 (framed), loaded and mapped. */
static void test_version_4_files_are_read(void **state)
{
    (void)state;
    static const char *const names[] = {"v4-cuckoo.nidus", "v4-cuckoo-semisort-grown.nidus"};
    static const int keys[] = {3000, 6000};
    for (int n = 0; n < 2; n++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", NIDUS_FIXTURES_DIR, names[n]);
        for (int map = 0; map < 2; map++) {
            nidus_cuckoo *cf;
            assert_int_equal(map ? nidus_cuckoo_map_file(path, NULL, &cf) : nidus_cuckoo_load_file(path, NULL, &cf),
                             NIDUS_OK);
            assert_true(all_present(cf, "key", 1, keys[n]));
            assert_error_within_bound(cf, 50000);
            nidus_cuckoo_free(cf);
        }
    }
}

/* New filters take range placement, grown or not, and say so. */
static void test_new_filters_have_range_placement(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 300, .error_rate = 0.01, .expansion = 2, .seed = test_seed()};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    char key[32];
    for (int i = 1; i <= 3000; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i)), NIDUS_OK);
    size_t len;
    uint8_t *buf = test_cuckoo_encode(cf, &len);
    nidus_cuckoo_free(cf);
    cf = decode_and_round_trip(buf, len, true);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_true(s.tables >= 3);
    assert_true(all_present(cf, "key", 1, 3000));
    assert_error_within_bound(cf, 100000);
    nidus_cuckoo_free(cf);
    free(buf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mod_placement_filter_is_read_and_keeps_working),
        cmocka_unit_test(test_mod_placement_grown_filter_grows_and_compacts),
        cmocka_unit_test(test_mod_placement_semi_sorted_grown_filter_is_read),
        cmocka_unit_test(test_mod_placement_small_filter_stays_mod_when_packed),
        cmocka_unit_test(test_version_4_files_are_read),
        cmocka_unit_test(test_new_filters_have_range_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
