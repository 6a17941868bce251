/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus push FILE KEY` and `nidus pull KEY FILE`: a filter file into a server running the nidus module, and
 * back, in the module's SCANDUMP / LOADCHUNK chunks. The steps on the server (a temporary key in KEY's slot
 * loaded chunk by chunk, then renamed over KEY) are shared with `nidus copy` (copy.c). */
#ifndef NIDUS_CLI_MOVE_H
#define NIDUS_CLI_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remote.h"

/* The commands themselves, cmd_push and cmd_pull, are declared in commands.h. */

/* What a step on the server can end in besides 0 and 2 (an error, after its line on stderr). */
#define MOVE_REDIRECTED 3 /* answered MOVED or ASK (kept in the remote): start again where it points */
#define MOVE_EXISTS 4     /* the destination key exists, and was not to be replaced: nothing printed */
#define MOVE_REFUSED 5    /* the server refused a chunk: the loader's refusal holds its reply, nothing printed */

/* Redis Cluster's hash slot of a key (CRC16 of its hash tag, else of the key). */
unsigned move_key_slot(const char *key, size_t key_len);

/* The name of a temporary key in `key`'s hash slot (Redis Cluster's rule), starting with `key` unless `key` has a
 * '{' without a tag, into out (cap bytes, at least twice the key's length + 96); `unique` tells concurrent
 * pushes apart. 0 if it does not fit, else 1. */
int move_temp_key(const char *key, size_t key_len, unsigned long long unique, char *out, size_t cap,
                  size_t *out_len);

/* A number for move_temp_key that differs between processes and runs (the process id and the clock). */
unsigned long long move_unique(void);

/* The key's type as TYPE names it ("none" when missing), into out; 0, or 2 after a line. */
int move_key_type(remote *r, const char *key, size_t key_len, char *out, size_t cap);

/* Deletes key if the connection is still up (a temporary key left by a failed step); replies ignored. */
void move_delete(remote *r, const char *key, size_t len);

/* MULTI, PERSIST tmp (ttl_ms >= 1: PEXPIRE tmp ttl_ms), RENAME tmp key (RENAMENX unless replace), EXEC: 0,
 * MOVE_REDIRECTED, MOVE_EXISTS, or 2 after a line. */
int move_rename(remote *r, const char *tmp, size_t tmp_len, const char *key, size_t key_len, bool replace,
                long long ttl_ms);

/* Chunks into a temporary key, pipelined: LOADCHUNK commands sent while the server parses earlier ones. */
typedef struct move_loader {
    remote *r;
    const char *command, *tmp; /* CF.LOADCHUNK or BF.LOADCHUNK; the temporary key */
    size_t tmp_len;
    int pending;               /* replies not read yet */
    bool started;              /* the first chunk (the header) is sent, and a PEXPIRE after it */
    redisReply *refusal;       /* the server's first error reply; nothing more is sent after it */
} move_loader;

void move_loader_begin(move_loader *l, remote *r, const char *command, const char *tmp, size_t tmp_len);

/* Queues `LOADCHUNK tmp iter data` (after the first, a PEXPIRE of ten minutes: a copy cut off leaves nothing
 * for long) and reads replies down to a few in flight. 0 (also once refused: see l->refusal), or 2 after a line
 * if the connection failed. */
int move_loader_put(move_loader *l, uint64_t iter, const void *data, size_t len);

/* Reads the replies left: 0, MOVE_REDIRECTED, MOVE_REFUSED (l->refusal), or 2 after a line. */
int move_loader_finish(move_loader *l);

/* Frees the refusal, if any. */
void move_loader_free(move_loader *l);

#endif
