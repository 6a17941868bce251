/* Cuckoo filters in files: written whole and atomically, read by copy or mapped read-only in place. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cuckoo_filter.h"

void nidus_cuckoo_unmap(nidus_cuckoo *cf)
{
    if (cf->mapping)
        munmap(cf->mapping, cf->mapping_bytes);
    cf->mapping = NULL;
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

/* Writes to PATH.tmp-XXXXXX in the same directory, fsyncs it, renames it over PATH and fsyncs the directory:
 * a crash at any point leaves either the old file or the new one, whole. The encoding is built in memory
 * first (the filter's size again, transiently). */
nidus_status nidus_cuckoo_save_file(const nidus_cuckoo *cf, const char *path)
{
    if (!cf || !path)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint64_t size = nidus_cuckoo_encoded_size(cf);
    if (size > SIZE_MAX)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *buf = nidus_malloc(&cf->alloc, (size_t)size);
    if (!buf)
        return NIDUS_ERR_NO_MEMORY;
    size_t written;
    nidus_status st = nidus_cuckoo_encode(cf, buf, (size_t)size, &written);
    if (st) {
        nidus_free(&cf->alloc, buf);
        return st;
    }
    size_t plen = strlen(path);
    char *tmp = nidus_malloc(&cf->alloc, plen + 16), *dir = nidus_malloc(&cf->alloc, plen + 2);
    if (!tmp || !dir) {
        nidus_free(&cf->alloc, tmp);
        nidus_free(&cf->alloc, dir);
        nidus_free(&cf->alloc, buf);
        return NIDUS_ERR_NO_MEMORY;
    }
    snprintf(tmp, plen + 16, "%s.tmp-XXXXXX", path);
    dir_of(path, dir, plen + 2);
    st = NIDUS_ERR_IO;
    int fd = mkstemp(tmp);
    if (fd >= 0) {
        bool ok = write_all(fd, buf, written) && fsync(fd) == 0;
        int saved = errno;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, path) == 0) {
            int dfd = open(dir, O_RDONLY);
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
    nidus_free(&cf->alloc, tmp);
    nidus_free(&cf->alloc, dir);
    nidus_free(&cf->alloc, buf);
    errno = saved;
    return st;
}

/* Maps `path` read-only; an empty file maps to nothing and is reported corrupt. */
static nidus_status map(const char *path, void **addr, size_t *bytes)
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
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    close(fd);
    if (p == MAP_FAILED) {
        errno = saved;
        return NIDUS_ERR_IO;
    }
    *addr = p;
    *bytes = (size_t)sb.st_size;
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_load_file(const char *path, const nidus_allocator *allocator, nidus_cuckoo **out)
{
    if (!path || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    void *p;
    size_t n;
    nidus_status st = map(path, &p, &n);
    if (st)
        return st;
    st = nidus_cuckoo_decode(p, n, allocator, out);
    munmap(p, n);
    return st;
}

nidus_status nidus_cuckoo_map_file(const char *path, const nidus_allocator *allocator, nidus_cuckoo **out)
{
    if (!path || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    void *p;
    size_t n;
    nidus_status st = map(path, &p, &n);
    if (st)
        return st;
    nidus_cuckoo *cf;
    if ((st = nidus_cuckoo_view(p, n, allocator, &cf))) {
        munmap(p, n);
        return st;
    }
    cf->mapping = p;
    cf->mapping_bytes = n;
    *out = cf;
    return NIDUS_OK;
}
