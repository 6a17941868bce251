/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the windowed cuckoo filter's struct, shared by its operations (window.c) and its making, stats and
 * codec (window_new.c, window_codec.c). */
#ifndef NIDUS_SRC_WINDOW_FILTER_H
#define NIDUS_SRC_WINDOW_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "cuckoo_table.h"
#include "file_io.h"
#include "nidus/codec.h"
#include "nidus/window.h"

enum {
    NIDUS_WINDOW_AGES = 1u << NIDUS_WINDOW_AGE_BITS, /* age values */
    NIDUS_WINDOW_LIVE_EPOCHS = 6u,                   /* an entry is live at relative ages 0..5 */
};

/* The lookup kernels' constants, each in both halves of a pair: a lookup tests its two buckets side by side, one
 * in each 64-bit lane of a 128-bit vector where the CPU has them (SSE2), so every constant is one operand. Per
 * field of a one-word bucket: */
typedef struct nidus_window_lanes {
    uint64_t fp_fields[2]; /* fp_mask (the age bits clear) */
    uint64_t age_low[2];   /* 7 */
    uint64_t age_carry[2]; /* 8 */
    uint64_t ones[2];      /* the field's lowest bit */
    uint64_t high[2];      /* the field's highest bit */
    uint64_t shift[2];     /* f, in the low lane only: the ages' shift down to each field's low bits */
    uint64_t age_base7[2]; /* (latest mod 8) + 1: plus 7 - age, the age relative to latest's, mod 8 */
    uint64_t age_dead[2][2]; /* [d]: min(2 + B - latest + d, 8) */
} nidus_window_lanes;

struct nidus_window {
    nidus_table table;    /* slots of f + 3 bits: fp | age << f (placement reads the low f bits only) */
    const nidus_allocator *alloc;
    uint64_t capacity;
    uint64_t window;
    uint64_t epoch_ticks; /* g = ceil(window / 5) */
    uint64_t epoch_inverse; /* floor((2^64 - 1) / g): epochs by a multiply */
    uint64_t seed;
    unsigned max_kicks;   /* as made: a view's table keeps none of its own */
    unsigned f;           /* fingerprint bits, without the age */
    uint32_t fp_mask;
    bool written;         /* false until the first write: `latest` means nothing before it */
    uint64_t latest;      /* L: the epoch of the latest write */
    uint64_t latest_tick; /* the latest tick a write or sweep step saw: what the sweep's pace is measured from */
    uint64_t cursor;      /* the next bucket the sweep visits */
    uint64_t owed;        /* buckets the sweep owes (at most one pass) */
    uint64_t credit;      /* the fraction of a bucket owed, in bucket-ticks below epoch_ticks */
    uint64_t per_age[NIDUS_WINDOW_AGES]; /* entries holding each age value, overflow copies included */
    /* Lookups' shortcut (nidus_window_clock_changed sets it after every change of the clock): before tick
     * mask_until a lookup's live ages are mask_by_d[0]; from it on, mask_by_d[d] for the d epochs it reads after
     * latest (0 from d = 6 on). A filter never written or loading: 0 until UINT64_MAX. mask_until 0: no
     * shortcut (latest_tick's epoch is past latest's), nidus_window_live_mask decides. */
    uint64_t mask_until;
    uint64_t mask_until_d1; /* the end of the next epoch: mask_by_d[1] before it */
    uint8_t mask_by_d[NIDUS_WINDOW_AGES];
    /* The lookup kernels' form of the live ages (window_kernels_impl.h), from the epoch B of latest_tick (the
     * epoch every reading before the end of B reads in): an age value s is dead at d epochs after B iff
     * ((latest - s) mod 8) + age_dead[d] >= 8. The kernels serve a time before kernel_until (the end of the
     * epoch after B), with age_dead[1] from kernel_d1_from (the end of B) on. */
    nidus_window_lanes lanes;
    uint64_t kernel_d1_from;
    uint64_t kernel_until;
    uint64_t hash8_flip;  /* nidus_hash8_flip(seed): 8-byte keys hashed with the seed's part precomputed */
    uint8_t kernel;       /* which lookup kernel serves the table: NIDUS_WKERNEL_* (window_kernels.h) */
    uint8_t kernel_one;   /* the filter's: kernel while it is one table, GENERAL once it has grown (so that a
                           * lookup tests one byte) */
    bool read_only;       /* a view (nidus_window_view, _map_file): the table borrowed from its buffer */
    nidus_mapping *mapping;      /* nidus_window_map_file: the file the table is in, unmapped by free */
    nidus_chunk_loader *loader;  /* while chunks are being loaded: the table and `pending` are incomplete */
    uint8_t *pending;     /* the overflow entries' bytes while loading, applied when the last chunk lands */
    uint32_t pending_entries;
    /* Growth. The struct is the first table and the filter; each grown table is a one-table nidus_window of the
     * same window, bucket size, seed and clock (every write moves all the tables' clocks), held in `grown` in
     * order of level (siblings of a level in the order they were made). */
    unsigned expansion;   /* 0: never grows (the first table only) */
    uint64_t max_memory;  /* the bound on the memory growth keeps (nidus_window_held), 0: none; 0 whenever
                           * expansion is (the first table's struct only) */
    unsigned level;       /* this table's growth step: 0 for the first table (and its siblings), k for capacity *
                           * expansion^k (a merge adds sibling tables of a level that has no room) */
    uint32_t ngrown;      /* grown tables held (the first table's struct only) */
    struct nidus_window **grown;
};

/* Table k of a filter: 0 the first (the filter itself), then the grown ones. */
static inline nidus_window *nidus_window_table_at(const nidus_window *w, uint32_t k)
{
    return k ? w->grown[k - 1] : (nidus_window *)w;
}

/* g = ceil(window / 5): the ticks of an epoch. */
static inline uint64_t nidus_window_epoch_ticks(uint64_t window) { return window / 5 + (window % 5 != 0); }

/* window_new.c: the table shape of f-bit fingerprints with their ages (placement by the fingerprint bits alone),
 * and an empty filter of that shape with only its table and fingerprint masks set: the table owned, or borrowed
 * from `borrow` (nidus_table_data_bytes of it), read-only unless `writable`. */
nidus_table_shape nidus_window_shape(uint64_t buckets, unsigned b, unsigned f);
nidus_status nidus_window_make(const nidus_allocator *a, const nidus_table_shape *shape, unsigned max_kicks,
                              const uint8_t *borrow, bool writable, nidus_window **out);

/* What a filter's grown tables are derived from: its first table's parameters. */
typedef struct nidus_window_base {
    uint64_t capacity, window, buckets;
    unsigned bucket_size, f, max_kicks, expansion;
} nidus_window_base;
nidus_window_base nidus_window_base_of(const nidus_window *w);

/* The capacity and table shape of a grown table of `level`: capacity * expansion^level, at the bucket size of
 * the first table and the fewest fingerprint bits (no fewer than its) within the level's share of the error
 * budget (nidus_cuckoo_table_budget), so that one table a level sums to at most twice the first's bound; level
 * 0 (a merge's sibling of the first table) is the first table's shape.
 * NIDUS_ERR_LIMIT_TABLES past 29 bits or level 255, NIDUS_ERR_TOO_LARGE past the addresses. */
nidus_status nidus_window_level_shape(const nidus_window_base *base, unsigned level, uint64_t *capacity,
                                      nidus_table_shape *shape);
/* The first table's shape nidus_window_new gives a filter of the base's capacity, window, bucket size,
 * fingerprint bits and kicks (its buckets and expansion unused): decoders hold a first table to it, so that a
 * capacity, which growth multiplies, is never far above what the table's bytes can hold. */
nidus_status nidus_window_first_shape(const nidus_window_base *base, nidus_table_shape *shape);
/* An empty one-table filter of this shape and these fields (no clock, level 0: the caller sets them). */
nidus_status nidus_window_table_new(const nidus_allocator *a, const nidus_table_shape *shape, unsigned max_kicks,
                                    uint64_t capacity, uint64_t window, uint64_t seed, nidus_window **out);
/* An empty table of `level` for w (nidus_window_level_shape), its clock w's; NIDUS_ERR_LIMIT_MEMORY, before
 * anything is allocated, when it would take what w holds past w->max_memory (nidus_window_held, plus the new
 * table's slots, struct and pointer). */
nidus_status nidus_window_level_new(const nidus_window *w, unsigned level, nidus_window **out);
/* Everything the filter holds through its allocator (stats' memory_bytes): every table's struct, slots and
 * overflow map, and the grown tables' array. Creation and growth keep it within max_memory (overflow maps grow
 * unasked, and may pass it); decoders check the slots alone (nidus_cuckoo_table_cost), which it bounds. */
uint64_t nidus_window_held(const nidus_window *w);
/* Puts table g in w's grown tables, in order of level (the array grows by one). NIDUS_ERR_NO_MEMORY. */
nidus_status nidus_window_attach(nidus_window *w, nidus_window *g);
/* Frees grown table k (>= 1) and closes the gap. */
void nidus_window_detach(nidus_window *w, uint32_t k);
/* Entries of table t alive at `now` (its per-age counts over the live ages, no scan). */
uint64_t nidus_window_live_at(const nidus_window *t, uint64_t now);
/* Entries of table t alive at its latest tick. */
static inline uint64_t nidus_window_live_entries(const nidus_window *t)
{
    return nidus_window_live_at(t, t->latest_tick);
}
/* Items of one window table t is sized for (its capacity), and the entries (1.2 x that) its slots are sized for. */
static inline uint64_t nidus_window_sized_entries(const nidus_window *t)
{
    return t->capacity + t->capacity / 5 + (t->capacity % 5 != 0);
}

/* window_codec.c: reading encodings and files (decode targets and modes as codec.h's), and rewriting a
 * borrowed filter's file body in place. */
nidus_status nidus_window_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                     nidus_decode_target target, nidus_decode_mode mode, nidus_window **out);
nidus_status nidus_window_map_file_lazy(const char *path, const nidus_allocator *allocator,
                                       nidus_file_prepare_fn prepare, void *ctx, nidus_window **out);
/* As nidus_cuckoo_rewrite_body: the prefix, meta and overflow entries of a borrowed filter rewritten in place;
 * NIDUS_ERR_UNSUPPORTED when the layout moved (the caller saves it whole). */
nidus_status nidus_window_rewrite_body(const nidus_window *w, uint8_t *body, size_t len);

/* ---- time: epochs and the live ages ---- */

/* now / g by a multiply (epoch_inverse = floor((2^64 - 1) / g) makes the estimate low by at most one): a lookup
 * takes the epoch of its time, and a 64-bit division would be a third of a lookup's work. */
static inline uint64_t nidus_window_epoch_of(const nidus_window *w, uint64_t now)
{
    uint64_t q = (uint64_t)(((unsigned __int128)now * w->epoch_inverse) >> 64);
    return now - q * w->epoch_ticks >= w->epoch_ticks ? q + 1 : q;
}

/* The epoch a call at `now` works in: now's, or the latest tick's a write or sweep step saw when now is earlier.
 * It is the latest write's epoch or up to 5 after it (an advance that stayed in the latest write's epoch while
 * old ages were still held): readers behind that advance read at its time, as they do after any other write. */
static inline uint64_t nidus_window_reading_epoch(const nidus_window *w, uint64_t now)
{
    uint64_t e = nidus_window_epoch_of(w, now), seen = nidus_window_epoch_of(w, w->latest_tick);
    return e > seen ? e : seen;
}

/* The relative age of age value s against reference epoch l. */
static inline unsigned nidus_window_rel_age(uint64_t l, unsigned s)
{
    return (unsigned)((l - s) & (NIDUS_WINDOW_AGES - 1));
}

/* Age values live at `now`, a bit each: the 6 - d values ending at latest's (d: epochs from the latest write to
 * the reading's). Lookups test a matching slot's age against it; stats sum the per-age counts it names. */
static inline unsigned nidus_window_live_mask(const nidus_window *w, uint64_t now)
{
    if (!w->written)
        return 0;
    uint64_t d = nidus_window_reading_epoch(w, now) - w->latest;
    if (d >= NIDUS_WINDOW_LIVE_EPOCHS)
        return 0;
    unsigned run = (1u << (NIDUS_WINDOW_LIVE_EPOCHS - d)) - 1; /* relative ages 0 .. 5 - d */
    unsigned from = (unsigned)((w->latest - (NIDUS_WINDOW_LIVE_EPOCHS - 1 - d)) & (NIDUS_WINDOW_AGES - 1));
    unsigned rot = run << from;
    return (rot | rot >> NIDUS_WINDOW_AGES) & ((1u << NIDUS_WINDOW_AGES) - 1);
}

/* Sets the lookups' shortcuts after the filter's clock (written, latest, latest_tick) or its loading state
 * changed. The general lookup's: every time before the start of the epoch after latest reads with d = 0 while
 * latest_tick's epoch is latest (else no shortcut: mask_until 0). The kernels': the dead ages of latest_tick's
 * epoch and the next, whatever latest_tick's distance from latest. */
static inline void nidus_window_clock_changed(nidus_window *w)
{
    uint64_t ones = w->table.chunk_swar[0].ones;
    nidus_window_lanes *l = &w->lanes;
    memset(w->mask_by_d, 0, sizeof w->mask_by_d);
    l->age_base7[0] = l->age_base7[1] = ((w->latest & (NIDUS_WINDOW_AGES - 1)) + 1) * ones;
    for (unsigned d = 0; d < 2; d++)
        l->age_dead[d][0] = l->age_dead[d][1] = NIDUS_WINDOW_AGES * ones;
    if (!w->written || w->loader) {
        w->mask_until = w->mask_until_d1 = UINT64_MAX;
        w->kernel_d1_from = w->kernel_until = UINT64_MAX;
        return;
    }
    uint64_t g = w->epoch_ticks, seen = nidus_window_epoch_of(w, w->latest_tick), d0 = seen - w->latest;
    for (unsigned d = 0; d < 2; d++) { /* dead from relative age 6 - (d0 + d) on: 2 + d0 + d added carries */
        uint64_t k = NIDUS_WINDOW_AGES - NIDUS_WINDOW_LIVE_EPOCHS + d0 + d;
        l->age_dead[d][0] = l->age_dead[d][1] = (k < NIDUS_WINDOW_AGES ? k : NIDUS_WINDOW_AGES) * ones;
    }
    w->kernel_d1_from = seen >= UINT64_MAX / g ? UINT64_MAX : (seen + 1) * g;
    w->kernel_until = w->kernel_d1_from > UINT64_MAX - g ? UINT64_MAX : w->kernel_d1_from + g;
    if (d0) {
        w->mask_until = w->mask_until_d1 = 0;
        return;
    }
    for (unsigned d = 0; d < NIDUS_WINDOW_LIVE_EPOCHS; d++) { /* the run of 6 - d ages ending at latest's */
        unsigned run = (1u << (NIDUS_WINDOW_LIVE_EPOCHS - d)) - 1;
        unsigned from = (unsigned)((w->latest - (NIDUS_WINDOW_LIVE_EPOCHS - 1 - d)) & (NIDUS_WINDOW_AGES - 1));
        unsigned rot = run << from;
        w->mask_by_d[d] = (uint8_t)((rot | rot >> NIDUS_WINDOW_AGES) & ((1u << NIDUS_WINDOW_AGES) - 1));
    }
    w->mask_until = w->kernel_d1_from;
    w->mask_until_d1 = w->kernel_until;
}

/* The age values live at `now`: nidus_window_live_mask's answer, from the shortcut when there is one. */
static inline unsigned nidus_window_mask_at(const nidus_window *w, uint64_t now)
{
    if (__builtin_expect(now < w->mask_until, 1))
        return w->mask_by_d[0];
    if (now < w->mask_until_d1)
        return w->mask_by_d[1];
    if (!w->mask_until)
        return nidus_window_live_mask(w, now);
    uint64_t d = nidus_window_epoch_of(w, now) - w->latest; /* >= 2: now is past the epoch after latest's */
    return d < NIDUS_WINDOW_AGES ? w->mask_by_d[d] : 0;
}

/* Entries stored, expired ones not yet swept included. */
static inline uint64_t nidus_window_entries(const nidus_window *w)
{
    uint64_t n = 0;
    for (unsigned s = 0; s < NIDUS_WINDOW_AGES; s++)
        n += w->per_age[s];
    return n;
}

/* Entries stored in all of filter w's tables, expired ones not yet swept included; UINT64_MAX when their sum does
 * not fit (a filter holds at most NIDUS_TABLE_MAX_ITEMS). */
static inline uint64_t nidus_window_all_entries(const nidus_window *w)
{
    uint64_t n = 0;
    for (uint32_t k = 0; k <= w->ngrown; k++)
        n = nidus_add_sat(n, nidus_window_entries(nidus_window_table_at(w, k)));
    return n;
}

#endif
