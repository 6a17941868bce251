/* SPDX-License-Identifier: BSD-3-Clause */
/* The options of every command, parsed in one place: those of the commands on files (create and build take the
 * filter's parameters) and those of the commands that talk to a server (push, pull, copy). */
#ifndef NIDUS_CLI_OPTIONS_H
#define NIDUS_CLI_OPTIONS_H

#include <stdbool.h>

#include "filter.h"

typedef struct options {
    cli_create_options create;
    bool force, json, has_type, has_capacity, keep_going, has_now, has_max_memory;
    unsigned long long now; /* --now: milliseconds since the epoch, the time of a windowed filter's calls */
    const char *from;
    const char *fingerprint_bits; /* as given: its range depends on the kind, checked once all are read */
} options;

/* The time windowed filters are read and written at: --now, or the clock (cli_now_ms). */
uint64_t options_now(const options *o);

/* Parses the options of `cmd` out of argv (in place: what is left are the positional arguments); `creating`:
 * the command takes a new filter's parameters (create, build). 0, or EXIT_ERROR after a usage line. */
int parse_options(const char *cmd, int *argc, char **argv, options *o, bool creating);

/* push and pull: --url URL (or --url=URL) and --force; the two positional arguments into pos. 0, or EXIT_ERROR
 * after a usage line. */
int parse_remote_options(const char *cmd, int argc, char **argv, const char **url, bool *force, const char *pos[2]);

/* copy: --from URL, --to URL, --match PATTERN, --replace. */
typedef struct copy_options {
    const char *from, *to, *match;
    bool replace;
    char **keys; /* the KEY arguments: argv's own, moved to its front */
    int n_keys;
} copy_options;

/* copy's options out of argv, the KEYs left in its front; both URLs required, --match not with KEYs. 0, or
 * EXIT_ERROR after a usage line. */
int parse_copy_options(int argc, char **argv, copy_options *o);

#endif
