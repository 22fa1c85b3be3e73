/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: the shared library dlopen.c loads at run time (an image that is
 * mapped after the program started, so the trace needs its MMAP record).
 */

unsigned int dlfix_compute(unsigned int);

unsigned int
dlfix_compute(unsigned int n)
{
	unsigned int i, h = 2166136261u;

	for (i = 0; i < n; i++)
		h = (h ^ i) * 16777619u;
	return (h);
}
