/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the module's RDB load path (what RESTORE and a replica's full sync run), compiled as a plain
 * function: redis/types.c and friends linked in, the Redis module API replaced by stubs that read the fuzz
 * input. The input: a type byte (even: CF, odd: BF), then length-prefixed strings (u32 LE) as
 * RedisModule_LoadStringBuffer hands them out. What loads must save again to the same strings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_stubs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct RedisModuleIO {
    const uint8_t *p;
    size_t left;
    int error;
    uint8_t *saved; /* rdb_save's output, to compare */
    size_t saved_len, saved_cap;
};

static int stub_is_io_error(RedisModuleIO *io) { return io->error; }
static void stub_log_io_error(RedisModuleIO *io, const char *level, const char *fmt, ...)
{
    (void)io, (void)level, (void)fmt;
}

static char *stub_load_string(RedisModuleIO *io, size_t *len)
{
    if (io->error || io->left < 4) {
        io->error = 1;
        return NULL;
    }
    size_t n = (size_t)io->p[0] | (size_t)io->p[1] << 8 | (size_t)io->p[2] << 16 | (size_t)io->p[3] << 24;
    io->p += 4;
    io->left -= 4;
    if (n > io->left) {
        io->error = 1;
        return NULL;
    }
    char *s = malloc(n ? n : 1);
    memcpy(s, io->p, n);
    io->p += n;
    io->left -= n;
    *len = n;
    return s;
}

static void stub_save_string(RedisModuleIO *io, const char *s, size_t len)
{
    if (io->saved_len + len + 4 > io->saved_cap) {
        io->saved_cap = (io->saved_len + len + 4) * 2;
        io->saved = realloc(io->saved, io->saved_cap);
    }
    for (int b = 0; b < 4; b++)
        io->saved[io->saved_len++] = (uint8_t)(len >> (8 * b));
    memcpy(io->saved + io->saved_len, s, len);
    io->saved_len += len;
}

static void setup(void)
{
    module_stubs_setup();
    RedisModule_IsIOError = stub_is_io_error;
    RedisModule_LogIOError = stub_log_io_error;
    RedisModule_LoadStringBuffer = stub_load_string;
    RedisModule_SaveStringBuffer = stub_save_string;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 1)
        return 0;
    RedisModuleTypeMethods *m = type_methods[data[0] & 1]; /* nidus--CF, nidus--BF */
    RedisModuleIO in = {.p = data + 1, .left = size - 1};
    void *value = m->rdb_load(&in, 1);
    if (!value)
        return 0;
    /* what loaded saves back to the strings it was loaded from (the encoding is canonical), up to the
     * checksums that fuzz builds do not check */
    RedisModuleIO out = {0};
    m->rdb_save(&out, value);
    size_t consumed = size - 1 - in.left;
    if (out.saved_len != consumed)
        abort();
    m->free(value);
    free(out.saved);
    if (getenv("NIDUS_FUZZ_VERBOSE"))
        fprintf(stderr, "loaded a %s filter from %zu bytes\n", data[0] & 1 ? "bloom" : "cuckoo", size);
    return 0;
}
