/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus create FILE`: an empty filter of the given parameters, written to FILE. */


#include "commands.h"
#include "common.h"

int cmd_create(int argc, char **argv)
{
    options o;
    int rc = parse_options("create", &argc, argv, &o, true);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("create", "expected exactly one FILE", NULL);
    nidus_filter *f;
    if ((rc = create_file("create", argv[0], &o, &f)))
        return rc;
    nidus_status st = nidus_filter_save_file(f, argv[0]);
    nidus_filter_free(f);
    return st ? file_error(argv[0], st) : 0;
}
