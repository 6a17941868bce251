/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — cuckoo, Bloom and binary fuse filters. Include this header; it includes the rest. */
#ifndef NIDUS_H
#define NIDUS_H

#define NIDUS_VERSION_MAJOR 0
#define NIDUS_VERSION_MINOR 1
#define NIDUS_VERSION_PATCH 0
#define NIDUS_VERSION_STRING "0.1.0"

#include "alloc.h"
#include "status.h"
#include "codec.h"
#include "hash.h"
#include "cuckoo.h"
#include "bloom.h"
#include "fuse.h"
#include "window.h"
#include "verify.h"
#include "filter.h"
#include "protocol.h"

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, as NIDUS_VERSION_STRING was when it was built. */
NIDUS_API const char *nidus_version(void);

#ifdef __cplusplus
}
#endif

/* Opt-in: the inline lookups and adds (nidus/inline.h). */
#ifdef NIDUS_INLINE
#include "inline.h"
#endif

#endif
