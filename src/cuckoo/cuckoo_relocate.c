/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus_cuckoo_relocate: a filter's blocks offered to an active defragmenter, in bounded steps.
 *
 * Positions are fixed by the filter's structure, so a cursor stays meaningful while the filter changes between
 * steps (a position past the end just ends the walk): the handle is 0; a packed handle's side block 1; a forward
 * handle's full struct 1, its table array 2, table k's slots 3 + 2k and overflow entries 4 + 2k; a full handle's
 * table array 1, table k's slots 2 + 2k and overflow entries 3 + 2k. Every pointer into a moved block is set
 * again: the forward's first table lives in the handle, and the published view (nidus_cuckoo_redispatch) points
 * at table 0's slots and its occupied count inside the table array. */
#include "cuckoo_dispatch.h"
#include "nidus/alloc.h"

/* The full filter's blocks after its struct (which the caller offered), from position w's next. */
static void walk_tables(nidus_walk *w, nidus_cuckoo *cf)
{
    nidus_table *tables = nidus_walk_offer(w, cf->tables);
    if (tables)
        cf->tables = tables;
    for (unsigned k = 0; k < cf->ntables; k++) {
        nidus_table *t = &cf->tables[k];
        uint8_t *data = nidus_walk_offer(w, t->borrowed ? NULL : t->data);
        if (data)
            t->data = data;
        nidus_overflow_entry *entries = nidus_walk_offer(w, t->overflow.entries);
        if (entries)
            t->overflow.entries = entries;
    }
    nidus_cuckoo_redispatch(cf); /* the view: table 0's slots and occupied count */
}

bool nidus_cuckoo_relocate(nidus_cuckoo **filter, const nidus_mover *mover, uint64_t *cursor)
{
    nidus_cuckoo *h = *filter, *full = nidus_cuckoo_full_of(h);
    if (full && (full->loader || full->read_only || full->mapping)) {
        *cursor = 0;
        return true;
    }
    nidus_walk w = nidus_walk_start(mover, *cursor);
    nidus_cuckoo *moved = nidus_walk_offer(&w, h);
    if (moved)
        *filter = h = moved;
    switch (nidus_cuckoo_form(h)) {
    case NIDUS_FORM_PACKED: {
        nidus_cuckoo_packed *p = (nidus_cuckoo_packed *)(void *)h;
        nidus_cuckoo_side *side = nidus_walk_offer(&w, nidus_cuckoo_packed_side_entries(p) ? p->side : NULL);
        if (side)
            p->side = side;
        break;
    }
    case NIDUS_FORM_FORWARD: {
        nidus_cuckoo_forward *fw = (nidus_cuckoo_forward *)(void *)h;
        full = fw->full;
        nidus_cuckoo *to = nidus_walk_offer(&w, full);
        if (to)
            fw->full = full = to;
        full->tables[0].data = fw->data; /* borrowed from the handle, wherever it is now */
        walk_tables(&w, full);
        break;
    }
    default:
        walk_tables(&w, h);
    }
    return nidus_walk_end(&w, cursor);
}
