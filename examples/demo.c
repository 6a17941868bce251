/* SPDX-License-Identifier: BSD-3-Clause */
/* A short tour of libnidus: build a filter, add keys, ask about keys, and read its cost. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nidus/nidus.h>

int main(void)
{
    nidus_cuckoo_params params = {.capacity = 1000000, .error_rate = 0.001};
    nidus_cuckoo *filter;
    nidus_status st = nidus_cuckoo_new(&params, &filter);
    if (st) {
        fprintf(stderr, "demo: cannot create filter: %s\n", nidus_strerror(st));
        return 1;
    }
    char key[32];
    for (int i = 0; i < 1000000; i++) {
        int n = snprintf(key, sizeof key, "user:%d", i);
        if ((st = nidus_cuckoo_add(filter, key, (size_t)n))) {
            fprintf(stderr, "demo: add %s: %s\n", key, nidus_strerror(st));
            return 1;
        }
    }
    unsigned false_positives = 0;
    for (int i = 0; i < 1000000; i++) {
        int n = snprintf(key, sizeof key, "visitor:%d", i);
        false_positives += nidus_cuckoo_contains(filter, key, (size_t)n);
    }
    nidus_cuckoo_add(filter, "user:42", 7);
    nidus_cuckoo_stats stats;
    nidus_cuckoo_get_stats(filter, &stats);
    printf("nidus %s cuckoo filter: b=%u f=%u, %" PRIu64 " items in %" PRIu64 " slots (load %.1f%%)\n",
           nidus_version(), stats.bucket_size, stats.fingerprint_bits, stats.items, stats.slots,
           100.0 * stats.load);
    printf("  contains(\"user:42\") = %d, count(\"user:42\") = %" PRIu64 ", contains(\"nobody\") = %d\n",
           nidus_cuckoo_contains(filter, "user:42", 7), nidus_cuckoo_count(filter, "user:42", 7),
           nidus_cuckoo_contains(filter, "nobody", 6));
    printf("  %.2f bits per item, false positives %.4f%% measured over 1M absent keys (bound %.4f%%)\n",
           stats.bits_per_item, false_positives / 1e4, 100.0 * stats.error_bound);
    nidus_cuckoo_free(filter);
    return 0;
}
