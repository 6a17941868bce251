/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus count FILE KEY`: how many times KEY may be in FILE. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common.h"

int cmd_count(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("count", &argc, argv, 2, 2, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected FILE KEY");
    if (rc)
        return rc;
    printf("%llu\n", (unsigned long long)nidus_filter_count(f, argv[1], strlen(argv[1])));
    nidus_filter_free(f);
    return finish_output();
}
