/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's side of a filter file: the parameters `create` and `build` take, how each command opens FILE, and
 * the `info` summary. The filter itself is a nidus_filter (nidus/filter.h): any kind, one call per operation. */
#ifndef NIDUS_CLI_FILTER_H
#define NIDUS_CLI_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <nidus/nidus.h>

/* Growth by default, as the Redis module's CF.RESERVE and BF.RESERVE without EXPANSION (its cf-expansion-factor
 * and bf-expansion-factor defaults, RedisBloom's): a full cuckoo filter adds a sub-filter as large as its newest,
 * a full Bloom filter one twice as large, up to the library's default 32 sub-filters. No memory limit: a file
 * holds what it grows to. A counting Bloom filter has one table and never grows. */
#define CLI_CUCKOO_EXPANSION 1u
#define CLI_BLOOM_EXPANSION 2u

/* What `create` and `build` ask for. */
typedef struct cli_create_options {
    nidus_kind kind;
    unsigned long long capacity;
    double error;                 /* 0: not given */
    unsigned fingerprint_bits;    /* 0: not given */
    unsigned bucket_size;         /* 0: not given */
    bool semi_sort;
    long long expansion;          /* -1: not given (CLI_CUCKOO_EXPANSION, CLI_BLOOM_EXPANSION) */
    unsigned max_kicks;           /* 0: not given */
    uint64_t window;              /* --window in milliseconds (a windowed cuckoo filter); 0: not given */
    uint64_t max_memory;          /* --max-memory in bytes (a windowed filter's bound on growth); 0: none */
} cli_create_options;

/* Creates an empty filter (`*out`); on failure returns the status. */
nidus_status cli_filter_create(const cli_create_options *o, nidus_filter **out);

typedef enum cli_open_mode {
    CLI_OPEN_MAPPED_LAZY, /* read-only, mapped in place: each block checked when first read (lazy_verify.h) */
    CLI_OPEN_IN_PLACE     /* writable, its tables in a private mapping: saving patches only the blocks written
                           * (a framed file: even format version; else loaded whole and written whole) */
} cli_open_mode;

/* Opens FILE in one of the modes above, its blocks checked by the lazy verification's guard. */
nidus_status cli_filter_open(const char *path, cli_open_mode mode, nidus_filter **out);

/* Milliseconds since the epoch (CLOCK_REALTIME): the time windowed filters are read and written at without
 * --now. */
uint64_t cli_now_ms(void);

/* Writes the summary: readable, or one JSON object. */
void cli_filter_info(nidus_filter *f, const char *path, bool json, FILE *out);

#endif
