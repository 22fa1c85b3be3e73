/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private interfaces of the indexer (indexer/ only).
 *
 * The indexer runs as a pipeline, in layers (ix_run.h lists the files):
 * the driver (ix.c) opens the archive; ix_image.c extracts images to a
 * temporary directory and builds the mapping timeline from sideband; the
 * stream view (format/hwtr_stream.h) cuts every stream at PSBs into
 * segments; workers (ix_pipeline.c) decode segments with the decoder of
 * their format (segdec.h: decode.c, libipt's block decoder; cs_segment.c
 * over cs_decode.c for CoreSight; both write through segout.h) into
 * self-contained results with segment-local block ids, reading the
 * stream's chunks they need and nothing else; one writer replays the
 * results in stream order (stitch.c), giving blocks their global ids and
 * carrying call stacks and positions across segments, and writes rows
 * into SQLite (ix_write.c) while later segments decode.  A bounded
 * window of segments is in flight, so memory does not grow with the
 * trace.  The database depends only on the archive, never on the number
 * of jobs.
 */

#ifndef HWTR_IX_H
#define HWTR_IX_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "hwtr_x86.h"

/* A 64-bit mix (MurmurHash3's finalizer) for the indexer's hash tables. */
static inline uint64_t
ix_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (x);
}

/* Instruction classes (blocks.last_class). */
enum hwtr_ic {
	HWTR_IC_OTHER = 0,
	HWTR_IC_COND,
	HWTR_IC_JUMP,
	HWTR_IC_JUMP_IND,
	HWTR_IC_CALL,
	HWTR_IC_CALL_IND,
	HWTR_IC_RET,
	HWTR_IC_FAR_CALL,
	HWTR_IC_FAR_RET,
	HWTR_IC_FAR_JUMP,
	HWTR_IC_UNKNOWN
};

/* The class (enum hwtr_ic) of an instruction the x86 helper decoded. */
static inline int
hwtr_ic_of_x86(const struct hwtr_x86_insn *x)
{
	switch (x->kind) {
	case HWTR_X86_JCC:
		return (HWTR_IC_COND);
	case HWTR_X86_JMP:
		return (HWTR_IC_JUMP);
	case HWTR_X86_JMP_IND:
		return (HWTR_IC_JUMP_IND);
	case HWTR_X86_CALL:
		return (HWTR_IC_CALL);
	case HWTR_X86_CALL_IND:
		return (HWTR_IC_CALL_IND);
	case HWTR_X86_RET:
		return (HWTR_IC_RET);
	case HWTR_X86_SYSCALL:
	case HWTR_X86_FAR:
		return (x->far == HWTR_X86_FAR_RET ? HWTR_IC_FAR_RET :
		    x->far == HWTR_X86_FAR_JUMP ? HWTR_IC_FAR_JUMP :
		    HWTR_IC_FAR_CALL);
	default:
		return (HWTR_IC_OTHER);
	}
}

/* A growable byte buffer. */
struct ix_buf {
	uint8_t		*p;
	size_t		len, cap;
};

int ix_buf_put(struct ix_buf *b, const void *p, size_t n);
int ix_buf_varint(struct ix_buf *b, uint64_t v);

/* A mapping of an image into an address space, over time. */
struct ix_map {
	int64_t		id;		/* mappings.id */
	int32_t		pid;		/* -1: global */
	int		image;		/* index into the archive's images, -1 */
	const char	*path;
	uint64_t	start, end, pgoff;
	uint32_t	prot;
	int		has_from, has_to;
	uint64_t	from_tsc, to_tsc;
	int		isid;		/* section in the iscache, 0: none */
	int64_t		bias;		/* run-time minus link-time address */
};

/*
 * CPU mode: from @start_tsc on (always, without it) process @pid owns
 * the stream's CPU (-1: not known).
 */
struct ix_owner {
	int		has_start;
	uint64_t	start_tsc;
	int32_t		pid;
};

/* Event kinds (events.kind). */
struct ix_event {
	int64_t		seq, insn;
	const char	*kind;		/* static string */
	int		has_offset, has_ip, has_tsc;
	uint64_t	offset, ip, tsc;
	char		*detail;	/* malloc'd or NULL */
};

/* A static block as a decoding job saw it (stream-local id = index). */
struct ix_sblock {
	uint64_t	ip, end_ip;
	int		isid;
	uint16_t	ninsn;
	uint8_t		mode;		/* 16, 32, 64 */
	uint8_t		cls;		/* enum hwtr_ic */
	uint32_t	size;		/* bytes, 0 when unknown */
	uint64_t	count;
	uint8_t		*lens;		/* ninsn bytes or NULL */
	uint8_t		*code;		/* size bytes or NULL */
	/* decode.c: the last branch out of it (successor id + 1, index). */
	uint32_t	last_to, last_br;
	/*
	 * Global blocks only, set by the sink's block callback: IX_BF_*
	 * and the function it lies in (0: unknown), which the stitcher
	 * uses to follow PLT stubs and non-local exits.
	 */
	uint8_t		bflags;
	uint32_t	fkey;
};

/* ix_sblock.bflags */
#define IX_BF_PLT	0x01	/* in a PLT stub (.plt, .plt.sec, .plt.got) */
#define IX_BF_PLT0	0x02	/* in .plt's header: jumps into ld.so's lazy
				   binding resolver */
#define IX_BF_RESOLVER	0x04	/* in _dl_runtime_resolve*, by its name */
#define IX_BF_RESUME	0x08	/* in _Unwind_Resume: never lands in its
				   caller */
#define IX_BF_FSTART	0x10	/* starts at a function's first byte */
#define IX_BF_ENTRY	0x20	/* at its ELF file's entry point: where a
				   process starts after execve */
#define IX_BF_COLD	0x40	/* in a function's cold part (gcc's
				   NAME.cold, NAME.cold.N) */

struct ix_chunk {
	int64_t		seq, insn;
	uint32_t	nblocks;
	int64_t		ninsns;
	int		has_tsc;
	uint64_t	tsc;
	struct ix_buf	data;
};

struct ix_ts {
	int64_t		seq, insn;
	uint64_t	tsc;
};

/*
 * A cycle count (the cycles table): what OpenCSD reported with an element
 * before block @seq ran (a range's own count: that range's block).
 */
struct ix_cycles {
	int64_t		seq, insn;
	uint64_t	count;
	uint8_t		elem;		/* enum ix_cc_elem */
	uint8_t		cumulative;	/* part of the running count */
};

struct ix_branch {
	uint32_t	from, to;	/* local block ids */
	uint64_t	from_ip, to_ip;
	uint8_t		kind;		/* index into ix_branch_kinds */
	uint64_t	count;
};

struct ix_call {
	int64_t		parent;		/* index in the job's calls, -1 */
	int32_t		depth;
	uint32_t	entry_block;	/* local block id */
	uint64_t	func_ip;
	int		has_call_ip;
	uint64_t	call_ip;
	uint8_t		entry_kind, exit_kind;
	int64_t		entry_seq, exit_seq, entry_insn, exit_insn;
	int		has_entry_tsc, has_exit_tsc;
	uint64_t	entry_tsc, exit_tsc;
	int64_t		self_insns;
};

extern const char *const ix_branch_kinds[];
extern const char *const ix_call_entry_kinds[];
extern const char *const ix_call_exit_kinds[];
extern const char *const ix_class_names[];

/*
 * A segment's input and output (struct ix_seg_in, struct ix_seg_out), the
 * operations (IX_OP_*) and event kinds: segout.h, under every segment
 * decoder and read by the pipeline and the stitcher.
 */
struct ix_seg_out;

/*
 * The stitcher (stitch.c): replays segments in stream order into the
 * global static blocks (ids in order of first execution, streams in
 * order: the same for any -j and any segment size) and the rows of the
 * dynamic tables, which it hands to the sink as soon as they are final.
 */
struct ix_sink {
	void	*arg;
	/* A new global block; may set its bflags and fkey. */
	int	(*block)(void *, int64_t gid);
	/*
	 * Block @gid, which no function covers, is called: name the
	 * function starting there (set its fkey); may be NULL.
	 */
	int	(*func_start)(void *, int64_t gid);
	int	(*chunk)(void *, const struct ix_chunk *);
	int	(*ts)(void *, const struct ix_ts *);
	int	(*call)(void *, int64_t idx, const struct ix_call *);
	int	(*event)(void *, const struct ix_event *);
	int	(*cycles)(void *, const struct ix_cycles *);
	/*
	 * The stream's time became @tsc before block @seq, instruction
	 * @insn (CPU mode: cpusplit.c attributes positions); may be NULL.
	 */
	void	(*time)(void *, int64_t seq, int64_t insn, uint64_t tsc);
};

struct ix_open_call {
	int64_t		idx;		/* stream-local call index */
	uint64_t	ret;		/* expected return address */
	int64_t		call_blk;	/* global id of the calling block, -1 */
	uint8_t		tramp;		/* stitch.c: where in a PLT stub */
	int64_t		child_insns;	/* callees' spans, for self_insns */
	struct ix_call	c;
};

struct ix_stitch {
	struct ix_sink	sink;
	int		merge;		/* fall-through blocks become one */
	/* Global static blocks; count: over all streams. */
	struct ix_sblock *g;
	size_t		ng, cg;
	uint32_t	*gtab;
	size_t		gcap;
	/*
	 * Per global block, for the current stream: what the per-block
	 * path reads (stitch.c: its count, its two latest successors and
	 * their branches), and its count once the stream ends (scount).
	 */
	struct ix_hot	*hot;
	uint64_t	*scount;
	size_t		cs;
	/* The current stream: blocks in order of first execution there. */
	int64_t		*touched;
	size_t		ntouched, ctouched;
	struct ix_branch *branches;
	size_t		nbranches, cbranches;
	uint32_t	*btab;
	size_t		bcap;
	int64_t		seq, insn;
	int		have_prev, async;
	int64_t		prev;
	struct ix_chunk	chunk;		/* being filled */
	int		have_chunk;
	int64_t		chunk_prev;
	int		have_tsc;
	uint64_t	tsc;
	int64_t		last_ts_seq;
	struct ix_ts	pend_ts;	/* the last timestamp row, not written */
	int		have_pend_ts;
	struct ix_ts	reading;	/* the last clock reading in no row */
	int		have_reading;
	int64_t		nts;
	struct ix_open_call *stack;
	size_t		nstack, cstack;
	int64_t		ncalls, max_depth;
	int64_t		exec_blocks, exec_insns, errors, gaps;
	uint64_t	undecoded;
	int		has_first, has_last;
	uint64_t	first_tsc, last_tsc;
	uint64_t	exec_bytes;
	/*
	 * Segment-local to global ids of the segment being replayed (-1:
	 * not known yet; stitch.c says how a block that may be continued
	 * is marked).
	 */
	int64_t		*lmap;
	size_t		clmap;
	uint32_t	*ftab;		/* the same, by an id's varint bytes */
	/*
	 * Steps of eight bytes of operations (stitch.c, struct ix_soct), in
	 * a table of their own, made again in each generation (from 1);
	 * those whose count is not 0 listed.  octs_off: none (tests
	 * compare).
	 */
	struct ix_soct	*octs;
	uint32_t	*oct_from;	/* each oct's blocks counted from */
	uint64_t	oct_gen;
	uint16_t	*oct_dirty;
	size_t		oct_ndirty;
	int		octs_off;
	/*
	 * The last block, not yet counted: the next one may continue it
	 * (merge_runs() in stitch.c), and the times learnt after it.
	 */
	int		have_pend;
	const struct ix_sblock *pend;	/* a segment's block, or &pend_own */
	int64_t		pend_lid;	/* its segment-local id, -1: own */
	struct ix_sblock pend_own;	/* blocks merged (or kept) here */
	size_t		pend_lcap, pend_ccap;
	int		pend_nolens;	/* pend_own's layout is unknown */
	int		pend_nocode;	/* pend_own's code is not all known */
	int		pend_cont;	/* it may be continued (set_cont()) */
	/* Where tracing was disabled (libipt's "resumed"). */
	int		have_dis;
	int		resumed_elsewhere;	/* enabled, not there */
	uint64_t	dis_ip;
	struct {
		uint8_t		op;
		uint64_t	tsc;
	}		*ptime;
	size_t		nptime, cptime;
};

void ix_stitch_init(struct ix_stitch *st, const struct ix_sink *sink);
void ix_stitch_free(struct ix_stitch *st);
void ix_stitch_begin(struct ix_stitch *st);
int ix_stitch_segment(struct ix_stitch *st, struct ix_seg_out *seg);
int ix_stitch_end(struct ix_stitch *st);
/*
 * Call @idx of the current stream if it is still open, else NULL;
 * *@finalp says whether its entry block and func_ip are final (not a
 * frame in a PLT stub, which becomes the function the stub leads to).
 */
const struct ix_call *ix_stitch_open_call(const struct ix_stitch *st,
    int64_t idx, int *finalp);

/* Grow *@p to hold at least @need elements of @elem bytes (doubling). */
int ix_grow(void **p, size_t *cap, size_t need, size_t elem);

/* Symbols and lines of one image (elfsym.c). */
struct ix_sym {
	uint64_t	addr, size;
	char		*name;		/* as in the symbol table */
	char		*dname;		/* demangled (C++, Rust), or NULL */
	const char	*kind, *bind, *origin;
	int64_t		id;		/* symbols.id, set by the writer */
	int		code;		/* names code: a function, stub or label */
	uint64_t	sec_end;	/* end of its section, link-time */
	uint64_t	reach;		/* size 0: names [addr, reach) */
};

struct ix_line {
	uint64_t	addr;
	uint64_t	end;		/* exclusive: next row or end of sequence */
	int64_t		file;		/* index into ix_elf.files */
	int32_t		line, col;
	int		is_stmt;
};

struct ix_inl;

struct ix_elf {
	int		elf;		/* parsed as ELF */
	struct ix_sym	*syms;		/* sorted by addr */
	size_t		nsyms;
	struct ix_line	*lines;		/* sorted by addr */
	size_t		nlines;
	char		**files;
	size_t		nfiles;
	/* .plt, .plt.sec, .plt.got: [lo, hi) link-time; .plt's header. */
	struct {
		uint64_t lo, hi;
	}		plts[4];
	size_t		nplts;
	int		has_plt0;
	uint64_t	plt0, plt0_end;
	uint64_t	entry;		/* e_entry, 0: none */
	/* PT_LOAD segments, for link-time addresses. */
	struct ix_load {
		uint64_t	off, filesz, vaddr;
		uint32_t	flags;		/* PF_* */
	}		*loads;
	size_t		nloads;
	/* Inlined subroutines (elfinline.h), and the files they name. */
	struct ix_inl	*inls;
	size_t		ninls;
	char		**ifiles;
	size_t		nifiles;
	size_t		inl_nodwo;	/* split units without their .dwo */
	/*
	 * Set by the caller before ix_elf_load() and kept by it: look for
	 * nothing outside the archive (hwtr_ix_opts.archive_only), so split
	 * units' .dwo files on this machine are not read.
	 */
	int		no_host;
};

/*
 * Symbols and lines of the ELF image @buf (borrowed for the call): its
 * .symtab and .dynsym, named PLT stubs, and functions recovered from
 * .eh_frame where no symbol covers them (named "@base+0xADDR").  @dbg,
 * when not NULL, is its separate debug file (hwtrace(5) debug/ members):
 * its .symtab is read too, and its DWARF lines are used when it has any.
 * 0; 1 when part of it cannot be read (a debug section that does not
 * decompress), @err saying what, the rest loaded; -1 with @err.
 */
int ix_elf_load(struct ix_elf *e, const void *buf, size_t len,
    const void *dbg, size_t dbglen, const char *base, char *err,
    size_t errlen);
/*
 * Only what ix_elf_map_bias() needs (elf, entry, loads): for the decoders,
 * before ix_elf_load() (after ix_elf_free()) loads the rest.  -1: out of
 * memory.
 */
int ix_elf_load_hdr(struct ix_elf *e, const void *buf, size_t len);
void ix_elf_free(struct ix_elf *e);
/*
 * @name demangled (Itanium C++ ABI, Rust) with its parameters, an "@plt"
 * suffix kept; NULL when it is not a mangled name (malloc'd).
 */
char *ix_demangle(const char *name);
/* The function symbol containing @addr, or NULL. */
const struct ix_sym *ix_elf_func(const struct ix_elf *e, uint64_t addr);
/* The line-table row for @addr, or NULL. */
const struct ix_line *ix_elf_line(const struct ix_elf *e, uint64_t addr);
/* In a PLT stub: 0 no, 1 a stub, 2 .plt's header (lazy binding). */
int ix_elf_plt(const struct ix_elf *e, uint64_t addr);
/*
 * The load bias (run-time minus link-time address) of a mapping at @start
 * of @len bytes of the file from @pgoff with protection @prot (PROT_*, 0
 * not known), from the segment it maps; -1 when it maps none.
 */
int ix_elf_map_bias(const struct ix_elf *e, uint64_t start, uint64_t len,
    uint64_t pgoff, uint32_t prot, int64_t *biasp);

/*
 * CoreSight (cs_decode.c): OpenCSD's generic elements, reduced to what the
 * indexer keeps.  Element kinds and ISAs:
 */
enum ix_cs_kind {
	IX_CS_RANGE = 1,	/* OCSD_GEN_TRC_ELEM_INSTR_RANGE */
	IX_CS_EXCEPTION,
	IX_CS_EXC_RET,
	IX_CS_NACC,		/* memory at @st not accessible */
	IX_CS_TIMESTAMP,
	IX_CS_CYCLES,
	IX_CS_TRACE_ON,
	IX_CS_NO_SYNC,
	IX_CS_EOT,
	IX_CS_MEMTRANS,		/* ETE transactional memory: @memtrans */
	IX_CS_MARKER,		/* ETE timestamp marker: @marker */
	IX_CS_OTHER
};
/* IX_CS_MEMTRANS: what the transaction did (OpenCSD's trace_memtrans_t). */
enum { IX_CS_TRANS_INIT, IX_CS_TRANS_START, IX_CS_TRANS_COMMIT,
	IX_CS_TRANS_FAIL };
enum { IX_CS_ISA_UNKNOWN = 0, IX_CS_T32 = 16, IX_CS_A32 = 32, IX_CS_A64 = 64 };

/*
 * The element a cycle count came with (cycles.element: ix_cc_elems[]).
 */
enum ix_cc_elem {
	IX_CC_RANGE = 0,	/* OCSD_GEN_TRC_ELEM_INSTR_RANGE */
	IX_CC_CYCLE_COUNT,	/* OCSD_GEN_TRC_ELEM_CYCLE_COUNT */
	IX_CC_TIMESTAMP,
	IX_CC_TRACE_ON,
	IX_CC_PE_CONTEXT,
	IX_CC_EXCEPTION,
	IX_CC_ADDR_UNKNOWN,
	IX_CC_OTHER,
	IX_NCC_ELEMS
};
extern const char *const ix_cc_elems[IX_NCC_ELEMS];

struct ix_cs_elem {
	uint64_t	index;		/* trace byte offset of its packet */
	uint8_t		trace_id;
	int		kind;		/* enum ix_cs_kind */
	int		isa;		/* IX_CS_A64, _A32, _T32 */
	uint64_t	st, en;		/* range [st, en); NACC address */
	uint32_t	ninsn;
	int		last_class;	/* enum hwtr_ic of the last insn */
	int		last_exec, last_sz;
	uint32_t	excnum;
	int		has_ts, has_cc;
	uint64_t	ts;
	uint32_t	cc;
	int		cc_elem;	/* enum ix_cc_elem, when has_cc */
	int		memtrans;	/* IX_CS_TRANS_*, for IX_CS_MEMTRANS */
	uint32_t	marker;		/* IX_CS_MARKER's value */
};

/* A memory image OpenCSD may read: @len bytes at @addr. */
struct ix_cs_mem {
	uint64_t	addr;
	const uint8_t	*p;
	size_t		len;
};

/*
 * Decode the CoreSight buffer @trace of stream @sd (HWTR_TF_CORESIGHT)
 * with OpenCSD, calling @cb for every generic element in order; a
 * negative return from @cb stops decoding and is returned.  Returns the
 * number of sources decoded (STM sources are not), or -HWTR_E_* with the
 * reason in @err.
 */
int ix_cs_decode(const struct hwtr_stream_desc *sd, const uint8_t *trace,
    size_t len, const struct ix_cs_mem *mem, size_t nmem,
    int (*cb)(void *, const struct ix_cs_elem *), void *arg, char *err,
    size_t errlen);

#endif /* !HWTR_IX_H */
