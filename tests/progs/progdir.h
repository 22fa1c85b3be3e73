/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture helper: the directory this program lives in, so fixtures find
 * their siblings (hello, libdlfix.so) wherever the build puts them.
 */

#ifndef PROGDIR_H
#define PROGDIR_H

#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Fill @buf with "<dir of /proc/self/exe>/@name"; 0 or -1. */
static inline int
sibling_path(char *buf, size_t len, const char *name)
{
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash == NULL || (size_t)(slash - buf) + 2 + strlen(name) > len)
		return (-1);
	strcpy(slash + 1, name);
	return (0);
}

#endif /* !PROGDIR_H */
