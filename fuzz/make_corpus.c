/* Writes seed corpora for the fuzz targets from real encodings: filters of several shapes, grown, with
 * duplicates and removes, whole (decode/) and as length-prefixed chunk streams (chunks/).
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (with DIR/decode and DIR/chunks existing)\n", argv[0]);
        return 2;
    }
    static const unsigned shapes[][5] = {{2, 8, 0, 1, 40}, {4, 12, 0, 2, 30}, {4, 9, 1, 1, 30}, {4, 21, 1, 0, 60},
                                         {8, 16, 0, 2, 20}, {1, 10, 0, 2, 50}, {4, 5, 1, 2, 30}, {2, 32, 0, 0, 30}};
    static uint8_t chunk[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
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
        /* the chunk stream, each chunk behind its u32 length */
        size_t cap = 1 << 16, used = 0;
        uint8_t *stream = malloc(cap);
        uint64_t cursor = 0, next;
        size_t n;
        while (!nidus_cuckoo_dump_chunk(cf, cursor, chunk, sizeof chunk, &n, &next) && n) {
            while (used + n + 4 > cap)
                stream = realloc(stream, cap *= 2);
            for (int b = 0; b < 4; b++)
                stream[used++] = (uint8_t)(n >> (8 * b));
            memcpy(stream + used, chunk, n);
            used += n;
            cursor = next;
        }
        write_file(argv[1], "chunks", s, stream, used);
        free(stream);
        nidus_cuckoo_free(cf);
    }
    return 0;
}
