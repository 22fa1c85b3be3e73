/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A differential fuzzer for fpt, the indexer's own Intel PT decoder
 * (issue 29 item 2): each input is an Intel PT trace over the executable
 * segments of a real program (FUZZ_FPT_PROG, by default the calls fixture
 * the build made), decoded by libipt's block decoder and by fpt in
 * ptxed's loop; their blocks and events must be equal one by one, or fpt
 * must say unsupported (its items until then libipt's).  A difference
 * aborts with both sides.  Seeds are ixgen walks over the same program
 * (tests/fuzz/fuzz-fpt.mk).
 *
 * libipt's blocks depend on its block cache, which lives with the image's
 * sections, so each input gets a new libipt image (and a new fpt).
 */

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_fptboth.h"

#ifndef FUZZ_FPT_PROG
#define FUZZ_FPT_PROG	"build/progs/calls"
#endif

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The program's bytes and sections; a test program's one static. */
static struct {
	uint8_t		*elf;
	struct tf_img	im;
} prog;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("FUZZ_FPT_PROG");
	const Elf64_Ehdr *eh;
	FILE *fp;
	long n;
	size_t i;

	(void)argc;
	(void)argv;
	if (path == NULL)
		path = FUZZ_FPT_PROG;
	if ((fp = fopen(path, "rb")) == NULL || fseek(fp, 0, SEEK_END) != 0 ||
	    (n = ftell(fp)) <= 0 || fseek(fp, 0, SEEK_SET) != 0 ||
	    (prog.elf = malloc((size_t)n)) == NULL ||
	    fread(prog.elf, 1, (size_t)n, fp) != (size_t)n) {
		fprintf(stderr, "fuzz_fpt: cannot read %s\n", path);
		exit(1);
	}
	fclose(fp);
	eh = (const Elf64_Ehdr *)prog.elf;
	if ((size_t)n < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		fprintf(stderr, "fuzz_fpt: %s: not an ELF file\n", path);
		exit(1);
	}
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(prog.elf +
		    eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ph->p_offset + ph->p_filesz <= (uint64_t)n)
			(void)tf_img_add(&prog.im, path, prog.elf,
			    ph->p_offset, ph->p_filesz, ph->p_vaddr);
	}
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_config cfg;
	struct fpt_config fc;
	struct tf_items want, got;
	const char *why;
	char msg[512];

	pt_config_init(&cfg);
	cfg.cpu.vendor = pcv_intel;
	cfg.cpu.family = 6;
	cfg.cpu.model = 158;
	cfg.cpu.stepping = 10;
	pt_cpu_errata(&cfg.errata, &cfg.cpu);
	memset(&fc, 0, sizeof(fc));
	fc.read_code = tf_read_code;
	fc.map = tf_map;
	fc.ctx = &prog.im;
	fc.intel = 1;
	fc.family = 6;
	fc.model = 158;
	fc.stepping = 10;
	if (tf_run_both(data, size, &prog.im, &cfg, &fc, 100000, 2000000,
	    &want, &got, &why) < 0) {
		fprintf(stderr, "fuzz_fpt: %s failed\n", why);
		abort();
	}
	if (getenv("FUZZ_FPT_DUMP") != NULL) {
		size_t i;
		char a[160];

		for (i = 0; i < want.n || i < got.n; i++) {
			tf_fmt(i < want.n ? &want.v[i] : NULL, a, sizeof(a));
			fprintf(stderr, "%zu libipt %s\n", i, a);
			tf_fmt(i < got.n ? &got.v[i] : NULL, a, sizeof(a));
			fprintf(stderr, "%zu fpt    %s\n", i, a);
		}
	}
	if (tf_compare(&want, &got, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "fuzz_fpt: fpt differs from libipt: %s\n",
		    msg);
		abort();
	}
	tf_items_free(&want);
	tf_items_free(&got);
	return (0);
}
