/* Cuckoo filter benchmark: for each configuration, the same keys, the same measurements.
 *
 * usage: nidus_bench [--items N] [--runs R] [--json FILE] [--configs LIST]
 *   LIST: comma-separated b/f or b/f/s (semi-sorted), e.g. 2/8,4/12,4/13/s   (default: the set below)
 * Keys are 64-bit values from a fixed-seed splitmix64 stream, passed pre-hashed (the `_hash` calls), so the
 * figures measure the filter, not the key hash. Each figure is the median of R runs (default 5). Lookups are
 * of 0 % present (absent keys) and 100 % present, one at a time and batched. The machine's limit is printed
 * beside them: random independent 64-byte reads per second from a buffer the size of the table. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nidus/nidus.h>

#include "bench_util.h"

typedef struct config {
    unsigned b, f;
    bool semi;
} config;

typedef struct result {
    config c;
    double bits_per_item, fpr, bound, load;
    double insert, pos_single, neg_single, pos_batch, neg_batch, remove, line_reads;
} result;

/* Random independent 64-byte reads per second from a buffer of `bytes`: the memory system's ceiling for a
 * probe that misses cache (a lookup needs two such reads unless its buckets share a line). */
static double line_reads_per_second(uint64_t bytes, const uint64_t *idx, size_t n)
{
    size_t lines = (size_t)(bytes / 64) + 1;
    uint8_t *buf = calloc(lines, 64);
    for (size_t k = 0; k < lines; k++)
        buf[k * 64] = (uint8_t)k;
    volatile uint64_t sink = 0;
    uint64_t sum = 0;
    double t0 = bench_now();
    for (size_t k = 0; k < n; k++)
        sum += buf[(idx[k] % lines) * 64];
    double dt = bench_now() - t0;
    sink = sum;
    (void)sink;
    free(buf);
    return (double)n / dt;
}

static volatile size_t g_sink;

static void run_once(const config *c, size_t items, const uint64_t *keys, const uint64_t *absent, bool *out,
                     result *r, double *ins, double *ps, double *ns, double *pb, double *nb, double *rm)
{
    nidus_cuckoo_params p = {.capacity = items, .bucket_size = c->b, .fingerprint_bits = c->f,
                             .semi_sort = c->semi, .seed = 42};
    nidus_cuckoo *cf;
    if (nidus_cuckoo_new(&p, &cf)) {
        fprintf(stderr, "cannot create b=%u f=%u\n", c->b, c->f);
        exit(2);
    }
    double t0 = bench_now();
    size_t added = 0;
    nidus_status st = nidus_cuckoo_add_many_hash(cf, keys, items, &added);
    *ins = (double)items / (bench_now() - t0) / 1e6;
    if (st)
        fprintf(stderr, "warning: b=%u f=%u full after %zu of %zu items\n", c->b, c->f, added, items);

    size_t hits = 0;
    t0 = bench_now();
    for (size_t k = 0; k < items; k++)
        hits += nidus_cuckoo_contains_hash(cf, keys[k]);
    *ps = (double)items / (bench_now() - t0) / 1e6;
    size_t fp = 0;
    t0 = bench_now();
    for (size_t k = 0; k < items; k++)
        fp += nidus_cuckoo_contains_hash(cf, absent[k]);
    *ns = (double)items / (bench_now() - t0) / 1e6;
    t0 = bench_now();
    nidus_cuckoo_contains_many_hash(cf, keys, items, out);
    *pb = (double)items / (bench_now() - t0) / 1e6;
    t0 = bench_now();
    nidus_cuckoo_contains_many_hash(cf, absent, items, out);
    *nb = (double)items / (bench_now() - t0) / 1e6;
    g_sink = hits;

    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    r->bits_per_item = (double)s.memory_bytes * 8.0 / (double)items;
    r->fpr = (double)fp / (double)items;
    r->bound = s.error_bound;
    r->load = s.load;
    t0 = bench_now();
    for (size_t k = 0; k < added; k++)
        nidus_cuckoo_remove_hash(cf, keys[k]);
    *rm = (double)added / (bench_now() - t0) / 1e6;
    r->line_reads = line_reads_per_second(s.memory_bytes, absent, items) / 1e6;
    nidus_cuckoo_free(cf);
}

static bool parse_configs(const char *list, config *out, unsigned *n)
{
    *n = 0;
    const char *p = list;
    while (*p && *n < 64) {
        config c = {0, 0, false};
        char s = 0;
        int used = 0;
        int got = sscanf(p, "%u/%u%n/%c%n", &c.b, &c.f, &used, &s, &used);
        if (got < 2)
            return false;
        c.semi = got == 3 && s == 's';
        out[(*n)++] = c;
        p += used;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return *n > 0;
}

int main(int argc, char **argv)
{
    size_t items = 1000000;
    unsigned runs = 5;
    const char *json = NULL, *list = "2/8,4/8,4/12,4/16,4/9/s,4/13/s,4/17/s";
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--items") && a + 1 < argc)
            items = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--runs") && a + 1 < argc)
            runs = (unsigned)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--json") && a + 1 < argc)
            json = argv[++a];
        else if (!strcmp(argv[a], "--configs") && a + 1 < argc)
            list = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--items N] [--runs R] [--json FILE] [--configs b/f[/s],...]\n", argv[0]);
            return 2;
        }
    }
    config configs[64];
    unsigned nconfigs;
    if (!parse_configs(list, configs, &nconfigs) || runs < 1 || items < 1) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    uint64_t *keys = malloc(items * sizeof *keys), *absent = malloc(items * sizeof *absent);
    bool *out = malloc(items);
    uint64_t s1 = 1, s2 = 2;
    for (size_t k = 0; k < items; k++) {
        keys[k] = bench_splitmix(&s1);
        absent[k] = bench_splitmix(&s2);
    }
    result *res = calloc(nconfigs, sizeof *res);
    printf("nidus %s cuckoo benchmark: %zu items, median of %u runs, Mops/s\n", nidus_version(), items, runs);
    printf("%-10s %6s %8s %8s %7s | %7s %7s %7s %7s | %7s %7s | %9s %9s\n", "config", "bits", "fpr%", "bound%",
           "load", "insert", "pos", "neg", "remove", "pos×16", "neg×16", "2-line Mr", "neg/limit");
    /* Runs are interleaved (every configuration once, then again), so a noisy neighbour on a shared machine
     * slows all configurations alike instead of one of them. */
    unsigned n = runs > 64 ? 64 : runs;
    double(*v)[7][64] = calloc(nconfigs, sizeof *v);
    for (unsigned k = 0; k < n; k++)
        for (unsigned c = 0; c < nconfigs; c++) {
            res[c].c = configs[c];
            run_once(&configs[c], items, keys, absent, out, &res[c], &v[c][0][k], &v[c][1][k], &v[c][2][k],
                     &v[c][3][k], &v[c][4][k], &v[c][5][k]);
            v[c][6][k] = res[c].line_reads;
        }
    for (unsigned c = 0; c < nconfigs; c++) {
        result *r = &res[c];
        r->insert = bench_median(v[c][0], n);
        r->pos_single = bench_median(v[c][1], n);
        r->neg_single = bench_median(v[c][2], n);
        r->pos_batch = bench_median(v[c][3], n);
        r->neg_batch = bench_median(v[c][4], n);
        r->remove = bench_median(v[c][5], n);
        r->line_reads = bench_median(v[c][6], n);
        char name[32];
        snprintf(name, sizeof name, "b=%u f=%u%s", r->c.b, r->c.f, r->c.semi ? "s" : "");
        printf("%-10s %6.2f %8.4f %8.4f %7.4f | %7.2f %7.2f %7.2f %7.2f | %7.2f %7.2f | %9.2f %9.2f\n", name,
               r->bits_per_item, 100 * r->fpr, 100 * r->bound, r->load, r->insert, r->pos_single, r->neg_single,
               r->remove, r->pos_batch, r->neg_batch, r->line_reads / 2, r->neg_batch / (r->line_reads / 2));
    }
    free(v);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 2;
        }
        fprintf(f, "{\"items\": %zu, \"runs\": %u, \"version\": \"%s\", \"results\": [\n", items, runs,
                nidus_version());
        for (unsigned c = 0; c < nconfigs; c++) {
            const result *r = &res[c];
            fprintf(f,
                    "  {\"bucket_size\": %u, \"fingerprint_bits\": %u, \"semi_sort\": %s, \"bits_per_item\": %.4f, "
                    "\"fpr\": %.6g, \"error_bound\": %.6g, \"load\": %.4f, \"insert_mops\": %.3f, "
                    "\"lookup_present_mops\": %.3f, \"lookup_absent_mops\": %.3f, \"lookup_present_batch_mops\": "
                    "%.3f, \"lookup_absent_batch_mops\": %.3f, \"remove_mops\": %.3f, \"line_reads_mops\": %.3f}%s\n",
                    r->c.b, r->c.f, r->c.semi ? "true" : "false", r->bits_per_item, r->fpr, r->bound, r->load,
                    r->insert, r->pos_single, r->neg_single, r->pos_batch, r->neg_batch, r->remove, r->line_reads,
                    c + 1 < nconfigs ? "," : "");
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    free(keys);
    free(absent);
    free(out);
    free(res);
    return 0;
}
