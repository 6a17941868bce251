/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the windowed cuckoo filter's struct, shared by its operations (window.c) and its making, stats and
 * codec (window_new.c). */
#ifndef NIDUS_SRC_WINDOW_FILTER_H
#define NIDUS_SRC_WINDOW_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "cuckoo_table.h"
#include "nidus/codec.h"
#include "nidus/window.h"

/* The kind byte of a windowed filter's encoding. Not yet a member of nidus_kind: nidus_filter and the files do
 * not take windowed filters, and every switch over the kinds would have to. */
#define NIDUS_KIND_WINDOW ((nidus_kind)5)

enum {
    NIDUS_WINDOW_AGES = 1u << NIDUS_WINDOW_AGE_BITS, /* age values */
    NIDUS_WINDOW_LIVE_EPOCHS = 6u,                   /* an entry is live at relative ages 0..5 */
};

struct nidus_window {
    nidus_table table;    /* slots of f + 3 bits: fp | age << f (placement reads the low f bits only) */
    const nidus_allocator *alloc;
    uint64_t capacity;
    uint64_t window;
    uint64_t epoch_ticks; /* g = ceil(window / 5) */
    uint64_t epoch_inverse; /* floor((2^64 - 1) / g): epochs by a multiply */
    uint64_t fp_fields;   /* fp_mask in every field of a one-word bucket (the age bits clear) */
    uint64_t seed;
    unsigned f;           /* fingerprint bits, without the age */
    uint32_t fp_mask;
    bool written;         /* false until the first write: `latest` means nothing before it */
    uint64_t latest;      /* L: the epoch of the latest write */
    uint64_t latest_tick; /* the latest tick a write or sweep step saw: what the sweep's pace is measured from */
    uint64_t cursor;      /* the next bucket the sweep visits */
    uint64_t owed;        /* buckets the sweep owes (at most one pass) */
    uint64_t credit;      /* the fraction of a bucket owed, in bucket-ticks below epoch_ticks */
    uint64_t per_age[NIDUS_WINDOW_AGES]; /* entries holding each age value, overflow copies included */
};

/* Entries stored, expired ones not yet swept included. */
static inline uint64_t nidus_window_entries(const nidus_window *w)
{
    uint64_t n = 0;
    for (unsigned s = 0; s < NIDUS_WINDOW_AGES; s++)
        n += w->per_age[s];
    return n;
}

#endif
