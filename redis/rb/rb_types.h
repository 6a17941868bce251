/* SPDX-License-Identifier: BSD-3-Clause */
/* Filters loaded from RedisBloom's data (its RDB, DUMP payloads and SCANDUMP chunks): the data types named as
 * RedisBloom's (MBbloomCF, MBbloom--), so that Redis hands their RDB values to us, and the value they hold:
 * the RedisBloom part (rb_cf.h / rb_bf.h: RedisBloom's tables, hashing and placement, so every item it held
 * answers as it did) and a nidus filter for growth, created when the RedisBloom part has no room. */
#ifndef NIDUS_REDIS_RB_TYPES_H
#define NIDUS_REDIS_RB_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>

#include <nidus/status.h>

#include "module_api.h"

/* RedisBloom's highest encoding versions (both types load 0 .. these), and ours for what we save. */
#define RB_CF_ENCVER_MAX 4
#define RB_BF_ENCVER_MAX 4
#define RB_NIDUS_ENCVER 512

/* A value of either type: `rb` is an rb_cf or an rb_bf, `grown` a nidus_cuckoo or nidus_bloom (or NULL). */
typedef struct rb_value {
    void *rb;
    void *grown;
} rb_value;

extern RedisModuleType *rb_cf_type, *rb_bf_type;

/* Values of these types alive now: commands look for them only when there are some. Atomic: FLUSHALL ASYNC
 * frees values on a background thread. */
extern atomic_llong rb_values_alive;

/* The types' methods, as types.c makes the server's callbacks of MBbloomCF and MBbloom-- from them. */
extern const struct mod_value_class rb_cf_class, rb_bf_class;

/* A new value around a RedisBloom part (counted in rb_values_alive); the free functions free both parts. */
rb_value *rb_value_new(void *rb);
void rb_cf_value_free(void *v);
void rb_bf_value_free(void *v);

/* What differs between the two types' values (rb_types.c): their nidus growth type and RedisBloom arrays. */
typedef struct rb_kind rb_kind;
extern const rb_kind rb_cf_kind, rb_bf_kind;

/* The nidus filter type of a kind's growth part (mod_cf_ops, mod_bf_ops). */
const struct mod_filter_ops *rb_kind_ops(const rb_kind *k);

/* Bytes the growth part may hold when the whole value is held to `limit`: `limit` less the RedisBloom part's
 * (`rb`), 0 when that leaves none. Growth makes the part under it, and LOADCHUNK and RESTORE load it under it. */
uint64_t rb_grown_room(const rb_kind *k, const void *rb, uint64_t limit);

/* A copy of the value (its chunk stream replayed, as COPY makes it); NULL without memory. */
rb_value *rb_value_copy(const rb_kind *k, const rb_value *v);

/* Frees a value of either kind (rb_cf_value_free or rb_bf_value_free). */
void rb_value_free(const rb_kind *k, void *v);

/* Bytes held by the value (both parts). */
uint64_t rb_value_memory(const rb_kind *k, const rb_value *v);

/* The value's chunk stream, which SCANDUMP gives and LOADCHUNK takes: at iterator 0 RedisBloom's header chunk,
 * then RedisBloom's data chunks at its positions (1 .. the arrays' bytes + 1), then the growth part's nidus
 * chunks at positions after those, through `sum` (NULL: none; see nidus_filter_dump_chunk_sum). `buf` holds
 * rb_chunk_buffer_size bytes. False past the end. */
size_t rb_chunk_buffer_size(const rb_kind *k, const rb_value *v);
bool rb_value_chunk(const rb_kind *k, const rb_value *v, uint64_t iter, uint8_t *buf, size_t cap,
                    const uint8_t **data, size_t *len, uint64_t *next, nidus_dump_sum *sum);

/* LOADCHUNK of one chunk of that stream at position `pos` (SCANDUMP's next iterator): a header chunk (pos 1)
 * creates *v (it must be NULL), later ones fill it. NIDUS_ERR_CORRUPT for a chunk that does not fit,
 * NIDUS_ERR_LIMIT_MEMORY past max_bytes (0: no limit), or the growth part's own status. */
nidus_status rb_value_load_chunk(const rb_kind *k, rb_value **v, uint64_t pos, const void *data, size_t len,
                                 uint64_t max_bytes);

/* The command `fn` as registered: it serves keys loaded from RedisBloom itself and hands every other key to
 * `fn` (rb_commands.c). Commands without a key of these types are returned unchanged. */
RedisModuleCmdFunc mod_rb_route(RedisModuleCmdFunc fn);

#endif
