/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus del FILE [KEY...]`: the keys removed from FILE in place (cuckoo and counting Bloom filters). */
#include <stdio.h>

#include "commands.h"
#include "common.h"

int cmd_del(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("del", &argc, argv, 1, -1, CLI_OPEN_IN_PLACE, &o, &f, "expected FILE");
    if (rc)
        return rc;
    if (nidus_filter_kind(f) == NIDUS_KIND_BLOOM) {
        nidus_filter_free(f);
        fprintf(stderr, "nidus: %s: a bloom filter cannot delete (use a cuckoo or counting-bloom filter)\n", argv[0]);
        return EXIT_ERROR;
    }
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    const char *key;
    size_t len;
    bool error;
    key_failures kf = {0};
    while (key_next(&ks, &key, &len, &error)) {
        nidus_status st = nidus_filter_remove(f, key, len);
        if (st)
            note_failure(&kf, ks.read, key, len, st);
    }
    kf.keys = ks.read;
    key_source_close(&ks);
    /* removes past a tenth of the items start a compaction; offline, it runs to the end before the save */
    nidus_cuckoo *cf = nidus_filter_cuckoo(f);
    if (cf && nidus_cuckoo_compacting(cf, NULL))
        nidus_cuckoo_compact(cf, NULL);
    return finish_write(argv[0], argc > 1 ? "arguments" : "stdin", f, error, &REMOVING, &kf, o.keep_going);
}
