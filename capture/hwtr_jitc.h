/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The JIT symbol files of a capture (issue 32): the perf maps
 * (/tmp/perf-PID.map) of every process the sideband names, and the
 * jitdump files (jit-PID.dump) the runtimes mmap, found through the mmap
 * sideband.  They are read when the capture ends, after the program wrote
 * them, and stored as members jit/NAME (hwtrace(5)).
 *
 *   1) hwtr_jitc_new(&jc).
 *   2) hwtr_jitc_note(jc, rec) for every sideband record.
 *   3) hwtr_jitc_store(jc, aw, log) before the archive is closed.
 *   4) hwtr_jitc_free(jc).
 */

#ifndef HWTR_JITC_H
#define HWTR_JITC_H

#include "hwtrace.h"
#include "hwtr_common.h"

struct hwtr_jitc;

int hwtr_jitc_new(struct hwtr_jitc **jcp);
void hwtr_jitc_free(struct hwtr_jitc *jc);

/* Remember the record's process, and its path when it maps a jitdump. */
int hwtr_jitc_note(struct hwtr_jitc *jc, const struct hwtr_sb_rec *rec);

/*
 * Store the files found into @aw (borrowed).  A file that is absent is no
 * error; one that does not parse is left out with a warning on @log.
 * 0, or -HWTR_E_* from the archive writer or memory.
 */
int hwtr_jitc_store(struct hwtr_jitc *jc, struct hwtr_aw *aw,
    const struct hwtr_log *log);

#endif /* !HWTR_JITC_H */
