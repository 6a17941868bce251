/* SPDX-License-Identifier: BSD-3-Clause */
/* A stubbed Redis module API for fuzzing the module's command code in-process: a keyspace of a few keys, a
 * reply recorder that checks every reply's shape, RDB/AOF/digest IO into memory, and allocation through libc
 * (libFuzzer's leak check sees everything). See keyspace_stubs.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace_stubs.h"
#include "types.h"

void stub_die(const char *what)
{
    fprintf(stderr, "fuzz: %s\n", what);
    abort();
}

/* ---- the keyspace ---- */

stub_slot db[NKEYS + 1];
int open_keys;


static int slot_of(const RedisModuleString *name)
{
    if (name->len != 2 || name->p[0] != 'k' || name->p[1] < '0' || name->p[1] > '0' + NKEYS)
        stub_die("unknown key name");
    return name->p[1] - '0';
}

static void *s_open_key(RedisModuleCtx *ctx, RedisModuleString *name, int mode)
{
    (void)ctx, (void)mode;
    RedisModuleKey *k = malloc(sizeof *k);
    k->slot = slot_of(name);
    open_keys++;
    return k;
}
static void s_close_key(RedisModuleKey *k)
{
    if (k) {
        open_keys--;
        free(k);
    }
}
static int s_key_type(RedisModuleKey *k) { return db[k->slot].value ? REDISMODULE_KEYTYPE_MODULE : REDISMODULE_KEYTYPE_EMPTY; }
static RedisModuleType *s_get_type(RedisModuleKey *k) { return db[k->slot].value ? db[k->slot].type : NULL; }
static void *s_get_value(RedisModuleKey *k) { return db[k->slot].value; }

void drop(int slot)
{
    if (db[slot].value)
        methods_of(db[slot].type)->free(db[slot].value);
    db[slot].value = NULL;
    db[slot].type = NULL;
}
static int s_set_value(RedisModuleKey *k, RedisModuleType *t, void *v)
{
    drop(k->slot);
    db[k->slot].type = t;
    db[k->slot].value = v;
    return REDISMODULE_OK;
}
static int s_replace_value(RedisModuleKey *k, RedisModuleType *t, void *v, void **old)
{
    if (db[k->slot].type != t)
        return REDISMODULE_ERR;
    if (old)
        *old = db[k->slot].value;
    db[k->slot].value = v; /* the old value is not freed: the caller owns it */
    return REDISMODULE_OK;
}
static int s_delete_key(RedisModuleKey *k)
{
    drop(k->slot);
    return REDISMODULE_OK;
}

/* ---- replies: one top-level reply a command, arrays as long as announced ---- */

stub_reply reply;

static void close_done(void)
{
    while (reply.depth > 0 && reply.want[reply.depth - 1] >= 0 && reply.got[reply.depth - 1] == reply.want[reply.depth - 1]) {
        reply.depth--;
        if (reply.depth == 0)
            reply.top++;
        else
            reply.got[reply.depth - 1]++;
    }
}
static void element(void)
{
    if (reply.depth == 0)
        reply.top++;
    else
        reply.got[reply.depth - 1]++;
    if (reply.depth > 0 && reply.want[reply.depth - 1] >= 0 && reply.got[reply.depth - 1] > reply.want[reply.depth - 1])
        stub_die("more elements than the array announced");
    close_done();
}
static int open_array(long n)
{
    if (n == 0) {
        element();
        return REDISMODULE_OK;
    }
    if (reply.depth == 32)
        stub_die("replies nested too deep");
    reply.want[reply.depth] = n;
    reply.got[reply.depth++] = 0;
    return REDISMODULE_OK;
}
static int s_reply_array(RedisModuleCtx *c, long n)
{
    (void)c;
    return open_array(n == REDISMODULE_POSTPONED_LEN ? -1 : n);
}
static int s_reply_map(RedisModuleCtx *c, long n)
{
    (void)c;
    return open_array(n == REDISMODULE_POSTPONED_LEN ? -1 : 2 * n);
}
static void s_set_array_length(RedisModuleCtx *c, long n)
{
    (void)c;
    int d = reply.depth - 1;
    while (d >= 0 && reply.want[d] >= 0)
        d--;
    if (d < 0 || d != reply.depth - 1 || reply.got[d] != n)
        stub_die("ReplySetArrayLength does not match the elements replied");
    reply.want[d] = n;
    if (n == 0) { /* an empty postponed array is one element of its parent */
        reply.depth--;
        element();
    } else {
        close_done();
    }
}
static int s_reply_ll(RedisModuleCtx *c, long long v)
{
    (void)c;
    reply.last_ll = v;
    element();
    return REDISMODULE_OK;
}
static int s_reply_double(RedisModuleCtx *c, double v)
{
    (void)c, (void)v;
    element();
    return REDISMODULE_OK;
}
static int s_reply_bool(RedisModuleCtx *c, int v)
{
    (void)c, (void)v;
    element();
    return REDISMODULE_OK;
}
static int s_reply_error(RedisModuleCtx *c, const char *e)
{
    (void)c;
    if (!e || !*e)
        stub_die("empty error reply");
    reply.last_error = true;
    element();
    return REDISMODULE_OK;
}
static int s_reply_simple(RedisModuleCtx *c, const char *s)
{
    (void)c;
    reply.ok = !strcmp(s, "OK");
    element();
    return REDISMODULE_OK;
}
static int s_reply_buffer(RedisModuleCtx *c, const char *s, size_t n)
{
    (void)c;
    free(reply.last_str);
    reply.last_str = malloc(n ? n : 1);
    memcpy(reply.last_str, s, n);
    reply.last_len = n;
    element();
    return REDISMODULE_OK;
}
static int s_reply_null(RedisModuleCtx *c)
{
    (void)c;
    free(reply.last_str);
    reply.last_str = NULL;
    reply.last_len = 0;
    element();
    return REDISMODULE_OK;
}
static int s_wrong_arity(RedisModuleCtx *c) { return s_reply_error(c, "ERR wrong number of arguments"); }
static int s_context_flags(RedisModuleCtx *c) { return c ? c->flags : 0; } /* NULL: RDB loading, not a command */
static int s_keys_position_request(RedisModuleCtx *c)
{
    (void)c;
    return 0; /* commands run; the server's key-position requests are not modelled */
}
static void s_key_at_pos(RedisModuleCtx *c, int pos)
{
    (void)c, (void)pos;
    stub_die("KeyAtPos outside a key-position request");
}
static int s_replicate(RedisModuleCtx *c)
{
    (void)c;
    return REDISMODULE_OK;
}
static int s_replicate_command(RedisModuleCtx *c, const char *cmd, const char *fmt, ...)
{
    (void)c, (void)cmd, (void)fmt;
    return REDISMODULE_OK;
}
long long stub_clock_ms = 1700000000000ll;
static long long s_milliseconds(void) { return stub_clock_ms; }
/* Compaction's timer (redis/compaction.c) never fires here: the writes' steps are the ones exercised. */
static RedisModuleTimerID s_create_timer(RedisModuleCtx *c, long long period, RedisModuleTimerProc cb, void *data)
{
    (void)c, (void)period, (void)cb, (void)data;
    return 0;
}
static int s_select_db(RedisModuleCtx *c, int db)
{
    (void)c;
    return db == 0 ? REDISMODULE_OK : REDISMODULE_ERR;
}
static int s_selected_db(RedisModuleCtx *c)
{
    (void)c;
    return 0;
}

/* ---- strings, memory, persistence IO ---- */

static const char *s_ptr_len(const RedisModuleString *s, size_t *len)
{
    if (len)
        *len = s->len;
    return s->p;
}
static int s_compare(const RedisModuleString *a, const RedisModuleString *b)
{
    int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}
/* A string the module keeps (CF.AT ... LIMIT's key name): its own copy of the bytes. */
static RedisModuleString *s_create_string(RedisModuleCtx *ctx, const char *p, size_t len)
{
    (void)ctx;
    RedisModuleString *s = malloc(sizeof *s);
    s->p = malloc(len ? len : 1);
    memcpy(s->p, p, len);
    s->len = len;
    return s;
}
static void s_free_string(RedisModuleCtx *ctx, RedisModuleString *s)
{
    (void)ctx;
    free(s->p);
    free(s);
}
static int s_to_ll(const RedisModuleString *s, long long *out)
{
    char buf[32];
    if (s->len == 0 || s->len >= sizeof buf)
        return REDISMODULE_ERR;
    memcpy(buf, s->p, s->len);
    buf[s->len] = 0;
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (*end || (buf[0] == '0' && s->len > 1))
        return REDISMODULE_ERR;
    *out = v;
    return REDISMODULE_OK;
}
static int s_to_double(const RedisModuleString *s, double *out)
{
    char buf[64];
    if (s->len == 0 || s->len >= sizeof buf)
        return REDISMODULE_ERR;
    memcpy(buf, s->p, s->len);
    buf[s->len] = 0;
    char *end;
    double v = strtod(buf, &end);
    if (*end || v != v)
        return REDISMODULE_ERR;
    *out = v;
    return REDISMODULE_OK;
}
/* The module takes a chunk buffer (4 MiB) for every dump, which under ASan costs a fresh mapping each time
 * (freed memory waits in quarantine): hand those out from a small pool instead, checked for double use. */
#define CHUNK_BUFFER (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD)
static struct {
    void *p;
    bool used;
} pool[4];

bool stubs_chunk_buffers_idle(void)
{
    for (int k = 0; k < 4; k++)
        if (pool[k].used)
            return false;
    return true;
}

static void *s_alloc(size_t n)
{
    if (n == CHUNK_BUFFER)
        for (int k = 0; k < 4; k++)
            if (!pool[k].used) {
                if (!pool[k].p)
                    pool[k].p = malloc(n);
                pool[k].used = true;
                return pool[k].p;
            }
    return malloc(n ? n : 1);
}
static void *s_calloc(size_t n, size_t m) { return calloc(n ? n : 1, m ? m : 1); }
static void *s_realloc(void *p, size_t n) { return realloc(p, n ? n : 1); }
static void s_free(void *p)
{
    for (int k = 0; k < 4; k++)
        if (p && p == pool[k].p) {
            if (!pool[k].used)
                stub_die("a chunk buffer freed twice");
            pool[k].used = false;
            return;
        }
    free(p);
}

static void s_save_string(RedisModuleIO *io, const char *s, size_t len)
{
    if (io->out_len + len + 4 > io->out_cap) {
        io->out_cap = (io->out_len + len + 4) * 2;
        io->out = realloc(io->out, io->out_cap);
    }
    for (int b = 0; b < 4; b++)
        io->out[io->out_len++] = (uint8_t)(len >> (8 * b));
    memcpy(io->out + io->out_len, s, len);
    io->out_len += len;
}
static char *s_load_string(RedisModuleIO *io, size_t *len)
{
    if (io->error || io->left < 4) {
        io->error = 1;
        return NULL;
    }
    size_t n = (size_t)io->p[0] | (size_t)io->p[1] << 8 | (size_t)io->p[2] << 16 | (size_t)io->p[3] << 24;
    if (n > io->left - 4) {
        io->error = 1;
        return NULL;
    }
    char *s = malloc(n ? n : 1);
    memcpy(s, io->p + 4, n);
    io->p += 4 + n;
    io->left -= 4 + n;
    *len = n;
    return s;
}
static int s_is_io_error(RedisModuleIO *io) { return io->error; }
static void s_log_io_error(RedisModuleIO *io, const char *level, const char *fmt, ...)
{
    (void)io, (void)level, (void)fmt;
}
static void s_log(RedisModuleCtx *c, const char *level, const char *fmt, ...) { (void)c, (void)level, (void)fmt; }

RedisModuleString string_of(const void *p, size_t n)
{
    RedisModuleString s = {n, malloc(n ? n : 1)};
    memcpy(s.p, p, n);
    return s;
}

/* AOF rewrite: keeps each emitted command's arguments (format "s", "l", "b", "c" as Redis reads them). */
static void s_emit_aof(RedisModuleIO *io, const char *cmd, const char *fmt, ...)
{
    if (io->aof_calls == 64)
        stub_die("more than 64 AOF commands for one key");
    RedisModuleString *args = io->aof[io->aof_calls++];
    args[0] = string_of(cmd, strlen(cmd));
    va_list ap;
    va_start(ap, fmt);
    int n = 1;
    for (const char *f = fmt; *f && n < 4; f++, n++) {
        char num[32];
        if (*f == 's') {
            RedisModuleString *s = va_arg(ap, RedisModuleString *);
            args[n] = string_of(s->p, s->len);
        } else if (*f == 'l') {
            snprintf(num, sizeof num, "%lld", va_arg(ap, long long));
            args[n] = string_of(num, strlen(num));
        } else if (*f == 'b') {
            const char *p = va_arg(ap, const char *);
            size_t len = va_arg(ap, size_t);
            args[n] = string_of(p, len);
        } else if (*f == 'c') {
            const char *p = va_arg(ap, const char *);
            args[n] = string_of(p, strlen(p));
        } else {
            stub_die("unknown EmitAOF format");
        }
    }
    va_end(ap);
    if (n != 4)
        stub_die("AOF command of an unexpected shape");
}
static void s_digest_add(RedisModuleDigest *d, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ (uint8_t)p[i]) * UINT64_C(0x100000001B3);
}
static void s_digest_end(RedisModuleDigest *d) { d->h ^= d->h >> 29; }

static RedisModuleType *s_create_type(RedisModuleCtx *c, const char *name, int encver, RedisModuleTypeMethods *m)
{
    (void)c, (void)name, (void)encver;
    return (RedisModuleType *)m;
}

void stubs_install(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    RedisModule_OpenKey = s_open_key;
    RedisModule_CloseKey = s_close_key;
    RedisModule_KeyType = s_key_type;
    RedisModule_DeleteKey = s_delete_key;
    RedisModule_ModuleTypeGetType = s_get_type;
    RedisModule_ModuleTypeGetValue = s_get_value;
    RedisModule_ModuleTypeSetValue = s_set_value;
    RedisModule_ModuleTypeReplaceValue = s_replace_value;
    RedisModule_ReplyWithArray = s_reply_array;
    RedisModule_ReplyWithMap = s_reply_map;
    RedisModule_ReplySetArrayLength = s_set_array_length;
    RedisModule_ReplyWithLongLong = s_reply_ll;
    RedisModule_ReplyWithDouble = s_reply_double;
    RedisModule_ReplyWithBool = s_reply_bool;
    RedisModule_ReplyWithError = s_reply_error;
    RedisModule_ReplyWithSimpleString = s_reply_simple;
    RedisModule_ReplyWithStringBuffer = s_reply_buffer;
    RedisModule_ReplyWithNull = s_reply_null;
    RedisModule_WrongArity = s_wrong_arity;
    RedisModule_GetContextFlags = s_context_flags;
    RedisModule_ReplicateVerbatim = s_replicate;
    RedisModule_Replicate = s_replicate_command;
    RedisModule_CreateTimer = s_create_timer;
    RedisModule_Milliseconds = s_milliseconds;
    RedisModule_SelectDb = s_select_db;
    RedisModule_GetSelectedDb = s_selected_db;
    RedisModule_StringPtrLen = s_ptr_len;
    RedisModule_StringToLongLong = s_to_ll;
    RedisModule_StringCompare = s_compare;
    RedisModule_CreateString = s_create_string;
    RedisModule_FreeString = s_free_string;
    RedisModule_IsKeysPositionRequest = s_keys_position_request;
    RedisModule_KeyAtPos = s_key_at_pos;
    RedisModule_StringToDouble = s_to_double;
    RedisModule_Alloc = s_alloc;
    RedisModule_Calloc = s_calloc;
    RedisModule_Realloc = s_realloc;
    RedisModule_Free = s_free;
    RedisModule_SaveStringBuffer = s_save_string;
    RedisModule_LoadStringBuffer = s_load_string;
    RedisModule_IsIOError = s_is_io_error;
    RedisModule_LogIOError = s_log_io_error;
    RedisModule_Log = s_log;
    RedisModule_EmitAOF = s_emit_aof;
    RedisModule_DigestAddStringBuffer = s_digest_add;
    RedisModule_DigestEndSequence = s_digest_end;
    RedisModule_CreateDataType = s_create_type;
    mod_register_types(NULL);
}

