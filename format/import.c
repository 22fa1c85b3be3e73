/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What every importer shares, at the bottom of the importers: the error
 * message, the sink's archive opened once, the meta of an import, PT_LOAD
 * flags as mapping protections, and a file range copied into a stream.
 * The table of importers and the driver that runs them are in importers.c.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"

#define IMPORT_CHUNK	(4u << 20)	/* bytes per stream chunk */

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

void
hwtr_import_seg_mmap(struct hwtr_sb_rec *r, const struct hwtr_elf_info *ei,
    size_t j, uint64_t slide, const char *path, const char *key)
{
	assert(j < ei->nload && ei->build_id_len <= HWTR_BUILD_ID_MAX);
	memset(r, 0, sizeof(*r));
	r->type = HWTR_SB_MMAP;
	r->pid = r->tid = -1;
	r->u.mmap.addr = ei->load[j].vaddr + slide;
	r->u.mmap.len = ei->load[j].filesz;
	r->u.mmap.pgoff = ei->load[j].offset;
	r->u.mmap.prot = hwtr_import_prot(ei->load[j].flags);
	r->u.mmap.path = path;
	r->u.mmap.image = key;
	memcpy(r->u.mmap.build_id, ei->build_id, ei->build_id_len);
	r->u.mmap.build_id_len = (uint8_t)ei->build_id_len;
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

int
hwtr_import_begin(struct hwtr_import_sink *sk,
    const struct hwtr_capture_meta *meta)
{
	char ebuf[HWTR_ERRMSG_MAX];
	int rc;

	if (sk->aw != NULL) {
		hwtr_import_err(sk->errbuf, sk->errlen, "archive '%s' opened "
		    "twice", sk->out);
		return (-HWTR_E_INVAL);
	}
	ebuf[0] = '\0';
	rc = hwtr_aw_open(&sk->aw, sk->out, meta, sk->aw_opts, ebuf,
	    sizeof(ebuf));
	if (rc < 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "cannot write '%s': "
		    "%s", sk->out, ebuf[0] ? ebuf : hwtr_errstr(rc));
		sk->aw = NULL;
	}
	return (rc);
}

void
hwtr_import_meta_init(struct hwtr_capture_meta *meta, const char *source)
{
	memset(meta, 0, sizeof(*meta));
	meta->host = "unknown";
	meta->source = source;
	meta->sideband_origin = "import";
}

void
hwtr_import_meta_cpu(struct hwtr_capture_meta *meta,
    enum hwtr_import_cpu mode, const struct hwtr_cpu *cpu)
{
	if (mode == HWTR_IMPORT_CPU_GIVEN)
		meta->cpu = *cpu;
	else if (mode == HWTR_IMPORT_CPU_AUTO)
		hwtr_cpu_host(&meta->cpu);
}
