/* SPDX-License-Identifier: BSD-3-Clause */
/* Cuckoo compaction in bounded steps (nidus_cuckoo_compact_step), as Redis rehashes its dicts.
 *
 * A remove that takes a filter's removes past 10 % of its items starts a compaction, and CF.COMPACT starts one
 * (or finds it running) and returns. From then on, on a master, every write to the filter (CF.ADD, ADDNX,
 * INSERT, INSERTNX, DEL, COMPACT) ends with one step of STEP_UNITS units of work, and a timer takes the steps
 * of the filters no write touches, about TICK_BUDGET_NS every cf-compact-interval milliseconds (0: no timer).
 *
 * Each step is replicated as what it did: CF.COMPACTSTEP key table bucket budget, the cursor it started from
 * and its budget. A step is a function of the filter's bytes, the cursor and the budget, so a replica, an AOF
 * replay and an RDB reload followed by the rest of the stream all end with the same bytes, whatever cursor
 * they held (an RDB, a full sync or an AOF rewrite carries none: the encoding taken mid-way is an ordinary
 * filter). Replicas and AOF loading never step by themselves: their writes only start a compaction where the
 * master's did, and the master's CF.COMPACTSTEP commands move it.
 *
 * A server that stops mid-compaction loses only the cursor: the filter, with every item, is as the last step
 * left it, and its count of removes (saved with it) still passes a tenth of its items. A compaction is owed
 * then, and a master carries it on by itself: a filter loaded from the RDB owing one, or left running by the
 * CF.COMPACTSTEP commands of the AOF, is handed to the timer when the load ends, and its next write steps it
 * too. A step where none runs begins one at the newest table (bucket 0: the part done before is read again,
 * with nothing left to move), and is replicated as any step, from the cursor it started at, so a replica that
 * kept the old cursor takes the new one. The RDB keeps no cursor: an older loader reads it, and starting over
 * costs one read of the buckets already visited. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common.h"
#include "merge_jobs.h"
#include "pins.h"
#include "windowed.h"

/* Units of work (nidus_cuckoo_compact_step) of a write's step: 30 to 150 microseconds on a large filter (bucket
 * size 2 to 8; a unit is about one cache miss), whatever its size. The timer's steps are larger (fewer
 * commands to replicate), still well under a millisecond each. */
#define STEP_UNITS 1024u
#define TIMER_STEP_UNITS 4096u
#define TICK_BUDGET_NS 1000000ll /* the timer's steps, all keys together, stop past 1 ms */
#define TRACKED_MAX 1024u        /* keys the timer steps; past that, their writes step them */

typedef struct tracked {
    int db;
    size_t len;
    char *name;
} tracked;

/* The keys compacting on this master, for the timer: added by the steps that leave a compaction running,
 * dropped by the timer once a key is gone, another type or done. A renamed key leaves its old name here
 * (dropped at the next tick) and its writes register the new one. */
static tracked keys[TRACKED_MAX];
static unsigned nkeys, next_key;
static bool timer_set;

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* Whether this context may take a step of its own: a master running a client's command (or its timer), not a
 * replica, not the master's stream, not a load of the RDB or AOF. */
static bool may_step(RedisModuleCtx *ctx)
{
    int flags = RedisModule_GetContextFlags(ctx);
    return !(flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING | REDISMODULE_CTX_FLAGS_SLAVE));
}

/* Whether a compaction is owed where none runs: removes past a tenth of the items of a filter of several
 * tables, the rule that starts one at a remove (a filter loaded without its cursor). */
static bool owed(const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats s;
    if (nidus_cuckoo_loading(cf) || nidus_cuckoo_compacting(cf, NULL))
        return false;
    nidus_cuckoo_get_stats(cf, &s);
    return s.tables > 1 && (double)s.items_deleted > 0.10 * (double)s.items;
}

/* One step of `budget` units on a running compaction (begun first when one is owed), replicated as
 * CF.COMPACTSTEP from the cursor it started at. False when none runs (nothing done). */
static bool step(RedisModuleCtx *ctx, RedisModuleString *name, nidus_cuckoo *cf, uint64_t budget, bool *done)
{
    nidus_cuckoo_compaction at;
    *done = true;
    if (owed(cf))
        (void)nidus_cuckoo_compact_begin(cf); /* writable: not loading, and keys hold no views */
    if (!nidus_cuckoo_compacting(cf, &at) || nidus_cuckoo_compact_step(cf, budget, done) != NIDUS_OK)
        return false;
    RedisModule_Replicate(ctx, "CF.COMPACTSTEP", "slll", name, (long long)at.table, (long long)at.bucket,
                          (long long)budget);
    return true;
}

static void on_timer(RedisModuleCtx *ctx, void *data);

static void arm_timer(RedisModuleCtx *ctx)
{
    if (!timer_set && (nkeys || mod_window_tracking()) && mod_cfg.cf_compact_interval) {
        RedisModule_CreateTimer(ctx, mod_cfg.cf_compact_interval, on_timer, NULL);
        timer_set = true;
    }
}

void mod_timer_arm(RedisModuleCtx *ctx) { arm_timer(ctx); }

/* Adds key `name` of database `db` to the timer's keys (once). */
static void remember(int db, const RedisModuleString *name)
{
    size_t len;
    const char *s = RedisModule_StringPtrLen(name, &len);
    bool known = false;
    for (unsigned i = 0; i < nkeys && !known; i++)
        known = keys[i].db == db && keys[i].len == len && memcmp(keys[i].name, s, len) == 0;
    if (!known && nkeys < TRACKED_MAX) {
        char *copy = RedisModule_Alloc(len ? len : 1);
        memcpy(copy, s, len);
        keys[nkeys++] = (tracked){db, len, copy};
    }
}

static void track(RedisModuleCtx *ctx, RedisModuleString *name)
{
    remember(RedisModule_GetSelectedDb(ctx), name);
    arm_timer(ctx); /* also when known: cf-compact-interval may have turned the timer on since */
}

static void untrack(unsigned i)
{
    RedisModule_Free(keys[i].name);
    keys[i] = keys[--nkeys];
}

void mod_cf_compact_after_write(RedisModuleCtx *ctx, RedisModuleString *name, void *filter)
{
    bool done;
    if (filter && may_step(ctx) && step(ctx, name, filter, STEP_UNITS, &done) && !done)
        track(ctx, name);
}

/* Every cf-compact-interval milliseconds while keys compact: steps of TIMER_STEP_UNITS, key after key from where the
 * last tick stopped, until TICK_BUDGET_NS have passed (a filter's step count and its budget are in the stream, so
 * the time taken decides only how many). Not on a replica: it forgets its keys (its master steps them). */
static void on_timer(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    timer_set = false;
    if (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_LOADING) { /* its keys are stepped once it ends */
        arm_timer(ctx);
        return;
    }
    mod_window_tick(ctx, may_step(ctx), TICK_BUDGET_NS); /* windowed keys' sweeps (windowed.c) */
    if (!may_step(ctx)) {
        while (nkeys)
            untrack(nkeys - 1);
        arm_timer(ctx); /* a replica keeps its windowed keys, for the day it is promoted */
        return;
    }
    long long start = now_ns();
    int selected = RedisModule_GetSelectedDb(ctx);
    for (unsigned visited = 0; nkeys && visited < 4u * TRACKED_MAX && now_ns() - start < TICK_BUDGET_NS;
         visited++) {
        unsigned i = next_key < nkeys ? next_key : 0;
        tracked *t = &keys[i];
        bool keep = false;
        if (RedisModule_SelectDb(ctx, t->db) == REDISMODULE_OK) {
            RedisModuleString *name = RedisModule_CreateString(ctx, t->name, t->len);
            RedisModuleKey *key = mod_open_key(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
            if (RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_MODULE &&
                RedisModule_ModuleTypeGetType(key) == mod_cf_type) {
                bool done;
                void *cf = RedisModule_ModuleTypeGetValue(key);
                keep = mod_pinned(cf) || /* a merge thread reads it: stepped after the merge */
                       (step(ctx, name, cf, TIMER_STEP_UNITS, &done) && !done);
            }
            RedisModule_CloseKey(key);
            RedisModule_FreeString(ctx, name);
        }
        if (keep)
            next_key = i + 1;
        else
            untrack(i); /* the last key takes its place: next_key stays, and visits it next */
    }
    RedisModule_SelectDb(ctx, selected);
    arm_timer(ctx);
}

/* CF.COMPACT key: starts a compaction (or finds it running), takes one step, and returns; the writes and the
 * timer carry it on. Where this server does not step by itself (a replica, an AOF load) a CF.COMPACT, sent by
 * a master or written by a version that compacted at once, compacts at once, as that one did. */
int mod_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    int rc = REDISMODULE_OK;
    if (!mod_open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, mod_cf_type,
                             "Cuckoo filter was not found", &key, &value)) {
    } else if (nidus_cuckoo_loading(value)) {
        rc = RedisModule_ReplyWithError(ctx, mod_cf_add_error(NIDUS_ERR_READ_ONLY));
    } else if (!may_step(ctx)) {
        nidus_cuckoo_compact(value, NULL);
        RedisModule_ReplicateVerbatim(ctx);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    } else {
        if (!nidus_cuckoo_compacting(value, NULL)) {
            nidus_cuckoo_compact_begin(value);
            if (!nidus_cuckoo_compacting(value, NULL)) /* one table: begin only reset the count of removes */
                RedisModule_Replicate(ctx, "CF.COMPACTSTEP", "slll", argv[1], 0ll, 0ll, 0ll);
        }
        mod_cf_compact_after_write(ctx, argv[1], value);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return rc;
}

/* CF.COMPACTSTEP key table bucket budget: one step of a compaction, as a master took it. Table 0 starts one
 * (on a filter of one table: resets its count of removes); else the cursor is set to (table, bucket) and the
 * step spends `budget` units from there. Replicated verbatim. */
int mod_cf_compactstep(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 5)
        return RedisModule_WrongArity(ctx);
    long long table, bucket, budget;
    if (RedisModule_StringToLongLong(argv[2], &table) != REDISMODULE_OK || table < 0 || table > 255 ||
        RedisModule_StringToLongLong(argv[3], &bucket) != REDISMODULE_OK || bucket < 0 ||
        RedisModule_StringToLongLong(argv[4], &budget) != REDISMODULE_OK || budget < 0)
        return RedisModule_ReplyWithError(ctx, "ERR bad compaction step");
    RedisModuleKey *key;
    void *value;
    int rc = REDISMODULE_OK;
    if (mod_open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, mod_cf_type,
                            "Cuckoo filter was not found", &key, &value)) {
        nidus_cuckoo_compaction at = {(unsigned)table, (uint64_t)bucket};
        nidus_status st = table == 0 ? nidus_cuckoo_compact_begin(value) : nidus_cuckoo_compact_resume(value, &at);
        bool done = true;
        if (st == NIDUS_OK && table != 0)
            st = nidus_cuckoo_compact_step(value, (uint64_t)budget, &done);
        if (st == NIDUS_OK) {
            RedisModule_ReplicateVerbatim(ctx);
            if (table == 0) /* a client's: on a master the compaction it began takes its steps as any other */
                mod_cf_compact_after_write(ctx, argv[1], value);
            else if (!done && !(RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_SLAVE))
                track(ctx, argv[1]); /* a master's own, or its AOF's: the timer carries it on after the load */
            rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
        } else {
            rc = RedisModule_ReplyWithError(ctx, st == NIDUS_ERR_READ_ONLY ? mod_cf_add_error(st)
                                                                           : "ERR bad compaction step");
        }
    }
    RedisModule_CloseKey(key);
    return rc;
}

void mod_cf_compact_loaded(RedisModuleIO *io, void *filter)
{
    if (!RedisModule_GetKeyNameFromIO || !RedisModule_GetDbIdFromIO || !filter)
        return;
    const RedisModuleString *name = RedisModule_GetKeyNameFromIO(io);
    if (name && owed(filter))
        remember(RedisModule_GetDbIdFromIO(io), name);
}

/* The end of a load (RDB, AOF, a full sync): the keys it left owing a compaction get the timer, and the merges
 * an AOF left running are the master's own (merge_jobs.c). The module's one subscription to loading events: the
 * server keeps one callback per module and event. */
static void on_loading(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t subevent, void *data)
{
    (void)eid;
    (void)data;
    if (subevent == REDISMODULE_SUBEVENT_LOADING_ENDED) {
        arm_timer(ctx); /* on a replica the first tick forgets them */
        mod_merge_jobs_loaded(ctx);
    }
}

void mod_cf_compaction_init(RedisModuleCtx *ctx)
{
    RedisModule_SubscribeToServerEvent(ctx, (RedisModuleEvent){REDISMODULE_EVENT_LOADING, 1}, on_loading);
}
