/* SPDX-License-Identifier: BSD-3-Clause */
/* The keys of `build --type fuse` as their 64-bit hashes, hashed as they are read: 8 bytes a key are held,
 * never the keys' text, so a file of keys of any length builds in the memory its count needs. */
#ifndef NIDUS_CLI_HASHES_H
#define NIDUS_CLI_HASHES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <nidus/fuse.h>

#include "keys.h"
#include "progress.h"

typedef struct cli_hashes {
    uint64_t *hashes; /* malloc'ed; n of them */
    size_t n, cap;
} cli_hashes;

typedef enum cli_hashes_status {
    CLI_HASHES_OK,
    CLI_HASHES_READ_ERROR, /* the stream failed: errno says why */
    CLI_HASHES_TOO_MANY,   /* more than NIDUS_FUSE_MAX_KEYS keys */
    CLI_HASHES_NO_MEMORY
} cli_hashes_status;

/* Reads every key of ks into h (emptied first) as nidus_fuse_hash(params, key), with the progress line fed
 * from `counted`'s offset (NULL: no percentage). On failure h holds what was read: free it all the same. */
cli_hashes_status cli_hashes_read(cli_hashes *h, key_source *ks, const nidus_fuse_params *params, progress *p,
                                  FILE *counted);

void cli_hashes_free(cli_hashes *h);

#endif
