/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The valgrind source's programs and tool (kernel/vgfind.c); private. */

#ifndef HWTR_VGFIND_H
#define HWTR_VGFIND_H

#include <limits.h>
#include <stddef.h>

struct vg_paths {
	char		valgrind[PATH_MAX];	/* valgrind.bin */
	char		lib[PATH_MAX];		/* VALGRIND_LIB: the tool's */
	char		version[64];		/* "valgrind-3.19.0" */
};

/*
 * Find valgrind.bin, the tool and Valgrind's version into @p; 0, or a
 * negative HWTR_E_* with @why (@len bytes) saying what is missing.
 */
int vg_find(struct vg_paths *p, char *why, size_t len);
/* The first executable @name on PATH into @out; -1 when there is none. */
int vg_find_in_path(const char *name, char *out, size_t len);

#endif
