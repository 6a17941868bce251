/* SPDX-License-Identifier: BSD-3-Clause */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE */
#include "hugepage.h"

#include <stdint.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

void nidus_hugepage_advise(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(huge - 1);
    if (n >= NIDUS_HUGEPAGE_MIN_BYTES && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: its failure changes nothing */
#else
    (void)p;
    (void)n;
#endif
}
