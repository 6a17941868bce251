/* SPDX-License-Identifier: BSD-3-Clause */
#include "params.h"
#include "nidus/inline_cuckoo.h"

#include <math.h>
#include <string.h>

/* How a table of bucket size b is sized when an add may move up to max_kicks fingerprints (bench/reserve_load.c,
 * docs/DESIGN-NOTES.md "Sizing"). slots = capacity / load + per_root * sqrt(capacity) + fixed. `load` is below
 * the worst load at the first failed add over 20 tables of 2^18 slots with f = 12: what large tables are sized
 * for. per_root and fixed fit small tables, where an add the search cannot place waits in the table's stash
 * (NIDUS_TABLE_STASH entries) and the table is full only when the stash is. They were fitted to the fewest slots
 * that hold N keys with a stash of 4 in each of 100,000 (N <= 200), 20,000 (N <= 1000) or 5,000 (N <= 4000)
 * seeds, for 37 capacities from 3 to 4000 at the fingerprints the default 1 % error gives (f = 8, 9, 10, 11 at
 * b = 1, 2, 4, 8; `nidus_bench_cuckoo_load need N RUNS B KICKS 4 F`): with `load` as at f >= 12 (shorter
 * fingerprints only add slots), the sizing covers every capacity between two measured ones, read on the straight
 * line between their needs, at the fewest slots per item over capacities spread evenly in log N. The b=2 rows
 * from 5 kicks were refitted for the stash of 8 it has now (the others were fitted with 4): to `need N RUNS 2 KICKS 8 F` at f = 9 and 12
 * over 29 capacities from 7 to 4000 (same seed counts), covered by N / load + per_root * sqrt(N) at both f; the
 * other rows keep their stash-4 fit, which a larger stash only makes roomier. The add's search is at most
 * max_kicks moves deep and 1024 buckets wide, so from some depth on more kicks change nothing; a max_kicks
 * between two columns takes the lower one's entry. */
typedef struct sizing {
    double load, per_root, fixed;
} sizing;

static const unsigned sizing_kicks[] = {1, 2, 5, 10, 20};
static const sizing sizing_table[4][5] = {
    /* max_kicks: 1                   2                    5                   10                    20 and more */
    /* b=1 */ {{0.015, 0, -460.5}, {0.04, 0, -168.75}, {0.18, 0, -32.75}, {0.24, 0, -23}, {0.30, 0, -17.25}},
    /* b=2 */ {{0.20, 0, -36.75}, {0.46, 0, -11.5}, {0.78, 0, 0}, {0.85, 1, 0}, {0.85, 1, 0}},
    /* b=4 */ {{0.55, 0, -11.25}, {0.82, 0.5, -3}, {0.955, 1.25, 2}, {0.955, 1.25, 2}, {0.955, 1.25, 2}},
    /* b=8 */ {{0.80, 0, -1}, {0.94, 0, 11}, {0.98, 1, 5.75}, {0.98, 1, 5.75}, {0.98, 1, 5.75}},
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

/* Items beyond 2b that a four-bucket table is sized to take: that many every time, as the first 2b find a free
 * slot in their pair and the stash (NIDUS_TABLE_STASH >= this) takes the rest. Fixed at 4, the stash's size when
 * the rule was made: a larger stash is margin for unlucky seeds, not capacity. */
enum { FOUR_BUCKET_EXTRA = 4 };
_Static_assert(NIDUS_TABLE_STASH >= FOUR_BUCKET_EXTRA, "four buckets hold 2b + FOUR_BUCKET_EXTRA items every time");

/* Buckets for `capacity` items (see sizing_table), rounded up to even (the placement needs it). Up to 2b items
 * take two buckets: every key's pair is those two, so they always fit in the slots. Up to 2b + FOUR_BUCKET_EXTRA
 * take four, and more take at least four. Two buckets would hold more too, but the stash is the margin for
 * unlucky seeds, not capacity: a filter at its capacity should rarely pay for stash entries (a packed filter's
 * side block) or for the lookups that consult them. */
/* Whether a first table of m buckets would give its keys few distinct alternate buckets. In a table smaller than
 * the reach an offset is reduced modulo m (nidus_table_offset), and for some m the 2^f hashed offsets collapse onto
 * few distances (0x9E37 + 1 = 40504 = 8 * 61 * 83: at m = 166 and f = 6, 9 distances where random offsets give
 * ~33): the cuckoo graph is then poorly mixed, and a table of that size failed to hold its capacity where one of 2
 * buckets more or fewer never did (b=2, 20 kicks, stash 8, at 82 % load: f = 9, 620 slots 10 of 3,000 seeds and 664
 * slots 3 of 2,000, 616/624/668 none; f = 6, 332 slots ~1 %). Degenerate: fewer than 3/4 of the distinct distances
 * 2^f random odd offsets would give, in tables of 16 buckets or more (smaller ones are sized by the 2b + 4 rules)
 * and for f <= 10 (at most 1024 offsets to hash: the sizing runs on every reserve and stats call). With f >= 11
 * the sizes this flags measured as holding (f = 11 at 2508 slots, f = 12 at 1880 and 3748: 600 seeds each, none
 * failed). */
static bool offsets_degenerate(uint64_t m, unsigned f)
{
    if (m < 16 || m >= (UINT64_C(1) << NIDUS_REACH_LOG2) || f > 10)
        return false;
    uint64_t distances = m / 4 + 1; /* odd values up to m / 2 */
    double expected = (double)distances * (1.0 - exp(-ldexp(1.0, (int)f) / (double)distances));
    uint64_t enough = (uint64_t)ceil(0.75 * expected); /* the loop stops there: most sizes get there early */
    uint8_t seen[(1u << NIDUS_REACH_LOG2) / 16 + 1]; /* a bit per distance, m / 2 < 2^15 of them */
    memset(seen, 0, (size_t)(m / 16 + 1));
    uint64_t distinct = 0;
    for (uint32_t o = 0; o < (UINT32_C(1) << f) && distinct < enough; o++) {
        uint64_t r = nidus_inline_cuckoo_offset(o | (uint32_t)(o == 0), 32u - NIDUS_REACH_LOG2); /* as nidus_table_offset */
        if (r >= m)
            r %= m;
        uint64_t d = r < m - r ? r : m - r;
        if (!(seen[d >> 3] & (1u << (d & 7)))) {
            seen[d >> 3] |= (uint8_t)(1u << (d & 7));
            distinct++;
        }
    }
    return distinct < enough;
}

static uint64_t formula_buckets(uint64_t capacity, unsigned b, unsigned f, unsigned max_kicks)
{
    if (capacity <= 2 * (uint64_t)b)
        return 2;
    if (capacity <= 2 * (uint64_t)b + FOUR_BUCKET_EXTRA)
        return 4;
    sizing z = sizing_for(b, f, max_kicks);
    double slots = (double)capacity / z.load + z.per_root * sqrt((double)capacity) + z.fixed;
    double want = ceil(slots / b);
    if (want >= 0x1p62)
        return 0;
    if (want < 4) /* also when fixed < 0 takes small capacities below zero */
        return 4;
    uint64_t m = (uint64_t)want;
    return m + (m & 1);
}

/* The sizing: the formula's buckets, or the next size whose offsets are not degenerate (the formula assumes random
 * offsets). Never decreases with the capacity. */
static uint64_t buckets_for(uint64_t capacity, unsigned b, unsigned f, unsigned max_kicks)
{
    uint64_t m = formula_buckets(capacity, b, f, max_kicks);
    while (m && offsets_degenerate(m, f))
        m += 2;
    return m;
}

uint64_t nidus_cuckoo_capacity_of(const nidus_table_shape *shape, unsigned max_kicks)
{
    unsigned b = shape->bucket_size;
    if (shape->buckets <= 2)
        return 2 * (uint64_t)b;
    /* buckets_for(N) <= m exactly when the formula's buckets are at most the largest non-degenerate size <= m
     * (m itself for every table the sizing made): so the formula alone is inverted against that size, with one
     * degeneracy test per call rather than one per candidate (stats ask for the capacity on every call). */
    uint64_t m = shape->buckets;
    while (m > 4 && offsets_degenerate(m, shape->fp_bits))
        m -= 2;
    /* Invert slots = N / load + per_root * sqrt(N) + fixed for N, then find the largest N at or below that
     * estimate whose formula fits (it never decreases with N: a binary search). */
    uint64_t least = 2 * (uint64_t)b + FOUR_BUCKET_EXTRA; /* what four buckets or more hold every time */
    sizing z = sizing_for(b, shape->fp_bits, max_kicks);
    double slots = (double)m * b - z.fixed;
    if (slots <= 0)
        return least;
    double root = (-z.per_root + sqrt(z.per_root * z.per_root + 4.0 * slots / z.load)) * z.load / 2.0;
    uint64_t n = (uint64_t)(root * root);
    if (n <= least)
        return least;
    if (formula_buckets(n, b, shape->fp_bits, max_kicks) <= m)
        return n;
    uint64_t lo = least, hi = n; /* the answer is lo (least when nothing above it fits); hi does not fit */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (formula_buckets(mid, b, shape->fp_bits, max_kicks) <= m)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
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
