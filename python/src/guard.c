/* SPDX-License-Identifier: BSD-3-Clause */
/* Lazy verification of mapped filter files (guard.h). The calls on one Python object are serialised by that
 * object's lock, so one mapping is faulted on by one thread at a time; the handler reads only the slot whose
 * mapping holds the faulting address, published last (base) and withdrawn first. */
#define _GNU_SOURCE
#include "guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUARD_SLOTS 256

struct py_guard {
    uint8_t *base; /* the mapping while guarded, else NULL; read by the handler (atomic) */
    size_t bytes;
    nidus_file_blocks blocks;
    unsigned char *checked, *dirty;
    volatile sig_atomic_t corrupt;
    uint64_t corrupt_block;
    int claimed; /* GIL held */
    nidus_file_guard callbacks;
};

static py_guard slots[GUARD_SLOTS];
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_segv, old_bus;
static int installed;

static void chain(int sig)
{
    sigaction(sig, sig == SIGBUS ? &old_bus : &old_segv, NULL);
}

/* Block k's pages: the block, or up to the end of the mapping for the last one. */
static size_t block_span(const py_guard *g, uint64_t k)
{
    uint64_t at = k * g->blocks.block_bytes;
    return (size_t)(g->bytes - at < g->blocks.block_bytes ? g->bytes - at : g->blocks.block_bytes);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    uint8_t *at = si->si_addr;
    for (int i = 0; i < GUARD_SLOTS; i++) {
        py_guard *g = &slots[i];
        uint8_t *base = __atomic_load_n(&g->base, __ATOMIC_ACQUIRE);
        if (!base || at < base || at >= base + g->bytes)
            continue;
        uint64_t k = (uint64_t)(at - base) / g->blocks.block_bytes;
        if (k >= g->blocks.blocks)
            break;
        uint8_t *start = base + k * g->blocks.block_bytes;
        size_t span = block_span(g, k);
        if (!g->checked[k]) {
            g->checked[k] = 1;
            if (mprotect(start, span, PROT_READ) != 0)
                break;
            if (nidus_file_block_check(&g->blocks, k) == NIDUS_OK)
                return;
            /* Zeros in place of the damaged block: read as empty table, never as wrong data. */
            if (mmap(start, span, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
                break;
            g->corrupt_block = k;
            g->corrupt = 1;
            return;
        }
        if (g->blocks.writable && !g->dirty[k]) {
            g->dirty[k] = 1;
            if (mprotect(start, span, PROT_READ | PROT_WRITE) == 0)
                return;
        }
        break;
    }
    chain(sig);
}

/* Installs the handler unless it is the current one (another handler installed since, such as faulthandler's,
 * is chained to). */
static int install(void)
{
    int rc = 0;
    pthread_mutex_lock(&install_lock);
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) || cur.sa_sigaction != on_fault ||
        !installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
            rc = -1;
        else
            installed = 1;
    }
    pthread_mutex_unlock(&install_lock);
    return rc;
}

static nidus_status prepare(void *ctx, const nidus_file_blocks *l)
{
    py_guard *g = ctx;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || l->block_bytes % (uint64_t)page || l->blocks < 3 || (uint64_t)(size_t)l->blocks != l->blocks)
        return NIDUS_ERR_UNSUPPORTED;
    /* Block 0 (the header) and the last (short, or sharing a page with the block table) are checked now. */
    if (nidus_file_block_check(l, 0) != NIDUS_OK || nidus_file_block_check(l, l->blocks - 1) != NIDUS_OK)
        return NIDUS_ERR_CORRUPT;
    g->checked = calloc((size_t)l->blocks, 1);
    g->dirty = calloc((size_t)l->blocks, 1);
    if (!g->checked || !g->dirty) {
        free(g->checked), free(g->dirty);
        g->checked = g->dirty = NULL;
        return NIDUS_ERR_NO_MEMORY;
    }
    g->checked[0] = g->checked[l->blocks - 1] = 1;
    g->blocks = *l;
    g->bytes = l->map_bytes;
    g->corrupt = 0;
    uint8_t *base = l->map;
    if (install() != 0 || mprotect(base, l->map_bytes, PROT_READ) != 0 ||
        mprotect(base + l->block_bytes, (size_t)(l->blocks - 2) * l->block_bytes, PROT_NONE) != 0) {
        mprotect(base, l->map_bytes, l->writable ? PROT_READ | PROT_WRITE : PROT_READ);
        free(g->checked), free(g->dirty);
        g->checked = g->dirty = NULL;
        return NIDUS_ERR_UNSUPPORTED;
    }
    __atomic_store_n(&g->base, base, __ATOMIC_RELEASE);
    return NIDUS_OK;
}

static const unsigned char *written(void *ctx)
{
    return ((py_guard *)ctx)->dirty;
}

static void release(void *ctx)
{
    py_guard *g = ctx;
    __atomic_store_n(&g->base, NULL, __ATOMIC_RELEASE);
    free(g->checked), free(g->dirty);
    g->checked = g->dirty = NULL;
}

py_guard *py_guard_claim(void)
{
    for (int i = 0; i < GUARD_SLOTS; i++)
        if (!slots[i].claimed) {
            py_guard *g = &slots[i];
            g->claimed = 1;
            g->corrupt = 0;
            g->corrupt_block = 0;
            g->callbacks = (nidus_file_guard){prepare, written, release, g};
            return g;
        }
    return NULL;
}

const nidus_file_guard *py_guard_callbacks(py_guard *g)
{
    return &g->callbacks;
}

int py_guard_corrupt(const py_guard *g)
{
    return g->corrupt != 0;
}

uint64_t py_guard_corrupt_block(const py_guard *g)
{
    return g->corrupt_block;
}

uint64_t py_guard_checked_blocks(const py_guard *g)
{
    uint64_t n = 0;
    for (uint64_t k = 0; g->checked && k < g->blocks.blocks; k++)
        n += g->checked[k];
    return n;
}

void py_guard_free(py_guard *g)
{
    if (g->checked)
        release(g);
    g->claimed = 0;
}
