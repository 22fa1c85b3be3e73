/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_import: the libFuzzer target for the LLDB bundle and CoreSight
 * snapshot importers (`make fuzz-import`).
 *
 * Both importers read a directory of files, so each input is a small
 * directory in one buffer: a first byte choosing the importer ('L': the
 * bundle trace.json, 'C': the snapshot directory, anything else: the
 * importer that bids highest on the directory), then files, each
 * "\n@@@@ NAME\n" followed by its bytes up to the next such marker.  NAME
 * is one component of letters, digits, '.', '_' and '-' (others are
 * dropped, so nothing is written outside the scratch directory).  The
 * files are written into a private directory under /dev/shm, imported
 * into an archive there, and everything is removed; the names inside the
 * files are the importers' business: "../x", absolute names and links are
 * what their confinement refuses.  libFuzzer fails on any crash,
 * sanitizer report, leak, timeout or excess memory.  Seeds
 * (tests/fuzz/import_seeds.py): the shared corpus's LLDB bundles and
 * small snapshots, packed this way.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hwtrace.h"

#define FI_MARK		"\n@@@@ "
#define FI_MAX_FILES	32
#define FI_MAX_NAME	64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Remove every file of @dir (the scratch directory has no subdirectory). */
static void
fi_clean(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int dfd;

	if ((d = opendir(dir)) == NULL)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

/* 1 when @name (@len bytes) may name a file of the scratch directory. */
static int
fi_name_ok(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > FI_MAX_NAME || (len <= 2 && name[0] == '.' &&
	    (len == 1 || name[1] == '.')))
		return (0);
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '.' ||
		    name[i] == '_' || name[i] == '-'))
			return (0);
	return (1);
}

/* Write the file "NAME\nbytes" of @p..@end into @dfd. */
static void
fi_file(int dfd, const uint8_t *p, const uint8_t *end)
{
	const uint8_t *nl;
	char name[FI_MAX_NAME + 1];
	size_t len;
	ssize_t w;
	int fd;

	if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
		nl = end;
	len = (size_t)(nl - p);
	if (!fi_name_ok((const char *)p, len))
		return;
	memcpy(name, p, len);
	name[len] = '\0';
	p = nl < end ? nl + 1 : end;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	while (p < end && (w = write(fd, p, (size_t)(end - p))) > 0)
		p += w;
	close(fd);
}

static char dir[64], out[96], json[96];

/*
 * The scratch of runs that are gone: a run libFuzzer ends for a timeout
 * or a crash leaves its directory and archive (no atexit then), which
 * the next run removes.
 */
static void
fi_sweep(void)
{
	struct dirent *de;
	char path[300], *end;
	long pid;
	DIR *d;

	if ((d = opendir("/dev/shm")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "fuzz_import.", 12) != 0)
			continue;
		pid = strtol(de->d_name + 12, &end, 10);
		if (end == de->d_name + 12 || pid <= 0 || pid == (long)getpid() ||
		    (strcmp(end, "") != 0 && strcmp(end, ".hwtrace") != 0) ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
		if (*end == '\0') {
			fi_clean(path);
			(void)rmdir(path);
		} else
			(void)unlink(path);
	}
	closedir(d);
}

/* At exit (libFuzzer ends with exit(3)): no scratch directory is left. */
static void
fi_atexit(void)
{
	fi_clean(dir);
	(void)rmdir(dir);
	(void)unlink(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hwtr_import_opts o;
	struct hwtr_aw_opts ao;
	const uint8_t *p, *end = data + size, *next;
	char errbuf[1024];
	size_t n = 0;
	int dfd;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/dev/shm/fuzz_import.%ld",
		    (long)getpid());
		snprintf(out, sizeof(out), "%s.hwtrace", dir);
		snprintf(json, sizeof(json), "%s/trace.json", dir);
		fi_sweep();
		(void)mkdir(dir, 0700);
		setenv("HOME", "/nonexistent", 1);
		atexit(fi_atexit);
	}
	if (size < 1)
		return (0);
	fi_clean(dir);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return (0);
	p = memmem(data + 1, size - 1, FI_MARK, sizeof(FI_MARK) - 1);
	while (p != NULL && n++ < FI_MAX_FILES) {
		p += sizeof(FI_MARK) - 1;
		next = memmem(p, (size_t)(end - p), FI_MARK,
		    sizeof(FI_MARK) - 1);
		fi_file(dfd, p, next != NULL ? next : end);
		p = next;
	}
	close(dfd);
	memset(&o, 0, sizeof(o));
	memset(&ao, 0, sizeof(ao));
	ao.threads = -1;
	ao.level = 1;
	ao.debug_info = -1;
	o.aw_opts = &ao;
	if (data[0] == 'L')
		o.format = "lldb";
	else if (data[0] == 'C')
		o.format = "coresight";
	(void)hwtr_import(data[0] == 'L' ? json : dir, &o, out, errbuf,
	    sizeof(errbuf));
	unlink(out);
	fi_clean(dir);
	return (0);
}
