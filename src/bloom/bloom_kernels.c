/* SPDX-License-Identifier: BSD-3-Clause */
/* The Bloom kernels (bloom_kernels.h), one copy per instruction set from one template (bloom_kernels_impl.h),
 * included by isa_each.h. The x86-64-v3 copy's split probes (NIDUS_ISA_IS_V3) use AVX2: the inline header's,
 * compiled under the attribute NIDUS_INLINE_BLOOM_AVX2 (nidus/inline_bloom.h). */
#include "isa_impl.h"

#if NIDUS_HAVE_ISA_V3
#define NIDUS_INLINE_BLOOM_AVX2 __attribute__((target("avx2")))
#endif
#include "nidus/inline_bloom.h"

#define NIDUS_ISA_TEMPLATE "bloom_kernels_impl.h"
#include "isa_each.h"
