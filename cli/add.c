/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus add FILE [KEY...]`: the keys added to FILE in place. */


#include "commands.h"
#include "common.h"

int cmd_add(int argc, char **argv)
{
    options o;
    nidus_filter *f;
    int rc = open_command("add", &argc, argv, 1, -1, CLI_OPEN_IN_PLACE, &o, &f, "expected FILE");
    if (rc)
        return rc;
    key_source ks;
    keys_from(&ks, argv + 1, argc - 1);
    key_failures kf;
    bool read_ok = add_keys(f, &ks, NULL, NULL, &kf);
    key_source_close(&ks);
    return finish_write(argv[0], argc > 1 ? "arguments" : "stdin", f, !read_ok, &ADDING, &kf, o.keep_going);
}
