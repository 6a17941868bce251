/* SPDX-License-Identifier: BSD-3-Clause */
/* A program that uses only the installed library: add a key, find it, miss another; a blocked Bloom filter the
 * same way (check-install.sh also builds it with NIDUS_INLINE: the inline headers need nothing uninstalled). */
#include <stdio.h>

#include <nidus/nidus.h>

int main(void)
{
    nidus_cuckoo_params params = {.capacity = 1000, .error_rate = 0.001};
    nidus_cuckoo *cf;
    if (nidus_cuckoo_new(&params, &cf) != NIDUS_OK)
        return 1;
    int ok = nidus_cuckoo_add(cf, "hello", 5) == NIDUS_OK && nidus_cuckoo_contains(cf, "hello", 5) &&
             nidus_cuckoo_count(cf, "hello", 5) == 1 && !nidus_cuckoo_contains(cf, "absent", 6);
    nidus_cuckoo_free(cf);
    nidus_bloom_params bp = {.capacity = 1000, .error_rate = 0.01, .layout = NIDUS_BLOOM_LAYOUT_BLOCKED};
    nidus_bloom *bf;
    if (nidus_bloom_new(&bp, &bf) != NIDUS_OK)
        return 1;
    bool added = false;
    ok = ok && nidus_bloom_add(bf, "hello", 5, &added) == NIDUS_OK && added && nidus_bloom_contains(bf, "hello", 5) &&
         nidus_bloom_contains_hash(bf, nidus_hash("hello", 5, 0)) && nidus_bloom_hash(bf, "hello", 5) == nidus_hash("hello", 5, 0);
    nidus_bloom_free(bf);
    printf("nidus %s consumer: %s\n", nidus_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
