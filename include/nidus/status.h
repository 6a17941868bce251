/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — status codes shared by every call of the library. */
#ifndef NIDUS_STATUS_H
#define NIDUS_STATUS_H

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every fallible call returns one of these; NIDUS_OK is zero so `if (st)` tests for failure.
 * A call that fails leaves its object exactly as it was before the call. */
typedef enum nidus_status {
    NIDUS_OK = 0,
    NIDUS_ERR_INVALID_ARGUMENT, /* a parameter is out of its documented range */
    NIDUS_ERR_NO_MEMORY,        /* the allocator hook returned NULL */
    NIDUS_ERR_TOO_LARGE,        /* the requested size overflows or exceeds a limit */
    NIDUS_ERR_FULL,             /* no room for the item: it was not added, nothing else changed */
    NIDUS_ERR_NOT_FOUND,        /* the item to remove is not in the filter */
    NIDUS_ERR_UNSUPPORTED,      /* a valid request this build or filter kind does not implement */
    NIDUS_ERR_CORRUPT,          /* encoded input is malformed, truncated or fails its checksum */
    NIDUS_ERR_VERSION,          /* encoded input has a format version this build cannot read */
    NIDUS_ERR_IO,               /* a file could not be read or written (errno tells why) */
    NIDUS_ERR_LIMIT_TABLES,     /* growing would exceed the filter's maximum number of tables */
    NIDUS_ERR_LIMIT_MEMORY,     /* growing or loading would exceed the filter's maximum memory */
    NIDUS_ERR_READ_ONLY,        /* the filter is a read-only view (of a mapped file or a buffer) */
    NIDUS_ERR_SEQUENCE,         /* a chunk arrived out of order, twice, or belongs to another filter */
    NIDUS_ERR_NOT_REGULAR,      /* a file to write is a directory, device or fifo: refused, left as it was */
    NIDUS_ERR_INCOMPATIBLE      /* filters to merge differ in kind or in a parameter they were created with */
} nidus_status;

/* A short, constant, human-readable description of `status` ("no memory", ...).
 * Never NULL; unknown values give "unknown status". */
NIDUS_API const char *nidus_strerror(nidus_status status);

#ifdef __cplusplus
}
#endif

#endif
