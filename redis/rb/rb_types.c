/* SPDX-License-Identifier: BSD-3-Clause */
/* The data types MBbloomCF and MBbloom--: RedisBloom's RDB encodings read (every version its loader still
 * takes: cuckoo 0..4, Bloom 0..4), ours written (RB_NIDUS_ENCVER). See rb_types.h, and docs/DESIGN-NOTES.md
 * for why the types keep RedisBloom's names.
 *
 * Our encoding, RB_NIDUS_ENCVER: the RedisBloom part in the field order of RedisBloom's version 4 (its tables
 * can only ever be RedisBloom's layout), then 1 and the growth part as the nidus types save a filter (its
 * chunks, then an empty string), or 0 without one. RedisBloom itself refuses this version: once saved by
 * nidus, the data goes back to RedisBloom through nothing but its commands. */
#include <string.h>

#include "commands.h"
#include "common.h"
#include "rb_bf.h"
#include "rb_cf.h"
#include "rb_chunk.h"
#include "rb_types.h"
#include "types.h"

RedisModuleType *rb_cf_type, *rb_bf_type;
atomic_llong rb_values_alive;

rb_value *rb_value_new(void *rb)
{
    rb_value *v = RedisModule_Calloc(1, sizeof *v);
    v->rb = rb;
    rb_values_alive++;
    return v;
}

void rb_cf_value_free(void *value)
{
    rb_value *v = value;
    rb_cf_free(v->rb);
    if (v->grown)
        mod_filter_free(&mod_cf_ops, v->grown);
    RedisModule_Free(v);
    rb_values_alive--;
}

void rb_bf_value_free(void *value)
{
    rb_value *v = value;
    rb_bf_free(v->rb);
    if (v->grown)
        mod_filter_free(&mod_bf_ops, v->grown);
    RedisModule_Free(v);
    rb_values_alive--;
}

/* ---- RedisBloom's RDB encodings ---- */

static bool io_ok(RedisModuleIO *io) { return !RedisModule_IsIOError(io); }

/* Cuckoo, versions 0..4: sub-filters, buckets, items, [4: deletes, bucket size, max iterations, expansion],
 * then per sub-filter [4: its buckets] and its slots. Before version 4 RedisBloom took the bucket size from
 * its configuration (2 unless changed), every sub-filter had the first one's buckets, and the slots' length
 * tells the bucket size: we read it from there. */
static rb_cf *load_rb_cf(RedisModuleIO *io, int encver, uint64_t max_bytes)
{
    uint16_t ntables = (uint16_t)RedisModule_LoadUnsigned(io); /* RedisBloom keeps it in 16 bits */
    uint64_t buckets = RedisModule_LoadUnsigned(io);
    if (!io_ok(io) || ntables == 0 || buckets == 0)
        return NULL;
    rb_cf *cf = rb_cf_shell(ntables);
    cf->ntables = 0; /* counts the tables loaded, for rb_cf_free */
    cf->buckets = buckets;
    cf->items = RedisModule_LoadUnsigned(io);
    cf->max_iterations = 20;
    cf->expansion = 1;
    if (encver >= 4) {
        cf->deletes = RedisModule_LoadUnsigned(io);
        cf->bucket_size = (uint16_t)RedisModule_LoadUnsigned(io);
        cf->max_iterations = (uint16_t)RedisModule_LoadUnsigned(io);
        cf->expansion = (uint16_t)RedisModule_LoadUnsigned(io);
    }
    uint64_t total = 0;
    bool bad = false;
    for (unsigned t = 0; t < ntables && !bad && io_ok(io); t++) {
        uint64_t b = encver >= 4 ? RedisModule_LoadUnsigned(io) & ((UINT64_C(1) << 56) - 1) : buckets;
        size_t len = 0;
        uint8_t *slots = (uint8_t *)RedisModule_LoadStringBuffer(io, &len);
        if (!io_ok(io) || !slots)
            break;
        cf->tables[cf->ntables++] = (rb_cf_table){b, slots, total};
        if (encver < 4 && t == 0 && b && len % b == 0 && len / b >= 1 && len / b <= 255)
            cf->bucket_size = (uint16_t)(len / b);
        bad = b == 0 || cf->bucket_size == 0 || cf->bucket_size > 255 || len / cf->bucket_size != b ||
              len % cf->bucket_size || len > max_bytes - total;
        total += len;
    }
    if (!bad && io_ok(io) && cf->ntables == ntables)
        return cf;
    rb_cf_free(cf);
    return NULL;
}

/* Bloom, versions 0..4: items, layers, [2: options], [4: growth], then per layer entries, error (double),
 * hashes, bits per entry (double), [1: bits, n2], the bits, items. Version 0 had no bit count (entries * bpe)
 * and no power-of-two sizes; before 4 the growth was 2. */
/* More layers than any real filter has (RedisBloom adds one each time the newest fills): refused before the
 * array of layers is allocated. */
#define RB_BF_MAX_LAYERS 65536

static rb_bf *load_rb_bf(RedisModuleIO *io, int encver, uint64_t max_bytes)
{
    uint64_t items = RedisModule_LoadUnsigned(io), n = RedisModule_LoadUnsigned(io);
    if (!io_ok(io) || n == 0 || n > RB_BF_MAX_LAYERS)
        return NULL;
    rb_bf *bf = rb_bf_shell((uint32_t)n);
    bf->nlayers = 0; /* counts the layers loaded, for rb_bf_free */
    bf->items = items;
    bf->options = encver >= 2 ? (uint32_t)RedisModule_LoadUnsigned(io) : 0;
    bf->growth = encver >= 4 ? (uint32_t)RedisModule_LoadUnsigned(io) : 2;
    uint64_t total = 0;
    bool bad = false;
    for (uint64_t i = 0; i < n && !bad && io_ok(io); i++) {
        rb_bf_layer l = {0};
        l.entries = RedisModule_LoadUnsigned(io);
        l.error = RedisModule_LoadDouble(io);
        l.hashes = (uint32_t)RedisModule_LoadUnsigned(io);
        l.bpe = RedisModule_LoadDouble(io);
        if (encver == 0) {
            double bits = (double)l.entries * l.bpe;
            l.bits = bits >= 0 && bits < 18446744073709551616.0 ? (uint64_t)bits : 0;
        } else {
            l.bits = RedisModule_LoadUnsigned(io);
            l.n2 = (uint8_t)RedisModule_LoadUnsigned(io);
        }
        size_t len = 0;
        l.data = (uint8_t *)RedisModule_LoadStringBuffer(io, &len);
        if (!io_ok(io) || !l.data)
            break;
        l.bytes = len;
        l.start = total;
        l.items = RedisModule_LoadUnsigned(io);
        bf->layers[bf->nlayers++] = l;
        /* RedisBloom's checks: the bits fit the buffer, and its bloom_validate_integrity */
        bad = len < l.bits / 8 + (l.bits % 8 != 0) || !rb_bf_layer_valid(&l) || len > max_bytes - total;
        total += len;
    }
    if (!bad && io_ok(io) && bf->nlayers == n)
        return bf;
    rb_bf_free(bf);
    return NULL;
}

/* ---- the types' methods ---- */

static void save_rb_cf(RedisModuleIO *io, const rb_cf *cf)
{
    uint64_t head[] = {cf->ntables, cf->buckets, cf->items, cf->deletes, cf->bucket_size, cf->max_iterations,
                       cf->expansion};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        RedisModule_SaveUnsigned(io, head[i]);
    for (unsigned t = 0; t < cf->ntables; t++) {
        RedisModule_SaveUnsigned(io, cf->tables[t].buckets);
        RedisModule_SaveStringBuffer(io, (const char *)cf->tables[t].slots, cf->tables[t].buckets * cf->bucket_size);
    }
}

static void save_rb_bf(RedisModuleIO *io, const rb_bf *bf)
{
    RedisModule_SaveUnsigned(io, bf->items);
    RedisModule_SaveUnsigned(io, bf->nlayers);
    RedisModule_SaveUnsigned(io, bf->options);
    RedisModule_SaveUnsigned(io, bf->growth);
    for (uint32_t i = 0; i < bf->nlayers; i++) {
        const rb_bf_layer *l = &bf->layers[i];
        RedisModule_SaveUnsigned(io, l->entries);
        RedisModule_SaveDouble(io, l->error);
        RedisModule_SaveUnsigned(io, l->hashes);
        RedisModule_SaveDouble(io, l->bpe);
        RedisModule_SaveUnsigned(io, l->bits);
        RedisModule_SaveUnsigned(io, l->n2);
        RedisModule_SaveStringBuffer(io, (const char *)l->data, l->bytes);
        RedisModule_SaveUnsigned(io, l->items);
    }
}

/* The growth part after the RedisBloom part: 0, or 1 and the filter (one still loading by LOADCHUNK saves
 * the chunks it received and loads back in that state, as the nidus types' keys do). */
static void save_grown(RedisModuleIO *io, const mod_filter_ops *ops, void *grown)
{
    RedisModule_SaveUnsigned(io, grown != NULL);
    if (grown)
        mod_rdb_save_filter(ops, io, grown);
}

/* The limit the growth part loads under when the whole value loads under `limit` (0: none): the room
 * rb_grown_room leaves it, as growth gives it, and a limit no header fits when there is none. LOADCHUNK and
 * RESTORE both load by it, so the two copies of one value are the same. */
static uint64_t grown_load_limit(const rb_kind *k, const void *rb, uint64_t limit)
{
    uint64_t room = rb_grown_room(k, rb, limit);
    return limit == 0 ? 0 : room ? room : 1;
}

/* RESTORE obeys max_filter_memory (a replicated one its master's); the server's own RDB and a replica's sync are
 * loaded whatever their size, as the nidus types' are (`limit`: mod_io_load_limit, 0 for none). */
static bool load_grown(RedisModuleIO *io, const rb_kind *k, rb_value *v, uint64_t limit)
{
    uint64_t has = RedisModule_LoadUnsigned(io);
    if (!io_ok(io) || has > 1)
        return false;
    if (has && !(v->grown = mod_rdb_load_filter(rb_kind_ops(k), io, grown_load_limit(k, v->rb, limit))))
        return false;
    return true;
}

static void *cf_rdb_load(const void *kind, RedisModuleIO *io, int encver)
{
    (void)kind;
    if (encver > RB_CF_ENCVER_MAX && encver != RB_NIDUS_ENCVER)
        return NULL;
    uint64_t limit = mod_io_load_limit(io);
    rb_cf *cf = load_rb_cf(io, encver == RB_NIDUS_ENCVER ? RB_CF_ENCVER_MAX : encver, limit ? limit : UINT64_MAX);
    if (!cf) {
        RedisModule_LogIOError(io, "warning", "nidus: refused a RedisBloom cuckoo filter (version %d)", encver);
        return NULL;
    }
    rb_value *v = rb_value_new(cf);
    if (encver == RB_NIDUS_ENCVER && !load_grown(io, &rb_cf_kind, v, limit)) {
        rb_cf_value_free(v);
        return NULL;
    }
    return v;
}

static void *bf_rdb_load(const void *kind, RedisModuleIO *io, int encver)
{
    (void)kind;
    if (encver > RB_BF_ENCVER_MAX && encver != RB_NIDUS_ENCVER)
        return NULL;
    uint64_t limit = mod_io_load_limit(io);
    rb_bf *bf = load_rb_bf(io, encver == RB_NIDUS_ENCVER ? RB_BF_ENCVER_MAX : encver, limit ? limit : UINT64_MAX);
    if (!bf) {
        RedisModule_LogIOError(io, "warning", "nidus: refused a RedisBloom Bloom filter (version %d)", encver);
        return NULL;
    }
    rb_value *v = rb_value_new(bf);
    if (encver == RB_NIDUS_ENCVER && !load_grown(io, &rb_bf_kind, v, limit)) {
        rb_bf_value_free(v);
        return NULL;
    }
    return v;
}

static void cf_rdb_save(const void *kind, RedisModuleIO *io, void *value)
{
    (void)kind;
    rb_value *v = value;
    save_rb_cf(io, v->rb);
    save_grown(io, &mod_cf_ops, v->grown);
}

static void bf_rdb_save(const void *kind, RedisModuleIO *io, void *value)
{
    (void)kind;
    rb_value *v = value;
    save_rb_bf(io, v->rb);
    save_grown(io, &mod_bf_ops, v->grown);
}

/* ---- the chunk stream (SCANDUMP, AOF): RedisBloom's, then the growth part's ---- */

/* What each type's stream needs. */
/* ---- active defrag: the value's blocks offered to RedisModule_DefragAlloc ---- */

/* Positions, as the library numbers a filter's blocks (nidus_cuckoo_relocate): the value is 0, the RedisBloom
 * struct 1, its array of sub-filters (layers) 2, sub-filter i's slots (layer i's bits) 3 + i; the growth part's
 * own positions follow from RB_GROWN_CURSOR on. Fixed by the structure, so a cursor stays valid however the value
 * changes between steps. */
#define RB_GROWN_CURSOR (UINT64_C(1) << 32)

static void cf_relocate(nidus_walk *w, void *rb)
{
    rb_cf *cf = rb;
    rb_cf_table *tables = nidus_walk_offer(w, cf->tables);
    if (tables)
        cf->tables = tables;
    for (unsigned t = 0; t < cf->ntables; t++) {
        uint8_t *slots = nidus_walk_offer(w, cf->tables[t].slots);
        if (slots)
            cf->tables[t].slots = slots;
    }
}

static void bf_relocate(nidus_walk *w, void *rb)
{
    rb_bf *bf = rb;
    rb_bf_layer *layers = nidus_walk_offer(w, bf->layers);
    if (layers)
        bf->layers = layers;
    for (uint32_t i = 0; i < bf->nlayers; i++) {
        uint8_t *data = nidus_walk_offer(w, bf->layers[i].data);
        if (data)
            bf->layers[i].data = data;
    }
}

struct rb_kind {
    const mod_filter_ops *ops;
    rb_array_fn array;
    uint64_t (*bytes)(const void *rb); /* the arrays' total, O(1): where the growth part's positions begin */
    size_t (*header_size)(const void *rb);
    void (*header)(const void *rb, uint8_t *out);
    void (*relocate)(nidus_walk *w, void *rb); /* the RedisBloom part's arrays */
};

/* As nidus_cuckoo_relocate, for a value of either kind: the RedisBloom part, then the growth part. */
static bool rb_value_relocate(const rb_kind *k, void **value, const nidus_mover *mover, uint64_t *cursor)
{
    if (*cursor < RB_GROWN_CURSOR) {
        nidus_walk w = nidus_walk_start(mover, *cursor);
        rb_value *v = nidus_walk_offer(&w, *value);
        if (v)
            *value = v;
        v = *value;
        void *rb = nidus_walk_offer(&w, v->rb);
        if (rb)
            v->rb = rb;
        k->relocate(&w, v->rb);
        if (!nidus_walk_end(&w, cursor))
            return false;
        *cursor = RB_GROWN_CURSOR;
    }
    rb_value *v = *value;
    uint64_t inner = *cursor - RB_GROWN_CURSOR;
    if (!v->grown || mod_filter_relocate(k->ops, &v->grown, mover, &inner)) {
        *cursor = 0;
        return true;
    }
    *cursor = RB_GROWN_CURSOR + inner;
    return false;
}

static size_t cf_header_size(const void *rb)
{
    (void)rb;
    return RB_CF_HEADER_SIZE;
}
static void cf_header(const void *rb, uint8_t *out) { rb_cf_header(rb, out); }
static size_t bf_header_size(const void *rb) { return rb_bf_header_size(rb); }
static void bf_header(const void *rb, uint8_t *out) { rb_bf_header(rb, out); }
static uint64_t cf_bytes(const void *rb) { return rb_cf_table_bytes(rb); }
static uint64_t bf_bytes(const void *rb) { return rb_bf_layer_bytes(rb); }

const rb_kind rb_cf_kind = {&mod_cf_ops, rb_cf_array, cf_bytes, cf_header_size, cf_header, cf_relocate};
const rb_kind rb_bf_kind = {&mod_bf_ops, rb_bf_array, bf_bytes, bf_header_size, bf_header, bf_relocate};

const mod_filter_ops *rb_kind_ops(const rb_kind *k) { return k->ops; }

uint64_t rb_grown_room(const rb_kind *k, const void *rb, uint64_t limit)
{
    uint64_t used = k == &rb_cf_kind ? rb_cf_memory(rb) : rb_bf_memory(rb);
    return limit > used ? limit - used : 0;
}

size_t rb_chunk_buffer_size(const rb_kind *k, const rb_value *v)
{
    size_t h = k->header_size(v->rb), n = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD;
    return h > n ? h : n;
}

bool rb_value_chunk(const rb_kind *k, const rb_value *v, uint64_t iter, uint8_t *buf, size_t cap,
                    const uint8_t **data, size_t *len, uint64_t *next, nidus_dump_sum *sum)
{
    if (iter == 0) {
        k->header(v->rb, buf);
        *data = buf;
        *len = k->header_size(v->rb);
        *next = 1;
        return true;
    }
    uint64_t end = k->bytes(v->rb) + 1; /* the position after RedisBloom's last byte */
    if (iter < end)
        return rb_chunk_get(v->rb, k->array, iter, RB_SCANDUMP_MAX, data, len, next);
    uint64_t cursor;
    nidus_filter_ref ref;
    if (!v->grown ||
        nidus_filter_dump_chunk_sum(mod_filter(&ref, k->ops, v->grown), iter - end, sum, buf, cap, len, &cursor) !=
            NIDUS_OK ||
        *len == 0)
        return false;
    *data = buf;
    *next = end + cursor;
    return true;
}

/* Calls visit for every chunk of the stream, with the position LOADCHUNK takes it at. */
static void each_chunk(const rb_kind *k, const rb_value *v, mod_chunk_visit visit, void *arg)
{
    size_t cap = rb_chunk_buffer_size(k, v), len;
    uint8_t *buf = RedisModule_Alloc(cap);
    const uint8_t *data;
    uint64_t iter = 0, next;
    nidus_dump_sum *sum = nidus_dump_sum_new(&mod_allocator); /* one read of the growth part */
    while (rb_value_chunk(k, v, iter, buf, cap, &data, &len, &next, sum)) {
        visit(arg, iter ? next : 1, data, len);
        iter = next;
    }
    nidus_dump_sum_free(sum);
    RedisModule_Free(buf);
}

/* COPY: the chunk stream replayed into a new value, as LOADCHUNK would build it. */
typedef struct copy_arg {
    const rb_kind *k;
    rb_value *to;
    bool failed;
} copy_arg;

static void copy_chunk(void *arg, uint64_t pos, const uint8_t *data, size_t len)
{
    copy_arg *c = arg;
    if (!c->failed && rb_value_load_chunk(c->k, &c->to, pos, data, len, 0) != NIDUS_OK)
        c->failed = true;
}

nidus_status rb_value_load_chunk(const rb_kind *k, rb_value **v, uint64_t pos, const void *data, size_t len,
                                 uint64_t max_bytes)
{
    if (!*v) {
        if (pos != 1)
            return NIDUS_ERR_CORRUPT;
        void *rb = NULL;
        uint64_t limit = max_bytes ? max_bytes : UINT64_MAX;
        nidus_status st = k == &rb_cf_kind ? rb_cf_from_header(data, len, limit, (rb_cf **)&rb)
                                           : rb_bf_from_header(data, len, limit, (rb_bf **)&rb);
        if (st == NIDUS_OK)
            *v = rb_value_new(rb);
        return st;
    }
    uint64_t end = k->bytes((*v)->rb) + 1;
    if (pos <= end) /* RedisBloom's data: the position after the chunk is inside its arrays or their end */
        return rb_chunk_put((*v)->rb, k->array, pos, data, len, k == &rb_bf_kind) ? NIDUS_OK : NIDUS_ERR_CORRUPT;
    return mod_filter_load_chunk(k->ops, &(*v)->grown, data, len, grown_load_limit(k, (*v)->rb, max_bytes));
}

void rb_value_free(const rb_kind *k, void *v)
{
    (k == &rb_cf_kind ? rb_cf_value_free : rb_bf_value_free)(v);
}

rb_value *rb_value_copy(const rb_kind *k, const rb_value *value)
{
    copy_arg c = {k, NULL, false};
    each_chunk(k, value, copy_chunk, &c);
    if (c.failed && c.to) {
        rb_value_free(k, c.to);
        return NULL;
    }
    return c.to;
}

uint64_t rb_value_memory(const rb_kind *k, const rb_value *v)
{
    uint64_t n = sizeof *v + (k == &rb_cf_kind ? rb_cf_memory(v->rb) : rb_bf_memory(v->rb));
    return n + (v->grown ? mod_filter_memory(k->ops, v->grown) : 0);
}

/* ---- the types' methods (types.c makes the server's callbacks from these classes) ---- */

static void rb_each_chunk(const void *k, const void *v, mod_chunk_visit visit, void *arg)
{
    each_chunk(k, v, visit, arg);
}
static uint64_t rb_memory(const void *k, const void *v) { return rb_value_memory(k, v); }
static void rb_free(const void *k, void *v)
{
    mod_dump_forget(v); /* its growth part's running SCANDUMP checksum, before the address can be reused */
    rb_value_free(k, v);
}
static void *rb_copy(const void *k, const void *v) { return rb_value_copy(k, v); }
static bool rb_relocate(const void *k, void **v, const nidus_mover *mover, uint64_t *cursor)
{
    return rb_value_relocate(k, v, mover, cursor);
}

const mod_value_class rb_cf_class = {NIDUS_CF_LOADCHUNK, &rb_cf_kind, cf_rdb_load, cf_rdb_save, rb_each_chunk,
                                     rb_memory, rb_free, rb_copy, rb_relocate};
const mod_value_class rb_bf_class = {NIDUS_BF_LOADCHUNK, &rb_bf_kind, bf_rdb_load, bf_rdb_save, rb_each_chunk,
                                     rb_memory, rb_free, rb_copy, rb_relocate};
