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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "hwtrace.h"
#include "hwtr_test.h"

#define RSS_LIMIT_KB	(512L * 1024)

/*
 * Run hwtrace with @args (NULL-terminated, without argv[0]), stdout and
 * stderr to files; return the exit status, *@rss_kb its peak RSS.
 */
static int
run(const char *const *args, long *rss_kb)
{
	char *argv[16];
	struct rusage ru;
	pid_t pid;
	int st, i, fd;

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
	ATF_REQUIRE(wait4(pid, &st, 0, &ru) == pid);
	*rss_kb = ru.ru_maxrss;
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

static void
meta(struct hwtr_capture_meta *m)
{
	static const char *const argv[] = { "/bin/bomb" };

	memset(m, 0, sizeof(*m));
	m->host = "h";
	m->source = "step";
	m->cpu.vendor = HWTR_CPU_INTEL;
	m->cpu.family = 6;
	m->cpu.model = 0x55;
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
	struct hwtr_image_desc d;
	struct hwtr_aw *aw;
	struct hwtr_capture_end end;
	char err[512], key[HWTR_IMAGE_KEY_MAX];
	uint8_t *b = bomb_bytes(len);
	FILE *f;
	long size;

	meta(&m);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, "b.hwtrace", &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	memset(&d, 0, sizeof(d));
	d.path = "/bomb";
	d.kind = HWTR_IMG_MEMORY;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_add_image(aw, &d, b, len, key), 0, "%s",
	    hwtr_aw_errmsg(aw));
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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, image_bomb_bounded);
	ATF_TP_ADD_TC(tp, sideband_bomb_bounded);
	return (atf_no_error());
}
