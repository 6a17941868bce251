/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus info FILE [--json]`: what FILE holds (filter.c writes the summary). */


#include "commands.h"
#include "common.h"

int cmd_info(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("info", &argc, argv, 1, 1, CLI_OPEN_MAPPED_LAZY, &o, &f, "expected exactly one FILE");
    if (rc)
        return rc;
    cli_filter_info(f, argv[0], o.json, stdout);
    nidus_filter_free(f);
    return finish_output();
}
