/* SPDX-License-Identifier: BSD-3-Clause */
/* The Redis 8 decision and the server traits (see server_kind.h). */
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

/* The major and minor numbers of a version ("8.6.3": 8, 6); false when it does not start with digits. */
static bool major_minor(const char *version, unsigned *major, unsigned *minor)
{
    unsigned n[2] = {0, 0};
    const char *p = version;
    for (int i = 0; i < 2; i++) {
        if (!p || *p < '0' || *p > '9')
            return i > 0;
        for (; *p >= '0' && *p <= '9'; p++)
            n[i] = n[i] > 9999 ? n[i] : n[i] * 10 + (unsigned)(*p - '0'); /* saturates: no wrap */
        *major = n[0];
        *minor = n[1];
        p = *p == '.' ? p + 1 : NULL;
    }
    return true;
}

mod_server_traits mod_server_traits_of(const char *server_name, const char *redis_version,
                                       const char *valkey_version)
{
    /* every server the module runs on (Redis >= 7.0, Valkey) serves reads during a swapdb load if all modules
     * allow it: nidus keeps no state about keys outside their values, and its loaders hold no filter to a limit
     * then (mod_load_limit: ASYNC_LOADING) */
    mod_server_traits t = {MOD_OPTIONS_HANDLE_IO_ERRORS | MOD_OPTIONS_HANDLE_REPL_ASYNC_LOAD, 32};
    unsigned major = 0, minor = 0;
    if (server_name && strcmp(server_name, "valkey") == 0) {
        if (major_minor(valkey_version, &major, &minor) && major >= 9) {
            t.module_options |= MOD_OPTIONS_VALKEY_ATOMIC_SLOT_MIGRATION;
            t.value_record_bytes = 16;
        }
    } else if (!server_name || strcmp(server_name, "redis") == 0) {
        if (major_minor(redis_version, &major, &minor) && (major > 8 || (major == 8 && minor >= 2)))
            t.value_record_bytes = 16;
    }
    return t;
}
