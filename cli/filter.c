/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's view of a filter file: one switch per operation over the three kinds. */
#define _POSIX_C_SOURCE 200809L
#include "filter.h"

#include <math.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdint.h>

#include "bloom_filter.h"
#include "cuckoo_filter.h"
#include "lazy_verify.h"

const char *cli_kind_name(nidus_kind kind)
{
    switch (kind) {
    case NIDUS_KIND_CUCKOO: return "cuckoo";
    case NIDUS_KIND_BLOOM: return "bloom";
    case NIDUS_KIND_COUNTING_BLOOM: return "counting-bloom";
    }
    return "unknown";
}

nidus_status cli_filter_create(cli_filter *cf, const cli_create_options *o)
{
    cf->kind = o->kind;
    cf->map = NULL;
    double error = o->error ? o->error : 0.01;
    switch (o->kind) {
    case NIDUS_KIND_CUCKOO: {
        nidus_cuckoo_params p = {.capacity = o->capacity, .error_rate = o->error,
                                 .fingerprint_bits = o->fingerprint_bits, .bucket_size = o->bucket_size,
                                 .semi_sort = o->semi_sort, .max_kicks = o->max_kicks,
                                 .expansion = o->expansion < 0 ? CLI_CUCKOO_EXPANSION : (unsigned)o->expansion};
        return nidus_cuckoo_new(&p, &cf->f.cuckoo);
    }
    case NIDUS_KIND_BLOOM: {
        nidus_bloom_params p = {.capacity = o->capacity, .error_rate = error,
                                .expansion = o->expansion < 0 ? CLI_BLOOM_EXPANSION : (unsigned)o->expansion};
        return nidus_bloom_new(&p, &cf->f.bloom);
    }
    case NIDUS_KIND_COUNTING_BLOOM: {
        nidus_counting_bloom_params p = {.capacity = o->capacity, .error_rate = error};
        return nidus_counting_bloom_new(&p, &cf->f.counting);
    }
    }
    return NIDUS_ERR_INVALID_ARGUMENT;
}

/* A writable filter whose tables are borrowed from a private mapping of the file; NIDUS_ERR_UNSUPPORTED when
 * the file cannot be patched in place (version 1, too small to guard). */
static nidus_status open_in_place(cli_filter *cf, const char *path)
{
    nidus_status st = nidus_file_map_private(path, &cf->fd, &cf->map, &cf->map_bytes);
    if (st)
        return st;
    if (!(st = nidus_file_parse(cf->map, cf->map_bytes, &cf->layout)) && cf->layout.version != 2)
        st = NIDUS_ERR_UNSUPPORTED;
    if (!st)
        st = lazy_verify_prepare_writable(path, &cf->layout, cf->map, cf->map_bytes);
    const uint8_t *body = cf->layout.body;
    size_t n = cf->layout.body_bytes;
    nidus_decode_target to = NIDUS_DECODE_BORROW;
    nidus_decode_mode mode = NIDUS_DECODE_BODY_TRUSTED;
    if (!st) {
        switch (cf->kind) {
        case NIDUS_KIND_CUCKOO: st = nidus_cuckoo_decode_mode(body, n, NULL, to, mode, &cf->f.cuckoo); break;
        case NIDUS_KIND_BLOOM: st = nidus_bloom_decode_mode(body, n, NULL, to, mode, &cf->f.bloom); break;
        case NIDUS_KIND_COUNTING_BLOOM:
            st = nidus_counting_bloom_decode_mode(body, n, NULL, to, mode, &cf->f.counting);
            break;
        }
    }
    if (st) {
        lazy_verify_release();
        munmap(cf->map, cf->map_bytes);
        close(cf->fd);
        cf->map = NULL;
    }
    return st;
}

nidus_status cli_filter_open(cli_filter *cf, const char *path, cli_open_mode mode)
{
    cf->map = NULL;
    /* The kind is in the first bytes; read them, then open with the right decoder. */
    FILE *f = fopen(path, "rb");
    if (!f)
        return NIDUS_ERR_IO;
    unsigned char head[16];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    nidus_status st = nidus_codec_peek(head, n, &cf->kind);
    if (st)
        return st;
    if (cf->kind != NIDUS_KIND_CUCKOO && cf->kind != NIDUS_KIND_BLOOM && cf->kind != NIDUS_KIND_COUNTING_BLOOM)
        return NIDUS_ERR_CORRUPT; /* no decoder would take it (and open_in_place must not get it) */
    void *ctx = (void *)(uintptr_t)path;
    if (mode == CLI_OPEN_IN_PLACE) {
        if ((st = open_in_place(cf, path)) != NIDUS_ERR_UNSUPPORTED)
            return st;
        mode = CLI_OPEN_COPY;
    }
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO:
        return mode == CLI_OPEN_COPY     ? nidus_cuckoo_load_file(path, NULL, &cf->f.cuckoo)
               : mode == CLI_OPEN_MAPPED ? nidus_cuckoo_map_file(path, NULL, &cf->f.cuckoo)
                                         : nidus_cuckoo_map_file_lazy(path, NULL, lazy_verify_prepare, ctx, &cf->f.cuckoo);
    case NIDUS_KIND_BLOOM:
        return mode == CLI_OPEN_COPY     ? nidus_bloom_load_file(path, NULL, &cf->f.bloom)
               : mode == CLI_OPEN_MAPPED ? nidus_bloom_map_file(path, NULL, &cf->f.bloom)
                                         : nidus_bloom_map_file_lazy(path, NULL, lazy_verify_prepare, ctx, &cf->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM:
        return mode == CLI_OPEN_COPY     ? nidus_counting_bloom_load_file(path, NULL, &cf->f.counting)
               : mode == CLI_OPEN_MAPPED ? nidus_counting_bloom_map_file(path, NULL, &cf->f.counting)
                                         : nidus_counting_bloom_map_file_lazy(path, NULL, lazy_verify_prepare, ctx,
                                                                              &cf->f.counting);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

/* Opened in place: the prefix (and overflow entries) rewritten in the mapping, then only written blocks copied
 * out. NIDUS_ERR_UNSUPPORTED when the layout changed (growth, compaction): the caller writes the whole file. */
static nidus_status save_in_place(const cli_filter *cf, const char *path)
{
    uint8_t *body = cf->map;
    size_t n = cf->layout.body_bytes;
    nidus_status st = NIDUS_ERR_UNSUPPORTED;
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: st = nidus_cuckoo_rewrite_body(cf->f.cuckoo, body, n); break;
    case NIDUS_KIND_BLOOM: st = nidus_bloom_rewrite_body(cf->f.bloom, body, n); break;
    case NIDUS_KIND_COUNTING_BLOOM: st = nidus_counting_bloom_rewrite_body(cf->f.counting, body, n); break;
    }
    if (st)
        return st;
    nidus_file_mark_body(body, n);
    return nidus_file_patch(path, NULL, cf->fd, &cf->layout, body, lazy_verify_dirty());
}

nidus_status cli_filter_save(const cli_filter *cf, const char *path)
{
    if (cf->map) {
        nidus_status st = save_in_place(cf, path);
        if (st != NIDUS_ERR_UNSUPPORTED)
            return st;
    }
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_save_file(cf->f.cuckoo, path);
    case NIDUS_KIND_BLOOM: return nidus_bloom_save_file(cf->f.bloom, path);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_save_file(cf->f.counting, path);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

void cli_filter_close(cli_filter *cf)
{
    lazy_verify_release();
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: nidus_cuckoo_free(cf->f.cuckoo); break;
    case NIDUS_KIND_BLOOM: nidus_bloom_free(cf->f.bloom); break;
    case NIDUS_KIND_COUNTING_BLOOM: nidus_counting_bloom_free(cf->f.counting); break;
    }
    cf->f.cuckoo = NULL;
    if (cf->map) {
        munmap(cf->map, cf->map_bytes);
        close(cf->fd);
        cf->map = NULL;
    }
}

uint64_t cli_filter_hash(const cli_filter *cf, const void *key, size_t len)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_hash(cf->f.cuckoo, key, len);
    case NIDUS_KIND_BLOOM: return nidus_bloom_hash(cf->f.bloom, key, len);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_hash(cf->f.counting, key, len);
    }
    return 0;
}

nidus_status cli_filter_add(cli_filter *cf, uint64_t hash)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_add_hash(cf->f.cuckoo, hash);
    case NIDUS_KIND_BLOOM: return nidus_bloom_add_hash(cf->f.bloom, hash, NULL);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_add_hash(cf->f.counting, hash);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

void cli_filter_contains_many(const cli_filter *cf, const uint64_t *hashes, size_t n, bool *out)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: nidus_cuckoo_contains_many_hash(cf->f.cuckoo, hashes, n, out); return;
    case NIDUS_KIND_BLOOM: nidus_bloom_contains_many_hash(cf->f.bloom, hashes, n, out); return;
    case NIDUS_KIND_COUNTING_BLOOM: nidus_counting_bloom_contains_many_hash(cf->f.counting, hashes, n, out); return;
    }
}

nidus_status cli_filter_remove(cli_filter *cf, uint64_t hash)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_remove_hash(cf->f.cuckoo, hash);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_remove_hash(cf->f.counting, hash);
    case NIDUS_KIND_BLOOM: break;
    }
    return NIDUS_ERR_UNSUPPORTED;
}

uint64_t cli_filter_count(const cli_filter *cf, uint64_t hash)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_count_hash(cf->f.cuckoo, hash);
    case NIDUS_KIND_BLOOM: return nidus_bloom_contains_hash(cf->f.bloom, hash);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_count_hash(cf->f.counting, hash);
    }
    return 0;
}

/* A double for JSON: finite always (JSON has no inf/nan). */
static double finite(double d) { return isfinite(d) ? d : 0.0; }

/* One sub-filter, as every kind reports it. */
typedef struct sub_filter {
    uint64_t capacity, items, memory_bytes;
    double error_bound;
} sub_filter;

/* What every kind reports: the same fields, so `info --json` has one shape. */
typedef struct summary {
    uint64_t capacity, items, memory_bytes;
    double error_bound;
    unsigned subs;
} summary;

static void print_sub(FILE *out, bool json, unsigned k, const sub_filter *t, const char *extra)
{
    double load = t->capacity ? (double)t->items / (double)t->capacity : 0.0;
    if (json)
        fprintf(out, "%s{\"capacity\": %llu, \"items\": %llu, \"memory_bytes\": %llu, \"load\": %.6f, "
                     "\"error_bound\": %.6g}",
                k ? ", " : "", (unsigned long long)t->capacity, (unsigned long long)t->items,
                (unsigned long long)t->memory_bytes, finite(load), finite(t->error_bound));
    else
        fprintf(out, "  #%u: capacity %llu, %llu items, load %.4f, error bound %.3g, %llu bytes%s\n", k,
                (unsigned long long)t->capacity, (unsigned long long)t->items, load, t->error_bound,
                (unsigned long long)t->memory_bytes, extra);
}

static void print_summary(FILE *out, bool json, const summary *s, const char *load_note)
{
    double per_item = s->items ? (double)s->memory_bytes * 8.0 / (double)s->items : 0.0;
    double load = s->capacity ? (double)s->items / (double)s->capacity : 0.0;
    if (json)
        fprintf(out, "\"capacity\": %llu, \"items\": %llu, \"memory_bytes\": %llu, \"bits_per_item\": %.4f, "
                     "\"load\": %.6f, \"error_bound\": %.6g, ",
                (unsigned long long)s->capacity, (unsigned long long)s->items, (unsigned long long)s->memory_bytes,
                finite(per_item), finite(load), finite(s->error_bound));
    else
        fprintf(out,
                "capacity:       %llu\nitems:          %llu\nmemory:         %llu bytes, %.2f bits per item\n"
                "load:           %.4f%s\nerror bound:    %.6g\nsub-filters:    %u\n",
                (unsigned long long)s->capacity, (unsigned long long)s->items, (unsigned long long)s->memory_bytes,
                per_item, load, load_note, s->error_bound, s->subs);
}

static void info_cuckoo(const nidus_cuckoo *f, bool json, FILE *out)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    summary sum = {s.total_slots, s.items, s.memory_bytes, s.error_bound, s.tables};
    print_summary(out, json, &sum, " (items / slots)");
    if (json)
        fprintf(out,
                "\"parameters\": {\"bucket_size\": %u, \"fingerprint_bits\": %u, \"semi_sort\": %s, "
                "\"max_kicks\": %u, \"expansion\": %u, \"max_tables\": %u}, "
                "\"details\": {\"items_deleted\": %llu, \"overflow_items\": %llu}, \"sub_filters\": [",
                s.bucket_size, s.fingerprint_bits, s.semi_sort ? "true" : "false", s.max_kicks, s.expansion,
                s.max_tables, (unsigned long long)s.items_deleted, (unsigned long long)s.overflow_items);
    else
        fprintf(out, "parameters:     bucket size %u, %u-bit fingerprints%s, max kicks %u, expansion %u\n"
                     "deleted:        %llu since the last compaction\n",
                s.bucket_size, s.fingerprint_bits, s.semi_sort ? " (semi-sorted)" : "", s.max_kicks, s.expansion,
                (unsigned long long)s.items_deleted);
    for (unsigned k = 0; k < s.tables; k++) {
        nidus_cuckoo_table_stats t;
        nidus_cuckoo_get_table_stats(f, k, &t);
        sub_filter sf = {t.buckets * s.bucket_size, t.items, t.memory_bytes, t.error_bound};
        char extra[64];
        snprintf(extra, sizeof extra, ", %llu buckets, %u-bit fingerprints", (unsigned long long)t.buckets,
                 t.fingerprint_bits);
        print_sub(out, json, k, &sf, extra);
    }
    if (json)
        fprintf(out, "]");
}

static void info_bloom(const nidus_bloom *f, bool json, FILE *out)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    summary sum = {s.capacity, s.items, s.memory_bytes, s.error_bound, s.layers};
    print_summary(out, json, &sum, " (items / capacity)");
    if (json)
        fprintf(out,
                "\"parameters\": {\"error_rate\": %.6g, \"expansion\": %u, \"hashes\": %u}, \"details\": {}, "
                "\"sub_filters\": [",
                s.error_rate, s.expansion, s.hashes);
    else
        fprintf(out, "parameters:     error rate %g, expansion %u%s, %u hashes\n", s.error_rate, s.expansion,
                s.expansion ? "" : " (non-scaling)", s.hashes);
    for (unsigned k = 0; k < s.layers; k++) {
        nidus_bloom_layer_stats l;
        nidus_bloom_get_layer_stats(f, k, &l);
        sub_filter sf = {l.capacity, l.items, l.memory_bytes, l.error};
        char extra[32];
        snprintf(extra, sizeof extra, ", %u hashes", l.hashes);
        print_sub(out, json, k, &sf, extra);
    }
    if (json)
        fprintf(out, "]");
}

static void info_counting(const nidus_counting_bloom *f, bool json, FILE *out)
{
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(f, &s);
    summary sum = {s.capacity, s.items, s.memory_bytes, s.error_rate, 1};
    print_summary(out, json, &sum, " (items / capacity)");
    if (json)
        fprintf(out,
                "\"parameters\": {\"error_rate\": %.6g, \"hashes\": %u}, \"details\": {\"saturated_counters\": "
                "%llu}, \"sub_filters\": [",
                s.error_rate, s.hashes, (unsigned long long)s.saturated);
    else
        fprintf(out, "parameters:     error rate %g, %u hashes, 4-bit counters (%llu saturated)\n", s.error_rate,
                s.hashes, (unsigned long long)s.saturated);
    sub_filter sf = {s.capacity, s.items, s.memory_bytes, s.error_rate};
    print_sub(out, json, 0, &sf, "");
    if (json)
        fprintf(out, "]");
}

/* A JSON string of `s` (file names may hold anything). */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

void cli_filter_info(const cli_filter *cf, const char *path, bool json, FILE *out)
{
    if (json) {
        fprintf(out, "{\"file\": ");
        json_string(out, path);
        fprintf(out, ", \"kind\": \"%s\", ", cli_kind_name(cf->kind));
    } else {
        fprintf(out, "file:           %s\nkind:           %s filter\n", path, cli_kind_name(cf->kind));
    }
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: info_cuckoo(cf->f.cuckoo, json, out); break;
    case NIDUS_KIND_BLOOM: info_bloom(cf->f.bloom, json, out); break;
    case NIDUS_KIND_COUNTING_BLOOM: info_counting(cf->f.counting, json, out); break;
    }
    if (json)
        fprintf(out, "}\n");
}
