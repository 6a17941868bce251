/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus: filters in files, no server. See help.c, docs/nidus.1 and docs/ARCHITECTURE.md.
 * Exit codes: 0 success; 1 a key could not be added, or (del) was not there: then the file is left as it was,
 * unless --keep-going; 2 usage, I/O or format error, with one line on stderr naming the file and the problem.
 * This file only dispatches: each command lives in a file of its name (commands.h), their options in options.c. */
#include <stdio.h>
#include <string.h>

#include <nidus/nidus.h>

#include "commands.h"
#include "common.h"
#include "help.h"

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"create", cmd_create}, {"add", cmd_add},   {"check", cmd_check},   {"del", cmd_del},
                    {"count", cmd_count},   {"info", cmd_info}, {"verify", cmd_verify}, {"build", cmd_build},
                    {"merge", cmd_merge},   {"help", cmd_help},
                    {"push", cmd_push},     {"pull", cmd_pull},   {"copy", cmd_copy}};
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
