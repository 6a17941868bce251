/* SPDX-License-Identifier: BSD-3-Clause */
/* The help texts of the nidus command-line tool. */
#ifndef NIDUS_CLI_HELP_H
#define NIDUS_CLI_HELP_H

#include <stdio.h>

typedef struct help_entry {
    const char *name;
    const char *synopsis; /* the usage line(s) */
    const char *text;     /* what it does, every option, how keys are read */
} help_entry;

/* The entry of command `cmd`, or NULL. */
const help_entry *help_find(const char *cmd);

/* The usage of every command. */
void help_usage(FILE *out);

/* One command's full help. */
void help_command(const help_entry *e, FILE *out);

#endif
