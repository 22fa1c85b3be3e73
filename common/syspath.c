/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The system's directories of programs and libraries (hwtr_common.h). */

#include <string.h>

#include "hwtr_common.h"

/* Whether @path is @dir or inside it (@dir without a trailing slash). */
static int
sp_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return (strncmp(path, dir, n) == 0 && (path[n] == '/' ||
	    path[n] == '\0'));
}

int
hwtr_path_system(const char *path)
{
	static const char *const dirs[] = { "/usr", "/lib", "/lib32",
	    "/lib64", "/libx32", "/bin", "/sbin" };
	size_t i;

	if (path == NULL || path[0] != '/')
		return (0);
	if (sp_under(path, "/usr/local"))
		return (0);
	for (i = 0; i < HWTR_NELEM(dirs); i++)
		if (sp_under(path, dirs[i]))
			return (1);
	return (0);
}
