/* SPDX-License-Identifier: BSD-3-Clause */
#include "params.h"

#include <math.h>

/* How a table of bucket size b is sized when an add may move up to max_kicks fingerprints (bench/reserve_load.c,
 * docs/DESIGN-NOTES.md "Sizing"). slots = capacity / load + per_root * sqrt(capacity) + fixed, where `load` is
 * below the worst load at the first failed add over 20 tables of 2^18 slots with f = 12, and per_root and fixed
 * cover small tables, whose worst case lies further below: they are fitted so that every capacity from 3 to
 * 4000 held in each of 5,000 (N = 4000) to 100,000 (N <= 200) seeds. The add's search is at most max_kicks
 * moves deep and 1024 buckets wide, so from some depth on more kicks change nothing; a max_kicks between two
 * columns takes the lower one's entry. b = 1 was measured at small sizes only with one kick: its other entries
 * are its large-table loads less a fifth, with a wide margin for small tables. */
typedef struct sizing {
    double load, per_root, fixed;
} sizing;

static const unsigned sizing_kicks[] = {1, 2, 5, 10, 20};
static const sizing sizing_table[4][5] = {
    /* max_kicks: 1              2                  5                  10                 20 and more */
    /* b=1 */ {{0.015, 5, 16}, {0.04, 20, 16}, {0.18, 20, 16}, {0.24, 20, 16}, {0.30, 20, 16}},
    /* b=2 */ {{0.20, 13.25, 16}, {0.46, 8.75, 16}, {0.78, 9.25, 16}, {0.85, 9.75, 16}, {0.85, 9.75, 16}},
    /* b=4 */ {{0.55, 1.25, 16}, {0.82, 1, 16}, {0.955, 1.5, 16}, {0.955, 1.5, 16}, {0.955, 1.5, 16}},
    /* b=8 */ {{0.80, 0.5, 32}, {0.94, 0.5, 32}, {0.98, 1.5, 32}, {0.98, 1.5, 32}, {0.98, 1.5, 32}},
};

/* Short fingerprints give few distinct bucket offsets (f bits, so at most 2^f of them), and the cuckoo graph
 * is then less random: the load reached at the first failure, relative to f = 12, measured the same way
 * (5 tables of 2^18 slots, max_kicks >= 10). Rows b = 1, 2, 4, 8; columns f >= 12, 10-11, 8-9, 6-7, 4-5. */
static const double short_fp_factor[4][5] = {
    {1, 0.85, 0.57, 0.46, 0.39},
    {1, 1, 0.98, 0.94, 0.70},
    {1, 1, 0.98, 0.96, 0.88},
    {1, 1, 0.99, 0.97, 0.93},
};

static unsigned size_row(unsigned bucket_size)
{
    return bucket_size >= 8 ? 3 : bucket_size >= 4 ? 2 : bucket_size >= 2 ? 1 : 0;
}

static sizing sizing_for(unsigned bucket_size, unsigned fp_bits, unsigned max_kicks)
{
    unsigned row = size_row(bucket_size), col = 0;
    while (col + 1 < sizeof sizing_kicks / sizeof *sizing_kicks && max_kicks >= sizing_kicks[col + 1])
        col++;
    sizing z = sizing_table[row][col];
    unsigned fcol = fp_bits >= 12 ? 0 : fp_bits >= 10 ? 1 : fp_bits >= 8 ? 2 : fp_bits >= 6 ? 3 : 4;
    z.load *= short_fp_factor[row][fcol];
    return z;
}

double nidus_cuckoo_design_load(unsigned bucket_size, unsigned fp_bits, unsigned max_kicks)
{
    return sizing_for(bucket_size, fp_bits, max_kicks).load;
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

/* Buckets for `capacity` items (see sizing_table), rounded up to even (the placement needs it). Up to 2b items
 * take two buckets: every key's pair is then those two, so they always fit. */
static uint64_t buckets_for(uint64_t capacity, unsigned b, unsigned f, unsigned max_kicks)
{
    if (capacity <= 2 * (uint64_t)b)
        return 2;
    sizing z = sizing_for(b, f, max_kicks);
    double slots = (double)capacity / z.load + z.per_root * sqrt((double)capacity) + z.fixed;
    double want = ceil(slots / b);
    if (want >= 0x1p62)
        return 0;
    uint64_t m = (uint64_t)want;
    m += m & 1;
    return m < 2 ? 2 : m;
}

uint64_t nidus_cuckoo_capacity_of(const nidus_table_shape *shape, unsigned max_kicks)
{
    unsigned b = shape->bucket_size;
    if (shape->buckets <= 2)
        return 2 * (uint64_t)b;
    /* Invert slots = N / load + per_root * sqrt(N) + fixed for N, then step down until buckets_for agrees. */
    sizing z = sizing_for(b, shape->fp_bits, max_kicks);
    double slots = (double)shape->buckets * b - z.fixed;
    if (slots <= 0)
        return 2 * (uint64_t)b;
    double root = (-z.per_root + sqrt(z.per_root * z.per_root + 4.0 * slots / z.load)) * z.load / 2.0;
    uint64_t n = (uint64_t)(root * root);
    while (n > 2 * (uint64_t)b && buckets_for(n, b, shape->fp_bits, max_kicks) > shape->buckets)
        n--;
    return n > 2 * (uint64_t)b ? n : 2 * (uint64_t)b;
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
    unsigned kicks = p->max_kicks ? p->max_kicks : NIDUS_CUCKOO_DEFAULT_MAX_KICKS;
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
        double cost = bucket_bits(b, f, p->semi_sort) / (b * nidus_cuckoo_design_load(b, f, kicks));
        if (f && cost < best_cost) {
            best_cost = cost;
            best_b = b;
            best_f = f;
        }
    }
    if (!best_b)
        return NIDUS_ERR_INVALID_ARGUMENT; /* the error rate needs more than 32 fingerprint bits */

    uint64_t buckets = buckets_for(p->capacity, best_b, best_f, kicks);
    if (!buckets)
        return NIDUS_ERR_TOO_LARGE;
    nidus_table_shape s = {
        .buckets = buckets,
        .bucket_size = best_b,
        .fp_bits = best_f,
        .offset_bits = best_f,
        .reach_log2 = NIDUS_REACH_LOG2,
        .semi_sort = p->semi_sort,
        .stride = 1, /* a first table: what nidus_table_init keeps, so base and table 0 compare equal */
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
        *max_kicks = kicks;
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_plan_params(const nidus_cuckoo_params *params, nidus_cuckoo_plan *plan)
{
    if (!params || !plan)
        return NIDUS_ERR_INVALID_ARGUMENT;
    return nidus_cuckoo_resolve(params, plan, NULL, NULL);
}
