/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed keys: CF.RESERVE / BF.RESERVE ... WINDOW ms and the INSERTs' WINDOW make filters whose items expire
 * (nidus_window); windowed.c serves every command on them, carries each write's time in what is replicated and
 * logged (CF.AT / BF.AT), and sweeps them from the module's timer. docs/WINDOWS.md has the rules. */
#ifndef NIDUS_REDIS_WINDOWED_H
#define NIDUS_REDIS_WINDOWED_H

#include <stdbool.h>

#include <nidus/nidus.h>
#include <nidus/window.h>

#include "commands.h"
#include "module_api.h"

/* The types of windowed keys: "nidus--CW" answers the CF.* commands, "nidus--BW" the BF.* commands (a Bloom
 * filter's add: a live copy is renewed, not added twice). */
extern RedisModuleType *mod_cw_type, *mod_bw_type;
extern const mod_filter_ops mod_cw_ops, mod_bw_ops;

/* Windowed values alive (counted as they are made and freed: mod_window_create, filter_ops.c's chunk loads and
 * frees): without any, the routers cost one test. */
extern _Atomic uint64_t mod_window_values;

/* Subscribes to the keyspace events that tell the sweep of windowed keys loaded, restored, renamed, moved or
 * copied (the types are registered by types.c). */
int mod_window_init(RedisModuleCtx *ctx);

/* Parses WINDOW's value into *ms, [1, NIDUS_WINDOW_MAX_TICKS]; otherwise replies the error (in the Bloom
 * commands' words when `bloom`, else the cuckoo commands') and returns false. */
bool mod_window_option(RedisModuleCtx *ctx, RedisModuleString *arg, bool bloom, long long *ms);

/* Creates a windowed filter of `type` into the open, empty key `name`, held to max-capacity and
 * max-filter-memory before its table is allocated (both checked on a master only), and replicates it as
 * CF.AT / BF.AT key ms CREATE with every parameter as given (max_memory included: its growth's bound); or
 * replies the error and returns NULL. */
void *mod_window_create(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleType *type,
                        const nidus_window_params *params);

/* True when the open key holds a windowed value of `type`. */
bool mod_window_holds(RedisModuleKey *key, RedisModuleType *type);

/* How items are added: CF.ADD's copy, CF.ADDNX's copy unless a live one exists, BF.ADD's add or renewal. */
typedef enum { MOD_WINDOW_ADD, MOD_WINDOW_ADDNX, MOD_WINDOW_BLOOM } mod_window_add_mode;

/* The items of CF.ADD / ADDNX / INSERT / INSERTNX / BF.ADD / MADD / INSERT (`argv`, the whole command) added to
 * the windowed filter at the write's time, replied as those commands reply (`nx`: CF.INSERTNX's integers),
 * and replicated with the time. */
void mod_window_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, void *filter, RedisModuleString **items,
                    int n, mod_window_add_mode mode, bool nx, bool multi);

/* The router of a command name: a key holding a windowed value of the command's family goes to the windowed
 * handler, anything else to `next` (mod_rb_route's router); `fn` itself when no windowed handler exists. */
RedisModuleCmdFunc mod_window_route(RedisModuleCmdFunc fn, RedisModuleCmdFunc next);

/* CF.AT / BF.AT key ms command [arg ...], CF.AT / BF.AT key ms SWEEP budget and CF.AT / BF.AT key ms CREATE
 * capacity window error_rate fingerprint_bits bucket_size max_kicks expansion max_memory: a windowed write, sweep
 * step or creation as the master ran it at its time `ms`; CF.AT / BF.AT key 0 LIMIT bytes, for a key of any of
 * the module's types: the limit the master loaded it under, for its next LOADCHUNK or RESTORE (mod_limit_at);
 * refused from clients. */
int mod_cf_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* The timer's work on windowed keys (compaction.c's timer): on a master, bounded sweep steps of the keys whose
 * epoch has turned, each replicated as CF.AT / BF.AT key ms SWEEP budget, for about `budget_ns`. */
void mod_window_tick(RedisModuleCtx *ctx, bool master, long long budget_ns);

/* Makes the windowed key `name` (of the context's db) known to the timer's sweep. */
void mod_window_track(RedisModuleCtx *ctx, RedisModuleString *name);

/* True while windowed keys are known to the timer. */
bool mod_window_tracking(void);

/* Arms the module's timer (compaction.c) when it has work and is not armed. */
void mod_timer_arm(RedisModuleCtx *ctx);

#endif
