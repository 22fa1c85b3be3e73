/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt_one.h: one input of fpt's differential fuzzer, an Intel PT trace
 * over the executable segments of a real program, through libipt's block
 * decoder and through fpt (hwtr_test_fptboth.h), and their comparison.
 * Shared by the libFuzzer target (fuzz_fpt.c) and the seed-corpus test
 * (t_fpt_seeds.c), so that what the fuzzer checks is what the suite
 * replays.
 */

#ifndef HWTR_FPT_ONE_H
#define HWTR_FPT_ONE_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_fptboth.h"

/* The program's bytes and its executable segments. */
struct fpt_one_prog {
	uint8_t		*elf;
	size_t		len;
	struct tf_img	im;
};

/*
 * Read the ELF file @path into @p with its executable PT_LOAD segments.
 * 0, or -1 with @err saying why.
 */
static inline int
fpt_one_load(struct fpt_one_prog *p, const char *path, char *err,
    size_t errlen)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	size_t i;

	memset(p, 0, sizeof(*p));
	if ((p->elf = tf_slurp(path, &p->len)) == NULL || p->len == 0) {
		snprintf(err, errlen, "%s: cannot read it", path);
		return (-1);
	}
	eh = (const Elf64_Ehdr *)p->elf;
	if (p->len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff > p->len || eh->e_phentsize < sizeof(*ph) ||
	    (p->len - eh->e_phoff) / eh->e_phentsize < eh->e_phnum) {
		snprintf(err, errlen, "%s: not a 64-bit ELF file", path);
		return (-1);
	}
	for (i = 0; i < eh->e_phnum; i++) {
		ph = (const Elf64_Phdr *)(p->elf + eh->e_phoff +
		    i * eh->e_phentsize);
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ph->p_offset <= p->len &&
		    ph->p_filesz <= p->len - ph->p_offset)
			(void)tf_img_add(&p->im, path, p->elf, ph->p_offset,
			    ph->p_filesz, ph->p_vaddr);
	}
	if (p->im.n == 0) {
		snprintf(err, errlen, "%s: no executable segment", path);
		return (-1);
	}
	return (0);
}

static inline void
fpt_one_free(struct fpt_one_prog *p)
{
	free(p->elf);
	memset(p, 0, sizeof(*p));
}

/* The first item where libipt's @want and fpt's @got differ. */
static inline size_t
fpt_one_first_diff(const struct tf_items *want, const struct tf_items *got)
{
	size_t i;

	for (i = 0; i < want->n && i < got->n; i++)
		if (!tf_same(&want->v[i], &got->v[i]))
			break;
	return (i);
}

/*
 * Another libipt 2.0 bug the comparison skips: its block cache belongs
 * to the image section, not to an execution mode, and
 * pt_blk_proceed_no_event_cached() follows an entry filled in another
 * mode (block->mode = the entry's), so that after a resync into another
 * mode (a MODE.exec in the PSB+) it decodes the code as it was decoded
 * before: instruction lengths that the mode (CS.L, CS.D) no longer
 * gives.  Its own fill fails with -pte_internal where it meets such an
 * entry.  fpt decodes in the mode the trace says.  1 when, before the
 * first difference or at it, libipt gave a block in a mode other than
 * that of its last MODE.exec event since the last error, or when its
 * item there (or the one after a block there) is that -pte_internal:
 * from there on libipt's blocks, and its block cache, are not the
 * trace's, and the two are not compared.
 */
static inline int
fpt_one_mode_bug(const struct tf_items *want, const struct tf_items *got)
{
	size_t i, n = fpt_one_first_diff(want, got);
	unsigned mode = 0;

	for (i = 0; i <= n && i < want->n; i++) {
		const struct fpt_item *it = &want->v[i];

		if (it->kind == FPT_ITEM_BLOCK) {
			if (mode != 0 && it->block.mode != mode)
				return (1);
		} else if (it->event.kind == FPT_EV_EXEC_MODE)
			mode = it->event.mode;
		else if (it->event.kind == FPT_EV_ERROR)
			mode = 0;
	}
	for (i = n; i < want->n && i <= n + 1; i++)
		if (want->v[i].kind == FPT_ITEM_EVENT)
			return (want->v[i].event.kind == FPT_EV_ERROR &&
			    want->v[i].event.error == pte_internal);
	return (0);
}

/*
 * Whether @off in @data is right after a one-byte TIP (0x0d) and the
 * packets libipt's read-ahead passes after it (PAD, timing, PSBEND, a FUP
 * with IP, which it decodes as an asynchronous branch's, a whole PSB+ of
 * PADs and timing packets, a packet or a PSB+ the end of the trace cuts
 * when @off is the end, a PSB+ with status updates when @off is its
 * PSBEND, where that read-ahead stops and fpt's error is), that TIP at
 * most FPT_ONE_NOIP_WINDOW bytes before (PADs and a PSB+ can be many).
 */
#define FPT_ONE_NOIP_WINDOW	4096

/* Whether no PSBEND is in [@p, @end): a PSB+ there is cut by the end. */
static inline int
fpt_one_psb_cut(const uint8_t *p, const uint8_t *end)
{
	struct fpt_pkt pkt;
	int rc;

	for (; p < end; p += rc)
		if ((rc = fpt_pkt_parse(p, end, &pkt)) <= 0 ||
		    pkt.kind == FPT_PKT_PSBEND)
			return (rc == -HWTR_E_TRUNCATED);
	return (1);
}

/*
 * The PSBEND of the PSB+ whose packets after the PSB start at @p when one
 * of them is a status update, else NULL.
 */
static inline const uint8_t *
fpt_one_psbend_st(const uint8_t *p, const uint8_t *end)
{
	struct fpt_pkt pkt;
	int st = 0;

	for (; fpt_pkt_parse(p, end, &pkt) > 0; p += pkt.size) {
		if (pkt.kind == FPT_PKT_PSBEND)
			return (st ? p : NULL);
		st |= fpt_pkt_psb_status(pkt.kind);
	}
	return (NULL);
}

/*
 * Past the PSBEND of the PSB+ whose packets after the PSB start at @p when
 * it is whole, with PADs, timing packets and FUPs alone (libipt's
 * read-ahead passes it: a FUP in a PSB+ only sets the IP,
 * pt_qry_header_fup()), else NULL.
 */
static inline const uint8_t *
fpt_one_psb_plain(const uint8_t *p, const uint8_t *end)
{
	struct fpt_pkt pkt;

	for (; fpt_pkt_parse(p, end, &pkt) > 0; p += pkt.size) {
		if (pkt.kind == FPT_PKT_PSBEND)
			return (p + pkt.size);
		if (pkt.kind != FPT_PKT_PAD && pkt.kind != FPT_PKT_TSC &&
		    pkt.kind != FPT_PKT_MTC && pkt.kind != FPT_PKT_CYC &&
		    pkt.kind != FPT_PKT_TMA && pkt.kind != FPT_PKT_FUP)
			return (NULL);
	}
	return (NULL);
}

static inline int
fpt_one_after_noip(const uint8_t *data, size_t size, uint64_t off)
{
	const uint8_t *p, *next, *r;
	struct fpt_pkt pkt;
	size_t q;
	int rc;

	if (off > size)
		return (0);
	for (q = (size_t)off; q-- > 0 && off - q <= FPT_ONE_NOIP_WINDOW;) {
		if (data[q] != 0x0d)
			continue;
		for (p = data + q + 1; p < data + off; p = next) {
			rc = fpt_pkt_parse(p, data + size, &pkt);
			next = p + (rc > 0 ? pkt.size : 0);
			/* A whole PSB+ without status update: read past. */
			if (rc > 0 && pkt.kind == FPT_PKT_PSB && (r =
			    fpt_one_psb_plain(next, data + size)) != NULL &&
			    r <= data + off) {
				next = r;
				continue;
			}
			if (rc == -HWTR_E_TRUNCATED && off == size)
				p = data + off;
			if (rc > 0 && pkt.kind == FPT_PKT_PSB && off == size &&
			    fpt_one_psb_cut(p + pkt.size, data + size))
				p = data + off;
			if (rc > 0 && pkt.kind == FPT_PKT_PSB &&
			    fpt_one_psbend_st(p + pkt.size, data + size) ==
			    data + off)
				p = data + off;
			if (rc <= 0 || (pkt.kind != FPT_PKT_PAD &&
			    pkt.kind != FPT_PKT_TSC &&
			    pkt.kind != FPT_PKT_MTC &&
			    pkt.kind != FPT_PKT_CYC &&
			    pkt.kind != FPT_PKT_TMA &&
			    pkt.kind != FPT_PKT_PSBEND &&
			    (pkt.kind != FPT_PKT_FUP ||
			    pkt.ipc == FPT_IPC_SUPPRESSED)))
				break;
		}
		if (p == data + off)
			return (1);
	}
	return (0);
}

/*
 * A libipt 2.0 bug the comparison skips: a TIP without IP for an
 * indirect branch is -pte_noip in pt_blk_proceed_with_trace(), but
 * pt_blk_proceed_no_event_cached() (ptbq_indirect, the uncompressed
 * return) ignores the pts_ip_suppressed its query answers and goes on
 * from the IP it had, so what libipt gives there depends on its block
 * cache.  fpt gives the error always, at the packet after those libipt's
 * read-ahead passes.  1 when the first difference is fpt's error right
 * after such a TIP (the one byte 0x0d) and those: past it the two are
 * not compared.
 */
static inline int
fpt_one_noip_bug(const struct tf_items *want, const struct tf_items *got,
    const uint8_t *data, size_t size)
{
	const struct fpt_event *e;
	size_t i = fpt_one_first_diff(want, got);

	if (i >= got->n || got->v[i].kind != FPT_ITEM_EVENT)
		return (0);
	e = &got->v[i].event;
	return (e->kind == FPT_EV_ERROR &&
	    fpt_one_after_noip(data, size, e->offset));
}

/*
 * Where both say there is an error: libipt's offset (pt_blk_get_offset(),
 * the packet its decode failed at) and fpt's must be the same too.  1
 * with @msg saying where when an error item both give at the same place
 * has another offset, else 0.
 */
static inline int
fpt_one_offsets(const struct tf_items *want, const struct tf_items *got,
    char *msg, size_t len)
{
	const struct fpt_item *a, *b;
	size_t i;

	for (i = 0; i < want->n && i < got->n; i++) {
		a = &want->v[i];
		b = &got->v[i];
		if (a->kind != FPT_ITEM_EVENT || b->kind != FPT_ITEM_EVENT ||
		    a->event.kind != FPT_EV_ERROR ||
		    b->event.kind != FPT_EV_ERROR ||
		    a->event.offset == b->event.offset)
			continue;
		snprintf(msg, len, "item %zu: libipt's error at offset %#"
		    PRIx64 ", fpt's at %#" PRIx64, i, a->event.offset,
		    b->event.offset);
		return (1);
	}
	return (0);
}

/*
 * The same libipt bug where both give an error (fpt_one_noip_bug()): on
 * that path libipt goes on from the IP it had, and its error, if one
 * comes, is where that took it, not -pte_noip at the TIP.  1 when the
 * first error item whose offsets differ is fpt's right after such a TIP
 * and libipt's is another than -pte_noip: past it the two are not
 * compared.
 */
static inline int
fpt_one_noip_offset(const struct tf_items *want, const struct tf_items *got,
    const uint8_t *data, size_t size)
{
	const struct fpt_event *a, *b;
	size_t i;

	for (i = 0; i < want->n && i < got->n; i++) {
		if (want->v[i].kind != FPT_ITEM_EVENT ||
		    got->v[i].kind != FPT_ITEM_EVENT)
			continue;
		a = &want->v[i].event;
		b = &got->v[i].event;
		if (a->kind != FPT_EV_ERROR || b->kind != FPT_EV_ERROR ||
		    a->offset == b->offset)
			continue;
		return (a->error != pte_noip &&
		    fpt_one_after_noip(data, size, b->offset));
	}
	return (0);
}

/*
 * fpt's run API against its fpt_next() over the same trace (@got, the
 * items tf_run_fpt() recorded): `index` takes most blocks through the
 * run API (segfast.c), which must give what fpt_next() gives, block for
 * block.  0 when the items are the same, 1 with @msg saying where, -1
 * when fpt cannot be made.
 */
static inline int
fpt_one_runs(const uint8_t *data, size_t size, const struct fpt_config *base,
    const struct tf_items *got, char *msg, size_t len)
{
	struct fpt_config fc = *base;
	struct tf_items runs;
	struct fpt *d;
	char a[160], b[160];
	size_t i;

	memset(&runs, 0, sizeof(runs));
	runs.max = got->max;
	runs.max_insns = got->max_insns;
	fc.begin = data;
	fc.end = data + size;
	if (fpt_new(&d, &fc) != 0) {
		snprintf(msg, len, "fpt_new failed");
		return (-1);
	}
	tf_run_fpt_runs(d, &runs);
	fpt_free(d);
	for (i = 0; i < got->n && i < runs.n; i++)
		if (!tf_same(&got->v[i], &runs.v[i]))
			break;
	if (i == got->n && i == runs.n) {
		tf_items_free(&runs);
		return (0);
	}
	tf_fmt(i < got->n ? &got->v[i] : NULL, a, sizeof(a));
	tf_fmt(i < runs.n ? &runs.v[i] : NULL, b, sizeof(b));
	snprintf(msg, len, "item %zu of %zu/%zu: fpt_next() %s, fpt's run "
	    "API %s", i, got->n, runs.n, a, b);
	tf_items_free(&runs);
	return (1);
}

/*
 * Decode @data with both decoders over @p's code, as a Kaby Lake (6/158/10)
 * with its errata, in ptxed's loop; with @dump each side's items go to
 * stderr.  0 when fpt gives libipt's items (or a prefix of them and says
 * unsupported), with @offsets its errors at libipt's offsets too, and
 * fpt's run API gives what its fpt_next() gave (fpt_one_runs()); 1 when
 * they differ (@msg says where), -1 when a decoder cannot be made (@msg
 * says which).
 *
 * libipt 2.0.5's pt_sync_forward() reads the byte after the trace when
 * an aligned word of PSB payload ends it (pt_find_psb(); fixed in
 * 2.0.6), and the fuzzer's input can end on a page's edge: both decode a
 * copy with a zero byte after it.
 */
static inline int
fpt_one_run(struct fpt_one_prog *p, const uint8_t *data, size_t size,
    int dump, int offsets, char *msg, size_t len)
{
	struct pt_config cfg;
	struct fpt_config fc;
	struct tf_items want, got;
	const char *why;
	uint8_t *copy;
	char a[160];
	size_t i;
	int rc;

	if ((copy = malloc(size + 1)) == NULL) {
		snprintf(msg, len, "no memory for the input's copy");
		return (-1);
	}
	if (size > 0)
		memcpy(copy, data, size);
	copy[size] = 0;
	data = copy;
	pt_config_init(&cfg);
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = 6;
	cfg.cpu.model = 158;
	cfg.cpu.stepping = 10;
	pt_cpu_errata(&cfg.errata, &cfg.cpu);
	memset(&fc, 0, sizeof(fc));
	fc.read_code = tf_read_code;
	fc.map = tf_map;
	fc.ctx = &p->im;
	fc.intel = 1;
	fc.family = 6;
	fc.model = 158;
	fc.stepping = 10;
	/*
	 * Code that loops without trace gives blocks for ever, as many with
	 * either decoder: 300,000 instructions (about a second under the
	 * sanitizers) is where both stop.
	 */
	if (tf_run_both(data, size, &p->im, &cfg, &fc, 100000, 300000,
	    &want, &got, &why) < 0) {
		snprintf(msg, len, "%s failed", why);
		free(copy);
		return (-1);
	}
	for (i = 0; dump && (i < want.n || i < got.n); i++) {
		tf_fmt(i < want.n ? &want.v[i] : NULL, a, sizeof(a));
		fprintf(stderr, "%zu libipt %s\n", i, a);
		tf_fmt(i < got.n ? &got.v[i] : NULL, a, sizeof(a));
		fprintf(stderr, "%zu fpt    %s\n", i, a);
	}
	rc = tf_compare(&want, &got, msg, len);
	if (rc == 0 && offsets) {
		rc = fpt_one_offsets(&want, &got, msg, len);
		if (rc == 1 && fpt_one_noip_offset(&want, &got, data, size))
			rc = 0;
	} else if (rc == 1 && (fpt_one_noip_bug(&want, &got, data, size) ||
	    fpt_one_mode_bug(&want, &got)))
		rc = 0;
	if (rc == 0)
		rc = fpt_one_runs(data, size, &fc, &got, msg, len);
	tf_items_free(&want);
	tf_items_free(&got);
	free(copy);
	return (rc);
}

#endif /* !HWTR_FPT_ONE_H */
