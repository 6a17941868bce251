/* SPDX-License-Identifier: BSD-3-Clause */
/* What the commands on filter files share (common.h). */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int usage_error(const char *cmd, const char *what, const char *arg)
{
    fprintf(stderr, "nidus %s: %s%s%s (see 'nidus help %s')\n", cmd, what, arg ? ": " : "", arg ? arg : "", cmd);
    return EXIT_ERROR;
}

const char *not_regular(const char *path)
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

int file_error(const char *path, nidus_status st)
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

int damage_error(const char *path, nidus_status st, const nidus_file_report *r)
{
    unsigned long long at = r->offset, end = r->offset + r->length - (r->length > 0);
    if (!r->part || (st != NIDUS_ERR_CORRUPT && st != NIDUS_ERR_VERSION))
        return file_error(path, st);
    if (st == NIDUS_ERR_VERSION)
        fprintf(stderr, "nidus: %s: written by another version of the format: the format version (byte 5) is %u, "
                        "this build reads 1 to %u\n", path, r->version, NIDUS_FILE_FORMAT_VERSION_WINDOW_GROWN);
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

int open_error(const char *path, nidus_status st)
{
    if (st != NIDUS_ERR_CORRUPT && st != NIDUS_ERR_VERSION)
        return file_error(path, st);
    nidus_file_report r;
    nidus_status again = nidus_file_verify(path, NULL, &r);
    return again == st ? damage_error(path, st, &r) : file_error(path, st);
}

int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nidus: writing to stdout: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return 0;
}

const char *add_failure(nidus_status st)
{
    switch (st) {
    case NIDUS_ERR_FULL: return "the filter is full and does not grow (expansion 0)";
    case NIDUS_ERR_LIMIT_TABLES: return "the filter reached its maximum number of sub-filters";
    case NIDUS_ERR_LIMIT_MEMORY: return "growing would pass the filter's memory bound (max memory, see nidus info)";
    default: return nidus_strerror(st);
    }
}

const write_command ADDING = {"could not be added", "could not be added", "added", "adds the keys that fit", false};
const write_command BUILDING = {"could not be added", "could not be added", "added", "writes the keys that fit",
                                true};
const write_command REMOVING = {"was not in the filter", "were not in the filter", "removed",
                                "removes the keys that are there", false};

int static_error(const char *path, bool merging)
{
    fprintf(stderr, "nidus: %s: a fuse filter is static: %s with nidus build --type fuse\n", path,
            merging ? "it cannot be merged: build one from all the keys" : "rebuild it");
    return EXIT_ERROR;
}

int check_target(const char *path, const options *o)
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

/* --max-memory below what the new filter takes: one line with that size (the filter made without the bound). */
static int below_first_table(const char *cmd, const char *path, const cli_create_options *c)
{
    cli_create_options unbounded = *c;
    unbounded.max_memory = 0;
    nidus_filter *f;
    nidus_filter_stats s;
    char takes[48] = "what";
    if (cli_filter_create(&unbounded, &f) == NIDUS_OK) {
        nidus_filter_get_stats(f, &s);
        nidus_filter_free(f);
        snprintf(takes, sizeof takes, "the %llu bytes", (unsigned long long)s.memory_bytes);
    }
    fprintf(stderr, "nidus %s: %s: cannot create the filter: --max-memory %llu is below %s it takes when created\n",
            cmd, path, (unsigned long long)c->max_memory, takes);
    return EXIT_ERROR;
}

int create_file(const char *cmd, const char *path, const options *o, nidus_filter **f)
{
    int rc = check_target(path, o);
    if (rc)
        return rc;
    nidus_status st = cli_filter_create(&o->create, f);
    if (!st)
        nidus_filter_set_time(*f, options_now(o)); /* build's adds to a windowed filter are made at it */
    if (st == NIDUS_ERR_LIMIT_MEMORY)
        return below_first_table(cmd, path, &o->create);
    if (st) {
        fprintf(stderr, "nidus %s: %s: cannot create the filter: %s\n", cmd, path,
                st == NIDUS_ERR_INVALID_ARGUMENT ? "parameters out of range (a semi-sorted filter needs "
                                                   "--bucket-size 4 and at least 5 fingerprint bits)"
                                                 : nidus_strerror(st));
        return EXIT_ERROR;
    }
    return 0;
}

bool is_fuse_file(const char *path)
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

int open_command(const char *cmd, int *argc, char **argv, int min, int max, cli_open_mode mode, options *o,
                 nidus_filter **f, const char *expected)
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
    if (st)
        return open_error(argv[0], st);
    nidus_filter_set_time(*f, options_now(o)); /* a windowed filter's calls are made at it */
    return 0;
}

int load_whole(const char *path, nidus_filter **f)
{
    if (not_regular(path))
        return file_error(path, NIDUS_ERR_IO);
    if (is_fuse_file(path))
        return static_error(path, true);
    nidus_status st = nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, f);
    return st ? open_error(path, st) : 0;
}

void note_failure(key_failures *kf, unsigned long long position, const char *key, size_t len, nidus_status why)
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

int finish_write(const char *path, const char *source, nidus_filter *f, bool read_error, const write_command *w,
                 const key_failures *kf, bool keep_going)
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

void keys_from(key_source *ks, char **args, int n)
{
    if (n)
        key_source_args(ks, args, n);
    else
        key_source_stream(ks, stdin);
}

bool add_keys(nidus_filter *f, key_source *ks, progress *p, FILE *counted, key_failures *kf)
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
