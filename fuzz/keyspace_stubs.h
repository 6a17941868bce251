/* SPDX-License-Identifier: BSD-3-Clause */
/* The stubbed module API of fuzz_commands (keyspace_stubs.c): what the harness sees of the keyspace, the replies
 * and the IO. Installing the stubs registers the module's two types against them. */
#ifndef NIDUS_FUZZ_KEYSPACE_STUBS_H
#define NIDUS_FUZZ_KEYSPACE_STUBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "module_api.h"

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

typedef struct stub_slot {
    RedisModuleType *type; /* the methods table: the stub's CreateDataType returns it */
    void *value;           /* NULL: the key is empty */
} stub_slot;

/* Keys "k0".."k4" (k4 is SCRATCH); opening any other name aborts. */
extern stub_slot db[NKEYS + 1];
extern int open_keys; /* opened and not yet closed */
/* What RedisModule_Milliseconds returns: the clock of windowed keys' writes and lookups, moved by the program. */
extern long long stub_clock_ms;

/* The shape of the current command's reply, and what SCANDUMP's reply carried. */
typedef struct stub_reply {
    long want[32], got[32]; /* elements announced (-1: a postponed length) and given, per open array */
    int depth;              /* arrays open */
    int top;                /* complete top-level replies */
    long long last_ll;      /* the last integer (SCANDUMP's iterator) */
    uint8_t *last_str;      /* the last bulk string (SCANDUMP's chunk), NULL after a null reply */
    size_t last_len;
    bool last_error;        /* an error was replied */
    bool ok;                /* the last simple string was OK */
} stub_reply;
extern stub_reply reply;

static inline RedisModuleTypeMethods *methods_of(RedisModuleType *t) { return (RedisModuleTypeMethods *)t; }

/* Prints what broke and aborts (a crash for libFuzzer). */
_Noreturn void stub_die(const char *what);

/* Frees the value of a slot and empties it. */
void drop(int slot);

/* A RedisModuleString owning a copy of the bytes (free its .p). */
RedisModuleString string_of(const void *p, size_t n);

/* False while the module holds one of the pooled chunk buffers (see s_alloc). */
bool stubs_chunk_buffers_idle(void);

/* Points the module API at the stubs and registers the types; idempotent. */
void stubs_install(void);

#endif
