/* SPDX-License-Identifier: BSD-3-Clause */
/* Cuckoo filters in files: the generic file I/O behind the cuckoo type. */
#include "cuckoo_filter.h"
#include "file_io.h"

NIDUS_DEFINE_FILE_FUNCTIONS(nidus_cuckoo, nidus_cuckoo)
