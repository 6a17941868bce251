/* SPDX-License-Identifier: BSD-3-Clause */
/* A program that uses only the installed library: add a key, find it, miss another. */
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
    printf("nidus %s consumer: %s\n", nidus_version(), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
