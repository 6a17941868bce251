/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: RedisBloom's RDB encodings as the types MBbloomCF / MBbloom-- load them (what RESTORE of a
 * RedisBloom DUMP payload and a RedisBloom dump.rdb run), and our encoding of those types. Input: one byte
 * (bit 0: cuckoo or Bloom; the rest picks the encoding version 0..4 or ours, 512), then the values the loader
 * asks for in order: unsigned and double as 8 bytes LE, strings as u32 LE length + bytes. Whatever loads is
 * probed with items from the input, then saved (our encoding), which must load again and save the same. */
#include <stdint.h>
#include <stdio.h>

#include "rb/rb_bf.h"
#include "rb/rb_cf.h"
#include "module_stubs.h"
#include "rb/rb_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct RedisModuleIO {
    const uint8_t *p;
    size_t left;
    int error;
    uint8_t *out; /* what the save functions wrote, in the input's token format */
    size_t out_len, out_cap;
};

static const uint8_t *take(RedisModuleIO *io, size_t n)
{
    if (io->error || io->left < n) {
        io->error = 1;
        return NULL;
    }
    const uint8_t *p = io->p;
    io->p += n;
    io->left -= n;
    return p;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static uint64_t stub_load_unsigned(RedisModuleIO *io)
{
    const uint8_t *p = take(io, 8);
    return p ? le(p, 8) : 0;
}

static double stub_load_double(RedisModuleIO *io)
{
    uint64_t v = stub_load_unsigned(io);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static char *stub_load_string(RedisModuleIO *io, size_t *len)
{
    const uint8_t *p = take(io, 4);
    size_t n = p ? (size_t)le(p, 4) : 0;
    const uint8_t *s = p ? take(io, n) : NULL;
    if (!s)
        return NULL;
    char *out = malloc(n ? n : 1);
    memcpy(out, s, n);
    *len = n;
    return out;
}

static void put(RedisModuleIO *io, const void *b, size_t n)
{
    if (io->out_len + n > io->out_cap) {
        io->out_cap = (io->out_len + n) * 2;
        io->out = realloc(io->out, io->out_cap);
    }
    memcpy(io->out + io->out_len, b, n);
    io->out_len += n;
}

static void put_le(RedisModuleIO *io, uint64_t v, unsigned n)
{
    uint8_t b[8];
    for (unsigned i = 0; i < n; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    put(io, b, n);
}

static void stub_save_unsigned(RedisModuleIO *io, uint64_t v) { put_le(io, v, 8); }
static void stub_save_double(RedisModuleIO *io, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    put_le(io, v, 8);
}
static void stub_save_string(RedisModuleIO *io, const char *s, size_t len)
{
    put_le(io, len, 4);
    put(io, s, len);
}
static int stub_is_io_error(RedisModuleIO *io) { return io->error; }
static void stub_log_io_error(RedisModuleIO *io, const char *level, const char *fmt, ...)
{
    (void)io, (void)level, (void)fmt;
}

static void setup(void)
{
    module_stubs_setup();
    RedisModule_LoadUnsigned = stub_load_unsigned;
    RedisModule_LoadDouble = stub_load_double;
    RedisModule_LoadStringBuffer = stub_load_string;
    RedisModule_SaveUnsigned = stub_save_unsigned;
    RedisModule_SaveDouble = stub_save_double;
    RedisModule_SaveStringBuffer = stub_save_string;
    RedisModule_IsIOError = stub_is_io_error;
    RedisModule_LogIOError = stub_log_io_error;
}

/* Lookups, adds and deletes on the RedisBloom part with items cut from the input: no access outside it. */
static void exercise(rb_value *v, bool cuckoo, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
        if (cuckoo) {
            uint64_t h = rb_cf_hash(data + i, 8);
            rb_cf_contains(v->rb, h);
            rb_cf_count(v->rb, h);
            if (data[i] & 1)
                rb_cf_add(v->rb, h, true);
            else
                rb_cf_remove(v->rb, h);
        } else {
            rb_bf_hash h = rb_bf_hash_of(v->rb, data + i, 8);
            rb_bf_contains(v->rb, h);
            rb_bf_add(v->rb, h);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size < 1)
        return 0;
    bool cuckoo = !(data[0] & 1);
    int encver = (data[0] >> 1) % 6;
    encver = encver == 5 ? RB_NIDUS_ENCVER : encver;
    RedisModuleTypeMethods *m = type_methods[cuckoo ? 2 : 3];
    RedisModuleIO in = {.p = data + 1, .left = size - 1};
    rb_value *v = m->rdb_load(&in, encver);
    if (!v)
        return 0;
    exercise(v, cuckoo, data, size);
    RedisModuleIO first = {0};
    m->rdb_save(&first, v);
    m->free(v);
    /* what we saved loads again and saves to the same bytes */
    RedisModuleIO again = {.p = first.out, .left = first.out_len};
    v = m->rdb_load(&again, RB_NIDUS_ENCVER);
    if (!v || again.left)
        abort();
    RedisModuleIO second = {0};
    m->rdb_save(&second, v);
    if (second.out_len != first.out_len || memcmp(second.out, first.out, first.out_len))
        abort();
    m->free(v);
    free(first.out);
    free(second.out);
    if (getenv("NIDUS_FUZZ_VERBOSE"))
        fprintf(stderr, "loaded a RedisBloom %s filter (encoding %d) from %zu bytes\n", cuckoo ? "cuckoo" : "Bloom",
                encver, size);
    return 0;
}
