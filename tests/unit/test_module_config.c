/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's config registration (redis/config.c) against stubbed servers that report INFO server fields
 * as Redis 7, Valkey and Redis 8 do: the names and flags each gets, and the fallback when a server refuses
 * the unprefixed flag. No Redis 8 runs here; this is where its path runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"

struct RedisModuleString {
    size_t len;
    char text[];
};

/* The stub server: the INFO fields it reports, whether it refuses the unprefixed flag, what it was asked. */
static struct {
    const char *server_name;   /* NULL: no such field */
    const char *redis_version;
    bool refuses_unprefixed;   /* Valkey's "Invalid flag(s) for configuration" */
    unsigned registered;
    char names[16][32];
    unsigned flags[16];
    unsigned refused;
    unsigned warnings;
    unsigned info_open;        /* GetServerInfo without FreeServerInfo */
} srv;

static RedisModuleString *stub_create_string(RedisModuleCtx *ctx, const char *p, size_t len)
{
    (void)ctx;
    RedisModuleString *s = malloc(sizeof *s + len + 1);
    assert_non_null(s);
    s->len = len;
    memcpy(s->text, p, len);
    s->text[len] = '\0';
    return s;
}

static void stub_free_string(RedisModuleCtx *ctx, RedisModuleString *s)
{
    (void)ctx;
    free(s);
}

static const char *stub_string_ptr_len(const RedisModuleString *s, size_t *len)
{
    if (len)
        *len = s->len;
    return s->text;
}

static int stub_register(RedisModuleCtx *ctx, const char *name, const char *initial, unsigned flags,
                         RedisModuleConfigGetStringFunc get, RedisModuleConfigSetStringFunc set,
                         RedisModuleConfigApplyFunc apply, void *privdata)
{
    (void)ctx, (void)initial, (void)get, (void)set, (void)apply, (void)privdata;
    if ((flags & REDISMODULE_CONFIG_UNPREFIXED) && srv.refuses_unprefixed) {
        srv.refused++;
        return REDISMODULE_ERR;
    }
    assert_true(srv.registered < 16);
    snprintf(srv.names[srv.registered], sizeof srv.names[0], "%s", name);
    srv.flags[srv.registered++] = flags;
    return REDISMODULE_OK;
}

static int stub_load_configs(RedisModuleCtx *ctx)
{
    (void)ctx;
    return REDISMODULE_OK;
}

static RedisModuleServerInfoData *stub_get_info(RedisModuleCtx *ctx, const char *section)
{
    (void)ctx;
    assert_string_equal(section, "server");
    srv.info_open++;
    return (RedisModuleServerInfoData *)&srv;
}

static const char *stub_info_field(RedisModuleServerInfoData *data, const char *field)
{
    assert_ptr_equal(data, &srv);
    if (strcmp(field, "server_name") == 0)
        return srv.server_name;
    if (strcmp(field, "redis_version") == 0)
        return srv.redis_version;
    return NULL;
}

static void stub_free_info(RedisModuleCtx *ctx, RedisModuleServerInfoData *data)
{
    (void)ctx;
    assert_ptr_equal(data, &srv);
    srv.info_open--;
}

static void stub_log(RedisModuleCtx *ctx, const char *level, const char *fmt, ...)
{
    (void)ctx, (void)fmt;
    if (strcmp(level, "warning") == 0)
        srv.warnings++;
}

static const char *const redisbloom[] = {"bf-error-rate",     "bf-initial-size",     "bf-expansion-factor",
                                         "cf-bucket-size",    "cf-initial-size",     "cf-max-iterations",
                                         "cf-expansion-factor", "cf-max-expansions"};
static const char *const own[] = {"cf-error-rate", "max-capacity", "max-filter-memory", "cf-compact-interval",
                                  "merge-inline-bytes"};

/* Loads the module's settings into a stub server reporting these fields; returns mod_config_register's status. */
static int load(const char *server_name, const char *redis_version, bool refuses_unprefixed, bool has_info)
{
    memset(&srv, 0, sizeof srv);
    srv.server_name = server_name;
    srv.redis_version = redis_version;
    srv.refuses_unprefixed = refuses_unprefixed;
    RedisModule_CreateString = stub_create_string;
    RedisModule_FreeString = stub_free_string;
    RedisModule_StringPtrLen = stub_string_ptr_len;
    RedisModule_RegisterStringConfig = stub_register;
    RedisModule_LoadConfigs = stub_load_configs;
    RedisModule_GetServerInfo = has_info ? stub_get_info : NULL;
    RedisModule_ServerInfoGetFieldC = has_info ? stub_info_field : NULL;
    RedisModule_FreeServerInfo = has_info ? stub_free_info : NULL;
    RedisModule_Log = stub_log;
    assert_int_equal(mod_config_load_args(NULL, NULL, 0), REDISMODULE_OK);
    int status = mod_config_register(NULL);
    assert_int_equal(srv.info_open, 0);
    return status;
}

static unsigned flags_of(const char *name)
{
    for (unsigned i = 0; i < srv.registered; i++)
        if (strcmp(srv.names[i], name) == 0)
            return srv.flags[i];
    fail_msg("%s was not registered", name);
    return 0;
}

/* Every setting registered once, all with the module's prefix (no UNPREFIXED flag). */
static void assert_all_prefixed(void)
{
    assert_int_equal(srv.registered, 8 + sizeof own / sizeof *own);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(flags_of(redisbloom[i]), REDISMODULE_CONFIG_DEFAULT);
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        assert_int_equal(flags_of(own[i]), REDISMODULE_CONFIG_DEFAULT);
}

static void test_redis7_gets_prefixed_names(void **state)
{
    (void)state;
    assert_int_equal(load(NULL, "7.0.15", false, true), REDISMODULE_OK);
    assert_all_prefixed();
    assert_int_equal(srv.warnings, 0);
}

/* Valkey 8.0.1 as it reports itself; it refuses the flag, and is never asked with it (no warning in its log). */
static void test_valkey_is_never_asked_for_unprefixed_names(void **state)
{
    (void)state;
    assert_int_equal(load("valkey", "7.2.4", true, true), REDISMODULE_OK);
    assert_all_prefixed();
    assert_int_equal(srv.refused, 0);
    assert_int_equal(srv.warnings, 0);
}

static void test_redis8_gets_redisbloom_names_unprefixed(void **state)
{
    (void)state;
    assert_int_equal(load(NULL, "8.0.0", false, true), REDISMODULE_OK);
    assert_int_equal(srv.registered, 8 + sizeof own / sizeof *own);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(flags_of(redisbloom[i]), REDISMODULE_CONFIG_UNPREFIXED);
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        assert_int_equal(flags_of(own[i]), REDISMODULE_CONFIG_DEFAULT);
    assert_int_equal(srv.warnings, 0);
}

/* A server that looks like Redis 8 and refuses the flag: one refusal, a warning, every name prefixed, loaded. */
static void test_a_refused_flag_falls_back_to_prefixed_names(void **state)
{
    (void)state;
    assert_int_equal(load(NULL, "8.0.0", true, true), REDISMODULE_OK);
    assert_all_prefixed();
    assert_int_equal(srv.refused, 1);
    assert_int_equal(srv.warnings, 1);
}

/* A server without GetServerInfo cannot say it is Redis 8: prefixed names. */
static void test_no_server_info_means_prefixed(void **state)
{
    (void)state;
    assert_int_equal(load(NULL, "8.0.0", false, false), REDISMODULE_OK);
    assert_all_prefixed();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis7_gets_prefixed_names),
        cmocka_unit_test(test_valkey_is_never_asked_for_unprefixed_names),
        cmocka_unit_test(test_redis8_gets_redisbloom_names_unprefixed),
        cmocka_unit_test(test_a_refused_flag_falls_back_to_prefixed_names),
        cmocka_unit_test(test_no_server_info_means_prefixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
