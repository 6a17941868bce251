/* SPDX-License-Identifier: BSD-3-Clause */
/* Property episodes for the binary fuse filter: a random set of keys (duplicates among them, by key or by hash,
 * 8 or 16 bits, sometimes allocations failing), built, then encoded, decoded and viewed. After the build no key
 * of the set is missing; a failed build is NIDUS_ERR_NO_MEMORY with nothing left allocated; the decoded copy and
 * the view answer every probe (members and others) as the built filter does, one at a time and batched, and
 * re-encode to the same bytes. */
#include "property.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* out[i] for each of the n probes, single answers checked against the batched ones. */
static void answers(const nidus_fuse *f, const uint64_t *h, size_t n, bool *out)
{
    nidus_fuse_contains_many_hash(f, h, n, out);
    for (size_t i = 0; i < n; i++)
        PROP_CHECK(out[i] == nidus_fuse_contains_hash(f, h[i]));
}

uint64_t prop_fuse_episode(uint64_t seed, uint64_t budget)
{
    prop_rng r = {seed};
    prop_at.family = "fuse";
    prop_at.op = "build";
    prop_at.step = 0;
    static const unsigned fail[] = {0, 0, 0, 5, 50};
    prop_alloc a;
    prop_alloc_init(&a, prop_next(&r), fail[prop_range(&r, 0, 4)]);
    unsigned pick = (unsigned)prop_range(&r, 0, 9);
    uint64_t n = pick < 5 ? prop_range(&r, 0, 64) : pick < 9 ? prop_range(&r, 65, 5000) : prop_range(&r, 5001, 150000);
    if (n / 16 > budget)
        n = budget * 16;
    uint64_t distinct = prop_chance(&r, 1, 3) ? prop_range(&r, 1, n ? n : 1) : n; /* ids repeat below n */
    nidus_fuse_params p = {.fingerprint_bits = prop_chance(&r, 1, 2) ? 8 : 16, .seed = prop_next(&r),
                           .allocator = &a.hook};
    bool by_key = prop_chance(&r, 1, 2);
    uint64_t salt = prop_next(&r);
    snprintf(prop_at.config, sizeof prop_at.config, "fuse keys %" PRIu64 " distinct %" PRIu64 " bits %u %s fail 1/%u",
             n, distinct, p.fingerprint_bits, by_key ? "by key" : "by hash", a.fail_one_in);
    size_t m = (size_t)n;
    prop_keybuf *kb = malloc((m ? m : 1) * sizeof *kb);
    const void **keys = malloc((m ? m : 1) * sizeof *keys);
    size_t *lens = malloc((m ? m : 1) * sizeof *lens);
    uint64_t *hashes = malloc((m ? m : 1) * sizeof *hashes);
    size_t probes = m + 256;
    uint64_t *probe = malloc(probes * sizeof *probe);
    bool *want = malloc(probes), *got = malloc(probes);
    if (!kb || !keys || !lens || !hashes || !probe || !want || !got)
        exit(2);
    for (size_t i = 0; i < m; i++) {
        kb[i] = prop_key(salt, prop_range(&r, 0, distinct ? distinct - 1 : 0));
        keys[i] = kb[i].b;
        lens[i] = kb[i].n;
        hashes[i] = nidus_fuse_hash(&p, keys[i], lens[i]);
    }
    nidus_fuse *f = NULL;
    nidus_status st;
    for (;;) {
        a.armed = true;
        st = by_key ? nidus_fuse_build(&p, keys, lens, m, &f) : nidus_fuse_build_hash(&p, hashes, m, &f);
        a.armed = false;
        if (st == NIDUS_OK)
            break;
        PROP_CHECK(st == NIDUS_ERR_NO_MEMORY && a.fail_one_in && a.live == 0 && f == NULL);
    }
    prop_at.op = "lookup";
    for (size_t i = 0; i < m; i++) {
        PROP_CHECK(nidus_fuse_contains(f, keys[i], lens[i]));
        probe[i] = hashes[i];
    }
    for (size_t i = m; i < probes; i++)
        probe[i] = prop_next(&r);
    answers(f, probe, probes, want);
    for (size_t i = 0; i < m; i++)
        PROP_CHECK(want[i]);
    nidus_fuse_stats s;
    nidus_fuse_get_stats(f, &s);
    PROP_CHECK(s.keys <= n && (n == 0) == (s.keys == 0) && s.fingerprint_bits == p.fingerprint_bits);

    prop_at.op = "encode";
    prop_bytes enc = {0}, again = {0};
    size_t len = (size_t)nidus_fuse_encoded_size(f), written = 0;
    prop_bytes_reserve(&enc, len);
    prop_bytes_reserve(&again, len);
    PROP_CHECK(nidus_fuse_encode(f, enc.p, len, &written) == NIDUS_OK && written == len);
    for (int view = 0; view < 2; view++) {
        prop_at.op = view ? "view" : "decode";
        nidus_fuse *d = NULL;
        for (;;) {
            a.armed = true;
            st = (view ? nidus_fuse_view : nidus_fuse_decode)(enc.p, len, &a.hook, &d);
            a.armed = false;
            if (st == NIDUS_OK)
                break;
            PROP_CHECK(st == NIDUS_ERR_NO_MEMORY && a.fail_one_in && d == NULL);
        }
        answers(d, probe, probes, got);
        PROP_CHECK(memcmp(want, got, probes) == 0);
        PROP_CHECK(nidus_fuse_encode(d, again.p, len, &written) == NIDUS_OK && written == len);
        PROP_CHECK(memcmp(enc.p, again.p, len) == 0);
        nidus_fuse_free(d);
    }
    nidus_fuse_free(f);
    prop_at.op = "free";
    PROP_CHECK(a.live == 0);
    prop_bytes_free(&enc);
    prop_bytes_free(&again);
    free(kb), free(keys), free(lens), free(hashes), free(probe), free(want), free(got);
    return 1 + n / 16; /* one build and n lookups, weighed against the other families' single operations */
}
