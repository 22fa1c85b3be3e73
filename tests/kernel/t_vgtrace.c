/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The Valgrind source end to end below the capture session: run a program
 * under the hwtrace Valgrind tool in ground-truth mode, convert its event
 * files to PT with the shared encoder, decode every thread's PT with
 * libipt's instruction flow decoder (the reference) over the code bytes
 * the tool saw, and require exactly the instruction sequence Valgrind
 * executed for that thread (the tool's ground truth), with no decode
 * error.  A mismatch names the thread and the first diverging position.
 */

#include <atf-c.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_test.h"
#include "ptdec.h"
#include "../../kernel/hwtr_vgevents.h"
#include "../../kernel/vgconv.h"

#define VG_LIB	HWTR_TEST_BUILD "/valgrind-lib"

struct u64v {
	uint64_t	*v;
	size_t		n, cap;
};

static void
u64v_push(struct u64v *a, const uint64_t *v, size_t n)
{
	if (a->n + n > a->cap) {
		a->cap = (a->n + n) * 2 + 1024;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		ATF_REQUIRE(a->v != NULL);
	}
	memcpy(a->v + a->n, v, n * sizeof(*v));
	a->n += n;
}

struct bytev {
	uint8_t		*b;
	size_t		n, cap;
};

struct code {			/* one instruction's bytes */
	uint64_t	addr;
	int32_t		pid;		/* pid << 8 | image generation */
	uint8_t		len;
	uint8_t		bytes[15];
};

#define MAX_SEG	8

/* PT of one thread, one segment per process image (exec starts one). */
struct tthr {
	struct u64v	walk;
	int32_t		pid, tid;
	struct hwtr_ptenc *enc;
	struct bytev	seg[MAX_SEG];
	int32_t		segkey[MAX_SEG];
	int		nseg;
	struct u64v	gt;
	uint64_t	ninsn;
};

struct proc {
	int32_t		pid;
	int		gen;		/* exec count */
	int32_t		parent;		/* code key of the parent at fork */
};

struct ctx {
	struct proc	proc[256];
	size_t		nproc;
	struct tthr	*thr[256];
	size_t		nthr;
	struct code	*code;		/* open addressing */
	size_t		ncode, capcode;
	int32_t		dec_key;
};

static struct proc *
proc_find(struct ctx *c, int32_t pid)
{
	size_t i;

	for (i = 0; i < c->nproc; i++)
		if (c->proc[i].pid == pid)
			return (&c->proc[i]);
	return (NULL);
}

static int32_t
code_key(struct ctx *c, int32_t pid)
{
	struct proc *p = proc_find(c, pid);

	return (pid << 8 | (p != NULL ? p->gen : 0));
}

static int
cb_proc_start(void *arg, int32_t pid, int32_t ppid, int exec,
    const char *path, uint64_t time)
{
	struct ctx *c = arg;
	struct proc *p;
	struct tthr *t;
	size_t i;

	(void)path;
	(void)time;
	if ((p = proc_find(c, pid)) == NULL) {
		ATF_REQUIRE(c->nproc < 256);
		p = &c->proc[c->nproc++];
		p->pid = pid;
		p->gen = 0;
		p->parent = proc_find(c, ppid) != NULL ? code_key(c, ppid) : 0;
	} else if (exec) {
		p->gen++;
		/* The threads of the process go on in a new segment. */
		for (i = 0; i < c->nthr; i++) {
			t = c->thr[i];
			if (t->pid != pid)
				continue;
			ATF_REQUIRE(hwtr_ptenc_flush(t->enc) >= 0);
			ATF_REQUIRE(t->nseg < MAX_SEG);
			t->segkey[t->nseg++] = code_key(c, pid);
			hwtr_ptenc_want_psb(t->enc);
		}
	}
	return (0);
}

static int
pt_write(void *arg, const void *buf, size_t len)
{
	struct tthr *t = arg;
	struct bytev *b = &t->seg[t->nseg - 1];

	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2 + 4096;
		if ((b->b = realloc(b->b, b->cap)) == NULL)
			return (-HWTR_E_NOMEM);
	}
	memcpy(b->b + b->n, buf, len);
	b->n += len;
	return (0);
}

static size_t
code_slot(uint64_t addr, int32_t pid, size_t cap)
{
	return ((size_t)(((addr ^ (uint64_t)pid << 48) *
	    0x9e3779b97f4a7c15ull) >> 17) & (cap - 1));
}

static struct code *
code_find(struct ctx *c, int32_t pid, uint64_t addr)
{
	size_t i;

	if (c->capcode == 0)
		return (NULL);
	for (i = code_slot(addr, pid, c->capcode);;
	    i = (i + 1) & (c->capcode - 1)) {
		if (c->code[i].len == 0)
			return (NULL);
		if (c->code[i].addr == addr && c->code[i].pid == pid)
			return (&c->code[i]);
	}
}

static int
cb_code(void *arg, int32_t pid, uint64_t addr, const uint8_t *bytes,
    size_t len)
{
	struct ctx *c = arg;
	struct code *old, *e;
	size_t i, j, ocap;

	if (len == 0 || len > 15)
		return (0);
	if (2 * (c->ncode + 1) > c->capcode) {
		old = c->code;
		ocap = c->capcode;
		c->capcode = ocap ? 2 * ocap : 65536;
		c->code = calloc(c->capcode, sizeof(*c->code));
		ATF_REQUIRE(c->code != NULL);
		for (j = 0; j < ocap; j++) {
			if (old[j].len == 0)
				continue;
			for (i = code_slot(old[j].addr, old[j].pid,
			    c->capcode); c->code[i].len != 0;
			    i = (i + 1) & (c->capcode - 1))
				;
			c->code[i] = old[j];
		}
		free(old);
	}
	pid = code_key(c, pid);
	if ((e = code_find(c, pid, addr)) == NULL) {
		for (i = code_slot(addr, pid, c->capcode); c->code[i].len != 0;
		    i = (i + 1) & (c->capcode - 1))
			;
		e = &c->code[i];
		c->ncode++;
	}
	e->addr = addr;
	e->pid = pid;
	e->len = (uint8_t)len;
	memcpy(e->bytes, bytes, len);
	return (0);
}

static int
read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
    void *arg)
{
	struct ctx *c = arg;
	struct code *e;
	struct proc *p;
	size_t n = 0;
	int32_t key = c->dec_key;

	(void)asid;
	/* A fork child runs what its parent had translated. */
	while (code_find(c, key, ip) == NULL && (key & 0xff) == 0 &&
	    (p = proc_find(c, key >> 8)) != NULL && p->parent != 0)
		key = p->parent;
	/* Contiguous instructions, as far as libipt asks. */
	while (n < size && (e = code_find(c, key, ip + n)) != NULL) {
		size_t k = e->len < size - n ? e->len : size - n;

		memcpy(buf + n, e->bytes, k);
		n += k;
	}
	return (n > 0 ? (int)n : -pte_nomap);
}

static int
cb_thread_start(void *arg, int32_t pid, int32_t tid, int32_t ptid,
    uint64_t time, struct hwtr_ptenc ***encpp, void **tokp)
{
	struct ctx *c = arg;
	struct tthr *t;
	struct hwtr_ptenc_out out;

	(void)ptid;
	(void)time;
	ATF_REQUIRE(c->nthr < 256);
	t = calloc(1, sizeof(*t));
	ATF_REQUIRE(t != NULL);
	t->pid = pid;
	t->tid = tid;
	memset(&out, 0, sizeof(out));
	out.write = pt_write;
	out.arg = t;
	t->nseg = 1;
	t->segkey[0] = code_key(c, pid);
	ATF_REQUIRE(hwtr_ptenc_new(&t->enc, NULL, &out) == 0);
	c->thr[c->nthr++] = t;
	*encpp = &t->enc;
	*tokp = t;
	return (0);
}

static int
cb_thread_exit(void *arg, void *tok, uint64_t ninsn, uint64_t time)
{
	struct tthr *t = tok;

	(void)arg;
	(void)time;
	t->ninsn += ninsn;
	return (0);
}

static int
cb_gt(void *arg, void *tok, const uint64_t *ip, size_t n)
{
	(void)arg;
	u64v_push(&((struct tthr *)tok)->gt, ip, n);
	return (0);
}

static int
cb_walked(void *arg, void *tok, const uint64_t *ip, size_t n)
{
	(void)arg;
	u64v_push(&((struct tthr *)tok)->walk, ip, n);
	return (0);
}

/* Asks the converter to take every superblock by the slow path. */
static int
cb_nowalk(void *arg, void *tok, const uint64_t *ip, size_t n)
{
	(void)arg;
	(void)tok;
	(void)ip;
	(void)n;
	return (0);
}

static int
evt_cmp(const void *a, const void *b)
{
	int pa, sa, pb, sb;

	sscanf(*(char *const *)a, "vg.%d.%d", &pa, &sa);
	sscanf(*(char *const *)b, "vg.%d.%d", &pb, &sb);
	if (pa != pb)
		return (pa < pb ? -1 : 1);
	return (sa < sb ? -1 : sa > sb);
}

/* Run @argv under the tool into ./evt; returns the wait status. */
static int
run_tool(char *const argv[])
{
	char *args[64];
	size_t n = 0, i;
	pid_t pid;
	int st;

	ATF_REQUIRE(mkdir("evt", 0700) == 0 || errno == EEXIST);
	args[n++] = "valgrind.bin";
	args[n++] = "--tool=hwtrace";
	args[n++] = "-q";
	args[n++] = "--out-dir=evt";
	args[n++] = "--ground-truth=yes";
	/* Streams: this test reads the files once the tool is done. */
	args[n++] = "--ring=no";
	args[n++] = "--trace-children=yes";
	args[n++] = "--run-libc-freeres=no";
	args[n++] = "--run-cxx-freeres=no";
	for (i = 0; argv[i] != NULL && n < 63; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		setenv("VALGRIND_LIB", VG_LIB, 1);
		execvp(args[0], args);
		_exit(127);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	return (st);
}

/*
 * Convert the event files in ./evt into @c's threads; @slow: with a
 * walked callback, which keeps the converter off its fast path.
 */
static void
convert(struct ctx *c, int slow)
{
	struct vgconv_cb cb = {
		.arg = c, .thread_start = cb_thread_start,
		.thread_exit = cb_thread_exit, .groundtruth = cb_gt,
		.code = cb_code, .proc_start = cb_proc_start
	};
	struct vgconv *cv;
	struct dirent *de;
	char *names[256], path[512];
	size_t nn = 0, i;
	DIR *d;
	FILE *fp;
	uint8_t *buf;
	long len, used;

	if (getenv("HWTR_VGDEBUG") != NULL)
		cb.walked = cb_walked;
	else if (slow)
		cb.walked = cb_nowalk;
	ATF_REQUIRE(vgconv_new(&cv, &cb, NULL) == 0);
	ATF_REQUIRE((d = opendir("evt")) != NULL);
	while ((de = readdir(d)) != NULL && nn < 256)
		if (strncmp(de->d_name, "vg.", 3) == 0)
			names[nn++] = strdup(de->d_name);
	closedir(d);
	ATF_REQUIRE_MSG(nn > 0, "the tool wrote no event file");
	qsort(names, nn, sizeof(names[0]), evt_cmp);
	{
		struct vgconv_file *fs[256];
		uint8_t *bufs[256];
		long lens[256], offs[256];
		int done[256], progress = 1, left = (int)nn;

		for (i = 0; i < nn; i++) {
			snprintf(path, sizeof(path), "evt/%s", names[i]);
			ATF_REQUIRE((fp = fopen(path, "rb")) != NULL);
			fseek(fp, 0, SEEK_END);
			len = ftell(fp);
			rewind(fp);
			buf = malloc(len > 0 ? (size_t)len : 1);
			ATF_REQUIRE(buf != NULL);
			ATF_REQUIRE(fread(buf, 1, (size_t)len, fp) ==
			    (size_t)len);
			fclose(fp);
			ATF_REQUIRE(vgconv_file_new(cv, names[i], &fs[i]) == 0);
			bufs[i] = buf;
			lens[i] = len;
			offs[i] = 0;
			done[i] = 0;
		}
		/* Fork children wait for their parent's file. */
		while (left > 0 && progress) {
			progress = 0;
			for (i = 0; i < nn; i++) {
				if (done[i])
					continue;
				used = vgconv_feed(fs[i], bufs[i] + offs[i],
				    (size_t)(lens[i] - offs[i]));
				ATF_REQUIRE_MSG(used >= 0, "%s: %s", names[i],
				    vgconv_errmsg(cv));
				offs[i] += used;
				if (vgconv_file_waiting(fs[i]))
					continue;
				ATF_REQUIRE_MSG(vgconv_file_end(fs[i],
				    (size_t)(lens[i] - offs[i])) >= 0, "%s: %s",
				    names[i], vgconv_errmsg(cv));
				free(bufs[i]);
				done[i] = 1;
				left--;
				progress = 1;
			}
		}
		ATF_REQUIRE_MSG(left == 0, "%d event files of fork children "
		    "without their parent's fork record", left);
		for (i = 0; i < nn; i++)
			free(names[i]);
	}
	ATF_REQUIRE(vgconv_finish(cv, 0) >= 0);
	{
		struct vgconv_stats st;

		vgconv_stats(cv, &st);
		ATF_CHECK_EQ_MSG(st.desyncs, 0, "the converter lost a thread "
		    "%" PRIu64 " times", st.desyncs);
	}
	vgconv_free(cv);
}

/* Decode every thread and compare with the ground truth. */
static void
check(struct ctx *c)
{
	struct ptdec_result r;
	struct tthr *t;
	size_t i, k, nthr_checked = 0;

	for (i = 0; i < c->nthr; i++) {
		t = c->thr[i];
		{
			struct ptdec_result rs;
			int sgi;

			memset(&r, 0, sizeof(r));
			for (sgi = 0; sgi < t->nseg; sgi++) {
				c->dec_key = t->segkey[sgi];
				ATF_REQUIRE(ptdec_run(t->seg[sgi].b,
				    t->seg[sgi].n, read_mem, c, &rs) == 0);
				if (rs.nerrors > 0 && r.nerrors == 0) {
					r.nerrors = rs.nerrors;
					r.first_error = rs.first_error;
					r.first_error_offset =
					    rs.first_error_offset;
					r.first_error_index = r.n +
					    rs.first_error_index;
				}
				for (k = 0; k < rs.n; k++)
					ATF_REQUIRE(ptdec_push(&r,
					    rs.ip[k]) == 0);
				free(rs.ip);
				free(rs.mode);
			}
		}
		for (k = 0; k < r.n && k < t->gt.n; k++)
			if (r.ip[k] != t->gt.v[k])
				break;
		if (r.nerrors > 0)
			atf_tc_fail_nonfatal("pid %d tid %d: libipt: %s at PT "
			    "offset 0x%" PRIx64 " after %zu instructions "
			    "(ground truth has %zu)", t->pid, t->tid,
			    pt_errstr(pt_errcode(r.first_error)),
			    r.first_error_offset, r.first_error_index,
			    t->gt.n);
		if (getenv("HWTR_VGDEBUG") != NULL) {
			size_t w;

			for (w = 0; w < t->walk.n && w < t->gt.n; w++)
				if (t->walk.v[w] != t->gt.v[w])
					break;
			printf("walk diverges at %zu of %zu/%zu\n", w,
			    t->walk.n, t->gt.n);
			for (w = (k > 5 ? k - 5 : 0); w < k + 5 &&
			    w < t->gt.n && w < r.n && w < t->walk.n; w++)
				printf("%zu gt %" PRIx64 " dec %" PRIx64
				    " walk %" PRIx64 "\n", w, t->gt.v[w],
				    r.ip[w], t->walk.v[w]);
		}
		if (k < r.n || k < t->gt.n)
			atf_tc_fail_nonfatal("pid %d tid %d: instruction %zu: "
			    "ground truth 0x%" PRIx64 ", decoded 0x%" PRIx64
			    " (%zu decoded, %zu in ground truth)", t->pid,
			    t->tid, k, k < t->gt.n ? t->gt.v[k] : 0,
			    k < r.n ? r.ip[k] : 0, r.n, t->gt.n);
		ATF_CHECK_MSG(t->gt.n > 0, "pid %d tid %d: empty ground truth",
		    t->pid, t->tid);
		nthr_checked++;
		free(r.ip);
		free(r.mode);
	}
	ATF_REQUIRE_MSG(nthr_checked > 0, "no thread was traced");
}

/* Free what convert() collected for the threads and the code table. */
static void
ctx_free(struct ctx *c)
{
	struct tthr *t;
	size_t i;
	int k;

	for (i = 0; i < c->nthr; i++) {
		t = c->thr[i];
		hwtr_ptenc_free(t->enc);
		for (k = 0; k < MAX_SEG; k++)
			free(t->seg[k].b);
		free(t->walk.v);
		free(t->gt.v);
		free(t);
	}
	free(c->code);
	memset(c, 0, sizeof(*c));
}

static void
trace_and_check(char *const argv[])
{
	struct ctx c;

	if (access(VG_LIB "/hwtrace-amd64-linux", X_OK) != 0)
		atf_tc_fail("the Valgrind tool was not built: %s",
		    VG_LIB "/hwtrace-amd64-linux");
	memset(&c, 0, sizeof(c));
	(void)run_tool(argv);
	convert(&c, 0);
	check(&c);
	ctx_free(&c);
}

static void
prog_case(const char *name)
{
	char path[512];
	char *argv[2];

	snprintf(path, sizeof(path), "%s/%s", HWTR_TEST_PROGS, name);
	if (access(path, X_OK) != 0)
		atf_tc_skip("fixture program %s not built", path);
	argv[0] = path;
	argv[1] = NULL;
	trace_and_check(argv);
}

/* Inline fault records (HWVG_INLINE_FAULT) in the event streams in ./evt. */
static size_t
count_fault_records(void)
{
	struct dirent *de;
	char path[512];
	uint8_t *b;
	uint32_t len;
	size_t n = 0, off, size;
	DIR *d;
	FILE *fp;
	long l;

	ATF_REQUIRE((d = opendir("evt")) != NULL);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "vg.", 3) != 0)
			continue;
		snprintf(path, sizeof(path), "evt/%s", de->d_name);
		ATF_REQUIRE((fp = fopen(path, "rb")) != NULL);
		fseek(fp, 0, SEEK_END);
		l = ftell(fp);
		rewind(fp);
		size = l > 0 ? (size_t)l : 0;
		ATF_REQUIRE((b = malloc(size + 1)) != NULL);
		ATF_REQUIRE(fread(b, 1, size, fp) == size);
		fclose(fp);
		/* Records are self-delimiting (hwtr_vgevents.h). */
		for (off = 8; off < size;) {
			if (b[off] >= 0xf0) {
				ATF_REQUIRE(off + 5 <= size);
				memcpy(&len, b + off + 1, 4);
				off += 5 + (size_t)len;
			} else if (b[off] & HWVG_INLINE_WIDE)
				off += 8;
			else
				n += b[off++] >= HWVG_INLINE_FAULT;
		}
		free(b);
	}
	closedir(d);
	return (n);
}

/*
 * Faults after a superblock's first side exit (tests/progs/midfault.c):
 * exact, and the events show that the case came (at least @want fault
 * records), so that the test cannot pass by not reaching it.
 */
static void
midfault_case(char *arg, size_t want)
{
	char path[512];
	char *argv[3];
	size_t n;

	snprintf(path, sizeof(path), "%s/midfault", HWTR_TEST_PROGS);
	if (access(path, X_OK) != 0)
		atf_tc_skip("fixture program %s not built", path);
	argv[0] = path;
	argv[1] = arg;
	argv[2] = NULL;
	trace_and_check(argv);
	n = count_fault_records();
	ATF_CHECK_MSG(n >= want, "midfault %s: expected at least %zu fault "
	    "records (0x%x-0x7f) in the events, found %zu", arg ? arg : "", want,
	    HWVG_INLINE_FAULT, n);
}

/* Little-endian @v in @n bytes at @p; returns the end. */
static uint8_t *
put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return (p + n);
}

static int
mmap_ignored(void *arg, int32_t pid, uint64_t addr, uint64_t len,
    uint64_t pgoff, uint32_t prot, const char *path, uint64_t time)
{
	(void)arg; (void)pid; (void)addr; (void)len; (void)pgoff; (void)prot;
	(void)path; (void)time;
	return (0);
}

/*
 * An event file whose header names an executable of 5000 bytes, or whose
 * MMAP record a path of 5000 (the tool writes at most PATH_MAX - 1), is
 * refused with a message that says so, instead of overrunning the
 * converter's 4097-byte buffer.
 */
ATF_TC_WITHOUT_HEAD(long_paths_refused);
ATF_TC_BODY(long_paths_refused, tc)
{
	static const char *const want[] = { "executable path of 5000 bytes",
	    "mapping: path of 5000 bytes" };
	struct vgconv_cb cb;
	struct vgconv *cv;
	struct vgconv_file *f;
	uint8_t *buf, *p;
	long used;
	int k;

	ATF_REQUIRE((buf = calloc(1, 16384)) != NULL);
	for (k = 0; k < 2; k++) {
		memset(&cb, 0, sizeof(cb));
		cb.mmap = mmap_ignored;
		ATF_REQUIRE(vgconv_new(&cv, &cb, NULL) == 0);
		ATF_REQUIRE(vgconv_file_new(cv, "vg.1.0.evt", &f) == 0);
		memcpy(buf, HWVG_MAGIC, 8);
		p = buf + 8;
		*p++ = HWVG_REC_HDR;
		p = put_le(p, 22 + (k == 0 ? 5000 : 4), 4);
		p = put_le(p, HWVG_VERSION, 4);
		p = put_le(p, 4242, 4);		/* pid */
		p = put_le(p, 1, 4);		/* ppid */
		p = put_le(p, 1000, 8);		/* time */
		p = put_le(p, k == 0 ? 5000 : 4, 2);
		memset(p, 'a', k == 0 ? 5000 : 4);
		p += k == 0 ? 5000 : 4;
		if (k == 1) {
			*p++ = HWVG_REC_MMAP;
			p = put_le(p, 38 + 5000, 4);
			p = put_le(p, 0x400000, 8);	/* addr */
			p = put_le(p, 0x1000, 8);	/* len */
			p = put_le(p, 0, 8);		/* pgoff */
			p = put_le(p, 5, 4);		/* prot */
			p = put_le(p, 1001, 8);		/* time */
			p = put_le(p, 5000, 2);
			memset(p, 'b', 5000);
			p += 5000;
		}
		used = vgconv_feed(f, buf, (size_t)(p - buf));
		ATF_CHECK_MSG(used < 0, "expected the %s record refused, got "
		    "%ld bytes used", k == 0 ? "header" : "MMAP", used);
		ATF_CHECK_MSG(strstr(vgconv_errmsg(cv), want[k]) != NULL,
		    "expected a message with '%s', got '%s'", want[k],
		    vgconv_errmsg(cv));
		vgconv_file_abandon(f);
		vgconv_free(cv);
	}
	free(buf);
}

ATF_TC_WITHOUT_HEAD(midfault_caught_exact);
ATF_TC_BODY(midfault_caught_exact, tc)
{
	midfault_case(NULL, 2);
}

ATF_TC_WITHOUT_HEAD(midfault_crash_exact);
ATF_TC_BODY(midfault_crash_exact, tc)
{
	midfault_case("crash", 3);
}

ATF_TC_WITHOUT_HEAD(true_exact);
ATF_TC_BODY(true_exact, tc)
{
	char *argv[] = { "/bin/true", NULL };

	trace_and_check(argv);
}

ATF_TC_WITHOUT_HEAD(ls_exact);
ATF_TC_BODY(ls_exact, tc)
{
	char *argv[] = { "/bin/ls", "-l", "/usr/bin", NULL };

	trace_and_check(argv);
}

/*
 * The fast path (vgc_fast_run(): pairs, quads and octs of superblocks,
 * TNT bits batched, PSB+ checks skipped where none can fall) must write
 * the very bytes of the slow path, which replays superblock by superblock
 * and asks for a PSB+ at every 16th: same packets, PSB+ at the same
 * places.  gzip's loops take every kind of step many times over about 30
 * PSB+ periods.
 */
ATF_TC_WITHOUT_HEAD(fast_path_same_pt);
ATF_TC_BODY(fast_path_same_pt, tc)
{
	char *argv[] = { "/bin/gzip", "-6", "-k", "-f", "in", NULL };
	struct ctx fast, slow;
	struct tthr *a, *b;
	uint32_t x = 1;
	size_t i, k, n;
	int sg;
	FILE *fp;

	if (access(VG_LIB "/hwtrace-amd64-linux", X_OK) != 0)
		atf_tc_fail("the Valgrind tool was not built: %s",
		    VG_LIB "/hwtrace-amd64-linux");
	if (access(argv[0], X_OK) != 0)
		atf_tc_skip("%s is not installed", argv[0]);
	/* 16 KiB of words from a small vocabulary: compressible. */
	ATF_REQUIRE((fp = fopen("in", "w")) != NULL);
	for (n = 0; n < 16384; n += 4) {
		x = x * 1103515245u + 12345u;
		fputs((const char *[]){ "abc ", "xyz\n", "fooo", "bar " }
		    [x >> 30], fp);
	}
	ATF_REQUIRE(fclose(fp) == 0);
	memset(&fast, 0, sizeof(fast));
	memset(&slow, 0, sizeof(slow));
	(void)run_tool(argv);
	convert(&fast, 0);
	convert(&slow, 1);
	ATF_REQUIRE_EQ_MSG(fast.nthr, slow.nthr, "fast path: %zu threads, "
	    "slow path: %zu", fast.nthr, slow.nthr);
	for (i = 0; i < fast.nthr; i++) {
		a = fast.thr[i];
		b = slow.thr[i];
		ATF_REQUIRE_EQ(a->nseg, b->nseg);
		for (sg = 0; sg < a->nseg; sg++) {
			n = a->seg[sg].n < b->seg[sg].n ? a->seg[sg].n :
			    b->seg[sg].n;
			for (k = 0; k < n; k++)
				if (a->seg[sg].b[k] != b->seg[sg].b[k])
					break;
			ATF_CHECK_MSG(k == a->seg[sg].n && k == b->seg[sg].n,
			    "tid %d: the fast path's PT (%zu bytes) differs "
			    "from the slow path's (%zu bytes) at offset %zu",
			    a->tid, a->seg[sg].n, b->seg[sg].n, k);
		}
		ATF_CHECK_EQ_MSG(a->ninsn, b->ninsn, "tid %d: %" PRIu64
		    " instructions on the fast path, %" PRIu64 " on the slow",
		    a->tid, a->ninsn, b->ninsn);
	}
	ATF_CHECK_MSG(fast.nthr > 0 && fast.thr[0]->seg[0].n > 64 * 1024,
	    "expected over 64 KiB of PT, got %zu bytes", fast.nthr > 0 ?
	    fast.thr[0]->seg[0].n : 0);
	ctx_free(&fast);
	ctx_free(&slow);
}

ATF_TC_WITHOUT_HEAD(shell_pipe_fork_exec_exact);
ATF_TC_BODY(shell_pipe_fork_exec_exact, tc)
{
	char *argv[] = { "/bin/sh", "-c", "echo hi | tr a-z A-Z >/dev/null",
	    NULL };

	trace_and_check(argv);
}

#define PROG_TC(n)							\
ATF_TC_WITHOUT_HEAD(prog_##n);						\
ATF_TC_BODY(prog_##n, tc)						\
{									\
	prog_case(#n);							\
}

PROG_TC(loop)
PROG_TC(recurse)
PROG_TC(calls)
PROG_TC(switch)
PROG_TC(tailcall)
PROG_TC(setjmp)
PROG_TC(except)
PROG_TC(signal)
PROG_TC(timer)
PROG_TC(threads)
PROG_TC(forkexec)
PROG_TC(vfork)
PROG_TC(dlopen)
PROG_TC(dynpie)
PROG_TC(rep)
PROG_TC(syscalls)
PROG_TC(segv)
PROG_TC(exit3)
PROG_TC(hello)

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, long_paths_refused);
	ATF_TP_ADD_TC(tp, true_exact);
	ATF_TP_ADD_TC(tp, ls_exact);
	ATF_TP_ADD_TC(tp, shell_pipe_fork_exec_exact);
	ATF_TP_ADD_TC(tp, fast_path_same_pt);
	ATF_TP_ADD_TC(tp, prog_loop);
	ATF_TP_ADD_TC(tp, prog_recurse);
	ATF_TP_ADD_TC(tp, prog_calls);
	ATF_TP_ADD_TC(tp, prog_switch);
	ATF_TP_ADD_TC(tp, prog_tailcall);
	ATF_TP_ADD_TC(tp, prog_setjmp);
	ATF_TP_ADD_TC(tp, prog_except);
	ATF_TP_ADD_TC(tp, prog_signal);
	ATF_TP_ADD_TC(tp, prog_timer);
	ATF_TP_ADD_TC(tp, prog_threads);
	ATF_TP_ADD_TC(tp, prog_forkexec);
	ATF_TP_ADD_TC(tp, prog_vfork);
	ATF_TP_ADD_TC(tp, prog_dlopen);
	ATF_TP_ADD_TC(tp, prog_dynpie);
	ATF_TP_ADD_TC(tp, prog_rep);
	ATF_TP_ADD_TC(tp, prog_syscalls);
	ATF_TP_ADD_TC(tp, prog_segv);
	ATF_TP_ADD_TC(tp, prog_exit3);
	ATF_TP_ADD_TC(tp, prog_hello);
	ATF_TP_ADD_TC(tp, midfault_caught_exact);
	ATF_TP_ADD_TC(tp, midfault_crash_exact);
	return (atf_no_error());
}
