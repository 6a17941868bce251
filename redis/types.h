/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's data types. */
#ifndef NIDUS_REDIS_TYPES_H
#define NIDUS_REDIS_TYPES_H

#include "commands.h"
#include "module_api.h"

/* Creates the data types: CF and BF (mod_cf_type, mod_bf_type), and RedisBloom's (rb_cf_type, rb_bf_type). */
int mod_register_types(RedisModuleCtx *ctx);

/* Called for each chunk of a value's stream (the one SCANDUMP gives), with the iterator LOADCHUNK takes it at. */
typedef void (*mod_chunk_visit)(void *arg, uint64_t pos, const uint8_t *chunk, size_t len);

/* A data type's values as its methods reach them: the nidus types' (types.c, the windowed ones included) and
 * RedisBloom's (rb/rb_types.c, rb_cf_class and rb_bf_class). types.c makes every type's server callbacks from one
 * of these, so RDB, AOF, MEMORY USAGE, DEBUG DIGEST, free, free_effort, COPY and defrag are written once for all.
 * Each function is handed `of`. */
typedef struct mod_value_class {
    const char *loadchunk; /* the command AOF rewrite emits for each chunk */
    const void *of;        /* the type's own description: its mod_filter_ops, or its rb_kind */
    void *(*rdb_load)(const void *of, RedisModuleIO *io, int encver); /* NULL: refused */
    void (*rdb_save)(const void *of, RedisModuleIO *io, void *value);
    void (*each_chunk)(const void *of, const void *value, mod_chunk_visit visit, void *arg);
    uint64_t (*memory)(const void *of, const void *value); /* the bytes the value holds */
    void (*free)(const void *of, void *value);
    void *(*copy)(const void *of, const void *value); /* NULL without memory */
    bool (*relocate)(const void *of, void **value, const nidus_mover *mover, uint64_t *cursor); /* as nidus_cuckoo_relocate */
} mod_value_class;

/* The filter's chunks as RDB strings, then an empty string: the nidus types' RDB payload, and the growth
 * part of filters loaded from RedisBloom (rb/rb_types.c). The loader checks every chunk against `max_bytes`
 * (mod_filter_load_chunk's; 0: none) and returns NULL (after logging) for anything it refuses. */
void mod_rdb_save_filter(const mod_filter_ops *t, RedisModuleIO *io, void *value);
void *mod_rdb_load_filter(const mod_filter_ops *t, RedisModuleIO *io, uint64_t max_bytes);

/* What freeing a value of `bytes` costs, in the units of the server's free_effort: one, and one more for each
 * MOD_FREE_EFFORT_BYTES. The server frees a value of more than 64 (LAZYFREE_THRESHOLD) on its background
 * thread for UNLINK, FLUSHALL ASYNC and the lazyfree-lazy-* settings, and defragments a value of more than
 * active-defrag-max-scan-fields (1000 by default) in steps. Never 0 (the server reads 0 as "unbounded"). */
#define MOD_FREE_EFFORT_BYTES 16384u
size_t mod_free_effort(uint64_t bytes);

/* Active defrag of a value: `relocate` (as nidus_cuckoo_relocate) offers its blocks to RedisModule_DefragAlloc.
 * At once when the server gives no cursor (a value of effort up to active-defrag-max-scan-fields); otherwise from
 * the server's cursor until RedisModule_DefragShouldStop, keeping the cursor for the next call. Returns what a
 * type's defrag callback returns: 1 when more work remains, 0 when done (at once on a server without
 * RedisModule_DefragAlloc, which calls no defrag callback anyway). */
int mod_defrag_value(RedisModuleDefragCtx *ctx, void **value,
                     bool (*relocate)(void **v, const nidus_mover *mover, uint64_t *cursor));

/* A copy of a filter of type `t` (its chunks replayed into a new one, as COPY makes it); NULL without memory. */
void *mod_filter_copy(const mod_filter_ops *t, const void *value);

#endif
