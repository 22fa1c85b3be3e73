/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ixbare: the reference the indexer is measured against (issue 4 item
 * 11): libipt's block decoder over the same PT streams and the same binary,
 * pt_blk_next until the end of each stream, events drained, nothing
 * stored.  Prints the blocks and instructions it saw on stdout.
 *
 * ixbare PROGRAM PT...: raw PT files (ixgen's) over the executable
 * segments of PROGRAM, as Intel says nothing of the CPU: model 158.
 *
 * ixbare -a ARCHIVE: every Intel PT stream of a hwtrace archive, the
 * decoder configured as the indexer configures it (indexer/decode.c:
 * CPU identity and pt_cpu_errata() for Intel archives only, the stream's
 * CPUID 0x15, frequencies and address filters), with the images the
 * sideband maps into the stream's process (all processes when the stream
 * is per CPU) at their mapped addresses, pgoff and size as the indexer
 * uses them (indexer/ix.c add_sections(): executable mappings only, size
 * clipped to the image).  One image per stream, the mappings applied in
 * sideband order (a later mapping replaces what it overlaps; an exec
 * starts over), not the indexer's image per time span: enough for
 * captures whose maps change only at start-up.  Setup is not timed:
 * reading and decompressing the chunks into one buffer, reading the
 * images and writing them to temporary files for pt_image_add_file(),
 * allocating the decoder.  The timed part is the decode loop, sync to end
 * of stream.  Prints one line per stream and a total line:
 *   stream S: BYTES bytes, B blocks, I instructions, E errors, NS ns
 *   total: BYTES bytes, B blocks, I instructions, E errors, NS ns
 */

#include <elf.h>
#include <err.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "hwtrace.h"
#include "../../indexer/hwtr_ix.h"
#include "../../indexer/segout.h"

static void *
slurp(const char *path, size_t *lenp)
{
	FILE *fp = fopen(path, "rb");
	void *buf;
	long n;

	if (fp == NULL)
		err(1, "%s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, n > 0 ? (size_t)n : 1);
	if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, fp) !=
	    (size_t)n))
		err(1, "%s", path);
	fclose(fp);
	*lenp = (size_t)n;
	return (buf);
}

struct counts {
	uint64_t	blocks;
	uint64_t	insns;
	uint64_t	errors;
};

/*
 * pt_blk_next until the end of the stream, events drained, nothing
 * stored; after an error, resume at the next PSB (ptxed's loop).
 */
static void
decode(struct pt_block_decoder *d, const char *what, struct counts *c)
{
	struct pt_block b;
	struct pt_event ev;
	int st;

	memset(&b, 0, sizeof(b));
	for (;;) {
		st = pt_blk_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				st = pt_blk_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
			}
			if (st < 0 || (st & pts_eos))
				break;
			b.ninsn = 0;
			st = pt_blk_next(d, &b, sizeof(b));
			if (b.ninsn > 0) {
				c->blocks++;
				c->insns += b.ninsn;
			}
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos) {
			uint64_t off = 0;

			c->errors++;
			pt_blk_get_offset(d, &off);
			if (getenv("IXBARE_VERBOSE") != NULL)
				fprintf(stderr, "%s: offset %#" PRIx64
				    ", ip %#" PRIx64 ": %s\n", what, off, b.ip,
				    pt_errstr(pt_errcode(st)));
		}
		if (st == -pte_eos)
			break;
	}
}

/* Image @idx of @ar in a temporary file (made once), for libipt. */
static const char *
image_file(struct hwtr_ar *ar, size_t idx, char **files, uint64_t *sizes,
    const char *tmpdir)
{
	void *p;
	size_t len;
	int fd;

	if (files[idx] != NULL)
		return (files[idx]);
	if (hwtr_ar_read_image(ar, idx, &p, &len) < 0)
		errx(1, "image %zu: %s", idx, hwtr_ar_errmsg(ar));
	if (asprintf(&files[idx], "%s/ixbare.%zu", tmpdir, idx) < 0)
		errx(1, "out of memory");
	fd = open(files[idx], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, len) != (ssize_t)len || close(fd) < 0)
		err(1, "%s", files[idx]);
	free(p);
	sizes[idx] = len;
	return (files[idx]);
}

static int
archive(const char *path)
{
	struct hwtr_ar *ar;
	const struct hwtr_cpu *cpu;
	struct counts tot = { 0, 0, 0 };
	uint64_t tbytes = 0, tns = 0;
	const char *tdir = getenv("TMPDIR");
	char *tmpl, **files;
	uint64_t *sizes;
	size_t s, c, i, nimg;

	if (hwtr_ar_open(&ar, path, NULL) < 0)
		errx(1, "%s: cannot open the archive", path);
	/* The images as files, where temporary files go. */
	if (asprintf(&tmpl, "%s/ixbare.XXXXXX", tdir != NULL && *tdir != '\0' ?
	    tdir : "/tmp") < 0)
		errx(1, "out of memory");
	if (mkdtemp(tmpl) == NULL)
		err(1, "mkdtemp %s", tmpl);
	nimg = hwtr_ar_nimages(ar);
	files = calloc(nimg + 1, sizeof(*files));
	sizes = calloc(nimg + 1, sizeof(*sizes));
	if (files == NULL || sizes == NULL)
		errx(1, "out of memory");
	cpu = &hwtr_ar_meta(ar)->cpu;
	for (s = 0; s < hwtr_ar_nstreams(ar); s++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(ar, s);
		struct counts cn = { 0, 0, 0 };
		struct pt_config cfg;
		struct pt_block_decoder *d;
		struct pt_image *img;
		struct timespec t0, t1;
		uint8_t *buf = NULL;
		size_t len = 0;
		uint64_t ns;
		char what[64];

		if (sd->format != HWTR_TF_INTEL_PT)
			continue;
		/* The chunks, decompressed into one buffer. */
		for (c = 0; c < hwtr_ar_nchunks(ar, s); c++) {
			void *p;
			uint8_t *nb;
			size_t k;

			if (hwtr_ar_read_chunk(ar, s, c, &p, &k) < 0)
				errx(1, "stream %zu chunk %zu: %s", s, c,
				    hwtr_ar_errmsg(ar));
			if ((nb = realloc(buf, len + k + 1)) == NULL)
				errx(1, "out of memory");
			buf = nb;
			memcpy(buf + len, p, k);
			len += k;
			free(p);
		}
		/* The stream's process image, as the sideband maps it. */
		if ((img = pt_image_alloc(NULL)) == NULL)
			errx(1, "out of memory");
		for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
			const struct hwtr_sb_rec *r = hwtr_ar_sideband_rec(ar, i);
			const char *f;
			uint64_t size;
			int idx;

			if (sd->pid >= 0 && r->pid != sd->pid)
				continue;
			if (r->type == HWTR_SB_EXEC) {
				pt_image_free(img);
				if ((img = pt_image_alloc(NULL)) == NULL)
					errx(1, "out of memory");
				continue;
			}
			if (r->type != HWTR_SB_MMAP || r->u.mmap.image == NULL ||
			    (r->u.mmap.prot != 0 &&
			    !(r->u.mmap.prot & PROT_EXEC)) ||
			    (idx = hwtr_ar_find_image(ar, r->u.mmap.image)) < 0)
				continue;
			f = image_file(ar, (size_t)idx, files, sizes, tmpl);
			if (r->u.mmap.pgoff >= sizes[idx] || r->u.mmap.len == 0)
				continue;
			size = r->u.mmap.len;
			if (size > sizes[idx] - r->u.mmap.pgoff)
				size = sizes[idx] - r->u.mmap.pgoff;
			if (pt_image_add_file(img, f, r->u.mmap.pgoff, size,
			    NULL, r->u.mmap.addr) < 0)
				errx(1, "cannot add %s at %#" PRIx64,
				    r->u.mmap.path ? r->u.mmap.path : "?",
				    r->u.mmap.addr);
		}
		pt_config_init(&cfg);
		/* As the indexer does (its errata status is not needed). */
		(void)ix_pt_config(&cfg, sd, cpu, buf, len);
		if ((d = pt_blk_alloc_decoder(&cfg)) == NULL)
			errx(1, "cannot allocate a decoder");
		pt_blk_set_image(d, img);
		snprintf(what, sizeof(what), "stream %zu", s);

		clock_gettime(CLOCK_MONOTONIC, &t0);
		decode(d, what, &cn);
		clock_gettime(CLOCK_MONOTONIC, &t1);

		ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
		    (t1.tv_nsec - t0.tv_nsec));
		printf("stream %zu: %zu bytes, %" PRIu64 " blocks, %" PRIu64
		    " instructions, %" PRIu64 " errors, %" PRIu64 " ns\n",
		    s, len, cn.blocks, cn.insns, cn.errors, ns);
		tot.blocks += cn.blocks;
		tot.insns += cn.insns;
		tot.errors += cn.errors;
		tbytes += len;
		tns += ns;
		pt_blk_free_decoder(d);
		pt_image_free(img);
		free(buf);
	}
	printf("total: %" PRIu64 " bytes, %" PRIu64 " blocks, %" PRIu64
	    " instructions, %" PRIu64 " errors, %" PRIu64 " ns\n", tbytes,
	    tot.blocks, tot.insns, tot.errors, tns);
	for (i = 0; i < nimg; i++) {
		if (files[i] != NULL)
			unlink(files[i]);
		free(files[i]);
	}
	rmdir(tmpl);
	free(tmpl);
	free(files);
	free(sizes);
	hwtr_ar_close(ar);
	return (0);
}

int
main(int argc, char **argv)
{
	struct pt_image *img;
	const Elf64_Ehdr *eh;
	uint8_t *elf;
	size_t elen, i;
	struct counts tot = { 0, 0, 0 };
	int a;

	if (argc == 3 && strcmp(argv[1], "-a") == 0)
		return (archive(argv[2]));
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: ixbare PROGRAM PT...\n"
		    "       ixbare -a ARCHIVE\n");
		return (2);
	}
	elf = slurp(argv[1], &elen);
	if (elen < sizeof(*eh) || memcmp(elf, ELFMAG, SELFMAG) != 0)
		errx(1, "%s: not an ELF file", argv[1]);
	eh = (const Elf64_Ehdr *)elf;
	img = pt_image_alloc(NULL);
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(elf + eh->e_phoff +
		    i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    pt_image_add_file(img, argv[1], ph->p_offset, ph->p_filesz,
		    NULL, ph->p_vaddr) < 0)
			errx(1, "cannot add %s", argv[1]);
	}
	for (a = 2; a < argc; a++) {
		struct pt_config cfg;
		struct pt_block_decoder *d;
		uint8_t *pt;
		size_t len;

		pt = slurp(argv[a], &len);
		pt_config_init(&cfg);
		cfg.begin = pt;
		cfg.end = pt + len;
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = 6;
		cfg.cpu.model = 158;
		cfg.cpu.stepping = 10;
		pt_cpu_errata(&cfg.errata, &cfg.cpu);
		d = pt_blk_alloc_decoder(&cfg);
		if (d == NULL)
			errx(1, "cannot allocate a decoder");
		pt_blk_set_image(d, img);
		decode(d, argv[a], &tot);
		pt_blk_free_decoder(d);
		free(pt);
	}
	printf("%" PRIu64 " blocks, %" PRIu64 " instructions, %" PRIu64
	    " errors\n", tot.blocks, tot.insns, tot.errors);
	pt_image_free(img);
	free(elf);
	return (0);
}
