/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace report's parts (query/ only): the page and its sections
 * (q_report.c), the flame graph and the timelines (q_report_graph.c),
 * and the drawing code the page inlines (q_report_asset.c: the build's
 * build/report/report.js, embedded with .incbin).
 */

#ifndef HWTR_Q_REPORT_H
#define HWTR_Q_REPORT_H

#include <stddef.h>
#include <stdint.h>

struct hwtr_q;
struct q_str;

/*
 * The flame graph of every thread as nested JSON objects {name, value
 * (instructions, callees included), children}; frames under 1/20000 of
 * the run and those past @maxnodes are left out (their instructions stay
 * in their caller's).  *@prunedp: the least instructions of a frame kept.
 */
int q_rp_flame(struct hwtr_q *q, struct q_str *o, int64_t maxnodes,
    int64_t *prunedp);
/* Where the trace lost data, as call paths (q_report_graph.c). */
int q_rp_flame_gaps(struct hwtr_q *q, struct q_str *o);
/*
 * The timelines of the @maxthreads longest threads: @cols columns each,
 * calls at most @depth deep, as JSON (q_report_graph.c says how).
 */
int q_rp_timeline(struct hwtr_q *q, struct q_str *o, int64_t cols,
    int64_t depth, int64_t maxthreads);

/* The page's script: the drawing libraries and the page's own code. */
const char *q_rp_asset(size_t *lenp);

#endif /* !HWTR_Q_REPORT_H */
