/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Collecting JIT symbol files at capture (hwtr_jitc.h).  perf maps are
 * found by name from the processes seen; jitdump files by their mmap:
 * runtimes map the file (executable, so that perf records the mmap) to
 * tell where it is, since it is written in their working directory.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_jit.h"
#include "hwtr_jitc.h"

/* Larger files are left out: the reader refuses members above this. */
#define JITC_FILE_MAX	HWTR_AR_MEM_MAX

struct hwtr_jitc {
	int32_t		*pids;
	size_t		npids;
	size_t		pcap;
	char		**dumps;	/* paths of mmap'd jitdump files */
	size_t		ndumps;
	size_t		dcap;
};

static int read_file(const char *, void **, size_t *);
static const char *base_name(const char *);

int
hwtr_jitc_new(struct hwtr_jitc **jcp)
{
	if ((*jcp = calloc(1, sizeof(**jcp))) == NULL)
		return (-HWTR_E_NOMEM);
	return (0);
}

void
hwtr_jitc_free(struct hwtr_jitc *jc)
{
	size_t i;

	if (jc == NULL)
		return;
	for (i = 0; i < jc->ndumps; i++)
		free(jc->dumps[i]);
	free(jc->dumps);
	free(jc->pids);
	free(jc);
}

int
hwtr_jitc_note(struct hwtr_jitc *jc, const struct hwtr_sb_rec *rec)
{
	const char *path;
	size_t i, cap;
	void *n;

	if (rec->pid > 0) {
		/* Records of one process come in runs: look back first. */
		for (i = jc->npids; i > 0; i--)
			if (jc->pids[i - 1] == rec->pid)
				break;
		if (i == 0) {
			if (jc->npids == jc->pcap) {
				cap = jc->pcap ? 2 * jc->pcap : 16;
				if ((n = realloc(jc->pids, cap *
				    sizeof(*jc->pids))) == NULL)
					return (-HWTR_E_NOMEM);
				jc->pids = n;
				jc->pcap = cap;
			}
			jc->pids[jc->npids++] = rec->pid;
		}
	}
	if (rec->type != HWTR_SB_MMAP || (path = rec->u.mmap.path) == NULL ||
	    path[0] != '/' || strncmp(base_name(path), "jit-", 4) != 0 ||
	    !hwtr_jit_name_ok(base_name(path)))
		return (0);
	for (i = 0; i < jc->ndumps; i++)
		if (strcmp(jc->dumps[i], path) == 0)
			return (0);
	if (jc->ndumps == jc->dcap) {
		cap = jc->dcap ? 2 * jc->dcap : 4;
		if ((n = realloc(jc->dumps, cap * sizeof(*jc->dumps))) == NULL)
			return (-HWTR_E_NOMEM);
		jc->dumps = n;
		jc->dcap = cap;
	}
	if ((jc->dumps[jc->ndumps] = strdup(path)) == NULL)
		return (-HWTR_E_NOMEM);
	jc->ndumps++;
	return (0);
}

/* One file: read, checked, stored; absent or malformed ones skipped. */
static int
store_one(struct hwtr_aw *aw, const struct hwtr_log *log, const char *path)
{
	struct hwtr_jit_list l;
	char err[256];
	void *buf;
	size_t len;
	int rc;

	if ((rc = read_file(path, &buf, &len)) == -HWTR_E_NOENT)
		return (0);
	if (rc < 0) {
		hwtr_logf(log, HWTR_LOG_WARN, "JIT symbols '%s' not stored: %s",
		    path, rc == -HWTR_E_LIMIT ? "too large" : strerror(errno));
		return (rc == -HWTR_E_NOMEM ? rc : 0);
	}
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, path, buf, len, err, sizeof(err));
	hwtr_jit_list_free(&l);
	if (rc == -HWTR_E_NOMEM) {
		free(buf);
		return (rc);
	}
	if (rc < 0) {
		hwtr_logf(log, HWTR_LOG_WARN, "JIT symbols not stored: %s",
		    err);
		free(buf);
		return (0);
	}
	rc = hwtr_aw_add_jit(aw, base_name(path), buf, len);
	free(buf);
	/* Two jit-PID.dump paths of one process: the first is kept. */
	return (rc == -HWTR_E_EXISTS ? 0 : rc);
}

int
hwtr_jitc_store(struct hwtr_jitc *jc, struct hwtr_aw *aw,
    const struct hwtr_log *log)
{
	char path[64];
	size_t i;
	int rc;

	assert(jc != NULL && aw != NULL);
	for (i = 0; i < jc->npids; i++) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map",
		    (int)jc->pids[i]);
		if ((rc = store_one(aw, log, path)) < 0)
			return (rc);
	}
	for (i = 0; i < jc->ndumps; i++)
		if ((rc = store_one(aw, log, jc->dumps[i])) < 0)
			return (rc);
	return (0);
}

/* ---- helpers --------------------------------------------------------- */

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return (s != NULL ? s + 1 : path);
}

/* A regular file, whole; -HWTR_E_NOENT when absent. */
static int
read_file(const char *path, void **bufp, size_t *lenp)
{
	struct stat st;
	size_t off = 0;
	ssize_t n;
	char *buf;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return (errno == ENOENT ? -HWTR_E_NOENT : -HWTR_E_IO);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return (-HWTR_E_IO);
	}
	if ((uint64_t)st.st_size > JITC_FILE_MAX) {
		close(fd);
		return (-HWTR_E_LIMIT);
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	while (off < (size_t)st.st_size) {
		n = read(fd, buf + off, (size_t)st.st_size - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	*bufp = buf;
	*lenp = off;
	return (0);
}
