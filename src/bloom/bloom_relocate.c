/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus_bloom_relocate: a scalable Bloom filter's blocks offered to an active defragmenter, in bounded steps.
 *
 * Positions (as cuckoo_relocate.c's, fixed by the structure): the struct is 0, the block of later layers
 * (`more`) 1, layer i's bits 2 + i. A first layer whose bits follow the struct moves with it; a blocked layer's
 * bits are aligned to 64 bytes inside their block, so a block that moved to an address of another alignment has
 * its bits moved to the new aligned place. */
#include <string.h>

#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "nidus/alloc.h"

/* Layer l's bits, when their block moves. */
static void relocate_layer(nidus_walk *w, nidus_bloom_layer *l)
{
    uint8_t *raw = nidus_walk_offer(w, l->owned ? l->data - l->offset : NULL);
    if (!raw)
        return;
    uint8_t offset = l->offset;
    if (l->layout != NIDUS_LAYER_PLAIN) { /* aligned within a block NIDUS_BLOCK_BYTES - 1 larger (layer_slack) */
        offset = (uint8_t)((NIDUS_BLOCK_BYTES - (uintptr_t)raw % NIDUS_BLOCK_BYTES) % NIDUS_BLOCK_BYTES);
        if (offset != l->offset)
            memmove(raw + offset, raw + l->offset, (size_t)nidus_bloom_layer_bytes(l));
    }
    l->offset = offset;
    l->data = raw + offset;
}

bool nidus_bloom_relocate(nidus_bloom **filter, const nidus_mover *mover, uint64_t *cursor)
{
    nidus_bloom *bf = *filter;
    if (bf->read_only || (bf->more && (bf->more->loader || bf->more->mapping))) {
        *cursor = 0;
        return true;
    }
    nidus_walk w = nidus_walk_start(mover, *cursor);
    bool bits_inline = !bf->first.owned && bf->first.data == (uint8_t *)(bf + 1);
    nidus_bloom *moved = nidus_walk_offer(&w, bf);
    if (moved) {
        *filter = bf = moved;
        if (bits_inline)
            bf->first.data = (uint8_t *)(bf + 1);
    }
    struct nidus_bloom_more *more = nidus_walk_offer(&w, bf->more);
    if (more)
        bf->more = more;
    for (unsigned i = 0; i < bf->nlayers; i++)
        relocate_layer(&w, nidus_bloom_layer_at(bf, i));
    return nidus_walk_end(&w, cursor);
}
