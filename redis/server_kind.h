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

#endif
