/* SPDX-License-Identifier: BSD-3-Clause */
/* Filter files through the kind-generic handle (nidus/filter.h): one open for every kind and mode (the file
 * mapped, its framing parsed, its blocks checked now or by the caller's guard, the body decoded as a copy, a
 * view, or borrowed from a private writable mapping), and the save that patches such a mapping back. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "bloom_filter.h"
#include "codec.h"
#include "cuckoo_filter.h"
#include "file_io.h"
#include "filter.h"
#include "fuse_filter.h"
#include "window_filter.h"

void nidus_filter_release_map(nidus_filter *f)
{
    if (!f->map)
        return;
    nidus_file_unmap(f->map, f->map_bytes);
    if (f->fd >= 0)
        close(f->fd);
    f->map = NULL;
    f->fd = -1;
}

void nidus_filter_release_guard(nidus_filter *f)
{
    if (f->guard && f->guard->release)
        f->guard->release(f->guard->ctx);
    f->guard = NULL;
}

nidus_status nidus_filter_decode_body(nidus_filter *f, const void *body, size_t n, const nidus_allocator *hook,
                                      nidus_decode_target target, nidus_decode_mode mode)
{
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_decode_mode(body, n, hook, target, mode, &f->f.cuckoo);
    case NIDUS_KIND_BLOOM: return nidus_bloom_decode_mode(body, n, hook, target, mode, &f->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM:
        return nidus_counting_bloom_decode_mode(body, n, hook, target, mode, &f->f.counting);
    case NIDUS_KIND_FUSE: return nidus_fuse_decode_mode(body, n, hook, target, mode, &f->f.fuse);
    case NIDUS_KIND_WINDOW: return nidus_window_decode_mode(body, n, hook, target, mode, &f->f.window);
    }
    return NIDUS_ERR_CORRUPT;
}

/* Checks the blocks of a framed file: through the guard when there is one and it takes them (then the body is
 * trusted: each block is checked before it is read), else all of them now. */
static nidus_status check_blocks(nidus_filter *f, const nidus_file_guard *guard, bool writable,
                                 nidus_decode_mode *mode)
{
    *mode = NIDUS_DECODE_BODY;
    if (guard && guard->prepare) {
        const nidus_file_layout *l = &f->layout;
        nidus_file_blocks b = {f->map, f->map_bytes, l->body_bytes, l->blocks, l->block_bytes, l->checksums,
                               writable};
        nidus_status st = guard->prepare(guard->ctx, &b);
        if (st == NIDUS_OK) {
            f->guard = guard;
            *mode = NIDUS_DECODE_BODY_TRUSTED;
            return NIDUS_OK;
        }
        if (st != NIDUS_ERR_UNSUPPORTED)
            return st;
    }
    return nidus_file_verify_all(&f->layout, NULL);
}

nidus_status nidus_filter_open(const char *path, nidus_filter_open_mode mode, const nidus_allocator *allocator,
                               const nidus_file_guard *guard, nidus_filter **out)
{
    if (!path || !out || (mode != NIDUS_FILTER_LOAD && mode != NIDUS_FILTER_MAP && mode != NIDUS_FILTER_MAP_WRITABLE))
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_filter *f = nidus_filter_wrap(allocator, (nidus_kind)0);
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    bool writable = mode == NIDUS_FILTER_MAP_WRITABLE;
    void *map = NULL;
    nidus_status st = writable ? nidus_file_map_private(path, &f->fd, &map, &f->map_bytes)
                               : nidus_file_map(path, &map, &f->map_bytes);
    f->map = map;
    if (!st && !(st = nidus_codec_peek(f->map, f->map_bytes, &f->kind)) && f->kind != NIDUS_KIND_CUCKOO &&
        f->kind != NIDUS_KIND_BLOOM && f->kind != NIDUS_KIND_COUNTING_BLOOM && f->kind != NIDUS_KIND_FUSE && f->kind != NIDUS_KIND_WINDOW)
        st = NIDUS_ERR_CORRUPT; /* no decoder of this build takes it */
    if (!st)
        st = nidus_file_parse(f->map, f->map_bytes, &f->layout);
    if (!st && writable && f->layout.version != 2) {
        /* A whole encoding (odd version) has one checksum over everything: no block to patch. Load it. */
        nidus_filter_release_map(f);
        nidus_free(f->alloc, f);
        return nidus_filter_open(path, NIDUS_FILTER_LOAD, allocator, NULL, out);
    }
    nidus_decode_mode how = NIDUS_DECODE_WHOLE;
    if (!st && f->layout.version == 2)
        st = check_blocks(f, mode == NIDUS_FILTER_LOAD ? NULL : guard, writable, &how);
    nidus_decode_target target = mode == NIDUS_FILTER_LOAD ? NIDUS_DECODE_COPY
                                 : writable                 ? NIDUS_DECODE_BORROW
                                                            : NIDUS_DECODE_VIEW;
    if (!st)
        st = nidus_filter_decode_body(f, f->layout.body, f->layout.body_bytes, allocator, target, how);
    if (st || mode == NIDUS_FILTER_LOAD) {
        int saved = errno;
        nidus_filter_release_guard(f);
        nidus_filter_release_map(f);
        errno = saved;
    }
    if (st) {
        nidus_free(f->alloc, f);
        return st;
    }
    *out = f;
    return NIDUS_OK;
}

/* Without a guard's record of the blocks written: those that differ from the file opened (every block was
 * checked against it at open, so this is exact). One flag a block in `*dirty`, allocated. */
static nidus_status compare_blocks(const nidus_filter *f, unsigned char **dirty)
{
    const nidus_file_layout *l = &f->layout;
    unsigned char *d = nidus_calloc(f->alloc, (size_t)l->blocks, 1);
    uint8_t *buf = nidus_malloc(f->alloc, l->block_bytes);
    nidus_status st = d && buf ? NIDUS_OK : NIDUS_ERR_NO_MEMORY;
    for (uint64_t k = 0; !st && k < l->blocks; k++) {
        uint64_t at = k * l->block_bytes, left = l->body_bytes - at;
        size_t n = (size_t)(left < l->block_bytes ? left : l->block_bytes), got = 0;
        while (got < n) {
            ssize_t r = pread(f->fd, buf + got, n - got, (off_t)(at + got));
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                st = NIDUS_ERR_IO;
                break;
            }
            got += (size_t)r;
        }
        d[k] = !st && memcmp(buf, f->map + at, n) != 0;
    }
    nidus_free(f->alloc, buf);
    if (st) {
        nidus_free(f->alloc, d);
        return st;
    }
    *dirty = d;
    return NIDUS_OK;
}

/* The fields of the body that are not table bytes rewritten in the mapping, then the old file copied with the
 * written blocks over it. NIDUS_ERR_UNSUPPORTED when the layout moved: the caller writes the whole file. */
static nidus_status save_in_place(const nidus_filter *f, const char *path)
{
    uint8_t *body = f->map;
    size_t n = f->layout.body_bytes;
    nidus_status st = NIDUS_ERR_UNSUPPORTED;
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: st = nidus_cuckoo_rewrite_body(f->f.cuckoo, body, n); break;
    case NIDUS_KIND_BLOOM: st = nidus_bloom_rewrite_body(f->f.bloom, body, n); break;
    case NIDUS_KIND_COUNTING_BLOOM: st = nidus_counting_bloom_rewrite_body(f->f.counting, body, n); break;
    case NIDUS_KIND_WINDOW: st = nidus_window_rewrite_body(f->f.window, body, n); break;
    case NIDUS_KIND_FUSE: break; /* never written: saved whole */
    }
    if (st)
        return st;
    nidus_file_mark_body(body, n);
    const unsigned char *written = f->guard && f->guard->written ? f->guard->written(f->guard->ctx) : NULL;
    unsigned char *compared = NULL;
    if (!written && (st = compare_blocks(f, &compared)))
        return st;
    st = nidus_file_patch(path, f->alloc, f->fd, &f->layout, body, written ? written : compared);
    int saved = errno;
    nidus_free(f->alloc, compared);
    errno = saved;
    return st;
}

nidus_status nidus_filter_save_file(const nidus_filter *f, const char *path)
{
    if (!f || !path)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (f->map && f->fd >= 0) {
        nidus_status st = save_in_place(f, path);
        if (st != NIDUS_ERR_UNSUPPORTED)
            return st;
    }
    switch (f->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_save_file(f->f.cuckoo, path);
    case NIDUS_KIND_BLOOM: return nidus_bloom_save_file(f->f.bloom, path);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_save_file(f->f.counting, path);
    case NIDUS_KIND_FUSE: return nidus_fuse_save_file(f->f.fuse, path);
    case NIDUS_KIND_WINDOW: return nidus_window_save_file(f->f.window, path);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status nidus_file_block_check(const nidus_file_blocks *b, uint64_t k)
{
    if (!b || k >= b->blocks)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_file_layout l = {2, b->map, (size_t)b->body_bytes, b->checksums, b->blocks, b->block_bytes};
    return nidus_file_block_ok(&l, k) ? NIDUS_OK : NIDUS_ERR_CORRUPT;
}
