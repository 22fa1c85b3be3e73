/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace info prints every field an archive can carry.  No importer fills
 * them all (command line, exit signal, loss, CoreSight registers, address
 * filters), so this writes such an archive with the writer API and checks
 * the lines "hwtrace info" prints for it, text and JSON.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_tool.h"

#define ARCHIVE	"fields.hwtrace"

static void
write_archive(void)
{
	static const char *const argv[] = { "./prog", "a b", "--x" };
	static const char *const caveats[] = { "first caveat", "second" };
	static const struct hwtr_reg regs[] = {
		{ "TRCCONFIGR", 0x1 }, { "TRCTRACEIDR", 0x10 }
	};
	static const struct hwtr_cs_source src = {
		.protocol = HWTR_TF_ETMV4, .trace_id = 0x10,
		.core = "Cortex-A57", .regs = regs, .nregs = 2
	};
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc sd;
	struct hwtr_capture_end e;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw;
	char err[256], key[HWTR_IMAGE_KEY_MAX];
	uint8_t buf[1000];
	uint32_t id;

	memset(&m, 0, sizeof(m));
	m.host = "buildhost";
	m.source = "step";
	m.source_version = "1.2";
	m.sideband_origin = "perf_event";
	m.caveats = caveats;
	m.ncaveats = 2;
	m.cpu.vendor = HWTR_CPU_INTEL;
	m.cpu.family = 6;
	m.cpu.model = 85;
	m.cpu.stepping = 4;
	strcpy(m.cpu.brand, "Test CPU @ 2.00GHz");
	m.argv = argv;
	m.argc = 3;
	/* 1700000000 s after the Epoch is 2023-11-14 22:13:20 UTC. */
	m.start_ns = 1700000000123456789LL;
	m.tconv.valid = 1;
	m.tconv.tsc_zero = 1000;
	m.tconv.ns_zero = 1700000000000000000LL;
	m.tconv.mult = 1u << 31;
	m.tconv.shift = 32;
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, ARCHIVE, &m, NULL, err,
	    sizeof(err)) == 0, "hwtr_aw_open: %s", err);

	tool_pt_stream(&sd, 42, 43, 200, 20, HWTR_PT_OPT_TSC |
	    HWTR_PT_OPT_BRANCH | HWTR_PT_OPT_USER);
	sd.name = "tid 43";
	sd.pt.cyc_thresh = 1;
	sd.pt.psb_freq = 2;
	tool_pt_filter(&sd, 0x401000, 0x402000);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &sd, &id), 0);
	memset(buf, 0x55, sizeof(buf));
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, buf, 600), 0);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, buf, 400), 0);

	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_CORESIGHT;
	sd.pid = -1;
	sd.tid = -1;
	sd.cpu = 2;
	sd.name = "etr";
	sd.cs.frame = HWTR_CS_FRAME_CORESIGHT;
	sd.cs.sources = &src;
	sd.cs.nsources = 1;
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &sd, &id), 0);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, buf, 16), 0);

	memset(buf, 0x90, sizeof(buf));
	{
		struct hwtr_image_desc img;

		memset(&img, 0, sizeof(img));
		img.path = "[vdso]";
		img.kind = HWTR_IMG_MEMORY;
		ATF_REQUIRE_EQ(hwtr_aw_add_image(aw, &img, buf, 64, key), 0);
	}

	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_START;
	r.pid = r.tid = 42;
	r.u.proc_start.ppid = 1;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_MMAP;
	r.time = 5;
	r.pid = 42;
	r.tid = 43;
	r.u.mmap.addr = 0x7fff0000;
	r.u.mmap.len = 64;
	r.u.mmap.prot = 0x5;
	r.u.mmap.path = "[vdso]";
	r.u.mmap.image = key;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_LOST;
	r.pid = r.tid = -1;
	r.u.lost.stream = 0;
	r.u.lost.reason = HWTR_LOST_OVERFLOW;
	r.u.lost.bytes = 4096;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_EXIT;
	r.pid = r.tid = 42;
	r.u.exit.kind = HWTR_EXIT_SIGNAL;
	r.u.exit.value = 11;
	ATF_REQUIRE_EQ(hwtr_aw_sideband(aw, &r), 0);

	memset(&e, 0, sizeof(e));
	e.end_ns = 1700000001000000000LL;
	e.exit_kind = HWTR_EXIT_SIGNAL;
	e.exit_value = 11;
	e.lost_bytes = 4096;
	e.lost_records = 3;
	hwtr_aw_set_end(aw, &e);
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0,
	    "hwtr_aw_close: %s", err);
}

/* Run "hwtrace @args" and return its stdout (malloc'd); fail unless exit 0. */
static char *
run(const char *args)
{
	char cmd[512], *out = NULL;
	size_t cap = 0, len = 0, n;
	FILE *fp;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s", HWTR_TEST_HWTRACE, args);
	ATF_REQUIRE((fp = popen(cmd, "r")) != NULL);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = 2 * cap + 8192;
			ATF_REQUIRE((out = realloc(out, cap)) != NULL);
		}
		if ((n = fread(out + len, 1, 4096, fp)) == 0)
			break;
		len += n;
	}
	out[len] = '\0';
	st = pclose(fp);
	ATF_REQUIRE_MSG(st == 0, "'%s' exited with status %d", cmd, st);
	return (out);
}

static void
expect_line(const char *out, const char *line)
{
	const char *p = out;
	size_t n = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == out || p[-1] == '\n') &&
		    (p[n] == '\n' || p[n] == '\0'))
			return;
		p++;
	}
	atf_tc_fail("expected the line '%s'; got:\n%s", line, out);
}

ATF_TC_WITHOUT_HEAD(text_prints_every_field);
ATF_TC_BODY(text_prints_every_field, tc)
{
	char *out;

	write_archive();
	out = run("info " ARCHIVE);
	expect_line(out, "host: buildhost");
	expect_line(out, "source: step 1.2");
	expect_line(out, "cpu: intel family 6 model 85 stepping 4 "
	    "(Test CPU @ 2.00GHz)");
	expect_line(out, "command: ./prog a b --x");
	expect_line(out, "start: 2023-11-14T22:13:20.123456789Z");
	expect_line(out, "time conversion: tsc-zero 1000, ns-zero "
	    "1700000000000000000, mult 2147483648, shift 32");
	expect_line(out, "sideband origin: perf_event");
	expect_line(out, "caveats: 2");
	expect_line(out, "  first caveat");
	expect_line(out, "  second");
	expect_line(out, "streams: 2");
	expect_line(out, "  stream 0 'tid 43': intel-pt, pid 42, tid 43, "
	    "cpu -1, 2 chunks, 1000 bytes");
	expect_line(out, "    pt: cpuid-0x15.eax 2, cpuid-0x15.ebx 200, "
	    "nom-freq 20, mtc-freq 3, cyc-thresh 1, psb-freq 2, options 0xc1");
	expect_line(out, "    pt filter 0: cfg 1, 0x401000-0x402000");
	expect_line(out, "  stream 1 'etr': coresight, pid -1, tid -1, cpu 2, "
	    "1 chunk, 16 bytes");
	expect_line(out, "    coresight: frame coresight, 1 source");
	expect_line(out, "    source 0: etmv4, trace id 0x10, core Cortex-A57");
	expect_line(out, "      TRCCONFIGR = 0x1");
	expect_line(out, "      TRCTRACEIDR = 0x10");
	expect_line(out, "images: 1");
	expect_line(out, "mappings: 1");
	expect_line(out, "sideband: 4 records");
	expect_line(out, "  proc-start: 1");
	expect_line(out, "  proc-exit: 1");
	expect_line(out, "  lost: 1");
	expect_line(out, "lost: 4096 trace bytes, 3 sideband records");
	expect_line(out, "end: 2023-11-14T22:13:21.000000000Z");
	expect_line(out, "exit: signal 11");
	expect_line(out, "warnings: 0");
	free(out);
}

ATF_TC_WITHOUT_HEAD(json_carries_every_field);
ATF_TC_BODY(json_carries_every_field, tc)
{
	char *out;

	write_archive();
	out = run("info --json " ARCHIVE);
	/* Spot checks; t_info.sh parses the whole object with python3. */
	ATF_CHECK_MSG(strstr(out, "\"argv\":[\"./prog\",\"a b\",\"--x\"]") !=
	    NULL, "argv: %s", out);
	ATF_CHECK_MSG(strstr(out, "\"start_ns\":1700000000123456789") != NULL,
	    "start_ns: %s", out);
	ATF_CHECK_MSG(strstr(out, "\"filters\":[{\"cfg\":1,\"a\":4198400,"
	    "\"b\":4202496}]") != NULL, "filters: %s", out);
	ATF_CHECK_MSG(strstr(out, "\"regs\":{\"TRCCONFIGR\":1,"
	    "\"TRCTRACEIDR\":16}") != NULL, "regs: %s", out);
	ATF_CHECK_MSG(strstr(out, "\"exit\":{\"kind\":\"signaled\","
	    "\"value\":11,\"end_ns\":1700000001000000000}") != NULL,
	    "exit: %s", out);
	ATF_CHECK_MSG(strstr(out, "\"lost\":{\"bytes\":4096,\"records\":3}") !=
	    NULL, "lost: %s", out);
	free(out);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, text_prints_every_field);
	ATF_TP_ADD_TC(tp, json_carries_every_field);
	return (atf_no_error());
}
