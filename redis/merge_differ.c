/* SPDX-License-Identifier: BSD-3-Clause */
/* The differences that keep filters from merging: see merge_differ.h. */
#include <stdio.h>

#include "merge_differ.h"

/* Two filters hash keys alike when a probe key hashes alike: the same seed (and hash function). */
static const char probe_key[] = "nidus seed probe";

bool nidus_cf_difference(const nidus_cuckoo *dst, const nidus_cuckoo *src, char *buf, size_t cap)
{
    nidus_cuckoo_stats x, y;
    nidus_cuckoo_get_stats(dst, &x);
    nidus_cuckoo_get_stats(src, &y);
    if (nidus_cuckoo_hash(dst, probe_key, sizeof probe_key - 1) != nidus_cuckoo_hash(src, probe_key, sizeof probe_key - 1))
        snprintf(buf, cap, "another hash seed");
    else if (x.bucket_size != y.bucket_size)
        snprintf(buf, cap, "bucket size %u, not %u", y.bucket_size, x.bucket_size);
    else if (x.fingerprint_bits != y.fingerprint_bits)
        snprintf(buf, cap, "fingerprint bits %u, not %u", y.fingerprint_bits, x.fingerprint_bits);
    else if (x.semi_sort != y.semi_sort)
        snprintf(buf, cap, "semi-sorting %s, not %s", y.semi_sort ? "on" : "off", x.semi_sort ? "on" : "off");
    else if (x.buckets != y.buckets)
        snprintf(buf, cap, "capacity: a first sub-filter of %llu buckets, not %llu", (unsigned long long)y.buckets,
                 (unsigned long long)x.buckets);
    else if (x.expansion != y.expansion)
        snprintf(buf, cap, "expansion %u, not %u", y.expansion, x.expansion);
    else
        return false;
    return true;
}

bool nidus_bf_difference(const nidus_bloom *dst, const nidus_bloom *src, char *buf, size_t cap)
{
    nidus_bloom_stats x, y;
    nidus_bloom_layer_stats lx = {0}, ly = {0};
    nidus_bloom_get_stats(dst, &x);
    nidus_bloom_get_stats(src, &y);
    (void)nidus_bloom_get_layer_stats(dst, 0, &lx);
    (void)nidus_bloom_get_layer_stats(src, 0, &ly);
    if (nidus_bloom_hash(dst, probe_key, sizeof probe_key - 1) != nidus_bloom_hash(src, probe_key, sizeof probe_key - 1))
        snprintf(buf, cap, "another hash seed");
    else if (x.error_rate != y.error_rate)
        snprintf(buf, cap, "error rate %g, not %g", y.error_rate, x.error_rate);
    else if (lx.capacity != ly.capacity)
        snprintf(buf, cap, "capacity %llu, not %llu", (unsigned long long)ly.capacity, (unsigned long long)lx.capacity);
    else if (x.expansion != y.expansion)
        snprintf(buf, cap, "expansion %u, not %u", y.expansion, x.expansion);
    else if (x.layout != y.layout)
        snprintf(buf, cap, "layout %s, not %s", y.layout ? "blocked" : "compact", x.layout ? "blocked" : "compact");
    else
        return false;
    return true;
}
