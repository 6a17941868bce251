/* SPDX-License-Identifier: BSD-3-Clause */
/* The Bloom family: blocked and scalable Bloom filters, the counting Bloom filter, and their encodings. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "bloom_block_impl.h"
#include "codec.h"
#include "bloom_filter.h"
#include "bloom_kernels.h"
#include "bloom_fixtures_v1.h"

static uint64_t h_of(const char *ns, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, ns, i);
    uint64_t h = 1469598103934665603ull ^ test_seed();
    for (size_t k = 0; k < n; k++)
        h = (h ^ (uint8_t)buf[k]) * 1099511628211ull;
    return test_splitmix(&h);
}

static nidus_bloom *bloom(uint64_t capacity, double error, unsigned expansion)
{
    nidus_bloom_params p = {.capacity = capacity, .error_rate = error, .expansion = expansion, .seed = test_seed()};
    nidus_bloom *bf = NULL;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    return bf;
}

static double measure(bool (*has)(const void *, uint64_t), const void *f, uint64_t trials)
{
    uint64_t fp = 0;
    for (uint64_t k = 0; k < trials; k++)
        fp += has(f, h_of("absent", k));
    return (double)fp / (double)trials;
}

static bool bloom_has(const void *f, uint64_t h) { return nidus_bloom_contains_hash(f, h); }
static bool counting_has(const void *f, uint64_t h) { return nidus_counting_bloom_contains_hash(f, h); }

/* ---- error at capacity and bytes against RedisBloom's ---- */

static nidus_bloom *bloom_in(uint64_t capacity, double error, unsigned expansion, unsigned layout)
{
    nidus_bloom_params p = {.capacity = capacity, .error_rate = error, .expansion = expansion, .seed = test_seed(),
                            .layout = layout};
    nidus_bloom *bf = NULL;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    return bf;
}

/* The bytes of the bit array RedisBloom (deps/bloom/bloom.c, BLOOM_OPT_NOROUND, as BF.RESERVE makes it) gives
 * one layer of n entries at `error`: n * ln(1/error) / ln(2)^2 bits, truncated, rounded up to 64-bit words. */
static uint64_t redisbloom_bytes(uint64_t n, double error)
{
    double bpe = -log(error) / 0.480453013918201;
    uint64_t bits = (uint64_t)((double)n * bpe);
    if (bits == 0)
        bits = 1;
    return bits % 64 ? (bits / 64 + 1) * 8 : bits / 8;
}

/* What the filter's one layer holds: its memory less the filter's own structure. */
static uint64_t layer_bytes_of(const nidus_bloom *bf)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    return s.memory_bytes - sizeof(struct nidus_bloom);
}

static void fill(nidus_bloom *bf, const char *ns, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++)
        assert_int_equal(nidus_bloom_add_hash(bf, h_of(ns, k), NULL), NIDUS_OK);
    for (uint64_t k = 0; k < n; k++)
        assert_true(nidus_bloom_contains_hash(bf, h_of(ns, k))); /* never a false negative */
}

/* A ceiling on the measured error of one plain Bloom array (k probes, n items, `bits` bits) over `trials`
 * absent keys. Two things vary: which filter the seed built (the fraction p of bits set has variance
 * e^-l (1 - (1 + l) e^-l) / bits, l = kn/bits, the balls-into-bins count of empty bins) and the sample. Each
 * gets 4 standard deviations: a sampling-only 3-sigma ceiling around the mean failed about one seed in 500. */
static double compact_rate_ceiling(unsigned k, uint64_t n, uint64_t bits, double trials)
{
    double l = (double)k * (double)n / (double)bits, e = exp(-l);
    double p = 1.0 - e + 4.0 * sqrt(e * (1.0 - (1.0 + l) * e) / (double)bits);
    double rate = pow(p, k);
    return rate + 4.0 * sqrt(rate / trials);
}

/* Compact layers: RedisBloom's bytes exactly, and the error RedisBloom's bits give with the best integer k,
 * which is within 0.71 % of the target (at 10 %; the integer k costs that much, at RedisBloom's k or ours). */
static void test_compact_error_and_bytes_at_capacity(void **state)
{
    (void)state;
    const double targets[] = {0.1, 0.01, 0.001, 0.0001};
    for (size_t t = 0; t < 4; t++) {
        const uint64_t n = 100000, trials = test_trials(2000000);
        nidus_bloom *bf = bloom_in(n, targets[t], 0, NIDUS_BLOOM_LAYOUT_COMPACT);
        fill(bf, "in", n);
        double rate = measure(bloom_has, bf, trials);
        nidus_bloom_stats s;
        nidus_bloom_get_stats(bf, &s);
        uint64_t bytes = layer_bytes_of(bf);
        double model = pow(1.0 - exp(-(double)s.hashes * n / (8.0 * bytes)), s.hashes);
        printf("# compact, target %.4f%%: measured %.4f%%, model %.4f%%, %" PRIu64 " bytes (RedisBloom %" PRIu64
               "), k=%u\n", 100 * targets[t], 100 * rate, 100 * model, bytes, redisbloom_bytes(n, targets[t]),
               s.hashes);
        assert_int_equal(bytes, redisbloom_bytes(n, targets[t]));
        assert_true(model <= targets[t] * 1.0071);
        assert_true(rate <= compact_rate_ceiling(s.hashes, n, 8 * bytes, (double)trials));
        nidus_bloom_free(bf);
        /* scaling (BF.RESERVE's default): the first layer takes half the target, as RedisBloom's */
        bf = bloom_in(n, targets[t], 2, NIDUS_BLOOM_LAYOUT_COMPACT);
        fill(bf, "in", n);
        rate = measure(bloom_has, bf, trials);
        assert_int_equal(layer_bytes_of(bf), redisbloom_bytes(n, targets[t] / 2));
        assert_true(rate <= test_rate_ceiling(targets[t], (double)trials));
        nidus_bloom_free(bf);
    }
}

static void test_blocked_error_at_capacity_meets_target(void **state)
{
    (void)state;
    const double targets[] = {0.1, 0.01, 0.001, 0.0001, 0.00001};
    for (size_t t = 0; t < 5; t++) {
        const uint64_t n = 100000, trials = test_trials(t < 4 ? 2000000 : 20000000);
        nidus_bloom *bf = bloom_in(n, targets[t], 0, NIDUS_BLOOM_LAYOUT_BLOCKED);
        fill(bf, "in", n);
        double rate = measure(bloom_has, bf, trials);
        nidus_bloom_stats s;
        nidus_bloom_get_stats(bf, &s);
        printf("# blocked, target %.4f%%: measured %.4f%%, %.2f bits/item (compact %.2f), k=%u\n",
               100 * targets[t], 100 * rate, s.bits_per_item, 8.0 * redisbloom_bytes(n, targets[t]) / n, s.hashes);
        assert_true(rate <= test_rate_ceiling(targets[t], (double)trials));
        assert_int_equal(s.layout, NIDUS_BLOOM_LAYOUT_BLOCKED);
        nidus_bloom_free(bf);
    }
}

/* Never more bytes than RedisBloom for the same capacity and error, from 0.25 down to 1e-300 (RedisBloom takes
 * any error in (0, 1)), for one item to a billion; the filter's own structure included at a million. */
static void test_compact_bytes_never_above_redisbloom(void **state)
{
    (void)state;
    const double errors[] = {0.25, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-9, 1e-12, 1e-15, 1e-20, 1e-50,
                             1e-100, 1e-300};
    const uint64_t caps[] = {1, 7, 100, 1000, 12345, 1000000};
    for (size_t e = 0; e < sizeof errors / sizeof *errors; e++)
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
            for (unsigned expansion = 0; expansion <= 2; expansion += 2) {
                nidus_bloom *bf = bloom_in(caps[c], errors[e], expansion, NIDUS_BLOOM_LAYOUT_COMPACT);
                double layer_error = expansion ? errors[e] / 2 : errors[e];
                assert_true(layer_bytes_of(bf) <= redisbloom_bytes(caps[c], layer_error));
                nidus_bloom_free(bf);
            }
    /* a layer of a billion items at 1e-20 is 9.6 GB; its size is checked without allocating it */
    nidus_bloom_params p = {.capacity = 1000000000, .error_rate = 1e-20, .max_memory = 1000};
    nidus_bloom *bf = NULL;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_LIMIT_MEMORY);
    /* BF.RESERVE b 1e-300 1000: accepted, and works */
    bf = bloom_in(1000, 1e-300, 2, NIDUS_BLOOM_LAYOUT_COMPACT);
    fill(bf, "tiny", 1000);
    assert_false(nidus_bloom_contains_hash(bf, h_of("absent", 1)));
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_true(s.hashes > 900);
    nidus_bloom_free(bf);
}

static void test_add_reports_new_keys_and_cardinality(void **state)
{
    (void)state;
    nidus_bloom *bf = bloom(1000, 0.01, 2);
    bool added;
    assert_int_equal(nidus_bloom_add(bf, "a", 1, &added), NIDUS_OK);
    assert_true(added);
    assert_int_equal(nidus_bloom_add(bf, "a", 1, &added), NIDUS_OK);
    assert_false(added); /* BF.ADD replies 0 */
    assert_true(nidus_bloom_contains(bf, "a", 1));
    assert_int_equal(nidus_bloom_add(bf, "b", 1, NULL), NIDUS_OK);
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_int_equal(s.items, 2);
    assert_int_equal(s.capacity, 1000);
    assert_int_equal(s.layers, 1);
    nidus_bloom_free(bf);
}

static void test_nonscaling_filter_is_full_at_capacity(void **state)
{
    (void)state;
    nidus_bloom *bf = bloom(500, 0.01, 0);
    uint64_t added_count = 0, k = 0;
    nidus_status st = NIDUS_OK;
    while (st == NIDUS_OK) {
        bool added = false;
        st = nidus_bloom_add_hash(bf, h_of("full", k++), &added);
        added_count += added;
    }
    assert_int_equal(st, NIDUS_ERR_FULL);
    assert_int_equal(added_count, 500);
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_int_equal(s.items, 500);
    assert_int_equal(s.layers, 1);
    /* a key already present is still answered, not refused */
    bool added = true;
    assert_int_equal(nidus_bloom_add_hash(bf, h_of("full", 0), &added), NIDUS_OK);
    assert_false(added);
    nidus_bloom_free(bf);
}

static void test_scalable_error_within_target_after_six_layers(void **state)
{
    (void)state;
    const double target = 0.01;
    nidus_bloom *bf = bloom(20000, target, 2); /* not smaller: a small layer's own error varies by several % */
    uint64_t n = 0;
    nidus_bloom_stats s;
    do {
        assert_int_equal(nidus_bloom_add_hash(bf, h_of("grow", n++), NULL), NIDUS_OK);
        nidus_bloom_get_stats(bf, &s);
    } while (s.layers < 6 || s.items < s.capacity);
    for (uint64_t k = 0; k < n; k++)
        assert_true(nidus_bloom_contains_hash(bf, h_of("grow", k)));
    const uint64_t trials = test_trials(1000000);
    double rate = measure(bloom_has, bf, trials);
    printf("# %u layers, %" PRIu64 " items: measured %.4f%%, bound %.4f%%, target %.2f%%\n", s.layers, s.items,
           100 * rate, 100 * s.error_bound, 100 * target);
    assert_true(s.error_bound <= target);
    assert_true(rate <= test_rate_ceiling(target, (double)trials));
    assert_int_equal(s.capacity, 20000 * 63);
    nidus_bloom_free(bf);
}

/* Adds keys ns:*k, ns:*k+1, ... until an add is refused; returns why (*k is one past the refused key). */
static nidus_status add_until_refused(nidus_bloom *bf, const char *ns, uint64_t *k)
{
    nidus_status st = NIDUS_OK;
    while (st == NIDUS_OK)
        st = nidus_bloom_add_hash(bf, h_of(ns, (*k)++), NULL);
    return st;
}

static void test_bloom_limits_and_arguments(void **state)
{
    (void)state;
    nidus_bloom *bf = NULL;
    nidus_bloom_params p = {.capacity = 0, .error_rate = 0.01};
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_INVALID_ARGUMENT);
    p.capacity = 10;
    p.error_rate = 1.0;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_INVALID_ARGUMENT);
    p.error_rate = 0.01;
    p.expansion = NIDUS_BLOOM_MAX_EXPANSION + 1;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_INVALID_ARGUMENT);
    p.expansion = 1;
    p.capacity = UINT64_C(1) << 60;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_TOO_LARGE);
    assert_null(bf);
    /* max_layers: growth stops, nothing lost */
    p = (nidus_bloom_params){.capacity = 100, .error_rate = 0.01, .expansion = 1, .max_layers = 3};
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    uint64_t k = 0;
    assert_int_equal(add_until_refused(bf, "lim", &k), NIDUS_ERR_LIMIT_TABLES);
    for (uint64_t j = 0; j + 1 < k; j++)
        assert_true(nidus_bloom_contains_hash(bf, h_of("lim", j)));
    assert_int_equal(nidus_bloom_clear(bf), NIDUS_OK);
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_int_equal(s.layers, 1);
    assert_int_equal(s.items, 0);
    nidus_bloom_free(bf);
    /* max_memory */
    p = (nidus_bloom_params){.capacity = 1000, .error_rate = 0.01, .expansion = 2, .max_memory = 20000};
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    assert_int_equal(add_until_refused(bf, "mem", &k), NIDUS_ERR_LIMIT_MEMORY);
    nidus_bloom_free(bf);
}

/* ---- limits are checked before the allocation they guard ---- */

/* An allocator that fails the test when asked for more than `limit` bytes at once. */
typedef struct limit_ctx {
    size_t limit, biggest;
} limit_ctx;

static void limit_check(limit_ctx *c, size_t n)
{
    if (n > c->biggest)
        c->biggest = n;
    if (n > c->limit)
        fail_msg("asked the allocator for %zu bytes, past the limit of %zu", n, c->limit);
}
static void *limit_malloc(void *c, size_t n) { limit_check(c, n); return malloc(n); }
static void *limit_calloc(void *c, size_t k, size_t n)
{
    limit_check(c, k * n);
    return calloc(k, n);
}
static void *limit_realloc(void *c, void *p, size_t n) { limit_check(c, n); return realloc(p, n); }
static void limit_free(void *c, void *p) { (void)c; free(p); }

static void test_memory_limit_checked_before_allocating(void **state)
{
    (void)state;
    for (unsigned layout = 0; layout <= NIDUS_BLOOM_LAYOUT_BLOCKED; layout++) {
        limit_ctx ctx = {.limit = 1 << 20};
        nidus_allocator hook = {limit_malloc, limit_calloc, limit_realloc, limit_free, &ctx};
        /* a first layer far past max_memory (and past what the allocator allows): refused before asking */
        nidus_bloom_params p = {.capacity = UINT64_C(1) << 32, .error_rate = 1e-6, .expansion = 2,
                                .max_memory = ctx.limit, .allocator = &hook, .layout = layout};
        nidus_bloom *bf = NULL;
        assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_LIMIT_MEMORY);
        assert_null(bf);
        assert_int_equal(ctx.biggest, 0);
        /* growth: each step checks what max_memory leaves before asking for the new layer */
        p.capacity = 1000;
        p.expansion = 4;
        assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
        uint64_t k = 0;
        assert_int_equal(add_until_refused(bf, "lim", &k), NIDUS_ERR_LIMIT_MEMORY);
        nidus_bloom_stats s;
        nidus_bloom_get_stats(bf, &s);
        assert_true(s.layers >= 3);
        assert_true(s.memory_bytes - sizeof(struct nidus_bloom) - sizeof(struct nidus_bloom_more) -
                        s.layers * sizeof(nidus_bloom_layer) <= ctx.limit);
        for (uint64_t j = 0; j + 1 < k; j++)
            assert_true(nidus_bloom_contains_hash(bf, h_of("lim", j)));
        /* what it saved loads again under the same limit */
        size_t len = (size_t)nidus_bloom_encoded_size(bf), w;
        uint8_t *buf = malloc(len);
        assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
        nidus_bloom *back = NULL;
        assert_int_equal(nidus_bloom_decode(buf, w, &hook, &back), NIDUS_OK);
        nidus_bloom_free(back);
        free(buf);
        nidus_bloom_free(bf);
    }
}

/* ---- counting Bloom ---- */

static nidus_counting_bloom *counting(uint64_t capacity, double error)
{
    nidus_counting_bloom_params p = {.capacity = capacity, .error_rate = error, .seed = test_seed()};
    nidus_counting_bloom *cb = NULL;
    assert_int_equal(nidus_counting_bloom_new(&p, &cb), NIDUS_OK);
    return cb;
}

static void test_counting_error_at_capacity_meets_target(void **state)
{
    (void)state;
    const double targets[] = {0.1, 0.01, 0.001, 0.0001};
    for (size_t t = 0; t < 4; t++) {
        const uint64_t n = 50000, trials = test_trials(2000000);
        nidus_counting_bloom *cb = counting(n, targets[t]);
        for (uint64_t k = 0; k < n; k++)
            assert_int_equal(nidus_counting_bloom_add_hash(cb, h_of("in", k)), NIDUS_OK);
        for (uint64_t k = 0; k < n; k++)
            assert_true(nidus_counting_bloom_contains_hash(cb, h_of("in", k)));
        /* the batched call answers as the single one does */
        static uint64_t hs[4096];
        static bool batch[4096];
        for (uint64_t k = 0; k < 4096; k++)
            hs[k] = h_of(k % 2 ? "in" : "absent", k);
        nidus_counting_bloom_contains_many_hash(cb, hs, 4096, batch);
        for (uint64_t k = 0; k < 4096; k++)
            assert_int_equal(batch[k], nidus_counting_bloom_contains_hash(cb, hs[k]));
        double rate = measure(counting_has, cb, trials);
        nidus_counting_bloom_stats s;
        nidus_counting_bloom_get_stats(cb, &s);
        printf("# counting, target %.4f%%: measured %.4f%%, %.2f bits/item, k=%u\n", 100 * targets[t],
               100 * rate, s.bits_per_item, s.hashes);
        assert_true(rate <= test_rate_ceiling(targets[t], (double)trials));
        nidus_counting_bloom_free(cb);
    }
}

#define POOL 2000

static void test_counting_model(void **state)
{
    (void)state;
    nidus_counting_bloom *cb = counting(1500, 0.01);
    static uint32_t model[POOL];
    memset(model, 0, sizeof model);
    uint64_t rng = test_seed(), total = 0;
    for (int step = 0; step < 40000; step++) {
        uint64_t r = test_splitmix(&rng);
        uint64_t k = r % POOL;
        if ((r >> 40) % 3 == 0)
            k %= 20; /* some keys many times: counters saturate */
        uint64_t h = h_of("m", k);
        switch ((r >> 20) % 4) {
        case 0:
        case 1:
            assert_int_equal(nidus_counting_bloom_add_hash(cb, h), NIDUS_OK);
            model[k]++, total++;
            break;
        case 2:
            if (model[k]) { /* only remove what was added: the documented contract */
                assert_int_equal(nidus_counting_bloom_remove_hash(cb, h), NIDUS_OK);
                model[k]--, total--;
            }
            break;
        default: {
            unsigned c = nidus_counting_bloom_count_hash(cb, h);
            assert_true(c >= (model[k] < 15 ? model[k] : 15));
        }
        }
        if (step % 2000 == 0)
            for (uint64_t j = 0; j < POOL; j++)
                if (model[j])
                    assert_true(nidus_counting_bloom_contains_hash(cb, h_of("m", j))); /* never a false negative */
    }
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(cb, &s);
    assert_int_equal(s.items, total);
    assert_true(s.saturated > 0);
    nidus_counting_bloom_free(cb);
}

static void test_counting_saturates_and_never_wraps(void **state)
{
    (void)state;
    nidus_counting_bloom *cb = counting(1000, 0.01);
    for (int k = 0; k < 40; k++)
        assert_int_equal(nidus_counting_bloom_add(cb, "hot", 3), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_count(cb, "hot", 3), 15);
    for (int k = 0; k < 40; k++)
        assert_int_equal(nidus_counting_bloom_remove(cb, "hot", 3), NIDUS_OK);
    /* its counters stayed at 15: still present, never a wrap to 0 */
    assert_int_equal(nidus_counting_bloom_count(cb, "hot", 3), 15);
    assert_true(nidus_counting_bloom_contains(cb, "hot", 3));
    /* a key never added, on zero counters: refused, nothing changes */
    assert_int_equal(nidus_counting_bloom_remove(cb, "cold", 4), NIDUS_ERR_NOT_FOUND);
    assert_int_equal(nidus_counting_bloom_add(cb, "warm", 4), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_remove(cb, "warm", 4), NIDUS_OK);
    assert_false(nidus_counting_bloom_contains(cb, "warm", 4));
    assert_int_equal(nidus_counting_bloom_clear(cb), NIDUS_OK);
    assert_false(nidus_counting_bloom_contains(cb, "hot", 3));
    nidus_counting_bloom_free(cb);
}

/* ---- encodings ---- */

typedef struct kind_ops {
    const char *name;
    void *(*make)(void);
    uint64_t (*size)(const void *);
    nidus_status (*encode)(const void *, void *, size_t, size_t *);
    nidus_status (*decode)(const void *, size_t, void **);
    nidus_status (*view)(const void *, size_t, void **);
    nidus_status (*dump)(const void *, uint64_t, void *, size_t, size_t *, uint64_t *);
    nidus_status (*load)(void **, const void *, size_t);
    bool (*loading)(const void *);
    bool (*has)(const void *, uint64_t);
    nidus_status (*add)(void *, uint64_t);
    nidus_status (*save)(const void *, const char *);
    nidus_status (*map)(const char *, void **);
    void (*destroy)(void *);
} kind_ops;

static void *make_bloom(void)
{
    nidus_bloom *bf = bloom(300, 0.01, 2);
    for (uint64_t k = 0; k < 1000; k++) /* three layers */
        nidus_bloom_add_hash(bf, h_of("in", k), NULL);
    return bf;
}
static void *make_counting(void)
{
    nidus_counting_bloom *cb = counting(500, 0.01);
    for (uint64_t k = 0; k < 600; k++)
        nidus_counting_bloom_add_hash(cb, h_of("in", k % 400));
    return cb;
}
static uint64_t b_size(const void *f) { return nidus_bloom_encoded_size(f); }
static nidus_status b_encode(const void *f, void *b, size_t c, size_t *w) { return nidus_bloom_encode(f, b, c, w); }
static nidus_status b_decode(const void *b, size_t n, void **o) { return nidus_bloom_decode(b, n, NULL, (nidus_bloom **)o); }
static nidus_status b_view(const void *b, size_t n, void **o) { return nidus_bloom_view(b, n, NULL, (nidus_bloom **)o); }
static nidus_status b_dump(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *nx) { return nidus_bloom_dump_chunk(f, c, b, cap, l, nx); }
static nidus_status b_load(void **f, const void *c, size_t n) { return nidus_bloom_load_chunk((nidus_bloom **)f, c, n, 0, NULL); }
static bool b_loading(const void *f) { return nidus_bloom_loading(f); }
static nidus_status b_add(void *f, uint64_t h) { return nidus_bloom_add_hash(f, h, NULL); }
static nidus_status b_save(const void *f, const char *p) { return nidus_bloom_save_file(f, p); }
static nidus_status b_map(const char *p, void **o) { return nidus_bloom_map_file(p, NULL, (nidus_bloom **)o); }
static void b_free(void *f) { nidus_bloom_free(f); }
static uint64_t c_size(const void *f) { return nidus_counting_bloom_encoded_size(f); }
static nidus_status c_encode(const void *f, void *b, size_t c, size_t *w) { return nidus_counting_bloom_encode(f, b, c, w); }
static nidus_status c_decode(const void *b, size_t n, void **o) { return nidus_counting_bloom_decode(b, n, NULL, (nidus_counting_bloom **)o); }
static nidus_status c_view(const void *b, size_t n, void **o) { return nidus_counting_bloom_view(b, n, NULL, (nidus_counting_bloom **)o); }
static nidus_status c_dump(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *nx) { return nidus_counting_bloom_dump_chunk(f, c, b, cap, l, nx); }
static nidus_status c_load(void **f, const void *c, size_t n) { return nidus_counting_bloom_load_chunk((nidus_counting_bloom **)f, c, n, 0, NULL); }
static bool c_loading(const void *f) { return nidus_counting_bloom_loading(f); }
static nidus_status c_add(void *f, uint64_t h) { return nidus_counting_bloom_add_hash(f, h); }
static nidus_status c_save(const void *f, const char *p) { return nidus_counting_bloom_save_file(f, p); }
static nidus_status c_map(const char *p, void **o) { return nidus_counting_bloom_map_file(p, NULL, (nidus_counting_bloom **)o); }
static void c_free(void *f) { nidus_counting_bloom_free(f); }

static const kind_ops kinds[] = {
    {"bloom", make_bloom, b_size, b_encode, b_decode, b_view, b_dump, b_load, b_loading, bloom_has, b_add, b_save,
     b_map, b_free},
    {"counting", make_counting, c_size, c_encode, c_decode, c_view, c_dump, c_load, c_loading, counting_has, c_add,
     c_save, c_map, c_free},
};

static uint8_t *encode_with(const kind_ops *o, const void *f, size_t *len)
{
    size_t size = (size_t)o->size(f);
    uint8_t *buf = malloc(size);
    assert_int_equal(o->encode(f, buf, size - 1, len), NIDUS_ERR_TOO_LARGE);
    assert_int_equal(o->encode(f, buf, size, len), NIDUS_OK);
    assert_int_equal(*len, size);
    return buf;
}

static void assert_same_answers(const kind_ops *o, const void *a, const void *b)
{
    for (uint64_t k = 0; k < 1000; k++) {
        assert_int_equal(o->has(a, h_of("in", k)), o->has(b, h_of("in", k)));
        assert_int_equal(o->has(a, h_of("out", k)), o->has(b, h_of("out", k)));
    }
}

static void test_codec_round_trips_views_and_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        const kind_ops *o = &kinds[i];
        void *f = o->make(), *back = NULL, *view = NULL;
        size_t len, len2;
        uint8_t *buf = encode_with(o, f, &len);
        assert_int_equal(o->decode(buf, len, &back), NIDUS_OK);
        assert_same_answers(o, f, back);
        uint8_t *again = encode_with(o, back, &len2);
        assert_int_equal(len, len2);
        assert_memory_equal(buf, again, len);
        assert_int_equal(o->view(buf, len, &view), NIDUS_OK);
        assert_same_answers(o, f, view);
        assert_int_equal(o->add(view, h_of("new", 1)), NIDUS_ERR_READ_ONLY);
        assert_int_equal(o->add(back, h_of("new", 1)), NIDUS_OK);
        /* the other kinds' decoders refuse it */
        nidus_cuckoo *cf;
        assert_int_equal(nidus_cuckoo_decode(buf, len, NULL, &cf), NIDUS_ERR_UNSUPPORTED);
        void *other;
        assert_int_equal(kinds[1 - i].decode(buf, len, &other), NIDUS_ERR_UNSUPPORTED);
        nidus_kind kind;
        assert_int_equal(nidus_codec_peek(buf, len, &kind), NIDUS_OK);
        assert_int_equal(kind, i == 0 ? NIDUS_KIND_BLOOM : NIDUS_KIND_COUNTING_BLOOM);
        /* every flipped byte and every truncation is refused */
        for (size_t at = 0; at < len; at += (at < 300 ? 1 : 97)) {
            buf[at] ^= 0x10;
            assert_int_not_equal(o->decode(buf, len, &other), NIDUS_OK);
            buf[at] ^= 0x10;
        }
        for (size_t cut = 0; cut < len; cut += (cut < 300 ? 1 : 97))
            assert_int_not_equal(o->decode(buf, cut, &other), NIDUS_OK);
        /* files */
        char path[] = "/tmp/nidus-bloom-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        void *mapped = NULL;
        assert_int_equal(o->save(f, path), NIDUS_OK);
        assert_int_equal(o->map(path, &mapped), NIDUS_OK);
        assert_same_answers(o, f, mapped);
        o->destroy(mapped);
        unlink(path);
        free(again);
        free(buf);
        o->destroy(view);
        o->destroy(back);
        o->destroy(f);
    }
}

/* A layer's meta claiming a capacity its bits cannot hold at its error rate (more than twice the classic
 * -ln(e)/ln(2)^2 bits an entry allow) is refused, with a valid checksum: it would answer past its bound, and the
 * growth after it is sized from that capacity. 1.5 times the capacity still decodes (the bound's slack). */
static void test_layer_capacity_past_its_bits_is_refused(void **state)
{
    (void)state;
    nidus_bloom *bf = bloom(1000, 0.01, 2);
    size_t len = (size_t)nidus_bloom_encoded_size(bf), written;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_bloom_encode(bf, buf, len, &written), NIDUS_OK);
    const size_t capacity_at = NIDUS_CODEC_PREFIX_FIXED + 32 + 8; /* layer 0's meta: size u64, capacity u64 */
    uint64_t capacity = 0;
    for (int k = 0; k < 8; k++)
        capacity |= (uint64_t)buf[capacity_at + k] << (8 * k);
    assert_int_equal(capacity, 1000);
    const uint64_t claims[] = {1500, 100000, UINT64_C(361141753813009)};
    const nidus_status want[] = {NIDUS_OK, NIDUS_ERR_CORRUPT, NIDUS_ERR_CORRUPT};
    for (size_t c = 0; c < 3; c++) {
        uint8_t *forged = malloc(len);
        memcpy(forged, buf, len);
        for (int k = 0; k < 8; k++)
            forged[capacity_at + k] = (uint8_t)(claims[c] >> (8 * k));
        uint64_t h = nidus_codec_hash(forged, len - 8);
        for (int k = 0; k < 8; k++)
            forged[len - 8 + k] = (uint8_t)(h >> (8 * k));
        nidus_bloom *back = NULL;
        assert_int_equal(nidus_bloom_decode(forged, len, NULL, &back), want[c]);
        nidus_bloom_free(back);
        free(forged);
    }
    free(buf);
    nidus_bloom_free(bf);
}

static void test_chunk_round_trips_and_order(void **state)
{
    (void)state;
    static uint8_t chunk[8][NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    for (size_t i = 0; i < 2; i++) {
        const kind_ops *o = &kinds[i];
        void *f = o->make(), *back = NULL;
        size_t len[8], n = 0;
        uint64_t cursor = 0, next;
        for (;;) {
            assert_true(n < 8);
            assert_int_equal(o->dump(f, cursor, chunk[n], sizeof chunk[n], &len[n], &next), NIDUS_OK);
            if (!len[n])
                break;
            n++;
            cursor = next;
        }
        assert_int_equal(next, 0);
        assert_true(n >= 2);
        assert_int_equal(o->load(&back, chunk[1], len[1]), NIDUS_ERR_SEQUENCE); /* no header yet */
        assert_int_equal(o->load(&back, chunk[0], len[0]), NIDUS_OK);
        assert_true(o->loading(back));
        assert_false(o->has(back, h_of("in", 1)));
        assert_int_equal(o->add(back, h_of("in", 1)), NIDUS_ERR_READ_ONLY);
        assert_int_equal(o->load(&back, chunk[0], len[0]), NIDUS_ERR_SEQUENCE);
        chunk[1][len[1] / 2] ^= 1;
        assert_int_equal(o->load(&back, chunk[1], len[1]), NIDUS_ERR_CORRUPT);
        chunk[1][len[1] / 2] ^= 1;
        for (size_t k = 1; k < n; k++)
            assert_int_equal(o->load(&back, chunk[k], len[k]), NIDUS_OK);
        assert_false(o->loading(back));
        assert_same_answers(o, f, back);
        size_t la, lb;
        uint8_t *a = encode_with(o, f, &la), *b = encode_with(o, back, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
        o->destroy(back);
        o->destroy(f);
    }
}

/* The AVX2 probes (where this CPU has them) answer and set exactly what the portable ones do, for every k. */
static void test_split_probes_agree_across_isas(void **state)
{
    (void)state;
#if NIDUS_HAVE_ISA_V3
    if (nidus_isa_detect() != NIDUS_ISA_V3) {
        printf("# no AVX2 on this CPU: only the portable probes run\n");
        return;
    }
    uint64_t rng = test_seed();
    for (unsigned k = 1; k <= NIDUS_SPLIT_K_MAX; k++) {
        uint8_t a[64], b[64];
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        for (int step = 0; step < 4000; step++) {
            uint64_t x = test_splitmix(&rng);
            assert_int_equal(nidus_split_has(a, x, k), nidus_bloom_split_has_v3(a, x, k));
            if (step % 3 == 0 && step < 400) { /* fill the block gradually, so answers go both ways */
                assert_int_equal(nidus_split_set(a, x, k), nidus_bloom_split_set_v3(b, x, k));
                assert_memory_equal(a, b, sizeof a);
                assert_true(nidus_bloom_split_has_v3(a, x, k));
            }
        }
    }
#else
    printf("# not x86-64: only the portable probes exist\n");
#endif
}

/* The fast-case bits of a filter's dispatch state, after checking the state is what its state calls for. */
static unsigned fast_state(const nidus_bloom *bf)
{
    assert_true(nidus_bloom_dispatch_is_current(bf));
    return nidus_bloom_state(bf) & (NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD);
}

/* The entry points' fast case (one split layer of k = 8: bloom_kernels_impl.h), in both compiled copies, adds,
 * counts and answers exactly what the general path does, by key (1 to 24 bytes: inside and outside the fast
 * case's 4 to 16) and by hash; a k above 8 never takes it. Filter 0 runs the copy this CPU chose, filter 1 the
 * baseline copy, filter 2 the general path alone. */
static void test_fast_entry_points_agree_with_general_path(void **state)
{
    (void)state;
    const double errors[] = {0.01, 1e-5};
    uint64_t rng = test_seed();
    for (size_t e = 0; e < 2; e++) {
        const uint64_t n = 3000;
        nidus_bloom *f[3];
        for (int c = 0; c < 3; c++)
            f[c] = bloom_in(n, errors[e], 0, NIDUS_BLOOM_LAYOUT_BLOCKED);
        assert_int_equal(fast_state(f[0]), e == 0 ? NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD : 0);
        f[1]->tag &= ~(uint32_t)NIDUS_BLOOM_STATE_V3; /* the baseline copy */
        nidus_bloom_refresh_dispatch(f[1]);
        f[2]->tag = NIDUS_BLOOM_TAG_V1 | (nidus_bloom_state(f[2]) & NIDUS_BLOOM_STATE_V3); /* the general path */
        uint8_t key[24];
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = test_splitmix(&rng), h = test_splitmix(&rng);
            size_t len = 1 + (size_t)(r % 24);
            memcpy(key, &h, 8);
            memcpy(key + 8, &r, 8);
            memcpy(key + 16, &h, 8);
            bool added[3];
            for (int c = 0; c < 3; c++)
                assert_int_equal(i % 2 ? nidus_bloom_add_hash(f[c], h, &added[c]) : nidus_bloom_add(f[c], key, len, &added[c]),
                                 NIDUS_OK);
            assert_int_equal(added[0], added[1]);
            assert_int_equal(added[0], added[2]);
            for (int c = 0; c < 3; c++)
                assert_true(i % 2 ? nidus_bloom_contains_hash(f[c], h) : nidus_bloom_contains(f[c], key, len));
        }
        size_t bytes = (size_t)nidus_bloom_layer_bytes(&f[0]->first);
        for (int c = 1; c < 3; c++) {
            assert_memory_equal(f[0]->first.data, f[c]->first.data, bytes);
            assert_int_equal(f[0]->first.items, f[c]->first.items);
        }
        /* the filters are full (expansion 0): the fast case hands that to the general path */
        uint64_t extra = test_splitmix(&rng);
        if (f[0]->first.items == n)
            for (int c = 0; c < 3; c++)
                assert_int_equal(nidus_bloom_add_hash(f[c], extra, NULL),
                                 nidus_bloom_contains_hash(f[c], extra) ? NIDUS_OK : NIDUS_ERR_FULL);
        unsigned yes = 0;
        for (int i = 0; i < 20000; i++) {
            uint64_t r = test_splitmix(&rng), h = test_splitmix(&rng);
            size_t len = 1 + (size_t)(r % 24);
            memcpy(key, &h, 8);
            memcpy(key + 8, &r, 8);
            bool a = nidus_bloom_contains_hash(f[0], h), b = nidus_bloom_contains(f[0], key, len);
            yes += a;
            for (int c = 1; c < 3; c++) {
                assert_int_equal(a, nidus_bloom_contains_hash(f[c], h));
                assert_int_equal(b, nidus_bloom_contains(f[c], key, len));
            }
        }
        if (e == 0)
            assert_true(yes > 0); /* at 1 %, some absent keys answer yes too (about 200) */
        for (int c = 0; c < 3; c++)
            nidus_bloom_free(f[c]);
    }
}

/* Batched adds and lookups equal one-at-a-time calls, in the fast case and out of it (k > 8, a scalable filter that
 * grows midway, a non-scaling one that fills: the failing key's index, nothing changed from it on). */
static void test_batched_calls_equal_single_calls(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint64_t hashes[N];
    static bool fresh[N], one[N], out[N];
    uint64_t rng = test_seed();
    for (size_t k = 0; k < N; k++)
        hashes[k] = test_splitmix(&rng) % (k % 7 ? UINT64_MAX : 64); /* some repeats: not every key is new */
    const struct {
        uint64_t capacity;
        double error;
        unsigned expansion;
    } cases[] = {{N, 0.01, 0}, {N, 1e-5, 0}, {N / 4, 0.01, 2}, {N / 2, 0.01, 0}};
    for (size_t c = 0; c < 4; c++) {
        nidus_bloom *a = bloom_in(cases[c].capacity, cases[c].error, cases[c].expansion, NIDUS_BLOOM_LAYOUT_BLOCKED);
        nidus_bloom *b = bloom_in(cases[c].capacity, cases[c].error, cases[c].expansion, NIDUS_BLOOM_LAYOUT_BLOCKED);
        size_t done = 0, single = N;
        nidus_status want = NIDUS_OK;
        for (size_t k = 0; k < N && single == N; k++)
            if ((want = nidus_bloom_add_hash(b, hashes[k], &one[k])) != NIDUS_OK)
                single = k;
        assert_int_equal(nidus_bloom_add_many_hash(a, hashes, N, fresh, &done), want);
        assert_int_equal(done, single);
        assert_memory_equal(fresh, one, done);
        assert_int_equal(a->nlayers, b->nlayers);
        assert_int_equal(want, c == 3 ? NIDUS_ERR_FULL : NIDUS_OK);
        assert_true(c == 2 ? a->nlayers > 1 : a->nlayers == 1);
        for (unsigned i = 0; i < a->nlayers; i++) {
            const nidus_bloom_layer *la = nidus_bloom_layer_at(a, i), *lb = nidus_bloom_layer_at(b, i);
            assert_int_equal(la->items, lb->items);
            assert_memory_equal(la->data, lb->data, (size_t)nidus_bloom_layer_bytes(la));
        }
        for (size_t k = 0; k < N; k++)
            hashes[k] ^= k & 1 ? 0 : test_splitmix(&rng); /* half present, half absent */
        nidus_bloom_contains_many_hash(a, hashes, N, out);
        for (size_t k = 0; k < N; k++)
            assert_int_equal(out[k], nidus_bloom_contains_hash(b, hashes[k]));
        nidus_bloom_free(a);
        nidus_bloom_free(b);
    }
}

/* ---- what small filters hold ---- */

/* An allocator that knows what is live: the bytes asked for, and the bytes jemalloc (Redis's allocator) hands out
 * for them. Each block keeps its size in a 16-byte header. */
typedef struct {
    uint64_t live, classes;
} tally;

/* jemalloc's size classes up to 64 KiB: 16-byte steps to 128, then four a power of two. */
static uint64_t jemalloc_class(uint64_t n)
{
    static const uint64_t classes[] = {8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448,
                                       512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096,
                                       5120, 6144, 7168, 8192, 10240, 12288, 14336, 16384, 20480, 24576, 28672,
                                       32768, 40960, 49152, 57344, 65536};
    for (size_t i = 0; i < sizeof classes / sizeof *classes; i++)
        if (n <= classes[i])
            return classes[i];
    fail_msg("%" PRIu64 " bytes: past the table", n);
    return 0;
}

static void tally_count(tally *t, size_t n, int sign)
{
    t->live += (uint64_t)sign * n;
    t->classes += (uint64_t)sign * jemalloc_class(n);
}

static void *tally_malloc(void *c, size_t n)
{
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    *p = n;
    tally_count(c, n, 1);
    return (uint8_t *)p + 16;
}

static void *tally_calloc(void *c, size_t k, size_t n)
{
    void *p = tally_malloc(c, k * n);
    if (p)
        memset(p, 0, k * n);
    return p;
}

static void tally_free(void *c, void *p)
{
    if (!p)
        return;
    size_t *h = (size_t *)((uint8_t *)p - 16);
    tally_count(c, *h, -1);
    free(h);
}

static void *tally_realloc(void *c, void *p, size_t n)
{
    if (!p)
        return tally_malloc(c, n);
    size_t *h = (size_t *)((uint8_t *)p - 16), old = *h;
    size_t *q = realloc(h, n + 16);
    if (!q)
        return NULL;
    tally_count(c, old, -1);
    tally_count(c, n, 1);
    *q = n;
    return (uint8_t *)q + 16;
}

/* What a filter reports holding is what it has live at the allocator, in every state. */
static uint64_t memory_of(const nidus_bloom *bf)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    return s.memory_bytes;
}
#define assert_memory_true(bf, t) assert_int_equal(memory_of(bf), (t)->live)

/* The filter struct, its first layer's bits and their allocations against RedisBloom's three (its 32-byte chain,
 * one 64-byte link, the bit array) for what BF.RESERVE makes, across the capacities and errors the module's
 * bytes-per-key sweep measures (tests/redis/test_memory.py measures them in Redis), and grown as RedisBloom's
 * chain grows; and the memory a filter reports is what it holds, reserved, after a round trip through the codec
 * and through chunks, grown and cleared. */
static void test_small_filters_cost_no_more_than_redisbloom(void **state)
{
    (void)state;
    static uint8_t chunk[4][NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    /* 88 bytes: with 8 bytes of bits, a 96-byte allocation (RedisBloom: 32 + 64 + 8) */
    assert_true(sizeof(struct nidus_bloom) <= 88);
    const double errors[] = {0.1, 0.01, 0.001};
    const uint64_t caps[] = {1, 2, 4, 10, 50, 100, 500, 1000, 10000};
    for (size_t e = 0; e < 3; e++)
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
            tally t = {0, 0};
            nidus_allocator hook = {tally_malloc, tally_calloc, tally_realloc, tally_free, &t};
            nidus_bloom_params p = {.capacity = caps[c], .error_rate = errors[e], .expansion = 2,
                                    .seed = test_seed(), .allocator = &hook};
            nidus_bloom *bf = NULL;
            assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
            uint64_t redisbloom = jemalloc_class(32) + jemalloc_class(64) +
                                  jemalloc_class(redisbloom_bytes(caps[c], errors[e] / 2));
            printf("# error %g capacity %" PRIu64 ": %" PRIu64 " bytes in %" PRIu64 " (RedisBloom %" PRIu64 ")\n",
                   errors[e], caps[c], t.live, t.classes, redisbloom);
            assert_true(t.classes <= redisbloom);
            assert_memory_true(bf, &t);
            uint64_t reserved = t.live, classes = t.classes;
            fill(bf, "small", caps[c]);
            /* decoded and streamed in chunks, it is arranged and costs as the reserved one */
            size_t len = (size_t)nidus_bloom_encoded_size(bf), w;
            uint8_t *buf = malloc(len);
            assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
            nidus_bloom *back = NULL;
            assert_int_equal(nidus_bloom_decode(buf, w, &hook, &back), NIDUS_OK);
            assert_int_equal(t.live, 2 * reserved);
            assert_int_equal(t.classes, 2 * classes);
            assert_int_equal(memory_of(back), reserved);
            nidus_bloom_free(back);
            back = NULL;
            size_t n = 0, clen;
            uint64_t cursor = 0, next;
            for (;; n++) {
                assert_true(n < 4);
                assert_int_equal(nidus_bloom_dump_chunk(bf, cursor, chunk[n], sizeof chunk[n], &clen, &next), NIDUS_OK);
                if (!clen)
                    break;
                assert_int_equal(nidus_bloom_load_chunk(&back, chunk[n], clen, 0, &hook), NIDUS_OK);
                cursor = next;
            }
            assert_false(nidus_bloom_loading(back));
            assert_int_equal(memory_of(back), reserved);
            assert_int_equal(t.live, 2 * reserved);
            assert_int_equal(t.classes, 2 * classes);
            for (uint64_t k = 0; k < caps[c]; k++)
                assert_true(nidus_bloom_contains_hash(back, h_of("small", k)));
            nidus_bloom_free(back);
            /* grown (its layers behind `more`), saved and loaded, then cleared back to what it was */
            fill(bf, "more", 2 * caps[c] + 1);
            assert_true(bf->nlayers >= 2);
            assert_memory_true(bf, &t);
            /* RedisBloom's grown chain: its 32 bytes, the links' array (64 bytes each) and each link's bits */
            uint64_t chain = jemalloc_class(32) + jemalloc_class(64 * (uint64_t)bf->nlayers);
            for (unsigned i = 0; i < bf->nlayers; i++)
                chain += jemalloc_class(redisbloom_bytes(caps[c] << i, ldexp(errors[e], -(int)i - 1)));
            printf("#   grown to %u layers: %" PRIu64 " (RedisBloom %" PRIu64 ")\n", bf->nlayers, t.classes, chain);
            assert_true(t.classes <= chain);
            free(buf);
            len = (size_t)nidus_bloom_encoded_size(bf);
            buf = malloc(len);
            assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
            assert_int_equal(nidus_bloom_decode(buf, w, &hook, &back), NIDUS_OK);
            assert_int_equal(back->nlayers, bf->nlayers);
            assert_int_equal(memory_of(bf) + memory_of(back), t.live);
            for (uint64_t k = 0; k < 2 * caps[c] + 1; k++)
                assert_true(nidus_bloom_contains_hash(back, h_of("more", k)));
            nidus_bloom_free(back);
            assert_memory_true(bf, &t);
            assert_int_equal(nidus_bloom_clear(bf), NIDUS_OK);
            assert_int_equal(t.live, reserved);
            assert_int_equal(t.classes, classes);
            assert_memory_true(bf, &t);
            nidus_bloom_free(bf);
            free(buf);
            assert_int_equal(t.live, 0);
        }
}

/* The dispatch state follows the filter's state: off once it grows, lookups only on a view, off while a chunked load is
 * under way and back when it completes. */
static void test_fast_case_follows_state(void **state)
{
    (void)state;
    static uint8_t chunk[4][NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    const unsigned both = NIDUS_BLOOM_STATE_LOOKUP | NIDUS_BLOOM_STATE_ADD;
    nidus_bloom *bf = bloom_in(200, 0.01, 2, NIDUS_BLOOM_LAYOUT_BLOCKED);
    assert_int_equal(fast_state(bf), both);
    size_t len = (size_t)nidus_bloom_encoded_size(bf), w;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
    nidus_bloom *view = NULL;
    assert_int_equal(nidus_bloom_view(buf, len, NULL, &view), NIDUS_OK);
    assert_int_equal(fast_state(view), NIDUS_BLOOM_STATE_LOOKUP);
    assert_int_equal(nidus_bloom_add_hash(view, 1, NULL), NIDUS_ERR_READ_ONLY);
    nidus_bloom_free(view);
    free(buf);
    size_t n = 0, clen[4];
    uint64_t cursor = 0, next;
    for (;; n++) {
        assert_true(n < 4);
        assert_int_equal(nidus_bloom_dump_chunk(bf, cursor, chunk[n], sizeof chunk[n], &clen[n], &next), NIDUS_OK);
        if (!clen[n])
            break;
        cursor = next;
    }
    nidus_bloom *back = NULL;
    assert_int_equal(nidus_bloom_load_chunk(&back, chunk[0], clen[0], 0, NULL), NIDUS_OK);
    assert_int_equal(fast_state(back), 0);
    for (size_t k = 1; k < n; k++)
        assert_int_equal(nidus_bloom_load_chunk(&back, chunk[k], clen[k], 0, NULL), NIDUS_OK);
    assert_int_equal(fast_state(back), both);
    nidus_bloom_free(back);
    fill(bf, "grow", 600);
    assert_true(bf->nlayers > 1);
    assert_int_equal(fast_state(bf), 0);
    assert_int_equal(nidus_bloom_clear(bf), NIDUS_OK);
    assert_int_equal(fast_state(bf), both);
    nidus_bloom_free(bf);
}

/* A blocked filter whose layers tighten past what split blocks reach (1e-8) grows plain layers: every mix of
 * layouts encodes, decodes, maps, streams in chunks and keeps growing. */
static void test_mixed_layouts_round_trip(void **state)
{
    (void)state;
    static uint8_t chunk[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    nidus_bloom *bf = bloom_in(200, 4e-7, 2, NIDUS_BLOOM_LAYOUT_BLOCKED);
    fill(bf, "mix", 200 * 63); /* six layers: 2e-7 ... 1.25e-8 split, then 6.25e-9 plain */
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_int_equal(s.layers, 6);
    assert_int_equal(nidus_bloom_layer_at(bf, 0)->layout, NIDUS_LAYER_SPLIT);
    assert_int_equal(nidus_bloom_layer_at(bf, 4)->layout, NIDUS_LAYER_SPLIT);
    assert_int_equal(nidus_bloom_layer_at(bf, 5)->layout, NIDUS_LAYER_PLAIN);
    size_t len = (size_t)nidus_bloom_encoded_size(bf), w;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
    nidus_bloom *back = NULL, *view = NULL, *streamed = NULL;
    assert_int_equal(nidus_bloom_decode(buf, w, NULL, &back), NIDUS_OK);
    assert_int_equal(nidus_bloom_view(buf, w, NULL, &view), NIDUS_OK);
    uint64_t cursor = 0, next;
    size_t clen;
    while (nidus_bloom_dump_chunk(bf, cursor, chunk, sizeof chunk, &clen, &next) == NIDUS_OK && clen) {
        assert_int_equal(nidus_bloom_load_chunk(&streamed, chunk, clen, 0, NULL), NIDUS_OK);
        cursor = next;
    }
    assert_false(nidus_bloom_loading(streamed));
    for (uint64_t k = 0; k < 20000; k++) {
        uint64_t h = h_of(k % 2 ? "mix" : "out", k);
        bool want = nidus_bloom_contains_hash(bf, h);
        assert_int_equal(nidus_bloom_contains_hash(back, h), want);
        assert_int_equal(nidus_bloom_contains_hash(view, h), want);
        assert_int_equal(nidus_bloom_contains_hash(streamed, h), want);
    }
    nidus_bloom_get_stats(back, &s);
    assert_int_equal(s.layout, NIDUS_BLOOM_LAYOUT_BLOCKED);
    fill(back, "more", 200 * 64); /* grows on after decoding */
    nidus_bloom_get_stats(back, &s);
    assert_int_equal(s.layers, 7);
    nidus_bloom_free(streamed);
    nidus_bloom_free(view);
    nidus_bloom_free(back);
    nidus_bloom_free(bf);
    free(buf);
    /* layouts out of range are refused */
    nidus_bloom_params p = {.capacity = 10, .error_rate = 0.01, .layout = NIDUS_BLOOM_LAYOUT_BLOCKED + 1};
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_ERR_INVALID_ARGUMENT);
}

/* Encodings written by earlier format versions keep decoding, answering, growing and saving. */
static void test_old_encodings_still_decode(void **state)
{
    (void)state;
    char key[16];
    nidus_bloom *bf = NULL;
    assert_int_equal(nidus_bloom_decode(bloom_v1_bin, bloom_v1_bin_len, NULL, &bf), NIDUS_OK);
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    assert_int_equal(s.layers, 2);
    assert_int_equal(s.capacity, 40 + 80);
    assert_true(s.items >= 60 && s.items <= 70);
    for (int i = 0; i < 70; i++)
        assert_true(nidus_bloom_contains(bf, key, (size_t)snprintf(key, sizeof key, "k%d", i)));
    unsigned fp = 0;
    for (int i = 0; i < 1000; i++)
        fp += nidus_bloom_contains(bf, key, (size_t)snprintf(key, sizeof key, "x%d", i));
    assert_true(fp < 100); /* bound 0.05: not a filter that says yes to everything */
    for (int i = 70; i < 400; i++) /* fills the old layer, then grows in the current layout */
        assert_int_equal(nidus_bloom_add(bf, key, (size_t)snprintf(key, sizeof key, "k%d", i), NULL), NIDUS_OK);
    for (int i = 0; i < 400; i++)
        assert_true(nidus_bloom_contains(bf, key, (size_t)snprintf(key, sizeof key, "k%d", i)));
    size_t len = (size_t)nidus_bloom_encoded_size(bf), w;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_bloom_encode(bf, buf, len, &w), NIDUS_OK);
    nidus_bloom *back = NULL;
    assert_int_equal(nidus_bloom_decode(buf, w, NULL, &back), NIDUS_OK);
    for (int i = 0; i < 400; i++)
        assert_true(nidus_bloom_contains(back, key, (size_t)snprintf(key, sizeof key, "k%d", i)));
    nidus_bloom_free(back);
    nidus_bloom_free(bf);
    free(buf);

    nidus_counting_bloom *cb = NULL;
    assert_int_equal(nidus_counting_bloom_decode(counting_v1_bin, counting_v1_bin_len, NULL, &cb), NIDUS_OK);
    for (int i = 0; i < 25; i++)
        assert_true(nidus_counting_bloom_count(cb, key, (size_t)snprintf(key, sizeof key, "c%d", i)) >= 1);
    assert_true(nidus_counting_bloom_count(cb, "c0", 2) >= 2);
    assert_int_equal(nidus_counting_bloom_remove(cb, "c0", 2), NIDUS_OK);
    assert_true(nidus_counting_bloom_contains(cb, "c0", 2));
    nidus_counting_bloom_free(cb);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_error_and_bytes_at_capacity),
        cmocka_unit_test(test_blocked_error_at_capacity_meets_target),
        cmocka_unit_test(test_compact_bytes_never_above_redisbloom),
        cmocka_unit_test(test_memory_limit_checked_before_allocating),
        cmocka_unit_test(test_add_reports_new_keys_and_cardinality),
        cmocka_unit_test(test_nonscaling_filter_is_full_at_capacity),
        cmocka_unit_test(test_scalable_error_within_target_after_six_layers),
        cmocka_unit_test(test_bloom_limits_and_arguments),
        cmocka_unit_test(test_counting_error_at_capacity_meets_target),
        cmocka_unit_test(test_counting_model),
        cmocka_unit_test(test_counting_saturates_and_never_wraps),
        cmocka_unit_test(test_codec_round_trips_views_and_files),
        cmocka_unit_test(test_chunk_round_trips_and_order),
        cmocka_unit_test(test_layer_capacity_past_its_bits_is_refused),
        cmocka_unit_test(test_old_encodings_still_decode),
        cmocka_unit_test(test_mixed_layouts_round_trip),
        cmocka_unit_test(test_split_probes_agree_across_isas),
        cmocka_unit_test(test_fast_entry_points_agree_with_general_path),
        cmocka_unit_test(test_fast_case_follows_state),
        cmocka_unit_test(test_small_filters_cost_no_more_than_redisbloom),
        cmocka_unit_test(test_batched_calls_equal_single_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
