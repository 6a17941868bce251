/* Fuzz target: the module's state machine. The input is a program of CF.* / BF.* commands run against the
 * module's own command functions (redis/cf_commands.c, bf_commands.c, chunks.c, types.c linked in) over a
 * stubbed module API: a keyspace of four keys, replies checked for shape, and after every command the
 * persistence paths of every key:
 *   - every command leaves exactly one well-formed reply (arrays as long as announced) and closes its keys;
 *   - what RDB saves loads again and saves to the same bytes; AOF rewrite's commands, replayed, rebuild a key
 *     that saves to the same bytes; the COPY method copies;
 *   - nothing leaks (libFuzzer's leak check; the keyspace is emptied after every input).
 * Keys still loading (a LOADCHUNK stream cut off) are left out of the persistence checks until issue 14 section 1
 * is fixed: today they do not survive them (NIDUS_FUZZ_STRICT=1 checks them too).
 *
 * Input: byte 0 picks the module's limits; then records: an opcode byte and its operand bytes (missing bytes
 * read as 0). See run_op for the opcodes. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common.h"
#include "module_api.h"
#include "types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NKEYS 4
#define SCRATCH NKEYS /* the slot AOF replays rebuild into */
#define MAX_ARGS 48

struct RedisModuleString {
    size_t len;
    char *p;
};
struct RedisModuleKey {
    int slot;
};
struct RedisModuleCtx {
    int flags;
};
struct RedisModuleDigest {
    uint64_t h;
};
struct RedisModuleIO {
    const uint8_t *p; /* loading: the saved strings */
    size_t left;
    int error;
    uint8_t *out; /* saving: u32 length + bytes per string */
    size_t out_len, out_cap;
    int aof_calls;           /* AOF: commands emitted */
    RedisModuleString aof[64][4];
};

static void die(const char *what)
{
    fprintf(stderr, "fuzz_commands: %s\n", what);
    abort();
}

/* ---- the keyspace ---- */

static struct {
    RedisModuleType *type;
    void *value;
} db[NKEYS + 1];
static int open_keys;

static RedisModuleTypeMethods *methods_of(RedisModuleType *t) { return (RedisModuleTypeMethods *)t; }

static int slot_of(const RedisModuleString *name)
{
    if (name->len != 2 || name->p[0] != 'k' || name->p[1] < '0' || name->p[1] > '0' + NKEYS)
        die("unknown key name");
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

static void drop(int slot)
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
static int s_delete_key(RedisModuleKey *k)
{
    drop(k->slot);
    return REDISMODULE_OK;
}

/* ---- replies: one top-level reply a command, arrays as long as announced ---- */

static struct {
    long want[32], got[32]; /* want -1: a postponed length */
    int depth;
    int top;
    long long last_ll; /* for SCANDUMP: the iterator and the chunk of the last reply */
    uint8_t *last_str;
    size_t last_len;
    bool last_error;
    bool ok; /* the last top-level reply was +OK */
} reply;

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
        die("more elements than the array announced");
    close_done();
}
static int open_array(long n)
{
    if (n == 0) {
        element();
        return REDISMODULE_OK;
    }
    if (reply.depth == 32)
        die("replies nested too deep");
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
        die("ReplySetArrayLength does not match the elements replied");
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
        die("empty error reply");
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
static int s_context_flags(RedisModuleCtx *c) { return c->flags; }
static int s_replicate(RedisModuleCtx *c)
{
    (void)c;
    return REDISMODULE_OK;
}

/* ---- strings, memory, persistence IO ---- */

static const char *s_ptr_len(const RedisModuleString *s, size_t *len)
{
    if (len)
        *len = s->len;
    return s->p;
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
                die("a chunk buffer freed twice");
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

static RedisModuleString string_of(const void *p, size_t n)
{
    RedisModuleString s = {n, malloc(n ? n : 1)};
    memcpy(s.p, p, n);
    return s;
}

/* AOF rewrite: keeps each emitted command's arguments (format "s", "l", "b", "c" as Redis reads them). */
static void s_emit_aof(RedisModuleIO *io, const char *cmd, const char *fmt, ...)
{
    if (io->aof_calls == 64)
        die("more than 64 AOF commands for one key");
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
            die("unknown EmitAOF format");
        }
    }
    va_end(ap);
    if (n != 4)
        die("AOF command of an unexpected shape");
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

static void setup(void)
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
    RedisModule_StringPtrLen = s_ptr_len;
    RedisModule_StringToLongLong = s_to_ll;
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
    nidus_register_types(NULL);
}

/* ---- running commands ---- */

typedef struct command {
    const char *name;
    RedisModuleCmdFunc fn;
} command;

static const command commands[] = {
    {"CF.RESERVE", nidus_cf_reserve},   {"CF.ADD", nidus_cf_add},           {"CF.ADDNX", nidus_cf_add},
    {"CF.INSERT", nidus_cf_insert},     {"CF.INSERTNX", nidus_cf_insert},   {"CF.EXISTS", nidus_cf_exists},
    {"CF.MEXISTS", nidus_cf_mexists},   {"CF.COUNT", nidus_cf_count},       {"CF.DEL", nidus_cf_del},
    {"CF.COMPACT", nidus_cf_compact},   {"CF.INFO", nidus_cf_info},         {"CF.SCANDUMP", nidus_cf_scandump},
    {"CF.LOADCHUNK", nidus_cf_loadchunk}, {"BF.RESERVE", nidus_bf_reserve}, {"BF.ADD", nidus_bf_add},
    {"BF.MADD", nidus_bf_madd},         {"BF.INSERT", nidus_bf_insert},     {"BF.EXISTS", nidus_bf_exists},
    {"BF.MEXISTS", nidus_bf_mexists},   {"BF.INFO", nidus_bf_info},         {"BF.CARD", nidus_bf_card},
    {"BF.SCANDUMP", nidus_bf_scandump}, {"BF.LOADCHUNK", nidus_bf_loadchunk},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static RedisModuleCmdFunc lookup(const RedisModuleString *name)
{
    for (size_t k = 0; k < NCOMMANDS; k++)
        if (strlen(commands[k].name) == name->len && !strncmp(commands[k].name, name->p, name->len))
            return commands[k].fn;
    die("AOF emitted an unknown command");
    return NULL;
}

static RedisModuleCtx ctx;
static struct run_stats {
    unsigned long commands, errors, oks, checks;
} stats;

/* Runs one command; checks it replied once, well-formed, and closed its keys. */
static void call(RedisModuleCmdFunc fn, RedisModuleString *argv, int argc)
{
    RedisModuleString *ptrs[MAX_ARGS];
    for (int k = 0; k < argc; k++)
        ptrs[k] = &argv[k];
    reply.depth = reply.top = 0;
    reply.last_error = reply.ok = false;
    fn(&ctx, ptrs, argc);
    if (reply.top != 1 || reply.depth != 0)
        die("a command must leave exactly one complete reply");
    if (open_keys != 0)
        die("a command left a key open");
    stats.commands++;
    stats.errors += reply.last_error;
    stats.oks += reply.ok;
}

/* ---- the persistence invariants ---- */

/* A key still loading chunks, left out of the checks (issue 14 section 1) unless NIDUS_FUZZ_STRICT is set: with it,
 * the replay shows whether half-loaded keys round-trip yet. */
static bool skip_loading(int slot)
{
    static int strict = -1;
    if (strict < 0)
        strict = getenv("NIDUS_FUZZ_STRICT") != NULL;
    const nidus_filter_ops *ops = db[slot].type == nidus_cf_type ? &nidus_cf_ops : &nidus_bf_ops;
    return !strict && ops->loading(db[slot].value);
}

static void rdb_bytes(int slot, RedisModuleIO *io)
{
    *io = (RedisModuleIO){0};
    methods_of(db[slot].type)->rdb_save(io, db[slot].value);
}

static void check_persistence(int slot)
{
    if (!db[slot].value || skip_loading(slot))
        return;
    stats.checks++;
    RedisModuleTypeMethods *m = methods_of(db[slot].type);
    RedisModuleIO saved;
    rdb_bytes(slot, &saved);
    /* RDB: loads, and saves to the same bytes */
    RedisModuleIO in = {.p = saved.out, .left = saved.out_len};
    void *loaded = m->rdb_load(&in, 1);
    if (!loaded)
        die("what RDB saved does not load");
    RedisModuleIO again = {0};
    m->rdb_save(&again, loaded);
    if (again.out_len != saved.out_len || memcmp(again.out, saved.out, saved.out_len))
        die("a loaded key saves different bytes");
    m->free(loaded);
    free(again.out);
    /* AOF rewrite: its commands rebuild the key */
    RedisModuleIO aof = {0};
    RedisModuleString key = string_of("k0", 2);
    key.p[1] = (char)('0' + slot);
    m->aof_rewrite(&aof, &key, db[slot].value);
    free(key.p);
    drop(SCRATCH);
    for (int c = 0; c < aof.aof_calls; c++) {
        RedisModuleString *a = aof.aof[c];
        a[1].p[1] = '0' + SCRATCH;
        call(lookup(&a[0]), a, 4);
        if (!reply.ok)
            die("an AOF-rewritten command was refused");
        for (int k = 0; k < 4; k++)
            free(a[k].p);
    }
    if (!db[SCRATCH].value)
        die("AOF rewrite rebuilt nothing");
    RedisModuleIO rebuilt;
    rdb_bytes(SCRATCH, &rebuilt);
    if (rebuilt.out_len != saved.out_len || memcmp(rebuilt.out, saved.out, saved.out_len))
        die("the key AOF rebuilt differs");
    free(rebuilt.out);
    drop(SCRATCH);
    free(saved.out);
    /* COPY, MEMORY USAGE, DEBUG DIGEST */
    void *copy = m->copy(NULL, NULL, db[slot].value);
    if (!copy)
        die("COPY of a key failed");
    m->free(copy);
    if (m->mem_usage(db[slot].value) == 0)
        die("MEMORY USAGE 0");
    RedisModuleDigest d = {0};
    m->digest(&d, db[slot].value);
}

/* ---- the program ---- */

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static unsigned byte(reader *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->p++;
}

typedef struct argv_builder {
    RedisModuleString a[MAX_ARGS];
    int n;
} argv_builder;

static void push(argv_builder *b, const char *s, size_t n)
{
    if (b->n < MAX_ARGS)
        b->a[b->n++] = string_of(s, n);
}
static void push_str(argv_builder *b, const char *s) { push(b, s, strlen(s)); }
static void push_num(argv_builder *b, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    push_str(b, num);
}
static void push_key(argv_builder *b, reader *r)
{
    char k[2] = {'k', (char)('0' + byte(r) % NKEYS)};
    push(b, k, 2);
}
static void push_item(argv_builder *b, reader *r)
{
    char it[8];
    snprintf(it, sizeof it, "i%u", byte(r) % 64);
    push_str(b, it);
}
static void release(argv_builder *b)
{
    for (int k = 0; k < b->n; k++)
        free(b->a[k].p);
    b->n = 0;
}

/* A numeric argument: mostly sensible values, sometimes the edges and garbage. */
static void push_number(argv_builder *b, reader *r, const long long *values, unsigned n)
{
    unsigned v = byte(r);
    static const char *const odd[] = {"0", "-1", "99999999999999999999", "x", "1e3", "", "65536", "4294967297"};
    if (v >= 248)
        push_str(b, odd[v - 248]);
    else
        push_num(b, values[v % n]);
}

static const long long capacities[] = {1, 2, 3, 4, 7, 10, 16, 50, 100, 500, 1000, 5000, 100000, 1LL << 40};
static const long long bucket_sizes[] = {1, 2, 3, 4, 5, 8, 255};
static const long long iterations[] = {1, 2, 20, 500, 65535};
static const long long expansions[] = {0, 1, 2, 4, 32768};
static const char *const rates[] = {"0.1", "0.01", "0.001", "0.000001", "0", "1", "0.5", "-0.1"};

static void items(argv_builder *b, reader *r)
{
    unsigned n = 1 + byte(r) % 24;
    for (unsigned k = 0; k < n; k++)
        push_item(b, r);
}

/* SCANDUMP every chunk of `from` (as a client would) and LOADCHUNK them into `to`, the first `upto` only
 * (0: all); a chunk's byte may be flipped on the way. */
static void copy_by_chunks(reader *r, bool bloom)
{
    char from[2] = {'k', (char)('0' + byte(r) % NKEYS)}, to[2] = {'k', (char)('0' + byte(r) % NKEYS)};
    unsigned upto = byte(r) % 4, flip_chunk = byte(r) % 8, flip_at = byte(r);
    long long it = 0;
    for (unsigned c = 1; c < 64; c++) {
        argv_builder b = {0};
        push_str(&b, bloom ? "BF.SCANDUMP" : "CF.SCANDUMP");
        push(&b, from, 2);
        push_num(&b, it);
        call(bloom ? nidus_bf_scandump : nidus_cf_scandump, b.a, b.n);
        release(&b);
        if (reply.last_error || !reply.last_str)
            return;
        it = reply.last_ll;
        if (c == flip_chunk && reply.last_len)
            reply.last_str[flip_at % reply.last_len] ^= 0x20;
        push_str(&b, bloom ? "BF.LOADCHUNK" : "CF.LOADCHUNK");
        push(&b, to, 2);
        push_num(&b, it);
        push(&b, (const char *)reply.last_str, reply.last_len);
        call(bloom ? nidus_bf_loadchunk : nidus_cf_loadchunk, b.a, b.n);
        release(&b);
        if (reply.last_error || (upto && c >= upto))
            return;
    }
}

static void run_op(reader *r)
{
    unsigned op = byte(r) % 24;
    argv_builder b = {0};
    RedisModuleCmdFunc fn = NULL;
    switch (op) {
    case 0: /* CF.RESERVE key capacity [BUCKETSIZE] [MAXITERATIONS] [EXPANSION] [FINGERPRINT|ERROR] [SEMISORT] */
    {
        push_str(&b, "CF.RESERVE");
        push_key(&b, r);
        push_number(&b, r, capacities, 14);
        unsigned opts = byte(r);
        if (opts & 1)
            push_str(&b, "BUCKETSIZE"), push_number(&b, r, bucket_sizes, 7);
        if (opts & 2)
            push_str(&b, "MAXITERATIONS"), push_number(&b, r, iterations, 5);
        if (opts & 4)
            push_str(&b, "EXPANSION"), push_number(&b, r, expansions, 5);
        if (opts & 8)
            push_str(&b, "FINGERPRINT"), push_num(&b, byte(r) % 40);
        if (opts & 16)
            push_str(&b, "ERROR"), push_str(&b, rates[byte(r) % 8]);
        if (opts & 32)
            push_str(&b, "SEMISORT");
        fn = nidus_cf_reserve;
        break;
    }
    case 1:
    case 2:
    case 3:
        push_str(&b, op == 3 ? "CF.ADDNX" : "CF.ADD");
        push_key(&b, r);
        push_item(&b, r);
        fn = nidus_cf_add;
        break;
    case 4:
    case 5: {
        push_str(&b, op == 4 ? "CF.INSERT" : "CF.INSERTNX");
        push_key(&b, r);
        unsigned opts = byte(r);
        if (opts & 1)
            push_str(&b, "CAPACITY"), push_number(&b, r, capacities, 14);
        if (opts & 2)
            push_str(&b, "NOCREATE");
        if (!(opts & 4))
            push_str(&b, "ITEMS");
        items(&b, r);
        fn = nidus_cf_insert;
        break;
    }
    case 6:
    case 7:
        push_str(&b, op == 6 ? "CF.EXISTS" : "CF.COUNT");
        push_key(&b, r);
        push_item(&b, r);
        fn = op == 6 ? nidus_cf_exists : nidus_cf_count;
        break;
    case 8:
        push_str(&b, "CF.MEXISTS");
        push_key(&b, r);
        items(&b, r);
        fn = nidus_cf_mexists;
        break;
    case 9:
    case 10:
        push_str(&b, "CF.DEL");
        push_key(&b, r);
        push_item(&b, r);
        fn = nidus_cf_del;
        break;
    case 11:
        push_str(&b, byte(r) & 1 ? "CF.COMPACT" : "CF.INFO");
        push_key(&b, r);
        fn = b.a[0].p[3] == 'C' ? nidus_cf_compact : nidus_cf_info;
        break;
    case 12: { /* BF.RESERVE key rate capacity [EXPANSION e] [NONSCALING] */
        push_str(&b, "BF.RESERVE");
        push_key(&b, r);
        push_str(&b, rates[byte(r) % 8]);
        push_number(&b, r, capacities, 14);
        unsigned opts = byte(r);
        if (opts & 1)
            push_str(&b, "EXPANSION"), push_number(&b, r, expansions, 5);
        if (opts & 2)
            push_str(&b, "NONSCALING");
        fn = nidus_bf_reserve;
        break;
    }
    case 13:
    case 14:
        push_str(&b, "BF.ADD");
        push_key(&b, r);
        push_item(&b, r);
        fn = nidus_bf_add;
        break;
    case 15:
        push_str(&b, "BF.MADD");
        push_key(&b, r);
        items(&b, r);
        fn = nidus_bf_madd;
        break;
    case 16: { /* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS ... */
        push_str(&b, "BF.INSERT");
        push_key(&b, r);
        unsigned opts = byte(r);
        if (opts & 1)
            push_str(&b, "CAPACITY"), push_number(&b, r, capacities, 14);
        if (opts & 2)
            push_str(&b, "ERROR"), push_str(&b, rates[byte(r) % 8]);
        if (opts & 4)
            push_str(&b, "EXPANSION"), push_number(&b, r, expansions, 5);
        if (opts & 8)
            push_str(&b, "NOCREATE");
        if (opts & 16)
            push_str(&b, "NONSCALING");
        push_str(&b, "ITEMS");
        items(&b, r);
        fn = nidus_bf_insert;
        break;
    }
    case 17:
        push_str(&b, "BF.MEXISTS");
        push_key(&b, r);
        items(&b, r);
        fn = nidus_bf_mexists;
        break;
    case 18: {
        unsigned which = byte(r) % 3;
        push_str(&b, which == 0 ? "BF.INFO" : which == 1 ? "BF.CARD" : "BF.EXISTS");
        push_key(&b, r);
        if (which == 2)
            push_item(&b, r);
        fn = which == 0 ? nidus_bf_info : which == 1 ? nidus_bf_card : nidus_bf_exists;
        break;
    }
    case 19:
    case 20:
        copy_by_chunks(r, op == 20);
        return;
    case 21: { /* a LOADCHUNK of raw bytes at any iterator */
        bool bloom = byte(r) & 1;
        push_str(&b, bloom ? "BF.LOADCHUNK" : "CF.LOADCHUNK");
        push_key(&b, r);
        push_num(&b, byte(r) % 4);
        size_t n = byte(r) % 64;
        n = n < r->left ? n : r->left;
        push(&b, (const char *)r->p, n);
        r->p += n;
        r->left -= n;
        fn = bloom ? nidus_bf_loadchunk : nidus_cf_loadchunk;
        break;
    }
    case 22: { /* DEL */
        drop((int)(byte(r) % NKEYS));
        return;
    }
    default: { /* RESP3 on or off */
        ctx.flags = byte(r) & 1 ? REDISMODULE_CTX_FLAGS_RESP3 : 0;
        return;
    }
    }
    /* sometimes a wrong number of arguments */
    unsigned cut = byte(r);
    if (cut >= 240 && b.n > 1) {
        free(b.a[b.n - 1].p);
        b.n--;
    }
    call(fn, b.a, b.n);
    release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    reader r = {data, size};
    /* limits small enough that fuzzing never allocates much, and often meets them */
    unsigned limits = byte(&r);
    static const uint64_t memory[] = {UINT64_C(1) << 20, 4096, 65536, UINT64_C(8) << 20};
    nidus_config.max_memory = memory[limits & 3];
    nidus_config.max_capacity = (limits & 4) ? 100000 : 1000;
    nidus_config.cf_max_expansions = 1 + (limits >> 3) % 8;
    ctx.flags = 0;
    for (unsigned steps = 0; r.left && steps < 128; steps++) {
        run_op(&r);
        for (int slot = 0; slot < NKEYS; slot++)
            check_persistence(slot);
    }
    if (getenv("NIDUS_FUZZ_VERBOSE")) {
        int keys = 0;
        for (int slot = 0; slot < NKEYS; slot++)
            keys += db[slot].value != NULL;
        fprintf(stderr, "%zu bytes: %lu commands, %lu errors, %lu OK, %lu persistence checks, %d keys left\n", size,
                stats.commands, stats.errors, stats.oks, stats.checks, keys);
    }
    stats = (struct run_stats){0};
    for (int slot = 0; slot <= NKEYS; slot++)
        drop(slot);
    free(reply.last_str);
    reply.last_str = NULL;
    for (int k = 0; k < 4; k++)
        if (pool[k].used)
            die("a chunk buffer was not freed");
    return 0;
}
