/* SPDX-License-Identifier: BSD-3-Clause */
/* The file format around encodings: per-block checksums (see file_format.h). */
#include <string.h>

#define XXH_INLINE_ALL
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "codec.h"
#include "file_format.h"

static uint64_t blocks_for(uint64_t body_bytes)
{
    return (body_bytes + NIDUS_FILE_BLOCK_BYTES - 1) / NIDUS_FILE_BLOCK_BYTES;
}

uint64_t nidus_file_size_for_body(uint64_t body_bytes)
{
    return body_bytes + blocks_for(body_bytes) * 8 + NIDUS_FILE_FOOTER_BYTES;
}

static uint64_t le64(const uint8_t *p)
{
    nidus_reader r = {p, 8, false};
    return nidus_get_u64(&r);
}

/* The header checksum: the prefix, then the block table and the footer up to this field. */
static uint64_t header_checksum(const uint8_t *body, size_t prefix_bytes, const uint8_t *table, uint64_t blocks)
{
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, body, prefix_bytes);
    XXH3_64bits_update(&state, table, (size_t)(blocks * 8 + NIDUS_FILE_FOOTER_BYTES - 8));
    return XXH3_64bits_digest(&state);
}

void nidus_file_mark_body(uint8_t *body, size_t body_bytes)
{
    uint8_t mark[9];
    nidus_writer w = {mark};
    /* the file version of the encoding's version: 7 -> 8, 9 -> 10 (nidus/codec.h) */
    nidus_put_u8(&w, body[5] % 2 ? body[5] + 1u : body[5]);
    nidus_codec_put_if_changed(body + 5, mark, 1);
    w.p = mark;
    nidus_put_u64(&w, body_bytes);
    nidus_codec_put_if_changed(body + 8, mark, 8);
}

/* The footer after a block table at `w`, and the header checksum over both. */
static uint8_t *put_footer(nidus_writer w, const uint8_t *body, uint64_t body_bytes, uint8_t *table, uint64_t blocks)
{
    size_t prefix_bytes = NIDUS_CODEC_PREFIX_FIXED + nidus_read_le32(body + 16);
    nidus_put_bytes(&w, NIDUS_FILE_FOOTER_MAGIC, NIDUS_FILE_FOOTER_MAGIC_BYTES);
    nidus_put_u32(&w, NIDUS_FILE_BLOCK_BYTES);
    nidus_put_u32(&w, 0);
    nidus_put_u64(&w, body_bytes);
    nidus_put_u64(&w, blocks);
    nidus_put_u64(&w, header_checksum(body, prefix_bytes, table, blocks));
    return w.p;
}

static uint64_t block_hash(const uint8_t *body, uint64_t body_bytes, uint64_t block_bytes, uint64_t k)
{
    uint64_t at = k * block_bytes, n = body_bytes - at < block_bytes ? body_bytes - at : block_bytes;
    return XXH3_64bits(body + at, (size_t)n);
}

void nidus_file_trailer(const nidus_file_layout *l, const uint8_t *body, const unsigned char *dirty, uint8_t *out)
{
    nidus_writer w = {out};
    for (uint64_t k = 0; k < l->blocks; k++)
        nidus_put_u64(&w, dirty[k] ? block_hash(body, l->body_bytes, l->block_bytes, k) : le64(l->checksums + 8 * k));
    put_footer(w, body, l->body_bytes, out, l->blocks);
}

size_t nidus_file_from_encoding(uint8_t *buf, size_t len)
{
    uint64_t body = len - NIDUS_CODEC_CHECKSUM_BYTES, blocks = blocks_for(body);
    nidus_file_mark_body(buf, (size_t)body);
    uint8_t *table = buf + body;
    nidus_writer w = {table};
    for (uint64_t k = 0; k < blocks; k++)
        nidus_put_u64(&w, block_hash(buf, body, NIDUS_FILE_BLOCK_BYTES, k));
    return (size_t)(put_footer(w, buf, body, table, blocks) - buf);
}

nidus_status nidus_file_parse(const uint8_t *file, size_t len, nidus_file_layout *out)
{
    nidus_kind kind;
    nidus_status st = nidus_codec_peek(file, len, &kind);
    if (st)
        return st;
    if (file[5] % 2 == 1) { /* odd versions (1, 3, 5, 7) are whole encodings, even ones (2-8) framed files */
        *out = (nidus_file_layout){.version = 1, .body = file, .body_bytes = len};
        return NIDUS_OK;
    }
    if (len < NIDUS_CODEC_PREFIX_FIXED + NIDUS_FILE_FOOTER_BYTES)
        return NIDUS_ERR_CORRUPT;
    nidus_reader r = {file + len - NIDUS_FILE_FOOTER_BYTES, NIDUS_FILE_FOOTER_BYTES, false};
    const uint8_t *magic = nidus_get_bytes(&r, NIDUS_FILE_FOOTER_MAGIC_BYTES);
    uint32_t block_bytes = nidus_get_u32(&r), zero = nidus_get_u32(&r);
    uint64_t body = nidus_get_u64(&r), blocks = nidus_get_u64(&r), stored = nidus_get_u64(&r);
    if (r.bad || memcmp(magic, NIDUS_FILE_FOOTER_MAGIC, NIDUS_FILE_FOOTER_MAGIC_BYTES) || zero || block_bytes < 4096 ||
        block_bytes > (1u << 24) || (block_bytes & (block_bytes - 1)))
        return NIDUS_ERR_CORRUPT;
    /* body + 8 * blocks + footer == len, in arithmetic that cannot wrap */
    if (body < NIDUS_CODEC_PREFIX_FIXED || body > len || blocks != (body + block_bytes - 1) / block_bytes ||
        blocks > (len - body) / 8 || body + blocks * 8 + NIDUS_FILE_FOOTER_BYTES != len)
        return NIDUS_ERR_CORRUPT;
    uint64_t prefix_bytes = NIDUS_CODEC_PREFIX_FIXED + (uint64_t)nidus_read_le32(file + 16);
    if (prefix_bytes > body || prefix_bytes > block_bytes || le64(file + 8) != body)
        return NIDUS_ERR_CORRUPT;
    if (NIDUS_CHECKSUM_BAD(stored, header_checksum(file, (size_t)prefix_bytes, file + body, blocks)))
        return NIDUS_ERR_CORRUPT;
    *out = (nidus_file_layout){.version = 2, .body = file, .body_bytes = (size_t)body, .checksums = file + body,
                               .blocks = blocks, .block_bytes = block_bytes};
    return NIDUS_OK;
}

bool nidus_file_block_ok(const nidus_file_layout *l, uint64_t k)
{
    return !NIDUS_CHECKSUM_BAD(le64(l->checksums + 8 * k), block_hash(l->body, l->body_bytes, l->block_bytes, k));
}

nidus_status nidus_file_verify_all(const nidus_file_layout *l, uint64_t *bad)
{
    for (uint64_t k = 0; k < l->blocks; k++)
        if (!nidus_file_block_ok(l, k)) {
            if (bad)
                *bad = k;
            return NIDUS_ERR_CORRUPT;
        }
    return NIDUS_OK;
}
