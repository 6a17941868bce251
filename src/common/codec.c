/* SPDX-License-Identifier: BSD-3-Clause */
/* The byte-level pieces of the encoding: see codec.h for the layout. */
#include <string.h>

#define XXH_INLINE_ALL
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "alloc.h"
#include "codec.h"
#include "nidus/filter.h"

static const uint8_t magic[5] = {'N', 'I', 'D', 'U', 'S'};
static const uint8_t chunk_magic[4] = {'N', 'D', 'C', 'K'};

void nidus_put_u8(nidus_writer *w, unsigned v) { *w->p++ = (uint8_t)v; }

void nidus_put_u32(nidus_writer *w, uint32_t v)
{
    for (unsigned k = 0; k < 4; k++)
        *w->p++ = (uint8_t)(v >> (8 * k));
}

void nidus_put_u64(nidus_writer *w, uint64_t v)
{
    for (unsigned k = 0; k < 8; k++)
        *w->p++ = (uint8_t)(v >> (8 * k));
}

void nidus_put_bytes(nidus_writer *w, const void *src, size_t n)
{
    if (n)
        memcpy(w->p, src, n);
    w->p += n;
}

static const uint8_t *take(nidus_reader *r, size_t n)
{
    if (r->bad || r->left < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

unsigned nidus_get_u8(nidus_reader *r)
{
    const uint8_t *p = take(r, 1);
    return p ? p[0] : 0;
}

uint32_t nidus_read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t read_le64(const uint8_t *p) { return nidus_read_le32(p) | (uint64_t)nidus_read_le32(p + 4) << 32; }

uint32_t nidus_get_u32(nidus_reader *r)
{
    const uint8_t *p = take(r, 4);
    return p ? nidus_read_le32(p) : 0;
}

uint64_t nidus_get_u64(nidus_reader *r)
{
    const uint8_t *p = take(r, 8);
    return p ? read_le64(p) : 0;
}

const uint8_t *nidus_get_bytes(nidus_reader *r, size_t n) { return take(r, n); }

/* Visits the pieces of stream range [offset, offset + n) segment by segment. */
#define FOR_EACH_PIECE(segs, count, offset, n, BODY)                                                           \
    do {                                                                                                       \
        uint64_t base_ = 0, done_ = 0;                                                                         \
        for (unsigned s_ = 0; s_ < (count) && done_ < (n); s_++) {                                             \
            uint64_t end_ = base_ + (segs)[s_].bytes;                                                          \
            uint64_t at_ = (offset) + done_;                                                                   \
            if (at_ < end_) {                                                                                  \
                uint64_t within = at_ - base_;                                                                 \
                uint64_t piece = end_ - at_ < (n)-done_ ? end_ - at_ : (n)-done_;                              \
                const nidus_segment *seg = &(segs)[s_];                                                        \
                BODY;                                                                                          \
                done_ += piece;                                                                                \
            }                                                                                                  \
            base_ = end_;                                                                                      \
        }                                                                                                      \
    } while (0)

void nidus_segments_read(const nidus_segment *segs, unsigned count, uint64_t offset, uint8_t *out, uint64_t n)
{
    FOR_EACH_PIECE(segs, count, offset, n, memcpy(out + done_, seg->data + within, (size_t)piece));
}

void nidus_segments_write(const nidus_segment *segs, unsigned count, uint64_t offset, const uint8_t *in,
                          uint64_t n)
{
    /* The segments of a filter being loaded point into its own writable memory. */
    FOR_EACH_PIECE(segs, count, offset, n,
                   memcpy((uint8_t *)(uintptr_t)seg->data + within, in + done_, (size_t)piece));
}

uint64_t nidus_codec_hash(const void *p, size_t n) { return XXH3_64bits(p, n); }

uint64_t nidus_codec_checksum(const uint8_t *prefix, size_t prefix_bytes, const nidus_segment *segs,
                              unsigned count)
{
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, prefix, prefix_bytes);
    for (unsigned s = 0; s < count; s++)
        if (segs[s].bytes)
            XXH3_64bits_update(&state, segs[s].data, (size_t)segs[s].bytes);
    return XXH3_64bits_digest(&state);
}

void nidus_codec_put_prefix(nidus_writer *w, unsigned version, nidus_kind kind, uint64_t total, uint32_t meta_bytes)
{
    nidus_put_bytes(w, magic, sizeof magic);
    nidus_put_u8(w, version);
    nidus_put_u8(w, kind);
    nidus_put_u8(w, 0);
    nidus_put_u64(w, total);
    nidus_put_u32(w, meta_bytes);
}

nidus_status nidus_codec_peek(const void *buf, size_t len, nidus_kind *kind)
{
    const uint8_t *p = buf;
    if (!buf || len < 16 || memcmp(p, magic, sizeof magic))
        return NIDUS_ERR_CORRUPT;
    if (p[5] < 1 || p[5] > NIDUS_FILE_FORMAT_VERSION_WINDOW_GROWN)
        return NIDUS_ERR_VERSION;
    if (kind)
        *kind = (nidus_kind)p[6];
    return NIDUS_OK;
}

static nidus_status check_prefix(const uint8_t *buf, size_t len, nidus_kind kind, uint64_t *total,
                                 nidus_reader *meta, unsigned want_version)
{
    nidus_reader r = {buf, len, false};
    const uint8_t *m = nidus_get_bytes(&r, sizeof magic);
    if (!m || memcmp(m, magic, sizeof magic))
        return NIDUS_ERR_CORRUPT;
    unsigned version = nidus_get_u8(&r);
    if (r.bad)
        return NIDUS_ERR_CORRUPT;
    /* this one or an earlier one of its kind (odd: encodings, even: framed files; nidus/codec.h) */
    if (version < 1 || version > want_version || version % 2 != want_version % 2)
        return NIDUS_ERR_VERSION;
    unsigned k = nidus_get_u8(&r), flags = nidus_get_u8(&r);
    uint64_t declared = nidus_get_u64(&r);
    uint32_t meta_bytes = nidus_get_u32(&r);
    if (r.bad || flags != 0)
        return NIDUS_ERR_CORRUPT;
    if (k != (unsigned)kind)
        return NIDUS_ERR_UNSUPPORTED;
    if (total && *total && declared != *total)
        return NIDUS_ERR_CORRUPT;
    /* a whole encoding ends in its checksum; a framed file's body has none (and an empty fuse filter's body
     * nothing after its meta) */
    uint64_t tail = want_version % 2 ? NIDUS_CODEC_CHECKSUM_BYTES : 0;
    if (declared < NIDUS_CODEC_PREFIX_FIXED + (uint64_t)meta_bytes + tail)
        return NIDUS_ERR_CORRUPT;
    const uint8_t *mp = nidus_get_bytes(&r, meta_bytes);
    if (!mp)
        return NIDUS_ERR_CORRUPT;
    if (total)
        *total = declared;
    *meta = (nidus_reader){mp, meta_bytes, false};
    return NIDUS_OK;
}

nidus_status nidus_codec_check_prefix(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                                      uint64_t *total, nidus_reader *meta)
{
    return check_prefix(buf, len, kind, total, meta, newest);
}

nidus_status nidus_codec_open(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                              nidus_decode_mode mode, nidus_reader *meta, size_t *prefix_bytes, size_t *tail)
{
    *tail = mode == NIDUS_DECODE_WHOLE ? NIDUS_CODEC_CHECKSUM_BYTES : 0;
    if (mode == NIDUS_DECODE_WHOLE)
        return nidus_codec_open_whole(buf, len, kind, newest, meta, prefix_bytes);
    if (!buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint64_t total = len;
    nidus_status st = check_prefix(buf, len, kind, &total, meta, newest + 1u); /* its framed file's version */
    if (st)
        return st;
    if (total != len)
        return NIDUS_ERR_CORRUPT;
    *prefix_bytes = NIDUS_CODEC_PREFIX_FIXED + meta->left;
    return NIDUS_OK;
}

void nidus_chunk_frame(uint8_t *out, uint32_t seq, uint64_t token, const uint8_t *payload, uint32_t n)
{
    nidus_writer w = {out};
    nidus_put_bytes(&w, chunk_magic, sizeof chunk_magic);
    nidus_put_u32(&w, seq);
    nidus_put_u64(&w, token);
    nidus_put_u32(&w, n);
    if (payload != w.p)
        memmove(w.p, payload, n);
    w.p += n;
    nidus_put_u64(&w, XXH3_64bits(out, NIDUS_CHUNK_HEADER_BYTES + (size_t)n));
}

nidus_status nidus_chunk_parse(const uint8_t *chunk, size_t len, uint32_t *seq, uint64_t *token,
                               const uint8_t **payload, uint32_t *n)
{
    nidus_reader r = {chunk, len, false};
    const uint8_t *m = nidus_get_bytes(&r, sizeof chunk_magic);
    if (!m || memcmp(m, chunk_magic, sizeof chunk_magic))
        return NIDUS_ERR_CORRUPT;
    *seq = nidus_get_u32(&r);
    *token = nidus_get_u64(&r);
    *n = nidus_get_u32(&r);
    if (r.bad || *n > NIDUS_CHUNK_PAYLOAD_MAX || len != (size_t)*n + NIDUS_CHUNK_OVERHEAD)
        return NIDUS_ERR_CORRUPT;
    *payload = chunk + NIDUS_CHUNK_HEADER_BYTES;
    if (NIDUS_CHECKSUM_BAD(read_le64(chunk + NIDUS_CHUNK_HEADER_BYTES + *n),
                           XXH3_64bits(chunk, NIDUS_CHUNK_HEADER_BYTES + (size_t)*n)))
        return NIDUS_ERR_CORRUPT;
    return NIDUS_OK;
}

void nidus_codec_write_whole(uint8_t *out, uint64_t total, const uint8_t *prefix, size_t prefix_bytes,
                             const nidus_segment *segs, unsigned count)
{
    memcpy(out, prefix, prefix_bytes);
    uint64_t body = total - prefix_bytes - NIDUS_CODEC_CHECKSUM_BYTES;
    nidus_segments_read(segs, count, 0, out + prefix_bytes, body);
    nidus_writer w = {out + prefix_bytes + body};
    nidus_put_u64(&w, XXH3_64bits(out, (size_t)(total - NIDUS_CODEC_CHECKSUM_BYTES)));
}

nidus_status nidus_codec_open_whole(const uint8_t *buf, size_t len, nidus_kind kind, unsigned newest,
                                    nidus_reader *meta, size_t *prefix_bytes)
{
    if (!buf)
        return NIDUS_ERR_INVALID_ARGUMENT;
    uint64_t total = len;
    nidus_status st = nidus_codec_check_prefix(buf, len, kind, newest, &total, meta);
    if (st)
        return st;
    if (total != len)
        return NIDUS_ERR_CORRUPT;
    if (NIDUS_CHECKSUM_BAD(read_le64(buf + len - NIDUS_CODEC_CHECKSUM_BYTES),
                           XXH3_64bits(buf, len - NIDUS_CODEC_CHECKSUM_BYTES)))
        return NIDUS_ERR_CORRUPT;
    *prefix_bytes = NIDUS_CODEC_PREFIX_FIXED + meta->left;
    return NIDUS_OK;
}

/* Copies the checksum's part of stream bytes [offset, offset + n) (those past `body`, the segments' end) into `out`. */
static void put_checksum_part(const uint8_t *checksum, uint64_t body, uint64_t offset, uint64_t n, uint8_t *out)
{
    if (offset + n > body) {
        uint64_t from = offset > body ? offset - body : 0;
        memcpy(out + (body > offset ? body - offset : 0), checksum + from, (size_t)(offset + n - body - from));
    }
}

/* Copies stream bytes [offset, offset + n) into `out`: the segments, then the checksum as one more. */
static void read_stream(const nidus_segment *segs, unsigned count, const uint8_t *checksum, uint64_t stream,
                        uint64_t offset, uint64_t n, uint8_t *out)
{
    uint64_t body = stream - NIDUS_CODEC_CHECKSUM_BYTES;
    if (offset < body)
        nidus_segments_read(segs, count, offset, out, (offset + n < body ? offset + n : body) - offset);
    put_checksum_part(checksum, body, offset, n, out);
}

nidus_status nidus_codec_dump_chunk(const uint8_t *prefix, size_t prefix_bytes, const nidus_segment *segs,
                                    unsigned count, uint64_t cursor, uint8_t *buf, size_t cap, size_t *len,
                                    uint64_t *next, nidus_dump_sum *sum)
{
    uint64_t token = XXH3_64bits(prefix, prefix_bytes), stream = NIDUS_CODEC_CHECKSUM_BYTES;
    for (unsigned s = 0; s < count; s++)
        stream += segs[s].bytes;
    uint64_t body = stream - NIDUS_CODEC_CHECKSUM_BYTES;
    if (sum && sum->token != token)
        sum->next = 0; /* it followed another encoding: begun again at the header chunk */
    if (cursor == 0) {
        if (cap < prefix_bytes + NIDUS_CHUNK_OVERHEAD)
            return NIDUS_ERR_TOO_LARGE;
        nidus_chunk_frame(buf, 0, token, prefix, (uint32_t)prefix_bytes);
        *len = prefix_bytes + NIDUS_CHUNK_OVERHEAD;
        *next = 1;
        if (sum && !sum->next) {
            XXH3_64bits_reset(sum->hash);
            XXH3_64bits_update(sum->hash, prefix, prefix_bytes);
            sum->token = token;
            sum->next = 1;
            sum->covered = 0;
        }
        return NIDUS_OK;
    }
    uint64_t offset = (cursor - 1) * NIDUS_CHUNK_PAYLOAD_MAX;
    if (offset >= stream) {
        *len = 0;
        *next = 0;
        return NIDUS_OK;
    }
    uint64_t n = stream - offset < NIDUS_CHUNK_PAYLOAD_MAX ? stream - offset : NIDUS_CHUNK_PAYLOAD_MAX;
    if (cap < n + NIDUS_CHUNK_OVERHEAD)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *payload = buf + NIDUS_CHUNK_HEADER_BYTES;
    uint64_t part = offset < body ? (offset + n < body ? offset + n : body) - offset : 0; /* segment bytes */
    if (part)
        nidus_segments_read(segs, count, offset, payload, part);
    if (sum && sum->next == cursor && sum->covered == (offset < body ? offset : body)) { /* in order */
        XXH3_64bits_update(sum->hash, payload, (size_t)part); /* the bytes just read, while in cache */
        sum->covered += part;
        sum->next++;
    }
    if (offset + n > body) { /* this chunk carries (some of) the checksum */
        bool summed = sum && sum->next && sum->covered == body;
        uint8_t checksum[NIDUS_CODEC_CHECKSUM_BYTES];
        nidus_writer w = {checksum};
        nidus_put_u64(&w, summed ? XXH3_64bits_digest(sum->hash) : nidus_codec_checksum(prefix, prefix_bytes, segs, count));
        if (sum)
            *(summed ? &sum->digests : &sum->wholes) += 1;
        put_checksum_part(checksum, body, offset, n, payload);
    }
    nidus_chunk_frame(buf, (uint32_t)cursor, token, payload, (uint32_t)n);
    *len = (size_t)n + NIDUS_CHUNK_OVERHEAD;
    *next = cursor + 1;
    return NIDUS_OK;
}

nidus_status nidus_codec_dump_received(const nidus_chunk_loader *l, const nidus_segment *segs, unsigned count,
                                       uint64_t cursor, uint8_t *buf, size_t cap, size_t *len, uint64_t *next)
{
    if (l->failed)
        return NIDUS_ERR_CORRUPT;
    if (cursor == 0) {
        if (cap < l->prefix_bytes + NIDUS_CHUNK_OVERHEAD)
            return NIDUS_ERR_TOO_LARGE;
        nidus_chunk_frame(buf, 0, l->token, l->prefix, (uint32_t)l->prefix_bytes);
        *len = l->prefix_bytes + NIDUS_CHUNK_OVERHEAD;
        *next = 1;
        return NIDUS_OK;
    }
    if (cursor >= l->next_seq) {
        *len = 0;
        *next = 0;
        return NIDUS_OK;
    }
    /* every chunk before next_seq landed whole: its bytes are in the segments and the loader's checksum */
    uint64_t offset = (cursor - 1) * NIDUS_CHUNK_PAYLOAD_MAX;
    uint64_t n = l->stream - offset < NIDUS_CHUNK_PAYLOAD_MAX ? l->stream - offset : NIDUS_CHUNK_PAYLOAD_MAX;
    if (cap < n + NIDUS_CHUNK_OVERHEAD)
        return NIDUS_ERR_TOO_LARGE;
    uint8_t *payload = buf + NIDUS_CHUNK_HEADER_BYTES;
    read_stream(segs, count, l->checksum, l->stream, offset, n, payload);
    nidus_chunk_frame(buf, (uint32_t)cursor, l->token, payload, (uint32_t)n);
    *len = (size_t)n + NIDUS_CHUNK_OVERHEAD;
    *next = cursor + 1;
    return NIDUS_OK;
}

nidus_status nidus_codec_open_header(const uint8_t *payload, uint32_t n, uint64_t token, nidus_kind kind,
                                     unsigned newest, nidus_reader *meta, uint64_t *total)
{
    *total = 0;
    nidus_status st = nidus_codec_check_prefix(payload, n, kind, newest, total, meta);
    if (st)
        return st;
    if (NIDUS_CODEC_PREFIX_FIXED + meta->left != n || NIDUS_CHECKSUM_BAD(token, XXH3_64bits(payload, n)))
        return NIDUS_ERR_CORRUPT;
    return NIDUS_OK;
}

/* XXH3_state_t asks for 64-byte alignment (its accumulators are read with aligned vector loads), more than an
 * allocator promises: the block has room to round up to it. */
#define HASH_ALIGN 64u

nidus_status nidus_chunk_loader_hash_begin(nidus_chunk_loader *l, const nidus_allocator *a)
{
    void *block = nidus_malloc(a, sizeof(XXH3_state_t) + HASH_ALIGN - 1);
    if (!block)
        return NIDUS_ERR_NO_MEMORY;
    uintptr_t at = ((uintptr_t)block + HASH_ALIGN - 1) & ~(uintptr_t)(HASH_ALIGN - 1);
    XXH3_state_t *state = (XXH3_state_t *)at;
    XXH3_INITSTATE(state);
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, l->prefix, l->prefix_bytes);
    nidus_chunk_loader_hash_free(l, a);
    l->hash_block = block;
    l->hash = state;
    return NIDUS_OK;
}

void nidus_chunk_loader_hash_free(nidus_chunk_loader *l, const nidus_allocator *a)
{
    nidus_free(a, l->hash_block);
    l->hash_block = NULL;
    l->hash = NULL;
}

nidus_dump_sum *nidus_dump_sum_new(const nidus_allocator *allocator)
{
    const nidus_allocator *a = nidus_alloc_pick(allocator);
    nidus_dump_sum *sum = nidus_malloc(a, sizeof *sum);
    void *block = nidus_malloc(a, sizeof(XXH3_state_t) + HASH_ALIGN - 1);
    if (!sum || !block) {
        nidus_free(a, sum);
        nidus_free(a, block);
        return NULL;
    }
    uintptr_t at = ((uintptr_t)block + HASH_ALIGN - 1) & ~(uintptr_t)(HASH_ALIGN - 1);
    XXH3_state_t *state = (XXH3_state_t *)at;
    XXH3_INITSTATE(state);
    *sum = (nidus_dump_sum){a, block, state, 0, 0, 0, 0, 0};
    return sum;
}

void nidus_dump_sum_reset(nidus_dump_sum *sum)
{
    if (sum)
        sum->next = 0;
}

void nidus_dump_sum_counts(const nidus_dump_sum *sum, uint64_t *digests, uint64_t *wholes)
{
    *digests = sum ? sum->digests : 0;
    *wholes = sum ? sum->wholes : 0;
}

void nidus_dump_sum_free(nidus_dump_sum *sum)
{
    if (!sum)
        return;
    nidus_free(sum->alloc, sum->hash_block);
    nidus_free(sum->alloc, sum);
}

nidus_status nidus_chunk_accept(nidus_chunk_loader *l, uint32_t seq, uint64_t token, const uint8_t *payload,
                                uint32_t n, const nidus_segment *segs, unsigned count, bool *complete)
{
    *complete = false;
    if (l->failed || token != l->token || seq != l->next_seq)
        return NIDUS_ERR_SEQUENCE;
    uint64_t want = l->stream - l->pos < NIDUS_CHUNK_PAYLOAD_MAX ? l->stream - l->pos : NIDUS_CHUNK_PAYLOAD_MAX;
    if (n != want)
        return NIDUS_ERR_SEQUENCE;
    uint64_t body = l->stream - NIDUS_CODEC_CHECKSUM_BYTES;
    if (l->pos < body) {
        uint64_t part = (l->pos + n < body ? l->pos + n : body) - l->pos;
        nidus_segments_write(segs, count, l->pos, payload, part);
        if (l->hash)
            XXH3_64bits_update(l->hash, payload, (size_t)part); /* the bytes just written, read while in cache */
    }
    if (l->pos + n > body) {
        uint64_t from = l->pos > body ? l->pos - body : 0;
        memcpy(l->checksum + from, payload + (body > l->pos ? body - l->pos : 0), (size_t)(l->pos + n - body - from));
    }
    l->pos += n;
    l->next_seq++;
    if (l->pos < l->stream)
        return NIDUS_OK;
    uint64_t sum = l->hash ? XXH3_64bits_digest(l->hash) : nidus_codec_checksum(l->prefix, l->prefix_bytes, segs, count);
    if (NIDUS_CHECKSUM_BAD(read_le64(l->checksum), sum)) {
        l->failed = true;
        return NIDUS_ERR_CORRUPT;
    }
    *complete = true;
    return NIDUS_OK;
}

void nidus_codec_put_if_changed(uint8_t *at, const uint8_t *bytes, size_t n)
{
    if (n && memcmp(at, bytes, n))
        memcpy(at, bytes, n);
}

nidus_status nidus_chunk_loader_begin(nidus_chunk_loader **out, const nidus_allocator *a, const uint8_t *prefix,
                                      uint32_t n, uint64_t token, uint64_t stream)
{
    nidus_chunk_loader *l = nidus_calloc(a, 1, sizeof *l);
    uint8_t *copy = nidus_malloc(a, n);
    if (!l || !copy) {
        nidus_free(a, l);
        nidus_free(a, copy);
        return NIDUS_ERR_NO_MEMORY;
    }
    memcpy(copy, prefix, n);
    *l = (nidus_chunk_loader){.token = token, .next_seq = 1, .stream = stream, .prefix_bytes = n, .prefix = copy};
    *out = l;
    nidus_status st = nidus_chunk_loader_hash_begin(l, a);
    if (st)
        nidus_chunk_loader_release(out, a);
    return st;
}

void nidus_chunk_loader_release(nidus_chunk_loader **l, const nidus_allocator *a)
{
    if (!*l)
        return;
    nidus_chunk_loader_hash_free(*l, a);
    nidus_free(a, (*l)->prefix);
    nidus_free(a, *l);
    *l = NULL;
}
