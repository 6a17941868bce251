/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmark: every configuration measured the same way, on the same keys, on this machine.
 *
 * usage: nidus_bench [--sizes N,N,...] [--huge] [--runs R] [--configs LIST] [--json FILE]
 *   --sizes   item counts (default 1000000,10000000); --huge adds 100000000 (a few GiB)
 *   --configs comma-separated: cuckoo:B/F[/s] (fixed size, s = semi-sorted), scalable:B/F (starts at 1/8 of
 *             the items with expansion 2, so it grows three times), bloom:E (blocked, non-scaling),
 *             counting:E (counting Bloom); default below
 * For every size and configuration, R runs (default 5, interleaved), each figure their median:
 *   insert Mops/s (from empty to the size), lookup Mops/s of 0 %, 50 % and 100 % present keys one at a time
 *   and batched, remove Mops/s, bits per item, the false-positive rate measured over `size` absent keys
 *   beside the bound, memory. Beside them, this machine's limit: random independent 64-byte reads per second
 *   from a buffer the size of the filter (a cuckoo lookup needs two, a blocked Bloom lookup one); each lookup
 *   figure is also printed as a fraction of it. Keys are 64-bit values of a fixed-seed splitmix64 stream,
 *   passed pre-hashed, so the figures are the filters', not the key hash's. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nidus/nidus.h>

#include "bench_util.h"

/* ---- the kinds, behind one table of functions ---- */

typedef struct config config;
typedef struct kind_ops {
    const char *name;
    void *(*make)(const config *c, size_t items);
    size_t (*add_many)(void *f, const uint64_t *h, size_t n); /* returns how many were added */
    bool (*has)(const void *f, uint64_t h);
    void (*has_many)(const void *f, const uint64_t *h, size_t n, bool *out);
    bool (*remove)(void *f, uint64_t h); /* NULL: the kind cannot remove */
    void (*stats)(const void *f, uint64_t *memory, double *bound, unsigned *tables);
    void (*destroy)(void *f);
    unsigned lines_per_lookup; /* random cache lines a lookup reads */
} kind_ops;

struct config {
    const kind_ops *ops;
    unsigned b, f;
    bool semi;
    double error;
    char name[80];
};

static void *cuckoo_make(const config *c, size_t items)
{
    bool scalable = !strcmp(c->ops->name, "scalable");
    nidus_cuckoo_params p = {.capacity = scalable ? items / 8 + 1 : items, .bucket_size = c->b,
                             .fingerprint_bits = c->f, .semi_sort = c->semi, .expansion = scalable ? 2 : 0,
                             .seed = 42};
    nidus_cuckoo *cf = NULL;
    return nidus_cuckoo_new(&p, &cf) ? NULL : cf;
}
static size_t cuckoo_add_many(void *f, const uint64_t *h, size_t n)
{
    size_t added = 0;
    nidus_cuckoo_add_many_hash(f, h, n, &added);
    return added;
}
static bool cuckoo_has(const void *f, uint64_t h) { return nidus_cuckoo_contains_hash(f, h); }
static void cuckoo_has_many(const void *f, const uint64_t *h, size_t n, bool *o) { nidus_cuckoo_contains_many_hash(f, h, n, o); }
static bool cuckoo_remove(void *f, uint64_t h) { return nidus_cuckoo_remove_hash(f, h) == NIDUS_OK; }
static void cuckoo_stats(const void *f, uint64_t *m, double *bound, unsigned *tables)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(f, &s);
    *m = s.memory_bytes;
    *bound = s.error_bound;
    *tables = s.tables;
}
static void cuckoo_free(void *f) { nidus_cuckoo_free(f); }

static void *bloom_make(const config *c, size_t items)
{
    nidus_bloom_params p = {.capacity = items, .error_rate = c->error, .seed = 42,
                            .layout = NIDUS_BLOOM_LAYOUT_BLOCKED};
    nidus_bloom *bf = NULL;
    return nidus_bloom_new(&p, &bf) ? NULL : bf;
}
static size_t bloom_add_many(void *f, const uint64_t *h, size_t n)
{
    size_t k = 0;
    while (k < n && nidus_bloom_add_hash(f, h[k], NULL) == NIDUS_OK)
        k++;
    return k;
}
static bool bloom_has(const void *f, uint64_t h) { return nidus_bloom_contains_hash(f, h); }
static void bloom_has_many(const void *f, const uint64_t *h, size_t n, bool *o) { nidus_bloom_contains_many_hash(f, h, n, o); }
static void bloom_stats(const void *f, uint64_t *m, double *bound, unsigned *tables)
{
    nidus_bloom_stats s;
    nidus_bloom_get_stats(f, &s);
    *m = s.memory_bytes;
    *bound = s.error_bound;
    *tables = s.layers;
}
static void bloom_free(void *f) { nidus_bloom_free(f); }

static void *counting_make(const config *c, size_t items)
{
    nidus_counting_bloom_params p = {.capacity = items, .error_rate = c->error, .seed = 42};
    nidus_counting_bloom *cb = NULL;
    return nidus_counting_bloom_new(&p, &cb) ? NULL : cb;
}
static size_t counting_add_many(void *f, const uint64_t *h, size_t n)
{
    for (size_t k = 0; k < n; k++)
        nidus_counting_bloom_add_hash(f, h[k]);
    return n;
}
static bool counting_has(const void *f, uint64_t h) { return nidus_counting_bloom_contains_hash(f, h); }
static void counting_has_many(const void *f, const uint64_t *h, size_t n, bool *o)
{
    nidus_counting_bloom_contains_many_hash(f, h, n, o);
}
static bool counting_remove(void *f, uint64_t h) { return nidus_counting_bloom_remove_hash(f, h) == NIDUS_OK; }
static void counting_stats(const void *f, uint64_t *m, double *bound, unsigned *tables)
{
    nidus_counting_bloom_stats s;
    nidus_counting_bloom_get_stats(f, &s);
    *m = s.memory_bytes;
    *bound = s.error_rate;
    *tables = 1;
}
static void counting_free(void *f) { nidus_counting_bloom_free(f); }

static const kind_ops kinds[] = {
    {"cuckoo", cuckoo_make, cuckoo_add_many, cuckoo_has, cuckoo_has_many, cuckoo_remove, cuckoo_stats, cuckoo_free, 2},
    {"scalable", cuckoo_make, cuckoo_add_many, cuckoo_has, cuckoo_has_many, cuckoo_remove, cuckoo_stats, cuckoo_free, 2},
    {"bloom", bloom_make, bloom_add_many, bloom_has, bloom_has_many, NULL, bloom_stats, bloom_free, 1},
    {"counting", counting_make, counting_add_many, counting_has, counting_has_many, counting_remove, counting_stats,
     counting_free, 1},
};

/* Error targets of the Bloom kinds match the bounds of b=4 cuckoo tables at f = 8, 12 and 16. */
static const char *default_configs = "cuckoo:2/8,cuckoo:4/8,cuckoo:4/12,cuckoo:4/16,cuckoo:4/9/s,cuckoo:4/13/s,"
                                     "cuckoo:4/17/s,scalable:4/12,bloom:0.0315,bloom:0.00195,bloom:0.000122,"
                                     "counting:0.00195";

static bool parse_config(const char *s, size_t n, config *c)
{
    char buf[64];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *colon = strchr(buf, ':');
    if (!colon)
        return false;
    *colon = 0;
    memset(c, 0, sizeof *c);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (!strcmp(buf, kinds[k].name))
            c->ops = &kinds[k];
    if (!c->ops)
        return false;
    const char *spec = colon + 1;
    if (c->ops->make == cuckoo_make) {
        char s_flag = 0;
        int got = sscanf(spec, "%u/%u/%c", &c->b, &c->f, &s_flag);
        if (got < 2)
            return false;
        c->semi = got == 3 && s_flag == 's';
    } else {
        char *end;
        c->error = strtod(spec, &end);
        if (*end || !(c->error > 0 && c->error < 1))
            return false;
    }
    snprintf(c->name, sizeof c->name, "%s:%s", buf, spec);
    return true;
}

/* ---- one measurement ---- */

enum { INSERT, POS, NEG, MIX, POS_B, NEG_B, MIX_B, REMOVE, NFIG };
static const char *const fig_names[NFIG] = {"insert", "present", "absent", "mixed", "present_batch",
                                            "absent_batch", "mixed_batch", "remove"};

typedef struct measured {
    double fig[NFIG];
    double bits_per_item, fpr, bound, line_reads;
    uint64_t memory;
    unsigned tables;
    size_t added;
} measured;

static volatile size_t g_sink;

static double rate(size_t n, double t0) { return (double)n / (bench_now() - t0) / 1e6; }

static double time_single(const config *c, const void *f, const uint64_t *h, size_t n, size_t *hits)
{
    size_t found = 0;
    double t0 = bench_now();
    for (size_t k = 0; k < n; k++)
        found += c->ops->has(f, h[k]);
    double r = rate(n, t0);
    *hits = found;
    return r;
}

static double time_batch(const config *c, const void *f, const uint64_t *h, size_t n, bool *out)
{
    double t0 = bench_now();
    c->ops->has_many(f, h, n, out);
    return rate(n, t0);
}

/* Random independent 64-byte reads per second from a buffer of `bytes`: what a lookup that misses cache is
 * up against. */
static double line_reads_per_second(uint64_t bytes, const uint64_t *idx, size_t n)
{
    size_t lines = (size_t)(bytes / 64) + 1;
    uint8_t *buf = calloc(lines, 64);
    for (size_t k = 0; k < lines; k++)
        buf[k * 64] = (uint8_t)k;
    uint64_t sum = 0;
    double t0 = bench_now();
    for (size_t k = 0; k < n; k++)
        sum += buf[(idx[k] % lines) * 64];
    double r = (double)n / (bench_now() - t0);
    g_sink = sum;
    free(buf);
    return r;
}

static void measure(const config *c, size_t n, const uint64_t *keys, const uint64_t *absent, const uint64_t *mixed,
                    bool *out, measured *m)
{
    void *f = c->ops->make(c, n);
    if (!f) {
        fprintf(stderr, "cannot create %s for %zu items\n", c->name, n);
        exit(2);
    }
    double t0 = bench_now();
    m->added = c->ops->add_many(f, keys, n);
    m->fig[INSERT] = rate(m->added, t0);
    if (m->added < n)
        fprintf(stderr, "warning: %s full after %zu of %zu items\n", c->name, m->added, n);
    size_t hits, fp;
    m->fig[POS] = time_single(c, f, keys, n, &hits);
    m->fig[NEG] = time_single(c, f, absent, n, &fp);
    m->fig[MIX] = time_single(c, f, mixed, n, &hits);
    m->fig[POS_B] = time_batch(c, f, keys, n, out);
    m->fig[NEG_B] = time_batch(c, f, absent, n, out);
    m->fig[MIX_B] = time_batch(c, f, mixed, n, out);
    c->ops->stats(f, &m->memory, &m->bound, &m->tables);
    m->bits_per_item = (double)m->memory * 8.0 / (double)n;
    m->fpr = (double)fp / (double)n;
    m->fig[REMOVE] = 0;
    if (c->ops->remove) {
        t0 = bench_now();
        for (size_t k = 0; k < m->added; k++)
            c->ops->remove(f, keys[k]);
        m->fig[REMOVE] = rate(m->added, t0);
    }
    c->ops->destroy(f);
    m->line_reads = line_reads_per_second(m->memory, absent, n) / 1e6;
}

/* ---- the report ---- */

static void machine(FILE *out)
{
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *v = strchr(line, ':');
            if (v) {
                snprintf(model, sizeof model, "%s", v + 2);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    if (f)
        fclose(f);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    fprintf(out, "{\"cpu\": \"%s\", \"cpus\": %ld, \"memory_gib\": %.1f}", model, cpus,
            (double)pages * (double)page / (1 << 30));
}

int main(int argc, char **argv)
{
    unsigned runs = 5;
    const char *json = NULL, *list = default_configs, *sizes_arg = "1000000,10000000";
    bool huge = false;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--sizes") && a + 1 < argc)
            sizes_arg = argv[++a];
        else if (!strcmp(argv[a], "--huge"))
            huge = true;
        else if (!strcmp(argv[a], "--runs") && a + 1 < argc)
            runs = (unsigned)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--json") && a + 1 < argc)
            json = argv[++a];
        else if (!strcmp(argv[a], "--configs") && a + 1 < argc)
            list = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--sizes N,...] [--huge] [--runs R] [--configs LIST] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    config configs[64];
    unsigned nconfigs = 0;
    for (const char *p = list; *p && nconfigs < 64;) {
        size_t n = strcspn(p, ",");
        if (!parse_config(p, n, &configs[nconfigs++])) {
            fprintf(stderr, "bad configuration: %.*s\n", (int)n, p);
            return 2;
        }
        p += n + (p[n] == ',');
    }
    size_t sizes[8];
    unsigned nsizes = 0;
    for (const char *p = sizes_arg; *p && nsizes < 7;) {
        char *end;
        sizes[nsizes++] = strtoull(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    if (huge)
        sizes[nsizes++] = 100000000;
    if (runs < 1 || runs > 64 || !nsizes) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (json && !jf) {
        perror(json);
        return 2;
    }
    if (jf) {
        fprintf(jf, "{\"version\": \"%s\", \"runs\": %u, \"machine\": ", nidus_version(), runs);
        machine(jf);
        fprintf(jf, ", \"results\": [\n");
    }
    bool first_json = true;
    for (unsigned s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        uint64_t *keys = malloc(n * sizeof *keys), *absent = malloc(n * sizeof *absent),
                 *mixed = malloc(n * sizeof *mixed);
        bool *out = malloc(n);
        if (!keys || !absent || !mixed || !out) {
            fprintf(stderr, "not enough memory for %zu items\n", n);
            return 2;
        }
        uint64_t s1 = 1, s2 = 2, s3 = 3;
        for (size_t k = 0; k < n; k++) {
            keys[k] = bench_splitmix(&s1);
            absent[k] = bench_splitmix(&s2);
        }
        for (size_t k = 0; k < n; k++) /* half present, half absent, in random order */
            mixed[k] = (bench_splitmix(&s3) & 1) ? keys[bench_splitmix(&s3) % n] : absent[k];
        measured *m = calloc((size_t)nconfigs * runs, sizeof *m);
        for (unsigned r = 0; r < runs; r++) /* interleaved: a noisy neighbour slows every configuration alike */
            for (unsigned c = 0; c < nconfigs; c++)
                measure(&configs[c], n, keys, absent, mixed, out, &m[c * runs + r]);
        printf("nidus %s: %zu items, median of %u runs, Mops/s (fraction of the random-read limit)\n",
               nidus_version(), n, runs);
        printf("%-16s %6s %8s %8s %3s | %6s | %12s %12s %6s | %12s %12s %6s | %6s | %7s\n", "config", "bits",
               "fpr%", "bound%", "tbl", "insert", "present", "absent", "mixed", "present×B", "absent×B", "mixed×B",
               "remove", "limit");
        for (unsigned c = 0; c < nconfigs; c++) {
            double med[NFIG], v[64];
            for (unsigned x = 0; x < NFIG; x++) {
                for (unsigned r = 0; r < runs; r++)
                    v[r] = m[c * runs + r].fig[x];
                med[x] = bench_median(v, runs);
            }
            for (unsigned r = 0; r < runs; r++)
                v[r] = m[c * runs + r].line_reads;
            double lines = bench_median(v, runs);
            double limit = lines / configs[c].ops->lines_per_lookup; /* lookups/s if memory were all that counted */
            const measured *m0 = &m[c * runs];
            printf("%-16s %6.2f %8.4f %8.4f %3u | %6.2f | %5.2f (%.2f) %5.2f (%.2f) %6.2f | %5.2f (%.2f) %5.2f (%.2f) "
                   "%6.2f | %6.2f | %7.2f\n",
                   configs[c].name, m0->bits_per_item, 100 * m0->fpr, 100 * m0->bound, m0->tables, med[INSERT],
                   med[POS], med[POS] / limit, med[NEG], med[NEG] / limit, med[MIX], med[POS_B], med[POS_B] / limit,
                   med[NEG_B], med[NEG_B] / limit, med[MIX_B], med[REMOVE], limit);
            if (jf) {
                fprintf(jf, "%s  {\"items\": %zu, \"config\": \"%s\", \"kind\": \"%s\", \"bits_per_item\": %.4f, "
                            "\"fpr\": %.6g, \"error_bound\": %.6g, \"tables\": %u, \"memory_bytes\": %llu, "
                            "\"line_reads_mops\": %.3f, \"lookup_limit_mops\": %.3f",
                        first_json ? "" : ",\n", n, configs[c].name, configs[c].ops->name, m0->bits_per_item, m0->fpr,
                        m0->bound, m0->tables, (unsigned long long)m0->memory, lines, limit);
                for (unsigned x = 0; x < NFIG; x++)
                    fprintf(jf, ", \"%s_mops\": %.3f", fig_names[x], med[x]);
                fprintf(jf, "}");
                first_json = false;
            }
        }
        printf("\n");
        fflush(stdout);
        free(m);
        free(keys);
        free(absent);
        free(mixed);
        free(out);
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    return 0;
}
