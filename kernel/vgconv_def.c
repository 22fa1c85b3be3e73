/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv_def.c: the bottom of the Valgrind converter (vgconv_int.h): its
 * diagnostics, and the superblock descriptions of an event file, each
 * instruction classified by the x86 helper, the static path to each exit
 * found once (struct vg_path) and packed for the fast path (struct
 * vg_hot), kept in a table by address.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_x86.h"
#include "hwtr_vgevents.h"
#include "vgconv_int.h"

void
vgc_log(struct vgconv *cv, enum hwtr_log_level lvl, const char *fmt, ...)
{
	char msg[HWTR_ERRMSG_MAX];
	va_list ap;

	if (cv->log.fn == NULL || lvl > cv->log.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cv->log.fn(cv->log.arg, lvl, msg);
}

int
vgc_err(struct vgconv *cv, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cv->errmsg, sizeof(cv->errmsg), fmt, ap);
	va_end(ap);
	return (-err);
}

/* ---- file mappings (code outside them is reported) ------------------- */

int
vgc_fmap_set(struct vgconv_file *f, uint64_t addr, uint64_t len, int file)
{
	struct vg_fmap *m, *n;
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;
	size_t i, cap;

	/* One hole may split a mapping in two: room for one more. */
	if (f->nfmaps + 2 > f->fmcap) {
		cap = f->fmcap ? 2 * f->fmcap : 16;
		if ((n = realloc(f->fmaps, cap * sizeof(*n))) == NULL)
			return (-HWTR_E_NOMEM);
		f->fmaps = n;
		f->fmcap = cap;
	}
	for (i = 0; i < f->nfmaps; i++) {
		m = &f->fmaps[i];
		if (m->hi <= addr || m->lo >= end)
			continue;
		if (m->lo < addr && m->hi > end) {
			f->fmaps[f->nfmaps].lo = end;
			f->fmaps[f->nfmaps].hi = m->hi;
			f->nfmaps++;
			m->hi = addr;
		} else if (m->lo < addr)
			m->hi = addr;
		else if (m->hi > end)
			m->lo = end;
		else {
			*m = f->fmaps[--f->nfmaps];
			i--;
		}
	}
	if (file && len > 0) {
		f->fmaps[f->nfmaps].lo = addr;
		f->fmaps[f->nfmaps].hi = end;
		f->nfmaps++;
	}
	return (0);
}

/* 1 when [lo, hi) lies in one file mapping of @f. */
static int
fmap_covers(const struct vgconv_file *f, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < f->nfmaps; i++)
		if (f->fmaps[i].lo <= lo && hi <= f->fmaps[i].hi)
			return (1);
	return (0);
}

/*
 * A new version of code starts at f->time: a decoder's time is its last
 * timestamp's, so every thread of the process gets a PSB with at least
 * that time where it stands, before it runs more code.  Valgrind runs one
 * thread at a time: all of them are past f->time.
 */
static int
anon_psb(struct vgconv_file *f)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t;
	size_t i;
	int rc;

	for (i = 0; i < cv->nthr; i++) {
		t = cv->thr[i];
		if (t->pid != f->pid || !t->known || ENC(t) == NULL ||
		    !hwtr_ptenc_enabled(ENC(t)))
			continue;
		if (t->time < f->time)
			t->time = f->time;
		hwtr_ptenc_want_psb(ENC(t));
		if ((rc = hwtr_ptenc_at(ENC(t), t->pos, t->time)) < 0)
			return (rc);
	}
	return (0);
}

/*
 * The superblock record at @p (checked already) does not lie in one file
 * mapping: report the bytes of its instructions outside every file
 * mapping, adjacent ones together.
 */
static int
def_anon(struct vgconv_file *f, const uint8_t *p, uint16_t ninsn)
{
	struct vgconv *cv = f->cv;
	uint8_t buf[4096];
	uint64_t start = 0, a;
	size_t off = 22, n = 0, i;
	uint8_t l;
	int rc, fresh = 0;

	for (i = 0; i <= ninsn; i++) {
		if (i < ninsn) {
			a = rd64(p + off);
			l = p[off + 8];
			if (fmap_covers(f, a, a + l)) {
				off += 9 + l;
				l = 0;
			}
		} else
			l = 0;
		if (n > 0 && (l == 0 || a != start + n ||
		    n + l > sizeof(buf))) {
			if ((rc = cv->cb.anon(cv->cb.arg, f->pid, start, buf,
			    (uint32_t)n, f->time)) < 0)
				return (rc);
			fresh |= rc > 0;
			n = 0;
		}
		if (l == 0)
			continue;
		if (n == 0)
			start = a;
		memcpy(buf + n, p + off + 9, l);
		n += l;
		off += 9 + l;
	}
	return (fresh ? anon_psb(f) : 0);
}

/* ---- superblock descriptions ----------------------------------------- */

static size_t
def_slot(uint64_t addr, size_t cap)
{
	return ((size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1));
}

struct vg_def *
vgc_def_find(const struct vgconv_file *f, uint64_t addr)
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

void
vgc_def_unref(struct vg_def *d)
{
	if (d != NULL && --d->refs == 0)
		free(d->hot);
}

/*
 * @d leaves its table (a new translation of its address replaced it) and
 * may be freed: no thread keeps it as the superblock it is at or, for
 * the successor cache, the one it came from.
 */
static void
thr_forget(struct vgconv *cv, const struct vg_def *d)
{
	size_t i;

	for (i = 0; i < cv->nthr; i++) {
		if (cv->thr[i]->def == d)
			cv->thr[i]->def = NULL;
		if (cv->thr[i]->prev == d)
			cv->thr[i]->prev = NULL;
	}
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
			thr_forget(f->cv, f->defs[i]);
			vgc_def_unref(f->defs[i]);
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

int
vgc_parse_def(struct vgconv_file *f, const uint8_t *p, size_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_def *d;
	struct vg_hothdr *hot;
	size_t need, off, i;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint16_t ninsn, nexits;
	const uint8_t *q;
	int rc;

	if (len < 22)
		return (vgc_err(cv, HWTR_E_FORMAT, "short superblock record"));
	ninsn = rd16(p + 8);
	nexits = rd16(p + 10);
	if (ninsn == 0)
		return (vgc_err(cv, HWTR_E_FORMAT,
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
		if (d->insn[i].addr < lo)
			lo = d->insn[i].addr;
		if (d->insn[i].addr + q[8] > hi)
			hi = d->insn[i].addr + q[8];
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
	/* Code in a file: nothing more to do (the common case). */
	if (cv->cb.anon != NULL && !fmap_covers(f, lo, hi) &&
	    (rc = def_anon(f, p, ninsn)) < 0) {
		free(hot);
		return (rc);
	}
	cv->st.defs++;
	return (def_put(f, d));
bad:
	free(hot);
	return (vgc_err(cv, HWTR_E_FORMAT, "malformed superblock record 0x%llx",
	    (unsigned long long)rd64(p)));
}
