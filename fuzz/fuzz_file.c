/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the filter file format (version 2: header checksum, per-block checksums, body; and version 1)
 * as nidus_file_verify checks it (its report must name a part inside the file) and as the library and the CLI
 * open it: framing, every block, then the body of the kind it names, checked and trusted (lazily verified),
 * copied, viewed and borrowed writable (nidus_filter_open's three modes). Whatever the bytes, each step returns a
 * status; nothing it accepts may crash a lookup, nor (a trusted writable filter, as `nidus add` / `nidus del`
 * write a file) an add, a remove or a compaction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_filter.h"
#include "cuckoo_filter.h"
#include "file_format.h"
#include "fuse_filter.h"
#include "window_filter.h"
#include "nidus/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe(nidus_kind kind, const nidus_file_layout *l, nidus_decode_mode mode)
{
    for (int view = 0; view < 3; view++) { /* copied, viewed, borrowed writable (nidus_filter's MAP_WRITABLE) */
        nidus_decode_target to = view == 2 ? NIDUS_DECODE_BORROW : view ? NIDUS_DECODE_VIEW : NIDUS_DECODE_COPY;
        if (kind == NIDUS_KIND_CUCKOO) {
            nidus_cuckoo *cf;
            if (nidus_cuckoo_decode_mode(l->body, l->body_bytes, NULL, to, mode, &cf))
                continue;
            for (uint64_t k = 0; k < 64; k++)
                (void)nidus_cuckoo_count_hash(cf, k * UINT64_C(0x9E3779B97F4A7C15));
            nidus_cuckoo_stats s;
            nidus_cuckoo_get_stats(cf, &s);
            /* Writes over slots no scan validated (semi-sorted ranks out of range, buckets out of order); small
             * filters only, so that growth stays small too. */
            if (view != 1 && mode == NIDUS_DECODE_BODY_TRUSTED && s.memory_bytes < (1u << 20) && s.expansion <= 4) {
                for (uint64_t k = 0; k < 32; k++) {
                    uint64_t h = k * UINT64_C(0xD6E8FEB86659FD93);
                    (void)nidus_cuckoo_add_hash(cf, h);
                    (void)nidus_cuckoo_remove_hash(cf, k % 3 ? h : ~h);
                }
                (void)nidus_cuckoo_compact(cf, NULL);
            }
            nidus_cuckoo_free(cf);
        } else if (kind == NIDUS_KIND_BLOOM) {
            nidus_bloom *bf;
            if (nidus_bloom_decode_mode(l->body, l->body_bytes, NULL, to, mode, &bf))
                continue;
            for (uint64_t k = 0; k < 64; k++)
                (void)nidus_bloom_contains_hash(bf, k * UINT64_C(0x9E3779B97F4A7C15));
            nidus_bloom_free(bf);
        } else if (kind == NIDUS_KIND_COUNTING_BLOOM) {
            nidus_counting_bloom *cb;
            if (nidus_counting_bloom_decode_mode(l->body, l->body_bytes, NULL, to, mode, &cb))
                continue;
            for (uint64_t k = 0; k < 64; k++)
                (void)nidus_counting_bloom_count_hash(cb, k * UINT64_C(0x9E3779B97F4A7C15));
            nidus_counting_bloom_free(cb);
        } else if (kind == NIDUS_KIND_FUSE) {
            nidus_fuse *ff;
            if (nidus_fuse_decode_mode(l->body, l->body_bytes, NULL, to, mode, &ff))
                continue;
            uint64_t h[64];
            bool out[64];
            for (uint64_t k = 0; k < 64; k++)
                h[k] = k * UINT64_C(0x9E3779B97F4A7C15);
            nidus_fuse_contains_many_hash(ff, h, 64, out);
            for (uint64_t k = 0; k < 64; k++)
                if (out[k] != nidus_fuse_contains_hash(ff, h[k]))
                    abort();
            nidus_fuse_free(ff);
        } else if (kind == NIDUS_KIND_WINDOW) {
            nidus_window *w;
            if (nidus_window_decode_mode(l->body, l->body_bytes, NULL, to, mode, &w))
                continue;
            for (uint64_t k = 0; k < 64; k++)
                (void)nidus_window_count_hash(w, k * UINT64_C(0x9E3779B97F4A7C15), k << 24);
            nidus_window_stats s;
            nidus_window_get_stats(w, 0, &s);
            if (view != 1 && s.memory_bytes < (1u << 20))
                for (uint64_t k = 0; k < 32; k++) { /* in place too (borrowed writable) */
                    uint64_t h = k * UINT64_C(0xD6E8FEB86659FD93);
                    (void)nidus_window_add_hash(w, h, s.latest_write + k * 1000);
                    (void)nidus_window_remove_hash(w, k % 3 ? h : ~h, s.latest_write + k * 1000);
                }
            nidus_window_free(w);
        }
    }
}

/* `nidus verify`'s check, whose report must name a failed part that lies inside the file. */
static void verify(const uint8_t *f, size_t size)
{
    nidus_file_report r = {.block = NIDUS_FILE_NO_BLOCK};
    nidus_status st = nidus_file_verify_bytes(f, size, NULL, &r);
    if ((st != NIDUS_OK) != (r.part != NULL) || (st && !r.problem))
        abort();
    if (st && (r.offset > size || r.length > size - r.offset))
        abort();
    if (r.block != NIDUS_FILE_NO_BLOCK && (r.block >= r.blocks || r.bad_blocks > r.blocks))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy the size of the input, so reads past it are caught. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    verify(copy, size);
    nidus_file_layout l;
    nidus_kind kind;
    if (!nidus_codec_peek(copy, size, &kind) && !nidus_file_parse(copy, size, &l)) {
        if (l.version == 1) {
            probe(kind, &l, NIDUS_DECODE_WHOLE);
        } else {
            /* the public check a caller's guard uses (nidus_file_block_check) says what the internal one says */
            nidus_file_blocks b = {copy, size, l.body_bytes, l.blocks, l.block_bytes, l.checksums, false};
            for (uint64_t k = 0; k < l.blocks; k++)
                if ((nidus_file_block_check(&b, k) == NIDUS_OK) != nidus_file_block_ok(&l, k))
                    abort();
            if (nidus_file_block_check(&b, l.blocks) != NIDUS_ERR_INVALID_ARGUMENT)
                abort();
            (void)nidus_file_verify_all(&l, NULL);
            probe(kind, &l, NIDUS_DECODE_BODY);
            probe(kind, &l, NIDUS_DECODE_BODY_TRUSTED);
        }
    }
    free(copy);
    return 0;
}
