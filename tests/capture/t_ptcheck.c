/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The ground-truth checker (tests/capture/ptcheck) on archives made here
 * with the archive writer and the PT encoder, over hand-assembled code
 * whose executed instruction sequence is written down by hand: it must
 * accept the true sequence, follow exec and fork by time, and reject a
 * wrong or short ground truth, a missing one and undecodable code, naming
 * the position.
 */

#include <sys/wait.h>

#include <assert.h>
#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_tool.h"

#define PTCHECK	HWTR_TEST_BUILD "/tests/capture/ptcheck"
#define HWTR_NELEM_T(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Code A at 0x400000:
 *   400000 31 c0           xor %eax,%eax
 *   400002 ff c0           inc %eax
 *   400004 83 f8 03        cmp $3,%eax
 *   400007 75 f9           jne 400002
 *   400009 e8 02 00 00 00  call 400010
 *   40000e eb 01           jmp 400011
 *   400010 c3              ret
 *   400011 0f 05           syscall
 *   400013 90              nop
 *   400014 eb fe           jmp 400014
 */
static const uint8_t code_a[] = {
	0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x03, 0x75, 0xf9, 0xe8, 0x02,
	0x00, 0x00, 0x00, 0xeb, 0x01, 0xc3, 0x0f, 0x05, 0x90, 0xeb, 0xfe
};

/* A's run up to and including the syscall. */
static const uint64_t run_a[] = {
	0x400000, 0x400002, 0x400004, 0x400007, 0x400002, 0x400004, 0x400007,
	0x400002, 0x400004, 0x400007, 0x400009, 0x400010, 0x40000e, 0x400011
};

/*
 * Code B at 0x400000 (what A execs):
 *   400000 90 / 400001 90  nop; nop
 *   400002 48 31 c0        xor %rax,%rax
 *   400005 eb 00           jmp 400007
 *   400007 90              nop
 *   400008 0f 05           syscall
 */
static const uint8_t code_b[] = {
	0x90, 0x90, 0x48, 0x31, 0xc0, 0xeb, 0x00, 0x90, 0x0f, 0x05
};

static const uint64_t run_b[] = {
	0x400000, 0x400001, 0x400002, 0x400005, 0x400007, 0x400008
};

struct buf {
	uint8_t	*p;
	size_t	n;
};

static int
out_write(void *arg, const void *p, size_t n)
{
	struct buf *b = arg;

	b->p = realloc(b->p, b->n + n);
	ATF_REQUIRE(b->p != NULL);
	memcpy(b->p + b->n, p, n);
	b->n += n;
	return (0);
}

static struct hwtr_ptenc *
enc_new(struct buf *b)
{
	struct hwtr_ptenc_out out = { out_write, NULL, b };
	struct hwtr_ptenc_opts o;
	struct hwtr_ptenc *enc;

	memset(&o, 0, sizeof(o));
	memset(b, 0, sizeof(*b));
	ATF_REQUIRE(hwtr_ptenc_new(&enc, &o, &out) == 0);
	return (enc);
}

/* Encode A's run from @tsc: the loop, call, ret, jmp, syscall. */
static void
encode_a(struct hwtr_ptenc *enc, uint64_t tsc)
{
	ATF_REQUIRE(hwtr_ptenc_enable(enc, 0x400000, 1, tsc) == 0);
	ATF_REQUIRE(hwtr_ptenc_cond(enc, 1) == 0);
	ATF_REQUIRE(hwtr_ptenc_cond(enc, 1) == 0);
	ATF_REQUIRE(hwtr_ptenc_cond(enc, 0) == 0);
	ATF_REQUIRE(hwtr_ptenc_call(enc, 0x40000e, 0x400010, 0) == 0);
	ATF_REQUIRE(hwtr_ptenc_ret(enc, 0x40000e) == 0);
	ATF_REQUIRE(hwtr_ptenc_disable(enc, 0, tsc + 10) == 0);
}

struct arch {
	struct hwtr_aw	*aw;
	char		key_a[HWTR_IMAGE_KEY_MAX];
	char		key_b[HWTR_IMAGE_KEY_MAX];
};

static void
arch_open(struct arch *a, const char *path)
{
	struct hwtr_capture_meta meta;
	struct hwtr_image_desc d;
	char err[256];

	memset(&meta, 0, sizeof(meta));
	meta.source = "step";
	meta.sideband_origin = "perf_event";
	ATF_REQUIRE_MSG(hwtr_aw_open(&a->aw, path, &meta, NULL, err,
	    sizeof(err)) == 0, "hwtr_aw_open: %s", err);
	memset(&d, 0, sizeof(d));
	d.kind = HWTR_IMG_MEMORY;
	d.path = "code-a";
	ATF_REQUIRE(hwtr_aw_add_image(a->aw, &d, code_a, sizeof(code_a),
	    a->key_a) == 0);
	d.path = "code-b";
	ATF_REQUIRE(hwtr_aw_add_image(a->aw, &d, code_b, sizeof(code_b),
	    a->key_b) == 0);
}

static void
sb(struct arch *a, enum hwtr_sb_type type, uint64_t time, int32_t pid,
    const char *key, size_t len)
{
	struct hwtr_sb_rec r = tool_sb(type, time, pid, pid);

	if (type == HWTR_SB_MMAP) {
		r.u.mmap.addr = 0x400000;
		r.u.mmap.len = len;
		r.u.mmap.prot = 5;
		r.u.mmap.path = key == a->key_a ? "code-a" : "code-b";
		r.u.mmap.image = key;
	} else if (type == HWTR_SB_PROC_START) {
		r.u.proc_start.ppid = (int32_t)len;
	} else if (type == HWTR_SB_EXEC) {
		r.u.exec.path = "code-b";
	}
	ATF_REQUIRE(hwtr_aw_sideband(a->aw, &r) == 0);
}

static void
stream(struct arch *a, int32_t pid, int32_t tid, const struct buf *b)
{
	struct hwtr_stream_desc d;
	uint32_t id;

	memset(&d, 0, sizeof(d));
	d.format = HWTR_TF_INTEL_PT;
	d.pid = pid;
	d.tid = tid;
	d.cpu = -1;
	d.pt.options = HWTR_PT_OPT_TSC | HWTR_PT_OPT_BRANCH | HWTR_PT_OPT_USER;
	ATF_REQUIRE(hwtr_aw_add_stream(a->aw, &d, &id) == 0);
	ATF_REQUIRE(hwtr_aw_chunk(a->aw, id, HWTR_AW_APPEND, b->p, b->n) == 0);
}

static void
truth(struct arch *a, int32_t tid, const uint64_t *ip, size_t n)
{
	char name[64];

	snprintf(name, sizeof(name), "groundtruth/tid-%d.u64", (int)tid);
	ATF_REQUIRE(hwtr_aw_add_aux(a->aw, name, ip, n * sizeof(*ip)) == 0);
}

static void
arch_close(struct arch *a)
{
	char err[256];

	ATF_REQUIRE_MSG(hwtr_aw_close(a->aw, err, sizeof(err)) == 0, "%s",
	    err);
}

/* Run ptcheck on @path; its stdout in @out, its exit status returned. */
static int
run_ptcheck(const char *path, char *out, size_t len)
{
	char cmd[512];
	size_t n;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' -v '%s' 2>&1", PTCHECK, path);
	ATF_REQUIRE((f = popen(cmd, "r")) != NULL);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	st = pclose(f);
	ATF_REQUIRE(WIFEXITED(st));
	fprintf(stderr, "ptcheck %s -> %d:\n%s", path, WEXITSTATUS(st), out);
	return (WEXITSTATUS(st));
}

/* One process running code A; ground truth @gt[0..@n). */
static void
make_simple(const char *path, const uint64_t *gt, size_t n, int with_mmap)
{
	struct hwtr_ptenc *enc;
	struct arch a;
	struct buf b;

	enc = enc_new(&b);
	encode_a(enc, 100);
	ATF_REQUIRE(hwtr_ptenc_enable(enc, 0x400013, 1, 120) == 0);
	ATF_REQUIRE(hwtr_ptenc_disable(enc, 0x400014, 130) == 0);
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);
	arch_open(&a, path);
	sb(&a, HWTR_SB_PROC_START, 1, 100, NULL, 1);
	if (with_mmap)
		sb(&a, HWTR_SB_MMAP, 5, 100, a.key_a, sizeof(code_a));
	stream(&a, 100, 100, &b);
	truth(&a, 100, gt, n);
	arch_close(&a);
	free(b.p);
}

/*
 * One case on make_simple's archive: its ground truth is A's run, the
 * syscall, then the nop at 0x400013, less its last @cut entries, with
 * entry @at replaced by @ip when @ip is not 0.
 */
struct simple_case {
	const char	*path;
	int		 with_mmap;
	size_t		 cut;
	size_t		 at;
	uint64_t	 ip;
	int		 rc;		/* ptcheck's expected exit status */
	const char	*want;		/* and what it says */
};

static void
simple_says(const struct simple_case *c)
{
	uint64_t gt[HWTR_NELEM_T(run_a) + 1];
	size_t n = HWTR_NELEM_T(gt);
	char out[4096];

	memcpy(gt, run_a, sizeof(run_a));
	gt[n - 1] = 0x400013;
	assert(c->cut <= n && c->at < n);
	if (c->ip != 0)
		gt[c->at] = c->ip;
	make_simple(c->path, gt, n - c->cut, c->with_mmap);
	ATF_CHECK_EQ(run_ptcheck(c->path, out, sizeof(out)), c->rc);
	ATF_CHECK_MSG(strstr(out, c->want) != NULL, "expected '%s', got '%s'",
	    c->want, out);
}

ATF_TC_WITHOUT_HEAD(true_sequence_matches);
ATF_TC_BODY(true_sequence_matches, tc)
{
	simple_says(&(struct simple_case){ .path = "ok.hwtrace",
	    .with_mmap = 1, .rc = 0,
	    .want = "tid 100: 15 instructions match" });
}

ATF_TC_WITHOUT_HEAD(wrong_address_named);
ATF_TC_BODY(wrong_address_named, tc)
{
	/* The tracer "saw" the loop exit early. */
	simple_says(&(struct simple_case){ .path = "wrong.hwtrace",
	    .with_mmap = 1, .at = 5, .ip = 0x400009, .rc = 1,
	    .want = "tid 100: mismatch at instruction 5: decoded 0x400004, "
	    "ground truth 0x400009" });
}

ATF_TC_WITHOUT_HEAD(short_ground_truth);
ATF_TC_BODY(short_ground_truth, tc)
{
	simple_says(&(struct simple_case){ .path = "short.hwtrace",
	    .with_mmap = 1, .cut = 2, .rc = 1,
	    .want = "tid 100: decoded 15 instructions, ground truth has 13: "
	    "first difference at instruction 13" });
}

ATF_TC_WITHOUT_HEAD(unmapped_code_is_a_decode_error);
ATF_TC_BODY(unmapped_code_is_a_decode_error, tc)
{
	simple_says(&(struct simple_case){ .path = "nomap.hwtrace",
	    .with_mmap = 0, .rc = 1,
	    .want = "tid 100: decode error at instruction 0" });
}

ATF_TC_WITHOUT_HEAD(missing_ground_truth);
ATF_TC_BODY(missing_ground_truth, tc)
{
	struct hwtr_ptenc *enc;
	char out[4096];
	struct arch a;
	struct buf b;

	enc = enc_new(&b);
	encode_a(enc, 100);
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);
	arch_open(&a, "nogt.hwtrace");
	sb(&a, HWTR_SB_MMAP, 5, 100, a.key_a, sizeof(code_a));
	stream(&a, 100, 100, &b);
	truth(&a, 555, run_a, HWTR_NELEM_T(run_a));
	arch_close(&a);
	free(b.p);
	ATF_CHECK_EQ(run_ptcheck("nogt.hwtrace", out, sizeof(out)), 1);
	ATF_CHECK_MSG(strstr(out, "tid 100: no ground truth") != NULL,
	    "expected 'no ground truth' for tid 100, got '%s'", out);
	ATF_CHECK_MSG(strstr(out, "tid-555.u64: ground truth without an Intel "
	    "PT stream") != NULL, "expected the orphan ground truth named, "
	    "got '%s'", out);
}

/*
 * pid 100 runs A, forks pid 101 (time 50), execs B (time 200); pid 101
 * runs A after the exec (time 400): the checker must give each the code
 * mapped for it at that time.
 */
ATF_TC_WITHOUT_HEAD(exec_and_fork_followed_by_time);
ATF_TC_BODY(exec_and_fork_followed_by_time, tc)
{
	struct hwtr_ptenc *enc;
	struct buf b1, b2;
	uint64_t gt[64];
	char out[4096];
	struct arch a;
	size_t n;

	enc = enc_new(&b1);
	encode_a(enc, 100);		/* ends in execve */
	ATF_REQUIRE(hwtr_ptenc_enable(enc, 0x400000, 1, 300) == 0);
	ATF_REQUIRE(hwtr_ptenc_disable(enc, 0, 310) == 0);	/* B's syscall */
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);
	enc = enc_new(&b2);
	encode_a(enc, 400);
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);

	arch_open(&a, "exec.hwtrace");
	sb(&a, HWTR_SB_PROC_START, 1, 100, NULL, 1);
	sb(&a, HWTR_SB_MMAP, 5, 100, a.key_a, sizeof(code_a));
	sb(&a, HWTR_SB_PROC_START, 50, 101, NULL, 100);
	sb(&a, HWTR_SB_EXEC, 200, 100, NULL, 0);
	sb(&a, HWTR_SB_MMAP, 201, 100, a.key_b, sizeof(code_b));
	stream(&a, 100, 100, &b1);
	stream(&a, 101, 101, &b2);
	memcpy(gt, run_a, sizeof(run_a));
	memcpy(gt + HWTR_NELEM_T(run_a), run_b, sizeof(run_b));
	n = HWTR_NELEM_T(run_a) + HWTR_NELEM_T(run_b);
	truth(&a, 100, gt, n);
	truth(&a, 101, run_a, HWTR_NELEM_T(run_a));
	arch_close(&a);
	free(b1.p);
	free(b2.p);
	ATF_CHECK_EQ(run_ptcheck("exec.hwtrace", out, sizeof(out)), 0);
	ATF_CHECK_MSG(strstr(out, "tid 100: 20 instructions match") != NULL,
	    "expected 'tid 100: 20 instructions match', got '%s'", out);
	ATF_CHECK_MSG(strstr(out, "tid 101: 14 instructions match") != NULL,
	    "expected 'tid 101: 14 instructions match', got '%s'", out);
}

ATF_TC_WITHOUT_HEAD(usage_errors);
ATF_TC_BODY(usage_errors, tc)
{
	char out[4096];

	ATF_CHECK_EQ(run_ptcheck("/nonexistent/x.hwtrace", out, sizeof(out)),
	    1);
	ATF_CHECK_MSG(strstr(out, "ptcheck: cannot open '/nonexistent/"
	    "x.hwtrace'") != NULL, "got '%s'", out);
	ATF_CHECK_EQ(WEXITSTATUS(system("'" PTCHECK "' 2>/dev/null")), 2);
	ATF_CHECK_EQ(WEXITSTATUS(system("'" PTCHECK "' -x a 2>/dev/null")), 2);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, true_sequence_matches);
	ATF_TP_ADD_TC(tp, wrong_address_named);
	ATF_TP_ADD_TC(tp, short_ground_truth);
	ATF_TP_ADD_TC(tp, unmapped_code_is_a_decode_error);
	ATF_TP_ADD_TC(tp, missing_ground_truth);
	ATF_TP_ADD_TC(tp, exec_and_fork_followed_by_time);
	ATF_TP_ADD_TC(tp, usage_errors);
	return (atf_no_error());
}
