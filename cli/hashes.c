/* SPDX-License-Identifier: BSD-3-Clause */
/* Keys read as their hashes, for the fuse filter's build. */
#define _POSIX_C_SOURCE 200809L
#include "hashes.h"

#include <stdint.h>
#include <stdlib.h>

/* Room for one more hash: the array doubles (glibc moves a large block by remapping it, not copying). */
static cli_hashes_status grow(cli_hashes *h)
{
    if (h->n < h->cap)
        return CLI_HASHES_OK;
    size_t cap = h->cap ? h->cap * 2 : 1 << 16;
    if (cap > NIDUS_FUSE_MAX_KEYS)
        cap = (size_t)NIDUS_FUSE_MAX_KEYS;
    if (h->n >= cap)
        return CLI_HASHES_TOO_MANY;
    if (cap > SIZE_MAX / sizeof *h->hashes)
        return CLI_HASHES_NO_MEMORY;
    uint64_t *more = realloc(h->hashes, cap * sizeof *more);
    if (!more)
        return CLI_HASHES_NO_MEMORY;
    h->hashes = more;
    h->cap = cap;
    return CLI_HASHES_OK;
}

cli_hashes_status cli_hashes_read(cli_hashes *h, key_source *ks, const nidus_fuse_params *params, progress *p,
                                  FILE *counted)
{
    *h = (cli_hashes){0};
    const char *key;
    size_t len;
    bool error;
    while (key_next(ks, &key, &len, &error)) {
        cli_hashes_status st = grow(h);
        if (st)
            return st;
        h->hashes[h->n++] = nidus_fuse_hash(params, key, len);
        if ((ks->read & 4095) == 0)
            progress_update(p, counted ? (uint64_t)ftello(counted) : 0, ks->read);
    }
    return error ? CLI_HASHES_READ_ERROR : CLI_HASHES_OK;
}

void cli_hashes_free(cli_hashes *h)
{
    free(h->hashes);
    *h = (cli_hashes){0};
}
