/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the kind-generic handle (nidus/filter.h): the typed filter it holds and, for a file mapped writable,
 * the mapping its tables are borrowed from. filter.c forwards the calls; filter_file.c opens and saves files. */
#ifndef NIDUS_SRC_FILTER_H
#define NIDUS_SRC_FILTER_H

#include "nidus/filter.h"
#include "codec.h"
#include "file_format.h"

struct nidus_filter {
    nidus_kind kind;
    const nidus_allocator *alloc; /* the handle's own allocation; NULL for a ref (the caller's storage) */
    union {
        nidus_cuckoo *cuckoo;
        nidus_bloom *bloom;
        nidus_counting_bloom *counting;
        nidus_fuse *fuse;
        nidus_window *window;
    } f;
    uint64_t now; /* the time windowed filters' calls take (nidus_filter_set_time) */
    /* NIDUS_FILTER_MAP_WRITABLE: the private mapping, the opened file's descriptor and layout, the guard */
    uint8_t *map;
    size_t map_bytes;
    int fd;
    nidus_file_layout layout;
    const nidus_file_guard *guard;
};

/* A handle for `kind` around no filter yet (f set by the caller); NULL when out of memory. */
nidus_filter *nidus_filter_wrap(const nidus_allocator *hook, nidus_kind kind);

/* filter_file.c: decodes a file's body (`n` bytes; mode: whole encoding or framed body) into f's typed handle by
 * the _decode_mode of f's kind, as a copy, a view or borrowed; NIDUS_ERR_CORRUPT for a kind no decoder takes. */
nidus_status nidus_filter_decode_body(nidus_filter *f, const void *body, size_t n, const nidus_allocator *hook,
                                      nidus_decode_target target, nidus_decode_mode mode);

/* filter_file.c: tells the guard its mapping goes (once, for a prepare that returned NIDUS_OK), before the
 * typed filter is freed; then unmaps the file the filter's tables were in and closes its descriptor. */
void nidus_filter_release_guard(nidus_filter *f);
void nidus_filter_release_map(nidus_filter *f);

#endif
