/* Lazy verification of a mapped version 2 filter file (see lazy_verify.h). One file at a time: the state is
 * the process's, as a signal handler needs. */
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
    uint64_t first, end; /* blocks [first, end) are guarded */
    nidus_file_layout layout;
    unsigned char *checked;
    char message[512];
    size_t message_len;
    struct sigaction old_segv, old_bus;
} g;

static void restore(int sig)
{
    sigaction(sig, sig == SIGSEGV ? &g.old_segv : &g.old_bus, NULL);
}

/* A first read of a guarded block: check it, then let the read go on; a bad block ends the command before
 * anything read from it is used. Any other fault gets its old disposition back and happens again. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    uint8_t *at = si->si_addr;
    uint32_t bb = g.layout.block_bytes;
    if (g.base && at >= g.base + g.first * bb && at < g.base + g.end * bb) {
        uint64_t k = (uint64_t)(at - g.base) / bb;
        if (!g.checked[k]) {
            g.checked[k] = 1;
            if (mprotect(g.base + k * bb, bb, PROT_READ) == 0) {
                if (nidus_file_block_ok(&g.layout, k))
                    return;
                (void)!write(STDERR_FILENO, g.message, g.message_len);
                _exit(2);
            }
        }
    }
    restore(sig);
}

nidus_status lazy_verify_prepare(void *ctx, const nidus_file_layout *l, void *map, size_t bytes)
{
    const char *path = ctx;
    (void)bytes;
    long page = sysconf(_SC_PAGESIZE);
    /* Blocks 0 (the header) and the last (short, or sharing a page with the block table) are checked now;
     * the ones between are guarded when pages tile them. */
    if (page <= 0 || l->block_bytes % (uint64_t)page || l->blocks < 3 || g.base)
        return nidus_file_verify_all(l, NULL);
    if (!nidus_file_block_ok(l, 0) || !nidus_file_block_ok(l, l->blocks - 1))
        return NIDUS_ERR_CORRUPT;
    g.checked = calloc((size_t)l->blocks, 1);
    if (!g.checked)
        return NIDUS_ERR_NO_MEMORY;
    g.layout = *l;
    g.first = 1;
    g.end = l->blocks - 1;
    g.message_len = (size_t)snprintf(g.message, sizeof g.message,
                                     "nidus: %.400s: corrupt: a block fails its checksum\n", path);
    if (g.message_len >= sizeof g.message)
        g.message_len = sizeof g.message - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &g.old_segv) != 0 || sigaction(SIGBUS, &sa, &g.old_bus) != 0 ||
        mprotect((uint8_t *)map + g.first * l->block_bytes, (g.end - g.first) * l->block_bytes, PROT_NONE) != 0) {
        free(g.checked);
        g.checked = NULL;
        return nidus_file_verify_all(l, NULL);
    }
    g.base = map;
    return NIDUS_OK;
}

uint64_t lazy_verify_checked_blocks(void)
{
    uint64_t n = 0;
    for (uint64_t k = g.first; g.checked && k < g.end; k++)
        n += g.checked[k];
    return n;
}
