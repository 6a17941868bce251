/* SPDX-License-Identifier: BSD-3-Clause */
/* Pinned values (pins.h): a small table, under a lock because a type's free callback may run on the server's
 * lazy-free thread. Only the main thread adds and removes entries; the free callback only marks one freed. */
#define _POSIX_C_SOURCE 200809L /* pthread_sigmask */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "pins.h"

#define PINS_MAX 256 /* distinct values pinned at once; a merge that would pass it runs within its command */
/* A value the server freed while pinned, of more bytes than this, is freed at its unpin on a thread of its own, as
 * the server's lazy free frees a large value: returning 1.45 GB of pages to the kernel took the main thread 3.7-5.4
 * ms (madvise, under jemalloc). */
#define FREE_ON_THREAD_BYTES (16u << 20)

typedef struct pin {
    const void *value;
    unsigned count;
    const mod_value_class *freed_as; /* the server freed it while pinned: freed so at the last unpin */
} pin;

static pin pins[PINS_MAX];
static unsigned npins;
static atomic_uint pins_held; /* npins, read off the lock when it is 0 (no merge thread runs) */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;

static pin *find_pin(const void *value)
{
    for (unsigned i = 0; i < npins; i++)
        if (pins[i].value == value)
            return &pins[i];
    return NULL;
}

bool mod_pin_room(unsigned n) { return n <= PINS_MAX - atomic_load(&pins_held); }

void mod_pin(const void *value)
{
    pthread_mutex_lock(&pin_lock);
    pin *p = find_pin(value);
    if (!p && npins < PINS_MAX) {
        p = &pins[npins++];
        *p = (pin){value, 0, NULL};
        atomic_store(&pins_held, npins);
    }
    if (p)
        p->count++;
    pthread_mutex_unlock(&pin_lock);
}

typedef struct freeing {
    const mod_value_class *cls;
    void *value;
} freeing;

bool mod_spawn(void *(*fn)(void *), void *arg, pthread_t *thread)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_t detached;
    if (!thread)
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool started = pthread_create(thread ? thread : &detached, &attr, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return started;
}

static void *free_value(void *arg)
{
    freeing *f = arg;
    f->cls->free(f->cls->of, f->value);
    RedisModule_Free(f);
    return NULL;
}

/* Frees `value` as `cls` frees it: on a detached thread when it is large (the free callbacks are safe off the main
 * thread, the server's lazy free calls them there), else here. */
static void release(const mod_value_class *cls, void *value)
{
    if (cls->memory(cls->of, value) > FREE_ON_THREAD_BYTES) {
        freeing *f = RedisModule_Alloc(sizeof *f);
        *f = (freeing){cls, value};
        if (mod_spawn(free_value, f, NULL))
            return;
        RedisModule_Free(f);
    }
    cls->free(cls->of, value);
}

void mod_unpin(void *value)
{
    const mod_value_class *freed_as = NULL;
    pthread_mutex_lock(&pin_lock);
    pin *p = find_pin(value);
    if (p && --p->count == 0) {
        freed_as = p->freed_as;
        *p = pins[--npins];
        atomic_store(&pins_held, npins);
    }
    pthread_mutex_unlock(&pin_lock);
    if (freed_as)
        release(freed_as, value);
}

bool mod_pinned(const void *value)
{
    if (!atomic_load(&pins_held))
        return false;
    pthread_mutex_lock(&pin_lock);
    bool yes = find_pin(value) != NULL;
    pthread_mutex_unlock(&pin_lock);
    return yes;
}

bool mod_pin_keep(void *value, const mod_value_class *cls)
{
    if (!atomic_load(&pins_held))
        return false;
    pthread_mutex_lock(&pin_lock);
    pin *p = find_pin(value);
    if (p)
        p->freed_as = cls;
    pthread_mutex_unlock(&pin_lock);
    return p != NULL;
}
