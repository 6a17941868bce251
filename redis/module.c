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
#include "merge_jobs.h"
#include "rb/rb_types.h"
#include "types.h"
#include "windowed.h"

#define MODULE_VERSION 100 /* 0.1.0 */

static int bail(RedisModuleCtx *ctx, const char *what)
{
    RedisModule_Log(ctx, "warning", "nidus: %s", what);
    return REDISMODULE_ERR;
}

static const mod_command commands[] = {
    {"cf.reserve", mod_cf_reserve},     {"cf.add", mod_cf_add},         {"cf.addnx", mod_cf_add},
    {"cf.insert", mod_cf_insert},       {"cf.insertnx", mod_cf_insert}, {"cf.exists", mod_cf_exists},
    {"cf.mexists", mod_cf_mexists},     {"cf.count", mod_cf_count},     {"cf.del", mod_cf_del},
    {"cf.compact", mod_cf_compact},     {"cf.info", mod_cf_info},       {"cf.scandump", mod_cf_scandump},
    {"cf.loadchunk", mod_cf_loadchunk}, {"bf.reserve", mod_bf_reserve}, {"bf.add", mod_bf_add},
    {"bf.madd", mod_bf_madd},           {"bf.insert", mod_bf_insert},   {"bf.exists", mod_bf_exists},
    {"bf.mexists", mod_bf_mexists},     {"bf.info", mod_bf_info},       {"bf.card", mod_bf_card},
    {"bf.scandump", mod_bf_scandump},   {"bf.loadchunk", mod_bf_loadchunk}, {"cf.debug", mod_cf_debug},
    {"bf.debug", mod_bf_debug},         {"cf.merge", mod_cf_merge},     {"bf.merge", mod_bf_merge},
    {"cf.compactstep", mod_cf_compactstep}, {"cf.at", mod_cf_at},     {"bf.at", mod_bf_at},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* INFO nidus (section nidus_scandump): what SCANDUMP's checksum chunks cost (dump_sums.c), nidus_checksums_summed
 * served by a running checksum (O(1)), nidus_checksums_hashed by hashing the filter whole. */
static void info(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    uint64_t by_sum, whole;
    mod_dump_counts(&by_sum, &whole);
    RedisModule_InfoAddSection(ctx, "scandump");
    RedisModule_InfoAddFieldULongLong(ctx, "checksums_summed", by_sum);
    RedisModule_InfoAddFieldULongLong(ctx, "checksums_hashed", whole);
}


__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                             int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (mod_redis_init(ctx, "nidus", MODULE_VERSION) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (mod_config_load_args(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (mod_config_register(ctx) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    mod_read_server(ctx);
    RedisModule_SetModuleOptions(ctx, (int)mod_server.module_options);
    if (mod_register_types(ctx) != REDISMODULE_OK)
        return bail(ctx, "could not create the data types");
    if (mod_window_init(ctx) != REDISMODULE_OK)
        return bail(ctx, "could not subscribe to keyspace events");
    mod_cf_compaction_init(ctx);
    mod_merge_jobs_init(ctx);
    if (RedisModule_RegisterInfoFunc && RedisModule_InfoAddSection && RedisModule_InfoAddFieldULongLong)
        RedisModule_RegisterInfoFunc(ctx, info);
    /* every command through its routers: writes wait while a merge thread holds their keys (merge_jobs.c),
     * then windowed keys (windowed.c), then keys loaded from RedisBloom (rb/rb_commands.c), then the nidus
     * handler */
    mod_command routed[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        routed[i] = (mod_command){commands[i].name,
                                  mod_merge_route(commands[i].fn,
                                                  mod_window_route(commands[i].fn, mod_rb_route(commands[i].fn)))};
    return mod_register_commands(ctx, routed, NCOMMANDS);
}
