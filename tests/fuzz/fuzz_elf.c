/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hostile-binary fuzzer (make fuzz-elf): each input is an ELF file
 * put in place of the program in a small fixed archive over the calls
 * fixture (an ixgen walk's Intel PT, FUZZ_ELF_PT, over FUZZ_ELF_PROG's
 * executable segments), indexed by hwtr_ix_run() into a temporary
 * database and read back by a few verbs (fuzz_elf_one.h, which the
 * seed-corpus test t_elf_seeds.c shares).  This reaches what `index`
 * does with an image: libelf and libdw on its symbols, DWARF lines and
 * inlines, compressed sections and build id.  A refusal without a
 * message aborts; sanitizers report the rest.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_elf_one.h"

#ifndef FUZZ_ELF_PROG
#define FUZZ_ELF_PROG	"build/progs/calls"
#endif
#ifndef FUZZ_ELF_PT
#define FUZZ_ELF_PT	"build-fuzz/elf-walk/walk.0"
#endif

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The fixed part of every input's archive; a test program's one static. */
static struct fuzz_elf_base base;

static void
cleanup(void)
{
	fuzz_elf_base_free(&base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *prog = getenv("FUZZ_ELF_PROG");
	const char *pt = getenv("FUZZ_ELF_PT");
	char err[512];

	(void)argc;
	(void)argv;
	if (fuzz_elf_base_init(&base, prog != NULL ? prog : FUZZ_ELF_PROG,
	    pt != NULL ? pt : FUZZ_ELF_PT, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_elf: %s\n", err);
		exit(1);
	}
	atexit(cleanup);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[1024];
	int rc;

	rc = fuzz_elf_one(&base, data, size, NULL, msg, sizeof(msg));
	if (rc < 0) {
		fprintf(stderr, "fuzz_elf: %s\n", msg);
		abort();
	}
	if (rc != 0) {
		fprintf(stderr, "fuzz_elf: %s\n", msg);
		abort();
	}
	return (0);
}
