/* SPDX-License-Identifier: BSD-3-Clause */
/* Load arguments and module configs (see config.h). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "config.h"
#include "server_kind.h"

/* One setting. Exactly one of the three fields receives its value. */
typedef struct setting {
    const char *name;      /* the config name, and today's load argument */
    const char *legacy;    /* an older load argument, or NULL */
    bool redisbloom;       /* one of RedisBloom's: unprefixed on Redis >= 8 */
    const char *initial;   /* the default, as CONFIG GET shows it */
    long long lo, hi;      /* integers: the accepted range (rates: the open interval (0, 1)) */
    long long most;        /* integers: the largest value applied (a library limit); the rest is accepted */
    double cap;            /* rates: the largest value applied (RedisBloom caps bf-error-rate at 0.25) */
    double *rate;
    uint64_t *u64;
    unsigned *uint;
} setting;

#define GIB (1LL << 30)
#define RATE(name_, legacy_, rb, initial_, cap_, field) \
    {name_, legacy_, rb, initial_, 0, 0, 0, cap_, &mod_cfg.field, NULL, NULL}
#define U64(name_, legacy_, rb, initial_, lo_, hi_, field) \
    {name_, legacy_, rb, initial_, lo_, hi_, hi_, 0, NULL, &mod_cfg.field, NULL}
#define UINT(name_, legacy_, rb, initial_, lo_, hi_, most_, field) \
    {name_, legacy_, rb, initial_, lo_, hi_, most_, 0, NULL, NULL, &mod_cfg.field}

/* The initial texts match common.c's defaults of mod_cfg. */
static const setting settings[] = {
    RATE("bf-error-rate", "ERROR_RATE", true, "0.01", 0.25, bf_error_rate),
    U64("bf-initial-size", "INITIAL_SIZE", true, "100", 1, GIB, bf_initial_size),
    UINT("bf-expansion-factor", NULL, true, "2", 0, 32768, 32768, bf_expansion),
    UINT("cf-bucket-size", NULL, true, "2", 1, 255, 255, cf_bucket_size),
    U64("cf-initial-size", "CF_INITIAL_SIZE", true, "1024", 4, GIB, cf_initial_size),
    UINT("cf-max-iterations", NULL, true, "20", 1, 65535, 65535, cf_max_iterations),
    UINT("cf-expansion-factor", NULL, true, "1", 0, 32768, 32768, cf_expansion),
    /* RedisBloom's range; a filter holds at most NIDUS_CUCKOO_MAX_TABLES sub-filters. */
    UINT("cf-max-expansions", "CF_MAX_EXPANSIONS", true, "32", 1, 65536, NIDUS_CUCKOO_MAX_TABLES,
         cf_max_expansions),
    RATE("cf-error-rate", "CF_ERROR_RATE", false, "0.01", 1.0, cf_error_rate),
    U64("max-capacity", "MAX_CAPACITY", false, "1073741824", 4, LLONG_MAX, max_capacity),
    U64("max-filter-memory", "MAX_FILTER_MEMORY", false, "2147483648", 4096, LLONG_MAX, max_memory),
    /* milliseconds between the timer's compaction steps (compaction.c); 0: only writes step */
    UINT("cf-compact-interval", NULL, false, "10", 0, 60000, 60000, cf_compact_interval),
    /* bytes of inputs up to which a CF.MERGE / BF.MERGE is built within the command (merge_jobs.c) */
    U64("merge-inline-bytes", NULL, false, "65536", 0, LLONG_MAX, merge_inline_bytes),
};

#define NSETTINGS (sizeof settings / sizeof settings[0])

/* What CONFIG GET shows of each setting: the text last accepted. */
static struct state {
    const setting *s;
    RedisModuleString *text;
} states[NSETTINGS];

static void init_states(void)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        states[i].s = &settings[i];
}

/* The integer range now: RedisBloom ties the bucket size and the CF initial size (capacity >= 2 buckets). */
static void range(const setting *s, long long *lo, long long *hi)
{
    *lo = s->lo;
    *hi = s->hi;
    if (s->uint == &mod_cfg.cf_bucket_size && (long long)(mod_cfg.cf_initial_size / 2) < *hi)
        *hi = (long long)(mod_cfg.cf_initial_size / 2);
    else if (s->u64 == &mod_cfg.cf_initial_size)
        *lo = 2 * (long long)mod_cfg.cf_bucket_size;
}

/* Parses `value` for the setting of `st` and applies it; false with RedisBloom's message in `err` when it is
 * not a number or out of range. */
static bool take(struct state *st, RedisModuleString *value, char *err, size_t errlen)
{
    const setting *s = st->s;
    size_t len;
    const char *text = RedisModule_StringPtrLen(value, &len);
    char capped[32];
    if (s->rate) {
        double d;
        if (RedisModule_StringToDouble(value, &d) != REDISMODULE_OK) {
            snprintf(err, errlen, "Invalid value for `%s`", s->name);
            return false;
        }
        if (!(d > 0 && d < 1)) {
            snprintf(err, errlen, "Value for `%s` must be in the range (%f, %f)", s->name, 0.0, 1.0);
            return false;
        }
        if (d > s->cap) {
            d = s->cap;
            len = (size_t)snprintf(capped, sizeof capped, "%g", d);
            text = capped;
        }
        *s->rate = d;
    } else {
        long long n, lo, hi;
        if (RedisModule_StringToLongLong(value, &n) != REDISMODULE_OK) {
            snprintf(err, errlen, "Invalid value for `%s`", s->name);
            return false;
        }
        range(s, &lo, &hi);
        if (n < lo || n > hi) {
            snprintf(err, errlen, "Value for `%s` must be in the range [%lld, %lld]", s->name, lo, hi);
            return false;
        }
        if (s->u64)
            *s->u64 = (uint64_t)n;
        else
            *s->uint = (unsigned)(n < s->most ? n : s->most);
    }
    if (st->text)
        RedisModule_FreeString(NULL, st->text);
    st->text = RedisModule_CreateString(NULL, text, len);
    return true;
}

static struct state *find(RedisModuleString *name, bool *legacy)
{
    for (size_t i = 0; i < NSETTINGS; i++) {
        *legacy = settings[i].legacy && mod_arg_is(name, settings[i].legacy);
        if (*legacy || mod_arg_is(name, settings[i].name))
            return &states[i];
    }
    return NULL;
}

int mod_config_load_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    init_states();
    size_t len;
    if (argc == 1 && (RedisModule_StringPtrLen(argv[0], &len), len == 0))
        argc = 0; /* one empty argument (what some packaging tools pass): none */
    if (argc % 2) {
        RedisModule_Log(ctx, "warning", "nidus: module arguments come in pairs: NAME VALUE");
        return REDISMODULE_ERR;
    }
    for (int i = 0; i < argc; i += 2) {
        const char *arg = RedisModule_StringPtrLen(argv[i], NULL);
        bool legacy;
        struct state *st = find(argv[i], &legacy);
        if (!st) {
            RedisModule_Log(ctx, "warning", "nidus: unrecognized module argument '%s'", arg);
            return REDISMODULE_ERR;
        }
        if (legacy)
            RedisModule_Log(ctx, "notice", "nidus: '%s' is the older name of '%s'", arg, st->s->name);
        char err[160];
        if (!take(st, argv[i + 1], err, sizeof err)) {
            RedisModule_Log(ctx, "warning", "nidus: module argument '%s': %s", arg, err);
            return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

static RedisModuleString *config_get(const char *name, void *privdata)
{
    (void)name;
    return ((struct state *)privdata)->text;
}

static int config_set(const char *name, RedisModuleString *value, void *privdata, RedisModuleString **err)
{
    (void)name;
    char msg[160];
    if (take(privdata, value, msg, sizeof msg))
        return REDISMODULE_OK;
    *err = RedisModule_CreateString(NULL, msg, strlen(msg));
    return REDISMODULE_ERR;
}

/* Whether the server is Redis 8 (see server_kind.h), from its INFO server fields; false when it cannot say. */
static bool server_is_redis8(RedisModuleCtx *ctx)
{
    if (!RedisModule_GetServerInfo || !RedisModule_ServerInfoGetFieldC || !RedisModule_FreeServerInfo)
        return false;
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(ctx, "server");
    if (!info)
        return false;
    bool redis8 = mod_server_is_redis8(RedisModule_ServerInfoGetFieldC(info, "server_name"),
                                         RedisModule_ServerInfoGetFieldC(info, "redis_version"));
    RedisModule_FreeServerInfo(ctx, info);
    return redis8;
}

static int register_one(RedisModuleCtx *ctx, struct state *st, unsigned flags)
{
    return RedisModule_RegisterStringConfig(ctx, st->s->name, RedisModule_StringPtrLen(st->text, NULL), flags,
                                            config_get, config_set, NULL, st);
}

int mod_config_register(RedisModuleCtx *ctx)
{
    if (!RedisModule_RegisterStringConfig || !RedisModule_LoadConfigs)
        return REDISMODULE_OK;
    /* Redis 8 names RedisBloom's settings without the module's prefix, as RedisBloom registers them there;
     * Redis 7 and Valkey know no such flag (Valkey refuses it, and a refusal would abort the load). */
    bool unprefixed = server_is_redis8(ctx);
    for (size_t i = 0; i < NSETTINGS; i++) {
        struct state *st = &states[i];
        if (!st->text)
            st->text = RedisModule_CreateString(NULL, st->s->initial, strlen(st->s->initial));
        bool bare = unprefixed && st->s->redisbloom;
        int status = register_one(ctx, st, bare ? REDISMODULE_CONFIG_UNPREFIXED : REDISMODULE_CONFIG_DEFAULT);
        if (status != REDISMODULE_OK && bare) {
            /* refused by a server that is not the Redis 8 it looked like: this name and every later one keep
             * the prefix (RedisBloom's settings come first, so such a server refuses the very first) */
            RedisModule_Log(ctx, "warning", "nidus: the server refused the unprefixed config %s: registering the "
                            "settings as nidus.<name>", st->s->name);
            unprefixed = false;
            status = register_one(ctx, st, REDISMODULE_CONFIG_DEFAULT);
        }
        if (status != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning", "nidus: could not register the config %s", st->s->name);
            return REDISMODULE_ERR;
        }
    }
    RedisModule_Log(ctx, "notice", unprefixed ? "nidus: RedisBloom's settings are configs by their own names "
                                                "(bf-error-rate, ...), nidus's as nidus.<name>"
                                              : "nidus: the settings are configs named nidus.<name>");
    if (RedisModule_LoadConfigs(ctx) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning", "nidus: the server's configuration of the module's settings was refused");
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
