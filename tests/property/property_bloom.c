/* SPDX-License-Identifier: BSD-3-Clause */
/* Property episodes for the Bloom family. Scalable Bloom: a set of the keys added; after every step no key of
 * the set is missing, the encoding decodes and re-encodes to the same bytes, a failed add leaves it
 * byte-identical, chunks and views agree, and every filter's cached dispatch state (its tag) is the one its state
 * calls for, in every state visited (made, grown, cleared, decoded, loading, loaded). Counting Bloom: a multiset, remove only what was added, count never
 * below min(true count, 15). */
#include "property.h"

#include "bloom_filter.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SCALABLE, COUNTING } kind;

typedef struct run {
    prop_rng r;
    prop_alloc alloc;
    kind kind;
    nidus_bloom *bf;
    nidus_counting_bloom *cb;
    unsigned expansion;
    uint64_t salt, universe, step;
    uint32_t *model;
    prop_bytes enc, scratch, scratch2;
} run;

static void encode_into(run *R, prop_bytes *out, const void *filter)
{
    bool armed = R->alloc.armed;
    R->alloc.armed = false;
    uint64_t n = R->kind == SCALABLE ? nidus_bloom_encoded_size(filter) : nidus_counting_bloom_encoded_size(filter);
    prop_bytes_reserve(out, (size_t)n);
    size_t written = 0;
    nidus_status st = R->kind == SCALABLE ? nidus_bloom_encode(filter, out->p, out->cap, &written)
                                          : nidus_counting_bloom_encode(filter, out->p, out->cap, &written);
    PROP_CHECK(st == NIDUS_OK && written == n);
    out->n = written;
    R->alloc.armed = armed;
}

static const void *filter(const run *R) { return R->kind == SCALABLE ? (const void *)R->bf : (const void *)R->cb; }

static bool contains(const run *R, const void *f, uint64_t id)
{
    prop_keybuf k = prop_key(R->salt, id);
    return R->kind == SCALABLE ? nidus_bloom_contains(f, k.b, k.n) : nidus_counting_bloom_contains(f, k.b, k.n);
}

static void free_filter(const run *R, void *f)
{
    if (R->kind == SCALABLE)
        nidus_bloom_free(f);
    else
        nidus_counting_bloom_free(f);
}

static nidus_status decode(run *R, const prop_bytes *b, const nidus_allocator *a, void **out)
{
    return R->kind == SCALABLE ? nidus_bloom_decode(b->p, b->n, a, (nidus_bloom **)out)
                               : nidus_counting_bloom_decode(b->p, b->n, a, (nidus_counting_bloom **)out);
}

/* A stale dispatch state would answer from the wrong layer (or inline code from a filter it no longer fits). */
static void check_dispatch(const run *R, const void *f)
{
    if (R->kind == SCALABLE)
        PROP_CHECK(nidus_bloom_dispatch_is_current(f));
}

static void check_state(run *R, bool unchanged, uint64_t touched)
{
    check_dispatch(R, filter(R));
    encode_into(R, &R->scratch, filter(R));
    if (unchanged)
        PROP_CHECK(R->scratch.n == R->enc.n && memcmp(R->scratch.p, R->enc.p, R->enc.n) == 0);
    void *copy = NULL;
    R->alloc.armed = false;
    PROP_CHECK(decode(R, &R->scratch, &R->alloc.hook, &copy) == NIDUS_OK); /* its own encoding decodes */
    check_dispatch(R, copy);
    encode_into(R, &R->scratch2, copy);
    PROP_CHECK(R->scratch2.n == R->scratch.n && memcmp(R->scratch2.p, R->scratch.p, R->scratch.n) == 0);
    free_filter(R, copy);
    if (touched != UINT64_MAX)
        PROP_CHECK(!R->model[touched] || contains(R, filter(R), touched));
    if (R->universe <= 64 || R->step % 32 == 0)
        for (uint64_t id = 0; id < R->universe; id++) {
            if (!R->model[id])
                continue;
            PROP_CHECK(contains(R, filter(R), id)); /* no false negative */
            if (R->kind == COUNTING) {
                prop_keybuf k = prop_key(R->salt, id);
                unsigned c = nidus_counting_bloom_count(R->cb, k.b, k.n);
                PROP_CHECK(c >= (R->model[id] < 15 ? R->model[id] : 15));
            }
        }
    prop_bytes t = R->enc;
    R->enc = R->scratch;
    R->scratch = t;
}

static void op_add(run *R)
{
    prop_at.op = "add";
    uint64_t id = prop_range(&R->r, 0, R->universe - 1);
    prop_keybuf k = prop_key(R->salt, id);
    bool added = false;
    R->alloc.armed = true;
    nidus_status st = R->kind == SCALABLE ? nidus_bloom_add(R->bf, k.b, k.n, &added)
                                          : nidus_counting_bloom_add(R->cb, k.b, k.n);
    R->alloc.armed = false;
    if (st == NIDUS_OK) {
        PROP_CHECK(R->kind == COUNTING || added || contains(R, R->bf, id));
        R->model[id]++;
    } else {
        PROP_CHECK(R->kind == SCALABLE);
        PROP_CHECK((st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in) || (st == NIDUS_ERR_FULL && !R->expansion) ||
                   (R->expansion && (st == NIDUS_ERR_LIMIT_TABLES || st == NIDUS_ERR_LIMIT_MEMORY ||
                                     st == NIDUS_ERR_TOO_LARGE)));
    }
    check_state(R, st != NIDUS_OK || (R->kind == SCALABLE && !added), id);
}

static void op_remove(run *R)
{
    prop_at.op = "remove";
    if (R->kind != COUNTING)
        return;
    uint64_t start = prop_range(&R->r, 0, R->universe - 1), id = UINT64_MAX;
    for (uint64_t k = 0; k < R->universe && id == UINT64_MAX; k++)
        if (R->model[(start + k) % R->universe])
            id = (start + k) % R->universe;
    if (id == UINT64_MAX)
        return;
    prop_keybuf k = prop_key(R->salt, id);
    PROP_CHECK(nidus_counting_bloom_remove(R->cb, k.b, k.n) == NIDUS_OK);
    R->model[id]--;
    check_state(R, false, UINT64_MAX);
}

static void op_contains_many(run *R)
{
    prop_at.op = "contains_many";
    uint64_t ids[32], hashes[32];
    bool out[32];
    size_t n = (size_t)prop_range(&R->r, 1, 32);
    for (size_t k = 0; k < n; k++) {
        ids[k] = prop_range(&R->r, 0, R->universe - 1);
        prop_keybuf kk = prop_key(R->salt, ids[k]);
        hashes[k] = R->kind == SCALABLE ? nidus_bloom_hash(R->bf, kk.b, kk.n)
                                        : nidus_counting_bloom_hash(R->cb, kk.b, kk.n);
    }
    if (R->kind == SCALABLE)
        nidus_bloom_contains_many_hash(R->bf, hashes, n, out);
    else
        nidus_counting_bloom_contains_many_hash(R->cb, hashes, n, out);
    for (size_t k = 0; k < n; k++)
        PROP_CHECK(out[k] == contains(R, filter(R), ids[k]));
}

/* Chunks through a loader, sometimes abandoned half way; a complete load encodes as the original. */
static void op_chunks(run *R)
{
    prop_at.op = "chunks";
    uint8_t *buf = prop_chunk_buffer(0);
    void *nf = NULL;
    bool stop_early = prop_chance(&R->r, 1, 4);
    nidus_status st = NIDUS_OK;
    for (uint64_t cursor = 0;;) {
        size_t len = 0;
        uint64_t next = 0;
        st = R->kind == SCALABLE ? nidus_bloom_dump_chunk(R->bf, cursor, buf, PROP_CHUNK_CAP, &len, &next)
                                 : nidus_counting_bloom_dump_chunk(R->cb, cursor, buf, PROP_CHUNK_CAP, &len, &next);
        PROP_CHECK(st == NIDUS_OK);
        if (len == 0)
            break;
        if (cursor > 0 && stop_early)
            break;
        R->alloc.armed = true;
        st = R->kind == SCALABLE ? nidus_bloom_load_chunk((nidus_bloom **)&nf, buf, len, 0, &R->alloc.hook)
                                 : nidus_counting_bloom_load_chunk((nidus_counting_bloom **)&nf, buf, len, 0,
                                                                   &R->alloc.hook);
        R->alloc.armed = false;
        if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in)
            break;
        PROP_CHECK(st == NIDUS_OK);
        check_dispatch(R, nf);
        cursor = next;
    }
    if (st == NIDUS_OK && !stop_early && nf) {
        PROP_CHECK(!(R->kind == SCALABLE ? nidus_bloom_loading(nf) : nidus_counting_bloom_loading(nf)));
        encode_into(R, &R->scratch2, nf);
        PROP_CHECK(R->scratch2.n == R->enc.n && memcmp(R->scratch2.p, R->enc.p, R->enc.n) == 0);
    }
    if (nf)
        free_filter(R, nf);
}

static void op_decode_swap(run *R)
{
    prop_at.op = "decode";
    void *copy = NULL;
    R->alloc.armed = true;
    nidus_status st = decode(R, &R->enc, &R->alloc.hook, &copy);
    R->alloc.armed = false;
    if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in)
        return;
    PROP_CHECK(st == NIDUS_OK);
    free_filter(R, (void *)filter(R));
    if (R->kind == SCALABLE)
        R->bf = copy;
    else
        R->cb = copy;
    check_state(R, true, UINT64_MAX);
}

static void new_filter(run *R)
{
    prop_rng *r = &R->r;
    for (;;) {
        nidus_status st;
        R->alloc.armed = true;
        if (R->kind == SCALABLE) {
            nidus_bloom_params p = {
                .capacity = prop_chance(r, 3, 4) ? prop_range(r, 1, 64) : prop_range(r, 65, 5000),
                .error_rate = 1.0 / (double)prop_range(r, 2, 10000000),
                .expansion = (unsigned)prop_range(r, 0, 4),
                .max_layers = prop_chance(r, 1, 3) ? 0 : (unsigned)prop_range(r, 1, NIDUS_BLOOM_MAX_LAYERS),
                .max_memory = prop_chance(r, 1, 2) ? prop_range(r, 64, 1 << 20) : (UINT64_C(16) << 20),
                .seed = prop_next(r),
                .allocator = &R->alloc.hook,
            };
            R->expansion = p.expansion;
            st = nidus_bloom_new(&p, &R->bf);
            snprintf(prop_at.config, sizeof prop_at.config,
                     "bloom capacity %" PRIu64 " error %g expansion %u max_layers %u max_memory %" PRIu64
                     " fail 1/%u",
                     p.capacity, p.error_rate, p.expansion, p.max_layers, p.max_memory, R->alloc.fail_one_in);
        } else {
            nidus_counting_bloom_params p = {
                .capacity = prop_chance(r, 3, 4) ? prop_range(r, 1, 64) : prop_range(r, 65, 5000),
                .error_rate = 1.0 / (double)prop_range(r, 2, 10000000),
                .seed = prop_next(r),
                .allocator = &R->alloc.hook,
            };
            st = nidus_counting_bloom_new(&p, &R->cb);
            snprintf(prop_at.config, sizeof prop_at.config, "counting capacity %" PRIu64 " error %g fail 1/%u",
                     p.capacity, p.error_rate, R->alloc.fail_one_in);
        }
        R->alloc.armed = false;
        if (st == NIDUS_OK)
            return;
        PROP_CHECK(st == NIDUS_ERR_LIMIT_MEMORY || (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in));
    }
}

static uint64_t episode(uint64_t seed, uint64_t budget, kind kind)
{
    run R = {.r = {seed}, .kind = kind};
    prop_at.family = kind == SCALABLE ? "bloom" : "counting";
    prop_at.op = "new";
    prop_at.step = 0;
    static const unsigned fail[] = {0, 0, 0, 5, 50};
    prop_alloc_init(&R.alloc, prop_next(&R.r), fail[prop_range(&R.r, 0, 4)]);
    new_filter(&R);
    R.salt = prop_next(&R.r);
    R.universe = prop_range(&R.r, 1, 400);
    R.model = calloc((size_t)R.universe, sizeof *R.model);
    if (!R.model)
        exit(2);
    uint64_t length = prop_range(&R.r, 50, 1500);
    if (length > budget)
        length = budget;
    check_state(&R, false, UINT64_MAX);
    for (R.step = 1; R.step <= length; R.step++) {
        prop_at.step = R.step;
        unsigned op = (unsigned)prop_range(&R.r, 0, 99);
        if (op < 55)
            op_add(&R);
        else if (op < 80)
            op_remove(&R);
        else if (op < 90)
            op_contains_many(&R);
        else if (op < 95)
            op_chunks(&R);
        else if (op < 99)
            op_decode_swap(&R);
        else {
            prop_at.op = "clear";
            PROP_CHECK((kind == SCALABLE ? nidus_bloom_clear(R.bf) : nidus_counting_bloom_clear(R.cb)) == NIDUS_OK);
            memset(R.model, 0, (size_t)R.universe * sizeof *R.model);
            check_state(&R, false, UINT64_MAX);
        }
    }
    free_filter(&R, (void *)filter(&R));
    prop_at.op = "free";
    PROP_CHECK(R.alloc.live == 0);
    free(R.model);
    prop_bytes_free(&R.enc);
    prop_bytes_free(&R.scratch);
    prop_bytes_free(&R.scratch2);
    return length;
}

uint64_t prop_bloom_episode(uint64_t seed, uint64_t budget) { return episode(seed, budget, SCALABLE); }
uint64_t prop_counting_episode(uint64_t seed, uint64_t budget) { return episode(seed, budget, COUNTING); }
