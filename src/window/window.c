/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters (nidus/window.h): a cuckoo table whose slots hold a fingerprint and an age.
 *
 * A slot's value is fp | s << f, where fp is the key's f-bit fingerprint and s its epoch modulo 8. The table's
 * placement takes the alternate bucket from the low offset_bits = f bits of a value, so a slot's age never moves
 * it: kicks, the stash and the duplicate overflow map of nidus_table work on values unchanged.
 *
 * Ages are read against L, the epoch of the filter's latest write: an entry's epoch is L - ((L - s) mod 8), which
 * is exact while every entry is at most 7 epochs older than L. Writes keep that so: before the first write of a
 * new epoch E, no entry may hold an age value that epochs in (L, E] will reuse (`per_age` counts the entries of
 * each value exactly, so this is a test of counters, not a scan). Such entries are at least 8 epochs old, long
 * expired; the sweep, a cursor over the buckets paced at a pass an epoch, removes expired entries well before
 * then, and a write finding one left sweeps a whole pass first. Kicks may carry entries past the cursor: the
 * counters, not the cursor, are what keeps the reading exact. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuckoo_table_impl.h"
#include "hash_impl.h"
#include "nidus/hash.h"
#include "overflow.h"
#include "swar_impl.h"
#include "window_filter.h"
#include "window_kernels.h"

enum { KICK_LOG = 1024u }; /* the most moves one add's walk makes (its undo log lives on the stack) */

static inline uint32_t value_of(const nidus_window *w, uint32_t fp, unsigned s) { return fp | (uint32_t)s << w->f; }

static inline void locate(const nidus_window *w, uint64_t hash, uint64_t *i, uint32_t *fp)
{
    *i = nidus_range_reduce(hash, w->table.shape.buckets);
    *fp = nidus_inline_cuckoo_fingerprint((uint32_t)hash, w->fp_mask);
}

/* Whether bucket i holds fp with an age in `mask` (count: how many). A SWAR compare of the fingerprint bits
 * alone, then the age of each (rare) match. */
static unsigned bucket_matches(const nidus_window *w, uint64_t i, uint32_t fp, unsigned mask, bool count)
{
    const nidus_table *t = &w->table;
    uint64_t pos = i * t->bucket_bits;
    unsigned n = 0;
    for (unsigned c = 0; c < t->chunks; c++) {
        const nidus_swar *s = &t->chunk_swar[c];
        uint64_t word = nidus_table_read_raw(t->data, pos);
        uint64_t hits = nidus_swar_zero_fields(s, (word ^ (fp * s->ones)) & (w->fp_mask * s->ones));
        while (hits) {
            unsigned top = (unsigned)__builtin_ctzll(hits); /* the field's highest bit: the age's top bit */
            unsigned age = (unsigned)(word >> (top + 1 - NIDUS_WINDOW_AGE_BITS)) & (NIDUS_WINDOW_AGES - 1);
            if (mask >> age & 1) {
                n++;
                if (!count)
                    return n;
            }
            hits &= hits - 1;
        }
        pos += t->chunk_bits[c];
    }
    return n;
}

/* Copies of fp with an age in `mask` counted in the overflow map for the pair (i, j): the map's signature first
 * (one bit a value; for f >= 5 the same bit for every age), so a miss costs a few operations. */
static uint64_t overflow_matches(const nidus_window *w, uint64_t i, uint64_t j, uint32_t fp, unsigned mask)
{
    const nidus_table *t = &w->table;
    uint32_t sig = t->overflow_sig, any = 0;
    if (!sig)
        return 0;
    uint64_t lower = i < j ? i : j;
    if (w->f >= 5) /* the signature reads a value's low 5 bits: the fingerprint's, whatever the age */
        any = sig & nidus_overflow_sig_bit(lower, fp);
    else
        for (unsigned s = 0; s < NIDUS_WINDOW_AGES; s++)
            if (mask >> s & 1)
                any |= sig & nidus_overflow_sig_bit(lower, value_of(w, fp, s));
    if (!any)
        return 0;
    uint64_t n = 0;
    for (unsigned s = 0; s < NIDUS_WINDOW_AGES; s++)
        if (mask >> s & 1)
            n += nidus_overflow_get(&t->overflow, lower, value_of(w, fp, s));
    return n;
}

/* ---- the sweep ---- */

/* Whether age value s has expired at epoch e (>= latest), read against `latest`. */
static inline bool expired(const nidus_window *w, unsigned s, uint64_t e)
{
    return nidus_window_rel_age(w->latest, s) + (e - w->latest) >= NIDUS_WINDOW_LIVE_EPOCHS;
}

/* Removes bucket x's entries expired at epoch e, with the duplicate copies of their values counted beside the
 * pair (one value, one age: they expire together), and refills the freed slots from the stash. A stash entry
 * refilled into x may itself have expired (a full pass has visited the map before it reaches x, or visits it
 * after): x is looked at again until it holds no expired entry, so a pass leaves none behind its cursor. */
static void sweep_bucket(nidus_window *w, uint64_t x, uint64_t e)
{
    nidus_table *t = &w->table;
    for (;;) {
        uint32_t vals[8];
        nidus_table_read_bucket(t, x, vals);
        unsigned freed = 0;
        bool ov = false;
        for (unsigned k = 0; k < t->shape.bucket_size; k++) {
            uint32_t v = vals[k];
            unsigned s = v >> w->f;
            if (!v || !expired(w, s, e))
                continue;
            nidus_table_take(t, x, v);
            w->per_age[s]--;
            freed++;
            uint64_t y = nidus_table_alt(t, x, v), lower = x < y ? x : y;
            uint64_t dup = t->overflow.used ? nidus_overflow_get(&t->overflow, lower, v) : 0;
            if (dup) {
                nidus_overflow_set(&t->overflow, w->alloc, lower, v, 0); /* removing never allocates */
                w->per_age[s] -= dup;
                ov = true;
            }
        }
        if (ov)
            nidus_table_overflow_changed(t);
        if (!freed || !t->overflow.used)
            return;
        while (freed--)
            nidus_table_stash_refill(t, x);
    }
}

/* Removes the overflow map's expired entries (stash entries; duplicates go with their slots). */
static void sweep_overflow(nidus_window *w, uint64_t e)
{
    nidus_overflow *ov = &w->table.overflow;
    bool changed = false;
    for (uint32_t k = 0; ov->used && k < ov->capacity;) {
        nidus_overflow_entry en = ov->entries[k];
        unsigned s = en.fingerprint >> w->f;
        if (!en.count || !expired(w, s, e)) {
            k++;
            continue;
        }
        w->per_age[s] -= en.count;
        nidus_overflow_set(ov, w->alloc, en.bucket, en.fingerprint, 0);
        changed = true; /* backward-shift deletion moved a later entry into k: look at k again */
    }
    if (changed)
        nidus_table_overflow_changed(&w->table);
}

/* Sweeps n buckets from the cursor at epoch e, the overflow map at each wrap. */
static void sweep(nidus_window *w, uint64_t n, uint64_t e)
{
    uint64_t m = w->table.shape.buckets;
    while (n--) {
        sweep_bucket(w, w->cursor, e);
        if (++w->cursor == m) {
            w->cursor = 0;
            sweep_overflow(w, e);
        }
    }
}

static void clear_all(nidus_window *w)
{
    if (nidus_window_entries(w))
        nidus_table_clear(&w->table);
    memset(w->per_age, 0, sizeof w->per_age);
    w->cursor = 0;
    w->owed = 0;
    w->credit = 0;
}

/* Adds to the sweep's debt what the clock's move to `tick` pays for: a pass an epoch, the fraction of a bucket
 * kept as credit; at most one pass is ever owed. */
static void accrue(nidus_window *w, uint64_t tick)
{
    uint64_t m = w->table.shape.buckets, dt = tick - w->latest_tick;
    if (dt >= w->epoch_ticks) {
        w->owed = m;
        w->credit = 0;
    } else {
        unsigned __int128 add = (unsigned __int128)m * dt + w->credit;
        w->credit = (uint64_t)(add % w->epoch_ticks);
        uint64_t n = (uint64_t)(add / w->epoch_ticks); /* < m */
        w->owed = m - w->owed <= n ? m : w->owed + n;
    }
    w->latest_tick = tick;
}

/* Whether some entry holds an age value that the epochs after `latest` up to e reuse (it is 8 epochs old). */
static bool ages_reused(const nidus_window *w, uint64_t e)
{
    uint64_t last = e - w->latest < NIDUS_WINDOW_AGES ? e : w->latest + NIDUS_WINDOW_AGES;
    for (uint64_t x = w->latest + 1; x <= last; x++)
        if (w->per_age[x & (NIDUS_WINDOW_AGES - 1)])
            return true;
    return false;
}

/* Sweeps up to n of the buckets owed at epoch e. */
static void pay(nidus_window *w, uint64_t n, uint64_t e)
{
    if (n > w->owed)
        n = w->owed;
    sweep(w, n, e);
    w->owed -= n;
}

/* What every write does first: moves the filter to its reading epoch at now, keeping every age readable, and pays
 * the sweep's debt. Returns the age value a copy added now takes. */
static unsigned move_clock(nidus_window *w, uint64_t now)
{
    uint64_t e = nidus_window_epoch_of(w, now);
    if (!w->written) {
        w->written = true;
        w->latest = e;
        w->latest_tick = now;
        return (unsigned)(e & (NIDUS_WINDOW_AGES - 1));
    }
    e = nidus_window_reading_epoch(w, now); /* a clock gone backwards: never expire early */
    uint64_t tick = now > w->latest_tick ? now : w->latest_tick;
    if (e - w->latest >= NIDUS_WINDOW_LIVE_EPOCHS) {
        clear_all(w); /* every entry is at least 6 epochs old */
        w->latest_tick = tick;
    } else {
        accrue(w, tick);
        if (ages_reused(w, e)) { /* one whole pass removes every expired entry */
            sweep(w, w->table.shape.buckets, e);
            w->owed = 0;
        }
        pay(w, w->owed, e);
    }
    w->latest = e;
    return (unsigned)(e & (NIDUS_WINDOW_AGES - 1));
}

static unsigned begin_write(nidus_window *w, uint64_t now)
{
    unsigned s = move_clock(w, now);
    nidus_window_clock_changed(w);
    return s;
}

/* Releases the grown tables that hold no live entry (a burst's tables, once its items have expired). */
static void release_idle(nidus_window *w)
{
    for (uint32_t k = w->ngrown; k >= 1; k--)
        if (!nidus_window_live_entries(w->grown[k - 1]))
            nidus_window_detach(w, k);
}

/* begin_write on every table of the filter (their clocks move together), then the idle grown tables released. */
static unsigned begin_write_all(nidus_window *w, uint64_t now)
{
    unsigned s = begin_write(w, now);
    if (w->ngrown) {
        for (uint32_t k = 0; k < w->ngrown; k++)
            begin_write(w->grown[k], now);
        release_idle(w);
    }
    return s;
}

/* ---- adds ---- */

typedef struct kick {
    uint64_t bucket;
    uint32_t put, took;
} kick;

/* Copies of value v in the slots of the pair (i, j). */
static unsigned pair_copies(const nidus_window *w, uint64_t i, uint64_t j, uint32_t v)
{
    const nidus_table *t = &w->table;
    unsigned copies = 0, b = t->shape.bucket_size;
    uint32_t vals[8];
    nidus_table_read_bucket(t, i, vals);
    for (unsigned k = 0; k < b; k++)
        copies += vals[k] == v;
    nidus_table_read_bucket(t, j, vals);
    for (unsigned k = 0; k < b && i != j; k++)
        copies += vals[k] == v;
    return copies;
}

/* Puts value v (primary bucket i) in the table: a free slot of its pair (expired entries there swept first),
 * the duplicate map once the pair holds its share of v, a walk of kicks, the stash; else the walk is undone and
 * NIDUS_ERR_FULL. */
static nidus_status insert(nidus_window *w, uint64_t i, uint32_t v)
{
    nidus_table *t = &w->table;
    unsigned s = v >> w->f, b = t->shape.bucket_size;
    uint64_t e = w->latest, j = nidus_table_alt(t, i, v);
    sweep_bucket(w, i, e);
    sweep_bucket(w, j, e);
    if (nidus_table_place_free(t, i, v)) {
        w->per_age[s]++;
        return NIDUS_OK;
    }
    uint64_t lower = i < j ? i : j;
    uint32_t vals[8];
    if (pair_copies(w, i, j, v) >= b) { /* more kicks would only move v's copies within the pair */
        nidus_status st = nidus_overflow_add(&t->overflow, w->alloc, lower, v);
        if (st)
            return st;
        nidus_table_overflow_changed(t);
        w->per_age[s]++;
        return NIDUS_OK;
    }
    kick log[KICK_LOG];
    unsigned moves = t->max_kicks < KICK_LOG ? t->max_kicks : KICK_LOG, n = 0;
    uint64_t at = (v & 1) ? j : i;
    uint32_t cur = v;
    for (; n < moves; n++) {
        nidus_table_read_bucket(t, at, vals);
        uint32_t victim = vals[(n + cur) % b];
        nidus_table_take(t, at, victim);
        nidus_table_place_free(t, at, cur); /* at has the slot just freed; cur's other bucket is full */
        log[n] = (kick){at, cur, victim};
        cur = victim;
        uint64_t next = nidus_table_alt(t, at, cur);
        sweep_bucket(w, next, e);
        if (nidus_table_place_free(t, next, cur)) {
            w->per_age[s]++;
            return NIDUS_OK;
        }
        at = next;
    }
    uint64_t other = nidus_table_alt(t, at, cur);
    if (t->shape.buckets > 2 && t->overflow.used < NIDUS_TABLE_STASH &&
        nidus_overflow_add(&t->overflow, w->alloc, at < other ? at : other, cur) == NIDUS_OK) {
        nidus_table_overflow_changed(t);
        w->per_age[s]++;
        return NIDUS_OK;
    }
    while (n--) { /* undo: every moved entry back in its pair, the new value dropped */
        nidus_table_take(t, log[n].bucket, log[n].put);
        nidus_table_place_free(t, log[n].bucket, log[n].took);
        nidus_table_stash_refill(t, log[n].bucket);
    }
    return NIDUS_ERR_FULL;
}

/* Writes are refused on views and while chunks are loading. */
static inline bool writable(const nidus_window *w) { return !w->read_only && !w->loader; }

/* Inserts the key's value of age s into table t. */
static nidus_status insert_hash(nidus_window *t, uint64_t hash, unsigned s)
{
    uint64_t i;
    uint32_t fp;
    locate(t, hash, &i, &fp);
    return insert(t, i, value_of(t, fp, s));
}

/* Makes a table one level past the newest and puts it last. */
static nidus_status grow(nidus_window *w)
{
    if (1 + w->ngrown >= NIDUS_WINDOW_MAX_TABLES)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_window *g;
    nidus_status st = nidus_window_level_new(w, nidus_window_table_at(w, w->ngrown)->level + 1, &g);
    if (st)
        return st;
    if ((st = nidus_window_attach(w, g)))
        nidus_window_free(g);
    return st;
}

/* An add of age s after begin_write_all: into the oldest table holding fewer live entries than it is sized for
 * (the newest when none is), else the next ones in turn, else a new table when the filter grows. */
static nidus_status add_value(nidus_window *w, uint64_t hash, unsigned s)
{
    uint32_t n = 1 + w->ngrown, k = 0;
    if (n == 1 && !w->expansion)
        return insert_hash(w, hash, s);
    while (k + 1 < n && nidus_window_live_entries(nidus_window_table_at(w, k)) >=
                            nidus_window_sized_entries(nidus_window_table_at(w, k)))
        k++;
    for (; k < n; k++) {
        nidus_status st = insert_hash(nidus_window_table_at(w, k), hash, s);
        if (st != NIDUS_ERR_FULL || !w->expansion)
            return st;
    }
    nidus_status st = grow(w);
    return st ? st : insert_hash(w->grown[w->ngrown - 1], hash, s);
}

nidus_status nidus_window_add_hash(nidus_window *w, uint64_t hash, uint64_t now)
{
    if (!w)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!writable(w))
        return NIDUS_ERR_READ_ONLY;
    return add_value(w, hash, begin_write_all(w, now));
}

nidus_status nidus_window_add(nidus_window *w, const void *key, size_t len, uint64_t now)
{
    if (!w || (!key && len))
        return NIDUS_ERR_INVALID_ARGUMENT;
    return nidus_window_add_hash(w, nidus_hash(key, len, w->seed), now);
}

/* The age value of the oldest live copy of fp in the pair of i (slots or overflow), or NIDUS_WINDOW_AGES when there is none. */
static unsigned oldest_live(const nidus_window *w, uint64_t i, uint32_t fp)
{
    for (unsigned r = NIDUS_WINDOW_LIVE_EPOCHS; r-- > 0;) {
        unsigned s = (unsigned)((w->latest - r) & (NIDUS_WINDOW_AGES - 1));
        if (nidus_table_count(&w->table, i, value_of(w, fp, s)))
            return s;
    }
    return NIDUS_WINDOW_AGES;
}

/* The table (index) holding the oldest live copy of the key, and that copy's age value in `*age`; UINT32_MAX
 * when no table holds a live copy. Every table's clock is the same after begin_write_all, so ages compare. */
static uint32_t oldest_table(const nidus_window *w, uint64_t hash, unsigned *age)
{
    uint32_t best = UINT32_MAX;
    unsigned oldest = 0;
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        const nidus_window *t = nidus_window_table_at(w, k);
        uint64_t i;
        uint32_t fp;
        locate(t, hash, &i, &fp);
        unsigned s = oldest_live(t, i, fp);
        if (s == NIDUS_WINDOW_AGES)
            continue;
        unsigned r = nidus_window_rel_age(t->latest, s);
        if (best == UINT32_MAX || r > oldest) {
            best = k;
            oldest = r;
            *age = s;
        }
    }
    return best;
}

/* Refreshes the live copy of age `old` of the key in table w to age s: NIDUS_ERR_FULL (nothing changed) when the
 * new copy found no room in w. */
static nidus_status refresh(nidus_window *w, uint64_t hash, unsigned old, unsigned s)
{
    uint64_t i;
    uint32_t fp;
    locate(w, hash, &i, &fp);
    nidus_table *t = &w->table;
    uint32_t v = value_of(w, fp, s), o = value_of(w, fp, old);
    uint64_t j = nidus_table_alt(t, i, o), lower = i < j ? i : j;
    if (t->overflow.used && nidus_overflow_get(&t->overflow, lower, o)) {
        /* a copy counted on the side (a duplicate beside the pair's share, or a stash entry): the new copy is
         * added first, then one old copy removed as a remove does it (the side's first, so the pair's slots
         * keep their share; a slot's refilled from the stash), and a failed add changes no copy */
        nidus_status st = insert(w, i, v);
        if (st)
            return st;
        nidus_table_remove(t, i, o); /* live, so the add's sweep left every copy of it */
        w->per_age[old]--;
        return NIDUS_OK;
    }
    /* in a slot of the pair, with no copy on the side: the new age takes its place in the pair (in the
     * emptier bucket, so x may keep a free slot, which a stash entry of another pair through x then takes) */
    uint64_t x = nidus_table_take(t, i, o) ? i : nidus_table_take(t, j, o) ? j : UINT64_MAX;
    if (x == UINT64_MAX)
        return NIDUS_ERR_FULL; /* not reached: oldest_live found the copy in the pair */
    nidus_table_place_free(t, x, v);
    nidus_table_stash_refill(t, x);
    w->per_age[old]--;
    w->per_age[s]++;
    return NIDUS_OK;
}

nidus_status nidus_window_add_unique(nidus_window *w, const void *key, size_t len, uint64_t now, bool *added)
{
    if (!w || (!key && len))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!writable(w))
        return NIDUS_ERR_READ_ONLY;
    unsigned s = begin_write_all(w, now);
    uint64_t hash = nidus_hash(key, len, w->seed);
    if (added)
        *added = false;
    for (uint32_t k = 0; k <= w->ngrown; k++) { /* a copy of this epoch's age: nothing to renew */
        const nidus_window *t = nidus_window_table_at(w, k);
        uint64_t i;
        uint32_t fp;
        locate(t, hash, &i, &fp);
        if (nidus_table_count(&t->table, i, value_of(t, fp, s)))
            return NIDUS_OK;
    }
    unsigned old = 0;
    uint32_t k = oldest_table(w, hash, &old);
    if (k != UINT32_MAX) { /* refresh: one copy of the oldest age fewer, one of the new age more */
        nidus_window *t = nidus_window_table_at(w, k);
        nidus_status st = refresh(t, hash, old, s);
        if (st != NIDUS_ERR_FULL)
            return st;
        /* its table has no room for the new age beside the old: the new copy goes where an add's would, then
         * the old one is removed (a failed add changes no copy) */
        if ((st = add_value(w, hash, s)))
            return st;
        uint64_t i;
        uint32_t fp;
        locate(t, hash, &i, &fp);
        nidus_table_remove(&t->table, i, value_of(t, fp, old));
        t->per_age[old]--;
        return NIDUS_OK;
    }
    nidus_status st = add_value(w, hash, s);
    if (!st && added)
        *added = true;
    return st;
}

/* ---- lookups and removes ---- */

/* The lookup of any filter at any time: both buckets chunk by chunk and the overflow map, against the live ages
 * of `now` (nidus_window_mask_at). The kernels (window_kernels.h) serve the common states and call this for the
 * rest. */
bool nidus_window_contains_general(const nidus_window *w, uint64_t hash, uint64_t now)
{
    unsigned mask = nidus_window_mask_at(w, now);
    if (!mask)
        return false; /* never written, loading, or everything expired */
    uint64_t i;
    uint32_t fp;
    locate(w, hash, &i, &fp);
    uint64_t j = nidus_table_alt(&w->table, i, fp);
    return bucket_matches(w, i, fp, mask, false) || bucket_matches(w, j, fp, mask, false) ||
           overflow_matches(w, i, j, fp, mask) != 0;
}

bool nidus_window_overflow_live(const nidus_window *w, uint64_t i, uint64_t j, uint32_t fp, uint64_t now)
{
    unsigned mask = nidus_window_mask_at(w, now);
    return mask && overflow_matches(w, i, j, fp, mask) != 0;
}

/* One table's lookup, the kernel every lookup of a windowed filter calls for each of its tables: by the table's
 * kernel byte (window_kernels.h), a plain cuckoo lookup of the two buckets with one age test on a match, no
 * division, whatever W. */
static inline __attribute__((always_inline)) bool table_contains(const nidus_window *w, uint64_t hash,
                                                                   uint64_t now)
{
    unsigned k = w->kernel;
    NIDUS_WKERNEL_DISPATCH(k, hash, w, hash, now)
    return nidus_window_contains_general(w, hash, now);
}

/* A grown filter's lookup (the first table, then the grown ones), or a one-table filter's that no kernel serves:
 * off the one-table path. */
__attribute__((noinline)) static bool contains_rest(const nidus_window *w, uint64_t hash, uint64_t now)
{
    if (!w->ngrown)
        return nidus_window_contains_general(w, hash, now);
    if (table_contains(w, hash, now))
        return true;
    if (w->loader)
        return false;
    for (uint32_t k = 0; k < w->ngrown; k++)
        if (table_contains(w->grown[k], hash, now))
            return true;
    return false;
}

bool nidus_window_contains_hash(const nidus_window *w, uint64_t hash, uint64_t now)
{
    unsigned k = w->kernel_one; /* GENERAL once grown: one byte tells the one-table kernels from the rest */
    NIDUS_WKERNEL_DISPATCH(k, hash, w, hash, now) /* a tail call to the table's kernel: no stack frame */
    return contains_rest(w, hash, now);
}

/* A key's lookup through its hash: out of line, so that an 8-byte key's path needs no stack frame. */
__attribute__((noinline)) static bool contains_hashed(const nidus_window *w, const void *key, size_t len, uint64_t now)
{
    if (!key && len)
        return false;
    return nidus_window_contains_hash(w, nidus_hash(key, len, w->seed), now);
}

bool nidus_window_contains(const nidus_window *w, const void *key, size_t len, uint64_t now)
{
    if (len == 8 && key) { /* the common key: XXH3's 8-byte branch with the seed's part precomputed, in the
                            * kernel (a grown filter's kernel_one is GENERAL: every table, by hash) */
        unsigned k = w->kernel_one;
        NIDUS_WKERNEL_DISPATCH(k, key8, w, key, now)
    }
    return contains_hashed(w, key, len, now);
}

/* Batched lookups by hashes[] or by keys[] and lens[]: the kernel's blocks, else one by one; a grown filter's
 * other tables after the first's, for the keys it did not hold. */
static void contains_many(const nidus_window *w, const uint64_t *hashes, const void *const *keys,
                          const size_t *lens, size_t n, uint64_t now, bool *out)
{
    if (__builtin_expect(w->ngrown != 0, 0)) {
        for (size_t k = 0; k < n; k++)
            out[k] = nidus_window_contains_hash(w, hashes ? hashes[k] : nidus_hash(keys[k], lens[k], w->seed), now);
        return;
    }
    if (w->kernel && nidus_window_kernel_serves(w, now)) {
#if NIDUS_HAVE_ISA_V3
        if (w->kernel & NIDUS_ISA_V3) {
            nidus_wkernel_many_v3(w, hashes, keys, lens, n, now, out);
            return;
        }
#endif
        nidus_wkernel_many_base(w, hashes, keys, lens, n, now, out);
        return;
    }
    for (size_t k = 0; k < n; k++)
        out[k] = nidus_window_contains_general(w, hashes ? hashes[k] : nidus_hash(keys[k], lens[k], w->seed), now);
}

void nidus_window_contains_many_hash(const nidus_window *w, const uint64_t *hashes, size_t n, uint64_t now,
                                     bool *out)
{
    if (!out)
        return;
    if (!w || !hashes) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    contains_many(w, hashes, NULL, NULL, n, now, out);
}

void nidus_window_contains_many(const nidus_window *w, const void *const *keys, const size_t *lens, size_t n,
                                uint64_t now, bool *out)
{
    if (!out)
        return;
    if (!w || !keys || !lens) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    contains_many(w, NULL, keys, lens, n, now, out);
}

uint64_t nidus_window_hash(const nidus_window *w, const void *key, size_t len)
{
    return w ? nidus_hash(key, len, w->seed) : 0;
}

uint64_t nidus_window_count(const nidus_window *w, const void *key, size_t len, uint64_t now)
{
    if (!w || (!key && len))
        return 0;
    return nidus_window_count_hash(w, nidus_hash(key, len, w->seed), now);
}

/* Live copies of the key in one table. */
static uint64_t table_count(const nidus_window *w, uint64_t hash, uint64_t now)
{
    unsigned mask = nidus_window_mask_at(w, now); /* 0 while loading */
    if (!mask)
        return 0;
    uint64_t i;
    uint32_t fp;
    locate(w, hash, &i, &fp);
    uint64_t j = nidus_table_alt(&w->table, i, fp);
    uint64_t n = bucket_matches(w, i, fp, mask, true) + overflow_matches(w, i, j, fp, mask);
    if (j != i)
        n += bucket_matches(w, j, fp, mask, true);
    return n;
}

uint64_t nidus_window_count_hash(const nidus_window *w, uint64_t hash, uint64_t now)
{
    if (!w || (w->ngrown && w->loader))
        return 0;
    uint64_t n = 0;
    for (uint32_t k = 0; k <= w->ngrown; k++)
        n += table_count(nidus_window_table_at(w, k), hash, now);
    return n;
}

nidus_status nidus_window_remove(nidus_window *w, const void *key, size_t len, uint64_t now)
{
    if (!w || (!key && len))
        return NIDUS_ERR_INVALID_ARGUMENT;
    return nidus_window_remove_hash(w, nidus_hash(key, len, w->seed), now);
}

nidus_status nidus_window_remove_hash(nidus_window *w, uint64_t hash, uint64_t now)
{
    if (!w)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!writable(w))
        return NIDUS_ERR_READ_ONLY;
    begin_write_all(w, now);
    unsigned s = 0;
    uint32_t k = oldest_table(w, hash, &s);
    if (k == UINT32_MAX)
        return NIDUS_ERR_NOT_FOUND;
    nidus_window *t = nidus_window_table_at(w, k);
    uint64_t i;
    uint32_t fp;
    locate(t, hash, &i, &fp);
    if (!nidus_table_remove(&t->table, i, value_of(t, fp, s)))
        return NIDUS_ERR_NOT_FOUND;
    t->per_age[s]--;
    if (k && !nidus_window_live_entries(t))
        nidus_window_detach(w, k); /* its last live item gone */
    return NIDUS_OK;
}

/* nidus_window_advance's steps on a table written before; the caller sets the lookups' shortcut after. Returns
 * the buckets it swept. */
static uint64_t advance(nidus_window *w, uint64_t now, uint64_t max_buckets, bool *done)
{
    uint64_t e = nidus_window_reading_epoch(w, now);
    uint64_t tick = now > w->latest_tick ? now : w->latest_tick;
    if (e - w->latest >= NIDUS_WINDOW_LIVE_EPOCHS) {
        clear_all(w);
        w->latest = e;
        w->latest_tick = tick;
        return 0;
    }
    accrue(w, tick);
    uint64_t n = 0;
    if (ages_reused(w, e)) { /* sweeps toward the whole pass a write would make, and stays in the latest write's
                              * epoch; readers read at e already (reading_epoch) */
        n = max_buckets < w->table.shape.buckets ? max_buckets : w->table.shape.buckets;
        sweep(w, n, e);
        w->owed = n >= w->owed ? 0 : w->owed - n;
        if (ages_reused(w, e)) {
            if (done)
                *done = false;
            return n;
        }
    }
    uint64_t paid = max_buckets < w->owed ? max_buckets : w->owed;
    pay(w, max_buckets, e);
    w->latest = e;
    if (done)
        *done = w->owed == 0;
    return n + paid;
}

nidus_status nidus_window_advance(nidus_window *w, uint64_t now, uint64_t max_buckets, bool *done)
{
    if (!w)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!writable(w))
        return NIDUS_ERR_READ_ONLY;
    if (done)
        *done = true;
    if (!w->written)
        return NIDUS_OK;
    uint64_t swept = advance(w, now, max_buckets, done);
    nidus_window_clock_changed(w);
    for (uint32_t k = 0; k < w->ngrown; k++) { /* the budget's rest, table by table; every clock moves */
        bool d = true;
        swept += advance(w->grown[k], now, swept < max_buckets ? max_buckets - swept : 0, &d);
        nidus_window_clock_changed(w->grown[k]);
        if (done && !d)
            *done = false;
    }
    release_idle(w);
    return NIDUS_OK;
}

/* ---- merges ---- */

size_t nidus_window_merge_difference(const nidus_window *dst, const nidus_window *src, char *buf, size_t cap)
{
    const char *what = NULL;
    uint64_t a = 0, b = 0;
    if (src->window != dst->window)
        what = "window", a = src->window, b = dst->window;
    else if (src->table.shape.buckets != dst->table.shape.buckets)
        what = "buckets", a = src->table.shape.buckets, b = dst->table.shape.buckets;
    else if (src->table.shape.bucket_size != dst->table.shape.bucket_size)
        what = "bucket size", a = src->table.shape.bucket_size, b = dst->table.shape.bucket_size;
    else if (src->f != dst->f)
        what = "fingerprint bits", a = src->f, b = dst->f;
    else if (src->seed != dst->seed)
        what = "seed", a = src->seed, b = dst->seed;
    else if (src->expansion != dst->expansion)
        what = "expansion", a = src->expansion, b = dst->expansion;
    int n = what ? snprintf(buf, cap, "%s %llu, not %llu", what, (unsigned long long)a, (unsigned long long)b) : 0;
    if (!what && cap)
        buf[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

/* Adds `*left` copies of value v, found in src's bucket x, to table w: one by one while the pair has room for
 * them in its slots, the rest to the duplicate map at once. `*held` bounds the entries of w's filter from above
 * (sweeps may have dropped some): NIDUS_ERR_TOO_LARGE, nothing added, when the copies could take them past
 * NIDUS_TABLE_MAX_ITEMS; else it counts each copy added. `*left` counts down the copies still to add. */
static nidus_status merge_copies(nidus_window *w, uint64_t x, uint32_t v, uint64_t *left, uint64_t *held)
{
    nidus_table *t = &w->table;
    unsigned s = v >> w->f;
    uint64_t j = nidus_table_alt(t, x, v), lower = x < j ? x : j;
    if (*left > NIDUS_TABLE_MAX_ITEMS - *held)
        return NIDUS_ERR_TOO_LARGE;
    while (*left) {
        if (pair_copies(w, x, j, v) >= t->shape.bucket_size && t->overflow.used) {
            uint64_t have = nidus_overflow_get(&t->overflow, lower, v), rest = *left;
            if (have) { /* the map already counts v's copies beside the pair: the rest join them */
                nidus_status st = nidus_overflow_set(&t->overflow, w->alloc, lower, v, have + rest);
                if (st)
                    return st;
                nidus_table_overflow_changed(t);
                w->per_age[s] += rest;
                *held += rest;
                *left = 0;
                return NIDUS_OK;
            }
        }
        nidus_status st = insert(w, x, v);
        if (st)
            return st;
        ++*held;
        --*left;
    }
    return NIDUS_OK;
}

/* Whether value v (an entry of src) is live at epoch e. */
static inline bool src_live(const nidus_window *src, uint32_t v, uint64_t e)
{
    uint64_t epoch = src->latest - nidus_window_rel_age(src->latest, v >> src->f);
    return e - epoch < NIDUS_WINDOW_LIVE_EPOCHS;
}

/* A merge's progress: the tables of its destination found full, skipped by later entries of their level, and a
 * bound from above on the destination's entries (merge_copies). */
typedef struct merge_full {
    const nidus_window *t[NIDUS_WINDOW_MAX_TABLES];
    unsigned n;
    uint64_t held;
} merge_full;

static bool found_full(const merge_full *m, const nidus_window *t)
{
    for (unsigned k = 0; k < m->n; k++)
        if (m->t[k] == t)
            return true;
    return false;
}

/* Adds `count` copies of value v (in bucket x of a source table of `level`) to filter w: into its tables of that
 * level in turn (those of the same shape), then, when w grows, into a new sibling table of that level. */
static nidus_status merge_entry(nidus_window *w, unsigned level, uint64_t x, uint32_t v, uint64_t count,
                                merge_full *full)
{
    uint64_t left = count;
    for (uint32_t k = 0; k <= w->ngrown; k++) {
        nidus_window *t = nidus_window_table_at(w, k);
        if (t->level != level || found_full(full, t))
            continue;
        nidus_status st = merge_copies(t, x, v, &left, &full->held);
        if (st != NIDUS_ERR_FULL)
            return st;
        full->t[full->n++] = t; /* at most one entry per table: a table found full is skipped after */
    }
    if (!w->expansion)
        return NIDUS_ERR_FULL;
    if (1 + w->ngrown >= NIDUS_WINDOW_MAX_TABLES)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_window *g;
    nidus_status st = nidus_window_level_new(w, level, &g);
    if (st)
        return st;
    if ((st = nidus_window_attach(w, g))) {
        nidus_window_free(g);
        return st;
    }
    return merge_copies(g, x, v, &left, &full->held);
}

/* Every live entry of table src added to filter w, at w's latest epoch (which is at least src's). */
static nidus_status merge_into(nidus_window *w, const nidus_window *src, merge_full *full)
{
    const nidus_table *t = &src->table;
    uint64_t e = w->latest;
    uint32_t vals[8];
    nidus_status st = NIDUS_OK;
    for (uint64_t x = 0; x < t->shape.buckets && !st; x++) {
        nidus_table_read_bucket(t, x, vals);
        for (unsigned k = 0; k < t->shape.bucket_size && !st; k++)
            if (vals[k] && src_live(src, vals[k], e))
                st = merge_entry(w, src->level, x, vals[k], 1, full);
    }
    for (uint32_t k = 0; !st && t->overflow.used && k < t->overflow.capacity; k++) {
        const nidus_overflow_entry *en = &t->overflow.entries[k];
        if (en->count && src_live(src, en->fingerprint, e))
            st = merge_entry(w, src->level, en->bucket, en->fingerprint, en->count, full);
    }
    return st;
}

nidus_status nidus_window_merge(nidus_window *dst, const nidus_window *src)
{
    if (!dst || !src || src->loader)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!writable(dst))
        return NIDUS_ERR_READ_ONLY;
    char why[1];
    if (nidus_window_merge_difference(dst, src, why, sizeof why))
        return NIDUS_ERR_INCOMPATIBLE;
    if (!src->written)
        return NIDUS_OK; /* nothing was ever added to it */
    /* the union is built in a copy, so that a failure leaves dst as it was */
    uint64_t n = nidus_window_encoded_size(dst);
    if (n > SIZE_MAX)
        return NIDUS_ERR_NO_MEMORY;
    uint8_t *enc = nidus_malloc(dst->alloc, (size_t)n);
    if (!enc)
        return NIDUS_ERR_NO_MEMORY;
    nidus_window *c = NULL;
    nidus_status st = nidus_window_encode(dst, enc, (size_t)n, NULL);
    if (!st)
        st = nidus_window_decode(enc, (size_t)n, dst->alloc, &c);
    nidus_free(dst->alloc, enc);
    if (st)
        return st == NIDUS_ERR_NO_MEMORY ? st : NIDUS_ERR_CORRUPT;
    uint64_t now = src->latest_tick > c->latest_tick ? src->latest_tick : c->latest_tick;
    begin_write_all(c, now); /* now is at least src's latest write: src's live entries are live at or before it */
    merge_full full = {.n = 0, .held = nidus_window_all_entries(c)};
    for (uint32_t k = 0; !st && k <= src->ngrown; k++) /* each table into c's of its level, made if need be */
        st = merge_into(c, nidus_window_table_at(src, k), &full);
    if (!st) {
        nidus_window tmp = *dst;
        *dst = *c;
        *c = tmp;
    }
    nidus_window_free(c);
    return st;
}

bool nidus_window_is_read_only(const nidus_window *w) { return !w || !writable(w); }
