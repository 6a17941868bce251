/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the opt-in inline path. Define NIDUS_INLINE before including nidus/nidus.h (which then includes this
 * header) to get the hash and the lookups and adds of the common filter shapes as inline code in the caller's
 * loops, as xxHash's XXH_INLINE_ALL does. Inline code reads only a small published view of a filter whose
 * first word tags its layout version and state; every inline call checks the tag with one compare and calls
 * the library for any tag it does not know, so a program built against an older header stays correct against
 * a newer library. Without NIDUS_INLINE nothing of this is compiled into callers. */
#ifndef NIDUS_INLINE_H
#define NIDUS_INLINE_H

#include "inline_hash.h"

/* The filter kinds' inline calls, each in its own header; a kind whose header is absent has none. */
#if defined(__has_include)
#if __has_include("inline_bloom.h")
#include "inline_bloom.h"
#endif
#if __has_include("inline_cuckoo.h")
#include "inline_cuckoo.h"
#endif
#if __has_include("inline_fuse.h")
#include "inline_fuse.h"
#endif
#endif

#endif
