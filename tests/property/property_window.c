/* SPDX-License-Identifier: BSD-3-Clause */
/* Property episodes for windowed cuckoo filters (nidus/window.h): a random configuration (W from 1 to 10^6
 * ticks, capacity, b, f or an error rate, max_kicks, allocation failures), a clock that stays, steps, jumps
 * forward (within an epoch, a few windows, past 6 epochs, a long silence) and goes back, then random adds,
 * add_unique, removes, counts, lookups at the writer's time and at readers' times ahead and behind, bounded
 * sweep steps (advance), and decodes that the episode continues on.
 *
 * The model holds every copy with its epoch: the epoch of the write (now / ceil(W / 5), a time earlier than the
 * latest write read as the latest write), and reads a copy as live while the reading's epoch (likewise read) is
 * at most 5 epochs past it. The model checks itself against the header's bounds in ticks (present through
 * [t, t + W]; absent from t + 6 ceil(W / 5) on). Keys are grouped by what a lookup can tell apart, their bucket
 * pair and fingerprint (white box): a key alone in its group must count exactly its live copies (so a key whose
 * copies are all 6 or more epochs old answers absent, always); a key sharing its group counts at least its live
 * copies; random hashes outside the model answer present at most at the filter's error bound. After every
 * write: stats' live equals the model's live copies (at least them when groups are shared), entries at least
 * live, a write after 6 silent epochs leaves at most its own entry; the encoding decodes, re-encodes to the same
 * bytes and gives the same figures (the decoder recounts the ages the filter kept incrementally).
 *
 * A third of the episodes grow (expansion 1, 2 or 4): an add never fails for room then (only at the limits of
 * tables, fingerprint bits or, in half of them, a max_memory of a few tables), keys are grouped in every table level the filter has had, and the same checks
 * hold across its tables; a grown table holds a live entry at every write's end (idle ones are released). Removes
 * and renewals there take keys alone in their group in every level: a key's group differs from table to table,
 * so removing one key may take a copy of another that shares its group in one table only (the false negatives
 * a cuckoo filter's remove can cause through collisions), which the model does not follow. */
#include "property.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo_table_impl.h" /* white box: a key's bucket pair */
#include "hash_impl.h"
#include "params.h"
#include "window_filter.h"

typedef struct wcopy {
    uint32_t id;
    uint64_t epoch; /* the epoch the filter gave the copy */
    uint64_t tick;  /* the time the add passed */
} wcopy;

typedef struct wrun {
    prop_rng r;
    prop_alloc alloc;
    nidus_window_params params;
    nidus_window *w;
    uint64_t salt, universe, g, now, step;
    unsigned move_in; /* the clock moves before one step in move_in */
    bool written;     /* the model's view: a write has happened */
    uint64_t latest;  /* the model's latest write epoch (advances count as writes) */
    bool any_shared;  /* some group holds two keys of the universe */
    bool *shared;     /* per key: its group holds another key */
    uint32_t hot;     /* a key that takes a share of the adds (duplicates past a pair's slots) */
    unsigned hot_share;
    uint32_t *live_of; /* check_all's count of each key's live copies */
    bool level_seen[256]; /* table levels whose groups are in `shared` */
    bool grew;            /* the filter has had more than one table */
    wcopy *copies;
    size_t n, cap;
    prop_bytes enc, again;
} wrun;

static struct {
    uint64_t episodes, checks, expired_checks, shared_expired_checks, shared_expired_present, probes, probe_hits,
        fulls, clears, refreshes, decodes, grown_episodes, most_tables, memory_refusals;
    double probe_bound;
} wstat;

void prop_window_summary(void)
{
    if (!wstat.episodes)
        return;
    printf("   window: %" PRIu64 " episodes, %" PRIu64 " key checks, %" PRIu64
           " of keys whose copies had all expired (0 present: they are alone in their group), %" PRIu64
           " of expired keys sharing a group (%" PRIu64 " present)\n",
           wstat.episodes, wstat.checks, wstat.expired_checks, wstat.shared_expired_checks, wstat.shared_expired_present);
    printf("   window: random probes %" PRIu64 ", %" PRIu64 " present (%.3g expected at most), %" PRIu64
           " adds refused full, %" PRIu64 " clears after silences, %" PRIu64 " refreshes, %" PRIu64
           " decodes\n",
           wstat.probes, wstat.probe_hits, wstat.probe_bound, wstat.fulls, wstat.clears, wstat.refreshes,
           wstat.decodes);
    printf("   window: %" PRIu64 " episodes grew (at most %" PRIu64 " tables), %" PRIu64
           " adds refused at max_memory\n", wstat.grown_episodes, wstat.most_tables, wstat.memory_refusals);
}

static uint64_t epoch_of(const wrun *R, uint64_t t) { return t / R->g; }

/* The epoch a reading at time q is taken at. */
static uint64_t reading_epoch(const wrun *R, uint64_t q)
{
    uint64_t e = epoch_of(R, q);
    return R->written && e < R->latest ? R->latest : e;
}

static bool live_at(uint64_t epoch, uint64_t reading) { return reading - epoch < NIDUS_WINDOW_LIVE_EPOCHS; }

static void model_forget(wrun *R);

/* What every write does to the model first: the latest write's epoch moves to now's, never back. */
static void model_write(wrun *R)
{
    uint64_t e = epoch_of(R, R->now);
    if (!R->written || e > R->latest)
        R->latest = e;
    R->written = true;
    model_forget(R);
}

/* Forgets the copies no reading can see again. */
static void model_forget(wrun *R)
{
    size_t keep = 0;
    for (size_t i = 0; i < R->n; i++)
        if (live_at(R->copies[i].epoch, R->latest))
            R->copies[keep++] = R->copies[i];
    R->n = keep;
}

static void model_add(wrun *R, uint32_t id)
{
    if (R->n == R->cap) {
        R->cap = R->cap ? 2 * R->cap : 256;
        R->copies = realloc(R->copies, R->cap * sizeof *R->copies);
        if (!R->copies)
            exit(2);
    }
    R->copies[R->n++] = (wcopy){id, R->latest, R->now};
}

/* The key's live copies at reading epoch `reading`, and the index of its oldest (SIZE_MAX if none). */
static uint64_t model_live(const wrun *R, uint32_t id, uint64_t reading, size_t *oldest, bool *any_copy)
{
    uint64_t n = 0;
    size_t at = SIZE_MAX;
    if (any_copy)
        *any_copy = false;
    for (size_t i = 0; i < R->n; i++) {
        const wcopy *c = &R->copies[i];
        if (c->id != id)
            continue;
        if (any_copy)
            *any_copy = true;
        if (!live_at(c->epoch, reading))
            continue;
        n++;
        if (at == SIZE_MAX || c->epoch < R->copies[at].epoch)
            at = i;
    }
    if (oldest)
        *oldest = at;
    return n;
}

static uint64_t model_live_total(const wrun *R, uint64_t reading)
{
    uint64_t n = 0;
    for (size_t i = 0; i < R->n; i++)
        n += live_at(R->copies[i].epoch, reading);
    return n;
}

/* The model against the header's bounds in ticks, for a reading at q not behind the latest write's epoch. */
static void check_model_bounds(const wrun *R, const wcopy *c, uint64_t q)
{
    if (!R->written || epoch_of(R, q) < R->latest)
        return;
    bool live = live_at(c->epoch, reading_epoch(R, q));
    if (q <= c->tick + R->params.window)
        PROP_CHECK(live);
    if (q >= c->tick + 6 * R->g && c->epoch == epoch_of(R, c->tick))
        PROP_CHECK(!live);
}

/* Checks key `id` at reading time q, where the model holds `live` live copies of it (`any_copy`: or expired ones). */
static void check_answers(wrun *R, uint32_t id, uint64_t q, uint64_t live, bool any_copy)
{
    prop_keybuf k = prop_key(R->salt, id);
    uint64_t c = nidus_window_count(R->w, k.b, k.n, q);
    bool has = nidus_window_contains(R->w, k.b, k.n, q);
    PROP_CHECK(has == nidus_window_contains_hash(R->w, nidus_hash(k.b, k.n, R->params.seed), q));
    PROP_CHECK(has == (c > 0));
    if (R->shared[id])
        PROP_CHECK(c >= live);
    else
        PROP_CHECK(c == live); /* alone in its group: exactly its live copies, none of the expired ones */
    wstat.checks++;
    if (any_copy && !live) {
        if (R->shared[id]) {
            wstat.shared_expired_checks++;
            wstat.shared_expired_present += has;
        } else {
            wstat.expired_checks++;
        }
    }
}

static void check_key(wrun *R, uint32_t id, uint64_t q)
{
    bool any_copy;
    uint64_t live = model_live(R, id, reading_epoch(R, q), NULL, &any_copy);
    for (size_t i = 0; i < R->n; i++)
        if (R->copies[i].id == id)
            check_model_bounds(R, &R->copies[i], q);
    check_answers(R, id, q, live, any_copy);
}

/* A reading time: the writer's, or a reader's ahead of it or behind it. */
static uint64_t reading_time(wrun *R)
{
    unsigned p = (unsigned)prop_range(&R->r, 0, 9);
    uint64_t W = R->params.window, d;
    if (p < 5)
        return R->now;
    if (p < 8) {
        d = prop_range(&R->r, 0, p == 5 ? R->g : p == 6 ? W + 1 : 7 * R->g);
        return R->now + d;
    }
    d = prop_range(&R->r, 0, 2 * W);
    return R->now > d ? R->now - d : 0;
}

/* Every key of the universe at reading time q (the model's copies counted in one pass). */
static void check_all(wrun *R, uint64_t q)
{
    uint64_t reading = reading_epoch(R, q);
    memset(R->live_of, 0, (size_t)R->universe * sizeof *R->live_of);
    for (size_t i = 0; i < R->n; i++) {
        const wcopy *c = &R->copies[i];
        R->live_of[c->id] |= 1u << 31; /* some copy, live or not */
        R->live_of[c->id] += live_at(c->epoch, reading);
        check_model_bounds(R, c, q);
    }
    for (uint32_t id = 0; id < R->universe; id++)
        check_answers(R, id, q, R->live_of[id] & ~(1u << 31), R->live_of[id] >> 31);
}

static void figures(const nidus_window *w, uint64_t now, nidus_window_stats *s)
{
    nidus_window_get_stats(w, now, s);
    s->memory_bytes = 0; /* a decoded overflow map may be sized otherwise than a grown one */
    s->bits_per_item = 0;
}

/* The encoding decodes (allocation failures retried, 8 times with failures armed), re-encodes to the same bytes and gives the same figures;
 * `swap`: the episode continues on the decoded copy. */
static void round_trip(wrun *R, bool swap)
{
    prop_at.op = "decode";
    uint64_t n = nidus_window_encoded_size(R->w);
    prop_bytes_reserve(&R->enc, (size_t)n);
    prop_bytes_reserve(&R->again, (size_t)n);
    PROP_CHECK(nidus_window_encode(R->w, R->enc.p, (size_t)n, NULL) == NIDUS_OK);
    if (n > 0)
        PROP_CHECK(nidus_window_encode(R->w, R->enc.p, (size_t)n - 1, NULL) == NIDUS_ERR_TOO_LARGE);
    nidus_window *d = NULL;
    nidus_status st;
    for (unsigned tries = 0;; tries++) {
        R->alloc.armed = tries < 8; /* then unarmed: a grown filter's decode makes so many allocations that
                                     * passing every armed one can take millions of tries */
        st = nidus_window_decode(R->enc.p, (size_t)n, &R->alloc.hook, &d);
        R->alloc.armed = false;
        if (st == NIDUS_OK)
            break;
        PROP_CHECK(st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in && d == NULL);
    }
    wstat.decodes++;
    PROP_CHECK(nidus_window_encoded_size(d) == n);
    PROP_CHECK(nidus_window_encode(d, R->again.p, (size_t)n, NULL) == NIDUS_OK);
    PROP_CHECK(memcmp(R->enc.p, R->again.p, (size_t)n) == 0);
    nidus_window_stats a, b;
    figures(R->w, R->now, &a);
    figures(d, R->now, &b);
    PROP_CHECK(memcmp(&a, &b, sizeof a) == 0);
    if (swap) {
        nidus_window_free(R->w);
        R->w = d;
    } else {
        nidus_window_free(d);
    }
}

/* Figures after a write: live copies as the model has them, entries at least live. */
static void check_figures(wrun *R, uint64_t latest_before, bool was_written, bool advance)
{
    nidus_window_stats s;
    nidus_window_get_stats(R->w, R->now, &s);
    uint64_t model = model_live_total(R, reading_epoch(R, R->now));
    PROP_CHECK(s.entries >= s.live);
    /* every overflow entry a duplicate beside its pair's share or a stash entry beside a full pair (white box: what
     * the decoder requires) */
    for (uint32_t k = 0; k <= R->w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(R->w, k);
        PROP_CHECK(nidus_table_validate_overflow(&t->table) == NIDUS_OK);
        if (k) /* grown tables share the clock; an idle one was released */
            PROP_CHECK(t->latest_tick == R->w->latest_tick && nidus_window_live_entries(t) > 0);
    }
    PROP_CHECK(R->any_shared ? s.live >= model : s.live == model);
    /* a write moves the filter's latest write to the model's; an advance may stay behind while it still owes a
     * pass, at most 5 epochs */
    if (R->written && advance)
        PROP_CHECK(s.latest_write <= R->latest * R->g && R->latest - s.latest_write / R->g < NIDUS_WINDOW_LIVE_EPOCHS);
    else if (R->written)
        PROP_CHECK(s.latest_write == R->latest * R->g);
    PROP_CHECK(s.sweep_cursor < s.buckets);
    if (was_written && R->latest - latest_before >= NIDUS_WINDOW_LIVE_EPOCHS) {
        PROP_CHECK(s.entries <= 1); /* every entry had expired: the table was cleared */
        wstat.clears++;
    }
}

static uint32_t pick_key(wrun *R)
{
    if (R->hot_share && prop_range(&R->r, 0, 99) < R->hot_share)
        return R->hot;
    return (uint32_t)prop_range(&R->r, 0, R->universe - 1);
}

static bool write_status_ok(wrun *R, nidus_status st)
{
    if (R->params.expansion) /* growing: never full, but at the limits */
        PROP_CHECK(st != NIDUS_ERR_FULL);
    PROP_CHECK(st != NIDUS_ERR_LIMIT_MEMORY || R->params.max_memory);
    wstat.memory_refusals += st == NIDUS_ERR_LIMIT_MEMORY;
    if (st == NIDUS_ERR_FULL || st == NIDUS_ERR_LIMIT_TABLES || st == NIDUS_ERR_TOO_LARGE ||
        st == NIDUS_ERR_LIMIT_MEMORY)
        wstat.fulls++;
    else
        PROP_CHECK(st == NIDUS_OK || (st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in));
    return st == NIDUS_OK;
}

static void op_add(wrun *R, uint32_t id)
{
    prop_at.op = "add";
    prop_keybuf k = prop_key(R->salt, id);
    R->alloc.armed = true;
    nidus_status st = nidus_window_add(R->w, k.b, k.n, R->now);
    R->alloc.armed = false;
    model_write(R);
    if (write_status_ok(R, st))
        model_add(R, id);
    check_key(R, id, R->now);
}

static void op_add_unique(wrun *R, uint32_t id)
{
    prop_at.op = "add_unique";
    prop_keybuf k = prop_key(R->salt, id);
    uint64_t e = epoch_of(R, R->now), to = !R->written || e > R->latest ? e : R->latest;
    size_t oldest;
    uint64_t live = model_live(R, id, to, &oldest, NULL);
    bool current = false;
    for (size_t i = 0; i < R->n; i++)
        current |= R->copies[i].id == id && R->copies[i].epoch == to;
    bool added = true;
    R->alloc.armed = true;
    nidus_status st = nidus_window_add_unique(R->w, k.b, k.n, R->now, &added);
    R->alloc.armed = false;
    model_write(R);
    if (!write_status_ok(R, st)) {
        check_key(R, id, R->now);
        return;
    }
    if (R->shared[id]) { /* a group mate's copy may answer for the key: the model changes only on an add */
        if (current || live)
            PROP_CHECK(!added);
        if (added)
            model_add(R, id);
        check_key(R, id, R->now);
        return;
    }
    PROP_CHECK(added == (live == 0));
    uint64_t c = nidus_window_count(R->w, k.b, k.n, R->now);
    if (current) {
        PROP_CHECK(c == live);
    } else if (live) { /* the oldest live copy takes the new age */
        PROP_CHECK(c == live);
        model_live(R, id, R->latest, &oldest, NULL); /* indexes moved when model_write forgot copies */
        R->copies[oldest].epoch = R->latest;
        R->copies[oldest].tick = R->now;
        wstat.refreshes++;
    } else {
        model_add(R, id);
    }
    check_key(R, id, R->now);
}

/* Returns whether the filter was called (a write). */
static bool op_remove(wrun *R)
{
    prop_at.op = "remove";
    uint64_t e = epoch_of(R, R->now), to = !R->written || e > R->latest ? e : R->latest;
    uint32_t id = UINT32_MAX;
    if (R->n && prop_range(&R->r, 0, 4)) { /* a key with a live copy */
        size_t start = (size_t)prop_range(&R->r, 0, R->n - 1);
        for (size_t i = 0; i < R->n && id == UINT32_MAX; i++) {
            const wcopy *c = &R->copies[(start + i) % R->n];
            if (live_at(c->epoch, to) && !(R->params.expansion && R->shared[c->id]))
                id = c->id;
        }
    } else { /* a key with none, alone in its group: nothing to remove (another's copy may be any other's) */
        uint32_t cand = (uint32_t)prop_range(&R->r, 0, R->universe - 1);
        if (!R->shared[cand] && !model_live(R, cand, to, NULL, NULL))
            id = cand;
    }
    if (id == UINT32_MAX)
        return false;
    prop_keybuf k = prop_key(R->salt, id);
    nidus_status st = nidus_window_remove(R->w, k.b, k.n, R->now);
    model_write(R);
    size_t oldest;
    uint64_t live = model_live(R, id, R->latest, &oldest, NULL);
    if (!live) {
        PROP_CHECK(st == NIDUS_ERR_NOT_FOUND);
    } else {
        PROP_CHECK(st == NIDUS_OK);
        R->copies[oldest] = R->copies[--R->n];
    }
    check_key(R, id, R->now);
    return true;
}

static void op_advance(wrun *R)
{
    prop_at.op = "advance";
    uint64_t steps[] = {0, 1, prop_range(&R->r, 1, 64), R->w->table.shape.buckets, UINT64_MAX};
    uint64_t max = steps[prop_range(&R->r, 0, 4)];
    bool done = false;
    PROP_CHECK(nidus_window_advance(R->w, R->now, max, &done) == NIDUS_OK);
    if (!R->written) {
        PROP_CHECK(done);
        return;
    }
    uint64_t before = R->latest;
    model_write(R); /* readers behind now read at now's epoch, whether or not the advance finished */
    nidus_window_stats s;
    nidus_window_get_stats(R->w, R->now, &s);
    uint64_t moved = s.latest_write / R->g;
    /* it moves to now's epoch, or stays while ages that epoch would reuse are still held (not done) */
    PROP_CHECK(moved == R->latest || !done);
    if (max >= s.buckets)
        PROP_CHECK(moved == R->latest);
    check_figures(R, before, true, true);
}

/* Random hashes, none the model's: present at most at the error bound (checked over the episode). */
static void op_probe(wrun *R, uint64_t *hits, double *bound)
{
    prop_at.op = "probe";
    nidus_window_stats s;
    nidus_window_get_stats(R->w, R->now, &s);
    /* the bound counts the 2b slots of a pair; a stash entry (white box) is one more value a probe may meet; the
     * tables' bounds add up */
    unsigned b = s.bucket_size;
    double each = 0;
    for (uint32_t k = 0; k <= R->w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(R->w, k);
        each += nidus_cuckoo_error_bound(b, t->f) * (double)(2 * b + nidus_table_stash_entries(&t->table)) /
                (double)(2 * b);
    }
    for (unsigned i = 0; i < 16; i++) {
        uint64_t q = reading_time(R);
        *hits += nidus_window_contains_hash(R->w, prop_next(&R->r), q);
        *bound += each;
    }
    wstat.probes += 16;
}

static void clock_move(wrun *R)
{
    if (prop_range(&R->r, 0, R->move_in - 1))
        return;
    uint64_t W = R->params.window, g = R->g;
    unsigned p = (unsigned)prop_range(&R->r, 0, 99);
    if (p < 40)
        R->now += prop_range(&R->r, 0, g);
    else if (p < 65)
        R->now += prop_range(&R->r, 0, 2 * W);
    else if (p < 75)
        R->now += prop_range(&R->r, 6 * g, 20 * g); /* past every entry's life */
    else if (p < 78)
        R->now += prop_range(&R->r, 100 * W, 1000000 * W); /* a long silence */
    else if (p < 95) {
        uint64_t d = prop_range(&R->r, 0, p < 90 ? g : 3 * W); /* the clock goes back */
        R->now = R->now > d ? R->now - d : 0;
    } else {
        R->now += 1;
    }
}

/* Marks the keys whose group (bucket pair, fingerprint) holds another key of the universe. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Marks the groups of table w (a table of the filter: a level's shape). */
static void find_groups(wrun *R, const nidus_window *w)
{
    uint64_t *g = malloc(R->universe * 2 * sizeof *g);
    if (!g)
        exit(2);
    for (uint32_t id = 0; id < R->universe; id++) {
        prop_keybuf k = prop_key(R->salt, id);
        uint64_t h = nidus_hash(k.b, k.n, R->params.seed);
        uint64_t i = nidus_range_reduce(h, w->table.shape.buckets);
        uint32_t fp = nidus_inline_cuckoo_fingerprint((uint32_t)h, w->fp_mask);
        uint64_t j = nidus_table_alt(&w->table, i, fp);
        g[2 * id] = (i < j ? i : j) << 29 | fp;
        g[2 * id + 1] = id;
    }
    qsort(g, R->universe, 2 * sizeof *g, cmp_u64); /* pairs of (group, id), by group then id */
    for (uint64_t x = 0; x + 1 < R->universe; x++)
        if (g[2 * x] == g[2 * x + 2]) {
            R->shared[g[2 * x + 1]] = R->shared[g[2 * x + 3]] = true;
            R->any_shared = true;
        }
    free(g);
    R->level_seen[w->level] = true;
}

/* Groups of the table levels the filter has now that were not seen before (a key is alone only if alone in every
 * level that may hold a copy of it). */
static void find_new_groups(wrun *R)
{
    if (R->w->ngrown + UINT64_C(1) > wstat.most_tables)
        wstat.most_tables = R->w->ngrown + UINT64_C(1);
    if (R->w->ngrown && !R->grew) {
        R->grew = true;
        wstat.grown_episodes++;
    }
    for (uint32_t k = 0; k <= R->w->ngrown; k++)
        if (!R->level_seen[nidus_window_table_at(R->w, k)->level])
            find_groups(R, nidus_window_table_at(R->w, k));
}

static void new_filter(wrun *R)
{
    prop_rng *r = &R->r;
    unsigned p = (unsigned)prop_range(r, 0, 9);
    uint64_t W = p == 0 ? prop_range(r, 1, 6) : p < 3 ? prop_range(r, 7, 100) : p < 7 ? prop_range(r, 101, 10000)
                                                                                  : prop_range(r, 10001, 1000000);
    p = (unsigned)prop_range(r, 0, 9);
    uint64_t capacity = p < 4 ? prop_range(r, 1, 64) : p < 8 ? prop_range(r, 65, 2000) : prop_range(r, 2001, 20000);
    static const unsigned sizes[] = {0, 1, 2, 4, 8};
    static const double rates[] = {0, 0.1, 0.01, 0.001, 1e-5};
    static const unsigned kicks[] = {0, 1, 500, 65535};
    R->params = (nidus_window_params){
        .capacity = capacity,
        .window = W,
        .bucket_size = sizes[prop_range(r, 0, 4)],
        .seed = prop_next(r),
        .allocator = &R->alloc.hook,
    };
    p = (unsigned)prop_range(r, 0, 9);
    if (p < 4)
        R->params.error_rate = rates[prop_range(r, 0, 4)];
    else
        R->params.fingerprint_bits = (unsigned)(p < 7 ? prop_range(r, 4, 8) : prop_range(r, 9, 29));
    p = (unsigned)prop_range(r, 0, 4);
    R->params.max_kicks = p < 4 ? kicks[p] : (unsigned)prop_range(r, 2, 100);
    /* from the seed's bits, not the stream, so that an episode's seed keeps giving the configuration it gave */
    static const unsigned expansions[] = {0, 0, 0, 0, 0, 0, 1, 2, 2, 4};
    R->params.expansion = expansions[(R->params.seed >> 40) % 10];
    R->g = W / 5 + (W % 5 != 0);
    nidus_status st;
    for (;;) {
        R->alloc.armed = true;
        st = nidus_window_new(&R->params, &R->w);
        R->alloc.armed = false;
        if (st == NIDUS_OK)
            break;
        PROP_CHECK(st == NIDUS_ERR_NO_MEMORY && R->alloc.fail_one_in);
    }
    nidus_window_stats s;
    nidus_window_get_stats(R->w, 0, &s);
    /* half of the growing ones bounded: 2 to 5 times the first table's memory (a few tables; every encoding is
     * checked against it) */
    if (R->params.expansion && (R->params.seed >> 44) % 2) {
        R->params.max_memory = s.memory_bytes * ((R->params.seed >> 45) % 4 + 2);
        PROP_CHECK(nidus_window_set_max_memory(R->w, R->params.max_memory) == NIDUS_OK);
    }
    snprintf(prop_at.config, sizeof prop_at.config,
             "window W %" PRIu64 " capacity %" PRIu64 " b %u f %u (asked %u, rate %g) kicks %u buckets %" PRIu64
             " expansion %u max_memory %" PRIu64 " fail 1/%u",
             W, capacity, s.bucket_size, s.fingerprint_bits, R->params.fingerprint_bits, R->params.error_rate,
             R->params.max_kicks, s.buckets, R->params.expansion, R->params.max_memory, R->alloc.fail_one_in);
}

uint64_t prop_window_episode(uint64_t seed, uint64_t budget)
{
    wrun R = {.r = {seed}};
    prop_at.family = "window";
    prop_at.op = "new";
    prop_at.step = 0;
    static const unsigned fail[] = {0, 0, 0, 5, 50};
    prop_alloc_init(&R.alloc, prop_next(&R.r), fail[prop_range(&R.r, 0, 4)]);
    new_filter(&R);
    R.salt = prop_next(&R.r);
    unsigned p = (unsigned)prop_range(&R.r, 0, 9);
    uint64_t cap = R.params.capacity;
    R.universe = p < 3 ? prop_range(&R.r, 1, 64) : prop_range(&R.r, 1, cap * 3 > 64 ? cap * 3 : 64);
    if (R.universe > 30000)
        R.universe = 30000;
    R.shared = calloc((size_t)R.universe, sizeof *R.shared);
    R.live_of = calloc((size_t)R.universe, sizeof *R.live_of);
    if (!R.shared || !R.live_of)
        exit(2);
    find_groups(&R, R.w);
    R.hot = (uint32_t)prop_range(&R.r, 0, R.universe - 1);
    R.hot_share = prop_chance(&R.r, 1, 4) ? (unsigned)prop_range(&R.r, 10, 60) : 0;
    static const unsigned paces[] = {1, 3, 10, 100, 1000};
    R.move_in = paces[prop_range(&R.r, 0, 4)];
    p = (unsigned)prop_range(&R.r, 0, 3);
    R.now = p == 0 ? 0 : p == 1 ? prop_range(&R.r, 0, 10 * R.params.window) : prop_range(&R.r, 0, UINT64_C(1) << 44);
    uint64_t length = prop_range(&R.r, 50, 4000);
    if (length > budget)
        length = budget;
    uint64_t hits = 0;
    double bound = 0;
    wstat.episodes++;
    round_trip(&R, false);
    for (R.step = 1; R.step <= length; R.step++) {
        prop_at.step = R.step;
        clock_move(&R);
        uint64_t before = R.latest;
        bool was_written = R.written, wrote = true;
        unsigned op = (unsigned)prop_range(&R.r, 0, 99);
        if (op < 35)
            op_add(&R, pick_key(&R));
        else if (op < 45) {
            uint32_t id = pick_key(&R);
            if (R.params.expansion && R.shared[id])
                op_add(&R, id);
            else
                op_add_unique(&R, id);
        }
        else if (op < 55)
            wrote = op_remove(&R);
        else if (op < 58) {
            op_advance(&R);
            wrote = false;
        } else if (op < 61) {
            round_trip(&R, true);
            wrote = false;
        } else if (op < 64) {
            op_probe(&R, &hits, &bound);
            wrote = false;
        } else {
            prop_at.op = "lookup";
            uint64_t q = reading_time(&R);
            if ((R.universe <= 64 && op % 4 == 0) || op == 99)
                check_all(&R, q);
            else
                for (unsigned i = 0; i < 4; i++)
                    check_key(&R, pick_key(&R), q);
            wrote = false;
        }
        find_new_groups(&R);
        if (R.w->ngrown && R.step < length) { /* every write sweeps every table: a grown episode ends at 2^21 slots */
            nidus_window_stats t;
            nidus_window_get_stats(R.w, R.now, &t);
            if (t.total_slots > (UINT64_C(1) << 21))
                length = R.step;
        }
        if (wrote)
            check_figures(&R, before, was_written, false);
        else if (R.written)
            check_figures(&R, before, was_written, true);
        if (R.w->table.shape.buckets * R.w->table.shape.bucket_size <= 512 || R.step % 16 == 0)
            round_trip(&R, false);
        if (R.step % 128 == 0) {
            prop_at.op = "sweep";
            check_all(&R, R.now);
        }
    }
    prop_at.op = "end";
    check_all(&R, reading_time(&R));
    op_probe(&R, &hits, &bound);
    PROP_CHECK((double)hits <= bound + 6 * sqrt(bound) + 6);
    wstat.probe_hits += hits;
    wstat.probe_bound += bound;
    nidus_window_free(R.w);
    prop_at.op = "free";
    PROP_CHECK(R.alloc.live == 0);
    free(R.shared);
    free(R.live_of);
    free(R.copies);
    prop_bytes_free(&R.enc);
    prop_bytes_free(&R.again);
    return length;
}
