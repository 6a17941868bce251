/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus push FILE KEY` and `nidus pull KEY FILE`: a filter file into a server running the nidus module, and
 * back, in the module's SCANDUMP / LOADCHUNK chunks. */
#ifndef NIDUS_CLI_MOVE_H
#define NIDUS_CLI_MOVE_H

#include <stddef.h>

/* The commands themselves, cmd_push and cmd_pull, are declared in commands.h. */

/* The name of a temporary key in `key`'s hash slot (Redis Cluster's rule), starting with `key` unless `key` has a
 * '{' without a tag, into out (cap bytes, at least twice the key's length + 96); `unique` tells concurrent
 * pushes apart. 0 if it does not fit, else 1. */
int move_temp_key(const char *key, size_t key_len, unsigned long long unique, char *out, size_t cap,
                  size_t *out_len);

#endif
