/* SPDX-License-Identifier: BSD-3-Clause */
/* The help texts of `nidus` and of each command: what `nidus help COMMAND` and `nidus COMMAND --help` print. */
#include "help.h"

#include <string.h>

#include <nidus/nidus.h>

#include "commands.h"
#include "common.h"

#define KEYS_TEXT                                                                                              \
    "Keys: the KEY arguments, or with none, one key per line on stdin. A line ends at LF; a CR right before it\n" \
    "is dropped (CRLF files work); an empty line is the empty key; any other byte, NUL included, is part of the\n" \
    "key. A key line that cannot be read (or not held in memory) fails the command with exit 2, file unchanged.\n"

#define KEEP_GOING_TEXT(what)                                                                                  \
    "  --keep-going          " what ", and still exit 1\n"

#define CREATE_OPTIONS                                                                                         \
    "  --type T              cuckoo (default), bloom or counting-bloom; build also takes fuse\n"              \
    "  --capacity N          keys the filter is sized for (required for create)\n"                            \
    "  --error P             target false-positive rate, 0 < P < 1 (default 0.01)\n"                         \
    "  --fingerprint-bits F  cuckoo: fingerprint bits, 4..32 (instead of --error); fuse: 8 or 16\n"           \
    "  --bucket-size B       cuckoo: slots per bucket, 1, 2, 4 or 8 (default: the cheapest for the rate)\n"   \
    "  --semi-sort           cuckoo: semi-sorted buckets (bucket size 4): one bit less per key\n"             \
    "  --expansion E         when full, add a sub-filter E times the newest one, up to 32 sub-filters\n"     \
    "                        (default: cuckoo 1, bloom 2, as the Redis module's CF.RESERVE and BF.RESERVE);\n" \
    "                        0: a fixed size, adds fail when it is full. A counting-bloom filter has one\n"  \
    "                        table: it never grows (only 0 is accepted), and adds past its capacity succeed\n" \
    "                        at a rising false-positive rate\n"                                             \
    "  --max-kicks K         cuckoo: relocations tried per add before it fails, 1..65535 (default 500)\n"    \
    "  --window W            a windowed cuckoo filter: each key expires W after its add (500ms, 30s, 15m,\n" \
    "                        24h, 7d: a whole number and ms, s, m, h or d; at most 2^48 ms). --capacity is\n" \
    "                        then the keys added within any one window; it takes --error or\n"                \
    "                        --fingerprint-bits (4..29), --bucket-size, --max-kicks and --expansion\n"       \
    "                        (default 0: it never grows; E: a table of E^k times the capacity when no\n"     \
    "                        table has room, released once its items have expired)\n"                        \
    "  --max-memory BYTES    a windowed filter with --expansion: the bytes it may grow to (a whole number;\n" \
    "                        default 0: no bound); an add or merge whose new table would pass them fails, an\n" \
    "                        add as for a full filter (exit 1). Kept in FILE; info shows it\n"                 \
    "  --force               replace FILE if it exists (only a regular file: never a device or directory)\n"

#define NOW_TEXT                                                                                               \
    "  --now MS              a windowed filter's time, milliseconds since the epoch (default: the clock)\n"

#define URL_TEXT                                                                                               \
    "  --url URL             redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or unix://PATH[?db=N] (default:\n"      \
    "                        $REDIS_URL, else redis://127.0.0.1:6379); messages never show the password\n"

static const help_entry entries[] = {
    {"create", "nidus create FILE --capacity N [--type T] [--error P | --fingerprint-bits F] [--bucket-size B]\n"
               "             [--semi-sort] [--expansion E] [--max-kicks K] [--window W] [--max-memory BYTES]\n"
               "             [--force]",
     "Creates an empty filter in FILE. Refuses to replace an existing FILE without --force.\n" CREATE_OPTIONS
     "A new FILE gets mode 0666 less the umask; through a symbolic link, the file it points to is written.\n"},
    {"add", "nidus add FILE [--keep-going] [--now MS] [KEY ...]",
     "Adds the keys, all or nothing: if one cannot be added (the filter is full, or cannot grow further), exit 1\n"
     "with FILE left byte for byte as it was, and two lines on stderr: how many keys failed and the first.\n"
     "A fuse filter is static: add and del refuse it (exit 2, FILE untouched); build it anew with its keys.\n"
     KEEP_GOING_TEXT("save the keys that fit") NOW_TEXT
     "A windowed filter's keys are added at the current time (--now), each expiring a window after it.\n"
     "FILE is replaced atomically; its mode, owner and group are kept.\n" KEYS_TEXT},
    {"check", "nidus check FILE [--now MS] [KEY ...]",
     "Prints 1 (maybe present) or 0 (certainly absent) for each key, one a line, in order. A windowed filter\n"
     "answers at the current time (--now): a key expired by then is absent.\n" NOW_TEXT KEYS_TEXT},
    {"del", "nidus del FILE [--keep-going] [--now MS] [KEY ...]",
     "Removes one copy of each key (cuckoo and counting-bloom filters; bloom and fuse filters cannot), all or\n"
     "nothing: if a key is not there, exit 1 with FILE left as it was, and two lines on stderr as for add.\n"
     KEEP_GOING_TEXT("remove the keys that are there") NOW_TEXT
     "Delete only keys that were added: deleting a key never added may remove another key's fingerprint.\n"
     KEYS_TEXT},
    {"count", "nidus count FILE [--now MS] KEY",
     "Prints how many copies of KEY the filter holds (never fewer than were added and not deleted; a fingerprint\n"
     "collision can add to it). A bloom or fuse filter prints 1 or 0; a windowed filter the copies live at the\n"
     "current time.\n" NOW_TEXT},
    {"info", "nidus info FILE [--json] [--now MS]",
     "Describes the filter: kind, capacity, parameters, items, memory, load, error bound, sub-filters; a\n"
     "windowed filter its window too, and as items its keys live at the current time (--now).\n"
     "  --json   one JSON object; every kind has the same top-level fields (file, kind, capacity, items,\n"
     "           memory_bytes, bits_per_item, load, error_bound, parameters, sub_filters) and sub_filters is an\n"
     "           array of objects with capacity, items, load and error_bound.\n" NOW_TEXT},
    {"verify", "nidus verify FILE",
     "Reads the whole file and checks every checksum and every field; prints 'FILE: ok'. Exit 2 if damaged,\n"
     "with one line naming the check that failed and where: the block and its bytes (and how many blocks are\n"
     "damaged), or the header or footer field. (check, count and info verify only what they read.)\n"},
    {"build", "nidus build FILE --from KEYS [--capacity N] [--keep-going] [--now MS] [create options]\n"
              "nidus build FILE --from KEYS --type fuse [--error P | --fingerprint-bits 8|16] [--force]",
     "Creates FILE and adds every line of the file KEYS (- for stdin), with a progress line on a terminal.\n"
     "All or nothing, as add: if a key cannot be added, exit 1 and FILE is not written.\n"
     "  --from KEYS           where the keys come from, one a line as described below\n"
     KEEP_GOING_TEXT("write the filter with the keys that fit") NOW_TEXT
     "Without --capacity, build counts the lines of KEYS first and sizes the filter for them (KEYS must then be\n"
     "a file: stdin cannot be read twice). Other options as for create:\n" CREATE_OPTIONS
     "A fuse filter (--type fuse) is static: built once from the keys, then only read (check, count, info,\n"
     "verify). About 9 bits a key at an error of 2^-8 (8-bit fingerprints: the default, and what --error 2^-8\n"
     "or above gives), 18 at 2^-16 (16 bits: --error below 2^-8, down to 2^-16). Both options together must\n"
     "agree. Duplicate keys count once; keys are read once, from stdin too, and only their hashes are held.\n"
     "No other option applies to it (exit 2), nor add, del, merge or push.\n" KEYS_TEXT},
    {"push", "nidus push FILE KEY [--url URL] [--force]",
     "Puts the filter in FILE into KEY on a Redis or Valkey server running the nidus module: a cuckoo filter as\n"
     "a CF key, a Bloom filter as a BF key, a windowed filter as a windowed CF key, its items keeping their ages\n"
     "(no key type there for counting Bloom or fuse: exit 2). Readers of\n"
     "KEY see the old filter or the whole new one: the file's chunks load into a temporary key in KEY's hash\n"
     "slot, which is then renamed over KEY (and deleted if anything fails). KEY answers every item as FILE does.\n"
     "In a cluster, MOVED and ASK replies are followed (at most 5 a command); a push while KEY's slot migrates\n"
     "and KEY has not reached the target node is refused.\n"
     URL_TEXT "  --force               replace KEY if it exists (whatever it holds)\n"},
    {"pull", "nidus pull KEY FILE [--url URL] [--force]",
     "Writes the CF or BF key KEY (windowed ones too) into FILE, atomically, as a filter file that answers every\n"
     "item as KEY does.\n"
     "A key loaded from RedisBloom's data is refused (exit 2): no nidus file holds RedisBloom's hashing.\n"
     URL_TEXT "  --force               replace FILE if it exists (only a regular file)\n"},
    {"copy", "nidus copy --from URL --to URL [--match PATTERN] [--replace] [KEY ...]",
     "Copies cuckoo and Bloom filter keys (windowed ones too) from one server to another through SCANDUMP and\n"
     "LOADCHUNK: from Redis\n"
     "or Valkey with nidus or RedisBloom (its keys keep RedisBloom's format and answers), to a server with nidus,\n"
     "standalone or cluster on either side (a cluster: every master is scanned, every key goes to its slot's).\n"
     "Without KEY, every key whose type is a filter (SCAN, MATCH PATTERN with --match); keys of other types are\n"
     "skipped and counted. Each key arrives whole or not at all: its chunks load into a temporary key in its slot,\n"
     "renamed over KEY at the end, with the source key's time to live. A key written to during its copy (WATCH)\n"
     "is copied again, at most 3 times in all, then reported. An empty cuckoo filter (it has no chunk) is made\n"
     "anew with its parameters.\n"
     "Ends with one line on stdout: keys and items copied, and what was skipped, exists or failed.\n"
     "  --from URL            the server to copy from: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or\n"
     "                        unix://PATH[?db=N]; messages never show the password\n"
     "  --to URL              the server to copy to (it needs the nidus module)\n"
     "  --match PATTERN       only the keys SCAN's MATCH PATTERN takes (not with KEY arguments)\n"
     "  --replace             replace a target key that exists (else it is left alone, and counted)\n"
     "Exit 0 if every filter key was copied; 1 if some were not (a target key exists, a key kept changing, the\n"
     "target refused one, a KEY given is missing or no filter), each with a line on stderr; 2 usage, or a server\n"
     "that cannot be reached or fails.\n"},
    {"merge", "nidus merge DEST SRC [SRC ...]",
     "Adds every item of each SRC to DEST: a cuckoo filter's counts add (each copy deletes again), a bloom\n"
     "filter's bits are ORed, a counting-bloom filter's counters add (up to 15). A missing DEST starts as a copy\n"
     "of the first SRC. Filters merge only when created with the same parameters (kind, capacity, error or\n"
     "fingerprint bits, bucket size, semi-sorting, expansion), however far each grew. A cuckoo filter's items\n"
     "stay in the sub-filter of their index: a SRC whose sub-filter has more items than DEST's can take fails.\n"
     "All or nothing: on any error, exit 2 with one line naming the SRC and what differs, DEST left as it was.\n"
     "A fuse filter, static, is refused as DEST or SRC: build one from all the keys instead. Windowed filters\n"
     "merge when their window, shape and seed agree: each key keeps its age, so it expires as it would have.\n"
     "DEST is replaced atomically; its mode, owner and group are kept. DEST listed as a SRC too counts once.\n"},
    {"help", "nidus help [COMMAND]", "Prints the usage of every command, or the help of one.\n"},
};

const help_entry *help_find(const char *cmd)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (!strcmp(cmd, entries[i].name))
            return &entries[i];
    return NULL;
}

void help_usage(FILE *out)
{
    fprintf(out, "nidus %s: cuckoo, Bloom and fuse filters in files\n\nusage:\n", nidus_version());
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        fprintf(out, "  %s\n", entries[i].synopsis);
    fprintf(out, "\n  nidus help COMMAND (or nidus COMMAND --help) for a command's options;  nidus -V | --version\n"
                 "Exit codes: 0 success; 1 a key could not be added, or (del) was not there: FILE is left as it\n"
                 "was unless --keep-going (copy: a key was not copied); 2 usage, I/O or format error, with one line\n"
                 "on stderr naming the file (or the server).\n");
}

void help_command(const help_entry *e, FILE *out) { fprintf(out, "%s\n\n%s", e->synopsis, e->text); }

/* `nidus help [COMMAND]`: the usage of every command, or one command's full help. */
int cmd_help(int argc, char **argv)
{
    if (argc == 0) {
        help_usage(stdout);
        return finish_output();
    }
    const help_entry *e = help_find(argv[0]);
    if (!e || argc > 1) {
        fprintf(stderr, "nidus help: unknown command '%s' (see 'nidus help')\n", argv[0]);
        return EXIT_ERROR;
    }
    help_command(e, stdout);
    return finish_output();
}
