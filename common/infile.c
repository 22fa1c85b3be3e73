/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Inputs.  Two rules hold for every file hwtrace reads:
 *
 * A named input is a regular file.  It is opened with O_NONBLOCK, so that
 * a FIFO with no writer cannot block the open forever, and refused at once
 * when fstat() says it is anything else (FIFO, device, socket, directory);
 * the flag is cleared before the descriptor is handed back.
 *
 * A file that an input names (a snapshot's "file=", a bundle's
 * "iptTrace") stays inside the input's own directory: the name is walked
 * one component at a time with openat() and O_NOFOLLOW from a descriptor
 * of that directory, so an absolute name, a ".." component or a symbolic
 * link anywhere on the way is refused, and nothing can be swapped in
 * between a check and the open: the descriptor opened is the file read.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hwtrace.h"
#include "hwtr_common.h"

/* Check @fd is a regular file and make it blocking; closes it if not. */
static int
in_finish(int fd, const char *shown, struct stat *st, char *err,
    size_t errlen)
{
	int fl, e;

	if (fstat(fd, st) != 0) {
		e = errno;
		snprintf(err, errlen, "cannot open '%s': %s", shown,
		    strerror(e));
		close(fd);
		return (-HWTR_E_IO);
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", shown);
		close(fd);
		return (-HWTR_E_INVAL);
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot open '%s': %s", shown,
		    strerror(e));
		close(fd);
		return (-HWTR_E_IO);
	}
	return (fd);
}

static int
in_open_err(const char *shown, int e, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot open '%s': %s", shown, strerror(e));
	return (e == ENOENT ? -HWTR_E_NOENT : -HWTR_E_IO);
}

int
hwtr_in_open(const char *path, struct stat *st, char *err, size_t errlen)
{
	int fd;

	do
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return (in_open_err(path, errno, err, errlen));
	return (in_finish(fd, path, st, err, errlen));
}

/*
 * One step of the walk: @comp (one component, no '/') under @dfd, as a
 * directory when @isdir.  A link is ELOOP (final) or ENOTDIR (O_DIRECTORY
 * with O_NOFOLLOW on a link): both are reported as a link when lstat
 * agrees, so that the message says why.
 */
static int
in_step(int dfd, const char *comp, int isdir)
{
	int fd, fl;

	fl = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
	    (isdir ? O_DIRECTORY : O_NONBLOCK);
	do
		fd = openat(dfd, comp, fl);
	while (fd < 0 && errno == EINTR);
	return (fd);
}

/*
 * The part of @path after the directory @dir and a '/', or NULL when
 * @path does not start so.  A trailing '/' of @dir is ignored.
 */
static const char *
in_rel(const char *dir, const char *path)
{
	size_t dl = strlen(dir);

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	if (dl == 1 && dir[0] == '/')
		dl = 0;		/* the root: every absolute path */
	if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
		return (NULL);
	path += dl;
	while (*path == '/')
		path++;
	return (path);
}

int
hwtr_in_open_under(const char *dir, const char *path, struct stat *st,
    char *err, size_t errlen)
{
	struct stat lst;
	const char *name;
	char *copy, *comp, *next;
	int dfd, fd, e;

	assert(path != NULL);
	if (dir == NULL)
		return (hwtr_in_open(path, st, err, errlen));
	if ((name = in_rel(dir, path)) == NULL) {
		snprintf(err, errlen, "'%s' is outside '%s': the files an "
		    "input names must be inside its directory "
		    "(--allow-outside reads any)", path, dir);
		return (-HWTR_E_INVAL);
	}
	if ((copy = strdup(name)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	do
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (dfd < 0 && errno == EINTR);
	if (dfd < 0) {
		free(copy);
		return (in_open_err(dir, errno, err, errlen));
	}
	fd = -1;
	for (comp = copy; comp != NULL; comp = next) {
		if ((next = strchr(comp, '/')) != NULL) {
			*next++ = '\0';
			while (*next == '/')
				next++;
			if (*next == '\0')
				next = NULL;
		}
		if (strcmp(comp, "..") == 0) {
			snprintf(err, errlen, "'%s': a '..' component: the "
			    "files an input names must be inside '%s' "
			    "(--allow-outside reads any)", path, dir);
			close(dfd);
			free(copy);
			return (-HWTR_E_INVAL);
		}
		if (comp[0] == '\0' || strcmp(comp, ".") == 0) {
			if (next != NULL)
				continue;
			comp = ".";	/* "a/." names the directory a */
		}
		fd = in_step(dfd, comp, next != NULL);
		e = errno;
		if (fd < 0 && (e == ELOOP || e == ENOTDIR) &&
		    fstatat(dfd, comp, &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(lst.st_mode)) {
			snprintf(err, errlen, "'%s': a symbolic link: the "
			    "files an input names must be inside '%s' "
			    "(--allow-outside follows links)", path, dir);
			close(dfd);
			free(copy);
			return (-HWTR_E_INVAL);
		}
		close(dfd);
		if (fd < 0) {
			free(copy);
			return (in_open_err(path, e, err, errlen));
		}
		dfd = fd;
	}
	free(copy);
	assert(fd >= 0);
	return (in_finish(fd, path, st, err, errlen));
}
