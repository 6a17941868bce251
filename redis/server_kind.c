/* SPDX-License-Identifier: BSD-3-Clause */
/* The Redis 8 decision (see server_kind.h). */
#include "server_kind.h"

#include <string.h>

bool mod_server_is_redis8(const char *server_name, const char *redis_version)
{
    /* Valkey >= 7.2.5 says server_name:valkey; Redis up to 8 says nothing. A fork that names itself is not Redis. */
    if (server_name && strcmp(server_name, "redis") != 0)
        return false;
    if (!redis_version || *redis_version < '0' || *redis_version > '9')
        return false;
    unsigned major = 0;
    for (const char *p = redis_version; *p >= '0' && *p <= '9'; p++) {
        major = major * 10 + (unsigned)(*p - '0');
        if (major >= 8)
            return true; /* also stops before a long run of digits could wrap */
    }
    return false;
}
