/* SPDX-License-Identifier: BSD-3-Clause */
/* The masters of a server (nodes.h). A cluster is known by CLUSTER SLOTS answering; a server without cluster
 * support says so in an error, any other error is the user's to see. */
#define _POSIX_C_SOURCE 200809L
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "move.h"

#define SLOTS 16384 /* Redis Cluster's hash slots */

/* The connection to host:port in s, opened (like `like`) if there is none yet; its index in *at. 0, or 2. */
static int nodes_add(nodes *s, const remote *like, const char *host, int port, size_t *at)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i]->port == port && !strcmp(s->r[i]->host, host)) {
            *at = i;
            return 0;
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        remote **r = realloc(s->r, cap * sizeof *r);
        if (!r)
            goto oom;
        s->r = r;
        s->cap = cap;
    }
    remote *r = malloc(sizeof *r);
    if (!r)
        goto oom;
    if (remote_open_node(r, like, host, port)) {
        free(r);
        return EXIT_ERROR;
    }
    s->r[s->n] = r;
    *at = s->n++;
    return 0;
oom:
    fprintf(stderr, "nidus %s: out of memory\n", like->cmd);
    return EXIT_ERROR;
}

void nodes_close(nodes *s)
{
    for (size_t i = 0; i < s->n; i++) {
        remote_close(s->r[i]);
        free(s->r[i]);
    }
    free(s->r);
    free(s->slot);
    memset(s, 0, sizeof *s);
}

int nodes_open(nodes *s, const char *cmd, const char *url, bool reader)
{
    memset(s, 0, sizeof *s);
    remote *first = malloc(sizeof *first);
    if (!first) {
        fprintf(stderr, "nidus %s: out of memory\n", cmd);
        return EXIT_ERROR;
    }
    if (reader ? remote_open_reader(first, cmd, url) : remote_open(first, cmd, url)) {
        free(first);
        return EXIT_ERROR;
    }
    redisReply *reply = remote_call(first, 2, (const char *[]){"CLUSTER", "SLOTS"}, NULL);
    int rc = 0;
    if (!reply) {
        rc = EXIT_ERROR;
    } else if (reply->type == REDIS_REPLY_ERROR && strstr(reply->str, "cluster support disabled")) {
        s->r = malloc(sizeof *s->r);
        if (s->r) {
            s->r[0] = first;
            s->n = s->cap = 1;
            first = NULL;
        } else {
            fprintf(stderr, "nidus %s: out of memory\n", cmd);
            rc = EXIT_ERROR;
        }
    } else if (reply->type != REDIS_REPLY_ARRAY) {
        rc = remote_refused(first, "CLUSTER SLOTS", reply);
    } else if (!(s->slot = calloc(SLOTS, sizeof *s->slot))) {
        fprintf(stderr, "nidus %s: out of memory\n", cmd);
        rc = EXIT_ERROR;
    } else {
        for (size_t i = 0; !rc && i < reply->elements; i++) {
            /* [first slot, last slot, [host, port, id, ...] of the master, replicas...] */
            redisReply *e = reply->element[i];
            redisReply *m = e->type == REDIS_REPLY_ARRAY && e->elements >= 3 ? e->element[2] : NULL;
            if (!m || m->type != REDIS_REPLY_ARRAY || m->elements < 2 || m->element[0]->type != REDIS_REPLY_STRING ||
                m->element[1]->type != REDIS_REPLY_INTEGER || e->element[0]->type != REDIS_REPLY_INTEGER ||
                e->element[1]->type != REDIS_REPLY_INTEGER) {
                rc = remote_refused(first, "CLUSTER SLOTS", reply);
                break;
            }
            const char *host = m->element[0]->str;
            if (!host[0] || !strcmp(host, "?")) /* no endpoint announced: the host we reached it by */
                host = first->host;
            size_t at;
            rc = nodes_add(s, first, host, (int)m->element[1]->integer, &at);
            for (long long k = e->element[0]->integer; !rc && k <= e->element[1]->integer && k < SLOTS; k++)
                if (k >= 0)
                    s->slot[k] = (uint16_t)(at + 1);
        }
    }
    freeReplyObject(reply);
    if (!rc && !s->n) {
        fprintf(stderr, "nidus %s: %s: the cluster serves no slot\n", cmd, first->shown);
        rc = EXIT_ERROR;
    }
    if (first) {
        remote_close(first);
        free(first);
    }
    if (rc)
        nodes_close(s);
    return rc;
}

size_t nodes_for_key(const nodes *s, const char *key, size_t len)
{
    if (!s->slot)
        return 0;
    uint16_t at = s->slot[move_key_slot(key, len)];
    return at ? (size_t)at - 1 : 0;
}
