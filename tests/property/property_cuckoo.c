/* SPDX-License-Identifier: BSD-3-Clause */
/* Property episodes for the cuckoo filter: a random configuration, then random operations against an exact
 * multiset of the keys added and not removed. After every step: the encoding decodes and re-encodes to the
 * same bytes (encodings past 2 KiB: every 16th step and after structural changes), items equal the model's
 * total, no key of the model is missing and none counts fewer copies than it has (every key on universes up
 * to 64 keys; on larger ones the touched keys, and all of them every 32nd step); a failed write leaves the
 * encoding byte-identical; the kernel choice cached in the filter equals a fresh derivation; nothing leaks when
 * the episode ends. Merges of other filters, grown or not, add to the model (sibling tables for grown ones).
 * Compactions run all at once and in steps (op_compact_step), with other operations between the steps. */
#include "property.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo_dispatch.h" /* white box: the cached kernel choice; the tables' cost, as loads measure it */
#include "cuckoo_table_impl.h" /* white box: the lookup signature */

typedef struct run {
    prop_rng r;
    prop_alloc alloc;
    nidus_cuckoo_params params;
    nidus_cuckoo *cf;
    uint64_t salt, universe, total, step;
    bool sweep;          /* check every key after this step, whatever the universe */
    uint32_t *model;     /* copies of each key id added and not removed */
    prop_bytes enc;      /* the encoding after the last step */
    prop_bytes scratch;  /* the encoding being checked */
    prop_bytes scratch2; /* its re-encoding */
} run;

/* States checked with stash entries in some table, and with a table's stash at NIDUS_TABLE_STASH (reported at the
 * end of a run: the checker must reach them to test them). */
static uint64_t stash_states, stash_full_states;

uint64_t prop_cuckoo_stash_states(bool full) { return full ? stash_full_states : stash_states; }

static uint64_t merges, sibling_merges;

uint64_t prop_cuckoo_merges(bool siblings) { return siblings ? sibling_merges : merges; }

/* The lookup signature has every overflow entry's bit (one missing hides the entry: a false negative), and none
 * while the map is empty. */
static bool signature_covers_map(const nidus_table *t)
{
    const nidus_overflow *ov = &t->overflow;
    if ((t->overflow_sig == 0) != (ov->used == 0))
        return false;
    for (uint32_t e = 0; e < ov->capacity; e++)
        if (ov->entries[e].count &&
            !(t->overflow_sig & nidus_overflow_sig_bit(ov->entries[e].bucket, ov->entries[e].fingerprint)))
            return false;
    return true;
}

/* Stash entries (overflow entries of items an add could not place) in every table: within the add's limit, and
 * each beside a full pair or a duplicate's share (what the decoders accept), and in the lookup signature. */
static void check_stash(run *R)
{
    nidus_cuckoo_thawed tw;
    const nidus_cuckoo *full = nidus_cuckoo_inspect(R->cf, &tw);
    bool any = false, at_limit = false;
    for (unsigned k = 0; k < full->ntables && !full->loader; k++) {
        uint64_t n = nidus_table_stash_entries(&full->tables[k]);
        PROP_CHECK(n <= NIDUS_TABLE_STASH);
        PROP_CHECK(nidus_table_validate_overflow(&full->tables[k]) == NIDUS_OK);
        PROP_CHECK(signature_covers_map(&full->tables[k]));
        any |= n > 0;
        at_limit |= n == NIDUS_TABLE_STASH;
    }
    stash_states += any;
    stash_full_states += at_limit;
}

static uint64_t any_id(run *R) { return prop_range(&R->r, 0, R->universe - 1); }

/* A key with copies in the model, or UINT64_MAX when there is none. */
static uint64_t present_id(run *R)
{
    if (R->total == 0)
        return UINT64_MAX;
    uint64_t start = any_id(R);
    for (uint64_t k = 0; k < R->universe; k++) {
        uint64_t id = (start + k) % R->universe;
        if (R->model[id])
            return id;
    }
    return UINT64_MAX;
}

/* Encodes `cf` into `out` with allocation failures off; the encoding must succeed. */
static void encode_into(run *R, const nidus_cuckoo *cf, prop_bytes *out)
{
    bool armed = R->alloc.armed;
    R->alloc.armed = false;
    uint64_t n = nidus_cuckoo_encoded_size(cf);
    prop_bytes_reserve(out, (size_t)n);
    size_t written = 0;
    PROP_CHECK(nidus_cuckoo_encode(cf, out->p, out->cap, &written) == NIDUS_OK);
    PROP_CHECK(written == n);
    out->n = written;
    R->alloc.armed = armed;
}

static void check_key(run *R, uint64_t id)
{
    prop_keybuf k = prop_key(R->salt, id);
    uint64_t h = nidus_cuckoo_hash(R->cf, k.b, k.n); /* the key calls equal the _hash ones: op_lookup checks */
    uint64_t c = nidus_cuckoo_count_hash(R->cf, h);
    bool in = nidus_cuckoo_contains_hash(R->cf, h);
    PROP_CHECK(c >= R->model[id]);      /* count never below the true count */
    PROP_CHECK(in || R->model[id] == 0); /* no false negative */
    PROP_CHECK(in == (c > 0));           /* contains and count agree */
}

/* The properties every state must have; `unchanged`: the step failed, so its encoding must equal the last. */
static void check_state(run *R, bool unchanged, const uint64_t *touched, size_t ntouched)
{
    /* the kernel choice cached in the filter is what its state calls for (a stale one answers from the wrong
     * tables) */
    PROP_CHECK(nidus_cuckoo_dispatch_fresh(R->cf));
    encode_into(R, R->cf, &R->scratch);
    if (unchanged)
        PROP_CHECK(R->scratch.n == R->enc.n && memcmp(R->scratch.p, R->enc.p, R->enc.n) == 0);
    /* the filter's own encoding always decodes, and re-encodes to the same bytes (decoding validates every
     * bucket: on encodings past 2 KiB, every 16th step and after every structural change) */
    if (R->scratch.n <= 2048 || R->step % 16 == 0 || R->sweep) {
        R->alloc.armed = false;
        nidus_cuckoo *copy = NULL;
        PROP_CHECK(nidus_cuckoo_decode(R->scratch.p, R->scratch.n, &R->alloc.hook, &copy) == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_dispatch_fresh(copy));
        encode_into(R, copy, &R->scratch2);
        PROP_CHECK(R->scratch2.n == R->scratch.n && memcmp(R->scratch2.p, R->scratch.p, R->scratch.n) == 0);
        nidus_cuckoo_free(copy);
    }
    check_stash(R);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(R->cf, &s);
    PROP_CHECK(s.items == R->total);
    PROP_CHECK(s.tables >= 1 && s.tables <= s.max_tables);
    PROP_CHECK(s.tables == 1 || R->params.expansion > 0);
    nidus_cuckoo_compaction at; /* a running compaction's cursor is inside the tables */
    if (nidus_cuckoo_compacting(R->cf, &at))
        PROP_CHECK(at.table >= 1 && at.table < s.tables);
    for (size_t k = 0; k < ntouched; k++)
        check_key(R, touched[k]);
    if (R->universe <= 64 || R->step % 32 == 0 || R->sweep)
        for (uint64_t id = 0; id < R->universe; id++)
            if (R->model[id])
                check_key(R, id);
    R->sweep = false;
    prop_bytes t = R->enc;
    R->enc = R->scratch;
    R->scratch = t;
}

/* The failures an add may report in this configuration. */
static bool add_failure_allowed(const run *R, nidus_status st)
{
    if (st == NIDUS_ERR_NO_MEMORY)
        return R->alloc.fail_one_in != 0;
    if (st == NIDUS_ERR_FULL)
        return R->params.expansion == 0;
    return R->params.expansion > 0 &&
           (st == NIDUS_ERR_LIMIT_TABLES || st == NIDUS_ERR_LIMIT_MEMORY || st == NIDUS_ERR_TOO_LARGE);
}

static void op_add(run *R, bool unique)
{
    prop_at.op = unique ? "add_unique" : "add";
    uint64_t id = any_id(R);
    prop_keybuf k = prop_key(R->salt, id);
    bool by_hash = prop_chance(&R->r, 1, 4), added = false;
    nidus_status st;
    R->alloc.armed = true;
    if (unique)
        st = by_hash ? nidus_cuckoo_add_unique_hash(R->cf, nidus_cuckoo_hash(R->cf, k.b, k.n), &added)
                     : nidus_cuckoo_add_unique(R->cf, k.b, k.n, &added);
    else
        st = by_hash ? nidus_cuckoo_add_hash(R->cf, nidus_cuckoo_hash(R->cf, k.b, k.n))
                     : nidus_cuckoo_add(R->cf, k.b, k.n);
    R->alloc.armed = false;
    if (st == NIDUS_OK && (!unique || added)) {
        PROP_CHECK(!unique || R->model[id] == 0); /* add_unique never adds a key already present */
        R->model[id]++;
        R->total++;
    }
    if (st != NIDUS_OK)
        PROP_CHECK(add_failure_allowed(R, st));
    check_state(R, st != NIDUS_OK || (unique && !added), &id, 1);
}

static void op_remove(run *R)
{
    prop_at.op = "remove";
    uint64_t id = present_id(R);
    if (id == UINT64_MAX)
        return;
    prop_keybuf k = prop_key(R->salt, id);
    nidus_status st = prop_chance(&R->r, 1, 4) ? nidus_cuckoo_remove_hash(R->cf, nidus_cuckoo_hash(R->cf, k.b, k.n))
                                               : nidus_cuckoo_remove(R->cf, k.b, k.n);
    PROP_CHECK(st == NIDUS_OK); /* a key with copies is found */
    R->model[id]--;
    R->total--;
    check_state(R, false, &id, 1);
}

static void op_lookup(run *R)
{
    prop_at.op = "contains/count";
    uint64_t id = any_id(R);
    prop_keybuf k = prop_key(R->salt, id);
    uint64_t h = nidus_cuckoo_hash(R->cf, k.b, k.n);
    PROP_CHECK(nidus_cuckoo_contains_hash(R->cf, h) == nidus_cuckoo_contains(R->cf, k.b, k.n));
    PROP_CHECK(nidus_cuckoo_count_hash(R->cf, h) == nidus_cuckoo_count(R->cf, k.b, k.n));
    check_state(R, true, &id, 1);
}

#define BATCH_MAX 32

/* add_many must equal single adds in order: replay them on a copy decoded from the last encoding. */
static void op_add_many(run *R)
{
    prop_at.op = "add_many";
    size_t n = (size_t)prop_range(&R->r, 1, 16);
    uint64_t ids[BATCH_MAX], hashes[BATCH_MAX];
    prop_keybuf keys[BATCH_MAX];
    const void *ptrs[BATCH_MAX];
    size_t lens[BATCH_MAX];
    for (size_t k = 0; k < n; k++) {
        ids[k] = any_id(R);
        keys[k] = prop_key(R->salt, ids[k]);
        ptrs[k] = keys[k].b;
        lens[k] = keys[k].n;
        hashes[k] = nidus_cuckoo_hash(R->cf, keys[k].b, keys[k].n);
    }
    size_t added = SIZE_MAX;
    R->alloc.armed = true;
    nidus_status st = prop_chance(&R->r, 1, 2) ? nidus_cuckoo_add_many(R->cf, ptrs, lens, n, &added)
                                               : nidus_cuckoo_add_many_hash(R->cf, hashes, n, &added);
    R->alloc.armed = false;
    PROP_CHECK(st == NIDUS_OK ? added == n : added < n && add_failure_allowed(R, st));
    nidus_cuckoo *copy = NULL;
    PROP_CHECK(nidus_cuckoo_decode(R->enc.p, R->enc.n, NULL, &copy) == NIDUS_OK);
    for (size_t k = 0; k < added; k++) {
        PROP_CHECK(nidus_cuckoo_add_hash(copy, hashes[k]) == NIDUS_OK);
        R->model[ids[k]]++;
        R->total++;
    }
    encode_into(R, copy, &R->scratch2);
    nidus_cuckoo_free(copy);
    encode_into(R, R->cf, &R->scratch);
    PROP_CHECK(R->scratch.n == R->scratch2.n && memcmp(R->scratch.p, R->scratch2.p, R->scratch.n) == 0);
    check_state(R, false, ids, n);
}

static void op_contains_many(run *R)
{
    prop_at.op = "contains_many";
    size_t n = (size_t)prop_range(&R->r, 1, BATCH_MAX);
    uint64_t ids[BATCH_MAX], hashes[BATCH_MAX];
    prop_keybuf keys[BATCH_MAX];
    const void *ptrs[BATCH_MAX];
    size_t lens[BATCH_MAX];
    bool out[BATCH_MAX], out2[BATCH_MAX];
    for (size_t k = 0; k < n; k++) {
        ids[k] = prop_chance(&R->r, 1, 2) && R->total ? present_id(R) : any_id(R);
        keys[k] = prop_key(R->salt, ids[k]);
        ptrs[k] = keys[k].b;
        lens[k] = keys[k].n;
        hashes[k] = nidus_cuckoo_hash(R->cf, keys[k].b, keys[k].n);
    }
    nidus_cuckoo_contains_many(R->cf, ptrs, lens, n, out);
    nidus_cuckoo_contains_many_hash(R->cf, hashes, n, out2);
    for (size_t k = 0; k < n; k++) {
        PROP_CHECK(out[k] == nidus_cuckoo_contains(R->cf, keys[k].b, keys[k].n)); /* as single lookups */
        PROP_CHECK(out2[k] == out[k]);
        PROP_CHECK(out[k] || R->model[ids[k]] == 0);
    }
    check_state(R, true, ids, n);
}

static void op_compact(run *R)
{
    prop_at.op = "compact";
    unsigned freed = 99;
    nidus_cuckoo_stats before;
    nidus_cuckoo_get_stats(R->cf, &before);
    PROP_CHECK(nidus_cuckoo_compact(R->cf, &freed) == NIDUS_OK);
    nidus_cuckoo_stats after;
    nidus_cuckoo_get_stats(R->cf, &after);
    PROP_CHECK(after.tables + freed == before.tables);
    R->sweep = true; /* compaction moves every fingerprint it can */
    check_state(R, false, NULL, 0);
}

static uint64_t stepped_whole, stepped_states;

uint64_t prop_cuckoo_stepped_compactions(bool whole) { return whole ? stepped_whole : stepped_states; }

/* Finishes f's running compaction in steps of random budget (steps allocate nothing: no failure allowed). */
static void finish_steps(run *R, nidus_cuckoo *f)
{
    for (bool done = false; !done;) {
        R->alloc.armed = true;
        nidus_status st = nidus_cuckoo_compact_step(f, prop_range(&R->r, 1, 300), &done);
        R->alloc.armed = false;
        PROP_CHECK(st == NIDUS_OK);
    }
}

/* Stepped compaction. With none running: sometimes begin one and run it to the end in steps of random budget,
 * which must leave the bytes the all-at-once compaction leaves on a copy; else begin it (or not) and leave it
 * mid-way. With one running (begun here or by removes), writes of other operations come between its steps: a
 * copy decoded from the encoding (which carries no cursor) resumed at the cursor and finished, and a second one
 * finished in other budgets, must end in the same bytes; then the filter itself takes one step of random
 * budget, ending or not. check_state holds after each (the model's items, every key, a fresh kernel byte). */
static void op_compact_step(run *R)
{
    prop_at.op = "compact_step";
    nidus_cuckoo_compaction at;
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(R->cf, &s);
    bool running = nidus_cuckoo_compacting(R->cf, &at);
    PROP_CHECK(!running || (at.table >= 1 && at.table < s.tables && s.tables > 1));
    if (!running && prop_chance(&R->r, 1, 2)) {
        nidus_cuckoo *ref = NULL;
        PROP_CHECK(nidus_cuckoo_decode(R->enc.p, R->enc.n, NULL, &ref) == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_compact(ref, NULL) == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_compact_begin(R->cf) == NIDUS_OK);
        finish_steps(R, R->cf);
        PROP_CHECK(!nidus_cuckoo_compacting(R->cf, NULL));
        encode_into(R, ref, &R->scratch2);
        nidus_cuckoo_free(ref);
        encode_into(R, R->cf, &R->scratch);
        PROP_CHECK(R->scratch.n == R->scratch2.n && memcmp(R->scratch.p, R->scratch2.p, R->scratch.n) == 0);
        stepped_whole++;
        R->sweep = true;
        check_state(R, false, NULL, 0);
        return;
    }
    if (!running) {
        PROP_CHECK(nidus_cuckoo_compact_begin(R->cf) == NIDUS_OK);
        running = nidus_cuckoo_compacting(R->cf, &at);
        PROP_CHECK(running == (s.tables > 1));
    }
    if (running) {
        nidus_cuckoo *a = NULL, *b = NULL;
        PROP_CHECK(nidus_cuckoo_decode(R->enc.p, R->enc.n, NULL, &a) == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_decode(R->enc.p, R->enc.n, NULL, &b) == NIDUS_OK);
        PROP_CHECK(!nidus_cuckoo_compacting(a, NULL));
        PROP_CHECK(nidus_cuckoo_compact_resume(a, &at) == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_compact_resume(b, &at) == NIDUS_OK);
        finish_steps(R, a);
        bool done = false;
        while (!done)
            PROP_CHECK(nidus_cuckoo_compact_step(b, UINT64_MAX, &done) == NIDUS_OK);
        encode_into(R, a, &R->scratch);
        encode_into(R, b, &R->scratch2);
        PROP_CHECK(R->scratch.n == R->scratch2.n && memcmp(R->scratch.p, R->scratch2.p, R->scratch.n) == 0);
        nidus_cuckoo_free(a);
        nidus_cuckoo_free(b);
        R->alloc.armed = true;
        uint64_t budget = prop_chance(&R->r, 1, 2) ? prop_range(&R->r, 1, 8) : prop_range(&R->r, 1, 200);
        nidus_status st = nidus_cuckoo_compact_step(R->cf, budget, &done);
        R->alloc.armed = false;
        PROP_CHECK(st == NIDUS_OK);
        stepped_states += !done;
    }
    R->sweep = true;
    check_state(R, false, NULL, 0);
}

/* Continue on a copy decoded from the encoding, through the episode's (failing) allocator. */
static void op_decode_swap(run *R)
{
    prop_at.op = "decode";
    nidus_cuckoo *copy = NULL;
    R->alloc.armed = true;
    nidus_status st = nidus_cuckoo_decode(R->enc.p, R->enc.n, &R->alloc.hook, &copy);
    R->alloc.armed = false;
    if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in)
        return;
    PROP_CHECK(st == NIDUS_OK);
    nidus_cuckoo_compaction at; /* the copy has no compaction running: sometimes it resumes the filter's */
    if (nidus_cuckoo_compacting(R->cf, &at) && prop_chance(&R->r, 1, 2))
        PROP_CHECK(nidus_cuckoo_compact_resume(copy, &at) == NIDUS_OK);
    nidus_cuckoo_free(R->cf);
    R->cf = copy;
    R->sweep = true;
    check_state(R, true, NULL, 0);
}

/* A read-only view over the encoding answers as the filter does and refuses writes. */
static void op_view(run *R)
{
    prop_at.op = "view";
    nidus_cuckoo *v = NULL;
    PROP_CHECK(nidus_cuckoo_view(R->enc.p, R->enc.n, &R->alloc.hook, &v) == NIDUS_OK);
    PROP_CHECK(nidus_cuckoo_is_read_only(v));
    PROP_CHECK(nidus_cuckoo_dispatch_fresh(v));
    for (int k = 0; k < 8; k++) {
        prop_keybuf kk = prop_key(R->salt, any_id(R));
        PROP_CHECK(nidus_cuckoo_count(v, kk.b, kk.n) == nidus_cuckoo_count(R->cf, kk.b, kk.n));
    }
    prop_keybuf kk = prop_key(R->salt, any_id(R));
    PROP_CHECK(nidus_cuckoo_add(v, kk.b, kk.n) == NIDUS_ERR_READ_ONLY);
    nidus_cuckoo_free(v);
}

/* SCANDUMP / LOADCHUNK: dump every chunk, load them (sometimes only some) into a new filter under a byte
 * limit that fits or does not; the loaded filter encodes as the original and may replace it. */
static void op_chunks(run *R)
{
    prop_at.op = "chunks";
    size_t lens[PROP_CHUNKS_MAX], nchunks = 0;
    uint8_t *chunk_buf[PROP_CHUNKS_MAX];
    uint64_t cursor = 0;
    for (;;) {
        chunk_buf[nchunks] = prop_chunk_buffer((unsigned)nchunks);
        uint64_t next = 99;
        PROP_CHECK(nidus_cuckoo_dump_chunk(R->cf, cursor, chunk_buf[nchunks], PROP_CHUNK_CAP, &lens[nchunks], &next) ==
                   NIDUS_OK);
        if (lens[nchunks] == 0) {
            PROP_CHECK(next == 0);
            break;
        }
        PROP_CHECK(next == cursor + 1);
        PROP_CHECK(++nchunks < PROP_CHUNKS_MAX); /* the checker's filters stay under a few chunks */
        cursor = next;
    }
    PROP_CHECK(nchunks >= 2);
    /* the byte limit of the load: none; the filter's own max_memory (which its tables never pass, so it must
     * load); one byte under the tables' cost (refused); exactly that cost (loads, and keeps it as max_memory) */
    uint64_t cost = 0, max_bytes = 0;
    nidus_cuckoo_thawed tw; /* a packed filter's full form, to read its fields */
    const nidus_cuckoo *src = nidus_cuckoo_inspect(R->cf, &tw);
    for (unsigned k = 0; k < src->ntables; k++)
        cost += nidus_cuckoo_table_cost(&src->tables[k].shape);
    unsigned limit = (unsigned)prop_range(&R->r, 0, 3);
    if (limit == 1)
        max_bytes = src->max_memory;
    else if (limit == 2)
        max_bytes = cost - 1;
    else if (limit == 3)
        max_bytes = cost;
    uint64_t expect_max = max_bytes && (src->max_memory == 0 || src->max_memory > max_bytes) ? max_bytes
                                                                                           : src->max_memory;
    nidus_cuckoo *nf = NULL;
    R->alloc.armed = true;
    nidus_status st = nidus_cuckoo_load_chunk(&nf, chunk_buf[0], lens[0], max_bytes, &R->alloc.hook);
    R->alloc.armed = false;
    if (limit == 2) {
        PROP_CHECK(st == NIDUS_ERR_LIMIT_MEMORY && nf == NULL);
        return;
    }
    if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in) {
        PROP_CHECK(nf == NULL);
        return;
    }
    PROP_CHECK(st == NIDUS_OK && nf != NULL);
    /* a second header, or a chunk out of order, is refused and changes nothing */
    PROP_CHECK(nidus_cuckoo_load_chunk(&nf, chunk_buf[0], lens[0], 0, &R->alloc.hook) == NIDUS_ERR_SEQUENCE);
    if (nchunks > 2)
        PROP_CHECK(nidus_cuckoo_load_chunk(&nf, chunk_buf[2], lens[2], 0, &R->alloc.hook) == NIDUS_ERR_SEQUENCE);
    size_t stop = prop_chance(&R->r, 1, 4) ? (size_t)prop_range(&R->r, 1, nchunks - 1) : nchunks;
    for (size_t c = 1; c < stop; c++) {
        PROP_CHECK(nidus_cuckoo_loading(nf));
        uint64_t id = present_id(R);
        if (id != UINT64_MAX) { /* a filter still loading answers nothing and takes no write */
            prop_keybuf k = prop_key(R->salt, id);
            PROP_CHECK(!nidus_cuckoo_contains(nf, k.b, k.n));
            PROP_CHECK(nidus_cuckoo_add(nf, k.b, k.n) == NIDUS_ERR_READ_ONLY);
        }
        R->alloc.armed = true;
        st = nidus_cuckoo_load_chunk(&nf, chunk_buf[c], lens[c], 0, &R->alloc.hook);
        R->alloc.armed = false;
        if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in) {
            nidus_cuckoo_free(nf);
            return;
        }
        PROP_CHECK(st == NIDUS_OK);
        PROP_CHECK(nidus_cuckoo_dispatch_fresh(nf)); /* loading until the last chunk, then its tables' */
    }
    if (stop < nchunks) { /* a half-loaded filter: freed without leaks (checked at the episode's end) */
        PROP_CHECK(nidus_cuckoo_loading(nf));
        nidus_cuckoo_free(nf);
        return;
    }
    PROP_CHECK(!nidus_cuckoo_loading(nf));
    nidus_cuckoo_thawed tw2;
    PROP_CHECK(nidus_cuckoo_inspect(nf, &tw2)->max_memory == expect_max); /* what it grows into here loads here */
    bool same = expect_max == src->max_memory;
    encode_into(R, nf, &R->scratch2);
    PROP_CHECK(!same || (R->scratch2.n == R->enc.n && memcmp(R->scratch2.p, R->enc.p, R->enc.n) == 0));
    if (prop_chance(&R->r, 1, 2)) {
        nidus_cuckoo_free(R->cf);
        R->cf = nf;
        R->sweep = true;
        check_state(R, same, NULL, 0);
    } else {
        nidus_cuckoo_free(nf);
    }
}

/* Whether some level both filters have has another shape in each: growth after a compaction that freed tables
 * gives a level no fewer bits than the newest table's, more than a filter grown straight has there. */
static bool levels_differ(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    nidus_cuckoo_stats sa, sb;
    nidus_cuckoo_get_stats(a, &sa);
    nidus_cuckoo_get_stats(b, &sb);
    for (unsigned j = 0; j < sb.tables; j++) {
        nidus_cuckoo_table_stats y;
        PROP_CHECK(nidus_cuckoo_get_table_stats(b, j, &y) == NIDUS_OK);
        for (unsigned k = 0; k < sa.tables; k++) {
            nidus_cuckoo_table_stats x;
            PROP_CHECK(nidus_cuckoo_get_table_stats(a, k, &x) == NIDUS_OK);
            if (x.level == y.level && (x.buckets != y.buckets || x.fingerprint_bits != y.fingerprint_bits))
                return true;
        }
    }
    return false;
}

/* Merges in another filter of the same parameters (its own limits: the defaults), grown by random keys of the
 * universe, or the filter itself: the model's counts add. Tables of a level without room for the source's get
 * sibling tables, so merges of grown filters succeed; a failure (the destination's limits, a full filter that
 * never grows, no memory) leaves the encoding byte-identical. */
static void op_merge(run *R)
{
    prop_at.op = "merge";
    bool self = prop_chance(&R->r, 1, 6);
    uint32_t *adds = calloc((size_t)R->universe, sizeof *adds);
    if (!adds)
        exit(2);
    nidus_cuckoo *src = NULL;
    if (!self) {
        nidus_cuckoo_params p = R->params;
        p.allocator = NULL;
        p.max_memory = 0;
        p.max_tables = 0;
        PROP_CHECK(nidus_cuckoo_new(&p, &src) == NIDUS_OK);
        uint64_t n = prop_range(&R->r, 0, 3 * R->params.capacity + 8);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t id = any_id(R);
            prop_keybuf key = prop_key(R->salt, id);
            if (nidus_cuckoo_add(src, key.b, key.n) == NIDUS_OK)
                adds[id]++;
        }
    }
    R->alloc.armed = true;
    nidus_status st = nidus_cuckoo_merge(R->cf, self ? R->cf : src);
    R->alloc.armed = false;
    if (st == NIDUS_OK) {
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(R->cf, &s);
        nidus_cuckoo_table_stats last;
        PROP_CHECK(nidus_cuckoo_get_table_stats(R->cf, s.tables - 1, &last) == NIDUS_OK);
        merges++;
        sibling_merges += last.level + 1 < s.tables;
        for (uint64_t id = 0; id < R->universe; id++) {
            uint32_t more = self ? R->model[id] : adds[id];
            R->model[id] += more;
            R->total += more;
        }
    } else {
        PROP_CHECK(st == NIDUS_ERR_NO_MEMORY    ? R->alloc.fail_one_in != 0
                   : st == NIDUS_ERR_FULL         ? R->params.expansion == 0
                   : st == NIDUS_ERR_INCOMPATIBLE ? !self && levels_differ(R->cf, src)
                                                  : R->params.expansion > 0 && (st == NIDUS_ERR_LIMIT_TABLES ||
                                                                                st == NIDUS_ERR_LIMIT_MEMORY ||
                                                                                st == NIDUS_ERR_TOO_LARGE));
    }
    nidus_cuckoo_free(src);
    free(adds);
    R->sweep = true;
    check_state(R, st != NIDUS_OK, NULL, 0);
}

static void op_clear(run *R)
{
    prop_at.op = "clear";
    PROP_CHECK(nidus_cuckoo_clear(R->cf) == NIDUS_OK);
    memset(R->model, 0, (size_t)R->universe * sizeof *R->model);
    R->total = 0;
    check_state(R, false, NULL, 0);
}

/* ---- configurations ---- */

static void random_params(run *R, nidus_cuckoo_params *p)
{
    prop_rng *r = &R->r;
    static const unsigned sizes[] = {0, 1, 2, 4, 8};
    *p = (nidus_cuckoo_params){0};
    p->bucket_size = sizes[prop_range(r, 0, 4)];
    p->semi_sort = (p->bucket_size == 4 || p->bucket_size == 0) && prop_chance(r, 1, 4);
    if (prop_chance(r, 1, 2))
        p->fingerprint_bits = (unsigned)prop_range(r, p->semi_sort ? 5 : 4, 32);
    else
        p->error_rate = 1.0 / (double)prop_range(r, 2, 1000000000);
    unsigned size = (unsigned)prop_range(r, 0, 99);
    p->capacity = size < 84 ? prop_range(r, 1, 64) : size < 99 ? prop_range(r, 65, 1000) : prop_range(r, 1001, 20000);
    unsigned kicks = (unsigned)prop_range(r, 0, 39); /* the longest walks cost 65535 steps a failed add: rarely */
    p->max_kicks = kicks < 4 ? 0 : kicks < 8 ? 1 : kicks == 8 ? NIDUS_CUCKOO_MAX_KICKS : (unsigned)prop_range(r, 1, 500);
    p->expansion = (unsigned)prop_range(r, 0, 4);
    p->max_tables = prop_chance(r, 1, 3) ? 0 : (unsigned)prop_range(r, 1, NIDUS_CUCKOO_MAX_TABLES);
    p->seed = prop_chance(r, 1, 4) ? 0 : prop_next(r);
}

/* A filter of random parameters; max_memory near multiples of the first table's cost, so limits are met. */
static void new_filter(run *R)
{
    for (;;) {
        nidus_cuckoo_params p;
        random_params(R, &p);
        nidus_cuckoo *probe = NULL;
        if (nidus_cuckoo_new(&p, &probe) != NIDUS_OK)
            continue; /* e.g. an error rate that needs more than 32 bits at this b */
        nidus_cuckoo_table_stats t;
        PROP_CHECK(nidus_cuckoo_get_table_stats(probe, 0, &t) == NIDUS_OK);
        nidus_cuckoo_free(probe);
        unsigned tables = p.max_tables ? p.max_tables : NIDUS_CUCKOO_DEFAULT_MAX_TABLES;
        unsigned limit = (unsigned)prop_range(&R->r, 0, 9);
        if (limit == 0 && p.expansion <= 1)
            p.max_memory = 0;
        else if (limit == 1) {
            p.max_memory = t.memory_bytes - 1; /* the first table does not fit: creation refuses */
            p.allocator = &R->alloc.hook;
            PROP_CHECK(nidus_cuckoo_new(&p, &R->cf) == NIDUS_ERR_LIMIT_MEMORY);
            continue;
        } else {
            /* room for a few tables at most, and never more than 16 MiB for expansions past 1 */
            uint64_t cap = p.expansion <= 1 ? t.memory_bytes * tables : UINT64_C(16) << 20;
            p.max_memory = t.memory_bytes * prop_range(&R->r, 1, 6) + prop_range(&R->r, 0, 300);
            if (p.max_memory > cap)
                p.max_memory = cap > t.memory_bytes ? cap : t.memory_bytes;
        }
        p.allocator = &R->alloc.hook;
        R->alloc.armed = true;
        nidus_status st = nidus_cuckoo_new(&p, &R->cf);
        R->alloc.armed = false;
        if (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in)
            continue;
        PROP_CHECK(st == NIDUS_OK);
        R->params = p;
        snprintf(prop_at.config, sizeof prop_at.config,
                 "capacity %" PRIu64 " b %u f %u error %g semi %d kicks %u expansion %u max_tables %u "
                 "max_memory %" PRIu64 " seed %" PRIu64 " fail 1/%u",
                 p.capacity, p.bucket_size, p.fingerprint_bits, p.error_rate, p.semi_sort, p.max_kicks,
                 p.expansion, p.max_tables, p.max_memory, p.seed, R->alloc.fail_one_in);
        return;
    }
}

uint64_t prop_cuckoo_episode(uint64_t seed, uint64_t budget)
{
    run R = {.r = {seed}};
    prop_at.family = "cuckoo";
    prop_at.op = "new";
    prop_at.step = 0;
    static const unsigned fail[] = {0, 0, 0, 0, 0, 3, 10, 50};
    prop_alloc_init(&R.alloc, prop_next(&R.r), fail[prop_range(&R.r, 0, 7)]);
    new_filter(&R);
    R.salt = prop_next(&R.r);
    /* a universe from one key (all duplicates) to several times the capacity */
    uint64_t cap = R.params.capacity;
    R.universe = prop_chance(&R.r, 1, 8) ? prop_range(&R.r, 1, 4) : prop_range(&R.r, 1, 3 * cap + 8);
    R.model = calloc((size_t)R.universe, sizeof *R.model);
    if (!R.model)
        exit(2);
    uint64_t length = prop_range(&R.r, 50, cap > 1000 ? 4000 : 2000);
    if (length > budget)
        length = budget;
    check_state(&R, false, NULL, 0);
    for (R.step = 1; R.step <= length; R.step++) {
        prop_at.step = R.step;
        unsigned op = (unsigned)prop_range(&R.r, 0, 999);
        if (op < 400)
            op_add(&R, false);
        else if (op < 500)
            op_add(&R, true);
        else if (op < 750)
            op_remove(&R);
        else if (op < 805 || (op < 820 && prop_at.no_merge))
            op_lookup(&R);
        else if (op < 820)
            op_merge(&R);
        else if (op < 870)
            op_add_many(&R);
        else if (op < 920)
            op_contains_many(&R);
        else if (op < 930)
            op_compact(&R);
        else if (op < 950)
            op_compact_step(&R);
        else if (op < 965)
            op_decode_swap(&R);
        else if (op < 985)
            op_chunks(&R);
        else if (op < 997)
            op_view(&R);
        else
            op_clear(&R);
    }
    nidus_cuckoo_free(R.cf);
    prop_at.op = "free";
    PROP_CHECK(R.alloc.live == 0); /* nothing leaked, failed allocations and half-loaded filters included */
    free(R.model);
    prop_bytes_free(&R.enc);
    prop_bytes_free(&R.scratch);
    prop_bytes_free(&R.scratch2);
    return length;
}
