/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus_cuckoo_relocate and nidus_bloom_relocate: every block a filter holds is offered and may move (an active
 * defragmenter's contract), in one call or in steps of one block, and afterwards the filter answers, encodes,
 * grows and frees as before, in every form: packed (with and without side entries), forward, full, grown with
 * overflow maps; Bloom filters with their first layer inside the struct or apart, blocked layers (realigned when
 * their block moves to another alignment), grown. Old blocks are poisoned before they are freed, so a pointer left
 * behind reads garbage (and ASan, valgrind report it). */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include <nidus/nidus.h>

/* Every block carries a header: its size, the number of the move that made it, and list links, so the test can
 * copy a block it moves and check that every live block was moved. */
typedef struct node {
    struct node *prev, *next;
} node;

typedef struct block {
    node link; /* first: a node is its block */
    void *raw; /* what malloc returned: the block starts there or 16 bytes on */
    size_t size;
    unsigned long era; /* tracker.era when it was made */
    _Alignas(16) unsigned char bytes[];
} block;

typedef struct tracker {
    node head;
    unsigned long era;
    long live;
    unsigned long offers, moves;
    unsigned long stop_every; /* 0: never pause; n: pause after every n offers */
    unsigned long misalign;   /* moves so far: odd ones shift the new block by 16 bytes */
} tracker;

static tracker g_t;

static void *track(tracker *t, size_t n, bool zero, unsigned shift)
{
    unsigned char *raw = zero ? calloc(1, sizeof(block) + 16 + n) : malloc(sizeof(block) + 16 + n);
    if (!raw)
        return NULL;
    /* a shifted block starts 16 bytes further on: another alignment for the layers that align within theirs */
    block *b = (block *)(void *)(raw + shift);
    if (zero && shift)
        memset(b->bytes, 0, n);
    b->raw = raw;
    b->size = n;
    b->era = t->era;
    b->link.next = t->head.next;
    b->link.prev = &t->head;
    t->head.next->prev = &b->link;
    t->head.next = &b->link;
    t->live++;
    return b->bytes;
}

static block *block_of(void *p) { return (block *)(void *)((unsigned char *)p - offsetof(block, bytes)); }

static void untrack(tracker *t, void *p)
{
    if (!p)
        return;
    block *b = block_of(p);
    b->link.prev->next = b->link.next;
    b->link.next->prev = b->link.prev;
    t->live--;
    memset(b->bytes, 0xA5, b->size); /* poison: a stale pointer reads garbage */
    free(b->raw);
}

static unsigned shift_of(tracker *t) { return (unsigned)(t->misalign++ & 1) * 16; }

static void *t_malloc(void *ctx, size_t n) { return track(ctx, n, false, 0); }
static void *t_calloc(void *ctx, size_t n, size_t m) { return track(ctx, n * m, true, 0); }
static void t_free(void *ctx, void *p) { untrack(ctx, p); }
static void *t_realloc(void *ctx, void *p, size_t n)
{
    void *q = track(ctx, n, false, 0);
    if (q && p) {
        size_t old = block_of(p)->size;
        memcpy(q, p, old < n ? old : n);
        untrack(ctx, p);
    }
    return q;
}

static const nidus_allocator g_hook = {t_malloc, t_calloc, t_realloc, t_free, &g_t};

static void tracker_reset(void)
{
    memset(&g_t, 0, sizeof g_t);
    g_t.head.next = g_t.head.prev = &g_t.head;
}

/* The mover: always moves (to a block shifted by 16 bytes every other time), as an allocator would. */
static void *mover_move(void *ctx, void *p)
{
    tracker *t = ctx;
    t->offers++;
    block *b = block_of(p);
    void *q = track(t, b->size, false, shift_of(t));
    assert_non_null(q);
    memcpy(q, p, b->size);
    untrack(t, p);
    t->moves++;
    return q;
}

static bool mover_stop(void *ctx)
{
    tracker *t = ctx;
    return t->stop_every && t->offers % t->stop_every == 0;
}

static const nidus_mover g_mover = {mover_move, mover_stop, &g_t};

/* Every live block was made after `era` began: each one the filter holds was offered and moved. */
static void assert_all_moved(unsigned long era)
{
    for (node *n = g_t.head.next; n != &g_t.head; n = n->next)
        assert_true(((block *)(void *)n)->era >= era);
}

/* Relocates *f whole, in steps of `step` offers (0: one call), and checks that every block moved. */
typedef bool (*relocate_fn)(void **f, const nidus_mover *m, uint64_t *cursor);

static void relocate_all(relocate_fn fn, void **f, unsigned long step)
{
    unsigned long era = ++g_t.era;
    g_t.stop_every = step;
    uint64_t cursor = 0;
    unsigned calls = 0;
    while (!fn(f, &g_mover, &cursor)) {
        assert_true(cursor > 0);
        assert_true(++calls < 10000);
    }
    assert_int_equal(cursor, 0);
    if (step)
        assert_true(calls + 1 >= g_t.moves / step); /* it paused where asked */
    assert_all_moved(era);
}

static bool cuckoo_fn(void **f, const nidus_mover *m, uint64_t *c) { return nidus_cuckoo_relocate((nidus_cuckoo **)f, m, c); }
static bool bloom_fn(void **f, const nidus_mover *m, uint64_t *c) { return nidus_bloom_relocate((nidus_bloom **)f, m, c); }

typedef struct bytes {
    uint8_t *p;
    size_t n;
} bytes;

static bytes cuckoo_bytes(const nidus_cuckoo *cf)
{
    bytes b = {malloc((size_t)nidus_cuckoo_encoded_size(cf)), 0};
    assert_int_equal(nidus_cuckoo_encode(cf, b.p, (size_t)nidus_cuckoo_encoded_size(cf), &b.n), NIDUS_OK);
    return b;
}

static bytes bloom_bytes(const nidus_bloom *bf)
{
    bytes b = {malloc((size_t)nidus_bloom_encoded_size(bf)), 0};
    assert_int_equal(nidus_bloom_encode(bf, b.p, (size_t)nidus_bloom_encoded_size(bf), &b.n), NIDUS_OK);
    return b;
}

static void assert_same(bytes a, bytes b)
{
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.p, b.p, a.n);
    free(a.p);
    free(b.p);
}

static size_t key(char *buf, uint64_t i) { return test_key(buf, 32, "k", i ^ test_seed() << 24); }

/* A cuckoo filter of `capacity` (bucket size b), `n` keys added `times` times each. */
static nidus_cuckoo *cuckoo_with(uint64_t capacity, unsigned b, uint64_t n, unsigned times)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .error_rate = 0.01, .expansion = 2,
                             .seed = test_seed(), .allocator = &g_hook};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    char k[32];
    for (uint64_t i = 0; i < n; i++)
        for (unsigned t = 0; t < times; t++)
            assert_int_equal(nidus_cuckoo_add(cf, k, key(k, i)), NIDUS_OK);
    return cf;
}

static void check_cuckoo(nidus_cuckoo *cf, uint64_t n, unsigned times, unsigned long step)
{
    bytes before = cuckoo_bytes(cf);
    relocate_all(cuckoo_fn, (void **)&cf, step);
    assert_same(before, cuckoo_bytes(cf));
    char k[32];
    for (uint64_t i = 0; i < n; i++) {
        size_t len = key(k, i);
        assert_true(nidus_cuckoo_contains(cf, k, len));
        assert_int_equal(nidus_cuckoo_count(cf, k, len) >= times, true);
    }
    /* writes after the move: an add, a remove, and growth */
    for (uint64_t i = n; i < 2 * n + 50; i++)
        assert_int_equal(nidus_cuckoo_add(cf, k, key(k, i)), NIDUS_OK);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(nidus_cuckoo_remove(cf, k, key(k, i)), NIDUS_OK);
    for (uint64_t i = n; i < 2 * n + 50; i++)
        assert_true(nidus_cuckoo_contains(cf, k, key(k, i)));
    nidus_cuckoo_free(cf);
    assert_int_equal(g_t.live, 0);
}

static void test_cuckoo_every_form(void **state)
{
    (void)state;
    static const struct {
        uint64_t capacity, n;
        unsigned b, times;
    } cases[] = {
        {100, 0, 2, 1},      /* packed, empty */
        {100, 40, 2, 1},     /* packed */
        {100, 10, 2, 3},     /* packed with side entries (duplicates past their pair) */
        {100, 30, 2, 12},    /* forward: more overflow entries than the side block holds */
        {100, 600, 2, 1},    /* grown: a forward with several tables */
        {20000, 5000, 4, 1}, /* full */
        {20000, 30000, 4, 1}, /* full, grown */
        {5000, 2000, 2, 9},  /* full, overflow maps */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (unsigned long step = 0; step <= 3; step += 3) {
            tracker_reset();
            nidus_cuckoo *cf = cuckoo_with(cases[c].capacity, cases[c].b, cases[c].n, cases[c].times);
            check_cuckoo(cf, cases[c].n, cases[c].times, step ? 1 : 0);
        }
}

/* A cursor from before the filter changed stays usable: it resumes at the same position of the new structure. */
static void test_cuckoo_cursor_survives_changes(void **state)
{
    (void)state;
    tracker_reset();
    nidus_cuckoo *cf = cuckoo_with(4000, 2, 3000, 1); /* full: struct, table array, slots */
    g_t.stop_every = 1;
    uint64_t cursor = 0;
    assert_false(nidus_cuckoo_relocate(&cf, &g_mover, &cursor));
    assert_false(nidus_cuckoo_relocate(&cf, &g_mover, &cursor));
    char k[32];
    for (uint64_t i = 3000; i < 20000; i++) /* grows by several tables */
        assert_int_equal(nidus_cuckoo_add(cf, k, key(k, i)), NIDUS_OK);
    while (!nidus_cuckoo_relocate(&cf, &g_mover, &cursor))
        ;
    assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
    cursor = 1000; /* past the end: nothing offered */
    unsigned long offers = g_t.offers;
    assert_true(nidus_cuckoo_relocate(&cf, &g_mover, &cursor));
    assert_int_equal(g_t.offers, offers);
    assert_int_equal(cursor, 0);
    for (uint64_t i = 0; i < 20000; i++)
        assert_true(nidus_cuckoo_contains(cf, k, key(k, i)));
    nidus_cuckoo_free(cf);
    assert_int_equal(g_t.live, 0);
}

/* A mover that leaves everything in place changes nothing. */
static void *stay(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
    return NULL;
}

static void test_nothing_moves(void **state)
{
    (void)state;
    tracker_reset();
    nidus_cuckoo *cf = cuckoo_with(1000, 2, 3000, 1);
    nidus_cuckoo *same = cf;
    bytes before = cuckoo_bytes(cf);
    nidus_mover m = {stay, NULL, NULL};
    uint64_t cursor = 0;
    assert_true(nidus_cuckoo_relocate(&cf, &m, &cursor));
    assert_ptr_equal(cf, same);
    assert_same(before, cuckoo_bytes(cf));
    nidus_cuckoo_free(cf);
}

static nidus_bloom *bloom_with(uint64_t capacity, unsigned layout, uint64_t n)
{
    nidus_bloom_params p = {.capacity = capacity, .error_rate = 0.01, .expansion = 2, .layout = layout,
                            .seed = test_seed(), .allocator = &g_hook};
    nidus_bloom *bf;
    assert_int_equal(nidus_bloom_new(&p, &bf), NIDUS_OK);
    char k[32];
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(nidus_bloom_add(bf, k, key(k, i), NULL), NIDUS_OK);
    return bf;
}

static void test_bloom_every_form(void **state)
{
    (void)state;
    static const struct {
        uint64_t capacity, n;
        unsigned layout;
    } cases[] = {
        {100, 50, NIDUS_BLOOM_LAYOUT_COMPACT},      /* bits inside the struct's allocation */
        {100000, 5000, NIDUS_BLOOM_LAYOUT_COMPACT}, /* bits apart */
        {100, 2000, NIDUS_BLOOM_LAYOUT_COMPACT},    /* grown */
        {1000, 900, NIDUS_BLOOM_LAYOUT_BLOCKED},    /* blocked: realigned when moved */
        {100, 3000, NIDUS_BLOOM_LAYOUT_BLOCKED},    /* blocked, grown */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (unsigned long step = 0; step <= 1; step++) {
            tracker_reset();
            nidus_bloom *bf = bloom_with(cases[c].capacity, cases[c].layout, cases[c].n);
            bytes before = bloom_bytes(bf);
            relocate_all(bloom_fn, (void **)&bf, step);
            assert_same(before, bloom_bytes(bf));
            char k[32];
            for (uint64_t i = 0; i < cases[c].n; i++)
                assert_true(nidus_bloom_contains(bf, k, key(k, i)));
            for (uint64_t i = cases[c].n; i < 3 * cases[c].n; i++)
                assert_int_equal(nidus_bloom_add(bf, k, key(k, i), NULL), NIDUS_OK);
            for (uint64_t i = 0; i < 3 * cases[c].n; i++)
                assert_true(nidus_bloom_contains(bf, k, key(k, i)));
            nidus_bloom_free(bf);
            assert_int_equal(g_t.live, 0);
        }
}

/* A filter still loading chunks, and a view, are left as they are. */
static void test_loading_and_views_stay(void **state)
{
    (void)state;
    tracker_reset();
    nidus_cuckoo *cf = cuckoo_with(20000, 4, 5000, 1);
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, len;
    uint8_t *buf = malloc(cap); /* 4 MiB: on the heap, valgrind reads a frame that large as a stack switch */
    assert_non_null(buf);
    uint64_t next;
    assert_int_equal(nidus_cuckoo_dump_chunk(cf, 0, buf, cap, &len, &next), NIDUS_OK);
    nidus_cuckoo *loading = NULL;
    assert_int_equal(nidus_cuckoo_load_chunk(&loading, buf, len, 0, &g_hook), NIDUS_OK);
    free(buf);
    assert_true(nidus_cuckoo_loading(loading));
    nidus_cuckoo *same = loading;
    unsigned long offers = g_t.offers;
    uint64_t cursor = 0;
    assert_true(nidus_cuckoo_relocate(&loading, &g_mover, &cursor));
    assert_ptr_equal(loading, same);
    assert_int_equal(g_t.offers, offers);
    nidus_cuckoo_free(loading);

    bytes enc = cuckoo_bytes(cf);
    nidus_cuckoo *view;
    assert_int_equal(nidus_cuckoo_view(enc.p, enc.n, &g_hook, &view), NIDUS_OK);
    same = view;
    assert_true(nidus_cuckoo_relocate(&view, &g_mover, &cursor));
    assert_ptr_equal(view, same);
    assert_int_equal(g_t.offers, offers);
    nidus_cuckoo_free(view);
    free(enc.p);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_t.live, 0);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuckoo_every_form),
        cmocka_unit_test(test_cuckoo_cursor_survives_changes),
        cmocka_unit_test(test_nothing_moves),
        cmocka_unit_test(test_bloom_every_form),
        cmocka_unit_test(test_loading_and_views_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
