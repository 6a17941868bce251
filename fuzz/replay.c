/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs a fuzz target's entry point over files, without libFuzzer: the seed corpus and every input that once
 * crashed (fuzz/regressions/) are replayed by CTest in every build, sanitizers included.
 * usage: replay_TARGET FILE... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, n;
        do {
            if (len == cap)
                buf = realloc(buf, cap = cap ? cap * 2 : 65536);
            n = fread(buf + len, 1, cap - len, f);
            len += n;
        } while (n);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
    }
    printf("replayed %d inputs\n", argc - 1);
    return 0;
}
