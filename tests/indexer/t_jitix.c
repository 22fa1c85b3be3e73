/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Code in no file decoded from the archive's code regions (issue 32).
 * The selfmod fixture writes a function into an anonymous page, calls it
 * 3 times, rewrites it and calls the new code 3 times; with SELFMOD_DUMP
 * it writes each version's address, bytes and the CLOCK_MONOTONIC times
 * around the rewrite (the step source's clock).  It is captured with the
 * step source; the archive is then rewritten without the memory images
 * of the anonymous page (so that only a code region can give its code)
 * and with a jit/code-PID.bin member made from selfmod's own bytes, and,
 * in one case, a jit/perf-PID.map naming the page.  Indexed with either
 * decoder, the instructions at the page must be, in order, 3 times those
 * objdump finds in version 1's bytes, then 3 times those of version 2's
 * (9 and 15 instructions), named "[anon]+0x0" (no map) or by the map's
 * name with an image "[jit]", or by the jitdump load valid when each ran;
 * without the code member they cannot be decoded (decode errors).  The
 * step source's own snapshots of the page (kept) name it the same way.
 */

#include <atf-c.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "hwtr_jit.h"

#define PROG	HWTR_TEST_PROGS "/selfmod"

/* One version of the code, as selfmod wrote it. */
struct ver {
	uint64_t	addr, from, until;
	uint8_t		code[64];
	size_t		len;
	/* objdump's instructions: offsets and mnemonics */
	size_t		ninsn;
	uint64_t	off[16];
	char		mn[16][16];
};

static void
run(const char *cmd)
{
	int rc = system(cmd);

	ATF_REQUIRE_MSG(rc == 0, "'%s': expected exit 0, got %d", cmd, rc);
}

static int
have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return (system(cmd) == 0);
}

/* Capture selfmod with @source; its two versions in @v; its pid. */
static int32_t
capture(struct ver *v, const char *source)
{
	struct hwtr_ar *ar;
	FILE *f;
	char line[512], hex[200];
	size_t i, k;
	unsigned long long a, from, until;
	int32_t pid;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "SELFMOD_DUMP=dump " HWTR_TEST_HWTRACE
	    " capture --source %s -o s.hwtrace -- " PROG " >out 2>err",
	    source);
	run(cmd);
	run("grep -qx 'selfmod: v1 24 v2 15' out");
	ATF_REQUIRE((f = fopen("dump", "r")) != NULL);
	for (i = 0; i < 2; i++) {
		ATF_REQUIRE_MSG(fgets(line, sizeof(line), f) != NULL,
		    "expected 2 lines in selfmod's dump, got %zu", i);
		ATF_REQUIRE_MSG(sscanf(line, "%llx %llu %llu %199s", &a, &from,
		    &until, hex) == 4, "malformed dump line '%s'", line);
		v[i].addr = a;
		v[i].from = from;
		v[i].until = until == 0 ? UINT64_MAX : until;
		v[i].len = strlen(hex) / 2;
		ATF_REQUIRE(v[i].len > 0 && v[i].len <= sizeof(v[i].code));
		for (k = 0; k < v[i].len; k++) {
			unsigned b;

			ATF_REQUIRE(sscanf(hex + 2 * k, "%2x", &b) == 1);
			v[i].code[k] = (uint8_t)b;
		}
	}
	fclose(f);
	ATF_REQUIRE(hwtr_ar_open(&ar, "s.hwtrace", NULL) == 0);
	ATF_REQUIRE(hwtr_ar_nstreams(ar) == 1);
	pid = hwtr_ar_stream(ar, 0)->pid;
	hwtr_ar_close(ar);
	return (pid);
}

/* objdump's reading of version @v's bytes: its instructions. */
static void
disassemble(struct ver *v)
{
	FILE *f;
	char line[512], mn[16];
	unsigned long long off;

	f = fopen("code.bin", "w");
	ATF_REQUIRE(f != NULL);
	ATF_REQUIRE(fwrite(v->code, 1, v->len, f) == v->len);
	fclose(f);
	run("objdump -D -b binary -mi386:x86-64 -M intel code.bin "
	    ">objdump.txt");
	ATF_REQUIRE((f = fopen("objdump.txt", "r")) != NULL);
	v->ninsn = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *tab1, *tab2;

		/* "   0:\t89 f8                \tmov    eax,edi" */
		if (sscanf(line, " %llx:", &off) != 1 ||
		    (tab1 = strchr(line, '\t')) == NULL ||
		    (tab2 = strchr(tab1 + 1, '\t')) == NULL ||
		    sscanf(tab2 + 1, "%15s", mn) != 1)
			continue;
		ATF_REQUIRE(v->ninsn < 16);
		v->off[v->ninsn] = off;
		snprintf(v->mn[v->ninsn], sizeof(v->mn[0]), "%s", mn);
		v->ninsn++;
	}
	fclose(f);
	ATF_REQUIRE_MSG(v->ninsn > 0, "objdump found no instruction");
}

static size_t
put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return ((size_t)n);
}

/*
 * A jitdump of @pid loading version 1 as "fn_v1" at its time, then
 * version 2 at the same address as "fn_v2" at its own (little-endian,
 * perf's jitdump format: a 40-byte header, code load records).
 */
static size_t
make_jitdump(uint8_t *b, int32_t pid, const struct ver *v)
{
	size_t n = 0, i, r;
	char name[8];

	n += put_le(b + n, 0x4A695444u, 4);	/* magic */
	n += put_le(b + n, 1, 4);		/* version */
	n += put_le(b + n, 40, 4);		/* header size */
	n += put_le(b + n, 62, 4);		/* EM_X86_64 */
	n += put_le(b + n, 0, 4);
	n += put_le(b + n, (uint32_t)pid, 4);
	n += put_le(b + n, v[0].from, 8);
	n += put_le(b + n, 0, 8);		/* flags */
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "fn_v%zu", i + 1);
		r = n;
		n += put_le(b + n, 0, 4);	/* JIT_CODE_LOAD */
		n += put_le(b + n, 16 + 40 + strlen(name) + 1 + v[i].len, 4);
		n += put_le(b + n, v[i].from, 8);
		n += put_le(b + n, (uint32_t)pid, 4);
		n += put_le(b + n, (uint32_t)pid, 4);
		n += put_le(b + n, v[i].addr, 8);	/* vma */
		n += put_le(b + n, v[i].addr, 8);	/* code_addr */
		n += put_le(b + n, v[i].len, 8);
		n += put_le(b + n, i + 1, 8);		/* code_index */
		memcpy(b + n, name, strlen(name) + 1);
		n += strlen(name) + 1;
		memcpy(b + n, v[i].code, v[i].len);
		n += v[i].len;
		ATF_REQUIRE(n - r == 16 + 40 + strlen(name) + 1 + v[i].len);
	}
	return (n);
}

/*
 * s.hwtrace without the memory images of anonymous memory (and the
 * mappings' references to them) as @out, with a code-region member for
 * @pid when @code, and a perf map naming the page when @map is 1, a
 * jitdump naming each version when 2; @keep keeps the memory images.
 */
static void
rewrite(const char *out, int32_t pid, const struct ver *v, int code, int map,
    int keep)
{
	struct hwtr_ar *ar;
	struct hwtr_aw *aw;
	char err[512], key[HWTR_IMAGE_KEY_MAX], name[64], text[128];
	uint8_t buf[512];
	void *b;
	size_t i, c, len, n;
	uint32_t id;

	ATF_REQUIRE(hwtr_ar_open(&ar, "s.hwtrace", NULL) == 0);
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, out, hwtr_ar_meta(ar), NULL, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_REQUIRE(hwtr_aw_add_stream(aw, hwtr_ar_stream(ar, 0), &id) == 0);
	for (i = 0; i < hwtr_ar_nimages(ar); i++) {
		const struct hwtr_image_desc *d = hwtr_ar_image(ar, i);

		if (!keep && d->kind == HWTR_IMG_MEMORY && d->path != NULL &&
		    strcmp(d->path, "//anon") == 0)
			continue;
		ATF_REQUIRE(hwtr_ar_read_image(ar, i, &b, &len) == 0);
		ATF_REQUIRE(hwtr_aw_add_image(aw, d, b, len, key) == 0);
		free(b);
	}
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		struct hwtr_sb_rec r = *hwtr_ar_sideband_rec(ar, i);

		if (!keep && r.type == HWTR_SB_MMAP && r.u.mmap.path != NULL &&
		    strcmp(r.u.mmap.path, "//anon") == 0) {
			r.u.mmap.image = NULL;
			r.u.mmap.build_id_len = 0;
		}
		ATF_REQUIRE_MSG(hwtr_aw_sideband(aw, &r) == 0, "record %zu: "
		    "%s", i, hwtr_aw_errmsg(aw));
	}
	for (c = 0; c < hwtr_ar_nchunks(ar, 0); c++) {
		ATF_REQUIRE(hwtr_ar_read_chunk(ar, 0, c, &b, &len) == 0);
		ATF_REQUIRE(hwtr_aw_chunk(aw, id, hwtr_ar_chunk(ar, 0,
		    c)->offset, b, len) == 0);
		free(b);
	}
	if (code) {
		hwtr_code_put_hdr(buf);
		n = HWTR_CODE_HDR;
		for (i = 0; i < 2; i++) {
			hwtr_code_put_rec(buf + n, v[i].addr, v[i].from,
			    v[i].until, (uint32_t)v[i].len);
			memcpy(buf + n + HWTR_CODE_REC, v[i].code, v[i].len);
			n += HWTR_CODE_REC + v[i].len;
		}
		snprintf(name, sizeof(name), "code-%" PRId32 ".bin", pid);
		ATF_REQUIRE(hwtr_aw_add_jit(aw, name, buf, n) == 0);
	}
	if (map == 2) {
		snprintf(name, sizeof(name), "jit-%" PRId32 ".dump", pid);
		n = make_jitdump(buf, pid, v);
		ATF_REQUIRE(hwtr_aw_add_jit(aw, name, buf, n) == 0);
	} else if (map) {
		snprintf(name, sizeof(name), "perf-%" PRId32 ".map", pid);
		n = (size_t)snprintf(text, sizeof(text), "%" PRIx64 " 40 "
		    "jitted_fn\n", v[0].addr);
		ATF_REQUIRE(hwtr_aw_add_jit(aw, name, text, n) == 0);
	}
	if (hwtr_ar_end(ar) != NULL)
		hwtr_aw_set_end(aw, hwtr_ar_end(ar));
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0, "%s", err);
	hwtr_ar_close(ar);
}

static int64_t
q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t r = -1;

	ATF_REQUIRE_MSG(sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		r = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (r);
}

/* Decode errors of @db's streams. */
static int64_t
errors_of(const char *db)
{
	sqlite3 *d;
	int64_t n;

	ATF_REQUIRE(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK);
	n = q_int(d, "SELECT sum(errors) FROM streams");
	sqlite3_close(d);
	return (n);
}

/*
 * The instructions of @db at the page, against objdump's: 3 runs of
 * version 1 then 3 of version 2, named @names[0] and @names[1] (+0xOFF
 * inside); both "[anon]+0x0" when @names is NULL.
 */
static void
check_insns(const char *db, const struct ver *v, const char *const *names)
{
	static const char *const anon[2] = { "[anon]+0x0", "[anon]+0x0" };
	const char *const *fn2 = names != NULL ? names : anon;
	char cmd[512], line[512], want[128];
	unsigned long long ip;
	unsigned thr;
	size_t run_, k, seen = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), HWTR_TEST_HWTRACE " query --format tsv %s "
	    "insns --from 0 -n 1000000 >insns.tsv", db);
	run(cmd);
	ATF_REQUIRE((f = fopen("insns.tsv", "r")) != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *fn, *ins, *p;
		const struct ver *cv;
		size_t want_i;

		if (sscanf(line, "%u\t%*u\t%llx\t", &thr, &ip) != 2 ||
		    ip < v[0].addr || ip >= v[0].addr + 64)
			continue;
		/* The columns: thread insn address function line insn. */
		fn = strchr(strchr(strchr(line, '\t') + 1, '\t') + 1, '\t') + 1;
		p = strchr(fn, '\t');
		ATF_REQUIRE(p != NULL);
		*p = '\0';
		ins = strchr(p + 1, '\t');
		ATF_REQUIRE(ins != NULL);
		ins++;
		ins[strcspn(ins, " \n")] = '\0';
		/* Which run and instruction this one must be. */
		run_ = 0;
		k = seen;
		if (k < 3 * v[0].ninsn) {
			cv = &v[0];
			want_i = k % v[0].ninsn;
		} else {
			k -= 3 * v[0].ninsn;
			ATF_REQUIRE_MSG(k < 3 * v[1].ninsn, "expected %zu "
			    "instructions at the page, got more: %s", 3 *
			    (v[0].ninsn + v[1].ninsn), line);
			cv = &v[1];
			want_i = k % v[1].ninsn;
			run_ = 1;
		}
		ATF_CHECK_MSG(ip == cv->addr + cv->off[want_i], "instruction "
		    "%zu at the page: expected v%zu's at %#llx, got %#llx",
		    seen, run_ + 1, (unsigned long long)(cv->addr +
		    cv->off[want_i]), ip);
		ATF_CHECK_MSG(strncmp(ins, cv->mn[want_i], strlen(ins)) == 0,
		    "instruction %zu at %#llx: expected objdump's '%s', "
		    "got '%s'", seen, ip, cv->mn[want_i], ins);
		if (cv->off[want_i] == 0)
			snprintf(want, sizeof(want), "%s", fn2[run_]);
		else
			snprintf(want, sizeof(want), "%s+%#" PRIx64, fn2[run_],
			    cv->off[want_i]);
		ATF_CHECK_MSG(strcmp(fn, want) == 0, "instruction %zu at "
		    "%#llx: expected function '%s', got '%s'", seen, ip,
		    want, fn);
		seen++;
	}
	fclose(f);
	ATF_CHECK_MSG(seen == 3 * (v[0].ninsn + v[1].ninsn), "%s: expected "
	    "%zu instructions at the page (3 x %zu, 3 x %zu), got %zu", db,
	    3 * (v[0].ninsn + v[1].ninsn), v[0].ninsn, v[1].ninsn, seen);
}

static void
setup_from(struct ver *v, int32_t *pid, const char *source)
{
	if (!have("objdump"))
		atf_tc_skip("objdump is not installed (Debian package "
		    "binutils)");
	*pid = capture(v, source);
	disassemble(&v[0]);
	disassemble(&v[1]);
	/* By construction: mov, add, ret; imul, nop x3, ret. */
	ATF_REQUIRE_MSG(v[0].ninsn == 3 && v[1].ninsn == 5, "objdump: "
	    "expected 3 and 5 instructions, got %zu and %zu", v[0].ninsn,
	    v[1].ninsn);
}

static void
setup(struct ver *v, int32_t *pid)
{
	setup_from(v, pid, "step");
}

/* What both_decoders() checks besides the instructions. */
#define BD_CLEAN	0x1	/* no decode error in either database */
#define BD_OWN		0x2	/* fast hands nothing to libipt */

/*
 * Index @archive with libipt into @base-l.db and with fast into
 * @base-f.db, and check both against objdump (check_insns: names @fn,
 * NULL for "[anon]+0x0"); @flags (BD_*) adds checks.  A failure names
 * @what.
 */
static void
both_decoders(const char *archive, const char *base, const struct ver *v,
    const char *const *fn, int flags, const char *what)
{
	static const char *const dec[2] = { "libipt", "fast" };
	char cmd[1024], db[2][128];
	int64_t e;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(db[i], sizeof(db[i]), "%s-%c.db", base, dec[i][0]);
		snprintf(cmd, sizeof(cmd), HWTR_TEST_HWTRACE " index -D %s "
		    "-o %s %s 2>%s.err", dec[i], db[i], archive, db[i]);
		run(cmd);
	}
	/* fpt itself read the regions: nothing was handed to libipt. */
	if (flags & BD_OWN) {
		snprintf(cmd, sizeof(cmd), "! grep 'decoded by libipt' "
		    "%s.err >&2", db[1]);
		run(cmd);
	}
	for (i = 0; i < 2; i++) {
		if (flags & BD_CLEAN)
			ATF_CHECK_MSG((e = errors_of(db[i])) == 0, "%s, %s: "
			    "expected 0 decode errors, got %jd", what, dec[i],
			    (intmax_t)e);
		check_insns(db[i], v, fn);
	}
}

ATF_TC(anon_regions);
ATF_TC_HEAD(anon_regions, tc)
{
	atf_tc_set_md_var(tc, "descr", "selfmod's two versions of code in an "
	    "anonymous page, from code regions alone, decoded instruction for "
	    "instruction as objdump reads their bytes, by both decoders, named "
	    "[anon]+0x0; without the regions, decode errors there");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(anon_regions, tc)
{
	struct ver v[2];
	int32_t pid;
	int64_t e;

	setup(v, &pid);
	rewrite("none.hwtrace", pid, v, 0, 0, 0);
	rewrite("code.hwtrace", pid, v, 1, 0, 0);
	run(HWTR_TEST_HWTRACE " index -q -o none.db none.hwtrace");
	e = errors_of("none.db");
	ATF_CHECK_MSG(e > 0, "without code regions: expected decode errors at "
	    "the anonymous page, got %jd", (intmax_t)e);
	both_decoders("code.hwtrace", "code", v, NULL, BD_CLEAN | BD_OWN,
	    "with code regions");
}

ATF_TC(perf_map_names);
ATF_TC_HEAD(perf_map_names, tc)
{
	atf_tc_set_md_var(tc, "descr", "a perf map naming selfmod's page "
	    "names its code, in an image [jit] of the process");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(perf_map_names, tc)
{
	static const char *const fn[2] = { "jitted_fn", "jitted_fn" };
	struct ver v[2];
	sqlite3 *d;
	int32_t pid;
	int64_t n;

	setup(v, &pid);
	rewrite("map.hwtrace", pid, v, 1, 1, 0);
	run(HWTR_TEST_HWTRACE " index -q -o map.db map.hwtrace");
	check_insns("map.db", v, fn);
	ATF_REQUIRE(sqlite3_open_v2("map.db", &d, SQLITE_OPEN_READONLY,
	    NULL) == SQLITE_OK);
	n = q_int(d, "SELECT count(*) FROM symbols s JOIN images i ON "
	    "i.id = s.image WHERE s.name = 'jitted_fn' AND i.path = '[jit]'");
	ATF_CHECK_MSG(n == 1, "expected 1 symbol jitted_fn of image [jit], "
	    "got %jd", (intmax_t)n);
	sqlite3_close(d);
	run(HWTR_TEST_HWTRACE " query --format tsv map.db func jitted_fn "
	    ">func.tsv");
	run("test $(tail -n +2 func.tsv | wc -l) -eq 6 || "
	    "{ echo 'func jitted_fn: expected 6 calls' >&2; exit 1; }");
}

ATF_TC(jitdump_by_time);
ATF_TC_HEAD(jitdump_by_time, tc)
{
	atf_tc_set_md_var(tc, "descr", "a jitdump loading selfmod's two "
	    "versions at the same address at their times names each run by "
	    "the load valid when it ran, by both decoders");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(jitdump_by_time, tc)
{
	static const char *const fn[2] = { "fn_v1", "fn_v2" };
	struct ver v[2];
	int32_t pid;

	setup(v, &pid);
	rewrite("dump.hwtrace", pid, v, 1, 2, 0);
	both_decoders("dump.hwtrace", "dump", v, fn, BD_OWN, "jitdump");
}

ATF_TC(step_snapshots);
ATF_TC_HEAD(step_snapshots, tc)
{
	atf_tc_set_md_var(tc, "descr", "the step source's snapshots of "
	    "anonymous memory (no code regions): its code is named "
	    "[anon]+0x0, and by a jitdump's loads when the archive has one");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(step_snapshots, tc)
{
	static const char *const fn[2] = { "fn_v1", "fn_v2" };
	struct ver v[2];
	int32_t pid;

	setup(v, &pid);
	run(HWTR_TEST_HWTRACE " index -q -o s.db s.hwtrace");
	check_insns("s.db", v, NULL);
	rewrite("sdump.hwtrace", pid, v, 0, 2, 1);
	both_decoders("sdump.hwtrace", "sdump", v, fn, 0, "step, jitdump");
}

/*
 * End to end (issue 32 item 1): the code regions the capture itself
 * records, with no help from the test, decode selfmod's two versions
 * instruction for instruction as objdump reads the bytes selfmod wrote,
 * with both decoders and no decode error.
 */
static void
captured(const char *source)
{
	struct ver v[2];
	int32_t pid;

	setup_from(v, &pid, source);
	run("tar -tf s.hwtrace | grep -q '^jit/code-[0-9]*\\.bin$'");
	both_decoders("s.hwtrace", "c", v, NULL, BD_CLEAN, source);
}

ATF_TC(captured_valgrind);
ATF_TC_HEAD(captured_valgrind, tc)
{
	atf_tc_set_md_var(tc, "descr", "selfmod captured by the valgrind "
	    "source: its own code regions decode both versions");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(captured_valgrind, tc)
{
	if (!have("valgrind"))
		atf_tc_skip("valgrind is not installed (Debian package "
		    "valgrind)");
	captured("valgrind");
}

ATF_TC(captured_step);
ATF_TC_HEAD(captured_step, tc)
{
	atf_tc_set_md_var(tc, "descr", "selfmod captured by the step "
	    "source: its own code regions decode both versions");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(captured_step, tc)
{
	captured("step");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, anon_regions);
	ATF_TP_ADD_TC(tp, perf_map_names);
	ATF_TP_ADD_TC(tp, jitdump_by_time);
	ATF_TP_ADD_TC(tp, step_snapshots);
	ATF_TP_ADD_TC(tp, captured_valgrind);
	ATF_TP_ADD_TC(tp, captured_step);
	return (atf_no_error());
}
