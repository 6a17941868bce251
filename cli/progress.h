/* SPDX-License-Identifier: BSD-3-Clause */
/* A progress line on stderr for long work: items/s, percent and ETA; silent unless stderr is a terminal. */
#ifndef NIDUS_CLI_PROGRESS_H
#define NIDUS_CLI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct progress {
    bool on;
    uint64_t total;      /* 0: unknown (no percent, no ETA) */
    double start, last;
    const char *what;
} progress;

/* `total` is in the same unit as `done` below (bytes of input, say). */
void progress_begin(progress *p, const char *what, uint64_t total);

/* Redraws at most ten times a second. */
void progress_update(progress *p, uint64_t done, uint64_t items);

void progress_end(progress *p, uint64_t items);

/* Erases the progress line, for a command that ends with a line of its own. */
void progress_clear(progress *p);

#endif
