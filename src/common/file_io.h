/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: filter files — atomic whole-file writes and read-only mappings, for every kind. */
#ifndef NIDUS_SRC_FILE_IO_H
#define NIDUS_SRC_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "nidus/alloc.h"
#include "nidus/status.h"
#include "file_format.h"

/* Encodes an object into `buf` of `cap` bytes (one of the nidus_*_encode functions, behind a cast). */
typedef nidus_status (*nidus_encode_fn)(const void *obj, void *buf, size_t cap, size_t *written);

/* Encodes `size` bytes of `obj` in memory and writes them to `path` atomically: a temporary file beside the
 * target (the file a symbolic link leads to), fsync, rename, fsync of the directory. New files get 0666 less
 * the umask; a rewrite keeps the old mode, and owner and group where permitted. A directory, device or fifo is
 * refused (NIDUS_ERR_NOT_REGULAR). On NIDUS_ERR_IO errno tells why; the old file is untouched. */
nidus_status nidus_file_save(const char *path, const nidus_allocator *a, uint64_t size, nidus_encode_fn encode,
                             const void *obj);

/* Writes `n` bytes to `path` atomically, as nidus_file_save does. */
nidus_status nidus_file_replace(const char *path, const nidus_allocator *a, const void *bytes, size_t n);

/* NIDUS_OK when `path` (followed through symbolic links) is a regular file or does not exist; else
 * NIDUS_ERR_NOT_REGULAR (errno EISDIR or EINVAL), or NIDUS_ERR_IO (errno) when it cannot be examined. */
nidus_status nidus_file_check_target(const char *path);

/* Maps a regular file read-only. NIDUS_ERR_IO (errno set) or NIDUS_ERR_CORRUPT for an empty file. */
nidus_status nidus_file_map(const char *path, void **addr, size_t *bytes);
void nidus_file_unmap(void *addr, size_t bytes);

/* The file a view was mapped from (map_file): filters keep a pointer to one, NULL for the many that have none. */
typedef struct nidus_mapping {
    void *addr;
    size_t bytes;
} nidus_mapping;

/* Unmaps the file and frees the record; NULL does nothing. */
void nidus_mapping_release(nidus_mapping *m, const nidus_allocator *a);

/* Maps a regular file privately, readable and writable (copy on write: the file never changes through it),
 * and keeps its descriptor open in `*fd` (for nidus_file_patch to copy the very file that was mapped). */
nidus_status nidus_file_map_private(const char *path, int *fd, void **addr, size_t *bytes);

/* Writes the file `path` anew, atomically as nidus_file_save does, as the old file `from` (the descriptor of
 * nidus_file_map_private, laid out as `l`) with the blocks flagged in `dirty` taken from `body` (the patched
 * private mapping) and a new block table and footer. `a` may be NULL (malloc). The old file is copied by reflink or copy_file_range:
 * nothing but the changed blocks passes through this process. */
nidus_status nidus_file_patch(const char *path, const nidus_allocator *a, int from, const nidus_file_layout *l,
                              uint8_t *body, const unsigned char *dirty);

/* Maps `path` and parses its framing (file_format.h); with verify_blocks, checks every block too. Unmapped
 * again on failure. */
nidus_status nidus_file_open_checked(const char *path, void **addr, size_t *bytes, nidus_file_layout *layout,
                                     bool verify_blocks);

/* Called by PREFIX_map_file_lazy on a version 2 file after its header checked, before the body is decoded:
 * the caller must see to it that every block is checked (nidus_file_block_ok) before anything reads it. */
typedef nidus_status (*nidus_file_prepare_fn)(void *ctx, const nidus_file_layout *layout, void *map, size_t bytes);

/* Defines PREFIX_save_file, PREFIX_load_file, PREFIX_map_file and PREFIX_map_file_lazy for a filter type with
 * an `alloc` member and PREFIX_encode / _encoded_size / _decode_mode functions: they are the same for every kind,
 * which declares them (the public ones in its header, PREFIX_map_file_lazy in its own folder's).
 * load_file and map_file check every block of a version 2 file first; map_file_lazy leaves that to `prepare`
 * and skips the scans of the tables. A view keeps its mapping in a `mapping` (nidus_mapping *) member, or with
 * _AT where SLOT(f) says (a nidus_mapping **, NULL when out of memory). */
#define NIDUS_MAPPING_MEMBER(f) (&(f)->mapping)
#define NIDUS_DEFINE_FILE_FUNCTIONS(PREFIX, TYPE) NIDUS_DEFINE_FILE_FUNCTIONS_AT(PREFIX, TYPE, NIDUS_MAPPING_MEMBER)
#define NIDUS_DEFINE_FILE_FUNCTIONS_AT(PREFIX, TYPE, SLOT)                                                      \
    static nidus_status PREFIX##_encode_any(const void *obj, void *buf, size_t cap, size_t *written)          \
    {                                                                                                          \
        return PREFIX##_encode((const TYPE *)obj, buf, cap, written);                                          \
    }                                                                                                          \
    nidus_status PREFIX##_save_file(const TYPE *f, const char *path)                                           \
    {                                                                                                          \
        if (!f)                                                                                                \
            return NIDUS_ERR_INVALID_ARGUMENT;                                                                 \
        return nidus_file_save(path, f->alloc, PREFIX##_encoded_size(f), PREFIX##_encode_any, f);            \
    }                                                                                                          \
    static nidus_status PREFIX##_open_file(const char *path, const nidus_allocator *allocator, bool view,     \
                                           nidus_file_prepare_fn prepare, void *ctx, TYPE **out)               \
    {                                                                                                          \
        if (!path || !out)                                                                                     \
            return NIDUS_ERR_INVALID_ARGUMENT;                                                                 \
        void *p;                                                                                               \
        size_t n;                                                                                              \
        nidus_mapping **slot;                                                                                  \
        nidus_file_layout l;                                                                                   \
        nidus_status st = nidus_file_open_checked(path, &p, &n, &l, !prepare);                                 \
        if (st)                                                                                                \
            return st;                                                                                         \
        nidus_decode_mode mode = l.version == 1 ? NIDUS_DECODE_WHOLE : NIDUS_DECODE_BODY;                      \
        if (prepare && l.version == 2) {                                                                       \
            mode = NIDUS_DECODE_BODY_TRUSTED;                                                                  \
            st = prepare(ctx, &l, p, n);                                                                       \
        }                                                                                                      \
        TYPE *f = NULL;                                                                                        \
        if (!st)                                                                                               \
            st = PREFIX##_decode_mode(l.body, l.body_bytes, allocator,                                         \
                                      view ? NIDUS_DECODE_VIEW : NIDUS_DECODE_COPY, mode, &f);                 \
        if (st || !view) {                                                                                     \
            nidus_file_unmap(p, n);                                                                            \
            if (st)                                                                                            \
                return st;                                                                                     \
        } else if (!(slot = SLOT(f)) || !(*slot = nidus_malloc(f->alloc, sizeof **slot))) {                    \
            PREFIX##_free(f);                                                                                  \
            nidus_file_unmap(p, n);                                                                            \
            return NIDUS_ERR_NO_MEMORY;                                                                        \
        } else {                                                                                               \
            **slot = (nidus_mapping){p, n};                                                                    \
        }                                                                                                      \
        *out = f;                                                                                              \
        return NIDUS_OK;                                                                                       \
    }                                                                                                          \
    nidus_status PREFIX##_load_file(const char *path, const nidus_allocator *allocator, TYPE **out)            \
    {                                                                                                          \
        return PREFIX##_open_file(path, allocator, false, NULL, NULL, out);                                    \
    }                                                                                                          \
    nidus_status PREFIX##_map_file(const char *path, const nidus_allocator *allocator, TYPE **out)             \
    {                                                                                                          \
        return PREFIX##_open_file(path, allocator, true, NULL, NULL, out);                                     \
    }                                                                                                          \
    nidus_status PREFIX##_map_file_lazy(const char *path, const nidus_allocator *allocator,                    \
                                        nidus_file_prepare_fn prepare, void *ctx, TYPE **out)                  \
    {                                                                                                          \
        return PREFIX##_open_file(path, allocator, true, prepare, ctx, out);                                   \
    }

#endif
