/* SPDX-License-Identifier: BSD-3-Clause */
/* The CF.* commands: RedisBloom's names, arguments, replies and error strings, over nidus_cuckoo. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"
#include "windowed.h"

/* The parameters of a new cuckoo filter, as CF.RESERVE and the auto-creating commands give them. */
typedef struct cf_options {
    long long capacity, bucket_size, max_iterations, expansion;
    double error;         /* 0: from fingerprint_bits, or the module default */
    long long fingerprint_bits;
    bool semi_sort;
    long long window;        /* WINDOW ms: a windowed filter (windowed.c); 0: none */
    RedisModuleString *name; /* the key */
} cf_options;

static cf_options cf_defaults(long long capacity)
{
    return (cf_options){.capacity = capacity, .bucket_size = mod_cfg.cf_bucket_size,
                        .max_iterations = mod_cfg.cf_max_iterations, .expansion = mod_cfg.cf_expansion};
}

/* Bucket sizes 1..255 are accepted as RedisBloom accepts them; ours are 1, 2, 4 and 8, so a request is
 * rounded up to the next of those (8 for anything above 4), and CF.INFO reports the size used. */
static unsigned supported_bucket_size(long long b) { return b <= 1 ? 1 : b <= 2 ? 2 : b <= 4 ? 4 : 8; }

/* Creates the filter into `key`, or replies the error and returns NULL. */
static void *cf_create(RedisModuleCtx *ctx, RedisModuleKey *key, const void *options)
{
    const cf_options *o = options;
    if ((uint64_t)o->capacity > mod_cfg.max_capacity) {
        RedisModule_ReplyWithError(ctx, MOD_MSG_CAPACITY);
        return NULL;
    }
    if (o->window) {
        nidus_window_params w = {
            .capacity = (uint64_t)o->capacity,
            .window = (uint64_t)o->window,
            .error_rate = o->fingerprint_bits ? 0.0 : o->error ? o->error : mod_cfg.cf_error_rate,
            .fingerprint_bits = (unsigned)o->fingerprint_bits,
            .bucket_size = supported_bucket_size(o->bucket_size),
            .max_kicks = (unsigned)o->max_iterations,
            .expansion = (unsigned)o->expansion,
            .max_memory = mod_cfg.max_memory,
        };
        return mod_window_create(ctx, key, o->name, mod_cw_type, &w);
    }
    nidus_cuckoo_params p = {
        .capacity = (uint64_t)o->capacity,
        .bucket_size = supported_bucket_size(o->bucket_size),
        .max_kicks = (unsigned)o->max_iterations,
        .expansion = (unsigned)o->expansion,
        .max_tables = mod_cfg.cf_max_expansions,
        .max_memory = mod_cfg.max_memory,
        .fingerprint_bits = (unsigned)o->fingerprint_bits,
        .error_rate = o->fingerprint_bits ? 0.0 : o->error ? o->error : mod_cfg.cf_error_rate,
        .semi_sort = o->semi_sort,
        .allocator = &mod_allocator,
    };
    nidus_cuckoo *cf = NULL;
    nidus_status st = nidus_cuckoo_new(&p, &cf);
    if (st) {
        RedisModule_ReplyWithError(ctx, st == NIDUS_ERR_LIMIT_MEMORY || st == NIDUS_ERR_TOO_LARGE
                                            ? MOD_MSG_TOO_BIG
                                        : st == NIDUS_ERR_INVALID_ARGUMENT
                                            ? "ERR SEMISORT needs BUCKETSIZE 4 and FINGERPRINT 5..32"
                                            : "Couldn't create Cuckoo Filter");
        return NULL;
    }
    RedisModule_ModuleTypeSetValue(key, mod_cf_type, cf);
    return cf;
}

const char *mod_cf_add_error(nidus_status st)
{
    switch (st) {
    case NIDUS_ERR_FULL: return "Filter is full";
    case NIDUS_ERR_LIMIT_TABLES: return "Maximum expansions reached";
    case NIDUS_ERR_LIMIT_MEMORY: return MOD_MSG_TOO_BIG;
    case NIDUS_ERR_READ_ONLY: return MOD_MSG_CF_LOADING;
    default: return "Memory allocation failure";
    }
}

void mod_cf_reply_add(RedisModuleCtx *ctx, nidus_status st, bool added, bool nx, bool multi)
{
    /* As RedisBloom replies: CF.INSERTNX integers in both protocols; the others booleans in RESP3; a full
     * filter in CF.INSERT/INSERTNX -1 (false for CF.INSERT in RESP3), in CF.ADD/ADDNX an error. */
    bool integers = nx && multi;
    bool no_room = st == NIDUS_ERR_FULL || st == NIDUS_ERR_LIMIT_TABLES || st == NIDUS_ERR_LIMIT_MEMORY ||
                   st == NIDUS_ERR_NO_MEMORY;
    if (st == NIDUS_OK)
        integers ? RedisModule_ReplyWithLongLong(ctx, added) : mod_reply_bool(ctx, added);
    else if (multi && no_room)
        integers || !mod_resp3(ctx) ? RedisModule_ReplyWithLongLong(ctx, -1) : RedisModule_ReplyWithBool(ctx, 0);
    else
        RedisModule_ReplyWithError(ctx, mod_cf_add_error(st));
}

/* CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS n] [EXPANSION e] [ERROR rate | FINGERPRINT bits]
 * [SEMISORT] [WINDOW ms] */
int mod_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    long long capacity;
    if (RedisModule_StringToLongLong(argv[2], &capacity) != REDISMODULE_OK)
        return RedisModule_ReplyWithError(ctx, "Bad capacity");
    cf_options o = cf_defaults(capacity);
    for (int i = 3; i < argc; i++) {
        bool last = i + 1 >= argc;
        if (mod_arg_is(argv[i], "SEMISORT")) {
            o.semi_sort = true;
            continue;
        }
        if (last)
            return RedisModule_WrongArity(ctx);
        RedisModuleString *v = argv[++i];
        if (mod_arg_is(argv[i - 1], "BUCKETSIZE")) {
            if (!mod_option_range(ctx, v, "BUCKETSIZE", 1, 255, &o.bucket_size))
                return REDISMODULE_OK;
        } else if (mod_arg_is(argv[i - 1], "MAXITERATIONS")) {
            if (!mod_option_range(ctx, v, "MAXITERATIONS", 1, 65535, &o.max_iterations))
                return REDISMODULE_OK;
        } else if (mod_arg_is(argv[i - 1], "EXPANSION")) {
            if (!mod_option_range(ctx, v, "EXPANSION", 0, 32768, &o.expansion))
                return REDISMODULE_OK;
        } else if (mod_arg_is(argv[i - 1], "ERROR")) {
            if (RedisModule_StringToDouble(v, &o.error) != REDISMODULE_OK || !(o.error > 0 && o.error < 1))
                return RedisModule_ReplyWithError(ctx, "ERR (0 < error rate range < 1)");
        } else if (mod_arg_is(argv[i - 1], "FINGERPRINT")) {
            if (!mod_arg_range(v, 4, 32, &o.fingerprint_bits))
                return RedisModule_ReplyWithError(ctx, "ERR FINGERPRINT must be an integer between 4 and 32");
        } else if (mod_arg_is(argv[i - 1], "WINDOW")) {
            if (!mod_window_option(ctx, v, false, &o.window))
                return REDISMODULE_OK;
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (o.error && o.fingerprint_bits)
        return RedisModule_ReplyWithError(ctx, "ERR ERROR and FINGERPRINT cannot be used together");
    if (o.window && o.semi_sort)
        return RedisModule_ReplyWithError(ctx, "ERR SEMISORT and WINDOW cannot be used together");
    if (o.window && o.fingerprint_bits > 32 - (long long)NIDUS_WINDOW_AGE_BITS)
        return RedisModule_ReplyWithError(ctx, "ERR FINGERPRINT must be an integer between 4 and 29 with WINDOW");
    if (o.bucket_size * 2 > capacity || (uint64_t)capacity > mod_cfg.max_capacity)
        return mod_reply_errorf(ctx, "Capacity must be in the range [2 * BUCKETSIZE, %llu]",
                                  (unsigned long long)mod_cfg.max_capacity);
    o.name = argv[1];
    return mod_reserve(ctx, argv[1], mod_cf_type, mod_cw_type, cf_create, &o);
}

/* Adds `n` items (CF.ADD, CF.ADDNX, CF.INSERT, CF.INSERTNX: `argv`, the whole command), to a windowed key as
 * windowed.c adds them. A key made here is windowed when `window` is nonzero. */
static int cf_insert_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, RedisModuleString **items,
                            int n, bool nx, bool multi, bool create, long long capacity, long long window,
                            long long expansion)
{
    RedisModuleString *name = argv[1];
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, mod_cf_type, &key, &value);
    nidus_cuckoo *cf = value;
    bool windowed = ks == KEY_WRONGTYPE && mod_window_holds(key, mod_cw_type);
    if ((ks == KEY_WRONGTYPE && !windowed) || (ks == KEY_EMPTY && !create)) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, ks == KEY_WRONGTYPE ? REDISMODULE_ERRORMSG_WRONGTYPE : "ERR not found");
    }
    if (ks == KEY_EMPTY) {
        cf_options o = cf_defaults(capacity);
        o.window = window;
        if (expansion >= 0)
            o.expansion = expansion;
        o.name = name;
        if (!(value = cf_create(ctx, key, &o))) {
            RedisModule_CloseKey(key);
            return REDISMODULE_OK;
        }
        cf = value;
        windowed = window != 0;
    }
    if (windowed) {
        mod_window_add(ctx, argv, argc, RedisModule_ModuleTypeGetValue(key), items, n,
                       nx ? MOD_WINDOW_ADDNX : MOD_WINDOW_ADD, nx && multi, multi);
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    if (multi)
        RedisModule_ReplyWithArray(ctx, n);
    bool changed = ks == KEY_EMPTY;
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(items[i], &len);
        bool added = true;
        nidus_status st = nx ? nidus_cuckoo_add_unique(cf, s, len, &added) : nidus_cuckoo_add(cf, s, len);
        changed |= st == NIDUS_OK && added;
        mod_cf_reply_add(ctx, st, added, nx, multi);
    }
    if (changed)
        RedisModule_ReplicateVerbatim(ctx);
    mod_cf_compact_after_write(ctx, name, cf);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static bool ends_with_nx(RedisModuleString *cmd)
{
    size_t n;
    const char *s = RedisModule_StringPtrLen(cmd, &n);
    return n >= 2 && (s[n - 1] == 'x' || s[n - 1] == 'X') && (s[n - 2] == 'n' || s[n - 2] == 'N');
}

/* CF.ADD key item, CF.ADDNX key item */
int mod_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    return cf_insert_common(ctx, argv, argc, argv + 2, 1, ends_with_nx(argv[0]), false, true,
                            (long long)mod_cfg.cf_initial_size, 0, -1);
}

/* CF.INSERT / CF.INSERTNX key [CAPACITY n] [NOCREATE] [EXPANSION e] [WINDOW ms] ITEMS item... (EXPANSION, as
 * CAPACITY, for the filter it creates) */
int mod_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    long long capacity = (long long)mod_cfg.cf_initial_size, window = 0, expansion = -1;
    bool create = true;
    int i = 2;
    for (; i < argc && !mod_arg_is(argv[i], "ITEMS"); i++) {
        if (mod_arg_is(argv[i], "CAPACITY")) {
            if (++i == argc)
                return RedisModule_WrongArity(ctx);
            if (RedisModule_StringToLongLong(argv[i], &capacity) != REDISMODULE_OK)
                return RedisModule_ReplyWithError(ctx, "Bad capacity");
            if (2 * (long long)mod_cfg.cf_bucket_size > capacity || (uint64_t)capacity > mod_cfg.max_capacity)
                return mod_reply_errorf(ctx, "Capacity must be in the range [cf-bucket-size * 2, %llu]",
                                          (unsigned long long)mod_cfg.max_capacity);
        } else if (mod_arg_is(argv[i], "NOCREATE")) {
            create = false;
        } else if (mod_arg_is(argv[i], "EXPANSION")) {
            if (++i == argc)
                return RedisModule_WrongArity(ctx);
            if (!mod_option_range(ctx, argv[i], "EXPANSION", 0, 32768, &expansion))
                return REDISMODULE_OK;
        } else if (mod_arg_is(argv[i], "WINDOW")) {
            if (++i == argc)
                return RedisModule_WrongArity(ctx);
            if (!mod_window_option(ctx, argv[i], false, &window))
                return REDISMODULE_OK;
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (i + 1 >= argc)
        return RedisModule_WrongArity(ctx);
    return cf_insert_common(ctx, argv, argc, argv + i + 1, argc - i - 1, ends_with_nx(argv[0]), true, create,
                            capacity, window, expansion);
}

static uint64_t cf_hash_any(const void *f, const void *key, size_t len) { return nidus_cuckoo_hash(f, key, len); }
static void cf_many_any(const void *f, const uint64_t *h, size_t n, bool *out) { nidus_cuckoo_contains_many_hash(f, h, n, out); }

int mod_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_exists_command(ctx, argv, argc, false, mod_cf_type, cf_hash_any, cf_many_any);
}

int mod_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_exists_command(ctx, argv, argc, true, mod_cf_type, cf_hash_any, cf_many_any);
}

/* CF.COUNT key item: 0 for a missing key. */
int mod_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open(ctx, argv[1], REDISMODULE_READ, mod_cf_type, &key, &value) == KEY_WRONGTYPE) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    }
    size_t len;
    const char *s = RedisModule_StringPtrLen(argv[2], &len);
    RedisModule_ReplyWithLongLong(ctx, value ? (long long)nidus_cuckoo_count(value, s, len) : 0);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* CF.DEL key item: "Not found" for a missing key. */
int mod_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    int rc = REDISMODULE_OK;
    if (mod_open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, mod_cf_type, "Not found", &key,
                            &value)) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[2], &len);
        nidus_status st = nidus_cuckoo_remove(value, s, len);
        if (st == NIDUS_OK)
            RedisModule_ReplicateVerbatim(ctx);
        mod_cf_compact_after_write(ctx, argv[1], value);
        rc = st == NIDUS_ERR_READ_ONLY ? RedisModule_ReplyWithError(ctx, mod_cf_add_error(st))
                                       : mod_reply_bool(ctx, st == NIDUS_OK);
    }
    RedisModule_CloseKey(key);
    return rc;
}

/* CF.INFO key: RedisBloom's eight fields in its order, then ours: the capacity the tables are sized for, bits
 * per item at that capacity (not per item present), the load (occupied slots / slots), and whether a
 * compaction is running. */
int mod_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (!mod_open_existing(ctx, argv[1], REDISMODULE_READ, mod_cf_type, "ERR not found", &key, &value)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(value, &s);
    mod_reply_map(ctx, 14);
    RedisModule_ReplyWithSimpleString(ctx, "Size");
    RedisModule_ReplyWithLongLong(ctx, (long long)s.memory_bytes);
    RedisModule_ReplyWithSimpleString(ctx, "Number of buckets");
    RedisModule_ReplyWithLongLong(ctx, (long long)s.buckets);
    RedisModule_ReplyWithSimpleString(ctx, "Number of filters");
    RedisModule_ReplyWithLongLong(ctx, s.tables);
    RedisModule_ReplyWithSimpleString(ctx, "Number of items inserted");
    RedisModule_ReplyWithLongLong(ctx, (long long)s.items);
    RedisModule_ReplyWithSimpleString(ctx, "Number of items deleted");
    RedisModule_ReplyWithLongLong(ctx, (long long)s.items_deleted);
    RedisModule_ReplyWithSimpleString(ctx, "Bucket size");
    RedisModule_ReplyWithLongLong(ctx, s.bucket_size);
    RedisModule_ReplyWithSimpleString(ctx, "Expansion rate");
    RedisModule_ReplyWithLongLong(ctx, s.expansion);
    RedisModule_ReplyWithSimpleString(ctx, "Max iterations");
    RedisModule_ReplyWithLongLong(ctx, s.max_kicks);
    RedisModule_ReplyWithSimpleString(ctx, "Fingerprint bits");
    RedisModule_ReplyWithLongLong(ctx, s.fingerprint_bits);
    RedisModule_ReplyWithSimpleString(ctx, "Error rate bound");
    RedisModule_ReplyWithDouble(ctx, s.error_bound);
    RedisModule_ReplyWithSimpleString(ctx, "Capacity");
    RedisModule_ReplyWithLongLong(ctx, (long long)s.capacity);
    RedisModule_ReplyWithSimpleString(ctx, "Bits per item");
    RedisModule_ReplyWithDouble(ctx, s.bits_per_item);
    RedisModule_ReplyWithSimpleString(ctx, "Load");
    RedisModule_ReplyWithDouble(ctx, s.load);
    RedisModule_ReplyWithSimpleString(ctx, "Compacting"); /* 1 while a compaction runs in steps (compaction.c) */
    RedisModule_ReplyWithLongLong(ctx, nidus_cuckoo_compacting(value, NULL));
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* CF.DEBUG key: RedisBloom's one line (buckets: of the first sub-filter). */
int mod_cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open_existing(ctx, argv[1], REDISMODULE_READ, mod_cf_type, "ERR not found", &key, &value)) {
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(value, &s);
        char line[256];
        int n = snprintf(line, sizeof line,
                         "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%u max_iterations:%u expansion:%u",
                         s.bucket_size, (unsigned long long)s.buckets, (unsigned long long)s.items,
                         (unsigned long long)s.items_deleted, s.tables, s.max_kicks, s.expansion);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

int mod_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long iter;
    if (argc == 3 && RedisModule_StringToLongLong(argv[2], &iter) == REDISMODULE_OK && iter < 0)
        return RedisModule_ReplyWithError(ctx, "Invalid position");
    return mod_scandump_command(ctx, argv, argc, &mod_cf_ops);
}

int mod_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_load_chunk_command(ctx, argv, argc, &mod_cf_ops);
}
