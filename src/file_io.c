/* Filter files, for every kind: written whole and atomically, mapped read-only. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "file_io.h"

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

/* Writes to PATH.tmp-XXXXXX in the same directory, fsyncs it, renames it over PATH and fsyncs the directory:
 * a crash at any point leaves either the old file or the new one, whole. The encoding is built in memory
 * first (the filter's size again, transiently). */
nidus_status nidus_file_save(const char *path, const nidus_allocator *a, uint64_t size, nidus_encode_fn encode,
                             const void *obj)
{
    if (!path)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (size > SIZE_MAX)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *buf = nidus_malloc(a, (size_t)size);
    if (!buf)
        return NIDUS_ERR_NO_MEMORY;
    size_t written;
    nidus_status st = encode(obj, buf, (size_t)size, &written);
    if (st) {
        nidus_free(a, buf);
        return st;
    }
    size_t plen = strlen(path);
    char *tmp = nidus_malloc(a, plen + 16), *dir = nidus_malloc(a, plen + 2);
    if (!tmp || !dir) {
        nidus_free(a, tmp);
        nidus_free(a, dir);
        nidus_free(a, buf);
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
    nidus_free(a, tmp);
    nidus_free(a, dir);
    nidus_free(a, buf);
    errno = saved;
    return st;
}

nidus_status nidus_file_map(const char *path, void **addr, size_t *bytes)
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

