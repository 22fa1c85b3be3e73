/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv_int.h (private to kernel/vgconv*.c): the Valgrind converter's
 * state, shared by its three files, from the bottom up:
 *   vgconv_def.c	diagnostics and the superblock descriptions (parsed,
 *			classified, their static paths, the table by address);
 *   vgconv_run.c	threads and the replay of their superblocks, the
 *			fast path over one-byte records;
 *   vgconv.c	the public calls (vgconv.h), the tagged records, feeding.
 * Each calls only into the files above it in this list.
 */

#ifndef HWTR_VGCONV_INT_H
#define HWTR_VGCONV_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
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
 * have one side exit (slots 0 and 1) more often than not.  A quad entry,
 * after the slots' (VG_QUADS of them, HOT_QUAD()), is four steps in one:
 * two pairs taken one after the other, indexed by the four record bytes
 * (each < 2) as the bits of a number, the first byte the highest.
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
#define VG_QUADS	16		/* four slots < 2 */
#define HOT_QUAD(h)	(HOT_PATH(h) + (h)->nexits + 1)
#define HOT_SIZE(nexits) \
	((sizeof(struct vg_hothdr) + (VG_PAIRS + (nexits) + 1u + VG_QUADS) * \
	sizeof(struct vg_hot) + 63) & ~(size_t)63)

/*
 * An oct entry: the superblocks that eight one-byte records take in one
 * step, from superblock @h on, with any blocks without a record among
 * them (8 to 16 superblocks, @nblk), all by fast paths (HOT_FAST): kept
 * in the file's table (struct vgconv_file) by @h and the eight bytes @w,
 * the first the lowest.  Loops repeat few such windows: on gzip -6 of
 * 8 MiB of /usr/bin, 29 M oct steps take 235 M of its 303 M superblocks.
 * Valid while the file's table is at generation @gen; @e.succ is where
 * the last superblock led.
 */
struct vg_oct {
	const struct vg_hothdr *h;
	uint64_t	w;
	uint64_t	gen;
	struct vg_hot	e;
	uint32_t	nblk;
};

#define VG_OCTS_LOG	13		/* 8,192 entries, one way */

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

/* An executable mapping of a file: [lo, hi). */
struct vg_fmap {
	uint64_t	lo;
	uint64_t	hi;
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
	struct vg_fmap	*fmaps;		/* file mappings (cb.anon only) */
	size_t		nfmaps;
	size_t		fmcap;
	struct vg_oct	*octs;		/* fast_run()'s, once it makes one */
};

/* The superblocks a fork child inherited, until its file shows up. */
struct vg_snap {
	int32_t		pid;
	struct vg_def	**defs;
	size_t		ndefs;
	size_t		cap;
	struct vg_fmap	*fmaps;		/* and its file mappings */
	size_t		nfmaps;
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
	char		errmsg[HWTR_ERRMSG_MAX];
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

/* Little-endian fields of the event records. */
static inline uint16_t
rd16(const uint8_t *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static inline uint64_t
rd64(const uint8_t *p)
{
	return ((uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32);
}

/* vgconv_def.c */
void	vgc_log(struct vgconv *cv, enum hwtr_log_level lvl,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int	vgc_err(struct vgconv *cv, int err, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
struct vg_def *vgc_def_find(const struct vgconv_file *f, uint64_t addr);
void	vgc_def_unref(struct vg_def *d);
int	vgc_parse_def(struct vgconv_file *f, const uint8_t *p, size_t len);
int	vgc_fmap_set(struct vgconv_file *f, uint64_t addr, uint64_t len,
	    int file);

/* vgconv_run.c */
struct vg_thr *vgc_thr_find(struct vgconv *cv, int32_t tid);
int	vgc_thr_get(struct vgconv_file *f, int32_t tid, uint64_t time,
	    struct vg_thr **tp);
int	vgc_thr_close(struct vgconv *cv, struct vg_thr *t, uint64_t time);
int	vgc_advance(struct vgconv *cv, struct vg_thr *t, int mode,
	    uint64_t stop);
int	vgc_resume(struct vgconv *cv, struct vg_thr *t, uint64_t ip);
int	vgc_stop_at(struct vgconv *cv, struct vg_thr *t, uint64_t ip);
long	vgc_fast_run(struct vgconv_file *f, const uint8_t *buf, size_t len);
int	vgc_inline_rec(struct vgconv_file *f, uint8_t b, uint64_t word);

#endif /* !HWTR_VGCONV_INT_H */
