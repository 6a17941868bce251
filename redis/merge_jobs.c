/* SPDX-License-Identifier: BSD-3-Clause */
/* Large CF.MERGE / BF.MERGE built on a thread, so that no merge holds the server.
 *
 * A merge whose inputs hold more than merge-inline-bytes, asked by a client that may wait, is built on a thread
 * of its own (merge_build: a copy of destkey, or of the first source, with every source merged into it). The
 * client waits for its reply as for BLPOP; the server serves everyone else. Until the union is set, destkey
 * answers as before the merge, and the inputs are held still:
 *  - their values are pinned. A write of the module (any command that changes a key, the merges included)
 *    naming destkey or a key whose value is pinned waits, its client blocked, until the merge ends; inside
 *    MULTI or a script, which cannot wait, it ends the merge first (waiting for its thread) and then runs;
 *  - a pinned value the server frees (DEL, FLUSHALL, an overwrite, expiry, lazy free) is kept until the merge
 *    ends, then freed; defrag and the timers' compaction and sweep steps pass it by.
 * A timer, every millisecond while a merge runs, ends the merges whose threads are done. When destkey and every
 * sourcekey still hold the values read at the start, the union replaces destkey and the client gets OK; else
 * the client gets the error, and destkey is as it was.
 *
 * Replication: a master replicates CF.AT (BF.AT) destkey 0 MERGE BEGIN numkeys sourcekey... when it starts such
 * a merge, and CF.AT destkey 0 MERGE END numkeys sourcekey... where it sets the union (MERGE ABORT where it does
 * not). A replica and an AOF replay start the same merge on a thread at BEGIN (their keys are the master's at
 * that point of the stream, and stay so: the master's writes to them wait for its END), and at END wait for
 * their thread and set its union: the master's bytes, built the same way. One that missed the BEGIN (a full
 * sync or an AOF rewrite taken mid-merge) builds the union at END, within the command, on a copy as the threads
 * do. A replica promoted while it builds one ends it as a master would. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "merge_jobs.h"
#include "pins.h"
#include "windowed.h"

#define MSG_CHANGED                                                                                            \
    "ERR merge not done: destkey or a sourcekey was changed (deleted, renamed or overwritten) while it ran"
#define MSG_NO_THREAD "ERR merge not done: no merge thread could start"
#define MSG_UNBLOCKED "UNBLOCKED client unblocked via CLIENT UNBLOCK"

/* Pins the n inputs' values, all or none (false: no room). */
static bool pin_all(const merge_input *in, int n)
{
    if (!mod_pin_room((unsigned)n))
        return false;
    for (int i = 0; i < n; i++)
        mod_pin(in[i].value);
    return true;
}

static void unpin_all(const merge_input *in, int n)
{
    for (int i = 0; i < n; i++)
        mod_unpin(in[i].value);
}

/* ---- merges on threads ---- */

typedef struct job {
    struct job *next;
    merge_plan plan; /* its inputs pinned; plan.in owned */
    int db;
    RedisModuleString **argv; /* owned copies: argv[1] destkey, argv[2] numkeys, argv[3...] sourcekeys */
    int argc;
    bool bloom;
    bool replayed;  /* started by a master's MERGE BEGIN: ends at its END (or ABORT) */
    bool abandoned; /* the master's ABORT: dropped once its thread is done */
    bool adopted;   /* replayed, then this server became a master (promoted, or its AOF ended mid-merge): its own */
    RedisModuleBlockedClient *bc; /* the client waiting for the reply; NULL for a replayed one */
    pthread_t thread;
    atomic_bool done;
    void *result; /* the thread's: the union, or NULL and st, failed_at */
    nidus_status st;
    int failed_at;
} job;

/* A client's write waiting for keys a merge holds; a waiting merge becomes a job when they are free. */
typedef struct waiter {
    struct waiter *next;
    int db;
    RedisModuleString **argv; /* owned copies */
    int argc;
    bool merge; /* a CF.MERGE / BF.MERGE: its keys are argv[1] and argv[3...]; else argv[1] */
    RedisModuleCmdFunc run; /* a write's: what runs it when its client is unblocked (rerun) */
    RedisModuleBlockedClient *bc;
} waiter;

static job *jobs;
static waiter *waiters;
static waiter *released; /* writes unblocked whose reply callback (rerun) has not run yet */
static bool timer_set;
static bool rerunning; /* inside an unblocked client's reply callback, which cannot block again */
static bool settling;  /* ending merges for a command about to write their keys: no waiting merge starts */

static RedisModuleString **copy_args(RedisModuleString **argv, int argc)
{
    RedisModuleString **copy = RedisModule_Alloc((size_t)argc * sizeof *copy);
    for (int i = 0; i < argc; i++) {
        size_t len;
        const char *s = RedisModule_StringPtrLen(argv[i], &len);
        copy[i] = RedisModule_CreateString(NULL, s, len);
    }
    return copy;
}

static void free_args(RedisModuleString **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        RedisModule_FreeString(NULL, argv[i]);
    RedisModule_Free(argv);
}

static char *copy_text(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = RedisModule_Alloc(len);
    memcpy(copy, s, len);
    return copy;
}

static const char *at_command(bool bloom) { return bloom ? "BF.AT" : "CF.AT"; }

/* Whether this command's client may be blocked to wait. */
static bool may_wait(RedisModuleCtx *ctx)
{
    const int cannot = REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_MULTI | REDISMODULE_CTX_FLAGS_DENY_BLOCKING |
                       REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING;
    return RedisModule_BlockClient && !rerunning && !(RedisModule_GetContextFlags(ctx) & cannot);
}

static void *build(void *arg)
{
    job *j = arg;
    j->st = merge_build(&j->plan, &j->result, &j->failed_at);
    atomic_store(&j->done, true);
    return NULL;
}

static void on_tick(RedisModuleCtx *ctx, void *data);

static void arm_timer(RedisModuleCtx *ctx)
{
    if (!timer_set && (jobs || waiters)) {
        RedisModule_CreateTimer(ctx, 1, on_tick, NULL);
        timer_set = true;
    }
}

static int reply_text(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    const char *text = RedisModule_GetBlockedClientPrivateData(ctx);
    return strcmp(text, "OK") == 0 ? RedisModule_ReplyWithSimpleString(ctx, "OK")
                                   : RedisModule_ReplyWithError(ctx, text);
}

static void free_text(RedisModuleCtx *ctx, void *text)
{
    (void)ctx;
    RedisModule_Free(text);
}

static int reply_unblocked(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    return RedisModule_ReplyWithError(ctx, MSG_UNBLOCKED);
}

/* A job for plan p of argv (p->in taken), its thread started; NULL (nothing taken) when none can start. */
static job *job_start(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, merge_plan *p, bool bloom,
                      bool replayed, RedisModuleBlockedClient *bc)
{
    job *j = RedisModule_Calloc(1, sizeof *j);
    *j = (job){.plan = *p, .db = RedisModule_GetSelectedDb(ctx), .argc = argc, .bloom = bloom,
               .replayed = replayed, .bc = bc};
    atomic_init(&j->done, false);
    if (!pin_all(p->in, p->n)) {
        RedisModule_Free(j);
        return NULL;
    }
    if (!mod_spawn(build, j, &j->thread)) {
        unpin_all(p->in, p->n);
        RedisModule_Free(j);
        return NULL;
    }
    j->argv = copy_args(argv, argc);
    p->in = NULL;
    j->next = jobs;
    jobs = j;
    if (!replayed)
        RedisModule_Replicate(ctx, at_command(bloom), "slccv", argv[1], 0ll, "MERGE", "BEGIN", argv + 2,
                              (size_t)(argc - 2));
    arm_timer(ctx);
    return j;
}

bool mod_merge_start(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, merge_plan *p, bool bloom,
                     bool replayed)
{
    if (!replayed && !may_wait(ctx))
        return false;
    job *j = job_start(ctx, argv, argc, p, bloom, replayed, NULL);
    if (j && !replayed) /* the timer cannot run before this command returns */
        j->bc = RedisModule_BlockClient(ctx, reply_text, reply_unblocked, free_text, 0);
    return j != NULL;
}

/* The module value key `name` of the selected database holds, or NULL when it holds none (an empty key, another
 * type); *empty, when given, says whether the key is absent. */
static const void *key_value(RedisModuleCtx *ctx, RedisModuleString *name, bool *empty)
{
    RedisModuleKey *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ);
    int type = RedisModule_KeyType(key);
    const void *value = type == REDISMODULE_KEYTYPE_MODULE ? RedisModule_ModuleTypeGetValue(key) : NULL;
    RedisModule_CloseKey(key);
    if (empty)
        *empty = type == REDISMODULE_KEYTYPE_EMPTY;
    return value;
}

/* Whether key `name` of the selected database holds a pinned value, or is the destkey of a running merge. */
static bool key_busy(RedisModuleCtx *ctx, RedisModuleString *name)
{
    int db = RedisModule_GetSelectedDb(ctx);
    for (job *j = jobs; j; j = j->next)
        if (j->db == db && RedisModule_StringCompare(j->argv[1], name) == 0)
            return true;
    const void *value = key_value(ctx, name, NULL);
    return value && mod_pinned(value);
}

/* Whether the keys of a command (argv[1], and argv[3...] for a merge) are held by a running merge. */
static bool keys_busy(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool merge)
{
    if (!jobs || argc < 2)
        return false;
    if (key_busy(ctx, argv[1]))
        return true;
    for (int i = 3; merge && i < argc; i++)
        if (key_busy(ctx, argv[i]))
            return true;
    return false;
}

/* Whether a write unblocked and not yet run names key `name` of the selected database: a merge waits for it,
 * which would otherwise take the key first and make the write end it at once (waiting for its thread). */
static bool released_holds(RedisModuleCtx *ctx, RedisModuleString *name)
{
    int db = RedisModule_GetSelectedDb(ctx);
    for (waiter *w = released; w; w = w->next)
        if (w->db == db && RedisModule_StringCompare(w->argv[1], name) == 0)
            return true;
    return false;
}

/* keys_busy for a command: a merge's keys are busy too while an unblocked write to one of them has not run. */
static bool command_busy(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool merge)
{
    if (argc < 2)
        return false;
    if (keys_busy(ctx, argv, argc, merge))
        return true;
    if (!merge || !released)
        return false;
    if (released_holds(ctx, argv[1]))
        return true;
    for (int i = 3; i < argc; i++)
        if (released_holds(ctx, argv[i]))
            return true;
    return false;
}

static void forget_released(waiter *w)
{
    for (waiter **at = &released; *at; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            return;
        }
}

/* Whether job j holds key `name` of the selected database: its destkey there, or a value it pinned, in whatever
 * database the value is now (MOVE, SWAPDB). */
static bool job_holds(RedisModuleCtx *ctx, const job *j, RedisModuleString *name)
{
    if (j->db == RedisModule_GetSelectedDb(ctx) && RedisModule_StringCompare(j->argv[1], name) == 0)
        return true;
    const void *value = key_value(ctx, name, NULL);
    for (int i = 0; i < j->plan.n && value; i++)
        if (j->plan.in[i].value == value)
            return true;
    return false;
}

/* Whether destkey and every sourcekey still hold the values the merge read. */
static bool unchanged(RedisModuleCtx *ctx, const job *j)
{
    for (int i = 0; i < j->plan.n; i++) {
        const merge_input *in = &j->plan.in[i];
        RedisModuleString *name = j->argv[in->position == 0 ? 1 : in->position + 2];
        if (key_value(ctx, name, NULL) != in->value)
            return false;
    }
    if (j->plan.dest_exists)
        return true;
    bool empty;
    key_value(ctx, j->argv[1], &empty);
    return empty;
}

/* How a job ends: as this server's own (checked, replicated as END or ABORT, the client answered), at a
 * master's END (set as built), or dropped (a master's ABORT, or a replayed one its master left). */
typedef enum { END_OWN, END_MASTER, END_DROP } ending;

static void wake_waiters(RedisModuleCtx *ctx);

/* Ends job j (waiting for its thread), in its database. */
static void finish(RedisModuleCtx *ctx, job *j, ending how)
{
    pthread_join(j->thread, NULL);
    for (job **at = &jobs; *at; at = &(*at)->next)
        if (*at == j) {
            *at = j->next;
            break;
        }
    int selected = RedisModule_GetSelectedDb(ctx);
    RedisModule_SelectDb(ctx, j->db);
    char buf[320];
    const char *text = "OK";
    bool install = false;
    if (how != END_DROP) {
        if (j->st)
            text = merge_error_text(&j->plan, j->st, j->failed_at, buf, sizeof buf);
        else if (how == END_OWN && !unchanged(ctx, j))
            text = MSG_CHANGED;
        else
            install = true;
    }
    if (how == END_OWN && install)
        RedisModule_Replicate(ctx, at_command(j->bloom), "slccv", j->argv[1], 0ll, "MERGE", "END", j->argv + 2,
                              (size_t)(j->argc - 2));
    else if (how == END_OWN)
        RedisModule_Replicate(ctx, at_command(j->bloom), "slcc", j->argv[1], 0ll, "MERGE", "ABORT");
    if (install) {
        RedisModuleKey *key = mod_open_key(ctx, j->argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
        merge_install(ctx, key, j->argv[1], &j->plan, j->result); /* the old value, pinned, is freed below */
        RedisModule_CloseKey(key);
        j->result = NULL;
    }
    if (j->result)
        merge_free_result(&j->plan, j->result);
    if (j->bc)
        RedisModule_UnblockClient(j->bc, copy_text(text));
    unpin_all(j->plan.in, j->plan.n);
    RedisModule_SelectDb(ctx, selected);
    RedisModule_Free(j->plan.in);
    free_args(j->argv, j->argc);
    RedisModule_Free(j);
    if (settling) /* a waiting merge could take the keys the command is about to write: the timer starts it */
        arm_timer(ctx);
    else
        wake_waiters(ctx);
}

/* Whether this server ends its jobs as a master (not a replica, not loading). */
static bool is_master(RedisModuleCtx *ctx)
{
    return !(RedisModule_GetContextFlags(ctx) & (REDISMODULE_CTX_FLAGS_SLAVE | REDISMODULE_CTX_FLAGS_LOADING));
}

/* Ends now every job holding a key of the command (a client that cannot wait, or a master's stream). A replayed
 * job ends here only when a client of this master writes (it is this server's now); a write of the master's
 * stream (or a slot migration's) to its keys says the master gave it up. */
static void settle(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool merge)
{
    bool master = is_master(ctx) && !(RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_REPLICATED);
    settling = true;
    for (bool again = true; again;) {
        again = false;
        for (job *j = jobs; j && !again; j = j->next) {
            bool held = job_holds(ctx, j, argv[1]);
            for (int i = 3; merge && i < argc && !held; i++)
                held = job_holds(ctx, j, argv[i]);
            if (held) {
                finish(ctx, j, j->abandoned || (j->replayed && !master) ? END_DROP : END_OWN);
                again = true;
            }
        }
    }
    settling = false;
}

/* A waiting merge whose keys are free: its job starts, or its client gets the reply. */
static void start_waiting_merge(RedisModuleCtx *ctx, waiter *w)
{
    merge_plan p;
    uint64_t total;
    char err[320];
    bool bloom = mod_arg_is(w->argv[0], "BF.MERGE");
    plan_state s = merge_plan_keys(ctx, w->argv, w->argc, bloom, &p, &total, err, sizeof err);
    if (s == PLAN_MERGE && !job_start(ctx, w->argv, w->argc, &p, bloom, false, w->bc))
        snprintf(err, sizeof err, "%s", MSG_NO_THREAD);
    else if (s == PLAN_MERGE)
        return; /* the job answers its client */
    RedisModule_Free(p.in);
    RedisModule_UnblockClient(w->bc, copy_text(s == PLAN_DONE ? "OK" : err));
}

static void free_waiter(RedisModuleCtx *ctx, void *arg)
{
    (void)ctx;
    waiter *w = arg;
    forget_released(w); /* its client left before its reply callback */
    free_args(w->argv, w->argc);
    RedisModule_Free(w);
}

/* Unblocks the waiting clients whose keys no merge holds any more (oldest first). */
static void wake_waiters(RedisModuleCtx *ctx)
{
    int selected = RedisModule_GetSelectedDb(ctx);
    waiter **at = &waiters;
    while (*at) {
        waiter *w = *at;
        RedisModule_SelectDb(ctx, w->db);
        if (command_busy(ctx, w->argv, w->argc, w->merge)) {
            at = &w->next;
            continue;
        }
        *at = w->next;
        if (w->merge) {
            start_waiting_merge(ctx, w);
            free_waiter(ctx, w);
        } else {
            w->next = released;
            released = w;
            RedisModule_UnblockClient(w->bc, w); /* rerun runs it; free_waiter frees it */
        }
    }
    RedisModule_SelectDb(ctx, selected);
    arm_timer(ctx);
}

/* The reply callback of a write that waited: it runs now (ending at once any merge that took its keys since). */
static int rerun(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    waiter *w = RedisModule_GetBlockedClientPrivateData(ctx);
    forget_released(w);
    if (keys_busy(ctx, argv, argc, w->merge)) /* no merge waits behind it (command_busy): a safety net */
        settle(ctx, argv, argc, w->merge);
    rerunning = true;
    w->run(ctx, argv, argc);
    rerunning = false;
    return REDISMODULE_OK;
}

/* Blocks the command's client until no merge holds its keys. */
static int wait_for_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, RedisModuleCmdFunc run,
                         bool merge)
{
    waiter *w = RedisModule_Calloc(1, sizeof *w);
    *w = (waiter){.db = RedisModule_GetSelectedDb(ctx), .argv = copy_args(argv, argc), .argc = argc,
                  .merge = merge, .run = run};
    w->bc = merge ? RedisModule_BlockClient(ctx, reply_text, reply_unblocked, free_text, 0)
                  : RedisModule_BlockClient(ctx, rerun, reply_unblocked, free_waiter, 0);
    waiter **at = &waiters;
    while (*at)
        at = &(*at)->next;
    *at = w;
    arm_timer(ctx);
    return REDISMODULE_OK;
}

/* How the timer ends a job whose thread is done: a client's as its own; a replayed one dropped when its master
 * gave it up (ABORT) or its keys are no longer what it read (a full sync replaced them, a slot import was
 * dropped), as its own once adopted on a master, else not before its master's END (-1). */
static int timer_ending(RedisModuleCtx *ctx, job *j, bool master)
{
    if (!j->replayed)
        return END_OWN;
    if (j->abandoned)
        return END_DROP;
    int selected = RedisModule_GetSelectedDb(ctx);
    RedisModule_SelectDb(ctx, j->db);
    bool same = unchanged(ctx, j);
    RedisModule_SelectDb(ctx, selected);
    return !same ? END_DROP : j->adopted && master ? END_OWN : -1;
}

static void on_tick(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    timer_set = false;
    bool master = is_master(ctx);
    for (bool again = true; again && !(RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_LOADING);) {
        again = false;
        for (job *j = jobs; j && !again; j = j->next) {
            int how = atomic_load(&j->done) ? timer_ending(ctx, j, master) : -1;
            if (how >= 0) {
                finish(ctx, j, (ending)how);
                again = true;
            }
        }
    }
    wake_waiters(ctx);
}

/* This server is a master now (promoted, or at the end of its AOF's load): the merges its master's stream
 * started and did not end are its own; the timer ends them as any other, replicating their END. */
static void adopt(RedisModuleCtx *ctx)
{
    if (!is_master(ctx))
        return;
    for (job *j = jobs; j; j = j->next)
        j->adopted = j->replayed;
    arm_timer(ctx);
}

static void on_role(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t subevent, void *data)
{
    (void)eid;
    (void)data;
    if (subevent == REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER)
        adopt(ctx);
}

void mod_merge_jobs_loaded(RedisModuleCtx *ctx) { adopt(ctx); }

void mod_merge_jobs_init(RedisModuleCtx *ctx)
{
    RedisModule_SubscribeToServerEvent(ctx, (RedisModuleEvent){REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED, 1}, on_role);
}

static job *replayed_job(RedisModuleCtx *ctx, RedisModuleString *dest)
{
    int db = RedisModule_GetSelectedDb(ctx);
    for (job *j = jobs; j; j = j->next)
        if (j->replayed && !j->abandoned && j->db == db && RedisModule_StringCompare(j->argv[1], dest) == 0)
            return j;
    return NULL;
}

bool mod_merge_at_form(RedisModuleString **argv, int argc) { return argc >= 5 && mod_arg_is(argv[3], "MERGE"); }

int mod_merge_at(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom)
{
    if (argc < 5)
        return RedisModule_WrongArity(ctx);
    job *j = replayed_job(ctx, argv[1]);
    if (mod_arg_is(argv[4], "ABORT")) {
        if (j)
            j->abandoned = true; /* its pins go when its thread is done (on_tick), or at a write to its keys */
        RedisModule_ReplicateVerbatim(ctx);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    bool begin = mod_arg_is(argv[4], "BEGIN");
    if ((!begin && !mod_arg_is(argv[4], "END")) || argc < 7)
        return RedisModule_ReplyWithError(ctx, "ERR bad merge form");
    if (!begin && j) {
        finish(ctx, j, END_MASTER);
        RedisModule_ReplicateVerbatim(ctx);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    /* the merge's own arguments: MERGE destkey numkeys sourcekey... */
    RedisModuleString **inner = RedisModule_Alloc((size_t)(argc - 3) * sizeof *inner);
    inner[0] = argv[3];
    inner[1] = argv[1];
    for (int i = 5; i < argc; i++)
        inner[i - 3] = argv[i];
    if (begin)
        RedisModule_ReplicateVerbatim(ctx);
    int rc = merge_replayed(ctx, inner, argc - 3, bloom, begin); /* END without a job: replicated verbatim there */
    RedisModule_Free(inner);
    return rc;
}

/* ---- the module's writes, held while a merge holds their keys ---- */

static int guarded(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, RedisModuleCmdFunc next, bool merge)
{
    if ((!jobs && !released) || RedisModule_IsKeysPositionRequest(ctx) || mod_merge_at_form(argv, argc) ||
        !command_busy(ctx, argv, argc, merge))
        return next(ctx, argv, argc);
    if (may_wait(ctx))
        return wait_for_keys(ctx, argv, argc, next, merge);
    settle(ctx, argv, argc, merge);
    return next(ctx, argv, argc);
}

#define GUARD(fn, merge)                                                                                       \
    static RedisModuleCmdFunc gnext_##fn;                                                                      \
    static int guard_##fn(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)                            \
    {                                                                                                          \
        return guarded(ctx, argv, argc, gnext_##fn, merge);                                                    \
    }
GUARD(mod_cf_reserve, false)
GUARD(mod_cf_add, false)
GUARD(mod_cf_insert, false)
GUARD(mod_cf_del, false)
GUARD(mod_cf_compact, false)
GUARD(mod_cf_loadchunk, false)
GUARD(mod_cf_compactstep, false)
GUARD(mod_cf_at, false)
GUARD(mod_cf_merge, true)
GUARD(mod_bf_reserve, false)
GUARD(mod_bf_add, false)
GUARD(mod_bf_madd, false)
GUARD(mod_bf_insert, false)
GUARD(mod_bf_loadchunk, false)
GUARD(mod_bf_at, false)
GUARD(mod_bf_merge, true)

#define GUARD_ENTRY(fn) {fn, guard_##fn, &gnext_##fn}

RedisModuleCmdFunc mod_merge_route(RedisModuleCmdFunc fn, RedisModuleCmdFunc next)
{
    static const mod_route guards[] = {
        GUARD_ENTRY(mod_cf_reserve),   GUARD_ENTRY(mod_cf_add),      GUARD_ENTRY(mod_cf_insert),
        GUARD_ENTRY(mod_cf_del),       GUARD_ENTRY(mod_cf_compact),  GUARD_ENTRY(mod_cf_loadchunk),
        GUARD_ENTRY(mod_cf_compactstep), GUARD_ENTRY(mod_cf_at),     GUARD_ENTRY(mod_cf_merge),
        GUARD_ENTRY(mod_bf_reserve),   GUARD_ENTRY(mod_bf_add),      GUARD_ENTRY(mod_bf_madd),
        GUARD_ENTRY(mod_bf_insert),    GUARD_ENTRY(mod_bf_loadchunk), GUARD_ENTRY(mod_bf_at),
        GUARD_ENTRY(mod_bf_merge),
    };
    return mod_route_find(guards, sizeof guards / sizeof guards[0], fn, next);
}
