/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Threads and processes of the step source: lookup, memory and decoded
 * code, the ground truth, the end of a thread.
 */

#if defined(__linux__) && defined(__x86_64__)

#include <assert.h>

#include "step_int.h"

/* ------------------------------------------------------------------ */

struct step_thread *
step_thread_find(struct step *st, pid_t tid)
{
	struct step_thread *t;

	for (t = st->threads[(unsigned)tid % STEP_HASH]; t != NULL;
	    t = t->next)
		if (t->tid == tid)
			return (t);
	return (NULL);
}

void
step_thread_unlink(struct step *st, struct step_thread *t)
{
	struct step_thread **pp;

	for (pp = &st->threads[(unsigned)t->tid % STEP_HASH]; *pp != NULL;
	    pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

struct step_proc *
step_proc_find(struct step *st, pid_t pid)
{
	struct step_proc *p;

	for (p = st->procs; p != NULL; p = p->next)
		if (p->pid == pid)
			return (p);
	return (NULL);
}

void
step_proc_invalidate(struct step_proc *p)
{
	size_t i;

	for (i = 0; i < STEP_PAGES; i++)
		p->pages[i].addr = UINT64_MAX;
	memset(p->icache, 0, STEP_ICACHE * sizeof(*p->icache));
	p->fmaps_stale = 1;
}

int
step_proc_open_mem(struct step_proc *p)
{
	char path[64];

	if (p->memfd >= 0)
		close(p->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
	p->memfd = open(path, O_RDONLY | O_CLOEXEC);
	return (p->memfd >= 0 ? 0 : -HWTR_E_IO);
}

static struct step_proc *
proc_new(struct step *st, pid_t pid)
{
	struct step_proc *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (NULL);
	p->pid = pid;
	p->memfd = -1;
	p->pages = malloc(STEP_PAGES * sizeof(*p->pages));
	p->icache = calloc(STEP_ICACHE, sizeof(*p->icache));
	if (p->pages == NULL || p->icache == NULL) {
		free(p->pages);
		free(p->icache);
		free(p);
		return (NULL);
	}
	step_proc_invalidate(p);
	(void)step_proc_open_mem(p);
	p->next = st->procs;
	st->procs = p;
	return (p);
}

void
step_proc_free(struct step *st, struct step_proc *p)
{
	struct step_proc **pp;

	for (pp = &st->procs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->pages);
	free(p->icache);
	free(p->fmaps);
	free(p);
}

/*
 * The file mappings of @p from /proc/PID/maps.  memfd files count as
 * anonymous memory: no path reaches them.  [vdso] and [vsyscall] are
 * images too.  -HWTR_E_* only for memory; an unreadable file leaves
 * none (all code is then reported: more bytes, never fewer).
 */
static int
fmaps_load(struct step_proc *p)
{
	char path[64], line[4096 + 128], *name;
	struct step_fmap *n;
	uint64_t lo, hi;
	size_t cap;
	FILE *fp;

	p->nfmaps = 0;
	p->fmaps_stale = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if ((name = strchr(line, '/')) == NULL &&
		    (name = strchr(line, '[')) == NULL)
			continue;
		if (strncmp(name, "/memfd:", 7) == 0 || (name[0] == '[' &&
		    strncmp(name, "[vdso]", 6) != 0 &&
		    strncmp(name, "[vsyscall]", 10) != 0))
			continue;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2)
			continue;
		if (p->nfmaps == p->fmcap) {
			cap = p->fmcap ? 2 * p->fmcap : 32;
			if ((n = realloc(p->fmaps, cap * sizeof(*n))) == NULL) {
				fclose(fp);
				p->fmaps_stale = 1;
				return (-HWTR_E_NOMEM);
			}
			p->fmaps = n;
			p->fmcap = cap;
		}
		p->fmaps[p->nfmaps].lo = lo;
		p->fmaps[p->nfmaps].hi = hi;
		p->nfmaps++;
	}
	fclose(fp);
	return (0);
}

/* 1 when @ip of @p lies in a file mapping (or that cannot be known). */
static int
in_file(struct step_proc *p, uint64_t ip)
{
	size_t i;

	if (p->fmaps_stale && fmaps_load(p) < 0)
		return (1);
	for (i = 0; i < p->nfmaps; i++)
		if (p->fmaps[i].lo <= ip && ip < p->fmaps[i].hi)
			return (1);
	return (0);
}

/*
 * Code outside files: read afresh at every stop (a JIT may rewrite it
 * without a system call), never cached; the bytes up to the page's end
 * stay in p->abuf for the source to report.
 */
static int
anon_decode(struct step_proc *p, uint64_t ip, int mode64,
    struct hwtr_x86_insn *insn)
{
	size_t want = 4096 - (ip & 4095);
	ssize_t n;

	if (want < 15)
		want = 15;
	assert(want <= sizeof(p->abuf));
	n = p->memfd >= 0 ? pread(p->memfd, p->abuf, want, (off_t)ip) : -1;
	if (n <= 0) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_IO);
	}
	p->alen = (size_t)n;
	p->anon = 1;
	return (hwtr_x86_decode(p->abuf, p->alen < 15 ? p->alen : 15, ip,
	    mode64 ? 64 : 32, insn));
}

static const struct step_page *
proc_page(struct step_proc *p, uint64_t addr)
{
	struct step_page *pg = &p->pages[(addr >> 12) % STEP_PAGES];
	ssize_t n;

	if (pg->addr == addr)
		return (pg);
	pg->addr = UINT64_MAX;
	if (p->memfd < 0)
		return (NULL);
	n = pread(p->memfd, pg->data, sizeof(pg->data), (off_t)addr);
	if (n <= 0)
		return (NULL);
	pg->len = (size_t)n;
	pg->addr = addr;
	return (pg);
}

/* Decode the instruction at @ip of process @p, through its caches. */
int
step_proc_decode(struct step_proc *p, uint64_t ip, int mode64,
    struct hwtr_x86_insn *insn)
{
	struct step_icache *ic = &p->icache[(ip ^ (ip >> 13)) % STEP_ICACHE];
	const struct step_page *pg;
	uint8_t buf[32];
	uint64_t page = ip & ~(uint64_t)4095;
	size_t off = ip & 4095, n;
	int rc;

	p->anon = 0;
	if (ic->valid && ic->ip == ip && ic->mode64 == mode64) {
		*insn = ic->insn;
		return (0);
	}
	if (!in_file(p, ip))
		return (anon_decode(p, ip, mode64, insn));
	if ((pg = proc_page(p, page)) == NULL || off >= pg->len) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_IO);
	}
	n = pg->len - off;
	if (n > 15)
		n = 15;
	memcpy(buf, pg->data + off, n);
	if (n < 15 && pg->len == 4096 &&
	    (pg = proc_page(p, page + 4096)) != NULL) {
		size_t m = 15 - n < pg->len ? 15 - n : pg->len;

		memcpy(buf + n, pg->data, m);
		n += m;
	}
	rc = hwtr_x86_decode(buf, n, ip, mode64 ? 64 : 32, insn);
	if (rc == 0) {
		ic->ip = ip;
		ic->mode64 = (uint8_t)mode64;
		ic->insn = *insn;
		ic->valid = 1;
	}
	return (rc);
}

/* ------------------------------------------------------------------ */

void
step_err(struct step *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->src->errmsg, sizeof(st->src->errmsg), fmt, ap);
	va_end(ap);
	hwtr_logf(&st->src->cfg.log, HWTR_LOG_DEBUG, "step: %s",
	    st->src->errmsg);
}

int
step_gt_flush(struct step *st, struct step_thread *t)
{
	int rc = 0;

	if (t->ngt > 0 && t->thr != NULL && st->src->sink->groundtruth)
		rc = st->src->sink->groundtruth(st->src->sink->arg, t->thr,
		    t->gt, t->ngt);
	t->ngt = 0;
	return (rc);
}

int
step_gt_push(struct step *st, struct step_thread *t, uint64_t ip)
{
	if (t->gt == NULL)
		return (0);
	t->gt[t->ngt++] = ip;
	if (t->ngt == STEP_GT_BATCH)
		return (step_gt_flush(st, t));
	return (0);
}

struct hwtr_ptenc *
step_tenc(struct step_thread *t)
{
	if (t->thr == NULL || t->stopped_trace)
		return (NULL);
	return (t->thr->enc);
}

/* The pid (thread group) of @tid, from /proc. */
static pid_t
tgid_of(pid_t tid)
{
	char path[64], line[256];
	FILE *fp;
	pid_t tg = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fp = fopen(path, "re")) == NULL)
		return (tid);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tg = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(fp);
	return (tg);
}

static pid_t
ppid_of(pid_t pid)
{
	char path[64], line[256];
	FILE *fp;
	pid_t pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "PPid:", 5) == 0) {
			pp = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(fp);
	return (pp);
}

/* 1 when the thread group of @tid has a handler for @sig. */
int
step_sig_caught(pid_t tid, int sig)
{
	char path[64], line[256];
	FILE *fp;
	uint64_t mask = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fp = fopen(path, "re")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "SigCgt:", 7) == 0) {
			mask = strtoull(line + 7, NULL, 16);
			break;
		}
	fclose(fp);
	return (sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1);
}

int
step_proc_start(struct step *st, pid_t pid, pid_t ppid, struct step_proc **pp)
{
	struct hwtr_src_proc ev;
	struct step_proc *p;

	if ((p = step_proc_find(st, pid)) == NULL) {
		if ((p = proc_new(st, pid)) == NULL)
			return (-HWTR_E_NOMEM);
		memset(&ev, 0, sizeof(ev));
		ev.what = HWTR_PROC_START;
		ev.pid = pid;
		ev.ppid = ppid;
		ev.time = hwtr_src_now();
		if (st->src->sink->proc != NULL)
			(void)st->src->sink->proc(st->src->sink->arg, &ev);
	}
	*pp = p;
	return (0);
}

/* A thread we trace from now on (its first stop is still to come). */
int
step_thread_new(struct step *st, pid_t tid, pid_t ptid, struct step_thread **tp)
{
	struct step_thread *t;
	struct step_proc *p;
	pid_t pid;
	int rc;

	if ((t = step_thread_find(st, tid)) != NULL) {
		*tp = t;
		return (0);
	}
	pid = tgid_of(tid);
	if ((rc = step_proc_start(st, pid, ptid > 0 && pid == tid ?
	    tgid_of(ptid) : ppid_of(pid), &p)) < 0)
		return (rc);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (-HWTR_E_NOMEM);
	t->tid = tid;
	t->proc = p;
	if (st->src->cfg.ground_truth &&
	    (t->gt = malloc(STEP_GT_BATCH * sizeof(*t->gt))) == NULL) {
		free(t);
		return (-HWTR_E_NOMEM);
	}
	rc = st->src->sink->thread_start(st->src->sink->arg, pid, tid, ptid,
	    hwtr_src_now(), &t->thr);
	if (rc < 0) {
		free(t->gt);
		free(t);
		return (rc);
	}
	p->nthreads++;
	t->next = st->threads[(unsigned)tid % STEP_HASH];
	st->threads[(unsigned)tid % STEP_HASH] = t;
	st->nthreads++;
	*tp = t;
	return (0);
}

/*
 * The thread's trace ends here (exit, detach): before its pending
 * instruction when it has one, else before @at, where it stands when
 * that is known (an async disable at that address).  0: not known, or
 * after a syscall, whose disable (in step_complete()) has no address.  An
 * enabled trace that ends without an address lets a decoder run on to
 * the next branch.
 */
void
step_thread_end(struct step *st, struct step_thread *t, enum hwtr_exit_kind kind,
    int32_t value, uint64_t at)
{
	struct hwtr_ptenc *enc = step_tenc(t);

	if (t->state == STEP_T_DONE || t->thr == NULL)
		return;
	if (enc != NULL && hwtr_ptenc_enabled(enc))
		(void)hwtr_ptenc_disable(enc, t->have_pending ? t->pip : at,
		    hwtr_src_now());
	(void)step_gt_flush(st, t);
	t->have_pending = 0;
	(void)st->src->sink->thread_exit(st->src->sink->arg, t->thr, kind,
	    value, hwtr_src_now());
	t->thr = NULL;
	t->state = STEP_T_DONE;
}

void
step_thread_reap(struct step *st, struct step_thread *t)
{
	step_thread_end(st, t, HWTR_EXIT_NONE, 0, 0);
	step_thread_unlink(st, t);
	st->nthreads--;
	if (t->proc != NULL)
		t->proc->nthreads--;
	free(t->gt);
	free(t);
}

int
step_is_mm_syscall(uint64_t nr)
{
	/* mmap, mprotect, munmap, mremap, shmat, remap_file_pages */
	return (nr == 9 || nr == 10 || nr == 11 || nr == 25 || nr == 30 ||
	    nr == 216);
}

#endif /* Linux on x86-64 */
