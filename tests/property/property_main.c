/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus_property: random operation sequences on random filters, checked after every step against an exact
 * model (see docs/RELIABILITY.md for the properties).
 *   usage: nidus_property [--ops N] [--seed S] [--episode E] [--family cuckoo|bloom|counting|fuse|window|all]
 *          [--no-merge]
 * --ops is the total budget (default 2,000,000). Episodes draw their seeds from (S, index); a failure prints
 * the command line that replays just the failing episode (--seed S --episode E). --no-merge: cuckoo episodes
 * without merges, as they ran before merges joined the mix (to replay episodes recorded then). */
#include "property.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

prop_where prop_at;

_Noreturn void prop_fail(const char *file, int line, const char *what)
{
    fprintf(stderr,
            "PROPERTY FAILED: %s (%s:%d)\n  family %s, op %s, step %" PRIu64 "\n  config: %s\n"
            "  reproduce: nidus_property --seed %" PRIu64 " --episode %" PRIu64 " --family %s%s\n",
            what, file, line, prop_at.family, prop_at.op ? prop_at.op : "-", prop_at.step, prop_at.config,
            prop_at.seed, prop_at.episode, prop_at.family, prop_at.no_merge ? " --no-merge" : "");
    exit(1);
}

static void *a_malloc(void *ctx, size_t n)
{
    prop_alloc *a = ctx;
    if (a->armed && a->fail_one_in && prop_next(&a->rng) % a->fail_one_in == 0)
        return NULL;
    void *p = malloc(n ? n : 1);
    a->live += p != NULL;
    return p;
}

static void *a_calloc(void *ctx, size_t count, size_t n)
{
    prop_alloc *a = ctx;
    if (a->armed && a->fail_one_in && prop_next(&a->rng) % a->fail_one_in == 0)
        return NULL;
    void *p = calloc(count ? count : 1, n ? n : 1);
    a->live += p != NULL;
    return p;
}

static void *a_realloc(void *ctx, void *old, size_t n)
{
    prop_alloc *a = ctx;
    if (a->armed && a->fail_one_in && prop_next(&a->rng) % a->fail_one_in == 0)
        return NULL;
    void *p = realloc(old, n ? n : 1);
    a->live += p != NULL && old == NULL;
    return p;
}

static void a_free(void *ctx, void *p)
{
    prop_alloc *a = ctx;
    a->live -= p != NULL;
    free(p);
}

void prop_alloc_init(prop_alloc *a, uint64_t seed, unsigned fail_one_in)
{
    *a = (prop_alloc){
        .hook = {a_malloc, a_calloc, a_realloc, a_free, a},
        .rng = {seed},
        .fail_one_in = fail_one_in,
    };
}

void prop_bytes_reserve(prop_bytes *b, size_t n)
{
    if (n <= b->cap)
        return;
    b->p = realloc(b->p, n);
    if (!b->p) {
        fprintf(stderr, "nidus_property: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    b->cap = n;
}

void prop_bytes_free(prop_bytes *b)
{
    free(b->p);
    *b = (prop_bytes){0};
}

static uint8_t *chunk_buffers[PROP_CHUNKS_MAX];

uint8_t *prop_chunk_buffer(unsigned k)
{
    if (!chunk_buffers[k] && !(chunk_buffers[k] = malloc(PROP_CHUNK_CAP))) {
        fprintf(stderr, "nidus_property: out of memory\n");
        exit(2);
    }
    return chunk_buffers[k];
}

void prop_release_buffers(void)
{
    for (unsigned k = 0; k < PROP_CHUNKS_MAX; k++) {
        free(chunk_buffers[k]);
        chunk_buffers[k] = NULL;
    }
}

static uint64_t episode_seed(uint64_t seed, uint64_t episode)
{
    prop_rng r = {seed ^ (episode * UINT64_C(0xD1B54A32D192ED03))};
    return prop_next(&r);
}

int main(int argc, char **argv)
{
    uint64_t ops = 2000000, seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32), only = UINT64_MAX;
    const char *family = "all";
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--ops") && k + 1 < argc)
            ops = strtoull(argv[++k], NULL, 10);
        else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
            seed = strtoull(argv[++k], NULL, 10);
        else if (!strcmp(argv[k], "--episode") && k + 1 < argc)
            only = strtoull(argv[++k], NULL, 10);
        else if (!strcmp(argv[k], "--family") && k + 1 < argc)
            family = argv[++k];
        else if (!strcmp(argv[k], "--no-merge"))
            prop_at.no_merge = true;
        else {
            fprintf(stderr,
                    "usage: %s [--ops N] [--seed S] [--episode E] [--family cuckoo|bloom|counting|fuse|window|all] "
                    "[--no-merge]\n",
                    argv[0]);
            return 2;
        }
    }
    bool all = !strcmp(family, "all");
    if (!all && strcmp(family, "cuckoo") && strcmp(family, "bloom") && strcmp(family, "counting") &&
        strcmp(family, "fuse") && strcmp(family, "window")) {
        fprintf(stderr, "nidus_property: unknown family %s\n", family);
        return 2;
    }
    printf("nidus_property --seed %" PRIu64 " --ops %" PRIu64 " --family %s\n", seed, ops, family);
    fflush(stdout);
    prop_at.seed = seed;
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    uint64_t done = 0, episodes = 0, per_family[5] = {0};
    for (uint64_t e = only == UINT64_MAX ? 0 : only; done < ops; e++) {
        uint64_t es = episode_seed(seed, e);
        /* in "all", 26 of 32 episodes are cuckoo filters, 2 windowed, 2 scalable Bloom, 1 counting Bloom, 1 binary
         * fuse (a failure's reproduction names its family, so this mix can change without breaking one) */
        unsigned pick = all ? (unsigned)(es % 32) : 0;
        int named = !strcmp(family, "cuckoo")     ? 0
                    : !strcmp(family, "bloom")    ? 1
                    : !strcmp(family, "counting") ? 2
                    : !strcmp(family, "fuse")     ? 3
                                                  : 4;
        int fam = all ? (pick < 26 ? 0 : pick < 28 ? 4 : pick < 30 ? 1 : pick == 30 ? 2 : 3) : named;
        prop_at.episode = e;
        uint64_t n = fam == 0   ? prop_cuckoo_episode(es, ops - done)
                     : fam == 1 ? prop_bloom_episode(es, ops - done)
                     : fam == 2 ? prop_counting_episode(es, ops - done)
                     : fam == 3 ? prop_fuse_episode(es, ops - done)
                                : prop_window_episode(es, ops - done);
        done += n;
        per_family[fam] += n;
        episodes++;
        if (only != UINT64_MAX)
            break;
        if (episodes % 4096 == 0) {
            timespec_get(&t1, TIME_UTC);
            double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            printf("  %" PRIu64 " operations, %" PRIu64 " episodes, %.0f s\n", done, episodes, s);
            fflush(stdout);
        }
    }
    prop_release_buffers();
    timespec_get(&t1, TIME_UTC);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("ok: %" PRIu64 " operations (cuckoo %" PRIu64 ", bloom %" PRIu64 ", counting %" PRIu64 ", fuse %" PRIu64
           ", window %" PRIu64 ") in %" PRIu64 " episodes, %.1f s, seed %" PRIu64 "\n",
           done, per_family[0], per_family[1], per_family[2], per_family[3], per_family[4], episodes, s, seed);
    printf("   cuckoo states with stash entries: %" PRIu64 " (%" PRIu64 " with a full stash)\n",
           prop_cuckoo_stash_states(false), prop_cuckoo_stash_states(true));
    printf("   cuckoo merges: %" PRIu64 " (%" PRIu64 " leaving sibling tables)\n", prop_cuckoo_merges(false),
           prop_cuckoo_merges(true));
    printf("   cuckoo stepped compactions: %" PRIu64 " run to the end in steps, %" PRIu64 " states left mid-way\n",
           prop_cuckoo_stepped_compactions(true), prop_cuckoo_stepped_compactions(false));
    prop_window_summary();
    return 0;
}
