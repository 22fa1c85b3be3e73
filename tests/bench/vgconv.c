/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv DIR: convert the event files the hwtrace Valgrind tool wrote into
 * DIR to PT (discarded) and print one line of figures: instructions,
 * superblocks, event bytes, PT bytes, seconds.  For `make bench` only.
 */

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "../../kernel/vgconv.h"

static uint64_t pt_bytes;
static uint64_t pt_hash = 0xcbf29ce484222325ull;	/* FNV-1a of all PT */
static struct hwtr_ptenc *encs[4096];
static size_t nencs;

static int
sink(void *arg, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	(void)arg;
	/* Compare converters: the same events must give the same PT. */
	for (i = 0; i < len; i++)
		pt_hash = (pt_hash ^ p[i]) * 0x100000001b3ull;
	pt_bytes += len;
	return (0);
}

static int
tstart(void *arg, int32_t pid, int32_t tid, int32_t ptid, uint64_t time,
    struct hwtr_ptenc ***encpp, void **tokp)
{
	struct hwtr_ptenc_out out = { sink, NULL, NULL };

	(void)arg; (void)pid; (void)tid; (void)ptid; (void)time;
	*tokp = NULL;
	if (nencs == 4096)
		return (-HWTR_E_LIMIT);
	*encpp = &encs[nencs];
	return (hwtr_ptenc_new(&encs[nencs++], NULL, &out));
}

static int
texit(void *arg, void *tok, uint64_t ninsn, uint64_t time)
{
	(void)arg; (void)tok; (void)ninsn; (void)time;
	return (0);
}

int
main(int argc, char **argv)
{
	struct vgconv_cb cb;
	struct vgconv *cv;
	struct vgconv_file *f;
	struct vgconv_stats st;
	struct dirent *de;
	struct timespec t0, t1;
	char path[4096];
	static uint8_t buf[1 << 20];
	size_t have, n;
	long used;
	DIR *d;
	FILE *fp;

	if (argc != 2) {
		fprintf(stderr, "usage: vgconv DIR\n");
		return (2);
	}
	memset(&cb, 0, sizeof(cb));
	cb.thread_start = tstart;
	cb.thread_exit = texit;
	if (vgconv_new(&cv, &cb, NULL) < 0 || (d = opendir(argv[1])) == NULL) {
		fprintf(stderr, "vgconv: cannot start\n");
		return (1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "vg.", 3) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		if ((fp = fopen(path, "rb")) == NULL ||
		    vgconv_file_new(cv, de->d_name, &f) < 0)
			return (1);
		have = 0;
		while ((n = fread(buf + have, 1, sizeof(buf) - have, fp)) > 0) {
			have += n;
			if ((used = vgconv_feed(f, buf, have)) < 0) {
				fprintf(stderr, "vgconv: %s\n", vgconv_errmsg(cv));
				return (1);
			}
			memmove(buf, buf + used, have - (size_t)used);
			have -= (size_t)used;
		}
		fclose(fp);
		if (vgconv_file_end(f, have) < 0)
			return (1);
	}
	closedir(d);
	vgconv_finish(cv, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	vgconv_stats(cv, &st);
	printf("instructions %" PRIu64 " blocks %" PRIu64 " event_bytes %"
	    PRIu64 " pt_bytes %" PRIu64 " seconds %.3f desyncs %" PRIu64
	    " pt_fnv %016" PRIx64 "\n",
	    st.instructions, st.blocks, st.event_bytes, pt_bytes,
	    (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	    st.desyncs, pt_hash);
	vgconv_free(cv);
	return (0);
}
