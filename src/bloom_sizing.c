/* Sizing blocked Bloom filters. A standard Bloom filter's formula undercounts a blocked one's error: keys
 * fall into blocks unevenly (a Poisson number per block), and the fuller blocks answer yes more often than
 * the average fill suggests. So the expected error is summed over the block loads:
 *     fpr = sum_j Pois(j; n / blocks) * P(k random slots all set | j keys in the block)
 * where a key sets k independently drawn of the S slots of its block (block_hit below). The size is then the
 * fewest blocks that bring this under the target (with 5 % to spare), trying every k. */
#include <math.h>

#include "bloom_sizing.h"

/* Headroom between the modelled error and the target: the model treats the slots' states as independent. */
#define NIDUS_SIZING_MARGIN 0.95

/* The chance that k slots drawn at random from a block holding j keys are all set: E[(U/S)^k] for U the
 * slots that j*k draws (with replacement) cover. The mean alone, (E U/S)^k, undercounts it by Jensen's
 * inequality, noticeably in small blocks (128 counters hold only a few keys: the measured error came out 15 %
 * above that model); the second-order term E[q^k] ~ m^k (1 + C(k,2) Var(q) / m^2) corrects it, with the exact
 * occupancy variance Var(U) = S(S-1)(1-2/S)^t + S(1-1/S)^t - S^2(1-1/S)^(2t), t = j*k. */
static double block_hit(unsigned j, unsigned slots, unsigned k)
{
    double S = slots, t = (double)j * k;
    double empty1 = pow(1.0 - 1.0 / S, t), empty2 = pow(1.0 - 2.0 / S, t);
    double mean = 1.0 - empty1; /* expected fraction of slots set */
    if (mean <= 0.0)
        return 0.0;
    double var = (S * (S - 1.0) * empty2 + S * empty1 - S * S * empty1 * empty1) / (S * S);
    double hit = pow(mean, k) * (1.0 + 0.5 * k * (k - 1.0) * (var > 0 ? var : 0) / (mean * mean));
    return hit < 1.0 ? hit : 1.0;
}

double nidus_blocked_fpr(double n, double blocks, unsigned slots, unsigned k)
{
    double lambda = n / blocks;
    double jmax = lambda + 12.0 * sqrt(lambda) + 30.0;
    /* Poisson terms from the mode outwards keep the recurrence away from underflow for large loads. */
    double sum = 0.0;
    unsigned mode = (unsigned)lambda;
    double pmode = exp(-lambda + mode * log(lambda > 0 ? lambda : 1.0) - lgamma(mode + 1.0));
    double p = pmode;
    for (unsigned j = mode; j <= (unsigned)jmax; j++) {
        sum += p * block_hit(j, slots, k);
        p *= lambda / (j + 1.0);
    }
    p = pmode;
    for (unsigned j = mode; j-- > 0;) {
        p *= (j + 1.0) / lambda;
        sum += p * block_hit(j, slots, k);
        if (p < 1e-300)
            break;
    }
    return sum;
}

nidus_status nidus_blocked_size(uint64_t n, double target, unsigned slots, uint64_t *blocks, unsigned *k)
{
    double goal = target * NIDUS_SIZING_MARGIN;
    uint64_t best = 0;
    unsigned best_k = 0;
    for (unsigned kk = 1; kk <= slots / 8 && kk <= 48; kk++) {
        /* fpr falls as blocks grow: find the fewest that meet the goal */
        uint64_t lo = 1, hi = NIDUS_BLOCKS_MAX;
        if (nidus_blocked_fpr((double)n, (double)hi, slots, kk) > goal)
            continue;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (nidus_blocked_fpr((double)n, (double)mid, slots, kk) <= goal)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (!best || lo < best) {
            best = lo;
            best_k = kk;
        }
    }
    if (!best)
        return NIDUS_ERR_TOO_LARGE;
    *blocks = best;
    *k = best_k;
    return NIDUS_OK;
}
