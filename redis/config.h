/* SPDX-License-Identifier: BSD-3-Clause */
/* The module's settings: load arguments and module configs (CONFIG GET / SET), both feeding mod_cfg.
 *
 * Each setting has today's RedisBloom name (bf-error-rate, bf-initial-size, bf-expansion-factor,
 * cf-bucket-size, cf-initial-size, cf-max-iterations, cf-expansion-factor, cf-max-expansions) or nidus's own
 * (cf-error-rate, max-capacity, max-filter-memory, cf-compact-interval, merge-inline-bytes), and may have an
 * older spelling taken as a load argument (ERROR_RATE, INITIAL_SIZE, CF_MAX_EXPANSIONS; CF_INITIAL_SIZE,
 * CF_ERROR_RATE, MAX_CAPACITY, MAX_FILTER_MEMORY), case-insensitively. Ranges are RedisBloom's.
 *
 * As module configs (Redis >= 7.0, Valkey) they are named "nidus.<name>"; on a server that says it is Redis 8
 * or later (server_kind.h) RedisBloom's eight are registered unprefixed ("bf-error-rate"), as RedisBloom
 * registers them there, and the others keep the prefix. */
#ifndef NIDUS_REDIS_CONFIG_H
#define NIDUS_REDIS_CONFIG_H

#include "module_api.h"

/* Applies the load arguments (NAME VALUE pairs) to mod_cfg. REDISMODULE_ERR, with the offending argument
 * named in the server log, for an odd count, an unknown name or a value out of range. */
int mod_config_load_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Registers the settings as module configs, with the values the load arguments gave as defaults, and loads
 * what the server's configuration sets for them. REDISMODULE_OK without doing anything on a server without
 * module configs (before 7.0); a refused unprefixed name falls back to "nidus.<name>" with a warning. */
int mod_config_register(RedisModuleCtx *ctx);

#endif
