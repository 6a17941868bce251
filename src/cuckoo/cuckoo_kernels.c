/* SPDX-License-Identifier: BSD-3-Clause */
/* The cuckoo kernels (cuckoo_kernels.h), one copy per instruction set from one template (cuckoo_kernels_impl.h). */
#define NIDUS_ISA_TEMPLATE "cuckoo_kernels_impl.h"
#include "isa_each.h"
