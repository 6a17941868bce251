/* SPDX-License-Identifier: BSD-3-Clause */
/* The masters of a server: one connection to a standalone server, or one to each master of a Redis Cluster with
 * the map of which serves each slot (CLUSTER SLOTS), all with the URL's credentials and database. */
#ifndef NIDUS_CLI_NODES_H
#define NIDUS_CLI_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "remote.h"

typedef struct nodes {
    remote **r;     /* the connections, one per master */
    size_t n, cap;
    uint16_t *slot; /* NULL: one server; else index + 1 into r of each slot's master (0: not served) */
} nodes;

/* Connects to url for command cmd (reader: a server to read filters from, remote_open_reader), then, if it is a
 * cluster node, to every master. 0, or 2 after a line. */
int nodes_open(nodes *s, const char *cmd, const char *url, bool reader);

/* The index in s->r of the master serving key (the first one when none is known: a redirect will tell). */
size_t nodes_for_key(const nodes *s, const char *key, size_t len);

void nodes_close(nodes *s);

#endif
