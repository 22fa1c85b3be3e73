/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Import the raw dump of FreeBSD's hwt(8) (`hwt -r -w FILE`): the bytes
 * of the trace buffer, written chunk after chunk as hwt(8) reads them,
 * with no header and nothing else (usr.sbin/hwt, its PT backend's raw
 * mode).  The Intel PT backend starts tracing with a PSB, so a dump
 * starts with one: that is what the bid looks for.  The dump says nothing
 * of processes, threads, mappings or time; the images come from the
 * command line (--elf FILE[:BASE], mapped as a raw import maps them), and
 * the archive's caveats and its sideband origin say what is missing.  The
 * decoder configuration is the FreeBSD backend's (BranchEn, user mode,
 * no TSC) unless --cpu and the --mtc-freq/--nom-freq options say more.
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

#define HWT_MAX_IMAGE	(1ull << 30)
#define HWT_PSB_LEN	16

static const uint8_t hwt_psb[HWT_PSB_LEN] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
};

/* A regular file that starts with a PSB packet: 40 (nothing is sure). */
static int
hwt_bid(const char *path)
{
	uint8_t b[HWT_PSB_LEN];
	struct stat st;
	ssize_t n;
	int fd;

	if (path == NULL || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return (0);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	n = read(fd, b, sizeof(b));
	close(fd);
	return (n == (ssize_t)sizeof(b) && memcmp(b, hwt_psb,
	    sizeof(b)) == 0 ? 40 : 0);
}

/* --elf @f: the image and an MMAP record per PT_LOAD with contents. */
static int
hwt_elf(struct hwtr_aw *aw, const struct hwtr_import_file *f, char *errbuf,
    size_t errlen)
{
	struct hwtr_elf_info *ei;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	char key[HWTR_IMAGE_KEY_MAX], ebuf[HWTR_ERRMSG_MAX];
	uint64_t slide = 0, minv = UINT64_MAX;
	void *buf = NULL;
	size_t len, j, n = 0;
	int rc;

	if ((ei = calloc(1, sizeof(*ei))) == NULL)
		return (-HWTR_E_NOMEM);
	ebuf[0] = '\0';
	rc = hwtr_read_file(f->path, HWT_MAX_IMAGE, &buf, &len, ebuf,
	    sizeof(ebuf));
	if (rc >= 0)
		rc = hwtr_elf_parse(buf, len, ei, ebuf, sizeof(ebuf));
	if (rc < 0) {
		hwtr_import_err(errbuf, errlen, "--elf '%s': %s", f->path,
		    ebuf);
		goto out;
	}
	memset(&id, 0, sizeof(id));
	id.path = f->path;
	id.kind = HWTR_IMG_FILE;
	memcpy(id.build_id, ei->build_id, ei->build_id_len);
	id.build_id_len = ei->build_id_len;
	if ((rc = hwtr_aw_add_image(aw, &id, buf, len, key)) < 0) {
		hwtr_import_err(errbuf, errlen, "--elf '%s': %s", f->path,
		    hwtr_aw_errmsg(aw));
		goto out;
	}
	for (j = 0; j < ei->nload; j++)
		if (ei->load[j].vaddr < minv)
			minv = ei->load[j].vaddr;
	if (f->has_addr && f->addr != 0)
		slide = f->addr - minv;
	for (j = 0; j < ei->nload; j++) {
		if (ei->load[j].filesz == 0)
			continue;
		if (hwtr_import_wraps(ei->load[j].vaddr, slide,
		    ei->load[j].filesz)) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': base "
			    "0x%" PRIx64 " puts segment %zu past the end of "
			    "the address space", f->path, f->addr, j);
			rc = -HWTR_E_INVAL;
			goto out;
		}
		hwtr_import_seg_mmap(&r, ei, j, slide, f->path, key);
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': %s",
			    f->path, hwtr_aw_errmsg(aw));
			goto out;
		}
		n++;
	}
	if (n == 0) {
		hwtr_import_err(errbuf, errlen, "--elf '%s': no PT_LOAD "
		    "segment with file contents", f->path);
		rc = -HWTR_E_FORMAT;
	}
out:
	free(buf);
	free(ei);
	return (rc < 0 ? rc : 0);
}

static int
hwt_load(const char *path, const struct hwtr_import_opts *io,
    struct hwtr_import_sink *sk)
{
	static const char *const caveats[] = {
		"hwt(8) raw dump (hwt -r -w): trace bytes only; no sideband "
		"(no processes, threads, mappings or times): the images are "
		"the ones named on the command line (--elf), mapped for the "
		"whole trace",
		"hwt(8) writes every buffer's chunks into one file: a dump of "
		"more than one thread or CPU interleaves them"
	};
	const struct hwtr_import_raw_opts *o = io->raw;
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct stat st;
	uint32_t sid;
	size_t i;
	int fd, rc;

	if (hwt_bid(path) == 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "'%s' is not a hwt(8) "
		    "raw dump: it does not start with a PSB packet", path);
		return (-HWTR_E_FORMAT);
	}
	if (o == NULL || o->nelf == 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "'%s' (a hwt(8) raw "
		    "dump) names no image: give the traced program with "
		    "--elf FILE[:BASE]", path);
		return (-HWTR_E_INVAL);
	}
	if ((fd = hwtr_in_open(path, &st, sk->errbuf, sk->errlen)) < 0)
		return (fd);
	hwtr_import_meta_init(&meta, "hwt");
	meta.source_version = "raw dump (hwt -r)";
	meta.caveats = caveats;
	meta.ncaveats = HWTR_NELEM(caveats);
	hwtr_import_meta_cpu(&meta, o->cpu_mode, &o->cpu);
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = sd.tid = sd.cpu = -1;
	sd.name = "hwt(8) raw dump";
	sd.pt = o->pt_config;
	/* FreeBSD's PT backend: BranchEn and user mode, never TSCEn. */
	if (sd.pt.options == 0)
		sd.pt.options = HWTR_PT_OPT_BRANCH | HWTR_PT_OPT_USER;
	if ((rc = hwtr_import_begin(sk, &meta)) < 0)
		goto out;
	if ((rc = hwtr_aw_add_stream(sk->aw, &sd, &sid)) < 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "'%s': %s", path,
		    hwtr_aw_errmsg(sk->aw));
		goto out;
	}
	if ((rc = hwtr_import_copy(sk->aw, sid, fd, "", path, 0,
	    (uint64_t)st.st_size, sk->errbuf, sk->errlen)) < 0)
		goto out;
	sk->trace_bytes = (uint64_t)st.st_size;
	for (i = 0; i < o->nelf && rc == 0; i++)
		rc = hwt_elf(sk->aw, &o->elf[i], sk->errbuf, sk->errlen);
out:
	close(fd);
	return (rc < 0 ? rc : 0);
}

const struct hwtr_importer hwtr_importer_hwt = {
	.name = "hwt",
	.bid = hwt_bid,
	.load = hwt_load,
};
