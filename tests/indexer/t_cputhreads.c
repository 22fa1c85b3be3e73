/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CPU mode, thread histories against ground truth.  The cpuswitch fixture
 * (3 threads, each calling work() 12 times, work() calling leaf(), leaf()
 * making a system call) is captured with the step source in ground-truth
 * mode: per-thread Intel PT streams, and the exact instruction addresses
 * each thread executed.  The test then makes of it what a recording of
 * whole CPUs is: each thread's stream is cut where its trace is disabled
 * (a system call, where the kernel may switch threads) and the next
 * packet is a PSB+, and the pieces are laid on CPUs by their own TSC
 * times, each on the lowest-numbered CPU free then (another than the
 * thread's last one when there is a choice), with a context switch
 * record (in, out) around each piece.  So threads share CPUs, move
 * between them, and every call of work() and leaf() spans such a point.
 *
 * Indexed, every thread of the per-CPU archive must have as its own
 * history exactly the instructions the tracer saw it execute, in order;
 * its calls of work() and leaf() (12 each, by the fixture's source) must
 * return in it, leaf() inside work(), and calls must span the switches.
 */

#include <atf-c.h>
#include <intel-pt.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_tool.h"
#include "../../indexer/hwtr_ix_sqlite.h"
#include "../../indexer/colstore.h"

#define PROG	HWTR_TEST_PROGS "/cpuswitch"
#define MAXCPU	8

struct piece {
	size_t		stream;
	int32_t		pid, tid;
	uint64_t	off, end;	/* [off, end) of the stream */
	uint64_t	t0, t1;		/* its first and last TSC */
	int		pgd;		/* ends with a TIP.PGD */
	int		cpu;
};

struct tstream {
	uint8_t		*buf;
	size_t		len;
};

static int
piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->t0 != y->t0)
		return (x->t0 < y->t0 ? -1 : 1);
	return (x->stream < y->stream ? -1 : x->stream > y->stream);
}

/* The bytes of stream @s, its chunks one after another. */
static void
read_stream(struct hwtr_ar *ar, size_t s, struct tstream *ts)
{
	size_t c, clen;
	void *cb;

	ts->buf = NULL;
	ts->len = 0;
	for (c = 0; c < hwtr_ar_nchunks(ar, s); c++) {
		ATF_REQUIRE_EQ(hwtr_ar_chunk(ar, s, c)->offset, ts->len);
		ATF_REQUIRE(hwtr_ar_read_chunk(ar, s, c, &cb, &clen) == 0);
		ATF_REQUIRE((ts->buf = realloc(ts->buf, ts->len + clen +
		    1)) != NULL);
		memcpy(ts->buf + ts->len, cb, clen);
		ts->len += clen;
		free(cb);
	}
}

/*
 * Cut stream @s (@ts) at each PSB that follows a TIP.PGD: pieces that a
 * decoder can take up at their start whatever ran before them.
 */
static size_t
cut(size_t s, const struct hwtr_stream_desc *sd, const struct tstream *ts,
    struct piece *pc, size_t max)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	enum pt_packet_type last = ppt_invalid;
	uint64_t at;
	size_t n = 0;
	int rc;

	pt_config_init(&cfg);
	cfg.begin = ts->buf;
	cfg.end = ts->buf + ts->len;
	ATF_REQUIRE((dec = pt_pkt_alloc_decoder(&cfg)) != NULL);
	ATF_REQUIRE(pt_pkt_sync_set(dec, 0) == 0);
	for (;;) {
		ATF_REQUIRE(pt_pkt_get_offset(dec, &at) == 0);
		rc = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (rc == -pte_eos)
			break;
		ATF_REQUIRE_MSG(rc >= 0, "stream %zu offset %ju: %s", s,
		    (uintmax_t)at, pt_errstr(pt_errcode(rc)));
		if (pkt.type == ppt_psb && (at == 0 || last == ppt_tip_pgd)) {
			ATF_REQUIRE(n < max);
			if (n > 0)
				pc[n - 1].end = at;
			memset(&pc[n], 0, sizeof(pc[n]));
			pc[n].stream = s;
			pc[n].pid = sd->pid;
			pc[n].tid = sd->tid;
			pc[n].off = at;
			pc[n].end = ts->len;
			pc[n].cpu = -1;
			n++;
		}
		if (pkt.type == ppt_tsc && n > 0) {
			if (pc[n - 1].t0 == 0)
				pc[n - 1].t0 = pkt.payload.tsc.tsc;
			pc[n - 1].t1 = pkt.payload.tsc.tsc;
		}
		if (n > 0)
			pc[n - 1].pgd = pkt.type == ppt_tip_pgd;
		last = pkt.type;
	}
	pt_pkt_free_decoder(dec);
	return (n);
}

static struct hwtr_sb_rec
sw_rec(uint64_t t, int32_t pid, int32_t tid, int cpu, int out)
{
	struct hwtr_sb_rec r = tool_sb(HWTR_SB_SWITCH, t, pid, tid);

	r.u.sw.cpu = cpu;
	r.u.sw.out = (uint8_t)out;
	return (r);
}

/*
 * Write @in again as @out, a recording of whole CPUs: its per-thread
 * streams cut into pieces laid on CPUs (above).  Returns the number of
 * CPUs used; *@migrated and *@shared say whether a thread ran on two
 * CPUs and whether a CPU ran two threads.  Each piece is switched in at
 * its first TSC and out after its last; @paired: as perf records it,
 * each switch out is followed at once by the switch in of the next
 * owner, the idle task (pid 0, tid 0) between pieces; else nothing says
 * what the CPU did between two pieces (its part runs until the next).
 */
static int
make_cpu_archive(const char *in, const char *out, int paired, int *migrated,
    int *shared)
{
	static struct piece pc[4096];
	struct tstream ts[16];
	struct hwtr_ar *ar = NULL;
	struct hwtr_aw *aw = NULL;
	struct hwtr_stream_desc sd;
	struct hwtr_sb_rec r;
	uint64_t busy[MAXCPU];
	int32_t lastcpu[16], cputid[MAXCPU];
	uint32_t id[MAXCPU];
	char err[512], key[HWTR_IMAGE_KEY_MAX], name[32];
	size_t ns, s, n = 0, i;
	void *buf;
	size_t len;
	int c, ncpu = 0, pick;

	ATF_REQUIRE(hwtr_ar_open(&ar, in, NULL) == 0);
	ns = hwtr_ar_nstreams(ar);
	ATF_REQUIRE(ns >= 4 && ns <= 16);
	for (s = 0; s < ns; s++) {
		ATF_REQUIRE(hwtr_ar_stream(ar, s)->tid >= 0);
		read_stream(ar, s, &ts[s]);
		n += cut(s, hwtr_ar_stream(ar, s), &ts[s], pc + n,
		    sizeof(pc) / sizeof(pc[0]) - n);
		lastcpu[s] = -1;
	}
	qsort(pc, n, sizeof(pc[0]), piece_cmp);
	for (c = 0; c < MAXCPU; c++) {
		busy[c] = 0;
		cputid[c] = -1;
	}
	*migrated = *shared = 0;
	for (i = 0; i < n; i++) {
		ATF_REQUIRE_MSG(pc[i].t0 != 0, "a piece without a TSC");
		ATF_REQUIRE_MSG(pc[i].pgd || pc[i].end ==
		    ts[pc[i].stream].len, "a piece not ending disabled");
		/* The lowest free CPU other than its last, else its last. */
		pick = -1;
		for (c = 0; c < MAXCPU; c++) {
			if (busy[c] >= pc[i].t0)
				continue;
			if (pick < 0)
				pick = c;
			if (c != lastcpu[pc[i].stream]) {
				pick = c;
				break;
			}
		}
		ATF_REQUIRE_MSG(pick >= 0, "no CPU free at %ju",
		    (uintmax_t)pc[i].t0);
		pc[i].cpu = pick;
		busy[pick] = pc[i].t1 + 1;
		if (lastcpu[pc[i].stream] >= 0 &&
		    lastcpu[pc[i].stream] != pick)
			*migrated = 1;
		if (cputid[pick] >= 0 && cputid[pick] != pc[i].tid)
			*shared = 1;
		cputid[pick] = pc[i].tid;
		lastcpu[pc[i].stream] = pick;
		if (pick + 1 > ncpu)
			ncpu = pick + 1;
	}
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, out, hwtr_ar_meta(ar), NULL, err,
	    sizeof(err)) == 0, "%s", err);
	for (c = 0; c < ncpu; c++) {
		sd = *hwtr_ar_stream(ar, 0);
		sd.pid = sd.tid = -1;
		sd.cpu = c;
		snprintf(name, sizeof(name), "cpu %d", c);
		sd.name = name;
		ATF_REQUIRE(hwtr_aw_add_stream(aw, &sd, &id[c]) == 0);
	}
	for (i = 0; i < hwtr_ar_nimages(ar); i++) {
		ATF_REQUIRE(hwtr_ar_read_image(ar, i, &buf, &len) == 0);
		ATF_REQUIRE(hwtr_aw_add_image(aw, hwtr_ar_image(ar, i), buf,
		    len, key) == 0);
		ATF_CHECK_STREQ(key, hwtr_ar_image(ar, i)->key);
		free(buf);
	}
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		const struct hwtr_sb_rec *o = hwtr_ar_sideband_rec(ar, i);

		if (o->type != HWTR_SB_LOST && o->type != HWTR_SB_BUFPOS &&
		    o->type != HWTR_SB_SWITCH)
			ATF_REQUIRE(hwtr_aw_sideband(aw, o) == 0);
	}
	for (i = 0; i < n; i++) {
		if (paired) {
			r = sw_rec(pc[i].t0, 0, 0, pc[i].cpu, 1);
			ATF_REQUIRE(hwtr_aw_sideband(aw, &r) == 0);
		}
		r = sw_rec(pc[i].t0, pc[i].pid, pc[i].tid, pc[i].cpu, 0);
		ATF_REQUIRE(hwtr_aw_sideband(aw, &r) == 0);
		r = sw_rec(pc[i].t1 + 1, pc[i].pid, pc[i].tid, pc[i].cpu, 1);
		ATF_REQUIRE(hwtr_aw_sideband(aw, &r) == 0);
		if (paired) {
			r = sw_rec(pc[i].t1 + 1, 0, 0, pc[i].cpu, 0);
			ATF_REQUIRE(hwtr_aw_sideband(aw, &r) == 0);
		}
		ATF_REQUIRE(hwtr_aw_chunk(aw, id[pc[i].cpu], HWTR_AW_APPEND,
		    ts[pc[i].stream].buf + pc[i].off,
		    (size_t)(pc[i].end - pc[i].off)) == 0);
	}
	if (hwtr_ar_end(ar) != NULL)
		hwtr_aw_set_end(aw, hwtr_ar_end(ar));
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0, "%s", err);
	for (s = 0; s < ns; s++)
		free(ts[s].buf);
	hwtr_ar_close(ar);
	return (ncpu);
}

static void
run(const char *cmd)
{
	int rc = system(cmd);

	ATF_REQUIRE_MSG(rc == 0, "'%s' failed (%d)", cmd, rc);
}

/* The lines @cmd prints (its output in @out, room for @len). */
static int
lines_of(const char *cmd, char *out, size_t len)
{
	FILE *f;
	size_t n;
	int k = 0;

	ATF_REQUIRE((f = popen(cmd, "r")) != NULL);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	ATF_REQUIRE_MSG(pclose(f) == 0, "'%s' failed: %s", cmd, out);
	while (n > 0)
		if (out[--n] == '\n')
			k++;
	return (k);
}

static int64_t
q_int(sqlite3 *db, const char *sql, int64_t a)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	ATF_REQUIRE_MSG(sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (v);
}

/*
 * @sql's count for @thread (thread @tid) is 12, the fixture's number of
 * @what for a worker.
 */
static void
check_twelve(sqlite3 *db, int32_t tid, int64_t thread, const char *what,
    const char *sql)
{
	int64_t n = q_int(db, sql, thread);

	ATF_CHECK_MSG(n == 12, "tid %d: %jd %s, expected 12", tid,
	    (intmax_t)n, what);
}

/* Thread @tid's own history against the tracer's: equal, in order. */
static void
check_thread(sqlite3 *db, struct hwtr_ar *gt, int32_t tid)
{
	sqlite3_stmt *st;
	char mname[64];
	const uint64_t *want;
	void *buf;
	size_t len, n, k = 0, m;
	int64_t thread;

	snprintf(mname, sizeof(mname), "aux/groundtruth/tid-%d.u64", tid);
	ATF_REQUIRE_MSG(hwtr_ar_find_member(gt, mname, &m) == 0, "no %s",
	    mname);
	ATF_REQUIRE(hwtr_ar_read_member(gt, m, &buf, &len) == 0);
	want = buf;
	n = len / 8;
	ATF_REQUIRE(n > 100);
	thread = q_int(db, "SELECT id FROM threads WHERE tid = ?1 AND "
	    "stream IS NULL", tid);
	ATF_REQUIRE_MSG(thread > 0, "tid %d has no thread row of its own",
	    tid);
	ATF_REQUIRE(sqlite3_prepare_v2(db, "SELECT ip FROM exec_insns WHERE "
	    "thread = ?1 ORDER BY insn", -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_int64(st, 1, thread);
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t ip = (uint64_t)sqlite3_column_int64(st, 0);

		if (k < n && ip != want[k]) {
			ATF_CHECK_MSG(0, "tid %d instruction %zu: %#jx in the "
			    "database, %#jx in the ground truth", tid, k,
			    (uintmax_t)ip, (uintmax_t)want[k]);
			break;
		}
		k++;
	}
	sqlite3_finalize(st);
	ATF_CHECK_MSG(k == n, "tid %d: %zu instructions in the database, %zu "
	    "in the ground truth", tid, k, n);
	free(buf);
}

/*
 * Capture cpuswitch, lay it on CPUs (@paired: make_cpu_archive()), index
 * it (@paired: in segments of 64 bytes) and check every thread.
 */
static void
check_cpu_mode(int paired)
{
	struct hwtr_ar *gt = NULL;
	sqlite3 *db;
	char cmd[2048], out[4096], want[64], unk[64];
	int migrated, shared, ncpu;
	size_t s;
	int64_t thread, n;

	if (access(PROG, X_OK) != 0)
		atf_tc_skip("fixture %s is not built", PROG);
	snprintf(cmd, sizeof(cmd), "'%s' capture --source step "
	    "--ground-truth --psb-period 64 -o gt.hwtrace -- '%s' >/dev/null 2>&1",
	    HWTR_TEST_HWTRACE, PROG);
	run(cmd);
	ncpu = make_cpu_archive("gt.hwtrace", "cpu.hwtrace", paired,
	    &migrated, &shared);
	ATF_REQUIRE_MSG(ncpu >= 2 && migrated && shared, "the pieces did not "
	    "make threads share CPUs and move between them (%d CPUs)", ncpu);
	/* Paired: also in segments of 64 bytes (a part over several). */
	snprintf(cmd, sizeof(cmd), "%s'%s' index -q -j 2 -o cpu.db "
	    "cpu.hwtrace", paired ? "HWTRACE_IX_SEGMENT=64 " : "",
	    HWTR_TEST_HWTRACE);
	run(cmd);
	ATF_REQUIRE(sqlite3_open("cpu.db", &db) == SQLITE_OK);
	ATF_REQUIRE(hwtr_ix_sqlite_register(db) == 0);
	ATF_REQUIRE(hwtr_calls_vtab_register(db) == SQLITE_OK);
	ATF_CHECK_EQ_MSG(q_int(db, "SELECT count(*) FROM events WHERE kind = "
	    "'decode-error'", 0), 0, "decode errors");
	ATF_REQUIRE(hwtr_ar_open(&gt, "gt.hwtrace", NULL) == 0);
	for (s = 0; s < hwtr_ar_nstreams(gt); s++) {
		int32_t tid = hwtr_ar_stream(gt, s)->tid;

		check_thread(db, gt, tid);
		thread = q_int(db, "SELECT id FROM threads WHERE tid = ?1 AND "
		    "stream IS NULL", tid);
		if (tid == hwtr_ar_stream(gt, s)->pid)
			continue;
		/* A worker: the fixture's counts. */
		check_twelve(db, tid, thread, "calls of work() that return",
		    "SELECT count(*) FROM calls c JOIN symbols y ON y.id = "
		    "c.symbol WHERE c.thread = ?1 AND y.name = 'work' AND "
		    "c.exit_kind = 'return'");
		check_twelve(db, tid, thread, "calls of leaf() in work() that "
		    "return", "SELECT count(*) FROM calls c JOIN symbols y ON "
		    "y.id = c.symbol JOIN calls p ON p.id = c.parent JOIN "
		    "symbols py ON py.id = p.symbol WHERE c.thread = ?1 AND "
		    "y.name = 'leaf' AND py.name = 'work' AND p.thread = ?1 AND "
		    "c.exit_kind = 'return'");
		/* Calls of work() that span a switch (a part's start). */
		n = q_int(db, "SELECT count(*) FROM calls c JOIN symbols y ON "
		    "y.id = c.symbol WHERE c.thread = ?1 AND y.name = 'work' "
		    "AND EXISTS (SELECT 1 FROM cpu_parts p WHERE p.thread = ?1 "
		    "AND p.first_seq > c.entry_seq AND p.first_seq < "
		    "c.exit_seq)", thread);
		ATF_CHECK_MSG(n >= 6, "tid %d: %jd calls of work() span a "
		    "switch, expected most of the 12", tid, (intmax_t)n);
		n = q_int(db, "SELECT count(DISTINCT cpu) FROM cpu_parts WHERE "
		    "thread = ?1 AND end_seq > first_seq", thread);
		ATF_CHECK_MSG(n >= 1, "tid %d runs on %jd CPUs", tid,
		    (intmax_t)n);
		/* The verbs select it by tid: func lists its 12 calls. */
		snprintf(cmd, sizeof(cmd), "'%s' query cpu.db func work "
		    "--thread tid:%d --format csv", HWTR_TEST_HWTRACE, tid);
		ATF_CHECK_EQ_MSG(lines_of(cmd, out, sizeof(out)), 13,
		    "tid %d: %s", tid, out);
		/*
		 * Asked of the archive with only the end of each CPU's
		 * stream decoded, its last blocks' positions are unknown
		 * ("" in csv) or right, never counted from the window.
		 */
		snprintf(cmd, sizeof(cmd), "HWTRACE_QUERY_TAIL=300 '%s' query "
		    "--db tail.db cpu.hwtrace last -n 1 --thread %jd "
		    "--format csv", HWTR_TEST_HWTRACE, (intmax_t)thread);
		(void)unlink("tail.db");
		(void)unlink("tail.db.tail");
		ATF_CHECK_EQ(lines_of(cmd, out, sizeof(out)), 2);
		snprintf(want, sizeof(want), "\n%jd,%jd,", (intmax_t)thread,
		    (intmax_t)q_int(db, "SELECT blocks - 1 FROM threads WHERE "
		    "id = ?1", thread));
		snprintf(unk, sizeof(unk), "\n%jd,,", (intmax_t)thread);
		ATF_CHECK_MSG(strstr(out, want) != NULL ||
		    strstr(out, unk) != NULL, "tid %d, the end of the archive "
		    "decoded: %s (expected the thread's last position, %s, or "
		    "none)", tid, out, want + 1);
	}
	ATF_CHECK_MSG(q_int(db, "SELECT max(k) FROM (SELECT count(DISTINCT "
	    "cpu) AS k FROM cpu_parts WHERE end_seq > first_seq GROUP BY "
	    "thread)", 0) >= 2, "no thread's history crosses CPUs");
	/* Nothing is left to the CPU streams' own rows. */
	ATF_CHECK_EQ_MSG(q_int(db, "SELECT sum(blocks) FROM threads WHERE "
	    "stream IS NOT NULL", 0), 0, "blocks no thread owns");
	hwtr_ar_close(gt);
	sqlite3_close(db);
}

ATF_TC(ground_truth);
ATF_TC_HEAD(ground_truth, tc)
{
	atf_tc_set_md_var(tc, "descr", "cpuswitch captured per thread with "
	    "its ground truth and laid on CPUs with switch records: each "
	    "thread's own history is exactly the instructions the tracer saw "
	    "it execute; work() and leaf() are called 12 times per worker, "
	    "return in the thread, leaf() in work(), across switches and "
	    "CPUs; func --thread tid:N lists them; last of the archive's "
	    "end alone shows no position counted from the window");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(ground_truth, tc)
{
	check_cpu_mode(0);
}

ATF_TC(ground_truth_paired);
ATF_TC_HEAD(ground_truth_paired, tc)
{
	atf_tc_set_md_var(tc, "descr", "the same with the switch records "
	    "perf writes (each switch out followed at once by the next "
	    "owner's switch in, the idle task, tid 0, between pieces), the "
	    "CPU streams decoded in segments of 64 bytes on 2 jobs");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(ground_truth_paired, tc)
{
	check_cpu_mode(1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, ground_truth);
	ATF_TP_ADD_TC(tp, ground_truth_paired);
	return (atf_no_error());
}
