/* SPDX-License-Identifier: BSD-3-Clause */
/* Stubs of the Redis module API shared by the fuzz targets over the module's code (fuzz_rdb, fuzz_rb_rdb,
 * fuzz_rb_chunks): allocation through malloc, the data types captured by name, never loading. Included by one target
 * each. */
#ifndef NIDUS_FUZZ_MODULE_STUBS_H
#define NIDUS_FUZZ_MODULE_STUBS_H

#include <stdlib.h>
#include <string.h>

#include "module_api.h"
#include "types.h"

/* Compaction (redis/compaction.c, not linked here) after an RDB load: nothing to hand to a timer. */
void mod_cf_compact_loaded(RedisModuleIO *io, void *filter)
{
    (void)io, (void)filter;
}

/* The methods of each data type, in this order. */
static const char *const type_names[] = {"nidus--CF", "nidus--BF", "MBbloomCF", "MBbloom--"};
static RedisModuleTypeMethods *type_methods[4];

static RedisModuleType *stub_create_type(RedisModuleCtx *ctx, const char *name, int encver, RedisModuleTypeMethods *m)
{
    (void)ctx, (void)encver;
    for (int i = 0; i < 4; i++)
        if (strcmp(name, type_names[i]) == 0)
            type_methods[i] = m;
    return (RedisModuleType *)m;
}
static void *stub_alloc(size_t n) { return malloc(n ? n : 1); }
static void *stub_calloc(size_t n, size_t m) { return calloc(n ? n : 1, m ? m : 1); }
static void *stub_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
static void stub_free(void *p) { free(p); }
static int stub_context_flags(RedisModuleCtx *ctx)
{
    (void)ctx;
    return 0; /* as RESTORE: not loading, so max_filter_memory applies */
}

/* Points the allocation functions and CreateDataType at the stubs and registers the types (once). */
static void module_stubs_setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    RedisModule_CreateDataType = stub_create_type;
    RedisModule_Alloc = stub_alloc;
    RedisModule_Calloc = stub_calloc;
    RedisModule_Realloc = stub_realloc;
    RedisModule_Free = stub_free;
    RedisModule_GetContextFlags = stub_context_flags;
    mod_register_types(NULL);
}

#endif
