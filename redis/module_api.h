/* SPDX-License-Identifier: BSD-3-Clause */
/* Our declarations of the Redis module API: the subset nidus.so uses, written from the documented ABI of
 * Redis 7.0 (src/redismodule.h), not copied from it.
 *
 * The ABI: a module exports RedisModule_OnLoad; the first pointer-sized field of the context it receives is
 * RedisModule_GetApi, which returns each API function by its name ("RedisModule_OpenKey", ...). We keep the
 * functions in pointers named after them, so the code reads like any Redis module. */
#ifndef NIDUS_REDIS_MODULE_API_H
#define NIDUS_REDIS_MODULE_API_H

#include <stddef.h>
#include <stdint.h>

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1

#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_MODULE 6

#define REDISMODULE_POSTPONED_LEN (-1L)

/* RedisModule_GetContextFlags */
#define REDISMODULE_CTX_FLAGS_LUA (1 << 0)         /* inside a script */
#define REDISMODULE_CTX_FLAGS_MULTI (1 << 1)       /* inside MULTI / EXEC */
#define REDISMODULE_CTX_FLAGS_SLAVE (1 << 3)       /* this server is a replica */
#define REDISMODULE_CTX_FLAGS_REPLICATED (1 << 12) /* the command came from the master (or a slot migration) */
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13) /* the server is loading its RDB or AOF, or a full sync */
#define REDISMODULE_CTX_FLAGS_DENY_BLOCKING (1 << 21) /* the client may not be blocked (Redis 6.2) */
#define REDISMODULE_CTX_FLAGS_RESP3 (1 << 22)
#define REDISMODULE_CTX_FLAGS_ASYNC_LOADING (1 << 23) /* a replica loads a sync while serving reads (swapdb) */

/* RedisModule_SetModuleOptions: loading functions report errors instead of aborting the server. */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)

#define REDISMODULE_ERRORMSG_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"

/* Version 3 of the type methods: up to copy and defrag (Redis 6.2 and later read it). */
#define MOD_TYPE_METHOD_VERSION 3

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;
typedef struct RedisModuleBlockedClient RedisModuleBlockedClient;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef void (*RedisModuleInfoFunc)(RedisModuleInfoCtx *ctx, int for_crash_report);
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;

typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleDict RedisModuleDict;
typedef struct RedisModuleDictIter RedisModuleDictIter;

/* Keyspace events a module may subscribe to (RedisModule_SubscribeToKeyspaceEvents). */
#define REDISMODULE_NOTIFY_GENERIC (1 << 2) /* DEL, RENAME, MOVE, COPY, RESTORE, ... */
#define REDISMODULE_NOTIFY_LOADED (1 << 12) /* a key loaded from an RDB (or a full sync) */
typedef int (*RedisModuleNotificationFunc)(RedisModuleCtx *ctx, int type, const char *event,
                                           RedisModuleString *key);

/* Server events (RedisModule_SubscribeToServerEvent): SWAPDB, with the two databases it swapped, and loads. */
typedef struct RedisModuleEvent {
    uint64_t id;
    uint64_t dataver;
} RedisModuleEvent;
#define REDISMODULE_EVENT_SWAPDB 11
#define REDISMODULE_EVENT_LOADING 3 /* a load of the RDB, the AOF or a full sync; its end: */
#define REDISMODULE_SUBEVENT_LOADING_ENDED 3
#define REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED 0 /* this server became a master, or a replica: */
#define REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER 0
typedef struct RedisModuleSwapDbInfo {
    uint64_t version; /* 1 */
    int32_t dbnum_first;
    int32_t dbnum_second;
} RedisModuleSwapDbInfo;
typedef void (*RedisModuleEventCallback)(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t subevent, void *data);

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef void (*RedisModuleTimerProc)(RedisModuleCtx *ctx, void *data);

typedef uint64_t RedisModuleTimerID;

/* Command information (RedisModule_SetCommandInfo, Redis 7.0): the server walks the arrays below with the
 * element sizes given in RedisModuleCommandInfoVersion, so a newer server reads what it knows of ours. */
typedef enum {
    REDISMODULE_ARG_TYPE_STRING,
    REDISMODULE_ARG_TYPE_INTEGER,
    REDISMODULE_ARG_TYPE_DOUBLE,
    REDISMODULE_ARG_TYPE_KEY,
    REDISMODULE_ARG_TYPE_PATTERN,
    REDISMODULE_ARG_TYPE_UNIX_TIME,
    REDISMODULE_ARG_TYPE_PURE_TOKEN,
    REDISMODULE_ARG_TYPE_ONEOF,
    REDISMODULE_ARG_TYPE_BLOCK,
} RedisModuleCommandArgType;

#define REDISMODULE_CMD_ARG_OPTIONAL (1 << 0)
#define REDISMODULE_CMD_ARG_MULTIPLE (1 << 1)

typedef enum {
    REDISMODULE_KSPEC_BS_INVALID,
    REDISMODULE_KSPEC_BS_UNKNOWN,
    REDISMODULE_KSPEC_BS_INDEX,
} RedisModuleKeySpecBeginSearchType;
typedef enum {
    REDISMODULE_KSPEC_FK_OMITTED,
    REDISMODULE_KSPEC_FK_UNKNOWN,
    REDISMODULE_KSPEC_FK_RANGE,
    REDISMODULE_KSPEC_FK_KEYNUM,
} RedisModuleKeySpecFindKeysType;

#define REDISMODULE_CMD_KEY_RO (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW (1ULL << 1)

typedef struct RedisModuleCommandArg {
    const char *name;
    RedisModuleCommandArgType type;
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags;
    const char *deprecated_since;
    struct RedisModuleCommandArg *subargs;
    const char *display_text; /* Redis 7.2; an older server steps over it */
} RedisModuleCommandArg;

typedef struct RedisModuleCommandHistoryEntry {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;

typedef struct RedisModuleCommandKeySpec {
    const char *notes;
    uint64_t flags;
    RedisModuleKeySpecBeginSearchType begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    RedisModuleKeySpecFindKeysType find_keys_type;
    union {
        struct {
            int lastkey, keystep, limit;
        } range;
        struct {
            int keynumidx, firstkey, keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;

typedef struct RedisModuleCommandInfoVersion {
    int version; /* 1 */
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;

typedef struct RedisModuleCommandInfo {
    const RedisModuleCommandInfoVersion *version;
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history;
    const char *tips;
    int arity;
    RedisModuleCommandKeySpec *key_specs;
    RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

/* Module configs (Redis 7.0). Redis 8 also takes UNPREFIXED: the name without "module." before it (Valkey
 * refuses it; see server_kind.h). */
#define REDISMODULE_CONFIG_DEFAULT 0
#define REDISMODULE_CONFIG_UNPREFIXED (1U << 9)
typedef RedisModuleString *(*RedisModuleConfigGetStringFunc)(const char *name, void *privdata);
typedef int (*RedisModuleConfigSetStringFunc)(const char *name, RedisModuleString *val, void *privdata,
                                              RedisModuleString **err);
typedef int (*RedisModuleConfigApplyFunc)(RedisModuleCtx *ctx, void *privdata, RedisModuleString **err);

typedef struct RedisModuleTypeMethods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key, void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
    /* version 2 */
    int (*aux_load)(RedisModuleIO *rdb, int encver, int when);
    void (*aux_save)(RedisModuleIO *rdb, int when);
    int aux_save_triggers;
    /* version 3 */
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value);
    int (*defrag)(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
} RedisModuleTypeMethods;

/* The API functions, fetched by name at load time. X(return type, name, parameters) */
#define MOD_REDIS_API(X)                                                                                    \
    X(int, CreateCommand, (RedisModuleCtx *, const char *, RedisModuleCmdFunc, const char *, int, int, int))  \
    X(void, SetModuleAttribs, (RedisModuleCtx *, const char *, int, int))                                     \
    X(int, IsModuleNameBusy, (const char *))                                                                  \
    X(void, SetModuleOptions, (RedisModuleCtx *, int))                                                        \
    X(int, GetContextFlags, (RedisModuleCtx *))                                                               \
    X(int, WrongArity, (RedisModuleCtx *))                                                                    \
    X(int, ReplyWithLongLong, (RedisModuleCtx *, long long))                                                  \
    X(int, ReplyWithDouble, (RedisModuleCtx *, double))                                                       \
    X(int, ReplyWithBool, (RedisModuleCtx *, int))                                                            \
    X(int, ReplyWithError, (RedisModuleCtx *, const char *))                                                  \
    X(int, ReplyWithSimpleString, (RedisModuleCtx *, const char *))                                           \
    X(int, ReplyWithArray, (RedisModuleCtx *, long))                                                          \
    X(int, ReplyWithMap, (RedisModuleCtx *, long))                                                            \
    X(void, ReplySetArrayLength, (RedisModuleCtx *, long))                                                    \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx *, const char *, size_t))                                   \
    X(int, ReplyWithNull, (RedisModuleCtx *))                                                                 \
    X(void *, OpenKey, (RedisModuleCtx *, RedisModuleString *, int))                                          \
    X(void, CloseKey, (RedisModuleKey *))                                                                     \
    X(int, KeyType, (RedisModuleKey *))                                                                       \
    X(int, DeleteKey, (RedisModuleKey *))                                                                     \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey *))                                               \
    X(void *, ModuleTypeGetValue, (RedisModuleKey *))                                                         \
    X(int, ModuleTypeSetValue, (RedisModuleKey *, RedisModuleType *, void *))                                 \
    X(int, ModuleTypeReplaceValue, (RedisModuleKey *, RedisModuleType *, void *, void **))                     \
    X(RedisModuleType *, CreateDataType, (RedisModuleCtx *, const char *, int, RedisModuleTypeMethods *))     \
    X(const char *, StringPtrLen, (const RedisModuleString *, size_t *))                                      \
    X(int, StringToLongLong, (const RedisModuleString *, long long *))                                        \
    X(int, StringToDouble, (const RedisModuleString *, double *))                                             \
    X(int, StringCompare, (const RedisModuleString *, const RedisModuleString *))                             \
    X(int, ReplicateVerbatim, (RedisModuleCtx *))                                                             \
    X(int, Replicate, (RedisModuleCtx *, const char *, const char *, ...))                                    \
    X(RedisModuleTimerID, CreateTimer, (RedisModuleCtx *, long long, RedisModuleTimerProc, void *))          \
    X(int, SelectDb, (RedisModuleCtx *, int))                                                                 \
    X(int, GetSelectedDb, (RedisModuleCtx *))                                                                 \
    X(int, IsKeysPositionRequest, (RedisModuleCtx *))                                                         \
    X(void, KeyAtPos, (RedisModuleCtx *, int))                                                                \
    X(void *, Alloc, (size_t))                                                                                \
    X(void *, Calloc, (size_t, size_t))                                                                       \
    X(void *, Realloc, (void *, size_t))                                                                      \
    X(void, Free, (void *))                                                                                   \
    X(void, SaveUnsigned, (RedisModuleIO *, uint64_t))                                                        \
    X(uint64_t, LoadUnsigned, (RedisModuleIO *))                                                              \
    X(void, SaveDouble, (RedisModuleIO *, double))                                                            \
    X(double, LoadDouble, (RedisModuleIO *))                                                                  \
    X(void, SaveStringBuffer, (RedisModuleIO *, const char *, size_t))                                        \
    X(char *, LoadStringBuffer, (RedisModuleIO *, size_t *))                                                  \
    X(int, IsIOError, (RedisModuleIO *))                                                                      \
    X(void, EmitAOF, (RedisModuleIO *, const char *, const char *, ...))                                      \
    X(void, DigestAddStringBuffer, (RedisModuleDigest *, const char *, size_t))                               \
    X(void, DigestEndSequence, (RedisModuleDigest *))                                                         \
    X(void, Log, (RedisModuleCtx *, const char *, const char *, ...))                                         \
    X(void, LogIOError, (RedisModuleIO *, const char *, const char *, ...))                                   \
    X(RedisModuleString *, CreateString, (RedisModuleCtx *, const char *, size_t))                            \
    X(void, FreeString, (RedisModuleCtx *, RedisModuleString *))                                             \
    X(long long, Milliseconds, (void))                                                                        \
    X(RedisModuleDict *, CreateDict, (RedisModuleCtx *))                                                      \
    X(int, DictReplaceC, (RedisModuleDict *, void *, size_t, void *))                                         \
    X(void *, DictGetC, (RedisModuleDict *, void *, size_t, int *))                                           \
    X(int, DictDelC, (RedisModuleDict *, void *, size_t, void *))                                             \
    X(uint64_t, DictSize, (RedisModuleDict *))                                                                \
    X(RedisModuleDictIter *, DictIteratorStartC, (RedisModuleDict *, const char *, void *, size_t))          \
    X(void *, DictNextC, (RedisModuleDictIter *, size_t *, void **))                                          \
    X(void, DictIteratorStop, (RedisModuleDictIter *))                                                        \
    X(int, SubscribeToKeyspaceEvents, (RedisModuleCtx *, int, RedisModuleNotificationFunc))                    \
    X(int, SubscribeToServerEvent, (RedisModuleCtx *, RedisModuleEvent, RedisModuleEventCallback))            \
    X(RedisModuleBlockedClient *, BlockClient,                                                                \
      (RedisModuleCtx *, RedisModuleCmdFunc, RedisModuleCmdFunc, void (*)(RedisModuleCtx *, void *), long long)) \
    X(RedisModuleBlockedClient *, BlockClientOnKeys,                                                          \
      (RedisModuleCtx *, RedisModuleCmdFunc, RedisModuleCmdFunc, void (*)(RedisModuleCtx *, void *), long long, \
       RedisModuleString **, int, void *))                                                                    \
    X(int, UnblockClient, (RedisModuleBlockedClient *, void *))                                               \
    X(void *, GetBlockedClientPrivateData, (RedisModuleCtx *))                                                \
    X(void, SignalKeyAsReady, (RedisModuleCtx *, RedisModuleString *))

/* Functions a server may lack: fetched when present, NULL otherwise; each use checks. */
#define MOD_REDIS_API_OPTIONAL(X)                                                                           \
    X(RedisModuleServerInfoData *, GetServerInfo, (RedisModuleCtx *, const char *))                           \
    X(const char *, ServerInfoGetFieldC, (RedisModuleServerInfoData *, const char *))                         \
    X(void, FreeServerInfo, (RedisModuleCtx *, RedisModuleServerInfoData *))                                  \
    X(RedisModuleCommand *, GetCommand, (RedisModuleCtx *, const char *))                                     \
    X(int, SetCommandInfo, (RedisModuleCommand *, const RedisModuleCommandInfo *))                            \
    X(int, RegisterStringConfig, (RedisModuleCtx *, const char *, const char *, unsigned int,                 \
                                  RedisModuleConfigGetStringFunc, RedisModuleConfigSetStringFunc,             \
                                  RedisModuleConfigApplyFunc, void *))                                        \
    X(int, LoadConfigs, (RedisModuleCtx *))                                                                  \
    X(int, AddACLCategory, (RedisModuleCtx *, const char *))                                                  \
    X(int, SetCommandACLCategories, (RedisModuleCommand *, const char *))                                        \
    X(void *, DefragAlloc, (RedisModuleDefragCtx *, void *))                                                  \
    X(int, DefragShouldStop, (RedisModuleDefragCtx *))                                                        \
    X(int, DefragCursorSet, (RedisModuleDefragCtx *, unsigned long))                                          \
    X(int, DefragCursorGet, (RedisModuleDefragCtx *, unsigned long *))                                        \
    X(const RedisModuleString *, GetKeyNameFromIO, (RedisModuleIO *))                                         \
    X(int, GetDbIdFromIO, (RedisModuleIO *))                                                                  \
    X(int, RegisterInfoFunc, (RedisModuleCtx *, RedisModuleInfoFunc))                                         \
    X(int, InfoAddSection, (RedisModuleInfoCtx *, const char *))                                              \
    X(int, InfoAddFieldULongLong, (RedisModuleInfoCtx *, const char *, unsigned long long))

#define MOD_DECLARE_API(ret, name, params) extern ret(*RedisModule_##name) params;
MOD_REDIS_API(MOD_DECLARE_API)
MOD_REDIS_API_OPTIONAL(MOD_DECLARE_API)
#undef MOD_DECLARE_API

/* Fetches every function above through the context's RedisModule_GetApi, refuses a taken module name, and
 * registers the module: what redismodule.h's RedisModule_Init does. REDISMODULE_ERR when a function of
 * MOD_REDIS_API is missing; those of MOD_REDIS_API_OPTIONAL may be NULL. */
int mod_redis_init(RedisModuleCtx *ctx, const char *name, int version);

#endif
