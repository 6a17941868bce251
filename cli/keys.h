/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the keys of a command come from: its arguments, or stdin one per line. */
#ifndef NIDUS_CLI_KEYS_H
#define NIDUS_CLI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct key_source {
    char **args; /* keys given as arguments, or NULL: read `in` */
    int nargs, next;
    FILE *in;
    char *line;
    size_t cap;
    unsigned long long read; /* keys handed out so far */
} key_source;

void key_source_args(key_source *ks, char **args, int n);
void key_source_stream(key_source *ks, FILE *in);

/* The next key: binary-safe but for the newline, which ends it (a CR before it is dropped too). False at the
 * end; `*error` is set when the stream failed rather than ended. */
bool key_next(key_source *ks, const char **key, size_t *len, bool *error);

void key_source_close(key_source *ks);

#endif
