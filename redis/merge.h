/* SPDX-License-Identifier: BSD-3-Clause */
/* CF.MERGE and BF.MERGE inside the module: what the command (merge.c) and the merge threads (merge_jobs.c)
 * share. A merge is planned on the main thread (keys read, checked, held to the limit); the union is built
 * either there, or on a thread while its inputs are held still (merge_jobs.c). */
#ifndef NIDUS_REDIS_MERGE_H
#define NIDUS_REDIS_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include "commands.h"
#include "common.h"
#include "rb/rb_types.h"

/* What differs between the two commands (merge.c has the four). */
typedef struct merge_kind merge_kind;

/* One filter taking part: destkey's value (position 0) or a sourcekey's (its position, from 1). */
typedef struct merge_input {
    void *value;
    bool rb; /* a key loaded from RedisBloom (an rb_value) */
    int position;
} merge_input;

/* A merge whose keys were read and checked: in[0] is destkey's value, or the first source's when destkey does
 * not exist; the others merge into it. */
typedef struct merge_plan {
    const merge_kind *m;
    merge_input *in;
    int n;
    bool dest_exists;
    uint64_t limit; /* the bytes the union may hold */
} merge_plan;

/* Builds the union on a copy of in[0] (in[0] is not changed) into *out. Touches nothing but the inputs, which
 * it only reads, and memory it allocates: a merge thread runs it. On failure, *failed_at is the input whose
 * merge failed (0: the copy, or the union past the limit). */
nidus_status merge_build(const merge_plan *p, void **out, int *failed_at);

/* The error text of a merge that failed with `st` at input `failed_at`, into buf (which it may return). */
const char *merge_error_text(const merge_plan *p, nidus_status st, int failed_at, char *buf, size_t cap);

/* Sets `result` (from merge_build) into destkey, open for writing. */
void merge_install(RedisModuleCtx *ctx, RedisModuleKey *dest, RedisModuleString *name, const merge_plan *p,
                   void *result);

/* Frees a value merge_build made, or an input's kind of value. */
void merge_free_result(const merge_plan *p, void *result);

/* What reading and checking a merge's keys found. */
typedef enum { PLAN_ERROR, PLAN_DONE, PLAN_MERGE } plan_state;

/* Reads and checks the keys of argv (argv[1] destkey, argv[2] numkeys, argv[3...] sourcekeys; argc >= 4), as
 * CF.MERGE (BF.MERGE when `bloom`) does: PLAN_ERROR with the reply's text in err; PLAN_DONE when destkey alone
 * is the union; PLAN_MERGE with *p (p->in allocated: the caller frees it) and *total the inputs' bytes. */
plan_state merge_plan_keys(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom, merge_plan *p,
                           uint64_t *total, char *err, size_t cap);

/* The command's body from its arguments on (argv[1] destkey, argv[2] numkeys, argv[3...] sourcekeys) for the
 * merge forms a master replicates (merge_jobs.c): `start` the merge on a thread as a master asked it; else
 * build it here on a copy, as a master's thread did. Replies. */
int merge_replayed(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool bloom, bool start);

#endif
