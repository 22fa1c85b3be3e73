/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hostile-binary fuzzer's check (fuzz_elf_one.h) in make check, built
 * with the normal compiler: the calls fixture and copies of it with
 * compressed DWARF are indexed from an archive of an ixgen walk over it,
 * and every input the fuzzer or t_elfmut once found a bug with
 * (tests/fuzz/corpus-elf/reg-*) gets an answer: a database or a refusal
 * with a message, never a crash (under `make sanitize`, never a
 * sanitizer report); the loop of one of them at every sync of a trace,
 * and in every thread of an archive, ends in seconds.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "fuzz_elf_one.h"

#define ELF_CORPUS	HWTR_TEST_SRC "/tests/fuzz/corpus-elf"
#define ELF_PROG	HWTR_TEST_PROGS "/calls"
#define IXGEN		HWTR_TEST_BUILD "/bench/ixgen"

/* The fuzzer's archive base: its walk (as fuzz-elf.mk makes it), here. */
static void
load_base(struct fuzz_elf_base *b)
{
	struct stat st;
	char cmd[2048], err[512];

	ATF_REQUIRE_MSG(stat(IXGEN, &st) == 0, "ixgen is not built: %s",
	    IXGEN);
	snprintf(cmd, sizeof(cmd), "%s -n 5000 -t 1 -s 1 -p walk %s "
	    "walk.hwtrace", IXGEN, ELF_PROG);
	ATF_REQUIRE_MSG(system(cmd) == 0, "ixgen failed: %s", cmd);
	ATF_REQUIRE_MSG(fuzz_elf_base_init(b, ELF_PROG, "walk.0", ".", err,
	    sizeof(err)) == 0, "%s", err);
}

/* @path through the fuzzer's check: 0 (an answer), and *@indexed. */
static void
check_file(struct fuzz_elf_base *b, const char *name, const char *path,
    int *indexed)
{
	uint8_t *data;
	size_t len = 0;
	char msg[1024];
	int rc;

	data = fuzz_elf_slurp(path, &len);
	ATF_REQUIRE_MSG(data != NULL, "cannot read %s", path);
	rc = fuzz_elf_one(b, data, len, indexed, msg, sizeof(msg));
	ATF_CHECK_MSG(rc == 0, "%s: expected a database or a refusal with a "
	    "message, got: %s", name, msg);
	free(data);
}

ATF_TC(sane_programs_index);
ATF_TC_HEAD(sane_programs_index, tc)
{
	atf_tc_set_md_var(tc, "require.progs", "objcopy");
}
ATF_TC_BODY(sane_programs_index, tc)
{
	static const char *const how[] = { "zlib", "zlib-gnu", "zstd" };
	struct fuzz_elf_base b;
	char cmd[2048], name[64];
	size_t i;
	int indexed;

	load_base(&b);
	check_file(&b, "calls", ELF_PROG, &indexed);
	ATF_CHECK_MSG(indexed, "calls itself: expected a database, index "
	    "refused it");
	/* Compressed DWARF is the same program: a database too. */
	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		snprintf(name, sizeof(name), "calls-%s", how[i]);
		snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=%s "
		    "%s %s 2>/dev/null", how[i], ELF_PROG, name);
		if (system(cmd) != 0) {
			/* binutils before 2.40 has no zstd. */
			printf("objcopy cannot compress with %s\n", how[i]);
			continue;
		}
		check_file(&b, name, name, &indexed);
		ATF_CHECK_MSG(indexed, "%s: expected a database, index "
		    "refused it", name);
	}
	fuzz_elf_base_free(&b);
}

/* reg-loop-no-trace once ran for hours: an answer is a minute at most. */
ATF_TC(found_inputs_answer);
ATF_TC_HEAD(found_inputs_answer, tc)
{
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(found_inputs_answer, tc)
{
	struct fuzz_elf_base b;
	struct dirent *de;
	char path[4096];
	DIR *d;
	int n = 0, indexed;

	load_base(&b);
	d = opendir(ELF_CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open %s", ELF_CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "reg-", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", ELF_CORPUS, de->d_name);
		check_file(&b, de->d_name, path, &indexed);
		n++;
	}
	closedir(d);
	fuzz_elf_base_free(&b);
	ATF_CHECK_MSG(n >= 2, "expected the found inputs in %s, got %d",
	    ELF_CORPUS, n);
}

/* The integer database @path answers to @sql (-1 when none). */
static int
db_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v = -1;

	ATF_REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK);
	ATF_REQUIRE_MSG(sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return (v);
}

/*
 * reg-loop-no-trace's loop once at every sync: the walk's trace (a PSB+
 * and its 257 bytes) 2,048 times over.  Each sync into the loop took
 * 0.7 s, 2,048 of them 25 minutes; now two full blocks after the first,
 * and a segment with 32 of them is not decoded further (decode.c,
 * IX_SLOW_MAX), said by an event.
 */
ATF_TC(loop_at_every_sync);
ATF_TC_HEAD(loop_at_every_sync, tc)
{
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(loop_at_every_sync, tc)
{
	enum { K = 2048 };
	struct fuzz_elf_base b;
	uint8_t *pt;
	size_t i;
	int indexed = 0, n, rest;

	load_base(&b);
	pt = malloc(b.ptlen * K);
	ATF_REQUIRE(pt != NULL);
	for (i = 0; i < K; i++)
		memcpy(pt + i * b.ptlen, b.pt, b.ptlen);
	free(b.pt);
	b.pt = pt;
	b.ptlen *= K;
	check_file(&b, "reg-loop-no-trace, 2,048 syncs", ELF_CORPUS
	    "/reg-loop-no-trace", &indexed);
	ATF_REQUIRE_MSG(indexed, "expected a database");
	n = db_int(b.db, "SELECT count(*) FROM events WHERE kind = "
	    "'decode-error' AND detail LIKE 'no progress: a loop%'");
	rest = db_int(b.db, "SELECT count(*) FROM events WHERE kind = "
	    "'decode-error' AND detail LIKE 'no progress at 32 syncs%'");
	fuzz_elf_base_free(&b);
	/* One segment (the trace is 514 KiB): 32 loops, then the rest. */
	ATF_CHECK_MSG(n == 32 && rest == 1, "expected 32 loops and the rest "
	    "of the segment not decoded, got %d and %d", n, rest);
}

/*
 * reg-loop-no-trace's loop in each of 200 threads: an archive of 200
 * streams, each the walk's trace.  A thread is a segment of its own, so
 * each paid the first limit, 2^26 instructions (0.8 s, 200 threads 170
 * s), before 2^20 (decode.c, IX_STILL_MAX).
 */
ATF_TC(loop_in_every_thread);
ATF_TC_HEAD(loop_in_every_thread, tc)
{
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(loop_in_every_thread, tc)
{
	struct fuzz_elf_base b;
	struct hwtr_ix_opts io;
	struct hwtr_ix *ix;
	char msg[1024];
	uint8_t *data;
	size_t len = 0;
	int n;

	load_base(&b);
	data = fuzz_elf_slurp(ELF_CORPUS "/reg-loop-no-trace", &len);
	ATF_REQUIRE(data != NULL);
	ATF_REQUIRE_MSG(fuzz_elf_archive_n(&b, data, len, 200, msg,
	    sizeof(msg)) == 0, "%s", msg);
	free(data);
	memset(&io, 0, sizeof(io));
	io.jobs = 1;
	io.archive_only = 1;
	ATF_REQUIRE(hwtr_ix_new(&ix, &io) == 0);
	ATF_REQUIRE_MSG(hwtr_ix_run(ix, b.ar, b.db) == 0, "index failed: %s",
	    hwtr_ix_errmsg(ix));
	hwtr_ix_free(ix);
	n = db_int(b.db, "SELECT count(DISTINCT thread) FROM events WHERE "
	    "kind = 'decode-error' AND detail LIKE 'no progress: a loop%'");
	fuzz_elf_base_free(&b);
	ATF_CHECK_MSG(n == 200, "expected the loop in 200 threads, got %d", n);
}

/*
 * Write @out: the fixture program with its DWARF replaced by the unit
 * @info (@ilen bytes) and the abbreviations @abbrev (@alen), by objcopy.
 */
static void
with_dwarf(const uint8_t *info, size_t ilen, const uint8_t *abbrev,
    size_t alen, const char *out)
{
	char cmd[2048];
	FILE *fp;

	fp = fopen("info.bin", "wb");
	ATF_REQUIRE(fp != NULL && fwrite(info, 1, ilen, fp) == ilen &&
	    fclose(fp) == 0);
	fp = fopen("abbrev.bin", "wb");
	ATF_REQUIRE(fp != NULL && fwrite(abbrev, 1, alen, fp) == alen &&
	    fclose(fp) == 0);
	snprintf(cmd, sizeof(cmd), "objcopy -R .debug_info -R .debug_abbrev "
	    "-R .debug_line -R .debug_str -R .debug_line_str -R .debug_aranges "
	    "-R .debug_rnglists -R .debug_loclists -R .debug_ranges "
	    "-R .debug_loc --add-section .debug_info=info.bin "
	    "--add-section .debug_abbrev=abbrev.bin %s %s", ELF_PROG, out);
	ATF_REQUIRE_MSG(system(cmd) == 0, "objcopy failed: %s", cmd);
}

/*
 * DWARF nested deeper than any compiler writes: a unit of 200,000
 * lexical blocks, each inside the one before, in place of calls' own
 * DWARF (objcopy).  The inline reader once followed it down, one C
 * frame a level, off the stack (elfinline.c, INL_MAXNEST).
 */
ATF_TC(deep_dwarf_nesting);
ATF_TC_HEAD(deep_dwarf_nesting, tc)
{
	atf_tc_set_md_var(tc, "require.progs", "objcopy");
}
ATF_TC_BODY(deep_dwarf_nesting, tc)
{
	/* 1: compile unit, DW_AT_name string; 2: lexical block; both
	 * with children. */
	static const uint8_t abbrev[] = { 1, 0x11, 1, 0x03, 0x08, 0, 0,
	    2, 0x0b, 1, 0, 0, 0 };
	enum { N = 200000 };
	struct fuzz_elf_base b;
	uint8_t *info;
	size_t len = 4 + 7 + 2 + N + N + 1;
	int indexed;

	info = calloc(1, len);
	ATF_REQUIRE(info != NULL);
	/* DWARF 4 unit header: length, version, abbrev offset, address size. */
	info[0] = (uint8_t)(len - 4);
	info[1] = (uint8_t)((len - 4) >> 8);
	info[2] = (uint8_t)((len - 4) >> 16);
	info[4] = 4;
	info[10] = 8;
	info[11] = 1;
	info[12] = 'x';
	memset(info + 14, 2, N);	/* then N + 1 ends of children */
	with_dwarf(info, len, abbrev, sizeof(abbrev), "deep.elf");
	free(info);
	load_base(&b);
	check_file(&b, "calls with 200,000 nested blocks", "deep.elf",
	    &indexed);
	/* The code is calls': it decodes, with no lines. */
	ATF_CHECK_MSG(indexed, "expected a database, index refused it");
	fuzz_elf_base_free(&b);
}

/*
 * A split unit's .dwo named by a hostile image is a FIFO: index, which
 * looks for .dwo files on this machine (not archive_only), must not open
 * it, which blocks until a writer comes, and SIGTERM with it (libdw
 * opens it in dwarf_cu_info(), for the inlines of elfinline.c).  The
 * image is calls with a DWARF 5 skeleton unit for its DWARF (objcopy).
 */
ATF_TC(dwo_fifo_not_opened);
ATF_TC_HEAD(dwo_fifo_not_opened, tc)
{
	atf_tc_set_md_var(tc, "require.progs", "objcopy");
	atf_tc_set_md_var(tc, "timeout", "60");
}
ATF_TC_BODY(dwo_fifo_not_opened, tc)
{
	/* 1: skeleton unit, no children, DW_AT_dwo_name string. */
	static const uint8_t abbrev[] = { 1, 0x4a, 0, 0x76, 0x08, 0, 0, 0 };
	struct fuzz_elf_base b;
	struct hwtr_ix_opts io;
	struct hwtr_ix *ix;
	uint8_t info[4200], *elf;
	char cwd[2048], dwo[2100], msg[512];
	size_t len, n;
	int rc;

	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(dwo, sizeof(dwo), "%s/x.dwo", cwd);
	ATF_REQUIRE_MSG(mkfifo(dwo, 0600) == 0, "mkfifo %s", dwo);
	/* DWARF 5: length, version, DW_UT_skeleton, address size, abbrev
	 * offset, dwo_id; then the unit's DIE. */
	memset(info, 0, sizeof(info));
	info[4] = 5;
	info[6] = 4;
	info[7] = 8;
	info[20] = 1;
	n = strlen(dwo) + 1;
	memcpy(info + 21, dwo, n);
	len = 21 + n;
	info[0] = (uint8_t)(len - 4);
	info[1] = (uint8_t)((len - 4) >> 8);
	with_dwarf(info, len, abbrev, sizeof(abbrev), "skel.elf");
	load_base(&b);
	elf = fuzz_elf_slurp("skel.elf", &len);
	ATF_REQUIRE(elf != NULL);
	ATF_REQUIRE_MSG(fuzz_elf_archive(&b, elf, len, msg, sizeof(msg)) == 0,
	    "%s", msg);
	free(elf);
	memset(&io, 0, sizeof(io));
	io.jobs = 1;
	ATF_REQUIRE(hwtr_ix_new(&ix, &io) == 0);
	/* Blocked in open() here, till the case's timeout, before the fix. */
	rc = hwtr_ix_run(ix, b.ar, b.db);
	ATF_CHECK_MSG(rc == 0, "expected a database, got %s: %s",
	    hwtr_errstr(rc), hwtr_ix_errmsg(ix));
	hwtr_ix_free(ix);
	fuzz_elf_base_free(&b);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, sane_programs_index);
	ATF_TP_ADD_TC(tp, found_inputs_answer);
	ATF_TP_ADD_TC(tp, loop_at_every_sync);
	ATF_TP_ADD_TC(tp, loop_in_every_thread);
	ATF_TP_ADD_TC(tp, deep_dwarf_nesting);
	ATF_TP_ADD_TC(tp, dwo_fifo_not_opened);
	return (atf_no_error());
}
