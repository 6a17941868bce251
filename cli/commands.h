/* SPDX-License-Identifier: BSD-3-Clause */
/* The commands of `nidus`, one file each; main.c dispatches on the first argument. Each takes argv past the
 * command name and returns the exit code (common.h: 0, EXIT_KEYS, EXIT_ERROR). */
#ifndef NIDUS_CLI_COMMANDS_H
#define NIDUS_CLI_COMMANDS_H

int cmd_create(int argc, char **argv); /* create.c */
int cmd_add(int argc, char **argv);    /* add.c */
int cmd_check(int argc, char **argv);  /* check.c */
int cmd_del(int argc, char **argv);    /* del.c */
int cmd_count(int argc, char **argv);  /* count.c */
int cmd_info(int argc, char **argv);   /* info.c */
int cmd_verify(int argc, char **argv); /* verify.c */
int cmd_build(int argc, char **argv);  /* build.c */
int cmd_merge(int argc, char **argv);  /* merge.c */
int cmd_help(int argc, char **argv);   /* help.c */
int cmd_push(int argc, char **argv);   /* move.c */
int cmd_pull(int argc, char **argv);   /* move.c */
int cmd_copy(int argc, char **argv);   /* copy.c: exit 1 when a filter key was not copied */

#endif
