/* Internal: filter files — atomic whole-file writes and read-only mappings, for every kind. */
#ifndef NIDUS_SRC_FILE_IO_H
#define NIDUS_SRC_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "nidus/alloc.h"
#include "nidus/status.h"

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

/* Defines PREFIX_save_file, PREFIX_load_file and PREFIX_map_file for a filter type with `alloc`, `mapping`
 * and `mapping_bytes` members and PREFIX_encode / _encoded_size / _decode / _view functions: the three are the
 * same for every kind. */
#define NIDUS_DEFINE_FILE_FUNCTIONS(PREFIX, TYPE)                                                              \
    static nidus_status PREFIX##_encode_any(const void *obj, void *buf, size_t cap, size_t *written)          \
    {                                                                                                          \
        return PREFIX##_encode((const TYPE *)obj, buf, cap, written);                                          \
    }                                                                                                          \
    nidus_status PREFIX##_save_file(const TYPE *f, const char *path)                                           \
    {                                                                                                          \
        if (!f)                                                                                                \
            return NIDUS_ERR_INVALID_ARGUMENT;                                                                 \
        return nidus_file_save(path, &f->alloc, PREFIX##_encoded_size(f), PREFIX##_encode_any, f);            \
    }                                                                                                          \
    nidus_status PREFIX##_load_file(const char *path, const nidus_allocator *allocator, TYPE **out)            \
    {                                                                                                          \
        if (!path || !out)                                                                                     \
            return NIDUS_ERR_INVALID_ARGUMENT;                                                                 \
        void *p;                                                                                               \
        size_t n;                                                                                              \
        nidus_status st = nidus_file_map(path, &p, &n);                                                        \
        if (st)                                                                                                \
            return st;                                                                                         \
        st = PREFIX##_decode(p, n, allocator, out);                                                            \
        nidus_file_unmap(p, n);                                                                                \
        return st;                                                                                             \
    }                                                                                                          \
    nidus_status PREFIX##_map_file(const char *path, const nidus_allocator *allocator, TYPE **out)             \
    {                                                                                                          \
        if (!path || !out)                                                                                     \
            return NIDUS_ERR_INVALID_ARGUMENT;                                                                 \
        void *p;                                                                                               \
        size_t n;                                                                                              \
        nidus_status st = nidus_file_map(path, &p, &n);                                                        \
        if (st)                                                                                                \
            return st;                                                                                         \
        TYPE *f;                                                                                               \
        if ((st = PREFIX##_view(p, n, allocator, &f))) {                                                       \
            nidus_file_unmap(p, n);                                                                            \
            return st;                                                                                         \
        }                                                                                                      \
        f->mapping = p;                                                                                        \
        f->mapping_bytes = n;                                                                                  \
        *out = f;                                                                                              \
        return NIDUS_OK;                                                                                       \
    }

#endif
