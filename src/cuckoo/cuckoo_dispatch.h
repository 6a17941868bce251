/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the dispatch byte of a cuckoo handle — which code serves it — cached in its first byte.
 *
 * A handle is one of three forms (cuckoo_packed.h): packed, forward, or a full struct nidus_cuckoo. For the full
 * form the byte also says which kernel its calls take, and which compiled copy (isa_impl.h): a one-table filter
 * whose table has a fast kernel and an empty overflow map takes the leaf kernels, one table otherwise its own
 * kernel and then its map (nidus_table_lookup), several tables or a filter still loading the general paths. The
 * choice is derived here, from the filter's state, and stored only where that state changes (creation, growth,
 * the overflow map gaining or losing entries, packing and unpacking, compaction, clear, decode, the last chunk
 * of a load): nidus_cuckoo_redispatch. cuckoo_dispatch.c alone reads it, with one switch per public call. A stale byte
 * would answer from the wrong tables (a grown filter's first table alone: false negatives), so the property
 * checker compares it with a fresh derivation in every state it visits (nidus_cuckoo_dispatch_fresh). */
#ifndef NIDUS_SRC_CUCKOO_DISPATCH_H
#define NIDUS_SRC_CUCKOO_DISPATCH_H

#include "cuckoo_packed.h"
#include "cuckoo_table_impl.h"

/* The values of a handle's first byte. 0 is the general path of a full filter in the baseline copy: always
 * correct (every general path checks the loader, read-only and the table count itself), so a full struct that
 * is still being built (calloc'd) is served correctly before its first redispatch. Values from 6 on come in
 * pairs, and from 5 on every odd value is an x86-64-v3 copy. */
enum {
    NIDUS_DISPATCH_GENERAL = 0,    /* several tables, or anything below not yet derived */
    NIDUS_DISPATCH_PACKED = 1,     /* NIDUS_FORM_PACKED */
    NIDUS_DISPATCH_FORWARD = 2,    /* NIDUS_FORM_FORWARD */
    NIDUS_DISPATCH_LOADING = 3,    /* chunks still arriving: lookups false, writes refused */
    NIDUS_DISPATCH_GENERAL_V3 = 5, /* several tables, x86-64-v3 copy */
    NIDUS_DISPATCH_ONE = 6,        /* one table: its kernel, then its overflow map */
    NIDUS_DISPATCH_ONE_V3 = 7,
    NIDUS_DISPATCH_PLAIN = 8,      /* one writable table, fast plain kernel (t->fast), empty map */
    NIDUS_DISPATCH_PLAIN_V3 = 9,
    NIDUS_DISPATCH_SEMI = 10,      /* the same, semi-sorted kernel */
    NIDUS_DISPATCH_SEMI_V3 = 11,
    NIDUS_DISPATCH_PLAIN_RO = 12,  /* a read-only view of such a table: the kernel for lookups, no adds */
    NIDUS_DISPATCH_PLAIN_RO_V3 = 13,
    NIDUS_DISPATCH_SEMI_RO = 14,
    NIDUS_DISPATCH_SEMI_RO_V3 = 15,
    NIDUS_DISPATCH_PLAIN_INLINE = 16, /* NIDUS_DISPATCH_PLAIN whose table the inline path serves too: no offset */
    NIDUS_DISPATCH_PLAIN_INLINE_V3 = 17, /* needs reducing (2^reach_log2 buckets or more). The view's tag says so */
    NIDUS_DISPATCH_SEMI_INLINE = 18,  /* (NIDUS_CUCKOO_TAG_PLAIN, _SEMI: nidus/inline_cuckoo.h) */
    NIDUS_DISPATCH_SEMI_INLINE_V3 = 19,
    NIDUS_DISPATCH_BITS = 20,      /* one writable table of plain buckets read at a bit offset (t->fast */
    NIDUS_DISPATCH_BITS_V3 = 21,   /* NIDUS_FAST_PLAIN_BITS: b=4 f=13, b=2 f=13..27), empty map */
    NIDUS_DISPATCH_BITS_RO = 22,   /* a read-only view of such a table */
    NIDUS_DISPATCH_BITS_RO_V3 = 23,
    NIDUS_DISPATCH_BITS_INLINE = 24, /* NIDUS_DISPATCH_BITS whose table the inline path serves too (as PLAIN_INLINE; */
    NIDUS_DISPATCH_BITS_INLINE_V3 = 25, /* tag NIDUS_CUCKOO_TAG_BITS); the library serves it by the BITS kernels */
};

_Static_assert(NIDUS_CUCKOO_TAG_PLAIN == NIDUS_CUCKOO_TAG(NIDUS_DISPATCH_PLAIN_INLINE_V3, NIDUS_CUCKOO_VIEW_VERSION) &&
                   NIDUS_CUCKOO_TAG_SEMI ==
                       NIDUS_CUCKOO_TAG(NIDUS_DISPATCH_SEMI_INLINE_V3, NIDUS_CUCKOO_VIEW_VERSION) &&
                   NIDUS_CUCKOO_TAG_BITS ==
                       NIDUS_CUCKOO_TAG(NIDUS_DISPATCH_BITS_INLINE_V3, NIDUS_CUCKOO_VIEW_VERSION),
               "the tags the inline header knows are these states");

/* The dispatch byte a full filter's state calls for. */
static inline unsigned char nidus_cuckoo_derive_dispatch(const nidus_cuckoo *cf)
{
    if (cf->loader)
        return NIDUS_DISPATCH_LOADING;
    const nidus_table *t = &cf->tables[0];
    unsigned v3 = t->isa == NIDUS_ISA_V3;
    if (cf->ntables != 1)
        return v3 ? NIDUS_DISPATCH_GENERAL_V3 : NIDUS_DISPATCH_GENERAL;
    unsigned d = t->fast == NIDUS_FAST_PLAIN
                     ? (cf->read_only     ? NIDUS_DISPATCH_PLAIN_RO
                        : t->offset_wraps ? NIDUS_DISPATCH_PLAIN
                                          : NIDUS_DISPATCH_PLAIN_INLINE)
                 : t->fast == NIDUS_FAST_SEMI
                     ? (cf->read_only     ? NIDUS_DISPATCH_SEMI_RO
                        : t->offset_wraps ? NIDUS_DISPATCH_SEMI
                                          : NIDUS_DISPATCH_SEMI_INLINE)
                 : t->fast == NIDUS_FAST_PLAIN_BITS
                     ? (cf->read_only     ? NIDUS_DISPATCH_BITS_RO
                        : t->offset_wraps ? NIDUS_DISPATCH_BITS
                                          : NIDUS_DISPATCH_BITS_INLINE)
                     : NIDUS_DISPATCH_ONE;
    return (unsigned char)(d | v3);
}

/* Stores the derived byte in the tag, and the view's fields from table 0: every change of a full filter's state
 * that can change either ends here (cuckoo.c). */
void nidus_cuckoo_redispatch(nidus_cuckoo *cf);

/* True when the handle's cached tag and view (and a forward's full filter's) are what its state calls for now:
 * the byte, and while the tag is one the inline path serves, every field of the view. The full form's part is
 * nidus_full_dispatch_fresh (cuckoo.c). */
bool nidus_cuckoo_dispatch_fresh(const nidus_cuckoo *h);
bool nidus_full_dispatch_fresh(const nidus_cuckoo *cf);

/* The calls below tell a handle's forms apart by its first byte, in cuckoo_dispatch.c as every other call does. */

/* The form of a handle: NIDUS_FORM_PACKED, NIDUS_FORM_FORWARD, or NIDUS_FORM_FULL for every other byte. */
unsigned nidus_cuckoo_form(const nidus_cuckoo *h);

/* The full filter behind a forward handle, else the handle itself; NULL for a packed one. */
nidus_cuckoo *nidus_cuckoo_full_of(const nidus_cuckoo *h);

/* The full struct of any handle, for reading (merge, white-box tests, tools): a full filter itself, a forward's
 * target, or a packed filter rebuilt in `w`. */
const nidus_cuckoo *nidus_cuckoo_inspect(const nidus_cuckoo *h, nidus_cuckoo_thawed *w);

/* The full filter behind a handle, made for a packed one (which becomes a forward to it): for callers that need
 * the full struct. NULL when out of memory (nothing changed). */
nidus_cuckoo *nidus_cuckoo_unpack(nidus_cuckoo *h);

/* Puts `full` (a full filter that owns all its memory, with the first-table shape of h's filter) in place of the
 * filter behind handle h, whatever h's form, and frees the old one; h stays the caller's handle. Allocates
 * nothing: for a write built aside (merge). */
void nidus_cuckoo_replace(nidus_cuckoo *h, nidus_cuckoo *full);

#endif
