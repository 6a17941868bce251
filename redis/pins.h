/* SPDX-License-Identifier: BSD-3-Clause */
/* Values held still while a merge thread reads them (merge_jobs.c): not changed, moved or freed. */
#ifndef NIDUS_REDIS_PINS_H
#define NIDUS_REDIS_PINS_H

#include <pthread.h>
#include <stdbool.h>

#include "types.h"

/* Whether n more values can be pinned (main thread). */
bool mod_pin_room(unsigned n);

/* Pins `value` once more (main thread; after mod_pin_room). */
void mod_pin(const void *value);

/* Unpins `value` once (main thread). At its last unpin, a value the server freed while it was pinned is freed
 * (one of more than 16 MiB on a thread of its own). */
void mod_unpin(void *value);

/* True while `value` is pinned (main thread): it must not change or move. */
bool mod_pinned(const void *value);

/* A type's free callback (any thread: lazy free frees on its own): true when `value` is pinned, and then freed
 * as `cls` frees it at its last unpin; false when the caller frees it now. */
bool mod_pin_keep(void *value, const mod_value_class *cls);

/* Starts fn(arg) on a thread of its own with every signal blocked (the server's threads leave signals to the
 * main one): joinable through *thread, or detached when thread is NULL. False when none could start. */
bool mod_spawn(void *(*fn)(void *), void *arg, pthread_t *thread);

#endif
