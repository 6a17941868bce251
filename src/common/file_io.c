/* SPDX-License-Identifier: BSD-3-Clause */
/* Filter files, for every kind: written whole and atomically, mapped read-only. */
#define _GNU_SOURCE /* copy_file_range */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h> /* FICLONE */
#endif

#include "alloc.h"
#include "codec.h"
#include "file_io.h"
#include "file_format.h"

void nidus_mapping_release(nidus_mapping *m, const nidus_allocator *a)
{
    if (!m)
        return;
    nidus_file_unmap(m->addr, m->bytes);
    nidus_free(a, m);
}

void nidus_file_unmap(void *addr, size_t bytes)
{
    if (addr)
        munmap(addr, bytes);
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The directory part of `path` ("." when none), into `dir`, for fsync after the rename. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
        return;
    }
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    snprintf(dir, cap, "%.*s", (int)n, path);
}

#define LINKS_MAX 40

/* The file a write to `path` must replace: `path` itself, or, through symbolic links (relative ones taken from
 * the link's directory), the file they lead to, which need not exist yet. A new string, or NULL with `*st`
 * NIDUS_ERR_NO_MEMORY or NIDUS_ERR_IO and errno (ELOOP after LINKS_MAX links). */
static char *resolve_target(const nidus_allocator *a, const char *path, nidus_status *st)
{
    size_t n = strlen(path);
    *st = NIDUS_ERR_NO_MEMORY;
    char *cur = nidus_malloc(a, n + 1);
    if (!cur)
        return NULL;
    memcpy(cur, path, n + 1);
    for (unsigned hops = 0;; hops++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return cur; /* a missing file is created; other errors show at open */
        if (hops == LINKS_MAX) {
            nidus_free(a, cur);
            *st = NIDUS_ERR_IO;
            errno = ELOOP;
            return NULL;
        }
        size_t cap = (sb.st_size > 0 ? (size_t)sb.st_size : 255) + 1;
        char *link = nidus_malloc(a, cap);
        if (!link) {
            nidus_free(a, cur);
            return NULL;
        }
        ssize_t len = readlink(cur, link, cap);
        if (len < 0 || (size_t)len >= cap) {
            int saved = len < 0 ? errno : ENAMETOOLONG; /* too long: the link changed under us */
            nidus_free(a, link);
            nidus_free(a, cur);
            *st = NIDUS_ERR_IO;
            errno = saved;
            return NULL;
        }
        link[len] = 0;
        const char *slash = strrchr(cur, '/');
        size_t keep = link[0] != '/' && slash ? (size_t)(slash - cur) + 1 : 0;
        char *next = nidus_malloc(a, keep + (size_t)len + 1);
        if (next) {
            memcpy(next, cur, keep);
            memcpy(next + keep, link, (size_t)len + 1);
        }
        nidus_free(a, link);
        nidus_free(a, cur);
        if (!next)
            return NULL;
        cur = next;
    }
}

/* Creates a new temporary file `tmp` (its last six characters replaced) for writing. Mode 0666 goes through
 * the umask (and a directory's default ACL) as for any new file; mkstemp would force 0600. */
static int create_temp(char *tmp)
{
    size_t n = strlen(tmp);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)tmp;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        uint64_t y = x >> 16;
        for (size_t k = n - 6; k < n; k++, y /= 36)
            tmp[k] = digits[y % 36];
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

nidus_status nidus_file_check_target(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT ? NIDUS_OK : NIDUS_ERR_IO;
    if (S_ISREG(sb.st_mode))
        return NIDUS_OK;
    errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
    return NIDUS_ERR_NOT_REGULAR;
}

/* Writes to a temporary file in the target's directory, fsyncs it, renames it over the target and fsyncs the
 * directory: a crash at any point leaves either the old file or the new one, whole. The target is the file a
 * symbolic link leads to; a rewrite keeps its mode (and owner and group, where permitted); a device, fifo or
 * directory is refused. The file is the encoding with per-block checksums (file_format.h), built in memory first
 * (the filter's size again, transiently). */
nidus_status nidus_file_save(const char *path, const nidus_allocator *a, uint64_t size, nidus_encode_fn encode,
                             const void *obj)
{
    if (!path)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (size > SIZE_MAX)
        return NIDUS_ERR_TOO_LARGE;
    nidus_status st = nidus_file_check_target(path);
    if (st)
        return st;
    uint64_t file_bytes = nidus_file_size_for_body(size - NIDUS_CODEC_CHECKSUM_BYTES);
    if (file_bytes > SIZE_MAX)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *buf = nidus_malloc(a, (size_t)file_bytes);
    if (!buf)
        return NIDUS_ERR_NO_MEMORY;
    size_t written;
    if ((st = encode(obj, buf, (size_t)file_bytes, &written))) {
        nidus_free(a, buf);
        return st;
    }
    st = nidus_file_replace(path, a, buf, nidus_file_from_encoding(buf, written));
    int saved = errno;
    nidus_free(a, buf);
    errno = saved;
    return st;
}

/* Writes a file's new contents through `fill` (given the temporary file's descriptor) and puts it in place of
 * `path` atomically: see nidus_file_save. */
typedef bool (*fill_fn)(int fd, void *ctx);

static nidus_status write_atomically(const char *path, const nidus_allocator *a, fill_fn fill, void *ctx)
{
    nidus_status st;
    char *target = resolve_target(a, path, &st);
    if (!target)
        return st;
    st = nidus_file_check_target(target);
    size_t plen = strlen(target);
    char *tmp = nidus_malloc(a, plen + 16), *dir = nidus_malloc(a, plen + 2);
    if (st || !tmp || !dir) {
        int saved = errno;
        nidus_free(a, tmp);
        nidus_free(a, dir);
        nidus_free(a, target);
        errno = saved;
        return st ? st : NIDUS_ERR_NO_MEMORY;
    }
    snprintf(tmp, plen + 16, "%s.tmp-XXXXXX", target);
    dir_of(target, dir, plen + 2);
    st = NIDUS_ERR_IO;
    struct stat old;
    bool existed = stat(target, &old) == 0;
    int fd = create_temp(tmp);
    if (fd >= 0) {
        bool ok = true;
        if (existed) {
            /* As the old file was: owner and group where we may (root, or a group we are in), then the mode
             * (after chown, which may clear set-id bits). */
            if (fchown(fd, old.st_uid, old.st_gid) != 0)
                (void)!fchown(fd, (uid_t)-1, old.st_gid);
            ok = fchmod(fd, old.st_mode & 07777) == 0;
        }
        ok = ok && fill(fd, ctx) && fsync(fd) == 0;
        int saved = errno;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, target) == 0) {
            int dfd = open(dir, O_RDONLY | O_CLOEXEC);
            if (dfd >= 0) {
                fsync(dfd); /* best effort: some file systems refuse fsync on directories */
                close(dfd);
            }
            st = NIDUS_OK;
        } else {
            saved = errno ? errno : saved;
            unlink(tmp);
            errno = saved;
        }
    }
    int saved = errno;
    nidus_free(a, tmp);
    nidus_free(a, dir);
    nidus_free(a, target);
    errno = saved;
    return st;
}

typedef struct bytes_ctx {
    const uint8_t *p;
    size_t n;
} bytes_ctx;

static bool fill_bytes(int fd, void *ctx)
{
    const bytes_ctx *b = ctx;
    return write_all(fd, b->p, b->n);
}

nidus_status nidus_file_replace(const char *path, const nidus_allocator *a, const void *bytes, size_t n)
{
    bytes_ctx b = {bytes, n};
    return write_atomically(path, a, fill_bytes, &b);
}

static bool pwrite_all(int fd, const uint8_t *p, size_t n, off_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w, at += w;
        n -= (size_t)w;
    }
    return true;
}

/* Copies `n` bytes of `from` into `to` without passing them through this process: a reflink where the file
 * system shares extents, else copy_file_range, else (another file system, an old kernel) a buffered copy. */
static bool copy_file(int from, int to, uint64_t n)
{
#ifdef FICLONE
    if (ioctl(to, FICLONE, from) == 0)
        return true;
#endif
    off_t in = 0, out = 0;
    while ((uint64_t)in < n) {
        ssize_t c = copy_file_range(from, &in, to, &out, (size_t)(n - (uint64_t)in), 0);
        if (c < 0 && errno == EINTR)
            continue;
        if (c == 0)
            return false; /* the file ended early */
        if (c < 0) {
            if (in != 0 || (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP))
                return false;
            uint8_t chunk[1 << 14];
            for (uint64_t at = 0; at < n;) {
                ssize_t r = pread(from, chunk, sizeof chunk, (off_t)at);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0 || !pwrite_all(to, chunk, (size_t)r, (off_t)at))
                    return false;
                at += (uint64_t)r;
            }
            return true;
        }
    }
    return true;
}

typedef struct patch_ctx {
    int from;
    const nidus_file_layout *l;
    const uint8_t *body;
    const unsigned char *dirty;
    const uint8_t *trailer;
    size_t trailer_bytes;
} patch_ctx;

static bool fill_patch(int fd, void *ctx)
{
    const patch_ctx *p = ctx;
    const nidus_file_layout *l = p->l;
    if (!copy_file(p->from, fd, l->body_bytes + p->trailer_bytes))
        return false;
    for (uint64_t k = 0; k < l->blocks; k++) {
        if (!p->dirty[k])
            continue;
        uint64_t at = k * l->block_bytes, n = l->body_bytes - at < l->block_bytes ? l->body_bytes - at : l->block_bytes;
        if (!pwrite_all(fd, p->body + at, (size_t)n, (off_t)at))
            return false;
    }
    return pwrite_all(fd, p->trailer, p->trailer_bytes, (off_t)l->body_bytes);
}

nidus_status nidus_file_patch(const char *path, const nidus_allocator *hook, int from, const nidus_file_layout *l,
                              uint8_t *body, const unsigned char *dirty)
{
    nidus_allocator resolved;
    nidus_alloc_resolve(hook, &resolved);
    const nidus_allocator *a = &resolved;
    size_t trailer_bytes = (size_t)(nidus_file_size_for_body(l->body_bytes) - l->body_bytes);
    uint8_t *trailer = nidus_malloc(a, trailer_bytes);
    if (!trailer)
        return NIDUS_ERR_NO_MEMORY;
    nidus_file_trailer(l, body, dirty, trailer);
    patch_ctx p = {from, l, body, dirty, trailer, trailer_bytes};
    nidus_status st = write_atomically(path, a, fill_patch, &p);
    int saved = errno;
    nidus_free(a, trailer);
    errno = saved;
    return st;
}

/* Maps a regular file privately: read-only, or writable (copy on write) keeping its descriptor in `*fd_out`. */
static nidus_status map_file(const char *path, bool writable, int *fd_out, void **addr, size_t *bytes)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NIDUS_ERR_IO;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int saved = S_ISREG(sb.st_mode) ? errno : EINVAL;
        close(fd);
        errno = saved;
        return NIDUS_ERR_IO;
    }
    if (sb.st_size == 0 || (uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return NIDUS_ERR_CORRUPT;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    if (p == MAP_FAILED || !fd_out)
        close(fd);
    if (p == MAP_FAILED) {
        errno = saved;
        return NIDUS_ERR_IO;
    }
    if (fd_out)
        *fd_out = fd;
    *addr = p;
    *bytes = (size_t)sb.st_size;
    return NIDUS_OK;
}

nidus_status nidus_file_map(const char *path, void **addr, size_t *bytes)
{
    return map_file(path, false, NULL, addr, bytes);
}

nidus_status nidus_file_open_checked(const char *path, void **addr, size_t *bytes, nidus_file_layout *layout,
                                     bool verify_blocks)
{
    nidus_status st = nidus_file_map(path, addr, bytes);
    if (st)
        return st;
    if (!(st = nidus_file_parse(*addr, *bytes, layout)) && verify_blocks && layout->version == 2)
        st = nidus_file_verify_all(layout, NULL);
    if (st)
        nidus_file_unmap(*addr, *bytes);
    return st;
}

nidus_status nidus_file_map_private(const char *path, int *fd_out, void **addr, size_t *bytes)
{
    /* Private: what is written stays in this process (copy on write) until nidus_file_patch writes it out. */
    return map_file(path, true, fd_out, addr, bytes);
}
