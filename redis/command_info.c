/* SPDX-License-Identifier: BSD-3-Clause */
/* The documentation of every command (see command_info.h). The texts are RedisBloom's, so that clients and
 * tools that read COMMAND DOCS see the same interface; where nidus departs, the entry says why. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "command_info.h"

/* One argument of a command's syntax, or of a block / one-of group. */
typedef struct doc_arg {
    const char *name;
    RedisModuleCommandArgType type;
    int flags;                  /* REDISMODULE_CMD_ARG_OPTIONAL, _MULTIPLE */
    const char *token;          /* the keyword before the value, or the whole of a pure token */
    const struct doc_arg *sub;  /* a block's or one-of's members, ended by an entry without a name */
} doc_arg;

typedef struct command_doc {
    const char *name;
    const char *flags;          /* CreateCommand's flags */
    const char *acl;            /* ACL categories (Redis >= 7.4): "write"/"read" [fast]; "write": key spec RW */
    int arity;                  /* 0: unset (-1 in COMMAND INFO) */
    const char *summary, *complexity, *since, *tips;
    const doc_arg *args;        /* NULL: no documentation beyond flags and key */
} command_doc;

#define OPT REDISMODULE_CMD_ARG_OPTIONAL
#define MANY REDISMODULE_CMD_ARG_MULTIPLE
#define END {0}
#define KEY {"key", REDISMODULE_ARG_TYPE_KEY, 0, NULL, NULL}
#define ITEM {"item", REDISMODULE_ARG_TYPE_STRING, 0, NULL, NULL}
#define ITEMS {"item", REDISMODULE_ARG_TYPE_STRING, MANY, NULL, NULL}
#define INTEGER(name) {name, REDISMODULE_ARG_TYPE_INTEGER, 0, NULL, NULL}
/* [TOKEN value]: an optional block holding one value after its keyword. */
#define OPTION(name, token, type) \
    {name, REDISMODULE_ARG_TYPE_BLOCK, OPT, token, (const doc_arg[]){{name, type, 0, NULL, NULL}, END}}
#define FLAG(name, token) {name, REDISMODULE_ARG_TYPE_PURE_TOKEN, OPT, token, NULL}
#define TOKEN(name, token) {name, REDISMODULE_ARG_TYPE_PURE_TOKEN, 0, token, NULL}

#define WRITE "write deny-oom"
#define READ "readonly fast"

static const doc_arg key_item[] = {KEY, ITEM, END};
static const doc_arg key_items[] = {KEY, ITEMS, END};
static const doc_arg key_only[] = {KEY, END};
static const doc_arg compactstep_args[] = {KEY, INTEGER("table"), INTEGER("bucket"), INTEGER("budget"), END};
static const doc_arg key_iterator[] = {KEY, INTEGER("iterator"), END};
/* CF.AT / BF.AT key ms command [arg ...]: a windowed write with the master's time, its sweep step (SWEEP) or its
 * creation with the master's parameters (CREATE) (windowed.c); the limit of a key's next load (LIMIT, common.c);
 * the settings of a RedisBloom-format key's next growth (GROW, common.c); a merge on a thread's start and end
 * (MERGE BEGIN|END|ABORT, merge_jobs.c) */
static const doc_arg at_args[] = {
    KEY,
    INTEGER("milliseconds"),
    {"command", REDISMODULE_ARG_TYPE_STRING, 0, NULL, NULL},
    {"arg", REDISMODULE_ARG_TYPE_STRING, OPT | MANY, NULL, NULL},
    END,
};
static const doc_arg key_iterator_data[] = {
    KEY, INTEGER("iterator"), {"data", REDISMODULE_ARG_TYPE_STRING, 0, NULL, NULL}, END};

/* CF.MERGE and BF.MERGE: the form of RedisBloom's CMS.MERGE and TDIGEST.MERGE, PFMERGE's names. */
static const doc_arg merge_args[] = {
    {"destkey", REDISMODULE_ARG_TYPE_KEY, 0, NULL, NULL},
    INTEGER("numkeys"),
    {"sourcekey", REDISMODULE_ARG_TYPE_KEY, MANY, NULL, NULL},
    END,
};

/* CF.INSERT and CF.INSERTNX: RedisBloom writes CAPACITY as a block of the token and the value. */
static const doc_arg cf_insert[] = {
    KEY,
    {"capacity", REDISMODULE_ARG_TYPE_BLOCK, OPT, NULL,
     (const doc_arg[]){TOKEN("capacity", "CAPACITY"), INTEGER("capacity"), END}},
    FLAG("nocreate", "NOCREATE"),
    OPTION("expansion", "EXPANSION", REDISMODULE_ARG_TYPE_INTEGER),
    OPTION("window", "WINDOW", REDISMODULE_ARG_TYPE_INTEGER),
    TOKEN("items", "ITEMS"),
    ITEMS,
    END,
};

static const doc_arg cf_reserve[] = {
    KEY,
    INTEGER("capacity"),
    OPTION("bucketsize", "BUCKETSIZE", REDISMODULE_ARG_TYPE_INTEGER),
    OPTION("maxiterations", "MAXITERATIONS", REDISMODULE_ARG_TYPE_INTEGER),
    OPTION("expansion", "EXPANSION", REDISMODULE_ARG_TYPE_INTEGER),
    OPTION("window", "WINDOW", REDISMODULE_ARG_TYPE_INTEGER),
    END,
};

static const doc_arg bf_reserve[] = {
    KEY,
    {"error_rate", REDISMODULE_ARG_TYPE_DOUBLE, 0, NULL, NULL},
    INTEGER("capacity"),
    OPTION("expansion", "EXPANSION", REDISMODULE_ARG_TYPE_INTEGER),
    FLAG("nonscaling", "NONSCALING"),
    OPTION("window", "WINDOW", REDISMODULE_ARG_TYPE_INTEGER),
    END,
};

static const doc_arg bf_insert[] = {
    KEY,
    OPTION("capacity", "CAPACITY", REDISMODULE_ARG_TYPE_INTEGER),
    OPTION("error", "ERROR", REDISMODULE_ARG_TYPE_DOUBLE),
    OPTION("expansion", "EXPANSION", REDISMODULE_ARG_TYPE_INTEGER),
    FLAG("nocreate", "NOCREATE"),
    FLAG("nonscaling", "NONSCALING"),
    OPTION("window", "WINDOW", REDISMODULE_ARG_TYPE_INTEGER),
    TOKEN("items", "ITEMS"),
    ITEMS,
    END,
};

/* RedisBloom names the first member "capcaity" and the others in capitals; we name them as its tests do. */
static const doc_arg bf_info[] = {
    KEY,
    {"single_value", REDISMODULE_ARG_TYPE_ONEOF, OPT, NULL,
     (const doc_arg[]){TOKEN("capacity", "CAPACITY"), TOKEN("size", "SIZE"), TOKEN("filters", "FILTERS"),
                       TOKEN("items", "ITEMS"), TOKEN("expansion", "EXPANSION"), TOKEN("window", "WINDOW"), END}},
    END,
};

#define CF_ADD_COST "O(k + i), where k is the number of sub-filters and i is maxIterations"
#define CF_INSERT_COST \
    "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations"
#define CF_LOOKUP_COST "O(k), where k is the number of sub-filters"
#define COMPACT_COST "O(1): one bounded step; the writes to the filter and a timer take the rest in bounded steps"
#define BF_ONE_COST "O(k), where k is the number of hash functions used by the last sub-filter"
#define BF_MANY_COST "O(k * n), where k is the number of hash functions and n is the number of items"
#define BF_INSERT_SUMMARY "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist"
#define SCANDUMP_SUMMARY "Begins an incremental save of the bloom filter"
#define LOADCHUNK_SUMMARY "Restores a filter previously saved using SCANDUMP"
#define CAPACITY_COST "O(n), where n is the capacity"
#define MERGE_COST "O(n), where n is the total size of the filters"

/* SCANDUMP only reads its key: its key spec is read-only (RedisBloom declares read-write, yet flags the
 * command readonly). CF.COMPACT rewrites the filter and replicates: a write, where RedisBloom registers it
 * readonly without documentation; ours is documented. CF.COMPACTSTEP (nidus's own) is how a master replicates
 * the steps of a compaction (compaction.c); not deny-oom, as CF.COMPACT, since it only frees memory. */
static const command_doc docs[] = {
    {"cf.reserve", WRITE, "write fast", -3, "Creates a new Cuckoo Filter", "O(1)", "1.0.0", NULL, cf_reserve},
    {"cf.at", "write", "write", -5,
     "Replays a master's write to a Cuckoo Filter: a windowed one's at its time, a load's limit or a growth's "
     "settings, a merge's start and end (sent by masters and the AOF only)",
     CF_INSERT_COST, "1.0.0", NULL, at_args},
    {"cf.add", WRITE, "write", 3, "Adds an item to a Cuckoo Filter", CF_ADD_COST, "1.0.0", NULL, key_item},
    {"cf.addnx", WRITE, "write", 3, "Adds an item to a Cuckoo Filter if the item did not exist previously.",
     CF_ADD_COST, "1.0.0", NULL, key_item},
    {"cf.insert", WRITE, "write", -4,
     "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", CF_INSERT_COST,
     "1.0.0", NULL, cf_insert},
    {"cf.insertnx", WRITE, "write", -4,
     "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created "
     "if it does not exist",
     CF_INSERT_COST, "1.0.0", NULL, cf_insert},
    {"cf.exists", READ, "read", 3, "Checks whether one or more items exist in a Cuckoo Filter", CF_LOOKUP_COST,
     "1.0.0", NULL, key_item},
    {"cf.mexists", READ, "read", -3, "Checks whether one or more items exist in a Cuckoo Filter",
     "O(k * n), where k is the number of sub-filters and n is the number of items", "1.0.0", NULL, key_items},
    {"cf.count", READ, "read", 3, "Return the number of times an item might be in a Cuckoo Filter", CF_LOOKUP_COST,
     "1.0.0", NULL, key_item},
    {"cf.del", "write fast", "write", 3, "Deletes an item from a Cuckoo Filter", CF_LOOKUP_COST, "1.0.0", NULL,
     key_item},
    {"cf.compact", "write", "write", 2, "Moves items of newer sub-filters into older ones and frees the emptied ones",
     COMPACT_COST, "1.0.0", NULL, key_only},
    {"cf.compactstep", "write", "write", 5,
     "Takes one step of a Cuckoo Filter's compaction from the given cursor, as a master replicates its steps",
     "O(b), where b is the budget", "1.0.0", NULL, compactstep_args},
    {"cf.scandump", READ, "read", 3, SCANDUMP_SUMMARY, CAPACITY_COST, "1.0.0", "dont_cache", key_iterator},
    {"cf.loadchunk", WRITE, "write", 4, LOADCHUNK_SUMMARY, CAPACITY_COST, "1.0.0", NULL, key_iterator_data},
    {"cf.merge", WRITE " getkeys-api", "write", -4,
     "Merges Cuckoo Filters into the destination, which is created like the first source if it does not exist",
     MERGE_COST, "1.0.0", NULL, merge_args},
    {"cf.info", READ, "read fast", 2, "Returns information about a Cuckoo Filter", "O(1)", "1.0.0", "dont_cache",
     key_only},
    {"cf.debug", READ, "read", 2, "Returns internal debug information about a Cuckoo Filter", "O(1)", "1.0.0",
     "dont_cache", key_only},
    {"bf.reserve", WRITE, "write fast", -4, "Creates a new Bloom Filter", "O(1)", "1.0.0", NULL, bf_reserve},
    {"bf.at", "write", "write", -5,
     "Replays a master's write to a Bloom Filter: a windowed one's at its time, a load's limit or a growth's "
     "settings, a merge's start and end (sent by masters and the AOF only)",
     BF_MANY_COST, "1.0.0", NULL, at_args},
    {"bf.add", WRITE, "write", 3, "Adds an item to a Bloom Filter", BF_ONE_COST, "1.0.0", NULL, key_item},
    {"bf.madd", WRITE, "write", -3, BF_INSERT_SUMMARY, BF_MANY_COST, "1.0.0", NULL, key_items},
    {"bf.insert", WRITE, "write", -4, BF_INSERT_SUMMARY, BF_MANY_COST, "1.0.0", NULL, bf_insert},
    {"bf.exists", READ, "read", 3, "Checks whether an item exists in a Bloom Filter", BF_ONE_COST, "1.0.0", NULL,
     key_item},
    {"bf.mexists", READ, "read", -3, "Checks whether one or more items exist in a Bloom Filter", BF_MANY_COST,
     "1.0.0", NULL, key_items},
    {"bf.merge", WRITE " getkeys-api", "write", -4,
     "Merges Bloom Filters into the destination, which is created like the first source if it does not exist",
     MERGE_COST, "1.0.0", NULL, merge_args},
    {"bf.info", READ, "read fast", -2, "Returns information about a Bloom Filter", "O(1)", "1.0.0", "dont_cache",
     bf_info},
    {"bf.card", READ, "read fast", 2, "Returns the cardinality of a Bloom filter", "O(1)", "2.4.4", NULL, key_only},
    {"bf.scandump", READ, "read", 3, SCANDUMP_SUMMARY, CAPACITY_COST, "1.0.0", "dont_cache", key_iterator},
    {"bf.loadchunk", WRITE, "write", 4, LOADCHUNK_SUMMARY, CAPACITY_COST, "1.0.0", NULL, key_iterator_data},
    {"bf.debug", READ, "read", 2, "Returns internal debug information about a Bloom Filter",
     "O(n), where n is the number of sub-filters", "1.0.0", "dont_cache", key_only},
};

static const command_doc *find_doc(const char *name)
{
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        if (strcmp(docs[i].name, name) == 0)
            return &docs[i];
    return NULL;
}

/* Room for the widest tree above (BF.INSERT: 8 arguments, 3 blocks of one, 4 terminators) with margin. */
#define ARG_POOL 48

typedef struct arg_pool {
    RedisModuleCommandArg slot[ARG_POOL];
    size_t used;
    int keys; /* key arguments laid out so far: the next one's key spec */
} arg_pool;

/* Lays `args` out as the server's argument array (zero-terminated), members of blocks after; NULL when the
 * pool is too small (a table above outgrew ARG_POOL: a bug the module tests catch at load). */
static RedisModuleCommandArg *lay_out(arg_pool *pool, const doc_arg *args)
{
    size_t n = 0;
    while (args[n].name)
        n++;
    if (n + 1 > ARG_POOL - pool->used)
        return NULL;
    RedisModuleCommandArg *out = &pool->slot[pool->used];
    pool->used += n + 1;
    memset(out, 0, (n + 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        out[i].name = args[i].name;
        out[i].type = args[i].type;
        out[i].flags = args[i].flags;
        out[i].token = args[i].token;
        out[i].key_spec_index = args[i].type == REDISMODULE_ARG_TYPE_KEY ? pool->keys++ : -1;
        if (args[i].sub && !(out[i].subargs = lay_out(pool, args[i].sub)))
            return NULL;
    }
    return out;
}

/* RedisBloom's ACL categories "bloom" and "cuckoo" (Redis >= 7.4: AddACLCategory; servers without it derive
 * @read, @write, @fast from the command flags alone). */
static bool acl_categories;

static void add_acl_categories(RedisModuleCtx *ctx)
{
    acl_categories = RedisModule_AddACLCategory && RedisModule_SetCommandACLCategories && RedisModule_GetCommand &&
                     RedisModule_AddACLCategory(ctx, "bloom") == REDISMODULE_OK &&
                     RedisModule_AddACLCategory(ctx, "cuckoo") == REDISMODULE_OK;
}

static int set_acl(RedisModuleCtx *ctx, const command_doc *d)
{
    if (!acl_categories)
        return REDISMODULE_OK;
    char categories[32];
    snprintf(categories, sizeof categories, "%s %s", d->acl, d->name[0] == 'c' ? "cuckoo" : "bloom");
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, d->name);
    if (!cmd || RedisModule_SetCommandACLCategories(cmd, categories) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning", "nidus: could not set the ACL categories of %s", d->name);
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

static int set_info(RedisModuleCtx *ctx, const command_doc *d)
{
    if (!RedisModule_GetCommand || !RedisModule_SetCommandInfo)
        return REDISMODULE_OK; /* before Redis 7.0: the flags and key range of CreateCommand are all */
    static const RedisModuleCommandInfoVersion version = {1, sizeof(RedisModuleCommandHistoryEntry),
                                                          sizeof(RedisModuleCommandKeySpec),
                                                          sizeof(RedisModuleCommandArg)};
    /* the key at position 1; a merge's sourcekeys after it, read-only, as many as numkeys (position 2) says */
    RedisModuleCommandKeySpec specs[3] = {{
        .flags = strncmp(d->acl, "write", 5) == 0 ? REDISMODULE_CMD_KEY_RW : REDISMODULE_CMD_KEY_RO,
        .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
        .bs.index.pos = 1,
        .find_keys_type = REDISMODULE_KSPEC_FK_RANGE,
        .fk.range = {.lastkey = 0, .keystep = 1, .limit = 0},
    }};
    if (d->args == merge_args)
        specs[1] = (RedisModuleCommandKeySpec){
            .flags = REDISMODULE_CMD_KEY_RO,
            .begin_search_type = REDISMODULE_KSPEC_BS_INDEX,
            .bs.index.pos = 2,
            .find_keys_type = REDISMODULE_KSPEC_FK_KEYNUM,
            .fk.keynum = {.keynumidx = 0, .firstkey = 1, .keystep = 1},
        };
    arg_pool pool = {.used = 0, .keys = 0};
    RedisModuleCommandInfo info = {
        .version = &version,
        .summary = d->summary,
        .complexity = d->complexity,
        .since = d->since,
        .tips = d->tips,
        .arity = d->arity,
        .key_specs = specs,
        .args = d->args ? lay_out(&pool, d->args) : NULL,
    };
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, d->name);
    if (!cmd || (d->args && !info.args) || RedisModule_SetCommandInfo(cmd, &info) != REDISMODULE_OK) {
        RedisModule_Log(ctx, "warning", "nidus: could not set the command info of %s", d->name);
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

int mod_register_commands(RedisModuleCtx *ctx, const mod_command *commands, size_t n)
{
    add_acl_categories(ctx);
    for (size_t i = 0; i < n; i++) {
        const command_doc *d = find_doc(commands[i].name);
        if (!d) {
            RedisModule_Log(ctx, "warning", "nidus: %s has no documentation entry", commands[i].name);
            return REDISMODULE_ERR;
        }
        if (RedisModule_CreateCommand(ctx, d->name, commands[i].fn, d->flags, 1, 1, 1) != REDISMODULE_OK) {
            RedisModule_Log(ctx, "warning", "nidus: could not register %s", d->name);
            return REDISMODULE_ERR;
        }
        if (set_info(ctx, d) != REDISMODULE_OK || set_acl(ctx, d) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}
