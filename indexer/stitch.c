/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher: segments' results replayed in stream order.
 *
 * A worker knows nothing of what came before its segment, so everything
 * that carries across a segment boundary lives here: the position (n-th
 * block and instruction), the previous block (the branch into the first
 * block of a segment), the call stack (a call made in one segment returns
 * in a later one), the time, the chunk and timestamp rows being filled.
 * Replaying the operations of every segment of a stream through this one
 * state machine gives the same rows as decoding the stream in one piece.
 *
 * libipt ends a block where its block cache or an event bound to an IP
 * says, not only at branches: at a PSB+'s FUP (which a segment's decoder
 * sees at its start and the decoder before it may or may not), and where
 * a cache filled by earlier segments stopped.  So that the database does
 * not depend on where segments start, a block whose last instruction is
 * not a branch and the block at its fall-through address are one block
 * when nothing (no event, gap or error) comes between them: the stitcher
 * holds the last block back until it knows the next one.
 *
 * Global block ids are given in order of first execution, streams in
 * order, so they depend on the archive only.  Rows are handed to the sink
 * as soon as they are final: a chunk when full, a timestamp row when the
 * next one is known, a call when it returns, an event at once.  Branch
 * and block counts are per stream (bounded by the program, not by the
 * trace) and read by the caller after ix_stitch_end().
 */

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "segout.h"
#include "stitch_int.h"

#define IX_CHUNK_BLOCKS	HWTR_DB_CHUNK_BLOCKS	/* blocks per exec_chunks row */
#define IX_RET_SEARCH	64	/* frames searched for a return's target */
#define IX_VARINT_MAX	10	/* bytes of a 64-bit varint */
#define IX_LID_FAST	8192	/* segment-local ids of at most two bytes */
#define IX_FTAB		0x10000	/* ix_stitch.ftab's slots (fast_set()) */
#define IX_FNONE	UINT32_MAX	/* an ftab slot of no known block */
#define IX_NOSUCC	UINT32_MAX	/* an ix_hot.to slot of no successor */

/*
 * The per-block path (add_run() and what it calls) is inlined where it
 * is used: a call per executed block was a tenth of the stitcher.
 */
#if defined(__GNUC__)
#define IX_HOT	inline __attribute__((always_inline))
#define IX_APART __attribute__((noinline))
#else
#define IX_HOT	inline
#define IX_APART
#endif

const char *const ix_branch_kinds[] = {
	"cond-taken", "cond-not-taken", "jump", "jump-indirect", "call",
	"call-indirect", "return", "syscall", "sysret", "async", "fallthrough"
};
enum { BK_COND_T, BK_COND_N, BK_JUMP, BK_JUMP_IND, BK_CALL, BK_CALL_IND,
	BK_RET, BK_SYSCALL, BK_SYSRET, BK_ASYNC, BK_FALL };

const char *const ix_call_entry_kinds[] = { "call", "start", "return",
	"signal", "tail" };
const char *const ix_call_exit_kinds[] = { "return", "unwind", "end",
	"tail" };
enum { CE_CALL, CE_START, CE_RETURN, CE_SIGNAL, CE_TAIL };
enum { CX_RETURN, CX_UNWIND, CX_END, CX_TAIL };

/*
 * What the per-block path needs of a global block, in one place (two to a
 * cache line) rather than in the block and three arrays: its two latest
 * successors in the current stream (IX_NOSUCC: none) and how often each
 * was taken since it became one (n, not yet in its branch row:
 * slot_flush()), its length, what a branch out of it does (flow) and
 * which of those a branch into it makes work on the call stack (emask).
 * A block's count is not kept here: every run of it is followed by a
 * branch out of it, or by none (end_flow()), so the counts of its
 * branches make it, at the stream's end.
 */
struct ix_hot {
	uint32_t	to[2];
	uint64_t	n[2];
	uint16_t	ninsn;
	uint8_t		flow;
	uint8_t		emask;
	uint8_t		in_oct;		/* in a struct ix_soct's blocks */
};

/*
 * An oct: eight bytes of a segment's operations that run_fast() took step
 * by step once, from the same two blocks (@prev counted last, @cur held
 * back), taken again in one step.  The bytes are segment-local ids of
 * blocks whose global ids ftab holds, which do not change within a
 * segment, so the same blocks run: the same varints are written, the
 * same instructions added and the same branches taken, by the same
 * successor slots as long as those stay.  Its branches are counted in
 * @count and added to the slots when something may read or move them
 * (oct_flush()).  An oct holds in its generation (ix_stitch.oct_gen)
 * only: a new segment or stream, and a change to the successor slots or
 * the masks of a block it covers (in_oct), start another.  Eight bytes
 * are four to eight blocks: on gzip's capture 86% of the blocks
 * run_fast() counts are taken in octs, seven at a time.  An oct is a
 * cache line; the blocks it counts from are apart (ix_stitch.oct_from).
 */
struct ix_soct {
	uint64_t	w;		/* the operations' bytes */
	uint64_t	count;		/* times taken, not in the slots yet */
	uint64_t	gen;		/* 0: none */
	uint32_t	prev, cur;	/* the key with @w */
	uint32_t	nprev, ncur;	/* prev and cur after them */
	uint16_t	ninsn;
	uint16_t	next;		/* the slot of the oct taken next */
	uint8_t		nblk;		/* blocks counted: branches */
	uint8_t		nxb;		/* execution order bytes */
	uint8_t		slots;		/* bit i: branch i's successor slot */
	uint8_t		dirty;		/* in ix_stitch.oct_dirty */
	uint8_t		xb[16];		/* execution order written */
};
_Static_assert(sizeof(struct ix_soct) == 64, "an oct a cache line");

/*
 * What a branch out of a block does beyond its count, by the block's
 * class (flow): a conditional branch or a direct jump works on the call
 * stack only into a function's entry (IX_BF_FSTART or IX_BF_PLT, which
 * func_start may set later: emask has both then), or for a jump, in a
 * frame inside a PLT stub; the rest always do (HF_STACK, in every
 * emask).  Blocks of other classes have none.
 */
enum { HF_COND = 1, HF_JUMP = 2, HF_STACK = 4, HF_NEW = 8 };

/*
 * HF_NEW is in every block's flow, and in its emask until it first runs
 * in the stream (touch()): run_fast() then leaves a block's first run,
 * which touch() records, to the general path with the same test as a
 * branch that works on the call stack.
 */

static uint64_t
bhash(const struct ix_sblock *b)
{
	return (ix_hash64(b->ip ^ ((uint64_t)b->ninsn << 48) ^
	    ((uint64_t)(uint32_t)b->isid << 32) ^ b->mode));
}

#define IX_OCTS_LOG	12	/* ix_stitch.octs: 4096 slots, 384 KiB in all */
_Static_assert(IX_OCTS_LOG <= 16, "oct slots in a uint16_t");

/* The octs' table, or none (run_fast() then goes step by step). */
static void
oct_alloc(struct ix_stitch *st)
{
	size_t n = (size_t)1 << IX_OCTS_LOG;

	/* An oct a cache line. */
	st->octs = aligned_alloc(64, n * sizeof(*st->octs));
	st->oct_from = malloc(n * 8 * sizeof(*st->oct_from));
	st->oct_dirty = malloc(n * sizeof(*st->oct_dirty));
	if (st->octs == NULL || st->oct_from == NULL ||
	    st->oct_dirty == NULL) {
		free(st->octs);
		free(st->oct_from);
		free(st->oct_dirty);
		st->octs = NULL;
		st->oct_from = NULL;
		st->oct_dirty = NULL;
	} else
		memset(st->octs, 0, n * sizeof(*st->octs));
	st->oct_ndirty = 0;
}

/* Oct @o's count to its branches' successor slots. */
static void
oct_flush1(struct ix_stitch *st, struct ix_soct *o)
{
	const uint32_t *from = &st->oct_from[(size_t)(o - st->octs) * 8];
	unsigned i;

	if (o->count == 0)
		return;
	for (i = 0; i < o->nblk; i++)
		st->hot[from[i]].n[(o->slots >> i) & 1] += o->count;
	o->count = 0;
}

/*
 * Every oct's count to the successor slots: those with a count are
 * listed (oct_dirty), each once, so that this costs no more than the
 * steps that counted them.
 */
static void
oct_flush(struct ix_stitch *st)
{
	size_t i;

	for (i = 0; i < st->oct_ndirty; i++) {
		struct ix_soct *o = &st->octs[st->oct_dirty[i]];

		oct_flush1(st, o);
		o->dirty = 0;
	}
	st->oct_ndirty = 0;
}

/*
 * The octs made so far no longer hold, their counts flushed first (while
 * the slots they name are still theirs).
 */
static void
oct_bump(struct ix_stitch *st)
{
	oct_flush(st);
	st->oct_gen++;
}

void
ix_stitch_init(struct ix_stitch *st, const struct ix_sink *sink)
{
	memset(st, 0, sizeof(*st));
	st->sink = *sink;
	st->last_ts_seq = -1;
}

void
ix_stitch_free(struct ix_stitch *st)
{
	size_t i;

	for (i = 0; i < st->ng; i++) {
		free(st->g[i].lens);
		free(st->g[i].code);
	}
	free(st->g);
	free(st->gtab);
	free(st->hot);
	free(st->scount);
	free(st->touched);
	free(st->branches);
	free(st->btab);
	free(st->chunk.data.p);
	free(st->stack);
	free(st->lmap);
	free(st->ftab);
	free(st->octs);
	free(st->oct_from);
	free(st->oct_dirty);
	free(st->ptime);
	free(st->pend_own.lens);
	free(st->pend_own.code);
	memset(st, 0, sizeof(*st));
}

void
ix_stitch_begin(struct ix_stitch *st)
{
	size_t i;

	/* The octs' counts go to the slots emptied here. */
	oct_bump(st);
	for (i = 0; i < st->ntouched; i++) {
		size_t id = (size_t)st->touched[i];

		st->hot[id].emask |= HF_NEW;
		st->hot[id].to[0] = st->hot[id].to[1] = IX_NOSUCC;
		st->hot[id].n[0] = st->hot[id].n[1] = 0;
		st->scount[id] = 0;
	}
	st->ntouched = 0;
	st->nbranches = 0;
	if (st->btab != NULL)
		memset(st->btab, 0, st->bcap * sizeof(*st->btab));
	st->seq = st->insn = 0;
	st->have_prev = st->async = 0;
	st->resumed_elsewhere = 0;
	st->prev = 0;
	st->have_chunk = 0;
	st->chunk.data.len = 0;
	st->have_tsc = 0;
	st->tsc = 0;
	st->last_ts_seq = -1;
	st->have_pend_ts = 0;
	st->have_reading = 0;
	st->nts = 0;
	st->nstack = 0;
	st->ncalls = st->max_depth = 0;
	st->exec_blocks = st->exec_insns = st->errors = st->gaps = 0;
	st->undecoded = 0;
	st->has_first = st->has_last = 0;
	st->first_tsc = st->last_tsc = 0;
	st->have_pend = 0;
	st->pend_cont = 0;
	st->nptime = 0;
	st->have_dis = 0;
}

/*
 * The global blocks and the branches are found through open-addressed
 * tables of uint32_t slots holding index + 1 (0: free), kept at most half
 * full.  tab_grow() doubles table @*tabp (@*capp slots) and puts its @n
 * entries back, entry i at @hash(@st, i).
 */
static int
tab_grow(const struct ix_stitch *st, uint32_t **tabp, size_t *capp, size_t n,
    uint64_t (*hash)(const struct ix_stitch *, size_t))
{
	size_t cap = *capp ? *capp * 2 : 4096, i;
	uint32_t *t = calloc(cap, sizeof(*t));
	uint64_t h;

	if (t == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < n; i++) {
		h = hash(st, i);
		while (t[h & (cap - 1)] != 0)
			h++;
		t[h & (cap - 1)] = (uint32_t)i + 1;
	}
	free(*tabp);
	*tabp = t;
	*capp = cap;
	return (0);
}

static uint64_t
ghash(const struct ix_stitch *st, size_t i)
{
	return (bhash(&st->g[i]));
}

static uint64_t
brhash(const struct ix_stitch *st, size_t i)
{
	const struct ix_branch *br = &st->branches[i];

	return (ix_hash64(((uint64_t)br->from << 32) | br->to));
}

/* Block @id's facts in st->hot, after the sink set its flags. */
static void
hot_set(struct ix_stitch *st, size_t id)
{
	const struct ix_sblock *g = &st->g[id];
	struct ix_hot *h = &st->hot[id];

	if (h->in_oct)
		oct_bump(st);
	h->ninsn = g->ninsn;
	h->emask = (h->emask & HF_NEW) | HF_STACK |
	    ((g->bflags & (IX_BF_FSTART | IX_BF_PLT)) ? HF_COND | HF_JUMP : 0);
	switch (g->cls) {
	case HWTR_IC_COND:
		h->flow = HF_COND | HF_NEW;
		break;
	case HWTR_IC_JUMP:
		h->flow = HF_JUMP | HF_NEW;
		break;
	case HWTR_IC_JUMP_IND:
	case HWTR_IC_CALL:
	case HWTR_IC_CALL_IND:
	case HWTR_IC_RET:
		h->flow = HF_STACK | HF_NEW;
		break;
	default:
		h->flow = HF_NEW;
		break;
	}
}

/* The global id of a block; its bytes are copied when new. */
static int64_t
global_block(struct ix_stitch *st, const struct ix_sblock *b)
{
	struct ix_sblock *g;
	uint8_t *lens = NULL, *code = NULL;
	uint64_t h;
	int rc;

	if (st->ng * 2 >= st->gcap &&
	    tab_grow(st, &st->gtab, &st->gcap, st->ng, ghash) < 0)
		return (-HWTR_E_NOMEM);
	for (h = bhash(b);; h++) {
		uint32_t v = st->gtab[h & (st->gcap - 1)];

		if (v == 0)
			break;
		g = &st->g[v - 1];
		if (g->ip == b->ip && g->ninsn == b->ninsn &&
		    g->isid == b->isid && g->mode == b->mode)
			return ((int64_t)v - 1);
	}
	if (st->ng >= UINT32_MAX - 1)
		return (-HWTR_E_LIMIT);
	if (hwtr_grow((void **)&st->g, &st->cg, st->ng + 1, sizeof(*g)) < 0)
		return (-HWTR_E_NOMEM);
	if (st->ng + 1 > st->cs) {
		size_t n = st->cs ? st->cs * 2 : 4096, i;
		uint64_t *c = realloc(st->scount, n * sizeof(*c));
		struct ix_hot *t;

		if (c == NULL)
			return (-HWTR_E_NOMEM);
		st->scount = c;
		if ((t = realloc(st->hot, n * sizeof(*t))) == NULL)
			return (-HWTR_E_NOMEM);
		st->hot = t;
		memset(c + st->cs, 0, (n - st->cs) * sizeof(*c));
		memset(t + st->cs, 0, (n - st->cs) * sizeof(*t));
		for (i = st->cs; i < n; i++)
			t[i].to[0] = t[i].to[1] = IX_NOSUCC;
		st->cs = n;
	}
	g = &st->g[st->ng];
	*g = *b;
	g->count = 0;
	g->last_to = g->last_br = 0;
	/*
	 * Lengths and code are known apart: an A64 range of CoreSight has
	 * its lengths even where no memory dump holds all of its bytes.
	 */
	g->lens = g->code = NULL;
	if (b->lens != NULL) {
		if ((lens = malloc(b->ninsn ? b->ninsn : 1)) == NULL)
			return (-HWTR_E_NOMEM);
		memcpy(lens, b->lens, b->ninsn);
	}
	if (b->code != NULL) {
		if ((code = malloc(b->size ? b->size : 1)) == NULL) {
			free(lens);
			return (-HWTR_E_NOMEM);
		}
		memcpy(code, b->code, b->size);
	}
	g->lens = lens;
	g->code = code;
	st->gtab[h & (st->gcap - 1)] = (uint32_t)st->ng + 1;
	st->ng++;
	if (st->sink.block != NULL &&
	    (rc = st->sink.block(st->sink.arg, (int64_t)st->ng - 1)) < 0)
		return (rc);
	st->hot[st->ng - 1].emask = HF_NEW;
	hot_set(st, st->ng - 1);
	return ((int64_t)st->ng - 1);
}

/* The branch row from block @from to block @to, which exists. */
static struct ix_branch *
branch_of(const struct ix_stitch *st, uint32_t from, uint32_t to)
{
	struct ix_branch *br;
	uint64_t h;

	for (h = ix_hash64(((uint64_t)from << 32) | to);; h++) {
		uint32_t v = st->btab[h & (st->bcap - 1)];

		assert(v != 0 && v <= st->nbranches);
		br = &st->branches[v - 1];
		if (br->from == from && br->to == to)
			return (br);
	}
}

/* The count in successor slot @k of block @from goes to its branch row. */
static void
slot_flush(struct ix_stitch *st, uint32_t from, int k)
{
	struct ix_hot *h = &st->hot[from];

	if (h->to[k] != IX_NOSUCC && h->n[k] != 0)
		branch_of(st, from, h->to[k])->count += h->n[k];
	h->n[k] = 0;
}

/*
 * Remember @to as the latest successor of @from (its row counted this
 * branch); the older of the two remembered is forgotten.
 */
static void
note_succ(struct ix_stitch *st, uint32_t from, uint32_t to)
{
	struct ix_hot *h = &st->hot[from];

	if (h->in_oct)
		oct_bump(st);
	slot_flush(st, from, 1);
	h->to[1] = h->to[0];
	h->n[1] = h->n[0];
	h->to[0] = to;
	h->n[0] = 0;
}

static int
add_branch(struct ix_stitch *st, uint32_t from, uint32_t to, uint8_t kind)
{
	struct ix_branch *br;
	uint64_t h;

	if (st->nbranches * 2 >= st->bcap &&
	    tab_grow(st, &st->btab, &st->bcap, st->nbranches, brhash) < 0)
		return (-HWTR_E_NOMEM);
	h = ix_hash64(((uint64_t)from << 32) | to);
	for (;; h++) {
		uint32_t v = st->btab[h & (st->bcap - 1)];

		if (v == 0)
			break;
		br = &st->branches[v - 1];
		if (br->from == from && br->to == to) {
			br->count++;
			note_succ(st, from, to);
			return (0);
		}
	}
	if (hwtr_grow((void **)&st->branches, &st->cbranches,
	    st->nbranches + 1, sizeof(*br)) < 0)
		return (-HWTR_E_NOMEM);
	br = &st->branches[st->nbranches];
	br->from = from;
	br->to = to;
	br->from_ip = st->g[from].end_ip;
	br->to_ip = st->g[to].ip;
	br->kind = kind;
	br->count = 1;
	st->btab[h & (st->bcap - 1)] = (uint32_t)st->nbranches + 1;
	st->nbranches++;
	note_succ(st, from, to);
	return (0);
}

/*
 * Where a frame entered at a PLT stub is (ix_open_call.tramp): in the stub
 * (or the .plt entries a lazy stub goes through), or in ld.so's lazy
 * binding resolver, which ends in an indirect jump to the function.
 */
enum { IX_TR_NONE, IX_TR_STUB, IX_TR_RESOLVER };

static int
push_call(struct ix_stitch *st, int64_t entry, uint64_t ip, int kind,
    int has_call_ip, uint64_t call_ip, uint64_t ret)
{
	struct ix_open_call *oc;
	struct ix_call *c;

	assert(entry >= 0 && (size_t)entry < st->ng);
	assert(kind >= CE_CALL && kind <= CE_TAIL);
	/* Grown only when full: a call into hwtr_grow() per call was 18. */
	if (st->nstack == st->cstack && hwtr_grow((void **)&st->stack,
	    &st->cstack, st->nstack + 1, sizeof(*st->stack)) < 0)
		return (-HWTR_E_NOMEM);
	assert(st->nstack < st->cstack);
	oc = &st->stack[st->nstack];
	/*
	 * Every field set (no memset of the frame first, which cost 28
	 * instructions a call): those of its end are pop_call()'s.
	 */
	oc->child_insns = 0;
	oc->idx = st->ncalls++;
	oc->ret = ret;
	oc->call_blk = kind == CE_CALL || kind == CE_SIGNAL ? st->prev : -1;
	/* A call target no symbol names starts a function all the same. */
	if (kind == CE_CALL && st->g[entry].fkey == 0 &&
	    st->sink.func_start != NULL) {
		int rc = st->sink.func_start(st->sink.arg, entry);

		if (rc < 0)
			return (rc);
		hot_set(st, (size_t)entry);
	}
	oc->tramp = (st->g[entry].bflags & IX_BF_PLT) ? IX_TR_STUB : IX_TR_NONE;
	c = &oc->c;
	c->parent = st->nstack ? st->stack[st->nstack - 1].idx : -1;
	c->depth = (int32_t)st->nstack;
	c->entry_block = (uint32_t)entry;
	c->func_ip = ip;
	c->has_call_ip = has_call_ip;
	c->call_ip = call_ip;
	c->entry_kind = (uint8_t)kind;
	c->exit_kind = CX_END;
	c->entry_seq = st->seq;
	c->entry_insn = st->insn;
	c->has_entry_tsc = st->have_tsc;
	c->entry_tsc = st->tsc;
	c->exit_seq = c->exit_insn = c->self_insns = 0;
	c->has_exit_tsc = 0;
	c->exit_tsc = 0;
	if ((int64_t)st->nstack > st->max_depth)
		st->max_depth = (int64_t)st->nstack;
	st->nstack++;
	return (0);
}

/*
 * Close the innermost frame; the call's row is final.  Pops match pushes:
 * the frame closed is at the depth it was opened at, under the frame that
 * was on top then, and its span holds its callees' spans.
 */
static int
pop_call(struct ix_stitch *st, int kind)
{
	struct ix_open_call *oc;
	int64_t total;

	assert(st->nstack > 0 && st->nstack <= st->cstack);
	assert(kind >= CX_RETURN && kind <= CX_TAIL);
	oc = &st->stack[--st->nstack];
	assert(oc->c.depth == (int32_t)st->nstack);
	assert(oc->c.parent ==
	    (st->nstack > 0 ? st->stack[st->nstack - 1].idx : -1));
	assert(oc->idx < st->ncalls && (int64_t)st->nstack <= st->max_depth);
	total = st->insn - oc->c.entry_insn;
	assert(st->seq >= oc->c.entry_seq);
	assert(total >= 0 && oc->child_insns >= 0 &&
	    oc->child_insns <= total);

	oc->c.exit_kind = (uint8_t)kind;
	oc->c.exit_seq = st->seq;
	oc->c.exit_insn = st->insn;
	oc->c.has_exit_tsc = st->have_tsc;
	oc->c.exit_tsc = st->tsc;
	/*
	 * Its own instructions: those run while it was on the stack less
	 * its callees'.  A frame is popped before the one below it, so the
	 * callees' spans nest inside this one (no per-block addition).
	 */
	oc->c.self_insns = total - oc->child_insns;
	if (st->nstack > 0)
		st->stack[st->nstack - 1].child_insns += total;
	if (st->sink.call != NULL)
		return (st->sink.call(st->sink.arg, oc->idx, &oc->c));
	return (0);
}

const struct ix_call *
ix_stitch_open_call(const struct ix_stitch *st, int64_t idx, int *finalp)
{
	size_t lo = 0, hi = st->nstack, m;

	*finalp = 0;
	/* The stack's calls were pushed in turn: indexes ascend. */
	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (st->stack[m].idx < idx)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == st->nstack || st->stack[lo].idx != idx)
		return (NULL);
	*finalp = st->stack[lo].tramp == IX_TR_NONE;
	return (&st->stack[lo].c);
}

/* The kind of the branch from block @a into block @b. */
static uint8_t
branch_kind(const struct ix_stitch *st, const struct ix_sblock *a,
    const struct ix_sblock *b)
{
	uint64_t fall = a->size ? a->ip + a->size : 0;

	if (st->async)
		return (BK_ASYNC);
	switch (a->cls) {
	case HWTR_IC_COND:
		return (b->ip == fall ? BK_COND_N : BK_COND_T);
	case HWTR_IC_JUMP:
		return (BK_JUMP);
	case HWTR_IC_JUMP_IND:
		return (BK_JUMP_IND);
	case HWTR_IC_CALL:
		return (BK_CALL);
	case HWTR_IC_CALL_IND:
		return (BK_CALL_IND);
	case HWTR_IC_RET:
		return (BK_RET);
	case HWTR_IC_FAR_CALL:
		return (BK_SYSCALL);
	case HWTR_IC_FAR_RET:
	case HWTR_IC_FAR_JUMP:
		return (BK_SYSRET);
	default:
		return (b->ip == fall ? BK_FALL : BK_ASYNC);
	}
}

/* What a branch out of a block of each class does to the call stack. */
enum { FL_NONE, FL_CALL, FL_RET };
static const uint8_t class_flow[HWTR_IC_UNKNOWN + 1] = {
	[HWTR_IC_CALL] = FL_CALL,
	[HWTR_IC_CALL_IND] = FL_CALL,
	[HWTR_IC_RET] = FL_RET
};

/*
 * A non-local exit: control lands at @b, which is no return address on
 * the stack, by a return (the unwinder's landing pads) or an indirect jump
 * (longjmp, siglongjmp).  The trace has no stack pointer, so the frame it
 * lands in is found by function: the nearest frame whose call was made
 * from the function @b lies in (its calling block's fkey) is left, with
 * every frame above it.  A call of _Unwind_Resume never lands back in its
 * caller, which only matters with recursion (the same function twice on
 * the stack).  Returns the index of the frame to leave, or the stack's
 * depth when none matches.
 */
static size_t
landing_frame(const struct ix_stitch *st, const struct ix_sblock *b)
{
	size_t k;

	if (b->fkey == 0)
		return (st->nstack);
	for (k = st->nstack; k > 1 && st->nstack - k < IX_RET_SEARCH; k--) {
		const struct ix_open_call *oc = &st->stack[k - 1];

		if (oc->call_blk < 0 || st->g[oc->call_blk].fkey != b->fkey)
			continue;
		if (st->g[oc->c.entry_block].bflags & IX_BF_RESUME)
			continue;
		return (k - 1);
	}
	return (st->nstack);
}

/* Leave frames @k and above: an unwind. */
static int
unwind_to(struct ix_stitch *st, size_t k)
{
	int rc;

	assert(k < st->nstack);
	while (st->nstack > k)
		if ((rc = pop_call(st, CX_UNWIND)) < 0)
			return (rc);
	return (0);
}

/* A return into block @id: close the frame it returns from. */
static int
do_return(struct ix_stitch *st, const struct ix_sblock *b, uint32_t id)
{
	size_t k;
	int rc;

	for (k = st->nstack; k > 1 && st->nstack - k < IX_RET_SEARCH; k--)
		if (st->stack[k - 1].ret == b->ip && b->ip != 0)
			break;
	if (k > 1 && st->stack[k - 1].ret == b->ip) {
		while (st->nstack > k)
			if ((rc = pop_call(st, CX_UNWIND)) < 0)
				return (rc);
		return (pop_call(st, CX_RETURN));
	}
	if ((k = landing_frame(st, b)) < st->nstack)
		return (unwind_to(st, k));
	if (st->nstack > 1)
		return (pop_call(st, CX_RETURN));
	/* Returning out of the outermost traced function: a new root. */
	if (st->nstack == 1 && (rc = pop_call(st, CX_RETURN)) < 0)
		return (rc);
	return (push_call(st, id, b->ip, CE_RETURN, 0, 0, 0));
}

/*
 * Tracing was enabled at block @id, somewhere else than where it was
 * disabled (a user-space trace does not see the kernel deliver a signal):
 * when @id starts a function, a signal handler was entered.  Asynchronous
 * branches (interrupts and exceptions in a trace of the kernel) are left
 * alone: their returns are no returns.  It gets a frame of
 * its own (entry_kind "signal") whose caller is the interrupted function,
 * so that its return (to the signal trampoline, no return address) closes
 * it alone and a siglongjmp out of it closes it as any non-local exit.
 */
static int
signal_entry(struct ix_stitch *st, uint32_t id)
{
	const struct ix_sblock *b = &st->g[id];
	int rc;

	/*
	 * At an ELF entry point, execve replaced the program: its frames
	 * are gone, and the new program's first block starts a root.
	 */
	if (b->bflags & IX_BF_ENTRY) {
		while (st->nstack > 0)
			if ((rc = pop_call(st, CX_END)) < 0)
				return (rc);
		return (0);
	}
	if (st->nstack == 0 || !(b->bflags & IX_BF_FSTART))
		return (0);
	return (push_call(st, id, b->ip, CE_SIGNAL, 0, 0, 0));
}

/*
 * Whether the jump from block @a into block @b, made in frame @top, is a
 * tail call: a jump to a function's first instruction from outside that
 * function, or into a PLT stub from outside the PLT (a tail call through
 * the stub, which the frame then follows as a called stub).  A jump to the
 * first instruction of the function the frame runs is a loop (a self tail
 * call the compiler made one), and one into a function's cold part
 * (gcc's NAME.cold) stays in the function.
 */
static int
is_tail(const struct ix_stitch *st, const struct ix_open_call *top,
    const struct ix_sblock *a, const struct ix_sblock *b)
{
	if (b->bflags & IX_BF_PLT)
		return (!(a->bflags & IX_BF_PLT));
	if (!(b->bflags & IX_BF_FSTART) || (b->bflags & IX_BF_COLD) ||
	    b->fkey == 0)
		return (0);
	return (b->fkey != a->fkey &&
	    b->fkey != st->g[top->c.entry_block].fkey);
}

/*
 * A tail call into block @id: the frame on top is left (exit_kind
 * "tail") and the callee takes its place (entry_kind "tail"), at the same
 * depth, with its return address, its calling block and its call
 * instruction: the callee returns where the frame it replaced would have,
 * and a debugger's bt shows it called from there.
 */
static int
tail_call(struct ix_stitch *st, uint32_t id)
{
	const struct ix_open_call *top;
	const struct ix_sblock *b = &st->g[id];
	uint64_t ret, call_ip;
	int64_t call_blk;
	int has_call_ip, rc;

	assert(st->nstack > 0);
	top = &st->stack[st->nstack - 1];
	ret = top->ret;
	call_ip = top->c.call_ip;
	call_blk = top->call_blk;
	has_call_ip = top->c.has_call_ip;
	if ((rc = pop_call(st, CX_TAIL)) < 0 ||
	    (rc = push_call(st, id, b->ip, CE_TAIL, has_call_ip, call_ip,
	    ret)) < 0)
		return (rc);
	st->stack[st->nstack - 1].call_blk = call_blk;
	return (0);
}

/*
 * A jump from block @a into block @id.  A frame entered at a PLT stub
 * follows the stub's jumps: through the .plt entries and ld.so's lazy
 * binding resolver (whose own call of _dl_fixup stays a child of the
 * frame) to the function the stub leads to, which the frame becomes (its
 * entry block and func_ip); the stub's instructions stay counted in it.
 * Otherwise a jump to a function's entry from outside it is a tail call
 * (is_tail()), and an indirect jump into the middle of a function other
 * than the current frame's, where a frame below was called from, is a
 * longjmp.
 */
static int
do_jump(struct ix_stitch *st, const struct ix_sblock *a, uint32_t id)
{
	const struct ix_sblock *b = &st->g[id];
	struct ix_open_call *top;
	size_t k;

	if (st->nstack == 0)
		return (0);
	top = &st->stack[st->nstack - 1];
	if (top->tramp == IX_TR_NONE && is_tail(st, top, a, b))
		return (tail_call(st, id));
	if (top->tramp != IX_TR_NONE) {
		if (b->bflags & IX_BF_PLT)
			return (0);
		if ((a->bflags & IX_BF_PLT0) || (b->bflags & IX_BF_RESOLVER)) {
			top->tramp = IX_TR_RESOLVER;
			return (0);
		}
		if (top->tramp == IX_TR_RESOLVER &&
		    a->cls != HWTR_IC_JUMP_IND)
			return (0);
		top->c.entry_block = id;
		top->c.func_ip = b->ip;
		top->tramp = IX_TR_NONE;
		return (0);
	}
	if (a->cls != HWTR_IC_JUMP_IND || b->fkey == 0 ||
	    (b->bflags & IX_BF_FSTART) ||
	    b->fkey == st->g[top->c.entry_block].fkey ||
	    b->fkey == a->fkey)
		return (0);
	if ((k = landing_frame(st, b)) < st->nstack)
		return (unwind_to(st, k));
	return (0);
}

/*
 * What the branch from the previous block into block @id does to the call
 * stack (none when it is asynchronous).
 */
static int
follow(struct ix_stitch *st, uint32_t id)
{
	const struct ix_sblock *a = &st->g[st->prev];
	const struct ix_sblock *b = &st->g[id];
	uint64_t ret = 0;
	int flow = class_flow[a->cls];

	if (flow == FL_NONE) {
		if (a->cls == HWTR_IC_JUMP_IND || a->cls == HWTR_IC_JUMP)
			return (do_jump(st, a, id));
		/* A conditional tail call (clang makes them), when taken. */
		if (a->cls == HWTR_IC_COND &&
		    (b->bflags & (IX_BF_FSTART | IX_BF_PLT)) &&
		    (a->size == 0 || b->ip != a->ip + a->size))
			return (do_jump(st, a, id));
		return (0);
	}
	if (flow == FL_RET)
		return (do_return(st, b, id));
	/* The return address is the instruction after the call. */
	if (a->lens != NULL && a->size != 0)
		ret = a->ip + a->size;
	return (push_call(st, id, b->ip, CE_CALL, 1, a->end_ip, ret));
}

/*
 * The control transfer from the previous block into block @id, done for
 * every executed block.  A branch row is keyed by its two blocks, so its
 * count goes to the row whatever the kind this time (the row keeps the
 * kind it was first seen with); the kind is only worked out for a new
 * row.  The two latest successors of every block are remembered: a
 * conditional branch's two ways then need no hash probe (one slot left
 * a fifth of the blocks to the hash table).
 */
static IX_HOT int
transition(struct ix_stitch *st, uint32_t id)
{
	uint32_t from = (uint32_t)st->prev;
	struct ix_hot *h = &st->hot[from];
	int rc;

	assert((size_t)from < st->ng && id < st->ng);
	if (h->to[0] == id)
		h->n[0]++;
	else if (h->to[1] == id)
		h->n[1]++;
	else if ((rc = add_branch(st, from, id,
	    branch_kind(st, &st->g[from], &st->g[id]))) < 0)
		return (rc);
	if (st->async)
		return (0);
	return (follow(st, id));
}

static int
flush_chunk(struct ix_stitch *st)
{
	int rc = 0;

	if (!st->have_chunk)
		return (0);
	st->exec_bytes += st->chunk.data.len;
	if (st->sink.chunk != NULL)
		rc = st->sink.chunk(st->sink.arg, &st->chunk);
	st->have_chunk = 0;
	st->chunk.data.len = 0;
	return (rc);
}

/* Start a chunk row at the current position. */
static int
new_chunk(struct ix_stitch *st)
{
	struct ix_chunk *ch = &st->chunk;
	int rc;

	if ((rc = flush_chunk(st)) < 0)
		return (rc);
	/* Room for a full chunk: add_run() then never checks. */
	if (ch->data.cap < IX_CHUNK_BLOCKS * IX_VARINT_MAX) {
		uint8_t *p = realloc(ch->data.p, IX_CHUNK_BLOCKS *
		    IX_VARINT_MAX);

		if (p == NULL)
			return (-HWTR_E_NOMEM);
		ch->data.p = p;
		ch->data.cap = IX_CHUNK_BLOCKS * IX_VARINT_MAX;
	}
	ch->seq = st->seq;
	ch->insn = st->insn;
	ch->nblocks = 0;
	ch->ninsns = 0;
	ch->has_tsc = st->have_tsc;
	ch->tsc = st->tsc;
	st->have_chunk = 1;
	st->chunk_prev = -1;
	if (st->have_tsc && (st->nts == 0 || st->pend_ts.seq != st->seq)) {
		if ((rc = ix_stitch_ts_row(st, 0)) < 0)
			return (rc);
		st->last_ts_seq = st->seq;
	}
	return (0);
}

/* Block @id runs for the first time in the stream. */
static int
touch(struct ix_stitch *st, int64_t id)
{
	if (hwtr_grow((void **)&st->touched, &st->ctouched, st->ntouched + 1,
	    sizeof(*st->touched)) < 0)
		return (-HWTR_E_NOMEM);
	st->touched[st->ntouched++] = id;
	st->hot[id].emask &= (uint8_t)~HF_NEW;
	return (0);
}

/*
 * Block @id ran: the per-block path (tens of millions of times), kept
 * short.  The counts that are sums of per-block values are made once at
 * the end instead: a block's count over all streams (ix_stitch_end()), a
 * frame's own instructions (pop_call()), the stream's totals (seq, insn).
 */
static IX_HOT int
add_run(struct ix_stitch *st, int64_t id)
{
	const struct ix_sblock *b = &st->g[id];
	struct ix_chunk *ch = &st->chunk;
	uint8_t *p;
	uint64_t v;
	int64_t delta;
	int rc;

	assert(id >= 0 && (size_t)id < st->ng);
	if (st->have_prev && (rc = transition(st, (uint32_t)id)) < 0)
		return (rc);
	else if (!st->have_prev && st->resumed_elsewhere && st->seq > 0 &&
	    (rc = signal_entry(st, (uint32_t)id)) < 0)
		return (rc);
	st->async = 0;
	st->resumed_elsewhere = 0;
	if (st->nstack == 0 &&
	    (rc = push_call(st, id, b->ip, CE_START, 0, 0, 0)) < 0)
		return (rc);
	if ((!st->have_chunk || ch->nblocks == IX_CHUNK_BLOCKS) &&
	    (rc = new_chunk(st)) < 0)
		return (rc);
	/* new_chunk() made room for a full chunk's varints. */
	assert(st->have_chunk && ch->nblocks < IX_CHUNK_BLOCKS);
	assert(ch->data.len + IX_VARINT_MAX <= ch->data.cap);
	/* The zigzag varint of the id's distance from the previous + 1. */
	delta = id - (st->chunk_prev + 1);
	v = ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63);
	p = ch->data.p + ch->data.len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	ch->data.len = (size_t)(p - ch->data.p);
	st->chunk_prev = id;
	ch->nblocks++;
	ch->ninsns += b->ninsn;
	if ((st->hot[id].emask & HF_NEW) && (rc = touch(st, id)) < 0)
		return (rc);
	st->seq++;
	st->insn += b->ninsn;
	st->prev = id;
	st->have_prev = 1;
	return (0);
}

/*
 * No branch comes out of the last block (an operation says so, or the
 * stream ends): its run is counted in scount, which the counts of its
 * branches out complete at the end.
 */
static void
end_flow(struct ix_stitch *st)
{
	if (st->have_prev)
		st->scount[st->prev]++;
	st->have_prev = 0;
}

/*
 * Whether a segment's block may be continued by the next (set_cont()):
 * its lmap entry is then -2 - its global id, which keeps it out of
 * run_fast().
 */
static int
may_cont(const struct ix_stitch *st, const struct ix_sblock *b)
{
	return (st->merge && b->cls == HWTR_IC_OTHER && b->lens != NULL &&
	    b->size != 0);
}

/*
 * Segment-local block @lid (below IX_LID_FAST) has global id @id, where
 * run_fast() finds it: at the next two bytes of the operations read as a
 * little-endian number.  An id of two bytes is there once (the first has
 * its top bit set, the second not); an id of one byte (below 0x80) is
 * there with every byte that may follow it.  Operations other than
 * blocks (odd), ids of three bytes or more (both top bits set) and ids
 * not known yet have IX_FNONE.
 */
static void
fast_set(struct ix_stitch *st, size_t lid, uint32_t id)
{
	size_t v = lid << 1, k;

	assert(lid < IX_LID_FAST);
	if (v >= 0x80) {
		st->ftab[((v >> 7) << 8) | 0x80 | (v & 0x7f)] = id;
		return;
	}
	for (k = 0; k < 0x100; k++)
		st->ftab[k << 8 | v] = id;
}

/* The global id of the block held back, new to its segment or own. */
static int64_t
pend_global(struct ix_stitch *st)
{
	struct ix_sblock tmp = *st->pend;
	int64_t id;

	if (st->pend_lid < 0 && st->pend_nolens)
		tmp.lens = NULL;
	if (st->pend_lid < 0 && st->pend_nocode)
		tmp.code = NULL;
	id = global_block(st, &tmp);
	if (id >= 0 && st->pend_lid >= 0) {
		int cont = may_cont(st, st->pend);

		st->lmap[st->pend_lid] = cont ? -2 - id : id;
		if (!cont && st->pend_lid < IX_LID_FAST)
			fast_set(st, (size_t)st->pend_lid, (uint32_t)id);
	}
	return (id);
}

/* The times learnt after the block held back, now that it is counted. */
static int
pend_times(struct ix_stitch *st)
{
	size_t i;
	int rc;

	for (i = 0; i < st->nptime; i++)
		if ((rc = ix_stitch_apply_time(st, st->ptime[i].op,
		    st->ptime[i].tsc)) < 0)
			return (rc);
	st->nptime = 0;
	return (0);
}

/*
 * Count the block held back, then the times learnt after it.  Once a
 * segment's block has its global id (lmap), this is add_run() and little
 * else: one call site, inlined.
 */
static IX_HOT int
flush_pend(struct ix_stitch *st)
{
	int64_t id;
	int rc;

	if (!st->have_pend)
		return (0);
	st->have_pend = 0;
	st->pend_cont = 0;
	if (st->pend_lid >= 0 && (id = st->lmap[st->pend_lid]) != -1) {
		if (id < 0)
			id = -2 - id;
	} else if ((id = pend_global(st)) < 0)
		return ((int)id);
	if ((rc = add_run(st, id)) < 0)
		return (rc);
	return (st->nptime != 0 ? pend_times(st) : 0);
}

/* The same, where no block comes next (an operation, the end). */
static int
flush_pend_op(struct ix_stitch *st)
{
	return (flush_pend(st));
}

/*
 * Whether the block held back may be continued: it ends with an
 * instruction that is not a branch and its layout is known (worked out
 * once, when it is held back, not for every block that follows).
 */
static void
set_cont(struct ix_stitch *st)
{
	const struct ix_sblock *a = st->pend;

	st->pend_cont = st->merge && st->have_pend &&
	    !(st->pend_lid < 0 && st->pend_nolens) &&
	    a->cls == HWTR_IC_OTHER && a->lens != NULL && a->size != 0;
}

/*
 * Block @b continues block @a (set_cont() said @a may be continued): @b
 * starts where @a falls through, in the same section.
 */
static inline int
continues(const struct ix_sblock *a, const struct ix_sblock *b)
{
	return (b->lens != NULL && b->ip == a->ip + a->size &&
	    a->isid == b->isid && a->mode == b->mode &&
	    (uint32_t)a->ninsn + b->ninsn <= UINT16_MAX);
}

/*
 * Append @b to the block held back in pend_own.  Its code is known only
 * if every part's is (pend_nocode otherwise).
 */
static int
own_append(struct ix_stitch *st, const struct ix_sblock *b)
{
	struct ix_sblock *o = &st->pend_own;

	if (hwtr_grow((void **)&o->lens, &st->pend_lcap, (size_t)o->ninsn +
	    b->ninsn + 1, 1) < 0 || hwtr_grow((void **)&o->code,
	    &st->pend_ccap, (size_t)o->size + b->size + 1, 1) < 0)
		return (-HWTR_E_NOMEM);
	if (b->lens != NULL)
		memcpy(o->lens + o->ninsn, b->lens, b->ninsn);
	if (b->code != NULL)
		memcpy(o->code + o->size, b->code, b->size);
	else
		st->pend_nocode = 1;
	if (o->ninsn == 0) {
		o->ip = b->ip;
		o->isid = b->isid;
		o->mode = b->mode;
	}
	o->end_ip = b->end_ip;
	o->cls = b->cls;
	o->ninsn = (uint16_t)(o->ninsn + b->ninsn);
	o->size += b->size;
	return (0);
}

/* Keep the block held back in pend_own (its segment goes away). */
static int
own_pend(struct ix_stitch *st)
{
	const struct ix_sblock *b = st->pend;
	uint8_t *lens = st->pend_own.lens, *code = st->pend_own.code;
	int rc;

	if (!st->have_pend || st->pend_lid < 0)
		return (0);
	memset(&st->pend_own, 0, sizeof(st->pend_own));
	st->pend_own.lens = lens;
	st->pend_own.code = code;
	st->pend_nocode = 0;
	if ((rc = own_append(st, b)) < 0)
		return (rc);
	/* Layout unknown: never continued, and kept so. */
	st->pend_nolens = b->lens == NULL;
	st->pend = &st->pend_own;
	st->pend_lid = -1;
	return (0);
}

static int
next_run(struct ix_stitch *st, const struct ix_seg_out *seg, int64_t lid)
{
	const struct ix_sblock *b = &seg->blocks[lid];
	int rc;

	if (st->pend_cont && continues(st->pend, b)) {
		if ((rc = own_pend(st)) < 0 || (rc = own_append(st, b)) < 0)
			return (rc);
		set_cont(st);
		return (0);
	}
	if ((rc = flush_pend(st)) < 0)
		return (rc);
	st->have_pend = 1;
	st->pend = b;
	st->pend_lid = lid;
	if (b->cls == HWTR_IC_OTHER)
		set_cont(st);
	return (0);
}

static int
get_slow(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t x = 0;
	int shift = 0;

	while (*pos < len && shift < 64) {
		uint8_t byte = p[(*pos)++];

		x |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			*v = x;
			return (0);
		}
	}
	return (-HWTR_E_FORMAT);
}

/* A varint; one and two bytes (a block of a segment) decoded inline. */
static inline int
get(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	size_t i = *pos;

	if (i + 1 < len) {
		if (p[i] < 0x80) {
			*v = p[i];
			*pos = i + 1;
			return (0);
		}
		if (p[i + 1] < 0x80) {
			*v = (p[i] & 0x7f) | (uint64_t)p[i + 1] << 7;
			*pos = i + 2;
			return (0);
		}
	}
	return (get_slow(p, len, pos, v));
}

static int
replay_event(struct ix_stitch *st, const uint8_t *p, size_t len, size_t *pos)
{
	struct ix_event e;
	uint64_t kind, flags, n = 0;
	char *det = NULL;
	int rc;

	memset(&e, 0, sizeof(e));
	if (get(p, len, pos, &kind) < 0 || get(p, len, pos, &flags) < 0)
		return (-HWTR_E_FORMAT);
	if ((flags & 1) && get(p, len, pos, &e.ip) < 0)
		return (-HWTR_E_FORMAT);
	if ((flags & 2) && get(p, len, pos, &e.offset) < 0)
		return (-HWTR_E_FORMAT);
	if (flags & 4) {
		if (get(p, len, pos, &n) < 0 || n > len - *pos)
			return (-HWTR_E_FORMAT);
		if ((det = malloc(n + 1)) == NULL)
			return (-HWTR_E_NOMEM);
		memcpy(det, p + *pos, n);
		det[n] = '\0';
		*pos += n;
	}
	if (kind >= IX_NEVENT_KINDS)
		kind = 0;
	e.seq = st->seq;
	e.insn = st->insn;
	e.kind = ix_event_kinds[kind];
	/*
	 * Tracing resumes where it was disabled: libipt's own test, made
	 * here when the disable was in an earlier segment.
	 */
	if (flags & 8)
		e.kind = st->have_dis && (flags & 1) && e.ip == st->dis_ip ?
		    "resumed" : "enabled";
	if (strcmp(e.kind, "enabled") == 0)
		st->resumed_elsewhere = 1;
	if (strcmp(e.kind, "disabled") == 0 ||
	    strcmp(e.kind, "async-disabled") == 0) {
		const struct ix_sblock *b = &st->g[st->prev];

		st->have_dis = (flags & 1) || (st->seq > 0 &&
		    b->size != 0);
		st->dis_ip = (flags & 1) ? e.ip : b->ip + b->size;
	}
	e.has_ip = (flags & 1) != 0;
	e.has_offset = (flags & 2) != 0;
	e.has_tsc = st->have_tsc;
	e.tsc = st->tsc;
	e.detail = det;
	rc = st->sink.event != NULL ? st->sink.event(st->sink.arg, &e) : 0;
	free(det);
	return (rc);
}

/*
 * Whether the next blocks may go through run_fast(): the block held back
 * is a segment's whose global id is known and which nothing continues, no
 * times wait for it, and add_run() would find nothing to do but count it
 * (a previous block, the last of the chunk, no asynchronous branch or
 * resume, a frame not in a PLT stub).
 */
static inline int
fast_ok(const struct ix_stitch *st)
{
	return (st->have_pend && st->pend_lid >= 0 && !st->pend_cont &&
	    st->lmap[st->pend_lid] >= 0 && st->nptime == 0 && st->have_prev &&
	    !st->async && !st->resumed_elsewhere && st->nstack > 0 &&
	    st->stack[st->nstack - 1].tramp == IX_TR_NONE &&
	    st->have_chunk && st->chunk.nblocks > 0 &&
	    st->chunk_prev == st->prev);
}

/* The slot of st->octs for operations @w after blocks @prev and @cur. */
static inline size_t
oct_slot(uint64_t prev, uint64_t cur, uint64_t w)
{
	uint64_t k = (w ^ (prev << 32 | cur) * 0x9e3779b97f4a7c15ull) *
	    0xff51afd7ed558ccdull;

	return ((size_t)(k >> (64 - IX_OCTS_LOG)));
}

static inline uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return (v);
}

/* Whether oct @o is the one for operations @w after @prev and @cur. */
static inline int
oct_is(const struct ix_soct *o, uint64_t prev, uint64_t cur, uint64_t w,
    uint64_t gen)
{
	return (o->w == w && o->prev == (uint32_t)prev &&
	    o->cur == (uint32_t)cur && o->gen == gen);
}

/*
 * The steps run_fast() takes one by one from where no oct was found,
 * made an oct when they are eight bytes of operations exactly.
 */
struct oct_win {
	struct ix_soct	*o;		/* the slot it goes to; NULL: none */
	const uint8_t	*p;		/* its operations */
	uint8_t		*out;		/* its execution order */
	uint32_t	prev, cur;
	uint32_t	from[8], n, slots, ninsn;
};

/*
 * The common case of next_run(), flush_pend() and add_run(), for as long
 * as it lasts (fast_ok() holds when it starts): the next operation is a
 * block of the segment whose global id is known and which nothing may
 * continue, the block held back runs after the previous one as it did
 * before (a successor remembered), into a branch that does nothing to the
 * call stack, not for the first time in the stream, and its chunk has
 * room.  It is counted and the new one held back in its place; eight
 * bytes of operations taken so before from the same two blocks are taken
 * at once (struct ix_soct).  Returns before anything else, at *@posp, for
 * the general path to do: so that nothing on the way calls a function (an
 * oct made over another calls oct_flush1()) and every variable stays in a
 * register.  A chunk starts at the position it is made at: its blocks and
 * instructions are the position less its start.
 */
static IX_APART void
run_fast(struct ix_stitch *st, const struct ix_seg_out *seg, size_t *posp)
{
	const uint8_t *p0 = seg->ops.p + *posp, *p = p0;
	const uint8_t *lim = seg->ops.p + seg->ops.len - 1;
	const uint32_t *ftab = st->ftab;
	struct ix_hot *hot = st->hot;
	struct ix_chunk *ch = &st->chunk;
	struct ix_soct *octs = st->octs, *o, *lo = NULL;
	struct oct_win win;
	uint8_t *out = ch->data.p + ch->data.len;
	int64_t insn = st->insn, room = ch->seq + IX_CHUNK_BLOCKS - st->seq;
	uint64_t prev = (uint64_t)st->prev;
	uint64_t cur = (uint64_t)st->lmap[st->pend_lid];
	uint64_t gen = st->oct_gen;
	uint32_t i;
	struct ix_hot *h = &hot[prev], *hc = &hot[cur];

	/*
	 * The last byte goes to the general path (an id's two bytes are
	 * read), and so does the chunk's end: each block read takes a byte
	 * at least, so no more than room of them are counted here (an oct
	 * takes at most as many blocks as bytes).
	 */
	if (lim - p0 > room)
		lim = p0 + room;
	if (st->octs_off)
		octs = NULL;
	win.o = NULL;
	win.p = p0;
	win.out = out;
	win.prev = win.cur = win.n = win.slots = win.ninsn = 0;
	while (p < lim) {
		uint64_t v;
		int64_t d;
		uint32_t w = p[0] | (uint32_t)p[1] << 8, g, k;

		if (win.o == NULL && octs != NULL && lim - p >= 8) {
			uint64_t w8 = rd64(p);
			size_t sl = 0;

			/* Most often the oct that came next last time. */
			o = lo != NULL ? &octs[lo->next] : NULL;
			if (o == NULL || !oct_is(o, prev, cur, w8, gen)) {
				sl = oct_slot(prev, cur, w8);
				o = &octs[sl];
				if (!oct_is(o, prev, cur, w8, gen))
					o = NULL;
				else if (lo != NULL)
					lo->next = (uint16_t)sl;
			}
			if (o != NULL) {
				/*
				 * The chunk has room for 8 blocks more (lim)
				 * and new_chunk() 10 bytes for each: the 16
				 * bytes copied fit.
				 */
				memcpy(out, o->xb, sizeof(o->xb));
				out += o->nxb;
				if (o->count++ == 0 && !o->dirty) {
					o->dirty = 1;
					st->oct_dirty[st->oct_ndirty++] =
					    (uint16_t)(o - octs);
				}
				room -= o->nblk;
				insn += o->ninsn;
				prev = o->nprev;
				cur = o->ncur;
				h = &hot[prev];
				hc = &hot[cur];
				p += 8;
				lo = o;
				continue;
			}
			/* None: the steps from here make one in slot sl. */
			lo = NULL;
			win.o = &octs[sl];
			win.p = p;
			win.out = out;
			win.prev = (uint32_t)prev;
			win.cur = (uint32_t)cur;
			win.n = win.slots = win.ninsn = 0;
		}

		/*
		 * The next operation: a block of one or two bytes whose
		 * global id is known (ftab), or leave it.
		 */
		if ((g = ftab[w]) == IX_FNONE)
			break;

		/* Block cur: what add_run() would do, or leave it. */
		if ((h->flow & hc->emask) != 0)
			break;
		if (h->to[0] == (uint32_t)cur)
			k = 0;
		else if (h->to[1] == (uint32_t)cur)
			k = 1;
		else
			break;
		h->n[k]++;
		p += 1 + ((w >> 7) & 1);
		d = (int64_t)(cur - prev - 1);
		v = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
		while (v >= 0x80) {
			*out++ = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		*out++ = (uint8_t)v;
		room--;
		insn += hc->ninsn;
		if (win.o != NULL) {
			win.from[win.n] = (uint32_t)prev;
			win.slots |= k << win.n;
			win.ninsn += hc->ninsn;
			/* Eight bytes are at most eight blocks. */
			if (++win.n == 8 || p - win.p >= 8) {
				o = win.o;
				win.o = NULL;
				/* A block's two bytes across the eighth: none. */
				if (p - win.p == 8 && out - win.out <=
				    (ptrdiff_t)sizeof(o->xb) &&
				    win.ninsn <= UINT16_MAX) {
					uint32_t *from = &st->oct_from[
					    (size_t)(o - octs) * 8];

					oct_flush1(st, o);
					o->w = rd64(win.p);
					o->prev = win.prev;
					o->cur = win.cur;
					o->gen = gen;
					o->nprev = (uint32_t)cur;
					o->ncur = g;
					o->ninsn = (uint16_t)win.ninsn;
					o->nblk = (uint8_t)win.n;
					o->nxb = (uint8_t)(out - win.out);
					o->slots = (uint8_t)win.slots;
					memcpy(o->xb, win.out, o->nxb);
					/* The blocks whose slots it counts in. */
					for (i = 0; i < win.n; i++) {
						from[i] = win.from[i];
						hot[win.from[i]].in_oct = 1;
					}
					hc->in_oct = 1;
				}
			}
		}
		/* Block g is held back in its place. */
		prev = cur;
		cur = g;
		h = hc;
		hc = &hot[cur];
	}
	st->seq = ch->seq + IX_CHUNK_BLOCKS - room;
	st->insn = insn;
	st->chunk_prev = st->prev = (int64_t)prev;
	ch->data.len = (size_t)(out - ch->data.p);
	ch->nblocks = (uint32_t)(st->seq - ch->seq);
	ch->ninsns = insn - ch->insn;
	/*
	 * The block now held back is the last one read: an id's second
	 * byte follows a byte with its top bit set, which ends no varint.
	 */
	if (p > p0) {
		if (p - p0 >= 2 && p[-2] >= 0x80)
			st->pend_lid = ((p[-2] & 0x7f) | p[-1] << 7) >> 1;
		else
			st->pend_lid = p[-1] >> 1;
		st->pend = &seg->blocks[st->pend_lid];
	}
	*posp = (size_t)(p - seg->ops.p);
}

int
ix_stitch_segment(struct ix_stitch *st, struct ix_seg_out *seg)
{
	const uint8_t *p = seg->ops.p;
	struct ix_cycles cy;
	size_t len = seg->ops.len, pos = 0, i, n;
	uint64_t v, a;
	int rc = 0;

	n = seg->nblocks;
	if (hwtr_grow((void **)&st->lmap, &st->clmap, n + 1,
	    sizeof(*st->lmap)) < 0)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < n; i++)
		st->lmap[i] = -1;
	if (st->ftab == NULL &&
	    (st->ftab = malloc(IX_FTAB * sizeof(*st->ftab))) == NULL)
		return (-HWTR_E_NOMEM);
	memset(st->ftab, 0xff, IX_FTAB * sizeof(*st->ftab));
	/* The octs' bytes are the segment before's ids. */
	if (st->octs == NULL)
		oct_alloc(st);
	oct_bump(st);
	while (pos < len && rc >= 0) {
		if (fast_ok(st)) {
			run_fast(st, seg, &pos);
			if (pos >= len)
				break;
		}
		if (get(p, len, &pos, &v) < 0)
			return (-HWTR_E_FORMAT);
		if (!(v & 1)) {
			if ((v >> 1) >= seg->nblocks)
				return (-HWTR_E_FORMAT);
			rc = next_run(st, seg, (int64_t)(v >> 1));
			continue;
		}
		/* Anything else ends the block held back. */
		if ((rc = flush_pend_op(st)) < 0)
			return (rc);
		switch (v >> 1) {
		case IX_OP_TIME:
		case IX_OP_TSC:
		case IX_OP_SETTSC:
			if (get(p, len, &pos, &a) < 0)
				return (-HWTR_E_FORMAT);
			if (!st->have_pend) {
				rc = ix_stitch_apply_time(st, (int)(v >> 1),
				    a);
				break;
			}
			/* After the block held back, merged or not. */
			if (hwtr_grow((void **)&st->ptime, &st->cptime,
			    st->nptime + 1, sizeof(*st->ptime)) < 0)
				return (-HWTR_E_NOMEM);
			st->ptime[st->nptime].op = (uint8_t)(v >> 1);
			st->ptime[st->nptime++].tsc = a;
			break;
		case IX_OP_EVENT:
			rc = replay_event(st, p, len, &pos);
			break;
		case IX_OP_NOPREV:
			end_flow(st);
			break;
		case IX_OP_GAP:
			end_flow(st);
			st->gaps++;
			break;
		case IX_OP_ERROR:
			st->errors++;
			break;
		case IX_OP_ASYNC:
			st->async = 1;
			break;
		case IX_OP_UNDECODED:
			if (get(p, len, &pos, &a) < 0)
				return (-HWTR_E_FORMAT);
			st->undecoded += a;
			break;
		case IX_OP_RESET:
			while (st->nstack > 0 && rc >= 0)
				rc = pop_call(st, CX_END);
			end_flow(st);
			st->have_tsc = 0;
			break;
		case IX_OP_CYCLES:
			/* At the position of its element, as events are. */
			if (get(p, len, &pos, &cy.count) < 0 ||
			    get(p, len, &pos, &a) < 0 ||
			    (a >> 1) >= IX_NCC_ELEMS)
				return (-HWTR_E_FORMAT);
			cy.seq = st->seq;
			cy.insn = st->insn;
			cy.elem = (uint8_t)(a >> 1);
			cy.cumulative = (uint8_t)(a & 1);
			if (st->sink.cycles != NULL)
				rc = st->sink.cycles(st->sink.arg, &cy);
			break;
		default:
			return (-HWTR_E_FORMAT);
		}
	}
	/* The block held back outlives its segment. */
	if (rc >= 0 && (rc = own_pend(st)) >= 0 && st->have_pend)
		set_cont(st);
	return (rc);
}

int
ix_stitch_end(struct ix_stitch *st)
{
	size_t i;
	int rc = flush_pend_op(st);
	uint64_t runs = 0;

	if (rc < 0)
		return (rc);
	end_flow(st);

	/* Close the frames still open where the trace ends. */
	while (st->nstack > 0 && rc >= 0)
		rc = pop_call(st, CX_END);
	assert(rc < 0 || st->nstack == 0);
	if (rc >= 0)
		rc = flush_chunk(st);
	if (rc >= 0)
		rc = ix_stitch_last_reading(st);
	if (rc >= 0 && st->have_pend_ts) {
		if (st->sink.ts != NULL)
			rc = st->sink.ts(st->sink.arg, &st->pend_ts);
		st->have_pend_ts = 0;
	}
	/*
	 * The sums add_run() leaves to the end: the branches' counts, then
	 * the blocks' (each run of a block is a branch out of it or an end
	 * in scount).
	 */
	oct_flush(st);
	for (i = 0; i < st->ntouched; i++) {
		slot_flush(st, (uint32_t)st->touched[i], 0);
		slot_flush(st, (uint32_t)st->touched[i], 1);
	}
	for (i = 0; i < st->nbranches; i++)
		st->scount[st->branches[i].from] += st->branches[i].count;
	for (i = 0; i < st->ntouched; i++) {
		size_t id = (size_t)st->touched[i];

		st->g[id].count += st->scount[id];
		runs += st->scount[id];
	}
	assert(rc < 0 || runs == (uint64_t)st->seq);
	st->exec_blocks = st->seq;
	st->exec_insns = st->insn;
	return (rc);
}
