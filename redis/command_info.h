/* SPDX-License-Identifier: BSD-3-Clause */
/* Registration of the CF.* and BF.* commands with what COMMAND INFO and COMMAND DOCS show of them: flags,
 * arity, key specs, summary, complexity, since, tips and argument trees, as RedisBloom declares them. */
#ifndef NIDUS_REDIS_COMMAND_INFO_H
#define NIDUS_REDIS_COMMAND_INFO_H

#include <stddef.h>

#include "module_api.h"

/* A command the module serves: its name and handler. */
typedef struct mod_command {
    const char *name;
    RedisModuleCmdFunc fn;
} mod_command;

/* Creates each command with the flags documented for its name (key at position 1), then sets its
 * documentation when the server has RedisModule_SetCommandInfo (Redis >= 7.0; skipped otherwise) and
 * RedisBloom's ACL categories "bloom" / "cuckoo" when it has RedisModule_AddACLCategory (Redis >= 7.4).
 * REDISMODULE_ERR, logged, when a name has no documentation entry or the server refuses a command. */
int mod_register_commands(RedisModuleCtx *ctx, const mod_command *commands, size_t n);

#endif
