/* SPDX-License-Identifier: BSD-3-Clause */
/* The windowed filter's lookup kernels (window_kernels.h), one copy per instruction set from one template
 * (window_kernels_impl.h). */
#define NIDUS_ISA_TEMPLATE "window_kernels_impl.h"
#include "isa_each.h"
