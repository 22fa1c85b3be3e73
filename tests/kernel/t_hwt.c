/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hwt source (kernel/hwt.c) end to end against a simulated FreeBSD
 * hwt(4) (tests/kernel/fakehwt.c, included below), reached through the
 * test-only entry hwtr_hwt_init_sys(): the source gets the simulated
 * kernel's system call table instead of FreeBSD's.  Each case launches
 * the real fixture tests/progs/perfline (it waits for the simulated
 * kernel's "done" file, runs perfline_code and exits 3), drives the
 * source's ops as a capture session does, makes the archive of its
 * recording with the perf.data importer (as the session does), indexes
 * it with `hwtrace index`, and compares the instructions decoded with
 * the ones the simulated kernel's encoder was told to trace: spans of
 * [perfline_code, perfline_end), whose instruction count objdump gives
 * and whose addresses nm gives.
 */

#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "hwtr_import.h"
#include "fakehwt.c"

#define PROG	HWTR_TEST_PROGS "/perfline"
#define PROGPIE	HWTR_TEST_PROGS "/perfline-pie"

struct prog {
	uint64_t	from, to;	/* perfline_code, perfline_end */
	long		ninsn;		/* instructions in [from, to) */
};

/* The first line of @cmd's output as a number; -1 when none. */
static long long
sh_num(const char *cmd, int base)
{
	char line[256];
	long long v = -1;
	FILE *fp;

	if ((fp = popen(cmd, "r")) == NULL)
		return (-1);
	if (fgets(line, sizeof(line), fp) != NULL && line[0] != '\n')
		v = strtoll(line, NULL, base);
	pclose(fp);
	return (v);
}

static void
prog_load(struct prog *p)
{
	char cmd[1024];

	if (access(PROG, X_OK) != 0)
		atf_tc_skip("fixture %s not built", PROG);
	p->from = (uint64_t)sh_num("nm " PROG " | awk '/ perfline_code$/ "
	    "{ print $1 }'", 16);
	p->to = (uint64_t)sh_num("nm " PROG " | awk '/ perfline_end$/ "
	    "{ print $1 }'", 16);
	ATF_REQUIRE_MSG(p->from > 0 && p->to > p->from, "nm gave "
	    "perfline_code %#jx, perfline_end %#jx", (uintmax_t)p->from,
	    (uintmax_t)p->to);
	snprintf(cmd, sizeof(cmd), "objdump -d --start-address=%#jx "
	    "--stop-address=%#jx " PROG " | grep -cE '^ +[0-9a-f]+:'",
	    (uintmax_t)p->from, (uintmax_t)p->to);
	p->ninsn = (long)sh_num(cmd, 10);
	ATF_REQUIRE_MSG(p->ninsn > 0, "objdump counted %ld instructions",
	    p->ninsn);
}

/* A simulated kernel tracing @p's spans, its done file in the cwd. */
static void
fk_setup(struct fakehwt *fk, const struct prog *p, int spans)
{
	fk_init(fk);
	fk->exe = PROG;
	fk->from = p->from;
	fk->to = p->to;
	fk->spans = spans;
	fk->done = "done";
	(void)unlink("done");
}

/*
 * The start of most cases: perfline's code, a simulated kernel tracing
 * @spans spans of it, a configuration of @bufsize bytes per buffer.
 */
static void
case_start(struct prog *p, struct fakehwt *fk, int spans,
    struct hwtr_src_config *cfg, size_t bufsize)
{
	prog_load(p);
	fk_setup(fk, p, spans);
	memset(cfg, 0, sizeof(*cfg));
	cfg->buffer_size = bufsize;
}

struct run {
	int		rc;		/* the source's (or the import's) */
	char		err[HWTR_ERRMSG_MAX];
	struct hwtr_capture_end end;
	int		exit_kind, exit_value;
};

/*
 * Capture perfline with the source against @fk, as a session does, into
 * the archive @out.  The simulated kernel is stopped before this
 * returns (its log stays readable).
 */
static void
capture(struct fakehwt *fk, struct hwtr_src_config *cfg, const char *out,
    struct run *r)
{
	static char *argv[] = { (char *)PROG, (char *)"done", NULL };
	struct hwtr_src src;
	struct hwtr_hwt_sys sys;
	struct hwtr_capture_meta meta;
	struct hwtr_import_opts io;
	struct hwtr_aw_opts ao;
	uint64_t bytes = 0;
	time_t t0;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&src, 0, sizeof(src));
	src.ops = &hwtr_hwt_ops;
	fk_sys(fk, &sys);
	if (cfg->argv == NULL)
		cfg->argv = argv;
	ATF_REQUIRE(hwtr_hwt_init_sys(&src, &sys) == 0);
	if ((rc = src.ops->configure(&src, cfg)) < 0)
		goto fail;
	if ((rc = src.ops->enable(&src)) < 0) {
		(void)src.ops->disable(&src);
		goto fail;
	}
	t0 = time(NULL);
	for (rc = 0; rc == 0 && time(NULL) - t0 < 60; )
		rc = src.ops->read(&src);
	if (rc == 0) {
		snprintf(src.errmsg, sizeof(src.errmsg), "the capture did "
		    "not end in 60 s");
		rc = -HWTR_E_INTR;
		(void)src.ops->disable(&src);
	}
	if (rc < 0)
		goto fail;
	r->exit_kind = src.exit_kind;
	r->exit_value = src.exit_value;
	ATF_REQUIRE_MSG(src.recording != NULL, "no recording after the end");
	hwtr_import_meta_init(&meta, "hwt");
	memset(&io, 0, sizeof(io));
	memset(&ao, 0, sizeof(ao));
	ao.level = 1;
	io.format = "perf";
	io.aw_opts = &ao;
	r->end.exit_kind = src.exit_kind;
	r->end.exit_value = src.exit_value;
	r->rc = hwtr_import_perf_capture(src.recording, &io, &meta, &r->end,
	    out, &bytes, r->err, sizeof(r->err));
	src.ops->deinit(&src);
	fk_fini(fk);
	return;
fail:
	r->rc = rc;
	snprintf(r->err, sizeof(r->err), "%s", src.errmsg);
	src.ops->deinit(&src);
	fk_fini(fk);
}

/* The instructions `hwtrace index` decodes from @archive. */
static long
indexed(const char *archive)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s index -o %s.db %s 2>&1 | sed -n "
	    "'s/.* \\([0-9][0-9]*\\) instructions.*/\\1/p'", HWTR_TEST_HWTRACE,
	    archive, archive);
	return ((long)sh_num(cmd, 10));
}

/* @archive's `hwtrace info` holds @what (a fixed string). */
static int
info_has(const char *archive, const char *what)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s info %s | grep -cF -- '%s'",
	    HWTR_TEST_HWTRACE, archive, what);
	return (sh_num(cmd, 10) > 0);
}

static void
require_ok(const struct run *r, const struct fakehwt *fk)
{
	ATF_REQUIRE_MSG(r->rc == 0, "capture failed (%d): %s; kernel log: %s",
	    r->rc, r->err, fk->log);
	ATF_REQUIRE_MSG(r->exit_kind == HWTR_EXIT_CODE && r->exit_value == 3,
	    "expected the fixture's exit status 3, got kind %d value %d",
	    r->exit_kind, r->exit_value);
}

static void
require_insns(const char *archive, long want, const struct fakehwt *fk)
{
	long got = indexed(archive);

	ATF_REQUIRE_MSG(got == want, "expected %ld instructions decoded, the "
	    "index says %ld; kernel log: %s", want, got, fk != NULL ?
	    fk->log : "(none)");
}

ATF_TC(wrap_between_reads);
ATF_TC_HEAD(wrap_between_reads, tc)
{
	atf_tc_set_md_var(tc, "descr", "Thread mode: the ring (2 ToPA pages) "
	    "wraps between two reads, which end mid-page (the thread is "
	    "switched out after each span); every span is read across the "
	    "wrap, nothing is lost, and the context was set up as hwt(4) "
	    "wants");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(wrap_between_reads, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 300, &cfg, 8192);
	fk.pad = 30;
	fk.pace = 1;
	fk.switch_out = 1;	/* reads end mid-page: copies cross the end */
	capture(&fk, &cfg, "w.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "alloc bufsize=8192 mode=1 pid=") &&
	    strstr(fk.log, "backend=pt kq=300"), "ALLOC not as expected: %s",
	    fk.log);
	ATF_REQUIRE_MSG(strstr(fk.log, "mmap fd=200 prot=1 len=8192 | "),
	    "thread 0's device not mapped read-only: %s", fk.log);
	/* USER (bit 3) and BRANCHEN (bit 13): 0x2008. */
	ATF_REQUIRE_MSG(strstr(fk.log, "set_config pause=0 size=72 version=1 "
	    "rtit_ctl=0x2008 nranges=0"), "SET_CONFIG not as expected: %s",
	    fk.log);
	ATF_REQUIRE_MSG(fk.dev[0].written > 2 * 8192, "the ring did not wrap "
	    "twice: %ju bytes", (uintmax_t)fk.dev[0].written);
	ATF_REQUIRE_MSG(strstr(fk.log, "reader slow") == NULL, "%s", fk.log);
	ATF_REQUIRE_MSG(r.end.lost_bytes == 0, "expected no loss, got %ju "
	    "bytes", (uintmax_t)r.end.lost_bytes);
	require_insns("w.hwtrace", 300 * p.ninsn, &fk);
}

ATF_TC(lap_lost);
ATF_TC_HEAD(lap_lost, tc)
{
	atf_tc_set_md_var(tc, "descr", "A reader too slow for the ring: the "
	    "laps it missed are recorded as lost bytes, exactly, and the "
	    "spans still in the ring decode");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(lap_lost, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t kept;
	long want = 0;
	int i;

	case_start(&p, &fk, 20, &cfg, 8192);
	fk.pad = 1000;
	fk.burst = 1;
	capture(&fk, &cfg, "l.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(fk.first_seen > 8192, "the reader saw %ju first: no "
	    "lap to lose", (uintmax_t)fk.first_seen);
	/* What the reader trusts: all but the page being written. */
	kept = fk.first_seen - (8192 - HWTR_HWT_PAGE);
	for (i = 0; i < fk.nspans; i++)
		if (fk.span_at[i] >= kept)
			want += p.ninsn;
	ATF_REQUIRE_MSG(want > 0 && want < 20 * p.ninsn, "%ld instructions "
	    "expected: not a partial lap", want);
	ATF_REQUIRE_MSG(r.end.lost_bytes == kept, "expected %ju bytes lost "
	    "(overwritten before the first read), the archive says %ju",
	    (uintmax_t)kept, (uintmax_t)r.end.lost_bytes);
	require_insns("l.hwtrace", want, &fk);
}

ATF_TC(stop_without_record);
ATF_TC_HEAD(stop_without_record, tc)
{
	atf_tc_set_md_var(tc, "descr", "No ToPA page fills, so hwt(4) queues "
	    "no BUFFER record; STOP queues none either: the trace is read at "
	    "BUFPTR_GET's position after STOP");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(stop_without_record, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 3, &cfg, 65536);
	capture(&fk, &cfg, "s.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(fk.nbuffer_recs == 0 && fk.dev[0].written > 0 &&
	    fk.dev[0].written < HWTR_HWT_PAGE, "expected a partial page and "
	    "no BUFFER record: %ju bytes, %d records",
	    (uintmax_t)fk.dev[0].written, fk.nbuffer_recs);
	ATF_REQUIRE_MSG(strstr(fk.log, "stop | ") != NULL, "no STOP: %s",
	    fk.log);
	require_insns("s.hwtrace", 3 * p.ninsn, &fk);
}

ATF_TC(ring_mode);
ATF_TC_HEAD(ring_mode, tc)
{
	atf_tc_set_md_var(tc, "descr", "--mode ring: nothing is read while "
	    "the command runs; after STOP the whole ring (--buffer bytes) is "
	    "kept, what came before it is recorded lost, exactly");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(ring_mode, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t kept;
	long want = 0;
	int i;

	case_start(&p, &fk, 20, &cfg, 8192);
	fk.pad = 1000;
	cfg.mode = HWTR_CAP_RING;
	capture(&fk, &cfg, "r.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(fk.first_seen == fk.dev[0].written, "the ring was "
	    "read at %ju before STOP (%ju written)",
	    (uintmax_t)fk.first_seen, (uintmax_t)fk.dev[0].written);
	kept = fk.dev[0].written - 8192;
	for (i = 0; i < fk.nspans; i++)
		if (fk.span_at[i] >= kept)
			want += p.ninsn;
	ATF_REQUIRE_MSG(r.end.lost_bytes == kept, "expected %ju bytes lost, "
	    "the archive says %ju", (uintmax_t)kept,
	    (uintmax_t)r.end.lost_bytes);
	require_insns("r.hwtrace", want, &fk);
}

ATF_TC(ring_snapshot);
ATF_TC_HEAD(ring_snapshot, tc)
{
	atf_tc_set_md_var(tc, "descr", "--mode ring and SIGUSR2 mid-run: the "
	    "snapshot keeps the ring's last --buffer less a page bytes before "
	    "the position then, the end the whole ring; the rest is recorded "
	    "lost, exactly");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(ring_snapshot, tc)
{
	static volatile int usr2;
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t snap_from, end_from, lost;
	long want = 0, in_snap = 0;
	int i;

	case_start(&p, &fk, 20, &cfg, 8192);
	fk.pad = 1000;
	fk.snap_at = 10;
	fk.snap_ctr = &usr2;
	cfg.mode = HWTR_CAP_RING;
	cfg.snapshot = &usr2;
	capture(&fk, &cfg, "n.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "no snapshot taken") == NULL &&
	    fk.first_seen == fk.snap_pos && fk.snap_pos >= 8192, "the "
	    "snapshot did not read the position %ju (first read: %ju): %s",
	    (uintmax_t)fk.snap_pos, (uintmax_t)fk.first_seen, fk.log);
	/* The snapshot: [pos - 4 KiB, pos); the end: the last 8 KiB. */
	snap_from = fk.snap_pos - 4096;
	end_from = fk.dev[0].written - 8192;
	ATF_REQUIRE_MSG(end_from >= fk.snap_pos, "the two windows overlap");
	for (i = 0; i < fk.nspans; i++) {
		/* A span is its trace, then fk.pad PADs. */
		if (fk.span_at[i] >= snap_from && i + 1 < fk.nspans &&
		    fk.span_at[i] < fk.snap_pos) {
			ATF_REQUIRE_MSG(fk.span_at[i + 1] - 1000 <=
			    fk.snap_pos, "the snapshot cuts span %d's trace, "
			    "[%ju, %ju)", i, (uintmax_t)fk.span_at[i],
			    (uintmax_t)(fk.span_at[i + 1] - 1000));
			want += p.ninsn;
			in_snap++;
		} else if (fk.span_at[i] >= end_from)
			want += p.ninsn;
	}
	ATF_REQUIRE_MSG(in_snap > 0, "no whole span in the snapshot's window "
	    "[%ju, %ju)", (uintmax_t)snap_from, (uintmax_t)fk.snap_pos);
	lost = snap_from + (end_from - fk.snap_pos);
	ATF_REQUIRE_MSG(r.end.lost_bytes == lost, "expected %ju bytes lost, "
	    "the archive says %ju", (uintmax_t)lost,
	    (uintmax_t)r.end.lost_bytes);
	require_insns("n.hwtrace", want, &fk);
}

ATF_TC(stop_mode);
ATF_TC_HEAD(stop_mode, tc)
{
	atf_tc_set_md_var(tc, "descr", "--mode stop: the first --buffer bytes "
	    "are kept, the rest is recorded lost, exactly");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(stop_mode, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	long whole = 0, got;
	int i;

	case_start(&p, &fk, 20, &cfg, 8192);
	fk.pad = 1000;
	fk.pace = 1;
	cfg.mode = HWTR_CAP_STOP;
	capture(&fk, &cfg, "p.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(r.end.lost_bytes == fk.dev[0].written - 8192,
	    "expected %ju bytes lost, the archive says %ju",
	    (uintmax_t)(fk.dev[0].written - 8192),
	    (uintmax_t)r.end.lost_bytes);
	/* Spans wholly in the first 8192 bytes; the one cut may count. */
	for (i = 0; i + 1 < fk.nspans; i++)
		if (fk.span_at[i + 1] <= 8192)
			whole++;
	got = indexed("p.hwtrace");
	ATF_REQUIRE_MSG(got >= whole * p.ninsn &&
	    got <= (whole + 1) * p.ninsn, "expected %ld spans of %ld "
	    "instructions (and part of one), the index says %ld", whole,
	    p.ninsn, got);
}

ATF_TC(thread_create);
ATF_TC_HEAD(thread_create, tc)
{
	atf_tc_set_md_var(tc, "descr", "A THREAD_CREATE record mid-run: the "
	    "new thread's device is opened and mapped, its stream is the "
	    "archive's second, and both decode");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(thread_create, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 5, &cfg, 16384);
	fk.new_thread_at = 2;
	fk.pace = 1;
	capture(&fk, &cfg, "t.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "open /dev/hwt_7_1 | ") &&
	    strstr(fk.log, "mmap fd=201 prot=1 len=16384 | "), "thread 1's "
	    "device not opened and mapped: %s", fk.log);
	ATF_REQUIRE_MSG(info_has("t.hwtrace", "tid 1, cpu -1"), "no stream "
	    "for thread 1 in the archive");
	require_insns("t.hwtrace", 5 * p.ninsn, &fk);
}

ATF_TC(filter_pause_on_mmap);
ATF_TC_HEAD(filter_pause_on_mmap, tc)
{
	atf_tc_set_md_var(tc, "descr", "--filter FUNC as hwt(8) does it: "
	    "pause_on_mmap, no START; at the EXECUTABLE record the function "
	    "is found, the IP range set, START, WAKEUP; the MMAP record "
	    "after it is in the sideband");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(filter_pause_on_mmap, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	char want[256];
	long long size;

	case_start(&p, &fk, 2, &cfg, 16384);
	if (access(PROGPIE, R_OK) != 0)
		atf_tc_skip("fixture %s not built", PROGPIE);
	fk.mmap_path = PROGPIE;
	fk.mmap_addr = 0x7f0000000000ULL;
	cfg.filter = "perfline_code";
	capture(&fk, &cfg, "f.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "set_config pause=1 size=72 version=1 "
	    "rtit_ctl=0x2008 nranges=0"), "first SET_CONFIG without "
	    "pause_on_mmap: %s", fk.log);
	/* The range is the symbol's, as nm -S gives its size. */
	size = sh_num("nm -S " PROG " | awk '/ perfline_code$/ { print $2 }'",
	    16);
	ATF_REQUIRE_MSG(size > 0, "nm -S gave no size for perfline_code");
	snprintf(want, sizeof(want), "set_config pause=0 size=72 version=1 "
	    "rtit_ctl=0x2008 nranges=1 range=%#jx-%#jx | start after 2 "
	    "set_config | wakeup | ", (uintmax_t)p.from,
	    (uintmax_t)(p.from + (uint64_t)size));
	ATF_REQUIRE_MSG(strstr(fk.log, want), "expected '%s' in the kernel "
	    "log: %s", want, fk.log);
	ATF_REQUIRE_MSG(strstr(fk.log, "never woken") == NULL, "%s", fk.log);
	ATF_REQUIRE_MSG(info_has("f.hwtrace", PROGPIE), "the MMAP record's "
	    "image %s is not in the archive", PROGPIE);
	require_insns("f.hwtrace", 2 * p.ninsn, &fk);
}

ATF_TC(filter_not_found);
ATF_TC_HEAD(filter_not_found, tc)
{
	atf_tc_set_md_var(tc, "descr", "--filter of a function no image has: "
	    "every paused thread is woken, nothing is traced, the capture "
	    "fails naming the function");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(filter_not_found, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 1, &cfg, 16384);
	cfg.filter = "no_such_function";
	capture(&fk, &cfg, "n.hwtrace", &r);
	ATF_REQUIRE_MSG(r.rc < 0 && strstr(r.err, "no_such_function"),
	    "expected a failure naming the function, got %d: %s", r.rc, r.err);
	ATF_REQUIRE_MSG(strstr(fk.log, "start after") == NULL, "started "
	    "without its filter: %s", fk.log);
	ATF_REQUIRE_MSG(strstr(fk.log, "wakeup | ") != NULL, "the paused "
	    "thread was not woken: %s", fk.log);
}

/* ALLOC failing with @e: enable fails with @words in its message. */
static void
alloc_fails(int e, const char *words)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	int st;

	case_start(&p, &fk, 1, &cfg, 0);
	fk.alloc_errno = e;
	capture(&fk, &cfg, "e.hwtrace", &r);
	ATF_REQUIRE_MSG(r.rc < 0, "ALLOC failing with %s: the capture "
	    "succeeded", strerror(e));
	ATF_REQUIRE_MSG(strstr(r.err, words) != NULL && strstr(r.err,
	    "HWT_IOC_ALLOC") != NULL && strstr(r.err, strerror(e)) != NULL,
	    "ALLOC failing with %s: expected '%s' in the message, got: %s",
	    strerror(e), words, r.err);
	ATF_REQUIRE_MSG(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD,
	    "the held command was left behind");
	ATF_REQUIRE_MSG(access("e.hwtrace", F_OK) != 0, "an archive was "
	    "written");
}

ATF_TC(alloc_errors);
ATF_TC_HEAD(alloc_errors, tc)
{
	atf_tc_set_md_var(tc, "descr", "HWT_IOC_ALLOC refused with EBUSY, "
	    "EEXIST, EPERM, ENXIO: a clear error naming the cause, the "
	    "command not left running");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(alloc_errors, tc)
{
	alloc_fails(EBUSY, "busy");
	alloc_fails(EEXIST, "already traced");
	alloc_fails(EPERM, "not permitted");
	alloc_fails(ENXIO, "no such process");
}

ATF_TC(device_gone);
ATF_TC_HEAD(device_gone, tc)
{
	atf_tc_set_md_var(tc, "descr", "The thread's device disappears "
	    "mid-run: what was read before decodes, the rest is recorded "
	    "lost, the capture ends normally");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(device_gone, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 5, &cfg, 16384);
	fk.gone_after = 3;
	fk.pace = 1;
	capture(&fk, &cfg, "g.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "device 0 gone after 3 spans") &&
	    strstr(fk.log, "never saw") == NULL, "%s", fk.log);
	require_insns("g.hwtrace", 3 * p.ninsn, &fk);
	ATF_REQUIRE_MSG(sh_num("sqlite3 g.hwtrace.db \"select count(*) from "
	    "events where kind = 'lost'\"", 10) == 1, "expected the loss "
	    "recorded once in the archive's sideband");
}

ATF_TC(cpu_mode_kernel);
ATF_TC_HEAD(cpu_mode_kernel, tc)
{
	atf_tc_set_md_var(tc, "descr", "CPU mode (--cpu 0,1): a device per "
	    "CPU, one START, KERNEL records in the sideband, a stream per "
	    "CPU, and every span decodes");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(cpu_mode_kernel, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 4, &cfg, 16384);
	if (access(PROGPIE, R_OK) != 0)
		atf_tc_skip("fixture %s not built", PROGPIE);
	fk.kpath = PROGPIE;
	fk.kaddr = 0xffffffff80200000ULL;
	fk.pace = 1;
	cfg.cpus = "0,1";
	capture(&fk, &cfg, "c.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "mode=2") && strstr(fk.log,
	    "open /dev/hwt_7_0 | ") && strstr(fk.log, "open /dev/hwt_7_1 | "),
	    "not a CPU mode context over CPUs 0 and 1: %s", fk.log);
	/* OS (bit 2), USER, BRANCHEN. */
	ATF_REQUIRE_MSG(strstr(fk.log, "rtit_ctl=0x200c"), "%s", fk.log);
	ATF_REQUIRE_MSG(info_has("c.hwtrace", "pid -1, tid -1, cpu 0") &&
	    info_has("c.hwtrace", "pid -1, tid -1, cpu 1"), "no stream per "
	    "CPU");
	ATF_REQUIRE_MSG(info_has("c.hwtrace", PROGPIE), "the KERNEL record's "
	    "image is not in the archive");
	require_insns("c.hwtrace", 4 * p.ninsn, &fk);
}

/* -p's process, reaped as soon as it exits (as its parent would). */
struct attached {
	pid_t		pid;
	int		status;
};

static void *
reaper(void *arg)
{
	struct attached *a = arg;

	while (waitpid(a->pid, &a->status, 0) < 0 && errno == EINTR)
		;
	return (NULL);
}

/*
 * -p PID: run PROG "done" as a process of the test's own (its status in
 * @a once it exits, it exits 3), capture it attached into @out and
 * require that the capture succeeded.  @external: the simulated kernel
 * takes it as a process the source did not launch (ptrace stops).
 */
static void
capture_attached(struct fakehwt *fk, struct hwtr_src_config *cfg,
    const char *out, struct run *r, struct attached *a, int external)
{
	pthread_t t;
	int i;

	a->status = -1;
	ATF_REQUIRE((a->pid = fork()) >= 0);
	if (a->pid == 0) {
		execl(PROG, PROG, "done", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 2000 && !fk_execd(a->pid, PROG); i++)
		usleep(2000);
	ATF_REQUIRE_MSG(fk_execd(a->pid, PROG), "%s never ran", PROG);
	ATF_REQUIRE(pthread_create(&t, NULL, reaper, a) == 0);
	if (external)
		fk->external = a->pid;
	cfg->pid = a->pid;
	capture(fk, cfg, out, r);
	pthread_join(t, NULL);
	ATF_REQUIRE_MSG(r->rc == 0, "capture failed (%d): %s; kernel log: %s",
	    r->rc, r->err, fk->log);
	ATF_REQUIRE_MSG(WIFEXITED(a->status) && WEXITSTATUS(a->status) == 3,
	    "the attached process did not exit 3 (status %#x)", a->status);
}

ATF_TC(attach_pid);
ATF_TC_HEAD(attach_pid, tc)
{
	atf_tc_set_md_var(tc, "descr", "-p PID: the context is allocated for "
	    "a process already running, nothing is launched, the capture "
	    "ends when it exits and its trace decodes");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(attach_pid, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	struct attached a;
	char want[64];

	case_start(&p, &fk, 3, &cfg, 16384);
	fk.pace = 1;
	capture_attached(&fk, &cfg, "a.hwtrace", &r, &a, 0);
	snprintf(want, sizeof(want), "alloc bufsize=16384 mode=1 pid=%d ",
	    (int)a.pid);
	ATF_REQUIRE_MSG(strstr(fk.log, want), "no thread mode context for "
	    "pid %d: %s", (int)a.pid, fk.log);
	ATF_REQUIRE_MSG(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
	    "the source launched a process of its own");
	require_insns("a.hwtrace", 3 * p.ninsn, &fk);
}

ATF_TC(all_cpus);
ATF_TC_HEAD(all_cpus, tc)
{
	atf_tc_set_md_var(tc, "descr", "-a: a CPU mode context over every "
	    "CPU getconf counts, a device per CPU, KERNEL records' images, "
	    "and the spans written round the CPUs decode");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(all_cpus, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	char want[64];
	long ncpu;
	int i;

	ncpu = (long)sh_num("getconf _NPROCESSORS_CONF", 10);
	if (ncpu < 1 || ncpu > FK_DEVS)
		atf_tc_skip("%ld CPUs: the simulated kernel models 1 to %d",
		    ncpu, FK_DEVS);
	case_start(&p, &fk, 2 * (int)ncpu, &cfg, 16384);
	if (access(PROGPIE, R_OK) != 0)
		atf_tc_skip("fixture %s not built", PROGPIE);
	fk.kpath = PROGPIE;
	fk.kaddr = 0xffffffff80200000ULL;
	fk.pace = 1;
	cfg.all_cpus = 1;
	capture(&fk, &cfg, "all.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "mode=2"), "not a CPU mode context: "
	    "%s", fk.log);
	for (i = 0; i < ncpu; i++) {
		snprintf(want, sizeof(want), "open /dev/hwt_7_%d | ", i);
		ATF_REQUIRE_MSG(strstr(fk.log, want), "CPU %d's device not "
		    "opened: %s", i, fk.log);
		snprintf(want, sizeof(want), "pid -1, tid -1, cpu %d", i);
		ATF_REQUIRE_MSG(info_has("all.hwtrace", want), "no stream "
		    "for CPU %d", i);
	}
	snprintf(want, sizeof(want), "open /dev/hwt_7_%ld | ", ncpu);
	ATF_REQUIRE_MSG(strstr(fk.log, want) == NULL, "a device past the "
	    "%ld CPUs: %s", ncpu, fk.log);
	ATF_REQUIRE_MSG(info_has("all.hwtrace", PROGPIE), "the KERNEL "
	    "record's image is not in the archive");
	require_insns("all.hwtrace", 2 * ncpu * p.ninsn, &fk);
}

/*
 * An AArch64 ELF executable made by construction: a PT_LOAD at CS_VADDR
 * of the whole file, a PT_NOTE with a GNU build-id, and at CS_CODE the
 * code: CS_NOPS NOPs and a B back to the first, so that every E atom
 * from there is CS_NOPS + 1 instructions.
 */
#define CS_VADDR	0xffff000008000000ULL
#define CS_OFF		0x100
#define CS_CODE		(CS_VADDR + CS_OFF)
#define CS_NOPS		9

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A program header at @p. */
static void
cs_phdr(uint8_t *p, uint32_t type, uint32_t flags, uint64_t off,
    uint64_t size, uint64_t align)
{
	put_le(p, type, 4);
	put_le(p + 4, flags, 4);
	put_le(p + 8, off, 8);
	put_le(p + 16, CS_VADDR + off, 8);	/* p_vaddr */
	put_le(p + 24, CS_VADDR + off, 8);	/* p_paddr */
	put_le(p + 32, size, 8);		/* p_filesz */
	put_le(p + 40, size, 8);		/* p_memsz */
	put_le(p + 48, align, 8);
}

static void
cs_image(const char *path)
{
	uint8_t img[CS_OFF + 4 * (CS_NOPS + 1)];
	uint32_t insn;
	FILE *fp;
	int i;

	memset(img, 0, sizeof(img));
	memcpy(img, "\177ELF\2\1\1", 7);	/* 64-bit, little-endian */
	put_le(img + 16, 2, 2);			/* ET_EXEC */
	put_le(img + 18, 183, 2);		/* EM_AARCH64 */
	put_le(img + 20, 1, 4);
	put_le(img + 24, CS_CODE, 8);		/* e_entry */
	put_le(img + 32, 64, 8);		/* e_phoff */
	put_le(img + 52, 64, 2);		/* e_ehsize */
	put_le(img + 54, 56, 2);		/* e_phentsize */
	put_le(img + 56, 2, 2);			/* e_phnum */
	put_le(img + 58, 64, 2);		/* e_shentsize */
	cs_phdr(img + 64, 1, 5, 0, sizeof(img), 0x1000); /* PT_LOAD, R X */
	cs_phdr(img + 120, 4, 4, 0xb0, 36, 4);	/* PT_NOTE */
	put_le(img + 0xb0, 4, 4);		/* namesz */
	put_le(img + 0xb4, 20, 4);		/* descsz */
	put_le(img + 0xb8, 3, 4);		/* NT_GNU_BUILD_ID */
	memcpy(img + 0xbc, "GNU", 4);
	for (i = 0; i < 20; i++)
		img[0xc0 + i] = (uint8_t)(0xc5 + i);
	for (i = 0; i <= CS_NOPS; i++) {
		insn = i < CS_NOPS ? 0xd503201fu :	/* NOP */
		    0x14000000u | ((uint32_t)-CS_NOPS & 0x3ffffffu); /* B */
		put_le(img + CS_OFF + 4 * i, insn, 4);
	}
	ATF_REQUIRE((fp = fopen(path, "wb")) != NULL);
	ATF_REQUIRE(fwrite(img, 1, sizeof(img), fp) == sizeof(img));
	ATF_REQUIRE(fclose(fp) == 0);
}

/*
 * The instructions llvm-mc disassembles in @path's code that are the
 * loop's (NOPs, and a B back to the first): CS_NOPS + 1.
 */
static long
cs_disasm(const char *path)
{
	char cmd[PATH_MAX + 512];

	snprintf(cmd, sizeof(cmd), "od -An -v -tx1 -j%d -N%d %s | "
	    "sed 's/\\([0-9a-f][0-9a-f]\\)/0x\\1/g' | "
	    "llvm-mc --disassemble -triple=aarch64 2>/dev/null | "
	    "grep -cE '^[[:space:]]+(nop|b[[:space:]]+#-%d)$'", CS_OFF,
	    4 * (CS_NOPS + 1), path, 4 * CS_NOPS);
	return ((long)sh_num(cmd, 10));
}

ATF_TC(coresight_cpu);
ATF_TC_HEAD(coresight_cpu, tc)
{
	atf_tc_set_md_var(tc, "descr", "The coresight backend in CPU mode: "
	    "the ETMs' ID registers read by sysctl, the first CPU's ETR "
	    "ring read by BUFPTR_GET across its wrap, its formatted frames "
	    "of two trace IDs decode to the E atoms the simulated kernel "
	    "wrote times the instructions of the loop");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(coresight_cpu, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	char img[PATH_MAX + 16], cwd[PATH_MAX];
	long per;
	int spans = 40;

	case_start(&p, &fk, spans, &cfg, 8192);
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(img, sizeof(img), "%s/cs.elf", cwd);
	cs_image(img);
	if (system("llvm-mc --version >/dev/null 2>&1") != 0)
		atf_tc_skip("llvm-mc, to disassemble AArch64, is not "
		    "installed");
	per = cs_disasm(img);
	ATF_REQUIRE_MSG(per == CS_NOPS + 1, "llvm-mc sees %ld instructions "
	    "in the loop, expected %d", per, CS_NOPS + 1);
	fk.backend = "coresight";
	fk.from = CS_CODE;
	fk.cs_atoms = 200;
	fk.kpath = img;
	fk.kaddr = CS_VADDR;
	fk.pace = 1;
	cfg.cpus = "0,1";
	ATF_REQUIRE(setenv("HWTRACE_HWT_BACKEND", "coresight", 1) == 0);
	capture(&fk, &cfg, "cs.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "backend=coresight") &&
	    strstr(fk.log, "open /dev/hwt_7_0 | ") &&
	    !strstr(fk.log, "open /dev/hwt_7_1"), "expected a coresight "
	    "context read through CPU 0's device only: %s", fk.log);
	ATF_REQUIRE_MSG(fk.nsysctl == 2 * 14, "expected 28 sysctl reads "
	    "(idr0 to idr13 of two ETMs), got %d", fk.nsysctl);
	ATF_REQUIRE_MSG(fk.dev[0].written > fk.bufsize, "the ring did not "
	    "wrap: %ju bytes in %zu", (uintmax_t)fk.dev[0].written,
	    fk.bufsize);
	ATF_REQUIRE_MSG(info_has("cs.hwtrace", "TRCIDR0 = 0x28000ea1") &&
	    info_has("cs.hwtrace", "etmv4, trace id 0x01") &&
	    info_has("cs.hwtrace", "etmv4, trace id 0x02"), "the archive's "
	    "sources are not the two ETMs with fk_sysctl's TRCIDR0 and "
	    "trace IDs 1 and 2");
	require_insns("cs.hwtrace", (long)spans * fk.cs_atoms * per, &fk);
}

/* Write @len bytes of @p to @path. */
static void
put_file(const char *path, const void *p, size_t len)
{
	FILE *fp;

	ATF_REQUIRE_MSG((fp = fopen(path, "wb")) != NULL, "%s", path);
	ATF_REQUIRE(len == 0 || fwrite(p, 1, len, fp) == len);
	ATF_REQUIRE(fclose(fp) == 0);
}

ATF_TC(coresight_opencsd);
ATF_TC_HEAD(coresight_opencsd, tc)
{
	atf_tc_set_md_var(tc, "descr", "The simulated kernel's CoreSight "
	    "frames, as an OpenCSD snapshot, decode with OpenCSD's own "
	    "trc_pkt_lister to the instructions counted by construction "
	    "(a check of the producer independent of hwtrace)");
}
ATF_TC_BODY(coresight_opencsd, tc)
{
	static const char *const ini[] = {
	    "snapshot.ini", "[snapshot]\nversion=1.0\n\n[device_list]\n"
	    "device0=cpu_0.ini\ndevice1=cpu_1.ini\ndevice2=etm_0.ini\n"
	    "device3=etm_1.ini\n\n[trace]\nmetadata=trace.ini\n",
	    "trace.ini", "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\n"
	    "name=ETR_0\nfile=cstrace.bin\nformat=coresight\n\n"
	    "[source_buffers]\nETM_0=ETR_0\nETM_1=ETR_0\n\n"
	    "[core_trace_sources]\ncpu_0=ETM_0\ncpu_1=ETM_1\n",
	};
	char path[64], body[512], cmd[512];
	uint8_t code[4 * (CS_NOPS + 1)];
	struct fakehwt fk;
	FILE *fp;
	long got, want;
	int i;

	if (system("command -v trc_pkt_lister >/dev/null 2>&1") != 0)
		atf_tc_skip("OpenCSD's trc_pkt_lister is not installed");
	ATF_REQUIRE(mkdir("snap", 0755) == 0);
	cs_image("snap/cs.elf");
	ATF_REQUIRE((fp = fopen("snap/cs.elf", "rb")) != NULL);
	ATF_REQUIRE(fseek(fp, CS_OFF, SEEK_SET) == 0);
	ATF_REQUIRE(fread(code, 1, sizeof(code), fp) == sizeof(code));
	fclose(fp);
	put_file("snap/code.bin", code, sizeof(code));
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "snap/%s", ini[2 * i]);
		put_file(path, ini[2 * i + 1], strlen(ini[2 * i + 1]));
		snprintf(path, sizeof(path), "snap/cpu_%d.ini", i);
		snprintf(body, sizeof(body), "[device]\nname=cpu_%d\n"
		    "class=core\ntype=Cortex-A57\n\n[regs]\nPC(size:64)="
		    "0x%jx\nSP(size:64)=0\nSCTLR_EL1=0x1007\nCPSR=0x1C5\n\n"
		    "[dump1]\nfile=code.bin\naddress=0x%jx\nlength=0x%zx\n",
		    i, (uintmax_t)CS_CODE, (uintmax_t)CS_CODE, sizeof(code));
		put_file(path, body, strlen(body));
		snprintf(path, sizeof(path), "snap/etm_%d.ini", i);
		/* The registers fk_sysctl answers; TRCCONFIGR as hwt(8)'s. */
		snprintf(body, sizeof(body), "[device]\nname=ETM_%d\n"
		    "class=trace_source\ntype=ETM4\n\n[regs]\n"
		    "TRCCONFIGR(0x004)=0x%x\nTRCTRACEIDR(0x010)=0x%x\n"
		    "TRCAUTHSTATUS(0x3EE)=0x000000CC\n"
		    "TRCIDR0(0x078)=0x28000EA1\nTRCIDR1(0x079)=0x4100F402\n"
		    "TRCIDR2(0x07A)=0x00000488\nTRCIDR8(0x060)=0x0\n"
		    "TRCIDR9(0x061)=0x0\nTRCIDR10(0x062)=0x0\n"
		    "TRCIDR11(0x063)=0x0\nTRCIDR12(0x064)=0x0\n"
		    "TRCIDR13(0x065)=0x0\n", i, HWT_CS_TRCCONFIGR, i + 1);
		put_file(path, body, strlen(body));
	}
	/* Two spans of the simulated kernel, CPU 0's then CPU 1's. */
	fk_init(&fk);
	fk.backend = "coresight";
	fk.bufsize = 65536;
	fk.from = CS_CODE;
	fk.cs_atoms = 50;
	fk.dev[0].fk = &fk;
	ATF_REQUIRE(fk_mkdev(&fk, 0) == 0);
	fk_cs_span(&fk, 0, 0);
	fk_cs_span(&fk, 0, 1);
	ATF_REQUIRE(fk.dev[0].written % 16 == 0 &&
	    fk.dev[0].written < fk.bufsize);
	put_file("snap/cstrace.bin", fk.dev[0].ring,
	    (size_t)fk.dev[0].written);
	fk_fini(&fk);
	snprintf(cmd, sizeof(cmd), "trc_pkt_lister -ss_dir snap -decode_only "
	    "-logstdout 2>&1 | tee lister.out | grep INSTR_RANGE | "
	    "sed -n 's/.*num_i(\\([0-9]*\\)).*/\\1/p' | "
	    "awk '{ n += $1 } END { print n + 0 }'");
	got = (long)sh_num(cmd, 10);
	want = 2L * 50 * (CS_NOPS + 1);
	ATF_REQUIRE_MSG(got == want, "expected OpenCSD to decode %ld "
	    "instructions from both trace IDs, it decoded %ld (its output "
	    "is in lister.out)", want, got);
}

/*
 * What --mode ring with --trigger keeps of device 0, by the man page's
 * rule: at each hit the bytes before the stop's (exact) position that
 * are sure, --buffer less a page; at the end the whole ring; each window
 * from where the last one ended at most.  Into @want the instructions of
 * the spans wholly inside a window, into @lost what no window has.
 */
static void
trig_expect(const struct fakehwt *fk, const struct prog *p, uint64_t bufsize,
    long *want, uint64_t *lost)
{
	uint64_t from[17], to[17], last = 0, start, end, room;
	int nw = 0, i, k;

	*want = 0;
	*lost = 0;
	for (k = 0; k <= fk->nhits; k++) {
		end = k < fk->nhits ? fk->hit_pos[k] : fk->dev[0].written;
		room = k < fk->nhits ? bufsize - HWTR_HWT_PAGE : bufsize;
		start = end > room ? end - room : 0;
		if (start < last)
			start = last;
		*lost += start - last;
		from[nw] = start;
		to[nw++] = end;
		last = end;
	}
	for (i = 0; i < fk->nspans; i++) {
		end = (i + 1 < fk->nspans ? fk->span_at[i + 1] :
		    fk->dev[0].written) - (uint64_t)fk->pad;
		for (k = 0; k < nw; k++)
			if (fk->span_at[i] >= from[k] && end <= to[k])
				*want += p->ninsn;
	}
}

/*
 * A ring of 8192 bytes with --trigger: the archive @out records the
 * bytes no snapshot kept as lost and decodes to the instructions of the
 * spans the snapshots hold (trig_expect()).
 */
static void
trig_decodes(const struct fakehwt *fk, const struct prog *p,
    const struct run *r, const char *out)
{
	uint64_t lost;
	long want;

	trig_expect(fk, p, 8192, &want, &lost);
	ATF_REQUIRE_MSG(r->end.lost_bytes == lost, "expected %ju bytes lost, "
	    "the archive says %ju", (uintmax_t)lost,
	    (uintmax_t)r->end.lost_bytes);
	require_insns(out, want, fk);
}

/* A trigger case: ring mode, 8 KiB, 24 spans of 1000 PADs each. */
static void
trig_start(struct prog *p, struct fakehwt *fk, struct hwtr_src_config *cfg)
{
	case_start(p, fk, 24, cfg, 8192);
	fk->pad = 1000;
	fk->trig_pc = p->to;
	fk->trig_after[0] = 4;
	fk->trig_after[1] = 10;
	fk->trig_after[2] = 16;
	fk->ntrig_after = 3;
	cfg->mode = HWTR_CAP_RING;
	cfg->trigger_name = "perfline_end";
	cfg->trigger_vaddr = p->to;
}

/* Each hit was read at its stop, the breakpoint stepped over cleanly. */
static void
require_hits(const struct fakehwt *fk, int n, uint64_t addr)
{
	char want[128];
	int k;

	ATF_REQUIRE_MSG(fk->nhits == n, "expected the breakpoint reached %d "
	    "times, it was %d times: %s", n, fk->nhits, fk->log);
	for (k = 0; k < n; k++)
		ATF_REQUIRE_MSG(fk->hit_read[k], "hit %d: the ring was not read "
		    "at the stop's position %ju before the process went on: "
		    "%s", k + 1, (uintmax_t)fk->hit_pos[k], fk->log);
	snprintf(want, sizeof(want), "dbregs dr0=%#jx dr7=0x1 | ",
	    (uintmax_t)addr);
	ATF_REQUIRE_MSG(strstr(fk->log, "exec stop | ") != NULL &&
	    strstr(fk->log, want) != NULL, "no execution breakpoint at %#jx "
	    "after the exec stop: %s", (uintmax_t)addr, fk->log);
	ATF_REQUIRE_MSG(strstr(fk->log, "again") == NULL &&
	    strstr(fk->log, "never continued") == NULL &&
	    strstr(fk->log, "continue with signal") == NULL, "the breakpoint "
	    "was not stepped over cleanly: %s", fk->log);
}

ATF_TC(trigger_snapshots);
ATF_TC_HEAD(trigger_snapshots, tc)
{
	atf_tc_set_md_var(tc, "descr", "--mode ring --trigger: the program "
	    "reaches the function 3 times (by construction); each time the "
	    "debug register breakpoint stops it, the rings are read at the "
	    "exact stop position (the last --buffer less a page bytes), the "
	    "breakpoint is stepped over and the program goes on; the archive "
	    "holds the 3 snapshots and the end, the rest recorded lost, "
	    "exactly");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(trigger_snapshots, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t lost;
	long want;

	trig_start(&p, &fk, &cfg);
	capture(&fk, &cfg, "t.hwtrace", &r);
	require_ok(&r, &fk);
	require_hits(&fk, 3, p.to);
	ATF_REQUIRE_MSG(fk.first_seen == fk.hit_pos[0], "the first read was "
	    "at %ju, not at the first hit's %ju", (uintmax_t)fk.first_seen,
	    (uintmax_t)fk.hit_pos[0]);
	trig_expect(&fk, &p, 8192, &want, &lost);
	ATF_REQUIRE_MSG(want > 0 && want < 24 * p.ninsn, "%ld instructions "
	    "expected: not a partial capture", want);
	ATF_REQUIRE_MSG(r.end.lost_bytes == lost, "expected %ju bytes lost, "
	    "the archive says %ju", (uintmax_t)lost,
	    (uintmax_t)r.end.lost_bytes);
	require_insns("t.hwtrace", want, &fk);
}

ATF_TC(trigger_not_reached);
ATF_TC_HEAD(trigger_not_reached, tc)
{
	atf_tc_set_md_var(tc, "descr", "--trigger main: the breakpoint is set "
	    "but the program never reaches it after the exec: no snapshot, "
	    "the ring is read at the end only");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(trigger_not_reached, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t lost, main_addr;
	long want;

	trig_start(&p, &fk, &cfg);
	main_addr = (uint64_t)sh_num("nm " PROG " | awk '/ T main$/ "
	    "{ print $1 }'", 16);
	ATF_REQUIRE_MSG(main_addr > 0 && main_addr != p.to, "nm gave main "
	    "%#jx", (uintmax_t)main_addr);
	cfg.trigger_name = "main";
	cfg.trigger_vaddr = main_addr;
	capture(&fk, &cfg, "u.hwtrace", &r);
	require_ok(&r, &fk);
	require_hits(&fk, 0, main_addr);
	ATF_REQUIRE_MSG(fk.first_seen == fk.dev[0].written, "the ring was "
	    "read at %ju before STOP (%ju written)",
	    (uintmax_t)fk.first_seen, (uintmax_t)fk.dev[0].written);
	trig_expect(&fk, &p, 8192, &want, &lost);
	ATF_REQUIRE_MSG(r.end.lost_bytes == lost && lost ==
	    fk.dev[0].written - 8192, "expected %ju bytes lost, the archive "
	    "says %ju", (uintmax_t)lost, (uintmax_t)r.end.lost_bytes);
	require_insns("u.hwtrace", want, &fk);
}

ATF_TC(trigger_pie);
ATF_TC_HEAD(trigger_pie, tc)
{
	atf_tc_set_md_var(tc, "descr", "--trigger in a position-independent "
	    "executable: the breakpoint goes at the symbol's value plus the "
	    "load address of hwt(4)'s EXECUTABLE record, read at the exec "
	    "stop; the 3 hits are snapshots that decode");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(trigger_pie, tc)
{
	const uint64_t base = 0x555555554000ULL;
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	uint64_t code, end;

	if (access(PROGPIE, X_OK) != 0)
		atf_tc_skip("fixture %s not built", PROGPIE);
	trig_start(&p, &fk, &cfg);
	code = (uint64_t)sh_num("nm " PROGPIE " | awk '/ perfline_code$/ "
	    "{ print $1 }'", 16);
	end = (uint64_t)sh_num("nm " PROGPIE " | awk '/ perfline_end$/ "
	    "{ print $1 }'", 16);
	ATF_REQUIRE_MSG(code > 0 && end > code && end < 0x100000, "nm gave "
	    "perfline_code %#jx, perfline_end %#jx in the PIE",
	    (uintmax_t)code, (uintmax_t)end);
	ATF_REQUIRE_MSG(end - code == p.to - p.from, "the PIE's code is not "
	    "perfline's");
	fk.exe = PROGPIE;
	fk.exe_addr = base;
	fk.from = base + code;
	fk.to = base + end;
	fk.trig_pc = base + end;
	cfg.trigger_vaddr = end;
	cfg.trigger_pie = 1;
	{
		static char *argv[] = { (char *)PROGPIE, (char *)"done", NULL };

		cfg.argv = argv;
	}
	capture(&fk, &cfg, "i.hwtrace", &r);
	require_ok(&r, &fk);
	require_hits(&fk, 3, base + end);
	trig_decodes(&fk, &p, &r, "i.hwtrace");
}

ATF_TC(trigger_attach_pid);
ATF_TC_HEAD(trigger_attach_pid, tc)
{
	atf_tc_set_md_var(tc, "descr", "-p PID --trigger: the running process "
	    "is attached, the breakpoint set at the attach stop (no exec "
	    "stop comes), and its 3 hits are snapshots");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(trigger_attach_pid, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;
	struct attached a;
	char want[128];

	trig_start(&p, &fk, &cfg);
	capture_attached(&fk, &cfg, "q.hwtrace", &r, &a, 1);
	snprintf(want, sizeof(want), "attach | dbregs dr0=%#jx dr7=0x1 | ",
	    (uintmax_t)p.to);
	ATF_REQUIRE_MSG(strstr(fk.log, want) != NULL && strstr(fk.log,
	    "exec stop") == NULL, "expected the breakpoint set at the attach "
	    "stop: %s", fk.log);
	ATF_REQUIRE_MSG(fk.nhits == 3 && fk.hit_read[0] && fk.hit_read[1] &&
	    fk.hit_read[2], "expected 3 hits read at their stops, got %d: %s",
	    fk.nhits, fk.log);
	trig_decodes(&fk, &p, &r, "q.hwtrace");
}

ATF_TC(trigger_cpu_mode);
ATF_TC_HEAD(trigger_cpu_mode, tc)
{
	atf_tc_set_md_var(tc, "descr", "--cpu 0 --trigger with a COMMAND: the "
	    "command is attached and its exec stop sets the breakpoint (no "
	    "EXECUTABLE record is needed: not a PIE); its 3 hits snapshot "
	    "the CPU's buffer");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(trigger_cpu_mode, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	trig_start(&p, &fk, &cfg);
	fk.cpu_exec_wait = 1;
	cfg.cpus = "0";
	capture(&fk, &cfg, "m.hwtrace", &r);
	require_ok(&r, &fk);
	ATF_REQUIRE_MSG(strstr(fk.log, "mode=2 pid=0") != NULL, "no CPU mode "
	    "context: %s", fk.log);
	require_hits(&fk, 3, p.to);
	trig_decodes(&fk, &p, &r, "m.hwtrace");
}

ATF_TC(trigger_ptrace_refused);
ATF_TC_HEAD(trigger_ptrace_refused, tc)
{
	atf_tc_set_md_var(tc, "descr", "--trigger when ptrace(2) refuses to "
	    "attach (EPERM): the capture fails naming the process, the "
	    "request and the error");
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(trigger_ptrace_refused, tc)
{
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	trig_start(&p, &fk, &cfg);
	fk.tr_errno = EPERM;
	capture(&fk, &cfg, "e.hwtrace", &r);
	ATF_REQUIRE_MSG(r.rc == -HWTR_E_PERM && strstr(r.err, "--trigger "
	    "perfline_end: cannot trace process") != NULL &&
	    strstr(r.err, "PT_ATTACH") != NULL &&
	    strstr(r.err, strerror(EPERM)) != NULL, "expected a permission "
	    "error naming PT_ATTACH, got %d: %s", r.rc, r.err);
}

/* configure() alone with @cfg: its rc, its message into @err. */
static int
configure_only(struct hwtr_src_config *cfg, char *err, size_t len)
{
	struct hwtr_src src;
	struct hwtr_hwt_sys sys;
	struct fakehwt fk;
	int rc;

	fk_init(&fk);
	memset(&src, 0, sizeof(src));
	src.ops = &hwtr_hwt_ops;
	fk_sys(&fk, &sys);
	ATF_REQUIRE(hwtr_hwt_init_sys(&src, &sys) == 0);
	rc = src.ops->configure(&src, cfg);
	snprintf(err, len, "%s", src.errmsg);
	src.ops->deinit(&src);
	fk_fini(&fk);
	return (rc);
}

ATF_TC(trigger_refused);
ATF_TC_HEAD(trigger_refused, tc)
{
	atf_tc_set_md_var(tc, "descr", "--trigger in CPU mode without a "
	    "process to watch, or outside ring mode, is refused saying why; "
	    "CPU mode with a COMMAND is accepted");
}
ATF_TC_BODY(trigger_refused, tc)
{
	static char *argv[] = { (char *)PROG, NULL };
	struct hwtr_src_config cfg;
	char err[HWTR_ERRMSG_MAX];
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = HWTR_CAP_RING;
	cfg.cpus = "0";
	cfg.trigger_name = "perfline_end";
	cfg.trigger_vaddr = 0x401000;
	rc = configure_only(&cfg, err, sizeof(err));
	ATF_REQUIRE_MSG(rc == -HWTR_E_INVAL && strstr(err, "CPU mode: no "
	    "process to watch"), "CPU mode without a process: expected it "
	    "refused, got %d: %s", rc, err);
	cfg.argv = argv;
	rc = configure_only(&cfg, err, sizeof(err));
	ATF_REQUIRE_MSG(rc == 0, "CPU mode with a COMMAND: expected it "
	    "accepted, got %d: %s", rc, err);
	cfg.cpus = NULL;
	cfg.mode = HWTR_CAP_STOP;
	rc = configure_only(&cfg, err, sizeof(err));
	ATF_REQUIRE_MSG(rc == -HWTR_E_INVAL && strstr(err, "needs --mode "
	    "ring"), "--mode stop: expected it refused, got %d: %s", rc, err);
}

ATF_TC(exec_fails);
ATF_TC_HEAD(exec_fails, tc)
{
	atf_tc_set_md_var(tc, "descr", "A command that cannot be run: the "
	    "capture fails naming it and exec's error");
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(exec_fails, tc)
{
	static char *argv[] = { (char *)"./no-such-program", NULL };
	struct hwtr_src_config cfg;
	struct fakehwt fk;
	struct prog p;
	struct run r;

	case_start(&p, &fk, 1, &cfg, 0);
	cfg.argv = argv;
	capture(&fk, &cfg, "x.hwtrace", &r);
	ATF_REQUIRE_MSG(r.rc < 0 && strstr(r.err, "cannot run "
	    "'./no-such-program'") && strstr(r.err, strerror(ENOENT)),
	    "expected the exec failure named, got %d: %s", r.rc, r.err);
}

ATF_TC(not_freebsd);
ATF_TC_HEAD(not_freebsd, tc)
{
	atf_tc_set_md_var(tc, "descr", "Off FreeBSD, capture --source hwt "
	    "exits 1 saying there is no /dev/hwt");
}
ATF_TC_BODY(not_freebsd, tc)
{
	char cmd[1024];
	long long n;
	int st;

#ifdef __FreeBSD__
	atf_tc_skip("this is FreeBSD");
#endif
	snprintf(cmd, sizeof(cmd), "%s capture --source hwt -o x.hwtrace -- "
	    "/bin/true 2>err", HWTR_TEST_HWTRACE);
	st = system(cmd);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "expected exit "
	    "1, got status %#x", st);
	n = sh_num("grep -c 'no /dev/hwt' err", 10);
	ATF_REQUIRE_MSG(n == 1, "the message does not say what is missing");
	ATF_REQUIRE_MSG(access("x.hwtrace", F_OK) != 0, "an archive was "
	    "written");
}

/* The encoder's output into a FILE. */
static int
dump_write(void *arg, const void *buf, size_t len)
{
	return (fwrite(buf, 1, len, arg) == len ? 0 : -1);
}

ATF_TC(import_dump);
ATF_TC_HEAD(import_dump, tc)
{
	atf_tc_set_md_var(tc, "descr", "hwt(8)'s raw dump (hwt -r -w FILE: "
	    "the buffer's bytes, no header), made here with the encoder as "
	    "the FreeBSD PT backend writes it, imports with the image named "
	    "by --elf, decodes, and info says the sideband is missing");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(import_dump, tc)
{
	struct hwtr_ptenc_opts o = { .no_tsc = 1 };
	struct hwtr_ptenc_out out = { dump_write, NULL, NULL };
	struct hwtr_ptenc *enc;
	struct prog p;
	char cmd[1024];
	FILE *fp;
	int i, st;

	prog_load(&p);
	ATF_REQUIRE((fp = fopen("dump.pt", "w")) != NULL);
	out.arg = fp;
	ATF_REQUIRE(hwtr_ptenc_new(&enc, &o, &out) == 0);
	for (i = 0; i < 3; i++) {
		hwtr_ptenc_want_psb(enc);
		ATF_REQUIRE(hwtr_ptenc_enable(enc, p.from, 1, 0) == 0);
		ATF_REQUIRE(hwtr_ptenc_disable(enc, p.to, 0) == 0);
	}
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);
	ATF_REQUIRE(fclose(fp) == 0);
	/* Without an image: refused, nothing written. */
	snprintf(cmd, sizeof(cmd), "%s import dump.pt -o d.hwtrace 2>err",
	    HWTR_TEST_HWTRACE);
	st = system(cmd);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1 &&
	    sh_num("grep -c 'names no image' err", 10) == 1 &&
	    access("d.hwtrace", F_OK) != 0, "a dump without --elf: expected "
	    "exit 1 asking for the image, got status %#x", st);
	/* Not a dump (no PSB first): a usage error that says so. */
	ATF_REQUIRE((fp = fopen("junk.pt", "w")) != NULL);
	fputs("not a trace", fp);
	ATF_REQUIRE(fclose(fp) == 0);
	snprintf(cmd, sizeof(cmd), "%s import --elf %s junk.pt -o d.hwtrace "
	    "2>err", HWTR_TEST_HWTRACE, PROG);
	st = system(cmd);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 2 &&
	    sh_num("grep -c \"'junk.pt' is not a hwt(8) raw dump\" err",
	    10) == 1, "a file that is no dump: expected exit 2 saying so, "
	    "got status %#x", st);
	snprintf(cmd, sizeof(cmd), "%s import --elf %s dump.pt -o d.hwtrace",
	    HWTR_TEST_HWTRACE, PROG);
	st = system(cmd);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "import "
	    "failed: status %#x", st);
	ATF_REQUIRE_MSG(info_has("d.hwtrace", "source: hwt") &&
	    info_has("d.hwtrace", "no sideband"), "info does not say it is "
	    "a hwt(8) dump without sideband");
	require_insns("d.hwtrace", 3 * p.ninsn, NULL);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, wrap_between_reads);
	ATF_TP_ADD_TC(tp, lap_lost);
	ATF_TP_ADD_TC(tp, stop_without_record);
	ATF_TP_ADD_TC(tp, thread_create);
	ATF_TP_ADD_TC(tp, ring_mode);
	ATF_TP_ADD_TC(tp, ring_snapshot);
	ATF_TP_ADD_TC(tp, stop_mode);
	ATF_TP_ADD_TC(tp, filter_pause_on_mmap);
	ATF_TP_ADD_TC(tp, filter_not_found);
	ATF_TP_ADD_TC(tp, alloc_errors);
	ATF_TP_ADD_TC(tp, device_gone);
	ATF_TP_ADD_TC(tp, cpu_mode_kernel);
	ATF_TP_ADD_TC(tp, attach_pid);
	ATF_TP_ADD_TC(tp, all_cpus);
	ATF_TP_ADD_TC(tp, coresight_cpu);
	ATF_TP_ADD_TC(tp, coresight_opencsd);
	ATF_TP_ADD_TC(tp, exec_fails);
	ATF_TP_ADD_TC(tp, not_freebsd);
	ATF_TP_ADD_TC(tp, import_dump);
	ATF_TP_ADD_TC(tp, trigger_snapshots);
	ATF_TP_ADD_TC(tp, trigger_not_reached);
	ATF_TP_ADD_TC(tp, trigger_pie);
	ATF_TP_ADD_TC(tp, trigger_attach_pid);
	ATF_TP_ADD_TC(tp, trigger_cpu_mode);
	ATF_TP_ADD_TC(tp, trigger_ptrace_refused);
	ATF_TP_ADD_TC(tp, trigger_refused);
	return (0);
}
