/* SPDX-License-Identifier: BSD-3-Clause */
/* The opt-in inline path of the binary fuse filter (nidus/inline_fuse.h), compiled with NIDUS_INLINE: in every
 * state a filter can be in (8 and 16 bits, empty, one key, large, decoded, viewed, mapped, a tag from a newer
 * library), the inline lookups (nidus_fuse_contains, _contains_hash under NIDUS_INLINE, and the width-specific
 * nidus_inline_fuse8_contains_hash / _16_) answer exactly as the library's calls (the same names in
 * parentheses), for members and for other keys of every length 0 to 24. */
#define _POSIX_C_SOURCE 200809L
#define NIDUS_INLINE 1
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#define lib_contains(f, k, n) (nidus_fuse_contains)(f, k, n)
#define lib_contains_hash(f, h) (nidus_fuse_contains_hash)(f, h)

/* Key i: 8 bytes most of the time, else 0 to 24. */
static size_t key_of(uint64_t salt, uint64_t i, uint8_t b[24])
{
    uint64_t s = salt ^ (i * UINT64_C(0x9E3779B97F4A7C15));
    for (size_t j = 0; j < 24; j += 8) {
        uint64_t w = test_splitmix(&s);
        memcpy(b + j, &w, 8);
    }
    uint64_t pick = test_splitmix(&s);
    return pick % 4 ? 8 : (size_t)(pick >> 8) % 25;
}

/* Inline and library answers agree for the n members (all present) and for 20000 other keys and hashes. */
static void assert_same_answers(const nidus_fuse *f, uint64_t salt, size_t n)
{
    uint8_t b[24];
    for (size_t i = 0; i < n + 20000; i++) {
        size_t len = key_of(i < n ? salt : salt + 1, i, b);
        bool in = nidus_fuse_contains(f, b, len);
        assert_int_equal(in, lib_contains(f, b, len));
        if (i < n)
            assert_true(in);
        uint64_t h = salt * 31 + i * UINT64_C(0xD6E8FEB86659FD93);
        bool want = lib_contains_hash(f, h);
        assert_int_equal(nidus_fuse_contains_hash(f, h), want);
        /* each width's own entry answers as the library for any filter, its width or not */
        assert_int_equal(nidus_inline_fuse8_contains_hash(f, h), want);
        assert_int_equal(nidus_inline_fuse16_contains_hash(f, h), want);
    }
}

static nidus_fuse *build(unsigned bits, uint64_t salt, size_t n)
{
    uint8_t (*buf)[24] = malloc((n ? n : 1) * sizeof *buf);
    const void **keys = malloc((n ? n : 1) * sizeof *keys);
    size_t *lens = malloc((n ? n : 1) * sizeof *lens);
    for (size_t i = 0; i < n; i++) {
        lens[i] = key_of(salt, i, buf[i]);
        keys[i] = buf[i];
    }
    nidus_fuse_params p = {.fingerprint_bits = bits, .seed = salt};
    nidus_fuse *f = NULL;
    assert_int_equal(nidus_fuse_build(&p, keys, lens, n, &f), NIDUS_OK);
    free(buf), free(keys), free(lens);
    return f;
}

static void test_inline_lookups_answer_as_the_library(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 100, 5000, 100000};
    uint64_t seed = test_seed();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (unsigned bits = 8; bits <= 16; bits += 8) {
            uint64_t salt = seed + s * 2 + bits;
            nidus_fuse *f = build(bits, salt, sizes[s]);
            assert_same_answers(f, salt, sizes[s]);
            /* decoded, viewed, mapped */
            size_t len = (size_t)nidus_fuse_encoded_size(f);
            uint8_t *enc = malloc(len);
            assert_int_equal(nidus_fuse_encode(f, enc, len, NULL), NIDUS_OK);
            nidus_fuse *d = NULL, *v = NULL, *m = NULL;
            assert_int_equal(nidus_fuse_decode(enc, len, NULL, &d), NIDUS_OK);
            assert_int_equal(nidus_fuse_view(enc, len, NULL, &v), NIDUS_OK);
            char path[] = "/tmp/nidus-test-inline-fuse-XXXXXX";
            int fd = mkstemp(path);
            assert_true(fd >= 0);
            close(fd);
            assert_int_equal(nidus_fuse_save_file(f, path), NIDUS_OK);
            assert_int_equal(nidus_fuse_map_file(path, NULL, &m), NIDUS_OK);
            unlink(path);
            assert_same_answers(d, salt, sizes[s]);
            assert_same_answers(v, salt, sizes[s]);
            assert_same_answers(m, salt, sizes[s]);
            nidus_fuse_free(d), nidus_fuse_free(v), nidus_fuse_free(m);
            free(enc);
            nidus_fuse_free(f);
        }
    }
}

static void test_a_tag_it_does_not_know_goes_to_the_library(void **state)
{
    (void)state;
    uint64_t salt = test_seed() + 99;
    nidus_fuse *f = build(8, salt, 1000);
    /* a newer library's tag, and version 1's (whose view had no slots1, slots2): the view's other fields garbled
     * too, which the library's calls do not read */
    static const uint32_t tags[] = {NIDUS_INLINE_FUSE_TAG_8 + 0x100, UINT32_C(0x4E460108), UINT32_C(0x4E460110)};
    nidus_inline_fuse_view *v = (nidus_inline_fuse_view *)(void *)f;
    nidus_inline_fuse_view saved = *v;
    assert_int_equal(v->tag, NIDUS_INLINE_FUSE_TAG_8);
    for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
        v->tag = tags[t];
        v->segment_count_length = UINT64_MAX;
        v->slots = v->slots1 = v->slots2 = NULL;
        assert_same_answers(f, salt, 1000);
        *v = saved;
    }
    nidus_fuse_free(f);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_lookups_answer_as_the_library),
        cmocka_unit_test(test_a_tag_it_does_not_know_goes_to_the_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
