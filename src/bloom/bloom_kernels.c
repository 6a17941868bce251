/* SPDX-License-Identifier: BSD-3-Clause */
/* The Bloom kernels (bloom_kernels.h), one copy per instruction set from one template (bloom_kernels_impl.h).
 * NIDUS_BLOOM_ISA_AVX2 says whether the copy's split probes use AVX2: the inline header's, compiled under the
 * attribute NIDUS_INLINE_BLOOM_AVX2 (nidus/inline_bloom.h). */
#include "isa_impl.h"

#if NIDUS_HAVE_ISA_V3
#define NIDUS_INLINE_BLOOM_AVX2 __attribute__((target("avx2")))
#endif
#include "nidus/inline_bloom.h"

#define NIDUS_ISA base
#define NIDUS_ISA_TARGET
#define NIDUS_BLOOM_ISA_AVX2 0
#include "bloom_kernels_impl.h"
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET
#undef NIDUS_BLOOM_ISA_AVX2

#if NIDUS_HAVE_ISA_V3
#define NIDUS_ISA v3
#define NIDUS_ISA_TARGET NIDUS_TARGET_V3
#define NIDUS_BLOOM_ISA_AVX2 1
#include "bloom_kernels_impl.h"
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET
#undef NIDUS_BLOOM_ISA_AVX2
#endif
