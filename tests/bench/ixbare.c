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
 */

#include <elf.h>
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

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

int
main(int argc, char **argv)
{
	struct pt_image *img;
	const Elf64_Ehdr *eh;
	uint8_t *elf;
	size_t elen, i;
	uint64_t blocks = 0, insns = 0, errors = 0;
	int a;

	if (argc < 3) {
		fprintf(stderr, "usage: ixbare PROGRAM PT...\n");
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
		struct pt_block b;
		struct pt_event ev;
		uint8_t *pt;
		size_t len;
		int st;

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
				st = pt_blk_next(d, &b, sizeof(b));
				if (b.ninsn > 0 || st >= 0) {
					blocks++;
					insns += b.ninsn;
				}
				if (st < 0)
					break;
			}
			if (st < 0 && st != -pte_eos) {
				uint64_t off = 0;

				errors++;
				pt_blk_get_offset(d, &off);
				if (getenv("IXBARE_VERBOSE") != NULL)
					fprintf(stderr, "%s: offset %#" PRIx64
					    ", ip %#" PRIx64 ": %s\n", argv[a],
					    off, b.ip, pt_errstr(pt_errcode(st)));
			}
			if (st == -pte_eos)
				break;
		}
		pt_blk_free_decoder(d);
		free(pt);
	}
	printf("%" PRIu64 " blocks, %" PRIu64 " instructions, %" PRIu64
	    " errors\n", blocks, insns, errors);
	pt_image_free(img);
	free(elf);
	return (0);
}
