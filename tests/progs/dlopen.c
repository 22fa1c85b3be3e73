/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a dynamic PIE that dlopen()s the sibling libdlfix.so, calls into
 * it through dlsym, and dlclose()s it (mmap and munmap of an image while the
 * program runs).  Dynamic, so it pays ld.so's start-up and lazy binding.
 */

#include <dlfcn.h>
#include <stdio.h>

#include "progdir.h"

int
main(void)
{
	char path[PATH_MAX];
	unsigned int (*fn)(unsigned int);
	void *h;
	unsigned int r;

	if (sibling_path(path, sizeof(path), "libdlfix.so") != 0) {
		fprintf(stderr, "dlopen: cannot find libdlfix.so\n");
		return (1);
	}
	h = dlopen(path, RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return (1);
	}
	*(void **)&fn = dlsym(h, "dlfix_compute");
	if (fn == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return (1);
	}
	r = fn(16);
	dlclose(h);
	printf("dlopen: %08x\n", r);
	return (0);
}
