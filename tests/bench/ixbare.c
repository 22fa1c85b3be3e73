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
#include "../lib/hwtr_test_fpt.h"

/* The whole of @path, or exit. */
static uint8_t *
slurp(const char *path, size_t *lenp)
{
	uint8_t *buf = tf_slurp(path, lenp);

	if (buf == NULL)
		err(1, "%s", path);
	return (buf);
}

struct counts {
	uint64_t	blocks;
	uint64_t	insns;
	uint64_t	errors;
};

struct run {
	const char	*what;
	struct counts	*c;
	int		verbose;
};

static int
count_block(void *ctx, const struct pt_block *b)
{
	struct run *r = ctx;

	if (b->ninsn > 0) {
		r->c->blocks++;
		r->c->insns += b->ninsn;
	}
	return (0);
}

static void
count_error(void *ctx, int st, uint64_t off, const struct pt_block *b)
{
	struct run *r = ctx;

	r->c->errors++;
	if (r->verbose)
		fprintf(stderr, "%s: offset %#" PRIx64 ", ip %#" PRIx64
		    ": %s\n", r->what, off, b->ip, pt_errstr(pt_errcode(st)));
}

/*
 * pt_blk_next until the end of the stream, events drained, nothing
 * stored; after an error, resume at the next PSB (ptxed's loop).
 */
static void
decode(struct pt_block_decoder *d, const char *what, struct counts *c)
{
	struct run r = { what, c, getenv("IXBARE_VERBOSE") != NULL };
	struct tf_libipt_cb cb = { count_block, NULL, count_error, &r };

	tf_libipt_loop(d, &cb);
}

struct total {
	struct counts	c;
	uint64_t	bytes, ns;
};

/* One stream of the archive, timed. */
static void
archive_stream(void *ctx, size_t s, const uint8_t *buf, size_t len,
    struct tf_img *im, struct pt_config *cfg, struct fpt_config *fc)
{
	struct total *t = ctx;
	struct counts cn = { 0, 0, 0 };
	struct pt_block_decoder *d;
	struct pt_image *img;
	struct timespec t0, t1;
	uint64_t ns;
	char what[64];

	(void)fc;
	if ((img = tf_pt_image(im)) == NULL)
		errx(1, "stream %zu: cannot make libipt's image", s);
	if ((d = pt_blk_alloc_decoder(cfg)) == NULL)
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
	t->c.blocks += cn.blocks;
	t->c.insns += cn.insns;
	t->c.errors += cn.errors;
	t->bytes += len;
	t->ns += ns;
	pt_blk_free_decoder(d);
	pt_image_free(img);
}

static int
archive(const char *path)
{
	struct total t;
	const char *tdir = getenv("TMPDIR");
	char *tmpl, emsg[256];
	int rc;

	/* The images as files, where temporary files go. */
	if (asprintf(&tmpl, "%s/ixbare.XXXXXX", tdir != NULL && *tdir != '\0' ?
	    tdir : "/tmp") < 0)
		errx(1, "out of memory");
	if (mkdtemp(tmpl) == NULL)
		err(1, "mkdtemp %s", tmpl);
	memset(&t, 0, sizeof(t));
	rc = tf_archive_each(path, tmpl, archive_stream, &t, emsg,
	    sizeof(emsg));
	rmdir(tmpl);
	free(tmpl);
	if (rc < 0)
		errx(1, "%s", emsg);
	printf("total: %" PRIu64 " bytes, %" PRIu64 " blocks, %" PRIu64
	    " instructions, %" PRIu64 " errors, %" PRIu64 " ns\n", t.bytes,
	    t.c.blocks, t.c.insns, t.c.errors, t.ns);
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
