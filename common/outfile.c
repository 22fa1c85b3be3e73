/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Temporary outputs.  Every file hwtrace writes (archives, databases,
 * exports) is written under a temporary name in the directory of its
 * target and renamed over the target once complete.  The temporary name
 * is created here, and only here, so that no writer can be led through a
 * symbolic link another user planted in a shared directory: the file is
 * created with O_CREAT | O_EXCL | O_NOFOLLOW (which fails on any existing
 * name, a dangling link included) and mode 0600, since archives and
 * databases hold command lines, binaries and memory.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hwtr_common.h"

/* How often a name that keeps reappearing is removed before giving up. */
#define OUT_TRIES	8

static int
out_open_excl(const char *name, int mode)
{
	int fd;

	do
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, mode);
	while (fd < 0 && errno == EINTR);
	return (fd);
}

int
hwtr_out_create(const char *path, int flags, char **tmpp)
{
	struct stat st;
	char *tmp;
	int fd, e, i;

	*tmpp = NULL;
	if (flags & HWTR_OUT_RANDOM) {
		if (asprintf(&tmp, "%s.partial.XXXXXX", path) < 0) {
			errno = ENOMEM;
			return (-1);
		}
		/* mkostemp() creates with O_EXCL and mode 0600. */
		if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
			e = errno;
			free(tmp);
			errno = e;
			return (-1);
		}
		*tmpp = tmp;
		return (fd);
	}
	if (asprintf(&tmp, "%s.partial", path) < 0) {
		errno = ENOMEM;
		return (-1);
	}
	for (i = 0; i < OUT_TRIES; i++) {
		if ((fd = out_open_excl(tmp, 0600)) >= 0) {
			*tmpp = tmp;
			return (fd);
		}
		if (errno != EEXIST)
			break;
		/*
		 * A partial file of an earlier run, or a link: remove the
		 * name (unlink removes a link, never its target) and create
		 * anew.  A directory, or a name owned by another user in a
		 * sticky directory, cannot be removed: refuse it.
		 */
		if (lstat(tmp, &st) == 0 && S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			break;
		}
		if (unlink(tmp) != 0 && errno != ENOENT)
			break;
	}
	e = errno;
	free(tmp);
	errno = e;
	return (-1);
}

int
hwtr_out_commit(const char *tmp, const char *path)
{
	/* rename() replaces a link at @path; it never writes through it. */
	return (rename(tmp, path));
}
