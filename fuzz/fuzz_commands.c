/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the module's state machine. The input is a program of CF.* / BF.* commands run against the
 * module's own command functions (redis/cf_commands.c, bf_commands.c, chunks.c, types.c linked in) over a
 * stubbed module API: a keyspace of four keys, replies checked for shape, and after every command the
 * persistence paths of every key:
 *   - every command leaves exactly one well-formed reply (arrays as long as announced) and closes its keys;
 *   - what RDB saves loads again and saves to the same bytes; AOF rewrite's commands, replayed, rebuild a key
 *     that saves to the same bytes; the COPY method copies;
 *   - nothing leaks (libFuzzer's leak check; the keyspace is emptied after every input).
 * Keys left half-loaded by a LOADCHUNK stream cut off are checked like any other: the server keeps them until
 * the rest arrives or they are deleted, so they must save, load and copy as well.
 *
 * Commands go through the windowed keys' router (redis/windowed.c) as the server's do, and WINDOW options make
 * windowed keys; the program moves the clock their writes and lookups read (forward, by jumps past many
 * epochs, and back) and sends CF.AT / BF.AT as a master would.
 *
 * Input: byte 0 picks the module's limits; then records: an opcode byte and its operand bytes (missing bytes
 * read as 0). See run_op for the opcodes (the last one: a RESP3 switch and a clock step, or with its operand's
 * top bit a merge or a CF.AT / BF.AT). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "keyspace_stubs.h"
#include "windowed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- running commands ---- */

typedef struct command {
    const char *name;
    RedisModuleCmdFunc fn;
} command;

static const command commands[] = {
    {"CF.RESERVE", mod_cf_reserve},   {"CF.ADD", mod_cf_add},           {"CF.ADDNX", mod_cf_add},
    {"CF.INSERT", mod_cf_insert},     {"CF.INSERTNX", mod_cf_insert},   {"CF.EXISTS", mod_cf_exists},
    {"CF.MEXISTS", mod_cf_mexists},   {"CF.COUNT", mod_cf_count},       {"CF.DEL", mod_cf_del},
    {"CF.COMPACT", mod_cf_compact},   {"CF.INFO", mod_cf_info},         {"CF.SCANDUMP", mod_cf_scandump},
    {"CF.LOADCHUNK", mod_cf_loadchunk}, {"BF.RESERVE", mod_bf_reserve}, {"BF.ADD", mod_bf_add},
    {"BF.MADD", mod_bf_madd},         {"BF.INSERT", mod_bf_insert},     {"BF.EXISTS", mod_bf_exists},
    {"BF.MEXISTS", mod_bf_mexists},   {"BF.INFO", mod_bf_info},         {"BF.CARD", mod_bf_card},
    {"BF.SCANDUMP", mod_bf_scandump}, {"BF.LOADCHUNK", mod_bf_loadchunk},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static RedisModuleCmdFunc lookup(const RedisModuleString *name)
{
    for (size_t k = 0; k < NCOMMANDS; k++)
        if (strlen(commands[k].name) == name->len && !strncmp(commands[k].name, name->p, name->len))
            return commands[k].fn;
    stub_die("AOF emitted an unknown command");
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
    mod_window_route(fn, fn)(&ctx, ptrs, argc);
    if (reply.top != 1 || reply.depth != 0)
        stub_die("a command must leave exactly one complete reply");
    if (open_keys != 0)
        stub_die("a command left a key open");
    stats.commands++;
    stats.errors += reply.last_error;
    stats.oks += reply.ok;
}

/* ---- the persistence invariants ---- */

static void rdb_bytes(int slot, RedisModuleIO *io)
{
    *io = (RedisModuleIO){0};
    methods_of(db[slot].type)->rdb_save(io, db[slot].value);
}

static void check_persistence(int slot)
{
    if (!db[slot].value)
        return;
    stats.checks++;
    RedisModuleTypeMethods *m = methods_of(db[slot].type);
    RedisModuleIO saved;
    rdb_bytes(slot, &saved);
    /* RDB: loads, and saves to the same bytes */
    RedisModuleIO in = {.p = saved.out, .left = saved.out_len};
    void *loaded = m->rdb_load(&in, 1);
    if (!loaded)
        stub_die("what RDB saved does not load");
    RedisModuleIO again = {0};
    m->rdb_save(&again, loaded);
    if (again.out_len != saved.out_len || memcmp(again.out, saved.out, saved.out_len))
        stub_die("a loaded key saves different bytes");
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
            stub_die("an AOF-rewritten command was refused");
        for (int k = 0; k < 4; k++)
            free(a[k].p);
    }
    if (!db[SCRATCH].value)
        stub_die("AOF rewrite rebuilt nothing");
    RedisModuleIO rebuilt;
    rdb_bytes(SCRATCH, &rebuilt);
    if (rebuilt.out_len != saved.out_len || memcmp(rebuilt.out, saved.out, saved.out_len))
        stub_die("the key AOF rebuilt differs");
    free(rebuilt.out);
    drop(SCRATCH);
    free(saved.out);
    /* COPY, MEMORY USAGE, DEBUG DIGEST */
    void *copy = m->copy(NULL, NULL, db[slot].value);
    if (!copy)
        stub_die("COPY of a key failed");
    m->free(copy);
    if (m->mem_usage(db[slot].value) == 0)
        stub_die("MEMORY USAGE 0");
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
static const long long windows[] = {1, 2, 5, 40, 200, 1000, 60000, 1LL << 48};

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
        call(bloom ? mod_bf_scandump : mod_cf_scandump, b.a, b.n);
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
        call(bloom ? mod_bf_loadchunk : mod_cf_loadchunk, b.a, b.n);
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
        if (opts & 64)
            push_str(&b, "WINDOW"), push_number(&b, r, windows, 8);
        fn = mod_cf_reserve;
        break;
    }
    case 1:
    case 2:
    case 3:
        push_str(&b, op == 3 ? "CF.ADDNX" : "CF.ADD");
        push_key(&b, r);
        push_item(&b, r);
        fn = mod_cf_add;
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
        if (opts & 8)
            push_str(&b, "WINDOW"), push_number(&b, r, windows, 8);
        if (!(opts & 4))
            push_str(&b, "ITEMS");
        items(&b, r);
        fn = mod_cf_insert;
        break;
    }
    case 6:
    case 7:
        push_str(&b, op == 6 ? "CF.EXISTS" : "CF.COUNT");
        push_key(&b, r);
        push_item(&b, r);
        fn = op == 6 ? mod_cf_exists : mod_cf_count;
        break;
    case 8:
        push_str(&b, "CF.MEXISTS");
        push_key(&b, r);
        items(&b, r);
        fn = mod_cf_mexists;
        break;
    case 9:
    case 10:
        push_str(&b, "CF.DEL");
        push_key(&b, r);
        push_item(&b, r);
        fn = mod_cf_del;
        break;
    case 11:
        push_str(&b, byte(r) & 1 ? "CF.COMPACT" : "CF.INFO");
        push_key(&b, r);
        fn = b.a[0].p[3] == 'C' ? mod_cf_compact : mod_cf_info;
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
        if (opts & 4)
            push_str(&b, "WINDOW"), push_number(&b, r, windows, 8);
        fn = mod_bf_reserve;
        break;
    }
    case 13:
    case 14:
        push_str(&b, "BF.ADD");
        push_key(&b, r);
        push_item(&b, r);
        fn = mod_bf_add;
        break;
    case 15:
        push_str(&b, "BF.MADD");
        push_key(&b, r);
        items(&b, r);
        fn = mod_bf_madd;
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
        if (opts & 32)
            push_str(&b, "WINDOW"), push_number(&b, r, windows, 8);
        push_str(&b, "ITEMS");
        items(&b, r);
        fn = mod_bf_insert;
        break;
    }
    case 17:
        push_str(&b, "BF.MEXISTS");
        push_key(&b, r);
        items(&b, r);
        fn = mod_bf_mexists;
        break;
    case 18: {
        unsigned which = byte(r) % 3;
        push_str(&b, which == 0 ? "BF.INFO" : which == 1 ? "BF.CARD" : "BF.EXISTS");
        push_key(&b, r);
        if (which == 2)
            push_item(&b, r);
        fn = which == 0 ? mod_bf_info : which == 1 ? mod_bf_card : mod_bf_exists;
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
        fn = bloom ? mod_bf_loadchunk : mod_cf_loadchunk;
        break;
    }
    case 22: { /* DEL */
        drop((int)(byte(r) % NKEYS));
        return;
    }
    default: {
        unsigned v = byte(r);
        if (!(v & 0x80)) { /* RESP3 on or off, and the clock moved: on, far ahead, or back */
            static const long long steps[] = {0, 1, 3, 17, 100, 999, 40000, 1LL << 40, -5, -1000};
            ctx.flags = v & 1 ? REDISMODULE_CTX_FLAGS_RESP3 : 0;
            stub_clock_ms += steps[(v >> 1) % 10];
            return;
        }
        if (v & 0x40) { /* CF.AT / BF.AT key ms (a write | SWEEP budget | LIMIT bytes | GROW settings), as a master
                         * sends them */
            bool bloom = v & 1;
            push_str(&b, bloom ? "BF.AT" : "CF.AT");
            push_key(&b, r);
            push_num(&b, stub_clock_ms - (long long)(byte(r) % 3) * 500);
            unsigned what = byte(r) % 4;
            if (what == 0 && (v & 2)) { /* the limit for the key's next LOADCHUNK header */
                push_str(&b, "LIMIT");
                push_num(&b, byte(r) % 3 ? (long long)byte(r) << 10 : 0);
            } else if (what == 3 && (v & 2)) { /* the settings of a RedisBloom-format key's next growth */
                static const char *const rates[] = {"0.01", "0.5", "1", "x"};
                push_str(&b, "GROW");
                push_num(&b, (long long)byte(r) - 1);
                push_num(&b, (long long)byte(r) << 12);
                if (!bloom || (v & 4)) { /* a Bloom one with a cuckoo one's arguments: refused */
                    push_num(&b, byte(r) % 70);
                    push_str(&b, rates[byte(r) % 4]);
                }
            } else if (what == 0) {
                push_str(&b, "SWEEP");
                push_num(&b, byte(r) % 3 ? (long long)byte(r) : 1LL << 40);
            } else {
                push_str(&b, bloom ? (what == 1 ? "BF.ADD" : "BF.MADD") : (what == 1 ? "CF.ADD" : "CF.DEL"));
                push_item(&b, r);
            }
            int flags = ctx.flags;
            ctx.flags |= REDISMODULE_CTX_FLAGS_REPLICATED;
            call(bloom ? mod_bf_at : mod_cf_at, b.a, b.n);
            ctx.flags = flags;
            release(&b);
            return;
        }
        /* CF.MERGE / BF.MERGE destkey numkeys sourcekey...: numkeys sometimes not the count given */
        bool bloom = v & 1;
        push_str(&b, bloom ? "BF.MERGE" : "CF.MERGE");
        push_key(&b, r);
        unsigned n = 1 + byte(r) % 3, say = byte(r);
        push_num(&b, say >= 240 ? (long long)(say % 5) - 1 : (long long)n);
        for (unsigned k = 0; k < n; k++)
            push_key(&b, r);
        fn = bloom ? mod_bf_merge : mod_cf_merge;
        break;
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
    stubs_install();
    reader r = {data, size};
    /* limits small enough that fuzzing never allocates much, and often meets them */
    unsigned limits = byte(&r);
    static const uint64_t memory[] = {UINT64_C(1) << 20, 4096, 65536, UINT64_C(8) << 20};
    mod_cfg.max_memory = memory[limits & 3];
    mod_cfg.max_capacity = (limits & 4) ? 100000 : 1000;
    mod_cfg.cf_max_expansions = 1 + (limits >> 3) % 8;
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
    if (!stubs_chunk_buffers_idle())
        stub_die("a chunk buffer was not freed");
    return 0;
}
