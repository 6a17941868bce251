/* Filling one cuckoo table with keys from a splitmix64 stream until an add fails: the measurement behind the
 * placement reach and the design loads (load_threshold.c, reserve_load.c). */
#ifndef NIDUS_BENCH_TABLE_FILL_H
#define NIDUS_BENCH_TABLE_FILL_H

#include "bench_util.h"
#include "cuckoo_table_impl.h"

/* Adds keys from the stream at *state until one fails (or n are in, when n is not 0); returns the keys added. */
static inline uint64_t bench_fill_table(nidus_table *t, const nidus_allocator *a, uint64_t *state, uint64_t n)
{
    uint64_t added = 0;
    for (; !n || added < n; added++) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(t, bench_splitmix(state), &i, &fp);
        if (nidus_table_add(t, a, i, fp))
            break;
    }
    return added;
}

#endif
