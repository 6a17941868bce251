/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters: expiry exactly as nidus/window.h states it, against a model with an explicit clock;
 * streams at capacity that never fill; counts, removes and refreshes of live copies only; clocks that go back;
 * encodings at every state, and refused when damaged. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nidus/window.h"
#include "window_filter.h"
#include "window_kernels.h"

static nidus_window *make_window(uint64_t capacity, uint64_t window, unsigned f, unsigned b)
{
    nidus_window_params p = {.capacity = capacity, .window = window, .fingerprint_bits = f, .bucket_size = b};
    nidus_window *w = NULL;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_OK);
    return w;
}

static void key_of(uint64_t n, char *buf) { snprintf(buf, 24, "k%llu", (unsigned long long)n); }

static nidus_window *round_trip(nidus_window *w)
{
    uint64_t n = nidus_window_encoded_size(w);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(nidus_window_encode(w, buf, (size_t)n, NULL), NIDUS_OK);
    nidus_window *copy = NULL;
    assert_int_equal(nidus_window_decode(buf, (size_t)n, NULL, &copy), NIDUS_OK);
    uint8_t *again = malloc((size_t)n);
    assert_non_null(again);
    assert_int_equal(nidus_window_encoded_size(copy), n);
    assert_int_equal(nidus_window_encode(copy, again, (size_t)n, NULL), NIDUS_OK);
    assert_memory_equal(buf, again, (size_t)n);
    free(buf);
    free(again);
    return copy;
}

static void test_params(void **state)
{
    (void)state;
    nidus_window *w = NULL;
    nidus_window_params p = {.capacity = 100, .window = 0};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT);
    p.window = NIDUS_WINDOW_MAX_TICKS + 1;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT);
    p = (nidus_window_params){.capacity = 0, .window = 10};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT);
    p = (nidus_window_params){.capacity = 10, .window = 10, .fingerprint_bits = 30};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT);
    p = (nidus_window_params){.capacity = 10, .window = 10, .error_rate = 1e-12};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT); /* needs more than 29 bits */
    p = (nidus_window_params){.capacity = UINT64_MAX / 4, .window = 10};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_TOO_LARGE);
    assert_null(w);
    w = make_window(1000, 1000, 0, 0);
    nidus_window_stats s;
    nidus_window_get_stats(w, 0, &s);
    assert_int_equal(s.epoch_ticks, 200);
    assert_true(s.error_bound <= 0.01);
    assert_true(s.slots >= 1200 && s.slots <= 1600); /* room for 1.2 windows of items at the design load */
    nidus_window_free(w);
    nidus_window_free(NULL);
}

/* Every key answers present through [t, t + W], and from t + 6 * ceil(W / 5) on answers as an absent key does. */
static void test_expiry_bounds(void **state)
{
    (void)state;
    const uint64_t windows[] = {1, 4, 5, 7, 1000, 3601};
    for (unsigned wi = 0; wi < sizeof windows / sizeof *windows; wi++) {
        uint64_t W = windows[wi], g = W / 5 + (W % 5 != 0);
        nidus_window *w = make_window(4000, W, 24, 4);
        char k[24];
        uint64_t t0 = 1000003, n = 2000;
        for (uint64_t i = 0; i < n; i++) {
            key_of(i, k);
            uint64_t t = t0 + i * (W + 3) / 997; /* adds spread over a few windows, in time order */
            assert_int_equal(nidus_window_add(w, k, strlen(k), t), NIDUS_OK);
            for (uint64_t j = i > 64 ? i - 64 : 0; j <= i; j++) { /* every recent key, at this moment */
                uint64_t tj = t0 + j * (W + 3) / 997;
                char kj[24];
                key_of(j, kj);
                bool live = t <= tj + W, gone = t >= tj + 6 * g;
                bool got = nidus_window_contains(w, kj, strlen(kj), t);
                if (live && !got)
                    fail_msg("W=%llu: key %llu added at %llu absent at %llu", (unsigned long long)W,
                             (unsigned long long)j, (unsigned long long)tj, (unsigned long long)t);
                if (gone && got) /* f = 24: a collision here is a 1-in-millions event */
                    fail_msg("W=%llu: key %llu added at %llu present at %llu", (unsigned long long)W,
                             (unsigned long long)j, (unsigned long long)tj, (unsigned long long)t);
            }
        }
        uint64_t last = t0 + (n - 1) * (W + 3) / 997;
        for (uint64_t j = 0; j < n; j++) { /* a reader's later clock, without writes */
            key_of(j, k);
            uint64_t tj = t0 + j * (W + 3) / 997;
            if (tj + W >= last)
                assert_true(nidus_window_contains(w, k, strlen(k), tj + W));
            assert_false(nidus_window_contains(w, k, strlen(k), tj + 6 * g > last ? tj + 6 * g : last + 6 * g));
        }
        nidus_window_free(w);
    }
}

/* A stream of `capacity` keys every window, evenly spread, runs for 40 windows without NIDUS_ERR_FULL, at each
 * bucket size, and the live count stays within a window's items. */
static void test_stream_never_fills(void **state)
{
    (void)state;
    const unsigned sizes[] = {2, 4, 8};
    for (unsigned si = 0; si < 3; si++) {
        uint64_t C = 20000, W = 60000;
        nidus_window *w = make_window(C, W, 0, sizes[si]);
        char k[24];
        for (uint64_t i = 0; i < 40 * C; i++) {
            key_of(i, k);
            uint64_t t = i * W / C;
            nidus_status st = nidus_window_add(w, k, strlen(k), t);
            if (st)
                fail_msg("b=%u: add %llu at %llu: %s", sizes[si], (unsigned long long)i, (unsigned long long)t,
                         nidus_strerror(st));
        }
        nidus_window_stats s;
        nidus_window_get_stats(w, 40 * W, &s);
        assert_true(s.live <= C + C / 5 + 1);
        assert_true(s.entries <= C + C / 5 + C / 5 + 2);
        for (uint64_t i = 40 * C - C; i < 40 * C; i++) {
            key_of(i, k);
            assert_true(nidus_window_contains(w, k, strlen(k), 40 * W - 1));
        }
        nidus_window_free(w);
    }
}

static void test_counts_removes_refresh(void **state)
{
    (void)state;
    uint64_t W = 1000; /* g = 200: expiry from the 6th epoch after the add's */
    nidus_window *w = make_window(100, W, 20, 4);
    assert_int_equal(nidus_window_add(w, "a", 1, 0), NIDUS_OK);
    assert_int_equal(nidus_window_add(w, "a", 1, 500), NIDUS_OK);
    assert_int_equal(nidus_window_add(w, "a", 1, 900), NIDUS_OK);
    assert_int_equal(nidus_window_count(w, "a", 1, 1000), 3);
    assert_int_equal(nidus_window_count(w, "a", 1, 1200), 2); /* the copy of epoch 0 has expired */
    assert_int_equal(nidus_window_remove(w, "a", 1, 1200), NIDUS_OK); /* the oldest live: 500's */
    assert_int_equal(nidus_window_count(w, "a", 1, 1200), 1);
    assert_true(nidus_window_contains(w, "a", 1, 1900));
    assert_false(nidus_window_contains(w, "a", 1, 2000));
    assert_int_equal(nidus_window_remove(w, "a", 1, 2000), NIDUS_ERR_NOT_FOUND); /* expired: not removable */
    assert_int_equal(nidus_window_remove(w, "b", 1, 2000), NIDUS_ERR_NOT_FOUND);

    bool added = false;
    assert_int_equal(nidus_window_add_unique(w, "u", 1, 3000, &added), NIDUS_OK);
    assert_true(added);
    assert_int_equal(nidus_window_add_unique(w, "u", 1, 3100, &added), NIDUS_OK);
    assert_false(added); /* same epoch */
    assert_int_equal(nidus_window_add_unique(w, "u", 1, 3900, &added), NIDUS_OK);
    assert_false(added); /* refreshed to 3900's epoch */
    assert_int_equal(nidus_window_count(w, "u", 1, 3900), 1);
    assert_true(nidus_window_contains(w, "u", 1, 4900));
    assert_false(nidus_window_contains(w, "u", 1, 5200));
    nidus_window_free(w);
}

/* A clock that goes back never expires an item early: the filter reads an earlier time as its latest. */
static void test_clock_backwards(void **state)
{
    (void)state;
    nidus_window *w = make_window(100, 1000, 20, 4);
    assert_int_equal(nidus_window_add(w, "late", 4, 50000), NIDUS_OK);
    assert_int_equal(nidus_window_add(w, "early", 5, 40000), NIDUS_OK); /* taken as 50000 */
    assert_true(nidus_window_contains(w, "early", 5, 51000));
    assert_true(nidus_window_contains(w, "late", 4, 30000)); /* a reader's clock behind: still present */
    assert_false(nidus_window_contains(w, "early", 5, 51200));
    nidus_window_free(w);
}

/* Copies far beyond a bucket pair's share (the duplicate map), stash entries, and long silences. */
static void test_duplicates_and_silence(void **state)
{
    (void)state;
    nidus_window *w = make_window(50, 1000, 12, 2);
    for (unsigned i = 0; i < 40; i++)
        assert_int_equal(nidus_window_add(w, "dup", 3, 100 + i), NIDUS_OK);
    assert_int_equal(nidus_window_count(w, "dup", 3, 200), 40);
    nidus_window *c = round_trip(w);
    assert_int_equal(nidus_window_count(c, "dup", 3, 200), 40);
    nidus_window_free(c);
    assert_int_equal(nidus_window_add(w, "x", 1, 1300), NIDUS_OK); /* epoch 6: the dup copies expired */
    assert_int_equal(nidus_window_count(w, "dup", 3, 1300), 0);
    nidus_window_stats s;
    nidus_window_get_stats(w, 1300, &s);
    assert_int_equal(s.live, 1);
    assert_int_equal(nidus_window_add(w, "y", 1, 10000000), NIDUS_OK); /* a long silence: cleared */
    nidus_window_get_stats(w, 10000000, &s);
    assert_int_equal(s.entries, 1);
    assert_false(nidus_window_contains(w, "x", 1, 10000000));
    nidus_window_free(w);
}

/* A filter under random writes, removes, sweeps and clock moves, against a model of every copy and its epoch. */
typedef struct copy {
    uint32_t key;
    uint64_t epoch;
} copy;

static void test_model(void **state)
{
    (void)state;
    uint64_t seed = test_seed();
    srand((unsigned)seed);
    uint64_t W = 700 + (uint64_t)(rand() % 600), g = W / 5 + (W % 5 != 0);
    nidus_window *w = make_window(1500, W, 22, (unsigned[]){2, 4, 8}[rand() % 3]);
    copy *model = calloc(200000, sizeof *model);
    assert_non_null(model);
    size_t n = 0;
    uint64_t now = 5000, latest = 0, fps = 0, absent_checks = 0;
    bool written = false;
    char k[24];
    for (unsigned op = 0; op < 200000; op++) {
        unsigned r = (unsigned)rand() % 100;
        if (r < 3)
            now += (uint64_t)(rand() % (int)(3 * W)); /* jumps, some past every entry's life */
        else if (r < 5)
            now -= now > 300 ? (uint64_t)(rand() % 300) : 0; /* the clock goes back */
        else
            now += (uint64_t)(rand() % 4);
        uint32_t key = (uint32_t)rand() % 3000;
        key_of(key, k);
        uint64_t e = now / g, eff = written && e < latest ? latest : e, d = e > latest ? e - latest : 0;
        (void)d;
        if (r < 45) {
            nidus_status st = nidus_window_add(w, k, strlen(k), now);
            if (st == NIDUS_ERR_FULL)
                continue;
            assert_int_equal(st, NIDUS_OK);
            written = true;
            latest = eff;
            size_t keep = 0; /* the model forgets copies no reading can see again */
            for (size_t i = 0; i < n; i++)
                if (latest - model[i].epoch < 6)
                    model[keep++] = model[i];
            n = keep;
            model[n++] = (copy){key, latest};
        } else if (r < 55) {
            uint64_t live = 0, oldest = UINT64_MAX;
            size_t at = 0;
            uint64_t ref = e > latest ? e : latest;
            for (size_t i = 0; i < n; i++)
                if (model[i].key == key && ref - model[i].epoch < 6) {
                    live++;
                    if (model[i].epoch < oldest) {
                        oldest = model[i].epoch;
                        at = i;
                    }
                }
            if (!live)
                continue; /* removing a key never added may take another's copy: the cuckoo filter's contract */
            assert_int_equal(nidus_window_remove(w, k, strlen(k), now), NIDUS_OK);
            latest = ref;
            model[at] = model[--n];
        } else if (r < 57) {
            bool done;
            assert_int_equal(nidus_window_advance(w, now, (uint64_t)(rand() % 64), &done), NIDUS_OK);
            if (written && e >= latest) {
                nidus_window_stats s;
                nidus_window_get_stats(w, now, &s);
                latest = s.latest_write / g; /* advance moves to now's epoch unless old ages are still held */
            }
        } else {
            uint64_t ref = written && e > latest ? e : latest, live = 0;
            for (size_t i = 0; i < n; i++)
                live += model[i].key == key && ref - model[i].epoch < 6;
            uint64_t got = nidus_window_count(w, k, strlen(k), now);
            bool has = nidus_window_contains(w, k, strlen(k), now);
            if (got < live || (live && !has))
                fail_msg("seed %llu op %u: key %u at %llu: %llu live copies, count %llu, contains %d",
                         (unsigned long long)seed, op, key, (unsigned long long)now, (unsigned long long)live,
                         (unsigned long long)got, has);
            if (!live) {
                absent_checks++;
                fps += has;
            }
        }
        if (op % 50000 == 49999) {
            nidus_window *c = round_trip(w);
            nidus_window_free(w);
            w = c;
        }
    }
    printf("seed %llu: W %llu, %llu absent checks, %llu false positives\n", (unsigned long long)seed,
           (unsigned long long)W, (unsigned long long)absent_checks, (unsigned long long)fps);
    assert_true(fps * 1000 <= absent_checks + 1000); /* f = 22: a handful at most */
    free(model);
    nidus_window_free(w);
}

/* The same calls give the same bytes; damaged encodings are refused, never read out of bounds. */
static void test_encoding(void **state)
{
    (void)state;
    nidus_window *a = make_window(3000, 5000, 0, 0), *b = make_window(3000, 5000, 0, 0);
    nidus_window *empty = round_trip(a);
    nidus_window_free(empty);
    char k[24];
    for (uint64_t i = 0; i < 6000; i++) {
        key_of(i % 4000, k);
        uint64_t t = 100000 + i * 3;
        nidus_status sa = nidus_window_add(a, k, strlen(k), t), sb = nidus_window_add(b, k, strlen(k), t);
        assert_int_equal(sa, sb);
        if (i % 7 == 0) {
            assert_int_equal(nidus_window_remove(a, k, strlen(k), t), nidus_window_remove(b, k, strlen(k), t));
        }
    }
    uint64_t n = nidus_window_encoded_size(a);
    assert_int_equal(n, nidus_window_encoded_size(b));
    uint8_t *ea = malloc((size_t)n), *eb = malloc((size_t)n);
    assert_int_equal(nidus_window_encode(a, ea, (size_t)n, NULL), NIDUS_OK);
    assert_int_equal(nidus_window_encode(b, eb, (size_t)n, NULL), NIDUS_OK);
    assert_memory_equal(ea, eb, (size_t)n);
    assert_int_equal(nidus_window_encode(a, ea, (size_t)n - 1, NULL), NIDUS_ERR_TOO_LARGE);
    nidus_window *c = round_trip(a);
    for (uint64_t i = 0; i < 4000; i++) {
        key_of(i, k);
        assert_int_equal(nidus_window_count(a, k, strlen(k), 118000), nidus_window_count(c, k, strlen(k), 118000));
    }
    nidus_window_free(c);
    uint64_t seed = test_seed();
    srand((unsigned)seed);
    for (unsigned trial = 0; trial < 2000; trial++) {
        memcpy(eb, ea, (size_t)n);
        size_t at = (size_t)rand() % (size_t)n;
        eb[at] ^= (uint8_t)(1u << (rand() % 8));
        nidus_window *d = NULL;
        nidus_status st = nidus_window_decode(eb, (size_t)n, NULL, &d);
        if (st == NIDUS_OK)
            fail_msg("seed %llu: a flipped bit at %zu decoded", (unsigned long long)seed, at);
        assert_null(d);
        assert_int_not_equal(nidus_window_decode(ea, (size_t)(rand() % (int)n), NULL, &d), NIDUS_OK);
    }
    free(ea);
    free(eb);
    nidus_window_free(a);
    nidus_window_free(b);
}

/* Every answer of w at `now` through its kernel (single by hash and by key, batched both ways), in each compiled
 * copy the CPU runs, equals the general lookup's, for keys from..to. */
static void assert_kernels_agree(nidus_window *w, uint64_t from, uint64_t to, uint64_t now)
{
    uint64_t n = to - from;
    uint64_t *hashes = malloc(n * sizeof *hashes);
    char (*keys)[24] = malloc(n * sizeof *keys);
    const void **kp = malloc(n * sizeof *kp);
    size_t *lens = malloc(n * sizeof *lens);
    bool *many = malloc(n * sizeof *many), *many_keys = malloc(n * sizeof *many_keys);
    assert_true(hashes && keys && kp && lens && many && many_keys);
    for (uint64_t k = 0; k < n; k++) {
        key_of(from + k, keys[k]);
        kp[k] = keys[k];
        lens[k] = strlen(keys[k]);
        hashes[k] = nidus_window_hash(w, kp[k], lens[k]);
    }
    uint8_t chosen = w->kernel, chosen_one = w->kernel_one;
    uint8_t copies[2] = {chosen, (uint8_t)(chosen & ~NIDUS_ISA_V3)};
    for (unsigned c = 0; c < 2; c++) {
        w->kernel = copies[c];
        w->kernel_one = w->ngrown ? NIDUS_WKERNEL_GENERAL : copies[c];
        nidus_window_contains_many_hash(w, hashes, n, now, many);
        nidus_window_contains_many(w, kp, lens, n, now, many_keys);
        for (uint64_t k = 0; k < n; k++) {
            bool want = nidus_window_contains_general(w, hashes[k], now);
            if (nidus_window_contains_hash(w, hashes[k], now) != want || many[k] != want || many_keys[k] != want ||
                nidus_window_contains(w, kp[k], lens[k], now) != want)
                fail_msg("kernel %u, key %llu at %llu: the general lookup says %d", copies[c],
                         (unsigned long long)(from + k),
                         (unsigned long long)now, want);
        }
    }
    w->kernel = chosen;
    w->kernel_one = chosen_one;
    free(hashes);
    free(keys);
    free(kp);
    free(lens);
    free(many);
    free(many_keys);
}

/* The lookup kernels (one-word buckets whole or at a bit offset, both compiled copies, single and batched) answer
 * as the general lookup at every time a filter is read at: inside the latest write's epoch, the next one, later
 * ones (the general path), with expired entries still unswept, duplicates in the overflow map, before any write.
 * Short fingerprints make collisions with live and dead entries common. */
static void test_kernels_agree(void **state)
{
    (void)state;
    /* f, b, capacity (from 300,000 the table reaches past the offsets' reach: kernels that never reduce them) */
    const unsigned shapes[][3] = {{4, 4, 3000},  {6, 4, 3000},  {10, 4, 3000},   {13, 4, 3000},  {8, 2, 3000},
                                  {20, 2, 3000}, {20, 4, 3000}, {10, 4, 300000}, {13, 4, 300000}};
    unsigned held = 0; /* sweep steps that left the clock's epoch past the latest write's */
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        uint64_t n = shapes[sh][2], window = 2 * n, g = nidus_window_epoch_ticks(window), now = 1000000;
        nidus_window *w = make_window(n, window, shapes[sh][0], shapes[sh][1]);
        uint64_t from = n > 10000 ? n - 20000 : 0, to = n > 10000 ? n + n / 4 + 10000 : 3 * n;
        assert_kernels_agree(w, from, to, now); /* never written */
        char key[24];
        uint64_t full = 0;
        uint64_t adds = n > 10000 ? n + n / 4 : 2 * n; /* past a window: expired entries, some unswept */
        for (uint64_t k = 0; k < adds; k++) {
            key_of(k, key);
            now += window / n;
            nidus_status st = nidus_window_add(w, key, strlen(key), now);
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_FULL); /* 4-bit fingerprints: colliding copies */
            full += st == NIDUS_ERR_FULL;
        }
        assert_true(full < n / 20);
        assert_int_equal(w->table.offset_wraps, n < 300000);
        if (w->kernel) /* the kernels serve these times, with an overflow map or not */
            assert_true(nidus_window_kernel_serves(w, now) && nidus_window_kernel_serves(w, now + g));
        for (uint64_t later = 0; later < 8; later++)
            assert_kernels_agree(w, from, to, now + later * g); /* the latest window, expired keys, absent ones */
        if (n < 300000) { /* sweep steps without writes, some leaving old ages held (the clock's epoch past the
                           * latest write's): the kernels serve that epoch and the next, and agree */
            size_t len = (size_t)nidus_window_encoded_size(w), wrote;
            void *buf = malloc(len);
            nidus_window *c = NULL;
            assert_non_null(buf);
            assert_int_equal(nidus_window_encode(w, buf, len, &wrote), NIDUS_OK);
            assert_int_equal(nidus_window_decode(buf, wrote, NULL, &c), NIDUS_OK);
            free(buf);
            for (uint64_t later = 1; later < 8; later++) {
                bool done;
                uint64_t t = now + later * g + g / 3;
                assert_int_equal(nidus_window_advance(c, t, c->table.shape.buckets / 7, &done), NIDUS_OK);
                held += nidus_window_epoch_of(c, c->latest_tick) != c->latest;
                if (c->kernel)
                    assert_true(nidus_window_kernel_serves(c, t) && nidus_window_kernel_serves(c, t + g));
                assert_kernels_agree(c, from, to, t);
                assert_kernels_agree(c, from, to, t + g);
                assert_kernels_agree(c, from, to, now); /* a clock gone back */
            }
            nidus_window_free(c);
        }
        for (uint64_t k = adds - n / 2; k < adds; k += 499) { /* duplicates: the overflow map, asked by the kernels */
            key_of(k, key);
            for (unsigned d = 0; d < 2 * shapes[sh][1]; d++) {
                nidus_status st = nidus_window_add(w, key, strlen(key), now);
                assert_true(st == NIDUS_OK || st == NIDUS_ERR_FULL);
            }
        }
        assert_true(w->table.overflow.used > 0);
        if (w->kernel)
            assert_true(nidus_window_kernel_serves(w, now));
        assert_kernels_agree(w, from, to, now);
        nidus_window_free(w);
    }
    assert_true(held > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_expiry_bounds),
        cmocka_unit_test(test_stream_never_fills),
        cmocka_unit_test(test_counts_removes_refresh),
        cmocka_unit_test(test_clock_backwards),
        cmocka_unit_test(test_duplicates_and_silence),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_encoding),
        cmocka_unit_test(test_kernels_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
