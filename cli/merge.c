/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus merge DEST SRC...`: DEST gets the items of every SRC. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/stat.h>

#include "commands.h"
#include "common.h"

/* DEST gets every SRC's items in memory; written (atomically) only when every merge succeeded. */
int cmd_merge(int argc, char **argv)
{
    options o;
    int rc = parse_options("merge", &argc, argv, &o, false);
    if (rc)
        return rc;
    if (argc < 2)
        return usage_error("merge", "expected DEST and at least one SRC", NULL);
    const char *dest_path = argv[0];
    struct stat sb;
    bool exists = stat(dest_path, &sb) == 0 || not_regular(dest_path);
    nidus_filter *dest = NULL;
    int first = 1;
    if ((rc = load_whole(exists ? dest_path : argv[1], &dest)))
        return rc;
    if (!exists)
        first = 2; /* DEST starts as a copy of the first SRC */
    for (int i = first; i < argc && !rc; i++) {
        /* DEST is a source already: listed among the SRCs too it counts once (as in CF.MERGE and PFMERGE),
         * where merging it into itself would double every cuckoo count. */
        struct stat ss;
        if (exists && stat(argv[i], &ss) == 0 && ss.st_dev == sb.st_dev && ss.st_ino == sb.st_ino)
            continue;
        nidus_filter *src = NULL;
        if ((rc = load_whole(argv[i], &src)))
            break;
        nidus_status st = nidus_filter_merge(dest, src);
        if (st == NIDUS_ERR_INCOMPATIBLE) {
            char why[160];
            if (!nidus_filter_merge_difference(dest, src, why, sizeof why)) /* a level grown after a compaction */
                snprintf(why, sizeof why, "sub-filters of other shapes");
            fprintf(stderr, "nidus: %s: incompatible with %s: %s (%s left unchanged)\n", argv[i], dest_path, why,
                    dest_path);
            rc = EXIT_ERROR;
        } else if (st) {
            fprintf(stderr, "nidus: %s: cannot merge into %s: %s (%s left unchanged)\n", argv[i], dest_path,
                    st == NIDUS_ERR_FULL ? "it does not grow (expansion 0) and has no room for the items of SRC"
                                         : add_failure(st),
                    dest_path);
            rc = EXIT_ERROR;
        }
        nidus_filter_free(src);
    }
    nidus_status st = rc ? NIDUS_OK : nidus_filter_save_file(dest, dest_path);
    nidus_filter_free(dest);
    return rc ? rc : st ? file_error(dest_path, st) : 0;
}
