/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus._nidus: the nidus filters as Python objects, on CPython's own C API (3.9 and later).
 *
 * One object layout for every kind: a nidus_filter (nidus/filter.h) and its typed handle. Calls of one key hold
 * the GIL throughout; batched calls hash their keys with the GIL held, a chunk at a time, then run the filter's
 * batched call without it; file I/O and encoding run without it too. The object's lock is taken for those
 * GIL-free stretches, and `busy` (read and written only with the GIL held) tells a one-key call that another
 * thread is inside one, so that it waits: the one-key path pays one load and branch, never a lock. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <nidus/nidus.h>

/* The one-key fast path (below, "fast one-key calls", "deferred cuckoo adds") is compiled for x86-64 with AVX2
 * and BMI2 by function attribute, and chosen at import when the CPU has them; the inline headers' Bloom probes
 * take the same attribute. Elsewhere, or built with -DNIDUS_PY_NO_FAST_PATH (to measure or test without it),
 * the one-key calls are the portable ones only. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(NIDUS_PY_NO_FAST_PATH)
#define FAST_PATH 1
#define FAST_TARGET __attribute__((target("avx2,bmi,bmi2")))
#define NIDUS_INLINE_BLOOM_AVX2 FAST_TARGET
#include <nidus/inline_bloom.h>
#include <nidus/inline_cuckoo.h>
#else
#define FAST_PATH 0
#endif

#include "guard.h"

#define CHUNK 8192 /* keys hashed with the GIL held before each GIL-free batched call */
#define DEFER 16   /* deferred one-key cuckoo adds at most: see "deferred cuckoo adds" */

#if defined(__GNUC__)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define UNLIKELY(x) (x)
#endif

typedef struct {
    PyObject_HEAD
    nidus_filter *f;
    nidus_kind kind;
    void *typed;             /* nidus_cuckoo *, nidus_bloom *, nidus_counting_bloom * or nidus_fuse * */
    PyThread_type_lock lock; /* held across every GIL-free stretch */
    int busy;                /* a thread is in such a stretch (GIL held to read or write) */
    py_guard *guard;         /* lazy verification of a mapped file, or NULL */
    PyObject *path;          /* the file it was opened from (bytes, FS encoding), or NULL */
    Py_buffer source;        /* from_bytes' view: the buffer the filter reads (source.obj NULL otherwise) */
    PyObject *weakrefs;
    int deferrable;          /* a cuckoo filter whose adds may be deferred (see "deferred cuckoo adds") */
    unsigned npending;       /* deferred adds not applied yet (GIL held to read or write) */
    uint64_t pending[DEFER]; /* their hashes, oldest first */
} FilterObject;

static PyTypeObject FilterType, CuckooType, BloomType, CountingType, FuseType, WindowType;
static PySequenceMethods cuckoo_as_sequence; /* defined with the types, below */
static PyObject *Error, *FilterFull, *CorruptFile, *VersionError, *ReadOnlyError, *UnsupportedError,
    *IncompatibleError;

/* ---- errors ---- */

static PyObject *raise_status(nidus_status st, PyObject *filename)
{
    const char *what = nidus_strerror(st);
    switch (st) {
    case NIDUS_OK: break;
    case NIDUS_ERR_INVALID_ARGUMENT:
    case NIDUS_ERR_TOO_LARGE: PyErr_Format(PyExc_ValueError, "nidus: %s", what); break;
    case NIDUS_ERR_NO_MEMORY: PyErr_NoMemory(); break;
    case NIDUS_ERR_FULL:
    case NIDUS_ERR_LIMIT_TABLES:
    case NIDUS_ERR_LIMIT_MEMORY: PyErr_Format(FilterFull, "%s", what); break;
    case NIDUS_ERR_NOT_FOUND: PyErr_SetString(PyExc_KeyError, "key not in the filter"); break;
    case NIDUS_ERR_CORRUPT: PyErr_Format(CorruptFile, "%s", what); break;
    case NIDUS_ERR_VERSION: PyErr_Format(VersionError, "%s", what); break;
    case NIDUS_ERR_READ_ONLY: PyErr_Format(ReadOnlyError, "%s", what); break;
    case NIDUS_ERR_UNSUPPORTED: PyErr_Format(UnsupportedError, "%s", what); break;
    case NIDUS_ERR_INCOMPATIBLE: PyErr_Format(IncompatibleError, "%s", what); break;
    case NIDUS_ERR_IO:
        if (errno)
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, filename);
        else
            PyErr_Format(PyExc_OSError, "nidus: %s", what);
        break;
    case NIDUS_ERR_NOT_REGULAR:
        PyErr_Format(PyExc_OSError, "nidus: %s: %R", what, filename ? filename : Py_None);
        break;
    default: PyErr_Format(Error, "%s", what); break;
    }
    return NULL;
}

/* A mapped file whose block failed its check: the object is unusable from then on. */
static int check_corrupt(FilterObject *self)
{
    if (UNLIKELY(self->guard && py_guard_corrupt(self->guard))) {
        PyErr_Format(CorruptFile, "block %llu of %R does not match its checksum",
                     (unsigned long long)py_guard_corrupt_block(self->guard), self->path ? self->path : Py_None);
        return -1;
    }
    return 0;
}

/* ---- the object's lock ---- */

/* Waits while another thread is in a GIL-free stretch on this object (GIL held on entry and exit). */
static void wait_idle_slow(FilterObject *self)
{
    while (self->busy) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        PyThread_release_lock(self->lock);
        Py_END_ALLOW_THREADS
    }
}

static int take(FilterObject *self);
static void give(FilterObject *self);
static int flush_pending(FilterObject *self);
#if FAST_PATH
static int cuckoo_deferrable(FilterObject *self);
#endif

/* Every call but a deferred cuckoo add begins here (GIL held): waits until no other thread is inside the object,
 * applies the deferred adds, checks the mapping. -1 with an exception set when one of those failed. */
static inline int ready(FilterObject *self)
{
#ifdef NIDUS_PY_LOCK_EACH_CALL /* measurement only: what taking the lock around every call would cost */
    if (take(self))
        return -1;
    give(self);
#endif
    if (UNLIKELY(self->busy))
        wait_idle_slow(self);
    if (UNLIKELY(self->npending) && flush_pending(self))
        return -1;
    return check_corrupt(self);
}

/* Takes the object for a GIL-free stretch (GIL held on entry; released by the caller after): -1 with an exception
 * set, the object not taken, when a deferred add made since ready() failed. */
static int take(FilterObject *self)
{
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    self->busy = 1;
    /* An iterable's code may have added keys since ready(): applied before the filter's work, by this thread
     * (no other enters while busy is set). */
    if (UNLIKELY(self->npending) && flush_pending(self)) {
        give(self);
        return -1;
    }
    return 0;
}

static void give(FilterObject *self)
{
    self->busy = 0;
    PyThread_release_lock(self->lock);
}

/* ---- keys ---- */

typedef struct {
    const char *p;
    Py_ssize_t n;
    Py_buffer view;
    int has_view;
} key_bytes;

/* str as UTF-8 (cached in the str), bytes, or any contiguous buffer; anything else: TypeError. An ASCII str (a
 * compact one: every str made since Python 3.3 but legacy ones) is its own UTF-8: read in place, no call. */
static inline int key_get(PyObject *k, key_bytes *kb)
{
    kb->has_view = 0;
    if (PyUnicode_CheckExact(k) && PyUnicode_IS_COMPACT_ASCII(k)) {
        kb->p = (const char *)PyUnicode_DATA(k);
        kb->n = PyUnicode_GET_LENGTH(k);
        return 0;
    }
    if (PyUnicode_Check(k)) {
        kb->p = PyUnicode_AsUTF8AndSize(k, &kb->n);
        return kb->p ? 0 : -1;
    }
    if (PyBytes_Check(k)) {
        kb->p = PyBytes_AS_STRING(k);
        kb->n = PyBytes_GET_SIZE(k);
        return 0;
    }
    if (PyObject_CheckBuffer(k)) {
        if (PyObject_GetBuffer(k, &kb->view, PyBUF_SIMPLE) != 0) {
            PyErr_Format(PyExc_TypeError, "a key must be str or a contiguous bytes-like object, not %.200s",
                         Py_TYPE(k)->tp_name);
            return -1;
        }
        kb->p = kb->view.buf;
        kb->n = kb->view.len;
        kb->has_view = 1;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a key must be str or bytes-like, not %.200s", Py_TYPE(k)->tp_name);
    return -1;
}

static inline void key_done(key_bytes *kb)
{
    if (kb->has_view)
        PyBuffer_Release(&kb->view);
}

/* The key's hash as the filter computes it (GIL held; may run the key's buffer code). */
static inline int key_hash(FilterObject *self, PyObject *k, uint64_t *h)
{
    key_bytes kb;
    if (key_get(k, &kb) != 0)
        return -1;
    *h = nidus_filter_hash(self->f, kb.p, (size_t)kb.n);
    key_done(&kb);
    return 0;
}

/* Walks a list, a tuple or any iterable a chunk of hashes at a time: fill() hashes up to CHUNK keys. */
typedef struct {
    PyObject *seq; /* list or tuple (a new reference), or NULL */
    PyObject *it;  /* iterator, or NULL */
    Py_ssize_t at;
} key_walk;

static int walk_start(key_walk *w, PyObject *iterable)
{
    w->seq = w->it = NULL;
    w->at = 0;
    if (PyList_CheckExact(iterable) || PyTuple_CheckExact(iterable)) {
        Py_INCREF(iterable);
        w->seq = iterable;
        return 0;
    }
    w->it = PyObject_GetIter(iterable);
    return w->it ? 0 : -1;
}

static void walk_end(key_walk *w)
{
    Py_XDECREF(w->seq);
    Py_XDECREF(w->it);
}

/* Hashes the next keys into h (at most CHUNK) and returns how many; *failed is set (with an exception) when a key
or the iterator failed, after the keys before it were hashed. */
static Py_ssize_t walk_fill(FilterObject *self, key_walk *w, uint64_t *h, int *failed)
{
    Py_ssize_t n = 0;
    *failed = 0;
    while (n < CHUNK) {
        PyObject *k;
        if (w->seq) {
            if (w->at >= PySequence_Fast_GET_SIZE(w->seq))
                break;
            k = PySequence_Fast_GET_ITEM(w->seq, w->at);
            w->at++;
            if (PyUnicode_CheckExact(k) || PyBytes_CheckExact(k)) { /* no Python code runs: no reference needed */
                key_bytes kb;
                if (key_get(k, &kb) != 0) {
                    *failed = 1;
                    break;
                }
                h[n++] = nidus_filter_hash(self->f, kb.p, (size_t)kb.n);
                continue;
            }
            Py_INCREF(k);
        } else if (!(k = PyIter_Next(w->it))) {
            *failed = PyErr_Occurred() != NULL;
            break;
        }
        int rc = key_hash(self, k, &h[n]);
        Py_DECREF(k);
        if (rc != 0) {
            *failed = 1;
            break;
        }
        n++;
    }
    return n;
}

/* ---- objects ---- */

static PyTypeObject *type_of_kind(nidus_kind kind)
{
    switch (kind) {
    case NIDUS_KIND_CUCKOO: return &CuckooType;
    case NIDUS_KIND_BLOOM: return &BloomType;
    case NIDUS_KIND_COUNTING_BLOOM: return &CountingType;
    case NIDUS_KIND_FUSE: return &FuseType;
    case NIDUS_KIND_WINDOW: return &WindowType;
    }
    return &FilterType;
}

/* A new object of `type` without a filter yet (NULL on failure). */
static FilterObject *alloc_object(PyTypeObject *type)
{
    FilterObject *self = (FilterObject *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->lock = PyThread_allocate_lock();
    if (!self->lock) {
        Py_DECREF(self);
        PyErr_NoMemory();
        return NULL;
    }
    return self;
}

static void attach(FilterObject *self, nidus_filter *f)
{
    self->f = f;
    self->kind = nidus_filter_kind(f);
    switch (self->kind) {
    case NIDUS_KIND_CUCKOO: self->typed = nidus_filter_cuckoo(f); break;
    case NIDUS_KIND_BLOOM: self->typed = nidus_filter_bloom(f); break;
    case NIDUS_KIND_COUNTING_BLOOM: self->typed = nidus_filter_counting_bloom(f); break;
    case NIDUS_KIND_FUSE: self->typed = nidus_filter_fuse(f); break;
    case NIDUS_KIND_WINDOW: self->typed = nidus_filter_window(f); break;
    }
#if FAST_PATH
    if (self->kind == NIDUS_KIND_CUCKOO)
        self->deferrable = cuckoo_deferrable(self);
#endif
}

/* Wraps a filter in an object of its kind's type; frees it on failure. */
static PyObject *wrap(nidus_filter *f)
{
    FilterObject *self = alloc_object(type_of_kind(nidus_filter_kind(f)));
    if (!self) {
        nidus_filter_free(f);
        return NULL;
    }
    attach(self, f);
    return (PyObject *)self;
}

static void filter_dealloc(FilterObject *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)self);
    nidus_filter_free(self->f);
    self->f = NULL;
    if (self->guard)
        py_guard_free(self->guard);
    if (self->source.obj)
        PyBuffer_Release(&self->source);
    Py_CLEAR(self->path);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int filter_traverse(FilterObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->source.obj);
    return 0;
}

/* ---- parameters ---- */

/* An int in [lo, hi] (None: `dflt`); ValueError out of range, TypeError for anything but an int. */
static int get_uint(PyObject *o, const char *name, unsigned long long lo, unsigned long long hi,
                    unsigned long long dflt, unsigned long long *out)
{
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.200s", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    unsigned long long u;
    if (overflow > 0) {
        u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be in [%llu, %llu]", name, lo, hi);
            return -1;
        }
    } else if (overflow < 0 || v < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be at least %llu", name, lo);
        return -1;
    } else {
        u = (unsigned long long)v;
    }
    if (u < lo || u > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be in [%llu, %llu]", name, lo, hi);
        return -1;
    }
    *out = u;
    return 0;
}

static int get_rate(PyObject *o, const char *name, double dflt, double *out)
{
    if (!o || o == Py_None) {
        *out = dflt;
        return 0;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    if (!(v > 0.0 && v < 1.0)) {
        PyErr_Format(PyExc_ValueError, "%s must be in (0, 1), not %R", name, o);
        return -1;
    }
    *out = v;
    return 0;
}

/* One parameter of a constructor or function: an int in [lo, hi] (None or absent: dflt) into *out, or, with
 * `rate`, a float in (0, 1) (None or absent: rate_dflt) into *rate. */
typedef struct {
    PyObject *value;
    const char *name;
    unsigned long long lo, hi, dflt, *out;
    double rate_dflt, *rate;
} param;

/* Converts the parameters in order: -1 with the exception of the first that fails. Every constructor and function
 * unpacks its arguments with PyArg_ParseTupleAndKeywords (as objects), then with this. */
static int get_params(const param *ps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const param *p = &ps[i];
        if (p->rate ? get_rate(p->value, p->name, p->rate_dflt, p->rate)
                    : get_uint(p->value, p->name, p->lo, p->hi, p->dflt, p->out))
            return -1;
    }
    return 0;
}

#define GET_PARAMS(...) get_params((const param[]){__VA_ARGS__}, sizeof((const param[]){__VA_ARGS__}) / sizeof(param))
#define UINT_PARAM(value, name, lo, hi, dflt, out) {value, name, lo, hi, dflt, out, 0, NULL}
#define CAPACITY_PARAM(value, out) UINT_PARAM(value, "capacity", 1, UINT64_MAX, 1, out)
#define SEED_PARAM(value, out) UINT_PARAM(value, "seed", 0, UINT64_MAX, 0, out)
#define ERROR_RATE_PARAM(value, out) {value, "error_rate", 0, 0, 0, NULL, 0.01, out}

/* ---- time (windowed filters) ---- */

/* The current time in milliseconds since the Unix epoch: a windowed filter's default `now`. */
static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The time a call is made at: `now` (an int of milliseconds, or None or absent: the current time) for a windowed
 * filter; 0 (unused) for the other kinds. */
static int time_of(FilterObject *self, PyObject *now, uint64_t *t)
{
    *t = 0;
    if (self->kind != NIDUS_KIND_WINDOW)
        return 0;
    if (!now || now == Py_None) {
        *t = now_ms();
        return 0;
    }
    unsigned long long v;
    if (get_uint(now, "now", 0, UINT64_MAX, 0, &v))
        return -1;
    *t = v;
    return 0;
}

/* Sets a windowed filter's handle to time t; nothing for the other kinds. Called once the object is idle (after
 * ready() or take()), right before the library call, so that no other call can move the handle's time between. */
static inline void at_time(FilterObject *self, uint64_t t)
{
    if (self->kind == NIDUS_KIND_WINDOW)
        nidus_filter_set_time(self->f, t);
}

static PyObject *new_filter(PyTypeObject *type, nidus_filter_params *p)
{
    FilterObject *self = alloc_object(type);
    if (!self)
        return NULL;
    nidus_filter *f;
    nidus_status st = nidus_filter_new(p, &f);
    if (st) {
        Py_DECREF(self);
        return raise_status(st, NULL);
    }
    attach(self, f);
    return (PyObject *)self;
}

/* A cuckoo shape's bucket size (1, 2, 4, 8) and fingerprint bits ([4, max_bits]), 0 for either meaning "chosen
 * for the error rate" (get_params checked the upper bounds): -1 with ValueError otherwise. */
static int check_shape(unsigned long long bucket, unsigned long long bits, unsigned max_bits)
{
    if (bucket != 0 && bucket != 1 && bucket != 2 && bucket != 4 && bucket != 8) {
        PyErr_SetString(PyExc_ValueError, "bucket_size must be 1, 2, 4 or 8 (or 0: chosen for the error rate)");
        return -1;
    }
    if (bits != 0 && bits < 4) {
        PyErr_Format(PyExc_ValueError, "fingerprint_bits must be in [4, %u] (or 0: chosen for the error rate)",
                     max_bits);
        return -1;
    }
    return 0;
}

/* A CuckooFilter's default shape (bucket_size and fingerprint_bits 0, not semi-sorted): the library's, but b=2
 * where the library's b=4 buckets are not whole bytes and b=2's are, b=2 meets the error rate too and costs at most
 * 4 % more memory a key (0.1 %: b=2 f=12, 14.1 bits a key, against b=4 f=13, 13.6): one-key lookups of
 * whole-byte buckets measured faster from Python (docs/PYTHON.md, "Speed"). */
static void python_default_shape(nidus_cuckoo_params *c)
{
    nidus_cuckoo_plan lib, two;
    if (c->bucket_size || c->fingerprint_bits || c->semi_sort || nidus_cuckoo_plan_params(c, &lib) != NIDUS_OK ||
        lib.bucket_size != 4 || lib.fingerprint_bits % 2 == 0)
        return;
    nidus_cuckoo_params b2 = *c;
    b2.bucket_size = 2;
    if (nidus_cuckoo_plan_params(&b2, &two) == NIDUS_OK && two.fingerprint_bits % 4 == 0 &&
        two.error_bound <= c->error_rate && two.bits_per_item <= 1.04 * lib.bits_per_item)
        c->bucket_size = 2;
}

static PyObject *cuckoo_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"capacity", "error_rate", "bucket_size", "fingerprint_bits", "expansion", "seed",
                         "semi_sort", "max_kicks", NULL};
    PyObject *cap = NULL, *err = NULL, *b = NULL, *fp = NULL, *exp = NULL, *seed = NULL, *kicks = NULL;
    int semi = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOOO$pO:CuckooFilter", kw, &cap, &err, &b, &fp, &exp, &seed,
                                     &semi, &kicks))
        return NULL;
    unsigned long long capacity, bucket, bits, expansion, s, max_kicks;
    double rate;
    if (GET_PARAMS(CAPACITY_PARAM(cap, &capacity), ERROR_RATE_PARAM(err, &rate),
                   UINT_PARAM(b, "bucket_size", 0, 8, 0, &bucket), UINT_PARAM(fp, "fingerprint_bits", 0, 32, 0, &bits),
                   UINT_PARAM(exp, "expansion", 0, UINT_MAX, 1, &expansion), SEED_PARAM(seed, &s),
                   UINT_PARAM(kicks, "max_kicks", 0, 65535, 0, &max_kicks)))
        return NULL;
    if (check_shape(bucket, bits, 32))
        return NULL;
    if (semi && bucket != 4) {
        PyErr_SetString(PyExc_ValueError, "semi_sort needs bucket_size=4");
        return NULL;
    }
    nidus_cuckoo_params c = {.capacity = capacity, .error_rate = rate, .fingerprint_bits = (unsigned)bits,
                             .bucket_size = (unsigned)bucket, .max_kicks = (unsigned)max_kicks,
                             .semi_sort = semi != 0, .seed = s, .expansion = (unsigned)expansion};
    python_default_shape(&c);
    nidus_filter_params p = {.kind = NIDUS_KIND_CUCKOO, .capacity = capacity, .error_rate = rate,
                             .expansion = (unsigned)expansion, .kind_params = &c};
    return new_filter(type, &p);
}

static PyObject *bloom_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"capacity", "error_rate", "expansion", "seed", "layout", NULL};
    PyObject *cap = NULL, *err = NULL, *exp = NULL, *seed = NULL;
    const char *layout = "blocked";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOO$s:BloomFilter", kw, &cap, &err, &exp, &seed, &layout))
        return NULL;
    unsigned long long capacity, expansion, s;
    double rate;
    if (GET_PARAMS(CAPACITY_PARAM(cap, &capacity), ERROR_RATE_PARAM(err, &rate),
                   UINT_PARAM(exp, "expansion", 0, NIDUS_BLOOM_MAX_EXPANSION, 2, &expansion), SEED_PARAM(seed, &s)))
        return NULL;
    unsigned lay;
    if (strcmp(layout, "blocked") == 0)
        lay = NIDUS_BLOOM_LAYOUT_BLOCKED;
    else if (strcmp(layout, "compact") == 0)
        lay = NIDUS_BLOOM_LAYOUT_COMPACT;
    else {
        PyErr_Format(PyExc_ValueError, "layout must be 'blocked' or 'compact', not '%.100s'", layout);
        return NULL;
    }
    nidus_bloom_params b = {.capacity = capacity, .error_rate = rate, .expansion = (unsigned)expansion, .seed = s,
                            .layout = lay};
    nidus_filter_params p = {.kind = NIDUS_KIND_BLOOM, .capacity = capacity, .error_rate = rate,
                             .expansion = (unsigned)expansion, .kind_params = &b};
    return new_filter(type, &p);
}

static PyObject *counting_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"capacity", "error_rate", "seed", NULL};
    PyObject *cap = NULL, *err = NULL, *seed = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO:CountingBloomFilter", kw, &cap, &err, &seed))
        return NULL;
    unsigned long long capacity, s;
    double rate;
    if (GET_PARAMS(CAPACITY_PARAM(cap, &capacity), ERROR_RATE_PARAM(err, &rate), SEED_PARAM(seed, &s)))
        return NULL;
    nidus_counting_bloom_params c = {.capacity = capacity, .error_rate = rate, .seed = s};
    nidus_filter_params p = {.kind = NIDUS_KIND_COUNTING_BLOOM, .capacity = capacity, .error_rate = rate,
                             .kind_params = &c};
    return new_filter(type, &p);
}

/* A windowed filter's max_memory below what it takes when created: ValueError naming that size, measured on the
 * filter made without the bound (its tables calloc'd, never touched). */
static PyObject *window_below_bound(nidus_filter_params *p, nidus_window_params *w)
{
    unsigned long long bound = w->max_memory;
    w->max_memory = 0;
    nidus_filter *f;
    if (nidus_filter_new(p, &f) != NIDUS_OK)
        return PyErr_Format(PyExc_ValueError, "max_memory=%llu is below what the filter takes when created", bound);
    nidus_filter_stats s;
    nidus_filter_get_stats(f, &s);
    nidus_filter_free(f);
    return PyErr_Format(PyExc_ValueError, "max_memory=%llu is below the %llu bytes the filter takes when created",
                        bound, (unsigned long long)s.memory_bytes);
}

static PyObject *window_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"capacity", "window", "error_rate", "bucket_size", "fingerprint_bits", "seed", "max_kicks",
                         "expansion", "max_memory", NULL};
    PyObject *cap = NULL, *win = NULL, *err = NULL, *b = NULL, *fp = NULL, *seed = NULL, *kicks = NULL, *exp = NULL,
             *mem = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OOOO$OOO:WindowedCuckooFilter", kw, &cap, &win, &err, &b, &fp,
                                     &seed, &kicks, &exp, &mem))
        return NULL;
    unsigned long long capacity, window, bucket, bits, s, max_kicks, expansion, max_memory;
    double rate;
    if (GET_PARAMS(CAPACITY_PARAM(cap, &capacity), UINT_PARAM(win, "window", 1, NIDUS_WINDOW_MAX_TICKS, 1, &window),
                   ERROR_RATE_PARAM(err, &rate), UINT_PARAM(b, "bucket_size", 0, 8, 0, &bucket),
                   UINT_PARAM(fp, "fingerprint_bits", 0, 29, 0, &bits), SEED_PARAM(seed, &s),
                   UINT_PARAM(kicks, "max_kicks", 0, 65535, 0, &max_kicks),
                   UINT_PARAM(exp, "expansion", 0, NIDUS_WINDOW_MAX_EXPANSION, 0, &expansion),
                   UINT_PARAM(mem, "max_memory", 0, UINT64_MAX, 0, &max_memory)))
        return NULL;
    if (check_shape(bucket, bits, 29))
        return NULL;
    if (max_memory && !expansion) {
        PyErr_SetString(PyExc_ValueError, "max_memory bounds growth: it needs expansion > 0 (a windowed filter does "
                                          "not grow by default)");
        return NULL;
    }
    nidus_window_params w = {.capacity = capacity, .window = window, .error_rate = rate,
                             .fingerprint_bits = (unsigned)bits, .bucket_size = (unsigned)bucket,
                             .max_kicks = (unsigned)max_kicks, .seed = s, .expansion = (unsigned)expansion,
                             .max_memory = max_memory};
    nidus_filter_params p = {.kind = NIDUS_KIND_WINDOW, .capacity = capacity, .error_rate = rate, .window = window,
                             .kind_params = &w};
    PyObject *f = new_filter(type, &p);
    if (!f && max_memory && PyErr_ExceptionMatches(FilterFull)) { /* creation's only limit: the bound */
        PyErr_Clear();
        return window_below_bound(&p, &w);
    }
    return f;
}

static PyObject *fuse_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)type, (void)args, (void)kwds;
    PyErr_SetString(PyExc_TypeError, "a FuseFilter is built from its keys: FuseFilter.build(keys)");
    return NULL;
}

/* FuseFilter.build(keys, fingerprint_bits=8, seed=0) */
static PyObject *fuse_build(PyObject *cls, PyObject *args, PyObject *kwds)
{
    (void)cls;
    static char *kw[] = {"keys", "fingerprint_bits", "seed", NULL};
    PyObject *keys, *fp = NULL, *seed = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO:build", kw, &keys, &fp, &seed))
        return NULL;
    unsigned long long bits, s;
    if (GET_PARAMS(UINT_PARAM(fp, "fingerprint_bits", 8, 16, 8, &bits), SEED_PARAM(seed, &s)))
        return NULL;
    if (bits != 8 && bits != 16) {
        PyErr_SetString(PyExc_ValueError, "fingerprint_bits must be 8 or 16");
        return NULL;
    }
    nidus_fuse_params params = {.fingerprint_bits = (unsigned)bits, .seed = s};
    PyObject *it = PyObject_GetIter(keys);
    if (!it)
        return NULL;
    size_t n = 0, cap = 0;
    uint64_t *h = NULL;
    PyObject *k;
    while ((k = PyIter_Next(it))) {
        key_bytes kb;
        int rc = key_get(k, &kb);
        if (rc == 0) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 1024;
                uint64_t *nh = ncap <= PY_SSIZE_T_MAX / sizeof *h ? PyMem_Realloc(h, ncap * sizeof *h) : NULL;
                if (!nh) {
                    key_done(&kb);
                    Py_DECREF(k);
                    PyErr_NoMemory();
                    break;
                }
                h = nh, cap = ncap;
            }
            h[n++] = nidus_fuse_hash(&params, kb.p, (size_t)kb.n);
            key_done(&kb);
        }
        Py_DECREF(k);
        if (rc != 0)
            break;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        PyMem_Free(h);
        return NULL;
    }
    nidus_fuse *fuse = NULL;
    nidus_filter *f = NULL;
    nidus_status st;
    Py_BEGIN_ALLOW_THREADS
    st = nidus_fuse_build_hash(&params, h, n, &fuse);
    /* The generic handle takes a fuse filter through its encoding. */
    uint64_t size = st ? 0 : nidus_fuse_encoded_size(fuse);
    void *buf = NULL;
    if (!st && !(buf = size <= SIZE_MAX ? PyMem_RawMalloc((size_t)size) : NULL))
        st = NIDUS_ERR_NO_MEMORY;
    size_t written = 0;
    if (!st)
        st = nidus_fuse_encode(fuse, buf, (size_t)size, &written);
    nidus_fuse_free(fuse);
    if (!st)
        st = nidus_filter_decode(buf, written, NULL, &f);
    PyMem_RawFree(buf);
    Py_END_ALLOW_THREADS
    PyMem_Free(h);
    if (st)
        return raise_status(st, NULL);
    return wrap(f);
}

/* ---- one key ---- */

/* Every one-key call: key_begin (the object idle and not corrupt, the key's bytes), the call, key_end (the key
 * released, the object checked again: a mapped block read by the call may have failed its check). */
static inline int key_begin(FilterObject *self, PyObject *key, key_bytes *kb)
{
    return ready(self) || key_get(key, kb) ? -1 : 0;
}

static inline int key_end(FilterObject *self, key_bytes *kb)
{
    key_done(kb);
    return check_corrupt(self);
}

/* An add's status as the call's value: None (add), or whether the key was new (BloomFilter.add_new). */
static inline PyObject *added_value(FilterObject *self, key_bytes *kb, nidus_status st, PyObject *value)
{
    if (UNLIKELY(key_end(self, kb)))
        return NULL;
    if (UNLIKELY(st))
        return raise_status(st, NULL);
    Py_INCREF(value);
    return value;
}

/* An add and a lookup of one key: by the kind's own call for a cuckoo or a Bloom filter, else through the generic
 * handle at time t (time_of). `kind` is a constant at every call, so that each kind's add and `in` below compile
 * without a test of the kind on the way. */
static inline __attribute__((always_inline)) PyObject *add_at(FilterObject *self, PyObject *key, nidus_kind kind,
                                                              uint64_t t, int answer)
{
    key_bytes kb;
    if (key_begin(self, key, &kb))
        return NULL;
    bool added = false;
    nidus_status st;
    if (kind == NIDUS_KIND_CUCKOO)
        st = nidus_cuckoo_add(self->typed, kb.p, (size_t)kb.n);
    else if (kind == NIDUS_KIND_BLOOM)
        st = nidus_bloom_add(self->typed, kb.p, (size_t)kb.n, &added);
    else {
        at_time(self, t);
        st = nidus_filter_add(self->f, kb.p, (size_t)kb.n);
    }
    return added_value(self, &kb, st, !answer ? Py_None : added ? Py_True : Py_False);
}

static inline __attribute__((always_inline)) int contains_at(FilterObject *self, PyObject *key, nidus_kind kind,
                                                             uint64_t t)
{
    key_bytes kb;
    if (key_begin(self, key, &kb))
        return -1;
    bool in;
    if (kind == NIDUS_KIND_CUCKOO)
        in = nidus_cuckoo_contains(self->typed, kb.p, (size_t)kb.n);
    else if (kind == NIDUS_KIND_BLOOM)
        in = nidus_bloom_contains(self->typed, kb.p, (size_t)kb.n);
    else {
        at_time(self, t);
        in = nidus_filter_contains(self->f, kb.p, (size_t)kb.n);
    }
    return key_end(self, &kb) ? -1 : in;
}

static PyObject *cuckoo_add(FilterObject *self, PyObject *key) { return add_at(self, key, NIDUS_KIND_CUCKOO, 0, 0); }
static PyObject *bloom_add(FilterObject *self, PyObject *key) { return add_at(self, key, NIDUS_KIND_BLOOM, 0, 0); }
static PyObject *bloom_add_new(FilterObject *self, PyObject *key) { return add_at(self, key, NIDUS_KIND_BLOOM, 0, 1); }
static int cuckoo_contains(FilterObject *self, PyObject *key) { return contains_at(self, key, NIDUS_KIND_CUCKOO, 0); }
static int bloom_contains(FilterObject *self, PyObject *key) { return contains_at(self, key, NIDUS_KIND_BLOOM, 0); }

#if FAST_PATH
/* ---- fast one-key calls ----
 * For an ASCII str (read in place) on an idle filter that is not a lazily checked mapping, the inline path of
 * the library's headers (nidus/inline_bloom.h, nidus/inline_cuckoo.h): the key hashed inline (XXH3 of up to 32
 * bytes), then the Bloom filter's block or the cuckoo filter's two bucket words (at a whole byte or a bit offset)
 * read in this function, where the filter's published view says that is its state (a compare of its tag).
 * Anything else (other keys, a busy or
 * mapped object) takes the calls above; a state the view does not describe (a grown or compact Bloom filter, a
 * cuckoo filter of packed fingerprints) the library's call by key, without the checks those make again.
 * Callgrind, 200,000 str keys of 19-20 bytes, instructions a call with the interpreter's loop (about 190 of
 * them): Bloom add 457 -> 331, lookup 389 -> 242-284 (a set's lookup: 217-301). */

/* The key's bytes when the fast path may take the call: an ASCII str, the object idle and without a guard. */
static inline int fast_key(FilterObject *self, PyObject *key, const char **p, size_t *n)
{
    if (UNLIKELY(self->busy | (self->guard != NULL)) || !PyUnicode_CheckExact(key) ||
        !PyUnicode_IS_COMPACT_ASCII(key))
        return 0;
    *p = (const char *)PyUnicode_DATA(key);
    *n = (size_t)PyUnicode_GET_LENGTH(key);
    return 1;
}

/* nidus_hash(p, n, seed) (flip: nidus_inline_hash8_flip(seed)): inline up to 32 bytes, the library's beyond. */
static inline FAST_TARGET uint64_t fast_hash(const char *p, size_t n, uint64_t seed, uint64_t flip)
{
    if (n - 17 <= 15)
        return nidus_inline_hash_mid(p, n, seed);
    if (n == 8)
        return nidus_inline_hash8(p, flip);
    if (n <= 16)
        return nidus_inline_hash_short(p, n, seed);
    return nidus_hash(p, n, seed);
}

static FAST_TARGET int bloom_contains_fast(FilterObject *self, PyObject *key)
{
    const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(self->typed);
    const char *p;
    size_t n;
    if (!fast_key(self, key, &p, &n) || self->npending) /* deferred adds: applied by ready() first */
        return bloom_contains(self, key);
    if (!nidus_inline_bloom_can_look_up(v)) /* grown, or compact: the library's call */
        return nidus_bloom_contains(self->typed, p, n);
    uint64_t h = fast_hash(p, n, nidus_inline_bloom_seed_of_flip(v->hash8_flip), v->hash8_flip);
    return nidus_inline_bloom_probe(nidus_inline_bloom_block(v, h), h);
}

/* BloomFilter.add_new: the key's bits set here, after the deferred adds (bloom_add, through ready(), when any). */
static FAST_TARGET PyObject *bloom_add_new_fast(FilterObject *self, PyObject *key)
{
    nidus_inline_bloom_view *v = (nidus_inline_bloom_view *)self->typed;
    const char *p;
    size_t n;
    if (!fast_key(self, key, &p, &n) || self->npending || !nidus_inline_bloom_can_add(v) || v->items >= v->capacity)
        return bloom_add_new(self, key);
    uint64_t h = fast_hash(p, n, nidus_inline_bloom_seed_of_flip(v->hash8_flip), v->hash8_flip);
    bool fresh = nidus_inline_bloom_set(nidus_inline_bloom_block(v, h), h);
    v->items += fresh;
    PyObject *r = fresh ? Py_True : Py_False;
    Py_INCREF(r);
    return r;
}

static FAST_TARGET int cuckoo_contains_fast(FilterObject *self, PyObject *key)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(self->typed);
    uint32_t state = nidus_cuckoo_view_state(v);
    const char *p;
    size_t n;
    if (!fast_key(self, key, &p, &n) || self->npending) /* deferred adds: applied by ready() first */
        return cuckoo_contains(self, key);
    if (state == NIDUS_CUCKOO_TAG_PLAIN)
        return nidus_cuckoo_view_plain_contains(v, fast_hash(p, n, v->seed, v->hash8_flip));
    if (state == NIDUS_CUCKOO_TAG_BITS)
        return nidus_cuckoo_view_bits_contains(v, fast_hash(p, n, v->seed, v->hash8_flip));
    if (state == NIDUS_CUCKOO_TAG_SEMI)
        return nidus_cuckoo_view_semi_contains(v, fast_hash(p, n, v->seed, v->hash8_flip));
    return nidus_cuckoo_contains(self->typed, p, n); /* packed fingerprints, grown...: the library's call */
}

/* ---- deferred cuckoo adds ----
 * A one-key add to a cuckoo filter waits for memory (its two buckets), and its answer is None: so the fast path
 * hashes the key and queues the hash, and every DEFER adds the queue goes to the library's batched add
 * (nidus_cuckoo_add_many_hash), which requests the buckets of all of them before it writes any, so that their
 * waits overlap. The queue is applied earlier by the next call of any other kind on the object: ready() and
 * take() apply it, in order, before the call reads or writes the filter (lookups, count, len, remove, batched
 * calls, save, to_bytes, copy, pickling, stats, repr, and every call of another thread, which passes through
 * ready() too). The filter then holds the same bytes as after the same adds made one at a time. Dropping the
 * object drops the queue unseen.
 * The rule for errors: an add is deferred only when it cannot raise nidus.FilterFull: the filter is writable,
 * may grow (expansion > 0), and its next growth is within its limits (no memory cap, at least two tables to go
 * before max_tables, fingerprints that can widen), which `deferrable` records, checked again after each applied
 * queue. Such an add fails only for lack of memory; then the keys from the failing one on stay queued and
 * MemoryError is raised by the call that was applying them (as CPython raises MemoryError wherever an
 * allocation fails), and every later call tries them again. Every other add (a filter that may not grow or is
 * near its limits, a read-only or lazily mapped one, a key other than an ASCII str) runs at once and raises from
 * its own call, after the queued ones. The Bloom filter's adds are deferred by the rule below. */

/* Whether adds to this cuckoo filter may be deferred (see above). */
static int cuckoo_deferrable(FilterObject *self)
{
    if (nidus_filter_is_read_only(self->f))
        return 0;
    nidus_cuckoo_stats c;
    nidus_cuckoo_table_stats newest;
    nidus_cuckoo_get_stats(self->typed, &c);
    /* a growth widens fingerprints by 2 bits at most (its error budget is at least a quarter of the last one's) */
    return c.expansion > 0 && c.tables + 2 <= c.max_tables && c.max_memory == 0 &&
           nidus_cuckoo_get_table_stats(self->typed, c.tables - 1, &newest) == NIDUS_OK && newest.fingerprint_bits <= 30;
}

static __attribute__((noinline)) int flush_pending(FilterObject *self)
{
    size_t done = 0, n = self->npending;
    nidus_status st = self->kind == NIDUS_KIND_BLOOM
                          ? nidus_bloom_add_many_hash(self->typed, self->pending, n, NULL, &done)
                          : nidus_cuckoo_add_many_hash(self->typed, self->pending, n, &done);
    if (done < n)
        memmove(self->pending, self->pending + done, (n - done) * sizeof *self->pending);
    self->npending = (unsigned)(n - done);
    if (self->kind == NIDUS_KIND_CUCKOO)
        self->deferrable = cuckoo_deferrable(self);
    if (st) {
        raise_status(st, NULL);
        return -1;
    }
    return 0;
}

static FAST_TARGET PyObject *cuckoo_add_fast(FilterObject *self, PyObject *key)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(self->typed);
    uint32_t state = nidus_cuckoo_view_state(v);
    const char *p;
    size_t n;
    if (!fast_key(self, key, &p, &n) || !self->deferrable)
        return cuckoo_add(self, key); /* at once, after the queued ones (ready()) */
    if (self->npending == DEFER && flush_pending(self))
        return NULL;
    /* the view's seed where its tag says it holds, else the library's hash */
    self->pending[self->npending++] = state == NIDUS_CUCKOO_TAG_PLAIN || state == NIDUS_CUCKOO_TAG_BITS ||
                                              state == NIDUS_CUCKOO_TAG_SEMI
                                          ? fast_hash(p, n, v->seed, v->hash8_flip)
                                          : nidus_cuckoo_hash(self->typed, p, n);
    Py_RETURN_NONE;
}

/* ---- deferred Bloom adds ----
 * BloomFilter.add returns None, so its wait for the key's block is deferred as the cuckoo adds' are: the key is
 * hashed, its block requested from memory (a prefetch) and the hash queued; every DEFER adds (or before any other
 * call, as above) the queue goes to nidus_bloom_add_many_hash, and the filter holds the same bytes as after the
 * same adds made one at a time. An add is queued only where the view says inline adds hold (one blocked layer,
 * writable) and the layer has room for it and every queued one (items + queued < capacity): no queued add grows
 * the filter, so none can fail (nor raise FilterFull). Every other add runs at once, after the queued ones, and
 * raises from its own call; so does add_new, whose answer (whether the key was new) needs the block. */
static FAST_TARGET PyObject *bloom_add_fast(FilterObject *self, PyObject *key)
{
    nidus_inline_bloom_view *v = (nidus_inline_bloom_view *)self->typed;
    const char *p;
    size_t n;
    if (!fast_key(self, key, &p, &n) || !nidus_inline_bloom_can_add(v))
        return bloom_add(self, key);
    if (self->npending == DEFER && flush_pending(self))
        return NULL;
    if (v->items + self->npending >= v->capacity) /* it may grow the filter: at once, after the queued ones */
        return bloom_add(self, key);
    uint64_t h = fast_hash(p, n, nidus_inline_bloom_seed_of_flip(v->hash8_flip), v->hash8_flip);
    __builtin_prefetch(nidus_inline_bloom_block(v, h), 1, 3);
    self->pending[self->npending++] = h;
    Py_RETURN_NONE;
}
#endif

/* _inline_view(f), for the tests: the inline view a cuckoo filter's one-key fast path reads now ("plain": one-word
 * buckets, "bits": buckets at a bit offset, "semi": semi-sorted), after its deferred adds; None when it takes the
 * library's calls (any other state or kind, or no fast path on this CPU or build). */
static PyObject *mod_inline_view(PyObject *m, PyObject *obj)
{
    (void)m;
#if FAST_PATH
    if (PyObject_TypeCheck(obj, &CuckooType) && cuckoo_as_sequence.sq_contains == (objobjproc)cuckoo_contains_fast) {
        FilterObject *self = (FilterObject *)obj;
        if (ready(self))
            return NULL;
        uint32_t state = nidus_cuckoo_view_state(nidus_cuckoo_view_of(self->typed));
        if (state == NIDUS_CUCKOO_TAG_PLAIN)
            return PyUnicode_FromString("plain");
        if (state == NIDUS_CUCKOO_TAG_BITS)
            return PyUnicode_FromString("bits");
        if (state == NIDUS_CUCKOO_TAG_SEMI)
            return PyUnicode_FromString("semi");
    }
#else
    (void)obj;
#endif
    Py_RETURN_NONE;
}

#if !FAST_PATH
static int flush_pending(FilterObject *self)
{
    (void)self;
    return 0;
}
#endif

/* The other kinds (the counting Bloom filter's add; `in` of a counting Bloom or fuse filter). */
static PyObject *filter_add(FilterObject *self, PyObject *key)
{
    return add_at(self, key, NIDUS_KIND_COUNTING_BLOOM, 0, 0);
}

static int filter_contains(FilterObject *self, PyObject *key)
{
    return contains_at(self, key, NIDUS_KIND_COUNTING_BLOOM, 0);
}

/* Removes one copy of the key (at time t: time_of): 0 when removed, 1 when it was not there, -1 with an exception
 * set. */
static int remove_key(FilterObject *self, PyObject *key, uint64_t t)
{
    key_bytes kb;
    if (key_begin(self, key, &kb))
        return -1;
    at_time(self, t);
    nidus_status st = nidus_filter_remove(self->f, kb.p, (size_t)kb.n);
    if (key_end(self, &kb))
        return -1;
    if (st == NIDUS_ERR_NOT_FOUND)
        return 1;
    if (st) {
        raise_status(st, NULL);
        return -1;
    }
    return 0;
}

static PyObject *remove_at(FilterObject *self, PyObject *key, uint64_t t)
{
    int rc = remove_key(self, key, t);
    if (rc < 0)
        return NULL;
    if (rc > 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *discard_at(FilterObject *self, PyObject *key, uint64_t t)
{
    int rc = remove_key(self, key, t);
    return rc < 0 ? NULL : PyBool_FromLong(rc == 0);
}

static PyObject *count_at(FilterObject *self, PyObject *key, uint64_t t)
{
    key_bytes kb;
    if (key_begin(self, key, &kb))
        return NULL;
    at_time(self, t);
    uint64_t n = nidus_filter_count(self->f, kb.p, (size_t)kb.n);
    if (key_end(self, &kb))
        return NULL;
    return PyLong_FromUnsignedLongLong(n);
}

/* The kinds without a time: the generic calls. */
static PyObject *filter_remove(FilterObject *self, PyObject *key) { return remove_at(self, key, 0); }
static PyObject *filter_discard(FilterObject *self, PyObject *key) { return discard_at(self, key, 0); }

static PyObject *filter_count(FilterObject *self, PyObject *key)
{
    uint64_t t;
    return time_of(self, NULL, &t) ? NULL : count_at(self, key, t);
}

/* A windowed filter's calls of a key (or keys) and an optional time: (key, now=None), unpacked here for all of them;
 * `kw` names the two. */
static char *key_kw[] = {"key", "now", NULL}, *keys_kw[] = {"keys", "now", NULL};

static int arg_and_time(FilterObject *self, PyObject *args, PyObject *kwds, const char *format, char **kw,
                        PyObject **arg, uint64_t *t)
{
    PyObject *now = NULL;
    *arg = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kw, arg, &now))
        return -1;
    return time_of(self, now, t);
}

static PyObject *window_add_at(FilterObject *self, PyObject *key, uint64_t t)
{
    return add_at(self, key, NIDUS_KIND_WINDOW, t, 0);
}

static PyObject *window_contains_at(FilterObject *self, PyObject *key, uint64_t t)
{
    int in = contains_at(self, key, NIDUS_KIND_WINDOW, t);
    return in < 0 ? NULL : PyBool_FromLong(in);
}

/* `key in f`: at the current time. */
static int window_in(FilterObject *self, PyObject *key) { return contains_at(self, key, NIDUS_KIND_WINDOW, now_ms()); }

/* A windowed filter's method fn(key or keys, now=None): its arguments unpacked by arg_and_time, then
 * impl(self, key or keys, time). */
#define WINDOW_CALL(fn, format, kw, impl)                                                                              \
    static PyObject *fn(FilterObject *self, PyObject *args, PyObject *kwds)                                            \
    {                                                                                                                  \
        PyObject *arg;                                                                                                 \
        uint64_t t;                                                                                                    \
        return arg_and_time(self, args, kwds, format, kw, &arg, &t) ? NULL : impl(self, arg, t);                       \
    }

WINDOW_CALL(window_add, "O|O:add", key_kw, window_add_at)
WINDOW_CALL(window_contains, "O|O:contains", key_kw, window_contains_at)
WINDOW_CALL(window_count, "O|O:count", key_kw, count_at)
WINDOW_CALL(window_remove, "O|O:remove", key_kw, remove_at)
WINDOW_CALL(window_discard, "O|O:discard", key_kw, discard_at)

static PyObject *filter_hash(FilterObject *self, PyObject *key)
{
    uint64_t h;
    if (ready(self) || key_hash(self, key, &h))
        return NULL;
    return PyLong_FromUnsignedLongLong(h);
}

static Py_ssize_t filter_len(FilterObject *self)
{
    uint64_t t;
    if (ready(self) || time_of(self, NULL, &t))
        return -1;
    at_time(self, t);
    nidus_filter_stats s;
    nidus_filter_get_stats(self->f, &s);
    if (check_corrupt(self))
        return -1;
    return s.items > (uint64_t)PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : (Py_ssize_t)s.items;
}

/* ---- batches ---- */

static nidus_status add_many(FilterObject *self, const uint64_t *h, size_t n, size_t *done)
{
    switch (self->kind) {
    case NIDUS_KIND_CUCKOO: return nidus_cuckoo_add_many_hash(self->typed, h, n, done);
    case NIDUS_KIND_BLOOM: return nidus_bloom_add_many_hash(self->typed, h, n, NULL, done);
    default:
        for (size_t i = 0; i < n; i++) {
            nidus_status st = nidus_filter_add_hash(self->f, h[i]);
            if (st) {
                *done = i;
                return st;
            }
        }
        *done = n;
        return NIDUS_OK;
    }
}

/* update and contains_many at time t (time_of): set again in every GIL-free stretch, since the iterable's own
 * code runs between them and may call the filter at another time. */
static PyObject *update_at(FilterObject *self, PyObject *iterable, uint64_t t)
{
    if (ready(self))
        return NULL;
    if (nidus_filter_is_read_only(self->f) || self->kind == NIDUS_KIND_FUSE)
        return raise_status(self->kind == NIDUS_KIND_FUSE ? NIDUS_ERR_UNSUPPORTED : NIDUS_ERR_READ_ONLY, NULL);
    key_walk w;
    if (walk_start(&w, iterable))
        return NULL;
    uint64_t *h = PyMem_Malloc(CHUNK * sizeof *h);
    if (!h) {
        walk_end(&w);
        return PyErr_NoMemory();
    }
    nidus_status st = NIDUS_OK;
    int failed = 0;
    while (!st && !failed) {
        /* The keys before a failing one are added, then its exception raised. */
        Py_ssize_t n = walk_fill(self, &w, h, &failed);
        if (n == 0)
            break;
        size_t done = 0;
        if (take(self))
            break;
        at_time(self, t);
        Py_BEGIN_ALLOW_THREADS
        st = add_many(self, h, (size_t)n, &done);
        Py_END_ALLOW_THREADS
        give(self);
        if (check_corrupt(self))
            break;
    }
    PyMem_Free(h);
    walk_end(&w);
    if (PyErr_Occurred())
        return NULL;
    if (st)
        return raise_status(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *contains_many_at(FilterObject *self, PyObject *iterable, uint64_t t)
{
    if (ready(self))
        return NULL;
    key_walk w;
    if (walk_start(&w, iterable))
        return NULL;
    Py_ssize_t expect = w.seq ? PySequence_Fast_GET_SIZE(w.seq) : 0;
    PyObject *result = PyList_New(expect);
    uint64_t *h = PyMem_Malloc(CHUNK * (sizeof *h + sizeof(bool)));
    if (!result || !h) {
        Py_XDECREF(result);
        PyMem_Free(h);
        walk_end(&w);
        return h ? NULL : PyErr_NoMemory();
    }
    bool *in = (bool *)(h + CHUNK);
    Py_ssize_t n, at = 0;
    int failed = 0;
    while ((n = walk_fill(self, &w, h, &failed)) > 0 && !failed) {
        if (take(self))
            break;
        at_time(self, t);
        Py_BEGIN_ALLOW_THREADS
        nidus_filter_contains_many_hash(self->f, h, (size_t)n, in);
        Py_END_ALLOW_THREADS
        give(self);
        if (check_corrupt(self))
            break;
        for (Py_ssize_t i = 0; i < n; i++, at++) {
            PyObject *b = in[i] ? Py_True : Py_False;
            Py_INCREF(b);
            if (at < expect)
                PyList_SET_ITEM(result, at, b);
            else if (PyList_Append(result, b) != 0) {
                Py_DECREF(b);
                break;
            } else
                Py_DECREF(b);
        }
        if (PyErr_Occurred())
            break;
    }
    PyMem_Free(h);
    walk_end(&w);
    if (!PyErr_Occurred() && at < expect) { /* the list shrank while it was read */
        for (Py_ssize_t i = at; i < expect; i++) {
            Py_INCREF(Py_False);
            PyList_SET_ITEM(result, i, Py_False);
        }
        PyList_SetSlice(result, at, expect, NULL);
    }
    if (PyErr_Occurred()) {
        if (at < expect) /* fill the unset items so that the list can be freed */
            for (Py_ssize_t i = at; i < expect; i++) {
                Py_INCREF(Py_False);
                PyList_SET_ITEM(result, i, Py_False);
            }
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static PyObject *filter_update(FilterObject *self, PyObject *iterable) { return update_at(self, iterable, 0); }

static PyObject *filter_contains_many(FilterObject *self, PyObject *iterable)
{
    uint64_t t;
    return time_of(self, NULL, &t) ? NULL : contains_many_at(self, iterable, t);
}

/* A windowed filter's batched calls: (keys, now=None). */
WINDOW_CALL(window_update, "O|O:update", keys_kw, update_at)
WINDOW_CALL(window_contains_many, "O|O:contains_many", keys_kw, contains_many_at)

/* ---- whole filter ---- */

static PyObject *encode_bytes(FilterObject *self)
{
    uint64_t size = nidus_filter_encoded_size(self->f);
    if (size > (uint64_t)PY_SSIZE_T_MAX)
        return raise_status(NIDUS_ERR_TOO_LARGE, NULL);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!b)
        return NULL;
    nidus_status st;
    size_t written = 0;
    char *buf = PyBytes_AS_STRING(b);
    if (take(self)) {
        Py_DECREF(b);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = nidus_filter_encode(self->f, buf, (size_t)size, &written);
    Py_END_ALLOW_THREADS
    give(self);
    if (check_corrupt(self)) {
        Py_DECREF(b);
        return NULL;
    }
    if (st || written != size) {
        Py_DECREF(b);
        return raise_status(st ? st : NIDUS_ERR_CORRUPT, NULL);
    }
    return b;
}

static PyObject *filter_to_bytes(FilterObject *self, PyObject *unused)
{
    (void)unused;
    if (ready(self))
        return NULL;
    return encode_bytes(self);
}

static PyObject *from_bytes_impl(PyObject *data, int writable);

/* A writable copy in memory (an independent object), whatever this one is: its encoding, decoded. */
static PyObject *filter_copy(FilterObject *self, PyObject *unused)
{
    (void)unused;
    if (ready(self))
        return NULL;
    PyObject *b = encode_bytes(self);
    if (!b)
        return NULL;
    PyObject *r = from_bytes_impl(b, 1);
    Py_DECREF(b);
    return r;
}

static PyObject *filter_deepcopy(FilterObject *self, PyObject *memo)
{
    (void)memo;
    return filter_copy(self, NULL);
}

static PyObject *filter_reduce(FilterObject *self, PyObject *unused)
{
    (void)unused;
    if (ready(self))
        return NULL;
    PyObject *b = encode_bytes(self);
    if (!b)
        return NULL;
    PyObject *mod = PyImport_ImportModule("nidus._nidus");
    PyObject *fn = mod ? PyObject_GetAttrString(mod, "from_bytes") : NULL;
    Py_XDECREF(mod);
    if (!fn) {
        Py_DECREF(b);
        return NULL;
    }
    return Py_BuildValue("N(NO)", fn, b, Py_True);
}

static PyObject *filter_save(FilterObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"path", NULL};
    PyObject *path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O&:save", kw, PyUnicode_FSConverter, &path))
        return NULL;
    if (!path) {
        if (!self->path) {
            PyErr_SetString(PyExc_TypeError, "save() needs a path (this filter was not opened from a file)");
            return NULL;
        }
        path = self->path;
        Py_INCREF(path);
    }
    if (ready(self)) {
        Py_DECREF(path);
        return NULL;
    }
    nidus_status st;
    const char *p = PyBytes_AS_STRING(path);
    if (take(self)) {
        Py_DECREF(path);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    st = nidus_filter_save_file(self->f, p);
    Py_END_ALLOW_THREADS
    give(self);
    if (check_corrupt(self)) {
        Py_DECREF(path);
        return NULL;
    }
    if (st) {
        PyObject *name = PyUnicode_DecodeFSDefault(p);
        raise_status(st, name);
        Py_XDECREF(name);
        Py_DECREF(path);
        return NULL;
    }
    Py_DECREF(path);
    Py_RETURN_NONE;
}

static int put(PyObject *d, const char *k, PyObject *v)
{
    if (!v)
        return -1;
    int rc = PyDict_SetItemString(d, k, v);
    Py_DECREF(v);
    return rc;
}

#define PUT_U(d, k, v) put(d, k, PyLong_FromUnsignedLongLong((unsigned long long)(v)))
#define PUT_F(d, k, v) put(d, k, PyFloat_FromDouble(v))
#define PUT_B(d, k, v) put(d, k, PyBool_FromLong(v))

static PyObject *stats_at(FilterObject *self, uint64_t t)
{
    if (ready(self))
        return NULL;
    at_time(self, t);
    nidus_filter_stats s;
    nidus_filter_get_stats(self->f, &s);
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    int rc = put(d, "kind", PyUnicode_FromString(nidus_kind_name(s.kind))) || PUT_U(d, "items", s.items) ||
             PUT_U(d, "capacity", s.capacity) || PUT_U(d, "memory_bytes", s.memory_bytes) ||
             PUT_F(d, "bits_per_item", s.bits_per_item) || PUT_F(d, "error_bound", s.error_bound) ||
             PUT_U(d, "sub_filters", s.sub_filters) ||
             PUT_B(d, "read_only", s.read_only || self->kind == NIDUS_KIND_FUSE);
    switch (self->kind) {
    case NIDUS_KIND_CUCKOO: {
        nidus_cuckoo_stats c;
        nidus_cuckoo_get_stats(self->typed, &c);
        rc = rc || PUT_U(d, "bucket_size", c.bucket_size) || PUT_U(d, "fingerprint_bits", c.fingerprint_bits) ||
             PUT_B(d, "semi_sort", c.semi_sort) || PUT_F(d, "load", c.load) || PUT_U(d, "expansion", c.expansion) ||
             PUT_U(d, "max_kicks", c.max_kicks) || PUT_U(d, "buckets", c.buckets) ||
             PUT_F(d, "target_error", c.target_error) || PUT_U(d, "items_deleted", c.items_deleted);
        break;
    }
    case NIDUS_KIND_BLOOM: {
        nidus_bloom_stats b;
        nidus_bloom_get_stats(self->typed, &b);
        rc = rc || PUT_U(d, "hashes", b.hashes) || PUT_U(d, "expansion", b.expansion) ||
             PUT_F(d, "error_rate", b.error_rate) ||
             put(d, "layout",
                 PyUnicode_FromString(b.layout == NIDUS_BLOOM_LAYOUT_BLOCKED ? "blocked" : "compact"));
        break;
    }
    case NIDUS_KIND_COUNTING_BLOOM: {
        nidus_counting_bloom_stats c;
        nidus_counting_bloom_get_stats(self->typed, &c);
        rc = rc || PUT_U(d, "hashes", c.hashes) || PUT_F(d, "error_rate", c.error_rate) ||
             PUT_U(d, "saturated", c.saturated);
        break;
    }
    case NIDUS_KIND_WINDOW: {
        nidus_window_stats w;
        nidus_window_get_stats(self->typed, t, &w);
        rc = rc || PUT_U(d, "window", w.window) || PUT_U(d, "epoch_ticks", w.epoch_ticks) ||
             PUT_U(d, "entries", w.entries) || PUT_U(d, "live", w.live) || PUT_U(d, "buckets", w.buckets) ||
             PUT_U(d, "bucket_size", w.bucket_size) || PUT_U(d, "fingerprint_bits", w.fingerprint_bits) ||
             PUT_U(d, "expansion", w.expansion) || PUT_U(d, "max_memory", w.max_memory) || PUT_U(d, "now", t);
        break;
    }
    case NIDUS_KIND_FUSE: {
        nidus_fuse_stats f;
        nidus_fuse_get_stats(self->typed, &f);
        rc = rc || PUT_U(d, "fingerprint_bits", f.fingerprint_bits) || PUT_U(d, "slots", f.slots) ||
             PUT_U(d, "seed", f.seed);
        break;
    }
    }
    if (self->guard)
        rc = rc || PUT_U(d, "blocks_checked", py_guard_checked_blocks(self->guard));
    if (rc || check_corrupt(self)) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *filter_stats(FilterObject *self, PyObject *unused)
{
    (void)unused;
    uint64_t t;
    return time_of(self, NULL, &t) ? NULL : stats_at(self, t);
}

static PyObject *window_stats(FilterObject *self, PyObject *args, PyObject *kwds)
{
    static char *kw[] = {"now", NULL};
    PyObject *now = NULL;
    uint64_t t;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:stats", kw, &now) || time_of(self, now, &t))
        return NULL;
    return stats_at(self, t);
}

static PyObject *filter_get_read_only(FilterObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(nidus_filter_is_read_only(self->f) || self->kind == NIDUS_KIND_FUSE);
}

static PyObject *filter_get_kind(FilterObject *self, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(nidus_kind_name(self->kind));
}

static PyObject *filter_repr(FilterObject *self)
{
    nidus_filter_stats s;
    if (self->npending && !self->busy && flush_pending(self))
        return NULL;
    if (!self->busy)
        nidus_filter_get_stats(self->f, &s);
    else
        memset(&s, 0, sizeof s);
    return PyUnicode_FromFormat("<%s items=%llu capacity=%llu%s>", Py_TYPE(self)->tp_name,
                                (unsigned long long)s.items, (unsigned long long)s.capacity,
                                nidus_filter_is_read_only(self->f) ? " read-only" : "");
}

/* ---- module functions ---- */

static PyObject *open_impl(PyObject *path, int writable, int lazy)
{
    py_guard *g = lazy ? py_guard_claim() : NULL;
    nidus_filter *f = NULL;
    nidus_status st;
    const char *p = PyBytes_AS_STRING(path);
    const nidus_file_guard *cb = g ? py_guard_callbacks(g) : NULL;
    Py_BEGIN_ALLOW_THREADS
    errno = 0;
    st = nidus_filter_open(p, writable ? NIDUS_FILTER_MAP_WRITABLE : NIDUS_FILTER_MAP, NULL, cb, &f);
    Py_END_ALLOW_THREADS
    if (!st && g && py_guard_corrupt(g)) { /* a block read while decoding failed its check */
        nidus_filter_free(f);
        st = NIDUS_ERR_CORRUPT;
    }
    if (st) {
        if (g)
            py_guard_free(g);
        PyObject *name = PyUnicode_DecodeFSDefault(p);
        raise_status(st, name);
        Py_XDECREF(name);
        return NULL;
    }
    FilterObject *self = (FilterObject *)wrap(f);
    if (!self) {
        if (g)
            py_guard_free(g);
        return NULL;
    }
    if (g && py_guard_checked_blocks(g) == 0) { /* not guarded (loaded, or checked whole at open) */
        py_guard_free(g);
        g = NULL;
    }
    self->guard = g;
    Py_INCREF(path);
    self->path = path;
    return (PyObject *)self;
}

static PyObject *mod_open(PyObject *mod, PyObject *args, PyObject *kwds)
{
    (void)mod;
    static char *kw[] = {"path", "writable", "lazy", NULL};
    PyObject *path;
    int writable = 0, lazy = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|p$p:open", kw, PyUnicode_FSConverter, &path, &writable, &lazy))
        return NULL;
    PyObject *r = open_impl(path, writable, lazy);
    Py_DECREF(path);
    return r;
}

/* The bytes of a filter file (an even format version: the encoding framed in checksummed blocks) rather than an
encoding: opened as a file, through an anonymous one holding a copy. */
static bool is_file_image(const Py_buffer *v)
{
    const unsigned char *b = v->buf;
    return v->len >= 16 && memcmp(b, "NIDUS", 5) == 0 && b[5] % 2 == 0;
}

static PyObject *open_file_image(const Py_buffer *v, int writable)
{
    int fd = memfd_create("nidus.from_bytes", MFD_CLOEXEC);
    if (fd < 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    const char *p = v->buf;
    Py_ssize_t left = v->len;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    while (left > 0) {
        ssize_t w = write(fd, p, (size_t)left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err = w < 0 ? errno : EIO;
            break;
        }
        p += w, left -= w;
    }
    Py_END_ALLOW_THREADS
    if (err) {
        close(fd);
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *path = PyBytes_FromFormat("/proc/self/fd/%d", fd);
    PyObject *r = path ? open_impl(path, writable, 0) : NULL; /* in memory already: checked whole */
    Py_XDECREF(path);
    close(fd); /* the mapping holds the file */
    if (r)
        Py_CLEAR(((FilterObject *)r)->path); /* not a path to save to */
    return r;
}

static PyObject *from_bytes_impl(PyObject *data, int writable)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) != 0)
        return NULL;
    if (is_file_image(&view)) {
        PyObject *r = open_file_image(&view, writable);
        PyBuffer_Release(&view);
        return r;
    }
    nidus_filter *f;
    nidus_status st;
    Py_BEGIN_ALLOW_THREADS
    st = writable ? nidus_filter_decode(view.buf, (size_t)view.len, NULL, &f)
                  : nidus_filter_view(view.buf, (size_t)view.len, NULL, &f);
    Py_END_ALLOW_THREADS
    if (st) {
        PyBuffer_Release(&view);
        return raise_status(st, NULL);
    }
    FilterObject *self = (FilterObject *)wrap(f);
    if (!self || writable) {
        PyBuffer_Release(&view);
        return (PyObject *)self;
    }
    self->source = view; /* the view reads it: kept until the object goes */
    return (PyObject *)self;
}

static PyObject *mod_from_bytes(PyObject *mod, PyObject *args, PyObject *kwds)
{
    (void)mod;
    static char *kw[] = {"data", "writable", NULL};
    PyObject *data;
    int writable = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|p:from_bytes", kw, &data, &writable))
        return NULL;
    return from_bytes_impl(data, writable);
}

static PyObject *mod_hash(PyObject *mod, PyObject *args, PyObject *kwds)
{
    (void)mod;
    static char *kw[] = {"key", "seed", NULL};
    PyObject *key, *seed = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:hash", kw, &key, &seed))
        return NULL;
    unsigned long long s;
    key_bytes kb;
    if (GET_PARAMS(SEED_PARAM(seed, &s)) || key_get(key, &kb))
        return NULL;
    uint64_t h = nidus_hash(kb.p, (size_t)kb.n, s);
    key_done(&kb);
    return PyLong_FromUnsignedLongLong(h);
}

/* ---- types ---- */

#define DOC_KEY "Keys are str (hashed as UTF-8) or bytes-like objects; anything else raises TypeError."

static PyMethodDef common_methods[] = {
    {"count", (PyCFunction)filter_count, METH_O,
     "count($self, key, /)\n--\n\nHow many times the key may have been added: copies (cuckoo), the counters' "
     "estimate (counting Bloom), 1 or 0 (Bloom, fuse). Never 0 for a key added and not removed."},
    {"contains_many", (PyCFunction)filter_contains_many, METH_O,
     "contains_many($self, keys, /)\n--\n\nOne answer per key of the iterable, in order, as `key in "
     "filter`. The lookups run batched, with the GIL released."},
    {"hash", (PyCFunction)filter_hash, METH_O,
     "hash($self, key, /)\n--\n\nThe key's 64-bit hash as this filter computes it: nidus.hash(key, seed)."},
    {"to_bytes", (PyCFunction)filter_to_bytes, METH_NOARGS,
     "to_bytes($self, /)\n--\n\nThe filter's encoding (the format nidus.from_bytes, the C library's "
     "nidus_filter_decode and the Redis module's RESTORE-free loaders read)."},
    {"save", (PyCFunction)(void (*)(void))filter_save, METH_VARARGS | METH_KEYWORDS,
     "save($self, /, path=None)\n--\n\nWrites the filter to the file `path` atomically (a temporary file, fsync, "
     "rename), in the format `nidus` files have. A filter opened with nidus.open(path, writable=True) may omit "
     "the path: it is saved to its file, only the changed 64 KiB blocks rewritten. The GIL is released."},
    {"stats", (PyCFunction)filter_stats, METH_NOARGS,
     "stats($self, /)\n--\n\nkind, items, capacity, memory_bytes, bits_per_item, error_bound, sub_filters and "
     "read_only, plus the kind's own figures."},
    {"copy", (PyCFunction)filter_copy, METH_NOARGS,
     "copy($self, /)\n--\n\nAn independent, writable copy in memory (of a mapped or read-only filter too)."},
    {"__copy__", (PyCFunction)filter_copy, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)filter_deepcopy, METH_O, NULL},
    {"__reduce__", (PyCFunction)filter_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

#define ADD_DOC(fn, what)                                                                                              \
    {"add", (PyCFunction)fn, METH_O, "add($self, key, /)\n--\n\n" what " " DOC_KEY}
#define UPDATE_DOC                                                                                                     \
    {"update", (PyCFunction)filter_update, METH_O,                                                                     \
     "update($self, keys, /)\n--\n\nAdds every key of the iterable, batched, with the GIL released for the "           \
     "filter's work. On an error (nidus.FilterFull) the keys before the failing one stay added."}

#define DISCARD_DOC                                                                                                    \
    {"discard", (PyCFunction)filter_discard, METH_O,                                                                   \
     "discard($self, key, /)\n--\n\nAs remove, returning False instead of raising when the key is not there."}

static PyMethodDef cuckoo_methods[] = {
    ADD_DOC(cuckoo_add,
            "Adds one copy of the key (a key added twice is counted twice). Raises nidus.FilterFull when no "
            "room can be made (expansion=0, or a limit reached); the filter is then unchanged. An add that cannot "
            "raise FilterFull may be queued and applied with later ones, always before any other call on the "
            "filter sees it."),
    UPDATE_DOC,
    {"remove", (PyCFunction)filter_remove, METH_O,
     "remove($self, key, /)\n--\n\nRemoves one copy of the key; KeyError when none is there. Remove only keys that "
     "were added: removing a false positive takes another key's copy."},
    DISCARD_DOC,
    {NULL, NULL, 0, NULL}};

static PyMethodDef bloom_methods[] = {
    ADD_DOC(bloom_add,
            "Adds the key; returns None, as set.add (add_new answers whether the key was new). Raises "
            "nidus.FilterFull when the filter may not grow. An add that cannot grow the filter may be queued and "
            "applied with later ones, always before any other call on the filter sees it. A Bloom filter cannot "
            "remove keys: it has no remove."),
    {"add_new", (PyCFunction)bloom_add_new, METH_O,
     "add_new($self, key, /)\n--\n\nAs add, returning True when the key was new (not already, maybe, present), "
     "as BF.ADD replies 1. Never queued. " DOC_KEY},
    UPDATE_DOC,
    {NULL, NULL, 0, NULL}};

static PyMethodDef counting_methods[] = {
    ADD_DOC(filter_add, "Adds one occurrence of the key (its 4-bit counters saturate at 15, never wrap)."),
    UPDATE_DOC,
    {"remove", (PyCFunction)filter_remove, METH_O,
     "remove($self, key, /)\n--\n\nRemoves one occurrence; KeyError when one of its counters is 0. Remove only keys "
     "that were added."},
    DISCARD_DOC,
    {NULL, NULL, 0, NULL}};

#define WINDOW_METHOD(name, fn, doc)                                                                                   \
    {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}
#define DOC_NOW "`now`: the time in milliseconds (or the filter's own tick); None: the current time."

static PyMethodDef window_methods[] = {
    WINDOW_METHOD("add", window_add,
                  "add($self, /, key, now=None)\n--\n\nAdds one copy of the key at `now`: it answers present until "
                  "at least now + window. Raises nidus.FilterFull when no room is found among live entries. "
                  DOC_NOW " " DOC_KEY),
    WINDOW_METHOD("update", window_update,
                  "update($self, /, keys, now=None)\n--\n\nAdds every key of the iterable at `now`, batched, with the "
                  "GIL released for the filter's work. " DOC_NOW),
    WINDOW_METHOD("contains", window_contains,
                  "contains($self, /, key, now=None)\n--\n\nWhether a live copy of the key exists at `now` (`key in "
                  "f` asks at the current time). " DOC_NOW),
    WINDOW_METHOD("contains_many", window_contains_many,
                  "contains_many($self, /, keys, now=None)\n--\n\nOne answer per key of the iterable, as contains(key, "
                  "now), batched with the GIL released. " DOC_NOW),
    WINDOW_METHOD("count", window_count,
                  "count($self, /, key, now=None)\n--\n\nLive copies of the key at `now` (collisions may add to it). "
                  DOC_NOW),
    WINDOW_METHOD("remove", window_remove,
                  "remove($self, /, key, now=None)\n--\n\nRemoves the oldest live copy of the key; KeyError when none "
                  "is live at `now`. " DOC_NOW),
    WINDOW_METHOD("discard", window_discard,
                  "discard($self, /, key, now=None)\n--\n\nAs remove, returning False instead of raising. " DOC_NOW),
    WINDOW_METHOD("stats", window_stats,
                  "stats($self, /, now=None)\n--\n\nThe common figures (items: live entries at `now`) plus window, "
                  "epoch_ticks, entries (expired ones not yet swept included), live, buckets, bucket_size, "
                  "fingerprint_bits and now. " DOC_NOW),
    {NULL, NULL, 0, NULL}};

static PyMethodDef fuse_methods[] = {
    {"build", (PyCFunction)(void (*)(void))fuse_build, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "build($type, /, keys, fingerprint_bits=8, seed=0)\n--\n\nBuilds a binary fuse filter of the keys of "
     "the iterable (duplicates allowed): about 9 bits a key and an error of 2^-8 with 8-bit fingerprints, 18 bits "
     "and 2^-16 with 16. It is read-only: a changed set is built anew. " DOC_KEY},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef filter_getset[] = {
    {"read_only", (getter)filter_get_read_only, NULL, "True for a filter that cannot change: a file mapped "
                                                      "read-only, a view of bytes, a fuse filter.", NULL},
    {"kind", (getter)filter_get_kind, NULL, "'cuckoo', 'bloom', 'counting-bloom', 'fuse' or 'window'.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods filter_as_sequence = {
    .sq_length = (lenfunc)filter_len,
    .sq_contains = (objobjproc)filter_contains,
};
static PySequenceMethods cuckoo_as_sequence = {
    .sq_length = (lenfunc)filter_len,
    .sq_contains = (objobjproc)cuckoo_contains,
};
static PySequenceMethods window_as_sequence = {
    .sq_length = (lenfunc)filter_len,
    .sq_contains = (objobjproc)window_in,
};
static PySequenceMethods bloom_as_sequence = {
    .sq_length = (lenfunc)filter_len,
    .sq_contains = (objobjproc)bloom_contains,
};

static PyTypeObject FilterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nidus.Filter",
    .tp_basicsize = sizeof(FilterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The base of every nidus filter: `key in f`, len(f), count, contains_many, save, to_bytes, stats, "
              "copy and pickling. Not made directly: see CuckooFilter, BloomFilter, CountingBloomFilter, FuseFilter, "
              "nidus.open and nidus.from_bytes.\n\nThread safety: a filter may be shared between threads. Every "
              "call on one filter runs alone (one-key calls under the GIL, batched calls, save and to_bytes under "
              "the filter's own lock with the GIL released), so no interleaving can crash or damage it.",
    .tp_dealloc = (destructor)filter_dealloc,
    .tp_traverse = (traverseproc)filter_traverse,
    .tp_repr = (reprfunc)filter_repr,
    .tp_as_sequence = &filter_as_sequence,
    .tp_methods = common_methods,
    .tp_getset = filter_getset,
    .tp_weaklistoffset = offsetof(FilterObject, weakrefs),
};

#define KIND_TYPE(var, name, methods, sequence, newfn, doc)                                                           \
    static PyTypeObject var = {                                                                                        \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "nidus." name,                                                        \
        .tp_basicsize = sizeof(FilterObject),                                                                          \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,                                                           \
        .tp_doc = doc,                                                                                                 \
        .tp_dealloc = (destructor)filter_dealloc,                                                                      \
        .tp_traverse = (traverseproc)filter_traverse,                                                                  \
        .tp_as_sequence = sequence,                                                                                    \
        .tp_methods = methods,                                                                                         \
        .tp_base = &FilterType,                                                                                        \
        .tp_new = newfn,                                                                                               \
    }

KIND_TYPE(CuckooType, "CuckooFilter", cuckoo_methods, &cuckoo_as_sequence, cuckoo_new,
          "CuckooFilter(capacity, error_rate=0.01, bucket_size=0, fingerprint_bits=0, expansion=1, seed=0, *, "
          "semi_sort=False, max_kicks=0)\n--\n\n"
          "A cuckoo filter: add, remove and count keys in a few bits a key, with a false-positive rate of about "
          "error_rate. bucket_size (1, 2, 4, 8) and fingerprint_bits (4-32) are chosen for the error rate when 0: "
          "the CLI's shape, but b=2 where its buckets are whole bytes and the CLI's b=4 ones are not, for at most 4 % "
          "more memory and the same bound (0.1 %: b=2 f=12, faster one key at a time; bucket_size=4 gives b=4 f=13). "
          "When full it grows by a table `expansion` times its newest one's size (0: never; add then raises "
          "nidus.FilterFull). " DOC_KEY);
KIND_TYPE(BloomType, "BloomFilter", bloom_methods, &bloom_as_sequence, bloom_new,
          "BloomFilter(capacity, error_rate=0.01, expansion=2, seed=0, *, layout='blocked')\n--\n\n"
          "A scalable Bloom filter: add and look up keys; no remove. When a layer holds `capacity` keys a new one "
          "`expansion` times larger is added (0: never; add then raises nidus.FilterFull), the error staying "
          "under error_rate. layout='blocked' puts a key's bits in one 64-byte block (fastest, some 5-20 % more "
          "bytes), 'compact' is a plain Bloom filter of RedisBloom's size. " DOC_KEY);
KIND_TYPE(CountingType, "CountingBloomFilter", counting_methods, &filter_as_sequence, counting_new,
          "CountingBloomFilter(capacity, error_rate=0.01, seed=0)\n--\n\n"
          "A counting Bloom filter (4-bit counters): add, remove and count keys. It never grows; past capacity its "
          "error rises. " DOC_KEY);
KIND_TYPE(WindowType, "WindowedCuckooFilter", window_methods, &window_as_sequence, window_new,
          "WindowedCuckooFilter(capacity, window, error_rate=0.01, bucket_size=0, fingerprint_bits=0, seed=0, *, "
          "max_kicks=0, expansion=0, max_memory=0)\n--\n\n"
          "A windowed cuckoo filter: keys expire. A key added at time t answers present at every time in "
          "[t, t + window] and, from about t + 1.2 * window on, as an absent key does (present only at the error "
          "rate). capacity: the most keys added within any one window. Every call takes the time as `now` "
          "(milliseconds, or any tick that never goes back; None: the current time in milliseconds since the epoch); "
          "`key in f` and len(f) (live entries) are at the current time. With expansion=0 (the default) the filter "
          "never grows: when full, add raises nidus.FilterFull. Otherwise an add that finds no room makes a table "
          "`expansion`^k times the capacity, released once its keys have expired; max_memory (bytes, 0: no bound) "
          "bounds that growth: an add whose new table would pass it raises nidus.FilterFull, the filter unchanged. "
          DOC_KEY);
KIND_TYPE(FuseType, "FuseFilter", fuse_methods, &filter_as_sequence, fuse_new,
          "A binary fuse filter: built once from a set of keys by FuseFilter.build(keys), then only read. " DOC_KEY);

static PyMethodDef module_methods[] = {
    {"open", (PyCFunction)(void (*)(void))mod_open, METH_VARARGS | METH_KEYWORDS,
     "open(path, writable=False, *, lazy=True)\n--\n\nMaps the filter file at `path` (any kind, from "
     "save(), `nidus build` or `nidus pull`) as that kind's object, without reading it: each 64 KiB block is "
     "checked against its checksum when first read (a SIGSEGV handler catches that first read; a damaged block "
     "raises nidus.CorruptFile from the call that read it, and from every later call). lazy=False checks every "
     "block now instead (for a process under a debugger or valgrind, which see those faults). writable=False: "
     "read-only. writable=True: a private copy-on-write mapping that save() writes back, rewriting only the "
     "changed blocks. OSError when the file cannot be opened."},
    {"from_bytes", (PyCFunction)(void (*)(void))mod_from_bytes, METH_VARARGS | METH_KEYWORDS,
     "from_bytes(data, writable=False)\n--\n\nThe filter encoded in `data` (to_bytes()), or the bytes "
     "of a filter file. An encoding with writable=False: a read-only view that reads `data` in place and keeps it "
     "alive; writable=True: an independent, writable copy. Every field and checksum is checked "
     "(nidus.CorruptFile). The bytes of a file are copied into an anonymous file and opened as nidus.open "
     "opens one, every block checked now."},
    {"hash", (PyCFunction)(void (*)(void))mod_hash, METH_VARARGS | METH_KEYWORDS,
     "hash(key, seed=0)\n--\n\nThe 64-bit hash every nidus filter, the C library, the CLI and the Redis "
     "module take for the key: XXH3-64 with the seed."},
    {"_inline_view", (PyCFunction)mod_inline_view, METH_O,
     "_inline_view(f)\n--\n\nFor tests: the inline view ('plain', 'bits', 'semi') a cuckoo filter's one-key calls "
     "read now, or None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "nidus._nidus", "The C extension under the nidus package.", -1, module_methods,
    NULL, NULL, NULL, NULL};

static PyObject *new_error(PyObject *m, const char *name, PyObject *base, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "nidus.%s", name);
    PyObject *e = PyErr_NewExceptionWithDoc(full, doc, base, NULL);
    if (!e)
        return NULL;
    Py_INCREF(e);
    if (PyModule_AddObject(m, name, e) != 0) {
        Py_DECREF(e);
        Py_DECREF(e);
        return NULL;
    }
    return e;
}

PyMODINIT_FUNC PyInit__nidus(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
#if FAST_PATH
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2")) { /* before the types are readied */
        bloom_methods[0].ml_meth = (PyCFunction)bloom_add_fast;
        bloom_methods[1].ml_meth = (PyCFunction)bloom_add_new_fast;
        bloom_as_sequence.sq_contains = (objobjproc)bloom_contains_fast;
        cuckoo_methods[0].ml_meth = (PyCFunction)cuckoo_add_fast;
        cuckoo_as_sequence.sq_contains = (objobjproc)cuckoo_contains_fast;
    }
#endif
    PyTypeObject *types[] = {&FilterType, &CuckooType, &BloomType, &CountingType, &FuseType, &WindowType};
    const char *names[] = {"Filter",     "CuckooFilter", "BloomFilter", "CountingBloomFilter", "FuseFilter",
                           "WindowedCuckooFilter"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        if (PyType_Ready(types[i]) != 0)
            goto fail;
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) != 0) {
            Py_DECREF(types[i]);
            goto fail;
        }
    }
    if (!(Error = new_error(m, "Error", NULL, "The base of nidus's own errors.")) ||
        !(FilterFull = new_error(m, "FilterFull", Error,
                                 "No room for the key: the filter may not grow (expansion 0) or reached a limit of "
                                 "sub-filters or memory. Nothing changed.")) ||
        !(CorruptFile = new_error(m, "CorruptFile", Error,
                                  "The file or bytes are not a nidus filter, or fail a checksum or a check of a "
                                  "field.")) ||
        !(VersionError = new_error(m, "VersionError", CorruptFile,
                                   "A format version this build cannot read.")) ||
        !(ReadOnlyError = new_error(m, "ReadOnlyError", Error,
                                    "A write to a read-only filter (a file mapped read-only, a view of bytes).")) ||
        !(UnsupportedError = new_error(m, "UnsupportedError", Error,
                                       "A call this kind of filter does not have.")) ||
        !(IncompatibleError = new_error(m, "IncompatibleError", Error,
                                        "Filters that differ in kind or parameters.")))
        goto fail;
    if (PyModule_AddStringConstant(m, "__version__", "0.1.0") != 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
