/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Import raw Intel PT files described the way ptxed describes them: --pt
 * trace files, --raw memory images at a load address, --elf files whose
 * PT_LOAD segments are mapped as ptxed's load_elf() maps them, and the
 * decoder configuration (--cpu, --cpuid-0x15.*, --nom-freq, --mtc-freq).
 * Nothing says which process or thread ran, so every stream is global
 * (pid, tid, cpu -1) and every mapping is a HWTR_SB_MMAP record with pid
 * -1, which readers apply to every stream.
 *
 * Every input is opened, measured and (for ELF files) parsed before the
 * writer starts, so a bad option fails fast and leaves no file behind.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"

#define IMPORT_MAX_IMAGE (1ull << 30)	/* largest image read into memory */

/* The last path component, for stream names. */
static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return (s != NULL && s[1] != '\0' ? s + 1 : path);
}

/*
 * Check that bytes @f->from..@f->to of a file of @size bytes exist and
 * return the end of the range in *endp.
 */
static int
check_range(const char *opt, const struct hwtr_import_file *f, uint64_t size,
    uint64_t *endp, char *errbuf, size_t errlen)
{
	uint64_t end = f->to != 0 ? f->to : size;

	if (f->from >= size || end > size || end <= f->from) {
		hwtr_import_err(errbuf, errlen, "%s '%s': range 0x%" PRIx64
		    "-0x%" PRIx64 " is outside the file (%" PRIu64 " bytes)",
		    opt, f->path, f->from, end, size);
		return (-HWTR_E_INVAL);
	}
	*endp = end;
	return (0);
}

struct raw_elf {
	void		*buf;
	size_t		len;
	struct hwtr_elf_info info;
};

/* The inputs of one raw import, read and checked before any writing. */
struct raw_in {
	const struct hwtr_import_raw_opts *o;
	struct raw_elf	*elfs;
	void		**raws;
	size_t		*rawlen;
	int		*ptfd;
	uint64_t	*ptend, *rawend;
	struct hwtr_pevent *pev;
	char		*errbuf;
	size_t		errlen;
};

static int
raw_alloc(struct raw_in *in)
{
	const struct hwtr_import_raw_opts *o = in->o;
	size_t i;

	in->ptfd = calloc(o->npt, sizeof(*in->ptfd));
	for (i = 0; in->ptfd != NULL && i < o->npt; i++)
		in->ptfd[i] = -1;
	in->ptend = calloc(o->npt, sizeof(*in->ptend));
	in->raws = calloc(o->nraw + 1, sizeof(*in->raws));
	in->rawlen = calloc(o->nraw + 1, sizeof(*in->rawlen));
	in->rawend = calloc(o->nraw + 1, sizeof(*in->rawend));
	in->elfs = calloc(o->nelf + 1, sizeof(*in->elfs));
	if (in->ptfd == NULL || in->ptend == NULL || in->raws == NULL ||
	    in->rawlen == NULL || in->rawend == NULL || in->elfs == NULL) {
		hwtr_import_err(in->errbuf, in->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	return (0);
}

static void
raw_free(struct raw_in *in)
{
	const struct hwtr_import_raw_opts *o = in->o;
	size_t i;

	hwtr_pevent_free(in->pev);
	for (i = 0; in->ptfd != NULL && i < o->npt; i++)
		if (in->ptfd[i] >= 0)
			close(in->ptfd[i]);
	for (i = 0; in->raws != NULL && i < o->nraw; i++)
		free(in->raws[i]);
	for (i = 0; in->elfs != NULL && i < o->nelf; i++)
		free(in->elfs[i].buf);
	free(in->ptfd);
	free(in->ptend);
	free(in->raws);
	free(in->rawlen);
	free(in->rawend);
	free(in->elfs);
}

/* Open every --pt file and check its range. */
static int
raw_open_pt(struct raw_in *in)
{
	const struct hwtr_import_raw_opts *o = in->o;
	struct stat st;
	size_t i;
	int rc;

	for (i = 0; i < o->npt; i++) {
		in->ptfd[i] = open(o->pt[i].path, O_RDONLY | O_NONBLOCK |
		    O_CLOEXEC);
		if (in->ptfd[i] < 0 || fstat(in->ptfd[i], &st) != 0) {
			hwtr_import_err(in->errbuf, in->errlen, "--pt '%s': "
			    "%s", o->pt[i].path, strerror(errno));
			return (-HWTR_E_IO);
		}
		if (!S_ISREG(st.st_mode)) {
			hwtr_import_err(in->errbuf, in->errlen, "--pt '%s': "
			    "not a regular file", o->pt[i].path);
			return (-HWTR_E_INVAL);
		}
		if ((rc = check_range("--pt", &o->pt[i], (uint64_t)st.st_size,
		    &in->ptend[i], in->errbuf, in->errlen)) < 0)
			return (rc);
	}
	return (0);
}

/* Read every --raw file and check its range and load address. */
static int
raw_read_raws(struct raw_in *in)
{
	const struct hwtr_import_raw_opts *o = in->o;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t i;
	int rc;

	for (i = 0; i < o->nraw; i++) {
		rc = hwtr_read_file(o->raw[i].path, IMPORT_MAX_IMAGE,
		    &in->raws[i], &in->rawlen[i], ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(in->errbuf, in->errlen, "--raw '%s': "
			    "%s", o->raw[i].path, ebuf);
			return (rc);
		}
		if ((rc = check_range("--raw", &o->raw[i], in->rawlen[i],
		    &in->rawend[i], in->errbuf, in->errlen)) < 0)
			return (rc);
		if (hwtr_import_wraps(o->raw[i].addr, 0,
		    in->rawend[i] - o->raw[i].from)) {
			hwtr_import_err(in->errbuf, in->errlen, "--raw '%s': "
			    "load address 0x%" PRIx64 " plus size wraps around",
			    o->raw[i].path, o->raw[i].addr);
			return (-HWTR_E_INVAL);
		}
	}
	return (0);
}

/* The lowest PT_LOAD p_vaddr of @ei. */
static uint64_t
elf_min_vaddr(const struct hwtr_elf_info *ei)
{
	uint64_t minv = UINT64_MAX;
	size_t j;

	for (j = 0; j < ei->nload; j++)
		if (ei->load[j].vaddr < minv)
			minv = ei->load[j].vaddr;
	return (minv);
}

/* Read and parse --elf file @i; check it has contents that fit. */
static int
raw_read_elf(struct raw_in *in, size_t i)
{
	const struct hwtr_import_raw_opts *o = in->o;
	struct raw_elf *e = &in->elfs[i];
	char ebuf[HWTR_ERRMSG_MAX];
	uint64_t minv;
	size_t j;
	int rc;

	rc = hwtr_read_file(o->elf[i].path, IMPORT_MAX_IMAGE, &e->buf,
	    &e->len, ebuf, sizeof(ebuf));
	if (rc >= 0)
		rc = hwtr_elf_parse(e->buf, e->len, &e->info, ebuf,
		    sizeof(ebuf));
	if (rc < 0) {
		hwtr_import_err(in->errbuf, in->errlen, "--elf '%s': %s",
		    o->elf[i].path, ebuf);
		return (rc);
	}
	for (j = 0; j < e->info.nload; j++)
		if (e->info.load[j].filesz != 0)
			break;
	if (j == e->info.nload) {
		hwtr_import_err(in->errbuf, in->errlen, "--elf '%s': no "
		    "PT_LOAD segment with file contents", o->elf[i].path);
		return (-HWTR_E_FORMAT);
	}
	if (!o->elf[i].has_addr || o->elf[i].addr == 0)
		return (0);
	minv = elf_min_vaddr(&e->info);
	for (j = 0; j < e->info.nload; j++)
		if (hwtr_import_wraps(o->elf[i].addr,
		    e->info.load[j].vaddr - minv, e->info.load[j].filesz)) {
			hwtr_import_err(in->errbuf, in->errlen, "--elf '%s': "
			    "base 0x%" PRIx64 " puts segment %zu past the end "
			    "of the address space", o->elf[i].path,
			    o->elf[i].addr, j);
			return (-HWTR_E_INVAL);
		}
	return (0);
}

/* 1. Validate every input before writing anything. */
static int
raw_read(struct raw_in *in)
{
	size_t i;
	int rc;

	if ((rc = raw_alloc(in)) < 0 || (rc = raw_open_pt(in)) < 0 ||
	    (rc = raw_read_raws(in)) < 0)
		return (rc);
	for (i = 0; i < in->o->nelf; i++)
		if ((rc = raw_read_elf(in, i)) < 0)
			return (rc);
	return (hwtr_pevent_load(&in->pev, in->o, in->errbuf, in->errlen));
}

static int
raw_write_pt(struct raw_in *in, struct hwtr_aw *aw)
{
	const struct hwtr_import_raw_opts *o = in->o;
	struct hwtr_stream_desc sd;
	char name[128];
	uint32_t sid;
	size_t i;
	int rc;

	for (i = 0; i < o->npt; i++) {
		memset(&sd, 0, sizeof(sd));
		sd.format = HWTR_TF_INTEL_PT;
		sd.pid = sd.tid = sd.cpu = -1;
		snprintf(name, sizeof(name), "pt %s", base_name(o->pt[i].path));
		sd.name = name;
		sd.pt = o->pt_config;
		if ((rc = hwtr_aw_add_stream(aw, &sd, &sid)) < 0) {
			hwtr_import_err(in->errbuf, in->errlen, "--pt '%s': "
			    "%s", o->pt[i].path, hwtr_aw_errmsg(aw));
			return (rc);
		}
		if ((rc = hwtr_import_copy(aw, sid, in->ptfd[i], "--pt ",
		    o->pt[i].path, o->pt[i].from, in->ptend[i], in->errbuf,
		    in->errlen)) < 0)
			return (rc);
	}
	return (0);
}

static int
raw_write_raws(struct raw_in *in, struct hwtr_aw *aw)
{
	const struct hwtr_import_raw_opts *o = in->o;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	char key[HWTR_IMAGE_KEY_MAX];
	size_t i;
	int rc;

	for (i = 0; i < o->nraw; i++) {
		memset(&id, 0, sizeof(id));
		id.path = o->raw[i].path;
		id.kind = HWTR_IMG_MEMORY;
		rc = hwtr_aw_add_image(aw, &id, in->raws[i], in->rawlen[i],
		    key);
		if (rc >= 0) {
			memset(&r, 0, sizeof(r));
			r.type = HWTR_SB_MMAP;
			r.pid = r.tid = -1;
			r.u.mmap.addr = o->raw[i].addr;
			r.u.mmap.len = in->rawend[i] - o->raw[i].from;
			r.u.mmap.pgoff = o->raw[i].from;
			r.u.mmap.prot = 0x1 | 0x4;  /* PROT_READ | PROT_EXEC */
			r.u.mmap.path = o->raw[i].path;
			r.u.mmap.image = key;
			rc = hwtr_aw_sideband(aw, &r);
		}
		if (rc < 0) {
			hwtr_import_err(in->errbuf, in->errlen, "--raw '%s': "
			    "%s", o->raw[i].path, hwtr_aw_errmsg(aw));
			return (rc);
		}
	}
	return (0);
}

static int
raw_write_elf(struct raw_in *in, struct hwtr_aw *aw, size_t i)
{
	const struct hwtr_import_raw_opts *o = in->o;
	const struct hwtr_elf_info *ei = &in->elfs[i].info;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	char key[HWTR_IMAGE_KEY_MAX];
	uint64_t slide;
	size_t j;
	int rc;

	memset(&id, 0, sizeof(id));
	id.path = o->elf[i].path;
	id.kind = HWTR_IMG_FILE;
	memcpy(id.build_id, ei->build_id, ei->build_id_len);
	id.build_id_len = ei->build_id_len;
	if ((rc = hwtr_aw_add_image(aw, &id, in->elfs[i].buf, in->elfs[i].len,
	    key)) < 0) {
		hwtr_import_err(in->errbuf, in->errlen, "--elf '%s': %s",
		    o->elf[i].path, hwtr_aw_errmsg(aw));
		return (rc);
	}
	/*
	 * ptxed's load_elf(): without a base (or with base 0) each
	 * segment goes to its p_vaddr; with one, the lowest PT_LOAD
	 * p_vaddr goes to the base and the others keep their
	 * distance, whether the file is ET_EXEC or ET_DYN.
	 */
	slide = 0;
	if (o->elf[i].has_addr && o->elf[i].addr != 0)
		slide = o->elf[i].addr - elf_min_vaddr(ei);
	for (j = 0; j < ei->nload; j++) {
		if (ei->load[j].filesz == 0)
			continue;
		hwtr_import_seg_mmap(&r, ei, j, slide, o->elf[i].path, key);
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0) {
			hwtr_import_err(in->errbuf, in->errlen, "--elf '%s': "
			    "%s", o->elf[i].path, hwtr_aw_errmsg(aw));
			return (rc);
		}
	}
	return (0);
}

/* 2. Write: streams, then raw images, ELF images, pevent sideband. */
static int
raw_write(struct raw_in *in, struct hwtr_import_sink *sk)
{
	static const char *const caveats[] = {
		"imported from raw files: no process, thread, timing or "
		"sideband information; every mapping applies to every stream"
	};
	const struct hwtr_import_raw_opts *o = in->o;
	struct hwtr_capture_meta meta;
	size_t i;
	int rc;

	hwtr_import_meta_init(&meta, "import-raw");
	meta.caveats = caveats;
	meta.ncaveats = HWTR_NELEM(caveats);
	hwtr_import_meta_cpu(&meta, o->cpu_mode, &o->cpu);
	if ((rc = hwtr_import_begin(sk, &meta)) < 0 ||
	    (rc = raw_write_pt(in, sk->aw)) < 0 ||
	    (rc = raw_write_raws(in, sk->aw)) < 0)
		return (rc);
	for (i = 0; i < o->nelf; i++)
		if ((rc = raw_write_elf(in, sk->aw, i)) < 0)
			return (rc);
	return (hwtr_pevent_write(in->pev, sk->aw, in->errbuf, in->errlen));
}

static int
raw_load(const char *path, const struct hwtr_import_opts *io,
    struct hwtr_import_sink *sk)
{
	struct raw_in in;
	int rc;

	(void)path;
	if (io->raw == NULL || io->raw->npt == 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "nothing to import: "
		    "no --pt file");
		return (-HWTR_E_INVAL);
	}
	memset(&in, 0, sizeof(in));
	in.o = io->raw;
	in.errbuf = sk->errbuf;
	in.errlen = sk->errlen;
	if ((rc = raw_read(&in)) >= 0)
		rc = raw_write(&in, sk);
	raw_free(&in);
	return (rc < 0 ? rc : 0);
}

const struct hwtr_importer hwtr_importer_raw = {
	.name = "raw",
	.bid = NULL,		/* chosen by its options, never by a path */
	.load = raw_load,
};
