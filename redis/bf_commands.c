/* SPDX-License-Identifier: BSD-3-Clause */
/* The BF.* commands: RedisBloom's names, arguments, replies and error strings, over nidus_bloom. */
#include <stdio.h>

#include "commands.h"
#include "common.h"
#include "windowed.h"

typedef struct bf_options {
    double error;
    long long capacity, expansion;
    bool nonscaling, create;
    long long window;        /* WINDOW ms: a windowed filter with a Bloom filter's adds (windowed.c); 0: none */
    RedisModuleString *name; /* the key */
} bf_options;

static bf_options bf_defaults(void)
{
    return (bf_options){.error = mod_cfg.bf_error_rate, .capacity = (long long)mod_cfg.bf_initial_size,
                        .expansion = mod_cfg.bf_expansion, .create = true};
}

/* Creates the filter into `key`, or replies the error and returns NULL. */
static void *bf_create(RedisModuleCtx *ctx, RedisModuleKey *key, const void *options)
{
    const bf_options *o = options;
    if ((uint64_t)o->capacity > mod_cfg.max_capacity) {
        RedisModule_ReplyWithError(ctx, MOD_MSG_CAPACITY);
        return NULL;
    }
    if (o->window) {
        nidus_window_params w = {.capacity = (uint64_t)o->capacity, .window = (uint64_t)o->window,
                                 .error_rate = o->error,
                                 .expansion = o->nonscaling ? 0 : (unsigned)o->expansion,
                                 .max_memory = mod_cfg.max_memory};
        return mod_window_create(ctx, key, o->name, mod_bw_type, &w);
    }
    nidus_bloom_params p = {.capacity = (uint64_t)o->capacity, .error_rate = o->error,
                            .expansion = o->nonscaling ? 0 : (unsigned)o->expansion,
                            .max_memory = mod_cfg.max_memory, .allocator = &mod_allocator};
    nidus_bloom *bf = NULL;
    nidus_status st = nidus_bloom_new(&p, &bf);
    if (st) {
        RedisModule_ReplyWithError(ctx, st == NIDUS_ERR_LIMIT_MEMORY || st == NIDUS_ERR_TOO_LARGE
                                            ? MOD_MSG_TOO_BIG
                                            : "ERR could not create filter");
        return NULL;
    }
    RedisModule_ModuleTypeSetValue(key, mod_bf_type, bf);
    return bf;
}

const char *mod_bf_add_error(nidus_status st)
{
    switch (st) {
    case NIDUS_ERR_FULL: return "ERR non scaling filter is full";
    case NIDUS_ERR_LIMIT_TABLES: return "ERR filter reached its maximum number of sub-filters";
    case NIDUS_ERR_LIMIT_MEMORY: return MOD_MSG_TOO_BIG;
    case NIDUS_ERR_READ_ONLY: return MOD_MSG_BF_LOADING;
    default: return "ERR could not add the item";
    }
}

void mod_bf_add_and_reply(RedisModuleCtx *ctx, RedisModuleString **items, int n, bool multi, bool changed,
                            mod_bf_add_fn add, void *filter)
{
    if (multi)
        RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long replies = 0;
    for (int i = 0; i < n; i++, replies++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(items[i], &len);
        bool added = false;
        nidus_status st = add(filter, s, len, &added);
        if (st) {
            RedisModule_ReplyWithError(ctx, mod_bf_add_error(st));
            replies++;
            break;
        }
        changed |= added;
        mod_reply_bool(ctx, added);
    }
    if (multi)
        RedisModule_ReplySetArrayLength(ctx, replies);
    if (changed)
        RedisModule_ReplicateVerbatim(ctx);
}

static nidus_status add_to_bloom(void *filter, const char *s, size_t len, bool *added)
{
    return nidus_bloom_add(filter, s, len, added);
}

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [WINDOW ms] */
int mod_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4 || argc > 9)
        return RedisModule_WrongArity(ctx);
    bf_options o = bf_defaults();
    if (RedisModule_StringToDouble(argv[2], &o.error) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad error rate");
    if (!(o.error > 0 && o.error < 1))
        return RedisModule_ReplyWithError(ctx, "ERR error rate must be in the range (0.000000, 1.000000)");
    if (RedisModule_StringToLongLong(argv[3], &o.capacity) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "ERR bad capacity");
    if (o.capacity < 1 || (uint64_t)o.capacity > mod_cfg.max_capacity)
        return mod_reply_errorf(ctx, "ERR capacity must be in the range [1, %llu]",
                                  (unsigned long long)mod_cfg.max_capacity);
    bool expansion_given = false;
    for (int i = 4; i < argc; i++) {
        if (mod_arg_is(argv[i], "NONSCALING")) {
            o.nonscaling = true;
        } else if (mod_arg_is(argv[i], "EXPANSION")) {
            if (++i == argc)
                return RedisModule_ReplyWithError(ctx, "ERR no expansion");
            if (RedisModule_StringToLongLong(argv[i], &o.expansion) != REDISMODULE_OK)
                return RedisModule_ReplyWithError(ctx, "ERR bad expansion");
            expansion_given = true;
        } else if (mod_arg_is(argv[i], "WINDOW")) {
            if (++i == argc)
                return RedisModule_ReplyWithError(ctx, "ERR no window");
            if (!mod_window_option(ctx, argv[i], true, &o.window))
                return REDISMODULE_OK;
        } else {
            return RedisModule_ReplyWithError(ctx, "ERR unknown argument received");
        }
    }
    /* EXPANSION 0 means NONSCALING (RedisBloom 8); NONSCALING with another expansion is a contradiction */
    if (expansion_given && o.expansion != 0 && o.nonscaling)
        return RedisModule_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    if (expansion_given && (o.expansion < 0 || o.expansion > NIDUS_BLOOM_MAX_EXPANSION))
        return RedisModule_ReplyWithError(ctx, "ERR expansion must be in the range [0, 32768]");
    o.name = argv[1];
    return mod_reserve(ctx, argv[1], mod_bf_type, mod_bw_type, bf_create, &o);
}

/* Adds items (BF.ADD, BF.MADD, BF.INSERT: `argv`, the whole command); to a windowed key as windowed.c adds
 * them. A full non-scaling filter ends the reply with its error. */
static int bf_insert_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, RedisModuleString **items,
                            int n, bool multi, bf_options *o)
{
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, mod_bf_type, &key, &value);
    nidus_bloom *bf = value;
    bool windowed = ks == KEY_WRONGTYPE && mod_window_holds(key, mod_bw_type);
    if ((ks == KEY_WRONGTYPE && !windowed) || (ks == KEY_EMPTY && !o->create)) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, ks == KEY_WRONGTYPE ? REDISMODULE_ERRORMSG_WRONGTYPE : "ERR not found");
    }
    o->name = argv[1];
    if (ks == KEY_EMPTY && !(bf = bf_create(ctx, key, o))) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    if (windowed || (ks == KEY_EMPTY && o->window)) {
        mod_window_add(ctx, argv, argc, RedisModule_ModuleTypeGetValue(key), items, n, MOD_WINDOW_BLOOM, false,
                       multi);
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    mod_bf_add_and_reply(ctx, items, n, multi, ks == KEY_EMPTY, add_to_bloom, bf);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int mod_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    bf_options o = bf_defaults();
    return bf_insert_common(ctx, argv, argc, argv + 2, 1, false, &o);
}

int mod_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    bf_options o = bf_defaults();
    return bf_insert_common(ctx, argv, argc, argv + 2, argc - 2, true, &o);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [WINDOW ms] ITEMS item... */
int mod_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    bf_options o = bf_defaults();
    int i = 2;
    for (; i < argc && !mod_arg_is(argv[i], "ITEMS"); i++) {
        if (mod_arg_is(argv[i], "NOCREATE")) {
            o.create = false;
        } else if (mod_arg_is(argv[i], "NONSCALING")) {
            o.nonscaling = true;
        } else if (mod_arg_is(argv[i], "WINDOW")) {
            if (++i == argc)
                return RedisModule_WrongArity(ctx);
            long long ms;
            if (RedisModule_StringToLongLong(argv[i], &ms) != REDISMODULE_OK || ms < 1 ||
                (uint64_t)ms > NIDUS_WINDOW_MAX_TICKS)
                return RedisModule_ReplyWithError(ctx, "Bad window");
            o.window = ms;
        } else if (mod_arg_is(argv[i], "CAPACITY") || mod_arg_is(argv[i], "ERROR") ||
                   mod_arg_is(argv[i], "EXPANSION")) {
            if (i + 1 == argc)
                return RedisModule_WrongArity(ctx);
            RedisModuleString *opt = argv[i++];
            /* RedisBloom's three errors, for a value that is not a number and for one out of range alike */
            if (mod_arg_is(opt, "ERROR") &&
                (RedisModule_StringToDouble(argv[i], &o.error) != REDISMODULE_OK || !(o.error > 0 && o.error < 1)))
                return RedisModule_ReplyWithError(ctx, "Bad error rate");
            if (mod_arg_is(opt, "CAPACITY") &&
                (RedisModule_StringToLongLong(argv[i], &o.capacity) != REDISMODULE_OK || o.capacity < 1 ||
                 (uint64_t)o.capacity > mod_cfg.max_capacity))
                return RedisModule_ReplyWithError(ctx, "Bad capacity");
            if (mod_arg_is(opt, "EXPANSION") &&
                (RedisModule_StringToLongLong(argv[i], &o.expansion) != REDISMODULE_OK || o.expansion < 0 ||
                 o.expansion > NIDUS_BLOOM_MAX_EXPANSION))
                return RedisModule_ReplyWithError(ctx, "Bad expansion");
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (i + 1 >= argc)
        return RedisModule_WrongArity(ctx);
    return bf_insert_common(ctx, argv, argc, argv + i + 1, argc - i - 1, true, &o);
}

static uint64_t bf_hash_any(const void *f, const void *key, size_t len) { return nidus_bloom_hash(f, key, len); }
static void bf_many_any(const void *f, const uint64_t *h, size_t n, bool *out) { nidus_bloom_contains_many_hash(f, h, n, out); }

int mod_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_exists_command(ctx, argv, argc, false, mod_bf_type, bf_hash_any, bf_many_any);
}

int mod_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_exists_command(ctx, argv, argc, true, mod_bf_type, bf_hash_any, bf_many_any);
}

int mod_bf_info_reply(RedisModuleCtx *ctx, RedisModuleString *field, const long long values[5], bool scaling)
{
    static const char *const names[] = {"Capacity", "Size", "Number of filters", "Number of items inserted",
                                        "Expansion rate"};
    static const char *const fields[] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"};
    int only = -1;
    if (field) {
        for (int f = 0; f < 5; f++)
            if (mod_arg_is(field, fields[f]))
                only = f;
        if (only < 0)
            return RedisModule_ReplyWithError(ctx, "Invalid information value");
    }
    /* one field: [value] in RESP2, {name: value} in RESP3, as RedisBloom */
    bool named = only < 0 || mod_resp3(ctx);
    if (only >= 0 && !named)
        RedisModule_ReplyWithArray(ctx, 1);
    else
        mod_reply_map(ctx, only >= 0 ? 1 : 5);
    for (int f = 0; f < 5; f++) {
        if (only >= 0 && f != only)
            continue;
        if (named)
            RedisModule_ReplyWithSimpleString(ctx, names[f]);
        if (f == 4 && !scaling) /* non-scaling: no expansion rate */
            RedisModule_ReplyWithNull(ctx);
        else
            RedisModule_ReplyWithLongLong(ctx, values[f]);
    }
    return REDISMODULE_OK;
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION] */
int mod_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (!mod_open_existing(ctx, argv[1], REDISMODULE_READ, mod_bf_type, "ERR not found", &key, &value)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    nidus_bloom_stats s;
    nidus_bloom_get_stats(value, &s);
    RedisModule_CloseKey(key);
    long long values[] = {(long long)s.capacity, (long long)s.memory_bytes, s.layers, (long long)s.items,
                          s.expansion};
    return mod_bf_info_reply(ctx, argc == 3 ? argv[2] : NULL, values, s.expansion != 0);
}

/* BF.CARD key: items added that were new; 0 for a missing key. */
int mod_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, argv[1], REDISMODULE_READ, mod_bf_type, &key, &value);
    int rc;
    if (ks == KEY_WRONGTYPE) {
        rc = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else {
        nidus_bloom_stats s = {0};
        if (value)
            nidus_bloom_get_stats(value, &s);
        rc = RedisModule_ReplyWithLongLong(ctx, (long long)s.items);
    }
    RedisModule_CloseKey(key);
    return rc;
}

void mod_bf_reply_debug_layers(RedisModuleCtx *ctx, const nidus_bloom *bf)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(bf, &s);
    char line[256];
    for (unsigned i = 0; i < s.layers; i++) {
        nidus_bloom_layer_stats l = {0};
        nidus_bloom_get_layer_stats(bf, i, &l);
        int n = snprintf(line, sizeof line, "bytes:%llu bits:%llu hashes:%u hashwidth:64 capacity:%llu size:%llu ratio:%g",
                         (unsigned long long)l.memory_bytes, (unsigned long long)l.memory_bytes * 8, l.hashes,
                         (unsigned long long)l.capacity, (unsigned long long)l.items, l.error);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
}

/* BF.DEBUG key: RedisBloom's lines, "size:<items>" and one per sub-filter (hashwidth: our hashes are 64-bit). */
int mod_bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open_existing(ctx, argv[1], REDISMODULE_READ, mod_bf_type, "ERR not found", &key, &value)) {
        nidus_bloom_stats s;
        nidus_bloom_get_stats(value, &s);
        RedisModule_ReplyWithArray(ctx, 1 + (long)s.layers);
        char line[256];
        int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)s.items);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
        mod_bf_reply_debug_layers(ctx, value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int mod_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_scandump_command(ctx, argv, argc, &mod_bf_ops);
}

int mod_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_load_chunk_command(ctx, argv, argc, &mod_bf_ops);
}
