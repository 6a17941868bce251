/* Internal: the cuckoo filter object behind the public handle. */
#ifndef NIDUS_SRC_CUCKOO_FILTER_H
#define NIDUS_SRC_CUCKOO_FILTER_H

#include "cuckoo_table.h"
#include "nidus/cuckoo.h"

struct nidus_cuckoo {
    nidus_allocator alloc;
    uint64_t seed;
    nidus_table table;
};

#endif
