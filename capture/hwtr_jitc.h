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
 *   2') hwtr_jitc_code(jc, log, pid, addr, bytes, len, time) for every
 *      piece of code in anonymous memory a source reports.
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
 * From @time on, @pid's code at [@addr, @addr + @len) is @bytes (copied).
 * The same bytes again add nothing; a version that differs from a
 * recorded one where they overlap ends that one at @time.  Beyond the
 * limits (HWTR_CODE_MAX_LEN, HWTR_CODE_MAX_REGIONS, a member's size)
 * recording stops with one warning on @log.  1 when a new version was
 * recorded, 0 when not, or -HWTR_E_NOMEM.
 */
int hwtr_jitc_code(struct hwtr_jitc *jc, const struct hwtr_log *log,
    int32_t pid, uint64_t addr, const uint8_t *bytes, uint32_t len,
    uint64_t time);

/*
 * Store the files found, and one jit/code-PID.bin per process with code
 * regions, into @aw (borrowed).  A file that is absent is no
 * error; one that does not parse is left out with a warning on @log.
 * 0, or -HWTR_E_* from the archive writer or memory.
 */
int hwtr_jitc_store(struct hwtr_jitc *jc, struct hwtr_aw *aw,
    const struct hwtr_log *log);

#endif /* !HWTR_JITC_H */
