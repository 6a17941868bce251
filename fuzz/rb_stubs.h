/* Stubs of the Redis module API for the fuzz targets of RedisBloom's formats (fuzz_rb_rdb, fuzz_rb_chunks):
 * allocation through malloc, and the data types captured by name. Included by one target each. */
#ifndef NIDUS_FUZZ_RB_STUBS_H
#define NIDUS_FUZZ_RB_STUBS_H

#include <stdlib.h>
#include <string.h>

#include "module_api.h"
#include "types.h"

static RedisModuleTypeMethods *rb_methods[2]; /* MBbloomCF, MBbloom-- */

static RedisModuleType *stub_create_type(RedisModuleCtx *ctx, const char *name, int encver, RedisModuleTypeMethods *m)
{
    (void)ctx, (void)encver;
    if (strcmp(name, "MBbloomCF") == 0)
        rb_methods[0] = m;
    else if (strcmp(name, "MBbloom--") == 0)
        rb_methods[1] = m;
    return (RedisModuleType *)m;
}
static void *stub_alloc(size_t n) { return malloc(n ? n : 1); }
static void *stub_calloc(size_t n, size_t m) { return calloc(n ? n : 1, m ? m : 1); }
static void *stub_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
static void stub_free(void *p) { free(p); }

/* Points the allocation functions and CreateDataType at the stubs and registers the types (once). */
static void rb_stubs_setup(void)
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
    nidus_register_types(NULL);
}

#endif
