/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf map and jitdump readers (format/jitmap.c) on files a real JIT
 * wrote (node, when installed) and on hostile input.  What is expected is
 * known without hwtrace: the script names its hot function; the map's
 * line count is counted here; the jitdump's code bytes are handed to
 * objdump, which must decode them as x86-64.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwtrace.h"
#include "../../format/hwtr_jit.h"

static const char script[] =
    "function hotAdd(a, b) { return (a * 31 + b) | 0; }\n"
    "let s = 0;\n"
    "for (let i = 0; i < 300000; i++) s = hotAdd(s, i);\n"
    "console.log(s);\n";

/*
 * Run node with @flag on the script in the current directory; its pid.
 * Without inlining, TurboFan compiles hotAdd on its own (V8 would
 * otherwise inline it into the top-level loop's OSR code).
 */
static pid_t
run_node(const char *flag)
{
	FILE *f;
	pid_t pid;
	int st;

	if (system("command -v node >/dev/null 2>&1") != 0)
		atf_tc_skip("node is not installed (Debian package nodejs)");
	ATF_REQUIRE((f = fopen("hot.js", "w")) != NULL);
	fputs(script, f);
	ATF_REQUIRE(fclose(f) == 0);
	ATF_REQUIRE((pid = fork()) >= 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		execlp("node", "node", flag, "--no-turbo-inlining", "hot.js",
		    (char *)NULL);
		_exit(127);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "node %s hot.js: expected exit 0, got status 0x%x", flag, st);
	return (pid);
}

static void *
slurp(const char *path, size_t *lenp)
{
	FILE *f;
	char *buf;
	long n;

	ATF_REQUIRE_MSG((f = fopen(path, "rb")) != NULL, "expected %s to "
	    "exist", path);
	ATF_REQUIRE(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0);
	rewind(f);
	ATF_REQUIRE((buf = malloc((size_t)n + 1)) != NULL);
	ATF_REQUIRE(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*lenp = (size_t)n;
	return (buf);
}

ATF_TC_WITHOUT_HEAD(node_perf_map_names_hot_function);
ATF_TC_BODY(node_perf_map_names_hot_function, tc)
{
	struct hwtr_jit_list l;
	char path[64], err[256];
	size_t len, i, lines = 0, hot = 0;
	char *buf;
	pid_t pid;

	pid = run_node("--perf-basic-prof");
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)pid);
	buf = slurp(path, &len);
	unlink(path);
	for (i = 0; i < len; i++)
		lines += buf[i] == '\n';
	memset(&l, 0, sizeof(l));
	ATF_REQUIRE_MSG(hwtr_jit_parse(&l, path, buf, len, err,
	    sizeof(err)) == 0, "expected %s to parse, got: %s", path, err);
	ATF_CHECK_MSG(l.n == lines, "expected %zu symbols (lines), got %zu",
	    lines, l.n);
	ATF_CHECK(!l.dump);
	for (i = 0; i < l.n; i++) {
		if (strstr(l.v[i].name, "hotAdd") == NULL)
			continue;
		hot++;
		ATF_CHECK_MSG(l.v[i].start >= 0x10000 && l.v[i].size > 0 &&
		    l.v[i].size < 0x100000, "hotAdd at 0x%jx size 0x%jx: "
		    "expected a user address and 1..1 MiB",
		    (uintmax_t)l.v[i].start, (uintmax_t)l.v[i].size);
	}
	ATF_CHECK_MSG(hot >= 1, "expected hotAdd in the map, found %zu", hot);
	hwtr_jit_list_free(&l);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(node_jitdump_code_decodes_as_x86);
ATF_TC_BODY(node_jitdump_code_decodes_as_x86, tc)
{
	struct hwtr_jit_list l;
	char path[64], err[256], line[512];
	const struct hwtr_jit_sym *s = NULL;
	size_t len, i, insns = 0, bad = 0;
	FILE *f;
	char *buf;
	pid_t pid;

	pid = run_node("--perf-prof");
	snprintf(path, sizeof(path), "jit-%ld.dump", (long)pid);
	buf = slurp(path, &len);
	memset(&l, 0, sizeof(l));
	ATF_REQUIRE_MSG(hwtr_jit_parse(&l, path, buf, len, err,
	    sizeof(err)) == 0, "expected %s to parse, got: %s", path, err);
	ATF_CHECK(l.dump);
	ATF_CHECK_MSG(l.pid == (uint32_t)pid, "expected header pid %ld, got "
	    "%u", (long)pid, l.pid);
	ATF_CHECK_MSG(l.elf_mach == 62, "expected EM_X86_64 (62), got %u",
	    l.elf_mach);
	ATF_CHECK_MSG(l.nloads > 0 && l.nloads <= l.n, "expected code loads, "
	    "got %zu of %zu symbols", l.nloads, l.n);
	/* The optimised version: the last load of hotAdd. */
	for (i = 0; i < l.n; i++)
		if (strstr(l.v[i].name, "hotAdd") != NULL)
			s = &l.v[i];
	ATF_REQUIRE_MSG(s != NULL, "expected a code load named hotAdd");
	ATF_REQUIRE_MSG(s->code != NULL && s->size > 0 && s->size < 0x100000,
	    "hotAdd: expected code bytes, got %jx", (uintmax_t)s->size);
	ATF_REQUIRE((f = fopen("hot.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(s->code, 1, s->size, f) == s->size);
	ATF_REQUIRE(fclose(f) == 0);
	if (system("command -v objdump >/dev/null 2>&1") != 0)
		atf_tc_skip("objdump is not installed (binutils)");
	ATF_REQUIRE((f = popen("objdump -D -b binary -mi386:x86-64 hot.bin",
	    "r")) != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strchr(line, '\t') == NULL)
			continue;
		insns++;
		bad += strstr(line, "(bad)") != NULL;
	}
	pclose(f);
	ATF_CHECK_MSG(insns >= 5 && bad == 0, "objdump on hotAdd's %ju "
	    "bytes: expected >= 5 instructions and no (bad), got %zu and %zu",
	    (uintmax_t)s->size, insns, bad);
	/* Every prefix of the file: an error or a parse, never a crash. */
	for (i = 0; i < len && i < 4096; i++) {
		struct hwtr_jit_list t;

		memset(&t, 0, sizeof(t));
		(void)hwtr_jit_parse_dump(&t, path, buf, i, err, sizeof(err));
		hwtr_jit_list_free(&t);
	}
	hwtr_jit_list_free(&l);
	free(buf);
}

/* A crafted jitdump: header, then a record claiming 8 bytes. */
ATF_TC_WITHOUT_HEAD(hostile_jitdump_names_offset);
ATF_TC_BODY(hostile_jitdump_names_offset, tc)
{
	struct hwtr_jit_list l;
	uint8_t b[64];
	uint32_t v;
	char err[256];
	int rc;

	memset(b, 0, sizeof(b));
	v = 0x4A695444u;
	memcpy(b, &v, 4);
	v = 1;
	memcpy(b + 4, &v, 4);
	v = 40;
	memcpy(b + 8, &v, 4);
	v = 8;				/* record total_size < 16 */
	memcpy(b + 44, &v, 4);
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, "jit-1.dump", b, sizeof(b), err, sizeof(err));
	ATF_CHECK_MSG(rc == -HWTR_E_FORMAT && strstr(err, "jit-1.dump "
	    "offset 0x28:") != NULL, "expected a format error at 0x28, got "
	    "%d '%s'", rc, err);
	hwtr_jit_list_free(&l);
	/* A code load whose code_size passes the record. */
	v = 0;
	memcpy(b + 40, &v, 4);
	v = 24;
	memcpy(b + 44, &v, 4);
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, "jit-1.dump", b, sizeof(b), err, sizeof(err));
	ATF_CHECK_MSG(rc == -HWTR_E_FORMAT && strstr(err, "offset 0x28:") !=
	    NULL, "expected a short code load error at 0x28, got %d '%s'", rc,
	    err);
	hwtr_jit_list_free(&l);
}

ATF_TC_WITHOUT_HEAD(hostile_map_lines);
ATF_TC_BODY(hostile_map_lines, tc)
{
	static const char *bad[] = { "zz 10 f\n", "10 f\n", "10 20\n",
	    "10 20 \n", "11112222333344445 1 f\n", "ffffffffffffffff 2 f\n",
	    "10 20 a\0b\n" };
	static const size_t badlen[] = { 8, 5, 6, 7, 22, 21, 10 };
	struct hwtr_jit_list l;
	char err[256];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&l, 0, sizeof(l));
		rc = hwtr_jit_parse_map(&l, "perf-1.map", bad[i], badlen[i],
		    err, sizeof(err));
		ATF_CHECK_MSG(rc == -HWTR_E_FORMAT && strncmp(err,
		    "perf-1.map offset 0x", 20) == 0, "case %zu: expected a "
		    "format error naming the file, got %d '%s'", i, rc, err);
		hwtr_jit_list_free(&l);
	}
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse_map(&l, "perf-1.map", "a0 10 f g\n\n0xb0 8 h",
	    19, err, sizeof(err));
	ATF_REQUIRE_MSG(rc == 0 && l.n == 2, "expected 2 symbols, got %d %zu",
	    rc, l.n);
	ATF_CHECK(l.v[0].start == 0xa0 && l.v[0].size == 0x10 &&
	    strcmp(l.v[0].name, "f g") == 0);
	ATF_CHECK(l.v[1].start == 0xb0 && l.v[1].size == 8 &&
	    strcmp(l.v[1].name, "h") == 0);
	hwtr_jit_list_free(&l);
	ATF_CHECK(hwtr_jit_name_ok("perf-42.map") && hwtr_jit_name_ok(
	    "jit-7.dump") && !hwtr_jit_name_ok("perf-.map") &&
	    !hwtr_jit_name_ok("jit-7.dump/x") && !hwtr_jit_name_ok("x"));
}

/*
 * jit/ members: a good map is listed with its kind and read back as
 * written; a bad one makes the reader refuse the archive, naming member
 * and offset; bad names are refused by the writer.
 */
ATF_TC_WITHOUT_HEAD(archive_jit_member);
ATF_TC_BODY(archive_jit_member, tc)
{
	static const char good[] = "1000 20 JS:*hot f.js:1\n", bad[] =
	    "1000 20 ok\n1000 zz bad\n";
	struct hwtr_capture_meta m;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	const struct hwtr_member_info *mi;
	char err[256];
	void *buf;
	size_t i, len;
	int rc;

	memset(&m, 0, sizeof(m));
	m.host = "testhost";
	m.source = "step";
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, "g.hwtrace", &m, NULL, err,
	    sizeof(err)) == 0, "open: %s", err);
	ATF_CHECK(hwtr_aw_add_jit(aw, "perf-7.map", good, strlen(good)) == 0);
	ATF_CHECK(hwtr_aw_add_jit(aw, "../x.map", good, 4) == -HWTR_E_INVAL);
	ATF_CHECK(hwtr_aw_add_jit(aw, "perf-7.map", good, 4) ==
	    -HWTR_E_EXISTS);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	ATF_REQUIRE_MSG(hwtr_ar_open(&ar, "g.hwtrace", NULL) == 0, "expected "
	    "the archive to open, got: %s", hwtr_ar_errmsg(ar));
	ATF_REQUIRE(hwtr_ar_find_member(ar, "jit/perf-7.map", &i) == 0);
	mi = hwtr_ar_member(ar, i);
	ATF_CHECK_MSG(mi->kind == HWTR_M_JIT, "expected kind %d, got %d",
	    HWTR_M_JIT, mi->kind);
	ATF_REQUIRE(hwtr_ar_read_member(ar, i, &buf, &len) == 0);
	ATF_CHECK(len == strlen(good) && memcmp(buf, good, len) == 0);
	free(buf);
	hwtr_ar_close(ar);

	ATF_REQUIRE(hwtr_aw_open(&aw, "b.hwtrace", &m, NULL, err,
	    sizeof(err)) == 0);
	ATF_CHECK(hwtr_aw_add_jit(aw, "perf-8.map", bad, strlen(bad)) == 0);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	rc = hwtr_ar_open(&ar, "b.hwtrace", NULL);
	ATF_CHECK_MSG(rc == -HWTR_E_FORMAT && strstr(hwtr_ar_errmsg(ar),
	    "jit/perf-8.map offset 0x10:") != NULL, "expected a format error "
	    "naming jit/perf-8.map offset 0x10 (line 2 at 11, its SIZE 5 "
	    "on), got %d '%s'", rc, hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
}

/* Little-endian @v in @n bytes at @p, written here, not by the library. */
static void
put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A code-region file laid out by hand (hwtrace(5)): two versions of the
 * code at one address, the second valid from where the first ends.
 * Returns its length in @b (at least 128 bytes).
 */
static size_t
code_file(uint8_t *b)
{
	memset(b, 0, 128);
	memcpy(b, "HWTRCODE", 8);
	put_le(b + 8, 1, 4);
	put_le(b + 16, 0x7f0000001000, 8);	/* region 1 */
	put_le(b + 24, 100, 8);
	put_le(b + 32, 200, 8);
	put_le(b + 40, 3, 4);
	memcpy(b + 48, "\x31\xc0\xc3", 3);	/* xor eax,eax; ret */
	put_le(b + 51, 0x7f0000001000, 8);	/* region 2 */
	put_le(b + 59, 200, 8);
	put_le(b + 67, UINT64_MAX, 8);
	put_le(b + 75, 1, 4);
	b[83] = 0xc3;
	return (84);
}

ATF_TC_WITHOUT_HEAD(code_regions_parse);
ATF_TC_BODY(code_regions_parse, tc)
{
	/* Offset to damage, value, width, offset the error must name. */
	static const struct { size_t at; uint64_t v; int w; size_t eoff;
	    size_t len; } bad[] = {
		{ 0, 'X', 1, 0, 84 },		/* magic */
		{ 8, 2, 4, 8, 84 },		/* version */
		{ 44, 1, 4, 44, 84 },		/* flags */
		{ 40, 0, 4, 40, 84 },		/* empty region */
		{ 40, (1u << 20) + 1, 4, 40, 84 },	/* over the limit */
		{ 40, 4, 4, 40, 50 },		/* bytes cut short */
		{ 16, UINT64_MAX - 1, 8, 16, 84 },	/* wraps */
		{ 24, 201, 8, 24, 84 },		/* from > until */
		{ 0, 'H', 1, 51, 60 },		/* second head cut short */
	};
	struct hwtr_code_list l;
	uint8_t b[128];
	char err[256], want[64];
	size_t i, len;
	int rc;

	len = code_file(b);
	memset(&l, 0, sizeof(l));
	rc = hwtr_code_parse(&l, "code-5.bin", b, len, err, sizeof(err));
	ATF_REQUIRE_MSG(rc == 0 && l.n == 2, "expected 2 regions, got %d %zu "
	    "'%s'", rc, l.n, rc ? err : "");
	ATF_CHECK(l.v[0].addr == 0x7f0000001000 && l.v[0].from == 100 &&
	    l.v[0].until == 200 && l.v[0].len == 3 && l.v[0].bytes == b + 48);
	ATF_CHECK(l.v[1].addr == 0x7f0000001000 && l.v[1].from == 200 &&
	    l.v[1].until == UINT64_MAX && l.v[1].len == 1 &&
	    l.v[1].bytes[0] == 0xc3);
	hwtr_code_list_free(&l);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		(void)code_file(b);
		put_le(b + bad[i].at, bad[i].v, bad[i].w);
		memset(&l, 0, sizeof(l));
		rc = hwtr_code_parse(&l, "code-5.bin", b, bad[i].len, err,
		    sizeof(err));
		snprintf(want, sizeof(want), "code-5.bin offset 0x%zx:",
		    bad[i].eoff);
		ATF_CHECK_MSG(rc < 0 && strncmp(err, want, strlen(want)) == 0,
		    "case %zu: expected an error starting '%s', got %d '%s'",
		    i, want, rc, rc ? err : "");
		hwtr_code_list_free(&l);
	}
	ATF_CHECK(hwtr_code_name_ok("code-42.bin", NULL) &&
	    !hwtr_code_name_ok("code-042.bin", NULL) &&
	    !hwtr_code_name_ok("code-4294967296.bin", NULL) &&
	    !hwtr_code_name_ok("code-.bin", NULL) &&
	    !hwtr_code_name_ok("code-1.bin/x", NULL));
}

/*
 * jit/code-PID.bin members: listed with their own kind and read back as
 * written; one with a damaged record makes the reader refuse the archive,
 * naming the member and the offset.
 */
ATF_TC_WITHOUT_HEAD(archive_code_member);
ATF_TC_BODY(archive_code_member, tc)
{
	struct hwtr_capture_meta m;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	const struct hwtr_member_info *mi;
	uint8_t b[128];
	char err[256], *txt;
	void *buf;
	size_t i, len, blen;
	int rc;

	blen = code_file(b);
	memset(&m, 0, sizeof(m));
	m.host = "testhost";
	m.source = "valgrind";
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, "g.hwtrace", &m, NULL, err,
	    sizeof(err)) == 0, "open: %s", err);
	ATF_CHECK(hwtr_aw_add_jit(aw, "code-9.bin", b, blen) == 0);
	ATF_CHECK(hwtr_aw_add_jit(aw, "code-09.bin", b, blen) ==
	    -HWTR_E_INVAL);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	ATF_REQUIRE_MSG(hwtr_ar_open(&ar, "g.hwtrace", NULL) == 0, "expected "
	    "the archive to open, got: %s", hwtr_ar_errmsg(ar));
	ATF_REQUIRE(hwtr_ar_find_member(ar, "jit/code-9.bin", &i) == 0);
	mi = hwtr_ar_member(ar, i);
	ATF_CHECK_MSG(mi->kind == HWTR_M_CODE, "expected kind %d, got %d",
	    HWTR_M_CODE, mi->kind);
	ATF_REQUIRE(hwtr_ar_read_member(ar, i, &buf, &len) == 0);
	ATF_CHECK(len == blen && memcmp(buf, b, len) == 0);
	free(buf);
	/* info counts them: code_file() wrote 2 regions of 3 and 1 bytes. */
	ATF_REQUIRE(hwtr_q_info(ar, "g.hwtrace", HWTR_Q_FMT_TABLE, &txt,
	    &len) == 0);
	ATF_CHECK_MSG(strstr(txt, "\ncode region files: 1\n  jit/code-9.bin: "
	    "2 code regions, 4 bytes\n") != NULL, "info: expected 'code region "
	    "files: 1' then '  jit/code-9.bin: 2 code regions, 4 bytes', got: "
	    "%s", txt);
	free(txt);
	ATF_REQUIRE(hwtr_q_info(ar, "g.hwtrace", HWTR_Q_FMT_JSON, &txt,
	    &len) == 0);
	ATF_CHECK_MSG(strstr(txt, "\"code\":[{\"member\":\"jit/code-9.bin\","
	    "\"regions\":2,\"bytes\":4,") != NULL, "info --json: expected "
	    "code [{member jit/code-9.bin, regions 2, bytes 4}], got: %s", txt);
	free(txt);
	hwtr_ar_close(ar);

	put_le(b + 75, 2, 4);		/* region 2 claims a byte past the end */
	ATF_REQUIRE(hwtr_aw_open(&aw, "b.hwtrace", &m, NULL, err,
	    sizeof(err)) == 0);
	ATF_CHECK(hwtr_aw_add_jit(aw, "code-9.bin", b, blen) == 0);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	rc = hwtr_ar_open(&ar, "b.hwtrace", NULL);
	ATF_CHECK_MSG(rc == -HWTR_E_FORMAT && strstr(hwtr_ar_errmsg(ar),
	    "jit/code-9.bin offset 0x4b:") != NULL, "expected a format error "
	    "naming jit/code-9.bin offset 0x4b, got %d '%s'", rc,
	    hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, node_perf_map_names_hot_function);
	ATF_TP_ADD_TC(tp, node_jitdump_code_decodes_as_x86);
	ATF_TP_ADD_TC(tp, hostile_jitdump_names_offset);
	ATF_TP_ADD_TC(tp, hostile_map_lines);
	ATF_TP_ADD_TC(tp, archive_jit_member);
	ATF_TP_ADD_TC(tp, code_regions_parse);
	ATF_TP_ADD_TC(tp, archive_code_member);
	return (atf_no_error());
}
