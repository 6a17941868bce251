/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus verify FILE`: every block and field of FILE checked, the first damage named. */
#include <stdio.h>

#include "commands.h"
#include "common.h"

int cmd_verify(int argc, char **argv)
{
    options o;
    int rc = parse_options("verify", &argc, argv, &o, false);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("verify", "expected exactly one FILE", NULL);
    if (not_regular(argv[0]))
        return file_error(argv[0], NIDUS_ERR_IO);
    /* Every block and every field (the tables scanned), as a mapped open checks them, naming what failed. */
    nidus_file_report r;
    nidus_status st = nidus_file_verify(argv[0], NULL, &r);
    if (st)
        return damage_error(argv[0], st, &r);
    printf("%s: ok\n", argv[0]);
    return finish_output();
}
