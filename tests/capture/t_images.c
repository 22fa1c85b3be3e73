/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The image collector (capture/images.c): images stored for the mappings
 * the sideband collector reports, read back from the archive and compared
 * with the files on disk and with this process's own vdso; a file replaced
 * after it was mapped is still stored as it was mapped.
 */

#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_img.h"
#include "hwtr_test.h"

struct recs {
	struct hwtr_sb_rec *v;
	char		(*str)[PATH_MAX];
	size_t		n;
};

static int
collect(void *arg, struct hwtr_sb_rec *r)
{
	struct recs *rs = arg;

	if (r->type != HWTR_SB_MMAP)
		return (0);
	rs->v = realloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
	rs->str = realloc(rs->str, (rs->n + 1) * sizeof(*rs->str));
	ATF_REQUIRE(rs->v != NULL && rs->str != NULL);
	rs->v[rs->n] = *r;
	snprintf(rs->str[rs->n], PATH_MAX, "%s", r->u.mmap.path);
	rs->n++;
	return (0);
}

/* The strings moved while the records were collected. */
static void
fix_paths(struct recs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		rs->v[i].u.mmap.path = rs->str[i];
}

/*
 * Start @path under ptrace and leave it stopped right after its exec (or,
 * with @to_end, let it run to its end), with the MMAP records the sideband
 * collector made for it in @rs.
 */
static pid_t
start_stopped(const char *path, struct recs *rs, int to_end)
{
	struct hwtr_sbc_opts o;
	struct hwtr_sbc *sbc;
	char err[256];
	pid_t pid;
	int st;

	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st));
	memset(&o, 0, sizeof(o));
	o.pid = pid;
	ATF_REQUIRE_MSG(hwtr_sbc_open(&sbc, &o, err, sizeof(err)) == 0,
	    "hwtr_sbc_open: %s", err);
	ATF_REQUIRE(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXEC |
	    PTRACE_O_EXITKILL) == 0);
	ATF_REQUIRE(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid && WIFSTOPPED(st));
	ATF_REQUIRE_MSG(st >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8),
	    "expected the exec stop of %s, got status %#x", path, st);
	ATF_REQUIRE(hwtr_sbc_note_exec(sbc, pid, 0) >= 0);
	if (to_end) {
		ATF_REQUIRE(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
		ATF_REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	}
	ATF_REQUIRE(hwtr_sbc_read(sbc, 1, collect, rs) >= 0);
	fix_paths(rs);
	hwtr_sbc_close(sbc);
	return (pid);
}

static void
finish(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void *
read_file(const char *path, size_t *lenp)
{
	struct stat st;
	void *buf;
	int fd;

	ATF_REQUIRE_MSG((fd = open(path, O_RDONLY)) >= 0, "open %s", path);
	ATF_REQUIRE(fstat(fd, &st) == 0);
	ATF_REQUIRE((buf = malloc((size_t)st.st_size + 1)) != NULL);
	ATF_REQUIRE(read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	*lenp = (size_t)st.st_size;
	return (buf);
}

static void
copy_file(const char *from, const char *to)
{
	size_t len;
	void *buf = read_file(from, &len);
	int fd;

	ATF_REQUIRE((fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755)) >= 0);
	ATF_REQUIRE(write(fd, buf, len) == (ssize_t)len);
	close(fd);
	free(buf);
}

static void
log_stderr(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "log: %s\n", msg);
}

static const struct hwtr_log test_log = { log_stderr, NULL, HWTR_LOG_DEBUG };

/* Free what a test case used: @img, @ar, @rs's records, @buf and @fbuf. */
static void
release(struct hwtr_img *img, struct hwtr_ar *ar, struct recs *rs,
    void *buf, void *fbuf)
{
	free(buf);
	free(fbuf);
	hwtr_img_free(img);
	hwtr_ar_close(ar);
	free(rs->v);
	free(rs->str);
}

static struct hwtr_aw *
new_archive(const char *path)
{
	struct hwtr_capture_meta meta;
	struct hwtr_aw *aw;
	char err[256];

	memset(&meta, 0, sizeof(meta));
	meta.source = "step";
	meta.sideband_origin = "perf_event";
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, path, &meta, NULL, err,
	    sizeof(err)) == 0, "hwtr_aw_open: %s", err);
	return (aw);
}

/* Image @key of @ar, read whole; its kind in *kind. */
static void *
image_of(struct hwtr_ar *ar, const char *key, size_t *lenp,
    enum hwtr_image_kind *kind)
{
	void *buf;
	int i;

	i = hwtr_ar_find_image(ar, key);
	ATF_REQUIRE_MSG(i >= 0, "image '%s' is not in the archive", key);
	ATF_REQUIRE(hwtr_ar_read_image(ar, (size_t)i, &buf, lenp) == 0);
	*kind = hwtr_ar_image(ar, (size_t)i)->kind;
	return (buf);
}

ATF_TC_WITHOUT_HEAD(every_image_of_dlopen);
ATF_TC_BODY(every_image_of_dlopen, tc)
{
	struct recs rs = { NULL, NULL, 0 };
	struct hwtr_ar *ar;
	struct hwtr_aw *aw;
	struct hwtr_img *img;
	enum hwtr_image_kind kind;
	char path[PATH_MAX], err[256];
	size_t i, len, flen, nfile = 0, nvdso = 0;
	void *buf, *fbuf;
	pid_t pid;
	int rc;

	snprintf(path, sizeof(path), "%s/dlopen", HWTR_TEST_PROGS);
	/*
	 * Runs to its end, so that libc and libdlfix.so are mapped too; the
	 * [vdso] then comes from this process's own.
	 */
	pid = start_stopped(path, &rs, 1);
	aw = new_archive("images.hwtrace");
	ATF_REQUIRE(hwtr_img_new(&img, aw, &test_log) == 0);
	for (i = 0; i < rs.n; i++) {
		rc = hwtr_img_mmap(img, &rs.v[i]);
		ATF_REQUIRE_MSG(rc >= 0, "hwtr_img_mmap(%s): %s", rs.str[i],
		    hwtr_img_errmsg(img));
		ATF_REQUIRE(hwtr_aw_sideband(aw, &rs.v[i]) == 0);
	}
	/* Storing them again stores nothing new. */
	for (i = 0; i < rs.n; i++)
		ATF_CHECK_EQ_MSG(hwtr_img_mmap(img, &rs.v[i]), 0,
		    "image of %s stored twice", rs.str[i]);
	(void)pid;
	hwtr_img_free(img);
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0, "%s", err);

	ATF_REQUIRE(hwtr_ar_open(&ar, "images.hwtrace", NULL) == 0);
	ATF_REQUIRE_MSG(hwtr_ar_nsideband(ar) == rs.n, "expected %zu mmap "
	    "records, the archive has %zu", rs.n, hwtr_ar_nsideband(ar));
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		const struct hwtr_sb_rec *r = hwtr_ar_sideband_rec(ar, i);

		ATF_REQUIRE(r->type == HWTR_SB_MMAP);
		ATF_REQUIRE_MSG(r->u.mmap.image != NULL, "mmap of %s has no "
		    "image", r->u.mmap.path);
		buf = image_of(ar, r->u.mmap.image, &len, &kind);
		if (strcmp(r->u.mmap.path, "[vdso]") == 0) {
			/* The same kernel maps the same vdso into us. */
			uintptr_t v = getauxval(AT_SYSINFO_EHDR);

			ATF_CHECK_EQ(kind, HWTR_IMG_MEMORY);
			ATF_REQUIRE(v != 0);
			ATF_CHECK_MSG(len >= 4096 && memcmp(buf, (void *)v,
			    len) == 0, "[vdso] image (%zu bytes) differs from "
			    "this process's vdso", len);
			nvdso++;
		} else {
			ATF_CHECK_EQ_MSG(kind, HWTR_IMG_FILE, "%s stored as "
			    "kind %d", r->u.mmap.path, kind);
			fbuf = read_file(r->u.mmap.path, &flen);
			ATF_CHECK_MSG(len == flen && memcmp(buf, fbuf, len) ==
			    0, "image of %s (%zu bytes) differs from the file "
			    "(%zu bytes)", r->u.mmap.path, len, flen);
			free(fbuf);
			nfile++;
		}
		free(buf);
	}
	/* dlopen, ld.so, libc, libdlfix.so; the vdso. */
	ATF_CHECK_MSG(nfile >= 4 && nvdso == 1, "expected >= 4 files and one "
	    "vdso, got %zu and %zu", nfile, nvdso);
	ATF_CHECK_MSG(hwtr_ar_nimages(ar) >= 5, "expected >= 5 images, got "
	    "%zu", hwtr_ar_nimages(ar));
	hwtr_ar_close(ar);
	free(rs.v);
	free(rs.str);
}

/*
 * A file replaced after it was mapped: the archive gets the mapped one
 * (same build-id as the kernel reported), not the new one.
 */
ATF_TC_WITHOUT_HEAD(replaced_file_stored_as_mapped);
ATF_TC_BODY(replaced_file_stored_as_mapped, tc)
{
	struct recs rs = { NULL, NULL, 0 };
	char hello[PATH_MAX], loop[PATH_MAX], cwd[PATH_MAX - 16];
	char copy[PATH_MAX];
	char err[256];
	enum hwtr_image_kind kind;
	struct hwtr_img *img;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	size_t i, len, flen;
	void *buf, *fbuf;
	const char *key = NULL;
	pid_t pid;

	snprintf(hello, sizeof(hello), "%s/hello", HWTR_TEST_PROGS);
	snprintf(loop, sizeof(loop), "%s/loop", HWTR_TEST_PROGS);
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	snprintf(copy, sizeof(copy), "%s/prog", cwd);
	copy_file(hello, copy);
	pid = start_stopped(copy, &rs, 0);
	/* Replace it with another program, as an upgrade would. */
	copy_file(loop, "prog.new");
	ATF_REQUIRE(rename("prog.new", copy) == 0);

	aw = new_archive("replaced.hwtrace");
	ATF_REQUIRE(hwtr_img_new(&img, aw, &test_log) == 0);
	for (i = 0; i < rs.n; i++) {
		ATF_REQUIRE_MSG(hwtr_img_mmap(img, &rs.v[i]) >= 0, "%s: %s",
		    rs.str[i], hwtr_img_errmsg(img));
		ATF_REQUIRE(hwtr_aw_sideband(aw, &rs.v[i]) == 0);
		if (strcmp(rs.str[i], copy) == 0)
			key = rs.v[i].u.mmap.image;
	}
	ATF_REQUIRE_MSG(key != NULL, "no mmap record of %s", copy);
	finish(pid);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	ATF_REQUIRE(hwtr_ar_open(&ar, "replaced.hwtrace", NULL) == 0);
	buf = image_of(ar, key, &len, &kind);
	fbuf = read_file(hello, &flen);
	ATF_CHECK_EQ(kind, HWTR_IMG_FILE);
	ATF_CHECK_MSG(len == flen && memcmp(buf, fbuf, len) == 0, "the image "
	    "stored for the replaced %s is not the file that was mapped "
	    "(hello, %zu bytes; got %zu)", copy, flen, len);
	release(img, ar, &rs, buf, fbuf);
}

/*
 * No file with the reported build-id anywhere: the mapped bytes are
 * dumped from memory, and equal the file's bytes at the mapped offset.
 */
/* Store @r's image, which must be new and a memory image, then @r. */
static void
add_memory_image(struct hwtr_img *img, struct hwtr_aw *aw,
    struct hwtr_sb_rec *r)
{
	ATF_REQUIRE_MSG(hwtr_img_mmap(img, r) == 1, "%s",
	    hwtr_img_errmsg(img));
	ATF_CHECK_EQ_MSG(r->u.mmap.pgoff, 0, "a memory image is mapped from "
	    "offset 0, record says 0x%" PRIx64, r->u.mmap.pgoff);
	ATF_REQUIRE(hwtr_aw_sideband(aw, r) == 0);
}

ATF_TC_WITHOUT_HEAD(unknown_build_id_dumps_memory);
ATF_TC_BODY(unknown_build_id_dumps_memory, tc)
{
	struct recs rs = { NULL, NULL, 0 };
	char rel[PATH_MAX], hello[PATH_MAX], err[256];
	enum hwtr_image_kind kind;
	struct hwtr_sb_rec r;
	struct hwtr_img *img;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	size_t i, len, flen;
	void *buf, *fbuf;
	uint64_t pgoff;
	pid_t pid;

	snprintf(rel, sizeof(rel), "%s/hello", HWTR_TEST_PROGS);
	ATF_REQUIRE(realpath(rel, hello) != NULL);
	pid = start_stopped(hello, &rs, 0);
	for (i = 0; i < rs.n; i++)
		if (strcmp(rs.str[i], hello) == 0)
			break;
	ATF_REQUIRE_MSG(i < rs.n, "no mmap record of %s", hello);
	r = rs.v[i];
	memset(r.u.mmap.build_id, 0xee, 20);
	r.u.mmap.build_id_len = 20;
	pgoff = r.u.mmap.pgoff;
	aw = new_archive("memory.hwtrace");
	ATF_REQUIRE(hwtr_img_new(&img, aw, &test_log) == 0);
	add_memory_image(img, aw, &r);
	finish(pid);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	ATF_REQUIRE(hwtr_ar_open(&ar, "memory.hwtrace", NULL) == 0);
	buf = image_of(ar, hwtr_ar_sideband_rec(ar, 0)->u.mmap.image, &len,
	    &kind);
	ATF_CHECK_EQ(kind, HWTR_IMG_MEMORY);
	ATF_CHECK_EQ(len, r.u.mmap.len);
	fbuf = read_file(hello, &flen);
	/* Text of a static binary is not relocated: memory == file. */
	ATF_REQUIRE(pgoff + len <= flen + 4096);
	len = pgoff + len <= flen ? len : flen - pgoff;
	ATF_CHECK_MSG(memcmp(buf, (char *)fbuf + pgoff, len) == 0, "the memory"
	    " image differs from %s at offset 0x%" PRIx64, hello, pgoff);
	release(img, ar, &rs, buf, fbuf);
}

/*
 * A record with mmap.slice (what the valgrind source sets for the tool's
 * own text) stores the bytes it maps, read from the file, not the file;
 * a slice the file cannot give stores the file.
 */
ATF_TC_WITHOUT_HEAD(slice_stores_mapped_bytes);
ATF_TC_BODY(slice_stores_mapped_bytes, tc)
{
	char rel[PATH_MAX], hello[PATH_MAX], err[256];
	enum hwtr_image_kind kind;
	struct hwtr_sb_rec r, past;
	struct hwtr_img *img;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	size_t len, flen;
	void *buf, *fbuf;

	snprintf(rel, sizeof(rel), "%s/hello", HWTR_TEST_PROGS);
	ATF_REQUIRE(realpath(rel, hello) != NULL);
	fbuf = read_file(hello, &flen);
	ATF_REQUIRE(flen > 0x3000);
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_MMAP;
	r.pid = getpid();
	r.tid = r.pid;
	r.u.mmap.addr = 0x58001000;
	r.u.mmap.len = 0x2000;
	r.u.mmap.pgoff = 0x1000;
	r.u.mmap.prot = 5;
	r.u.mmap.path = hello;
	r.u.mmap.slice = 1;
	past = r;
	past.u.mmap.addr = 0x59000000;
	past.u.mmap.pgoff = flen + 0x1000;
	aw = new_archive("slice.hwtrace");
	ATF_REQUIRE(hwtr_img_new(&img, aw, &test_log) == 0);
	add_memory_image(img, aw, &r);
	ATF_REQUIRE_MSG(hwtr_img_mmap(img, &past) == 1, "%s",
	    hwtr_img_errmsg(img));
	ATF_REQUIRE(hwtr_aw_sideband(aw, &past) == 0);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
	ATF_REQUIRE(hwtr_ar_open(&ar, "slice.hwtrace", NULL) == 0);
	buf = image_of(ar, hwtr_ar_sideband_rec(ar, 0)->u.mmap.image, &len,
	    &kind);
	ATF_CHECK_EQ(kind, HWTR_IMG_MEMORY);
	ATF_CHECK_EQ_MSG(len, 0x2000, "the slice holds %zu bytes", len);
	ATF_CHECK_MSG(len == 0x2000 && memcmp(buf, (char *)fbuf + 0x1000,
	    0x2000) == 0, "the slice differs from %s at offset 0x1000", hello);
	free(buf);
	buf = image_of(ar, hwtr_ar_sideband_rec(ar, 1)->u.mmap.image, &len,
	    &kind);
	ATF_CHECK_EQ_MSG(kind, HWTR_IMG_FILE, "a slice past the end of the "
	    "file: expected the file stored");
	ATF_CHECK_MSG(len == flen && memcmp(buf, fbuf, flen) == 0,
	    "expected %s whole (%zu bytes), got %zu bytes", hello, flen, len);
	free(buf);
	free(fbuf);
	hwtr_img_free(img);
	hwtr_ar_close(ar);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, every_image_of_dlopen);
	ATF_TP_ADD_TC(tp, replaced_file_stored_as_mapped);
	ATF_TP_ADD_TC(tp, unknown_build_id_dumps_memory);
	ATF_TP_ADD_TC(tp, slice_stores_mapped_bytes);
	return (atf_no_error());
}
