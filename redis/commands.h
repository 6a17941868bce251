/* SPDX-License-Identifier: BSD-3-Clause */
/* The command handlers, and the chunk transfer (SCANDUMP / LOADCHUNK) both filter types share. */
#ifndef NIDUS_REDIS_COMMANDS_H
#define NIDUS_REDIS_COMMANDS_H

#include <stdbool.h>

#include <nidus/nidus.h>

#include "module_api.h"

int mod_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_compactstep(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int mod_cf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int mod_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int mod_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* BF.INFO's reply from its five values (capacity, size, filters, items, expansion): all as a map, or the one
 * `field` names (NULL: all); the expansion is nil for a non-scaling filter. */
int mod_bf_info_reply(RedisModuleCtx *ctx, RedisModuleString *field, const long long values[5], bool scaling);

/* One add's reply in CF.ADD / ADDNX / INSERT / INSERTNX (`nx`, `multi` say which), RedisBloom's in either
 * protocol: 1/0 (booleans in RESP3), -1 or false for no room in the INSERTs, else the error. */
void mod_cf_reply_add(RedisModuleCtx *ctx, nidus_status st, bool added, bool nx, bool multi);

/* The end of every write to a cuckoo filter `filter` (NULL: none) at key `name` (compaction.c): on a master,
 * one bounded step of its running compaction, if any, replicated as CF.COMPACTSTEP. */
void mod_cf_compact_after_write(RedisModuleCtx *ctx, RedisModuleString *name, void *filter);

/* A cuckoo filter `filter` the RDB load (or a full sync) just made: when it owes a compaction (removes past a
 * tenth of its items, several tables: it was saved mid-compaction), its key is kept for the timer, which a
 * master arms when the load ends (compaction.c). */
void mod_cf_compact_loaded(RedisModuleIO *io, void *filter);

/* Subscribes to the end of loads, where the timer takes the keys loads left owing a compaction. */
void mod_cf_compaction_init(RedisModuleCtx *ctx);

/* The error text of a failed cuckoo add, as RedisBloom words it where it has one. */
const char *mod_cf_add_error(nidus_status st);

/* The error text of a failed Bloom add. */
const char *mod_bf_add_error(nidus_status st);

/* Adds one Bloom item to `filter` (a nidus_bloom or a RedisBloom-format key), setting *added. */
typedef nidus_status (*mod_bf_add_fn)(void *filter, const char *s, size_t len, bool *added);

/* The items of BF.ADD / MADD / INSERT added one by one through `add`, each answered 1/0 (booleans in RESP3) in
 * an array when `multi`; the first failure is answered with its error and ends the reply. Replicates the
 * command verbatim when an item was added or `changed` is already true (a key the command created). */
void mod_bf_add_and_reply(RedisModuleCtx *ctx, RedisModuleString **items, int n, bool multi, bool changed,
                            mod_bf_add_fn add, void *filter);

/* BF.DEBUG's line for each layer of `bf` ("bytes:... ratio:..."). */
void mod_bf_reply_debug_layers(RedisModuleCtx *ctx, const nidus_bloom *bf);
int mod_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* What the shared code (SCANDUMP, LOADCHUNK, MERGE, persistence) needs of a filter type: its kind, through which
 * every call on a value goes (mod_filter), and the type's own replies. */
typedef struct mod_filter_ops {
    RedisModuleType **type;
    nidus_kind kind;         /* of the values: NIDUS_KIND_CUCKOO (a nidus_cuckoo), NIDUS_KIND_BLOOM (a nidus_bloom) or
                              * NIDUS_KIND_WINDOW (a nidus_window, windowed.h) */
    bool dump_empty;         /* SCANDUMP of an empty filter gives its chunks (BF), or [0, nil] (CF) */
    bool bloom_replies;      /* RedisBloom's Bloom replies (BF): SCANDUMP opens the key before it reads the
                              * iterator and ends with [0, ""]; LOADCHUNK takes iterator 0 as a data chunk's and
                              * refuses a header for an existing key as data */
    const char *loadchunk;   /* the command AOF rewrite emits */
    const char *refused;     /* LOADCHUNK's reply when a data chunk is refused */
    const char *bad_iter;    /* LOADCHUNK's reply when the iterator is not a nonzero integer */
    const char *bad_cursor;  /* SCANDUMP's reply when the iterator is not an integer */
    const char *bad_header;   /* LOADCHUNK's reply when a header chunk is refused */
    const char *short_header; /* ... when it is too short to be one */
    const char *still_loading; /* the reply to a write or SCANDUMP while a LOADCHUNK copy is unfinished */
} mod_filter_ops;

extern const mod_filter_ops mod_cf_ops, mod_bf_ops;

/* A nidus_filter around a value of type `t` (NULL: none yet, for a header chunk), made in `ref` (no allocation):
 * every nidus_filter call takes it, and writes through it write the value. */
nidus_filter *mod_filter(nidus_filter_ref *ref, const mod_filter_ops *t, const void *value);

/* The value's memory_bytes and items, as nidus_filter_get_stats gives them. */
uint64_t mod_filter_memory(const mod_filter_ops *t, const void *value);
uint64_t mod_filter_items(const mod_filter_ops *t, const void *value);

/* nidus_filter_loading, nidus_filter_free and nidus_filter_dump_chunk of a value. */
bool mod_filter_loading(const mod_filter_ops *t, const void *value);
void mod_filter_free(const mod_filter_ops *t, void *value);
nidus_status mod_filter_dump_chunk(const mod_filter_ops *t, const void *value, uint64_t cursor, void *buf, size_t cap,
                                   size_t *len, uint64_t *next);

/* Checksum chunks SCANDUMP served by a running checksum and by hashing the filter whole, since the module loaded. */
void mod_dump_counts(uint64_t *by_sum, uint64_t *whole);

/* For a SCANDUMP of key value `value` whose nidus filter `filter` (of type `ops`; NULL: none) is dumped next: the
 * running checksum (dump_sums.c) kept for `value` when `filter` is 4 MiB or more, else NULL; `counts` notes its
 * counts, which mod_scandump_tally adds to mod_dump_counts' after the chunk. */
nidus_dump_sum *mod_scandump_sum(const mod_filter_ops *ops, const void *filter, const void *value, uint64_t counts[2]);
void mod_scandump_tally(const nidus_dump_sum *sum, const uint64_t counts[2]);

/* nidus_filter_load_chunk (`*value` NULL: a header chunk makes one, in the module's allocator) and
 * nidus_filter_relocate of a value; `*value` is set to the typed handle after, which either may replace. */
nidus_status mod_filter_load_chunk(const mod_filter_ops *t, void **value, const void *chunk, size_t len,
                                   uint64_t max_bytes);
bool mod_filter_relocate(const mod_filter_ops *t, void **value, const nidus_mover *mover, uint64_t *cursor);

/* SCANDUMP key iter and LOADCHUNK key iter data, for either type. */
int mod_scandump_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const mod_filter_ops *ops);
int mod_load_chunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const mod_filter_ops *ops);

#endif
