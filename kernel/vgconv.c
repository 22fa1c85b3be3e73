/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv.c: the hwtrace Valgrind tool's event files to PT encoder calls.
 *
 * Each thread keeps the address of the next superblock it runs (@pos).
 * Superblocks whose exit is static (no side exit, constant next) leave no
 * record, so they are walked lazily: when the next record of the thread
 * arrives, every such block from @pos on is replayed first.  A record then
 * says which exit of the block at @pos was taken.  Within a superblock the
 * path to an exit is a straight line, so the PT events of the instructions
 * before the exit are static; they are found once per superblock (the x86
 * helper classifies every instruction) and replayed per execution.
 *
 * PT semantics: a syscall (or int) disables tracing synchronously; a signal
 * delivered at an instruction disables it asynchronously there (FUP ip,
 * TIP.PGD: the faulting instruction did not complete); tracing is enabled
 * again where the thread resumes (RESUME records).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_x86.h"
#include "hwtr_vgevents.h"
#include "vgconv.h"

enum vg_cls {
	CLS_OTHER = 0,
	CLS_JMP,		/* direct jump: no packet */
	CLS_JCC,		/* conditional branch: TNT */
	CLS_CALL,		/* direct call */
	CLS_CALLI,		/* indirect call */
	CLS_RET,
	CLS_JMPI,		/* indirect jump */
	CLS_SYS,		/* syscall, int: tracing stops (kernel) */
	CLS_FAR			/* far transfer in user mode */
};

struct vg_insn {
	uint64_t	addr;
	uint64_t	target;		/* direct branches */
	uint8_t		len;
	uint8_t		cls;
};

struct vg_exit {
	uint16_t	insn;
	uint8_t		jk;
	uint64_t	dst;
};

/* A PT event inside a superblock: its outcome is static. */
struct vg_sev {
	uint16_t	idx;		/* instruction */
	uint8_t		cls;		/* CLS_JCC or CLS_CALL */
	uint8_t		taken;		/* CLS_JCC */
	uint64_t	ret;		/* CLS_CALL: return address */
	uint64_t	next;		/* the next instruction in the block */
};

/*
 * What executing a superblock up to one of its exits (a slot: side exit k,
 * or nexits for the final exit) does, when that is static and simple: TNT
 * bits, direct calls, instructions.  The fast path (fast_run()) applies it
 * without replaying the block.
 */
struct vg_path {
	uint64_t	bits;		/* oldest most significant */
	uint64_t	dst;
	uint16_t	ninsn;		/* instructions completed */
	uint16_t	ncall;		/* direct calls before the exit */
	uint8_t		nbits;		/* <= VG_PATH_BITS */
	uint8_t		xcall;		/* the exit is a direct call */
	uint8_t		fast;		/* nothing else happens */
	uint8_t		xind;		/* the same, up to a computed final
					   exit (ret, indirect jmp or call) */
};

#define VG_PATH_BITS	32

/*
 * What the fast path reads per executed superblock, packed at the start of
 * the def's allocation (64-byte aligned): a 32-byte header, VG_PAIRS pair
 * entries, then one 16-byte entry per slot.
 *
 * The fast path is bound by the chain of loads from one superblock to the
 * next (the cached successor) and by the instructions it runs per step.
 * A pair entry is two steps in one: superblock @h left by slot s1 < 2,
 * then its successor left by slot s2 < 2 (the next record byte), with
 * both paths' TNT bits, instruction counts and the second successor; it
 * is filled when the two steps were taken one by one.  gzip's superblocks
 * have one side exit (slots 0 and 1) more often than not.
 */
struct vg_hot {
	uint32_t	bits;		/* path's TNT bits */
	uint16_t	ninsn;		/* path's instructions */
	uint8_t		nbits;
	uint8_t		flags;		/* HOT_* */
	/*
	 * The superblock this exit led to last time, valid while the file's
	 * table is at generation @succ_gen of the header: saves a hash
	 * lookup per executed superblock.
	 */
	struct vg_hothdr *succ;
};

#define HOT_FAST	0x1		/* path.fast */
#define HOT_CALLS	0x2		/* path has direct calls */
#define HOT_XIND	0x4		/* path.xind */

struct vg_hothdr {
	uint64_t	succ_gen;	/* of the entries' @succ */
	struct vg_def	*def;
	uint16_t	nexits;
	uint8_t		need;		/* its exit needs a record */
	uint8_t		pad[13];
};

#define VG_PAIRS	4		/* s1, s2 < 2 */
#define HOT_PAIR(h, s1, s2) \
	((struct vg_hot *)((h) + 1) + (s1) * 2 + (s2))
#define HOT_PATH(h)	((struct vg_hot *)((h) + 1) + VG_PAIRS)
#define HOT_SIZE(nexits) \
	((sizeof(struct vg_hothdr) + (VG_PAIRS + (nexits) + 1u) * \
	sizeof(struct vg_hot) + 63) & ~(size_t)63)

struct vg_def {
	uint32_t	refs;		/* tables holding it (fork snapshots) */
	uint64_t	addr;
	uint64_t	next;
	uint16_t	ninsn;
	uint16_t	nexits;
	uint16_t	nev;		/* instructions that make PT events */
	uint8_t		nextkind;
	uint8_t		jk;
	struct vg_insn	*insn;
	struct vg_exit	*exit;
	uint16_t	*ev;		/* their indices, ascending */
	struct vg_sev	*sev;		/* the same, with static outcomes */
	/*
	 * cnt[j]: instructions completed among 0..j-1.  VEX unrolls a
	 * rep-prefixed instruction's loop into one superblock (the same
	 * instruction several times in a row); only the last pass completes.
	 */
	uint16_t	*cnt;
	uint16_t	trig;		/* instruction at the trigger, or none */
	uint8_t		need;		/* its exit needs a record */
	struct vg_path	*path;		/* nexits + 1 slots */
	struct vg_hothdr *hot;		/* the allocation starts with it */
};

#define VG_NOTRIG	0xffff

struct vg_thr {
	int32_t		pid;
	int32_t		tid;
	struct hwtr_ptenc **encp;	/* the owner's; NULL: not traced */
	void		*tok;
	struct vgconv_file *file;	/* whose superblocks it runs */
	struct vg_def	*def;		/* at @pos, when @defgen is current */
	uint64_t	defgen;
	struct vg_def	*prev;		/* the superblock that led to @pos */
	uint16_t	prev_slot;
	uint32_t	nblk;
	uint64_t	pos;		/* next instruction */
	uint64_t	time;
	uint64_t	ninsn;
	int		known;		/* @pos is valid */
	int		enabled;
	/* Stop-on-full (cb.stop_limit): */
	uint64_t	limit;		/* encoder bytes; 0: none */
	int		*fullp;		/* the owner's flag; NULL: none */
	int		stopped;	/* the trace ended; @encp is NULL */
	uint64_t	ninsn_stop;	/* instructions traced until then */
	uint64_t	ngt;		/* ground-truth entries seen */
	/*
	 * A fault record: the superblock at @pos was left by a fault at an
	 * instruction in [flt_lo, flt_hi]; the next stop record says which.
	 */
	int		flt;
	uint16_t	flt_lo, flt_hi;
};

struct vgconv_file {
	struct vgconv	*cv;
	char		*name;
	int32_t		pid;
	int32_t		ppid;
	int		magic;
	int		waiting;	/* for the parent's FORK record */
	int		hdr;
	int		complete;
	int		fini;
	int		exitcode;
	int32_t		exec_tid;	/* a thread tried execve; 0 none */
	char		*exe;		/* from the header */
	struct vg_thr	*cur;		/* thread of the last RESUME */
	struct vg_def	**defs;		/* open addressing by addr */
	size_t		ndefs;
	size_t		cap;
	uint64_t	time;
	uint64_t	gen;		/* changes whenever a description does */
};

/* The superblocks a fork child inherited, until its file shows up. */
struct vg_snap {
	int32_t		pid;
	struct vg_def	**defs;
	size_t		ndefs;
	size_t		cap;
};

struct vgconv {
	uint64_t	gen;
	uint64_t	trigger_ip;
	int32_t		trigger_pid;
	struct vg_snap	*snap;
	size_t		nsnap;
	struct vgconv_cb cb;
	struct hwtr_log	log;
	struct vg_thr	**thr;
	size_t		nthr;
	size_t		thrcap;
	int32_t		*pids;		/* processes seen */
	size_t		npids;
	size_t		pidcap;
	struct vgconv_stats st;
	uint64_t	*walk;		/* walked-callback buffer */
	char		errmsg[512];
};

/* The thread's encoder; NULL when it is not (or no longer) traced. */
#define ENC(t)	((t)->encp != NULL ? *(t)->encp : NULL)

/*
 * advance()'s outcomes, all positive: a negative result is an error of
 * the conversion (ADV_ERR, a desync the trace recovers from, was -1 and
 * so ended the conversion as "out of memory").
 */
enum { ADV_NEED = 1, ADV_AT, ADV_OFF, ADV_ERR };
enum { MODE_RECORD = 0, MODE_RESUME, MODE_PARTIAL };

#define VG_MAX_WALK	(1u << 24)	/* static blocks between two records */

static void cv_log(struct vgconv *cv, enum hwtr_log_level lvl,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cv_err(struct vgconv *cv, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
cv_log(struct vgconv *cv, enum hwtr_log_level lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (cv->log.fn == NULL || lvl > cv->log.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cv->log.fn(cv->log.arg, lvl, msg);
}

static int
cv_err(struct vgconv *cv, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cv->errmsg, sizeof(cv->errmsg), fmt, ap);
	va_end(ap);
	return (-err);
}

static uint16_t
rd16(const uint8_t *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

static uint32_t
rd32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static uint64_t
rd64(const uint8_t *p)
{
	return ((uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32);
}

int
vgconv_new(struct vgconv **cvp, const struct vgconv_cb *cb,
    const struct hwtr_log *log)
{
	struct vgconv *cv;

	*cvp = NULL;
	if ((cv = calloc(1, sizeof(*cv))) == NULL)
		return (-HWTR_E_NOMEM);
	cv->cb = *cb;
	if (log != NULL)
		cv->log = *log;
	*cvp = cv;
	return (0);
}

const char *
vgconv_errmsg(const struct vgconv *cv)
{
	return (cv->errmsg);
}

void
vgconv_stats(const struct vgconv *cv, struct vgconv_stats *st)
{
	*st = cv->st;
}

/* ---- superblock descriptions ----------------------------------------- */

static size_t
def_slot(uint64_t addr, size_t cap)
{
	return ((size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1));
}

static struct vg_def *
def_find(const struct vgconv_file *f, uint64_t addr)
{
	size_t i;

	if (f == NULL || f->cap == 0)
		return (NULL);
	for (i = def_slot(addr, f->cap);; i = (i + 1) & (f->cap - 1)) {
		if (f->defs[i] == NULL)
			return (NULL);
		if (f->defs[i]->addr == addr)
			return (f->defs[i]);
	}
}

static void
def_unref(struct vg_def *d)
{
	if (d != NULL && --d->refs == 0)
		free(d->hot);
}

static int
def_put(struct vgconv_file *f, struct vg_def *d)
{
	size_t i, ncap, j;
	struct vg_def **nd;

	if (2 * (f->ndefs + 1) > f->cap) {
		ncap = f->cap ? 2 * f->cap : 4096;
		if ((nd = calloc(ncap, sizeof(*nd))) == NULL)
			return (-HWTR_E_NOMEM);
		for (j = 0; j < f->cap; j++) {
			if (f->defs[j] == NULL)
				continue;
			for (i = def_slot(f->defs[j]->addr, ncap); nd[i] != NULL;
			    i = (i + 1) & (ncap - 1))
				;
			nd[i] = f->defs[j];
		}
		free(f->defs);
		f->defs = nd;
		f->cap = ncap;
	}
	for (i = def_slot(d->addr, f->cap);; i = (i + 1) & (f->cap - 1)) {
		if (f->defs[i] == NULL) {
			f->defs[i] = d;
			f->ndefs++;
			return (0);
		}
		if (f->defs[i]->addr == d->addr) {
			/* Retranslated: the new one applies from now on. */
			f->gen = ++f->cv->gen;
			def_unref(f->defs[i]);
			f->defs[i] = d;
			return (0);
		}
	}
}

static void
classify(struct vgconv *cv, struct vg_insn *in, const uint8_t *bytes)
{
	static const uint8_t cls[] = {
		[HWTR_X86_OTHER] = CLS_OTHER,
		[HWTR_X86_JCC] = CLS_JCC,
		[HWTR_X86_JMP] = CLS_JMP,
		[HWTR_X86_JMP_IND] = CLS_JMPI,
		[HWTR_X86_CALL] = CLS_CALL,
		[HWTR_X86_CALL_IND] = CLS_CALLI,
		[HWTR_X86_RET] = CLS_RET,
		[HWTR_X86_SYSCALL] = CLS_SYS,
		[HWTR_X86_FAR] = CLS_FAR,
		[HWTR_X86_BAD] = CLS_OTHER,
	};
	struct hwtr_x86_insn x;

	(void)cv;
	in->cls = CLS_OTHER;
	in->target = 0;
	if (hwtr_x86_decode(bytes, in->len, in->addr, 64, &x) < 0)
		return;
	in->cls = cls[x.kind];
	if (x.has_target)
		in->target = x.target;
}

/* Fill d->path[slot] (see struct vg_path); ->fast 0 when not simple. */
static void
path_init(struct vg_def *d, size_t slot)
{
	struct vg_path *p = &d->path[slot];
	const struct vg_insn *in;
	size_t i, s;
	int complete;

	memset(p, 0, sizeof(*p));
	if (slot < d->nexits) {
		i = d->exit[slot].insn;
		p->dst = d->exit[slot].dst;
	} else if (d->nextkind == HWVG_NEXT_CONST) {
		i = d->ninsn - 1u;
		p->dst = d->next;
	} else {
		/*
		 * A computed target: fast_run() takes it from the record
		 * where the block ends with a ret or an indirect jmp or call
		 * (the instruction completes, the target comes as a packet),
		 * replay() otherwise.
		 */
		i = d->ninsn - 1u;
		in = &d->insn[i];
		if (in->cls != CLS_RET && in->cls != CLS_JMPI &&
		    in->cls != CLS_CALLI)
			return;
		p->ninsn = (uint16_t)(d->cnt[i] + 1);
		if (d->trig != VG_NOTRIG && d->trig < i + 1)
			return;
		for (s = 0; s < d->nev && d->sev[s].idx < i; s++) {
			if (d->sev[s].cls == CLS_CALL)
				p->ncall++;
			else if (d->sev[s].cls != CLS_JCC ||
			    p->nbits == VG_PATH_BITS)
				return;
			else {
				p->bits = p->bits << 1 | d->sev[s].taken;
				p->nbits++;
			}
		}
		p->xind = 1;
		return;
	}
	in = &d->insn[i];
	/* As in replay(). */
	complete = !(p->dst == in->addr && (in->cls == CLS_OTHER ||
	    in->cls == CLS_SYS));
	p->ninsn = (uint16_t)(d->cnt[i] + complete);
	if (d->trig != VG_NOTRIG && d->trig < i + complete)
		return;
	for (s = 0; s < d->nev && d->sev[s].idx < i; s++) {
		if (d->sev[s].cls == CLS_CALL)
			p->ncall++;
		else if (d->sev[s].cls != CLS_JCC || p->nbits == VG_PATH_BITS)
			return;
		else {
			p->bits = p->bits << 1 | d->sev[s].taken;
			p->nbits++;
		}
	}
	if (complete) {
		switch (in->cls) {
		case CLS_OTHER:
		case CLS_JMP:
			break;
		case CLS_JCC:
			if (p->nbits == VG_PATH_BITS)
				return;
			p->bits = p->bits << 1 | (p->dst != in->addr + in->len);
			p->nbits++;
			break;
		case CLS_CALL:
			p->xcall = 1;
			break;
		default:
			return;		/* packets, or tracing stops */
		}
	}
	p->fast = 1;
}

static int
parse_def(struct vgconv_file *f, const uint8_t *p, size_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_def *d;
	struct vg_hothdr *hot;
	size_t need, off, i;
	uint16_t ninsn, nexits;
	const uint8_t *q;
	int rc;

	if (len < 22)
		return (cv_err(cv, HWTR_E_FORMAT, "short superblock record"));
	ninsn = rd16(p + 8);
	nexits = rd16(p + 10);
	if (ninsn == 0)
		return (cv_err(cv, HWTR_E_FORMAT,
		    "superblock 0x%llx without instructions",
		    (unsigned long long)rd64(p)));
	need = HOT_SIZE(nexits) + sizeof(*d) + ninsn * (sizeof(struct vg_insn) +
	    4 + sizeof(struct vg_sev)) + 2 + nexits * sizeof(struct vg_exit) +
	    (nexits + 1) * sizeof(struct vg_path) + 16;
	need = (need + 63) & ~(size_t)63;
	if ((hot = aligned_alloc(64, need)) == NULL)
		return (-HWTR_E_NOMEM);
	memset(hot, 0, need);
	d = (struct vg_def *)((uint8_t *)hot + HOT_SIZE(nexits));
	d->hot = hot;
	hot->def = d;
	hot->nexits = nexits;
	d->path = (struct vg_path *)(d + 1);
	d->insn = (struct vg_insn *)(d->path + nexits + 1);
	d->exit = (struct vg_exit *)(d->insn + ninsn);
	d->ev = (uint16_t *)(d->exit + nexits);
	d->cnt = d->ev + ninsn;
	d->sev = (struct vg_sev *)(((uintptr_t)(d->cnt + ninsn + 1) + 7) &
	    ~(uintptr_t)7);
	d->refs = 1;
	d->addr = rd64(p);
	d->ninsn = ninsn;
	d->nexits = nexits;
	d->nextkind = p[12];
	d->jk = p[13];
	d->next = rd64(p + 14);
	off = 22;
	for (i = 0; i < ninsn; i++) {
		if (off + 9 > len || off + 9 + p[off + 8] > len)
			goto bad;
		q = p + off;
		d->insn[i].addr = rd64(q);
		d->insn[i].len = q[8];
		classify(cv, &d->insn[i], q + 9);
		if (cv->cb.code != NULL && (rc = cv->cb.code(cv->cb.arg,
		    f->pid, d->insn[i].addr, q + 9, q[8])) < 0) {
			free(hot);
			return (rc);
		}
		off += 9 + q[8];
		if (d->insn[i].cls != CLS_OTHER && d->insn[i].cls != CLS_JMP)
			d->ev[d->nev++] = (uint16_t)i;
	}
	for (i = 0; i < d->nev; i++) {
		struct vg_sev *sv = &d->sev[i];
		const struct vg_insn *in = &d->insn[d->ev[i]];

		sv->idx = d->ev[i];
		sv->cls = in->cls;
		sv->ret = in->addr + in->len;
		sv->next = d->ev[i] + 1u < ninsn ? d->insn[d->ev[i] + 1].addr : 0;
		sv->taken = sv->next != sv->ret;
	}
	d->trig = VG_NOTRIG;
	if (cv->trigger_ip != 0 && f->pid == cv->trigger_pid)
		for (i = 0; i < ninsn; i++)
			if (d->insn[i].addr == cv->trigger_ip) {
				d->trig = (uint16_t)i;
				break;
			}
	d->cnt[0] = 0;
	for (i = 0; i < ninsn; i++)
		d->cnt[i + 1] = (uint16_t)(d->cnt[i] + !(i + 1 < ninsn &&
		    d->insn[i + 1].addr == d->insn[i].addr &&
		    d->insn[i].cls == CLS_OTHER));
	for (i = 0; i < nexits; i++) {
		if (off + 11 > len)
			goto bad;
		q = p + off;
		d->exit[i].insn = rd16(q);
		d->exit[i].jk = q[2];
		d->exit[i].dst = rd64(q + 3);
		if (d->exit[i].insn >= ninsn)
			goto bad;
		off += 11;
	}
	d->need = nexits > 0 || d->nextkind != HWVG_NEXT_CONST;
	hot->need = d->need;
	for (i = 0; i <= nexits; i++) {
		struct vg_hot *h = &HOT_PATH(hot)[i];
		const struct vg_path *pa = &d->path[i];

		path_init(d, i);
		h->bits = (uint32_t)pa->bits;
		h->nbits = pa->nbits;
		h->ninsn = pa->ninsn;
		h->flags = (pa->fast ? HOT_FAST : 0) |
		    (pa->ncall > 0 || pa->xcall ? HOT_CALLS : 0) |
		    (pa->xind ? HOT_XIND : 0);
	}
	cv->st.defs++;
	return (def_put(f, d));
bad:
	free(hot);
	return (cv_err(cv, HWTR_E_FORMAT, "malformed superblock record 0x%llx",
	    (unsigned long long)rd64(p)));
}

/* ---- threads ---------------------------------------------------------- */

static struct vg_thr *
thr_find(struct vgconv *cv, int32_t tid)
{
	size_t i;

	for (i = 0; i < cv->nthr; i++)
		if (cv->thr[i]->tid == tid)
			return (cv->thr[i]);
	return (NULL);
}

static int
thr_get(struct vgconv_file *f, int32_t tid, uint64_t time,
    struct vg_thr **tp)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t, **nt;
	int rc;

	if ((t = thr_find(cv, tid)) != NULL) {
		if (t->file != f)
			t->def = t->prev = NULL;
		t->file = f;
		*tp = t;
		return (0);
	}
	if (cv->nthr == cv->thrcap) {
		nt = realloc(cv->thr, (cv->thrcap * 2 + 16) * sizeof(*nt));
		if (nt == NULL)
			return (-HWTR_E_NOMEM);
		cv->thr = nt;
		cv->thrcap = cv->thrcap * 2 + 16;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (-HWTR_E_NOMEM);
	t->pid = f->pid;
	t->tid = tid;
	t->file = f;
	t->time = time;
	if (cv->cb.thread_start != NULL) {
		rc = cv->cb.thread_start(cv->cb.arg, f->pid, tid,
		    tid == f->pid ? -1 : f->pid, time, &t->encp, &t->tok);
		if (rc < 0) {
			free(t);
			return (rc);
		}
	}
	if (cv->cb.stop_limit != NULL && t->encp != NULL)
		cv->cb.stop_limit(cv->cb.arg, t->tok, &t->limit, &t->fullp);
	cv->thr[cv->nthr++] = t;
	*tp = t;
	return (0);
}

static int
thr_close(struct vgconv *cv, struct vg_thr *t, uint64_t time)
{
	size_t i;
	int rc = 0;

	if (ENC(t) != NULL && t->enabled)
		rc = hwtr_ptenc_disable(ENC(t), 0, time);
	if (ENC(t) != NULL && rc >= 0)
		rc = hwtr_ptenc_flush(ENC(t));
	if (cv->cb.thread_exit != NULL) {
		int r2 = cv->cb.thread_exit(cv->cb.arg, t->tok, t->stopped ?
		    t->ninsn_stop : t->ninsn, time);
		if (rc >= 0)
			rc = r2;
	}
	for (i = 0; i < cv->nthr; i++)
		if (cv->thr[i] == t) {
			cv->thr[i] = cv->thr[--cv->nthr];
			break;
		}
	if (t->file != NULL && t->file->cur == t)
		t->file->cur = NULL;
	free(t);
	return (rc);
}

/* The thread is lost: stop its trace until it resumes somewhere known. */
static int
desync(struct vgconv *cv, struct vg_thr *t, const char *why)
{
	int rc = 0;

	cv->st.desyncs++;
	cv_log(cv, HWTR_LOG_WARN, "valgrind: pid %d tid %d at 0x%llx: %s; "
	    "trace resumes at the next scheduler point", t->pid, t->tid,
	    (unsigned long long)t->pos, why);
	if (ENC(t) != NULL && t->enabled)
		rc = hwtr_ptenc_disable(ENC(t), 0, t->time);
	t->enabled = 0;
	t->known = 0;
	return (rc);
}

/* ---- replay ----------------------------------------------------------- */

/* The superblock at the thread's @pos, or NULL. */
static struct vg_def *
thr_def(struct vg_thr *t)
{
	struct vgconv_file *f = t->file;
	struct vg_def *d;

	if (t->def != NULL && t->defgen == f->gen && t->def->addr == t->pos)
		return (t->def);
	if ((d = def_find(f, t->pos)) == NULL)
		return (NULL);
	t->def = d;
	t->defgen = f->gen;
	if (t->prev != NULL) {
		/*
		 * One generation covers all the exits' cached successors: a
		 * superblock shared with a fork parent or child may still hold
		 * the other process's successors (freed with its table), so
		 * they go before this process's generation applies to them.
		 */
		struct vg_hothdr *ph = t->prev->hot;

		if (ph->succ_gen != f->gen) {
			size_t k;

			for (k = 0; k <= ph->nexits; k++)
				HOT_PATH(ph)[k].succ = NULL;
			for (k = 0; k < VG_PAIRS; k++)
				HOT_PAIR(ph, 0, k)->succ = NULL;
			ph->succ_gen = f->gen;
		}
		HOT_PATH(ph)[t->prev_slot].succ = d->hot;
		t->prev = NULL;
	}
	return (d);
}

/*
 * Stop-on-full: once the thread's encoder has written its limit, or its
 * owner set the flag, the trace ends at the superblock start @pos (FUP,
 * TIP.PGD: the instruction there did not run) and the encoder is fed no
 * more.  The program runs on, untraced.  Checked where a PSB+ may go
 * (every 16th superblock) and where tracing is enabled again, so the
 * limit is overrun by at most 16 superblocks' packets.
 */
static int
stop_now(struct vg_thr *t)
{
	struct hwtr_ptenc *e = ENC(t);
	int rc = 0;

	if (t->limit != 0 && !*t->fullp && hwtr_ptenc_bytes(e) < t->limit)
		return (0);
	*t->fullp = 1;
	if (hwtr_ptenc_enabled(e))
		rc = hwtr_ptenc_disable(e, t->pos, t->time);
	t->encp = NULL;
	t->stopped = 1;
	t->ninsn_stop = t->ninsn;
	return (rc);
}

/* Inlined: the fast path asks every 16 superblocks. */
static inline int
stop_check(struct vg_thr *t)
{
	if (ENC(t) == NULL || t->fullp == NULL || (!*t->fullp &&
	    t->limit == 0))
		return (0);
	return (stop_now(t));
}

/* The transfer of instruction @in to @next; 1 when tracing stopped. */
static int
transfer(struct vg_thr *t, const struct vg_insn *in, uint64_t next)
{
	struct hwtr_ptenc *e = ENC(t);
	uint64_t end = in->addr + in->len;
	int rc = 0;

	switch (in->cls) {
	case CLS_JCC:
		if (e != NULL)
			rc = hwtr_ptenc_cond(e, next != end);
		break;
	case CLS_CALL:
		if (e != NULL)
			rc = hwtr_ptenc_call(e, end, next, 0);
		break;
	case CLS_CALLI:
		if (e != NULL)
			rc = hwtr_ptenc_call(e, end, next, 1);
		break;
	case CLS_RET:
		if (e != NULL)
			rc = hwtr_ptenc_ret(e, next);
		break;
	case CLS_JMPI:
		if (e != NULL)
			rc = hwtr_ptenc_indirect(e, next);
		break;
	case CLS_FAR:
		if (e != NULL)
			rc = hwtr_ptenc_far(e, next, 1);
		break;
	case CLS_SYS:
		if (e != NULL)
			rc = hwtr_ptenc_disable(e, 0, t->time);
		t->enabled = 0;
		return (rc < 0 ? rc : 1);
	default:
		break;
	}
	return (rc);
}

static int
walked(struct vgconv *cv, struct vg_thr *t, const struct vg_def *d, size_t n)
{
	size_t i, k;

	if (cv->cb.walked == NULL || n == 0)
		return (0);
	if (cv->walk == NULL &&
	    (cv->walk = malloc(65536 * sizeof(*cv->walk))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0, k = 0; i < n; i++)
		if (i + 1 >= d->ninsn || d->insn[i + 1].addr != d->insn[i].addr ||
		    d->insn[i].cls != CLS_OTHER)
			cv->walk[k++] = d->insn[i].addr;
	return (cv->cb.walked(cv->cb.arg, t->tok, cv->walk, k));
}

/* The events of the instructions before @i, whose outcomes are static. */
static int
replay_static(struct vg_thr *t, const struct vg_def *d, size_t i)
{
	struct hwtr_ptenc *e = ENC(t);
	const struct vg_sev *sv = d->sev, *end = d->sev + d->nev;
	int rc = 0;

	for (; sv < end && sv->idx < i && rc >= 0; sv++) {
		if (sv->cls == CLS_JCC) {
			if (e != NULL)
				rc = hwtr_ptenc_cond(e, sv->taken);
		} else if (sv->cls == CLS_CALL) {
			if (e != NULL)
				rc = hwtr_ptenc_call(e, sv->ret, sv->next, 0);
		} else
			rc = transfer(t, &d->insn[sv->idx], sv->next);
	}
	return (rc < 0 ? rc : 0);
}

/*
 * Replay superblock @d left at instruction @i towards @dst.  An exit to
 * the start of its own (non-branch) instruction means the instruction did
 * not complete: a rep-prefixed string instruction going round again, or
 * one that faults.
 */
static int
replay(struct vgconv *cv, struct vg_thr *t, struct vg_def *d,
    size_t i, uint64_t dst, size_t slot)
{
	const struct vg_insn *in = d->insn;
	int rc, complete;

	/* A PSB+ may go at a superblock start; asking every 16th is enough. */
	if (ENC(t) != NULL && (t->nblk++ & 15) == 0 &&
	    ((rc = stop_check(t)) < 0 || (ENC(t) != NULL &&
	    (rc = hwtr_ptenc_at(ENC(t), t->pos, t->time)) < 0)))
		return (rc);
	complete = !(dst == in[i].addr && (in[i].cls == CLS_OTHER ||
	    in[i].cls == CLS_SYS));
	if ((rc = replay_static(t, d, i)) < 0)
		return (rc);
	if (complete && (rc = transfer(t, &in[i], dst)) < 0)
		return (rc);
	t->ninsn += d->cnt[i] + complete;
	cv->st.instructions += d->cnt[i] + complete;
	cv->st.blocks++;
	t->pos = dst;
	if (d->trig != VG_NOTRIG && d->trig < i + complete &&
	    cv->cb.trigger != NULL && (rc = cv->cb.trigger(cv->cb.arg,
	    t->tok)) < 0)
		return (rc);
	if (d->hot->succ_gen == t->file->gen &&
	    HOT_PATH(d->hot)[slot].succ != NULL &&
	    HOT_PATH(d->hot)[slot].succ->def->addr == dst) {
		t->def = HOT_PATH(d->hot)[slot].succ->def;
		t->defgen = d->hot->succ_gen;
		t->prev = NULL;
	} else {
		t->def = NULL;
		t->prev = d;
		t->prev_slot = (uint16_t)slot;
	}
	if (cv->cb.walked != NULL)
		return (walked(cv, t, d, i + complete));
	return (0);
}

/* Replay @d up to (not including) its instruction @m. */
static int
replay_partial(struct vgconv *cv, struct vg_thr *t, struct vg_def *d,
    size_t m)
{
	int rc;

	if (ENC(t) != NULL && (rc = hwtr_ptenc_at(ENC(t), t->pos,
	    t->time)) < 0)
		return (rc);
	if ((rc = replay_static(t, d, m)) < 0)
		return (rc);
	t->ninsn += d->cnt[m];
	cv->st.instructions += d->cnt[m];
	t->pos = d->insn[m].addr;
	t->def = t->prev = NULL;
	return (walked(cv, t, d, m));
}

/*
 * Walk the blocks that left no record, from @pos on.  MODE_RECORD: stop at
 * the first block that needs a record.  MODE_RESUME: stop when @pos is
 * @stop.  MODE_PARTIAL: also stop inside a block at @stop (a synchronous
 * fault there).  Everywhere: stop when tracing stopped (a syscall).
 */
static int
advance(struct vgconv *cv, struct vg_thr *t, int mode, uint64_t stop)
{
	struct vg_def *d;
	size_t iter, m;
	int need, rc;

	/*
	 * After a fault record the thread is at the start of the superblock
	 * it names, and the fault is at @stop in the part of it the record
	 * says (an unrolled loop has the same instruction in each copy).
	 */
	if (t->flt) {
		t->flt = 0;
		if (mode == MODE_PARTIAL && t->enabled && t->known &&
		    (d = thr_def(t)) != NULL) {
			for (m = t->flt_lo; m <= t->flt_hi && m < d->ninsn; m++)
				if (d->insn[m].addr == stop)
					break;
			if (m > t->flt_hi || m >= d->ninsn) {
				rc = desync(cv, t, "the fault is not where the "
				    "fault record says");
				return (rc < 0 ? rc : ADV_ERR);
			}
			if (m == 0)
				return (ADV_AT);
			rc = replay_partial(cv, t, d, m);
			return (rc < 0 ? rc : ADV_AT);
		}
		if (mode != MODE_PARTIAL) {
			rc = desync(cv, t, "fault record without a signal");
			return (rc < 0 ? rc : ADV_ERR);
		}
	}
	for (iter = 0; iter < VG_MAX_WALK; iter++) {
		if (!t->enabled || !t->known)
			return (ADV_OFF);
		if (mode != MODE_RECORD && t->pos == stop)
			return (ADV_AT);
		if ((d = thr_def(t)) == NULL) {
			rc = desync(cv, t, "no superblock description");
			return (rc < 0 ? rc : ADV_ERR);
		}
		need = d->nexits > 0 || d->nextkind != HWVG_NEXT_CONST;
		if (mode == MODE_RECORD && need)
			return (ADV_NEED);
		if (mode == MODE_PARTIAL) {
			for (m = 1; m < d->ninsn; m++)
				if (d->insn[m].addr == stop)
					break;
			if (m < d->ninsn && m == d->ninsn - 1u && !need &&
			    d->insn[m].cls == CLS_SYS) {
				/*
				 * A system call that Valgrind backs up to
				 * restart it after the signal: it ran once
				 * (tracing stopped there) and runs again.
				 */
				rc = replay(cv, t, d, m, d->next, d->nexits);
				return (rc < 0 ? rc : ADV_OFF);
			}
			if (m < d->ninsn) {
				rc = replay_partial(cv, t, d, m);
				return (rc < 0 ? rc : ADV_AT);
			}
		}
		if (need) {
			rc = desync(cv, t, mode == MODE_RECORD ?
			    "record expected" : "superblock left without record");
			return (rc < 0 ? rc : ADV_ERR);
		}
		if ((rc = replay(cv, t, d, d->ninsn - 1, d->next,
		    d->nexits)) < 0)
			return (rc);
	}
	rc = desync(cv, t, "endless walk without records");
	return (rc < 0 ? rc : ADV_ERR);
}

/* The thread (re)starts at @ip. */
static int
resume(struct vgconv *cv, struct vg_thr *t, uint64_t ip)
{
	int rc;

	if (t->known && t->enabled) {
		rc = advance(cv, t, MODE_RESUME, ip);
		if (rc < 0)
			return (rc);
		if (rc == ADV_AT)
			return (0);
		if (rc == ADV_ERR) {
			/* desync() stopped the trace; start again below. */
		}
	}
	t->pos = ip;
	t->known = 1;
	t->enabled = 1;
	if ((rc = stop_check(t)) < 0)
		return (rc);
	if (ENC(t) != NULL)
		return (hwtr_ptenc_enable(ENC(t), ip, 1, t->time));
	return (0);
}

/*
 * The thread ran on after a system call without a RESUME record (Valgrind
 * can go back to the program without passing the point where the tool
 * hears of it): it resumed where the call returns to.
 */
static int
implicit_resume(struct vg_thr *t)
{
	int rc;

	t->enabled = 1;
	if ((rc = stop_check(t)) < 0)
		return (rc);
	if (ENC(t) != NULL)
		return (hwtr_ptenc_enable(ENC(t), t->pos, 1, t->time));
	return (0);
}

/* The thread stops at @ip (a signal, its exit): asynchronous disable. */
static int
stop_at(struct vgconv *cv, struct vg_thr *t, uint64_t ip)
{
	int rc;

	/*
	 * Stopped after a system call, somewhere else than where the call
	 * returns to (or restarts it, 2 bytes back): it ran on meanwhile.
	 */
	if (t->known && !t->enabled && ip != t->pos && ip + 2 != t->pos &&
	    (rc = implicit_resume(t)) < 0)
		return (rc);
	if (!t->known || !t->enabled)
		return (0);
	rc = advance(cv, t, MODE_PARTIAL, ip);
	if (rc < 0)
		return (rc);
	if (rc == ADV_AT) {
		if (ENC(t) != NULL && (rc = hwtr_ptenc_disable(ENC(t), ip,
		    t->time)) < 0)
			return (rc);
		t->enabled = 0;
	}
	return (0);
}

/* The direct calls of path @p of superblock @d, in order. */
static int
path_calls(struct hwtr_ptenc *e, const struct vg_def *d,
    const struct vg_path *p, size_t slot)
{
	const struct vg_sev *sv;
	const struct vg_insn *in;
	unsigned n;
	int rc;

	for (sv = d->sev, n = p->ncall; n > 0; sv++)
		if (sv->cls == CLS_CALL) {
			if ((rc = hwtr_ptenc_call(e, sv->ret, sv->next, 0)) < 0)
				return (rc);
			n--;
		}
	if (p->xcall) {
		in = &d->insn[slot < d->nexits ? d->exit[slot].insn :
		    d->ninsn - 1u];
		return (hwtr_ptenc_call(e, in->addr + in->len, p->dst, 0));
	}
	return (0);
}

/*
 * The encoder's room for TNT bits (see fast_sync()), or none while a stop
 * limit counts its bytes.
 */
static inline long
fast_room(const struct vg_thr *t, const struct hwtr_ptenc *e)
{
	if (e == NULL || t->limit != 0)
		return (-1);
	return (hwtr_ptenc_tnt_room(e));
}

/*
 * fast_run()'s step every 16th superblock (the one at @addr), as advance()
 * takes it: the TNT bits gathered so far to the encoder, the instructions
 * counted (stop_check() needs them), the stop check, and the encoder's
 * chance to put a PSB+ there.  Always inlined, so that the loop's
 * counters stay in registers.  Returns < 0 on an error.
 *
 * @left: how many of the TNT bits gathered since the last such step the
 * encoder could still take while its hwtr_ptenc_at() stays a no-op (its
 * room then, less the bits handed over since; < 0: none).  While the
 * bits in the word fit, and the owner does not ask to stop, nothing can
 * happen here and the step is skipped: the bits stay in the word, the
 * counters in registers.  Most of these steps (every 16 superblocks,
 * against a PSB+ every 4 KiB of PT) are skipped so.
 */
static inline __attribute__((always_inline)) int
fast_sync(struct vgconv *cv, struct vg_thr *t, struct hwtr_ptenc **ep,
    uint64_t *bits, unsigned *nb, uint64_t *ninsn, uint64_t addr,
    long *left)
{
	int rc;

	if ((long)*nb <= *left && (t->fullp == NULL || !*t->fullp))
		return (0);
	if (*nb > 0 && (rc = hwtr_ptenc_tnt(*ep, *bits, *nb)) < 0)
		return (rc);
	*bits = 0;
	*nb = 0;
	t->ninsn += *ninsn;
	cv->st.instructions += *ninsn;
	*ninsn = 0;
	t->pos = addr;
	if ((rc = stop_check(t)) < 0)
		return (rc);
	if ((*ep = ENC(t)) != NULL &&
	    (rc = hwtr_ptenc_at(*ep, t->pos, t->time)) < 0)
		return (rc);
	*left = fast_room(t, *ep);
	return (0);
}

/*
 * fast_run()'s step over a superblock left by its computed final exit
 * (HOT_XIND: a ret, an indirect jmp or call at its end) to @target, as
 * replay() takes it: the PSB+ check, the path's TNT bits and direct
 * calls, then the bits so far to the encoder and the transfer (a ret may
 * be a TNT bit itself), then the successor, cached per exit as replay()
 * and thr_def() do.  Returns 1, 0 when the target has no description
 * (@t is left at it), < 0 on an error.
 */
static inline __attribute__((always_inline)) int
fast_xind(struct vgconv_file *f, struct vg_thr *t, struct hwtr_ptenc **ep,
    const struct vg_hothdr **hpp, uint64_t *bits, unsigned *nb,
    uint64_t *ninsn, uint32_t *nblk, uint64_t target, long *left)
{
	const struct vg_hothdr *h = *hpp;
	struct vg_def *d = h->def;
	const struct vg_hot *hp = &HOT_PATH(h)[h->nexits];
	const struct vg_insn *in = &d->insn[d->ninsn - 1u];
	struct hwtr_ptenc *e;
	int rc;

	if (((*nblk)++ & 15) == 0 && *ep != NULL &&
	    (rc = fast_sync(f->cv, t, ep, bits, nb, ninsn, d->addr,
	    left)) < 0)
		return (rc);
	if ((e = *ep) != NULL) {
		if ((hp->flags & HOT_CALLS) && (rc = path_calls(e, d,
		    &d->path[h->nexits], h->nexits)) < 0)
			return (rc);
		if (*nb > 64 - VG_PATH_BITS) {
			if ((rc = hwtr_ptenc_tnt(e, *bits, *nb)) < 0)
				return (rc);
			*bits = 0;
			*nb = 0;
		}
		*bits = *bits << hp->nbits | hp->bits;
		*nb += hp->nbits;
		if (*nb > 0 && (rc = hwtr_ptenc_tnt(e, *bits, *nb)) < 0)
			return (rc);
		*bits = 0;
		*nb = 0;
		if (in->cls == CLS_RET)
			rc = hwtr_ptenc_ret(e, target);
		else if (in->cls == CLS_JMPI)
			rc = hwtr_ptenc_indirect(e, target);
		else
			rc = hwtr_ptenc_call(e, in->addr + in->len, target, 1);
		if (rc < 0)
			return (rc);
		/* Packets or a bit went to the encoder, not counted. */
		*left = fast_room(t, e);
	}
	*ninsn += hp->ninsn;
	if (h->succ_gen == f->gen && hp->succ != NULL &&
	    hp->succ->def->addr == target) {
		*hpp = hp->succ;
		return (1);
	}
	t->pos = target;
	t->def = NULL;
	t->prev = d;
	t->prev_slot = h->nexits;
	if ((d = thr_def(t)) == NULL)
		return (0);
	*hpp = d->hot;
	return (1);
}

/*
 * The fast path: one-byte records of the current thread, and the blocks
 * without records between them, whose paths are simple (struct vg_path):
 * a table lookup per superblock, TNT bits gathered in a word and handed
 * to the encoder in batches.  It produces exactly what advance() and
 * replay() would: the same encoder calls in the same order (the PSB+
 * check every 16th block included), only with TNT bits batched.  It stops
 * at anything else, which the slow path then handles.  Returns the bytes
 * of @buf it consumed.
 */
static long
fast_run(struct vgconv_file *f, const uint8_t *buf, size_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t = f->cur;
	struct hwtr_ptenc *e;
	struct vg_def *d;
	const struct vg_hothdr *h, *nh, *ph = NULL;
	const struct vg_hot *hp, *php = NULL, *pp;
	const uint8_t *bp = buf, *end = buf + len;
	uint64_t bits = 0, ninsn = 0, gen;
	uint32_t nblk, nblk0;
	unsigned nb = 0, walk = 0, s2, pslot = 0;
	long left = -1;
	size_t slot;
	int rc = 0, have_def = 1;

	if (t == NULL || !t->known || !t->enabled || cv->cb.walked != NULL ||
	    (d = thr_def(t)) == NULL)
		return (0);
	/*
	 * Locals, not the thread's fields: with -fno-strict-aliasing every
	 * store through @t would make the compiler load @h's fields again.
	 * The thread's @pos is the start of the superblock at @h, so it is
	 * only written where someone reads it.  The loop is bound by the
	 * number of instructions it runs per superblock (the hot superblocks
	 * are in the L1 cache), hence the rare cases out of line.
	 */
	e = ENC(t);
	gen = f->gen;
	nblk = nblk0 = t->nblk;
	h = d->hot;
	for (;;) {
		if (__builtin_expect(h->need, 1)) {
			if (bp == end)
				break;
			if ((slot = *bp) > h->nexits) {
				if (slot < HWVG_INLINE_WIDE || slot >= 0xf0 ||
				    (slot & 0x7f) != h->nexits ||
				    end - bp < 8 || !(HOT_PATH(h)[h->nexits].flags &
				    HOT_XIND))
					break;
				if ((rc = fast_xind(f, t, &e, &h, &bits, &nb,
				    &ninsn, &nblk, rd64(bp) >> 8, &left)) < 0)
					break;
				bp += 8;
				ph = NULL;
				if (rc == 0) {
					have_def = 0;
					break;
				}
				continue;
			}
			/*
			 * Two superblocks in one step (see struct vg_hot),
			 * unless the second is where a PSB+ may go.
			 */
			if (slot < 2 && end - bp > 1 && (s2 = bp[1]) < 2 &&
			    (pp = HOT_PAIR(h, slot, s2))->succ != NULL &&
			    __builtin_expect(h->succ_gen == gen, 1) &&
			    (nblk & 15) != 15) {
				if (__builtin_expect((nblk & 15) == 0, 0) &&
				    e != NULL && (rc = fast_sync(cv, t, &e,
				    &bits, &nb, &ninsn, h->def->addr,
				    &left)) < 0)
					break;
				nblk += 2;
				if (__builtin_expect(nb > 64 - VG_PATH_BITS,
				    0)) {
					if (e != NULL && (rc = hwtr_ptenc_tnt(e,
					    bits, nb)) < 0)
						break;
					left -= nb;
					bits = 0;
					nb = 0;
				}
				bits = bits << pp->nbits | pp->bits;
				nb += pp->nbits;
				ninsn += pp->ninsn;
				bp += 2;
				h = pp->succ;
				ph = NULL;
				continue;
			}
		} else {
			/*
			 * Blocks without records are walked when a record
			 * follows (as advance() does): a RESUME or SIGNAL
			 * may say the thread is still among them.  A long
			 * loop of them is left to advance().
			 */
			if (bp == end || *bp >= HWVG_INLINE_WIDE ||
			    ++walk > 4096)
				break;
			slot = 0;
		}
		hp = &HOT_PATH(h)[slot];
		if (__builtin_expect(hp->flags != HOT_FAST, 0) &&
		    !(hp->flags & HOT_FAST))
			break;
		if (__builtin_expect((nblk++ & 15) == 0, 0) && e != NULL &&
		    (rc = fast_sync(cv, t, &e, &bits, &nb, &ninsn,
		    h->def->addr, &left)) < 0)
			break;
		/* A path has at most VG_PATH_BITS (32) bits. */
		if (__builtin_expect(nb > 64 - VG_PATH_BITS, 0)) {
			if (e != NULL && (rc = hwtr_ptenc_tnt(e, bits, nb)) < 0)
				break;
			left -= nb;
			bits = 0;
			nb = 0;
		}
		bits = bits << hp->nbits | hp->bits;
		nb += hp->nbits;
		if (__builtin_expect(hp->flags != HOT_FAST, 0) && e != NULL &&
		    (rc = path_calls(e, h->def, &h->def->path[slot], slot)) < 0)
			break;
		ninsn += hp->ninsn;
		bp += h->need;
		/*
		 * A fast path's target is static, so a successor cached in
		 * this generation starts at it.
		 */
		if (__builtin_expect(h->succ_gen == gen, 1) &&
		    (nh = hp->succ) != NULL)
			;
		else {
			/* thr_def() looks it up, caches it as @d's successor. */
			d = h->def;
			t->pos = d->path[slot].dst;
			t->def = NULL;
			t->prev = d;
			t->prev_slot = (uint16_t)slot;
			if ((d = thr_def(t)) == NULL) {
				have_def = 0;
				break;
			}
			nh = d->hot;
		}
		/*
		 * The previous step and this one, both with a record and
		 * nothing but TNT bits, make a pair.  Both superblocks' cached
		 * successors are of this generation now.
		 */
		if (ph != NULL && h->need && slot < 2 && hp->flags == HOT_FAST &&
		    php->nbits + hp->nbits <= VG_PATH_BITS &&
		    php->ninsn + hp->ninsn <= 0xffff) {
			struct vg_hot *np = HOT_PAIR((struct vg_hothdr *)ph,
			    pslot, slot);

			np->bits = php->bits << hp->nbits | hp->bits;
			np->nbits = (uint8_t)(php->nbits + hp->nbits);
			np->ninsn = (uint16_t)(php->ninsn + hp->ninsn);
			np->flags = HOT_FAST;
			np->succ = (struct vg_hothdr *)nh;
		}
		if (h->need && slot < 2 && hp->flags == HOT_FAST) {
			ph = h;
			php = hp;
			pslot = (unsigned)slot;
		} else
			ph = NULL;
		h = nh;
	}
	if (rc >= 0 && nb > 0 && e != NULL)
		rc = hwtr_ptenc_tnt(e, bits, nb);
	t->nblk = nblk;
	t->ninsn += ninsn;
	cv->st.instructions += ninsn;
	cv->st.blocks += nblk - nblk0;
	if (have_def) {
		t->def = h->def;
		t->pos = h->def->addr;
		t->defgen = gen;
		t->prev = NULL;
	}
	return (rc < 0 ? rc : (long)(bp - buf));
}

static int
inline_rec(struct vgconv_file *f, uint8_t b, uint64_t word)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t = f->cur;
	struct vg_def *d;
	int rc;

	if (t == NULL)
		return (cv_err(cv, HWTR_E_FORMAT,
		    "control-flow record before any thread ran"));
	if (!t->known)
		return (0);		/* lost thread: skip */
	if (!t->enabled && (rc = implicit_resume(t)) < 0)
		return (rc);
	rc = advance(cv, t, MODE_RECORD, 0);
	if (rc < 0)
		return (rc);
	if (rc != ADV_NEED)
		return (0);
	d = t->def;
	/*
	 * The block was left by a fault after a side exit: the thread stays
	 * at its start, and the SIGNAL or FINI record that follows walks it
	 * up to the faulting instruction (as for a block without a record).
	 */
	if (b >= HWVG_INLINE_FAULT && b < HWVG_INLINE_WIDE) {
		size_t j = b - HWVG_INLINE_FAULT;

		if (j >= d->nexits)
			return (desync(cv, t, "fault record after a side exit "
			    "the superblock does not have"));
		t->flt = 1;
		t->flt_lo = d->exit[j].insn;
		t->flt_hi = j + 1 < d->nexits && j < HWVG_FAULT_MAXJ ?
		    d->exit[j + 1].insn : (uint16_t)(d->ninsn - 1u);
		return (0);
	}
	if (b & HWVG_INLINE_WIDE) {
		if (d->nextkind != HWVG_NEXT_COMPUTED ||
		    (b & 0x7f) != d->nexits)
			return (desync(cv, t, "computed exit record mismatch"));
		return (replay(cv, t, d, d->ninsn - 1, word >> 8, d->nexits));
	}
	if (b < d->nexits)
		return (replay(cv, t, d, d->exit[b].insn, d->exit[b].dst, b));
	if (b == d->nexits && d->nextkind == HWVG_NEXT_CONST)
		return (replay(cv, t, d, d->ninsn - 1, d->next, d->nexits));
	return (desync(cv, t, "exit record mismatch"));
}

static int
pid_seen(struct vgconv *cv, int32_t pid)
{
	size_t i;
	int32_t *np;

	for (i = 0; i < cv->npids; i++)
		if (cv->pids[i] == pid)
			return (1);
	if (cv->npids == cv->pidcap) {
		np = realloc(cv->pids, (cv->pidcap * 2 + 16) * sizeof(*np));
		if (np == NULL)
			return (-HWTR_E_NOMEM);
		cv->pids = np;
		cv->pidcap = cv->pidcap * 2 + 16;
	}
	cv->pids[cv->npids++] = pid;
	return (0);
}

#define VG_WAIT	0x7a17	/* tagged(): record not consumed, come back later */

/* Keep the parent's superblocks for child @pid. */
static int
snap_take(struct vgconv_file *f, int32_t pid)
{
	struct vgconv *cv = f->cv;
	struct vg_snap *s;
	size_t i;

	s = realloc(cv->snap, (cv->nsnap + 1) * sizeof(*s));
	if (s == NULL)
		return (-HWTR_E_NOMEM);
	cv->snap = s;
	s = &cv->snap[cv->nsnap];
	s->pid = pid;
	s->cap = f->cap;
	s->ndefs = f->ndefs;
	s->defs = NULL;
	if (f->cap > 0) {
		if ((s->defs = malloc(f->cap * sizeof(*s->defs))) == NULL)
			return (-HWTR_E_NOMEM);
		memcpy(s->defs, f->defs, f->cap * sizeof(*s->defs));
		for (i = 0; i < f->cap; i++)
			if (s->defs[i] != NULL)
				s->defs[i]->refs++;
	}
	cv->nsnap++;
	return (0);
}

/* A fork child's file starts with its parent's superblocks: 1, or 0 wait. */
static int
snap_adopt(struct vgconv_file *f)
{
	struct vgconv *cv = f->cv;
	size_t i;

	for (i = 0; i < cv->nsnap; i++)
		if (cv->snap[i].pid == f->pid)
			break;
	if (i == cv->nsnap) {
		f->waiting = 1;
		return (0);
	}
	f->waiting = 0;
	f->gen = ++cv->gen;
	f->defs = cv->snap[i].defs;
	f->cap = cv->snap[i].cap;
	f->ndefs = cv->snap[i].ndefs;
	cv->snap[i] = cv->snap[--cv->nsnap];
	return (1);
}

static int
tagged(struct vgconv_file *f, uint8_t tag, const uint8_t *p, uint32_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t;
	char exe[4097];
	uint32_t n;
	int rc, seen;

	if (tag != HWVG_REC_HDR && !f->hdr)
		return (cv_err(cv, HWTR_E_FORMAT, "record before the header"));
	switch (tag) {
	case HWVG_REC_HDR:
		if (len < 22 || len < 22u + rd16(p + 20))
			return (cv_err(cv, HWTR_E_FORMAT, "short header"));
		if (rd32(p) != HWVG_VERSION)
			return (cv_err(cv, HWTR_E_VERSION,
			    "event file version %u, this hwtrace reads %u",
			    rd32(p), HWVG_VERSION));
		f->pid = (int32_t)rd32(p + 4);
		f->ppid = (int32_t)rd32(p + 8);
		f->time = rd64(p + 12);
		n = rd16(p + 20);
		memcpy(exe, p + 22, n);
		exe[n] = '\0';
		free(f->exe);
		if ((f->exe = strdup(exe)) == NULL)
			return (-HWTR_E_NOMEM);
		if (len >= 26u + n && (rd32(p + 22 + n) & HWVG_HDR_FORKED)) {
			if ((rc = snap_adopt(f)) <= 0)
				return (rc < 0 ? rc : VG_WAIT);
			/* Announced at the parent's FORK record already. */
			f->hdr = 1;
			return (0);
		}
		f->hdr = 1;
		if ((seen = pid_seen(cv, f->pid)) < 0)
			return (seen);
		/*
		 * An exec: the threads going on in the new image start it with
		 * a PSB, where a decoder switches images.
		 */
		if (seen) {
			size_t i;

			for (i = 0; i < cv->nthr; i++)
				if (cv->thr[i]->pid == f->pid &&
				    ENC(cv->thr[i]) != NULL)
					hwtr_ptenc_want_psb(ENC(cv->thr[i]));
		}
		if (cv->cb.proc_start != NULL)
			return (cv->cb.proc_start(cv->cb.arg, f->pid, f->ppid,
			    seen, exe, f->time));
		return (0);
	case HWVG_REC_DEF:
		return (parse_def(f, p, len));
	case HWVG_REC_RESUME:
		if (len < 20)
			break;
		f->time = rd64(p + 12);
		if ((rc = thr_get(f, (int32_t)rd32(p), f->time, &t)) < 0)
			return (rc);
		t->time = f->time;
		f->cur = t;
		return (resume(cv, t, rd64(p + 4)));
	case HWVG_REC_SIGNAL:
		if (len < 24)
			break;
		f->time = rd64(p + 16);
		if ((t = thr_find(cv, (int32_t)rd32(p))) == NULL)
			return (0);
		t->time = f->time;
		return (stop_at(cv, t, rd64(p + 8)));
	case HWVG_REC_THREAD_EXIT:
	case HWVG_REC_FINI:
		if (len < 20)
			break;
		f->time = rd64(p + 12);
		if (tag == HWVG_REC_FINI && len >= 24) {
			f->fini = 1;
			f->exitcode = (int)rd32(p + 20);
		}
		if ((t = thr_find(cv, (int32_t)rd32(p))) == NULL)
			return (0);
		t->time = f->time;
		if ((rc = stop_at(cv, t, rd64(p + 4))) < 0)
			return (rc);
		return (thr_close(cv, t, f->time));
	case HWVG_REC_EXEC:
		if (len < 12)
			break;
		f->exec_tid = (int32_t)rd32(p);
		f->time = rd64(p + 4);
		return (0);
	case HWVG_REC_GT:
		if (len < 8 || (n = rd32(p + 4)) > (len - 8) / 8)
			break;
		if ((t = thr_find(cv, (int32_t)rd32(p))) == NULL ||
		    cv->cb.groundtruth == NULL)
			return (0);
		{
			uint64_t *ip = malloc((n ? n : 1) * sizeof(*ip));
			uint32_t i;

			if (ip == NULL)
				return (-HWTR_E_NOMEM);
			for (i = 0; i < n; i++)
				ip[i] = rd64(p + 8 + 8 * i);
			/* After stop-on-full: up to where the trace ended. */
			if (t->stopped)
				n = t->ngt >= t->ninsn_stop ? 0 :
				    (uint32_t)(t->ninsn_stop - t->ngt < n ?
				    t->ninsn_stop - t->ngt : n);
			t->ngt += n;
			rc = cv->cb.groundtruth(cv->cb.arg, t->tok, ip, n);
			free(ip);
			return (rc);
		}
	case HWVG_REC_MMAP:
		if (len < 38 || len < 38u + rd16(p + 36))
			break;
		f->time = rd64(p + 28);
		if (cv->cb.mmap == NULL)
			return (0);
		n = rd16(p + 36);
		memcpy(exe, p + 38, n);
		exe[n] = '\0';
		return (cv->cb.mmap(cv->cb.arg, f->pid, rd64(p), rd64(p + 8),
		    rd64(p + 16), rd32(p + 24), exe, f->time));
	case HWVG_REC_MUNMAP:
		if (len < 24)
			break;
		f->time = rd64(p + 16);
		if (cv->cb.munmap == NULL)
			return (0);
		return (cv->cb.munmap(cv->cb.arg, f->pid, rd64(p), rd64(p + 8),
		    f->time));
	case HWVG_REC_FORK:
		if (len < 16)
			break;
		if ((rc = snap_take(f, (int32_t)rd32(p + 4))) < 0)
			return (rc);
		/*
		 * The child starts here, in the parent's order of things (its
		 * own file may be read much later).
		 */
		f->time = rd64(p + 8);
		if ((rc = pid_seen(cv, (int32_t)rd32(p + 4))) < 0)
			return (rc);
		if (cv->cb.proc_start != NULL)
			return (cv->cb.proc_start(cv->cb.arg,
			    (int32_t)rd32(p + 4), f->pid, 0, f->exe, f->time));
		return (0);
	case HWVG_REC_END:
		if (len >= 16)
			f->time = rd64(p + 8);
		if (len >= 20) {
			f->fini = 1;
			f->exitcode = (int)rd32(p + 16);
		}
		f->complete = 1;
		return (0);
	default:
		return (0);		/* unknown tagged record: skipped */
	}
	return (cv_err(cv, HWTR_E_FORMAT, "short record 0x%02x", tag));
}

int
vgconv_file_new(struct vgconv *cv, const char *name, struct vgconv_file **fp)
{
	struct vgconv_file *f;

	*fp = NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (-HWTR_E_NOMEM);
	if ((f->name = strdup(name)) == NULL) {
		free(f);
		return (-HWTR_E_NOMEM);
	}
	f->cv = cv;
	f->gen = ++cv->gen;
	*fp = f;
	return (0);
}

int
vgconv_file_waiting(const struct vgconv_file *f)
{
	return (f->waiting);
}

int
vgconv_file_complete(const struct vgconv_file *f)
{
	return (f->complete);
}

int32_t
vgconv_file_pid(const struct vgconv_file *f)
{
	return (f->pid);
}

/*
 * An error from below (the encoder, a callback) that left no message: say
 * where in which file it came.
 */
static long
feed_err(struct vgconv_file *f, size_t off, long rc)
{
	if (f->cv->errmsg[0] == '\0')
		(void)cv_err(f->cv, (int)-rc, "'%s' offset %zu: %s", f->name,
		    f->cv->st.event_bytes + off, hwtr_errstr((int)rc));
	return (rc);
}

long
vgconv_feed(struct vgconv_file *f, const uint8_t *buf, size_t len)
{
	struct vgconv *cv = f->cv;
	size_t off = 0;
	uint32_t rlen;
	int rc;

	if (!f->magic) {
		if (len < 8)
			return (0);
		if (memcmp(buf, HWVG_MAGIC, 8) != 0)
			return (cv_err(cv, HWTR_E_FORMAT, "'%s': not an event "
			    "file of the hwtrace Valgrind tool", f->name));
		f->magic = 1;
		off = 8;
	}
	while (off < len) {
		uint8_t b = buf[off];

		if (b >= 0xf0) {
			if (len - off < 5)
				break;
			rlen = rd32(buf + off + 1);
			if (rlen > (64u << 20))
				return (cv_err(cv, HWTR_E_FORMAT,
				    "'%s' offset %zu: record of %u bytes",
				    f->name, off, rlen));
			if (len - off - 5 < rlen)
				break;
			rc = tagged(f, b, buf + off + 5, rlen);
			if (rc < 0)
				return (feed_err(f, off, rc));
			if (rc == VG_WAIT)
				break;
			off += 5 + (size_t)rlen;
		} else {
			long n = fast_run(f, buf + off, len - off);

			if (n < 0)
				return (feed_err(f, off, n));
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (b & HWVG_INLINE_WIDE) {
				if (len - off < 8)
					break;
				if ((rc = inline_rec(f, b, rd64(buf + off))) < 0)
					return (feed_err(f, off, rc));
				off += 8;
			} else {
				if ((rc = inline_rec(f, b, 0)) < 0)
					return (feed_err(f, off, rc));
				off++;
			}
		}
	}
	cv->st.event_bytes += off;
	return ((long)off);
}

int
vgconv_file_end(struct vgconv_file *f, size_t leftover)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t;
	size_t i;
	int rc = 0, r2;

	if (leftover > 0)
		cv_log(cv, HWTR_LOG_WARN, "valgrind: '%s' ends in a partial "
		    "record (%zu bytes)", f->name, leftover);
	/*
	 * Walk what the threads ran after their last record (up to a
	 * syscall, typically exit or execve), then close them, except a
	 * thread whose execve replaced the image: it goes on in the next
	 * file of the process.
	 */
	for (i = 0; i < cv->nthr;) {
		t = cv->thr[i];
		if (t->file != f) {
			i++;
			continue;
		}
		r2 = advance(cv, t, MODE_RECORD, 0);
		if (r2 < 0 && rc == 0)
			rc = r2;
		if (t->tid == f->exec_tid && !f->complete) {
			t->file = NULL;
			i++;
			continue;
		}
		r2 = thr_close(cv, t, f->time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	if (f->fini && cv->cb.proc_exit != NULL) {
		r2 = cv->cb.proc_exit(cv->cb.arg, f->pid, f->exitcode, f->time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	for (i = 0; i < f->cap; i++)
		def_unref(f->defs[i]);
	free(f->defs);
	free(f->exe);
	free(f->name);
	free(f);
	return (rc);
}

int
vgconv_finish(struct vgconv *cv, uint64_t time)
{
	int rc = 0, r2;

	while (cv->nthr > 0) {
		r2 = thr_close(cv, cv->thr[cv->nthr - 1], time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	return (rc);
}

void
vgconv_set_trigger(struct vgconv *cv, int32_t pid, uint64_t ip)
{
	cv->trigger_pid = pid;
	cv->trigger_ip = ip;
}

void
vgconv_file_abandon(struct vgconv_file *f)
{
	size_t i;

	for (i = 0; i < f->cv->nthr; i++)
		if (f->cv->thr[i]->file == f)
			f->cv->thr[i]->file = NULL;
	for (i = 0; i < f->cap; i++)
		def_unref(f->defs[i]);
	free(f->defs);
	free(f->exe);
	free(f->name);
	free(f);
}

void
vgconv_free(struct vgconv *cv)
{
	if (cv == NULL)
		return;
	while (cv->nthr > 0)
		free(cv->thr[--cv->nthr]);
	while (cv->nsnap > 0) {
		struct vg_snap *sn = &cv->snap[--cv->nsnap];
		size_t i;

		for (i = 0; i < sn->cap; i++)
			def_unref(sn->defs[i]);
		free(sn->defs);
	}
	free(cv->snap);
	free(cv->thr);
	free(cv->pids);
	free(cv->walk);
	free(cv);
}
