/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Issue 16: decompression bombs inside the documented limits.  Archives
 * whose members declare far more than they take on disk are made with the
 * public writer; hwtrace info, verify, index and query run on them as
 * separate processes, and their peak resident memory (wait4()'s
 * ru_maxrss, the kernel's count) must stay under 512 MB.
 */

#include <atf-c.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>
#include <fcntl.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_tool.h"

#define RSS_LIMIT_KB	(512L * 1024)

/*
 * Start hwtrace with @args (NULL-terminated, without argv[0]), its stdout
 * and stderr to the files out and err; its pid.
 */
static pid_t
start(const char *const *args)
{
	char *argv[16];
	pid_t pid;
	int i, fd;

	argv[0] = (char *)"hwtrace";
	for (i = 0; args[i] != NULL && i < 14; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		fd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		fd = open("err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execv(HWTR_TEST_HWTRACE, argv);
		_exit(127);
	}
	return (pid);
}

/*
 * Run hwtrace with @args (start); return the exit status, *@rss_kb its
 * peak RSS.
 */
static int
run(const char *const *args, long *rss_kb)
{
	struct rusage ru;
	pid_t pid = start(args);
	int st;

	ATF_REQUIRE(wait4(pid, &st, 0, &ru) == pid);
	*rss_kb = ru.ru_maxrss;
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void
meta(struct hwtr_capture_meta *m)
{
	static const char *const argv[] = { "/bin/bomb" };

	tool_intel_meta(m, "h", "step", 0x55);
	m->argv = argv;
	m->argc = 1;
	m->start_ns = 1;
}

/*
 * Zeros with a random byte every 16 KiB: zstd level 3 makes some 3000:1
 * of it, under the reader's ratio limit of 4096.
 */
static uint8_t *
bomb_bytes(size_t len)
{
	uint8_t *b = calloc(1, len);
	size_t i;

	ATF_REQUIRE(b != NULL);
	for (i = 0; i < len; i += 16384)
		b[i] = (uint8_t)(random() | 1);
	return (b);
}

static void
check_rss(const char *what, int want, const char *const *args)
{
	long kb;
	int rc;

	rc = run(args, &kb);
	ATF_CHECK_MSG(rc == want, "%s: exit status %d, expected %d", what, rc,
	    want);
	ATF_CHECK_MSG(kb < RSS_LIMIT_KB, "%s: peak RSS %ld MB, the limit is "
	    "512 MB", what, kb / 1024);
	printf("%s: exit %d, peak RSS %ld MB\n", what, rc, kb / 1024);
}

ATF_TC(image_bomb_bounded);
ATF_TC_HEAD(image_bomb_bounded, tc)
{
	atf_tc_set_md_var(tc, "descr", "an image member declaring 768 MiB "
	    "(a 0.3 MB frame) costs info, verify, index and query under "
	    "512 MB of resident memory each");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(image_bomb_bounded, tc)
{
	const size_t len = 768u << 20;
	struct hwtr_capture_meta m;
	struct hwtr_aw *aw;
	struct hwtr_capture_end end;
	char err[512], key[HWTR_IMAGE_KEY_MAX];
	uint8_t *b = bomb_bytes(len);
	FILE *f;
	long size;

	meta(&m);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, "b.hwtrace", &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	ATF_REQUIRE_EQ_MSG(tool_memory_image(aw, "/bomb", b, len, key), 0,
	    "%s", hwtr_aw_errmsg(aw));
	free(b);
	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
	ATF_REQUIRE((f = fopen("b.hwtrace", "rb")) != NULL);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	printf("b.hwtrace: %ld bytes, an image of %zu\n", size, len);
	ATF_REQUIRE_MSG(size < 1 << 20, "the archive is %ld bytes: not a bomb",
	    size);

	check_rss("info", 0, (const char *[]){ "info", "b.hwtrace", NULL });
	check_rss("verify", 0, (const char *[]){ "verify", "b.hwtrace",
	    NULL });
	check_rss("index", 0, (const char *[]){ "index", "-o", "b.db",
	    "b.hwtrace", NULL });
	check_rss("query", 0, (const char *[]){ "query", "b.hwtrace",
	    "summary", NULL });
}

ATF_TC(sideband_bomb_bounded);
ATF_TC_HEAD(sideband_bomb_bounded, tc)
{
	atf_tc_set_md_var(tc, "descr", "sideband that decompresses to more "
	    "records than the reader holds is refused, under 512 MB");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(sideband_bomb_bounded, tc)
{
	struct hwtr_capture_meta m;
	struct hwtr_aw *aw;
	struct hwtr_sb_rec r;
	struct hwtr_capture_end end;
	char err[512];
	size_t i;

	meta(&m);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, "s.hwtrace", &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_START;
	r.pid = 1;
	r.tid = 1;
	r.u.proc_start.ppid = -1;
	for (i = 0; i < (1u << 20) + 10; i++) {
		r.time = i;
		ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw, &r), 0, "%s",
		    hwtr_aw_errmsg(aw));
	}
	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
	check_rss("info", 1, (const char *[]){ "info", "s.hwtrace", NULL });
	ATF_CHECK(atf_utils_grep_file("more than 1048576 sideband records",
	    "err"));
	check_rss("index", 1, (const char *[]){ "index", "-o", "s.db",
	    "s.hwtrace", NULL });
}

/*
 * Issue 33 item 3: a stream of @nchunks chunks of 16 MiB of PT padding
 * (PAD packets, 0x00, with a TSC packet of random value every 4 KiB so
 * that each frame stays under the ratio limit) and no PSB: some 45 KB
 * on disk per chunk, every frame within the ratio, window and chunk
 * limits.
 */
static void pad_bomb_cpu(const char *, size_t, int);

static void
pad_bomb(const char *path, size_t nchunks)
{
	pad_bomb_cpu(path, nchunks, -1);
}

/*
 * The same, as the stream of CPU @cpu (when >= 0) with thread 7 switched
 * in at its start, out at its end: the CPU mode's scan reads it too.
 */
static void
pad_bomb_cpu(const char *path, size_t nchunks, int cpu)
{
	struct hwtr_sb_rec sw;
	const size_t len = 16u << 20;
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc sd;
	struct hwtr_capture_end end;
	struct hwtr_aw *aw;
	char err[512];
	uint8_t *b = malloc(len);
	uint32_t id;
	size_t c, i, k;

	ATF_REQUIRE(b != NULL);
	meta(&m);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = sd.tid = cpu >= 0 ? -1 : 1;
	sd.cpu = cpu;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_add_stream(aw, &sd, &id), 0, "%s",
	    hwtr_aw_errmsg(aw));
	for (c = 0; c < nchunks; c++) {
		memset(b, 0, len);
		for (i = 0; i + 8 <= len; i += 4096) {
			b[i] = 0x19;		/* TSC */
			for (k = 1; k < 8; k++)
				b[i + k] = (uint8_t)random();
		}
		ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, b,
		    len), 0, "%s", hwtr_aw_errmsg(aw));
	}
	free(b);
	for (k = 0; cpu >= 0 && k < 2; k++) {
		memset(&sw, 0, sizeof(sw));
		sw.type = HWTR_SB_SWITCH;
		sw.time = k == 0 ? 1 : UINT64_MAX / 2;
		sw.pid = sw.tid = 7;
		sw.u.sw.cpu = cpu;
		sw.u.sw.out = (uint8_t)k;
		ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw, &sw), 0, "%s",
		    hwtr_aw_errmsg(aw));
	}
	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
}

ATF_TC(pad_bomb_bounded);
ATF_TC_HEAD(pad_bomb_bounded, tc)
{
	atf_tc_set_md_var(tc, "descr", "36 chunks of 16 MiB of PT padding "
	    "without a PSB (a 1.6 MB archive verify accepts) cost index -j 1 "
	    "and -j 2, query last, bt and summary under 512 MB each, and "
	    "index says every byte is not decoded");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(pad_bomb_bounded, tc)
{
	const size_t n = 36;
	char want[128];

	pad_bomb("p.hwtrace", n);
	check_rss("verify", 0, (const char *[]){ "verify", "p.hwtrace",
	    NULL });
	check_rss("index -j 1", 0, (const char *[]){ "index", "-j", "1",
	    "-o", "p1.db", "p.hwtrace", NULL });
	/* No PSB: nothing decodable, and the report says so. */
	snprintf(want, sizeof(want), "\\(%zu of %zu bytes not decoded\\)",
	    n << 24, n << 24);
	ATF_CHECK_MSG(atf_utils_grep_file("%s", "err", want), "index: "
	    "expected '%s' in its report", want);
	check_rss("index -j 2", 0, (const char *[]){ "index", "-j", "2",
	    "-o", "p2.db", "p.hwtrace", NULL });
	/* Each query indexes the archive again: no cache kept. */
	check_rss("query last", 0, (const char *[]){ "query", "p.hwtrace",
	    "last", NULL });
	unlink("p.hwtrace.db");
	check_rss("query bt", 0, (const char *[]){ "query", "p.hwtrace",
	    "bt", NULL });
	unlink("p.hwtrace.db");
	check_rss("query summary", 0, (const char *[]){ "query", "p.hwtrace",
	    "summary", NULL });
}

/*
 * A database @db or a temporary one (@db.partial.*) in the working
 * directory: its name in @name.
 */
static int
left_file(const char *db, char *name, size_t len)
{
	struct dirent *e;
	DIR *d = opendir(".");
	char partial[256];
	int found = 0;

	ATF_REQUIRE(d != NULL);
	snprintf(partial, sizeof(partial), "%s.partial", db);
	while (!found && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, db) == 0 || strncmp(e->d_name, partial,
		    strlen(partial)) == 0) {
			snprintf(name, len, "%s", e->d_name);
			found = 1;
		}
	closedir(d);
	return (found);
}

/*
 * Start hwtrace with @args, send it @sig after @ms milliseconds; return
 * its exit status (128 + signal when killed), and in *@secs the time it
 * took to end after the signal.
 */
static int
run_signalled(const char *const *args, int sig, long ms, double *secs)
{
	struct timespec t0, t1, d = { ms / 1000, (ms % 1000) * 1000000 };
	pid_t pid = start(args);
	int st;

	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ATF_REQUIRE(kill(pid, sig) == 0);
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* @what, stopped by @sig: status 1, "interrupted", within 2 s. */
static void
check_signalled(const char *what, int sig, long ms, const char *const *args)
{
	double secs;
	int rc;

	rc = run_signalled(args, sig, ms, &secs);
	printf("%s: signal %d after %ld ms: exit %d in %.2f s\n", what, sig,
	    ms, rc, secs);
	ATF_CHECK_MSG(rc == 1, "%s: expected exit status 1 on signal %d, got "
	    "%d", what, sig, rc);
	ATF_CHECK_MSG(atf_utils_grep_file("interrupted", "err"), "%s: "
	    "expected 'interrupted' on stderr", what);
	ATF_CHECK_MSG(secs < 2.0, "%s: expected to end within 2 s of signal "
	    "%d, took %.2f s", what, sig, secs);
}

/*
 * check_signalled, then no database @db nor a temporary one left; @args
 * are hwtrace's (@args[0] the verb), @what names the run.
 */
static void
check_signalled_clean(const char *what, int sig, long ms, const char *db,
    const char *const *args)
{
	char name[256];

	check_signalled(what, sig, ms, args);
	ATF_CHECK_MSG(!left_file(db, name, sizeof(name)), "%s: '%s' left "
	    "after %s", args[0], name, sig == SIGINT ? "SIGINT" : "SIGTERM");
}

/*
 * The signals every bomb takes, each @ms milliseconds in: SIGTERM to
 * index -j 1 and SIGINT to index -j 2 of @base.hwtrace into @base.db,
 * SIGTERM to query @base.hwtrace last; each ends as check_signalled_clean
 * says.
 */
static void
check_signals(const char *base, long ms)
{
	char arch[64], db[64], qdb[80];

	snprintf(arch, sizeof(arch), "%s.hwtrace", base);
	snprintf(db, sizeof(db), "%s.db", base);
	snprintf(qdb, sizeof(qdb), "%s.db", arch);
	check_signalled_clean("index -j 1", SIGTERM, ms, db, (const char *[]){
	    "index", "-j", "1", "-o", db, arch, NULL });
	check_signalled_clean("index -j 2", SIGINT, ms, db, (const char *[]){
	    "index", "-j", "2", "-o", db, arch, NULL });
	check_signalled_clean("query last", SIGTERM, ms, qdb, (const char *[]){
	    "query", arch, "last", NULL });
}

ATF_TC(pad_bomb_signal);
ATF_TC_HEAD(pad_bomb_signal, tc)
{
	atf_tc_set_md_var(tc, "descr", "SIGTERM and SIGINT sent to index "
	    "and query of 256 chunks of 16 MiB of PT padding end them within "
	    "2 s with status 1, 'interrupted' and no database left");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(pad_bomb_signal, tc)
{
	/*
	 * 256 chunks: an idle machine decodes 64 of them in under 1.5 s
	 * at -j 2 (CI once saw index end before its signal).
	 */
	pad_bomb("p.hwtrace", 256);
	check_signals("p", 700);
}

/*
 * The same bomb as CoreSight: @nchunks chunks of 16 MiB of 16-byte
 * formatter frames (memory aligned) that each say "trace ID 0x00", the
 * null source, whose bytes every decoder drops (a random byte every
 * 4 KiB keeps frames under the ratio limit), for an ETMv4 source 0x10.
 */
static void
cs_bomb(const char *path, size_t nchunks)
{
	static const struct hwtr_reg regs[] = {
		{ "TRCCONFIGR", 0x000000c1 }, { "TRCTRACEIDR", 0x10 },
		{ "TRCIDR0", 0x28000ea1 }
	};
	const size_t len = 16u << 20;
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc sd;
	struct hwtr_cs_source src;
	struct hwtr_capture_end end;
	struct hwtr_aw *aw;
	char err[512];
	uint8_t *b = malloc(len);
	uint32_t id;
	size_t c, i;

	ATF_REQUIRE(b != NULL);
	meta(&m);
	m.cpu.vendor = HWTR_CPU_ARM;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	memset(&src, 0, sizeof(src));
	src.protocol = HWTR_TF_ETMV4;
	src.trace_id = 0x10;
	src.core = "Cortex-A57";
	src.regs = regs;
	src.nregs = 3;
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_CORESIGHT;
	sd.pid = sd.tid = -1;
	sd.cpu = 0;
	sd.name = "etb 0";
	sd.cs.frame = HWTR_CS_FRAME_CORESIGHT;
	sd.cs.sources = &src;
	sd.cs.nsources = 1;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_add_stream(aw, &sd, &id), 0, "%s",
	    hwtr_aw_errmsg(aw));
	for (c = 0; c < nchunks; c++) {
		memset(b, 0, len);
		for (i = 0; i < len; i += 16) {
			b[i] = 0x01;		/* ID change: 0x00 */
			if (i % 4096 == 0)
				b[i + 1] = (uint8_t)random();
		}
		ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, b,
		    len), 0, "%s", hwtr_aw_errmsg(aw));
	}
	free(b);
	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
}

ATF_TC(cs_bomb_bounded);
ATF_TC_HEAD(cs_bomb_bounded, tc)
{
	atf_tc_set_md_var(tc, "descr", "36 chunks of 16 MiB of CoreSight "
	    "formatter frames for the null trace ID cost index -j 1 and -j 2 "
	    "and query last under 512 MB each");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(cs_bomb_bounded, tc)
{
	cs_bomb("c.hwtrace", 36);
	check_rss("verify", 0, (const char *[]){ "verify", "c.hwtrace",
	    NULL });
	check_rss("index -j 1", 0, (const char *[]){ "index", "-j", "1",
	    "-o", "c1.db", "c.hwtrace", NULL });
	/*
	 * 35 cuts, each a decode error, and the 16 MiB after each not
	 * decoded (no source ever syncs).
	 */
	ATF_CHECK_MSG(atf_utils_grep_file("35 decode errors, %zu bytes not "
	    "decoded", "err", (size_t)35 << 24), "index: expected '35 decode "
	    "errors, %zu bytes not decoded' in its report", (size_t)35 << 24);
	check_rss("index -j 2", 0, (const char *[]){ "index", "-j", "2",
	    "-o", "c2.db", "c.hwtrace", NULL });
	check_rss("query last", 0, (const char *[]){ "query", "c.hwtrace",
	    "last", NULL });
}

ATF_TC(cs_bomb_signal);
ATF_TC_HEAD(cs_bomb_signal, tc)
{
	atf_tc_set_md_var(tc, "descr", "SIGTERM and SIGINT sent to index "
	    "and query of 256 chunks of 16 MiB of CoreSight null frames, in "
	    "the scan and in the decoding, end them within 2 s with status 1 "
	    "and no database left");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(cs_bomb_signal, tc)
{
	/*
	 * 256 chunks take some 25 s to index on a 2-core machine: the scan
	 * of the chunks is over well before 6 s, the decoding is not.
	 */
	cs_bomb("c.hwtrace", 256);
	check_signalled_clean("index -j 1 (scan)", SIGTERM, 700, "c.db",
	    (const char *[]){ "index", "-j", "1", "-o", "c.db", "c.hwtrace",
	    NULL });
	check_signals("c", 6000);
}

ATF_TC(cpu_bomb_signal);
ATF_TC_HEAD(cpu_bomb_signal, tc)
{
	atf_tc_set_md_var(tc, "descr", "SIGTERM and SIGINT sent to index "
	    "and query of a CPU stream of 384 chunks of 16 MiB of PT padding, "
	    "while the CPU mode scans it for context switches, end them "
	    "within 2 s with status 1 and no database left");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(cpu_bomb_signal, tc)
{
	pad_bomb_cpu("u.hwtrace", 384, 0);
	check_signals("u", 1000);
}

/*
 * Issue 33 item 6: a trace of 99 instructions known by construction
 * (PSB, MODE.Exec 64-bit, PSBEND, then 9 times TIP.PGE 0x1000: ten NOPs
 * and "jmp *%rax" at 0x1000, whose TIP.PGD ends tracing), its code one image
 * mapped at 0x1000 after @ndecoys mappings of the same image elsewhere,
 * as a process that maps a file over and over records them.
 */
static void code_archive(const char *, const uint8_t *, size_t, size_t);

static void
decoy_archive(const char *path, size_t ndecoys)
{
	static const uint8_t pt[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,	/* PSB */
		0x99, 0x01,				/* MODE.Exec 64 */
		0x02, 0x23,				/* PSBEND */
#define DECOY_ON	0x71, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01
		DECOY_ON, DECOY_ON, DECOY_ON,		/* TIP.PGE, TIP.PGD */
		DECOY_ON, DECOY_ON, DECOY_ON,
		DECOY_ON, DECOY_ON, DECOY_ON,
		0x00, 0x00, 0x00, 0x00			/* PAD */
#undef DECOY_ON
	};

	code_archive(path, pt, sizeof(pt), ndecoys);
}

/*
 * An archive of one PT stream, @pt (written in chunks of 4 MiB), whose
 * code is decoy_archive()'s at 0x1000, mapped after @ndecoys others.
 */
static void
code_archive(const char *path, const uint8_t *pt, size_t ptlen,
    size_t ndecoys)
{
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc sd;
	struct hwtr_capture_end end;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw;
	char err[512], key[HWTR_IMAGE_KEY_MAX];
	uint8_t code[4096];
	uint32_t id;
	size_t i;

	memset(code, 0xcc, sizeof(code));
	memset(code, 0x90, 10);
	code[10] = 0xff;			/* jmp *%rax */
	code[11] = 0xe0;
	meta(&m);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	ATF_REQUIRE_EQ_MSG(tool_memory_image(aw, "/code", code, sizeof(code), key), 0,
	    "%s", hwtr_aw_errmsg(aw));
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = sd.tid = 1;
	sd.cpu = -1;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_add_stream(aw, &sd, &id), 0, "%s",
	    hwtr_aw_errmsg(aw));
	for (i = 0; i < ptlen; i += 4u << 20)
		ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, i, pt + i, ptlen - i <
		    (4u << 20) ? ptlen - i : 4u << 20), 0);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_THREAD_START;
	r.pid = r.tid = 1;
	r.u.thread_start.ptid = -1;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_MMAP;
	r.pid = r.tid = 1;
	r.u.mmap.len = sizeof(code);
	r.u.mmap.prot = PROT_READ | PROT_EXEC;
	r.u.mmap.path = "/code";
	r.u.mmap.image = key;
	for (i = 0; i <= ndecoys; i++) {
		r.u.mmap.addr = i < ndecoys ? 0x100000000ULL + (uint64_t)i *
		    0x2000 : 0x1000;
		ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw, &r), 0, "%s",
		    hwtr_aw_errmsg(aw));
	}
	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
}

ATF_TC(many_mappings_said);
ATF_TC_HEAD(many_mappings_said, tc)
{
	atf_tc_set_md_var(tc, "descr", "a trace of 99 instructions whose "
	    "code is mapped after 200,000 other mappings (more than libipt's "
	    "section cache holds) is no silent empty answer: the limit is "
	    "named, and a decode error and the bytes not decoded counted");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(many_mappings_said, tc)
{
	/* Regular expressions: the parentheses escaped. */
	const char *whole = " 99 instructions, 0 decode errors "
	    "\\(0 of 96 bytes not decoded\\)";
	const char *none = " 0 instructions, [1-9][0-9]* decode errors? "
	    "\\([1-9][0-9]* of 96 bytes not decoded\\)";
	long kb;
	int rc;

	/* The trace alone first: what it gives is known by construction. */
	decoy_archive("d0.hwtrace", 0);
	check_rss("index, no decoys", 0, (const char *[]){ "index", "-o",
	    "d0.db", "d0.hwtrace", NULL });
	ATF_REQUIRE_MSG(atf_utils_grep_file("%s", "err", whole), "the trace "
	    "alone: expected '%s'", whole);
	decoy_archive("d.hwtrace", 200000);
	/*
	 * Not a bomb: the sideband holds the 200,000 mappings (129 MB
	 * here, more under ASan, whose quarantine keeps freed memory).
	 */
	rc = run((const char *const []){ "index", "-o", "d.db", "d.hwtrace",
	    NULL }, &kb);
	printf("index: exit %d, peak RSS %ld MB\n", rc, kb / 1024);
	ATF_CHECK_EQ_MSG(rc, 0, "index: exit status %d, expected 0", rc);
	ATF_CHECK_MSG(atf_utils_grep_file("%s", "err", none), "after 200,000 "
	    "mappings: expected '%s'", none);
	ATF_CHECK_MSG(atf_utils_grep_file("mappings from the one of '/code' "
	    "at 0x[0-9a-f]* on are not loaded: the decoder holds [0-9]+ ",
	    "err"), "expected the mappings not loaded and the limit named");
}

/*
 * Issue 33 item 3: 20 MiB without a PSB (padding and TSC packets) between
 * two enabled stretches of 11 instructions (PSB, MODE.Exec, PSBEND,
 * TIP.PGE 0x1000, TIP.PGD, as in decoy_archive()): the segment is cut
 * without a PSB at 16 MiB, both
 * stretches are decoded (22 instructions), and the cut is one decode
 * error with the 4 MiB from it to the second PSB not decoded.
 */
ATF_TC(blind_cut_decodes_both_sides);
ATF_TC_HEAD(blind_cut_decodes_both_sides, tc)
{
	atf_tc_set_md_var(tc, "descr", "a stream with 20 MiB between two "
	    "PSBs is cut at 16 MiB: 22 instructions, 1 decode error, 4 MiB "
	    "not decoded");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(blind_cut_decodes_both_sides, tc)
{
	static const uint8_t on[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,	/* PSB */
		0x99, 0x01, 0x02, 0x23,			/* MODE, PSBEND */
		0x71, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01	/* PGE, PGD */
	};
	const size_t p2 = 20u << 20, len = p2 + 4096;
	uint8_t *pt = calloc(1, len);
	char want[160];
	uint64_t tsc = 1000;
	size_t i, k;

	ATF_REQUIRE(pt != NULL);
	/*
	 * Padding with a TSC packet every 512 bytes, its value growing by
	 * a random step, so that each frame stays under the ratio limit.
	 */
	for (i = 512; i + 512 <= p2; i += 512) {
		tsc += 1 + (uint64_t)(random() & 0xffff);
		pt[i] = 0x19;
		for (k = 0; k < 7; k++)
			pt[i + 1 + k] = (uint8_t)(tsc >> (8 * k));
	}
	memcpy(pt, on, sizeof(on));
	memcpy(pt + p2, on, sizeof(on));
	code_archive("c.hwtrace", pt, len, 0);
	free(pt);
	check_rss("index", 0, (const char *[]){ "index", "-o", "c.db",
	    "c.hwtrace", NULL });
	snprintf(want, sizeof(want), " 22 instructions, 1 decode errors "
	    "\\(%zu of %zu bytes not decoded\\)", p2 - (16u << 20), len);
	ATF_CHECK_MSG(atf_utils_grep_file("%s", "err", want), "expected '%s'",
	    want);
	ATF_CHECK_MSG(atf_utils_grep_file("cut without a PSB", "err") ||
	    system("sqlite3 c.db \"SELECT detail FROM events WHERE kind = "
	    "'decode-error'\" | grep -q 'cut without a PSB'") == 0,
	    "the decode error does not say 'cut without a PSB'");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, image_bomb_bounded);
	ATF_TP_ADD_TC(tp, sideband_bomb_bounded);
	ATF_TP_ADD_TC(tp, pad_bomb_bounded);
	ATF_TP_ADD_TC(tp, pad_bomb_signal);
	ATF_TP_ADD_TC(tp, cs_bomb_bounded);
	ATF_TP_ADD_TC(tp, cs_bomb_signal);
	ATF_TP_ADD_TC(tp, cpu_bomb_signal);
	ATF_TP_ADD_TC(tp, many_mappings_said);
	ATF_TP_ADD_TC(tp, blind_cut_decodes_both_sides);
	return (atf_no_error());
}
