/* SPDX-License-Identifier: BSD-3-Clause */
/* The CF.* and BF.* commands on keys loaded from RedisBloom (types MBbloomCF / MBbloom--, rb_types.h), and the
 * routing that sends those keys here and every other key to the nidus commands.
 *
 * Lookups ask the RedisBloom part (RedisBloom's hashing) and the growth part; counts add both. Adds go where
 * RedisBloom would put them while its part has room (so the part keeps RedisBloom's layout), then to the
 * nidus growth part. Replies and errors are the nidus commands' (which are RedisBloom's). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"
#include "rb_bf.h"
#include "rb_cf.h"
#include "rb_types.h"

/* Opens `name`; true when it holds a value of `type` (then *v is it). The key stays open. */
static bool open_rb(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                    RedisModuleKey **key, rb_value **v)
{
    *key = mod_open_key(ctx, name, mode);
    *v = NULL;
    if (RedisModule_KeyType(*key) != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*key) != type)
        return false;
    *v = RedisModule_ModuleTypeGetValue(*key);
    return true;
}

static bool is_rb_key(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleType *type)
{
    RedisModuleKey *key;
    rb_value *v;
    bool yes = open_rb(ctx, name, REDISMODULE_READ, type, &key, &v);
    RedisModule_CloseKey(key);
    return yes;
}

static bool ends_with_nx(RedisModuleString *cmd)
{
    size_t n;
    const char *s = RedisModule_StringPtrLen(cmd, &n);
    return n >= 2 && (s[n - 1] == 'x' || s[n - 1] == 'X') && (s[n - 2] == 'n' || s[n - 2] == 'N');
}

/* The index of ITEMS in `CMD key [option [value]]... ITEMS item...`, with `valued` the options that take a
 * value and `flags` those that do not; 0 when the arguments are anything else (the nidus command then
 * replies its error). */
static int items_at(RedisModuleString **argv, int argc, const char *const *valued, const char *const *flags)
{
    for (int i = 2; i < argc; i++) {
        if (mod_arg_is(argv[i], "ITEMS"))
            return i + 1 < argc ? i : 0;
        bool known = false;
        for (const char *const *o = valued; *o && !known; o++)
            if (mod_arg_is(argv[i], *o)) {
                known = true;
                i++;
            }
        for (const char *const *o = flags; *o && !known; o++)
            known = mod_arg_is(argv[i], *o);
        if (!known)
            return 0;
    }
    return 0;
}

/* True when every option value before ITEMS (at `items`) is one the nidus command accepts; otherwise the
 * nidus command runs and replies its error before it opens the key, as RedisBloom checks before it looks. A
 * replayed write passed its master's check (CAPACITY's bounds are the configuration's): always true. */
static bool option_values_valid(RedisModuleCtx *ctx, RedisModuleString **argv, int items, bool cuckoo)
{
    if (mod_replayed(ctx))
        return true;
    for (int i = 2; i + 1 < items; i++) {
        long long n;
        double d;
        if (mod_arg_is(argv[i], "CAPACITY")) {
            long long low = cuckoo ? 2 * (long long)mod_cfg.cf_bucket_size : 1;
            if (!mod_arg_range(argv[++i], low, (long long)mod_cfg.max_capacity, &n))
                return false;
        } else if (mod_arg_is(argv[i], "ERROR")) {
            if (RedisModule_StringToDouble(argv[++i], &d) != REDISMODULE_OK || !(d > 0 && d < 1))
                return false;
        } else if (mod_arg_is(argv[i], "EXPANSION")) {
            if (!mod_arg_range(argv[++i], 0, NIDUS_BLOOM_MAX_EXPANSION, &n))
                return false;
        }
    }
    return true;
}

/* ---- growth ---- */

/* One write to a key of these types: what growth needs to find or announce its settings (mod_grow_settings). */
typedef struct rb_write {
    RedisModuleCtx *ctx;
    RedisModuleString *name;
    rb_value *v;
    bool announced; /* this write replicated its settings already */
} rb_write;

/* After a growth attempt: a growth part made uses a replayed announcement up. */
static void grow_done(const rb_write *w)
{
    if (w->v->grown)
        mod_grow_made(w->ctx);
}

/* ---- cuckoo ---- */

static bool cf_contains(const rb_value *v, const char *s, size_t len)
{
    return rb_cf_contains(v->rb, rb_cf_hash(s, len)) || (v->grown && nidus_cuckoo_contains(v->grown, s, len));
}

/* The growth part: a nidus cuckoo filter `expansion` times the newest RedisBloom sub-filter, with its bucket
 * size (rounded up to one of ours) and relocation limit, under the write's settings. */
static nidus_status cf_grow(rb_write *w)
{
    rb_value *v = w->v;
    const rb_cf *cf = v->rb;
    mod_grow_settings g = mod_grow_settings_for(w->ctx, w->name, false, &w->announced);
    uint64_t room = rb_grown_room(&rb_cf_kind, cf, g.max_memory);
    if (room == 0)
        return NIDUS_ERR_LIMIT_MEMORY;
    uint64_t slots = cf->tables[cf->ntables - 1].buckets * cf->bucket_size;
    uint64_t capacity = slots > UINT64_MAX / cf->expansion ? UINT64_MAX : slots * cf->expansion;
    unsigned b = cf->bucket_size;
    nidus_cuckoo_params p = {
        .capacity = capacity < g.max_capacity ? capacity : g.max_capacity,
        .bucket_size = b <= 1 ? 1 : b <= 2 ? 2 : b <= 4 ? 4 : 8,
        .max_kicks = cf->max_iterations,
        .expansion = cf->expansion,
        .max_tables = g.max_expansions,
        .max_memory = room,
        .error_rate = g.error_rate,
        .allocator = &mod_allocator,
    };
    return nidus_cuckoo_new(&p, (nidus_cuckoo **)&v->grown);
}

static nidus_status cf_add(rb_write *w, const char *s, size_t len)
{
    rb_value *v = w->v;
    rb_cf *cf = v->rb;
    /* RedisBloom's placement while its part has room: relocations too, until the growth part exists */
    if (rb_cf_add(cf, rb_cf_hash(s, len), !v->grown))
        return NIDUS_OK;
    if (cf->expansion == 0)
        return NIDUS_ERR_FULL;
    if (!v->grown) {
        nidus_status st = cf_grow(w);
        grow_done(w);
        if (st)
            return st;
    }
    return nidus_cuckoo_add(v->grown, s, len);
}

/* CF.ADD / CF.ADDNX key item, CF.INSERT / CF.INSERTNX key [CAPACITY n] [NOCREATE] ITEMS item... */
static int rb_cf_insert_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi,
                                RedisModuleCmdFunc nidus_fn)
{
    static const char *const valued[] = {"CAPACITY", NULL}, *const flags[] = {"NOCREATE", NULL};
    int first = multi ? items_at(argv, argc, valued, flags) + 1 : 2;
    if (multi ? first == 1 || !option_values_valid(ctx, argv, first - 1, true) : argc != 3)
        return nidus_fn(ctx, argv, argc);
    bool nx = ends_with_nx(argv[0]);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, rb_cf_type, &key, &v);
    if (multi)
        RedisModule_ReplyWithArray(ctx, argc - first);
    rb_write w = {ctx, argv[1], v, false};
    bool changed = false;
    for (int i = first; i < argc; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[i], &len);
        bool added = !(nx && cf_contains(v, s, len)), had_growth = v->grown != NULL;
        nidus_status st = added ? cf_add(&w, s, len) : NIDUS_OK;
        changed |= (st == NIDUS_OK && added) || (!had_growth && v->grown); /* a growth part made is a change */
        mod_cf_reply_add(ctx, st, added, nx, multi);
    }
    if (changed)
        RedisModule_ReplicateVerbatim(ctx);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int rb_cf_add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_cf_insert_command(ctx, argv, argc, false, mod_cf_add);
}

static int rb_cf_insert_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_cf_insert_command(ctx, argv, argc, true, mod_cf_insert);
}

/* CF.EXISTS key item, CF.MEXISTS key item... */
static int rb_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi, bool cuckoo)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, cuckoo ? rb_cf_type : rb_bf_type, &key, &v);
    if (multi)
        RedisModule_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[i], &len);
        bool found = cuckoo ? cf_contains(v, s, len)
                            : rb_bf_contains(v->rb, rb_bf_hash_of(v->rb, s, len)) ||
                                  (v->grown && nidus_bloom_contains(v->grown, s, len));
        mod_reply_bool(ctx, found);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int rb_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_exists_command(ctx, argv, argc, false, true);
}
static int rb_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_exists_command(ctx, argv, argc, true, true);
}
static int rb_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_exists_command(ctx, argv, argc, false, false);
}
static int rb_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_exists_command(ctx, argv, argc, true, false);
}

static int rb_cf_count_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_cf_type, &key, &v);
    size_t len;
    const char *s = RedisModule_StringPtrLen(argv[2], &len);
    uint64_t n = rb_cf_count(v->rb, rb_cf_hash(s, len)) + (v->grown ? nidus_cuckoo_count(v->grown, s, len) : 0);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, (long long)n);
}

/* CF.DEL. The two parts hash an item differently, so a match in one part says nothing of the other: an item
 * that matches in both may be held by either, and the other match is another item's fingerprint. Deleting
 * that one would make the other item read as absent (a false negative, one delete in ~50 on grown keys). So
 * an item found in one part is deleted there (each part's own rule keeps that exact), and an item found in
 * both is refused with an error, nothing changed: the only answer that loses no item. */
static int rb_cf_del_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, rb_cf_type, &key, &v);
    size_t len;
    const char *s = RedisModule_StringPtrLen(argv[2], &len);
    uint64_t rb_hash = rb_cf_hash(s, len);
    bool in_grown = v->grown && nidus_cuckoo_contains(v->grown, s, len);
    if (in_grown && rb_cf_contains(v->rb, rb_hash)) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, RB_CF_DEL_AMBIGUOUS);
    }
    bool removed = in_grown ? nidus_cuckoo_remove(v->grown, s, len) == NIDUS_OK : rb_cf_remove(v->rb, rb_hash);
    if (in_grown && nidus_cuckoo_compacting(v->grown, NULL)) /* the growth part compacts at once, as before */
        nidus_cuckoo_compact(v->grown, NULL);
    if (removed)
        RedisModule_ReplicateVerbatim(ctx);
    RedisModule_CloseKey(key);
    return mod_reply_bool(ctx, removed);
}

/* CF.COMPACT: RedisBloom's compaction of its part, ours of the growth part. */
static int rb_cf_compact_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, rb_cf_type, &key, &v);
    rb_cf_compact(v->rb, true);
    if (v->grown && !nidus_cuckoo_loading(v->grown))
        nidus_cuckoo_compact(v->grown, NULL);
    RedisModule_ReplicateVerbatim(ctx);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static void reply_field(RedisModuleCtx *ctx, const char *name, long long value)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithLongLong(ctx, value);
}

/* CF.INFO: RedisBloom's eight fields, the growth part's tables and counts included. */
static int rb_cf_info_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_cf_type, &key, &v);
    const rb_cf *cf = v->rb;
    nidus_cuckoo_stats s = {0};
    if (v->grown)
        nidus_cuckoo_get_stats(v->grown, &s);
    mod_reply_map(ctx, 8);
    reply_field(ctx, "Size", (long long)rb_value_memory(&rb_cf_kind, v));
    reply_field(ctx, "Number of buckets", (long long)cf->buckets);
    reply_field(ctx, "Number of filters", (long long)cf->ntables + s.tables);
    reply_field(ctx, "Number of items inserted", (long long)(cf->items + s.items));
    reply_field(ctx, "Number of items deleted", (long long)(cf->deletes + s.items_deleted));
    reply_field(ctx, "Bucket size", cf->bucket_size);
    reply_field(ctx, "Expansion rate", cf->expansion);
    reply_field(ctx, "Max iterations", cf->max_iterations);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ---- Bloom ---- */

/* The growth part: nidus layers continuing RedisBloom's chain, the first `growth` times the newest layer's
 * capacity at half its error (nidus halves the error per layer from the rate it is given), under the write's
 * settings. */
static nidus_status bf_grow(rb_write *w)
{
    rb_value *v = w->v;
    const rb_bf *bf = v->rb;
    const rb_bf_layer *last = &bf->layers[bf->nlayers - 1];
    mod_grow_settings g = mod_grow_settings_for(w->ctx, w->name, true, &w->announced);
    uint64_t room = rb_grown_room(&rb_bf_kind, bf, g.max_memory);
    if (room == 0)
        return NIDUS_ERR_LIMIT_MEMORY;
    unsigned growth = bf->growth < 1 ? 1 : bf->growth > NIDUS_BLOOM_MAX_EXPANSION ? NIDUS_BLOOM_MAX_EXPANSION : bf->growth;
    uint64_t capacity = last->entries > UINT64_MAX / growth ? UINT64_MAX : last->entries * growth;
    nidus_bloom_params p = {
        .capacity = capacity < g.max_capacity ? capacity : g.max_capacity,
        .error_rate = last->error,
        .expansion = growth,
        .max_memory = room,
        .allocator = &mod_allocator,
    };
    return nidus_bloom_new(&p, (nidus_bloom **)&v->grown);
}

/* Adds one item as RedisBloom does: nothing when some layer holds it, else into the newest layer, growing
 * when that is at capacity. `write` is the rb_write. */
static nidus_status bf_add(void *write, const char *s, size_t len, bool *added)
{
    rb_write *w = write;
    rb_value *v = w->v;
    rb_bf *bf = v->rb;
    rb_bf_hash h = rb_bf_hash_of(bf, s, len);
    *added = false;
    if (rb_bf_contains(bf, h) || (v->grown && nidus_bloom_contains(v->grown, s, len)))
        return NIDUS_OK;
    const rb_bf_layer *last = &bf->layers[bf->nlayers - 1];
    if (!v->grown && last->items < last->entries) {
        *added = rb_bf_add(bf, h);
        return NIDUS_OK;
    }
    if (bf->options & RB_BF_NO_SCALING)
        return NIDUS_ERR_FULL;
    if (!v->grown) {
        nidus_status st = bf_grow(w);
        grow_done(w);
        if (st)
            return st;
    }
    return nidus_bloom_add(v->grown, s, len, added);
}

/* BF.ADD key item, BF.MADD key item..., BF.INSERT key [options] ITEMS item...: a failed add ends the reply. */
static int rb_bf_add_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int first, bool multi)
{
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, rb_bf_type, &key, &v);
    rb_write w = {ctx, argv[1], v, false};
    mod_bf_add_and_reply(ctx, argv + first, argc - first, multi, false, bf_add, &w);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int rb_bf_add_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    return rb_bf_add_items(ctx, argv, argc, 2, false);
}

static int rb_bf_madd_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    return rb_bf_add_items(ctx, argv, argc, 2, true);
}

static int rb_bf_insert_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    static const char *const valued[] = {"CAPACITY", "ERROR", "EXPANSION", NULL},
                             *const flags[] = {"NOCREATE", "NONSCALING", NULL};
    int at = items_at(argv, argc, valued, flags);
    return at && option_values_valid(ctx, argv, at, false) ? rb_bf_add_items(ctx, argv, argc, at + 1, true)
                                                      : mod_bf_insert(ctx, argv, argc);
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION], both parts together. */
static int rb_bf_info_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_bf_type, &key, &v);
    const rb_bf *bf = v->rb;
    nidus_bloom_stats s = {0};
    if (v->grown)
        nidus_bloom_get_stats(v->grown, &s);
    long long capacity = (long long)s.capacity;
    for (uint32_t i = 0; i < bf->nlayers; i++)
        capacity += (long long)bf->layers[i].entries;
    long long values[] = {capacity, (long long)rb_value_memory(&rb_bf_kind, v), (long long)bf->nlayers + s.layers,
                          (long long)(bf->items + s.items), bf->growth};
    bool scaling = !(bf->options & RB_BF_NO_SCALING);
    RedisModule_CloseKey(key);
    return mod_bf_info_reply(ctx, argc == 3 ? argv[2] : NULL, values, scaling);
}

static int rb_bf_card_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_bf_type, &key, &v);
    nidus_bloom_stats s = {0};
    if (v->grown)
        nidus_bloom_get_stats(v->grown, &s);
    long long n = (long long)(((rb_bf *)v->rb)->items + s.items);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, n);
}

/* CF.DEBUG: RedisBloom's line, both parts counted. */
static int rb_cf_debug_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_cf_type, &key, &v);
    const rb_cf *cf = v->rb;
    nidus_cuckoo_stats s = {0};
    if (v->grown)
        nidus_cuckoo_get_stats(v->grown, &s);
    char line[256];
    int n = snprintf(line, sizeof line,
                     "bktsize:%u buckets:%llu items:%llu deletes:%llu filters:%u max_iterations:%u expansion:%u",
                     cf->bucket_size, (unsigned long long)cf->buckets, (unsigned long long)(cf->items + s.items),
                     (unsigned long long)(cf->deletes + s.items_deleted), cf->ntables + s.tables, cf->max_iterations,
                     cf->expansion);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
}

/* BF.DEBUG: RedisBloom's lines for its layers (its bit count, 32- or 64-bit hashing), then the growth part's. */
static int rb_bf_debug_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, rb_bf_type, &key, &v);
    const rb_bf *bf = v->rb;
    nidus_bloom_stats s = {0};
    if (v->grown)
        nidus_bloom_get_stats(v->grown, &s);
    RedisModule_ReplyWithArray(ctx, 1 + (long)bf->nlayers + (long)s.layers);
    char line[256];
    int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)(bf->items + s.items));
    RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    for (uint32_t i = 0; i < bf->nlayers; i++) {
        const rb_bf_layer *l = &bf->layers[i];
        n = snprintf(line, sizeof line, "bytes:%llu bits:%llu hashes:%u hashwidth:%u capacity:%llu size:%llu ratio:%g",
                     (unsigned long long)l->bytes, (unsigned long long)(l->bits ? l->bits : UINT64_C(1) << l->n2),
                     l->hashes, bf->options & RB_BF_FORCE64 ? 64u : 32u, (unsigned long long)l->entries,
                     (unsigned long long)l->items, l->error);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    if (v->grown)
        mod_bf_reply_debug_layers(ctx, v->grown);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ---- both ---- */

/* CF.RESERVE / BF.RESERVE on a key that holds a filter. */
static int rb_reserve_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    return argc < 3 ? RedisModule_WrongArity(ctx) : RedisModule_ReplyWithError(ctx, "ERR item exists");
}

/* SCANDUMP key iter: RedisBloom's chunks, then the growth part's. RedisBloom's cuckoo SCANDUMP of a filter
 * without items gives none; its Bloom SCANDUMP ends with an empty string, its cuckoo one with nil. */
static int rb_scandump_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool cuckoo)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iter;
    if (RedisModule_StringToLongLong(argv[2], &iter) != REDISMODULE_OK || (cuckoo && iter < 0))
        return RedisModule_ReplyWithError(ctx, cuckoo ? "Invalid position" : "Second argument must be numeric");
    const rb_kind *k = cuckoo ? &rb_cf_kind : &rb_bf_kind;
    RedisModuleKey *key;
    rb_value *v;
    open_rb(ctx, argv[1], REDISMODULE_READ, cuckoo ? rb_cf_type : rb_bf_type, &key, &v);
    size_t cap = rb_chunk_buffer_size(k, v), len = 0;
    uint8_t *buf = RedisModule_Alloc(cap);
    const uint8_t *data = NULL;
    uint64_t next = 0;
    bool empty = cuckoo && ((rb_cf *)v->rb)->items == 0 && !v->grown;
    uint64_t counts[2];
    nidus_dump_sum *sum = mod_scandump_sum(rb_kind_ops(k), v->grown, v, counts); /* the growth part's, kept for v */
    bool any = !empty && iter >= 0 && rb_value_chunk(k, v, (uint64_t)iter, buf, cap, &data, &len, &next, sum);
    mod_scandump_tally(sum, counts);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, any ? (long long)next : 0);
    if (any)
        RedisModule_ReplyWithStringBuffer(ctx, (const char *)data, len);
    else if (cuckoo)
        RedisModule_ReplyWithNull(ctx);
    else
        RedisModule_ReplyWithStringBuffer(ctx, "", 0);
    RedisModule_Free(buf);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int rb_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_scandump_command(ctx, argv, argc, true);
}
static int rb_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_scandump_command(ctx, argv, argc, false);
}

/* True when a LOADCHUNK at iterator 1 carries RedisBloom's header rather than a nidus one ("NDCK..."). */
static bool rb_header_chunk(RedisModuleString *iter, RedisModuleString *data, bool cuckoo)
{
    long long it;
    size_t len;
    const char *s = RedisModule_StringPtrLen(data, &len);
    if (RedisModule_StringToLongLong(iter, &it) != REDISMODULE_OK || it != 1 || (len >= 4 && !memcmp(s, "NDCK", 4)))
        return false;
    return cuckoo ? len == RB_CF_HEADER_SIZE
                  : len >= RB_BF_HEADER_FIXED && (len - RB_BF_HEADER_FIXED) % RB_BF_HEADER_LINK == 0;
}

/* LOADCHUNK key iter data, for a RedisBloom header on an empty key or any chunk of a key of ours. Replies as
 * RedisBloom's LOADCHUNK does. */
static int rb_loadchunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool cuckoo)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long pos;
    if (RedisModule_StringToLongLong(argv[2], &pos) != REDISMODULE_OK || (cuckoo && pos == 0))
        return RedisModule_ReplyWithError(ctx, cuckoo ? "Invalid position" : "ERR Second argument must be numeric");
    const rb_kind *k = cuckoo ? &rb_cf_kind : &rb_bf_kind;
    RedisModuleType *type = cuckoo ? rb_cf_type : rb_bf_type;
    size_t len;
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key;
    rb_value *v;
    bool exists = open_rb(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, type, &key, &v);
    int rc;
    if (pos <= 0 && exists) { /* no chunk ends before the start */
        rc = RedisModule_ReplyWithError(ctx, cuckoo ? "Couldn't load chunk!" : "ERR received bad data");
    } else if (pos == 1 && exists) {
        rc = RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if (!exists && (pos != 1 || RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY)) {
        /* a RedisBloom header for a key that holds something else: a filter of ours exists there, any other
         * value is the wrong type */
        bool ours = RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_MODULE &&
                    RedisModule_ModuleTypeGetType(key) == (cuckoo ? mod_cf_type : mod_bf_type);
        rc = RedisModule_ReplyWithError(ctx, RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY ? "ERR not found"
                                             : ours ? "ERR item exists"
                                                    : REDISMODULE_ERRORMSG_WRONGTYPE);
    } else {
        /* the limit its master announced, or else this server's (mod_limit_announce) */
        uint64_t limit = mod_key_load_limit(ctx, RedisModule_GetSelectedDb(ctx), argv[1], true);
        bool grown = exists && v->grown;
        nidus_status st = rb_value_load_chunk(k, &v, (uint64_t)pos, data, len, limit);
        if (st == NIDUS_OK) {
            if (!exists)
                RedisModule_ModuleTypeSetValue(key, type, v);
            if (limit && mod_load_limit(ctx) && !grown && v->grown) /* a client's growth part's header */
                mod_limit_announce(ctx, argv[1], !cuckoo, limit);
            RedisModule_ReplicateVerbatim(ctx);
            rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
        } else {
            rc = RedisModule_ReplyWithError(ctx, st == NIDUS_ERR_LIMIT_MEMORY ? MOD_MSG_TOO_BIG
                                                 : !cuckoo                     ? "ERR received bad data"
                                                 : pos == 1                    ? "Couldn't create filter!"
                                                                               : "Couldn't load chunk!");
        }
    }
    RedisModule_CloseKey(key);
    return rc;
}

static int rb_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_loadchunk_command(ctx, argv, argc, true);
}
static int rb_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return rb_loadchunk_command(ctx, argv, argc, false);
}

/* ---- routing ---- */

/* One router per command: a key of the RedisBloom type goes to `ours`, everything else to `nidus`. LOADCHUNK
 * also takes RedisBloom's header chunk for a key that does not exist yet. Without values of these types alive
 * the routers cost one counter test. */
#define ROUTE(nidus, ours, typevar, cuckoo, loadchunk)                                                         \
    static int route_##nidus(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)                         \
    {                                                                                                          \
        bool rb = argc >= 2 && rb_values_alive > 0 && is_rb_key(ctx, argv[1], typevar);                      \
        if (!rb && loadchunk && argc == 4 && rb_header_chunk(argv[2], argv[3], cuckoo))                       \
            rb = true;                                                                                         \
        return rb ? ours(ctx, argv, argc) : nidus(ctx, argv, argc);                                            \
    }

ROUTE(mod_cf_reserve, rb_reserve_command, rb_cf_type, true, false)
ROUTE(mod_cf_add, rb_cf_add_command, rb_cf_type, true, false)
ROUTE(mod_cf_insert, rb_cf_insert_items, rb_cf_type, true, false)
ROUTE(mod_cf_exists, rb_cf_exists, rb_cf_type, true, false)
ROUTE(mod_cf_mexists, rb_cf_mexists, rb_cf_type, true, false)
ROUTE(mod_cf_count, rb_cf_count_command, rb_cf_type, true, false)
ROUTE(mod_cf_del, rb_cf_del_command, rb_cf_type, true, false)
ROUTE(mod_cf_compact, rb_cf_compact_command, rb_cf_type, true, false)
ROUTE(mod_cf_info, rb_cf_info_command, rb_cf_type, true, false)
ROUTE(mod_cf_debug, rb_cf_debug_command, rb_cf_type, true, false)
ROUTE(mod_cf_scandump, rb_cf_scandump, rb_cf_type, true, false)
ROUTE(mod_cf_loadchunk, rb_cf_loadchunk, rb_cf_type, true, true)
ROUTE(mod_bf_reserve, rb_reserve_command, rb_bf_type, false, false)
ROUTE(mod_bf_add, rb_bf_add_command, rb_bf_type, false, false)
ROUTE(mod_bf_madd, rb_bf_madd_command, rb_bf_type, false, false)
ROUTE(mod_bf_insert, rb_bf_insert_command, rb_bf_type, false, false)
ROUTE(mod_bf_exists, rb_bf_exists, rb_bf_type, false, false)
ROUTE(mod_bf_mexists, rb_bf_mexists, rb_bf_type, false, false)
ROUTE(mod_bf_info, rb_bf_info_command, rb_bf_type, false, false)
ROUTE(mod_bf_card, rb_bf_card_command, rb_bf_type, false, false)
ROUTE(mod_bf_debug, rb_bf_debug_command, rb_bf_type, false, false)
ROUTE(mod_bf_scandump, rb_bf_scandump, rb_bf_type, false, false)
ROUTE(mod_bf_loadchunk, rb_bf_loadchunk, rb_bf_type, false, true)

#define ROUTE_ENTRY(nidus) {nidus, route_##nidus, NULL}

RedisModuleCmdFunc mod_rb_route(RedisModuleCmdFunc fn)
{
    static const mod_route routes[] = {
        ROUTE_ENTRY(mod_cf_reserve), ROUTE_ENTRY(mod_cf_add),     ROUTE_ENTRY(mod_cf_insert),
        ROUTE_ENTRY(mod_cf_exists),  ROUTE_ENTRY(mod_cf_mexists), ROUTE_ENTRY(mod_cf_count),
        ROUTE_ENTRY(mod_cf_del),     ROUTE_ENTRY(mod_cf_compact), ROUTE_ENTRY(mod_cf_info),
        ROUTE_ENTRY(mod_cf_scandump), ROUTE_ENTRY(mod_cf_loadchunk), ROUTE_ENTRY(mod_bf_reserve),
        ROUTE_ENTRY(mod_bf_add),     ROUTE_ENTRY(mod_bf_madd),    ROUTE_ENTRY(mod_bf_insert),
        ROUTE_ENTRY(mod_bf_exists),  ROUTE_ENTRY(mod_bf_mexists), ROUTE_ENTRY(mod_bf_info),
        ROUTE_ENTRY(mod_bf_card),    ROUTE_ENTRY(mod_bf_scandump), ROUTE_ENTRY(mod_bf_loadchunk),
        ROUTE_ENTRY(mod_cf_debug),   ROUTE_ENTRY(mod_bf_debug),
    };
    return mod_route_find(routes, sizeof routes / sizeof routes[0], fn, fn);
}
