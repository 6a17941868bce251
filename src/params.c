/* SPDX-License-Identifier: BSD-3-Clause */
#include "params.h"

#include <math.h>

double nidus_cuckoo_design_load(unsigned bucket_size)
{
    switch (bucket_size) {
    case 1: return 0.30;
    case 2: return 0.84;
    case 4: return 0.95;
    default: return 0.98;
    }
}

double nidus_cuckoo_error_bound(unsigned bucket_size, unsigned fp_bits)
{
    double values = ldexp(1.0, (int)fp_bits);
    double bound = 2.0 * bucket_size * (values + 2.0) / (values * values);
    return bound < 1.0 ? bound : 1.0;
}

static bool valid_bucket_size(unsigned b) { return b == 1 || b == 2 || b == 4 || b == 8; }

/* The smallest f meeting `error` for bucket size b, or 0 when even 32 bits do not. */
static unsigned bits_for_error(unsigned b, double error, unsigned min_bits)
{
    for (unsigned f = min_bits; f <= NIDUS_CUCKOO_MAX_FINGERPRINT_BITS; f++)
        if (nidus_cuckoo_error_bound(b, f) <= error)
            return f;
    return 0;
}

static unsigned bucket_bits(unsigned b, unsigned f, bool semi) { return semi ? 4 * f - 4 : b * f; }

/* Buckets for `capacity` items at the design load, rounded up to even (the placement needs it). The load a
 * walk reaches varies more in small tables (measured with bench/load_threshold.c: the worst of 200 runs at b=4
 * is 93 % with 64 buckets, 95.5 % with 264), so sqrt(capacity) slots and eight buckets are added: 0.1 % of a
 * million-item table, and what makes a table of 60 items hold 60. */
static uint64_t buckets_for(uint64_t capacity, unsigned b)
{
    double slots = (double)capacity / nidus_cuckoo_design_load(b) + sqrt((double)capacity) + 8.0 * b;
    double want = ceil(slots / b);
    if (want >= 0x1p62)
        return 0;
    uint64_t m = (uint64_t)want;
    m += m & 1;
    return m < 2 ? 2 : m;
}

nidus_status nidus_cuckoo_resolve(const nidus_cuckoo_params *p, nidus_cuckoo_plan *plan,
                                  nidus_table_shape *shape, unsigned *max_kicks)
{
    if (p->capacity < 1 || p->max_kicks > NIDUS_CUCKOO_MAX_KICKS)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->bucket_size && !valid_bucket_size(p->bucket_size))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (p->semi_sort && p->bucket_size && p->bucket_size != 4)
        return NIDUS_ERR_INVALID_ARGUMENT;
    unsigned min_bits = p->semi_sort ? 5 : NIDUS_CUCKOO_MIN_FINGERPRINT_BITS;
    if (p->fingerprint_bits && (p->fingerprint_bits < min_bits || p->fingerprint_bits > 32))
        return NIDUS_ERR_INVALID_ARGUMENT;
    double error = p->error_rate;
    if (!p->fingerprint_bits) {
        if (error == 0.0)
            error = NIDUS_CUCKOO_DEFAULT_ERROR_RATE;
        if (!(error > 0.0 && error < 1.0))
            return NIDUS_ERR_INVALID_ARGUMENT;
    }

    /* Try each allowed bucket size; keep the one with the fewest bits per item (ties: the smaller b, which
     * probes less). b = 1 only when asked for: at under half load it never wins. */
    unsigned candidates[3] = {2, 4, 8}, n = 3;
    if (p->bucket_size || p->semi_sort) {
        candidates[0] = p->bucket_size ? p->bucket_size : 4;
        n = 1;
    }
    unsigned best_b = 0, best_f = 0;
    double best_cost = INFINITY;
    for (unsigned k = 0; k < n; k++) {
        unsigned b = candidates[k];
        unsigned f = p->fingerprint_bits ? p->fingerprint_bits : bits_for_error(b, error, min_bits);
        double cost = bucket_bits(b, f, p->semi_sort) / (b * nidus_cuckoo_design_load(b));
        if (f && cost < best_cost) {
            best_cost = cost;
            best_b = b;
            best_f = f;
        }
    }
    if (!best_b)
        return NIDUS_ERR_INVALID_ARGUMENT; /* the error rate needs more than 32 fingerprint bits */

    uint64_t buckets = buckets_for(p->capacity, best_b);
    if (!buckets)
        return NIDUS_ERR_TOO_LARGE;
    nidus_table_shape s = {
        .buckets = buckets,
        .bucket_size = best_b,
        .fp_bits = best_f,
        .offset_bits = best_f,
        .reach_log2 = NIDUS_REACH_LOG2,
        .semi_sort = p->semi_sort,
    };
    nidus_status st = nidus_table_check_shape(&s);
    if (st)
        return st;
    uint64_t bytes = nidus_table_shape_bytes(&s);
    *plan = (nidus_cuckoo_plan){
        .bucket_size = best_b,
        .fingerprint_bits = best_f,
        .semi_sort = p->semi_sort,
        .buckets = buckets,
        .slots = buckets * best_b,
        .table_bytes = bytes,
        .bits_per_item = (double)bytes * 8.0 / (double)p->capacity,
        .error_bound = nidus_cuckoo_error_bound(best_b, best_f),
    };
    if (shape)
        *shape = s;
    if (max_kicks)
        *max_kicks = p->max_kicks ? p->max_kicks : NIDUS_CUCKOO_DEFAULT_MAX_KICKS;
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_plan_params(const nidus_cuckoo_params *params, nidus_cuckoo_plan *plan)
{
    if (!params || !plan)
        return NIDUS_ERR_INVALID_ARGUMENT;
    return nidus_cuckoo_resolve(params, plan, NULL, NULL);
}
