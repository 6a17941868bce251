/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the benchmark programs: the key stream, the clock, medians. */
#ifndef NIDUS_BENCH_UTIL_H
#define NIDUS_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* splitmix64: the fixed-seed key stream every configuration is measured on. */
static inline uint64_t bench_splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, unsigned n)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
