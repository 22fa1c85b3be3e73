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
 * ptxed's loop; their blocks and events must be equal one by one (with
 * FUZZ_FPT_OFFSETS set in the environment, errors at the same offset
 * too), or fpt must say unsupported (its items until then libipt's); and
 * fpt's run API, as `index` takes blocks through it, must give its
 * fpt_next()'s items.  A difference aborts with both sides.  Seeds are ixgen walks over the same
 * program (tests/fuzz/fuzz-fpt.mk); the check of one input is
 * fpt_one.h's, which the seed-corpus test (t_fpt_seeds.c) shares, there
 * with the offsets.
 *
 * libipt's blocks depend on its block cache, which lives with the image's
 * sections, so each input gets a new libipt image (and a new fpt).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fpt_one.h"

#ifndef FUZZ_FPT_PROG
#define FUZZ_FPT_PROG	"build/progs/calls"
#endif

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The program's bytes and sections; a test program's one static. */
static struct fpt_one_prog prog;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("FUZZ_FPT_PROG");
	char err[512];

	(void)argc;
	(void)argv;
	if (path == NULL)
		path = FUZZ_FPT_PROG;
	if (fpt_one_load(&prog, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_fpt: %s\n", err);
		exit(1);
	}
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[512];
	int rc;

	rc = fpt_one_run(&prog, data, size, getenv("FUZZ_FPT_DUMP") != NULL,
	    getenv("FUZZ_FPT_OFFSETS") != NULL, msg, sizeof(msg));
	if (rc < 0) {
		fprintf(stderr, "fuzz_fpt: %s\n", msg);
		abort();
	}
	if (rc != 0) {
		fprintf(stderr, "fuzz_fpt: fpt differs: %s\n",
		    msg);
		abort();
	}
	return (0);
}
