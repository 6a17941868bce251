/* SPDX-License-Identifier: BSD-3-Clause */
/* Which naming of module configs a server takes, decided from what the server says it is (its INFO server
 * fields), never from a version number alone: Valkey reports its own version (8.0.1 as 0x00080001) to
 * RedisModule_GetServerVersion but refuses Redis 8's REDISMODULE_CONFIG_UNPREFIXED. Pure: no module API. */
#ifndef NIDUS_REDIS_SERVER_KIND_H
#define NIDUS_REDIS_SERVER_KIND_H

#include <stdbool.h>

/* True when the server is Redis 8 or later: no `server_name` field or `server_name:redis`, and a
 * `redis_version` of major 8 or more. NULL stands for an absent field; Valkey (server_name:valkey, whose
 * redis_version stays at 7.2.x) and any other server answer false. */
bool mod_server_is_redis8(const char *server_name, const char *redis_version);

/* RedisModule_SetModuleOptions flags (the same bits in Redis's and Valkey's headers, but for the last). */
#define MOD_OPTIONS_HANDLE_IO_ERRORS (1u << 0)       /* loaders report errors: diskless loads may be aborted */
#define MOD_OPTIONS_HANDLE_REPL_ASYNC_LOAD (1u << 2) /* reads may be served while a replica loads a sync */
#define MOD_OPTIONS_VALKEY_ATOMIC_SLOT_MIGRATION (1u << 5) /* Valkey >= 9.0 only: CLUSTER MIGRATESLOTS */

/* What the module adapts to in the server it loads into, decided once at load. */
typedef struct mod_server_traits {
    unsigned module_options; /* MOD_OPTIONS_* for RedisModule_SetModuleOptions */
    /* What a filter key's MEMORY USAGE adds to the filter's own bytes for the server's records of it: the
     * module-value record (16 bytes), and the key's object (16 more) on servers that leave the object out of
     * a module key's MEMORY USAGE (Redis 7.0 and 8.0.6, Valkey 8.0.1); Redis 8.6.3 and Valkey 9.1.2 count the
     * object's allocation themselves. Versions between are taken with the release line that changed the
     * key's object (Redis 8.2, Valkey 9.0): 16 bytes off at worst. */
    unsigned value_record_bytes;
} mod_server_traits;

/* The traits of a server from its INFO server fields (NULL: absent): server_name ("valkey" on Valkey >= 7.2.5,
 * absent on Redis), redis_version, and valkey_version (Valkey >= 7.2.5). Pure. */
mod_server_traits mod_server_traits_of(const char *server_name, const char *redis_version,
                                       const char *valkey_version);

#endif
