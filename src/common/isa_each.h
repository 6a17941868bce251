/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: includes the template header named by NIDUS_ISA_TEMPLATE (a string) once per compiled copy
 * (isa_impl.h): NIDUS_ISA and NIDUS_ISA_TARGET set to each copy's suffix and function attribute, and
 * NIDUS_ISA_IS_V3 to 1 in the x86-64-v3 copy (0 in the baseline), all undefined after.
 * A kernels file is: #define NIDUS_ISA_TEMPLATE "x_impl.h", then #include "isa_each.h". */
#include "isa_impl.h"

#ifndef NIDUS_ISA_TEMPLATE
#error "define NIDUS_ISA_TEMPLATE before including isa_each.h"
#endif

#define NIDUS_ISA base
#define NIDUS_ISA_TARGET
#define NIDUS_ISA_IS_V3 0
#include NIDUS_ISA_TEMPLATE
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET
#undef NIDUS_ISA_IS_V3

#if NIDUS_HAVE_ISA_V3
#define NIDUS_ISA v3
#define NIDUS_ISA_TARGET NIDUS_TARGET_V3
#define NIDUS_ISA_IS_V3 1
#include NIDUS_ISA_TEMPLATE
#undef NIDUS_ISA
#undef NIDUS_ISA_TARGET
#undef NIDUS_ISA_IS_V3
#endif
