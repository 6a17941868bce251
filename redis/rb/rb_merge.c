/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging keys loaded from RedisBloom: see rb_merge.h. */
#include <stdio.h>

#include "commands.h"
#include "rb_bf.h"
#include "rb_cf.h"
#include "rb_merge.h"
#include "types.h"

/* The growth parts: both there, they must match as nidus filters do. */
static bool grown_difference(const rb_kind *k, const rb_value *dst, const rb_value *src, char *buf, size_t cap)
{
    if (!dst->grown || !src->grown)
        return false;
    char why[160];
    nidus_filter_ref d, s;
    const mod_filter_ops *ops = rb_kind_ops(k);
    bool differs = nidus_filter_merge_difference(mod_filter(&d, ops, dst->grown), mod_filter(&s, ops, src->grown), why,
                                                 sizeof why) > 0;
    if (differs)
        snprintf(buf, cap, "the sub-filters grown after RedisBloom's: %s", why);
    return differs;
}

static bool cf_difference(const rb_value *dst, const rb_value *src, char *buf, size_t cap)
{
    const rb_cf *x = dst->rb, *y = src->rb;
    if (x->bucket_size != y->bucket_size)
        snprintf(buf, cap, "bucket size %u, not %u", y->bucket_size, x->bucket_size);
    else if (x->buckets != y->buckets)
        snprintf(buf, cap, "capacity: a first sub-filter of %llu buckets, not %llu", (unsigned long long)y->buckets,
                 (unsigned long long)x->buckets);
    else if (x->expansion != y->expansion)
        snprintf(buf, cap, "expansion %u, not %u", y->expansion, x->expansion);
    else if (x->ntables != y->ntables && (dst->grown || src->grown))
        snprintf(buf, cap, "%u RedisBloom sub-filters, not %u, with sub-filters grown after them", y->ntables,
                 x->ntables);
    else
        return grown_difference(&rb_cf_kind, dst, src, buf, cap);
    return true;
}

static bool same_layer(const rb_bf_layer *a, const rb_bf_layer *b)
{
    return a->entries == b->entries && a->bits == b->bits && a->bytes == b->bytes && a->hashes == b->hashes &&
           a->n2 == b->n2 && a->error == b->error && a->bpe == b->bpe;
}

static bool bf_difference(const rb_value *dst, const rb_value *src, char *buf, size_t cap)
{
    const rb_bf *x = dst->rb, *y = src->rb;
    uint32_t shared = x->nlayers < y->nlayers ? x->nlayers : y->nlayers, i = 0;
    while (i < shared && same_layer(&x->layers[i], &y->layers[i]))
        i++;
    if ((x->options ^ y->options) & RB_BF_FORCE64)
        snprintf(buf, cap, "%u-bit hashing, not %u-bit", y->options & RB_BF_FORCE64 ? 64u : 32u,
                 x->options & RB_BF_FORCE64 ? 64u : 32u);
    else if ((x->options ^ y->options) & RB_BF_NO_SCALING)
        snprintf(buf, cap, "%s, not %s", y->options & RB_BF_NO_SCALING ? "non-scaling" : "scaling",
                 x->options & RB_BF_NO_SCALING ? "non-scaling" : "scaling");
    else if (x->options != y->options)
        snprintf(buf, cap, "RedisBloom options %u, not %u", y->options, x->options);
    else if (x->layers[0].error != y->layers[0].error)
        snprintf(buf, cap, "error rate %g, not %g", y->layers[0].error, x->layers[0].error);
    else if (x->layers[0].entries != y->layers[0].entries)
        snprintf(buf, cap, "capacity %llu, not %llu", (unsigned long long)y->layers[0].entries,
                 (unsigned long long)x->layers[0].entries);
    else if (x->growth != y->growth)
        snprintf(buf, cap, "expansion %u, not %u", y->growth, x->growth);
    else if (i < shared)
        snprintf(buf, cap, "layer %u of another size", i + 1);
    else if (x->nlayers != y->nlayers && (dst->grown || src->grown))
        snprintf(buf, cap, "%u RedisBloom layers, not %u, with layers grown after them", y->nlayers, x->nlayers);
    else
        return grown_difference(&rb_bf_kind, dst, src, buf, cap);
    return true;
}

bool rb_value_difference(const rb_kind *k, const rb_value *dst, const rb_value *src, char *buf, size_t cap)
{
    return k == &rb_cf_kind ? cf_difference(dst, src, buf, cap) : bf_difference(dst, src, buf, cap);
}

nidus_status rb_value_merge(const rb_kind *k, rb_value *dst, const rb_value *src)
{
    bool cuckoo = k == &rb_cf_kind;
    nidus_status st = cuckoo ? rb_cf_merge(dst->rb, src->rb) : rb_bf_merge(dst->rb, src->rb);
    if (st || !src->grown)
        return st;
    nidus_filter_ref d, s;
    if (dst->grown)
        return nidus_filter_merge(mod_filter(&d, rb_kind_ops(k), dst->grown), mod_filter(&s, rb_kind_ops(k), src->grown));
    /* the same RedisBloom sub-filters (rb_value_difference): src's growth part continues dst's as well */
    dst->grown = mod_filter_copy(rb_kind_ops(k), src->grown);
    return dst->grown ? NIDUS_OK : NIDUS_ERR_NO_MEMORY;
}
