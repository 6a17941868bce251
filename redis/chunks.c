/* SPDX-License-Identifier: BSD-3-Clause */
/* SCANDUMP and LOADCHUNK for both filter types: the library's chunks, one per call. */
#include "commands.h"
#include "common.h"

#define MOD_HEADER_MIN 20 /* the fixed part of an encoding's prefix: a header chunk carries at least this */
/* Filters below this many bytes get no running checksum: hashing them whole costs less than one data chunk's copy. */
#define SUM_MIN_BYTES ((uint64_t)NIDUS_CHUNK_PAYLOAD_MAX)

static uint64_t summed, hashed; /* checksum chunks served by a running checksum, and by hashing the filter whole */

void mod_dump_counts(uint64_t *by_sum, uint64_t *whole)
{
    *by_sum = summed;
    *whole = hashed;
}

nidus_dump_sum *mod_scandump_sum(const mod_filter_ops *ops, const void *filter, const void *value, uint64_t counts[2])
{
    nidus_dump_sum *sum = filter && mod_filter_memory(ops, filter) >= SUM_MIN_BYTES ? mod_dump_sum_of(value) : NULL;
    nidus_dump_sum_counts(sum, &counts[0], &counts[1]);
    return sum;
}

void mod_scandump_tally(const nidus_dump_sum *sum, const uint64_t counts[2])
{
    uint64_t now[2];
    nidus_dump_sum_counts(sum, &now[0], &now[1]);
    summed += now[0] - counts[0];
    hashed += now[1] - counts[1];
}

/* The chunk at `cursor`, through the value's running checksum when it is large. */
static nidus_status dump_chunk(const mod_filter_ops *ops, const void *f, uint64_t cursor, void *buf, size_t cap,
                               size_t *len, uint64_t *next)
{
    uint64_t counts[2];
    nidus_dump_sum *sum = mod_scandump_sum(ops, f, f, counts);
    nidus_filter_ref ref;
    nidus_status st = nidus_filter_dump_chunk_sum(mod_filter(&ref, ops, f), cursor, sum, buf, cap, len, next);
    mod_scandump_tally(sum, counts);
    return st;
}

/* The end of a SCANDUMP stream: [0, nil], or RedisBloom's Bloom [0, ""]. */
static int reply_end(RedisModuleCtx *ctx, const mod_filter_ops *ops)
{
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, 0);
    return ops->bloom_replies ? RedisModule_ReplyWithStringBuffer(ctx, "", 0) : RedisModule_ReplyWithNull(ctx);
}

/* Replies [next, chunk], or the end past the last chunk (and for iter < 0). */
static int reply_chunk(RedisModuleCtx *ctx, const void *f, long long iter, const mod_filter_ops *ops)
{
    if (mod_filter_loading(ops, f)) /* its chunks would be a partial copy */
        return RedisModule_ReplyWithError(ctx, ops->still_loading);
    if (iter < 0 || iter > UINT32_MAX)
        return reply_end(ctx, ops);
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, len = 0;
    uint8_t *buf = RedisModule_Alloc(cap);
    uint64_t next = 0;
    nidus_status st = dump_chunk(ops, f, (uint64_t)iter, buf, cap, &len, &next);
    int rc;
    if (st) {
        rc = RedisModule_ReplyWithError(ctx, "ERR could not dump the filter");
    } else if (!len) {
        rc = reply_end(ctx, ops);
    } else {
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, (long long)next);
        rc = RedisModule_ReplyWithStringBuffer(ctx, (const char *)buf, len);
    }
    RedisModule_Free(buf);
    return rc;
}

int mod_scandump_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const mod_filter_ops *ops)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long iter;
    bool numeric = RedisModule_StringToLongLong(argv[2], &iter) == REDISMODULE_OK;
    if (!numeric && !ops->bloom_replies)
        return RedisModule_ReplyWithError(ctx, ops->bad_cursor);
    RedisModuleKey *key;
    void *value;
    int rc = REDISMODULE_OK;
    if (mod_open_existing(ctx, argv[1], REDISMODULE_READ, *ops->type, "ERR not found", &key, &value))
        rc = !numeric ? RedisModule_ReplyWithError(ctx, ops->bad_cursor)
                      : reply_chunk(ctx, value, ops->dump_empty || mod_filter_items(ops, value) ? iter : -1, ops);
    RedisModule_CloseKey(key);
    return rc;
}

/* True when the filter's final check failed: it can never complete, so the key goes (a load refused earlier
 * changed nothing, and the copy may still continue). */
static bool load_failed(const mod_filter_ops *ops, const void *f)
{
    uint8_t header[NIDUS_CHUNK_OVERHEAD + 4096];
    size_t len;
    uint64_t next;
    return mod_filter_loading(ops, f) && mod_filter_dump_chunk(ops, f, 0, header, sizeof header, &len, &next) == NIDUS_ERR_CORRUPT;
}

int mod_load_chunk_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const mod_filter_ops *ops)
{
    RedisModuleType *type = *ops->type;
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long iter;
    if (RedisModule_StringToLongLong(argv[2], &iter) != REDISMODULE_OK || (iter == 0 && !ops->bloom_replies))
        return RedisModule_ReplyWithError(ctx, ops->bad_iter);
    size_t len;
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, type, &key, &value);
    int rc;
    if (ks == KEY_WRONGTYPE) {
        rc = RedisModule_ReplyWithError(ctx, REDISMODULE_ERRORMSG_WRONGTYPE);
    } else if (ks == KEY_EMPTY && iter != 1) {
        rc = RedisModule_ReplyWithError(ctx, "ERR not found"); /* a data chunk for a key without its header */
    } else if (ks == KEY_OK && (iter <= 1 || !mod_filter_loading(ops, value))) {
        /* a header for a key that exists, or a chunk for a filter that is complete, or before any chunk */
        rc = RedisModule_ReplyWithError(ctx, iter == 1 && !ops->bloom_replies ? "ERR item exists" : ops->refused);
    } else {
        bool fresh = ks == KEY_EMPTY;
        void *before = value;
        /* a header loads under the limit its master announced, or else this server's (mod_limit_announce) */
        uint64_t limit = fresh ? mod_key_load_limit(ctx, RedisModule_GetSelectedDb(ctx), argv[1], true)
                               : mod_load_limit(ctx);
        nidus_status st = mod_filter_load_chunk(ops, &value, data, len, limit);
        if (st == NIDUS_OK) {
            if (fresh)
                RedisModule_ModuleTypeSetValue(key, type, value);
            else if (value != before) /* the last chunk: the library freed the loading copy for a packed one */
                RedisModule_ModuleTypeReplaceValue(key, type, value, NULL);
            if (fresh && limit && mod_load_limit(ctx)) /* a client's header, on a master */
                mod_limit_announce(ctx, argv[1], ops->bloom_replies, limit);
            RedisModule_ReplicateVerbatim(ctx);
            rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
        } else {
            if (!fresh && load_failed(ops, value))
                RedisModule_DeleteKey(key); /* the last chunk landed and the whole failed its check */
            /* RedisBloom's words: a header chunk too short to be one, or one whose contents are refused */
            bool header_sized = len >= NIDUS_CHUNK_OVERHEAD + MOD_HEADER_MIN;
            rc = RedisModule_ReplyWithError(ctx, st == NIDUS_ERR_LIMIT_MEMORY ? MOD_MSG_TOO_BIG
                                                 : !fresh                    ? ops->refused
                                                 : header_sized              ? ops->bad_header
                                                                             : ops->short_header);
        }
    }
    RedisModule_CloseKey(key);
    return rc;
}
