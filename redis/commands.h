/* The command handlers, and the chunk transfer (SCANDUMP / LOADCHUNK) both filter types share. */
#ifndef NIDUS_REDIS_COMMANDS_H
#define NIDUS_REDIS_COMMANDS_H

#include <stdbool.h>

#include <nidus/nidus.h>

#include "module_api.h"

int nidus_cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int nidus_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int nidus_bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* A filter type's chunk dump (nidus_*_dump_chunk behind a cast). */
typedef nidus_status (*nidus_dump_fn)(const void *f, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                      uint64_t *next);

/* What LOADCHUNK needs of a filter type. */
typedef struct nidus_chunk_ops {
    nidus_status (*load)(void **f, const void *chunk, size_t len, uint64_t max_bytes);
    bool (*loading)(const void *f);
    void (*destroy)(void *f);
    const char *refused;  /* the reply when a data chunk is refused */
    const char *bad_iter; /* the reply when the iterator is not a nonzero integer */
} nidus_chunk_ops;

/* Replies [next, chunk] for SCANDUMP, or [0, nil] past the last chunk (and for iter < 0). */
int nidus_reply_chunk(RedisModuleCtx *ctx, const void *f, long long iter, nidus_dump_fn dump);

/* LOADCHUNK key iter data, for either type. */
int nidus_load_chunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, RedisModuleType *type,
                             const nidus_chunk_ops *ops);

#endif
