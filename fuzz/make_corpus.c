/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes seed corpora for the fuzz targets from real encodings: cuckoo filters of several shapes, grown, with
 * duplicates and removes, two grown ones merged (sibling tables), and Bloom and counting Bloom filters, whole
 * (decode/) and as length-prefixed chunk streams (chunks/); the merged cuckoo filter and binary fuse filters
 * also whole and as files (file/); windowed filters whole (window/ and decode/), as chunks and as files: empty,
 * mid-stream, with duplicates past a pair's slots, with stash entries, after a silence, with a sweep step still
 * owed, and growing ones (one table, grown, shrunk again).
 * usage: nidus_fuzz_corpus DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nidus/nidus.h>

static void write_file(const char *dir, const char *sub, unsigned n, const void *p, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/seed-%02u", dir, sub, n);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
        perror(path);
        exit(2);
    }
}

typedef nidus_status (*dump_fn)(const void *f, uint64_t cursor, void *buf, size_t cap, size_t *len, uint64_t *next);

static uint8_t chunk[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];

/* The chunk stream of a filter, each chunk behind its u32 length; and the same as an RDB payload of the
 * module (a type byte, 0 cuckoo or 1 bloom, then the chunks as strings and an empty one), when rdb_type >= 0. */
static void write_chunks(const char *dir, unsigned n, const void *f, dump_fn dump, int rdb_type)
{
    size_t cap = 1 << 16, used = 0, len;
    uint8_t *stream = malloc(cap);
    uint64_t cursor = 0, next;
    while (!dump(f, cursor, chunk, sizeof chunk, &len, &next) && len) {
        while (used + len + 4 > cap)
            stream = realloc(stream, cap *= 2);
        for (int b = 0; b < 4; b++)
            stream[used++] = (uint8_t)(len >> (8 * b));
        memcpy(stream + used, chunk, len);
        used += len;
        cursor = next;
    }
    write_file(dir, "chunks", n, stream, used);
    if (rdb_type >= 0) {
        uint8_t *rdb = malloc(used + 5);
        rdb[0] = (uint8_t)rdb_type;
        memcpy(rdb + 1, stream, used);
        memset(rdb + 1 + used, 0, 4);
        write_file(dir, "rdb", n, rdb, used + 5);
        free(rdb);
    }
    free(stream);
}

static nidus_status dump_cuckoo(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_cuckoo_dump_chunk(f, c, b, cap, l, n);
}
static nidus_status dump_bloom(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_bloom_dump_chunk(f, c, b, cap, l, n);
}
static nidus_status dump_counting(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_counting_bloom_dump_chunk(f, c, b, cap, l, n);
}

static void bloom_seeds(const char *dir)
{
    nidus_bloom_params p = {.capacity = 20, .error_rate = 0.05, .expansion = 2};
    nidus_bloom *bf;
    if (nidus_bloom_new(&p, &bf))
        exit(2);
    for (uint64_t k = 0; k < 70; k++)
        (void)nidus_bloom_add_hash(bf, k * UINT64_C(0x9E3779B97F4A7C15), NULL);
    size_t len = (size_t)nidus_bloom_encoded_size(bf);
    uint8_t *buf = malloc(len);
    if (!buf || nidus_bloom_encode(bf, buf, len, &len))
        exit(2);
    write_file(dir, "decode", 50, buf, len);
    write_chunks(dir, 50, bf, dump_bloom, 1);
    free(buf);
    nidus_bloom_free(bf);
    nidus_counting_bloom_params q = {.capacity = 30, .error_rate = 0.05};
    nidus_counting_bloom *cb;
    if (nidus_counting_bloom_new(&q, &cb))
        exit(2);
    for (uint64_t k = 0; k < 40; k++)
        (void)nidus_counting_bloom_add_hash(cb, k % 25);
    len = (size_t)nidus_counting_bloom_encoded_size(cb);
    buf = malloc(len);
    if (!buf || nidus_counting_bloom_encode(cb, buf, len, &len))
        exit(2);
    write_file(dir, "decode", 51, buf, len);
    write_chunks(dir, 51, cb, dump_counting, -1);
    free(buf);
    nidus_counting_bloom_free(cb);
}

/* Binary fuse filters: 8 and 16 bits, empty, one key, with duplicates, past the segment sort's threshold;
 * whole encodings (decode/) and files (file/). */
static void fuse_seeds(const char *dir)
{
    static const struct { unsigned bits; size_t n, distinct; } shapes[] = {
        {8, 100, 100}, {16, 100, 100}, {8, 0, 0}, {16, 1, 1}, {8, 300, 120}, {8, 70000, 70000}};
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t n = shapes[s].n;
        uint64_t *h = malloc((n ? n : 1) * sizeof *h);
        if (!h)
            exit(2);
        for (size_t k = 0; k < n; k++)
            h[k] = (k % shapes[s].distinct) * UINT64_C(0x9E3779B97F4A7C15) + s;
        nidus_fuse_params p = {.fingerprint_bits = shapes[s].bits, .seed = s};
        nidus_fuse *f;
        if (nidus_fuse_build_hash(&p, h, n, &f))
            exit(2);
        size_t len = (size_t)nidus_fuse_encoded_size(f);
        uint8_t *buf = malloc(len);
        if (!buf || nidus_fuse_encode(f, buf, len, &len))
            exit(2);
        write_file(dir, "decode", 60 + s, buf, len);
        char path[512];
        snprintf(path, sizeof path, "%s/file/seed-fuse-%02u", dir, s);
        if (nidus_fuse_save_file(f, path))
            exit(2);
        free(buf);
        free(h);
        nidus_fuse_free(f);
    }
}

/* Two grown cuckoo filters merged: sibling tables (format version 9, and 10 as a file). */
static void sibling_seeds(const char *dir)
{
    nidus_cuckoo_params p = {.bucket_size = 4, .fingerprint_bits = 8, .expansion = 2, .capacity = 30,
                             .max_kicks = 20, .seed = 8};
    nidus_cuckoo *a, *b;
    if (nidus_cuckoo_new(&p, &a) || nidus_cuckoo_new(&p, &b))
        exit(2);
    for (uint64_t k = 0; k < 150; k++) {
        (void)nidus_cuckoo_add_hash(a, k * UINT64_C(0x9E3779B97F4A7C15));
        (void)nidus_cuckoo_add_hash(b, ~k * UINT64_C(0x9E3779B97F4A7C15));
    }
    for (int k = 0; k < 12; k++)
        (void)nidus_cuckoo_add_hash(b, 7);
    if (nidus_cuckoo_merge(a, b))
        exit(2);
    size_t len = (size_t)nidus_cuckoo_encoded_size(a);
    uint8_t *buf = malloc(len);
    if (!buf || nidus_cuckoo_encode(a, buf, len, &len) || buf[5] != NIDUS_FORMAT_VERSION_SIBLINGS)
        exit(2);
    write_file(dir, "decode", 8, buf, len);
    write_chunks(dir, 8, a, dump_cuckoo, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/file/seed-v10-siblings", dir);
    if (nidus_cuckoo_save_file(a, path))
        exit(2);
    free(buf);
    nidus_cuckoo_free(a);
    nidus_cuckoo_free(b);
}

static nidus_status dump_window(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)
{
    return nidus_window_dump_chunk(f, c, b, cap, l, n);
}

/* A windowed filter whole for its own target (window/) and the generic decoder (decode/), as chunks (chunks/)
 * and as a file (file/). */
static void write_window(const char *dir, unsigned n, const nidus_window *w)
{
    size_t len = (size_t)nidus_window_encoded_size(w);
    uint8_t *buf = malloc(len);
    if (!buf || nidus_window_encode(w, buf, len, NULL))
        exit(2);
    write_file(dir, "window", n, buf, len);
    write_file(dir, "decode", 70 + n, buf, len);
    write_chunks(dir, 70 + n, w, dump_window, -1);
    char path[512];
    snprintf(path, sizeof path, "%s/file/seed-window-%02u", dir, n);
    if (nidus_window_save_file(w, path))
        exit(2);
    free(buf);
}

static void window_seeds(const char *dir)
{
    static const unsigned shapes[][4] = {{2, 8, 50, 1000}, {4, 12, 40, 7}, {1, 10, 30, 100000}, {8, 29, 20, 3}};
    unsigned n = 0;
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        nidus_window_params p = {.bucket_size = shapes[s][0], .fingerprint_bits = shapes[s][1],
                                 .capacity = shapes[s][2], .window = shapes[s][3], .max_kicks = 20, .seed = s};
        nidus_window *w;
        if (nidus_window_new(&p, &w))
            exit(2);
        write_window(dir, n++, w); /* empty */
        uint64_t W = shapes[s][3], t = 1000003;
        for (uint64_t k = 0; k < 3 * shapes[s][2]; k++) /* a stream over three windows */
            (void)nidus_window_add_hash(w, k * UINT64_C(0x9E3779B97F4A7C15) + s, t + k * W / shapes[s][2]);
        t += 3 * W;
        for (int k = 0; k < 20; k++) /* duplicates past the pair's slots */
            (void)nidus_window_add(w, "dup", 3, t);
        (void)nidus_window_add_unique(w, "dup", 3, t + W / 2, NULL);
        (void)nidus_window_remove(w, "dup", 3, t + W / 2);
        write_window(dir, n++, w); /* mid-stream */
        for (uint64_t k = 0; k < 8 * shapes[s][2]; k++) /* past capacity: stash entries, full adds */
            (void)nidus_window_add_hash(w, k * UINT64_C(0xD1B54A32D192ED03) + s, t + W / 2);
        write_window(dir, n++, w);
        bool done;
        (void)nidus_window_advance(w, t + 2 * W, 1, &done); /* a step of one bucket: more owed */
        write_window(dir, n++, w);
        (void)nidus_window_add(w, "late", 4, t + 100 * W); /* after a silence */
        write_window(dir, n++, w);
        nidus_window_free(w);
    }
    /* filters that grow (encoding version 11): one table yet, grown to several (duplicates in a grown table),
     * a grown table kept by a later item, and released again after a silence; unbounded, and held by a
     * max_memory that refuses the burst's last tables */
    static const unsigned grows[][6] = {{4, 12, 40, 7, 2, 0}, {2, 8, 50, 1000, 1, 600}};
    for (unsigned s = 0; s < sizeof grows / sizeof grows[0]; s++) {
        nidus_window_params p = {.bucket_size = grows[s][0], .fingerprint_bits = grows[s][1],
                                 .capacity = grows[s][2], .window = grows[s][3], .max_kicks = 20, .seed = s,
                                 .expansion = grows[s][4], .max_memory = grows[s][5]};
        nidus_window *w;
        if (nidus_window_new(&p, &w))
            exit(2);
        write_window(dir, n++, w); /* empty */
        uint64_t W = grows[s][3], t = 2000003;
        for (uint64_t k = 0; k < 5 * grows[s][2]; k++) /* five capacities in one window */
            (void)nidus_window_add_hash(w, k * UINT64_C(0x9E3779B97F4A7C15) + s, t + k % 2);
        for (int k = 0; k < 20; k++)
            (void)nidus_window_add(w, "dup", 3, t + 1);
        write_window(dir, n++, w);
        (void)nidus_window_add(w, "kept", 4, t + W); /* in a grown table: the first is still at its size */
        bool done;
        (void)nidus_window_advance(w, t + W + W / 2, 1, &done);
        write_window(dir, n++, w);
        (void)nidus_window_add(w, "late", 4, t + 100 * W); /* after a silence: one table again */
        write_window(dir, n++, w);
        nidus_window_free(w);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (with DIR/decode, DIR/chunks, DIR/rdb, DIR/file and DIR/window existing)\n", argv[0]);
        return 2;
    }
    static const unsigned shapes[][5] = {{2, 8, 0, 1, 40}, {4, 12, 0, 2, 30}, {4, 9, 1, 1, 30}, {4, 21, 1, 0, 60},
                                         {8, 16, 0, 2, 20}, {1, 10, 0, 2, 50}, {4, 5, 1, 2, 30}, {2, 32, 0, 0, 30}};
    for (unsigned s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        nidus_cuckoo_params p = {.bucket_size = shapes[s][0], .fingerprint_bits = shapes[s][1],
                                 .semi_sort = shapes[s][2], .expansion = shapes[s][3], .capacity = shapes[s][4],
                                 .max_kicks = 20, .seed = s};
        nidus_cuckoo *cf;
        if (nidus_cuckoo_new(&p, &cf))
            return 2;
        for (uint64_t k = 0; k < 3 * shapes[s][4]; k++)
            (void)nidus_cuckoo_add_hash(cf, k * UINT64_C(0x9E3779B97F4A7C15) + s);
        for (int k = 0; k < 20; k++)
            (void)nidus_cuckoo_add_hash(cf, 7);
        (void)nidus_cuckoo_remove_hash(cf, s * UINT64_C(0x9E3779B97F4A7C15) + s);
        size_t len = (size_t)nidus_cuckoo_encoded_size(cf);
        uint8_t *buf = malloc(len);
        if (!buf || nidus_cuckoo_encode(cf, buf, len, &len))
            return 2;
        write_file(argv[1], "decode", s, buf, len);
        free(buf);
        write_chunks(argv[1], s, cf, dump_cuckoo, 0);
        nidus_cuckoo_free(cf);
    }
    sibling_seeds(argv[1]);
    bloom_seeds(argv[1]);
    window_seeds(argv[1]);
    fuse_seeds(argv[1]);
    return 0;
}
