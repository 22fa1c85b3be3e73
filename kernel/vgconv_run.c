/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv_run.c: the threads of the Valgrind converter (vgconv_int.h) and
 * the replay of the superblocks they run, as PT encoder calls: the slow
 * path (advance(), replay()) and the fast path over one-byte records
 * (fast_run()), which must produce the same calls.  Kept in one file so
 * that the compiler can inline the replay's steps into both.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_x86.h"
#include "hwtr_vgevents.h"
#include "vgconv_int.h"

/* ---- threads ---------------------------------------------------------- */

struct vg_thr *
vgc_thr_find(struct vgconv *cv, int32_t tid)
{
	size_t i;

	for (i = 0; i < cv->nthr; i++)
		if (cv->thr[i]->tid == tid)
			return (cv->thr[i]);
	return (NULL);
}

int
vgc_thr_get(struct vgconv_file *f, int32_t tid, uint64_t time,
    struct vg_thr **tp)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t, **nt;
	int rc;

	if ((t = vgc_thr_find(cv, tid)) != NULL) {
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

int
vgc_thr_close(struct vgconv *cv, struct vg_thr *t, uint64_t time)
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
	vgc_log(cv, HWTR_LOG_WARN, "valgrind: pid %d tid %d at 0x%llx: %s; "
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
	if ((d = vgc_def_find(f, t->pos)) == NULL)
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
			for (k = 0; k < VG_QUADS; k++)
				HOT_QUAD(ph)[k].succ = NULL;
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
int
vgc_advance(struct vgconv *cv, struct vg_thr *t, int mode, uint64_t stop)
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
int
vgc_resume(struct vgconv *cv, struct vg_thr *t, uint64_t ip)
{
	int rc;

	if (t->known && t->enabled) {
		rc = vgc_advance(cv, t, MODE_RESUME, ip);
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
int
vgc_stop_at(struct vgconv *cv, struct vg_thr *t, uint64_t ip)
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
	rc = vgc_advance(cv, t, MODE_PARTIAL, ip);
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
 * fast_run()'s step over @n superblocks at once, from superblock @h by its
 * path, pair or quad entry @pp (see struct vg_hot): the PSB+ check at the
 * first (the caller made sure none falls on the others), the TNT bits
 * gathered, the counters.  Always inlined, so that they stay in
 * registers.  Returns < 0 on an error.
 */
static inline __attribute__((always_inline)) int
fast_multi(struct vgconv *cv, struct vg_thr *t, struct hwtr_ptenc **ep,
    const struct vg_hothdr *h, const struct vg_hot *pp, unsigned n,
    uint64_t *bits, unsigned *nb, uint64_t *ninsn, uint32_t *nblk,
    long *left)
{
	int rc;

	assert(n >= 1 && n <= 16);
	if (__builtin_expect((*nblk & 15) == 0, 0) && *ep != NULL &&
	    (rc = fast_sync(cv, t, ep, bits, nb, ninsn, h->def->addr,
	    left)) < 0)
		return (rc);
	*nblk += n;
	/* An entry has at most VG_PATH_BITS (32) bits. */
	if (__builtin_expect(*nb > 64 - VG_PATH_BITS, 0)) {
		if (*ep != NULL && (rc = hwtr_ptenc_tnt(*ep, *bits, *nb)) < 0)
			return (rc);
		*left -= *nb;
		*bits = 0;
		*nb = 0;
	}
	*bits = *bits << pp->nbits | pp->bits;
	*nb += pp->nbits;
	*ninsn += pp->ninsn;
	return (0);
}

/*
 * fast_run()'s way to the successor of superblock @h left by @slot when
 * none is cached: thr_def() looks it up and caches it as @h's successor.
 * NULL when it has no description (@t is left at its address).
 */
static const struct vg_hothdr *
fast_lookup(struct vg_thr *t, const struct vg_hothdr *h, size_t slot)
{
	struct vg_def *d = h->def;

	t->pos = d->path[slot].dst;
	t->def = NULL;
	t->prev = d;
	t->prev_slot = (uint16_t)slot;
	if ((d = thr_def(t)) == NULL)
		return (NULL);
	return (d->hot);
}

/*
 * fast_run() took superblock @ph by slot @pslot (path @php), then its
 * successor by @slot (path @hp) to @nh, both with a record and nothing
 * but TNT bits: remember the two steps as one (see struct vg_hot).
 */
static inline __attribute__((always_inline)) void
fast_pair(const struct vg_hothdr *ph, unsigned pslot,
    const struct vg_hot *php, size_t slot, const struct vg_hot *hp,
    const struct vg_hothdr *nh)
{
	struct vg_hot *np = HOT_PAIR((struct vg_hothdr *)ph, pslot, slot);

	np->bits = php->bits << hp->nbits | hp->bits;
	np->nbits = (uint8_t)(php->nbits + hp->nbits);
	np->ninsn = (uint16_t)(php->ninsn + hp->ninsn);
	np->flags = HOT_FAST;
	np->succ = (struct vg_hothdr *)nh;
}

/*
 * The quad entry of superblock @h for the next four record bytes @w (the
 * first the lowest), if they are all < 2 and it was filled; else NULL.
 */
static inline __attribute__((always_inline)) const struct vg_hot *
fast_quad_at(const struct vg_hothdr *h, uint32_t w)
{
	const struct vg_hot *pp;

	if ((w & 0xfefefefeu) != 0)
		return (NULL);
	/* Bytes b0..b3 (each 0 or 1) to b0 << 3 | b1 << 2 | b2 << 1 | b3. */
	pp = &HOT_QUAD(h)[(uint32_t)(w * 0x08040201u) >> 24];
	return (pp->succ != NULL ? pp : NULL);
}

/*
 * fast_run() took a pair at @qh (entry @qpp, index @qi), then a pair at its
 * end (entry @pp, index @pi): remember the four steps as one (see struct
 * vg_hot), its index the four record bytes as bits, the first highest.
 */
static inline __attribute__((always_inline)) void
fast_quad(const struct vg_hothdr *qh, unsigned qi, const struct vg_hot *qpp,
    size_t pi, const struct vg_hot *pp)
{
	struct vg_hot *np = &HOT_QUAD((struct vg_hothdr *)qh)[qi * 4 + pi];

	assert(qi < 4 && pi < 4 && qpp->succ != NULL && pp->succ != NULL);
	np->bits = qpp->bits << pp->nbits | pp->bits;
	np->nbits = (uint8_t)(qpp->nbits + pp->nbits);
	np->ninsn = (uint16_t)(qpp->ninsn + pp->ninsn);
	np->flags = HOT_FAST;
	np->succ = pp->succ;
}

/*
 * May fast_run() take @n superblocks in one step by entry @pp from block
 * number @nblk?  fast_multi() takes the PSB+ check of the first block;
 * one that falls on a later block is allowed where fast_sync() would skip
 * it: the bits gathered (@nb) and the entry's fit in what is @left, and
 * the owner has not asked to stop (the flag is read at the step, as it
 * would be there: no owner sets it while the encoder takes bits).
 */
static inline __attribute__((always_inline)) int
fast_fits(const struct vg_thr *t, uint32_t nblk, unsigned n, unsigned nb,
    const struct vg_hot *pp, long left)
{
	if (n <= (~nblk & 15) + 1u)	/* none after the first */
		return (1);
	return ((long)(nb + pp->nbits) <= left &&
	    (t->fullp == NULL || !*t->fullp));
}

/* The slot of @f's oct table for superblock @h and record bytes @w. */
static inline __attribute__((always_inline)) struct vg_oct *
fast_oct_slot(const struct vgconv_file *f, const struct vg_hothdr *h,
    uint64_t w)
{
	uint64_t k = ((uint64_t)(uintptr_t)h ^ w) * 0x9e3779b97f4a7c15ull;

	return (&f->octs[k >> (64 - VG_OCTS_LOG)]);
}

/*
 * The oct entry of superblock @h for the next eight record bytes @w, if
 * one was made in generation @gen; else NULL.
 */
static inline __attribute__((always_inline)) const struct vg_oct *
fast_oct_at(const struct vgconv_file *f, const struct vg_hothdr *h,
    uint64_t w, uint64_t gen)
{
	const struct vg_oct *o;

	if (f->octs == NULL || (w & 0x8080808080808080ull) != 0)
		return (NULL);
	o = fast_oct_slot(f, h, w);
	return (o->h == h && o->w == w && o->gen == gen ? o : NULL);
}

/*
 * The window of record bytes fast_run() is taking step by step, to be
 * kept as an oct entry once it holds eight.
 */
struct vg_win {
	const struct vg_hothdr *h;	/* where it starts; NULL: none */
	const uint8_t	*bp;		/* its first byte */
	uint64_t	bits;
	unsigned	nbits, ninsn, nblk;
};

/*
 * fast_run() took @n superblocks from @h (record bytes from @bp up to
 * @nbp) by entry @pp to @nh, nothing but TNT bits, in generation @gen: add
 * them to the window @r, and keep it as an oct entry (in place of what
 * held its slot) when it has eight bytes.  A window starts at a
 * superblock with a record; one that would go past eight bytes, 16
 * superblocks or VG_PATH_BITS bits is dropped.
 */
static inline __attribute__((always_inline)) void
fast_win(struct vgconv_file *f, struct vg_win *r, const struct vg_hothdr *h,
    const uint8_t *bp, const struct vg_hot *pp, unsigned n,
    const uint8_t *nbp, const struct vg_hothdr *nh, uint64_t gen)
{
	struct vg_oct *o;

	if (r->h == NULL) {
		if (!h->need)
			return;
		r->h = h;
		r->bp = bp;
		r->bits = 0;
		r->nbits = r->ninsn = r->nblk = 0;
	}
	r->nbits += pp->nbits;
	if (r->nbits > VG_PATH_BITS) {
		r->h = NULL;
		return;
	}
	r->bits = r->bits << pp->nbits | pp->bits;
	r->ninsn += pp->ninsn;
	r->nblk += n;
	if (nbp - r->bp < 8 && r->nblk < 16)
		return;
	if (nbp - r->bp == 8 && r->ninsn <= 0xffff && r->nblk <= 16 &&
	    (f->octs != NULL ||
	    (f->octs = calloc((size_t)1 << VG_OCTS_LOG,
	    sizeof(*f->octs))) != NULL)) {
		o = fast_oct_slot(f, r->h, rd64(r->bp));
		o->h = r->h;
		o->w = rd64(r->bp);
		o->gen = gen;
		o->e.bits = (uint32_t)r->bits;
		o->e.nbits = (uint8_t)r->nbits;
		o->e.ninsn = (uint16_t)r->ninsn;
		o->e.flags = HOT_FAST;
		o->e.succ = (struct vg_hothdr *)nh;
		o->nblk = r->nblk;
	}
	r->h = NULL;
}

/*
 * fast_run()'s counters back to the thread and the statistics; @h (NULL:
 * the thread's @pos has no description) is the superblock it stopped at.
 */
static void
fast_done(struct vgconv *cv, struct vg_thr *t, const struct vg_hothdr *h,
    uint64_t gen, uint64_t ninsn, uint32_t nblk, uint32_t nblk0)
{
	t->nblk = nblk;
	t->ninsn += ninsn;
	cv->st.instructions += ninsn;
	cv->st.blocks += nblk - nblk0;
	if (h != NULL) {
		t->def = h->def;
		t->pos = h->def->addr;
		t->defgen = gen;
		t->prev = NULL;
	}
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
long
vgc_fast_run(struct vgconv_file *f, const uint8_t *buf, size_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t = f->cur;
	struct hwtr_ptenc *e;
	struct vg_def *d;
	const struct vg_hothdr *h, *nh, *ph = NULL, *qh = NULL;
	const struct vg_hot *hp, *php = NULL, *pp, *qpp = NULL;
	const struct vg_oct *o;
	struct vg_win win = { NULL, NULL, 0, 0, 0, 0 };
	const uint8_t *bp = buf, *end = buf + len;
	uint64_t bits = 0, ninsn = 0, gen;
	uint32_t nblk, nblk0;
	unsigned nb = 0, walk = 0, s2, pslot = 0, qi = 0;
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
				ph = qh = NULL;
				win.h = NULL;
				if (rc == 0) {
					have_def = 0;
					break;
				}
				continue;
			}
			/*
			 * Eight records in one step (struct vg_oct), or four
			 * (struct vg_hot), unless a PSB+ may go at a
			 * superblock after the first (fast_fits()).  The
			 * steps that follow make the next oct (fast_win()).
			 */
			if (end - bp > 7 && (o = fast_oct_at(f, h, rd64(bp),
			    gen)) != NULL && fast_fits(t, nblk, o->nblk, nb,
			    &o->e, left)) {
				if ((rc = fast_multi(cv, t, &e, h, &o->e,
				    o->nblk, &bits, &nb, &ninsn, &nblk,
				    &left)) < 0)
					break;
				bp += 8;
				h = o->e.succ;
				ph = qh = NULL;
				win.h = NULL;
				continue;
			}
			if (end - bp > 3 &&
			    (pp = fast_quad_at(h, rd32(bp))) != NULL &&
			    __builtin_expect(h->succ_gen == gen, 1) &&
			    fast_fits(t, nblk, 4, nb, pp, left)) {
				if ((rc = fast_multi(cv, t, &e, h, pp, 4, &bits,
				    &nb, &ninsn, &nblk, &left)) < 0)
					break;
				fast_win(f, &win, h, bp, pp, 4, bp + 4,
				    pp->succ, gen);
				bp += 4;
				h = pp->succ;
				ph = qh = NULL;
				continue;
			}
			/*
			 * Two superblocks in one step (see struct vg_hot),
			 * unless the second is where a PSB+ may go.
			 */
			if (slot < 2 && end - bp > 1 && (s2 = bp[1]) < 2 &&
			    (pp = HOT_PAIR(h, slot, s2))->succ != NULL &&
			    __builtin_expect(h->succ_gen == gen, 1) &&
			    fast_fits(t, nblk, 2, nb, pp, left)) {
				if ((rc = fast_multi(cv, t, &e, h, pp, 2, &bits,
				    &nb, &ninsn, &nblk, &left)) < 0)
					break;
				fast_win(f, &win, h, bp, pp, 2, bp + 2,
				    pp->succ, gen);
				bp += 2;
				/*
				 * This pair right after another makes a quad
				 * of the superblock where that one started.
				 */
				if (qh != NULL && qpp->nbits + pp->nbits <=
				    VG_PATH_BITS && qpp->ninsn + pp->ninsn <=
				    0xffff)
					fast_quad(qh, qi, qpp, slot * 2 + s2, pp);
				qh = h;
				qi = (unsigned)(slot * 2 + s2);
				qpp = pp;
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
		/* Direct calls push return addresses only: after the bits. */
		if ((rc = fast_multi(cv, t, &e, h, hp, 1, &bits, &nb, &ninsn,
		    &nblk, &left)) < 0 ||
		    (__builtin_expect(hp->flags != HOT_FAST, 0) && e != NULL &&
		    (rc = path_calls(e, h->def, &h->def->path[slot], slot)) < 0))
			break;
		bp += h->need;
		/*
		 * A fast path's target is static, so a successor cached in
		 * this generation starts at it.
		 */
		if (__builtin_expect(h->succ_gen == gen, 1) &&
		    (nh = hp->succ) != NULL)
			;
		else if ((nh = fast_lookup(t, h, slot)) == NULL) {
			have_def = 0;
			break;
		}
		/*
		 * The previous step and this one, both with a record and
		 * nothing but TNT bits, make a pair.  Both superblocks' cached
		 * successors are of this generation now.
		 */
		if (ph != NULL && h->need && slot < 2 && hp->flags == HOT_FAST &&
		    php->nbits + hp->nbits <= VG_PATH_BITS &&
		    php->ninsn + hp->ninsn <= 0xffff)
			fast_pair(ph, pslot, php, slot, hp, nh);
		if (h->need && slot < 2 && hp->flags == HOT_FAST) {
			ph = h;
			php = hp;
			pslot = (unsigned)slot;
		} else
			ph = NULL;
		if (hp->flags == HOT_FAST)
			fast_win(f, &win, h, bp - h->need, hp, 1, bp, nh, gen);
		else
			win.h = NULL;
		qh = NULL;
		h = nh;
	}
	if (rc >= 0 && nb > 0 && e != NULL)
		rc = hwtr_ptenc_tnt(e, bits, nb);
	fast_done(cv, t, have_def ? h : NULL, gen, ninsn, nblk, nblk0);
	return (rc < 0 ? rc : (long)(bp - buf));
}

int
vgc_inline_rec(struct vgconv_file *f, uint8_t b, uint64_t word)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t = f->cur;
	struct vg_def *d;
	int rc;

	if (t == NULL)
		return (vgc_err(cv, HWTR_E_FORMAT,
		    "control-flow record before any thread ran"));
	if (!t->known)
		return (0);		/* lost thread: skip */
	if (!t->enabled && (rc = implicit_resume(t)) < 0)
		return (rc);
	rc = vgc_advance(cv, t, MODE_RECORD, 0);
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
