/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's data types. */
#ifndef NIDUS_REDIS_TYPES_H
#define NIDUS_REDIS_TYPES_H

#include "commands.h"
#include "module_api.h"

/* Creates the CF and BF data types (nidus_cf_type, nidus_bf_type). */
int nidus_register_types(RedisModuleCtx *ctx);

/* The filter's chunks as RDB strings, then an empty string: the nidus types' RDB payload, and the growth
 * part of filters loaded from RedisBloom (rb/rb_types.c). The loader checks every chunk and returns NULL (after
 * logging) for anything it refuses. */
void nidus_rdb_save_filter(const nidus_filter_ops *t, RedisModuleIO *io, void *value);
void *nidus_rdb_load_filter(const nidus_filter_ops *t, RedisModuleIO *io);

/* A copy of a filter of type `t` (its chunks replayed into a new one, as COPY makes it); NULL without memory. */
void *nidus_filter_copy(const nidus_filter_ops *t, const void *value);

#endif
