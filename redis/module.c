/* nidus.so: registration and configuration.
 *
 * Load arguments, in pairs (RedisBloom's first three, then ours):
 *   initial_size N        BF.ADD / BF.INSERT default capacity (100)
 *   error_rate E          BF default error (0.01)
 *   cf_max_expansions N   sub-filters a cuckoo filter may grow to, 1..64 (32)
 *   cf_initial_size N     CF.ADD / CF.INSERT default capacity (1024)
 *   cf_error_rate E       error of cuckoo filters created without ERROR or FINGERPRINT (0.01)
 *   max_capacity N        the largest capacity a command may ask for (2^30)
 *   max_filter_memory N   bytes one filter may hold: creation, growth, LOADCHUNK, RESTORE (2 GiB)
 * Every command declares its key (first = last = 1, step 1), so Redis Cluster routes it. */
#include <limits.h>
#include <stdio.h>

#include "commands.h"
#include "common.h"
#include "types.h"

#define NIDUS_MODULE_VERSION 100 /* 0.1.0 */

static int bail(RedisModuleCtx *ctx, const char *what)
{
    RedisModule_Log(ctx, "warning", "nidus: %s", what);
    return REDISMODULE_ERR;
}

static int parse_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc % 2)
        return bail(ctx, "module arguments come in pairs: NAME VALUE");
    for (int i = 0; i < argc; i += 2) {
        RedisModuleString *name = argv[i], *v = argv[i + 1];
        long long n;
        double d;
        if (nidus_arg_is(name, "initial_size")) {
            if (!nidus_arg_range(v, 1, LLONG_MAX, &n))
                return bail(ctx, "INITIAL_SIZE must be an integer > 0");
            nidus_config.bf_initial_size = (uint64_t)n;
        } else if (nidus_arg_is(name, "cf_initial_size")) {
            if (!nidus_arg_range(v, 4, LLONG_MAX, &n))
                return bail(ctx, "CF_INITIAL_SIZE must be an integer >= 4");
            nidus_config.cf_initial_size = (uint64_t)n;
        } else if (nidus_arg_is(name, "error_rate") || nidus_arg_is(name, "cf_error_rate")) {
            if (RedisModule_StringToDouble(v, &d) != REDISMODULE_OK || !(d > 0 && d < 1))
                return bail(ctx, "ERROR_RATE and CF_ERROR_RATE must be numbers in (0, 1)");
            *(nidus_arg_is(name, "error_rate") ? &nidus_config.bf_error_rate : &nidus_config.cf_error_rate) = d;
        } else if (nidus_arg_is(name, "cf_max_expansions")) {
            if (!nidus_arg_range(v, 1, NIDUS_CUCKOO_MAX_TABLES, &n))
                return bail(ctx, "CF_MAX_EXPANSIONS must be an integer in [1, 64]");
            nidus_config.cf_max_expansions = (unsigned)n;
        } else if (nidus_arg_is(name, "max_capacity")) {
            if (!nidus_arg_range(v, 4, LLONG_MAX, &n))
                return bail(ctx, "MAX_CAPACITY must be an integer >= 4");
            nidus_config.max_capacity = (uint64_t)n;
        } else if (nidus_arg_is(name, "max_filter_memory")) {
            if (!nidus_arg_range(v, 4096, LLONG_MAX, &n))
                return bail(ctx, "MAX_FILTER_MEMORY must be an integer >= 4096");
            nidus_config.max_memory = (uint64_t)n;
        } else {
            return bail(ctx, "unrecognized module argument");
        }
    }
    return REDISMODULE_OK;
}

typedef struct command {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
} command;

#define WRITE "write deny-oom"
#define READ "readonly fast"

static const command commands[] = {
    {"cf.reserve", nidus_cf_reserve, WRITE},     {"cf.add", nidus_cf_add, WRITE},
    {"cf.addnx", nidus_cf_add, WRITE},           {"cf.insert", nidus_cf_insert, WRITE},
    {"cf.insertnx", nidus_cf_insert, WRITE},     {"cf.exists", nidus_cf_exists, READ},
    {"cf.mexists", nidus_cf_mexists, READ},      {"cf.count", nidus_cf_count, READ},
    {"cf.del", nidus_cf_del, "write"},           {"cf.compact", nidus_cf_compact, "write"},
    {"cf.info", nidus_cf_info, READ},            {"cf.scandump", nidus_cf_scandump, "readonly"},
    {"cf.loadchunk", nidus_cf_loadchunk, WRITE}, {"bf.reserve", nidus_bf_reserve, WRITE},
    {"bf.add", nidus_bf_add, WRITE},             {"bf.madd", nidus_bf_madd, WRITE},
    {"bf.insert", nidus_bf_insert, WRITE},       {"bf.exists", nidus_bf_exists, READ},
    {"bf.mexists", nidus_bf_mexists, READ},      {"bf.info", nidus_bf_info, READ},
    {"bf.card", nidus_bf_card, READ},            {"bf.scandump", nidus_bf_scandump, "readonly"},
    {"bf.loadchunk", nidus_bf_loadchunk, WRITE},
};

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv,
                                                             int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (nidus_redis_init(ctx, "nidus", NIDUS_MODULE_VERSION) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (parse_args(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (nidus_register_types(ctx) != REDISMODULE_OK)
        return bail(ctx, "could not create the data types");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (RedisModule_CreateCommand(ctx, commands[i].name, commands[i].fn, commands[i].flags, 1, 1, 1) !=
            REDISMODULE_OK)
            return bail(ctx, "could not register a command");
    return REDISMODULE_OK;
}
