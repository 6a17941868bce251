/* SPDX-License-Identifier: BSD-3-Clause */
/* What the commands on filter files share: exit codes, the one-line errors, opening and creating FILE, reading
 * keys, and the end of a writing command (save, the summary of failed keys, the exit code). */
#ifndef NIDUS_CLI_COMMON_H
#define NIDUS_CLI_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include <nidus/nidus.h>
#include <nidus/verify.h>

#include "filter.h"
#include "keys.h"
#include "options.h"
#include "progress.h"

/* Exit codes: 0 success; 1 a key could not be added, or (del) was not there: then the file is left as it was,
 * unless --keep-going; 2 usage, I/O or format error, with one line on stderr naming the file and the problem. */
#define EXIT_KEYS 1
#define EXIT_ERROR 2

/* "nidus CMD: WHAT: ARG (see 'nidus help CMD')" on stderr (ARG may be NULL); EXIT_ERROR. */
int usage_error(const char *cmd, const char *what, const char *arg);

/* What a path is when it is not a regular file ("a directory", ...), or NULL. */
const char *not_regular(const char *path);

/* One line on stderr: the file, then what went wrong; EXIT_ERROR. */
int file_error(const char *path, nidus_status st);

/* One line on stderr for a file that failed its checks: which check, and where (nidus_file_verify's report).
 * Without a report (the file changed since, or read wrong), file_error's line. EXIT_ERROR. */
int damage_error(const char *path, nidus_status st, const nidus_file_report *r);

/* file_error, or for a file that is damaged, damage_error: the check that failed, found by checking it again. */
int open_error(const char *path, nidus_status st);

/* Flushes stdout: a full disk or closed pipe is an error (exit 2), not a silent success. */
int finish_output(void);

/* A static filter's refusal of a write (add, del; or merge): one line, exit 2, the file not touched. */
int static_error(const char *path, bool merging);

/* Why an add (or a merge) failed, in the words of the summary. */
const char *add_failure(nidus_status st);

/* Whether a new filter may be written to `path`: not over a directory or device, nor (without --force) over an
 * existing file. 0, or EXIT_ERROR after a line. */
int check_target(const char *path, const options *o);

/* check_target, then an empty filter of the options into `*f`; 0, or EXIT_ERROR after a line. */
int create_file(const char *cmd, const char *path, const options *o, nidus_filter **f);

/* Whether `path` holds a fuse filter, from its first bytes (nidus_codec_peek), so that a write is refused before
 * the file is opened for writing or loaded whole. False when it cannot be read: the open then says why. */
bool is_fuse_file(const char *path);

/* The start every command on an existing file shares: its options, its positional arguments (FILE first,
 * between min and max of them; max < 0: no limit), and the filter opened (read-only: mapped in place). */
int open_command(const char *cmd, int *argc, char **argv, int min, int max, cli_open_mode mode, options *o,
                 nidus_filter **f, const char *expected);

/* Loads a filter file whole (every block checked): merge holds several files at once, and the lazy verification
 * maps one at a time. */
int load_whole(const char *path, nidus_filter **f);

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
void note_failure(key_failures *kf, unsigned long long position, const char *key, size_t len, nidus_status why);

/* What a writing command does: the words of its summary. */
typedef struct write_command {
    const char *failed_one, *failed_many; /* what a failed key could not be */
    const char *done;                     /* "added": what became of the others (--keep-going) */
    const char *instead;                  /* what --keep-going would have done */
    bool creates;                         /* build: FILE is written anew, not changed */
} write_command;

extern const write_command ADDING, BUILDING, REMOVING;

/* The end every writing command shares: save, close, and the exit code. Nothing is saved when reading the keys
 * failed (exit 2) or when a key failed without --keep-going (exit 1); a key that failed with it saves the rest
 * and exits 1. */
int finish_write(const char *path, const char *source, nidus_filter *f, bool read_error, const write_command *w,
                 const key_failures *kf, bool keep_going);

/* The keys of a command: its arguments after FILE, or with none, stdin. */
void keys_from(key_source *ks, char **args, int n);

/* Adds every key of ks, noting those that fail (a failed add changes nothing); `p` (may be NULL) shows the
 * bytes read of `counted`. False on a read error. */
bool add_keys(nidus_filter *f, key_source *ks, progress *p, FILE *counted, key_failures *kf);

#endif
