/* SPDX-License-Identifier: BSD-3-Clause */
/* Large CF.MERGE / BF.MERGE built on a thread while the server goes on (merge_jobs.c says how). */
#ifndef NIDUS_REDIS_MERGE_JOBS_H
#define NIDUS_REDIS_MERGE_JOBS_H

#include <stdbool.h>

#include "merge.h"
#include "types.h"

/* Starts the merge `p` of argv (CF.MERGE, or BF.MERGE when `bloom`) on a thread: the client waits for its
 * reply (`replayed`: a master's MERGE BEGIN, no client). Takes p->in (set to NULL) and returns true; false,
 * with nothing done, when this client cannot wait (MULTI, a script) or no thread can start: the caller merges
 * within the command. */
bool mod_merge_start(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, merge_plan *p, bool bloom,
                     bool replayed);

/* CF.AT / BF.AT destkey 0 MERGE BEGIN|END numkeys sourcekey..., and CF.AT / BF.AT destkey 0 MERGE ABORT: a
 * master's merge on a thread, as its replicas and its AOF replay it. Replies, replicates verbatim. */
int mod_merge_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom);

/* True when argv is a CF.AT / BF.AT MERGE form. */
bool mod_merge_at_form(RedisModuleString **argv, int argc);

/* Subscribes to the server event that hands a replica's running merges to it when it is promoted. */
void mod_merge_jobs_init(RedisModuleCtx *ctx);

/* The end of a load (compaction.c holds the module's one subscription to loading events: a second one would
 * replace it): on a master, the merges its AOF started and did not end are its own. */
void mod_merge_jobs_loaded(RedisModuleCtx *ctx);

/* The command `fn` (one of the module's) as clients reach it: a write naming a key that a running merge holds
 * waits until the merge ends. `next` is what runs it. */
RedisModuleCmdFunc mod_merge_route(RedisModuleCmdFunc fn, RedisModuleCmdFunc next);

#endif
