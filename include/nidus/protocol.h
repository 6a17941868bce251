/* SPDX-License-Identifier: BSD-3-Clause */
/* The words of the Redis module's protocol that a program outside it sends: the commands that carry a filter's
 * chunks out of a key (SCANDUMP) and into one (LOADCHUNK). A CF key holds a cuckoo filter, a BF key a Bloom
 * filter. The module rewrites its AOF and words its replies with these spellings and the CLI's push and pull
 * send them: both read them from here. Servers match command names in any case. */
#ifndef NIDUS_PROTOCOL_H
#define NIDUS_PROTOCOL_H

#define NIDUS_CF_SCANDUMP "CF.SCANDUMP"
#define NIDUS_CF_LOADCHUNK "CF.LOADCHUNK"
#define NIDUS_BF_SCANDUMP "BF.SCANDUMP"
#define NIDUS_BF_LOADCHUNK "BF.LOADCHUNK"

#endif
