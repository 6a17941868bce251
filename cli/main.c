/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus: filters in files, no server. See help.c, docs/nidus.1 and docs/ARCHITECTURE.md.
 * Exit codes: 0 success; 1 a key could not be added, or (del) was not there: then the file is left as it was,
 * unless --keep-going; 2 usage, I/O or format error, with one line on stderr naming the file and the problem. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nidus/verify.h>

#include "filter.h"
#include "hashes.h"
#include "help.h"
#include "keys.h"
#include "move.h"
#include "progress.h"

#define EXIT_KEYS 1
#define EXIT_ERROR 2
#define BATCH 4096

static int usage_error(const char *cmd, const char *what, const char *arg)
{
    fprintf(stderr, "nidus %s: %s%s%s (see 'nidus help %s')\n", cmd, what, arg ? ": " : "", arg ? arg : "", cmd);
    return EXIT_ERROR;
}

/* What a path is when it is not a regular file ("a directory", ...), or NULL. */
static const char *not_regular(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode))
        return NULL;
    return S_ISDIR(sb.st_mode)    ? "a directory"
           : S_ISCHR(sb.st_mode)  ? "a character device"
           : S_ISBLK(sb.st_mode)  ? "a block device"
           : S_ISFIFO(sb.st_mode) ? "a fifo"
           : S_ISSOCK(sb.st_mode) ? "a socket"
                                  : "not a regular file";
}

/* One line on stderr: the file, then what went wrong. */
static int file_error(const char *path, nidus_status st)
{
    int saved = errno;
    const char *kind = st == NIDUS_ERR_NOT_REGULAR || st == NIDUS_ERR_IO ? not_regular(path) : NULL;
    if (kind) {
        fprintf(stderr, "nidus: %s: is %s, not a filter file%s\n", path, kind,
                st == NIDUS_ERR_NOT_REGULAR ? " (refusing to replace it)" : "");
        return EXIT_ERROR;
    }
    const char *why = st == NIDUS_ERR_IO ? strerror(saved)
                      : st == NIDUS_ERR_CORRUPT ? "not a nidus filter, or corrupt or truncated"
                      : st == NIDUS_ERR_VERSION ? "written by another version of the format"
                                                : nidus_strerror(st);
    fprintf(stderr, "nidus: %s: %s\n", path, why);
    return EXIT_ERROR;
}

/* One line on stderr for a file that failed its checks: which check, and where (nidus_file_verify's report).
 * Without a report (the file changed since, or read wrong), file_error's line. */
static int damage_error(const char *path, nidus_status st, const nidus_file_report *r)
{
    unsigned long long at = r->offset, end = r->offset + r->length - (r->length > 0);
    if (!r->part || (st != NIDUS_ERR_CORRUPT && st != NIDUS_ERR_VERSION))
        return file_error(path, st);
    if (st == NIDUS_ERR_VERSION)
        fprintf(stderr, "nidus: %s: written by another version of the format: the format version (byte 5) is %u, "
                        "this build reads 1 to %u\n", path, r->version, NIDUS_FILE_FORMAT_VERSION_SIBLINGS);
    else if (r->block != NIDUS_FILE_NO_BLOCK)
        fprintf(stderr, "nidus: %s: corrupt: block %llu of %llu (bytes %llu-%llu) does not match its checksum "
                        "(damaged blocks: %llu of %llu)\n", path, (unsigned long long)r->block,
                (unsigned long long)r->blocks, at, end, (unsigned long long)r->bad_blocks,
                (unsigned long long)r->blocks);
    else if (!strcmp(r->part, "file"))
        fprintf(stderr, "nidus: %s: corrupt: the file (%llu bytes) %s\n", path, (unsigned long long)r->file_bytes,
                r->problem);
    else if (r->length == 1)
        fprintf(stderr, "nidus: %s: corrupt: the %s (byte %llu) %s\n", path, r->part, at, r->problem);
    else
        fprintf(stderr, "nidus: %s: %sthe %s (bytes %llu-%llu) %s\n", path,
                strcmp(r->part, "magic") ? "corrupt: " : "", r->part, at, end, r->problem);
    return EXIT_ERROR;
}

/* file_error, or for a file that is damaged, damage_error: the check that failed, found by checking it again. */
static int open_error(const char *path, nidus_status st)
{
    if (st != NIDUS_ERR_CORRUPT && st != NIDUS_ERR_VERSION)
        return file_error(path, st);
    nidus_file_report r;
    nidus_status again = nidus_file_verify(path, NULL, &r);
    return again == st ? damage_error(path, st, &r) : file_error(path, st);
}

/* Flushes stdout: a full disk or closed pipe is an error (exit 2), not a silent success. */
static int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nidus: writing to stdout: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return 0;
}

/* ---- options ---- */

typedef struct options {
    cli_create_options create;
    bool force, json, has_type, has_capacity, keep_going;
    const char *from;
    const char *fingerprint_bits; /* as given: its range depends on the kind, checked once all are read */
} options;

/* Matches `--name value` or `--name=value`; advances *i past what it used. */
static bool take_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return false;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return true;
    }
    if (argv[*i][n] || *i + 1 >= argc)
        return false;
    *value = argv[++*i];
    return true;
}

static bool parse_number(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The options of a fuse filter (built once from its keys: nothing sizes it, grows it or shapes its buckets, no
 * key can fail to go in): --fingerprint-bits 8 or 16, --error down to 2^-16, both only when the width meets
 * the error. create is refused: there is no empty fuse filter to fill. */
static int check_fuse_options(const char *cmd, options *o)
{
    cli_create_options *c = &o->create;
    if (strcmp(cmd, "build")) {
        fprintf(stderr, "nidus %s: a fuse filter is static: it is built from its keys, not created empty "
                        "(nidus build FILE --from KEYS --type fuse)\n", cmd);
        return EXIT_ERROR;
    }
    const char *misfit = o->has_capacity     ? "--capacity"
                         : c->expansion >= 0 ? "--expansion"
                         : c->bucket_size    ? "--bucket-size"
                         : c->semi_sort      ? "--semi-sort"
                         : c->max_kicks      ? "--max-kicks"
                         : o->keep_going     ? "--keep-going"
                                             : NULL;
    if (misfit) {
        fprintf(stderr, "nidus build: %s does not apply to a fuse filter: it is sized for the keys it is built "
                        "from, and every key goes in (see 'nidus help build')\n", misfit);
        return EXIT_ERROR;
    }
    unsigned long long n;
    if (o->fingerprint_bits) {
        if (!parse_number(o->fingerprint_bits, 8, 16, &n) || (n != 8 && n != 16))
            return usage_error(cmd, "--fingerprint-bits must be 8 or 16 for a fuse filter", o->fingerprint_bits);
        c->fingerprint_bits = (unsigned)n;
    }
    if (c->error && c->error < 1.0 / 65536.0)
        return usage_error(cmd, "--error must be at least 2^-16 (0.0000153) for a fuse filter: its fingerprints "
                                "are 8 or 16 bits", NULL);
    if (c->error && c->fingerprint_bits && c->error < 1.0 / (double)(1u << c->fingerprint_bits)) {
        fprintf(stderr, "nidus build: --fingerprint-bits %u gives a fuse filter an error of 2^-%u (%.3g), above "
                        "--error %g (see 'nidus help build')\n", c->fingerprint_bits, c->fingerprint_bits,
                1.0 / (double)(1u << c->fingerprint_bits), c->error);
        return EXIT_ERROR;
    }
    return 0;
}

/* Parses the options of `cmd` out of argv (in place: what is left are the positional arguments). */
static int parse_options(const char *cmd, int *argc, char **argv, options *o, bool creating)
{
    *o = (options){.create = {.kind = NIDUS_KIND_CUCKOO, .expansion = -1}};
    int out = 0;
    unsigned long long n;
    for (int i = 0; i < *argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--")) {
            while (++i < *argc)
                argv[out++] = argv[i];
            break;
        }
        if (strncmp(argv[i], "--", 2)) {
            argv[out++] = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "--json") && !strcmp(cmd, "info")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--keep-going") &&
                   (!strcmp(cmd, "add") || !strcmp(cmd, "del") || !strcmp(cmd, "build"))) {
            o->keep_going = true;
        } else if (!creating) {
            return usage_error(cmd, "unknown option", argv[i]);
        } else if (!strcmp(argv[i], "--force")) {
            o->force = true;
        } else if (!strcmp(argv[i], "--semi-sort")) {
            o->create.semi_sort = true;
        } else if (take_value(*argc, argv, &i, "--type", &v)) {
            o->has_type = true;
            if (!strcmp(v, "cuckoo"))
                o->create.kind = NIDUS_KIND_CUCKOO;
            else if (!strcmp(v, "bloom"))
                o->create.kind = NIDUS_KIND_BLOOM;
            else if (!strcmp(v, "counting-bloom"))
                o->create.kind = NIDUS_KIND_COUNTING_BLOOM;
            else if (!strcmp(v, "fuse"))
                o->create.kind = NIDUS_KIND_FUSE;
            else
                return usage_error(cmd, "--type must be cuckoo, bloom, counting-bloom or fuse", v);
        } else if (take_value(*argc, argv, &i, "--capacity", &v)) {
            if (!parse_number(v, 1, UINT64_MAX >> 2, &o->create.capacity))
                return usage_error(cmd, "--capacity must be a positive integer", v);
            o->has_capacity = true;
        } else if (take_value(*argc, argv, &i, "--error", &v)) {
            char *end;
            o->create.error = strtod(v, &end);
            if (*end || !(o->create.error > 0 && o->create.error < 1))
                return usage_error(cmd, "--error must be a number between 0 and 1", v);
        } else if (take_value(*argc, argv, &i, "--fingerprint-bits", &v)) {
            o->fingerprint_bits = v;
        } else if (take_value(*argc, argv, &i, "--bucket-size", &v)) {
            if (!parse_number(v, 1, 8, &n) || (n & (n - 1)))
                return usage_error(cmd, "--bucket-size must be 1, 2, 4 or 8", v);
            o->create.bucket_size = (unsigned)n;
        } else if (take_value(*argc, argv, &i, "--expansion", &v)) {
            if (!parse_number(v, 0, 32768, &n))
                return usage_error(cmd, "--expansion must be an integer from 0 to 32768", v);
            o->create.expansion = (long long)n;
        } else if (take_value(*argc, argv, &i, "--max-kicks", &v)) {
            if (!parse_number(v, 1, 65535, &n))
                return usage_error(cmd, "--max-kicks must be an integer from 1 to 65535", v);
            o->create.max_kicks = (unsigned)n;
        } else if (take_value(*argc, argv, &i, "--from", &v) && !strcmp(cmd, "build")) {
            o->from = v;
        } else {
            return usage_error(cmd, "unknown option, or one missing its value", argv[i]);
        }
    }
    *argc = out;
    if (!creating)
        return 0;
    cli_create_options *c = &o->create;
    if (c->kind == NIDUS_KIND_FUSE)
        return check_fuse_options(cmd, o);
    if (o->fingerprint_bits) {
        if (!parse_number(o->fingerprint_bits, 4, 32, &n))
            return usage_error(cmd, "--fingerprint-bits must be an integer from 4 to 32", o->fingerprint_bits);
        c->fingerprint_bits = (unsigned)n;
    }
    if (!o->has_capacity && (strcmp(cmd, "build") || !o->from || !strcmp(o->from, "-")))
        return usage_error(cmd, strcmp(cmd, "build") ? "--capacity is required"
                                                     : "--capacity is required when the keys come from stdin",
                           NULL);
    if (c->error && c->fingerprint_bits)
        return usage_error(cmd, "--error and --fingerprint-bits exclude each other", NULL);
    if (c->kind != NIDUS_KIND_CUCKOO && (c->fingerprint_bits || c->bucket_size || c->semi_sort || c->max_kicks))
        return usage_error(cmd, "--fingerprint-bits, --bucket-size, --semi-sort and --max-kicks are for cuckoo filters",
                           NULL);
    if (c->kind == NIDUS_KIND_COUNTING_BLOOM && c->expansion > 0)
        return usage_error(cmd, "a counting-bloom filter does not grow: --expansion must be 0 or left out", NULL);
    if (c->semi_sort && c->bucket_size && c->bucket_size != 4)
        return usage_error(cmd, "--semi-sort needs --bucket-size 4", NULL);
    return 0;
}

/* ---- commands ---- */

/* Whether a new filter may be written to `path`: not over a directory or device, nor (without --force) over an
 * existing file. */
static int check_target(const char *path, const options *o)
{
    struct stat sb;
    const char *kind = not_regular(path);
    if (kind) {
        fprintf(stderr, "nidus: %s: is %s, not a filter file (refusing to replace it)\n", path, kind);
        return EXIT_ERROR;
    }
    if (!o->force && stat(path, &sb) == 0) {
        fprintf(stderr, "nidus: %s: already exists (--force replaces it)\n", path);
        return EXIT_ERROR;
    }
    return 0;
}

static int create_file(const char *cmd, const char *path, const options *o, nidus_filter **f)
{
    int rc = check_target(path, o);
    if (rc)
        return rc;
    nidus_status st = cli_filter_create(&o->create, f);
    if (st) {
        fprintf(stderr, "nidus %s: %s: cannot create the filter: %s\n", cmd, path,
                st == NIDUS_ERR_INVALID_ARGUMENT ? "parameters out of range (a semi-sorted filter needs "
                                                   "--bucket-size 4 and at least 5 fingerprint bits)"
                                                 : nidus_strerror(st));
        return EXIT_ERROR;
    }
    return 0;
}

/* Whether `path` holds a fuse filter, from its first bytes (nidus_codec_peek), so that a write is refused before
 * the file is opened for writing or loaded whole. False when it cannot be read: the open then says why. */
static bool is_fuse_file(const char *path)
{
    unsigned char head[16];
    FILE *in = fopen(path, "rb");
    if (!in)
        return false;
    size_t got = fread(head, 1, sizeof head, in);
    fclose(in);
    nidus_kind kind;
    return nidus_codec_peek(head, got, &kind) == NIDUS_OK && kind == NIDUS_KIND_FUSE;
}

/* A static filter's refusal of a write (add, del; or merge): one line, exit 2, the file not touched. */
static int static_error(const char *path, bool merging)
{
    fprintf(stderr, "nidus: %s: a fuse filter is static: %s with nidus build --type fuse\n", path,
            merging ? "it cannot be merged: build one from all the keys" : "rebuild it");
    return EXIT_ERROR;
}

/* The start every command on an existing file shares: its options, its positional arguments (FILE first,
 * between min and max of them; max < 0: no limit), and the filter opened (read-only: mapped in place). */
static int open_command(const char *cmd, int *argc, char **argv, int min, int max, cli_open_mode mode,
                        options *o, nidus_filter **f, const char *expected)
{
    int rc = parse_options(cmd, argc, argv, o, false);
    if (rc)
        return rc;
    if (*argc < min || (max >= 0 && *argc > max))
        return usage_error(cmd, expected, NULL);
    if (not_regular(argv[0]))
        return file_error(argv[0], NIDUS_ERR_IO);
    if (mode == CLI_OPEN_IN_PLACE && is_fuse_file(argv[0]))
        return static_error(argv[0], false);
    nidus_status st = cli_filter_open(argv[0], mode, f);
    return st ? open_error(argv[0], st) : 0;
}

/* The keys a command could not apply: how many, and the first of them (its position and a printable copy). */
typedef struct key_failures {
    unsigned long long keys; /* keys read in all */
    long long count;
    unsigned long long first;
    nidus_status why;
    char shown[4 * 60 + 4];
} key_failures;

/* Notes a failed key; the first is kept for the summary: up to 60 bytes of it, other than printable ASCII as
 * \xNN, "..." when longer. */
static void note_failure(key_failures *kf, unsigned long long position, const char *key, size_t len,
                         nidus_status why)
{
    if (kf->count++)
        return;
    kf->first = position;
    kf->why = why;
    char *out = kf->shown;
    for (size_t i = 0; i < len && i < 60; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            *out++ = (char)c;
        else
            out += sprintf(out, "\\x%02x", c);
    }
    strcpy(out, len > 60 ? "..." : "");
}

/* What a writing command does: the words of its summary. */
typedef struct write_command {
    const char *failed_one, *failed_many; /* what a failed key could not be */
    const char *done;                     /* "added": what became of the others (--keep-going) */
    const char *instead;                  /* what --keep-going would have done */
    bool creates;                         /* build: FILE is written anew, not changed */
} write_command;

static const write_command ADDING = {"could not be added", "could not be added", "added", "adds the keys that fit",
                                     false};
static const write_command BUILDING = {"could not be added", "could not be added", "added",
                                       "writes the keys that fit", true};
static const write_command REMOVING = {"was not in the filter", "were not in the filter", "removed",
                                       "removes the keys that are there", false};

static const char *add_failure(nidus_status st)
{
    switch (st) {
    case NIDUS_ERR_FULL: return "the filter is full and does not grow (expansion 0)";
    case NIDUS_ERR_LIMIT_TABLES: return "the filter reached its maximum number of sub-filters";
    default: return nidus_strerror(st);
    }
}

/* Two lines, whatever the number of keys: how many failed and the first, then what became of FILE. */
static void report_failures(const char *path, const write_command *w, const key_failures *kf, bool kept)
{
    fprintf(stderr, "nidus: %s: %lld of %llu %s %s; the first, key %llu (%s)", path, kf->count, kf->keys,
            kf->keys == 1 ? "key" : "keys", kf->count == 1 ? w->failed_one : w->failed_many, kf->first, kf->shown);
    if (kf->why != NIDUS_ERR_NOT_FOUND)
        fprintf(stderr, ": %s", add_failure(kf->why));
    unsigned long long others = kf->keys - (unsigned long long)kf->count;
    if (kept && others == 0)
        fprintf(stderr, "\nnidus: %s: no key was %s\n", path, w->done);
    else if (kept && others == 1)
        fprintf(stderr, "\nnidus: %s: the other key was %s\n", path, w->done);
    else if (kept)
        fprintf(stderr, "\nnidus: %s: the other %llu keys were %s\n", path, others, w->done);
    else
        fprintf(stderr, "\nnidus: %s: %s (--keep-going %s)\n", path, w->creates ? "not written" : "left unchanged",
                w->instead);
}

/* The end every writing command shares: save, close, and the exit code. Nothing is saved when reading the keys
 * failed (exit 2) or when a key failed without --keep-going (exit 1); a key that failed with it saves the rest
 * and exits 1. */
static int finish_write(const char *path, const char *source, nidus_filter *f, bool read_error,
                        const write_command *w, const key_failures *kf, bool keep_going)
{
    int saved = errno;
    bool save = !read_error && (!kf->count || keep_going);
    nidus_status st = save ? nidus_filter_save_file(f, path) : NIDUS_OK;
    nidus_filter_free(f);
    if (read_error) {
        fprintf(stderr, "nidus: %s: reading keys: %s (%s %s)\n", source, strerror(saved), path,
                w->creates ? "not written" : "left unchanged");
        return EXIT_ERROR;
    }
    if (st)
        return file_error(path, st);
    if (kf->count) {
        report_failures(path, w, kf, keep_going);
        return EXIT_KEYS;
    }
    return 0;
}

static int cmd_create(int argc, char **argv)
{
    options o;
    int rc = parse_options("create", &argc, argv, &o, true);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("create", "expected exactly one FILE", NULL);
    nidus_filter *f;
    if ((rc = create_file("create", argv[0], &o, &f)))
        return rc;
    nidus_status st = nidus_filter_save_file(f, argv[0]);
    nidus_filter_free(f);
    return st ? file_error(argv[0], st) : 0;
}

static void keys_from(key_source *ks, char **args, int n)
{
    if (n)
        key_source_args(ks, args, n);
    else
        key_source_stream(ks, stdin);
}

/* Adds every key of ks, noting those that fail (a failed add changes nothing). False on a read error. */
static bool add_keys(nidus_filter *f, key_source *ks, progress *p, FILE *counted, key_failures *kf)
{
    const char *key;
    size_t len;
    bool error;
    *kf = (key_failures){0};
    while (key_next(ks, &key, &len, &error)) {
        nidus_status st = nidus_filter_add(f, key, len);
        if (st)
            note_failure(kf, ks->read, key, len, st);
        if (p && (ks->read & 4095) == 0)
            progress_update(p, counted ? (uint64_t)ftello(counted) : 0, ks->read);
    }
    kf->keys = ks->read;
    return !error;
}

static int cmd_add(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("add", &argc, argv, 1, -1, CLI_OPEN_IN_PLACE, &o, &f, "expected FILE");
    if (rc)
        return rc;
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    key_failures kf;
    bool read_ok = add_keys(f, &ks, NULL, NULL, &kf);
    key_source_close(&ks);
    return finish_write(argv[0], argc > 1 ? "arguments" : "stdin", f, !read_ok, &ADDING, &kf, o.keep_going);
}

static int cmd_check(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("check", &argc, argv, 1, -1, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected FILE");
    if (rc)
        return rc;
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    static uint64_t hashes[BATCH];
    static bool found[BATCH];
    const char *key;
    size_t len, n = 0;
    bool error = false, more = true;
    while (more) {
        more = key_next(&ks, &key, &len, &error);
        if (more)
            hashes[n++] = nidus_filter_hash(f, key, len);
        if (n == BATCH || (!more && n)) {
            nidus_filter_contains_many_hash(f, hashes, n, found);
            for (size_t k = 0; k < n; k++)
                fputs(found[k] ? "1\n" : "0\n", stdout);
            n = 0;
        }
    }
    key_source_close(&ks);
    nidus_filter_free(f);
    int saved = errno;
    if (error) {
        fprintf(stderr, "nidus: stdin: reading keys: %s\n", strerror(saved));
        return EXIT_ERROR;
    }
    return finish_output();
}

static int cmd_del(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("del", &argc, argv, 1, -1, CLI_OPEN_IN_PLACE, &o, &f, "expected FILE");
    if (rc)
        return rc;
    if (nidus_filter_kind(f) == NIDUS_KIND_BLOOM) {
        nidus_filter_free(f);
        fprintf(stderr, "nidus: %s: a bloom filter cannot delete (use a cuckoo or counting-bloom filter)\n", argv[0]);
        return EXIT_ERROR;
    }
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    const char *key;
    size_t len;
    bool error;
    key_failures kf = {0};
    while (key_next(&ks, &key, &len, &error)) {
        nidus_status st = nidus_filter_remove(f, key, len);
        if (st)
            note_failure(&kf, ks.read, key, len, st);
    }
    kf.keys = ks.read;
    key_source_close(&ks);
    return finish_write(argv[0], argc > 1 ? "arguments" : "stdin", f, error, &REMOVING, &kf, o.keep_going);
}

static int cmd_count(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("count", &argc, argv, 2, 2, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected FILE KEY");
    if (rc)
        return rc;
    printf("%llu\n", (unsigned long long)nidus_filter_count(f, argv[1], strlen(argv[1])));
    nidus_filter_free(f);
    return finish_output();
}

static int cmd_info(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("info", &argc, argv, 1, 1, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected exactly one FILE");
    if (rc)
        return rc;
    cli_filter_info(f, argv[0], o.json, stdout);
    nidus_filter_free(f);
    return finish_output();
}

/* Lines in `in` (a last line without LF counts too); rewinds it. -1 on a read error. */
static long long count_lines(FILE *in)
{
    static char buf[1 << 16];
    long long lines = 0;
    size_t n;
    char last = '\n';
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        for (char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
            lines++;
        last = buf[n - 1];
    }
    if (ferror(in) || fseeko(in, 0, SEEK_SET) != 0)
        return -1;
    return lines + (last != '\n');
}

/* build --type fuse: the keys hashed as they are read (8 bytes a key held, never their text), the filter built
 * from the hashes and written atomically. Nothing is written when reading or building fails (exit 2). */
static int build_fuse(const char *path, const char *source, FILE *in, const options *o)
{
    int rc = check_target(path, o);
    if (rc)
        return rc;
    nidus_fuse_params params = {.fingerprint_bits = o->create.fingerprint_bits, .error_rate = o->create.error};
    struct stat sb;
    uint64_t total = in != stdin && fstat(fileno(in), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    progress p;
    progress_begin(&p, "reading keys", total);
    key_source ks;
    key_source_stream(&ks, in);
    cli_hashes h;
    cli_hashes_status hs = cli_hashes_read(&h, &ks, &params, &p, in != stdin ? in : NULL);
    progress_end(&p, ks.read);
    key_source_close(&ks);
    int saved = errno;
    if (hs != CLI_HASHES_OK) {
        if (hs == CLI_HASHES_READ_ERROR)
            fprintf(stderr, "nidus: %s: reading keys: %s (%s not written)\n", source, strerror(saved), path);
        else if (hs == CLI_HASHES_TOO_MANY)
            fprintf(stderr, "nidus: %s: more than %llu keys, the most a fuse filter takes (%s not written)\n",
                    source, (unsigned long long)NIDUS_FUSE_MAX_KEYS, path);
        else
            fprintf(stderr, "nidus: %s: holding the keys' hashes: out of memory (%s not written)\n", source, path);
        cli_hashes_free(&h);
        return EXIT_ERROR;
    }
    nidus_fuse *f = NULL;
    progress_begin(&p, "building", 0);
    nidus_status st = nidus_fuse_build_hash(&params, h.hashes, h.n, &f);
    progress_end(&p, h.n);
    cli_hashes_free(&h);
    if (st) {
        fprintf(stderr, "nidus: %s: cannot build the filter: %s (not written)\n", path,
                st == NIDUS_ERR_FULL ? "no construction seed worked" : nidus_strerror(st));
        return EXIT_ERROR;
    }
    st = nidus_fuse_save_file(f, path);
    nidus_fuse_free(f);
    return st ? file_error(path, st) : 0;
}

static int cmd_build(int argc, char **argv)
{
    options o;
    int rc = parse_options("build", &argc, argv, &o, true);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("build", "expected exactly one FILE", NULL);
    if (!o.from)
        return usage_error("build", "--from KEYS is required", NULL);
    bool from_stdin = !strcmp(o.from, "-");
    const char *kind = from_stdin ? NULL : not_regular(o.from);
    bool streamed = o.has_capacity || o.create.kind == NIDUS_KIND_FUSE; /* the keys are read once */
    if (kind && !(streamed && strcmp(kind, "a directory"))) {
        fprintf(stderr, "nidus: %s: the input (--from) is %s%s\n", o.from, kind,
                strcmp(kind, "a directory") ? ": give --capacity, it cannot be counted first" : ", not a file of keys");
        return EXIT_ERROR;
    }
    FILE *in = from_stdin ? stdin : fopen(o.from, "rb");
    if (!in) {
        fprintf(stderr, "nidus: %s: the input (--from): %s\n", o.from, strerror(errno));
        return EXIT_ERROR;
    }
    if (o.create.kind == NIDUS_KIND_FUSE) {
        rc = build_fuse(argv[0], from_stdin ? "stdin" : o.from, in, &o);
        if (in != stdin)
            fclose(in);
        return rc;
    }
    if (!o.has_capacity) {
        long long lines = count_lines(in);
        if (lines < 0) {
            fprintf(stderr, "nidus: %s: counting the keys: %s\n", o.from, strerror(errno));
            fclose(in);
            return EXIT_ERROR;
        }
        o.create.capacity = lines ? (unsigned long long)lines : 1;
    }
    nidus_filter *f;
    if ((rc = create_file("build", argv[0], &o, &f))) {
        if (in != stdin)
            fclose(in);
        return rc;
    }
    struct stat sb;
    uint64_t total = in != stdin && fstat(fileno(in), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    progress p;
    progress_begin(&p, "building", total);
    key_source ks;
    key_source_stream(&ks, in);
    key_failures kf;
    bool read_ok = add_keys(f, &ks, &p, in != stdin ? in : NULL, &kf);
    progress_end(&p, ks.read);
    key_source_close(&ks);
    if (in != stdin)
        fclose(in);
    return finish_write(argv[0], from_stdin ? "stdin" : o.from, f, !read_ok, &BUILDING, &kf, o.keep_going);
}

/* Loads a filter file whole (every block checked): merge holds several files at once, and the lazy verification
 * maps one at a time. */
static int load_whole(const char *path, nidus_filter **f)
{
    if (not_regular(path))
        return file_error(path, NIDUS_ERR_IO);
    if (is_fuse_file(path))
        return static_error(path, true);
    nidus_status st = nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, f);
    return st ? open_error(path, st) : 0;
}

/* DEST gets every SRC's items in memory; written (atomically) only when every merge succeeded. */
static int cmd_merge(int argc, char **argv)
{
    options o;
    int rc = parse_options("merge", &argc, argv, &o, false);
    if (rc)
        return rc;
    if (argc < 2)
        return usage_error("merge", "expected DEST and at least one SRC", NULL);
    const char *dest_path = argv[0];
    struct stat sb;
    bool exists = stat(dest_path, &sb) == 0 || not_regular(dest_path);
    nidus_filter *dest = NULL;
    int first = 1;
    if ((rc = load_whole(exists ? dest_path : argv[1], &dest)))
        return rc;
    if (!exists)
        first = 2; /* DEST starts as a copy of the first SRC */
    for (int i = first; i < argc && !rc; i++) {
        /* DEST is a source already: listed among the SRCs too it counts once (as in CF.MERGE and PFMERGE),
         * where merging it into itself would double every cuckoo count. */
        struct stat ss;
        if (exists && stat(argv[i], &ss) == 0 && ss.st_dev == sb.st_dev && ss.st_ino == sb.st_ino)
            continue;
        nidus_filter *src = NULL;
        if ((rc = load_whole(argv[i], &src)))
            break;
        nidus_status st = nidus_filter_merge(dest, src);
        if (st == NIDUS_ERR_INCOMPATIBLE) {
            char why[160];
            if (!nidus_filter_merge_difference(dest, src, why, sizeof why)) /* a level grown after a compaction */
                snprintf(why, sizeof why, "sub-filters of other shapes");
            fprintf(stderr, "nidus: %s: incompatible with %s: %s (%s left unchanged)\n", argv[i], dest_path, why,
                    dest_path);
            rc = EXIT_ERROR;
        } else if (st) {
            fprintf(stderr, "nidus: %s: cannot merge into %s: %s (%s left unchanged)\n", argv[i], dest_path,
                    st == NIDUS_ERR_FULL ? "it does not grow (expansion 0) and has no room for the items of SRC"
                                         : add_failure(st),
                    dest_path);
            rc = EXIT_ERROR;
        }
        nidus_filter_free(src);
    }
    nidus_status st = rc ? NIDUS_OK : nidus_filter_save_file(dest, dest_path);
    nidus_filter_free(dest);
    return rc ? rc : st ? file_error(dest_path, st) : 0;
}

static int cmd_verify(int argc, char **argv)
{
    options o;
    int rc = parse_options("verify", &argc, argv, &o, false);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("verify", "expected exactly one FILE", NULL);
    if (not_regular(argv[0]))
        return file_error(argv[0], NIDUS_ERR_IO);
    /* Every block and every field (the tables scanned), as a mapped open checks them, naming what failed. */
    nidus_file_report r;
    nidus_status st = nidus_file_verify(argv[0], NULL, &r);
    if (st)
        return damage_error(argv[0], st, &r);
    printf("%s: ok\n", argv[0]);
    return finish_output();
}

static int cmd_help(int argc, char **argv)
{
    if (argc == 0) {
        help_usage(stdout);
        return finish_output();
    }
    const help_entry *e = help_find(argv[0]);
    if (!e || argc > 1) {
        fprintf(stderr, "nidus help: unknown command '%s' (see 'nidus help')\n", argv[0]);
        return EXIT_ERROR;
    }
    help_command(e, stdout);
    return finish_output();
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"create", cmd_create}, {"add", cmd_add},   {"check", cmd_check},   {"del", cmd_del},
                    {"count", cmd_count},   {"info", cmd_info}, {"verify", cmd_verify}, {"build", cmd_build},
                    {"merge", cmd_merge},   {"help", cmd_help},
                    {"push", cmd_push},     {"pull", cmd_pull}};
    if (argc < 2) {
        help_usage(stderr);
        return EXIT_ERROR;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return cmd_help(0, NULL);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("nidus %s\n", nidus_version());
        return finish_output();
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name))
            continue;
        for (int a = 2; a < argc && strcmp(argv[a], "--"); a++)
            if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
                help_command(help_find(argv[1]), stdout);
                return finish_output();
            }
        return commands[i].run(argc - 2, argv + 2);
    }
    fprintf(stderr, "nidus: unknown command '%s' (see 'nidus help')\n", argv[1]);
    return EXIT_ERROR;
}
