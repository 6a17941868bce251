/* SPDX-License-Identifier: BSD-3-Clause */
/* Option parsing for every command: each takes `--name value` or `--name=value`, and `--` ends the options. */
#include "options.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Matches `--name value` or `--name=value`; advances *i past what it used. */
static bool take_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return false;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return true;
    }
    if (argv[*i][n] || *i + 1 >= argc)
        return false;
    *value = argv[++*i];
    return true;
}

static bool parse_number(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* A window: a positive integer and a unit, ms, s, m, h or d ("500ms", "30s", "15m", "24h", "7d"), at most
 * NIDUS_WINDOW_MAX_TICKS milliseconds. */
static int parse_window(const char *cmd, const char *v, uint64_t *ms)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    const char *u = v;
    while (*u >= '0' && *u <= '9')
        u++;
    unsigned long long n;
    char digits[32];
    size_t len = (size_t)(u - v);
    if (*v == '-' || (len && !*u && strspn(v, "0") == len))
        return usage_error(cmd, "--window must be positive", v);
    if (!len || len >= sizeof digits)
        return usage_error(cmd, "--window must be a whole number and a unit: ms, s, m, h or d (500ms, 30s, 15m, "
                                "24h, 7d)", v);
    memcpy(digits, v, len);
    digits[len] = '\0';
    for (unsigned k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strcmp(u, units[k].unit))
            continue;
        if (!parse_number(digits, 0, UINT64_MAX, &n) || n > NIDUS_WINDOW_MAX_TICKS / units[k].ms) {
            fprintf(stderr, "nidus %s: --window %s is longer than the longest window, %llu ms (about 8,900 "
                            "years)\n", cmd, v, (unsigned long long)NIDUS_WINDOW_MAX_TICKS);
            return EXIT_ERROR;
        }
        if (!n)
            return usage_error(cmd, "--window must be positive", v);
        *ms = n * units[k].ms;
        return 0;
    }
    return usage_error(cmd, "--window must be a whole number and a unit: ms, s, m, h or d (500ms, 30s, 15m, 24h, 7d)",
                       v);
}

/* Whether `cmd` reads or writes keys of a file, so that a windowed filter's time (--now) applies. */
static bool takes_now(const char *cmd)
{
    static const char *const cmds[] = {"add", "del", "check", "count", "info", "build"};
    for (unsigned k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
        if (!strcmp(cmd, cmds[k]))
            return true;
    return false;
}

uint64_t options_now(const options *o) { return o->has_now ? o->now : cli_now_ms(); }

/* The options of a fuse filter (built once from its keys: nothing sizes it, grows it or shapes its buckets, no
 * key can fail to go in): --fingerprint-bits 8 or 16, --error down to 2^-16, both only when the width meets
 * the error. create is refused: there is no empty fuse filter to fill. */
static int check_fuse_options(const char *cmd, options *o)
{
    cli_create_options *c = &o->create;
    if (strcmp(cmd, "build")) {
        fprintf(stderr, "nidus %s: a fuse filter is static: it is built from its keys, not created empty "
                        "(nidus build FILE --from KEYS --type fuse)\n", cmd);
        return EXIT_ERROR;
    }
    const char *misfit = o->has_capacity     ? "--capacity"
                         : c->expansion >= 0 ? "--expansion"
                         : c->bucket_size    ? "--bucket-size"
                         : c->semi_sort      ? "--semi-sort"
                         : c->max_kicks      ? "--max-kicks"
                         : o->has_max_memory ? "--max-memory"
                         : o->keep_going     ? "--keep-going"
                                             : NULL;
    if (misfit) {
        fprintf(stderr, "nidus build: %s does not apply to a fuse filter: it is sized for the keys it is built "
                        "from, and every key goes in (see 'nidus help build')\n", misfit);
        return EXIT_ERROR;
    }
    unsigned long long n;
    if (o->fingerprint_bits) {
        if (!parse_number(o->fingerprint_bits, 8, 16, &n) || (n != 8 && n != 16))
            return usage_error(cmd, "--fingerprint-bits must be 8 or 16 for a fuse filter", o->fingerprint_bits);
        c->fingerprint_bits = (unsigned)n;
    }
    if (c->error && c->error < 1.0 / 65536.0)
        return usage_error(cmd, "--error must be at least 2^-16 (0.0000153) for a fuse filter: its fingerprints "
                                "are 8 or 16 bits", NULL);
    if (c->error && c->fingerprint_bits && c->error < 1.0 / (double)(1u << c->fingerprint_bits)) {
        fprintf(stderr, "nidus build: --fingerprint-bits %u gives a fuse filter an error of 2^-%u (%.3g), above "
                        "--error %g (see 'nidus help build')\n", c->fingerprint_bits, c->fingerprint_bits,
                1.0 / (double)(1u << c->fingerprint_bits), c->error);
        return EXIT_ERROR;
    }
    return 0;
}

int parse_options(const char *cmd, int *argc, char **argv, options *o, bool creating)
{
    *o = (options){.create = {.kind = NIDUS_KIND_CUCKOO, .expansion = -1}};
    int out = 0;
    unsigned long long n;
    for (int i = 0; i < *argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--")) {
            while (++i < *argc)
                argv[out++] = argv[i];
            break;
        }
        if (strncmp(argv[i], "--", 2)) {
            argv[out++] = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "--json") && !strcmp(cmd, "info")) {
            o->json = true;
        } else if (takes_now(cmd) && take_value(*argc, argv, &i, "--now", &v)) {
            if (!parse_number(v, 0, UINT64_MAX, &o->now))
                return usage_error(cmd, "--now must be milliseconds since the epoch (a whole number)", v);
            o->has_now = true;
        } else if (!strcmp(argv[i], "--keep-going") &&
                   (!strcmp(cmd, "add") || !strcmp(cmd, "del") || !strcmp(cmd, "build"))) {
            o->keep_going = true;
        } else if (!creating) {
            return usage_error(cmd, "unknown option", argv[i]);
        } else if (!strcmp(argv[i], "--force")) {
            o->force = true;
        } else if (!strcmp(argv[i], "--semi-sort")) {
            o->create.semi_sort = true;
        } else if (take_value(*argc, argv, &i, "--type", &v)) {
            o->has_type = true;
            if (!strcmp(v, "cuckoo"))
                o->create.kind = NIDUS_KIND_CUCKOO;
            else if (!strcmp(v, "bloom"))
                o->create.kind = NIDUS_KIND_BLOOM;
            else if (!strcmp(v, "counting-bloom"))
                o->create.kind = NIDUS_KIND_COUNTING_BLOOM;
            else if (!strcmp(v, "fuse"))
                o->create.kind = NIDUS_KIND_FUSE;
            else
                return usage_error(cmd, "--type must be cuckoo, bloom, counting-bloom or fuse", v);
        } else if (take_value(*argc, argv, &i, "--capacity", &v)) {
            if (!parse_number(v, 1, UINT64_MAX >> 2, &o->create.capacity))
                return usage_error(cmd, "--capacity must be a positive integer", v);
            o->has_capacity = true;
        } else if (take_value(*argc, argv, &i, "--error", &v)) {
            char *end;
            o->create.error = strtod(v, &end);
            if (*end || !(o->create.error > 0 && o->create.error < 1))
                return usage_error(cmd, "--error must be a number between 0 and 1", v);
        } else if (take_value(*argc, argv, &i, "--fingerprint-bits", &v)) {
            o->fingerprint_bits = v;
        } else if (take_value(*argc, argv, &i, "--bucket-size", &v)) {
            if (!parse_number(v, 1, 8, &n) || (n & (n - 1)))
                return usage_error(cmd, "--bucket-size must be 1, 2, 4 or 8", v);
            o->create.bucket_size = (unsigned)n;
        } else if (take_value(*argc, argv, &i, "--expansion", &v)) {
            if (!parse_number(v, 0, 32768, &n))
                return usage_error(cmd, "--expansion must be an integer from 0 to 32768", v);
            o->create.expansion = (long long)n;
        } else if (take_value(*argc, argv, &i, "--max-memory", &v)) {
            if (!parse_number(v, 0, UINT64_MAX, &n))
                return usage_error(cmd, "--max-memory must be a whole number of bytes (0: no bound)", v);
            o->create.max_memory = n;
            o->has_max_memory = true;
        } else if (take_value(*argc, argv, &i, "--max-kicks", &v)) {
            if (!parse_number(v, 1, 65535, &n))
                return usage_error(cmd, "--max-kicks must be an integer from 1 to 65535", v);
            o->create.max_kicks = (unsigned)n;
        } else if (take_value(*argc, argv, &i, "--window", &v)) {
            int rc = parse_window(cmd, v, &o->create.window);
            if (rc)
                return rc;
        } else if (take_value(*argc, argv, &i, "--from", &v) && !strcmp(cmd, "build")) {
            o->from = v;
        } else {
            return usage_error(cmd, "unknown option, or one missing its value", argv[i]);
        }
    }
    *argc = out;
    if (!creating)
        return 0;
    cli_create_options *c = &o->create;
    if (c->window) { /* a windowed cuckoo filter */
        if (c->kind != NIDUS_KIND_CUCKOO)
            return usage_error(cmd, "--window makes a windowed cuckoo filter: --type must be cuckoo or left out",
                               NULL);
        if (c->semi_sort)
            return usage_error(cmd, "a windowed filter's buckets are not semi-sorted: leave out --semi-sort", NULL);
        c->kind = NIDUS_KIND_WINDOW;
    }
    if (c->kind == NIDUS_KIND_FUSE)
        return check_fuse_options(cmd, o);
    if (o->fingerprint_bits) {
        if (c->kind == NIDUS_KIND_WINDOW && !parse_number(o->fingerprint_bits, 4, 29, &n))
            return usage_error(cmd, "--fingerprint-bits must be an integer from 4 to 29 for a windowed filter (3 "
                                    "more bits hold the age)", o->fingerprint_bits);
        if (!parse_number(o->fingerprint_bits, 4, 32, &n))
            return usage_error(cmd, "--fingerprint-bits must be an integer from 4 to 32", o->fingerprint_bits);
        c->fingerprint_bits = (unsigned)n;
    }
    if (!o->has_capacity && (strcmp(cmd, "build") || !o->from || !strcmp(o->from, "-")))
        return usage_error(cmd, strcmp(cmd, "build") ? "--capacity is required"
                                                     : "--capacity is required when the keys come from stdin",
                           NULL);
    if (c->error && c->fingerprint_bits)
        return usage_error(cmd, "--error and --fingerprint-bits exclude each other", NULL);
    if (c->kind != NIDUS_KIND_CUCKOO && c->kind != NIDUS_KIND_WINDOW &&
        (c->fingerprint_bits || c->bucket_size || c->semi_sort || c->max_kicks))
        return usage_error(cmd, "--fingerprint-bits, --bucket-size, --semi-sort and --max-kicks are for cuckoo filters",
                           NULL);
    if (o->has_max_memory && c->kind != NIDUS_KIND_WINDOW)
        return usage_error(cmd, "--max-memory bounds a windowed filter's growth: it goes with --window and --expansion",
                           NULL);
    if (c->max_memory && c->expansion <= 0)
        return usage_error(cmd, "--max-memory bounds growth: give --expansion E above 0 too (a windowed filter does "
                                "not grow by default)", NULL);
    if (c->kind == NIDUS_KIND_COUNTING_BLOOM && c->expansion > 0)
        return usage_error(cmd, "a counting-bloom filter does not grow: --expansion must be 0 or left out", NULL);
    if (c->semi_sort && c->bucket_size && c->bucket_size != 4)
        return usage_error(cmd, "--semi-sort needs --bucket-size 4", NULL);
    return 0;
}

int parse_remote_options(const char *cmd, int argc, char **argv, const char **url, bool *force, const char *pos[2])
{
    int n = 0;
    bool options = true;
    *url = NULL;
    *force = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (options && !strcmp(a, "--")) {
            options = false;
        } else if (options && !strcmp(a, "--force")) {
            *force = true;
        } else if (options && !strncmp(a, "--url=", 6)) {
            *url = a + 6;
        } else if (options && !strcmp(a, "--url")) {
            if (i + 1 >= argc)
                return usage_error(cmd, "--url needs a value", NULL);
            *url = argv[++i];
        } else if (options && !strncmp(a, "--", 2)) {
            return usage_error(cmd, "unknown option", a);
        } else {
            if (n == 2)
                return usage_error(cmd, "too many arguments", a);
            pos[n++] = a;
        }
    }
    if (n != 2)
        return usage_error(cmd, !strcmp(cmd, "push") ? "expected FILE and KEY" : "expected KEY and FILE", NULL);
    return 0;
}

int parse_copy_options(int argc, char **argv, copy_options *o)
{
    *o = (copy_options){.keys = argv};
    bool options = true;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (options && !strcmp(a, "--")) {
            options = false;
        } else if (options && !strcmp(a, "--replace")) {
            o->replace = true;
        } else if (options && (take_value(argc, argv, &i, "--from", &o->from) ||
                               take_value(argc, argv, &i, "--to", &o->to) ||
                               take_value(argc, argv, &i, "--match", &o->match))) {
            continue;
        } else if (options && (!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--match"))) {
            fprintf(stderr, "nidus copy: %s needs a value (see 'nidus help copy')\n", a);
            return EXIT_ERROR;
        } else if (options && !strncmp(a, "--", 2)) {
            return usage_error("copy", "unknown option", a);
        } else {
            argv[o->n_keys++] = argv[i];
        }
    }
    if (!o->from || !o->to)
        return usage_error("copy", !o->from ? "--from URL is required (the server to copy from)"
                                            : "--to URL is required (the server to copy to)", NULL);
    if (o->match && o->n_keys)
        return usage_error("copy", "--match and KEY arguments exclude each other", NULL);
    return 0;
}
