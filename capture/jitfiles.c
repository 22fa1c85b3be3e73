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

/* One version of a piece of code (hwtr_jitc_code). */
struct jc_reg {
	uint64_t	addr;
	uint64_t	from;
	uint64_t	until;		/* UINT64_MAX while current */
	int32_t		pid;
	uint32_t	len;
	uint8_t		*bytes;
};

/* A process's current versions, sorted by address. */
struct jc_proc {
	int32_t		pid;
	uint32_t	maxlen;		/* longest region ever current */
	struct jc_reg	**live;
	size_t		nlive;
	size_t		lcap;
	uint64_t	size;		/* its member's size so far */
};

struct hwtr_jitc {
	struct jc_reg	**regs;		/* every version, in order */
	size_t		nregs;
	size_t		rcap;
	struct jc_proc	*procs;
	size_t		nprocs;
	size_t		prcap;
	int		code_full;	/* a limit was reached */
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
	for (i = 0; i < jc->nregs; i++) {
		free(jc->regs[i]->bytes);
		free(jc->regs[i]);
	}
	free(jc->regs);
	for (i = 0; i < jc->nprocs; i++)
		free(jc->procs[i].live);
	free(jc->procs);
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

/* ---- code regions ---------------------------------------------------- */

static struct jc_proc *
code_proc(struct hwtr_jitc *jc, int32_t pid)
{
	struct jc_proc *n;
	size_t i, cap;

	for (i = jc->nprocs; i > 0; i--)
		if (jc->procs[i - 1].pid == pid)
			return (&jc->procs[i - 1]);
	if (jc->nprocs == jc->prcap) {
		cap = jc->prcap ? 2 * jc->prcap : 4;
		if ((n = realloc(jc->procs, cap * sizeof(*n))) == NULL)
			return (NULL);
		jc->procs = n;
		jc->prcap = cap;
	}
	n = &jc->procs[jc->nprocs++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	n->size = HWTR_CODE_HDR;
	return (n);
}

static int
code_below(const void *addr, const void *live, size_t i)
{
	const struct jc_reg *const *r = live;

	return (r[i]->addr < *(const uint64_t *)addr);
}

/* Index of the first current region of @p at or above @addr. */
static size_t
code_lower(const struct jc_proc *p, uint64_t addr)
{
	return (hwtr_bsearch(&addr, p->live, p->nlive, code_below));
}

/*
 * Compare the new bytes with the current regions they overlap: 1 when
 * one of them holds them all already; otherwise those that differ are
 * ended at @time and no longer current.
 */
static int
code_overlaps(struct jc_proc *p, uint64_t addr, const uint8_t *bytes,
    uint32_t len, uint64_t time)
{
	struct jc_reg *r;
	uint64_t end = addr + len, lo, hi;
	size_t i, j, first;

	first = code_lower(p, addr > p->maxlen ? addr - p->maxlen : 0);
	for (i = first; i < p->nlive && p->live[i]->addr < end; i++) {
		r = p->live[i];
		if (r->addr + r->len <= addr)
			continue;
		lo = r->addr > addr ? r->addr : addr;
		hi = r->addr + r->len < end ? r->addr + r->len : end;
		if (memcmp(r->bytes + (lo - r->addr), bytes + (lo - addr),
		    (size_t)(hi - lo)) != 0)
			continue;
		if (r->addr <= addr && r->addr + r->len >= end)
			return (1);
	}
	for (i = j = first; i < p->nlive; i++) {
		r = p->live[i];
		if (r->addr < end && r->addr + r->len > addr) {
			lo = r->addr > addr ? r->addr : addr;
			hi = r->addr + r->len < end ? r->addr + r->len : end;
			if (memcmp(r->bytes + (lo - r->addr),
			    bytes + (lo - addr), (size_t)(hi - lo)) != 0) {
				r->until = time > r->from ? time : r->from;
				continue;
			}
		}
		p->live[j++] = r;
	}
	p->nlive = j;
	return (0);
}

int
hwtr_jitc_code(struct hwtr_jitc *jc, const struct hwtr_log *log,
    int32_t pid, uint64_t addr, const uint8_t *bytes, uint32_t len,
    uint64_t time)
{
	struct jc_proc *p;
	struct jc_reg *r;
	size_t i, cap;
	void *n;

	assert(jc != NULL && (bytes != NULL || len == 0));
	if (len == 0 || jc->code_full)
		return (0);
	if (len > HWTR_CODE_MAX_LEN)
		len = HWTR_CODE_MAX_LEN;
	if (addr > UINT64_MAX - len)
		len = (uint32_t)(UINT64_MAX - addr);
	if ((p = code_proc(jc, pid)) == NULL)
		return (-HWTR_E_NOMEM);
	if (code_overlaps(p, addr, bytes, len, time))
		return (0);
	if (jc->nregs >= HWTR_CODE_MAX_REGIONS ||
	    p->size + HWTR_CODE_REC + len > JITC_FILE_MAX) {
		hwtr_logf(log, HWTR_LOG_WARN, "process %d: more JIT code than "
		    "%u regions or %llu bytes; the code of anonymous memory "
		    "is no longer recorded from here on", (int)pid,
		    HWTR_CODE_MAX_REGIONS, (unsigned long long)JITC_FILE_MAX);
		jc->code_full = 1;
		return (0);
	}
	if (jc->nregs == jc->rcap) {
		cap = jc->rcap ? 2 * jc->rcap : 64;
		if ((n = realloc(jc->regs, cap * sizeof(*jc->regs))) == NULL)
			return (-HWTR_E_NOMEM);
		jc->regs = n;
		jc->rcap = cap;
	}
	if (p->nlive == p->lcap) {
		cap = p->lcap ? 2 * p->lcap : 64;
		if ((n = realloc(p->live, cap * sizeof(*p->live))) == NULL)
			return (-HWTR_E_NOMEM);
		p->live = n;
		p->lcap = cap;
	}
	if ((r = malloc(sizeof(*r))) == NULL ||
	    (r->bytes = malloc(len)) == NULL) {
		free(r);
		return (-HWTR_E_NOMEM);
	}
	memcpy(r->bytes, bytes, len);
	r->addr = addr;
	r->from = time;
	r->until = UINT64_MAX;
	r->pid = pid;
	r->len = len;
	jc->regs[jc->nregs++] = r;
	i = code_lower(p, addr);
	memmove(&p->live[i + 1], &p->live[i], (p->nlive - i) *
	    sizeof(*p->live));
	p->live[i] = r;
	p->nlive++;
	if (len > p->maxlen)
		p->maxlen = len;
	p->size += HWTR_CODE_REC + len;
	return (1);
}

/* jit/code-PID.bin of one process, its regions in the order recorded. */
static int
code_store(struct hwtr_jitc *jc, struct hwtr_aw *aw, const struct jc_proc *p)
{
	const struct jc_reg *r;
	char name[32];
	uint8_t *buf;
	size_t i, off;
	int rc;

	if (p->size <= HWTR_CODE_HDR)
		return (0);
	if ((buf = malloc((size_t)p->size)) == NULL)
		return (-HWTR_E_NOMEM);
	hwtr_code_put_hdr(buf);
	off = HWTR_CODE_HDR;
	for (i = 0; i < jc->nregs; i++) {
		r = jc->regs[i];
		if (r->pid != p->pid)
			continue;
		assert(off + HWTR_CODE_REC + r->len <= p->size);
		hwtr_code_put_rec(buf + off, r->addr, r->from, r->until,
		    r->len);
		memcpy(buf + off + HWTR_CODE_REC, r->bytes, r->len);
		off += HWTR_CODE_REC + r->len;
	}
	assert(off == p->size);
	snprintf(name, sizeof(name), "code-%d.bin", (int)p->pid);
	rc = hwtr_aw_add_jit(aw, name, buf, off);
	free(buf);
	return (rc);
}

/* One file: read, checked, stored; absent or malformed ones skipped. */
static int
store_one(struct hwtr_aw *aw, const struct hwtr_log *log, const char *path)
{
	struct hwtr_jit_list l;
	char err[HWTR_ERRMSG_MAX];
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
	for (i = 0; i < jc->nprocs; i++)
		if ((rc = code_store(jc, aw, &jc->procs[i])) < 0)
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
