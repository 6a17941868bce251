/* SPDX-License-Identifier: BSD-3-Clause */
/* The stash: items an add's search could not place wait in the table's overflow map (up to NIDUS_TABLE_STASH
 * entries) beside their full bucket pair. Found by every lookup, counted exactly, pulled back into the slots by
 * removes, accepted by validation only beside a full pair, and carried by every encoding from version 7 on;
 * version 5 encodings (no stash) still read and answer as before. */
#include "cuckoo_test_util.h"
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "alloc.h"
#include "codec.h"
#include "cuckoo_filter.h"
#include "cuckoo_dispatch.h"
#include "cuckoo_table_impl.h"

static nidus_allocator libc;

static nidus_table make(uint64_t buckets, unsigned b, unsigned f, bool semi, unsigned kicks)
{
    nidus_table_shape shape = {.buckets = buckets, .bucket_size = b, .fp_bits = f, .offset_bits = f,
                               .reach_log2 = 16, .semi_sort = semi, .stride = 1};
    nidus_table t;
    assert_int_equal(nidus_table_init(&t, &shape, kicks, &libc), NIDUS_OK);
    return t;
}

/* Copies of hashes[k] that the table must count: every hash added with the same fingerprint in the same pair. */
static uint64_t expected_count(const nidus_table *t, const uint64_t *hashes, size_t n, uint64_t h)
{
    uint64_t i, c = 0;
    uint32_t fp;
    nidus_table_locate(t, h, &i, &fp);
    uint64_t j = nidus_table_alt(t, i, fp);
    for (size_t k = 0; k < n; k++) {
        uint64_t ik;
        uint32_t fk;
        nidus_table_locate(t, hashes[k], &ik, &fk);
        c += fk == fp && (ik == i || ik == j);
    }
    return c;
}

/* The lookup signature has the bit of every overflow entry (a missing one hides the entry from lookups: a false
 * negative), and no bit while the map is empty. Returns the bits the entries have. */
static uint32_t assert_signature_covers_map(const nidus_table *t)
{
    const nidus_overflow *ov = &t->overflow;
    uint32_t bits = 0;
    for (uint32_t e = 0; e < ov->capacity; e++)
        if (ov->entries[e].count)
            bits |= nidus_overflow_sig_bit(ov->entries[e].bucket, ov->entries[e].fingerprint);
    assert_int_equal(t->overflow_sig & bits, bits);
    assert_int_equal(t->overflow_sig == 0, ov->used == 0);
    return bits;
}

/* Every hash found by the lookup kernels' dispatch and the general test, counted exactly; the map valid. */
static void assert_all_held(const nidus_table *t, const uint64_t *hashes, size_t n)
{
    assert_int_equal(nidus_table_validate_overflow(t), NIDUS_OK);
    assert_signature_covers_map(t);
    uint64_t items = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(t, hashes[k], &i, &fp);
        assert_true(nidus_table_lookup(t, hashes[k]));
        assert_true(nidus_table_contains(t, i, nidus_table_alt(t, i, fp), fp));
        assert_int_equal(nidus_table_count(t, i, fp), expected_count(t, hashes, n, hashes[k]));
        items++;
    }
    assert_int_equal(nidus_table_items(t), items);
}

static const struct { unsigned b, f; bool semi; } configs[] = {
    {1, 12, false}, {2, 12, false}, {2, 9, false}, {4, 12, false}, {4, 13, true}, {8, 16, false}};

/* Adds distinct random hashes until one fails: the failure comes only once the stash holds NIDUS_TABLE_STASH
 * entries, every item stays found and counted, and removes in random order pull stash entries back into the
 * slots they free (a remove from a full pair leaves its slots full while the stash has an entry for it), down
 * to an empty table. */
static void test_full_table_stashes_then_removes_pull_entries_back(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 1;
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
        for (int run = 0; run < 20; run++) {
            nidus_table t = make(16, configs[c].b, configs[c].f, configs[c].semi, 1 + (unsigned)(run % 3) * 10);
            uint64_t hashes[200];
            size_t n = 0;
            for (;;) {
                uint64_t h = test_splitmix(&rng), i;
                uint32_t fp;
                nidus_table_locate(&t, h, &i, &fp);
                if (expected_count(&t, hashes, n, h)) /* distinct items only: duplicates have their own rule */
                    continue;
                nidus_status st = nidus_table_add(&t, &libc, i, fp);
                if (st == NIDUS_ERR_FULL)
                    break;
                assert_int_equal(st, NIDUS_OK);
                hashes[n++] = h;
                assert_true(n < 200);
            }
            assert_int_equal(t.overflow.used, NIDUS_TABLE_STASH);
            assert_int_equal(nidus_table_stash_entries(&t), NIDUS_TABLE_STASH);
            assert_int_equal(t.fast, NIDUS_FAST_NONE); /* the kernels that skip the map are off */
            assert_int_equal(t.occupied + NIDUS_TABLE_STASH, n);
            assert_all_held(&t, hashes, n);
            /* removes, in random order */
            bool pulled = false;
            while (n) {
                size_t k = (size_t)(test_splitmix(&rng) % n);
                uint64_t i, occupied = t.occupied, stashed = t.overflow.total;
                uint32_t fp;
                nidus_table_locate(&t, hashes[k], &i, &fp);
                assert_true(nidus_table_remove(&t, i, fp));
                hashes[k] = hashes[--n];
                if (stashed && t.occupied == occupied) { /* a slot freed and refilled from the stash */
                    assert_int_equal(t.overflow.total, stashed - 1);
                    pulled = true;
                }
                assert_all_held(&t, hashes, n);
            }
            assert_true(pulled);
            assert_int_equal(t.occupied, 0);
            assert_int_equal(t.overflow.used, 0);
            assert_int_equal(t.fast, nidus_table_plan_fast(&t)); /* back to its kernel */
            nidus_table_release(&t, &libc);
        }
    }
}

/* b=1: a table of two buckets is every key's pair, so it holds its two items every time and has no stash: the
 * third is refused (as RedisBloom's filter of that size refuses it). A filter of capacity 3 takes four buckets,
 * where three keys on one bucket pair fit: two slots and the stash. */
static void test_b1_three_keys_on_one_pair(void **state)
{
    (void)state;
    nidus_table t = make(2, 1, 12, false, 20);
    for (uint32_t fp = 1; fp <= 2; fp++)
        assert_int_equal(nidus_table_add(&t, &libc, fp % 2, fp), NIDUS_OK);
    assert_int_equal(nidus_table_add(&t, &libc, 0, 3), NIDUS_ERR_FULL);
    assert_int_equal(t.overflow.used, 0);
    for (uint32_t fp = 1; fp <= 2; fp++)
        assert_true(nidus_table_contains(&t, 0, 1, fp));
    assert_false(nidus_table_contains(&t, 0, 1, 3));
    assert_int_equal(nidus_table_items(&t), 2);
    /* the filter: capacity 3 at b=1 (the reservation that grew in ~1e-5 of seeds) */
    uint64_t rng = test_seed() + 2;
    for (int run = 0; run < 2000; run++) {
        nidus_cuckoo_params p = {.capacity = 3, .bucket_size = 1, .max_kicks = 1, .expansion = 2,
                                 .seed = test_splitmix(&rng)};
        nidus_cuckoo *cf;
        assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
        for (uint64_t k = 0; k < 3; k++)
            assert_int_equal(nidus_cuckoo_add(cf, &k, sizeof k), NIDUS_OK);
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(cf, &s);
        assert_int_equal(s.tables, 1);
        for (uint64_t k = 0; k < 3; k++)
            assert_true(nidus_cuckoo_contains(cf, &k, sizeof k));
        nidus_cuckoo_free(cf);
    }
    nidus_table_release(&t, &libc);
}

/* Validation accepts every state adds and removes make (above) and refuses an entry of fewer than bucket_size
 * copies beside a pair with a free slot; an entry beside a full pair is a stash entry, one beside bucket_size
 * copies a duplicate. A table of two buckets: every fingerprint's pair is (0, 1). */
static void test_validation_refuses_a_stash_entry_beside_a_free_slot(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
        unsigned b = configs[c].b;
        nidus_table t = make(2, b, configs[c].f, configs[c].semi, 20);
        const uint32_t fp = 3;
        assert_int_equal(nidus_overflow_set(&t.overflow, &libc, 0, fp, 1), NIDUS_OK);
        nidus_table_overflow_changed(&t);
        assert_int_equal(nidus_table_validate_overflow(&t), NIDUS_ERR_CORRUPT); /* an empty pair */
        for (uint32_t x = 0; x < 2 * b; x++) {
            assert_int_equal(nidus_table_validate_overflow(&t), NIDUS_ERR_CORRUPT); /* a free slot left */
            assert_true(nidus_table_place_free(&t, 0, 100 + x));
        }
        assert_int_equal(nidus_table_validate_overflow(&t), NIDUS_OK); /* both buckets full: a stash entry */
        assert_int_equal(nidus_table_stash_entries(&t), 1);
        /* a slot freed: the entry moves into it */
        assert_true(nidus_table_take(&t, 0, 100) || nidus_table_take(&t, 1, 100));
        assert_int_equal(nidus_table_stash_entries(&t), 1); /* a raw take leaves it */
        nidus_table_stash_refill(&t, 0);
        nidus_table_stash_refill(&t, 1);
        assert_int_equal(t.overflow.used, 0);
        assert_int_equal(t.fast, nidus_table_plan_fast(&t));
        assert_int_equal(nidus_table_count(&t, 0, fp), 1);
        /* another freed slot; a forged entry beside it is refused, a duplicate's is not */
        assert_true(nidus_table_take(&t, 0, 101) || nidus_table_take(&t, 1, 101));
        assert_int_equal(nidus_overflow_set(&t.overflow, &libc, 0, 7, 1), NIDUS_OK);
        nidus_table_overflow_changed(&t);
        assert_int_equal(nidus_table_validate_overflow(&t), NIDUS_ERR_CORRUPT);
        assert_int_equal(nidus_overflow_set(&t.overflow, &libc, 0, 7, 0), NIDUS_OK);
        for (unsigned k = 2; k < b; k++) /* room for bucket_size copies of fp */
            assert_true(nidus_table_take(&t, 0, 100 + k) || nidus_table_take(&t, 1, 100 + k));
        for (unsigned k = 1; k < b; k++)
            assert_true(nidus_table_place_free(&t, 0, fp));
        assert_int_equal(nidus_overflow_set(&t.overflow, &libc, 0, fp, 2), NIDUS_OK);
        nidus_table_overflow_changed(&t);
        assert_int_equal(nidus_table_validate_overflow(&t), NIDUS_OK);
        assert_int_equal(nidus_table_stash_entries(&t), 0);
        assert_int_equal(nidus_table_count(&t, 1, fp), b + 2);
        nidus_table_release(&t, &libc);
    }
}

/* ---- filters: every encoding carries the stash ---- */

/* A filter that never grows, b=2, filled until an add fails: it holds stash entries. */
static nidus_cuckoo *stashed_filter(uint64_t seed, uint64_t *n_out)
{
    nidus_cuckoo_params p = {.capacity = 40, .bucket_size = 2, .fingerprint_bits = 12, .max_kicks = 5, .seed = seed};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    uint64_t n = 0; /* key 0 twice (exact counts), then 1, 2, ... until an add fails */
    assert_int_equal(nidus_cuckoo_add(cf, &n, sizeof n), NIDUS_OK);
    while (nidus_cuckoo_add(cf, &n, sizeof n) == NIDUS_OK)
        n++;
    nidus_cuckoo_thawed tw;
    const nidus_cuckoo *full = nidus_cuckoo_inspect(cf, &tw);
    assert_int_equal(full->ntables, 1);
    assert_true(nidus_table_stash_entries(&full->tables[0]) > 0);
    *n_out = n;
    return cf;
}

/* `copy` answers as `cf` does for keys 0..n-1 (present; key 0 twice) and the same absent keys, and encodes to the
 * same bytes. */
static void assert_same(const nidus_cuckoo *cf, const nidus_cuckoo *copy, uint64_t n)
{
    for (uint64_t k = 0; k < n + 5000; k++) {
        assert_int_equal(nidus_cuckoo_contains(copy, &k, sizeof k), nidus_cuckoo_contains(cf, &k, sizeof k));
        assert_int_equal(nidus_cuckoo_count(copy, &k, sizeof k), nidus_cuckoo_count(cf, &k, sizeof k));
        if (k < n)
            assert_true(nidus_cuckoo_count(copy, &k, sizeof k) >= (k == 0 ? 2u : 1u));
    }
    test_assert_same_cuckoo_encoding(cf, copy);
}

static void test_stash_round_trips_through_every_encoding(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 3;
    for (int run = 0; run < 20; run++) {
        uint64_t n;
        nidus_cuckoo *cf = stashed_filter(test_splitmix(&rng), &n);
        size_t len;
        uint8_t *enc = test_cuckoo_encode(cf, &len);
        assert_int_equal(enc[5], NIDUS_FORMAT_VERSION);
        nidus_cuckoo *copy;
        assert_int_equal(nidus_cuckoo_decode(enc, len, NULL, &copy), NIDUS_OK);
        assert_same(cf, copy, n);
        nidus_cuckoo_free(copy);
        /* a version 5 reader's rule: no stash entries. The same bytes marked version 5 are refused. */
        enc[5] = 5;
        uint64_t sum = nidus_codec_hash(enc, len - 8);
        for (int k = 0; k < 8; k++)
            enc[len - 8 + k] = (uint8_t)(sum >> (8 * k));
        assert_int_equal(nidus_cuckoo_decode(enc, len, NULL, &copy), NIDUS_ERR_CORRUPT);
        free(enc);
        /* files: saved, loaded, mapped */
        char path[64];
        snprintf(path, sizeof path, "/tmp/nidus-test-stash-%ld", (long)getpid());
        assert_int_equal(nidus_cuckoo_save_file(cf, path), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_load_file(path, NULL, &copy), NIDUS_OK);
        assert_same(cf, copy, n);
        nidus_cuckoo_free(copy);
        assert_int_equal(nidus_cuckoo_map_file(path, NULL, &copy), NIDUS_OK);
        for (uint64_t k = 0; k < n + 5000; k++)
            assert_int_equal(nidus_cuckoo_count(copy, &k, sizeof k), nidus_cuckoo_count(cf, &k, sizeof k));
        nidus_cuckoo_free(copy);
        unlink(path);
        /* chunks */
        size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, clen;
        uint8_t *chunk = malloc(cap);
        uint64_t cursor = 0, next;
        copy = NULL;
        while (nidus_cuckoo_dump_chunk(cf, cursor, chunk, cap, &clen, &next) == NIDUS_OK && clen) {
            assert_int_equal(nidus_cuckoo_load_chunk(&copy, chunk, clen, 0, NULL), NIDUS_OK);
            cursor = next;
        }
        free(chunk);
        assert_false(nidus_cuckoo_loading(copy));
        assert_same(cf, copy, n);
        /* the copy keeps working: removes pull its stash back, every key stays found. Half the keys out may leave
         * an entry whose pair the kept keys still fill (a small table: seed 1795477166), valid as such; all out
         * (key 0 twice) leave none. */
        for (uint64_t k = n; k-- > n / 2;)
            assert_int_equal(nidus_cuckoo_remove(copy, &k, sizeof k), NIDUS_OK);
        for (uint64_t k = 0; k < n / 2; k++)
            assert_true(nidus_cuckoo_contains(copy, &k, sizeof k));
        nidus_cuckoo_thawed tw;
        const nidus_cuckoo *full = nidus_cuckoo_inspect(copy, &tw);
        assert_int_equal(nidus_table_validate_overflow(&full->tables[0]), NIDUS_OK);
        assert_signature_covers_map(&full->tables[0]);
        for (uint64_t k = n / 2; k-- > 0;)
            assert_int_equal(nidus_cuckoo_remove(copy, &k, sizeof k), NIDUS_OK);
        uint64_t k0 = 0; /* its second copy */
        assert_int_equal(nidus_cuckoo_remove(copy, &k0, sizeof k0), NIDUS_OK);
        full = nidus_cuckoo_inspect(copy, &tw);
        assert_int_equal(nidus_table_stash_entries(&full->tables[0]), 0);
        assert_int_equal(nidus_table_items(&full->tables[0]), 0);
        nidus_cuckoo_free(copy);
        nidus_cuckoo_free(cf);
    }
}

/* Batched lookups and add_unique see stash items too. */
static void test_batched_lookups_and_add_unique_see_the_stash(void **state)
{
    (void)state;
    uint64_t n;
    nidus_cuckoo *cf = stashed_filter(test_seed() + 4, &n);
    uint64_t *hashes = malloc((n + 1000) * sizeof *hashes);
    bool *out = malloc(n + 1000);
    for (uint64_t k = 0; k < n + 1000; k++)
        hashes[k] = nidus_cuckoo_hash(cf, &k, sizeof k);
    nidus_cuckoo_contains_many_hash(cf, hashes, n + 1000, out);
    for (uint64_t k = 0; k < n + 1000; k++)
        assert_int_equal(out[k], nidus_cuckoo_contains_hash(cf, hashes[k]));
    for (uint64_t k = 0; k < n; k++) {
        bool added = true;
        assert_int_equal(nidus_cuckoo_add_unique(cf, &k, sizeof k, &added), NIDUS_OK);
        assert_false(added);
    }
    free(hashes);
    free(out);
    nidus_cuckoo_free(cf);
}

/* A version 5 encoding and a version 6 file (written by main at 7253549, before the stash: capacity 100, error
 * 0.01, b=2, expansion 1, max_kicks 20, seed 21; "key-1".."key-400" added (it grew), "key-77" 9 times more,
 * "key-1".."key-50" removed) still load, answer as they did then (850 hits among "absent-0".."absent-99999",
 * "key-77" counted 10 times, 359 items, 6 of them overflow copies) and re-encode to the same bytes but the version
 * and checksum. */
static uint8_t *read_fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", NIDUS_FIXTURES_DIR, name);
    return test_read_all(path, len);
}

static void assert_fixture_answers(const nidus_cuckoo *cf)
{
    char key[32];
    for (int i = 51; i <= 400; i++)
        assert_true(nidus_cuckoo_contains(cf, key, (size_t)snprintf(key, sizeof key, "key-%d", i)));
    unsigned hits = 0;
    for (int i = 0; i < 100000; i++)
        hits += nidus_cuckoo_contains(cf, key, (size_t)snprintf(key, sizeof key, "absent-%d", i));
    assert_int_equal(hits, 850);
    assert_int_equal(nidus_cuckoo_count(cf, "key-77", 6), 10);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_int_equal(s.items, 359);
    assert_int_equal(s.overflow_items, 6);
    assert_int_equal(s.tables, 2);
}

static void test_version_5_encoding_and_version_6_file_answer_as_before(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = read_fixture("v5-cuckoo-small-grown.bin", &len);
    assert_int_equal(buf[5], 5);
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &cf), NIDUS_OK);
    assert_fixture_answers(cf);
    size_t n;
    uint8_t *enc = test_cuckoo_encode(cf, &n);
    assert_int_equal(n, len);
    assert_int_equal(enc[5], NIDUS_FORMAT_VERSION);
    assert_memory_equal(enc + 6, buf + 6, len - 6 - 8);
    free(enc);
    nidus_cuckoo_free(cf);
    free(buf);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", NIDUS_FIXTURES_DIR, "v6-cuckoo-small-grown.nidus");
    buf = test_read_all(path, &len);
    assert_int_equal(buf[5], 6);
    free(buf);
    assert_int_equal(nidus_cuckoo_load_file(path, NULL, &cf), NIDUS_OK);
    assert_fixture_answers(cf);
    nidus_cuckoo_free(cf);
    assert_int_equal(nidus_cuckoo_map_file(path, NULL, &cf), NIDUS_OK);
    assert_fixture_answers(cf);
    nidus_cuckoo_free(cf);
}

/* The signature a lookup asks before the map: exactly the entries' bits while the map is small (recomputed when an
 * entry goes, so a drained map stops costing lookups), every bit once it has grown past 32 places, and every
 * entry found and counted either way. */
static void test_lookup_signature_follows_the_map(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 7;
    nidus_table t = make(1024, 4, 12, false, 20);
    enum { KEYS = 24, COPIES = 9 }; /* 2b = 8 copies of a key fill its pair, the ninth is counted in the map */
    uint64_t hashes[KEYS * COPIES];
    uint64_t used[2 * KEYS]; /* the buckets of the keys taken: a key sharing one would find its pair part full */
    size_t n = 0;
    for (unsigned k = 0; k < KEYS; k++) {
        uint64_t h, i, alt;
        uint32_t fp;
        bool shared;
        do {
            h = test_splitmix(&rng);
            nidus_table_locate(&t, h, &i, &fp);
            alt = nidus_table_alt(&t, i, fp);
            shared = i == alt;
            for (unsigned u = 0; u < 2 * k; u++)
                shared |= used[u] == i || used[u] == alt;
        } while (shared);
        used[2 * k] = i;
        used[2 * k + 1] = alt;
        for (unsigned c = 0; c < COPIES; c++) {
            assert_int_equal(nidus_table_add(&t, &libc, i, fp), NIDUS_OK);
            hashes[n++] = h;
        }
        if (k == 2) { /* three entries: their bits, nothing else */
            assert_int_equal(t.overflow.used, 3);
            assert_int_equal(t.overflow_sig, assert_signature_covers_map(&t));
            assert_all_held(&t, hashes, n);
            /* one entry's copy goes: its bit goes unless another entry shares it */
            uint64_t h0 = hashes[0], i0;
            uint32_t fp0;
            nidus_table_locate(&t, h0, &i0, &fp0);
            assert_true(nidus_table_remove(&t, i0, fp0)); /* a remove takes the map's copy first */
            assert_int_equal(t.overflow.used, 2);
            assert_int_equal(t.overflow_sig, assert_signature_covers_map(&t));
            assert_int_equal(nidus_table_add(&t, &libc, i0, fp0), NIDUS_OK);
            assert_int_equal(t.overflow_sig, assert_signature_covers_map(&t));
        }
    }
    assert_int_equal(t.overflow.used, KEYS);
    assert_true(t.overflow.capacity > 32);
    assert_int_equal(t.overflow_sig, UINT32_MAX);
    assert_all_held(&t, hashes, n);
    nidus_table_release(&t, &libc);
}

int main(void)
{
    nidus_alloc_resolve(NULL, &libc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_table_stashes_then_removes_pull_entries_back),
        cmocka_unit_test(test_b1_three_keys_on_one_pair),
        cmocka_unit_test(test_validation_refuses_a_stash_entry_beside_a_free_slot),
        cmocka_unit_test(test_stash_round_trips_through_every_encoding),
        cmocka_unit_test(test_batched_lookups_and_add_unique_see_the_stash),
        cmocka_unit_test(test_version_5_encoding_and_version_6_file_answer_as_before),
        cmocka_unit_test(test_lookup_signature_follows_the_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
