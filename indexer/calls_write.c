/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher's calls into the calls column store (colstore.h): one row
 * per call as the stitcher finishes it, in the values hwtrace-db(5)
 * documents (ids from the thread's base, ns from the archive's time
 * conversion).
 */

#include "hwtr_ix.h"
#include "colstore.h"

int
ix_calls_put(struct hwtr_cs_writer *w, int64_t thread, int64_t id_base,
    int64_t idx, const struct ix_call *c, int64_t symbol,
    const struct hwtr_timeconv *tc)
{
	struct hwtr_cs_row *r;
	uint32_t nul = 0;
	int ek, xk;

	/*
	 * The stitcher's kinds are the column store's, in the same order
	 * (tests/indexer/t_colstore checks the names): their index is the
	 * stored one.  A lookup by name per call was two strcmp() calls a
	 * row.
	 */
	ek = c->entry_kind;
	xk = c->exit_kind;
	if (ek >= CS_NENTRY_KINDS || xk >= CS_NEXIT_KINDS)
		return (-HWTR_E_INVAL);
	/* Filled where the writer keeps it (no row copied on the way). */
	r = hwtr_cs_writer_slot(w, id_base + idx);
	r->v[CS_ID] = id_base + idx;
	r->v[CS_THREAD] = thread;
	if (c->parent >= 0)
		r->v[CS_PARENT] = id_base + c->parent;
	else
		nul |= 1u << CS_PARENT;
	r->v[CS_DEPTH] = c->depth;
	if (symbol != 0)
		r->v[CS_SYMBOL] = symbol;
	else
		nul |= 1u << CS_SYMBOL;
	r->v[CS_FUNC_IP] = (int64_t)c->func_ip;
	if (c->has_call_ip)
		r->v[CS_CALL_IP] = (int64_t)c->call_ip;
	else
		nul |= 1u << CS_CALL_IP;
	r->v[CS_ENTRY_KIND] = ek;
	r->v[CS_EXIT_KIND] = xk;
	r->v[CS_ENTRY_SEQ] = c->entry_seq;
	r->v[CS_EXIT_SEQ] = c->exit_seq;
	r->v[CS_ENTRY_INSN] = c->entry_insn;
	r->v[CS_EXIT_INSN] = c->exit_insn;
	if (c->has_entry_tsc) {
		r->v[CS_ENTRY_TSC] = (int64_t)c->entry_tsc;
		if (tc != NULL)
			r->v[CS_ENTRY_NS] = hwtr_tsc_to_ns(tc, c->entry_tsc);
		else
			nul |= 1u << CS_ENTRY_NS;
	} else
		nul |= (1u << CS_ENTRY_TSC) | (1u << CS_ENTRY_NS);
	if (c->has_exit_tsc) {
		r->v[CS_EXIT_TSC] = (int64_t)c->exit_tsc;
		/* Most calls begin and end at one time (one timestamp). */
		if (tc != NULL && c->has_entry_tsc &&
		    c->exit_tsc == c->entry_tsc)
			r->v[CS_EXIT_NS] = r->v[CS_ENTRY_NS];
		else if (tc != NULL)
			r->v[CS_EXIT_NS] = hwtr_tsc_to_ns(tc, c->exit_tsc);
		else
			nul |= 1u << CS_EXIT_NS;
	} else
		nul |= (1u << CS_EXIT_TSC) | (1u << CS_EXIT_NS);
	r->v[CS_INSNS] = c->exit_insn - c->entry_insn;
	r->v[CS_SELF_INSNS] = c->self_insns;
	r->v[CS_BLOCKS] = c->exit_seq - c->entry_seq;
	r->nul = nul;
	return (hwtr_cs_writer_commit(w) < 0 ? -HWTR_E_DB : 0);
}
