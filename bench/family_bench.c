#define _POSIX_C_SOURCE 200809L
/* The filter family side by side: for each target error, the cuckoo filter (plain and semi-sorted), the blocked
 * Bloom filter and the counting Bloom filter, built for the same capacity on the same keys.
 *
 * usage: nidus_bench_family [--items N] [--runs R] [--errors LIST] [--json FILE]
 *   LIST: comma-separated target errors (default 0.01,0.001)
 * Keys are pre-hashed 64-bit values from a fixed-seed splitmix64 stream. Each figure is the median of R runs
 * (default 5), the configurations interleaved within a run. Reported: add Mops/s (empty to capacity), lookup
 * Mops/s of present and absent keys one at a time, absent keys batched (where the kind has a batch call),
 * bits per item (memory / capacity), and the false-positive rate measured on the absent keys. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nidus/nidus.h>

#include "bench_util.h"

typedef struct kind {
    const char *name;
    void *(*make)(uint64_t n, double error);
    bool (*add)(void *f, uint64_t h);
    bool (*has)(const void *f, uint64_t h);
    void (*has_many)(const void *f, const uint64_t *h, size_t n, bool *out); /* NULL: no batch call */
    uint64_t (*memory)(const void *f);
    void (*destroy)(void *f);
} kind;

static void *cuckoo_make(uint64_t n, double e, bool semi)
{
    nidus_cuckoo_params p = {.capacity = n, .error_rate = e, .semi_sort = semi, .seed = 42};
    nidus_cuckoo *cf = NULL;
    return nidus_cuckoo_new(&p, &cf) ? NULL : cf;
}
static void *cuckoo_plain(uint64_t n, double e) { return cuckoo_make(n, e, false); }
static void *cuckoo_semi(uint64_t n, double e) { return cuckoo_make(n, e, true); }
static bool cuckoo_add(void *f, uint64_t h) { return nidus_cuckoo_add_hash(f, h) == NIDUS_OK; }
static bool cuckoo_has(const void *f, uint64_t h) { return nidus_cuckoo_contains_hash(f, h); }
static void cuckoo_many(const void *f, const uint64_t *h, size_t n, bool *o) { nidus_cuckoo_contains_many_hash(f, h, n, o); }
static uint64_t cuckoo_memory(const void *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    return s.memory_bytes;
}
static void cuckoo_free(void *f) { nidus_cuckoo_free(f); }

static void *bloom_make(uint64_t n, double e)
{
    nidus_bloom_params p = {.capacity = n, .error_rate = e, .seed = 42};
    nidus_bloom *bf = NULL;
    return nidus_bloom_new(&p, &bf) ? NULL : bf;
}
static bool bloom_add(void *f, uint64_t h) { return nidus_bloom_add_hash(f, h, NULL) == NIDUS_OK; }
static bool bloom_has(const void *f, uint64_t h) { return nidus_bloom_contains_hash(f, h); }
static void bloom_many(const void *f, const uint64_t *h, size_t n, bool *o) { nidus_bloom_contains_many_hash(f, h, n, o); }
static uint64_t bloom_memory(const void *f)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    return s.memory_bytes;
}
static void bloom_free(void *f) { nidus_bloom_free(f); }

static void *counting_make(uint64_t n, double e)
{
    nidus_counting_bloom_params p = {.capacity = n, .error_rate = e, .seed = 42};
    nidus_counting_bloom *cb = NULL;
    return nidus_counting_bloom_new(&p, &cb) ? NULL : cb;
}
static bool counting_add(void *f, uint64_t h) { return nidus_counting_bloom_add_hash(f, h) == NIDUS_OK; }
static bool counting_has(const void *f, uint64_t h) { return nidus_counting_bloom_contains_hash(f, h); }
static uint64_t counting_memory(const void *f)
{
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(f, &s);
    return s.memory_bytes;
}
static void counting_free(void *f) { nidus_counting_bloom_free(f); }

static const kind kinds[] = {
    {"cuckoo", cuckoo_plain, cuckoo_add, cuckoo_has, cuckoo_many, cuckoo_memory, cuckoo_free},
    {"cuckoo-semi", cuckoo_semi, cuckoo_add, cuckoo_has, cuckoo_many, cuckoo_memory, cuckoo_free},
    {"bloom", bloom_make, bloom_add, bloom_has, bloom_many, bloom_memory, bloom_free},
    {"counting", counting_make, counting_add, counting_has, NULL, counting_memory, counting_free},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])
#define NFIG 6 /* add, present, absent, absent batched, bits/item, fpr */

static volatile size_t g_sink;

static void run_once(const kind *k, double error, size_t n, const uint64_t *keys, const uint64_t *absent, bool *out,
                     double fig[NFIG])
{
    void *f = k->make(n, error);
    if (!f) {
        fprintf(stderr, "%s: cannot create for %zu items at %g\n", k->name, n, error);
        exit(2);
    }
    double t0 = bench_now();
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += !k->add(f, keys[i]);
    fig[0] = (double)n / (bench_now() - t0) / 1e6;
    if (failed)
        fprintf(stderr, "warning: %s at %g: %zu of %zu adds failed\n", k->name, error, failed, n);
    size_t hits = 0;
    t0 = bench_now();
    for (size_t i = 0; i < n; i++)
        hits += k->has(f, keys[i]);
    fig[1] = (double)n / (bench_now() - t0) / 1e6;
    size_t fp = 0;
    t0 = bench_now();
    for (size_t i = 0; i < n; i++)
        fp += k->has(f, absent[i]);
    fig[2] = (double)n / (bench_now() - t0) / 1e6;
    fig[3] = 0;
    if (k->has_many) {
        t0 = bench_now();
        k->has_many(f, absent, n, out);
        fig[3] = (double)n / (bench_now() - t0) / 1e6;
    }
    fig[4] = (double)k->memory(f) * 8.0 / (double)n;
    fig[5] = (double)fp / (double)n;
    g_sink = hits;
    k->destroy(f);
}

int main(int argc, char **argv)
{
    size_t items = 1000000;
    unsigned runs = 5;
    const char *json = NULL, *list = "0.01,0.001";
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--items") && a + 1 < argc)
            items = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--runs") && a + 1 < argc)
            runs = (unsigned)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--errors") && a + 1 < argc)
            list = argv[++a];
        else if (!strcmp(argv[a], "--json") && a + 1 < argc)
            json = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--items N] [--runs R] [--errors e1,e2,...] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    double errors[16];
    unsigned nerr = 0;
    for (const char *p = list; *p && nerr < 16;) {
        char *end;
        errors[nerr] = strtod(p, &end);
        if (end == p || !(errors[nerr] > 0 && errors[nerr] < 1)) {
            fprintf(stderr, "bad error list: %s\n", list);
            return 2;
        }
        nerr++;
        p = *end == ',' ? end + 1 : end;
    }
    if (runs < 1 || runs > 64 || items < 1) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    uint64_t *keys = malloc(items * sizeof *keys), *absent = malloc(items * sizeof *absent);
    bool *out = malloc(items);
    uint64_t s1 = 1, s2 = 2;
    for (size_t i = 0; i < items; i++) {
        keys[i] = bench_splitmix(&s1);
        absent[i] = bench_splitmix(&s2);
    }
    static double v[16][NKINDS][NFIG][64];
    for (unsigned r = 0; r < runs; r++)
        for (unsigned e = 0; e < nerr; e++)
            for (unsigned k = 0; k < NKINDS; k++) {
                double fig[NFIG];
                run_once(&kinds[k], errors[e], items, keys, absent, out, fig);
                for (unsigned x = 0; x < NFIG; x++)
                    v[e][k][x][r] = fig[x];
            }
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) {
        perror(json);
        return 2;
    }
    if (jf)
        fprintf(jf, "{\"items\": %zu, \"runs\": %u, \"version\": \"%s\", \"results\": [\n", items, runs,
                nidus_version());
    printf("nidus %s filter family: %zu items, median of %u runs, Mops/s\n", nidus_version(), items, runs);
    printf("%-8s %-12s | %8s %8s %8s %9s | %10s %9s\n", "target", "kind", "add", "present", "absent",
           "absent×16", "bits/item", "fpr%");
    for (unsigned e = 0; e < nerr; e++)
        for (unsigned k = 0; k < NKINDS; k++) {
            double m[NFIG];
            for (unsigned x = 0; x < NFIG; x++)
                m[x] = bench_median(v[e][k][x], runs);
            printf("%-8g %-12s | %8.2f %8.2f %8.2f %9.2f | %10.2f %9.4f\n", errors[e], kinds[k].name, m[0], m[1],
                   m[2], m[3], m[4], 100 * m[5]);
            if (jf)
                fprintf(jf,
                        "  {\"target_error\": %g, \"kind\": \"%s\", \"add_mops\": %.3f, \"lookup_present_mops\": "
                        "%.3f, \"lookup_absent_mops\": %.3f, \"lookup_absent_batch_mops\": %.3f, "
                        "\"bits_per_item\": %.4f, \"fpr\": %.6g}%s\n",
                        errors[e], kinds[k].name, m[0], m[1], m[2], m[3], m[4], m[5],
                        e + 1 < nerr || k + 1 < NKINDS ? "," : "");
        }
    if (jf) {
        fprintf(jf, "]}\n");
        fclose(jf);
    }
    free(keys);
    free(absent);
    free(out);
    return 0;
}
