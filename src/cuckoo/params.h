/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: how a cuckoo filter's parameters resolve into a table shape. */
#ifndef NIDUS_SRC_PARAMS_H
#define NIDUS_SRC_PARAMS_H

#include "cuckoo_table.h"
#include "nidus/cuckoo.h"

/* Bucket offsets reach at most 2^NIDUS_REACH_LOG2 buckets: see nidus_table_alt and docs/DESIGN-NOTES.md. */
#define NIDUS_REACH_LOG2 16u

/* The load factor a large table of bucket size b and f-bit fingerprints is sized for when an add may move up to
 * max_kicks fingerprints: below what the add's search reliably reaches. */
double nidus_cuckoo_design_load(unsigned bucket_size, unsigned fp_bits, unsigned max_kicks);

/* Probability that a lookup of an absent key matches some fingerprint when all 2b slots of its buckets are
 * occupied: 2b times the chance that two fingerprints drawn as nidus_inline_cuckoo_fingerprint draws them are equal,
 * (2^f + 2) / 4^f (the value 1 is twice as likely as the others). */
double nidus_cuckoo_error_bound(unsigned bucket_size, unsigned fp_bits);

/* The most items a table of `shape` holds every time, as sized above: the capacity it was sized for (or more,
 * when its bucket count was rounded up). */
uint64_t nidus_cuckoo_capacity_of(const nidus_table_shape *shape, unsigned max_kicks);

/* Resolves params into a plan and the table shape that realises it. */
nidus_status nidus_cuckoo_resolve(const nidus_cuckoo_params *params, nidus_cuckoo_plan *plan,
                                  nidus_table_shape *shape, unsigned *max_kicks);

#endif
