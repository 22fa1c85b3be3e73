/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ptxed's perf_event sideband files (--pevent:primary, --pevent:secondary)
 * for a raw import: each file is a sequence of perf_event records, as
 * perf's ring holds them, each ending in a sample_id laid out by
 * --pevent:sample-type.  format/perf_record.c parses them; this file turns
 * them into hwtrace sideband, converting perf time to TSC as ptxed does.
 * Private to libhwtrace (format/import_raw.c calls it).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"
#include "perf_record.h"

#define PEV_MAX_FILE	(1ull << 30)

struct pev_img {
	char		*path;
	void		*buf;
	size_t		len;
	char		key[HWTR_IMAGE_KEY_MAX];
};

struct hwtr_pevent {
	const struct hwtr_import_raw_opts *o;
	void		**buf;		/* each file's bytes FROM..TO */
	size_t		*len;
	struct pev_img	*img;
	size_t		nimg;
};

void
hwtr_pevent_free(struct hwtr_pevent *pe)
{
	size_t i;

	if (pe == NULL)
		return;
	for (i = 0; pe->buf != NULL && i < pe->o->npevent; i++)
		free(pe->buf[i]);
	for (i = 0; i < pe->nimg; i++) {
		free(pe->img[i].path);
		free(pe->img[i].buf);
	}
	free(pe->buf);
	free(pe->len);
	free(pe->img);
	free(pe);
}

/* The file an MMAP record names: under the sysroot, else as named. */
static struct pev_img *
pev_image(struct hwtr_pevent *pe, const char *name)
{
	struct pev_img *im, *nv;
	char path[4096], ebuf[HWTR_ERRMSG_MAX];
	size_t i;

	for (i = 0; i < pe->nimg; i++)
		if (strcmp(pe->img[i].path, name) == 0)
			return (pe->img[i].buf != NULL ? &pe->img[i] : NULL);
	if ((nv = realloc(pe->img, (pe->nimg + 1) * sizeof(*nv))) == NULL)
		return (NULL);
	pe->img = nv;
	im = &pe->img[pe->nimg];
	memset(im, 0, sizeof(*im));
	if ((im->path = strdup(name)) == NULL)
		return (NULL);
	pe->nimg++;
	if (strcmp(name, "[vdso]") == 0) {
		if (pe->o->pevent_vdso_x64 != NULL &&
		    hwtr_read_file(pe->o->pevent_vdso_x64, PEV_MAX_FILE,
		    &im->buf, &im->len, ebuf, sizeof(ebuf)) == 0)
			return (im);
		im->buf = NULL;
		return (NULL);
	}
	if (pe->o->pevent_sysroot != NULL) {
		snprintf(path, sizeof(path), "%s/%s", pe->o->pevent_sysroot,
		    name);
		if (hwtr_read_file(path, PEV_MAX_FILE, &im->buf, &im->len,
		    ebuf, sizeof(ebuf)) == 0)
			return (im);
	}
	if (hwtr_read_file(name, PEV_MAX_FILE, &im->buf, &im->len, ebuf,
	    sizeof(ebuf)) == 0)
		return (im);
	im->buf = NULL;
	return (NULL);
}

/* Walk file @i; with @aw NULL only check it. */
static int
pev_walk(struct hwtr_pevent *pe, size_t i, struct hwtr_aw *aw, char *errbuf,
    size_t errlen)
{
	const struct hwtr_import_raw_opts *o = pe->o;
	struct hwtr_perf_idlayout lay;
	struct hwtr_perf_rec pr;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	struct pev_img *im;
	const uint8_t *p = pe->buf[i];
	uint64_t t, q, rem, mult;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t off = 0;
	int rc;

	lay.sample_type = o->pevent_sample_type;
	lay.sample_id_all = 1;
	mult = o->pevent_time_mult != 0 ? o->pevent_time_mult : 1;
	while (off < pe->len[i]) {
		rc = hwtr_perf_rec_parse(p + off, pe->len[i] - off, &lay, &pr,
		    ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "--pevent '%s': byte "
			    "%zu: %s", o->pevent[i].path, off, ebuf);
			return (rc);
		}
		off += pr.size;
		if (aw == NULL)
			continue;
		/* ptxed's pev_time_to_tsc(), plus --pevent:tsc-offset. */
		t = pr.sid.time - o->pevent_time_zero;
		q = t / mult;
		rem = t % mult;
		t = (q << o->pevent_time_shift) +
		    ((rem << o->pevent_time_shift) / mult) +
		    o->pevent_tsc_offset;
		memset(&r, 0, sizeof(r));
		r.time = pr.sid.has_time ? t : 0;
		r.pid = pr.sid.has_tid ? (int32_t)pr.sid.pid : -1;
		r.tid = pr.sid.has_tid ? (int32_t)pr.sid.tid : -1;
		switch (pr.type) {
		case HWTR_PERF_MMAP:
		case HWTR_PERF_MMAP2:
			r.type = HWTR_SB_MMAP;
			r.pid = (int32_t)pr.u.mmap.pid;
			r.tid = (int32_t)pr.u.mmap.tid;
			r.u.mmap.addr = pr.u.mmap.addr;
			r.u.mmap.len = pr.u.mmap.len;
			r.u.mmap.pgoff = pr.u.mmap.pgoff;
			r.u.mmap.prot = pr.type == HWTR_PERF_MMAP2 ?
			    pr.u.mmap.prot : 0x1 | 0x4;
			r.u.mmap.path = pr.u.mmap.filename;
			/* ptxed: the kernel's image is every process's. */
			if (o->pevent_kernel_start != 0 &&
			    pr.u.mmap.addr >= o->pevent_kernel_start)
				r.pid = r.tid = -1;
			if ((im = pev_image(pe, pr.u.mmap.filename)) != NULL) {
				if (im->key[0] == '\0') {
					memset(&id, 0, sizeof(id));
					id.path = im->path;
					id.kind = HWTR_IMG_MEMORY;
					if ((rc = hwtr_aw_add_image(aw, &id,
					    im->buf, im->len, im->key)) < 0)
						goto werr;
				}
				r.u.mmap.image = im->key;
			}
			break;
		case HWTR_PERF_COMM:
			r.type = HWTR_SB_COMM;
			r.pid = (int32_t)pr.u.comm.pid;
			r.tid = (int32_t)pr.u.comm.tid;
			r.u.comm.comm = pr.u.comm.comm;
			r.u.comm.exec =
			    (pr.misc & HWTR_PERF_MISC_COMM_EXEC) != 0;
			break;
		case HWTR_PERF_FORK:
		case HWTR_PERF_EXIT:
			r.pid = (int32_t)pr.u.fork.pid;
			r.tid = (int32_t)pr.u.fork.tid;
			if (pr.type == HWTR_PERF_FORK &&
			    pr.u.fork.pid != pr.u.fork.ppid) {
				r.type = HWTR_SB_PROC_START;
				r.u.proc_start.ppid = (int32_t)pr.u.fork.ppid;
			} else if (pr.type == HWTR_PERF_FORK) {
				r.type = HWTR_SB_THREAD_START;
				r.u.thread_start.ptid =
				    (int32_t)pr.u.fork.ptid;
			} else
				r.type = pr.u.fork.pid == pr.u.fork.tid ?
				    HWTR_SB_PROC_EXIT : HWTR_SB_THREAD_EXIT;
			break;
		case HWTR_PERF_ITRACE_START:
			r.type = HWTR_SB_SWITCH;
			r.pid = (int32_t)pr.u.itrace_start.pid;
			r.tid = (int32_t)pr.u.itrace_start.tid;
			r.u.sw.cpu = pr.sid.has_cpu ? (int32_t)pr.sid.cpu : -1;
			break;
		case HWTR_PERF_SWITCH:
		case HWTR_PERF_SWITCH_CPU_WIDE:
			r.type = HWTR_SB_SWITCH;
			r.u.sw.cpu = pr.sid.has_cpu ? (int32_t)pr.sid.cpu : -1;
			r.u.sw.out = (pr.misc & HWTR_PERF_MISC_SWITCH_OUT) != 0;
			r.u.sw.preempt =
			    (pr.misc & HWTR_PERF_MISC_SWITCH_PREEMPT) != 0;
			break;
		case HWTR_PERF_LOST:
			r.type = HWTR_SB_LOST;
			r.u.lost.stream = UINT32_MAX;
			r.u.lost.reason = HWTR_LOST_SIDEBAND;
			r.u.lost.records = pr.u.lost.lost;
			break;
		default:
			continue;
		}
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
			goto werr;
	}
	return (0);
werr:
	hwtr_import_err(errbuf, errlen, "--pevent '%s': %s",
	    o->pevent[i].path, hwtr_aw_errmsg(aw));
	return (rc);
}

int
hwtr_pevent_load(struct hwtr_pevent **pep,
    const struct hwtr_import_raw_opts *o, char *errbuf, size_t errlen)
{
	struct hwtr_pevent *pe;
	char ebuf[HWTR_ERRMSG_MAX];
	void *whole;
	size_t i, len;
	uint64_t to;
	int rc;

	*pep = NULL;
	if (o->npevent == 0)
		return (0);
	if (o->pevent_time_shift > 63) {
		hwtr_import_err(errbuf, errlen, "--pevent:time-shift %u: "
		    "above 63", o->pevent_time_shift);
		return (-HWTR_E_INVAL);
	}
	if ((pe = calloc(1, sizeof(*pe))) == NULL ||
	    (pe->buf = calloc(o->npevent, sizeof(*pe->buf))) == NULL ||
	    (pe->len = calloc(o->npevent, sizeof(*pe->len))) == NULL) {
		if (pe != NULL)
			free(pe->buf);
		free(pe);
		hwtr_import_err(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	pe->o = o;
	for (i = 0; i < o->npevent; i++) {
		rc = hwtr_read_file(o->pevent[i].path, PEV_MAX_FILE, &whole,
		    &len, ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "--pevent '%s': %s",
			    o->pevent[i].path, ebuf);
			hwtr_pevent_free(pe);
			return (rc);
		}
		to = o->pevent[i].to != 0 ? o->pevent[i].to : len;
		if (o->pevent[i].from > len || to > len) {
			hwtr_import_err(errbuf, errlen, "--pevent '%s': range "
			    "%" PRIu64 "-%" PRIu64 " is past its %zu bytes",
			    o->pevent[i].path, o->pevent[i].from, to, len);
			free(whole);
			hwtr_pevent_free(pe);
			return (-HWTR_E_INVAL);
		}
		memmove(whole, (char *)whole + o->pevent[i].from,
		    (size_t)(to - o->pevent[i].from));
		pe->buf[i] = whole;
		pe->len[i] = (size_t)(to - o->pevent[i].from);
		if ((rc = pev_walk(pe, i, NULL, errbuf, errlen)) < 0) {
			hwtr_pevent_free(pe);
			return (rc);
		}
	}
	*pep = pe;
	return (0);
}

int
hwtr_pevent_write(struct hwtr_pevent *pe, struct hwtr_aw *aw, char *errbuf,
    size_t errlen)
{
	size_t i;
	int rc;

	for (i = 0; pe != NULL && i < pe->o->npevent; i++)
		if ((rc = pev_walk(pe, i, aw, errbuf, errlen)) < 0)
			return (rc);
	return (0);
}
