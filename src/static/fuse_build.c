/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a binary fuse filter (fuse_filter.h has the layout): the keys are placed by peeling, as in Graf and
 * Lemire's construction. Each slot keeps how many keys touch it, the xor of their mixed hashes and the xor of
 * which of their three slots it is; a slot touched by one key gives that key away, which is then taken off its
 * other two slots, and so on. When every key was taken, the fingerprints are assigned in the reverse order.
 * For large sets the keys are first sorted by the segment their first slot falls in (a counting sort on the
 * top bits of the mixed hash), so that filling the counters walks the slots nearly in order instead of at
 * random: the counters are written through the cache instead of missing it at every key.
 *
 * Peeling fails when some keys share all three slots or form a cycle (rare for large sets, likelier for small
 * ones) and always when a hash is given twice. The first failure removes duplicate hashes (a sort); every
 * failure moves to the next construction seed, at most NIDUS_FUSE_TRIES times. */
#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "fuse_filter.h"
#include "hugepage.h"

#define NIDUS_FUSE_TRIES 100u
/* Below this many keys the counters fit in the cache: no segment sort. */
#define SORT_MIN_KEYS (1u << 16)

void nidus_fuse_shape_for(uint64_t n, nidus_fuse_shape *s)
{
    if (n == 0) {
        *s = (nidus_fuse_shape){.segment_length = 1};
        return;
    }
    /* Graf and Lemire's sizing for three slots a key: segments of about 3.33^log(n) * 4.76 slots, and a slot
     * count of 1.125 n for large sets, more below a million keys, where peeling needs more room to succeed. */
    double dn = n < 2 ? 2.0 : (double)n;
    int shift = (int)(log(dn) / log(3.33) + 2.25);
    if (shift > (int)NIDUS_FUSE_MAX_SEGMENT_BITS)
        shift = (int)NIDUS_FUSE_MAX_SEGMENT_BITS;
    uint64_t length = UINT64_C(1) << shift;
    double factor = 0.875 + 0.25 * log(1e6) / log(dn);
    if (factor < 1.125)
        factor = 1.125;
    uint64_t capacity = (uint64_t)(dn * factor + 0.5);
    uint64_t segments = (capacity + length - 1) / length;
    segments = segments > 3 ? segments - 2 : 1;
    *s = (nidus_fuse_shape){.segment_length = length, .segment_count = segments,
                            .segment_count_length = segments * length, .slots = (segments + 2) * length};
}

bool nidus_fuse_shape_ok(const nidus_fuse_shape *s, uint64_t keys)
{
    uint64_t L = s->segment_length;
    if (L == 0 || L > (UINT64_C(1) << NIDUS_FUSE_MAX_SEGMENT_BITS) || (L & (L - 1)))
        return false;
    if (keys == 0)
        return s->segment_count == 0 && s->segment_count_length == 0 && s->slots == 0;
    /* the slots of NIDUS_FUSE_MAX_KEYS keys at the smallest factor fit well under 2^33 */
    uint64_t max_slots = UINT64_C(1) << 33;
    return keys <= NIDUS_FUSE_MAX_KEYS && s->segment_count >= 1 && s->segment_count <= max_slots / L - 2 &&
           s->segment_count_length == s->segment_count * L && s->slots == (s->segment_count + 2) * L &&
           keys <= s->slots;
}

nidus_fuse *nidus_fuse_alloc_struct(const nidus_allocator *alloc)
{
    nidus_fuse *f = nidus_calloc(alloc, 1, sizeof *f);
    if (f)
        f->alloc = alloc;
    return f;
}

/* What one construction needs besides the filter's slots. */
typedef struct fuse_work {
    uint64_t *order;   /* keys' mixed hashes by segment, then the peeled keys' mixed hashes */
    uint8_t *which;    /* the peeled keys' own slot: 0, 1 or 2 */
    uint8_t *count;    /* per slot: (keys << 2) | xor of slot numbers */
    uint64_t *xhash;   /* per slot: xor of mixed hashes */
    uint32_t *queue;   /* slots with one key, to peel */
    uint64_t *starts;  /* segment sort: where each block starts */
    unsigned block_bits;
} fuse_work;

static void work_free(const nidus_allocator *a, fuse_work *w)
{
    nidus_free(a, w->order);
    nidus_free(a, w->which);
    nidus_free(a, w->count);
    nidus_free(a, w->xhash);
    nidus_free(a, w->queue);
    nidus_free(a, w->starts);
    *w = (fuse_work){0};
}

/* Allocates the work arrays for n keys laid out as `s`; sizes were checked by the caller. */
static nidus_status work_alloc(const nidus_allocator *a, const nidus_fuse_shape *s, size_t n, fuse_work *w)
{
    *w = (fuse_work){0};
    if (n >= SORT_MIN_KEYS) {
        unsigned b = 1;
        while ((UINT64_C(1) << b) < s->segment_count)
            b++;
        w->block_bits = b;
        w->starts = nidus_malloc(a, ((size_t)1 << b) * sizeof *w->starts + sizeof *w->starts);
    }
    size_t slots = (size_t)s->slots;
    w->order = nidus_malloc(a, n * sizeof *w->order);
    w->which = nidus_malloc(a, n);
    w->count = nidus_calloc(a, slots, 1); /* zeroed: the first attempt needs no clearing pass */
    w->xhash = nidus_calloc(a, slots, sizeof *w->xhash);
    w->queue = nidus_malloc(a, slots * sizeof *w->queue);
    if (!w->order || !w->which || !w->count || !w->xhash || !w->queue || (n >= SORT_MIN_KEYS && !w->starts)) {
        work_free(a, w);
        return NIDUS_ERR_NO_MEMORY;
    }
    return NIDUS_OK;
}

/* Adds mixed hash h to its three slots; false when a counter wrapped (a hash given 64 times). */
static inline bool add_key(fuse_work *w, const nidus_fuse_shape *s, uint64_t mask, uint64_t h)
{
    uint64_t p[3];
    nidus_fuse_slots(s, mask, h, p);
    uint8_t *c = w->count;
    uint64_t *x = w->xhash;
    c[p[0]] = (uint8_t)(c[p[0]] + 4);
    x[p[0]] ^= h;
    c[p[1]] = (uint8_t)((c[p[1]] + 4) ^ 1);
    x[p[1]] ^= h;
    c[p[2]] = (uint8_t)((c[p[2]] + 4) ^ 2);
    x[p[2]] ^= h;
    return (c[p[0]] >= 4) & (c[p[1]] >= 4) & (c[p[2]] >= 4);
}

/* The slot after and the one after that, for a key's own slot number 0, 1 or 2. */
static const uint8_t NEXT1[3] = {1, 2, 0}, NEXT2[3] = {2, 0, 1};

/* One construction with `cseed` over the n raw hashes: fills `slots` and returns true when every key peeled.
 * The counters, hashes and slots are zero on entry (freshly zeroed allocations, or cleared after a failure). */
static bool attempt(const uint64_t *raw, size_t n, const nidus_fuse_shape *s, uint64_t cseed, fuse_work *w,
                    uint8_t *slots, unsigned bits)
{
    size_t nslots = (size_t)s->slots;
    uint64_t mask = s->segment_length - 1;
    bool ok = true;
    if (w->starts) {
        /* counting sort by the top block_bits bits of the mixed hash, which order the first slots */
        unsigned shift = 64 - w->block_bits;
        size_t blocks = (size_t)1 << w->block_bits;
        memset(w->starts, 0, (blocks + 1) * sizeof *w->starts);
        for (size_t i = 0; i < n; i++)
            w->starts[(nidus_fuse_mix(raw[i], cseed) >> shift) + 1]++;
        for (size_t b = 1; b <= blocks; b++)
            w->starts[b] += w->starts[b - 1];
        for (size_t i = 0; i < n; i++) {
            uint64_t h = nidus_fuse_mix(raw[i], cseed);
            w->order[w->starts[h >> shift]++] = h;
        }
        for (size_t i = 0; i < n; i++)
            ok &= add_key(w, s, mask, w->order[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            ok &= add_key(w, s, mask, nidus_fuse_mix(raw[i], cseed));
    }
    if (!ok) {
        memset(w->count, 0, nslots);
        memset(w->xhash, 0, nslots * sizeof *w->xhash);
        return false;
    }

    /* branch-free queue writes: the slot is always stored, the count moves only when it has one key */
    uint8_t *c = w->count;
    uint64_t *x = w->xhash;
    uint32_t *q = w->queue;
    size_t queued = 0, peeled = 0;
    for (size_t i = 0; i < nslots; i++) {
        q[queued] = (uint32_t)i;
        queued += (c[i] >> 2) == 1;
    }
    while (queued > 0) {
        size_t i = q[--queued];
        if ((c[i] >> 2) != 1)
            continue; /* taken since it was queued */
        uint64_t h = x[i], p[3];
        unsigned own = c[i] & 3;
        c[i] = 0;
        x[i] = 0;
        w->order[peeled] = h;
        w->which[peeled++] = (uint8_t)own;
        nidus_fuse_slots(s, mask, h, p);
        unsigned j1 = NEXT1[own], j2 = NEXT2[own];
        size_t o1 = (size_t)p[j1], o2 = (size_t)p[j2];
        q[queued] = (uint32_t)o1; /* queued when this takes it from two keys to one */
        queued += (c[o1] >> 2) == 2;
        c[o1] = (uint8_t)((c[o1] - 4) ^ j1);
        x[o1] ^= h;
        q[queued] = (uint32_t)o2;
        queued += (c[o2] >> 2) == 2;
        c[o2] = (uint8_t)((c[o2] - 4) ^ j2);
        x[o2] ^= h;
    }
    if (peeled != n) {
        memset(c, 0, nslots);
        memset(x, 0, nslots * sizeof *x);
        return false;
    }

    for (size_t k = n; k-- > 0;) {
        uint64_t h = w->order[k], p[3];
        unsigned own = w->which[k];
        nidus_fuse_slots(s, mask, h, p);
        uint64_t a = p[NEXT1[own]], b = p[NEXT2[own]];
        uint32_t fp = nidus_fuse_fingerprint(h);
        if (bits == 8)
            slots[p[own]] = (uint8_t)(fp ^ slots[a] ^ slots[b]);
        else
            nidus_fuse_store16(slots, p[own],
                               (uint16_t)(fp ^ nidus_fuse_load16(slots, a) ^ nidus_fuse_load16(slots, b)));
    }
    return true;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The next construction seed after `s` (a different one every time for NIDUS_FUSE_TRIES steps). */
static uint64_t next_seed(uint64_t s) { return nidus_mix64(s + UINT64_C(0x9e3779b97f4a7c15)); }

/* Resolves the fingerprint width from the parameters; 0 when they are out of range. */
static unsigned width_for(const nidus_fuse_params *p)
{
    double e = p->error_rate;
    if (!(e == 0.0 || (e > 0.0 && e < 1.0)))
        return 0;
    if (p->fingerprint_bits != 0 && p->fingerprint_bits != 8 && p->fingerprint_bits != 16)
        return 0;
    if (p->fingerprint_bits)
        return e == 0.0 || e >= 1.0 / (double)(1u << p->fingerprint_bits) ? p->fingerprint_bits : 0;
    if (e == 0.0 || e >= 1.0 / 256.0)
        return 8;
    return e >= 1.0 / 65536.0 ? 16 : 0;
}

/* Checks that the arrays for n keys in shape s fit in size_t: the largest is 8 bytes a slot. */
static bool sizes_fit(const nidus_fuse_shape *s, size_t n)
{
    return s->slots <= SIZE_MAX / 8 && n <= SIZE_MAX / 8;
}

/* Sets up f's shape (the sizing's for n keys, or `forced`) and its slot array. */
static nidus_status shape_filter(nidus_fuse *f, size_t n, const nidus_fuse_shape *forced)
{
    if (forced)
        f->shape = *forced;
    else
        nidus_fuse_shape_for(n, &f->shape);
    if (!sizes_fit(&f->shape, n))
        return NIDUS_ERR_TOO_LARGE;
    f->segment_mask = f->shape.segment_length - 1;
    nidus_free(f->alloc, (void *)(uintptr_t)f->slots);
    f->slots = NULL;
    if (n == 0)
        return NIDUS_OK;
    f->slots = nidus_calloc(f->alloc, (size_t)f->shape.slots, f->bits / 8);
    if (!f->slots)
        return NIDUS_ERR_NO_MEMORY;
    /* a lookup reads three random slots */
    nidus_hugepage_advise((void *)(uintptr_t)f->slots, (size_t)nidus_fuse_slot_bytes(f));
    return NIDUS_OK;
}

nidus_status nidus_fuse_build_shaped(const nidus_fuse_params *params, const uint64_t *hashes, size_t n,
                                     const nidus_fuse_shape *forced, unsigned *tries, nidus_fuse **out)
{
    if (tries)
        *tries = 0;
    if (!params || !out || (n > 0 && !hashes))
        return NIDUS_ERR_INVALID_ARGUMENT;
    unsigned bits = width_for(params);
    if (!bits)
        return NIDUS_ERR_INVALID_ARGUMENT;
    if ((uint64_t)n > NIDUS_FUSE_MAX_KEYS)
        return NIDUS_ERR_TOO_LARGE;
    const nidus_allocator *a = nidus_alloc_pick(params->allocator);
    nidus_fuse *f = nidus_fuse_alloc_struct(a);
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    f->bits = bits;
    f->seed = params->seed;
    f->construction_seed = next_seed(params->seed);
    fuse_work w = {0};
    uint64_t *unique = NULL;
    const uint64_t *raw = hashes;
    nidus_status st = shape_filter(f, n, forced);
    if (!st && n > 0)
        st = work_alloc(a, &f->shape, n, &w);
    bool built = n == 0;
    for (unsigned t = 0; !st && !built && t < NIDUS_FUSE_TRIES; t++) {
        if (tries)
            *tries = t + 1;
        if (attempt(raw, n, &f->shape, f->construction_seed, &w, (uint8_t *)(uintptr_t)f->slots, bits)) {
            built = true;
            break;
        }
        if (!unique) { /* duplicates fail every seed: remove them once, and size for what is left */
            if (!(unique = nidus_malloc(a, n * sizeof *unique))) {
                st = NIDUS_ERR_NO_MEMORY;
                break;
            }
            memcpy(unique, hashes, n * sizeof *unique);
            qsort(unique, n, sizeof *unique, compare_u64);
            size_t m = 1;
            for (size_t i = 1; i < n; i++)
                if (unique[i] != unique[m - 1])
                    unique[m++] = unique[i];
            raw = unique;
            if (m != n) {
                n = m;
                work_free(a, &w);
                if (!(st = shape_filter(f, n, forced)))
                    st = work_alloc(a, &f->shape, n, &w);
                continue; /* the same seed again, without the duplicates */
            }
        }
        f->construction_seed = next_seed(f->construction_seed);
    }
    work_free(a, &w);
    nidus_free(a, unique);
    if (!st && !built)
        st = NIDUS_ERR_FULL;
    if (st) {
        nidus_fuse_free(f);
        return st;
    }
    f->keys = n;
    nidus_fuse_publish(f);
    *out = f;
    return NIDUS_OK;
}

nidus_status nidus_fuse_build_hash(const nidus_fuse_params *params, const uint64_t *hashes, size_t n,
                                   nidus_fuse **out)
{
    return nidus_fuse_build_shaped(params, hashes, n, NULL, NULL, out);
}

nidus_status nidus_fuse_build(const nidus_fuse_params *params, const void *const *keys, const size_t *lens,
                              size_t n, nidus_fuse **out)
{
    if (!params || !out || (n > 0 && (!keys || !lens)))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if (!width_for(params))
        return NIDUS_ERR_INVALID_ARGUMENT;
    if ((uint64_t)n > NIDUS_FUSE_MAX_KEYS || n > SIZE_MAX / sizeof(uint64_t))
        return NIDUS_ERR_TOO_LARGE;
    const nidus_allocator *a = nidus_alloc_pick(params->allocator);
    uint64_t *hashes = NULL;
    if (n > 0 && !(hashes = nidus_malloc(a, n * sizeof *hashes)))
        return NIDUS_ERR_NO_MEMORY;
    for (size_t i = 0; i < n; i++)
        hashes[i] = nidus_hash_bytes(keys[i], lens[i], params->seed);
    nidus_status st = nidus_fuse_build_hash(params, hashes, n, out);
    nidus_free(a, hashes);
    return st;
}
