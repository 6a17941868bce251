/* SPDX-License-Identifier: BSD-3-Clause */
/* The module API pointers and their fetching (see module_api.h). */
#include "module_api.h"

#define MOD_DEFINE_API(ret, name, params) ret(*RedisModule_##name) params;
MOD_REDIS_API(MOD_DEFINE_API)
MOD_REDIS_API_OPTIONAL(MOD_DEFINE_API)
#undef MOD_DEFINE_API

int mod_redis_init(RedisModuleCtx *ctx, const char *name, int version)
{
    int (*get_api)(const char *, void *);
    void *first = ((void **)ctx)[0];
    _Static_assert(sizeof first == sizeof get_api, "function and object pointers differ in size");
    __builtin_memcpy(&get_api, &first, sizeof get_api);
    int missing = 0;
#define MOD_FETCH_API(ret, name, params) missing |= get_api("RedisModule_" #name, (void *)&RedisModule_##name);
    MOD_REDIS_API(MOD_FETCH_API)
#undef MOD_FETCH_API
#define MOD_FETCH_OPTIONAL(ret, name, params)                                                              \
    if (get_api("RedisModule_" #name, (void *)&RedisModule_##name) != REDISMODULE_OK)                          \
        RedisModule_##name = NULL;
    MOD_REDIS_API_OPTIONAL(MOD_FETCH_OPTIONAL)
#undef MOD_FETCH_OPTIONAL
    if (missing)
        return REDISMODULE_ERR;
    if (RedisModule_IsModuleNameBusy(name))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, version, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
