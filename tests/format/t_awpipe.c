/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive writer compresses chunks in the background (format/archive_write.c).
 * These cases hold it to the contract of hwtrace.h: a chunk is in the file
 * at the latest when the next hwtr_aw_chunk()/hwtr_aw_flush()/
 * hwtr_aw_close() returns, and soon after its own call without one; the
 * bytes do not depend on timing or on the number of threads; a failed
 * background write is reported at the next call and at close, naming the
 * member.  The judge of "in the file" is the archive reader (the truncated
 * archive path of hwtrace(5)), not the writer's own bookkeeping.
 */

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "fixture.h"

static struct hwtr_aw *
open_writer(const char *path, int level, int threads)
{
	struct hwtr_capture_meta m;
	struct hwtr_aw_opts o;
	struct hwtr_aw *aw;
	char err[256];

	fx_meta(&m);
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.threads = threads;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, &o, err, sizeof(err)),
	    0, "hwtr_aw_open '%s': %s", path, err);
	return (aw);
}

static uint32_t
add_pt_stream(struct hwtr_aw *aw)
{
	struct hwtr_stream_desc pt, cs;
	struct hwtr_cs_source src;
	uint32_t id;

	fx_streams(&pt, &cs, &src);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_add_stream(aw, &pt, &id), 0, "%s",
	    hwtr_aw_errmsg(aw));
	return (id);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/*
 * How many chunks of stream 0 the reader finds in @path (-1: it does not
 * open), checking that each of the first @nwant holds @want[i].
 */
static long
chunks_in_file(const char *path, uint8_t *const *want, const size_t *wlen,
    size_t nwant)
{
	struct hwtr_ar *ar;
	void *buf;
	size_t i, n, len;
	int rc;

	if (hwtr_ar_open(&ar, path, NULL) < 0) {
		hwtr_ar_close(ar);
		return (-1);
	}
	n = hwtr_ar_nstreams(ar) > 0 ? hwtr_ar_nchunks(ar, 0) : 0;
	for (i = 0; i < n && i < nwant; i++) {
		rc = hwtr_ar_read_chunk(ar, 0, i, &buf, &len);
		ATF_REQUIRE_MSG(rc == 0, "'%s' chunk %zu: %s", path, i,
		    hwtr_ar_errmsg(ar));
		ATF_REQUIRE_MSG(len == wlen[i] && memcmp(buf, want[i], len) == 0,
		    "'%s' chunk %zu: %zu bytes, not the %zu bytes given", path,
		    i, len, wlen[i]);
		free(buf);
	}
	hwtr_ar_close(ar);
	return ((long)n);
}

/*
 * Level 19 makes compressing a chunk take a good fraction of a second, so
 * a writer that returned before the previous chunk was written would be
 * caught: the reader runs right after the call returns.
 */
ATF_TC_WITHOUT_HEAD(chunk_in_file_when_next_call_returns);
ATF_TC_BODY(chunk_in_file_when_next_call_returns, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b[3];
	size_t len[3] = { 600000, 500000, 400000 }, i;
	long n;

	for (i = 0; i < 3; i++) {
		ATF_REQUIRE((b[i] = malloc(len[i])) != NULL);
		fx_fill(b[i], len[i], (uint32_t)i + 7);
	}
	aw = open_writer("n.hwtrace", 19, 0);
	ATF_REQUIRE_EQ(add_pt_stream(aw), 0);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[0], len[0]),
	    0, "%s", hwtr_aw_errmsg(aw));
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[1], len[1]),
	    0, "%s", hwtr_aw_errmsg(aw));
	/* The caller may scribble over its buffer once the call returned. */
	memset(b[1], 0xee, 1000);
	n = chunks_in_file("n.hwtrace.partial", b, len, 1);
	ATF_CHECK_MSG(n >= 1, "after the 2nd hwtr_aw_chunk() returned the "
	    "reader finds %ld chunks in the partial file, expected the 1st",
	    n);
	fx_fill(b[1], len[1], 8);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_flush(aw), 0, "%s", hwtr_aw_errmsg(aw));
	n = chunks_in_file("n.hwtrace.partial", b, len, 2);
	ATF_CHECK_MSG(n == 2, "after hwtr_aw_flush() returned the reader "
	    "finds %ld chunks, expected 2", n);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[2], len[2]),
	    0, "%s", hwtr_aw_errmsg(aw));
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, NULL, 0), 0, "close failed");
	n = chunks_in_file("n.hwtrace", b, len, 3);
	ATF_CHECK_MSG(n == 3, "after hwtr_aw_close() the archive holds %ld "
	    "chunks, expected 3", n);
	for (i = 0; i < 3; i++)
		free(b[i]);
}

/*
 * A capture that goes quiet: the child gives one chunk and then makes no
 * call at all; the chunk must reach the file by itself, and a SIGKILL
 * after that must not lose it.
 */
ATF_TC(chunk_in_file_without_next_call);
ATF_TC_HEAD(chunk_in_file_without_next_call, tc)
{
	atf_tc_set_md_var(tc, "descr", "a chunk reaches the file within "
	    "seconds of its hwtr_aw_chunk() call with no call after it");
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(chunk_in_file_without_next_call, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b[1];
	size_t len[1] = { 3 << 20 };
	double t0, waited;
	long n = -1;
	int pfd[2], status;
	pid_t pid;
	char c;

	ATF_REQUIRE((b[0] = malloc(len[0])) != NULL);
	fx_fill(b[0], len[0], 3);
	ATF_REQUIRE(pipe(pfd) == 0);
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		aw = open_writer("q.hwtrace", 0, 0);
		if (add_pt_stream(aw) != 0 ||
		    hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[0], len[0]) != 0)
			_exit(1);
		(void)write(pfd[1], "x", 1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	ATF_REQUIRE_EQ_MSG(read(pfd[0], &c, 1), 1, "the writer child died");
	t0 = now_s();
	/*
	 * It takes milliseconds on a quiet machine; 10 s leaves room for a
	 * loaded one.
	 */
	while ((waited = now_s() - t0) < 10.0) {
		if ((n = chunks_in_file("q.hwtrace.partial", b, len, 1)) >= 1)
			break;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ATF_REQUIRE_MSG(n == 1, "%.1f s after hwtr_aw_chunk() returned, with "
	    "no call after it, the reader finds %ld chunks, expected 1",
	    waited, n);
	/* Killed now: the chunk stays, the archive says it was cut. */
	n = chunks_in_file("q.hwtrace.partial", b, len, 1);
	ATF_CHECK_MSG(n == 1, "after SIGKILL: %ld chunks, expected 1", n);
	free(b[0]);
}

/* hwtr_aw_abort(aw, 1) keeps the chunks given before it. */
ATF_TC_WITHOUT_HEAD(abort_keeps_given_chunks);
ATF_TC_BODY(abort_keeps_given_chunks, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b[2];
	size_t len[2] = { 2 << 20, 1 << 20 };
	long n;

	ATF_REQUIRE((b[0] = malloc(len[0])) != NULL);
	ATF_REQUIRE((b[1] = malloc(len[1])) != NULL);
	fx_fill(b[0], len[0], 1);
	fx_fill(b[1], len[1], 2);
	aw = open_writer("ab.hwtrace", 0, 0);
	ATF_REQUIRE_EQ(add_pt_stream(aw), 0);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[0], len[0]), 0);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b[1], len[1]), 0);
	hwtr_aw_abort(aw, 1);
	n = chunks_in_file("ab.hwtrace.partial", b, len, 2);
	ATF_CHECK_MSG(n == 2, "after hwtr_aw_abort(keep) the partial file "
	    "holds %ld chunks, expected 2", n);
	free(b[0]);
	free(b[1]);
}

static const size_t sizes[] = { 3 << 20, 100, 1 << 20, 777777, 4096,
    (2 << 20) + 3, 1, 65536, 5 << 20, 300000 };
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))

/*
 * One capture's worth of calls: chunks of several sizes on two streams,
 * sideband, an image, flushes.  @pause_seed != 0 sleeps a pseudo-random
 * while between calls, so that workers finish in a different order
 * relative to the caller each run.
 */
static void
write_set(const char *path, int threads, unsigned pause_seed)
{
	struct hwtr_stream_desc pt, cs;
	struct hwtr_cs_source src;
	struct hwtr_image_desc idesc;
	struct hwtr_capture_end end;
	struct hwtr_sb_rec rec[12];
	struct hwtr_aw *aw;
	char key[HWTR_IMAGE_KEY_MAX], err[256];
	uint32_t id[2];
	uint8_t *buf, img[10000];
	size_t i, r, nrec;
	unsigned x = pause_seed;

	ATF_REQUIRE((buf = malloc(5 << 20)) != NULL);
	aw = open_writer(path, 0, threads);
	fx_streams(&pt, &cs, &src);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &pt, &id[0]), 0);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &cs, &id[1]), 0);
	memset(&idesc, 0, sizeof(idesc));
	idesc.path = "/lib/x.so";
	idesc.kind = HWTR_IMG_FILE;
	fx_fill(img, sizeof(img), 99);
	for (i = 0; i < NSIZES; i++) {
		fx_fill(buf, sizes[i], (uint32_t)i);
		ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, id[i % 2], HWTR_AW_APPEND,
		    buf, sizes[i]), 0, "%s", hwtr_aw_errmsg(aw));
		/* The writer copied it: scribbling must change nothing. */
		memset(buf, 0x55, sizes[i]);
		if (i == 4) {
			ATF_REQUIRE_EQ(hwtr_aw_add_image(aw, &idesc, img,
			    sizeof(img), key), 0);
			nrec = fx_records(rec, key);
			for (r = 0; r < nrec; r++)
				ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw,
				    &rec[r]), 0, "%s", hwtr_aw_errmsg(aw));
		}
		if (i == 6)
			ATF_REQUIRE_EQ(hwtr_aw_flush(aw), 0);
		if (pause_seed != 0) {
			x = x * 1103515245u + 12345u;
			usleep((x >> 16) % 30000);
		}
	}
	memset(&end, 0, sizeof(end));
	end.end_ns = 1700000001000000000LL;
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
	free(buf);
}

static uint8_t *
slurp(const char *path, size_t *lenp)
{
	struct stat st;
	uint8_t *p;
	int fd;

	ATF_REQUIRE_MSG((fd = open(path, O_RDONLY)) >= 0, "%s: %s", path,
	    strerror(errno));
	ATF_REQUIRE(fstat(fd, &st) == 0);
	ATF_REQUIRE((p = malloc((size_t)st.st_size + 1)) != NULL);
	ATF_REQUIRE_EQ(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*lenp = (size_t)st.st_size;
	return (p);
}

/*
 * Same calls, same bytes: whatever the timing between the caller and the
 * workers, and whether the chunks are compressed by two workers, one, or
 * the caller itself.  The reference is checked by the reader and by
 * zstd(1), not only against itself.
 */
ATF_TC(same_calls_same_bytes);
ATF_TC_HEAD(same_calls_same_bytes, tc)
{
	atf_tc_set_md_var(tc, "descr", "archive bytes do not depend on timing "
	    "or on the number of compression threads");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(same_calls_same_bytes, tc)
{
	static const struct {
		const char	*path;
		int		threads;
		unsigned	pause_seed;
	} runs[] = {
		{ "d0.hwtrace", 0, 0 },
		{ "d1.hwtrace", 0, 1 },
		{ "d2.hwtrace", 0, 2 },
		{ "d3.hwtrace", 1, 3 },
		{ "d4.hwtrace", -1, 0 },
	};
	struct hwtr_sb_rec rec[12];
	struct hwtr_ar *ar;
	uint8_t *ref, *p, *want;
	void *got;
	size_t rlen, len, i, k, nrec;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		write_set(runs[i].path, runs[i].threads, runs[i].pause_seed);
	/* The reference holds what was given (the callers scribbled). */
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "d0.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "%s", hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 1);
	ATF_REQUIRE_EQ(hwtr_ar_nchunks(ar, 0), NSIZES / 2);
	ATF_REQUIRE_EQ(hwtr_ar_nchunks(ar, 1), NSIZES / 2);
	ATF_REQUIRE((want = malloc(5 << 20)) != NULL);
	for (i = 0; i < NSIZES; i++) {
		ATF_REQUIRE_EQ_MSG(hwtr_ar_read_chunk(ar, i % 2, i / 2, &got,
		    &len), 0, "%s", hwtr_ar_errmsg(ar));
		fx_fill(want, sizes[i], (uint32_t)i);
		ATF_CHECK_MSG(len == sizes[i] && memcmp(got, want, len) == 0,
		    "chunk %zu: %zu bytes read, not the %zu given", i, len,
		    sizes[i]);
		free(got);
	}
	free(want);
	ATF_REQUIRE_EQ(hwtr_ar_nimages(ar), 1);
	nrec = fx_records(rec, hwtr_ar_image(ar, 0)->key);
	ATF_REQUIRE_EQ(hwtr_ar_nsideband(ar), nrec);
	for (i = 0; i < nrec; i++)
		fx_check_rec(&rec[i], hwtr_ar_sideband_rec(ar, i), i);
	hwtr_ar_close(ar);
	ATF_CHECK_EQ_MSG(system("zstd -q -t d0.hwtrace"), 0,
	    "zstd -t rejects d0.hwtrace");
	ref = slurp("d0.hwtrace", &rlen);
	for (i = 1; i < sizeof(runs) / sizeof(runs[0]); i++) {
		p = slurp(runs[i].path, &len);
		for (k = 0; k < len && k < rlen && p[k] == ref[k]; k++)
			;
		ATF_CHECK_MSG(len == rlen && k == len, "%s (threads %d, "
		    "pauses %u) differs from d0.hwtrace (threads 0, no "
		    "pauses): %zu vs %zu bytes, first difference at 0x%zx",
		    runs[i].path, runs[i].threads, runs[i].pause_seed, len,
		    rlen, k);
		free(p);
	}
	free(ref);
}

/*
 * A background write that fails (the file size limit, EFBIG) is reported
 * by the next call and by close, naming the member; nothing after it is
 * written, so the file stays a readable prefix.
 */
static void
limit_file_size(void)
{
	struct rlimit rl;

	signal(SIGXFSZ, SIG_IGN);
	rl.rlim_cur = rl.rlim_max = 256 * 1024;
	ATF_REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
}

/*
 * A writer of @path (compression @level, @threads) with a PT stream, its
 * file limited to 256 KiB (limit_file_size); in *@buf 1 MiB of fx_fill's
 * bytes of @seed, to free.
 */
static struct hwtr_aw *
limited_writer(const char *path, int level, int threads, uint32_t seed,
    uint8_t **buf)
{
	struct hwtr_aw *aw;

	ATF_REQUIRE((*buf = malloc(1 << 20)) != NULL);
	fx_fill(*buf, 1 << 20, seed);
	limit_file_size();
	aw = open_writer(path, level, threads);
	ATF_REQUIRE_EQ(add_pt_stream(aw), 0);
	return (aw);
}

ATF_TC_WITHOUT_HEAD(background_failure_at_next_call);
ATF_TC_BODY(background_failure_at_next_call, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b;
	char err[512];
	int rc;

	aw = limited_writer("f.hwtrace", 0, 0, 5, &b);
	/* 100 KiB fit, 1 MiB (~650 KB compressed) does not. */
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 100000),
	    0, "%s", hwtr_aw_errmsg(aw));
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 1 << 20),
	    0, "%s", hwtr_aw_errmsg(aw));
	rc = hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 1000);
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "the call after the failed chunk "
	    "returned %d, expected -HWTR_E_IO", rc);
	ATF_CHECK_MSG(strstr(hwtr_aw_errmsg(aw),
	    "streams/0/00000000000186a0.chunk") != NULL &&
	    strstr(hwtr_aw_errmsg(aw), strerror(EFBIG)) != NULL,
	    "message does not name the member and the cause: '%s'",
	    hwtr_aw_errmsg(aw));
	rc = hwtr_aw_close(aw, err, sizeof(err));
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "close returned %d", rc);
	ATF_CHECK_MSG(strstr(err, "streams/0/00000000000186a0.chunk") != NULL,
	    "close's message does not name the failed member: '%s'", err);
	/* The first chunk stays readable. */
	ATF_CHECK_EQ(chunks_in_file("f.hwtrace.partial", &b,
	    &(size_t){ 100000 }, 1), 1);
	free(b);
}

ATF_TC_WITHOUT_HEAD(background_failure_at_close);
ATF_TC_BODY(background_failure_at_close, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b;
	char err[512];
	int rc;

	aw = limited_writer("g.hwtrace", 0, 0, 6, &b);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 1 << 20), 0);
	rc = hwtr_aw_close(aw, err, sizeof(err));
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "close returned %d, expected "
	    "-HWTR_E_IO", rc);
	ATF_CHECK_MSG(strstr(err, "streams/0/0000000000000000.chunk") !=
	    NULL && strstr(err, strerror(EFBIG)) != NULL,
	    "close's message does not name the member and the cause: '%s'",
	    err);
	ATF_CHECK_MSG(access("g.hwtrace", F_OK) != 0,
	    "a failed close renamed the archive to its final name");
	free(b);
}

/* Without threads the same failure is reported by the call itself. */
ATF_TC_WITHOUT_HEAD(failure_without_threads_at_the_call);
ATF_TC_BODY(failure_without_threads_at_the_call, tc)
{
	struct hwtr_aw *aw;
	uint8_t *b;
	int rc;

	aw = limited_writer("h.hwtrace", 0, -1, 6, &b);
	rc = hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 1 << 20);
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "chunk returned %d", rc);
	ATF_CHECK_MSG(strstr(hwtr_aw_errmsg(aw),
	    "streams/0/0000000000000000.chunk") != NULL,
	    "message does not name the member: '%s'", hwtr_aw_errmsg(aw));
	hwtr_aw_abort(aw, 0);
	free(b);
}

/* An output that takes nothing fails at open, naming the file. */
ATF_TC_WITHOUT_HEAD(dev_full_fails_at_open);
ATF_TC_BODY(dev_full_fails_at_open, tc)
{
	struct hwtr_capture_meta m;
	struct hwtr_aw_opts o;
	struct hwtr_aw *aw;
	char err[256];
	int rc;

	/*
	 * Through a symbolic link: with no_partial a failed open removes the
	 * name it was given, which must be ours and not /dev/full's.
	 */
	ATF_REQUIRE(symlink("/dev/full", "full") == 0);
	fx_meta(&m);
	memset(&o, 0, sizeof(o));
	o.no_partial = 1;
	rc = hwtr_aw_open(&aw, "full", &m, &o, err, sizeof(err));
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "open of 'full' (/dev/full) returned "
	    "%d", rc);
	ATF_CHECK(aw == NULL);
	ATF_CHECK_MSG(strstr(err, "full") != NULL &&
	    strstr(err, strerror(ENOSPC)) != NULL,
	    "message does not name the file and the cause: '%s'", err);
}

/*
 * Issue 16: a chunk that fails in the background (a full disk) shows in
 * the next call, which may be a sideband flush; hwtr_aw_failed_member()
 * says it was the chunk, so that capture does not blame the sideband.
 */
ATF_TC_WITHOUT_HEAD(failed_chunk_named_at_flush);
ATF_TC_BODY(failed_chunk_named_at_flush, tc)
{
	struct hwtr_aw *aw;
	struct hwtr_sb_rec r;
	uint8_t *b;
	char err[512];
	int rc;

	aw = limited_writer("f.hwtrace", 0, 2, 5, &b);
	ATF_CHECK(hwtr_aw_failed_member(aw) == NULL);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, b, 1 << 20),
	    0, "%s", hwtr_aw_errmsg(aw));
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_START;
	r.pid = r.tid = 1;
	r.u.proc_start.ppid = -1;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);
	rc = hwtr_aw_flush(aw);
	ATF_CHECK_EQ_MSG(rc, -HWTR_E_IO, "flush returned %d", rc);
	ATF_CHECK_MSG(hwtr_aw_failed_member(aw) != NULL &&
	    strcmp(hwtr_aw_failed_member(aw),
	    "streams/0/0000000000000000.chunk") == 0,
	    "failed member '%s', expected the chunk",
	    hwtr_aw_failed_member(aw) ? hwtr_aw_failed_member(aw) : "(none)");
	(void)hwtr_aw_close(aw, err, sizeof(err));
	free(b);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, failed_chunk_named_at_flush);
	ATF_TP_ADD_TC(tp, chunk_in_file_when_next_call_returns);
	ATF_TP_ADD_TC(tp, chunk_in_file_without_next_call);
	ATF_TP_ADD_TC(tp, abort_keeps_given_chunks);
	ATF_TP_ADD_TC(tp, same_calls_same_bytes);
	ATF_TP_ADD_TC(tp, background_failure_at_next_call);
	ATF_TP_ADD_TC(tp, background_failure_at_close);
	ATF_TP_ADD_TC(tp, failure_without_threads_at_the_call);
	ATF_TP_ADD_TC(tp, dev_full_fails_at_open);
	return (atf_no_error());
}
