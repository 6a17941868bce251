/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: run-time choice of instruction set for the lookup kernels.
 *
 * The library is built for the baseline of its target (any x86-64, any arm64). On x86-64 the lookup kernels
 * are compiled a second time for x86-64-v3's integer extensions (BMI1/BMI2: mulx, shrx, andn; POPCNT; AVX2),
 * and each table records at creation which copy its lookups take (nidus_table.isa) — no global state. The
 * two copies are the same source, so they give the same answers; tests force each copy and compare.
 * Configure with -DNIDUS_ISA_DISPATCH=OFF to build the baseline copy only. */
#ifndef NIDUS_SRC_ISA_IMPL_H
#define NIDUS_SRC_ISA_IMPL_H

#include <stdbool.h>

enum { NIDUS_ISA_BASE = 0, NIDUS_ISA_V3 = 1 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(NIDUS_NO_ISA_DISPATCH)
#define NIDUS_HAVE_ISA_V3 1
/* A function compiled for x86-64-v3's integer and AVX2 extensions; static inline helpers (default target)
 * inline into it and are compiled for it too. */
#define NIDUS_TARGET_V3 __attribute__((target("popcnt,bmi,bmi2,lzcnt,avx2")))

/* The best copy this CPU runs. Reads the CPU's feature bits (cpuid, cached by the compiler's runtime). */
static inline unsigned char nidus_isa_detect(void)
{
    __builtin_cpu_init();
    bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
              __builtin_cpu_supports("popcnt");
    return v3 ? NIDUS_ISA_V3 : NIDUS_ISA_BASE;
}
#else
#define NIDUS_HAVE_ISA_V3 0
static inline unsigned char nidus_isa_detect(void) { return NIDUS_ISA_BASE; }
#endif

/* Template headers, one source compiled once per copy: the including file defines NIDUS_ISA (the copy's
 * suffix: base, v3) and NIDUS_ISA_TARGET (its function attribute: empty, NIDUS_TARGET_V3), includes the
 * template, and undefines both; the template names each function NIDUS_ISA_FN(name), i.e. name_base, name_v3
 * (cuckoo_kernels.c and cuckoo_kernels_impl.h; isa_each.h does the including). */
#define NIDUS_ISA_CAT_(name, isa) name##_##isa
#define NIDUS_ISA_CAT(name, isa) NIDUS_ISA_CAT_(name, isa)
#define NIDUS_ISA_FN(name) NIDUS_ISA_CAT(name, NIDUS_ISA)

#endif
