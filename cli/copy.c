/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus copy`: filter keys from one server to another (nodes.c holds the connections to each side's masters).
 * Which keys: the KEYs given, else SCAN (MATCH PATTERN) on the source, or on each of its masters, with a
 * pipelined TYPE of every key found; the filter types are nidus's (nidus--CF, nidus--BF, and the windowed
 * nidus--CW, nidus--BW, whose chunks carry their items' ages) and RedisBloom's (MBbloomCF, MBbloom--), any other type is skipped and counted. Each key: its target key checked first (an
 * existing one is left alone unless --replace), then WATCH on the source, CF.INFO / BF.INFO, SCANDUMP chunk by
 * chunk, each sent on at once as LOADCHUNK into a temporary key in the key's slot on the target (move.c's loader,
 * pipelined), then an empty MULTI / EXEC on the source: a write to the key anywhere in between (or its deletion,
 * or another value put there) aborts that EXEC, and the temporary key is deleted and the key copied again, at
 * most COPY_ATTEMPTS times in all. Only a clean pass is renamed over the target key (move_rename). */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nidus/protocol.h>

#include "commands.h"
#include "common.h"
#include "move.h"
#include "nodes.h"
#include "options.h"
#include "progress.h"
#include "remote.h"

#define COPY_ATTEMPTS 3 /* passes over a key that is written to during each of them, before it is reported */
#define SCAN_COUNT "1000"
#define CHANGED 6       /* a pass over a key saw it written to (its EXEC aborted): copy it again */
#define SOURCE_MOVED 7  /* the source answered MOVED or ASK inside a pass: WATCH again where the key is */
#define NOT_COPIED 8    /* a key found by SCAN is gone, or holds another type now: counted, not a failure */

/* ---- the keys ---- */

typedef enum { NOT_A_FILTER, CUCKOO, BLOOM } kind;

static kind kind_of(const char *type)
{
    if (!strcmp(type, "nidus--CF") || !strcmp(type, "MBbloomCF") || !strcmp(type, "nidus--CW"))
        return CUCKOO;
    if (!strcmp(type, "nidus--BF") || !strcmp(type, "MBbloom--") || !strcmp(type, "nidus--BW"))
        return BLOOM;
    return NOT_A_FILTER;
}

typedef struct found {
    char *key;
    size_t len;
    size_t node; /* the source connection that found it */
    kind kd;     /* its type when found (NOT_A_FILTER: not known); the pass reads it again */
} found;

typedef struct copier {
    nodes from, to;
    bool replace, named; /* named: the keys were given (each one missing or of another type is an error) */
    found *keys;
    size_t n, cap;
    unsigned long long unique;
    char *tmp;
    size_t tmp_cap;
    progress p;
    uint64_t copied, items, bytes, skipped, exists, changed, failed, missing, gone, again;
} copier;

static int add_key(copier *c, const char *key, size_t len, size_t node, kind kd)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        found *k = realloc(c->keys, cap * sizeof *k);
        if (!k)
            goto oom;
        c->keys = k;
        c->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        goto oom;
    memcpy(copy, key, len);
    copy[len] = '\0';
    c->keys[c->n++] = (found){copy, len, node, kd};
    return 0;
oom:
    fprintf(stderr, "nidus copy: out of memory\n");
    return EXIT_ERROR;
}

/* A key as messages show it: printable bytes as they are, others as \xNN. */
static void show_key(FILE *out, const char *key, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)key[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            fputc(ch, out);
        else
            fprintf(out, "\\x%02x", ch);
    }
}

/* "nidus copy: SERVER: KEY: " and the rest of the line. */
__attribute__((format(printf, 3, 4))) static void key_line(const remote *r, const found *k, const char *fmt, ...)
{
    fprintf(stderr, "nidus copy: %s: ", r->shown);
    show_key(stderr, k->key, k->len);
    fprintf(stderr, ": ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* SCAN over one source node, TYPE of each key pipelined: filters into c->keys, the others counted. 0, or 2. */
static int scan_node(copier *c, size_t node, const char *pattern)
{
    remote *r = c->from.r[node];
    char cursor[32] = "0";
    do {
        const char *argv[] = {"SCAN", cursor, "COUNT", SCAN_COUNT, "MATCH", pattern};
        redisReply *reply = remote_call(r, pattern ? 6 : 4, argv, NULL);
        if (!reply)
            return EXIT_ERROR;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_STRING ||
            reply->element[1]->type != REDIS_REPLY_ARRAY) {
            int rc = remote_refused(r, "SCAN", reply);
            freeReplyObject(reply);
            return rc;
        }
        snprintf(cursor, sizeof cursor, "%s", reply->element[0]->str);
        redisReply *keys = reply->element[1];
        for (size_t i = 0; i < keys->elements; i++)
            remote_append(r, 2, (const char *[]){"TYPE", keys->element[i]->str},
                          (size_t[]){4, keys->element[i]->len});
        int rc = 0;
        for (size_t i = 0; i < keys->elements; i++) {
            redisReply *type = rc ? NULL : remote_reply(r);
            if (!type) {
                rc = EXIT_ERROR;
                continue;
            }
            /* an error (the key's slot moved away meanwhile, say) is settled when the key is copied */
            kind kd = type->type == REDIS_REPLY_STATUS ? kind_of(type->str) : NOT_A_FILTER;
            if (kd != NOT_A_FILTER || type->type != REDIS_REPLY_STATUS)
                rc = add_key(c, keys->element[i]->str, keys->element[i]->len, node, kd);
            else if (strcmp(type->str, "none")) /* "none": deleted since the SCAN */
                c->skipped++;
            freeReplyObject(type);
        }
        freeReplyObject(reply);
        if (rc)
            return rc;
    } while (strcmp(cursor, "0"));
    return 0;
}

/* ---- one key ---- */

typedef struct info {
    long long items, buckets, bucket_size, expansion, max_iterations, fingerprint_bits, capacity;
} info;

/* The integer fields of a CF.INFO / BF.INFO reply (RESP2: name, value, ...); those missing are -1. */
static void parse_info(const redisReply *reply, info *out)
{
    *out = (info){-1, -1, -1, -1, -1, -1, -1};
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {{"Number of items inserted", offsetof(info, items)},
                  {"Number of buckets", offsetof(info, buckets)},
                  {"Bucket size", offsetof(info, bucket_size)},
                  {"Expansion rate", offsetof(info, expansion)},
                  {"Max iterations", offsetof(info, max_iterations)},
                  {"Fingerprint bits", offsetof(info, fingerprint_bits)},
                  {"Capacity", offsetof(info, capacity)}};
    for (size_t i = 0; reply->type == REDIS_REPLY_ARRAY && i + 1 < reply->elements; i += 2) {
        const redisReply *name = reply->element[i], *value = reply->element[i + 1];
        if ((name->type != REDIS_REPLY_STRING && name->type != REDIS_REPLY_STATUS) ||
            value->type != REDIS_REPLY_INTEGER)
            continue;
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            if (!strcmp(name->str, fields[f].name))
                *(long long *)((char *)out + fields[f].offset) = value->integer;
    }
}

/* An error reply about one key: an ACL's refusal applies to every key (2 after remote_refused's line); any
 * other (a filter still loading its chunks, say) is this key's: a line, counted, 1. */
static int key_refused(copier *c, remote *r, const found *k, const char *what, const redisReply *reply)
{
    if (reply->type != REDIS_REPLY_ERROR || !strncmp(reply->str, "NOPERM", 6))
        return remote_refused(r, what, reply);
    key_line(r, k, "%s: %s", what, reply->str);
    c->failed++;
    return EXIT_KEYS;
}

/* The reply to a command inside a pass on the source: NULL after a line (2 in *rc), or with *rc SOURCE_MOVED
 * for a redirect (the key's slot moved: the pass starts again, WATCH following it). */
static redisReply *source_call(remote *r, int argc, const char **argv, const size_t *lens, int *rc)
{
    remote_append(r, argc, argv, lens);
    redisReply *reply = remote_reply(r);
    *rc = !reply ? EXIT_ERROR : remote_redirected(r, reply) ? SOURCE_MOVED : 0;
    if (*rc == SOURCE_MOVED) {
        freeReplyObject(reply);
        return NULL;
    }
    return reply;
}

/* An empty cuckoo filter has no chunks (SCANDUMP answers [0, nil] for it, as RedisBloom does): it is made anew
 * on the target with its parameters. 0, MOVE_REDIRECTED, MOVE_REFUSED (l->refusal), or 2. */
static int reserve_empty(move_loader *l, const info *in)
{
    long long capacity = in->capacity > 0 ? in->capacity : in->buckets * (in->bucket_size > 0 ? in->bucket_size : 1);
    char cap[24], bucket[24], iterations[24], expansion[24], bits[24];
    snprintf(cap, sizeof cap, "%lld", capacity > 0 ? capacity : 1);
    snprintf(bucket, sizeof bucket, "%lld", in->bucket_size);
    snprintf(iterations, sizeof iterations, "%lld", in->max_iterations);
    snprintf(expansion, sizeof expansion, "%lld", in->expansion);
    snprintf(bits, sizeof bits, "%lld", in->fingerprint_bits);
    const char *argv[11] = {"CF.RESERVE", l->tmp, cap};
    size_t lens[11] = {10, l->tmp_len, strlen(cap)};
    int argc = 3;
    const char *names[] = {"BUCKETSIZE", "MAXITERATIONS", "EXPANSION", "FINGERPRINT"};
    const char *values[] = {bucket, iterations, expansion, bits};
    long long given[] = {in->bucket_size, in->max_iterations, in->expansion, in->fingerprint_bits};
    for (int i = 0; i < 4; i++)
        if (given[i] >= 0) {
            argv[argc] = names[i];
            lens[argc++] = strlen(names[i]);
            argv[argc] = values[i];
            lens[argc++] = strlen(values[i]);
        }
    remote_append(l->r, argc, argv, lens);
    remote_append(l->r, 3, (const char *[]){"PEXPIRE", l->tmp, "600000"}, (size_t[]){7, l->tmp_len, 6});
    l->pending += 2;
    l->started = true;
    return move_loader_finish(l);
}

/* Reads n replies into out; 0, or 2 after a line (a connection failed: none is kept). */
static int read_replies(remote *r, int n, redisReply **out)
{
    for (int i = 0; i < n; i++)
        if (!(out[i] = remote_reply(r))) {
            while (i--)
                freeReplyObject(out[i]);
            return EXIT_ERROR;
        }
    return 0;
}

static void free_replies(redisReply **r, int n)
{
    for (int i = 0; i < n; i++) {
        freeReplyObject(r[i]);
        r[i] = NULL;
    }
}

/* Queues the INFO and the first SCANDUMP of key k as a filter of kind kd. */
static void append_info_and_header(remote *src, const found *k, kind kd)
{
    remote_append(src, 2, (const char *[]){kd == CUCKOO ? "CF.INFO" : "BF.INFO", k->key}, (size_t[]){7, k->len});
    remote_append(src, 3, (const char *[]){kd == CUCKOO ? NIDUS_CF_SCANDUMP : NIDUS_BF_SCANDUMP, k->key, "0"},
                  (size_t[]){strlen(NIDUS_CF_SCANDUMP), k->len, 1});
}

/* The target's TYPE of the key: 0 (it may be written), MOVE_REDIRECTED, MOVE_EXISTS, EXIT_KEYS (a line, counted),
 * or 2 after a line. */
static int target_state(copier *c, remote *dst, const found *k, const redisReply *type)
{
    if (remote_redirected(dst, type))
        return MOVE_REDIRECTED;
    if (type->type != REDIS_REPLY_STATUS)
        return remote_refused(dst, "TYPE", type);
    if (strcmp(type->str, "none") && !c->replace)
        return MOVE_EXISTS;
    if (dst->asking && !strcmp(type->str, "none")) {
        key_line(dst, k, "its slot is migrating to %s:%d, where the copy's rename cannot run until the migration "
                         "is done; try again then", dst->host, dst->port);
        c->failed++;
        return EXIT_KEYS;
    }
    return 0;
}

/* The key's type as the pass reads it (TYPE's reply): its kind, or NOT_A_FILTER with *rc saying what became of
 * it (counted; a line for a KEY given). */
static kind source_kind(copier *c, remote *src, const found *k, const redisReply *type, int *rc)
{
    kind kd = type->type == REDIS_REPLY_STATUS ? kind_of(type->str) : NOT_A_FILTER;
    *rc = 0;
    if (kd != NOT_A_FILTER)
        return kd;
    if (type->type != REDIS_REPLY_STATUS) {
        *rc = key_refused(c, src, k, "TYPE", type);
    } else if (!strcmp(type->str, "none")) {
        if (c->named) {
            key_line(src, k, "no such key");
            c->missing++;
        } else {
            c->gone++;
        }
        *rc = c->named ? EXIT_KEYS : NOT_COPIED;
    } else {
        if (c->named)
            key_line(src, k, "holds a %s, not a cuckoo or Bloom filter", type->str);
        c->skipped++;
        *rc = c->named ? EXIT_KEYS : NOT_COPIED;
    }
    return NOT_A_FILTER;
}

/* Sends the key's chunks on as they come, from the reply to SCANDUMP 0 (freed here) to the end: 0, SOURCE_MOVED,
 * EXIT_KEYS (a line, counted), or 2 after a line. */
static int forward_chunks(copier *c, remote *src, const found *k, const char *scandump, redisReply *reply,
                          move_loader *l, bool *any, uint64_t *bytes, uint64_t items)
{
    int rc = 0;
    while (reply) {
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
            reply->element[0]->type != REDIS_REPLY_INTEGER) {
            rc = key_refused(c, src, k, scandump, reply);
            break;
        }
        redisReply *chunk = reply->element[1];
        long long next = reply->element[0]->integer;
        /* past the last chunk: nil (cuckoo), or an empty string (RedisBloom's Bloom filters) */
        if (chunk->type != REDIS_REPLY_STRING || !chunk->len)
            break;
        int sent = move_loader_put(l, (uint64_t)next, chunk->str, chunk->len);
        remote_flush(l->r); /* the target loads it while the next chunk is read */
        *bytes += chunk->len;
        *any = true;
        freeReplyObject(reply);
        reply = NULL;
        progress_update(&c->p, (uint64_t)(k - c->keys), c->items + items);
        if (sent)
            return sent;
        if (!next || l->refusal)
            break;
        char iter[24];
        snprintf(iter, sizeof iter, "%lld", next);
        reply = source_call(src, 3, (const char *[]){scandump, k->key, iter}, (size_t[]){strlen(scandump), k->len,
                                                                                        strlen(iter)}, &rc);
    }
    freeReplyObject(reply);
    return rc;
}

/* The source part of a pass, WATCH set, with the replies to TYPE, INFO and SCANDUMP 0 (freed here): the chunks
 * into the target's temporary key (*made once it may exist), then the empty transaction that says whether the
 * key was written to meanwhile (*exec_sent: it ends the WATCH). 0, CHANGED, SOURCE_MOVED, MOVE_REDIRECTED,
 * EXIT_KEYS or NOT_COPIED (counted, a line printed where it says so), or 2 after a line. */
static int pass_source(copier *c, remote *src, remote *dst, const found *k, redisReply *first[3], kind guess,
                       const char *tmp, size_t tmp_len, uint64_t *items, uint64_t *bytes, bool *exec_sent, bool *made)
{
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++)
        if (remote_redirected(src, first[i]))
            rc = SOURCE_MOVED;
    kind kd = rc ? NOT_A_FILTER : source_kind(c, src, k, first[0], &rc);
    if (!rc && kd != guess) { /* INFO and SCANDUMP went as the other kind's: again as this one's */
        free_replies(first + 1, 2);
        append_info_and_header(src, k, kd);
        if ((rc = read_replies(src, 2, first + 1)))
            return rc;
        if (remote_redirected(src, first[1]))
            rc = SOURCE_MOVED;
    }
    if (!rc && first[1]->type != REDIS_REPLY_ARRAY)
        rc = key_refused(c, src, k, kd == CUCKOO ? "CF.INFO" : "BF.INFO", first[1]);
    if (rc) {
        free_replies(first, 3);
        return rc;
    }
    info in;
    parse_info(first[1], &in);
    free_replies(first, 2);
    *items = in.items > 0 ? (uint64_t)in.items : 0;
    *bytes = 0;
    *made = true;
    move_loader l;
    move_loader_begin(&l, dst, kd == CUCKOO ? NIDUS_CF_LOADCHUNK : NIDUS_BF_LOADCHUNK, tmp, tmp_len);
    bool any = false;
    rc = forward_chunks(c, src, k, kd == CUCKOO ? NIDUS_CF_SCANDUMP : NIDUS_BF_SCANDUMP, first[2], &l, &any, bytes,
                        *items);
    first[2] = NULL;
    if (rc == EXIT_ERROR) {
        move_loader_free(&l);
        return rc;
    }
    /* whole only if nothing wrote to the key since WATCH: an empty transaction tells, asked while the target
     * reads the last chunks. Also when the target refused a chunk: chunks of a key written to between two
     * SCANDUMPs do not fit together */
    if (!rc) {
        remote_append(src, 1, (const char *[]){"MULTI"}, NULL);
        remote_append(src, 1, (const char *[]){"EXEC"}, NULL);
        remote_flush(src);
        *exec_sent = true;
    }
    int loaded = !rc && !any && kd == CUCKOO && !l.refusal ? reserve_empty(&l, &in) : move_loader_finish(&l);
    if (*exec_sent) {
        redisReply *tx[2];
        if (read_replies(src, 2, tx)) {
            rc = EXIT_ERROR;
        } else {
            if (tx[0]->type == REDIS_REPLY_ERROR || tx[1]->type == REDIS_REPLY_ERROR)
                rc = remote_refused(src, "MULTI", tx[0]->type == REDIS_REPLY_ERROR ? tx[0] : tx[1]);
            else if (tx[1]->type != REDIS_REPLY_ARRAY) /* nil: the key was written to */
                rc = CHANGED;
            free_replies(tx, 2);
        }
    }
    if (!rc && !loaded && !any && kd == BLOOM) {
        key_line(src, k, "%s gave no chunk", NIDUS_BF_SCANDUMP);
        c->failed++;
        loaded = EXIT_KEYS;
    }
    if (loaded == MOVE_REFUSED && !rc) {
        if (!strncmp(l.refusal->str, "NOPERM", 6)) {
            loaded = remote_refused(dst, l.command, l.refusal);
        } else {
            key_line(dst, k, "the server refused it: %s", l.refusal->str);
            c->failed++;
            loaded = EXIT_KEYS;
        }
    }
    move_loader_free(&l);
    if (loaded == EXIT_ERROR || rc == EXIT_ERROR)
        return EXIT_ERROR;
    return rc ? rc : loaded;
}

/* One pass over key k: 0 (copied: its items and bytes in *items, *bytes), CHANGED, SOURCE_MOVED,
 * MOVE_REDIRECTED (the target's), MOVE_EXISTS, EXIT_KEYS or NOT_COPIED (counted, a line printed where it says
 * so), or 2 after a line. The temporary key is gone unless the key is copied; a copied key has the source key's
 * time to live. The first round trip asks the target's TYPE, and the source's WATCH, PTTL, TYPE, INFO and first
 * chunk, all at once (the kind as the SCAN found it). */
static int copy_pass(copier *c, remote *src, remote *dst, const found *k, const char *tmp, size_t tmp_len,
                     uint64_t *items, uint64_t *bytes)
{
    kind guess = k->kd != NOT_A_FILTER ? k->kd : CUCKOO;
    remote_append(dst, 2, (const char *[]){"TYPE", k->key}, (size_t[]){4, k->len});
    remote_append(src, 2, (const char *[]){"WATCH", k->key}, (size_t[]){5, k->len});
    remote_append(src, 2, (const char *[]){"PTTL", k->key}, (size_t[]){4, k->len});
    remote_append(src, 2, (const char *[]){"TYPE", k->key}, (size_t[]){4, k->len});
    append_info_and_header(src, k, guess);
    remote_flush(src);
    redisReply *type = remote_reply(dst), *first[5];
    if (!type || read_replies(src, 5, first)) {
        freeReplyObject(type);
        return EXIT_ERROR;
    }
    int rc = target_state(c, dst, k, type);
    freeReplyObject(type);
    bool watching = first[0]->type != REDIS_REPLY_ERROR, exec_sent = false, made = false;
    if (!rc && remote_redirected(src, first[0]))
        rc = SOURCE_MOVED;
    else if (!rc && !watching)
        rc = key_refused(c, src, k, "WATCH", first[0]);
    freeReplyObject(first[0]);
    /* the key's time to live, kept on the target (-1: none; 0: expiring now, so 1 ms) */
    long long ttl = first[1]->type == REDIS_REPLY_INTEGER ? first[1]->integer : -1;
    if (ttl == 0)
        ttl = 1;
    if (!rc && remote_redirected(src, first[1]))
        rc = SOURCE_MOVED;
    freeReplyObject(first[1]);
    if (rc)
        free_replies(first + 2, 3);
    else
        rc = pass_source(c, src, dst, k, first + 2, guess, tmp, tmp_len, items, bytes, &exec_sent, &made);
    if (watching && !exec_sent && rc != EXIT_ERROR) { /* the next key's WATCH must not inherit this one */
        remote_append(src, 1, (const char *[]){"UNWATCH"}, NULL);
        freeReplyObject(remote_reply(src));
    }
    if (!rc)
        rc = move_rename(dst, tmp, tmp_len, k->key, k->len, c->replace, ttl);
    if (rc && made)
        move_delete(dst, tmp, tmp_len);
    return rc;
}

/* Copies key k, again after a write during a pass and where either server redirects. 0, 1 (counted, a line
 * printed where it says so), or 2 after a line. */
static int copy_key(copier *c, const found *k)
{
    size_t need = 2 * k->len + 96;
    if (need > c->tmp_cap) {
        char *t = realloc(c->tmp, need);
        if (!t) {
            fprintf(stderr, "nidus copy: out of memory\n");
            return EXIT_ERROR;
        }
        c->tmp = t;
        c->tmp_cap = need;
    }
    size_t tmp_len;
    if (!move_temp_key(k->key, k->len, c->unique + (unsigned long long)(k - c->keys), c->tmp, c->tmp_cap, &tmp_len)) {
        fprintf(stderr, "nidus copy: out of memory\n");
        return EXIT_ERROR;
    }
    remote *src = c->from.r[k->node], *dst = c->to.r[nodes_for_key(&c->to, k->key, k->len)];
    int rc, passes = 0, redirects = 0;
    uint64_t items = 0, bytes = 0;
    for (;;) {
        rc = copy_pass(c, src, dst, k, c->tmp, tmp_len, &items, &bytes);
        if (rc == CHANGED) {
            if (++passes == COPY_ATTEMPTS)
                break;
            continue;
        }
        if (rc != SOURCE_MOVED && rc != MOVE_REDIRECTED)
            break;
        if (redirects++ == REMOTE_REDIRECTS) {
            remote *r = rc == SOURCE_MOVED ? src : dst;
            key_line(r, k, "still redirected after %d redirects (to %s:%d): the cluster's slot keeps moving; try "
                           "again", REMOTE_REDIRECTS, r->next_host, r->next_port);
            c->failed++;
            return EXIT_KEYS;
        }
        if (rc == MOVE_REDIRECTED) { /* the target's slot moved during the pass: there, the temporary key too */
            if (remote_follow(dst))
                return EXIT_ERROR;
            move_delete(dst, c->tmp, tmp_len);
        } else if (remote_follow(src)) {
            return EXIT_ERROR;
        }
    }
    switch (rc) {
    case NOT_COPIED:
        return 0;
    case 0:
        c->copied++;
        c->items += items;
        c->bytes += bytes;
        if (passes)
            c->again++;
        return 0;
    case MOVE_EXISTS:
        key_line(dst, k, "already exists (--replace replaces it)");
        c->exists++;
        return EXIT_KEYS;
    case CHANGED:
        key_line(src, k, "written to during each of %d copies: not copied (copy it again later)", COPY_ATTEMPTS);
        c->changed++;
        return EXIT_KEYS;
    default:
        return rc;
    }
}

/* ---- the command ---- */

/* n, and "key" or "keys" */
static const char *keys_word(uint64_t n) { return n == 1 ? "key" : "keys"; }

/* n with a comma between each group of three digits, into out. */
static const char *thousands(uint64_t n, char out[32])
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n), o = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

static void summary(const copier *c, double seconds)
{
    char items[32];
    bool mb = c->bytes >= 100000; /* 0.1 MB and more in MB, less in kB (10^6 and 10^3 bytes) */
    printf("copied %llu %s (%s item%s, %.1f %s) in %.2f s", (unsigned long long)c->copied, keys_word(c->copied),
           thousands(c->items, items), c->items == 1 ? "" : "s", (double)c->bytes / (mb ? 1e6 : 1e3),
           mb ? "MB" : "kB", seconds);
    if (c->skipped)
        printf("; skipped %llu %s of other types", (unsigned long long)c->skipped, keys_word(c->skipped));
    if (c->exists)
        printf("; %llu %s (use --replace)", (unsigned long long)c->exists,
               c->exists == 1 ? "key exists" : "keys exist");
    if (c->changed)
        printf("; %llu %s written to during each of %d copies, not copied", (unsigned long long)c->changed,
               keys_word(c->changed), COPY_ATTEMPTS);
    if (c->again)
        printf("; %llu %s copied again after a write", (unsigned long long)c->again, keys_word(c->again));
    if (c->failed)
        printf("; %llu %s failed", (unsigned long long)c->failed, keys_word(c->failed));
    if (c->missing)
        printf("; %llu %s not found", (unsigned long long)c->missing, keys_word(c->missing));
    if (c->gone)
        printf("; %llu %s deleted before its copy", (unsigned long long)c->gone, keys_word(c->gone));
    printf("\n");
    fflush(stdout);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cmd_copy(int argc, char **argv)
{
    copy_options o;
    copier c = {0};
    int rc = parse_copy_options(argc, argv, &o);
    if (rc)
        return rc;
    c.replace = o.replace;
    double start = now();
    if ((rc = nodes_open(&c.from, "copy", o.from, true)) || (rc = nodes_open(&c.to, "copy", o.to, false)))
        goto done;
    c.unique = move_unique();
    c.named = o.n_keys > 0;
    for (int i = 0; i < o.n_keys && !rc; i++)
        rc = add_key(&c, o.keys[i], strlen(o.keys[i]), nodes_for_key(&c.from, o.keys[i], strlen(o.keys[i])),
                     NOT_A_FILTER);
    for (size_t node = 0; !o.n_keys && !rc && node < c.from.n; node++)
        rc = scan_node(&c, node, o.match);
    if (rc)
        goto done;
    progress_begin(&c.p, "copying", c.n);
    bool failed = false;
    for (size_t i = 0; i < c.n; i++) {
        rc = copy_key(&c, &c.keys[i]);
        if (rc == EXIT_ERROR)
            break;
        failed |= rc == EXIT_KEYS;
        rc = 0;
        progress_update(&c.p, i + 1, c.items);
    }
    progress_clear(&c.p);
    summary(&c, now() - start);
    if (!rc && failed)
        rc = EXIT_KEYS;
done:
    for (size_t i = 0; i < c.n; i++)
        free(c.keys[i].key);
    free(c.keys);
    free(c.tmp);
    nodes_close(&c.from);
    nodes_close(&c.to);
    return rc;
}
