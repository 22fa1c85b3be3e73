/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Test helper: decode a PT buffer with libipt's instruction flow decoder
 * (the reference, not our code) over a memory image given by a callback,
 * and collect the instruction addresses it yields, in order.  Decode
 * errors are counted with the offset and code of the first one.
 */

#ifndef HWTR_T_PTDEC_H
#define HWTR_T_PTDEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

struct ptdec_result {
	uint64_t	*ip;
	uint8_t		*mode;			/* enum pt_exec_mode of each */
	size_t		n, cap;
	int		nerrors;
	int		first_error;		/* libipt error code */
	uint64_t	first_error_offset;
	size_t		first_error_index;	/* instructions before it */
};

static inline int
ptdec_push_mode(struct ptdec_result *r, uint64_t ip, int mode)
{
	uint64_t *p;
	uint8_t *m;
	size_t ncap;

	if (r->n == r->cap) {
		ncap = r->cap ? 2 * r->cap : 1024;
		if ((p = realloc(r->ip, ncap * sizeof(*p))) == NULL)
			return (-1);
		r->ip = p;
		if ((m = realloc(r->mode, ncap)) == NULL)
			return (-1);
		r->mode = m;
		r->cap = ncap;
	}
	r->mode[r->n] = (uint8_t)mode;
	r->ip[r->n++] = ip;
	return (0);
}

static inline int
ptdec_push(struct ptdec_result *r, uint64_t ip)
{
	return (ptdec_push_mode(r, ip, ptem_unknown));
}

static inline void
ptdec_error(struct ptdec_result *r, struct pt_insn_decoder *dec, int err)
{
	if (r->nerrors++ == 0) {
		r->first_error = err;
		r->first_error_index = r->n;
		(void)pt_insn_get_offset(dec, &r->first_error_offset);
	}
}

/*
 * Decode @buf[0..@len) reading code through @cb; returns 0, or -1 when the
 * decoder could not even be set up.
 */
static inline int
ptdec_run(const uint8_t *buf, size_t len, read_memory_callback_t *cb,
    void *cbarg, struct ptdec_result *r)
{
	struct pt_insn_decoder *dec;
	struct pt_config cfg;
	struct pt_image *img;
	struct pt_event ev;
	struct pt_insn insn;
	int status;

	memset(r, 0, sizeof(*r));
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)buf;
	cfg.end = (uint8_t *)(uintptr_t)buf + len;
	if ((dec = pt_insn_alloc_decoder(&cfg)) == NULL)
		return (-1);
	img = pt_insn_get_image(dec);
	if (img == NULL || pt_image_set_callback(img, cb, cbarg) < 0) {
		pt_insn_free_decoder(dec);
		return (-1);
	}
	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status < 0) {
			if (status != -pte_eos)
				ptdec_error(r, dec, status);
			break;
		}
		for (;;) {
			while (status >= 0 && (status & pts_event_pending))
				status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status < 0)
				break;
			if (ptdec_push_mode(r, insn.ip, insn.mode) < 0) {
				pt_insn_free_decoder(dec);
				return (-1);
			}
		}
		if (status == -pte_eos)
			break;
		ptdec_error(r, dec, status);
	}
	pt_insn_free_decoder(dec);
	return (0);
}

#endif /* !HWTR_T_PTDEC_H */
