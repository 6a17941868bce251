/* SPDX-License-Identifier: BSD-3-Clause */
/* Pinned values (pins.h): a small table, under a lock because a type's free callback may run on the server's
 * lazy-free thread. Only the main thread adds and removes entries; the free callback only marks one freed. */
#include <pthread.h>
#include <stdatomic.h>

#include "pins.h"

#define PINS_MAX 256 /* distinct values pinned at once; a merge that would pass it runs within its command */

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
        freed_as->free(freed_as->of, value);
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
