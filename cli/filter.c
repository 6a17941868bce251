/* The CLI's view of a filter file: one switch per operation over the three kinds. */
#include "filter.h"

#include <math.h>

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
    double error = o->error ? o->error : 0.01;
    switch (o->kind) {
    case NIDUS_KIND_CUCKOO: {
        nidus_cuckoo_params p = {.capacity = o->capacity, .error_rate = o->error,
                                 .fingerprint_bits = o->fingerprint_bits, .bucket_size = o->bucket_size,
                                 .semi_sort = o->semi_sort, .max_kicks = o->max_kicks,
                                 .expansion = o->expansion < 0 ? 0 : (unsigned)o->expansion};
        return nidus_cuckoo_new(&p, &cf->f.cuckoo);
    }
    case NIDUS_KIND_BLOOM: {
        nidus_bloom_params p = {.capacity = o->capacity, .error_rate = error,
                                .expansion = o->expansion < 0 ? 2 : (unsigned)o->expansion};
        return nidus_bloom_new(&p, &cf->f.bloom);
    }
    case NIDUS_KIND_COUNTING_BLOOM: {
        nidus_counting_bloom_params p = {.capacity = o->capacity, .error_rate = error};
        return nidus_counting_bloom_new(&p, &cf->f.counting);
    }
    }
    return NIDUS_ERR_INVALID_ARGUMENT;
}

nidus_status cli_filter_open(cli_filter *cf, const char *path, bool read_only)
{
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
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO:
        return read_only ? nidus_cuckoo_map_file(path, NULL, &cf->f.cuckoo)
                         : nidus_cuckoo_load_file(path, NULL, &cf->f.cuckoo);
    case NIDUS_KIND_BLOOM:
        return read_only ? nidus_bloom_map_file(path, NULL, &cf->f.bloom)
                         : nidus_bloom_load_file(path, NULL, &cf->f.bloom);
    case NIDUS_KIND_COUNTING_BLOOM:
        return read_only ? nidus_counting_bloom_map_file(path, NULL, &cf->f.counting)
                         : nidus_counting_bloom_load_file(path, NULL, &cf->f.counting);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

nidus_status cli_filter_save(const cli_filter *cf, const char *path)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_save_file(cf->f.cuckoo, path);
    case NIDUS_KIND_BLOOM: return nidus_bloom_save_file(cf->f.bloom, path);
    case NIDUS_KIND_COUNTING_BLOOM: return nidus_counting_bloom_save_file(cf->f.counting, path);
    }
    return NIDUS_ERR_UNSUPPORTED;
}

void cli_filter_close(cli_filter *cf)
{
    switch (cf->kind) {
    case NIDUS_KIND_CUCKOO: nidus_cuckoo_free(cf->f.cuckoo); break;
    case NIDUS_KIND_BLOOM: nidus_bloom_free(cf->f.bloom); break;
    case NIDUS_KIND_COUNTING_BLOOM: nidus_counting_bloom_free(cf->f.counting); break;
    }
    cf->f.cuckoo = NULL;
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

static void info_cuckoo(const nidus_cuckoo *f, bool json, FILE *out)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    if (json) {
        fprintf(out,
                "\"parameters\": {\"bucket_size\": %u, \"fingerprint_bits\": %u, \"semi_sort\": %s, "
                "\"max_kicks\": %u, \"expansion\": %u, \"max_tables\": %u}, \"items\": %llu, "
                "\"items_deleted\": %llu, \"memory_bytes\": %llu, \"bits_per_item\": %.4f, \"load\": %.6f, "
                "\"error_bound\": %.6g, \"sub_filters\": [",
                s.bucket_size, s.fingerprint_bits, s.semi_sort ? "true" : "false", s.max_kicks, s.expansion,
                s.max_tables, (unsigned long long)s.items, (unsigned long long)s.items_deleted,
                (unsigned long long)s.memory_bytes, finite(s.bits_per_item), finite(s.load), s.error_bound);
    } else {
        fprintf(out,
                "parameters:     bucket size %u, %u-bit fingerprints%s, max kicks %u, expansion %u\n"
                "items:          %llu (%llu deleted since the last compaction)\n"
                "memory:         %llu bytes, %.2f bits per item\n"
                "load:           %.4f\n"
                "error bound:    %.6g\n"
                "sub-filters:    %u\n",
                s.bucket_size, s.fingerprint_bits, s.semi_sort ? " (semi-sorted)" : "", s.max_kicks, s.expansion,
                (unsigned long long)s.items, (unsigned long long)s.items_deleted, (unsigned long long)s.memory_bytes,
                s.bits_per_item, s.load, s.error_bound, s.tables);
    }
    for (unsigned k = 0; k < s.tables; k++) {
        nidus_cuckoo_table_stats t;
        nidus_cuckoo_get_table_stats(f, k, &t);
        if (json)
            fprintf(out, "%s{\"buckets\": %llu, \"fingerprint_bits\": %u, \"items\": %llu, \"load\": %.6f, "
                         "\"error_bound\": %.6g}",
                    k ? ", " : "", (unsigned long long)t.buckets, t.fingerprint_bits, (unsigned long long)t.items,
                    t.load, t.error_bound);
        else
            fprintf(out, "  #%u: %llu buckets, %u-bit fingerprints, %llu items, load %.4f, error bound %.3g\n", k,
                    (unsigned long long)t.buckets, t.fingerprint_bits, (unsigned long long)t.items, t.load,
                    t.error_bound);
    }
    if (json)
        fprintf(out, "]");
}

static void info_bloom(const nidus_bloom *f, bool json, FILE *out)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    double per_item = s.items ? (double)s.memory_bytes * 8.0 / (double)s.items : 0.0;
    if (json)
        fprintf(out,
                "\"parameters\": {\"capacity\": %llu, \"error_rate\": %.6g, \"expansion\": %u, \"hashes\": %u}, "
                "\"items\": %llu, \"memory_bytes\": %llu, \"bits_per_item\": %.4f, \"load\": %.6f, "
                "\"error_bound\": %.6g, \"sub_filters\": %u",
                (unsigned long long)s.capacity, s.error_rate, s.expansion, s.hashes, (unsigned long long)s.items,
                (unsigned long long)s.memory_bytes, per_item, (double)s.items / (double)s.capacity, s.error_bound,
                s.layers);
    else
        fprintf(out,
                "parameters:     capacity %llu, error rate %g, expansion %u%s, %u hashes\n"
                "items:          %llu\nmemory:         %llu bytes, %.2f bits per item\n"
                "load:           %.4f (items / capacity)\nerror bound:    %.6g\nsub-filters:    %u\n",
                (unsigned long long)s.capacity, s.error_rate, s.expansion, s.expansion ? "" : " (non-scaling)",
                s.hashes, (unsigned long long)s.items, (unsigned long long)s.memory_bytes, per_item,
                (double)s.items / (double)s.capacity, s.error_bound, s.layers);
}

static void info_counting(const nidus_counting_bloom *f, bool json, FILE *out)
{
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(f, &s);
    double per_item = s.items ? (double)s.memory_bytes * 8.0 / (double)s.items : 0.0;
    if (json)
        fprintf(out,
                "\"parameters\": {\"capacity\": %llu, \"error_rate\": %.6g, \"hashes\": %u}, \"items\": %llu, "
                "\"saturated_counters\": %llu, \"memory_bytes\": %llu, \"bits_per_item\": %.4f, \"load\": %.6f, "
                "\"error_bound\": %.6g, \"sub_filters\": 1",
                (unsigned long long)s.capacity, s.error_rate, s.hashes, (unsigned long long)s.items,
                (unsigned long long)s.saturated, (unsigned long long)s.memory_bytes, per_item,
                (double)s.items / (double)s.capacity, s.error_rate);
    else
        fprintf(out,
                "parameters:     capacity %llu, error rate %g, %u hashes, 4-bit counters\n"
                "items:          %llu (%llu counters saturated)\nmemory:         %llu bytes, %.2f bits per item\n"
                "load:           %.4f (items / capacity)\nerror bound:    %.6g (at capacity)\nsub-filters:    1\n",
                (unsigned long long)s.capacity, s.error_rate, s.hashes, (unsigned long long)s.items,
                (unsigned long long)s.saturated, (unsigned long long)s.memory_bytes, per_item,
                (double)s.items / (double)s.capacity, s.error_rate);
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
