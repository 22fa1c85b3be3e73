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
 *
 * Only a regular file (or no file) is replaced that way.  A character or
 * block device, a FIFO, "-" (standard output) or a link leading to a
 * device or FIFO (a link owned by the user or by root, as /dev/stdout
 * is: a link another user planted is replaced, never followed) is written
 * into: renaming a file over /dev/null would replace the device node.  A
 * writer that needs to seek (SQLite, HWTR_OUT_SEEKABLE) gets a temporary
 * file in TMPDIR instead, which hwtr_out_commit() copies into the device
 * once complete.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
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

/*
 * What @path is as an output: OUT_FILE (absent or a regular file, a
 * directory too: creating its temporary name fails), OUT_STREAM (a
 * device, a FIFO or "-"), OUT_LINKED (a trusted link to one of those).
 */
enum { OUT_FILE, OUT_STREAM, OUT_LINKED };

static int
out_kind(const char *path)
{
	struct stat st, tst;

	if (strcmp(path, "-") == 0)
		return (OUT_STREAM);
	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode) ||
	    S_ISDIR(st.st_mode))
		return (OUT_FILE);
	if (!S_ISLNK(st.st_mode))
		return (OUT_STREAM);
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    stat(path, &tst) != 0)
		return (OUT_FILE);
	if (S_ISCHR(tst.st_mode) || S_ISBLK(tst.st_mode) ||
	    S_ISFIFO(tst.st_mode))
		return (OUT_LINKED);
	return (OUT_FILE);
}

int
hwtr_out_is_stream(const char *path)
{
	return (out_kind(path) != OUT_FILE);
}

/*
 * Open the device, FIFO or standard output @path for writing, without
 * creating or truncating anything.  A name that became a regular file
 * since out_kind() looked is refused (EEXIST), never written over.  A
 * FIFO without a reader yet is waited for by polling, not in a blocking
 * open(2) that a signal handler installed with SA_RESTART could never
 * interrupt: any signal caught during a pause ends the wait (EINTR), and
 * so does @cancel (when not NULL) becoming non-zero, which is how a
 * signal caught between two pauses, or by another thread, is seen.  So
 * SIGINT and SIGTERM stop a writer whose reader never comes.  With
 * @keepnb the descriptor stays non-blocking (out_copy() polls it).
 */
static int
out_open_stream(const char *path, int kind, const volatile int *cancel,
    int keepnb)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct stat st;
	int fd, fl;

	if (strcmp(path, "-") == 0)
		return (fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0));
	for (;;) {
		if (cancel != NULL && *cancel) {
			errno = EINTR;
			return (-1);
		}
		fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		    (kind == OUT_LINKED ? 0 : O_NOFOLLOW));
		if (fd >= 0 || (errno != ENXIO && errno != EINTR))
			break;
		if (errno == ENXIO && nanosleep(&ts, NULL) != 0) {
			errno = EINTR;
			return (-1);
		}
	}
	if (fd < 0)
		return (-1);
	if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) ||
	    S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EEXIST;
		return (-1);
	}
	if (!keepnb && ((fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/*
 * Create a new file, mode 0600, named @dir then @tail (a mkostemp()
 * template); its name goes to *@tmpp (the caller frees it).
 */
static int
out_mktemp(char **tmpp, const char *dir, const char *tail)
{
	char *tmp;
	int fd, e;

	if (asprintf(&tmp, "%s%s", dir, tail) < 0) {
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

/* A temporary file in TMPDIR for a seekable writer of a stream output. */
static int
out_tmpdir(char **tmpp)
{
	const char *d = getenv("TMPDIR");

	if (d == NULL || *d == '\0')
		d = "/tmp";
	return (out_mktemp(tmpp, d, "/hwtrace-out.XXXXXX"));
}

int
hwtr_out_create(const char *path, int flags, char **tmpp)
{
	struct stat st;
	char *tmp;
	int fd, e, i, kind;

	*tmpp = NULL;
	if ((kind = out_kind(path)) != OUT_FILE)
		return ((flags & HWTR_OUT_SEEKABLE) ? out_tmpdir(tmpp) :
		    out_open_stream(path, kind, NULL, 0));
	if (flags & HWTR_OUT_RANDOM)
		return (out_mktemp(tmpp, path, ".partial.XXXXXX"));
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

/*
 * Write @len bytes of @buf into the non-blocking @fd; while it is full
 * (a reader that stopped reading), wait in pauses of 50 ms that @cancel
 * (when not NULL) or a signal caught ends.  Returns 0 or an errno.
 */
static int
out_write_all(int fd, const char *buf, size_t len,
    const volatile int *cancel)
{
	struct pollfd pfd;
	ssize_t w;
	size_t off = 0;

	while (off < len) {
		if (cancel != NULL && *cancel)
			return (EINTR);
		w = write(fd, buf + off, len - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w == 0)
			return (EIO);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return (errno);
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			return (errno);
		if (pfd.revents & (POLLERR | POLLNVAL))
			return (EPIPE);
	}
	return (0);
}

/*
 * Copy the file @tmp into the stream @path, then remove @tmp; @cancel
 * as hwtr_out_commit_cancel() says.
 */
static int
out_copy(const char *tmp, const char *path, int kind,
    const volatile int *cancel)
{
	char buf[65536];
	ssize_t n;
	int in, out, e = 0;

	if ((in = open(tmp, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	if ((out = out_open_stream(path, kind, cancel, 1)) < 0) {
		e = errno;
		close(in);
		errno = e;
		return (-1);
	}
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : 0;
			break;
		}
		if ((e = out_write_all(out, buf, (size_t)n, cancel)) != 0)
			break;
	}
	close(in);
	if (close(out) != 0 && e == 0)
		e = errno;
	if (e == 0)
		unlink(tmp);
	errno = e;
	return (e == 0 ? 0 : -1);
}

int
hwtr_out_commit(const char *tmp, const char *path)
{
	return (hwtr_out_commit_cancel(tmp, path, NULL));
}

int
hwtr_out_commit_cancel(const char *tmp, const char *path,
    const volatile int *cancel)
{
	int kind;

	/* Written straight into a device or a FIFO: nothing to do. */
	if (tmp == NULL)
		return (0);
	if ((kind = out_kind(path)) != OUT_FILE)
		return (out_copy(tmp, path, kind, cancel));
	/* rename() replaces a link at @path; it never writes through it. */
	return (rename(tmp, path));
}

int
hwtr_stale_open(int dfd, const char *name, int isdir, int age_s, int *fdp)
{
	struct stat st;
	mode_t type = isdir ? S_IFDIR : S_IFREG;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    (st.st_mode & S_IFMT) != type || st.st_uid != geteuid() ||
	    st.st_mtime > time(NULL) - age_s)
		return (0);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    (isdir ? O_DIRECTORY : 0));
	if (fd < 0)
		return (0);
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);	/* a run that goes on */
		return (0);
	}
	*fdp = fd;
	return (1);
}

int
hwtr_stale_rmdir(int dfd, const char *name, int age_s)
{
	struct dirent *fe;
	DIR *sub;
	int fd, rc;

	if (!hwtr_stale_open(dfd, name, 1, age_s, &fd))
		return (0);
	if ((sub = fdopendir(fd)) == NULL) {
		close(fd);
		return (0);
	}
	while ((fe = readdir(sub)) != NULL)
		if (strcmp(fe->d_name, ".") != 0 &&
		    strcmp(fe->d_name, "..") != 0)
			(void)unlinkat(dirfd(sub), fe->d_name, 0);
	rc = unlinkat(dfd, name, AT_REMOVEDIR) == 0;
	closedir(sub);		/* and the lock */
	return (rc);
}
