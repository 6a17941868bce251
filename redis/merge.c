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
#include "merge.h"
#include "merge_jobs.h"
#include "rb/rb_merge.h"
#include "rb/rb_types.h"
#include "types.h"
#include "windowed.h"

/* What differs between the two commands: the nidus type (its values merge through nidus_filter_merge), the
 * RedisBloom-named one, and the add errors. */
struct merge_kind {
    const mod_filter_ops *ops;
    RedisModuleType **rb_type; /* NULL for windowed filters */
    const rb_kind *rb;
    const char *(*error)(nidus_status st); /* the type's add errors: LIMIT_TABLES and READ_ONLY as adds say them */
    RedisModuleType **other;   /* the family's filters that do not merge with these: windowed or plain */
};

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

const char *merge_error_text(const merge_plan *p, nidus_status st, int failed_at, char *buf, size_t cap)
{
    const merge_kind *m = p->m;
    const merge_input *base = &p->in[0], *in = &p->in[failed_at];
    if (st == NIDUS_ERR_INCOMPATIBLE) {
        char why[200];
        bool known = in->rb ? rb_value_difference(m->rb, base->value, in->value, why, sizeof why)
                            : nidus_difference(m, base->value, in->value, why, sizeof why);
        snprintf(buf, cap, "ERR incompatible sourcekey %d: %s", in->position,
                 known ? why : "sub-filters of other shapes");
        return buf;
    }
    if (st == NIDUS_ERR_FULL && m->ops->kind == NIDUS_KIND_WINDOW)
        return m->error(st);
    if (st == NIDUS_ERR_FULL && m->ops->kind == NIDUS_KIND_CUCKOO) {
        snprintf(buf, cap,
                 "ERR filter is full: a sub-filter of destkey has no room for the items of sourcekey %d in the same "
                 "sub-filter",
                 in->position);
        return buf;
    }
    const char *error = merge_error(m, st);
    if (error)
        return error;
    snprintf(buf, cap, "ERR %s", nidus_strerror(st));
    return buf;
}

/* Replies the error of input `failed_at` not merging into in[0]. */
static int reply_merge_error(RedisModuleCtx *ctx, const merge_plan *p, nidus_status st, int failed_at)
{
    char buf[320];
    return RedisModule_ReplyWithError(ctx, merge_error_text(p, st, failed_at, buf, sizeof buf));
}

/* Checks every input against the first (format and parameters); the first difference's error into err. */
static bool all_compatible(const merge_kind *m, const merge_input *in, int n, char *err, size_t cap)
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
            snprintf(err, cap, "ERR incompatible sourcekey %d: %s", in[i].position, why);
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

void merge_free_result(const merge_plan *p, void *result) { free_value(p->m, p->in[0].rb, result); }

/* Merges in[from..n) into `work`, a filter of in[0]'s kind; *failed_at: the input that failed. */
static nidus_status merge_into(const merge_plan *p, void *work, int from, int *failed_at)
{
    const merge_kind *m = p->m;
    for (int i = from; i < p->n; i++) {
        nidus_filter_ref d, s;
        nidus_status st = p->in[i].rb ? rb_value_merge(m->rb, work, p->in[i].value)
                                      : nidus_filter_merge(mod_filter(&d, m->ops, work),
                                                           mod_filter(&s, m->ops, p->in[i].value));
        if (st) {
            *failed_at = i;
            return st;
        }
    }
    return NIDUS_OK;
}

nidus_status merge_build(const merge_plan *p, void **out, int *failed_at)
{
    *failed_at = 0;
    *out = NULL;
    void *work = copy_input(p->m, &p->in[0]);
    if (!work)
        return NIDUS_ERR_NO_MEMORY;
    merge_input target = {work, p->in[0].rb, 0};
    nidus_status st = merge_into(p, work, 1, failed_at);
    if (!st && input_memory(p->m, &target) > p->limit) {
        *failed_at = 0;
        st = NIDUS_ERR_LIMIT_MEMORY;
    }
    if (st) {
        free_value(p->m, p->in[0].rb, work);
        return st;
    }
    *out = work;
    return NIDUS_OK;
}

void merge_install(RedisModuleCtx *ctx, RedisModuleKey *dest, RedisModuleString *name, const merge_plan *p,
                   void *result)
{
    const merge_kind *m = p->m;
    RedisModule_ModuleTypeSetValue(dest, p->in[0].rb ? *m->rb_type : *m->ops->type, result);
    if (m->ops->kind == NIDUS_KIND_WINDOW)
        mod_window_track(ctx, name); /* the timer's sweep steps reach it */
}

/* Merges in[1..n) into in[0]'s value, in place, or on a copy (merge_build) set into `dest` at the end; replies.
 * In place only when the inputs together (`total` bytes) are within the limit and `copy` is not asked: a merged
 * filter holds at most the inputs' tables (sibling tables are copies of a source's), so only a copy needs
 * checking afterwards. */
static int merge_inputs(RedisModuleCtx *ctx, RedisModuleString **argv, const merge_plan *p, uint64_t total,
                        bool copy)
{
    int failed_at = 0;
    nidus_status st;
    RedisModuleKey *dest = mod_open_key(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    if (!copy && p->dest_exists && p->n == 2 && !p->in[0].rb && total <= p->limit) {
        st = merge_into(p, p->in[0].value, 1, &failed_at);
        if (!st && p->m->ops->kind == NIDUS_KIND_WINDOW)
            mod_window_track(ctx, argv[1]);
    } else {
        void *work;
        st = merge_build(p, &work, &failed_at);
        if (!st)
            merge_install(ctx, dest, argv[1], p, work);
    }
    RedisModule_CloseKey(dest);
    if (st)
        return reply_merge_error(ctx, p, st, failed_at);
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

plan_state merge_plan_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom, merge_plan *p,
                           uint64_t *total, char *err, size_t cap)
{
    const merge_kind *m = bloom ? &bf_kind : &cf_kind, *windowed = bloom ? &bw_kind : &cw_kind;
    long long numkeys;
    p->in = NULL;
    if (RedisModule_StringToLongLong(argv[2], &numkeys) != REDISMODULE_OK || numkeys < 1) {
        snprintf(err, cap, "ERR numkeys must be a positive integer");
        return PLAN_ERROR;
    }
    if (numkeys != argc - 3) {
        snprintf(err, cap, "ERR numkeys (%lld) does not match the number of sourcekeys (%d)", numkeys, argc - 3);
        return PLAN_ERROR;
    }
    if (mod_window_values && first_holds(ctx, argv, *windowed->ops->type))
        m = windowed;
    RedisModuleKey *dest = mod_open_key(ctx, argv[1], REDISMODULE_READ);
    merge_input *in = RedisModule_Calloc((size_t)argc, sizeof *in);
    int n = 0;
    input_state ds = classify(dest, m, &in[0]);
    RedisModule_CloseKey(dest);
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
    plan_state state = PLAN_MERGE;
    if (error) {
        snprintf(err, cap, "%s", error);
        state = PLAN_ERROR;
    } else if (n == 1 && dest_exists) { /* destkey merged with itself alone: already the union */
        state = PLAN_DONE;
    } else if (!all_compatible(m, in, n, err, cap)) {
        state = PLAN_ERROR;
    } else {
        /* the union holds at least every table or layer of the input that has the most (cuckoo sibling tables
         * may add the others'): held to the limit before anything is built (a result that may pass it is
         * built on a copy and checked again before it replaces destkey) */
        uint64_t limit = merge_limit(ctx), largest = 0;
        *total = 0;
        for (int i = 0; i < n; i++) {
            uint64_t bytes = input_memory(m, &in[i]);
            largest = bytes > largest ? bytes : largest;
            *total = bytes > UINT64_MAX - *total ? UINT64_MAX : *total + bytes;
        }
        *p = (merge_plan){m, in, n, dest_exists, limit};
        if (largest <= limit)
            return PLAN_MERGE;
        snprintf(err, cap, "%s", MOD_MSG_TOO_BIG);
        state = PLAN_ERROR;
    }
    RedisModule_Free(in);
    p->in = NULL;
    return state;
}

/* How a merge runs: a client's (on a thread when large and the client can wait, else here), or one a master
 * replicated (merge_jobs.c): started on a thread as the master started it, or built here on a copy. */
typedef enum { RUN_CLIENT, RUN_START, RUN_COPY } merge_run;

static int merge_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom, merge_run run)
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
    merge_plan p;
    uint64_t total = 0;
    char err[320];
    switch (merge_plan_keys(ctx, argv, argc, bloom, &p, &total, err, sizeof err)) {
    case PLAN_ERROR: return RedisModule_ReplyWithError(ctx, err);
    case PLAN_DONE: return RedisModule_ReplyWithSimpleString(ctx, "OK");
    case PLAN_MERGE: break;
    }
    int rc;
    if ((run == RUN_START || (run == RUN_CLIENT && total > mod_cfg.merge_inline_bytes)) &&
        mod_merge_start(ctx, argv, argc, &p, bloom, run == RUN_START))
        rc = run == RUN_START ? RedisModule_ReplyWithSimpleString(ctx, "OK") : REDISMODULE_OK; /* p.in taken */
    else if (run == RUN_START) /* no thread: the master's END builds it (merge_jobs.c) */
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    else
        rc = merge_inputs(ctx, argv, &p, total, run == RUN_COPY);
    RedisModule_Free(p.in);
    return rc;
}

/* CF.MERGE destkey numkeys sourcekey [sourcekey ...] */
int mod_cf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return merge_command(ctx, argv, argc, false, RUN_CLIENT);
}

/* BF.MERGE destkey numkeys sourcekey [sourcekey ...] */
int mod_bf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return merge_command(ctx, argv, argc, true, RUN_CLIENT);
}

int merge_replayed(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom, bool start)
{
    return merge_command(ctx, argv, argc, bloom, start ? RUN_START : RUN_COPY);
}
