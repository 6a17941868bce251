/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's Redis 8 decision from INFO server fields (redis/server_kind.c): Valkey, which reports its own
 * version to RedisModule_GetServerVersion (8.0.1 as 0x00080001), is never taken for Redis 8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server_kind.h"

/* What the servers report (INFO server): Redis has no server_name field up to 8; Valkey names itself from
 * 7.2.5 on and keeps redis_version at 7.2.4, its compatibility version. */
static void test_servers_as_they_report(void **state)
{
    (void)state;
    assert_false(mod_server_is_redis8(NULL, "7.0.15"));      /* Debian 12's redis-server */
    assert_false(mod_server_is_redis8(NULL, "7.4.1"));
    assert_true(mod_server_is_redis8(NULL, "8.0.0"));        /* Redis 8 */
    assert_true(mod_server_is_redis8(NULL, "8.2.1"));
    assert_true(mod_server_is_redis8(NULL, "255.255.255")); /* Redis built from its unstable branch */
    assert_false(mod_server_is_redis8("valkey", "7.2.4"));  /* Valkey 7.2.5 .. 9.x */
    assert_false(mod_server_is_redis8(NULL, "7.2.4"));      /* Valkey 7.2.4, before server_name */
}

/* A server that names itself otherwise is not Redis, whatever redis_version says; one naming itself "redis"
 * is decided by its version as Redis is. */
static void test_the_name_decides_first(void **state)
{
    (void)state;
    assert_false(mod_server_is_redis8("valkey", "8.0.1"));
    assert_false(mod_server_is_redis8("valkey", "9.0.0"));
    assert_false(mod_server_is_redis8("Redis", "8.0.0"));
    assert_false(mod_server_is_redis8("", "8.0.0"));
    assert_true(mod_server_is_redis8("redis", "8.0.0"));
    assert_false(mod_server_is_redis8("redis", "7.2.4"));
}

/* Versions read by their major number, digit by digit: two-digit majors, and nothing that is not a version. */
static void test_versions(void **state)
{
    (void)state;
    assert_true(mod_server_is_redis8(NULL, "10.0.0"));
    assert_true(mod_server_is_redis8(NULL, "8"));
    assert_true(mod_server_is_redis8(NULL, "99999999999999999999999.0")); /* no wrap */
    assert_false(mod_server_is_redis8(NULL, "07.2.0"));
    assert_false(mod_server_is_redis8(NULL, "6.2.14"));
    assert_false(mod_server_is_redis8(NULL, "1.0"));
    assert_false(mod_server_is_redis8(NULL, "0.8"));
    assert_false(mod_server_is_redis8(NULL, ""));
    assert_false(mod_server_is_redis8(NULL, "v8.0.0"));
    assert_false(mod_server_is_redis8(NULL, NULL));
}

/* The traits of the five servers the suite runs on, as their INFO server fields read. */
static void test_traits_of_the_tested_servers(void **state)
{
    (void)state;
    const unsigned io = MOD_OPTIONS_HANDLE_IO_ERRORS | MOD_OPTIONS_HANDLE_REPL_ASYNC_LOAD;
    const unsigned asm_ = MOD_OPTIONS_VALKEY_ATOMIC_SLOT_MIGRATION;
    mod_server_traits t = mod_server_traits_of(NULL, "7.0.15", NULL);
    assert_int_equal(t.module_options, io);
    assert_int_equal(t.value_record_bytes, 32);
    t = mod_server_traits_of(NULL, "8.0.6", NULL);
    assert_int_equal(t.module_options, io);
    assert_int_equal(t.value_record_bytes, 32);
    t = mod_server_traits_of(NULL, "8.6.3", NULL);
    assert_int_equal(t.module_options, io);
    assert_int_equal(t.value_record_bytes, 16);
    t = mod_server_traits_of("valkey", "7.2.4", "8.0.1");
    assert_int_equal(t.module_options, io);
    assert_int_equal(t.value_record_bytes, 32);
    t = mod_server_traits_of("valkey", "7.2.4", "9.1.2");
    assert_int_equal(t.module_options, io | asm_);
    assert_int_equal(t.value_record_bytes, 16);
}

/* Bit 5 is Valkey's alone: never set on Redis, whatever its version says; versions read by major and minor. */
static void test_traits_edges(void **state)
{
    (void)state;
    const unsigned asm_ = MOD_OPTIONS_VALKEY_ATOMIC_SLOT_MIGRATION;
    assert_false(mod_server_traits_of(NULL, "9.1.2", NULL).module_options & asm_);
    assert_false(mod_server_traits_of("redis", "99.0.0", "9.1.2").module_options & asm_);
    assert_false(mod_server_traits_of("valkey", "7.2.4", NULL).module_options & asm_); /* no valkey_version */
    assert_false(mod_server_traits_of("valkey", "7.2.4", "8.1.4").module_options & asm_);
    assert_true(mod_server_traits_of("valkey", "7.2.4", "9.0.0").module_options & asm_);
    assert_true(mod_server_traits_of("valkey", "7.2.4", "10").module_options & asm_);
    assert_false(mod_server_traits_of("other", "8.6.3", "9.1.2").module_options & asm_);
    assert_int_equal(mod_server_traits_of("other", "8.6.3", "9.1.2").value_record_bytes, 32);
    assert_int_equal(mod_server_traits_of(NULL, "8.1.9", NULL).value_record_bytes, 32);
    assert_int_equal(mod_server_traits_of(NULL, "8.2.0", NULL).value_record_bytes, 16);
    assert_int_equal(mod_server_traits_of(NULL, "8", NULL).value_record_bytes, 32);
    assert_int_equal(mod_server_traits_of(NULL, "99999999999999999999.0", NULL).value_record_bytes, 16);
    assert_int_equal(mod_server_traits_of(NULL, "v8.6", NULL).value_record_bytes, 32);
    assert_int_equal(mod_server_traits_of(NULL, NULL, NULL).value_record_bytes, 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_servers_as_they_report),
        cmocka_unit_test(test_the_name_decides_first),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_traits_of_the_tested_servers),
        cmocka_unit_test(test_traits_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
