/* SPDX-License-Identifier: BSD-3-Clause */
/* A connection to a Redis or Valkey server for `push`, `pull` and `copy`: the URL parsed, connected,
 * authenticated, the database selected and the nidus module checked (for a server copied from: nidus or
 * RedisBloom), or one line on stderr saying what failed. In a cluster,
 * MOVED and ASK replies are followed (hiredis has no cluster client): a new connection to the node they name,
 * with the same credentials, at most REMOTE_REDIRECTS times for one command. */
#ifndef NIDUS_CLI_REMOTE_H
#define NIDUS_CLI_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

/* Used when neither --url nor $REDIS_URL is given. */
#define REMOTE_DEFAULT_URL "redis://127.0.0.1:6379"

/* Redirections followed for one command (or one push) before giving up: a slot moves once, or twice while a
 * cluster is resharded; more means the nodes disagree about it. */
#define REMOTE_REDIRECTS 5

typedef struct remote {
    redisContext *c;
    const char *cmd;  /* "push", "pull" or "copy", for messages */
    bool reader;      /* a server copied from: RedisBloom's module will do as well as nidus */
    char shown[1024]; /* the server as errors name it: the password replaced by "***" */
    char user[256], password[256];
    char host[256];   /* the node connected to (host empty on a unix socket) */
    int port;
    long db;          /* -1: not given */
    bool asking;      /* the node imports KEY's slot (an ASK reply): every command is preceded by ASKING */
    char next_host[256]; /* where the last redirect (remote_redirected) points */
    int next_port;
    bool next_ask;
} remote;

/* Connects to `url` (NULL: $REDIS_URL, else REMOTE_DEFAULT_URL) for command `cmd`. Returns 0, or 2 after one
 * line on stderr (bad URL, unreachable, refused password, no nidus module). */
int remote_open(remote *r, const char *cmd, const char *url);

/* As remote_open, for a server to read filters from: its module may be nidus or RedisBloom. */
int remote_open_reader(remote *r, const char *cmd, const char *url);

/* Connects r to host:port with like's credentials, database and module check; 0, or 2 after a line. */
int remote_open_node(remote *r, const remote *like, const char *host, int port);

/* The reply to one command (argv, lens; lens NULL: C strings), MOVED and ASK followed; NULL after a line on
 * stderr naming the server if the connection failed or the redirects did not end. */
redisReply *remote_call(remote *r, int argc, const char **argv, const size_t *lens);

/* Pipelining: remote_append queues a command (after ASKING when the node imports the slot), remote_reply
 * reads its reply (NULL after a line on stderr if the connection failed). */
void remote_append(remote *r, int argc, const char **argv, const size_t *lens);
redisReply *remote_reply(remote *r);

/* Sends what remote_append queued without waiting for replies (so that a server works while the caller waits on
 * another); a failure shows at the next remote_reply. */
void remote_flush(remote *r);

/* True if reply is a MOVED or ASK redirect: where it points is kept for remote_follow. */
bool remote_redirected(remote *r, const redisReply *reply);

/* Connects to where the last redirect pointed, in place of the current node; 0, or 2 after a line. */
int remote_follow(remote *r);

/* One line for an error reply to command `what` (a NOPERM refusal says the user's ACL does not allow it), naming the
 * server; returns 2. */
int remote_refused(const remote *r, const char *what, const redisReply *reply);

void remote_close(remote *r);

#endif
