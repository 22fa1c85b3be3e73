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
#include "hwtr_kernel.h"
#include "hwtr_img.h"
#include "hwtr_jitc.h"

struct cap_thread;

struct cap {
	const struct hwtr_cap_config *cfg;
	struct hwtr_cap_result *res;
	struct hwtr_src	src;
	struct hwtr_aw	*aw;
	uint64_t	buffer_size;
	uint64_t	chunk_size;
	uint32_t	psb_period;
	struct cap_thread *threads;
	struct hwtr_sbc	*sbc;		/* sideband collector */
	struct hwtr_img	*img;		/* image collector */
	struct hwtr_jitc *jit;		/* JIT symbol files */
	pid_t		root;		/* the first process traced */
	struct hwtr_capture_meta meta;	/* for the archive, opened late */
	char		host[256];
	char		*cmdbuf;	/* attached: its /proc cmdline */
	char		**cmdargv;
	int		in_enable;	/* inside the source's enable */
	int		sb_pending;	/* sideband not yet in the file */
	int		aw_broken;	/* a write to the archive failed */
};

/* Append a sideband record to the archive. */
int hwtr_cap_sideband(struct cap *cap, const struct hwtr_sb_rec *rec);

/*
 * Resolve --trigger @sym in the executable the capture runs (argv[0] on
 * PATH, or /proc/<pid>/exe): its ELF st_value and whether it is ET_DYN.
 */
int cap_trigger_resolve(struct cap *cap, const char *sym, uint64_t *vaddrp,
    int *piep);

#endif /* !HWTR_CAPTURE_H */
