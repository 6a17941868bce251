/* The module's data types. */
#ifndef NIDUS_REDIS_TYPES_H
#define NIDUS_REDIS_TYPES_H

#include "module_api.h"

/* Creates the CF and BF data types (nidus_cf_type, nidus_bf_type). */
int nidus_register_types(RedisModuleCtx *ctx);

#endif
