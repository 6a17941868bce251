/* SPDX-License-Identifier: BSD-3-Clause */
/* `nidus build FILE --from KEYS`: a new filter of the keys of a file (counted first when --capacity is not
 * given); a fuse filter is built from their hashes. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "common.h"
#include "hashes.h"

/* Lines in `in` (a last line without LF counts too); rewinds it. -1 on a read error. */
static long long count_lines(FILE *in)
{
    static char buf[1 << 16];
    long long lines = 0;
    size_t n;
    char last = '\n';
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        for (char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
            lines++;
        last = buf[n - 1];
    }
    if (ferror(in) || fseeko(in, 0, SEEK_SET) != 0)
        return -1;
    return lines + (last != '\n');
}

/* build --type fuse: the keys hashed as they are read (8 bytes a key held, never their text), the filter built
 * from the hashes and written atomically. Nothing is written when reading or building fails (exit 2). */
static int build_fuse(const char *path, const char *source, FILE *in, const options *o)
{
    int rc = check_target(path, o);
    if (rc)
        return rc;
    nidus_fuse_params params = {.fingerprint_bits = o->create.fingerprint_bits, .error_rate = o->create.error};
    struct stat sb;
    uint64_t total = in != stdin && fstat(fileno(in), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    progress p;
    progress_begin(&p, "reading keys", total);
    key_source ks;
    key_source_stream(&ks, in);
    cli_hashes h;
    cli_hashes_status hs = cli_hashes_read(&h, &ks, &params, &p, in != stdin ? in : NULL);
    progress_end(&p, ks.read);
    key_source_close(&ks);
    int saved = errno;
    if (hs != CLI_HASHES_OK) {
        if (hs == CLI_HASHES_READ_ERROR)
            fprintf(stderr, "nidus: %s: reading keys: %s (%s not written)\n", source, strerror(saved), path);
        else if (hs == CLI_HASHES_TOO_MANY)
            fprintf(stderr, "nidus: %s: more than %llu keys, the most a fuse filter takes (%s not written)\n",
                    source, (unsigned long long)NIDUS_FUSE_MAX_KEYS, path);
        else
            fprintf(stderr, "nidus: %s: holding the keys' hashes: out of memory (%s not written)\n", source, path);
        cli_hashes_free(&h);
        return EXIT_ERROR;
    }
    nidus_fuse *f = NULL;
    progress_begin(&p, "building", 0);
    nidus_status st = nidus_fuse_build_hash(&params, h.hashes, h.n, &f);
    progress_end(&p, h.n);
    cli_hashes_free(&h);
    if (st) {
        fprintf(stderr, "nidus: %s: cannot build the filter: %s (not written)\n", path,
                st == NIDUS_ERR_FULL ? "no construction seed worked" : nidus_strerror(st));
        return EXIT_ERROR;
    }
    st = nidus_fuse_save_file(f, path);
    nidus_fuse_free(f);
    return st ? file_error(path, st) : 0;
}

int cmd_build(int argc, char **argv)
{
    options o;
    int rc = parse_options("build", &argc, argv, &o, true);
    if (rc)
        return rc;
    if (argc != 1)
        return usage_error("build", "expected exactly one FILE", NULL);
    if (!o.from)
        return usage_error("build", "--from KEYS is required", NULL);
    bool from_stdin = !strcmp(o.from, "-");
    const char *kind = from_stdin ? NULL : not_regular(o.from);
    bool streamed = o.has_capacity || o.create.kind == NIDUS_KIND_FUSE; /* the keys are read once */
    if (kind && !(streamed && strcmp(kind, "a directory"))) {
        fprintf(stderr, "nidus: %s: the input (--from) is %s%s\n", o.from, kind,
                strcmp(kind, "a directory") ? ": give --capacity, it cannot be counted first" : ", not a file of keys");
        return EXIT_ERROR;
    }
    FILE *in = from_stdin ? stdin : fopen(o.from, "rb");
    if (!in) {
        fprintf(stderr, "nidus: %s: the input (--from): %s\n", o.from, strerror(errno));
        return EXIT_ERROR;
    }
    if (o.create.kind == NIDUS_KIND_FUSE) {
        rc = build_fuse(argv[0], from_stdin ? "stdin" : o.from, in, &o);
        if (in != stdin)
            fclose(in);
        return rc;
    }
    if (!o.has_capacity) {
        long long lines = count_lines(in);
        if (lines < 0) {
            fprintf(stderr, "nidus: %s: counting the keys: %s\n", o.from, strerror(errno));
            fclose(in);
            return EXIT_ERROR;
        }
        o.create.capacity = lines ? (unsigned long long)lines : 1;
    }
    nidus_filter *f;
    if ((rc = create_file("build", argv[0], &o, &f))) {
        if (in != stdin)
            fclose(in);
        return rc;
    }
    struct stat sb;
    uint64_t total = in != stdin && fstat(fileno(in), &sb) == 0 ? (uint64_t)sb.st_size : 0;
    progress p;
    progress_begin(&p, "building", total);
    key_source ks;
    key_source_stream(&ks, in);
    key_failures kf;
    bool read_ok = add_keys(f, &ks, &p, in != stdin ? in : NULL, &kf);
    progress_end(&p, ks.read);
    key_source_close(&ks);
    if (in != stdin)
        fclose(in);
    return finish_write(argv[0], from_stdin ? "stdin" : o.from, f, !read_ok, &BUILDING, &kf, o.keep_going);
}
