/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus_file_verify (nidus/verify.h): the checks of nidus_file_parse and the decoders, one at a time, so that
 * the first to fail can be named with its bytes. The order follows the file: the fixed prefix, then for a framed
 * file the footer, the header checksum and the blocks, then the encoded fields. */
#include "nidus/verify.h"

#include <string.h>

#include "codec.h"
#include "file_format.h"
#include "file_io.h"
#include "filter.h"

static nidus_status fail(nidus_file_report *r, nidus_status st, const char *part, const char *problem,
                         uint64_t offset, uint64_t length)
{
    r->part = part;
    r->problem = problem;
    r->offset = offset;
    r->length = length;
    return st;
}

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Whether the file (at least a footer long) ends in a framed file's footer magic. */
static bool ends_in_footer_magic(const uint8_t *f, uint64_t len)
{
    return !memcmp(f + len - NIDUS_FILE_FOOTER_BYTES, NIDUS_FILE_FOOTER_MAGIC, NIDUS_FILE_FOOTER_MAGIC_BYTES);
}

/* The fixed prefix: magic, version, kind, flags. */
static nidus_status check_prefix(const uint8_t *f, uint64_t len, nidus_file_report *r)
{
    if (len < NIDUS_CODEC_PREFIX_FIXED)
        return fail(r, NIDUS_ERR_CORRUPT, "file", "is shorter than a header (truncated, or not a nidus filter)", 0,
                    len);
    if (memcmp(f, "NIDUS", 5))
        return fail(r, NIDUS_ERR_CORRUPT, "magic", "is not \"NIDUS\": not a nidus filter, or damaged", 0, 5);
    r->version = f[5];
    if (f[5] < 1 || f[5] > NIDUS_FILE_FORMAT_VERSION_WINDOW_GROWN)
        return fail(r, NIDUS_ERR_VERSION, "format version", "is not one this build reads", 5, 1);
    if (f[6] < NIDUS_KIND_CUCKOO || f[6] > NIDUS_KIND_WINDOW)
        return fail(r, NIDUS_ERR_CORRUPT, "kind", "is not a kind of filter", 6, 1);
    r->kind = (nidus_kind)f[6];
    if (f[7])
        return fail(r, NIDUS_ERR_CORRUPT, "flags", "are not 0", 7, 1);
    return NIDUS_OK;
}

/* A whole encoding (odd versions): its length and its one checksum. */
static nidus_status check_whole(const uint8_t *f, uint64_t len, nidus_file_report *r)
{
    uint64_t meta = le(f + 16, 4);
    /* One flipped bit turns a framed file's even version into an odd one (8 -> 9): the footer then says which
     * byte is wrong, where the total length would only disagree with the file's length. */
    if (le(f + 8, 8) != len && len >= NIDUS_CODEC_PREFIX_FIXED + NIDUS_FILE_FOOTER_BYTES &&
        ends_in_footer_magic(f, len))
        return fail(r, NIDUS_ERR_CORRUPT, "format version",
                    "is a whole encoding's, but the file ends in a block table's footer", 5, 1);
    if (le(f + 8, 8) != len)
        return fail(r, NIDUS_ERR_CORRUPT, "total length", "does not match the file's length (truncated?)", 8, 8);
    if (len < NIDUS_CODEC_PREFIX_FIXED + meta + NIDUS_CODEC_CHECKSUM_BYTES)
        return fail(r, NIDUS_ERR_CORRUPT, "meta length", "runs past the end of the file", 16, 4);
    nidus_reader m;
    size_t prefix;
    /* the newest version of any kind: the kind's own decoder (below) refuses one newer than it writes */
    if (nidus_codec_open_whole(f, (size_t)len, r->kind, NIDUS_FORMAT_VERSION_WINDOW_GROWN, &m, &prefix))
        return fail(r, NIDUS_ERR_CORRUPT, "whole-file checksum", "does not match the bytes before it", len - 8, 8);
    return NIDUS_OK;
}

/* A framed file (even versions): the footer's fields, the header checksum, then every block. */
static nidus_status check_framed(const uint8_t *f, uint64_t len, nidus_file_report *r)
{
    if (len < NIDUS_CODEC_PREFIX_FIXED + NIDUS_FILE_FOOTER_BYTES)
        return fail(r, NIDUS_ERR_CORRUPT, "file", "is shorter than a header and a footer (truncated)", 0, len);
    uint64_t at = len - NIDUS_FILE_FOOTER_BYTES;
    const uint8_t *footer = f + at;
    if (!ends_in_footer_magic(f, len))
        return fail(r, NIDUS_ERR_CORRUPT, "footer magic", "is not \"NIDUSBLK\" (truncated or extended?)", at, 8);
    uint64_t block = le(footer + 8, 4), body = le(footer + 16, 8), blocks = le(footer + 24, 8);
    if (block < 4096 || block > (1u << 24) || (block & (block - 1)))
        return fail(r, NIDUS_ERR_CORRUPT, "footer block size", "is not a power of two from 4096 to 2^24", at + 8, 4);
    r->block_bytes = block;
    if (le(footer + 12, 4))
        return fail(r, NIDUS_ERR_CORRUPT, "footer reserved field", "is not 0", at + 12, 4);
    /* body + 8 * blocks + footer == len, in arithmetic that cannot wrap; when they disagree, the field that
     * disagrees with the file's length is the damaged one */
    uint64_t body_blocks = (body + block - 1) / block, rest = at - (blocks <= at / 8 ? blocks * 8 : at);
    bool body_fits = body >= NIDUS_CODEC_PREFIX_FIXED && body <= at && body_blocks <= (at - body) / 8 &&
                     body + body_blocks * 8 == at;
    bool blocks_fit = blocks <= at / 8 && rest >= NIDUS_CODEC_PREFIX_FIXED && (rest + block - 1) / block == blocks;
    if (body_fits && blocks != body_blocks)
        return fail(r, NIDUS_ERR_CORRUPT, "footer block count", "does not match the body length", at + 24, 8);
    if (!body_fits && blocks_fit)
        return fail(r, NIDUS_ERR_CORRUPT, "footer body length",
                    "does not match the block count and the file's length", at + 16, 8);
    if (!body_fits)
        return fail(r, NIDUS_ERR_CORRUPT, "footer body length and block count",
                    "do not match the file's length (truncated or extended?)", at + 16, 16);
    r->blocks = blocks;
    uint64_t prefix = NIDUS_CODEC_PREFIX_FIXED + le(f + 16, 4);
    if (prefix > body || prefix > block)
        return fail(r, NIDUS_ERR_CORRUPT, "meta length", "runs past the body or its first block", 16, 4);
    if (le(f + 8, 8) != body)
        return fail(r, NIDUS_ERR_CORRUPT, "total length", "does not match the footer's body length", 8, 8);
    nidus_file_layout l;
    if (nidus_file_parse(f, (size_t)len, &l)) {
        /* The header checksum covers the header, the block table and the footer: block 0's own checksum tells
         * whether the header is the damaged part (unless the damage is that checksum itself). */
        nidus_file_layout guess = {.version = 2, .body = f, .body_bytes = (size_t)body, .checksums = f + body,
                                   .blocks = blocks, .block_bytes = (uint32_t)block};
        if (!nidus_file_block_ok(&guess, 0))
            return fail(r, NIDUS_ERR_CORRUPT, "header",
                        "fails the header checksum and block 0's checksum (or block 0's entry in the block table is "
                        "damaged)", 0, prefix);
        return fail(r, NIDUS_ERR_CORRUPT, "block table or footer", "does not match the header checksum", body,
                    len - body);
    }
    for (uint64_t k = 0; k < blocks; k++) {
        if (nidus_file_block_ok(&l, k))
            continue;
        if (!r->bad_blocks++) {
            r->block = k;
            fail(r, NIDUS_ERR_CORRUPT, "block", "does not match its checksum", k * block,
                 body - k * block < block ? body - k * block : block);
        }
    }
    return r->bad_blocks ? NIDUS_ERR_CORRUPT : NIDUS_OK;
}

/* The encoded fields, decoded as _map_file decodes them (a view: nothing copied). */
static nidus_status check_fields(const uint8_t *f, uint64_t len, const nidus_allocator *a, nidus_file_report *r)
{
    nidus_file_layout l;
    nidus_status st = nidus_file_parse(f, (size_t)len, &l);
    nidus_decode_mode mode = l.version == 1 ? NIDUS_DECODE_WHOLE : NIDUS_DECODE_BODY;
    if (!st) {
        nidus_filter_ref ref; /* a handle on the stack, freed with the view it decodes */
        nidus_filter *v = nidus_filter_ref_init(&ref, r->kind, NULL);
        st = v ? nidus_filter_decode_body(v, l.body, l.body_bytes, a, NIDUS_DECODE_VIEW, mode) : NIDUS_ERR_CORRUPT;
        if (v)
            nidus_filter_free(v);
    }
    if (st == NIDUS_ERR_NO_MEMORY)
        return fail(r, st, "file", "cannot be checked: out of memory", 0, len);
    if (st)
        return fail(r, NIDUS_ERR_CORRUPT, "encoded fields",
                    "hold a parameter, counter or table entry out of range (the checksums match: written wrong)",
                    NIDUS_CODEC_PREFIX_FIXED, l.body_bytes - NIDUS_CODEC_PREFIX_FIXED);
    return NIDUS_OK;
}

nidus_status nidus_file_verify(const char *path, const nidus_allocator *allocator, nidus_file_report *report)
{
    nidus_file_report unused;
    nidus_file_report *r = report ? report : &unused;
    *r = (nidus_file_report){.block = NIDUS_FILE_NO_BLOCK};
    if (!path)
        return NIDUS_ERR_INVALID_ARGUMENT;
    void *map;
    size_t bytes;
    nidus_status st = nidus_file_map(path, &map, &bytes);
    if (st == NIDUS_ERR_CORRUPT)
        return fail(r, st, "file", "is empty", 0, 0);
    if (st)
        return fail(r, st, "file", "cannot be read", 0, 0);
    st = nidus_file_verify_bytes(map, bytes, allocator, r);
    nidus_file_unmap(map, bytes);
    return st;
}

nidus_status nidus_file_verify_bytes(const uint8_t *f, uint64_t len, const nidus_allocator *allocator,
                                     nidus_file_report *r)
{
    r->file_bytes = len;
    nidus_status st = check_prefix(f, len, r);
    if (!st)
        st = f[5] % 2 ? check_whole(f, len, r) : check_framed(f, len, r);
    if (!st)
        st = check_fields(f, len, allocator, r);
    return st;
}
