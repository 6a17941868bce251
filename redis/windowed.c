/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed keys (windowed.h): the commands on them, the time of their writes, their sweep.
 *
 * Time. A write on a master runs at the master's clock (milliseconds since the epoch, read once a command) and
 * is replicated and logged with it: CF.AT key ms CF.ADD key's arguments..., so a replica and an AOF replay make
 * the same write at the same time, whenever they run it (an item expired by then is not brought back). A
 * lookup on a master reads at its clock; on a replica, at the key's own clock: the time of the latest write or
 * sweep step its master sent for it, so a replica answers as its master answered at that point of the stream.
 * The master's timer sends a sweep step (CF.AT key ms SWEEP budget) to every windowed key whose epoch has
 * turned, so a replica's keys follow the master's clock epoch by epoch. A clock that goes back never expires an
 * item early: the library reads an earlier time as the filter's latest.
 *
 * Creation. A windowed filter's creation is replicated and logged as CF.AT / BF.AT key ms CREATE followed by every
 * parameter as the master resolved it from its arguments and configuration (the expansion and max-filter-memory
 * included), so a replica or a replayed AOF makes the master's filter whatever its own configuration says, and
 * refuses the adds the master refused (growth past max_memory).
 *
 * Sweeps change the filter's bytes, so they are only ever taken on a master and replicated as what they did;
 * replicas and AOF loading take them from the stream (DEBUG DIGEST-VALUE stays equal). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common.h"
#include "merge_jobs.h"
#include "pins.h"
#include "rb/rb_types.h"
#include "types.h"
#include "windowed.h"

static void track(RedisModuleCtx *ctx, RedisModuleString *name);

/* ---- time ---- */

static bool clock_given; /* inside CF.AT / BF.AT: the master's time of the write */
static uint64_t given_clock;

static uint64_t clock_now(void)
{
    long long ms = RedisModule_Milliseconds();
    return ms > 0 ? (uint64_t)ms : 0;
}

/* The time of a write: the master's, carried by CF.AT / BF.AT, else this server's clock. */
static uint64_t write_time(void) { return clock_given ? given_clock : clock_now(); }

/* The time of a lookup: this server's clock on a master; 0 on a replica or while loading, which the library
 * reads as the filter's own clock (its latest write or sweep step). */
static uint64_t read_time(RedisModuleCtx *ctx)
{
    if (clock_given)
        return given_clock;
    int flags = RedisModule_GetContextFlags(ctx);
    return flags & (REDISMODULE_CTX_FLAGS_SLAVE | REDISMODULE_CTX_FLAGS_LOADING) ? 0 : clock_now();
}

static bool is_bloom_type(RedisModuleType *t) { return t == mod_bw_type; }

/* Replicates a windowed write with its time: CF.AT / BF.AT key ms command arguments-after-the-key. Inside
 * CF.AT / BF.AT the command itself already is that form. */
static void replicate_write(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, uint64_t now, bool bloom)
{
    if (clock_given) {
        RedisModule_ReplicateVerbatim(ctx);
        return;
    }
    RedisModule_Replicate(ctx, bloom ? "BF.AT" : "CF.AT", "slsv", argv[1], (long long)now, argv[0], argv + 2,
                          (size_t)(argc - 2));
}

/* ---- the keys the timer sweeps ---- */

/* Each windowed key this server holds, by db and name: the timer visits them in order, from where it stopped. A
 * key gone, of another type or moved without an event is dropped at its visit; a write registers it again. */
typedef struct tracked_key {
    bool owed; /* the last sweep step did not finish its pass */
} tracked_key;

static RedisModuleDict *tracked;
static char *resume; /* the entry after which the next tick starts (NULL: at the first) */
static size_t resume_len;

#define TRACK_NAME_MAX 512 /* names up to this many bytes are built on the stack */

static size_t entry_name(int db, const char *s, size_t len, char *buf)
{
    buf[0] = (char)((unsigned)db >> 24);
    buf[1] = (char)((unsigned)db >> 16);
    buf[2] = (char)((unsigned)db >> 8);
    buf[3] = (char)(unsigned)db;
    memcpy(buf + 4, s, len);
    return len + 4;
}

void mod_window_track(RedisModuleCtx *ctx, RedisModuleString *name) { track(ctx, name); }

static int entry_db(const char *k)
{
    return (int)(((unsigned)(unsigned char)k[0] << 24) | ((unsigned)(unsigned char)k[1] << 16) |
                 ((unsigned)(unsigned char)k[2] << 8) | (unsigned)(unsigned char)k[3]);
}

static void track(RedisModuleCtx *ctx, RedisModuleString *name)
{
    if (!tracked)
        return;
    size_t len;
    const char *s = RedisModule_StringPtrLen(name, &len);
    char stack[TRACK_NAME_MAX + 4];
    char *buf = len <= TRACK_NAME_MAX ? stack : RedisModule_Alloc(len + 4);
    size_t n = entry_name(RedisModule_GetSelectedDb(ctx), s, len, buf);
    int missing = 0;
    RedisModule_DictGetC(tracked, buf, n, &missing);
    if (missing)
        RedisModule_DictReplaceC(tracked, buf, n, RedisModule_Calloc(1, sizeof(tracked_key)));
    if (buf != stack)
        RedisModule_Free(buf);
    mod_timer_arm(ctx);
}

bool mod_window_tracking(void) { return tracked && RedisModule_DictSize(tracked) > 0; }

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

#define SWEEP_BUCKETS 4096u /* buckets of one sweep step: well under a millisecond */
#define TICK_VISITS 4096u   /* keys one tick looks at, at most */
#define DROPS_MAX 64u       /* entries one tick drops, at most */

/* One key's turn: a sweep step when its epoch has turned or its pass is unfinished, replicated. */
static void visit(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key, tracked_key *t, uint64_t now)
{
    RedisModuleType *type = RedisModule_ModuleTypeGetType(key);
    nidus_window *w = RedisModule_ModuleTypeGetValue(key);
    const mod_filter_ops *ops = is_bloom_type(type) ? &mod_bw_ops : &mod_cw_ops;
    if (mod_filter_loading(ops, w) || mod_pinned(w)) /* a merge thread reads it: swept after the merge */
        return;
    nidus_window_stats s;
    nidus_window_get_stats(w, now, &s);
    if (s.entries == 0 && !t->owed)
        return; /* nothing to expire: no answer changes */
    if (now / s.epoch_ticks <= s.latest_write / s.epoch_ticks && !t->owed)
        return;
    bool done = true;
    /* a step writes: the key opened for writing now, not before (that forgets its running SCANDUMP checksum) */
    RedisModuleKey *writable = mod_open_key(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
    nidus_status st = nidus_window_advance(RedisModule_ModuleTypeGetValue(writable), now, SWEEP_BUCKETS, &done);
    RedisModule_CloseKey(writable);
    if (st != NIDUS_OK)
        return;
    t->owed = !done;
    RedisModule_Replicate(ctx, is_bloom_type(type) ? "BF.AT" : "CF.AT", "slcl", name, (long long)now, "SWEEP",
                          (long long)SWEEP_BUCKETS);
}

void mod_window_tick(RedisModuleCtx *ctx, bool master, long long budget_ns)
{
    if (!master || !mod_window_tracking())
        return;
    uint64_t now = clock_now();
    long long start = now_ns();
    int selected = RedisModule_GetSelectedDb(ctx);
    RedisModuleDictIter *it = resume ? RedisModule_DictIteratorStartC(tracked, ">", resume, resume_len)
                                     : RedisModule_DictIteratorStartC(tracked, "^", NULL, 0);
    char *drops[DROPS_MAX];
    size_t drop_len[DROPS_MAX];
    unsigned ndrops = 0;
    bool exhausted = false;
    for (unsigned visits = 0; visits < TICK_VISITS && ndrops < DROPS_MAX && now_ns() - start < budget_ns;
         visits++) {
        size_t len;
        void *data;
        char *k = RedisModule_DictNextC(it, &len, &data);
        if (!k) {
            exhausted = true;
            break;
        }
        RedisModule_Free(resume);
        resume = RedisModule_Alloc(len);
        memcpy(resume, k, len);
        resume_len = len;
        int db = entry_db(k);
        bool keep = false;
        if (RedisModule_SelectDb(ctx, db) == REDISMODULE_OK) {
            RedisModuleString *name = RedisModule_CreateString(ctx, k + 4, len - 4);
            RedisModuleKey *key = mod_open_key(ctx, name, REDISMODULE_READ);
            if (mod_window_holds(key, mod_cw_type) || mod_window_holds(key, mod_bw_type)) {
                keep = true;
                visit(ctx, name, key, data, now);
            }
            RedisModule_CloseKey(key);
            RedisModule_FreeString(ctx, name);
        }
        if (!keep) {
            drops[ndrops] = RedisModule_Alloc(len);
            memcpy(drops[ndrops], k, len);
            drop_len[ndrops++] = len;
        }
    }
    RedisModule_DictIteratorStop(it);
    if (exhausted) { /* every entry was visited: the next tick starts at the first */
        RedisModule_Free(resume);
        resume = NULL;
    }
    for (unsigned i = 0; i < ndrops; i++) {
        void *old = NULL;
        if (RedisModule_DictDelC(tracked, drops[i], drop_len[i], &old) == REDISMODULE_OK)
            RedisModule_Free(old);
        RedisModule_Free(drops[i]);
    }
    RedisModule_SelectDb(ctx, selected);
}

/* Keys that arrive without a command of ours: loaded from an RDB or a full sync, restored, renamed, moved and
 * copied. */
static int on_key_event(RedisModuleCtx *ctx, int type, const char *event, RedisModuleString *key)
{
    (void)type;
    bool restore = strcmp(event, "restore") == 0;
    if (!restore && (!mod_window_values || (strcmp(event, "loaded") != 0 && strcmp(event, "rename_to") != 0 &&
                                            strcmp(event, "move_to") != 0 && strcmp(event, "copy_to") != 0)))
        return REDISMODULE_OK;
    size_t len;
    const char *s = RedisModule_StringPtrLen(key, &len);
    RedisModuleString *name = RedisModule_CreateString(ctx, s, len); /* a loaded key's name is on the stack */
    RedisModuleKey *k = mod_open_key(ctx, name, REDISMODULE_READ);
    bool bloom = mod_window_holds(k, mod_bw_type), windowed = bloom || mod_window_holds(k, mod_cw_type);
    if (restore) {
        bool bf = mod_window_holds(k, mod_bf_type) || mod_window_holds(k, rb_bf_type);
        bool ours = windowed || bf || mod_window_holds(k, mod_cf_type) || mod_window_holds(k, rb_cf_type);
        mod_limit_on_restore(ctx, name, ours, bloom || bf);
    }
    RedisModule_CloseKey(k);
    if (windowed)
        track(ctx, name);
    RedisModule_FreeString(ctx, name);
    return REDISMODULE_OK;
}

/* SWAPDB moves every key of two databases at once, without a keyspace event: the entries of both swap their
 * database numbers. */
static void on_swapdb(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t subevent, void *data)
{
    (void)ctx, (void)subevent;
    const RedisModuleSwapDbInfo *info = data;
    if (eid.id != REDISMODULE_EVENT_SWAPDB || !info || !tracked)
        return;
    int a = info->dbnum_first, b = info->dbnum_second;
    size_t n = 0, cap = 16;
    char **names = RedisModule_Alloc(cap * sizeof *names);
    size_t *lens = RedisModule_Alloc(cap * sizeof *lens);
    void **values = RedisModule_Alloc(cap * sizeof *values);
    RedisModuleDictIter *it = RedisModule_DictIteratorStartC(tracked, "^", NULL, 0);
    size_t len;
    void *value;
    for (char *k; (k = RedisModule_DictNextC(it, &len, &value));) {
        int db = entry_db(k);
        if (db != a && db != b)
            continue;
        if (n == cap) {
            cap *= 2;
            names = RedisModule_Realloc(names, cap * sizeof *names);
            lens = RedisModule_Realloc(lens, cap * sizeof *lens);
            values = RedisModule_Realloc(values, cap * sizeof *values);
        }
        names[n] = RedisModule_Alloc(len);
        memcpy(names[n], k, len);
        lens[n] = len;
        values[n++] = value;
    }
    RedisModule_DictIteratorStop(it);
    for (size_t i = 0; i < n; i++)
        RedisModule_DictDelC(tracked, names[i], lens[i], NULL);
    for (size_t i = 0; i < n; i++) {
        char buf[4];
        entry_name(entry_db(names[i]) == a ? b : a, "", 0, buf);
        memcpy(names[i], buf, 4);
        RedisModule_DictReplaceC(tracked, names[i], lens[i], values[i]);
        RedisModule_Free(names[i]);
    }
    RedisModule_Free(names);
    RedisModule_Free(lens);
    RedisModule_Free(values);
}

int mod_window_init(RedisModuleCtx *ctx)
{
    tracked = RedisModule_CreateDict(NULL);
    if (!tracked)
        return REDISMODULE_ERR;
    if (RedisModule_SubscribeToServerEvent(ctx, (RedisModuleEvent){REDISMODULE_EVENT_SWAPDB, 1}, on_swapdb) !=
        REDISMODULE_OK)
        return REDISMODULE_ERR;
    return RedisModule_SubscribeToKeyspaceEvents(ctx, REDISMODULE_NOTIFY_GENERIC | REDISMODULE_NOTIFY_LOADED,
                                                 on_key_event);
}

/* ---- values ---- */

/* Creation's allocator: RedisModule_Alloc and friends, held to a budget while a filter is made (the table is
 * refused before it is allocated when it would pass max-filter-memory), unlimited afterwards (a filter keeps
 * its allocator for its duplicates' overflow map, as every filter's grows). */
static struct {
    uint64_t budget, used;
    bool refused;
} guard = {UINT64_MAX, 0, false};

static bool take(size_t n)
{
    if (guard.budget == UINT64_MAX)
        return true;
    if (n > guard.budget - guard.used) {
        guard.refused = true;
        return false;
    }
    guard.used += n;
    return true;
}
static void *g_malloc(void *c, size_t n)
{
    (void)c;
    return take(n) ? RedisModule_Alloc(n) : NULL;
}
static void *g_calloc(void *c, size_t n, size_t size)
{
    (void)c;
    return size && n > SIZE_MAX / size ? NULL : take(n * size) ? RedisModule_Calloc(n, size) : NULL;
}
static void *g_realloc(void *c, void *p, size_t n)
{
    (void)c;
    return take(n) ? RedisModule_Realloc(p, n) : NULL;
}
static void g_free(void *c, void *p)
{
    (void)c;
    RedisModule_Free(p);
}
static const nidus_allocator guarded_allocator = {g_malloc, g_calloc, g_realloc, g_free, NULL};

/* CF.AT / BF.AT key ms CREATE capacity window error_rate fingerprint_bits bucket_size max_kicks expansion
 * max_memory: a creation as the master resolved it (at_create reads it back). */
#define CREATE_ARGC 12
static void replicate_create(RedisModuleCtx *ctx, RedisModuleString *name, const nidus_window_params *p, bool bloom)
{
    char rate[40];
    snprintf(rate, sizeof rate, "%.17g", p->error_rate); /* 17 digits: the same double back */
    RedisModule_Replicate(ctx, bloom ? "BF.AT" : "CF.AT", "slcllclllll", name, (long long)write_time(), "CREATE",
                          (long long)p->capacity, (long long)p->window, rate, (long long)p->fingerprint_bits,
                          (long long)p->bucket_size, (long long)p->max_kicks, (long long)p->expansion,
                          (long long)p->max_memory);
}

void *mod_window_create(RedisModuleCtx *ctx, RedisModuleKey *key, RedisModuleString *name, RedisModuleType *type,
                        const nidus_window_params *params)
{
    if (params->capacity > mod_cfg.max_capacity && mod_load_limit(ctx)) { /* else the master checked */
        RedisModule_ReplyWithError(ctx, MOD_MSG_CAPACITY);
        return NULL;
    }
    nidus_window_params p = *params;
    p.allocator = &guarded_allocator;
    guard.budget = mod_load_limit(ctx) ? mod_cfg.max_memory : UINT64_MAX - 1; /* the master checked */
    guard.used = 0;
    guard.refused = false;
    nidus_window *w = NULL;
    nidus_status st = nidus_window_new(&p, &w);
    guard.budget = UINT64_MAX;
    if (st) {
        RedisModule_ReplyWithError(ctx, guard.refused || st == NIDUS_ERR_TOO_LARGE || st == NIDUS_ERR_LIMIT_MEMORY
                                            ? MOD_MSG_TOO_BIG
                                        : st == NIDUS_ERR_INVALID_ARGUMENT
                                            ? "ERR the error rate needs fingerprints of more than 29 bits beside "
                                              "the window's ages"
                                            : "ERR could not create filter");
        return NULL;
    }
    mod_window_values++;
    RedisModule_ModuleTypeSetValue(key, type, w);
    if (!clock_given) /* inside CF.AT / BF.AT, the command itself is replicated */
        replicate_create(ctx, name, params, is_bloom_type(type));
    track(ctx, name);
    return w;
}


bool mod_window_option(RedisModuleCtx *ctx, RedisModuleString *arg, bool bloom, long long *ms)
{
    long long v;
    if (RedisModule_StringToLongLong(arg, &v) != REDISMODULE_OK) {
        RedisModule_ReplyWithError(ctx, bloom ? "ERR bad window" : "Couldn't parse WINDOW");
        return false;
    }
    if (v < 1 || (uint64_t)v > NIDUS_WINDOW_MAX_TICKS) {
        mod_reply_errorf(ctx, bloom ? "ERR window must be in the range [1, %llu] (milliseconds)"
                                    : "WINDOW: value must be in the range [1, %llu] (milliseconds)",
                         (unsigned long long)NIDUS_WINDOW_MAX_TICKS);
        return false;
    }
    *ms = v;
    return true;
}

/* ---- adds ---- */

void mod_window_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, void *filter, RedisModuleString **items,
                    int n, mod_window_add_mode mode, bool nx, bool multi)
{
    nidus_window *w = filter;
    uint64_t now = write_time();
    bool bloom = mode == MOD_WINDOW_BLOOM;
    if (multi)
        RedisModule_ReplyWithArray(ctx, bloom ? REDISMODULE_POSTPONED_LEN : n);
    long replies = 0;
    for (int i = 0; i < n; i++, replies++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(items[i], &len);
        bool added = true;
        nidus_status st = NIDUS_OK;
        if (bloom) {
            st = nidus_window_add_unique(w, s, len, now, &added);
            if (st) {
                RedisModule_ReplyWithError(ctx, mod_bf_add_error(st));
                replies++;
                break;
            }
            mod_reply_bool(ctx, added);
            continue;
        }
        if (mode == MOD_WINDOW_ADDNX && nidus_window_contains(w, s, len, now))
            added = false;
        else
            st = nidus_window_add(w, s, len, now);
        mod_cf_reply_add(ctx, st, st == NIDUS_OK && added, nx, multi);
    }
    if (multi && bloom)
        RedisModule_ReplySetArrayLength(ctx, replies);
    /* every add may have swept expired entries, and a Bloom add renews an age: replicated whatever it replied */
    replicate_write(ctx, argv, argc, now, bloom);
    track(ctx, argv[1]);
}

/* ---- the commands on windowed keys ---- */

static bool holds(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleType *type)
{
    RedisModuleKey *key = mod_open_key(ctx, name, REDISMODULE_READ);
    bool yes = mod_window_holds(key, type);
    RedisModule_CloseKey(key);
    return yes;
}

static int reply_missing(RedisModuleCtx *ctx, RedisModuleKey *key, const char *missing)
{
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithError(ctx, missing);
}

static bool open_window(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleType *type,
                        const char *missing, RedisModuleKey **key, nidus_window **w)
{
    void *value;
    bool ok = mod_open_existing(ctx, name, mode, type, missing, key, &value);
    *w = value;
    return ok;
}

static int exists_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi, RedisModuleType *type)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    key_state ks = mod_open(ctx, argv[1], REDISMODULE_READ, type, &key, &value);
    if (ks == KEY_WRONGTYPE)
        return reply_missing(ctx, key, REDISMODULE_ERRORMSG_WRONGTYPE);
    uint64_t now = read_time(ctx);
    if (multi)
        RedisModule_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[i], &len);
        mod_reply_bool(ctx, value && nidus_window_contains(value, s, len, now));
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cw_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, false, mod_cw_type);
}
static int cw_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, true, mod_cw_type);
}
static int bw_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, false, mod_bw_type);
}
static int bw_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_command(ctx, argv, argc, true, mod_bw_type);
}

/* CF.COUNT key item: live copies. */
static int cw_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open(ctx, argv[1], REDISMODULE_READ, mod_cw_type, &key, &value) == KEY_WRONGTYPE)
        return reply_missing(ctx, key, REDISMODULE_ERRORMSG_WRONGTYPE);
    size_t len;
    const char *s = RedisModule_StringPtrLen(argv[2], &len);
    RedisModule_ReplyWithLongLong(ctx, value ? (long long)nidus_window_count(value, s, len, read_time(ctx)) : 0);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* CF.DEL key item: the oldest live copy; an expired copy is gone already (0). */
static int cw_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    int rc = REDISMODULE_OK;
    if (open_window(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, mod_cw_type, "Not found", &key, &w)) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[2], &len);
        uint64_t now = write_time();
        nidus_status st = nidus_window_remove(w, s, len, now);
        if (st != NIDUS_ERR_READ_ONLY) {
            replicate_write(ctx, argv, argc, now, false);
            track(ctx, argv[1]);
        }
        rc = st == NIDUS_ERR_READ_ONLY ? RedisModule_ReplyWithError(ctx, mod_cf_add_error(st))
                                       : mod_reply_bool(ctx, st == NIDUS_OK);
    }
    RedisModule_CloseKey(key);
    return rc;
}

/* CF.COMPACT key: nothing to do on a windowed filter: its sweep runs by itself and releases the grown tables
 * whose items have expired. */
static int cw_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    if (open_window(ctx, argv[1], REDISMODULE_READ, mod_cw_type, "Cuckoo filter was not found", &key, &w))
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static void reply_field(RedisModuleCtx *ctx, const char *name, long long v)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithLongLong(ctx, v);
}

static void reply_window_fields(RedisModuleCtx *ctx, const nidus_window_stats *s)
{
    reply_field(ctx, "Window", (long long)s->window);
    reply_field(ctx, "Epoch", (long long)s->epoch_ticks);
    reply_field(ctx, "Entries", (long long)s->entries);
}

/* CF.INFO key: RedisBloom's fields and nidus's as for any cuckoo filter (items: the live ones; filters: the tables
 * held, grown ones included; capacity and load over all of them), then Window (ms), Epoch (ms: ages are counted
 * in epochs of W/5) and Entries (fingerprints held, expired ones not yet swept included). */
static int cw_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    if (!open_window(ctx, argv[1], REDISMODULE_READ, mod_cw_type, "ERR not found", &key, &w)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    nidus_window_stats s;
    nidus_window_get_stats(w, read_time(ctx), &s);
    mod_reply_map(ctx, 17);
    reply_field(ctx, "Size", (long long)s.memory_bytes);
    reply_field(ctx, "Number of buckets", (long long)s.buckets);
    reply_field(ctx, "Number of filters", s.tables);
    reply_field(ctx, "Number of items inserted", (long long)s.live);
    reply_field(ctx, "Number of items deleted", 0);
    reply_field(ctx, "Bucket size", s.bucket_size);
    reply_field(ctx, "Expansion rate", s.expansion);
    reply_field(ctx, "Max iterations", s.max_kicks);
    reply_field(ctx, "Fingerprint bits", s.fingerprint_bits);
    RedisModule_ReplyWithSimpleString(ctx, "Error rate bound");
    RedisModule_ReplyWithDouble(ctx, s.error_bound);
    reply_field(ctx, "Capacity", (long long)s.total_capacity);
    RedisModule_ReplyWithSimpleString(ctx, "Bits per item");
    RedisModule_ReplyWithDouble(ctx, s.bits_per_item);
    RedisModule_ReplyWithSimpleString(ctx, "Load");
    RedisModule_ReplyWithDouble(ctx, s.total_slots ? (double)s.entries / (double)s.total_slots : 0.0);
    reply_field(ctx, "Compacting", 0);
    reply_window_fields(ctx, &s);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cw_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    if (open_window(ctx, argv[1], REDISMODULE_READ, mod_cw_type, "ERR not found", &key, &w)) {
        nidus_window_stats s;
        nidus_window_get_stats(w, read_time(ctx), &s);
        char line[256];
        int n = snprintf(line, sizeof line,
                         "bktsize:%u buckets:%llu items:%llu deletes:0 filters:%u max_iterations:%u expansion:%u "
                         "window:%llu epoch:%llu entries:%llu",
                         s.bucket_size, (unsigned long long)s.buckets, (unsigned long long)s.live, s.tables,
                         s.max_kicks, s.expansion,
                         (unsigned long long)s.window, (unsigned long long)s.epoch_ticks,
                         (unsigned long long)s.entries);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cw_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long iter;
    if (argc == 3 && RedisModule_StringToLongLong(argv[2], &iter) == REDISMODULE_OK && iter < 0)
        return RedisModule_ReplyWithError(ctx, "Invalid position");
    return mod_scandump_command(ctx, argv, argc, &mod_cw_ops);
}
/* LOADCHUNK, and the key it made known to the timer. */
static int loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const mod_filter_ops *ops)
{
    int rc = mod_load_chunk_command(ctx, argv, argc, ops);
    if (argc == 4 && holds(ctx, argv[1], *ops->type))
        track(ctx, argv[1]);
    return rc;
}
static int cw_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return loadchunk(ctx, argv, argc, &mod_cw_ops);
}
static int bw_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return mod_scandump_command(ctx, argv, argc, &mod_bw_ops);
}
static int bw_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return loadchunk(ctx, argv, argc, &mod_bw_ops);
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | WINDOW]: RedisBloom's five fields (capacity: all
 * tables'; filters: the tables held, grown ones included; items: the live ones; the expansion nil for a filter
 * that does not grow), then Window (ms). */
static int bw_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    if (!open_window(ctx, argv[1], REDISMODULE_READ, mod_bw_type, "ERR not found", &key, &w)) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    nidus_window_stats s;
    nidus_window_get_stats(w, read_time(ctx), &s);
    RedisModule_CloseKey(key);
    if (argc == 3 && mod_arg_is(argv[2], "WINDOW")) {
        if (mod_resp3(ctx)) {
            mod_reply_map(ctx, 1);
            RedisModule_ReplyWithSimpleString(ctx, "Window");
        } else {
            RedisModule_ReplyWithArray(ctx, 1);
        }
        return RedisModule_ReplyWithLongLong(ctx, (long long)s.window);
    }
    long long values[] = {(long long)s.total_capacity, (long long)s.memory_bytes, s.tables, (long long)s.live,
                          s.expansion};
    if (argc == 3)
        return mod_bf_info_reply(ctx, argv[2], values, s.expansion != 0);
    mod_reply_map(ctx, 6);
    static const char *const names[] = {"Capacity", "Size", "Number of filters", "Number of items inserted"};
    for (int f = 0; f < 4; f++)
        reply_field(ctx, names[f], values[f]);
    RedisModule_ReplyWithSimpleString(ctx, "Expansion rate");
    if (s.expansion)
        RedisModule_ReplyWithLongLong(ctx, s.expansion);
    else
        RedisModule_ReplyWithNull(ctx);
    reply_field(ctx, "Window", (long long)s.window);
    return REDISMODULE_OK;
}

/* BF.CARD key: the live items. */
static int bw_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    void *value;
    if (mod_open(ctx, argv[1], REDISMODULE_READ, mod_bw_type, &key, &value) == KEY_WRONGTYPE)
        return reply_missing(ctx, key, REDISMODULE_ERRORMSG_WRONGTYPE);
    nidus_window_stats s = {0};
    if (value)
        nidus_window_get_stats(value, read_time(ctx), &s);
    RedisModule_CloseKey(key);
    return RedisModule_ReplyWithLongLong(ctx, (long long)s.live);
}

static int bw_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    nidus_window *w;
    if (open_window(ctx, argv[1], REDISMODULE_READ, mod_bw_type, "ERR not found", &key, &w)) {
        nidus_window_stats s;
        nidus_window_get_stats(w, read_time(ctx), &s);
        RedisModule_ReplyWithArray(ctx, 2);
        char line[256];
        int n = snprintf(line, sizeof line, "size:%llu", (unsigned long long)s.live);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
        n = snprintf(line, sizeof line, "bytes:%llu capacity:%llu window:%llu epoch:%llu entries:%llu ratio:%g",
                     (unsigned long long)s.memory_bytes, (unsigned long long)s.total_capacity,
                     (unsigned long long)s.window, (unsigned long long)s.epoch_ticks,
                     (unsigned long long)s.entries, s.error_bound);
        RedisModule_ReplyWithStringBuffer(ctx, line, (size_t)n);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ---- CF.AT / BF.AT ---- */


/* CF.DEL as CF.AT replays it: on a windowed key (a replica whose key is not would have diverged already). */
static int cf_del_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return argc >= 2 && holds(ctx, argv[1], mod_cw_type) ? cw_del(ctx, argv, argc) : mod_cf_del(ctx, argv, argc);
}

/* The writes CF.AT and BF.AT carry: the handlers add to windowed keys, or create them (INSERT ... WINDOW). */
static const struct {
    const char *name;
    RedisModuleCmdFunc fn;
} cf_writes[] = {{"cf.add", mod_cf_add},       {"cf.addnx", mod_cf_add}, {"cf.insert", mod_cf_insert},
                 {"cf.insertnx", mod_cf_insert}, {"cf.del", cf_del_at},   {NULL, NULL}},
  bf_writes[] = {{"bf.add", mod_bf_add}, {"bf.madd", mod_bf_madd}, {"bf.insert", mod_bf_insert}, {NULL, NULL}};

/* Reads argument k of a CREATE form into *v within [lo, hi]. */
static bool create_arg(RedisModuleString **argv, int k, long long lo, long long hi, long long *v)
{
    return RedisModule_StringToLongLong(argv[k], v) == REDISMODULE_OK && *v >= lo && *v <= hi;
}

/* CF.AT / BF.AT key ms CREATE ... (replicate_create): the master's filter, made with exactly its parameters. */
static int at_create(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom)
{
    long long cap, window, f, b, kicks, expansion, max_memory;
    double rate;
    if (argc != CREATE_ARGC || !create_arg(argv, 4, 1, LLONG_MAX, &cap) ||
        !create_arg(argv, 5, 1, (long long)NIDUS_WINDOW_MAX_TICKS, &window) ||
        RedisModule_StringToDouble(argv[6], &rate) != REDISMODULE_OK || !(rate >= 0 && rate < 1) ||
        !create_arg(argv, 7, 0, 32 - NIDUS_WINDOW_AGE_BITS, &f) || !create_arg(argv, 8, 0, 8, &b) ||
        !create_arg(argv, 9, 0, 65535, &kicks) || !create_arg(argv, 10, 0, NIDUS_WINDOW_MAX_EXPANSION, &expansion) ||
        !create_arg(argv, 11, 0, LLONG_MAX, &max_memory))
        return RedisModule_ReplyWithError(ctx, "ERR bad windowed creation");
    nidus_window_params p = {.capacity = (uint64_t)cap, .window = (uint64_t)window, .error_rate = rate,
                             .fingerprint_bits = (unsigned)f, .bucket_size = (unsigned)b,
                             .max_kicks = (unsigned)kicks, .expansion = (unsigned)expansion,
                             .max_memory = (uint64_t)max_memory};
    RedisModuleType *type = bloom ? mod_bw_type : mod_cw_type;
    RedisModuleKey *key = mod_open_key(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int rc = REDISMODULE_OK;
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY) {
        rc = RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if (mod_window_create(ctx, key, argv[1], type, &p)) { /* replies its own error */
        RedisModule_ReplicateVerbatim(ctx);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return rc;
}

static int at_command(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom)
{
    const int from_master = REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING;
    if (!(RedisModule_GetContextFlags(ctx) & from_master))
        return RedisModule_ReplyWithError(ctx, bloom ? "ERR BF.AT is sent by a master to its replicas and the AOF, "
                                                       "not by clients"
                                                     : "ERR CF.AT is sent by a master to its replicas and the AOF, "
                                                       "not by clients");
    if (argc < 5)
        return RedisModule_WrongArity(ctx);
    long long ms;
    if (RedisModule_StringToLongLong(argv[2], &ms) != REDISMODULE_OK || ms < 0)
        return RedisModule_ReplyWithError(ctx, "ERR bad time");
    RedisModuleType *type = bloom ? mod_bw_type : mod_cw_type;
    if (mod_arg_is(argv[3], "CREATE")) {
        clock_given = true; /* a replicated creation: not replicated again in another form */
        given_clock = (uint64_t)ms;
        int rc = at_create(ctx, argv, argc, bloom);
        clock_given = false;
        return rc;
    }
    if (mod_merge_at_form(argv, argc)) /* a master's merge on a thread (merge_jobs.c) */
        return mod_merge_at(ctx, argv, argc, bloom);
    if (mod_arg_is(argv[3], "LIMIT")) /* for a key of any of the module's types (mod_limit_announce) */
        return mod_limit_at(ctx, argv, argc);
    if (mod_arg_is(argv[3], "SWEEP")) {
        long long budget;
        if (argc != 5 || RedisModule_StringToLongLong(argv[4], &budget) != REDISMODULE_OK || budget < 0)
            return RedisModule_ReplyWithError(ctx, "ERR bad sweep step");
        RedisModuleKey *key;
        nidus_window *w;
        int rc = REDISMODULE_OK;
        if (open_window(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, type, "ERR not found", &key, &w)) {
            nidus_status st = nidus_window_advance(w, (uint64_t)ms, (uint64_t)budget, NULL);
            if (st == NIDUS_OK) {
                RedisModule_ReplicateVerbatim(ctx);
                track(ctx, argv[1]);
            }
            rc = st ? RedisModule_ReplyWithError(ctx, "ERR bad sweep step") : RedisModule_ReplyWithSimpleString(ctx, "OK");
        }
        RedisModule_CloseKey(key);
        return rc;
    }
    if (mod_arg_is(argv[3], "GROW")) /* a RedisBloom-format key's growth settings (mod_grow_settings_for) */
        return mod_grow_at(ctx, argv, argc, bloom);
    RedisModuleCmdFunc fn = NULL;
    for (int c = 0; (bloom ? bf_writes : cf_writes)[c].name && !fn; c++)
        if (mod_arg_is(argv[3], (bloom ? bf_writes : cf_writes)[c].name))
            fn = (bloom ? bf_writes : cf_writes)[c].fn;
    if (!fn)
        return RedisModule_ReplyWithError(ctx, "ERR unknown windowed write");
    RedisModuleString **inner = RedisModule_Alloc((size_t)(argc - 2) * sizeof *inner);
    inner[0] = argv[3];
    inner[1] = argv[1];
    for (int i = 4; i < argc; i++)
        inner[i - 2] = argv[i];
    clock_given = true;
    given_clock = (uint64_t)ms;
    int rc = fn(ctx, inner, argc - 2);
    clock_given = false;
    RedisModule_Free(inner);
    return rc;
}

int mod_cf_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return at_command(ctx, argv, argc, false); }
int mod_bf_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) { return at_command(ctx, argv, argc, true); }

/* ---- routing ---- */


/* The header chunk of a windowed filter: its payload, after the chunk's framing, is the encoding's prefix
 * ("NIDUS", version, kind). */
#define CHUNK_FRAMING 20 /* "NDCK", sequence u32, token u64, length u32 */
static bool window_header(RedisModuleString *iter, RedisModuleString *data)
{
    long long i;
    size_t len;
    const char *s = RedisModule_StringPtrLen(data, &len);
    return RedisModule_StringToLongLong(iter, &i) == REDISMODULE_OK && i == 1 && len > CHUNK_FRAMING + 6 &&
           memcmp(s + CHUNK_FRAMING, "NIDUS", 5) == 0 && s[CHUNK_FRAMING + 6] == (char)NIDUS_KIND_WINDOW;
}

#define WROUTE(nidus, win, typevar, loadchunk)                                                                  \
    static RedisModuleCmdFunc next_##nidus;                                                                    \
    static int wroute_##nidus(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)                        \
    {                                                                                                          \
        if (argc >= 2 && mod_window_values && holds(ctx, argv[1], typevar))                                         \
            return win(ctx, argv, argc);                                                                       \
        if (loadchunk && argc == 4 && window_header(argv[2], argv[3]))                                        \
            return win(ctx, argv, argc);                                                                       \
        return next_##nidus(ctx, argv, argc);                                                                  \
    }

WROUTE(mod_cf_exists, cw_exists, mod_cw_type, false)
WROUTE(mod_cf_mexists, cw_mexists, mod_cw_type, false)
WROUTE(mod_cf_count, cw_count, mod_cw_type, false)
WROUTE(mod_cf_del, cw_del, mod_cw_type, false)
WROUTE(mod_cf_compact, cw_compact, mod_cw_type, false)
WROUTE(mod_cf_info, cw_info, mod_cw_type, false)
WROUTE(mod_cf_debug, cw_debug, mod_cw_type, false)
WROUTE(mod_cf_scandump, cw_scandump, mod_cw_type, false)
WROUTE(mod_cf_loadchunk, cw_loadchunk, mod_cw_type, true)
WROUTE(mod_bf_exists, bw_exists, mod_bw_type, false)
WROUTE(mod_bf_mexists, bw_mexists, mod_bw_type, false)
WROUTE(mod_bf_info, bw_info, mod_bw_type, false)
WROUTE(mod_bf_card, bw_card, mod_bw_type, false)
WROUTE(mod_bf_debug, bw_debug, mod_bw_type, false)
WROUTE(mod_bf_scandump, bw_scandump, mod_bw_type, false)
WROUTE(mod_bf_loadchunk, bw_loadchunk, mod_bw_type, true)

#define WROUTE_ENTRY(nidus) {nidus, wroute_##nidus, &next_##nidus}

RedisModuleCmdFunc mod_window_route(RedisModuleCmdFunc fn, RedisModuleCmdFunc next)
{
    static const mod_route routes[] = {
        WROUTE_ENTRY(mod_cf_exists), WROUTE_ENTRY(mod_cf_mexists),  WROUTE_ENTRY(mod_cf_count),
        WROUTE_ENTRY(mod_cf_del),    WROUTE_ENTRY(mod_cf_compact),  WROUTE_ENTRY(mod_cf_info),
        WROUTE_ENTRY(mod_cf_debug),  WROUTE_ENTRY(mod_cf_scandump), WROUTE_ENTRY(mod_cf_loadchunk),
        WROUTE_ENTRY(mod_bf_exists), WROUTE_ENTRY(mod_bf_mexists),  WROUTE_ENTRY(mod_bf_info),
        WROUTE_ENTRY(mod_bf_card),   WROUTE_ENTRY(mod_bf_debug),    WROUTE_ENTRY(mod_bf_scandump),
        WROUTE_ENTRY(mod_bf_loadchunk),
    };
    return mod_route_find(routes, sizeof routes / sizeof routes[0], fn, next);
}
