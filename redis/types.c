/* SPDX-License-Identifier: BSD-3-Clause */
/* The two data types: persistence (RDB, AOF), DUMP/RESTORE, COPY, MEMORY USAGE, DEBUG DIGEST.
 *
 * RDB: the filter's chunks (the same ones SCANDUMP gives), each one string, then an empty string. Loading
 * feeds them to the chunk loader, which checks every chunk, the whole checksum and the contents: a hostile
 * RDB or RESTORE payload is refused (the server reports bad data), never trusted. AOF: the chunks as
 * LOADCHUNK commands. A key whose LOADCHUNK copy was cut off saves the chunks it has received and loads back
 * in the same state, so every path (RDB, AOF, DUMP/RESTORE, COPY, replication) keeps it and the copy can
 * continue (docs/DESIGN-NOTES.md). */
#include <string.h>

#include "commands.h"
#include "common.h"
#include "rb/rb_types.h"
#include "types.h"

/* Encoding versions of our RDB payload. */
#define MOD_RDB_VERSION 1

/* Calls visit(chunk, len, next) for every chunk of f. */
static void each_chunk(const mod_filter_ops *t, const void *f, void (*visit)(void *arg, const uint8_t *, size_t, uint64_t),
                       void *arg)
{
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, len;
    uint8_t *buf = RedisModule_Alloc(cap);
    uint64_t cursor = 0, next;
    while (mod_filter_dump_chunk(t, f, cursor, buf, cap, &len, &next) == NIDUS_OK && len) {
        visit(arg, buf, len, next);
        cursor = next;
    }
    RedisModule_Free(buf);
}

static void save_chunk(void *io, const uint8_t *chunk, size_t len, uint64_t next)
{
    (void)next;
    RedisModule_SaveStringBuffer(io, (const char *)chunk, len);
}

void mod_rdb_save_filter(const mod_filter_ops *t, RedisModuleIO *io, void *value)
{
    each_chunk(t, value, save_chunk, io);
    RedisModule_SaveStringBuffer(io, "", 0);
}

void *mod_rdb_load_filter(const mod_filter_ops *t, RedisModuleIO *io)
{
    void *f = NULL;
    /* The header chunk fixes how many data chunks follow; the loader refuses any beyond them. The limit is
     * measured as writes measure it, so whatever a write produced loads, and a payload no write could
     * produce is refused before its tables are allocated (see mod_load_limit). */
    for (;;) {
        size_t len = 0;
        char *chunk = RedisModule_LoadStringBuffer(io, &len);
        if (RedisModule_IsIOError(io) || !chunk)
            break;
        if (len == 0) { /* the end */
            RedisModule_Free(chunk);
            if (f) /* complete, or a copy still loading: it saved what it had received, and loads as it was */
                return f;
            break;
        }
        nidus_status st = mod_filter_load_chunk(t, &f, chunk, len, mod_load_limit(NULL));
        RedisModule_Free(chunk);
        if (st) {
            RedisModule_LogIOError(io, "warning", "nidus: refused a filter in the RDB payload: %s",
                                   nidus_strerror(st));
            break;
        }
    }
    if (f)
        mod_filter_free(t, f);
    return NULL;
}

typedef struct aof_arg {
    RedisModuleIO *aof;
    RedisModuleString *key;
    const char *cmd;
} aof_arg;

static void emit_chunk(void *arg, const uint8_t *chunk, size_t len, uint64_t next)
{
    aof_arg *a = arg;
    RedisModule_EmitAOF(a->aof, a->cmd, "slb", a->key, (long long)next, (const char *)chunk, len);
}

static void aof_rewrite(const mod_filter_ops *t, RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    aof_arg a = {aof, key, t->loadchunk};
    each_chunk(t, value, emit_chunk, &a);
}

static void digest_chunk(void *md, const uint8_t *chunk, size_t len, uint64_t next)
{
    (void)next;
    RedisModule_DigestAddStringBuffer(md, (const char *)chunk, len);
}

static void digest(const mod_filter_ops *t, RedisModuleDigest *md, void *value)
{
    each_chunk(t, value, digest_chunk, md);
    RedisModule_DigestEndSequence(md);
}

typedef struct copy_arg {
    const mod_filter_ops *t;
    void *to;
    bool failed;
} copy_arg;

static void copy_chunk(void *arg, const uint8_t *chunk, size_t len, uint64_t next)
{
    (void)next;
    copy_arg *c = arg;
    if (!c->failed && mod_filter_load_chunk(c->t, &c->to, chunk, len, 0) != NIDUS_OK)
        c->failed = true;
}

void *mod_filter_copy(const mod_filter_ops *t, const void *value)
{
    copy_arg c = {t, NULL, false};
    each_chunk(t, value, copy_chunk, &c);
    if (c.failed || !c.to) {
        if (c.to)
            mod_filter_free(t, c.to);
        return NULL;
    }
    return c.to;
}

/* The server's own records of a module value (its module-value record, and on some servers its object:
 * mod_server.value_record_bytes). A small filter is a few dozen bytes, so without them its MEMORY USAGE
 * would miss a third of what the key costs. */
static size_t mem_usage(const mod_filter_ops *t, const void *value)
{
    return (size_t)mod_filter_memory(t, value) + mod_server.value_record_bytes;
}

size_t mod_free_effort(uint64_t bytes)
{
    uint64_t effort = 1 + bytes / MOD_FREE_EFFORT_BYTES;
    return effort < SIZE_MAX ? (size_t)effort : SIZE_MAX;
}

static void *defrag_move(void *ctx, void *block) { return RedisModule_DefragAlloc(ctx, block); }
static bool defrag_stop(void *ctx) { return RedisModule_DefragShouldStop(ctx) != 0; }

int mod_defrag_value(RedisModuleDefragCtx *ctx, void **value,
                     bool (*relocate)(void **v, const nidus_mover *mover, uint64_t *cursor))
{
    if (!RedisModule_DefragAlloc)
        return 0;
    unsigned long cursor = 0;
    bool steps = RedisModule_DefragCursorGet && RedisModule_DefragCursorSet && RedisModule_DefragShouldStop &&
                 RedisModule_DefragCursorGet(ctx, &cursor) == REDISMODULE_OK;
    nidus_mover mover = {defrag_move, steps ? defrag_stop : NULL, ctx};
    uint64_t at = cursor;
    if (relocate(value, &mover, &at))
        return 0;
    RedisModule_DefragCursorSet(ctx, (unsigned long)at);
    return 1;
}

/* The type methods, one set per type, over the shared code above. */
#define TYPE_METHODS(prefix, ops)                                                                              \
    static void *prefix##_rdb_load(RedisModuleIO *io, int encver)                                           \
    {                                                                                                          \
        return encver == MOD_RDB_VERSION ? mod_rdb_load_filter(&ops, io) : NULL;                          \
    }                                                                                                          \
    static void prefix##_rdb_save(RedisModuleIO *io, void *v) { mod_rdb_save_filter(&ops, io, v); }         \
    static void prefix##_aof(RedisModuleIO *aof, RedisModuleString *key, void *v) { aof_rewrite(&ops, aof, key, v); } \
    static size_t prefix##_mem(const void *v) { return mem_usage(&ops, v); }                                  \
    static void prefix##_digest(RedisModuleDigest *md, void *v) { digest(&ops, md, v); }                      \
    static void prefix##_free(void *v) { mod_filter_free(&ops, v); }                                          \
    static size_t prefix##_free_effort(RedisModuleString *key, const void *v)                                  \
    {                                                                                                          \
        (void)key;                                                                                             \
        return mod_free_effort(mod_filter_memory(&ops, v));                                                   \
    }                                                                                                          \
    static void *prefix##_copy(RedisModuleString *from, RedisModuleString *to, const void *v)                 \
    {                                                                                                          \
        (void)from;                                                                                            \
        (void)to;                                                                                              \
        return mod_filter_copy(&ops, v);                                                                     \
    }                                                                                                          \
    static bool prefix##_relocate(void **v, const nidus_mover *mover, uint64_t *cursor)                       \
    {                                                                                                          \
        return mod_filter_relocate(&ops, v, mover, cursor);                                                    \
    }                                                                                                          \
    static int prefix##_defrag(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **v)                   \
    {                                                                                                          \
        (void)key;                                                                                             \
        return mod_defrag_value(ctx, v, prefix##_relocate);                                                    \
    }                                                                                                          \
    static RedisModuleTypeMethods prefix##_methods = {                                                         \
        .version = MOD_TYPE_METHOD_VERSION,                                                                  \
        .rdb_load = prefix##_rdb_load,                                                                         \
        .rdb_save = prefix##_rdb_save,                                                                         \
        .aof_rewrite = prefix##_aof,                                                                           \
        .mem_usage = prefix##_mem,                                                                             \
        .digest = prefix##_digest,                                                                             \
        .free = prefix##_free,                                                                                 \
        .free_effort = prefix##_free_effort,                                                                   \
        .copy = prefix##_copy,                                                                                 \
        .defrag = prefix##_defrag,                                                                             \
    };

TYPE_METHODS(cf, mod_cf_ops)
TYPE_METHODS(bf, mod_bf_ops)

int mod_register_types(RedisModuleCtx *ctx)
{
    /* Type names are exactly nine characters; ours differ from RedisBloom's, whose RDB encoding differs. */
    mod_cf_type = RedisModule_CreateDataType(ctx, "nidus--CF", MOD_RDB_VERSION, &cf_methods);
    mod_bf_type = RedisModule_CreateDataType(ctx, "nidus--BF", MOD_RDB_VERSION, &bf_methods);
    return mod_cf_type && mod_bf_type && mod_rb_register_types(ctx) == REDISMODULE_OK ? REDISMODULE_OK
                                                                                       : REDISMODULE_ERR;
}
