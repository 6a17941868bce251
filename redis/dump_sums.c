/* SPDX-License-Identifier: BSD-3-Clause */
/* SCANDUMP's running checksums (nidus_dump_sum), so that the chunk carrying a large filter's checksum costs its
 * own bytes instead of a read of the whole filter.
 *
 * A sum is kept in memory only, for a value (the filter a key holds), in a table of SUMS_MAX entries. SCANDUMP's
 * header chunk begins it, every data chunk asked for in order adds its bytes (whichever client asks), and the
 * checksum chunk takes its digest when it covers every byte before: O(1) then. Any write forgets it. Every key a
 * command, a timer step or a merge opens for writing goes through mod_open_key, which forgets the sum of the
 * value the key holds, before anything changes it; the value's free (on the main thread or lazy free's
 * background thread) and its defrag (which may move it) forget it too, so a sum never outlives its value, and
 * an address reused by a new value finds none. Where no sum is complete (chunks skipped or asked out of order,
 * a write between two chunks, a restart, an entry evicted by SUMS_MAX other dumps), the checksum chunk hashes
 * the whole filter as before, about 0.1 ms per MB: the bytes are the same either way, and a copy torn by a write
 * is still refused by LOADCHUNK, as the write forgot the sum that would have vouched for it.
 *
 * The table is shared with lazy free's thread (which only forgets), under a spin lock held for a scan of the
 * table: never while a chunk is read. */
#include <stdatomic.h>

#include "common.h"

#define SUMS_MAX 16

typedef struct held_sum {
    const void *value; /* NULL: a free entry */
    nidus_dump_sum *sum;
    uint64_t used; /* when last used, for eviction */
} held_sum;

static held_sum held[SUMS_MAX];
static atomic_uint nheld;              /* entries in use: 0 lets writes and frees skip the lock */
static atomic_flag lock = ATOMIC_FLAG_INIT;
static uint64_t uses;                  /* main thread only */

static void take(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
}

static void give(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

void mod_dump_forget(const void *value)
{
    if (!value || !atomic_load(&nheld))
        return;
    nidus_dump_sum *gone = NULL;
    take();
    for (unsigned i = 0; i < SUMS_MAX; i++)
        if (held[i].value == value) {
            gone = held[i].sum;
            held[i] = (held_sum){0};
            atomic_fetch_sub(&nheld, 1);
            break;
        }
    give();
    nidus_dump_sum_free(gone);
}

nidus_dump_sum *mod_dump_sum_of(const void *value)
{
    nidus_dump_sum *fresh = nidus_dump_sum_new(&mod_allocator), *unused = NULL, *sum;
    take();
    held_sum *at = NULL, *spot = NULL;
    for (unsigned i = 0; i < SUMS_MAX && !at; i++) {
        if (held[i].value == value)
            at = &held[i];
        else if (!spot || (spot->value && (!held[i].value || held[i].used < spot->used)))
            spot = &held[i];
    }
    if (at) {
        unused = fresh;
    } else if (fresh) {
        at = spot;
        if (at->value)
            unused = at->sum; /* evicted */
        else
            atomic_fetch_add(&nheld, 1);
        *at = (held_sum){value, fresh, 0};
    }
    if (at)
        at->used = ++uses;
    sum = at ? at->sum : NULL;
    give();
    nidus_dump_sum_free(unused);
    return sum;
}

RedisModuleKey *mod_open_key(RedisModuleCtx *ctx, RedisModuleString *name, int mode)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, mode);
    if ((mode & REDISMODULE_WRITE) && RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_MODULE)
        mod_dump_forget(RedisModule_ModuleTypeGetValue(key));
    return key;
}
