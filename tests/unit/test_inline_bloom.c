/* SPDX-License-Identifier: BSD-3-Clause */
/* The opt-in inline path of the Bloom filter (nidus/inline_bloom.h), compiled with NIDUS_INLINE three ways by
 * tests/CMakeLists.txt: as the caller's target has it (on x86-64 without AVX2: the library's calls), with the
 * portable probes forced, and with AVX2. In every state a filter can be in (one blocked layer, grown, compact
 * layout, another k, a decoded and a mapped read-only view, loading, a tag from a newer library), the inline
 * calls (nidus_bloom_add, ... under NIDUS_INLINE) answer, add, count and fail exactly as the library's calls
 * (the same names in parentheses) on a twin filter; keys added inline are never missed by the library's
 * lookups; the counting filter is untouched. */
#define _POSIX_C_SOURCE 200809L
#define NIDUS_INLINE 1
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

/* The library's own calls: the names in parentheses are not the inline macros. */
#define lib_add(f, k, n, a) (nidus_bloom_add)(f, k, n, a)
#define lib_add_hash(f, h, a) (nidus_bloom_add_hash)(f, h, a)
#define lib_contains(f, k, n) (nidus_bloom_contains)(f, k, n)
#define lib_contains_hash(f, h) (nidus_bloom_contains_hash)(f, h)

static nidus_bloom *make(uint64_t capacity, double error, unsigned expansion, unsigned layout, uint64_t seed)
{
    nidus_bloom_params p = {.capacity = capacity, .error_rate = error, .expansion = expansion, .seed = seed,
                            .layout = layout};
    nidus_bloom *bf = NULL;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    return bf;
}

/* Key i of a run: 8 bytes most of the time (the hash8 path), else 0 to 24 (every short case and the
 * library's long path), from the run's stream. */
typedef struct key {
    uint8_t b[24];
    size_t n;
    uint64_t h;
} key;

static key key_of(uint64_t salt, uint64_t i)
{
    key k;
    uint64_t s = salt ^ (i * UINT64_C(0x9E3779B97F4A7C15));
    for (size_t j = 0; j < sizeof k.b; j += 8) {
        uint64_t w = test_splitmix(&s);
        memcpy(k.b + j, &w, 8);
    }
    uint64_t pick = test_splitmix(&s);
    k.n = pick % 4 ? 8 : (size_t)(pick >> 8) % 25;
    k.h = test_splitmix(&s);
    return k;
}

static uint64_t items_of(const nidus_bloom *bf)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    return s.items;
}

/* The same encoding: the same bits, counts and layers. */
static void assert_same_filter(const nidus_bloom *a, const nidus_bloom *b)
{
    size_t na = (size_t)nidus_bloom_encoded_size(a), nb = (size_t)nidus_bloom_encoded_size(b), w;
    assert_int_equal(na, nb);
    uint8_t *ea = malloc(na), *eb = malloc(nb);
    assert_int_equal(nidus_bloom_encode(a, ea, na, &w), NIDUS_OK);
    assert_int_equal(nidus_bloom_encode(b, eb, nb, &w), NIDUS_OK);
    assert_memory_equal(ea, eb, na);
    free(ea);
    free(eb);
}

/* Adds keys [from, to) of a run inline to `in` and through the library to `lib` (keys by bytes and by hash in
 * turn): the same status, the same *added, the same filter after; then every key taken so far (all but those
 * refused, which `refused` marks when given) is found by both ways of asking both filters. */
static void add_both_marking(nidus_bloom *in, nidus_bloom *lib, uint64_t salt, uint64_t from, uint64_t to,
                             bool *refused)
{
    for (uint64_t i = from; i < to; i++) {
        key k = key_of(salt, i);
        bool a_in = true, a_lib = false;
        nidus_status s_in = i % 3 ? nidus_bloom_add(in, k.b, k.n, &a_in) : nidus_bloom_add_hash(in, k.h, &a_in);
        nidus_status s_lib = i % 3 ? lib_add(lib, k.b, k.n, &a_lib) : lib_add_hash(lib, k.h, &a_lib);
        assert_int_equal(s_in, s_lib);
        assert_int_equal(a_in, a_lib);
        assert_int_equal(items_of(in), items_of(lib));
        if (s_in != NIDUS_OK) {
            assert_non_null(refused);
            refused[i] = true;
        }
    }
    assert_same_filter(in, lib);
    for (uint64_t i = 0; i < to; i++) {
        key k = key_of(salt, i);
        if (refused && refused[i])
            continue;
        bool by_key = i % 3 != 0;
        if (by_key) {
            assert_true(nidus_bloom_contains(in, k.b, k.n)); /* no false negative, inline */
            assert_true(lib_contains(in, k.b, k.n));         /* nor in the library's lookups */
            assert_true(nidus_bloom_contains(lib, k.b, k.n));
        } else {
            assert_true(nidus_bloom_contains_hash(in, k.h));
            assert_true(lib_contains_hash(in, k.h));
            assert_true(nidus_bloom_contains_hash(lib, k.h));
        }
    }
}

static void add_both(nidus_bloom *in, nidus_bloom *lib, uint64_t salt, uint64_t from, uint64_t to)
{
    add_both_marking(in, lib, salt, from, to, NULL);
}

/* Inline and library lookups agree on keys present and absent (absent ones answer both ways). */
static void assert_same_answers(const nidus_bloom *bf, uint64_t salt, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        key k = key_of(salt, i);
        assert_int_equal(nidus_bloom_contains(bf, k.b, k.n), lib_contains(bf, k.b, k.n));
        assert_int_equal(nidus_bloom_contains_hash(bf, k.h), lib_contains_hash(bf, k.h));
    }
}

/* A blocked filter of k = 8 (error 1 %) is served inline for lookups and adds; filled past capacity it grows,
 * after which its tag is one no header knows and every inline call is the library's. */
static void test_one_layer_then_grown(void **state)
{
    (void)state;
    uint64_t salt = test_seed() * 7 + 1, seed = test_seed() * 13;
    nidus_bloom *in = make(2000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    nidus_bloom *lib = make(2000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(in);
    assert_true(nidus_inline_bloom_can_look_up(v) && nidus_inline_bloom_can_add(v));
    assert_int_equal(v->hash8_flip, nidus_inline_hash8_flip(seed));
    assert_int_equal(v->capacity, 2000);
    add_both(in, lib, salt, 0, 1500);
    assert_true(nidus_inline_bloom_can_add(v));
    assert_same_answers(in, salt + 1, 20000);
    add_both(in, lib, salt, 1500, 9000); /* the layer fills; an add grows it (the library's call) */
    nidus_bloom_stats s;
    nidus_bloom_get_stats(in, &s);
    assert_true(s.layers > 1);
    assert_false(nidus_inline_bloom_can_look_up(v) || nidus_inline_bloom_can_add(v));
    assert_same_answers(in, salt + 1, 20000);
    /* cleared: one layer again, inline again */
    assert_int_equal(nidus_bloom_clear(in), NIDUS_OK);
    assert_int_equal(nidus_bloom_clear(lib), NIDUS_OK);
    assert_true(nidus_inline_bloom_can_add(v));
    add_both(in, lib, salt + 2, 0, 1000);
    nidus_bloom_free(in);
    nidus_bloom_free(lib);
}

/* A full one-layer filter that never grows: the inline add hands the key to the library, which refuses a new
 * key with NIDUS_ERR_FULL and takes a present one. */
static void test_full_nonscaling(void **state)
{
    (void)state;
    uint64_t salt = test_seed() * 11 + 3, seed = test_seed();
    nidus_bloom *in = make(500, 0.01, 0, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    nidus_bloom *lib = make(500, 0.01, 0, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    static bool refused[3000];
    add_both_marking(in, lib, salt, 0, 3000, refused); /* statuses compared key by key, NIDUS_ERR_FULL among them */
    assert_int_equal(items_of(in), 500);
    unsigned full = 0;
    for (int i = 0; i < 3000; i++)
        full += refused[i];
    assert_true(full > 2000);
    assert_true(nidus_inline_bloom_can_add(nidus_inline_bloom_view_of(in)));
    nidus_bloom_free(in);
    nidus_bloom_free(lib);
}

/* Filters inline code does not serve: the compact layout, blocked layers of another k (1e-5 takes more bits),
 * blocked layers plain below 1e-8. Their tags are unknown to the header; inline calls equal the library's. */
static void test_other_layouts(void **state)
{
    (void)state;
    const struct {
        double error;
        unsigned layout;
    } cases[] = {{0.01, NIDUS_BLOOM_LAYOUT_COMPACT}, {1e-5, NIDUS_BLOOM_LAYOUT_BLOCKED}, {1e-9, NIDUS_BLOOM_LAYOUT_BLOCKED}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint64_t salt = test_seed() + c, seed = test_seed() ^ c;
        nidus_bloom *in = make(1000, cases[c].error, 2, cases[c].layout, seed);
        nidus_bloom *lib = make(1000, cases[c].error, 2, cases[c].layout, seed);
        assert_false(nidus_inline_bloom_can_look_up(nidus_inline_bloom_view_of(in)));
        add_both(in, lib, salt, 0, 2500);
        assert_same_answers(in, salt + 99, 5000);
        nidus_bloom_free(in);
        nidus_bloom_free(lib);
    }
}

/* Read-only views, decoded from bytes and mapped from a file: lookups inline, adds the library's
 * (NIDUS_ERR_READ_ONLY, nothing changed). */
static void test_read_only_views(void **state)
{
    (void)state;
    uint64_t salt = test_seed() * 5 + 9, seed = test_seed() + 5;
    nidus_bloom *in = make(3000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    nidus_bloom *lib = make(3000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    add_both(in, lib, salt, 0, 2000);
    size_t len = (size_t)nidus_bloom_encoded_size(in), w;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_bloom_encode(in, buf, len, &w), NIDUS_OK);
    char path[] = "/tmp/nidus-inline-bloom-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nidus_bloom_save_file(in, path), NIDUS_OK);
    nidus_bloom *views[2] = {NULL, NULL};
    assert_int_equal(nidus_bloom_view(buf, len, NULL, &views[0]), NIDUS_OK);
    assert_int_equal(nidus_bloom_map_file(path, NULL, &views[1]), NIDUS_OK);
    for (int i = 0; i < 2; i++) {
        const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(views[i]);
        assert_true(nidus_inline_bloom_can_look_up(v));
        assert_false(nidus_inline_bloom_can_add(v));
        for (uint64_t j = 0; j < 2000; j++) {
            key k = key_of(salt, j);
            assert_true(j % 3 ? nidus_bloom_contains(views[i], k.b, k.n) : nidus_bloom_contains_hash(views[i], k.h));
        }
        assert_same_answers(views[i], salt + 7, 20000);
        key k = key_of(salt + 8, 0);
        bool added = true;
        assert_int_equal(nidus_bloom_add(views[i], k.b, k.n, &added), NIDUS_ERR_READ_ONLY);
        assert_false(added);
        assert_int_equal(nidus_bloom_add_hash(views[i], k.h, NULL), NIDUS_ERR_READ_ONLY);
        nidus_bloom_free(views[i]);
    }
    unlink(path);
    free(buf);
    nidus_bloom_free(in);
    nidus_bloom_free(lib);
}

/* A filter loading chunk by chunk answers nothing and takes no add until the last chunk lands, inline as
 * through the library; then it is served inline with every key. */
static void test_loading(void **state)
{
    (void)state;
    static uint8_t chunk[4][NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    uint64_t salt = test_seed() * 3 + 2, seed = test_seed() + 77;
    nidus_bloom *in = make(6000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    nidus_bloom *lib = make(6000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    add_both(in, lib, salt, 0, 3000);
    size_t n = 0, clen[4];
    uint64_t cursor = 0, next;
    for (;; n++) {
        assert_true(n < 4);
        assert_int_equal(nidus_bloom_dump_chunk(in, cursor, chunk[n], sizeof chunk[n], &clen[n], &next), NIDUS_OK);
        if (!clen[n])
            break;
        cursor = next;
    }
    assert_true(n >= 2);
    nidus_bloom *back = NULL;
    assert_int_equal(nidus_bloom_load_chunk(&back, chunk[0], clen[0], 0, NULL), NIDUS_OK);
    for (size_t c = 1; c < n; c++) {
        const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(back);
        assert_true(nidus_bloom_loading(back));
        assert_false(nidus_inline_bloom_can_look_up(v) || nidus_inline_bloom_can_add(v));
        key k = key_of(salt, 1);
        assert_int_equal(nidus_bloom_contains(back, k.b, k.n), lib_contains(back, k.b, k.n));
        assert_int_equal(nidus_bloom_add(back, k.b, k.n, NULL), NIDUS_ERR_READ_ONLY);
        assert_int_equal(lib_add(back, k.b, k.n, NULL), NIDUS_ERR_READ_ONLY);
        assert_int_equal(nidus_bloom_load_chunk(&back, chunk[c], clen[c], 0, NULL), NIDUS_OK);
    }
    assert_false(nidus_bloom_loading(back));
    assert_true(nidus_inline_bloom_can_add(nidus_inline_bloom_view_of(back)));
    assert_same_filter(back, in);
    add_both(back, lib, salt, 3000, 4000);
    nidus_bloom_free(back);
    nidus_bloom_free(in);
    nidus_bloom_free(lib);
}

/* A newer library may write tags this header does not know (another view version, another state): inline
 * calls then are the library's, and answer as it does. Simulated by rewriting the tag of a one-layer filter
 * to values of the same family with other version or state bits. */
static void test_unknown_tags_fall_back(void **state)
{
    (void)state;
    uint64_t salt = test_seed() * 17 + 4, seed = test_seed() + 3;
    nidus_bloom *bf = make(3000, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED, seed);
    nidus_inline_bloom_view *v = (nidus_inline_bloom_view *)(void *)bf;
    for (uint64_t i = 0; i < 1000; i++) {
        key k = key_of(salt, i);
        assert_int_equal(nidus_bloom_add(bf, k.b, k.n, NULL), NIDUS_OK);
    }
    const uint32_t tag = v->tag;
    const uint32_t unknown[] = {tag + 0x100, tag ^ 0x8, tag ^ 0x80, tag ^ 0x01000000, 0, ~tag};
    for (size_t u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
        v->tag = unknown[u];
        assert_false(nidus_inline_bloom_can_look_up(v) || nidus_inline_bloom_can_add(v));
    }
    /* a tag with the library's private bit flipped is still served (that bit is the library's) */
    v->tag = tag ^ NIDUS_INLINE_BLOOM_TAG_PRIVATE;
    assert_true(nidus_inline_bloom_can_look_up(v) && nidus_inline_bloom_can_add(v));
    v->tag = tag;
    for (uint64_t i = 0; i < 1000; i++) {
        key k = key_of(salt, i);
        assert_true(nidus_bloom_contains(bf, k.b, k.n));
    }
    nidus_bloom_free(bf);
}

/* The counting filter has no inline path: under NIDUS_INLINE its calls are the library's, and work. */
static void test_counting_untouched(void **state)
{
    (void)state;
    nidus_counting_bloom_params p = {.capacity = 1000, .error_rate = 0.01, .seed = test_seed()};
    nidus_counting_bloom *cb = NULL;
    assert_int_equal(nidus_counting_bloom_new(&p, &cb), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_add(cb, "k", 1), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_add(cb, "k", 1), NIDUS_OK);
    assert_true(nidus_counting_bloom_contains(cb, "k", 1));
    assert_int_equal(nidus_counting_bloom_count(cb, "k", 1), 2);
    assert_int_equal(nidus_counting_bloom_remove(cb, "k", 1), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_count(cb, "k", 1), 1);
    nidus_counting_bloom_free(cb);
}

int main(void)
{
#if defined(__AVX2__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) {
        printf("# no AVX2 on this CPU: the AVX2 build of the inline path cannot run here\n");
        return 77; /* CTest: skipped */
    }
#endif
    printf("# inline probes: %s\n", NIDUS_INLINE_BLOOM_PROBES == 2   ? "AVX2"
                                    : NIDUS_INLINE_BLOOM_PROBES == 1 ? "portable"
                                                                     : "none (the library's calls)");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_layer_then_grown),  cmocka_unit_test(test_full_nonscaling),
        cmocka_unit_test(test_other_layouts),         cmocka_unit_test(test_read_only_views),
        cmocka_unit_test(test_loading),               cmocka_unit_test(test_unknown_tags_fall_back),
        cmocka_unit_test(test_counting_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
