/* SPDX-License-Identifier: BSD-3-Clause */
/* CF.MERGE and BF.MERGE destkey numkeys sourcekey [sourcekey ...]: the union of filters, into destkey.
 *
 * An existing destkey is one of the sources (as PFMERGE treats it): naming it among the sourcekeys too adds
 * nothing more. A missing destkey is created as a copy of the first source. All or nothing: every key is
 * checked (type, format, parameters, max_filter_memory) before anything changes; one merge into an existing
 * nidus destkey runs in place (the library leaves its destination as it was on failure); more, or a key loaded
 * from RedisBloom, build the union on a copy that replaces destkey only when all succeeded. Replicated verbatim: the merge is deterministic, so a
 * replica and the AOF compute the same bytes from the same keys. */
#include <stdio.h>

#include "commands.h"
#include "common.h"
#include "rb/rb_merge.h"
#include "rb/rb_types.h"
#include "types.h"
#include "windowed.h"

/* What differs between the two commands: the nidus type (its values merge through nidus_filter_merge), the
 * RedisBloom-named one, and the add errors. */
typedef struct merge_kind {
    const mod_filter_ops *ops;
    RedisModuleType **rb_type; /* NULL for windowed filters */
    const rb_kind *rb;
    const char *(*error)(nidus_status st); /* the type's add errors: LIMIT_TABLES and READ_ONLY as adds say them */
    RedisModuleType **other;   /* the family's filters that do not merge with these: windowed or plain */
} merge_kind;

static const merge_kind cf_kind = {&mod_cf_ops, &rb_cf_type, &rb_cf_kind, mod_cf_add_error, &mod_cw_type};
static const merge_kind bf_kind = {&mod_bf_ops, &rb_bf_type, &rb_bf_kind, mod_bf_add_error, &mod_bw_type};
/* windowed filters (windowed.c) of the same window, shape and seed: nidus_window_merge keeps each live copy's age */
static const merge_kind cw_kind = {&mod_cw_ops, NULL, NULL, mod_cf_add_error, &mod_cf_type};
static const merge_kind bw_kind = {&mod_bw_ops, NULL, NULL, mod_bf_add_error, &mod_bf_type};

/* What keeps nidus value `src` from merging into `dst`, in the library's words (as `nidus merge` says it). */
static bool nidus_difference(const merge_kind *m, const void *dst, const void *src, char *buf, size_t cap)
{
    nidus_filter_ref d, s;
    return nidus_filter_merge_difference(mod_filter(&d, m->ops, dst), mod_filter(&s, m->ops, src), buf, cap) > 0;
}

/* One filter taking part: destkey's value (position 0) or a sourcekey's (its position, from 1). */
typedef struct merge_input {
    void *value;
    bool rb; /* a key loaded from RedisBloom (an rb_value) */
    int position;
} merge_input;

typedef enum { INPUT_MISSING, INPUT_OK, INPUT_WRONGTYPE, INPUT_LOADING, INPUT_OTHER } input_state;

#define MSG_WINDOWED_AND_PLAIN "ERR a windowed filter and one without a window do not merge"

/* Classifies an open key for the command's filter type. */
static input_state classify(RedisModuleKey *key, const merge_kind *m, merge_input *in)
{
    int kt = RedisModule_KeyType(key);
    if (kt == REDISMODULE_KEYTYPE_EMPTY)
        return INPUT_MISSING;
    RedisModuleType *type = kt == REDISMODULE_KEYTYPE_MODULE ? RedisModule_ModuleTypeGetType(key) : NULL;
    if (type && type == *m->other)
        return INPUT_OTHER;
    bool rb = type && m->rb_type && type == *m->rb_type;
    if (!type || (type != *m->ops->type && !rb))
        return INPUT_WRONGTYPE;
    in->value = RedisModule_ModuleTypeGetValue(key);
    in->rb = rb;
    const void *nidus_part = in->rb ? ((rb_value *)in->value)->grown : in->value;
    return nidus_part && mod_filter_loading(m->ops, nidus_part) ? INPUT_LOADING : INPUT_OK;
}

static uint64_t input_memory(const merge_kind *m, const merge_input *in)
{
    return in->rb ? rb_value_memory(m->rb, in->value) : mod_filter_memory(m->ops, in->value);
}

/* The limit a merge is held to: max_filter_memory, but none for what the master or the AOF replays (the master
 * checked it; a replica or a restart must come to the same keys whatever its own configuration). */
static uint64_t merge_limit(RedisModuleCtx *ctx)
{
    int flags = RedisModule_GetContextFlags(ctx);
    return flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING) ? UINT64_MAX
                                                                                    : mod_cfg.max_memory;
}

/* The error of a merge that failed for a limit or for memory (NULL: another status, said by nidus_strerror). */
static const char *merge_error(const merge_kind *m, nidus_status st)
{
    switch (st) {
    case NIDUS_ERR_LIMIT_MEMORY:
    case NIDUS_ERR_TOO_LARGE: return MOD_MSG_TOO_BIG;
    case NIDUS_ERR_LIMIT_TABLES:
    case NIDUS_ERR_READ_ONLY: return m->error(st);
    case NIDUS_ERR_NO_MEMORY: return "ERR out of memory";
    default: return NULL;
    }
}

/* Replies the error of `in` not merging into `base` (NIDUS_ERR_INCOMPATIBLE: what differs). */
static int reply_merge_error(RedisModuleCtx *ctx, const merge_kind *m, nidus_status st, const merge_input *base,
                             const merge_input *in)
{
    if (st == NIDUS_ERR_INCOMPATIBLE) {
        char why[200];
        bool known = in->rb ? rb_value_difference(m->rb, base->value, in->value, why, sizeof why)
                            : nidus_difference(m, base->value, in->value, why, sizeof why);
        return mod_reply_errorf(ctx, "ERR incompatible sourcekey %d: %s", in->position,
                                  known ? why : "sub-filters of other shapes");
    }
    if (st == NIDUS_ERR_FULL && m->ops->kind == NIDUS_KIND_WINDOW)
        return RedisModule_ReplyWithError(ctx, m->error(st));
    if (st == NIDUS_ERR_FULL && m->ops->kind == NIDUS_KIND_CUCKOO)
        return mod_reply_errorf(ctx,
                                  "ERR filter is full: a sub-filter of destkey has no room for the items of sourcekey "
                                  "%d in the same sub-filter",
                                  in->position);
    const char *error = merge_error(m, st);
    return error ? RedisModule_ReplyWithError(ctx, error) : mod_reply_errorf(ctx, "ERR %s", nidus_strerror(st));
}

/* Checks every input against the first (format and parameters); replies the first difference. */
static bool all_compatible(RedisModuleCtx *ctx, const merge_kind *m, const merge_input *in, int n)
{
    for (int i = 1; i < n; i++) {
        char why[200];
        bool differs = true;
        if (in[i].rb != in[0].rb)
            snprintf(why, sizeof why, "%s format, not %s", in[i].rb ? "RedisBloom" : "nidus",
                     in[0].rb ? "RedisBloom" : "nidus");
        else if (in[i].rb)
            differs = rb_value_difference(m->rb, in[0].value, in[i].value, why, sizeof why);
        else
            differs = nidus_difference(m, in[0].value, in[i].value, why, sizeof why);
        if (differs) {
            mod_reply_errorf(ctx, "ERR incompatible sourcekey %d: %s", in[i].position, why);
            return false;
        }
    }
    return true;
}

static void *copy_input(const merge_kind *m, const merge_input *in)
{
    if (in->rb)
        return rb_value_copy(m->rb, in->value);
    return mod_filter_copy(m->ops, in->value);
}

static void free_value(const merge_kind *m, bool rb, void *value)
{
    if (rb)
        rb_value_free(m->rb, value);
    else
        mod_filter_free(m->ops, value);
}

/* Merges in[1..n) into in[0]'s value, in place, or into a copy of it set into `dest` at the end; replies. In
 * place only when the inputs together (`total` bytes) are within `limit`: a merged filter holds at most the
 * inputs' tables (sibling tables are copies of a source's), so only a copy needs checking afterwards. */
static int merge_inputs(RedisModuleCtx *ctx, const merge_kind *m, RedisModuleKey *dest, bool dest_exists,
                        merge_input *in, int n, uint64_t limit, uint64_t total)
{
    bool in_place = dest_exists && n == 2 && !in[0].rb && total <= limit;
    void *work = in_place ? in[0].value : copy_input(m, &in[0]);
    if (!work)
        return RedisModule_ReplyWithError(ctx, merge_error(m, NIDUS_ERR_NO_MEMORY));
    merge_input target = {work, in[0].rb, 0};
    for (int i = 1; i < n; i++) {
        nidus_filter_ref d, s;
        nidus_status st = in[i].rb ? rb_value_merge(m->rb, work, in[i].value)
                                   : nidus_filter_merge(mod_filter(&d, m->ops, work), mod_filter(&s, m->ops, in[i].value));
        if (st) {
            if (!in_place)
                free_value(m, in[0].rb, work);
            return reply_merge_error(ctx, m, st, &in[0], &in[i]);
        }
    }
    if (!in_place && input_memory(m, &target) > limit) {
        free_value(m, in[0].rb, work);
        return RedisModule_ReplyWithError(ctx, MOD_MSG_TOO_BIG);
    }
    if (!in_place)
        RedisModule_ModuleTypeSetValue(dest, in[0].rb ? *m->rb_type : *m->ops->type, work);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* True when destkey, or the first sourcekey when destkey does not exist, holds a value of `type`. */
static bool first_holds(RedisModuleCtx *ctx, RedisModuleString **argv, RedisModuleType *type)
{
    RedisModuleKey *key = mod_open_key(ctx, argv[1], REDISMODULE_READ);
    bool empty = RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_EMPTY, yes = mod_window_holds(key, type);
    RedisModule_CloseKey(key);
    if (!empty)
        return yes;
    key = mod_open_key(ctx, argv[3], REDISMODULE_READ);
    yes = mod_window_holds(key, type);
    RedisModule_CloseKey(key);
    return yes;
}

static int merge_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const merge_kind *m,
                         const merge_kind *windowed)
{
    /* "getkeys-api": Redis Cluster (Redis 7.0-7.4, Valkey 8) routes a module command by the keys the command
     * reports, or by its first-last-step range, not by its key specs (which serve COMMAND GETKEYS and ACLs):
     * destkey and every sourcekey */
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        for (int i = 1; i < argc; i++)
            if (i != 2)
                RedisModule_KeyAtPos(ctx, i);
        return REDISMODULE_OK;
    }
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    long long numkeys;
    if (RedisModule_StringToLongLong(argv[2], &numkeys) != REDISMODULE_OK || numkeys < 1)
        return RedisModule_ReplyWithError(ctx, "ERR numkeys must be a positive integer");
    if (numkeys != argc - 3)
        return mod_reply_errorf(ctx, "ERR numkeys (%lld) does not match the number of sourcekeys (%d)", numkeys,
                                  argc - 3);
    if (mod_window_values && first_holds(ctx, argv, *windowed->ops->type))
        m = windowed;
    RedisModuleKey *dest = mod_open_key(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    merge_input *in = RedisModule_Calloc((size_t)argc, sizeof *in);
    int n = 0, rc = REDISMODULE_OK;
    input_state ds = classify(dest, m, &in[0]);
    bool dest_exists = ds != INPUT_MISSING;
    const char *error = ds == INPUT_WRONGTYPE ? REDISMODULE_ERRORMSG_WRONGTYPE
                        : ds == INPUT_LOADING ? m->ops->still_loading
                        : ds == INPUT_OTHER   ? MSG_WINDOWED_AND_PLAIN
                                              : NULL;
    if (dest_exists)
        n = 1;
    for (int i = 3; i < argc && !error; i++) {
        if (dest_exists && RedisModule_StringCompare(argv[i], argv[1]) == 0)
            continue; /* destkey is a source already */
        RedisModuleKey *key = mod_open_key(ctx, argv[i], REDISMODULE_READ);
        in[n].position = i - 2;
        input_state s = classify(key, m, &in[n]);
        RedisModule_CloseKey(key);
        error = s == INPUT_MISSING ? "ERR not found"
                : s == INPUT_WRONGTYPE ? REDISMODULE_ERRORMSG_WRONGTYPE
                : s == INPUT_LOADING   ? m->ops->still_loading
                : s == INPUT_OTHER     ? MSG_WINDOWED_AND_PLAIN
                                       : NULL;
        n++;
    }
    if (error) {
        rc = RedisModule_ReplyWithError(ctx, error);
    } else if (n == 1 && dest_exists) { /* destkey merged with itself alone: already the union */
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    } else if (all_compatible(ctx, m, in, n)) {
        /* the union holds at least every table or layer of the input that has the most (cuckoo sibling tables
         * may add the others'): held to the limit before anything is built (a result that may pass it is
         * built on a copy and checked again before it replaces destkey) */
        uint64_t limit = merge_limit(ctx), largest = 0, total = 0;
        for (int i = 0; i < n; i++) {
            uint64_t bytes = input_memory(m, &in[i]);
            largest = bytes > largest ? bytes : largest;
            total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
        }
        rc = largest > limit ? RedisModule_ReplyWithError(ctx, MOD_MSG_TOO_BIG)
                             : merge_inputs(ctx, m, dest, dest_exists, in, n, limit, total);
        if (m == windowed && mod_window_holds(dest, *m->ops->type))
            mod_window_track(ctx, argv[1]); /* a destkey made here: the timer's sweep steps reach it */
    }
    RedisModule_Free(in);
    RedisModule_CloseKey(dest);
    return rc;
}

/* CF.MERGE destkey numkeys sourcekey [sourcekey ...] */
int mod_cf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return merge_command(ctx, argv, argc, &cf_kind, &cw_kind);
}

/* BF.MERGE destkey numkeys sourcekey [sourcekey ...] */
int mod_bf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return merge_command(ctx, argv, argc, &bf_kind, &bw_kind);
}
