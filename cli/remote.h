/* SPDX-License-Identifier: BSD-3-Clause */
/* A connection to a Redis or Valkey server for `push` and `pull`: the URL parsed, connected, authenticated,
 * the database selected and the nidus module checked, or one line on stderr saying what failed. */
#ifndef NIDUS_CLI_REMOTE_H
#define NIDUS_CLI_REMOTE_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* Used when neither --url nor $REDIS_URL is given. */
#define REMOTE_DEFAULT_URL "redis://127.0.0.1:6379"

typedef struct remote {
    redisContext *c;
    char shown[1024]; /* the URL as errors name it: the password replaced by "***" */
} remote;

/* Connects to `url` (NULL: $REDIS_URL, else REMOTE_DEFAULT_URL) for command `cmd`. Returns 0, or 2 after one
 * line on stderr (bad URL, unreachable, refused password, no nidus module). */
int remote_open(remote *r, const char *cmd, const char *url);

/* The reply to one command (argv, lens); NULL after a line on stderr naming the URL if the connection failed. */
redisReply *remote_call(remote *r, const char *cmd, int argc, const char **argv, const size_t *lens);

void remote_close(remote *r);

#endif
