/* SPDX-License-Identifier: BSD-3-Clause */
/* The windowed types as the shared code sees them (windowed.h): the kind NIDUS_KIND_WINDOW, through which
 * filter_ops.c's nidus_filter calls go (and which counts the values alive), and the types' reply strings. */
#include "commands.h"
#include "common.h"
#include "windowed.h"

RedisModuleType *mod_cw_type, *mod_bw_type;
_Atomic uint64_t mod_window_values;

bool mod_window_holds(RedisModuleKey *key, RedisModuleType *type)
{
    return RedisModule_KeyType(key) == REDISMODULE_KEYTYPE_MODULE && RedisModule_ModuleTypeGetType(key) == type;
}

/* SCANDUMP gives a windowed filter's chunks even with no live item (its window and ages travel with them; a
 * plain empty cuckoo filter answers [0, nil] as RedisBloom's does). */
const mod_filter_ops mod_cw_ops = {
    &mod_cw_type, NIDUS_KIND_WINDOW, true, false, NIDUS_CF_LOADCHUNK, "Couldn't load chunk!", "Invalid position",
    "Invalid position", "Couldn't create filter!", "Invalid header", MOD_MSG_CF_LOADING,
};

const mod_filter_ops mod_bw_ops = {
    &mod_bw_type, NIDUS_KIND_WINDOW, true, true, NIDUS_BF_LOADCHUNK, "ERR received bad data",
    "ERR Second argument must be numeric", "Second argument must be numeric", "ERR received bad data",
    "ERR received bad data", MOD_MSG_BF_LOADING,
};
