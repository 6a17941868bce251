/* SPDX-License-Identifier: BSD-3-Clause */
/* The module API pointers and their fetching (see module_api.h). */
#include "module_api.h"

#define NIDUS_DEFINE_API(ret, name, params) ret(*RedisModule_##name) params;
NIDUS_REDIS_API(NIDUS_DEFINE_API)
NIDUS_REDIS_API_OPTIONAL(NIDUS_DEFINE_API)
#undef NIDUS_DEFINE_API

int nidus_redis_init(RedisModuleCtx *ctx, const char *name, int version)
{
    int (*get_api)(const char *, void *);
    void *first = ((void **)ctx)[0];
    _Static_assert(sizeof first == sizeof get_api, "function and object pointers differ in size");
    __builtin_memcpy(&get_api, &first, sizeof get_api);
    int missing = 0;
#define NIDUS_FETCH_API(ret, name, params) missing |= get_api("RedisModule_" #name, (void *)&RedisModule_##name);
    NIDUS_REDIS_API(NIDUS_FETCH_API)
#undef NIDUS_FETCH_API
#define NIDUS_FETCH_OPTIONAL(ret, name, params)                                                              \
    if (get_api("RedisModule_" #name, (void *)&RedisModule_##name) != REDISMODULE_OK)                          \
        RedisModule_##name = NULL;
    NIDUS_REDIS_API_OPTIONAL(NIDUS_FETCH_OPTIONAL)
#undef NIDUS_FETCH_OPTIONAL
    if (missing)
        return REDISMODULE_ERR;
    if (RedisModule_IsModuleNameBusy(name))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, version, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
