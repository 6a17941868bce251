/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — symbol export for the shared library (everything not marked NIDUS_API stays private to it). */
#ifndef NIDUS_API_H
#define NIDUS_API_H

#if defined(__GNUC__) || defined(__clang__)
#define NIDUS_API __attribute__((visibility("default")))
#else
#define NIDUS_API
#endif

#endif
