/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the unit tests that write files: a scratch directory made before a test and removed after it
 * (cmocka setup and teardown), and a file name in it. Needs _POSIX_C_SOURCE 200809L (mkdtemp). */
#ifndef NIDUS_SCRATCH_DIR_H
#define NIDUS_SCRATCH_DIR_H

#include <stdio.h>
#include <stdlib.h>

static char g_dir[64];

static inline void path_of(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", g_dir, name); }

static inline int make_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/nidus-test-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
