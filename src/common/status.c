/* SPDX-License-Identifier: BSD-3-Clause */
#include "nidus/nidus.h"

const char *nidus_strerror(nidus_status status)
{
    switch (status) {
    case NIDUS_OK: return "ok";
    case NIDUS_ERR_INVALID_ARGUMENT: return "invalid argument";
    case NIDUS_ERR_NO_MEMORY: return "out of memory";
    case NIDUS_ERR_TOO_LARGE: return "too large";
    case NIDUS_ERR_FULL: return "filter is full";
    case NIDUS_ERR_NOT_FOUND: return "not found";
    case NIDUS_ERR_UNSUPPORTED: return "unsupported";
    case NIDUS_ERR_CORRUPT: return "corrupt or truncated data";
    case NIDUS_ERR_VERSION: return "unsupported format version";
    case NIDUS_ERR_IO: return "input/output error";
    case NIDUS_ERR_LIMIT_TABLES: return "maximum number of sub-filters reached";
    case NIDUS_ERR_LIMIT_MEMORY: return "maximum filter memory reached";
    case NIDUS_ERR_READ_ONLY: return "filter is read-only";
    case NIDUS_ERR_SEQUENCE: return "chunk out of sequence or from another filter";
    case NIDUS_ERR_NOT_REGULAR: return "not a regular file (a directory, device or fifo): refused";
    case NIDUS_ERR_INCOMPATIBLE: return "filters are incompatible (created with different parameters)";
    }
    return "unknown status";
}

const char *nidus_version(void) { return NIDUS_VERSION_STRING; }
