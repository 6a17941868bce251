/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus check FILE [KEY...]`: 1 or 0 a key, one a line, FILE mapped read-only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"

#define BATCH 4096 /* keys hashed, then looked up in one batched call */

int cmd_check(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("check", &argc, argv, 1, -1, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected FILE");
    if (rc)
        return rc;
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    static uint64_t hashes[BATCH];
    static bool found[BATCH];
    const char *key;
    size_t len, n = 0;
    bool error = false, more = true;
    while (more) {
        more = key_next(&ks, &key, &len, &error);
        if (more)
            hashes[n++] = nidus_filter_hash(f, key, len);
        if (n == BATCH || (!more && n)) {
            nidus_filter_contains_many_hash(f, hashes, n, found);
            for (size_t k = 0; k < n; k++)
                fputs(found[k] ? "1\n" : "0\n", stdout);
            n = 0;
        }
    }
    key_source_close(&ks);
    nidus_filter_free(f);
    int saved = errno;
    if (error) {
        fprintf(stderr, "nidus: stdin: reading keys: %s\n", strerror(saved));
        return EXIT_ERROR;
    }
    return finish_output();
}
