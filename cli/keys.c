/* SPDX-License-Identifier: BSD-3-Clause */
/* Keys from arguments or from lines of a stream. */
#define _POSIX_C_SOURCE 200809L
#include "keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void key_source_args(key_source *ks, char **args, int n)
{
    memset(ks, 0, sizeof *ks);
    ks->args = args;
    ks->nargs = n;
}

void key_source_stream(key_source *ks, FILE *in)
{
    memset(ks, 0, sizeof *ks);
    ks->in = in;
}

bool key_next(key_source *ks, const char **key, size_t *len, bool *error)
{
    *error = false;
    if (ks->args) {
        if (ks->next >= ks->nargs)
            return false;
        *key = ks->args[ks->next++];
        *len = strlen(*key);
        ks->read++;
        return true;
    }
    errno = 0;
    ssize_t n = getline(&ks->line, &ks->cap, ks->in);
    if (n < 0) {
        /* The end of input, or a failure: a read error, or a line too long to hold (ENOMEM, EOVERFLOW). */
        *error = ferror(ks->in) != 0 || errno == ENOMEM || errno == EOVERFLOW;
        if (*error && !errno)
            errno = EIO;
        return false;
    }
    if (n > 0 && ks->line[n - 1] == '\n')
        n--;
    if (n > 0 && ks->line[n - 1] == '\r')
        n--;
    *key = ks->line;
    *len = (size_t)n;
    ks->read++;
    return true;
}

void key_source_close(key_source *ks)
{
    free(ks->line);
    ks->line = NULL;
}
