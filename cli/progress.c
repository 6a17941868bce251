/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress line of `nidus build`. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_begin(progress *p, const char *what, uint64_t total)
{
    p->on = isatty(STDERR_FILENO);
    p->total = total;
    p->start = p->last = now();
    p->what = what;
}

void progress_update(progress *p, uint64_t done, uint64_t items)
{
    if (!p->on)
        return;
    double t = now();
    if (t - p->last < 0.1)
        return;
    p->last = t;
    double rate = (double)items / (t - p->start + 1e-9);
    if (p->total && done <= p->total) {
        double frac = (double)done / (double)p->total;
        double eta = frac > 0 ? (t - p->start) * (1 - frac) / frac : 0;
        int bar = (int)(frac * 30);
        fprintf(stderr, "\r%s [%-30.*s] %5.1f%%  %llu items  %.2f M/s  ETA %.0fs ", p->what, bar,
                "##############################", 100 * frac, (unsigned long long)items, rate / 1e6, eta);
    } else {
        fprintf(stderr, "\r%s %llu items  %.2f M/s ", p->what, (unsigned long long)items, rate / 1e6);
    }
    fflush(stderr);
}

void progress_end(progress *p, uint64_t items)
{
    if (!p->on)
        return;
    double t = now() - p->start;
    fprintf(stderr, "\r%s done: %llu items in %.1fs (%.2f M/s)%30s\n", p->what, (unsigned long long)items, t,
            (double)items / (t + 1e-9) / 1e6, "");
}

void progress_clear(progress *p)
{
    if (p->on)
        fprintf(stderr, "\r%100s\r", "");
}
