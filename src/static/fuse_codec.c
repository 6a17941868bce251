/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding of the binary fuse filter, on the common codec (codec.h). Meta (format versions 7 and 8 on):
 *   seed u64 | construction seed u64 | keys u64 | segment count u64 | log2 segment length u8 |
 *   fingerprint bits u8 | 6 zeros
 * and one segment: the slots, (segment count + 2) * segment length of them, 1 or 2 bytes each (little-endian).
 * The decoder takes the shape from the meta, never from the key count (the sizing uses floating point, which
 * another machine could round differently), and checks it so that every lookup stays inside the slots. */
#include "alloc.h"
#include "codec.h"
#include "fuse_filter.h"
#include "hugepage.h"

#define FUSE_META 40u

uint64_t nidus_fuse_encoded_size(const nidus_fuse *f)
{
    return NIDUS_CODEC_PREFIX_FIXED + FUSE_META + nidus_fuse_slot_bytes(f) + NIDUS_CODEC_CHECKSUM_BYTES;
}

static unsigned log2_of(uint64_t power)
{
    unsigned b = 0;
    while ((UINT64_C(1) << b) < power)
        b++;
    return b;
}

nidus_status nidus_fuse_encode(const nidus_fuse *f, void *buf, size_t cap, size_t *written)
{
    if (!f || !buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint64_t total = nidus_fuse_encoded_size(f);
    if (total > cap)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t prefix[NIDUS_CODEC_PREFIX_FIXED + FUSE_META];
    nidus_writer w = {prefix};
    nidus_codec_put_prefix(&w, NIDUS_FORMAT_VERSION, NIDUS_KIND_FUSE, total, FUSE_META);
    nidus_put_u64(&w, f->seed);
    nidus_put_u64(&w, f->construction_seed);
    nidus_put_u64(&w, f->keys);
    nidus_put_u64(&w, f->shape.segment_count);
    nidus_put_u8(&w, log2_of(f->shape.segment_length));
    nidus_put_u8(&w, f->bits);
    for (unsigned z = 0; z < 6; z++)
        nidus_put_u8(&w, 0);
    nidus_segment seg = {f->slots, nidus_fuse_slot_bytes(f)};
    nidus_codec_write_whole(buf, total, prefix, sizeof prefix, &seg, 1);
    if (written)
        *written = (size_t)total;
    return NIDUS_OK;
}

nidus_status nidus_fuse_decode_mode(const void *buf, size_t len, const nidus_allocator *hook,
                                    nidus_decode_target target, nidus_decode_mode mode, nidus_fuse **out)
{
    if (!buf || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_reader r;
    size_t prefix, tail;
    nidus_status st = nidus_codec_open(buf, len, NIDUS_KIND_FUSE, NIDUS_FORMAT_VERSION, mode, &r, &prefix, &tail);
    if (st)
        return st;
    if (nidus_codec_meta_version(&r) < 4) /* the kind came with versions 7 and 8 */
        return NIDUS_ERR_CORRUPT;
    uint64_t seed = nidus_get_u64(&r), cseed = nidus_get_u64(&r), keys = nidus_get_u64(&r);
    uint64_t segments = nidus_get_u64(&r);
    unsigned segment_bits = nidus_get_u8(&r), bits = nidus_get_u8(&r), zero = 0;
    for (unsigned z = 0; z < 6; z++)
        zero |= nidus_get_u8(&r);
    if (r.bad || r.left != 0 || zero || (bits != 8 && bits != 16) || segment_bits > NIDUS_FUSE_MAX_SEGMENT_BITS)
        return NIDUS_ERR_CORRUPT;
    uint64_t L = UINT64_C(1) << segment_bits;
    nidus_fuse_shape shape = {.segment_length = L, .segment_count = segments};
    if (segments <= (UINT64_C(1) << 33) / L) { /* products below 2^34: no wrap */
        shape.segment_count_length = segments * L;
        shape.slots = keys ? (segments + 2) * L : 0;
    }
    if (!nidus_fuse_shape_ok(&shape, keys))
        return NIDUS_ERR_CORRUPT;
    uint64_t bytes = shape.slots * (bits / 8);
    if (bytes > len || prefix + bytes + tail != len)
        return NIDUS_ERR_CORRUPT;
    const nidus_allocator *a = nidus_alloc_pick(hook);
    nidus_fuse *f = nidus_fuse_alloc_struct(a);
    if (!f)
        return NIDUS_ERR_NO_MEMORY;
    f->seed = seed;
    f->construction_seed = cseed;
    f->keys = keys;
    f->shape = shape;
    f->segment_mask = L - 1;
    f->bits = bits;
    const uint8_t *p = (const uint8_t *)buf + prefix;
    if (target == NIDUS_DECODE_COPY) {
        uint8_t *copy = NULL;
        if (bytes && !(copy = nidus_malloc(a, (size_t)bytes))) {
            nidus_fuse_free(f);
            return NIDUS_ERR_NO_MEMORY;
        }
        if (bytes) {
            nidus_hugepage_advise(copy, (size_t)bytes); /* before the copy first touches the pages */
            memcpy(copy, p, (size_t)bytes);
        }
        f->slots = copy;
    } else { /* a view, or a writable mapping: the filter never writes its slots either way */
        f->slots = p;
        f->read_only = true;
    }
    nidus_fuse_publish(f);
    *out = f;
    return NIDUS_OK;
}

nidus_status nidus_fuse_decode(const void *buf, size_t len, const nidus_allocator *allocator, nidus_fuse **out)
{
    return nidus_fuse_decode_mode(buf, len, allocator, NIDUS_DECODE_COPY, NIDUS_DECODE_WHOLE, out);
}

nidus_status nidus_fuse_view(const void *buf, size_t len, const nidus_allocator *allocator, nidus_fuse **out)
{
    return nidus_fuse_decode_mode(buf, len, allocator, NIDUS_DECODE_VIEW, NIDUS_DECODE_WHOLE, out);
}

NIDUS_DEFINE_FILE_FUNCTIONS(nidus_fuse, nidus_fuse)
