/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the module's files: configuration, the allocator, key access, replies, argument parsing. */
#ifndef NIDUS_REDIS_COMMON_H
#define NIDUS_REDIS_COMMON_H

#include <stdbool.h>

#include <nidus/nidus.h>

#include "module_api.h"
#include "server_kind.h"

/* Defaults and limits, set by load arguments and CONFIG SET (see config.h, which names each setting). */
typedef struct mod_config {
    double bf_error_rate;       /* bf-error-rate: BF.ADD / BF.INSERT on a missing key */
    uint64_t bf_initial_size;   /* bf-initial-size */
    unsigned bf_expansion;      /* bf-expansion-factor: new Bloom filters without EXPANSION (0: no growth) */
    unsigned cf_bucket_size;    /* cf-bucket-size: new cuckoo filters without BUCKETSIZE */
    uint64_t cf_initial_size;   /* cf-initial-size: CF.ADD / CF.INSERT on a missing key */
    unsigned cf_max_iterations; /* cf-max-iterations: new cuckoo filters without MAXITERATIONS */
    unsigned cf_expansion;      /* cf-expansion-factor: new cuckoo filters without EXPANSION (0: no growth) */
    double cf_error_rate;       /* cf-error-rate: CF filters without ERROR or FINGERPRINT */
    unsigned cf_max_expansions; /* cf-max-expansions: sub-filters a cuckoo filter may grow to, at most 64 */
    uint64_t max_capacity;      /* max-capacity: the largest capacity any command accepts */
    uint64_t max_memory;        /* max-filter-memory: bytes one filter may hold, creation, growth and loading */
    unsigned cf_compact_interval; /* cf-compact-interval: ms between the timer's compaction steps, 0: none */
    uint64_t merge_inline_bytes;  /* merge-inline-bytes: larger merges are built on a thread (merge_jobs.c) */
} mod_config;

extern mod_config mod_cfg;

/* What the module adapts to in the server it runs in (server_kind.h), read once at load by mod_read_server. */
extern mod_server_traits mod_server;

/* Reads the server's INFO server fields into mod_server; a server that cannot say gets Redis 7's traits. */
void mod_read_server(RedisModuleCtx *ctx);

/* The limit a load (RDB, RESTORE, LOADCHUNK) checks a filter against: max_filter_memory for what clients
 * send; 0 while the server loads its own RDB or AOF, a replica its master's sync (also while serving reads:
 * repl-diskless-load swapdb), and for LOADCHUNK from the master's stream or a slot migration's (ctx: the
 * command's context, NULL in a type's callbacks): such a filter is held only to the limit recorded in it, the
 * one it was created or copied in under, so lowering max_filter_memory never makes a server refuse its own
 * dataset, and a replica or the target of a migration takes every key the source holds. */
uint64_t mod_load_limit(RedisModuleCtx *ctx);

/* A master's limit travels with what it loaded from a client: a client's LOADCHUNK header (or RedisBloom chunk)
 * under a nonzero limit, and every RESTORE of a filter, are replicated after CF.AT / BF.AT key 0 LIMIT bytes, the
 * limit the master loaded it under (0: none). A replica or an AOF replay loads that key's next LOADCHUNK or
 * RESTORE under the same limit, so the library lowers the filter's own bound on growth exactly as it did on the
 * master, whatever the kind: the copies stay byte-identical. */

/* The limit a load of key `name` in database `db` checks against: on a replica or in a replay, the one announced
 * for it (mod_limit_at); else mod_load_limit(ctx). `take`: the announcement is used up (LOADCHUNK); else it lasts until the key's
 * restore event (a RESTORE loads a value's parts one after another). */
uint64_t mod_key_load_limit(RedisModuleCtx *ctx, int db, const RedisModuleString *name, bool take);

/* mod_key_load_limit for a type's rdb_load: the key and database the IO loads (RESTORE, RDB). */
uint64_t mod_io_load_limit(RedisModuleIO *io);

/* On a master, after a client's load of `name` under `limit`: replicates CF.AT (BF.AT when `bloom`) name 0
 * LIMIT limit, ahead of the load's own replication. */
void mod_limit_announce(RedisModuleCtx *ctx, RedisModuleString *name, bool bloom, uint64_t limit);

/* The keyspace event of a RESTORE of `name`: on a master, announces the limit the value was loaded under (for a
 * key of one of the module's types: `ours`); on a replica or a replay, forgets the announcement it used. */
void mod_limit_on_restore(RedisModuleCtx *ctx, RedisModuleString *name, bool ours, bool bloom);

/* CF.AT / BF.AT key ms LIMIT bytes (from a master's stream or the AOF; argc 5): keeps the announcement for the
 * key's next load, replicates it verbatim, replies OK. */
int mod_limit_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* A write the server replays: from its master's stream or the AOF (a replica's own clients' writes are not). */
bool mod_replayed(RedisModuleCtx *ctx);

/* The settings a RedisBloom-format key's growth part (rb/rb_commands.c) is made under. A master (or any client's
 * write) grows it under its own configuration and replicates that as CF.AT / BF.AT key 0 GROW max_capacity
 * max_memory [max_expansions error_rate] ahead of the write that makes or refuses it; a replica or an AOF replay
 * grows under the announced settings, so every copy makes the same growth part and refuses the same adds. A
 * write with no announcement before it (an AOF written before there were any) grows under this server's. */
typedef struct mod_grow_settings {
    uint64_t max_capacity, max_memory; /* max-capacity, max-filter-memory */
    unsigned max_expansions;           /* cf-max-expansions (cuckoo) */
    double error_rate;                 /* cf-error-rate (cuckoo) */
} mod_grow_settings;

/* The settings a write to key `name` (a Bloom one when `bloom`) grows it under, as above; not replaying, they
 * are replicated unless `*announced`, which becomes true (once a write). */
mod_grow_settings mod_grow_settings_for(RedisModuleCtx *ctx, RedisModuleString *name, bool bloom, bool *announced);

/* After a growth part was made: a replayed write's announcement is used up (a refused growth keeps it for the
 * write's next items). */
void mod_grow_made(RedisModuleCtx *ctx);

/* CF.AT / BF.AT key ms GROW ... (from a master's stream or the AOF; cuckoo argc 8, Bloom 6): keeps the settings
 * for the key's next growth, replicates them verbatim, replies OK. */
int mod_grow_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom);

/* One command's router, as the command table's routers keep them (merge_jobs.c, windowed.c, rb/rb_commands.c):
 * `route` takes the calls of `command`, and passes those it does not serve to *next, which mod_route_find sets
 * (NULL: the router calls the handler it was written for). */
typedef struct mod_route {
    RedisModuleCmdFunc command, route;
    RedisModuleCmdFunc *next;
} mod_route;

/* The router of `fn` among the n `routes`, its *next set to `next`; `next` itself when none routes `fn`. */
RedisModuleCmdFunc mod_route_find(const mod_route *routes, size_t n, RedisModuleCmdFunc fn, RedisModuleCmdFunc next);

/* Replies shared by both filter types. */
#define MOD_MSG_TOO_BIG "ERR filter would be larger than the module's max_filter_memory"
#define MOD_MSG_CAPACITY "ERR capacity is larger than the module's max_capacity"
/* A key whose SCANDUMP/LOADCHUNK copy is unfinished refuses writes (and SCANDUMP) until its remaining chunks
 * arrive; DEL drops it. Reads answer as for an empty filter. */
#define MOD_MSG_CF_LOADING \
    "ERR filter is still loading (" NIDUS_CF_LOADCHUNK "): send the remaining chunks, or DEL the key"
#define MOD_MSG_BF_LOADING \
    "ERR filter is still loading (" NIDUS_BF_LOADCHUNK "): send the remaining chunks, or DEL the key"
/* CF.DEL of an item that a key loaded from RedisBloom holds in both of its parts (rb/rb_commands.c says why). */
#define RB_CF_DEL_AMBIGUOUS                                                                                  \
    "ERR not deleted: the item matches both this key's RedisBloom tables and the tables grown after them, and " \
    "deleting either match could remove another item"
extern RedisModuleType *mod_cf_type, *mod_bf_type;
extern const nidus_allocator mod_allocator; /* RedisModule_Alloc and friends */

/* What a key holds, from the point of view of one filter type. */
typedef enum { KEY_EMPTY, KEY_OK, KEY_WRONGTYPE } key_state;

/* RedisModule_OpenKey, through which the module opens every key: opened for writing, a filter forgets its
 * running SCANDUMP checksum (dump_sums.c) before anything can change it. */
RedisModuleKey *mod_open_key(RedisModuleCtx *ctx, RedisModuleString *name, int mode);

/* Forgets the running SCANDUMP checksum of `value` (any thread: lazy free calls it): after a write, a free or a
 * move of the value. */
void mod_dump_forget(const void *value);

/* The running SCANDUMP checksum held for `value` (made empty the first time; the least recently used one is
 * dropped past dump_sums.c's table size), on the main thread; NULL without memory. */
nidus_dump_sum *mod_dump_sum_of(const void *value);

/* Opens `name` and classifies it; `*value` is the filter when KEY_OK. The key stays open (AutoMemory-free
 * code: the caller closes it). */
key_state mod_open(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                     RedisModuleKey **key, void **value);

/* Opens a key that must hold a filter of `type`: otherwise replies WRONGTYPE or `missing` and returns false
 * (the key is open either way; the caller closes it). */
bool mod_open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                         const char *missing, RedisModuleKey **key, void **value);

/* Creates a filter into an open, empty key with the given options, or replies the error and returns NULL. */
typedef void *(*mod_create_fn)(RedisModuleCtx *ctx, RedisModuleKey *key, const void *options);

/* The end of CF.RESERVE and BF.RESERVE: refuses an existing key ("ERR item exists" for `type` and its
 * `windowed` type) or one of another type, else creates the filter, replicates, replies OK. */
int mod_reserve(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleType *type, RedisModuleType *windowed,
                mod_create_fn create, const void *options);

/* EXISTS key item and MEXISTS key item... for either type: 1 / 0 (booleans in RESP3), 0 for a missing key.
 * The items are hashed first, then looked up in one batched call that prefetches. */
int mod_exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi, RedisModuleType *type,
                         uint64_t (*hash)(const void *f, const void *key, size_t len),
                         void (*many)(const void *f, const uint64_t *hashes, size_t n, bool *out));

/* 1 / 0, or true / false to a RESP3 client (as RedisBloom replies). */
int mod_reply_bool(RedisModuleCtx *ctx, bool b);

/* An array in RESP2, a map of `pairs` pairs in RESP3. */
int mod_reply_map(RedisModuleCtx *ctx, long pairs);

/* Case-insensitive comparison of an argument with a keyword. */
bool mod_arg_is(RedisModuleString *arg, const char *keyword);

/* An integer option of a command, with RedisBloom's errors: "Couldn't parse NAME" when it is not an integer,
 * "NAME: value must be in the range [min, max]" when it is out of range (replied; then false). */
bool mod_option_range(RedisModuleCtx *ctx, RedisModuleString *arg, const char *name, long long min, long long max,
                        long long *out);

/* True when the client speaks RESP3. */
bool mod_resp3(RedisModuleCtx *ctx);

/* Replies an error composed like printf. */
int mod_reply_errorf(RedisModuleCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The argument as a long long in [min, max]; false when it is not one. */
bool mod_arg_range(RedisModuleString *arg, long long min, long long max, long long *out);

#endif
