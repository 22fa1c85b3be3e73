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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"

#define IMPORT_CHUNK	(4u << 20)	/* bytes per stream chunk */
#define IMPORT_MAX_IMAGE (1ull << 30)	/* largest image read into memory */

void
hwtr_import_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

uint32_t
hwtr_import_prot(uint32_t pflags)
{
	uint32_t prot = 0;

	/* PF_R/W/X to PROT_READ/WRITE/EXEC, whose values differ. */
	if (pflags & HWTR_ELF_PF_R)
		prot |= 0x1;
	if (pflags & HWTR_ELF_PF_W)
		prot |= 0x2;
	if (pflags & HWTR_ELF_PF_X)
		prot |= 0x4;
	return (prot);
}

/* Copy one PT file range into stream @id, chunk by chunk. */
int
hwtr_import_copy(struct hwtr_aw *aw, uint32_t id, int fd, const char *label,
    const char *path, uint64_t from, uint64_t end, char *errbuf, size_t errlen)
{
	uint64_t off = from;
	size_t want;
	ssize_t got;
	void *buf;
	int rc = 0;

	if ((buf = malloc(IMPORT_CHUNK)) == NULL) {
		hwtr_import_err(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	while (off < end) {
		want = end - off > IMPORT_CHUNK ? IMPORT_CHUNK :
		    (size_t)(end - off);
		got = pread(fd, buf, want, (off_t)off);
		if (got <= 0) {
			hwtr_import_err(errbuf, errlen, "%s'%s': cannot "
			    "read at offset 0x%" PRIx64 ": %s", label, path,
			    off, got < 0 ? strerror(errno) : "file shrank");
			rc = -HWTR_E_IO;
			break;
		}
		rc = hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, buf, (size_t)got);
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "%s'%s': %s", label,
			    path, hwtr_aw_errmsg(aw));
			break;
		}
		off += (uint64_t)got;
	}
	free(buf);
	return (rc);
}

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

static int
raw_load(const char *path, const struct hwtr_import_opts *io,
    struct hwtr_import_sink *sk)
{
	static const char *const caveats[] = {
		"imported from raw files: no process, thread, timing or "
		"sideband information; every mapping applies to every stream"
	};
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	struct raw_elf *elfs = NULL;
	void **raws = NULL;
	size_t *rawlen = NULL;
	int *ptfd = NULL;
	uint64_t *ptend = NULL, *rawend = NULL, minv, slide;
	struct hwtr_aw *aw = NULL;
	struct stat st;
	char key[HWTR_IMAGE_KEY_MAX], name[128], ebuf[256];
	size_t i, j;
	uint32_t sid;
	int rc = 0;
	const struct hwtr_import_raw_opts *o = io->raw;
	struct hwtr_pevent *pev = NULL;
	char *errbuf = sk->errbuf;
	size_t errlen = sk->errlen;

	(void)path;
	if (o == NULL || o->npt == 0) {
		hwtr_import_err(errbuf, errlen, "nothing to import: no --pt "
		    "file");
		return (-HWTR_E_INVAL);
	}
	ptfd = calloc(o->npt, sizeof(*ptfd));
	ptend = calloc(o->npt, sizeof(*ptend));
	raws = calloc(o->nraw + 1, sizeof(*raws));
	rawlen = calloc(o->nraw + 1, sizeof(*rawlen));
	rawend = calloc(o->nraw + 1, sizeof(*rawend));
	elfs = calloc(o->nelf + 1, sizeof(*elfs));
	if (ptfd == NULL || ptend == NULL || raws == NULL || rawlen == NULL ||
	    rawend == NULL || elfs == NULL) {
		hwtr_import_err(errbuf, errlen, "out of memory");
		rc = -HWTR_E_NOMEM;
		goto out;
	}
	for (i = 0; i < o->npt; i++)
		ptfd[i] = -1;

	/* 1. Validate every input before writing anything. */
	for (i = 0; i < o->npt; i++) {
		ptfd[i] = open(o->pt[i].path, O_RDONLY | O_CLOEXEC);
		if (ptfd[i] < 0 || fstat(ptfd[i], &st) != 0) {
			hwtr_import_err(errbuf, errlen, "--pt '%s': %s",
			    o->pt[i].path, strerror(errno));
			rc = -HWTR_E_IO;
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			hwtr_import_err(errbuf, errlen, "--pt '%s': not a "
			    "regular file", o->pt[i].path);
			rc = -HWTR_E_INVAL;
			goto out;
		}
		if ((rc = check_range("--pt", &o->pt[i], (uint64_t)st.st_size,
		    &ptend[i], errbuf, errlen)) < 0)
			goto out;
	}
	for (i = 0; i < o->nraw; i++) {
		rc = hwtr_read_file(o->raw[i].path, IMPORT_MAX_IMAGE, &raws[i],
		    &rawlen[i], ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': %s",
			    o->raw[i].path, ebuf);
			goto out;
		}
		if ((rc = check_range("--raw", &o->raw[i], rawlen[i],
		    &rawend[i], errbuf, errlen)) < 0)
			goto out;
		if (hwtr_import_wraps(o->raw[i].addr, 0,
		    rawend[i] - o->raw[i].from)) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': load "
			    "address 0x%" PRIx64 " plus size wraps around",
			    o->raw[i].path, o->raw[i].addr);
			rc = -HWTR_E_INVAL;
			goto out;
		}
	}
	for (i = 0; i < o->nelf; i++) {
		rc = hwtr_read_file(o->elf[i].path, IMPORT_MAX_IMAGE,
		    &elfs[i].buf, &elfs[i].len, ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': %s",
			    o->elf[i].path, ebuf);
			goto out;
		}
		rc = hwtr_elf_parse(elfs[i].buf, elfs[i].len, &elfs[i].info,
		    ebuf, sizeof(ebuf));
		if (rc < 0) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': %s",
			    o->elf[i].path, ebuf);
			goto out;
		}
		for (j = 0; j < elfs[i].info.nload; j++)
			if (elfs[i].info.load[j].filesz != 0)
				break;
		if (j == elfs[i].info.nload) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': no "
			    "PT_LOAD segment with file contents",
			    o->elf[i].path);
			rc = -HWTR_E_FORMAT;
			goto out;
		}
		if (o->elf[i].has_addr && o->elf[i].addr != 0) {
			minv = UINT64_MAX;
			for (j = 0; j < elfs[i].info.nload; j++)
				if (elfs[i].info.load[j].vaddr < minv)
					minv = elfs[i].info.load[j].vaddr;
			for (j = 0; j < elfs[i].info.nload; j++)
				if (hwtr_import_wraps(o->elf[i].addr,
				    elfs[i].info.load[j].vaddr - minv,
				    elfs[i].info.load[j].filesz)) {
					hwtr_import_err(errbuf, errlen,
					    "--elf '%s': base 0x%" PRIx64
					    " puts segment %zu past the end of "
					    "the address space", o->elf[i].path,
					    o->elf[i].addr, j);
					rc = -HWTR_E_INVAL;
					goto out;
				}
		}
	}

	if ((rc = hwtr_pevent_load(&pev, o, errbuf, errlen)) < 0)
		goto out;

	/* 2. Write. */
	hwtr_import_meta_init(&meta, "import-raw");
	meta.caveats = caveats;
	meta.ncaveats = HWTR_NELEM(caveats);
	if (o->cpu_mode == HWTR_IMPORT_CPU_GIVEN)
		meta.cpu = o->cpu;
	else if (o->cpu_mode == HWTR_IMPORT_CPU_AUTO)
		hwtr_cpu_host(&meta.cpu);
	if ((rc = hwtr_import_begin(sk, &meta)) < 0)
		goto out;
	aw = sk->aw;
	for (i = 0; i < o->npt; i++) {
		memset(&sd, 0, sizeof(sd));
		sd.format = HWTR_TF_INTEL_PT;
		sd.pid = sd.tid = sd.cpu = -1;
		snprintf(name, sizeof(name), "pt %s", base_name(o->pt[i].path));
		sd.name = name;
		sd.pt = o->pt_config;
		if ((rc = hwtr_aw_add_stream(aw, &sd, &sid)) < 0) {
			hwtr_import_err(errbuf, errlen, "--pt '%s': %s",
			    o->pt[i].path, hwtr_aw_errmsg(aw));
			goto out;
		}
		if ((rc = hwtr_import_copy(aw, sid, ptfd[i], "--pt ",
		    o->pt[i].path, o->pt[i].from, ptend[i], errbuf,
		    errlen)) < 0)
			goto out;
	}
	for (i = 0; i < o->nraw; i++) {
		memset(&id, 0, sizeof(id));
		id.path = o->raw[i].path;
		id.kind = HWTR_IMG_MEMORY;
		if ((rc = hwtr_aw_add_image(aw, &id, raws[i], rawlen[i],
		    key)) < 0) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': %s",
			    o->raw[i].path, hwtr_aw_errmsg(aw));
			goto out;
		}
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_MMAP;
		r.pid = r.tid = -1;
		r.u.mmap.addr = o->raw[i].addr;
		r.u.mmap.len = rawend[i] - o->raw[i].from;
		r.u.mmap.pgoff = o->raw[i].from;
		r.u.mmap.prot = 0x1 | 0x4;	/* PROT_READ | PROT_EXEC */
		r.u.mmap.path = o->raw[i].path;
		r.u.mmap.image = key;
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': %s",
			    o->raw[i].path, hwtr_aw_errmsg(aw));
			goto out;
		}
	}
	for (i = 0; i < o->nelf; i++) {
		const struct hwtr_elf_info *ei = &elfs[i].info;

		memset(&id, 0, sizeof(id));
		id.path = o->elf[i].path;
		id.kind = HWTR_IMG_FILE;
		memcpy(id.build_id, ei->build_id, ei->build_id_len);
		id.build_id_len = ei->build_id_len;
		if ((rc = hwtr_aw_add_image(aw, &id, elfs[i].buf, elfs[i].len,
		    key)) < 0) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': %s",
			    o->elf[i].path, hwtr_aw_errmsg(aw));
			goto out;
		}
		/*
		 * ptxed's load_elf(): without a base (or with base 0) each
		 * segment goes to its p_vaddr; with one, the lowest PT_LOAD
		 * p_vaddr goes to the base and the others keep their
		 * distance, whether the file is ET_EXEC or ET_DYN.
		 */
		slide = 0;
		if (o->elf[i].has_addr && o->elf[i].addr != 0) {
			minv = UINT64_MAX;
			for (j = 0; j < ei->nload; j++)
				if (ei->load[j].vaddr < minv)
					minv = ei->load[j].vaddr;
			slide = o->elf[i].addr - minv;
		}
		for (j = 0; j < ei->nload; j++) {
			if (ei->load[j].filesz == 0)
				continue;
			memset(&r, 0, sizeof(r));
			r.type = HWTR_SB_MMAP;
			r.pid = r.tid = -1;
			r.u.mmap.addr = ei->load[j].vaddr + slide;
			r.u.mmap.len = ei->load[j].filesz;
			r.u.mmap.pgoff = ei->load[j].offset;
			r.u.mmap.prot = hwtr_import_prot(ei->load[j].flags);
			r.u.mmap.path = o->elf[i].path;
			r.u.mmap.image = key;
			memcpy(r.u.mmap.build_id, ei->build_id,
			    ei->build_id_len);
			r.u.mmap.build_id_len = (uint8_t)ei->build_id_len;
			if ((rc = hwtr_aw_sideband(aw, &r)) < 0) {
				hwtr_import_err(errbuf, errlen, "--elf '%s': "
				    "%s", o->elf[i].path, hwtr_aw_errmsg(aw));
				goto out;
			}
		}
	}
	rc = hwtr_pevent_write(pev, aw, errbuf, errlen);
out:
	hwtr_pevent_free(pev);
	for (i = 0; ptfd != NULL && i < o->npt; i++)
		if (ptfd[i] >= 0)
			close(ptfd[i]);
	for (i = 0; raws != NULL && i < o->nraw; i++)
		free(raws[i]);
	for (i = 0; elfs != NULL && i < o->nelf; i++)
		free(elfs[i].buf);
	free(ptfd);
	free(ptend);
	free(raws);
	free(rawlen);
	free(rawend);
	free(elfs);
	return (rc < 0 ? rc : 0);
}

const struct hwtr_importer hwtr_importer_raw = {
	.name = "raw",
	.bid = NULL,		/* chosen by its options, never by a path */
	.load = raw_load,
};

int
hwtr_import_raw(const struct hwtr_import_raw_opts *o, const char *out,
    char *errbuf, size_t errlen)
{
	struct hwtr_import_opts io;

	memset(&io, 0, sizeof(io));
	io.format = "raw";
	io.raw = o;
	io.aw_opts = o != NULL ? o->aw_opts : NULL;
	return (hwtr_import(NULL, &io, out, errbuf, errlen));
}
