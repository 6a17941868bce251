/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared helpers of the module: see common.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common.h"

mod_config mod_cfg = {
    .bf_error_rate = 0.01,
    .bf_initial_size = 100,
    .bf_expansion = 2,
    .cf_bucket_size = 2,
    .cf_initial_size = 1024,
    .cf_max_iterations = 20,
    .cf_expansion = 1,
    .cf_error_rate = 0.01,
    .cf_max_expansions = 32,
    .max_capacity = UINT64_C(1) << 30,
    .max_memory = UINT64_C(1) << 31,
    .cf_compact_interval = 10,
    .merge_inline_bytes = 65536,
};

RedisModuleType *mod_cf_type, *mod_bf_type;

mod_server_traits mod_server = {MOD_OPTIONS_HANDLE_IO_ERRORS | MOD_OPTIONS_HANDLE_REPL_ASYNC_LOAD, 32};

void mod_read_server(RedisModuleCtx *ctx)
{
    if (!RedisModule_GetServerInfo || !RedisModule_ServerInfoGetFieldC || !RedisModule_FreeServerInfo)
        return;
    RedisModuleServerInfoData *info = RedisModule_GetServerInfo(ctx, "server");
    if (!info)
        return;
    mod_server = mod_server_traits_of(RedisModule_ServerInfoGetFieldC(info, "server_name"),
                                      RedisModule_ServerInfoGetFieldC(info, "redis_version"),
                                      RedisModule_ServerInfoGetFieldC(info, "valkey_version"));
    RedisModule_FreeServerInfo(ctx, info);
}

uint64_t mod_load_limit(RedisModuleCtx *ctx)
{
    const int unlimited =
        REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_ASYNC_LOADING | REDISMODULE_CTX_FLAGS_REPLICATED;
    return RedisModule_GetContextFlags(ctx) & unlimited ? 0 : mod_cfg.max_memory;
}

/* The key a master's announcement (CF.AT / BF.AT key 0 LIMIT | GROW ...) is for, kept until its write uses it:
 * one at a time of each kind, as an announcement and its write travel together in one MULTI. */
typedef struct key_note {
    bool set;
    int db;
    RedisModuleString *name;
} key_note;

static void note_forget(key_note *n)
{
    if (n->name)
        RedisModule_FreeString(NULL, n->name);
    n->name = NULL;
    n->set = false;
}

/* The key `name` of the command running in ctx's database. */
static void note_keep(key_note *n, RedisModuleCtx *ctx, RedisModuleString *name)
{
    note_forget(n);
    size_t len;
    const char *s = RedisModule_StringPtrLen(name, &len);
    n->name = RedisModule_CreateString(NULL, s, len);
    n->db = RedisModule_GetSelectedDb(ctx);
    n->set = true;
}

static bool note_is(const key_note *n, int db, const RedisModuleString *name)
{
    return n->set && name && db == n->db && RedisModule_StringCompare(n->name, (RedisModuleString *)name) == 0;
}

/* The limit announced for the next load of one key (mod_limit_at). */
static struct {
    key_note key;
    uint64_t limit;
} announced;

/* What a replica or a replay runs: its master's stream (or the AOF), or its sync; else a master's client. */
static const int not_master = REDISMODULE_CTX_FLAGS_SLAVE | REDISMODULE_CTX_FLAGS_LOADING |
                              REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_ASYNC_LOADING;

uint64_t mod_key_load_limit(RedisModuleCtx *ctx, int db, const RedisModuleString *name, bool take)
{
    if (!(RedisModule_GetContextFlags(ctx) & not_master) || !note_is(&announced.key, db, name))
        return mod_load_limit(ctx); /* a master's client loads under the master's own limit */
    uint64_t limit = announced.limit;
    if (take)
        note_forget(&announced.key);
    return limit;
}

uint64_t mod_io_load_limit(RedisModuleIO *io)
{
    if (!announced.key.set || !RedisModule_GetKeyNameFromIO || !RedisModule_GetDbIdFromIO)
        return mod_load_limit(NULL);
    return mod_key_load_limit(NULL, RedisModule_GetDbIdFromIO(io), RedisModule_GetKeyNameFromIO(io), false);
}

void mod_limit_announce(RedisModuleCtx *ctx, RedisModuleString *name, bool bloom, uint64_t limit)
{
    RedisModule_Replicate(ctx, bloom ? "BF.AT" : "CF.AT", "sccl", name, "0", "LIMIT", (long long)limit);
}

void mod_limit_on_restore(RedisModuleCtx *ctx, RedisModuleString *name, bool ours, bool bloom)
{
    if (!(RedisModule_GetContextFlags(ctx) & not_master)) {
        if (ours) /* the limit the value's rdb_load checked: mod_load_limit on a master */
            mod_limit_announce(ctx, name, bloom, mod_load_limit(NULL));
    } else {
        note_forget(&announced.key);
    }
}

int mod_limit_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long limit;
    if (argc != 5 || RedisModule_StringToLongLong(argv[4], &limit) != REDISMODULE_OK || limit < 0)
        return RedisModule_ReplyWithError(ctx, "ERR bad limit");
    note_keep(&announced.key, ctx, argv[1]);
    announced.limit = (uint64_t)limit;
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

bool mod_replayed(RedisModuleCtx *ctx)
{
    const int flags =
        REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_ASYNC_LOADING;
    return (RedisModule_GetContextFlags(ctx) & flags) != 0;
}

/* The growth settings announced for one key (mod_grow_at), kept until a growth part is made under them. */
static struct {
    key_note key;
    bool bloom;
    mod_grow_settings s;
} grow_announced;

mod_grow_settings mod_grow_settings_for(RedisModuleCtx *ctx, RedisModuleString *name, bool bloom, bool *announced)
{
    mod_grow_settings s = {mod_cfg.max_capacity, mod_cfg.max_memory, mod_cfg.cf_max_expansions, mod_cfg.cf_error_rate};
    if (mod_replayed(ctx)) {
        if (grow_announced.bloom == bloom && note_is(&grow_announced.key, RedisModule_GetSelectedDb(ctx), name))
            s = grow_announced.s;
        return s;
    }
    if (!*announced) {
        char rate[40];
        snprintf(rate, sizeof rate, "%.17g", s.error_rate); /* 17 digits: the same double back */
        if (bloom)
            RedisModule_Replicate(ctx, "BF.AT", "sccll", name, "0", "GROW", (long long)s.max_capacity,
                                  (long long)s.max_memory);
        else
            RedisModule_Replicate(ctx, "CF.AT", "scclllc", name, "0", "GROW", (long long)s.max_capacity,
                                  (long long)s.max_memory, (long long)s.max_expansions, rate);
        *announced = true;
    }
    return s;
}

void mod_grow_made(RedisModuleCtx *ctx)
{
    if (mod_replayed(ctx))
        note_forget(&grow_announced.key);
}

int mod_grow_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom)
{
    long long capacity, memory, expansions = mod_cfg.cf_max_expansions;
    double rate = mod_cfg.cf_error_rate;
    if (argc != (bloom ? 6 : 8) || RedisModule_StringToLongLong(argv[4], &capacity) != REDISMODULE_OK ||
        capacity < 1 || RedisModule_StringToLongLong(argv[5], &memory) != REDISMODULE_OK || memory < 0 ||
        (!bloom && (RedisModule_StringToLongLong(argv[6], &expansions) != REDISMODULE_OK || expansions < 1 ||
                    expansions > NIDUS_CUCKOO_MAX_TABLES ||
                    RedisModule_StringToDouble(argv[7], &rate) != REDISMODULE_OK || !(rate > 0 && rate < 1))))
        return RedisModule_ReplyWithError(ctx, "ERR bad growth settings");
    note_keep(&grow_announced.key, ctx, argv[1]);
    grow_announced.bloom = bloom;
    grow_announced.s = (mod_grow_settings){(uint64_t)capacity, (uint64_t)memory, (unsigned)expansions, rate};
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void *rm_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return RedisModule_Alloc(n);
}
static void *rm_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    return RedisModule_Calloc(n, size);
}
static void *rm_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return RedisModule_Realloc(p, n);
}
static void rm_free(void *ctx, void *p)
{
    (void)ctx;
    RedisModule_Free(p);
}

const nidus_allocator mod_allocator = {rm_malloc, rm_calloc, rm_realloc, rm_free, NULL};

key_state mod_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                     RedisModuleKey **key, void **value)
{
    *key = mod_open_key(ctx, name, mode);
    *value = NULL;
    int kt = RedisModule_KeyType(*key);
    if (kt == REDISMODULE_KEYTYPE_EMPTY)
        return KEY_EMPTY;
    if (kt != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*key) != type)
        return KEY_WRONGTYPE;
    *value = RedisModule_ModuleTypeGetValue(*key);
    return KEY_OK;
}

bool mod_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                         const char *missing, RedisModuleKey **key, void **value)
{
    key_state ks = mod_open(ctx, name, mode, type, key, value);
    if (ks == KEY_OK)
        return true;
    RedisModule_ReplyWithError(ctx, ks == KEY_WRONGTYPE ? REDISMODULE_ERRORMSG_WRONGTYPE : missing);
    return false;
}

int mod_reserve(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleType *type, RedisModuleType *windowed,
                mod_create_fn create, const void *options)
{
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, type, &key, &value);
    int rc = REDISMODULE_OK;
    if (ks != KEY_EMPTY) {
        bool same_family = ks == KEY_OK || RedisModule_ModuleTypeGetType(key) == windowed;
        rc = RedisModule_ReplyWithError(ctx, same_family ? "ERR item exists" : REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (create(ctx, key, options)) {
        if (RedisModule_ModuleTypeGetType(key) != windowed) /* a windowed creation replicates its own form */
            RedisModule_ReplicateVerbatim(ctx);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return rc;
}

bool mod_resp3(RedisModuleCtx *ctx) { return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0; }

int mod_reply_errorf(RedisModuleCtx *ctx, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return RedisModule_ReplyWithError(ctx, msg);
}

bool mod_option_range(RedisModuleCtx *ctx, RedisModuleString *arg, const char *name, long long min, long long max,
                        long long *out)
{
    if (RedisModule_StringToLongLong(arg, out) != REDISMODULE_OK) {
        mod_reply_errorf(ctx, "Couldn't parse %s", name);
        return false;
    }
    if (*out < min || *out > max) {
        mod_reply_errorf(ctx, "%s: value must be in the range [%lld, %lld]", name, min, max);
        return false;
    }
    return true;
}

int mod_reply_bool(RedisModuleCtx *ctx, bool b)
{
    return mod_resp3(ctx) ? RedisModule_ReplyWithBool(ctx, b) : RedisModule_ReplyWithLongLong(ctx, b);
}

int mod_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi, RedisModuleType *type,
                         uint64_t (*hash)(const void *f, const void *key, size_t len),
                         void (*many)(const void *f, const uint64_t *hashes, size_t n, bool *out))
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open(ctx, argv[1], REDISMODULE_READ, type, &key, &value) == KEY_WRONGTYPE) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    int n = argc - 2;
    if (multi)
        RedisModule_ReplyWithArray(ctx, n);
    uint64_t *hashes = RedisModule_Alloc((size_t)n * sizeof *hashes);
    bool *found = RedisModule_Calloc((size_t)n, sizeof *found);
    if (value) {
        for (int i = 0; i < n; i++) {
            size_t len;
            const char *s = RedisModule_StringPtrLen(argv[i + 2], &len);
            hashes[i] = hash(value, s, len);
        }
        many(value, hashes, (size_t)n, found);
    }
    for (int i = 0; i < n; i++)
        mod_reply_bool(ctx, found[i]);
    RedisModule_Free(hashes);
    RedisModule_Free(found);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int mod_reply_map(RedisModuleCtx *ctx, long pairs)
{
    return mod_resp3(ctx) ? RedisModule_ReplyWithMap(ctx, pairs) : RedisModule_ReplyWithArray(ctx, 2 * pairs);
}

bool mod_arg_is(RedisModuleString *arg, const char *keyword)
{
    size_t n;
    const char *s = RedisModule_StringPtrLen(arg, &n);
    return n == strlen(keyword) && strncasecmp(s, keyword, n) == 0;
}

bool mod_arg_range(RedisModuleString *arg, long long min, long long max, long long *out)
{
    long long v;
    if (RedisModule_StringToLongLong(arg, &v) != REDISMODULE_OK || v < min || v > max)
        return false;
    *out = v;
    return true;
}

RedisModuleCmdFunc mod_route_find(const mod_route *routes, size_t n, RedisModuleCmdFunc fn, RedisModuleCmdFunc next)
{
    for (size_t i = 0; i < n; i++)
        if (routes[i].command == fn) {
            if (routes[i].next)
                *routes[i].next = next;
            return routes[i].route;
        }
    return next;
}
