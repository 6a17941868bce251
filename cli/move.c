/* SPDX-License-Identifier: BSD-3-Clause */
/* push and pull. Atomic on the server: the chunks load into a temporary key in KEY's hash slot (a safety TTL
 * on it until the end), then MULTI / PERSIST / RENAME (RENAMENX without --force) / EXEC, and the temporary
 * key is deleted on any failure. Atomic on disk: the library's _save_file (temporary file, fsync, rename). */
#define _POSIX_C_SOURCE 200809L
#include "move.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nidus/nidus.h>

#include "commands.h"
#include "common.h"
#include "progress.h"
#include "remote.h"

#define WINDOW 4                     /* LOADCHUNK commands in flight: the server parses one while the next arrives */
#define TEMP_TTL_MS "600000"         /* a push cut off (killed, the link lost) leaves nothing past ten minutes */
#define PULL_ATTEMPTS 3              /* a key written to during a pull is read again from the start */
#define CHUNK_CAP (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD)

/* ---- the temporary key: Redis Cluster's key slot rule (CRC16/XMODEM of the hash tag, else the key) ---- */

static uint16_t crc16(const char *s, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((unsigned char)s[i] << 8);
        for (int k = 0; k < 8; k++)
            crc = crc & 0x8000 ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

/* True if key has a hash tag: a '{', then a '}' after it with at least one byte between. */
static bool has_hash_tag(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (!open)
        return false;
    const char *close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
    return close && close > open + 1;
}

unsigned move_key_slot(const char *key, size_t key_len)
{
    if (has_hash_tag(key, key_len)) {
        const char *open = memchr(key, '{', key_len);
        const char *close = memchr(open + 1, '}', key_len - (size_t)(open + 1 - key));
        return crc16(open + 1, (size_t)(close - open - 1)) & 16383u;
    }
    return crc16(key, key_len) & 16383u;
}

/* A short tag whose slot is key's, found by trying (16384 slots: ~16k tries); its length. */
static int slot_tag(const char *key, size_t key_len, char tag[32])
{
    unsigned slot = move_key_slot(key, key_len);
    for (unsigned long i = 0;; i++) {
        int t = snprintf(tag, 32, "nidus-slot-%lu", i);
        if ((crc16(tag, (size_t)t) & 16383u) == slot)
            return t;
    }
}

/* Appends n bytes of s at out[*o] if they fit in cap (with the final '\0'); false if not. */
static bool put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
    if (n >= cap - *o)
        return false;
    memcpy(out + *o, s, n);
    *o += n;
    out[*o] = '\0';
    return true;
}

int move_temp_key(const char *key, size_t key_len, unsigned long long unique, char *out, size_t cap,
                  size_t *out_len)
{
    char suffix[48], tag[32];
    size_t n = (size_t)snprintf(suffix, sizeof suffix, ".nidus-push-%llx", unique), o = 0;
    if (!cap)
        return 0;
    out[0] = '\0';
    bool ok;
    if (has_hash_tag(key, key_len)) { /* KEY.suffix: the tag stays the first one (the suffix has no braces) */
        ok = put(out, cap, &o, key, key_len) && put(out, cap, &o, suffix, n);
    } else if (!memchr(key, '{', key_len)) {
        /* KEY.suffix{T}, the first '{' the tag's: T is KEY itself, or a tag of its slot when KEY has a '}' (or
         * is empty). KEY comes first so that an ACL key pattern allowing KEY (~app:*) allows this key too. */
        size_t t = key_len;
        const char *tag_of = key;
        if (!key_len || memchr(key, '}', key_len)) {
            t = (size_t)slot_tag(key, key_len, tag);
            tag_of = tag;
        }
        ok = put(out, cap, &o, key, key_len) && put(out, cap, &o, suffix, n) && put(out, cap, &o, "{", 1) &&
             put(out, cap, &o, tag_of, t) && put(out, cap, &o, "}", 1);
    } else { /* a '{' without a tag in KEY would take a tag put after it: {T}KEY.suffix */
        size_t t = key_len;
        const char *tag_of = key;
        if (memchr(key, '}', key_len)) { /* KEY cannot be its own tag */
            t = (size_t)slot_tag(key, key_len, tag);
            tag_of = tag;
        }
        ok = put(out, cap, &o, "{", 1) && put(out, cap, &o, tag_of, t) && put(out, cap, &o, "}", 1) &&
             put(out, cap, &o, key, key_len) && put(out, cap, &o, suffix, n);
    }
    *out_len = o;
    return ok;
}

/* ---- errors ---- */

/* FILE's line for push and pull: a damaged file is named, and 'nidus verify' says where. */
static int move_file_error(const char *path, nidus_status st)
{
    fprintf(stderr, "nidus: %s: %s\n", path,
            st == NIDUS_ERR_IO ? strerror(errno)
            : st == NIDUS_ERR_CORRUPT ? "not a nidus filter, or corrupt or truncated ('nidus verify' says where)"
            : st == NIDUS_ERR_VERSION ? "written by another version of the format"
                                      : nidus_strerror(st));
    return EXIT_ERROR;
}

int move_key_type(remote *r, const char *key, size_t key_len, char *out, size_t cap)
{
    redisReply *reply = remote_call(r, 2, (const char *[]){"TYPE", key}, (size_t[]){4, key_len});
    if (!reply)
        return EXIT_ERROR;
    if (reply->type != REDIS_REPLY_STATUS) {
        int rc = remote_refused(r, "TYPE", reply);
        freeReplyObject(reply);
        return rc;
    }
    snprintf(out, cap, "%s", reply->str);
    freeReplyObject(reply);
    return 0;
}

unsigned long long move_unique(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_nsec ^
           ((unsigned long long)ts.tv_sec << 20);
}

/* ---- the steps on the server ---- */

void move_delete(remote *r, const char *key, size_t len)
{
    if (!r->c || r->c->err)
        return;
    remote_append(r, 2, (const char *[]){"DEL", key}, (size_t[]){3, len});
    freeReplyObject(remote_reply(r));
}

void move_loader_begin(move_loader *l, remote *r, const char *command, const char *tmp, size_t tmp_len)
{
    *l = (move_loader){.r = r, .command = command, .tmp = tmp, .tmp_len = tmp_len};
}

/* Reads replies until at most `keep` are in flight; the first error reply is kept. 0, or 2 after a line. */
static int loader_drain(move_loader *l, int keep)
{
    while (l->pending > keep) {
        redisReply *reply = remote_reply(l->r);
        if (!reply)
            return EXIT_ERROR;
        l->pending--;
        if (reply->type == REDIS_REPLY_ERROR && !l->refusal)
            l->refusal = reply;
        else
            freeReplyObject(reply);
    }
    return 0;
}

int move_loader_put(move_loader *l, uint64_t iter, const void *data, size_t len)
{
    if (l->refusal)
        return 0;
    char it[24];
    snprintf(it, sizeof it, "%llu", (unsigned long long)iter);
    remote_append(l->r, 4, (const char *[]){l->command, l->tmp, it, data},
                  (size_t[]){strlen(l->command), l->tmp_len, strlen(it), len});
    l->pending++;
    if (!l->started) { /* the key exists from the header on: give it a TTL until the rename */
        remote_append(l->r, 3, (const char *[]){"PEXPIRE", l->tmp, TEMP_TTL_MS},
                      (size_t[]){7, l->tmp_len, strlen(TEMP_TTL_MS)});
        l->pending++;
        l->started = true;
    }
    return loader_drain(l, WINDOW);
}

int move_loader_finish(move_loader *l)
{
    if (loader_drain(l, 0))
        return EXIT_ERROR;
    if (!l->refusal)
        return 0;
    return remote_redirected(l->r, l->refusal) ? MOVE_REDIRECTED : MOVE_REFUSED;
}

void move_loader_free(move_loader *l)
{
    freeReplyObject(l->refusal);
    l->refusal = NULL;
}

int move_rename(remote *r, const char *tmp, size_t tmp_len, const char *key, size_t key_len, bool replace,
                long long ttl_ms)
{
    const char *rename = replace ? "RENAME" : "RENAMENX";
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms);
    if (r->asking) /* one ASKING covers the transaction: the flag lasts until EXEC */
        redisAppendCommand(r->c, "ASKING");
    redisAppendCommand(r->c, "MULTI");
    if (ttl_ms >= 1)
        redisAppendCommandArgv(r->c, 3, (const char *[]){"PEXPIRE", tmp, ttl}, (size_t[]){7, tmp_len, strlen(ttl)});
    else
        redisAppendCommandArgv(r->c, 2, (const char *[]){"PERSIST", tmp}, (size_t[]){7, tmp_len});
    redisAppendCommandArgv(r->c, 3, (const char *[]){rename, tmp, key}, (size_t[]){strlen(rename), tmp_len, key_len});
    redisAppendCommand(r->c, "EXEC");
    int rc = 0;
    for (int i = r->asking ? -1 : 0; i < 4; i++) {
        redisReply *reply;
        if (redisGetReply(r->c, (void **)&reply) != REDIS_OK) {
            fprintf(stderr, "nidus %s: %s: %s\n", r->cmd, r->shown,
                    r->c->err == REDIS_ERR_EOF ? "the server closed the connection" : r->c->errstr);
            return EXIT_ERROR;
        }
        if (!rc && remote_redirected(r, reply))
            rc = MOVE_REDIRECTED;
        else if (!rc && reply->type == REDIS_REPLY_ERROR)
            rc = remote_refused(r, rename, reply);
        if (!rc && i == 3) {
            redisReply *renamed = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 ? reply->element[1] : NULL;
            if (!renamed || renamed->type == REDIS_REPLY_ERROR)
                rc = remote_refused(r, rename, renamed ? renamed : reply);
            else if (renamed->type == REDIS_REPLY_INTEGER && renamed->integer == 0)
                rc = MOVE_EXISTS;
        }
        freeReplyObject(reply);
    }
    return rc;
}

/* ---- push ---- */

static int push_exists(const remote *r, const char *key)
{
    fprintf(stderr, "nidus push: %s: %s: already exists (--force replaces it)\n", r->shown, key);
    return EXIT_ERROR;
}

/* Sends every chunk of f as LOADCHUNK tmp; 0, MOVE_REDIRECTED, or 2 after one line (the server's refusal names
 * FILE). */
static int send_chunks(remote *r, nidus_filter *f, const char *path, const char *tmp, size_t tmp_len)
{
    nidus_kind kind = nidus_filter_kind(f);
    /* a windowed file goes through CF.LOADCHUNK: the module makes a windowed CF key of its header chunk */
    const char *command = kind == NIDUS_KIND_BLOOM ? NIDUS_BF_LOADCHUNK : NIDUS_CF_LOADCHUNK;
    uint8_t *buf = malloc(CHUNK_CAP);
    if (!buf) {
        fprintf(stderr, "nidus push: %s: out of memory\n", path);
        return EXIT_ERROR;
    }
    uint64_t total = nidus_filter_encoded_size(f), sent = 0, cursor = 0, next;
    nidus_filter_stats stats;
    nidus_filter_get_stats(f, &stats);
    progress p;
    progress_begin(&p, "pushing", total);
    move_loader l;
    move_loader_begin(&l, r, command, tmp, tmp_len);
    int rc = 0;
    bool lost = false;
    for (;;) {
        size_t len = 0;
        nidus_status st = nidus_filter_dump_chunk(f, cursor, buf, CHUNK_CAP, &len, &next);
        if (st) {
            move_file_error(path, st);
            rc = EXIT_ERROR;
            break;
        }
        if (!len)
            break;
        if ((rc = move_loader_put(&l, next, buf, len))) {
            lost = true;
            break;
        }
        sent += len;
        cursor = next;
        progress_update(&p, sent, total ? (uint64_t)((double)stats.items * (double)sent / (double)total) : 0);
        if (l.refusal)
            break;
    }
    free(buf);
    if (!lost) { /* the replies in flight, also after a file error */
        int finished = move_loader_finish(&l);
        if (!rc)
            rc = finished;
    }
    if (rc == MOVE_REFUSED) {
        if (!strncmp(l.refusal->str, "NOPERM", 6))
            rc = remote_refused(r, command, l.refusal);
        else {
            fprintf(stderr, "nidus push: %s: the server refused it: %s\n", path, l.refusal->str);
            rc = EXIT_ERROR;
        }
    }
    move_loader_free(&l);
    if (!rc)
        progress_end(&p, stats.items);
    return rc;
}

/* KEY's slot is migrating to host:port and KEY is not there: the rename cannot happen on either node (the source
 * sends the new temporary key to the target, where a rename onto a missing key is TRYAGAIN until the slot has
 * moved). 2 after a line. */
static int migrating(const remote *r, const char *key, const char *host, int port)
{
    fprintf(stderr, "nidus push: %s: %s: its slot is migrating to %s:%d, where the push's rename cannot run until "
                    "the migration is done; try again then\n", r->shown, key, host, port);
    return EXIT_ERROR;
}

/* One push of f into key through the temporary key tmp on the node connected to: 0, MOVE_REDIRECTED (tmp deleted
 * if it was there), or 2 after a line. */
static int push_once(remote *r, nidus_filter *f, const char *path, const char *key, const char *tmp, size_t tmp_len,
                     bool force)
{
    char type[64];
    size_t key_len = strlen(key);
    int rc = move_key_type(r, key, key_len, type, sizeof type);
    if (rc)
        return rc;
    if (strcmp(type, "none") && !force)
        return push_exists(r, key);
    if (r->asking && !strcmp(type, "none"))
        return migrating(r, key, r->host, r->port);
    rc = send_chunks(r, f, path, tmp, tmp_len);
    if (!rc && (rc = move_rename(r, tmp, tmp_len, key, key_len, force, -1)) == MOVE_EXISTS)
        rc = push_exists(r, key);
    if (rc)
        move_delete(r, tmp, tmp_len);
    if (rc == MOVE_REDIRECTED && r->next_ask && !r->asking && strcmp(type, "none"))
        return migrating(r, key, r->next_host, r->next_port);
    return rc;
}

int cmd_push(int argc, char **argv)
{
    const char *url, *pos[2];
    bool force;
    int rc = parse_remote_options("push", argc, argv, &url, &force, pos);
    if (rc)
        return rc;
    const char *path = pos[0], *key = pos[1];
    nidus_filter *f;
    nidus_status st = nidus_filter_open(path, NIDUS_FILTER_MAP, NULL, NULL, &f);
    if (st)
        return move_file_error(path, st);
    nidus_kind kind = nidus_filter_kind(f);
    if (kind == NIDUS_KIND_COUNTING_BLOOM || kind == NIDUS_KIND_FUSE) {
        fprintf(stderr, "nidus push: %s: a %s filter: the module holds cuckoo (CF) and Bloom (BF) filters only\n",
                path, kind == NIDUS_KIND_FUSE ? "fuse" : "counting Bloom");
        nidus_filter_free(f);
        return EXIT_ERROR;
    }
    remote r;
    if ((rc = remote_open(&r, "push", url))) {
        nidus_filter_free(f);
        return rc;
    }
    size_t key_len = strlen(key), tmp_len, cap = 2 * key_len + 96;
    char *tmp = malloc(cap);
    if (!tmp || !move_temp_key(key, key_len, move_unique(), tmp, cap, &tmp_len)) {
        fprintf(stderr, "nidus push: out of memory\n");
        free(tmp);
        remote_close(&r);
        nidus_filter_free(f);
        return EXIT_ERROR;
    }
    /* TYPE follows redirects itself; a slot that moves during the chunks or the rename starts the push again
     * on the node it moved to, where the temporary key may have moved with the slot */
    for (int attempt = 0; (rc = push_once(&r, f, path, key, tmp, tmp_len, force)) == MOVE_REDIRECTED; attempt++) {
        if (attempt == REMOTE_REDIRECTS) {
            fprintf(stderr, "nidus push: %s: still redirected after %d redirects (to %s:%d): the cluster's slot "
                            "keeps moving; try again\n", r.shown, REMOTE_REDIRECTS, r.next_host, r.next_port);
            rc = EXIT_ERROR;
            break;
        }
        if ((rc = remote_follow(&r)))
            break;
        move_delete(&r, tmp, tmp_len);
    }
    free(tmp);
    remote_close(&r);
    nidus_filter_free(f);
    return rc;
}

/* ---- pull ---- */

typedef struct pulled {
    nidus_kind kind;
    bool bf;         /* a BF key (BF.SCANDUMP): nidus--BF, or nidus--BW windowed */
    nidus_filter *f; /* made by the first chunk */
} pulled;

static void pulled_free(pulled *p)
{
    nidus_filter_free(p->f);
    p->f = NULL;
}

/* One pass of SCANDUMP over key into *out. 0 done; 1 the chunks did not fit together (the key changed during
 * the pass: try again); 2 after a line. */
static int scan_key(remote *r, const char *key, pulled *out, progress *p)
{
    const char *command = out->bf ? NIDUS_BF_SCANDUMP : NIDUS_CF_SCANDUMP;
    unsigned long long cursor = 0;
    uint64_t got = 0, total = 0;
    for (;;) {
        char iter[24];
        snprintf(iter, sizeof iter, "%llu", cursor);
        redisReply *reply = remote_call(r, 3, (const char *[]){command, key, iter}, NULL);
        if (!reply)
            return EXIT_ERROR;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
            reply->element[0]->type != REDIS_REPLY_INTEGER) {
            int rc = remote_refused(r, command, reply);
            freeReplyObject(reply);
            return rc;
        }
        redisReply *chunk = reply->element[1];
        if (chunk->type != REDIS_REPLY_STRING || reply->element[0]->integer == 0) {
            /* past the last chunk: [0, nil], or [0, ""] from a Bloom filter, as RedisBloom ends its stream */
            freeReplyObject(reply);
            break;
        }
        nidus_status st = nidus_filter_load_chunk(&out->f, out->kind, chunk->str, chunk->len, 0, NULL);
        cursor = (unsigned long long)reply->element[0]->integer;
        got += chunk->len;
        freeReplyObject(reply);
        if (st == NIDUS_ERR_SEQUENCE || st == NIDUS_ERR_CORRUPT)
            return 1;
        if (st) {
            fprintf(stderr, "nidus pull: %s: %s: %s\n", r->shown, key, nidus_strerror(st));
            return EXIT_ERROR;
        }
        if (!total) /* the header is in: the encoding's size is known */
            total = nidus_filter_encoded_size(out->f);
        p->total = total;
        progress_update(p, got, 0);
        if (!cursor)
            break;
    }
    return !out->f || nidus_filter_loading(out->f) ? 1 : 0;
}

int cmd_pull(int argc, char **argv)
{
    const char *url, *pos[2];
    bool force;
    int rc = parse_remote_options("pull", argc, argv, &url, &force, pos);
    if (rc)
        return rc;
    const char *key = pos[0], *path = pos[1];
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "nidus: %s: is not a regular file (refusing to replace it)\n", path);
        return EXIT_ERROR;
    }
    if (!force && stat(path, &sb) == 0) {
        fprintf(stderr, "nidus: %s: already exists (--force replaces it)\n", path);
        return EXIT_ERROR;
    }
    remote r;
    if ((rc = remote_open(&r, "pull", url)))
        return rc;
    char type[64];
    pulled out = {0};
    if ((rc = move_key_type(&r, key, strlen(key), type, sizeof type)))
        goto done;
    if (!strcmp(type, "nidus--CF")) {
        out.kind = NIDUS_KIND_CUCKOO;
    } else if (!strcmp(type, "nidus--BF")) {
        out.kind = NIDUS_KIND_BLOOM, out.bf = true;
    } else if (!strcmp(type, "nidus--CW") || !strcmp(type, "nidus--BW")) { /* windowed: the same chunks */
        out.kind = NIDUS_KIND_WINDOW, out.bf = type[7] == 'B';
    } else {
        rc = EXIT_ERROR;
        if (!strcmp(type, "none"))
            fprintf(stderr, "nidus pull: %s: %s: no such key\n", r.shown, key);
        else if (!strcmp(type, "MBbloomCF") || !strcmp(type, "MBbloom--"))
            /* its tables keep RedisBloom's hashing (MurmurHash) and placement, which no nidus file holds */
            fprintf(stderr, "nidus pull: %s: %s: a %s loaded from RedisBloom's data: a nidus file cannot hold it "
                            "(RedisBloom's hashing); build the file from the items instead\n", r.shown, key,
                    type[7] == 'C' ? "cuckoo filter" : "Bloom filter");
        else
            fprintf(stderr, "nidus pull: %s: %s: holds a %s, not a cuckoo, Bloom or windowed filter\n", r.shown, key,
                    type);
        goto done;
    }
    progress p;
    progress_begin(&p, "pulling", 0);
    for (int attempt = 1;; attempt++) {
        rc = scan_key(&r, key, &out, &p);
        if (rc != 1)
            break;
        pulled_free(&out);
        if (attempt == PULL_ATTEMPTS) {
            fprintf(stderr, "nidus pull: %s: %s: the key changed during each of %d copies (or holds a copy "
                            "still loading); try again\n", r.shown, key, PULL_ATTEMPTS);
            rc = EXIT_ERROR;
            goto done;
        }
    }
    if (rc)
        goto done;
    nidus_status st = nidus_filter_save_file(out.f, path);
    if (st) {
        rc = move_file_error(path, st);
        goto done;
    }
    nidus_filter_stats s;
    nidus_filter_get_stats(out.f, &s);
    uint64_t items = s.items;
    progress_end(&p, items);
done:
    pulled_free(&out);
    remote_close(&r);
    return rc;
}
