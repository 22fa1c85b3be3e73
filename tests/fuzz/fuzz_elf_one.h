/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_elf_one.h: one input of the hostile-binary fuzzer, an ELF file put
 * in place of the program in a small fixed archive: the Intel PT of an
 * ixgen walk over the calls fixture, one thread, and the mappings of the
 * fixture's executable segments, whose image is the input.  The archive
 * is indexed by the library (hwtr_ix_run(), one job, nothing read from
 * this machine) into a temporary database, and a few verbs that read
 * what the index took from the image (symbols, lines, inlines) are run
 * on it.  Any answer is right but a crash, a sanitizer report, a hang or
 * a refusal without a message.
 * Shared by the libFuzzer target (fuzz_elf.c) and the seed-corpus test
 * (t_elf_seeds.c), so that what the fuzzer checks is what the suite
 * replays.
 */

#ifndef HWTR_FUZZ_ELF_ONE_H
#define HWTR_FUZZ_ELF_ONE_H

#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwtrace.h"

#define FUZZ_ELF_MAXMAP	8

/* What every input's archive has but its image. */
struct fuzz_elf_base {
	uint8_t		*pt;		/* the walk's Intel PT */
	size_t		ptlen;
	struct {
		uint64_t	addr, pgoff, len;
	}		map[FUZZ_ELF_MAXMAP];
	size_t		nmap;
	char		dir[256];	/* a temporary directory of our own */
	char		elf[300], ar[300], db[300];
};

/* Read all of @path into a malloc'd buffer; NULL on failure. */
static inline uint8_t *
fuzz_elf_slurp(const char *path, size_t *lenp)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (fp == NULL)
		return (NULL);
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL &&
	    fread(buf, 1, (size_t)n, fp) == (size_t)n)
		*lenp = (size_t)n;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return (buf);
}

/*
 * Fill @b: the executable segments of the (sane) program @prog, the PT
 * of file @pt, and a new temporary directory under @tmp (NULL: $TMPDIR,
 * else /tmp).  0, or -1 with @err saying why.
 */
static inline int
fuzz_elf_base_init(struct fuzz_elf_base *b, const char *prog, const char *pt,
    const char *tmp, char *err, size_t errlen)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	uint8_t *elf;
	size_t len, i;

	memset(b, 0, sizeof(*b));
	if ((b->pt = fuzz_elf_slurp(pt, &b->ptlen)) == NULL ||
	    b->ptlen == 0) {
		snprintf(err, errlen, "%s: cannot read the walk's trace", pt);
		return (-1);
	}
	if ((elf = fuzz_elf_slurp(prog, &len)) == NULL) {
		snprintf(err, errlen, "%s: cannot read it", prog);
		return (-1);
	}
	eh = (const Elf64_Ehdr *)elf;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phoff > len ||
	    eh->e_phentsize < sizeof(*ph) ||
	    (len - eh->e_phoff) / eh->e_phentsize < eh->e_phnum) {
		free(elf);
		snprintf(err, errlen, "%s: not a 64-bit ELF file", prog);
		return (-1);
	}
	for (i = 0; i < eh->e_phnum && b->nmap < FUZZ_ELF_MAXMAP; i++) {
		ph = (const Elf64_Phdr *)(elf + eh->e_phoff +
		    i * eh->e_phentsize);
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		b->map[b->nmap].addr = ph->p_vaddr & ~0xfffULL;
		b->map[b->nmap].pgoff = ph->p_offset & ~0xfffULL;
		b->map[b->nmap].len = ph->p_vaddr + ph->p_filesz -
		    b->map[b->nmap].addr;
		b->nmap++;
	}
	free(elf);
	if (b->nmap == 0) {
		snprintf(err, errlen, "%s: no executable segment", prog);
		return (-1);
	}
	if (tmp == NULL)
		tmp = getenv("TMPDIR");
	snprintf(b->dir, sizeof(b->dir), "%.200s/fuzz_elf.XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(b->dir) == NULL) {
		snprintf(err, errlen, "%.256s: cannot make a temporary directory",
		    b->dir);
		return (-1);
	}
	snprintf(b->elf, sizeof(b->elf), "%.256s/calls", b->dir);
	snprintf(b->ar, sizeof(b->ar), "%.256s/a.hwtrace", b->dir);
	snprintf(b->db, sizeof(b->db), "%.256s/a.db", b->dir);
	return (0);
}

/* Remove what fuzz_elf_one() left and the directory; free @b's buffers. */
static inline void
fuzz_elf_base_free(struct fuzz_elf_base *b)
{
	char p[320];

	unlink(b->elf);
	unlink(b->ar);
	unlink(b->db);
	snprintf(p, sizeof(p), "%s-wal", b->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s-journal", b->db);
	unlink(p);
	if (b->dir[0] != '\0')
		rmdir(b->dir);
	free(b->pt);
	memset(b, 0, sizeof(*b));
}

/*
 * Write the archive of @b with the @size bytes of @data as the program's
 * image, its trace in each of @nthreads threads (1 for the fuzzer).  0
 * when written; 1 when the writer refused the input with a message (an
 * answer), 2 when without one, -1 when the harness failed; @msg says
 * why.
 */
static inline int
fuzz_elf_archive_n(struct fuzz_elf_base *b, const uint8_t *data, size_t size,
    int nthreads, char *msg, size_t len)
{
	struct hwtr_capture_meta meta;
	struct hwtr_aw_opts ao;
	struct hwtr_stream_desc sd;
	struct hwtr_sb_rec rec;
	struct hwtr_aw *aw;
	char key[HWTR_IMAGE_KEY_MAX], errbuf[256];
	uint32_t id;
	size_t i;
	FILE *fp;
	int rc, t;

	fp = fopen(b->elf, "wb");
	if (fp == NULL || fwrite(data, 1, size, fp) != size ||
	    fclose(fp) != 0) {
		snprintf(msg, len, "%.300s: cannot write the input", b->elf);
		return (-1);
	}
	memset(&meta, 0, sizeof(meta));
	meta.host = "fuzz_elf";
	meta.source = "synthetic";
	meta.cpu.vendor = HWTR_CPU_INTEL;
	meta.cpu.family = 6;
	meta.cpu.model = 158;
	meta.cpu.stepping = 10;
	memset(&ao, 0, sizeof(ao));
	ao.threads = -1;
	ao.no_partial = 1;
	ao.level = 1;
	ao.debug_info = -1;
	if (hwtr_aw_open(&aw, b->ar, &meta, &ao, errbuf, sizeof(errbuf)) < 0) {
		snprintf(msg, len, "%.300s: %.256s", b->ar, errbuf);
		return (-1);
	}
	key[0] = '\0';
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = 1000;
	sd.tid = 1000;
	sd.cpu = -1;
	if (hwtr_aw_add_image_file(aw, b->elf, NULL, 0, key) < 0) {
		const char *m = hwtr_aw_errmsg(aw);

		rc = m == NULL || m[0] == '\0' ? 2 : 1;
		snprintf(msg, len, "the archive writer refused the image: %.256s",
		    rc == 2 ? "without a message" : m);
		hwtr_aw_abort(aw, 0);
		return (rc);
	}
	for (t = 0; t < nthreads; t++) {
		sd.tid = 1000 + t;
		if (hwtr_aw_add_stream(aw, &sd, &id) < 0 ||
		    hwtr_aw_chunk(aw, id, 0, b->pt, b->ptlen) < 0)
			goto fail;
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_THREAD_START;
		rec.pid = 1000;
		rec.tid = 1000 + t;
		rec.u.thread_start.ptid = t == 0 ? -1 : 1000;
		if (hwtr_aw_sideband(aw, &rec) < 0)
			goto fail;
	}
	for (i = 0; i < b->nmap; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_MMAP;
		rec.pid = 1000;
		rec.tid = 1000;
		rec.u.mmap.addr = b->map[i].addr;
		rec.u.mmap.pgoff = b->map[i].pgoff;
		rec.u.mmap.len = b->map[i].len;
		rec.u.mmap.prot = PROT_READ | PROT_EXEC;
		rec.u.mmap.path = b->elf;
		rec.u.mmap.image = key;
		if (hwtr_aw_sideband(aw, &rec) < 0)
			goto fail;
	}
	if (hwtr_aw_close(aw, errbuf, sizeof(errbuf)) < 0) {
		snprintf(msg, len, "%.300s: %.256s", b->ar, errbuf);
		return (-1);
	}
	return (0);
fail:
	snprintf(msg, len, "%.300s: %.256s", b->ar, hwtr_aw_errmsg(aw));
	hwtr_aw_abort(aw, 0);
	return (-1);
}

static inline int
fuzz_elf_archive(struct fuzz_elf_base *b, const uint8_t *data, size_t size,
    char *msg, size_t len)
{
	return (fuzz_elf_archive_n(b, data, size, 1, msg, len));
}

/*
 * Run verb @req on @q; 1 with @msg saying which when it fails without a
 * message, else 0.
 */
static inline int
fuzz_elf_verb(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, char *msg, size_t len)
{
	struct hwtr_q_res *res = NULL;
	char *text = NULL;
	size_t tlen;
	int rc;

	rc = hwtr_q_run(q, req, &res);
	if (rc < 0) {
		const char *m = hwtr_q_errmsg(q);

		if (m == NULL || m[0] == '\0') {
			snprintf(msg, len, "query %s: %s without a message",
			    what, hwtr_errstr(rc));
			return (1);
		}
		return (0);
	}
	if (hwtr_q_res_format(res, HWTR_Q_FMT_TABLE, 100, &text, &tlen) == 0)
		free(text);
	hwtr_q_res_free(res);
	return (0);
}

/*
 * The check of one input: the @size bytes of @data as the program of @b's
 * archive, indexed and queried.  0 when every step answered (a refusal
 * with a message is an answer), 1 with @msg saying which step refused
 * without a message, -1 with @msg when the harness itself failed.
 * *@indexed (may be NULL) says whether index made a database.
 */
static inline int
fuzz_elf_one(struct fuzz_elf_base *b, const uint8_t *data, size_t size,
    int *indexed, char *msg, size_t len)
{
	static const struct {
		enum hwtr_q_verb verb;
		const char	*what, *pattern, *by;
	} verbs[] = {
		{ HWTR_Q_SUMMARY, "summary", NULL, NULL },
		{ HWTR_Q_HOT, "hot", NULL, NULL },
		{ HWTR_Q_HOT, "hot --by block", NULL, "block" },
		{ HWTR_Q_COVERAGE, "coverage", NULL, NULL },
		{ HWTR_Q_FUNC, "func main", "main", NULL },
		{ HWTR_Q_ANNOTATE, "annotate main", "main", NULL },
		{ HWTR_Q_BT, "bt", NULL, NULL },
		{ HWTR_Q_CALLS, "calls -n 20", NULL, NULL },
	};
	struct hwtr_ix_opts io;
	struct hwtr_q_opts qo;
	struct hwtr_q_req req;
	struct hwtr_ix *ix;
	struct hwtr_q *q;
	char errbuf[512];
	size_t i;
	int rc;

	msg[0] = '\0';
	if (indexed != NULL)
		*indexed = 0;
	unlink(b->db);
	rc = fuzz_elf_archive(b, data, size, msg, len);
	if (rc != 0)
		return (rc == 2 ? 1 : rc == 1 ? 0 : -1);
	memset(&io, 0, sizeof(io));
	io.jobs = 1;
	io.archive_only = 1;
	if (hwtr_ix_new(&ix, &io) < 0) {
		snprintf(msg, len, "hwtr_ix_new failed");
		return (-1);
	}
	rc = hwtr_ix_run(ix, b->ar, b->db);
	if (rc < 0) {
		const char *m = hwtr_ix_errmsg(ix);

		if (m == NULL || m[0] == '\0') {
			snprintf(msg, len, "index: %s without a message",
			    hwtr_errstr(rc));
			hwtr_ix_free(ix);
			return (1);
		}
		hwtr_ix_free(ix);
		return (0);
	}
	hwtr_ix_free(ix);
	if (indexed != NULL)
		*indexed = 1;
	memset(&qo, 0, sizeof(qo));
	qo.jobs = 1;
	if (hwtr_q_open(&q, b->db, &qo, errbuf, sizeof(errbuf)) < 0) {
		snprintf(msg, len, "the database index wrote does not open: %.256s",
		    errbuf);
		return (1);
	}
	rc = 0;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]) && rc == 0; i++) {
		hwtr_q_req_init(&req, verbs[i].verb);
		req.pattern = verbs[i].pattern;
		req.by = verbs[i].by;
		if (verbs[i].verb == HWTR_Q_CALLS)
			req.n = 20;
		rc = fuzz_elf_verb(q, &req, verbs[i].what, msg, len);
	}
	hwtr_q_close(q);
	return (rc);
}

#endif
