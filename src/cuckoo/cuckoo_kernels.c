/* SPDX-License-Identifier: BSD-3-Clause */
/* The cuckoo kernels (cuckoo_kernels.h), one copy per instruction set from one template (cuckoo_kernels_impl.h). */
#include "isa_impl.h"

#define NIDUS_ISA base
#define NIDUS_ISA_TARGET
#include "cuckoo_kernels_impl.h"
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET

#if NIDUS_HAVE_ISA_V3
#define NIDUS_ISA v3
#define NIDUS_ISA_TARGET NIDUS_TARGET_V3
#include "cuckoo_kernels_impl.h"
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET
#endif
