/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus.so: registration.
 *
 * Load arguments (NAME VALUE pairs) and module configs: see config.h. Command flags and documentation: see
 * command_info.c. Every command declares its key (first = last = 1, step 1), so Redis Cluster routes it; the
 * merges' sourcekeys are declared by their key specs (Redis >= 7.0). */
#include "command_info.h"
#include "commands.h"
#include "common.h"
#include "config.h"
#include "rb/rb_types.h"
#include "types.h"

#define NIDUS_MODULE_VERSION 100 /* 0.1.0 */

static int bail(RedisModuleCtx *ctx, const char *what)
{
    RedisModule_Log(ctx, "warning", "nidus: %s", what);
    return REDISMODULE_ERR;
}

static const nidus_command commands[] = {
    {"cf.reserve", nidus_cf_reserve},     {"cf.add", nidus_cf_add},         {"cf.addnx", nidus_cf_add},
    {"cf.insert", nidus_cf_insert},       {"cf.insertnx", nidus_cf_insert}, {"cf.exists", nidus_cf_exists},
    {"cf.mexists", nidus_cf_mexists},     {"cf.count", nidus_cf_count},     {"cf.del", nidus_cf_del},
    {"cf.compact", nidus_cf_compact},     {"cf.info", nidus_cf_info},       {"cf.scandump", nidus_cf_scandump},
    {"cf.loadchunk", nidus_cf_loadchunk}, {"bf.reserve", nidus_bf_reserve}, {"bf.add", nidus_bf_add},
    {"bf.madd", nidus_bf_madd},           {"bf.insert", nidus_bf_insert},   {"bf.exists", nidus_bf_exists},
    {"bf.mexists", nidus_bf_mexists},     {"bf.info", nidus_bf_info},       {"bf.card", nidus_bf_card},
    {"bf.scandump", nidus_bf_scandump},   {"bf.loadchunk", nidus_bf_loadchunk}, {"cf.debug", nidus_cf_debug},
    {"bf.debug", nidus_bf_debug},         {"cf.merge", nidus_cf_merge},     {"bf.merge", nidus_bf_merge},
};

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                             int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (nidus_redis_init(ctx, "nidus", NIDUS_MODULE_VERSION) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (nidus_config_load_args(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (nidus_config_register(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (nidus_register_types(ctx) != REDISMODULE_OK)
        return bail(ctx, "could not create the data types");
    /* every command through its router, which serves keys loaded from RedisBloom (rb/rb_commands.c) */
    nidus_command routed[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        routed[i] = (nidus_command){commands[i].name, nidus_rb_route(commands[i].fn)};
    return nidus_register_commands(ctx, routed, sizeof routed / sizeof routed[0]);
}
