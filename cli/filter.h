/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's view of a filter file: any kind, opened writable (a copy) or read-only (mapped in place). */
#ifndef NIDUS_CLI_FILTER_H
#define NIDUS_CLI_FILTER_H

#include <stdbool.h>
#include <stdio.h>

#include <nidus/nidus.h>

#include "file_format.h"

typedef struct cli_filter {
    nidus_kind kind;
    union {
        nidus_cuckoo *cuckoo;
        nidus_bloom *bloom;
        nidus_counting_bloom *counting;
    } f;
    /* CLI_OPEN_IN_PLACE: the private mapping the filter's tables are borrowed from, its file and layout */
    void *map;
    size_t map_bytes;
    int fd;
    nidus_file_layout layout;
} cli_filter;

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
} cli_create_options;

/* Creates an empty filter. On failure, returns the status and `*why` (may be NULL) names the parameter. */
nidus_status cli_filter_create(cli_filter *cf, const cli_create_options *o);

typedef enum cli_open_mode {
    CLI_OPEN_COPY,        /* a writable copy: every block and field checked */
    CLI_OPEN_MAPPED,      /* read-only, mapped in place: every block and field checked (verify) */
    CLI_OPEN_MAPPED_LAZY, /* read-only, mapped in place: each block checked when first read (lazy_verify.h) */
    CLI_OPEN_IN_PLACE     /* writable, its tables in a private mapping: saving patches only the blocks written
                           * (a version 2 file of 3 blocks or more; else as CLI_OPEN_COPY) */
} cli_open_mode;

/* Opens FILE in one of the modes above. */
nidus_status cli_filter_open(cli_filter *cf, const char *path, cli_open_mode mode);

/* Writes it to FILE atomically: whole, or (opened in place, layout unchanged) the old file copied by reflink or
 * copy_file_range with the written blocks and new checksums put over it. */
nidus_status cli_filter_save(const cli_filter *cf, const char *path);

void cli_filter_close(cli_filter *cf);

uint64_t cli_filter_hash(const cli_filter *cf, const void *key, size_t len);

/* Adds one key. */
nidus_status cli_filter_add(cli_filter *cf, uint64_t hash);

/* Lookups of n hashed keys. */
void cli_filter_contains_many(const cli_filter *cf, const uint64_t *hashes, size_t n, bool *out);

/* Removes one key: NIDUS_ERR_UNSUPPORTED for a Bloom filter. */
nidus_status cli_filter_remove(cli_filter *cf, uint64_t hash);

/* Copies (cuckoo), a counter estimate (counting Bloom), or 1 / 0 (Bloom). */
uint64_t cli_filter_count(const cli_filter *cf, uint64_t hash);

/* Writes the summary: readable, or one JSON object. */
void cli_filter_info(const cli_filter *cf, const char *path, bool json, FILE *out);

const char *cli_kind_name(nidus_kind kind);

#endif
