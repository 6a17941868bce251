/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's side of a filter file: creating and opening one as a nidus_filter, and the `info` summary, which
 * prints each kind's own parameters from its typed handle. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "filter.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "lazy_verify.h"

nidus_status cli_filter_create(const cli_create_options *o, nidus_filter **out)
{
    nidus_filter_params p = {.kind = o->kind, .capacity = o->capacity, .error_rate = o->error};
    if (o->kind == NIDUS_KIND_BLOOM)
        p.expansion = o->expansion < 0 ? CLI_BLOOM_EXPANSION : (unsigned)o->expansion;
    /* The cuckoo filter's own shape options (0: chosen from the error or the defaults). */
    nidus_cuckoo_params c = {.capacity = o->capacity, .error_rate = o->error,
                             .fingerprint_bits = o->fingerprint_bits, .bucket_size = o->bucket_size,
                             .semi_sort = o->semi_sort, .max_kicks = o->max_kicks,
                             .expansion = o->expansion < 0 ? CLI_CUCKOO_EXPANSION : (unsigned)o->expansion};
    if (o->kind == NIDUS_KIND_CUCKOO)
        p.kind_params = &c;
    nidus_window_params w = {.capacity = o->capacity, .window = o->window, .error_rate = o->error,
                             .fingerprint_bits = o->fingerprint_bits, .bucket_size = o->bucket_size,
                             .max_kicks = o->max_kicks, .expansion = o->expansion < 0 ? 0 : (unsigned)o->expansion,
                             .max_memory = o->max_memory};
    if (o->kind == NIDUS_KIND_WINDOW)
        p.kind_params = &w;
    return nidus_filter_new(&p, out);
}

uint64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

nidus_status cli_filter_open(const char *path, cli_open_mode mode, nidus_filter **out)
{
    return nidus_filter_open(path, mode == CLI_OPEN_IN_PLACE ? NIDUS_FILTER_MAP_WRITABLE : NIDUS_FILTER_MAP, NULL,
                             lazy_verify_guard(path), out);
}

/* A double for JSON: finite always (JSON has no inf/nan). */
static double finite(double d) { return isfinite(d) ? d : 0.0; }

/* A JSON number that reads back as a real, not an integer ("0.0", not "0"), in 6 significant digits. */
static const char *real(char buf[32], double d)
{
    snprintf(buf, 32, "%.6g", finite(d));
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    return buf;
}

/* One sub-filter, as every kind reports it. */
typedef struct sub_filter {
    uint64_t capacity, items, memory_bytes;
    double error_bound;
} sub_filter;

/* One sub-filter's line, or its JSON object; `extra` ends the line, `json_extra` (fields with their leading
 * ", ") ends the object. */
static void print_sub(FILE *out, bool json, unsigned k, const sub_filter *t, const char *extra, const char *json_extra)
{
    double load = t->capacity ? (double)t->items / (double)t->capacity : 0.0;
    char e[32];
    if (json)
        fprintf(out, "%s{\"capacity\": %llu, \"items\": %llu, \"memory_bytes\": %llu, \"load\": %.6f, "
                     "\"error_bound\": %s%s}",
                k ? ", " : "", (unsigned long long)t->capacity, (unsigned long long)t->items,
                (unsigned long long)t->memory_bytes, finite(load), real(e, t->error_bound), json_extra);
    else
        fprintf(out, "  #%u: capacity %llu, %llu items, load %.4f, error bound %.3g, %llu bytes%s\n", k,
                (unsigned long long)t->capacity, (unsigned long long)t->items, load, t->error_bound,
                (unsigned long long)t->memory_bytes, extra);
}

/* What every kind reports (nidus_filter_get_stats): the same fields, so `info --json` has one shape. */
static void print_summary(FILE *out, bool json, const nidus_filter_stats *s, const char *load_note)
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
                per_item, load, load_note, s->error_bound, s->sub_filters);
}

/* A cuckoo filter's capacity here is its slots, so that its load is the tables' fill (items / slots). */
static void info_cuckoo(const nidus_cuckoo *f, nidus_filter_stats *sum, bool json, FILE *out)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    sum->capacity = s.total_slots;
    print_summary(out, json, sum, " (items / slots)");
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
    unsigned prev_level = 0;
    for (unsigned k = 0; k < s.tables; k++) {
        nidus_cuckoo_table_stats t;
        nidus_cuckoo_get_table_stats(f, k, &t);
        sub_filter sf = {t.buckets * s.bucket_size, t.items, t.memory_bytes, t.error_bound};
        char extra[96];
        int n = snprintf(extra, sizeof extra, ", %llu buckets, %u-bit fingerprints", (unsigned long long)t.buckets,
                         t.fingerprint_bits);
        if (t.level != k && n > 0 && (size_t)n < sizeof extra) /* after a merge's sibling: the level */
            snprintf(extra + n, sizeof extra - (size_t)n, ", level %u%s", t.level,
                     t.level == prev_level ? " (a sibling)" : "");
        prev_level = t.level;
        char json_extra[96];
        snprintf(json_extra, sizeof json_extra, ", \"buckets\": %llu, \"fingerprint_bits\": %u, \"level\": %u",
                 (unsigned long long)t.buckets, t.fingerprint_bits, t.level);
        print_sub(out, json, k, &sf, extra, json_extra);
    }
    if (json)
        fprintf(out, "]");
}

static void info_bloom(const nidus_bloom *f, const nidus_filter_stats *sum, bool json, FILE *out)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    print_summary(out, json, sum, " (items / capacity)");
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
        char json_extra[32];
        snprintf(json_extra, sizeof json_extra, ", \"hashes\": %u", l.hashes);
        print_sub(out, json, k, &sf, extra, json_extra);
    }
    if (json)
        fprintf(out, "]");
}

static void info_counting(const nidus_counting_bloom *f, const nidus_filter_stats *sum, bool json, FILE *out)
{
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(f, &s);
    print_summary(out, json, sum, " (items / capacity)");
    if (json)
        fprintf(out,
                "\"parameters\": {\"error_rate\": %.6g, \"hashes\": %u}, \"details\": {\"saturated_counters\": "
                "%llu}, \"sub_filters\": [",
                s.error_rate, s.hashes, (unsigned long long)s.saturated);
    else
        fprintf(out, "parameters:     error rate %g, %u hashes, 4-bit counters (%llu saturated)\n", s.error_rate,
                s.hashes, (unsigned long long)s.saturated);
    sub_filter sf = {s.capacity, s.items, s.memory_bytes, s.error_rate};
    print_sub(out, json, 0, &sf, "", "");
    if (json)
        fprintf(out, "]");
}

/* W in the largest unit that divides it: "90s", "15m", "1500ms". */
static void window_text(char buf[32], uint64_t ms)
{
    static const struct { uint64_t ms; const char *unit; } units[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}, {1, "ms"}};
    for (unsigned k = 0; k < sizeof units / sizeof units[0]; k++)
        if (ms % units[k].ms == 0) {
            snprintf(buf, 32, "%llu%s", (unsigned long long)(ms / units[k].ms), units[k].unit);
            return;
        }
}

/* A windowed filter: items are the copies live at the handle's time (--now, or the clock), capacity the items of
 * one window its tables are sized for; its expansion, its bound on growth (max memory) and the tables it holds. */
static void info_window(const nidus_window *f, uint64_t now, const nidus_filter_stats *sum, bool json, FILE *out)
{
    nidus_window_stats s;
    nidus_window_get_stats(f, now, &s);
    print_summary(out, json, sum, " (live items / capacity a window)");
    char w[32];
    window_text(w, s.window);
    if (json)
        fprintf(out,
                "\"parameters\": {\"window_ms\": %llu, \"bucket_size\": %u, \"fingerprint_bits\": %u, "
                "\"expansion\": %u, \"max_memory\": %llu}, \"details\": {\"now_ms\": %llu, \"entries\": %llu, "
                "\"epoch_ms\": %llu, \"latest_write_epoch_ms\": %llu, \"tables\": %u}, \"sub_filters\": [",
                (unsigned long long)s.window, s.bucket_size, s.fingerprint_bits, s.expansion,
                (unsigned long long)s.max_memory, (unsigned long long)now, (unsigned long long)s.entries,
                (unsigned long long)s.epoch_ticks, (unsigned long long)s.latest_write, s.tables);
    else {
        char bound[64] = "";
        if (s.max_memory)
            snprintf(bound, sizeof bound, ", max memory %llu bytes", (unsigned long long)s.max_memory);
        fprintf(out,
                "window:         %s (%llu ms; items expire 1 to 1.2 windows after their add)\n"
                "parameters:     bucket size %u, %u-bit fingerprints + 3 bits of age, expansion %u%s%s\n"
                "time:           %llu ms since the epoch; %llu entries stored, %llu of them live\n"
                "tables:         %u (%u grown: each goes once its items have expired)\n",
                w, (unsigned long long)s.window, s.bucket_size, s.fingerprint_bits, s.expansion,
                s.expansion ? "" : " (does not grow)", bound, (unsigned long long)now,
                (unsigned long long)s.entries, (unsigned long long)s.live, s.tables, s.tables - 1);
    }
    for (unsigned k = 0; k < s.tables; k++) {
        nidus_window_table_stats t;
        nidus_window_get_table_stats(f, k, now, &t);
        sub_filter sf = {t.capacity, t.live, t.memory_bytes, t.error_bound};
        print_sub(out, json, k, &sf, "", "");
    }
    if (json)
        fprintf(out, "]");
}

/* A static filter has one shape: every key it was built from is in, nothing grows or is removed. */
static void info_fuse(const nidus_fuse *f, bool json, FILE *out)
{
    nidus_fuse_stats s;
    nidus_fuse_get_stats(f, &s);
    double load = s.keys ? 1.0 : 0.0;
    char e[32];
    if (json) {
        fprintf(out,
                "\"capacity\": %llu, \"items\": %llu, \"memory_bytes\": %llu, \"bits_per_item\": %.4f, "
                "\"load\": %.6f, \"error_bound\": %s, \"parameters\": {\"fingerprint_bits\": %u}, "
                "\"details\": {\"keys\": %llu, \"slots\": %llu, \"bits_per_key\": %.4f}, \"sub_filters\": [",
                (unsigned long long)s.keys, (unsigned long long)s.keys, (unsigned long long)s.memory_bytes,
                finite(s.bits_per_item), load, real(e, s.error_bound), s.fingerprint_bits,
                (unsigned long long)s.keys, (unsigned long long)s.slots, finite(s.bits_per_item));
        sub_filter sf = {s.keys, s.keys, s.memory_bytes, s.error_bound};
        print_sub(out, true, 0, &sf, "", "");
        fprintf(out, "]");
        return;
    }
    fprintf(out,
            "keys:           %llu (static: built from them once; a changed set is built anew)\n"
            "memory:         %llu bytes, %.2f bits per key\n"
            "fingerprints:   %u bits, in %llu slots\n"
            "error bound:    %.6g\n",
            (unsigned long long)s.keys, (unsigned long long)s.memory_bytes, s.bits_per_item, s.fingerprint_bits,
            (unsigned long long)s.slots, s.error_bound);
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

void cli_filter_info(nidus_filter *f, const char *path, bool json, FILE *out)
{
    nidus_kind kind = nidus_filter_kind(f);
    if (json) {
        fprintf(out, "{\"file\": ");
        json_string(out, path);
        fprintf(out, ", \"kind\": \"%s\", ", nidus_kind_name(kind));
    } else {
        fprintf(out, "file:           %s\nkind:           %s filter\n", path, nidus_kind_name(kind));
    }
    nidus_filter_stats sum;
    nidus_filter_get_stats(f, &sum);
    if (nidus_filter_cuckoo(f))
        info_cuckoo(nidus_filter_cuckoo(f), &sum, json, out);
    else if (nidus_filter_bloom(f))
        info_bloom(nidus_filter_bloom(f), &sum, json, out);
    else if (nidus_filter_counting_bloom(f))
        info_counting(nidus_filter_counting_bloom(f), &sum, json, out);
    else if (nidus_filter_fuse(f))
        info_fuse(nidus_filter_fuse(f), json, out);
    else if (nidus_filter_window(f))
        info_window(nidus_filter_window(f), nidus_filter_time(f), &sum, json, out);
    if (json)
        fprintf(out, "}\n");
}
