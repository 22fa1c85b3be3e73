/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Private to capture/: the session and its helpers. */

#ifndef HWTR_CAPTURE_H
#define HWTR_CAPTURE_H

#include <sys/types.h>

#include "hwtrace.h"

struct cap_thread;
struct cap_procmaps;
struct cap_imgcache;

struct cap {
	const struct hwtr_cap_config *cfg;
	struct hwtr_cap_result *res;
	struct hwtr_src	src;
	struct hwtr_aw	*aw;
	uint64_t	buffer_size;
	uint64_t	chunk_size;
	uint32_t	psb_period;
	struct cap_thread *threads;
	struct cap_procmaps *maps;	/* per process, procsb.c */
	struct cap_imgcache *imgcache;	/* procsb.c */
};

/* Append a sideband record to the archive. */
int hwtr_cap_sideband(struct cap *cap, const struct hwtr_sb_rec *rec);

/*
 * /proc sideband and images (procsb.c): read /proc/<pid>/maps and record
 * every new executable mapping (MMAP, image stored) and every one gone
 * (MUNMAP).  @fresh: the process is new, nothing is known about it.
 */
int cap_procsb_scan(struct cap *cap, pid_t pid, uint64_t time, int fresh);
int cap_procsb_exec(struct cap *cap, pid_t pid, const char *path,
    uint64_t time);
void cap_procsb_forget(struct cap *cap, pid_t pid);
void cap_procsb_free(struct cap *cap);

/*
 * Resolve --trigger @sym in the executable the capture runs (argv[0] on
 * PATH, or /proc/<pid>/exe): its ELF st_value and whether it is ET_DYN.
 */
int cap_trigger_resolve(struct cap *cap, const char *sym, uint64_t *vaddrp,
    int *piep);

#endif /* !HWTR_CAPTURE_H */
