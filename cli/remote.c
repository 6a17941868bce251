/* SPDX-License-Identifier: BSD-3-Clause */
/* URLs: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] and unix://PATH[?db=N]; the protocol is hiredis's. */
#define _POSIX_C_SOURCE 200809L
#include "remote.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nidus/protocol.h>

#include "common.h"

typedef struct url_parts {
    bool unix_socket;
    char host[256], path[256], user[256], password[256];
    int port;
    long db; /* -1: not given */
} url_parts;

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Copies s[0..n) into out (cap bytes), %XX decoded; false if it does not fit or an escape is bad. */
static bool decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '%') {
            if (i + 2 >= n)
                return false;
            int a = hex(s[i + 1]), b = hex(s[i + 2]);
            if (a < 0 || b < 0)
                return false;
            ch = (char)(a * 16 + b);
            i += 2;
        }
        if (o + 1 >= cap)
            return false;
        out[o++] = ch;
    }
    out[o] = '\0';
    return true;
}

static bool parse_db(const char *s, long *db)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    *db = strtol(s, &end, 10);
    return !*end && *db >= 0 && *db <= 1000000;
}

/* Parses url into p; false if it is not one of the two forms. */
static bool parse_url(const char *url, url_parts *p)
{
    memset(p, 0, sizeof *p);
    p->port = 6379;
    p->db = -1;
    if (!strncmp(url, "unix://", 7)) {
        const char *path = url + 7, *q = strchr(path, '?');
        size_t n = q ? (size_t)(q - path) : strlen(path);
        p->unix_socket = true;
        if (!n || !decode(path, n, p->path, sizeof p->path))
            return false;
        return !q || (!strncmp(q, "?db=", 4) && parse_db(q + 4, &p->db));
    }
    if (strncmp(url, "redis://", 8))
        return false;
    const char *s = url + 8, *slash = strchr(s, '/');
    const char *end = slash ? slash : s + strlen(s);
    const char *at = NULL;
    for (const char *c = s; c < end; c++)
        if (*c == '@')
            at = c;
    if (at) {
        const char *colon = memchr(s, ':', (size_t)(at - s));
        if (!colon || !decode(s, (size_t)(colon - s), p->user, sizeof p->user) ||
            !decode(colon + 1, (size_t)(at - colon - 1), p->password, sizeof p->password))
            return false;
        s = at + 1;
    }
    const char *host_end, *port = NULL;
    if (*s == '[') { /* an IPv6 address */
        const char *close = memchr(s, ']', (size_t)(end - s));
        if (!close)
            return false;
        if (!decode(s + 1, (size_t)(close - s - 1), p->host, sizeof p->host))
            return false;
        host_end = close + 1;
        if (host_end < end && *host_end != ':')
            return false;
        port = host_end < end ? host_end + 1 : NULL;
    } else {
        const char *colon = memchr(s, ':', (size_t)(end - s));
        host_end = colon ? colon : end;
        if (!decode(s, (size_t)(host_end - s), p->host, sizeof p->host))
            return false;
        port = colon ? colon + 1 : NULL;
    }
    if (!p->host[0])
        return false;
    if (port) {
        long v = 0;
        if (port == end)
            return false;
        for (const char *c = port; c < end; c++) {
            if (*c < '0' || *c > '9' || (v = v * 10 + (*c - '0')) > 65535)
                return false;
        }
        if (v == 0)
            return false;
        p->port = (int)v;
    }
    return !slash || !slash[1] || parse_db(slash + 1, &p->db);
}

/* The URL without its password (shown in every message). */
static void show_url(const url_parts *p, char *out, size_t cap)
{
    char db[32] = "";
    if (p->unix_socket) {
        if (p->db >= 0)
            snprintf(db, sizeof db, "?db=%ld", p->db);
        snprintf(out, cap, "unix://%s%s", p->path, db);
        return;
    }
    if (p->db >= 0)
        snprintf(db, sizeof db, "/%ld", p->db);
    bool v6 = strchr(p->host, ':') != NULL;
    snprintf(out, cap, "redis://%s%s%s%s%s:%d%s", p->user, p->password[0] ? ":***" : "",
             p->user[0] || p->password[0] ? "@" : "", v6 ? "[" : "", p->host, p->port, db);
    if (v6) { /* close the bracket before the port */
        char *c = strrchr(out, ':');
        memmove(c + 1, c, strlen(c) + 1);
        *c = ']';
    }
}

/* One line for a connection that failed (hiredis's reason); NULL for the caller to return. */
static redisReply *lost(const remote *r)
{
    fprintf(stderr, "nidus %s: %s: %s\n", r->cmd, r->shown,
            r->c->err == REDIS_ERR_EOF ? "the server closed the connection" : r->c->errstr);
    return NULL;
}

void remote_append(remote *r, int argc, const char **argv, const size_t *lens)
{
    if (r->asking)
        redisAppendCommand(r->c, "ASKING");
    redisAppendCommandArgv(r->c, argc, argv, lens);
}

void remote_flush(remote *r)
{
    int done = 0;
    while (!done && !r->c->err && redisBufferWrite(r->c, &done) == REDIS_OK)
        ;
}

redisReply *remote_reply(remote *r)
{
    redisReply *reply;
    if (r->asking) { /* ASKING's +OK */
        if (redisGetReply(r->c, (void **)&reply) != REDIS_OK)
            return lost(r);
        freeReplyObject(reply);
    }
    if (redisGetReply(r->c, (void **)&reply) != REDIS_OK)
        return lost(r);
    return reply;
}

bool remote_redirected(remote *r, const redisReply *reply)
{
    if (!reply || reply->type != REDIS_REPLY_ERROR)
        return false;
    bool ask = !strncmp(reply->str, "ASK ", 4);
    if (!ask && strncmp(reply->str, "MOVED ", 6))
        return false;
    /* MOVED <slot> <host>:<port>; the port after the last ':' (an IPv6 host has more); an empty host is the
     * node's own host */
    const char *endpoint = strchr(reply->str + (ask ? 4 : 6), ' ');
    const char *colon = endpoint ? strrchr(endpoint, ':') : NULL;
    if (!colon)
        return false;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    size_t n = (size_t)(colon - endpoint - 1);
    if (*end || port <= 0 || port > 65535 || n >= sizeof r->next_host)
        return false;
    memcpy(r->next_host, endpoint + 1, n);
    r->next_host[n] = '\0';
    if (!n)
        snprintf(r->next_host, sizeof r->next_host, "%s", r->host);
    r->next_port = (int)port;
    r->next_ask = ask;
    return true;
}

redisReply *remote_call(remote *r, int argc, const char **argv, const size_t *lens)
{
    for (int redirects = 0;; redirects++) {
        remote_append(r, argc, argv, lens);
        redisReply *reply = remote_reply(r);
        if (!reply || !remote_redirected(r, reply))
            return reply;
        if (redirects == REMOTE_REDIRECTS) {
            fprintf(stderr, "nidus %s: %s: still redirected after %d redirects (%s): the cluster's nodes disagree "
                            "about the slot; try again\n", r->cmd, r->shown, REMOTE_REDIRECTS, reply->str);
            freeReplyObject(reply);
            return NULL;
        }
        freeReplyObject(reply);
        if (remote_follow(r))
            return NULL;
    }
}

int remote_refused(const remote *r, const char *what, const redisReply *reply)
{
    if (reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOPERM", 6))
        fprintf(stderr, "nidus %s: %s: the server's ACL does not let this user run %s (%s)\n", r->cmd, r->shown, what,
                reply->str);
    else
        fprintf(stderr, "nidus %s: %s: %s: %s\n", r->cmd, r->shown, what,
                reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
    return EXIT_ERROR;
}

/* True if the reply says the command does not exist on the server. */
static bool unknown_command(const redisReply *reply)
{
    return reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "ERR unknown command", 19);
}

/* 0 if the server has the nidus module (a reader: nidus or RedisBloom, whose module is named "bf"): MODULE LIST
 * names it; where an ACL refuses MODULE LIST, COMMAND INFO knows CF.LOADCHUNK (a reader: CF.SCANDUMP); where it
 * refuses that too, that command without arguments is not an unknown command (the server checks the name and
 * arity before the ACL). Else 2 after one line saying what it lacks. */
static int check_module(remote *r)
{
    const char *command = r->reader ? NIDUS_CF_SCANDUMP : NIDUS_CF_LOADCHUNK;
    redisReply *reply = remote_call(r, 2, (const char *[]){"MODULE", "LIST"}, NULL);
    if (!reply)
        return EXIT_ERROR;
    if (reply->type == REDIS_REPLY_ERROR && !strncmp(reply->str, "NOAUTH", 6)) {
        fprintf(stderr, "nidus %s: %s: the server needs a password (redis://[USER]:PASSWORD@HOST...)\n", r->cmd,
                r->shown);
        freeReplyObject(reply);
        return EXIT_ERROR;
    }
    bool found = false, known = reply->type == REDIS_REPLY_ARRAY;
    for (size_t i = 0; known && i < reply->elements; i++) {
        redisReply *m = reply->element[i];
        for (size_t j = 0; m->type == REDIS_REPLY_ARRAY && j + 1 < m->elements; j += 2)
            if (m->element[j]->type == REDIS_REPLY_STRING && !strcmp(m->element[j]->str, "name") &&
                m->element[j + 1]->type == REDIS_REPLY_STRING &&
                (!strcmp(m->element[j + 1]->str, "nidus") || (r->reader && !strcmp(m->element[j + 1]->str, "bf"))))
                found = true;
    }
    freeReplyObject(reply);
    if (!known) { /* MODULE LIST refused (an ACL, say): ask about the command instead */
        if (!(reply = remote_call(r, 3, (const char *[]){"COMMAND", "INFO", command}, NULL)))
            return EXIT_ERROR;
        if ((known = reply->type == REDIS_REPLY_ARRAY && reply->elements == 1))
            found = reply->element[0]->type == REDIS_REPLY_ARRAY;
        freeReplyObject(reply);
    }
    if (!known) { /* COMMAND refused as well: the command itself, without its arguments */
        if (!(reply = remote_call(r, 1, (const char *[]){command}, NULL)))
            return EXIT_ERROR;
        found = !unknown_command(reply);
        freeReplyObject(reply);
    }
    if (!found) {
        fprintf(stderr, "nidus %s: %s: the server does not have the nidus module loaded (loadmodule nidus.so)%s\n",
                r->cmd, r->shown, r->reader ? ", nor RedisBloom" : "");
        return EXIT_ERROR;
    }
    return 0;
}

/* Connects to host:port (host empty: the unix socket at path), authenticates and selects the database; 0, or 2
 * after a line. r->shown names the node. */
static int connect_node(remote *r, bool unix_socket, const char *path, const char *host, int port)
{
    url_parts p = {.unix_socket = unix_socket, .port = port, .db = r->db};
    snprintf(p.path, sizeof p.path, "%s", unix_socket ? path : "");
    snprintf(p.host, sizeof p.host, "%s", unix_socket ? "" : host);
    memcpy(p.user, r->user, sizeof p.user);
    memcpy(p.password, r->password, sizeof p.password);
    show_url(&p, r->shown, sizeof r->shown);
    memcpy(r->host, p.host, sizeof r->host);
    r->port = port;
    struct timeval timeout = {10, 0};
    r->c = unix_socket ? redisConnectUnixWithTimeout(path, timeout) : redisConnectWithTimeout(host, port, timeout);
    if (!r->c || r->c->err) {
        fprintf(stderr, "nidus %s: %s: cannot connect: %s\n", r->cmd, r->shown, r->c ? r->c->errstr : "out of memory");
        remote_close(r);
        return EXIT_ERROR;
    }
    if (r->password[0]) {
        /* AUTH USER PASSWORD, or AUTH PASSWORD (the default user; servers before ACLs) */
        const char *argv[] = {"AUTH", r->user[0] ? r->user : r->password, r->password};
        redisReply *reply = remote_call(r, r->user[0] ? 3 : 2, argv, NULL);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            if (reply)
                fprintf(stderr, "nidus %s: %s: the server refused the password (%s)\n", r->cmd, r->shown,
                        reply->str);
            freeReplyObject(reply);
            remote_close(r);
            return EXIT_ERROR;
        }
        freeReplyObject(reply);
    }
    if (check_module(r)) {
        remote_close(r);
        return EXIT_ERROR;
    }
    if (r->db >= 0) {
        char db[32];
        snprintf(db, sizeof db, "%ld", r->db);
        redisReply *reply = remote_call(r, 2, (const char *[]){"SELECT", db}, NULL);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            if (reply)
                fprintf(stderr, "nidus %s: %s: cannot select database %s: %s\n", r->cmd, r->shown, db, reply->str);
            freeReplyObject(reply);
            remote_close(r);
            return EXIT_ERROR;
        }
        freeReplyObject(reply);
    }
    return 0;
}

static int open_url(remote *r, const char *cmd, const char *url, bool reader)
{
    url_parts p;
    memset(r, 0, sizeof *r);
    r->cmd = cmd;
    r->reader = reader;
    if (!url)
        url = getenv("REDIS_URL");
    if (!url || !*url)
        url = REMOTE_DEFAULT_URL;
    if (!parse_url(url, &p)) {
        /* the URL as given may hold a password: name only its form */
        fprintf(stderr, "nidus %s: not a server URL: expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or "
                        "unix://PATH[?db=N] (see 'nidus help %s')\n", cmd, cmd);
        return EXIT_ERROR;
    }
    memcpy(r->user, p.user, sizeof r->user);
    memcpy(r->password, p.password, sizeof r->password);
    r->db = p.db;
    return connect_node(r, p.unix_socket, p.path, p.host, p.port);
}

int remote_open(remote *r, const char *cmd, const char *url)
{
    return open_url(r, cmd, url, false);
}

int remote_open_reader(remote *r, const char *cmd, const char *url)
{
    return open_url(r, cmd, url, true);
}

int remote_open_node(remote *r, const remote *like, const char *host, int port)
{
    memset(r, 0, sizeof *r);
    r->cmd = like->cmd;
    r->reader = like->reader;
    r->db = like->db;
    memcpy(r->user, like->user, sizeof r->user);
    memcpy(r->password, like->password, sizeof r->password);
    return connect_node(r, false, NULL, host, port);
}

int remote_follow(remote *r)
{
    if (!strcmp(r->next_host, "?") || !r->next_host[0]) {
        fprintf(stderr, "nidus %s: %s: redirected to a node whose address the server does not know\n", r->cmd,
                r->shown);
        return EXIT_ERROR;
    }
    char host[sizeof r->next_host];
    memcpy(host, r->next_host, sizeof host);
    remote_close(r);
    r->asking = false; /* not before the node's own checks (AUTH, MODULE LIST): they have no key */
    if (connect_node(r, false, NULL, host, r->next_port))
        return EXIT_ERROR;
    r->asking = r->next_ask;
    return 0;
}

void remote_close(remote *r)
{
    if (r->c)
        redisFree(r->c);
    r->c = NULL;
}
