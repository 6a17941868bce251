/* SPDX-License-Identifier: BSD-3-Clause */
/* Lazy verification of a mapped framed filter file (see lazy_verify.h), as the nidus_file_guard that
 * nidus_filter_open calls back: a fault handler needs process-wide state, which the library keeps none of. One
 * file at a time. */
#define _POSIX_C_SOURCE 200809L
#include "lazy_verify.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct {
    uint8_t *base;
    size_t bytes;
    nidus_file_blocks blocks; /* as nidus_filter_open showed them to the guard */
    unsigned char *checked, *dirty;
    char message[512]; /* "nidus: FILE: corrupt: block ", completed by report_block */
    struct sigaction old_segv, old_bus;
} g;

static void restore(int sig)
{
    sigaction(sig, sig == SIGSEGV ? &g.old_segv : &g.old_bus, NULL);
}

/* Appends `v` in decimal to the message being built in `buf` (async-signal-safe: no stdio). */
static size_t put_u64(char *buf, size_t n, size_t cap, uint64_t v)
{
    char digits[20];
    size_t d = 0;
    do
        digits[d++] = (char)('0' + v % 10);
    while ((v /= 10) && d < sizeof digits);
    while (d && n < cap)
        buf[n++] = digits[--d];
    return n;
}

static size_t put_text(char *buf, size_t n, size_t cap, const char *s)
{
    while (*s && n < cap)
        buf[n++] = *s++;
    return n;
}

/* "nidus: FILE: corrupt: block K of N (bytes A-B) does not match its checksum", as `nidus verify` words it. */
static void report_block(uint64_t k)
{
    char line[sizeof g.message + 160];
    size_t cap = sizeof line - 1, n = 0;
    uint64_t at = k * g.blocks.block_bytes, left = g.blocks.body_bytes - at;
    n = put_text(line, n, cap, g.message);
    n = put_u64(line, n, cap, k);
    n = put_text(line, n, cap, " of ");
    n = put_u64(line, n, cap, g.blocks.blocks);
    n = put_text(line, n, cap, " (bytes ");
    n = put_u64(line, n, cap, at);
    n = put_text(line, n, cap, "-");
    n = put_u64(line, n, cap, at + (left < g.blocks.block_bytes ? left : g.blocks.block_bytes) - 1);
    n = put_text(line, n, cap, ") does not match its checksum");
    line[n++] = '\n';
    (void)!write(STDERR_FILENO, line, n);
}

/* Block k's pages: the block, or up to the end of the mapping for the last one. */
static size_t block_span(uint64_t k)
{
    uint64_t at = k * g.blocks.block_bytes;
    return (size_t)(g.bytes - at < g.blocks.block_bytes ? g.bytes - at : g.blocks.block_bytes);
}

/* The first read of a block: check it, then let the read go on (a bad block ends the command before anything
 * read from it is used). The first write to a checked block of a writable mapping: note it dirty, let it go
 * on. Any other fault gets its old disposition back and happens again. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    uint8_t *at = si->si_addr;
    if (g.base && at >= g.base && at < g.base + g.blocks.blocks * (uint64_t)g.blocks.block_bytes && at < g.base + g.bytes) {
        uint64_t k = (uint64_t)(at - g.base) / g.blocks.block_bytes;
        uint8_t *start = g.base + k * g.blocks.block_bytes;
        if (!g.checked[k]) {
            g.checked[k] = 1;
            if (mprotect(start, block_span(k), PROT_READ) == 0) {
                if (nidus_file_block_check(&g.blocks, k) == NIDUS_OK)
                    return;
                report_block(k);
                _exit(2);
            }
        } else if (g.blocks.writable && !g.dirty[k]) {
            g.dirty[k] = 1;
            if (mprotect(start, block_span(k), PROT_READ | PROT_WRITE) == 0)
                return;
        }
    }
    restore(sig);
}

static nidus_status guard(void *ctx, const nidus_file_blocks *l)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || l->block_bytes % (uint64_t)page || l->blocks < 3 || g.base)
        return NIDUS_ERR_UNSUPPORTED;
    /* Block 0 (the header) and the last (short, or sharing a page with the block table) are checked now. */
    if (nidus_file_block_check(l, 0) != NIDUS_OK || nidus_file_block_check(l, l->blocks - 1) != NIDUS_OK)
        return NIDUS_ERR_CORRUPT;
    g.checked = calloc((size_t)l->blocks, 1);
    g.dirty = calloc((size_t)l->blocks, 1);
    if (!g.checked || !g.dirty) {
        free(g.checked), free(g.dirty);
        g.checked = g.dirty = NULL;
        return NIDUS_ERR_NO_MEMORY;
    }
    g.checked[0] = g.checked[l->blocks - 1] = 1;
    g.blocks = *l;
    g.bytes = l->map_bytes;
    snprintf(g.message, sizeof g.message, "nidus: %.400s: corrupt: block ", (const char *)ctx);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    uint8_t *base = l->map;
    size_t bytes = l->map_bytes;
    if (sigaction(SIGSEGV, &sa, &g.old_segv) != 0 || sigaction(SIGBUS, &sa, &g.old_bus) != 0 ||
        mprotect(base, bytes, PROT_READ) != 0 ||
        mprotect(base + l->block_bytes, (size_t)(l->blocks - 2) * l->block_bytes, PROT_NONE) != 0) {
        mprotect(base, bytes, l->writable ? PROT_READ | PROT_WRITE : PROT_READ);
        free(g.checked), free(g.dirty);
        g.checked = g.dirty = NULL;
        return NIDUS_ERR_UNSUPPORTED;
    }
    g.base = base;
    return NIDUS_OK;
}

static const unsigned char *written(void *ctx)
{
    (void)ctx;
    return g.dirty;
}

static void release(void *ctx)
{
    (void)ctx;
    if (!g.base)
        return;
    sigaction(SIGSEGV, &g.old_segv, NULL);
    sigaction(SIGBUS, &g.old_bus, NULL);
    g.base = NULL;
    free(g.checked), free(g.dirty);
    g.checked = g.dirty = NULL;
}

const nidus_file_guard *lazy_verify_guard(const char *path)
{
    static nidus_file_guard lazy;
    lazy = (nidus_file_guard){guard, written, release, (void *)(uintptr_t)path};
    return &lazy;
}

uint64_t lazy_verify_checked_blocks(void)
{
    uint64_t n = 0;
    for (uint64_t k = 0; g.checked && k < g.blocks.blocks; k++)
        n += g.checked[k];
    return n;
}
