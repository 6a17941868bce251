/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests: an allocator hook that fails its n-th call, and counts the blocks it has live, so a test can run a call
 * with each of its allocations failing in turn and check that nothing leaked. One per test program (g_fail). */
#ifndef NIDUS_TESTS_FAILING_ALLOC_H
#define NIDUS_TESTS_FAILING_ALLOC_H

#include <stdbool.h>
#include <stdlib.h>

#include <nidus/alloc.h>

typedef struct failing {
    long calls, fail_at; /* fail the fail_at-th call from now on (0: never) */
    long live;           /* blocks allocated and not freed */
    long injected;       /* failures handed out, so a test can show it exercised them */
} failing;

static inline bool should_fail(failing *f)
{
    bool fail = f->fail_at && ++f->calls == f->fail_at;
    f->injected += fail;
    return fail;
}

static inline void *f_malloc(void *ctx, size_t n)
{
    failing *f = ctx;
    if (should_fail(f))
        return NULL;
    void *p = malloc(n);
    f->live += p != NULL;
    return p;
}

static inline void *f_calloc(void *ctx, size_t n, size_t m)
{
    failing *f = ctx;
    if (should_fail(f))
        return NULL;
    void *p = calloc(n, m);
    f->live += p != NULL;
    return p;
}

static inline void *f_realloc(void *ctx, void *p, size_t n)
{
    failing *f = ctx;
    if (should_fail(f))
        return NULL;
    void *q = realloc(p, n);
    f->live += !p && q;
    return q;
}

static inline void f_free(void *ctx, void *p)
{
    failing *f = ctx;
    f->live -= p != NULL;
    free(p);
}

static failing g_fail;
static const nidus_allocator g_hook = {f_malloc, f_calloc, f_realloc, f_free, &g_fail};

/* From now on, the n-th allocation fails (0: none does). */
static inline void arm(long n)
{
    g_fail.calls = 0;
    g_fail.fail_at = n;
}

#endif
