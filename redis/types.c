/* SPDX-License-Identifier: BSD-3-Clause */
/* The data types: persistence (RDB, AOF), DUMP/RESTORE, COPY, MEMORY USAGE, DEBUG DIGEST, free and defrag of
 * every one, each type's callbacks made by one macro from its mod_value_class; the nidus types' values here.
 *
 * RDB of the nidus types: the filter's chunks (the same ones SCANDUMP gives), each one string, then an empty string. Loading
 * feeds them to the chunk loader, which checks every chunk, the whole checksum and the contents: a hostile
 * RDB or RESTORE payload is refused (the server reports bad data), never trusted. AOF: the chunks as
 * LOADCHUNK commands. A key whose LOADCHUNK copy was cut off saves the chunks it has received and loads back
 * in the same state, so every path (RDB, AOF, DUMP/RESTORE, COPY, replication) keeps it and the copy can
 * continue (docs/DESIGN-NOTES.md). */
#include <string.h>

#include "commands.h"
#include "common.h"
#include "pins.h"
#include "rb/rb_types.h"
#include "types.h"
#include "windowed.h"

/* Encoding versions of our RDB payload. */
#define MOD_RDB_VERSION 1

/* Calls visit(arg, next, chunk, len) for every chunk of f: LOADCHUNK takes each at the iterator after it. */
static void each_chunk(const mod_filter_ops *t, const void *f, mod_chunk_visit visit, void *arg)
{
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, len;
    uint8_t *buf = RedisModule_Alloc(cap);
    uint64_t cursor = 0, next;
    nidus_dump_sum *sum = nidus_dump_sum_new(&mod_allocator); /* one read of the filter: the checksum by the sum */
    nidus_filter_ref ref;
    nidus_filter *filter = mod_filter(&ref, t, f);
    while (nidus_filter_dump_chunk_sum(filter, cursor, sum, buf, cap, &len, &next) == NIDUS_OK && len) {
        visit(arg, next, buf, len);
        cursor = next;
    }
    nidus_dump_sum_free(sum);
    RedisModule_Free(buf);
}

static void save_chunk(void *io, uint64_t pos, const uint8_t *chunk, size_t len)
{
    (void)pos;
    RedisModule_SaveStringBuffer(io, (const char *)chunk, len);
}

void mod_rdb_save_filter(const mod_filter_ops *t, RedisModuleIO *io, void *value)
{
    each_chunk(t, value, save_chunk, io);
    RedisModule_SaveStringBuffer(io, "", 0);
}

void *mod_rdb_load_filter(const mod_filter_ops *t, RedisModuleIO *io, uint64_t max_bytes)
{
    void *f = NULL;
    /* The header chunk fixes how many data chunks follow; the loader refuses any beyond them. The limit is
     * measured as writes measure it, so whatever a write produced loads, and a payload no write could
     * produce is refused before its tables are allocated (max_bytes: see mod_load_limit; a RESTORE a master
     * replicated takes the master's limit, mod_limit_announce). */
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
        nidus_status st = mod_filter_load_chunk(t, &f, chunk, len, max_bytes);
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

typedef struct copy_arg {
    const mod_filter_ops *t;
    void *to;
    bool failed;
} copy_arg;

static void copy_chunk(void *arg, uint64_t pos, const uint8_t *chunk, size_t len)
{
    (void)pos;
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
    mod_dump_forget(*value); /* the value may move */
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

/* ---- the methods every type shares, through its mod_value_class ---- */

typedef struct aof_arg {
    RedisModuleIO *aof;
    RedisModuleString *key;
    const char *cmd;
} aof_arg;

static void emit_chunk(void *arg, uint64_t pos, const uint8_t *chunk, size_t len)
{
    aof_arg *a = arg;
    RedisModule_EmitAOF(a->aof, a->cmd, "slb", a->key, (long long)pos, (const char *)chunk, len);
}

static void aof_rewrite(const mod_value_class *c, RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    aof_arg a = {aof, key, c->loadchunk};
    c->each_chunk(c->of, value, emit_chunk, &a);
}

static void digest_chunk(void *md, uint64_t pos, const uint8_t *chunk, size_t len)
{
    (void)pos;
    RedisModule_DigestAddStringBuffer(md, (const char *)chunk, len);
}

static void digest(const mod_value_class *c, RedisModuleDigest *md, void *value)
{
    c->each_chunk(c->of, value, digest_chunk, md);
    RedisModule_DigestEndSequence(md);
}

/* The value's bytes and the server's own records of a module value (its module-value record, and on some
 * servers its object: mod_server.value_record_bytes). A small filter is a few dozen bytes, so without them its
 * MEMORY USAGE would miss a third of what the key costs. */
static size_t mem_usage(const mod_value_class *c, const void *value)
{
    return (size_t)c->memory(c->of, value) + mod_server.value_record_bytes;
}

/* The server's callbacks of a type whose values `cls` (a mod_value_class) describes: one line each, as the
 * server passes no context to tell the types apart. */
#define MOD_TYPE_METHODS(prefix, cls)                                                                          \
    static void *prefix##_rdb_load(RedisModuleIO *io, int encver) { return cls.rdb_load(cls.of, io, encver); } \
    static void prefix##_rdb_save(RedisModuleIO *io, void *v) { cls.rdb_save(cls.of, io, v); }                 \
    static void prefix##_aof(RedisModuleIO *aof, RedisModuleString *key, void *v) { aof_rewrite(&cls, aof, key, v); } \
    static size_t prefix##_mem(const void *v) { return mem_usage(&cls, v); }                                   \
    static void prefix##_digest(RedisModuleDigest *md, void *v) { digest(&cls, md, v); }                       \
    static void prefix##_free(void *v)                                                                         \
    {                                                                                                          \
        if (!mod_pin_keep(v, &cls)) /* else a merge thread reads it: freed when the merge ends */             \
            cls.free(cls.of, v);                                                                               \
    }                                                                                                          \
    static size_t prefix##_free_effort(RedisModuleString *key, const void *v)                                  \
    {                                                                                                          \
        (void)key;                                                                                             \
        return mod_free_effort(cls.memory(cls.of, v));                                                         \
    }                                                                                                          \
    static void *prefix##_copy(RedisModuleString *from, RedisModuleString *to, const void *v)                 \
    {                                                                                                          \
        (void)from;                                                                                            \
        (void)to;                                                                                              \
        return cls.copy(cls.of, v);                                                                            \
    }                                                                                                          \
    static bool prefix##_relocate(void **v, const nidus_mover *mover, uint64_t *cursor)                       \
    {                                                                                                          \
        return cls.relocate(cls.of, v, mover, cursor);                                                         \
    }                                                                                                          \
    static int prefix##_defrag(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **v)                   \
    {                                                                                                          \
        (void)key;                                                                                             \
        return mod_pinned(*v) ? 0 : mod_defrag_value(ctx, v, prefix##_relocate); /* a merge thread reads it */ \
    }                                                                                                          \
    static RedisModuleTypeMethods prefix##_methods = {                                                         \
        .version = MOD_TYPE_METHOD_VERSION,                                                                    \
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

/* ---- the nidus types: a nidus_cuckoo or nidus_bloom each, its chunks the payload ---- */

static void *nidus_rdb_load(const void *t, RedisModuleIO *io, int encver)
{
    void *f = encver == MOD_RDB_VERSION ? mod_rdb_load_filter(t, io, mod_io_load_limit(io)) : NULL;
    if (f && t == &mod_cf_ops) /* saved mid-compaction: the timer carries it on */
        mod_cf_compact_loaded(io, f);
    return f;
}
static void nidus_rdb_save(const void *t, RedisModuleIO *io, void *v) { mod_rdb_save_filter(t, io, v); }
static void nidus_each_chunk(const void *t, const void *v, mod_chunk_visit visit, void *arg)
{
    each_chunk(t, v, visit, arg);
}
static uint64_t nidus_memory(const void *t, const void *v) { return mod_filter_memory(t, v); }
static void nidus_free(const void *t, void *v)
{
    mod_dump_forget(v); /* before its address can be reused */
    mod_filter_free(t, v);
}
static void *nidus_copy(const void *t, const void *v) { return mod_filter_copy(t, v); }
static bool nidus_relocate(const void *t, void **v, const nidus_mover *mover, uint64_t *cursor)
{
    return mod_filter_relocate(t, v, mover, cursor);
}

#define NIDUS_CLASS(ops, loadchunk)                                                                            \
    {loadchunk, &(ops), nidus_rdb_load, nidus_rdb_save, nidus_each_chunk, nidus_memory, nidus_free,      \
     nidus_copy, nidus_relocate}
static const mod_value_class cf_class = NIDUS_CLASS(mod_cf_ops, NIDUS_CF_LOADCHUNK),
                             bf_class = NIDUS_CLASS(mod_bf_ops, NIDUS_BF_LOADCHUNK),
                             /* windowed filters (windowed.c): the library's windowed encoding in the chunks */
                             cw_class = NIDUS_CLASS(mod_cw_ops, NIDUS_CF_LOADCHUNK),
                             bw_class = NIDUS_CLASS(mod_bw_ops, NIDUS_BF_LOADCHUNK);

MOD_TYPE_METHODS(cf, cf_class)
MOD_TYPE_METHODS(bf, bf_class)
MOD_TYPE_METHODS(cw, cw_class)
MOD_TYPE_METHODS(bw, bw_class)
MOD_TYPE_METHODS(rbcf, rb_cf_class)
MOD_TYPE_METHODS(rbbf, rb_bf_class)

int mod_register_types(RedisModuleCtx *ctx)
{
    /* Type names are exactly nine characters; ours differ from RedisBloom's, whose RDB encoding differs. */
    mod_cf_type = RedisModule_CreateDataType(ctx, "nidus--CF", MOD_RDB_VERSION, &cf_methods);
    mod_bf_type = RedisModule_CreateDataType(ctx, "nidus--BF", MOD_RDB_VERSION, &bf_methods);
    mod_cw_type = RedisModule_CreateDataType(ctx, "nidus--CW", MOD_RDB_VERSION, &cw_methods);
    mod_bw_type = RedisModule_CreateDataType(ctx, "nidus--BW", MOD_RDB_VERSION, &bw_methods);
    /* RedisBloom's type names: Redis finds a module value's type by the name its RDB carries. */
    rb_cf_type = RedisModule_CreateDataType(ctx, "MBbloomCF", RB_NIDUS_ENCVER, &rbcf_methods);
    rb_bf_type = RedisModule_CreateDataType(ctx, "MBbloom--", RB_NIDUS_ENCVER, &rbbf_methods);
    return mod_cf_type && mod_bf_type && mod_cw_type && mod_bw_type && rb_cf_type && rb_bf_type ? REDISMODULE_OK
                                                                                                 : REDISMODULE_ERR;
}
