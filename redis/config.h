/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's settings: load arguments and module configs (CONFIG GET / SET), both feeding nidus_config.
 *
 * Each setting has today's RedisBloom name (bf-error-rate, bf-initial-size, bf-expansion-factor,
 * cf-bucket-size, cf-initial-size, cf-max-iterations, cf-expansion-factor, cf-max-expansions) or nidus's own
 * (cf-error-rate, max-capacity, max-filter-memory), and may have an older spelling taken as a load argument
 * (ERROR_RATE, INITIAL_SIZE, CF_MAX_EXPANSIONS; CF_INITIAL_SIZE, CF_ERROR_RATE, MAX_CAPACITY,
 * MAX_FILTER_MEMORY), case-insensitively. Ranges are RedisBloom's.
 *
 * As module configs (Redis >= 7.0) they are named "nidus.<name>"; on Redis >= 8 RedisBloom's eight are
 * registered unprefixed ("bf-error-rate"), as RedisBloom registers them there. */
#ifndef NIDUS_REDIS_CONFIG_H
#define NIDUS_REDIS_CONFIG_H

#include "module_api.h"

/* Applies the load arguments (NAME VALUE pairs) to nidus_config. REDISMODULE_ERR, with the offending argument
 * named in the server log, for an odd count, an unknown name or a value out of range. */
int nidus_config_load_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Registers the settings as module configs, with the values the load arguments gave as defaults, and loads
 * what the server's configuration sets for them. REDISMODULE_OK without doing anything on a server without
 * module configs (before 7.0). */
int nidus_config_register(RedisModuleCtx *ctx);

#endif
