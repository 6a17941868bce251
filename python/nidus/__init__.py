# SPDX-License-Identifier: BSD-3-Clause
"""nidus: cuckoo, Bloom, counting Bloom, binary fuse and windowed cuckoo filters in C, with files shared with the
nidus CLI, the C library and the Redis/Valkey module.

    import nidus
    f = nidus.CuckooFilter(1_000_000, error_rate=0.001)
    f.add("apple")
    "apple" in f            # True
    f.save("seen.nidus")    # `nidus check seen.nidus` reads it
    g = nidus.open("seen.nidus")   # mapped, not read: O(1) whatever its size

Keys are str (as UTF-8) or bytes-like objects. Errors derive from nidus.Error, besides ValueError for bad
parameters, TypeError for keys of other types, KeyError for removing an absent key and OSError for files.

Thread safety: a filter may be shared between threads; every call on one filter runs alone (see Filter).
"""
from ._nidus import (
    BloomFilter,
    CorruptFile,
    CountingBloomFilter,
    CuckooFilter,
    Error,
    Filter,
    FilterFull,
    FuseFilter,
    IncompatibleError,
    ReadOnlyError,
    UnsupportedError,
    VersionError,
    WindowedCuckooFilter,
    __version__,
    from_bytes,
    hash,
    open,
)

__all__ = [
    "BloomFilter",
    "CorruptFile",
    "CountingBloomFilter",
    "CuckooFilter",
    "Error",
    "Filter",
    "FilterFull",
    "FuseFilter",
    "IncompatibleError",
    "ReadOnlyError",
    "UnsupportedError",
    "VersionError",
    "WindowedCuckooFilter",
    "from_bytes",
    "hash",
    "open",
]
