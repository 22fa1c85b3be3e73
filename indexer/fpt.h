/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt: the indexer's own Intel PT decoder (issue 29), beside libipt's
 * block decoder and held equal to it block by block (tests/indexer/t_fpt.c).
 *
 * How to use it:
 *  1) Fill a struct fpt_config: the trace buffer, the CPU identity (it
 *     selects the errata libipt works around) and a read_code callback
 *     that gives the code bytes at an address and names the image they
 *     come from (@isid: a new isid whenever the code at an address may
 *     have changed, which is what invalidates the block cache).
 *  2) fpt_new(); then fpt_sync_forward() to the first PSB.
 *  3) fpt_next() until it returns FPT_EOS: each call gives one item, a
 *     block (instructions executed in order, direct jumps and calls
 *     followed, ending at an instruction that needed trace, at a change of
 *     image or before an event) or an event.  After an error item
 *     (FPT_EV_ERROR), or when fpt_next() returns -HWTR_E_UNSUPPORTED (the
 *     trace holds something this decoder does not decode exactly as libipt
 *     does: the caller hands the segment to libipt), call
 *     fpt_sync_forward() to go on at the next PSB.
 *  4) fpt_free().
 *
 * The blocks are libipt's: the same start, end and instruction count as
 * pt_blk_next() gives, and the events are the ones pt_blk_event() gives,
 * in the same order relative to the blocks.
 */

#ifndef HWTR_FPT_H
#define HWTR_FPT_H

#include <stddef.h>
#include <stdint.h>

struct hwtr_x86_insn;

/*
 * Read up to @n bytes of code at @ip into @buf; returns the bytes read
 * (> 0) and sets @isid (> 0) to the image they belong to, or < 0 when
 * nothing is mapped at @ip.  The bytes read must all come from @isid.
 * With @n 0 only @isid is wanted: return 0 when something is mapped.
 */
typedef int (*fpt_read_code_fn)(void *ctx, uint64_t ip, uint8_t *buf,
    size_t n, int *isid);

/*
 * Optional: the span [@lo, @hi) around @ip whose code is all in one
 * image, and that image's @isid; 0, or < 0 when nothing is mapped at
 * @ip.  Without it fpt asks read_code for the image of each block's start.
 */
typedef int (*fpt_map_fn)(void *ctx, uint64_t ip, uint64_t *lo,
    uint64_t *hi, int *isid);

struct fpt_config {
	const uint8_t	*begin, *end;	/* the trace; borrowed */
	fpt_read_code_fn read_code;
	fpt_map_fn	map;		/* optional */
	void		*ctx;		/* for read_code; borrowed */
	int		intel;		/* the CPU identity is an Intel one */
	uint16_t	family;
	uint8_t		model, stepping;
	int		filtering;	/* address filters are configured */
	/*
	 * libipt keeps a section's block cache while the section is mapped:
	 * without an image section cache (ixbare, the tests) only while the
	 * decoder stays in it, so blocks are cut again after each change of
	 * image; with one (the indexer) for good.  Non-zero: the latter.
	 */
	int		keep_cache;
	/*
	 * The address ranges (libipt's addr_filter): per range 0 off, 1
	 * a filter (FilterEn inside), 2 a TraceStop region; A and B both
	 * inclusive.  Used for SKL014 only.
	 */
	uint8_t		filter_cfg[4];
	uint64_t	filter_a[4], filter_b[4];
	/*
	 * The timing configuration libipt estimates time with (its
	 * pt_config's): the MTC period exponent, the nominal frequency
	 * (/ 100 MHz; 0 unknown) and CPUID leaf 0x15's TSC:crystal ratio.
	 */
	uint8_t		mtc_freq, nom_freq;
	uint32_t	cpuid_15_eax, cpuid_15_ebx;
};

/* Packet kinds (fpt_pkt.c). */
enum fpt_pkt_kind {
	FPT_PKT_PAD = 1,
	FPT_PKT_PSB,
	FPT_PKT_PSBEND,
	FPT_PKT_TNT,		/* TNT-8 and TNT-64 */
	FPT_PKT_TIP,
	FPT_PKT_TIP_PGE,
	FPT_PKT_TIP_PGD,
	FPT_PKT_FUP,
	FPT_PKT_MODE_EXEC,
	FPT_PKT_MODE_TSX,
	FPT_PKT_PIP,
	FPT_PKT_VMCS,
	FPT_PKT_TSC,
	FPT_PKT_MTC,
	FPT_PKT_CYC,
	FPT_PKT_TMA,
	FPT_PKT_CBR,
	FPT_PKT_OVF,
	FPT_PKT_PTW,
	FPT_PKT_PWRE,
	FPT_PKT_PWRX,
	FPT_PKT_EXSTOP,
	FPT_PKT_MWAIT,
	FPT_PKT_MNT,
	FPT_PKT_STOP,		/* TraceStop */
	FPT_PKT_UNKNOWN		/* a valid header this parser does not know */
};

/* IP compression of TIP, TIP.PGE, TIP.PGD and FUP (the IPBytes field). */
enum fpt_ipc {
	FPT_IPC_SUPPRESSED = 0,
	FPT_IPC_UPD16 = 1,
	FPT_IPC_UPD32 = 2,
	FPT_IPC_SEXT48 = 3,
	FPT_IPC_UPD48 = 4,
	FPT_IPC_FULL = 6
};

struct fpt_pkt {
	uint8_t		kind;		/* enum fpt_pkt_kind */
	uint8_t		size;		/* bytes */
	uint8_t		ipc;		/* enum fpt_ipc, for IP packets */
	uint8_t		ntnt;		/* TNT: bits in @payload */
	uint8_t		flags;		/* MODE, PTW IP bit, EXSTOP IP bit ... */
	uint64_t	payload;	/* TNT bits, the first in the highest
					   of the @ntnt low bits; raw IP bits;
					   TSC; CR3; VMCS; PTW value ... */
	uint64_t	payload2;	/* TMA FC, PWRX wake reason ... */
};

/*
 * Parse the packet at @p (before @end).  Returns its size, or
 * -HWTR_E_TRUNCATED when it does not fit, -HWTR_E_FORMAT when the bytes
 * are no packet.
 */
int fpt_pkt_parse(const uint8_t *p, const uint8_t *end, struct fpt_pkt *pkt);

/* The @n bytes at @p as a little-endian number (a payload). */
static inline uint64_t
fpt_pkt_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = (v << 8) | p[n];
	return (v);
}

/*
 * Whether a packet of @kind, inside a PSB+, is a status update that
 * libipt hands over as an event at the PSBEND (MODE.exec, MODE.tsx, PIP,
 * VMCS, CBR, MNT).
 */
static inline int
fpt_pkt_psb_status(int kind)
{
	switch (kind) {
	case FPT_PKT_MODE_EXEC:
	case FPT_PKT_MODE_TSX:
	case FPT_PKT_PIP:
	case FPT_PKT_VMCS:
	case FPT_PKT_CBR:
	case FPT_PKT_MNT:
		return (1);
	default:
		return (0);
	}
}

/*
 * The offset of the first PSB at or after @from, or -1; in a run of PSB
 * payload longer than a PSB, of the run's last 16 bytes (libipt's sync).
 */
ptrdiff_t fpt_pkt_find_psb(const uint8_t *begin, const uint8_t *from,
    const uint8_t *end);

/* Block end kinds. */
enum fpt_end {
	FPT_END_NONE = 0,	/* cut: image change, before an event */
	FPT_END_COND_TAKEN,
	FPT_END_COND_NOT_TAKEN,
	FPT_END_INDIRECT,	/* indirect jump */
	FPT_END_CALL_IND,	/* indirect call */
	FPT_END_RET,		/* near return, compressed or not */
	FPT_END_FAR		/* far transfer, syscall, interrupt */
};

struct fpt_block {
	uint64_t	ip;		/* the first instruction */
	uint64_t	end_ip;		/* the last instruction */
	uint32_t	ninsn;
	uint8_t		mode;		/* 16, 32 or 64 */
	uint8_t		end;		/* enum fpt_end */
	int		isid;
};

enum fpt_ev_kind {
	FPT_EV_ENABLED = 1,	/* TIP.PGE: tracing starts at @ip */
	FPT_EV_DISABLED,	/* TIP.PGD after a branch */
	FPT_EV_ASYNC_DISABLED,	/* FUP + TIP.PGD: stops at @ip */
	FPT_EV_ASYNC_BRANCH,	/* FUP + TIP: interrupt at @ip to @to */
	FPT_EV_EXEC_MODE,	/* mode becomes @mode at @ip */
	FPT_EV_OVERFLOW,
	FPT_EV_TSX,
	FPT_EV_PAGING,
	FPT_EV_VMCS,
	FPT_EV_PTWRITE,
	FPT_EV_PWRE,
	FPT_EV_PWRX,
	FPT_EV_EXSTOP,
	FPT_EV_MWAIT,
	FPT_EV_STOP,
	FPT_EV_ERROR,		/* decode error at @offset (@error) */
	FPT_EV_CBR,		/* core:bus ratio @payload (CBR) */
	FPT_EV_MNT		/* maintenance, @payload (MNT) */
};

struct fpt_event {
	uint8_t		kind;		/* enum fpt_ev_kind */
	uint8_t		ip_suppressed;
	uint8_t		status_update;	/* from a PSB+ */
	uint8_t		psb_left;	/* the PSB+'s events after it */
	uint8_t		has_tsc;
	uint8_t		mode;		/* FPT_EV_EXEC_MODE */
	int		error;		/* FPT_EV_ERROR: -HWTR_E_* */
	uint64_t	ip, to;
	uint64_t	tsc;		/* the last TSC before the event */
	uint64_t	offset;		/* of the packet in the trace */
	uint64_t	payload;	/* CR3, VMCS, PTW value ... */
};

enum fpt_item_kind {
	FPT_ITEM_BLOCK = 1,
	FPT_ITEM_EVENT
};

struct fpt_item {
	uint8_t		kind;		/* enum fpt_item_kind */
	/*
	 * A block: 0 when fpt_run_rest() and fpt_run_next() are known to
	 * give nothing after it (no run's rest, no TNT bit at hand), so
	 * that a caller of the run API need not ask; non-zero when they
	 * may give blocks.  fpt_next() gives the same items either way.
	 */
	uint8_t		runs;
	struct fpt_block block;
	struct fpt_event event;
};

#define FPT_EOS	1	/* fpt_next(): the end of the trace */

struct fpt;

/*
 * What a caller (the indexer's segfast.c) made of a run's blocks, kept
 * beside the run (fpt_run_rest()), where it is at hand when the run is:
 * fpt zeroes it when it makes the run again and never reads it.
 */
#define FPT_MEMO_BYTES	32
struct fpt_memo {
	const struct fpt_block *rb;	/* of the rest from there; NULL */
	uint32_t	tag;
	uint32_t	aux[2];		/* the caller's own (segfast: successors) */
	uint8_t		n, len;		/* blocks, bytes */
	uint8_t		bytes[FPT_MEMO_BYTES];
};

/* A decoder over @cfg (copied; the trace and ctx are borrowed). */
int fpt_new(struct fpt **dp, const struct fpt_config *cfg);

/*
 * Go to the next PSB after the current position (the first: from the
 * start) and read its PSB+.  0, or FPT_EOS when there is none, or
 * -HWTR_E_DECODE when a bad packet follows the PSB+ (libipt's sync fails
 * there; calling again goes on at the next PSB).
 */
int fpt_sync_forward(struct fpt *d);

/*
 * The next item into @it: 0, FPT_EOS at the end of the trace,
 * -HWTR_E_UNSUPPORTED (the segment must go to libipt; fpt_unsupported()
 * says why), or -HWTR_E_* for misuse.  Decode errors are items.
 */
int fpt_next(struct fpt *d, struct fpt_item *it);

/*
 * The blocks fpt_next() gives next without reading trace or changing
 * anything else (the rest of a memoized run): how many, the first at
 * *@bp (valid until fpt_run_take() or another call); 0 when none.
 * *@memo: the caller's memo of the run (struct fpt_memo), which stays
 * while the run gives the same blocks from the same places.
 * fpt_run_take() takes the first @n of them, as @n fpt_next() calls
 * would.  For a caller that wants a block at a time without the checks
 * each fpt_next() item needs: the position, the time, the image, the
 * events stay as they are over these blocks.
 */
size_t fpt_run_rest(struct fpt *d, const struct fpt_block **bp,
    struct fpt_memo **memo);
void fpt_run_take(struct fpt *d, size_t n);
/*
 * With no rest left: the next memoized run when fpt_next() would give
 * its first block without reading trace (from the TNT bits at hand), so
 * that the position, the time and the events stay as they are.  Its
 * first @max (> 0) blocks or fewer taken, as as many fpt_next() calls
 * would: how many, at *@bp, its memo in *@memo, the others left to
 * fpt_run_rest(); 0, nothing changed, when fpt_next() would do more.
 */
size_t fpt_run_next(struct fpt *d, size_t max, const struct fpt_block **bp,
    struct fpt_memo **memo);
/*
 * With no run's rest and no TNT bit at hand (a block item whose runs
 * field is 0): the blocks fpt_next() gives next while each ends at a
 * conditional branch whose TNT-8 of one bit comes next, or at an
 * indirect transfer whose TIP with a 16-bit update comes next (a random
 * walk's: ixgen's), at most @max into @b, as as many fpt_next() calls
 * would give them; how many, 0 (nothing changed) when the next block is
 * not such a one.  fpt reads only those packets: no event comes, the
 * image stays, and so does the time (fpt_time_at() gives the same at
 * every offset from the start of the walk to its end, fpt_time() too),
 * so that a caller need check them once; only the position moves.
 */
size_t fpt_walk(struct fpt *d, struct fpt_block *b, size_t max);

/*
 * The trace offset of the current position; of the last sync in *@off,
 * or -HWTR_E_NOENT when fpt never synced (libipt's -pte_nosync).
 */
uint64_t fpt_offset(const struct fpt *d);
int fpt_sync_offset(const struct fpt *d, uint64_t *off);

/*
 * How many MNT packets fpt has passed over.  Each is an FPT_EV_MNT
 * event too, as libipt's ptev_mnt; a caller that does not record them as
 * libipt's path does hands such a trace to libipt.
 */
uint64_t fpt_mnt_count(const struct fpt *d);

/*
 * The time as libipt's pt_blk_time() gives it: its estimate from the
 * TSC, TMA, MTC, CYC and CBR packets (fpt_time.c) up to the last packet
 * a query decoded, not those its read-ahead passed since.  0, or -1
 * before any.  fpt_time_at(): the same had the decoder decoded up to
 * offset @off, from the last timing packets read ahead on; *@ahead
 * (unless NULL) says whether @off is before the packet that read-ahead
 * stopped at, the time then the one before those packets.
 */
int fpt_time(const struct fpt *d, uint64_t *tsc);
int fpt_time_at(const struct fpt *d, uint64_t off, uint64_t *tsc,
    int *ahead);

/*
 * The code the callbacks give has changed (the caller's image did):
 * forget the spans and the code bytes kept from them, and take back the
 * blocks of a memoized run not given yet, so that the next block starts
 * in the new image.  The block cache stays, keyed by image.
 */
void fpt_code_changed(struct fpt *d);
/*
 * fpt_code_changed() where a section is mapped over part of another:
 * libipt maps what is left of that one as a section of its own, whose
 * block cache starts empty; fpt forgets its cached blocks too.
 */
void fpt_code_cut(struct fpt *d);

/* Why the last -HWTR_E_UNSUPPORTED: a static string. */
const char *fpt_unsupported(const struct fpt *d);

/*
 * Make @insn, which hwtr_x86_decode() decoded from @p (@n bytes, @mode
 * 16, 32 or 64), what libipt's length decoder says of it: VMCALL,
 * VMLAUNCH, VMRESUME and UIRET far transfers; XBEGIN, XABORT, BOUND and
 * anything VEX or EVEX encoded plain instructions.
 */
void fpt_x86_libipt(const uint8_t *p, size_t n, int mode,
    struct hwtr_x86_insn *insn);

void fpt_free(struct fpt *d);

/*
 * The block cache (fpt_cache.c): per (isid, ip, mode), how many
 * instructions run from @ip without trace and where that stops (@dip, the
 * decision point), as libipt's block cache keeps it (the same limits: 255
 * instructions and a 16-bit displacement per entry, longer runs chained
 * through FPT_Q_AGAIN entries), so that the blocks come out the same; and,
 * beyond libipt's, what the decision point's instruction is, so that it is
 * never decoded again.
 */
enum fpt_q {
	FPT_Q_AGAIN = 1,	/* go on at @dip */
	FPT_Q_COND,		/* a conditional branch at @dip */
	FPT_Q_DECODE,		/* a direct call or jump at @dip, or leaving
				   the image: block ends unless cached */
	FPT_Q_IND_CALL,
	FPT_Q_RETURN,
	FPT_Q_INDIRECT		/* an indirect jump or a far transfer */
};

/*
 * 32 bytes, the hot fields first, so that an entry is one half of a cache
 * line: the key is @ip and @tag, one compare each.
 */
struct fpt_cache_entry {
	uint64_t	ip;		/* key */
	uint64_t	tag;		/* key: fpt_cache_tag(); 0: empty */
	uint64_t	dtarget;	/* @dip's direct target */
	int16_t		ddisp;		/* @dip - @ip: the decision point */
	uint8_t		ninsn;		/* from @ip, with @dip's but for AGAIN */
	uint8_t		q;		/* enum fpt_q */
	/* The instruction at @dip (not for FPT_Q_AGAIN). */
	uint8_t		dkind;		/* enum hwtr_x86_kind */
	uint8_t		dlen;
	uint8_t		dnext_in;	/* DECODE: its successor is in the isid */
	uint8_t		dend;		/* IND_CALL, RETURN, INDIRECT: the
					   block's end (enum fpt_end);
					   DECODE: 1 to go on at @dtarget
					   with nothing to push */
};

/*
 * An entry's key beside its address and its generation: the isid in the
 * low 32 bits, the mode (16, 32, 64) above, the generation's low 24 bits
 * on top (fpt_cache_flush() empties the table when they wrap).
 */
#define FPT_TAG_KEY	0xffffffffffull		/* isid and mode */
static inline uint64_t
fpt_cache_tag(int isid, uint8_t mode, uint32_t gen)
{
	return ((uint64_t)(uint32_t)isid | (uint64_t)mode << 32 |
	    (uint64_t)(gen & 0xffffff) << 40);
}

/* The decision point of @e. */
static inline uint64_t
fpt_cache_dip(const struct fpt_cache_entry *e)
{
	return (e->ip + (uint64_t)(int64_t)e->ddisp);
}

struct fpt_cache;

/* An empty cache of 2^@bits slots to start with. */
int fpt_cache_new(struct fpt_cache **cp, unsigned bits);
/* The entry for the key, or NULL; valid until the next insert. */
const struct fpt_cache_entry *fpt_cache_lookup(const struct fpt_cache *c,
    uint64_t ip, int isid, uint8_t mode);
/*
 * Insert @e (copied), replacing an entry of the same key; lookups'
 * pointers are invalid after it.  0, -HWTR_E_NOMEM or -HWTR_E_LIMIT.
 */
int fpt_cache_insert(struct fpt_cache *c, const struct fpt_cache_entry *e);
/* Forget every entry (they stay in the table as garbage until it grows). */
void fpt_cache_flush(struct fpt_cache *c);
void fpt_cache_free(struct fpt_cache *c);

#endif /* !HWTR_FPT_H */
