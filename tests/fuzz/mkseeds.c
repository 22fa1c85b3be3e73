/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * mkseeds DIR: write the seed corpus of the archive reader's fuzzer
 * (`make fuzz-seeds` regenerates tests/fuzz/corpus/).  The name says what
 * the reader must do with each seed (t_corpus checks it):
 *   ok-*	valid, complete archives of several shapes, written with
 *		hwtr_aw_*: open, verify, complete;
 *   cut-*	a valid archive cut short (or a writer that never closed):
 *		open saying it was cut (incomplete, or a warning when only
 *		the trailer after the final member is cut), or be refused;
 *   bad-*	hostile or broken: refused by open or by verify;
 *   reg-*	inputs the fuzzer once crashed on: any answer but a crash;
 *   fz-*	small inputs the fuzzer reached new code with (libFuzzer
 *		-merge=1 over build-fuzz/corpus, under 4 KiB each): any
 *		answer but a crash.
 * Hostile archives are made by hand: a tar header is 512 bytes of ASCII
 * fields (POSIX ustar), and each member is its own zstd frame as the
 * writer makes them, so a bad member can follow a valid first member.
 */

#include <err.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_tool.h"

struct blob {
	uint8_t	*p;
	size_t	len;
};

static const char *outdir;

static void
put(struct blob *b, const void *p, size_t len)
{
	b->p = realloc(b->p, b->len + len);
	if (b->p == NULL)
		err(1, "realloc");
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

static void
load(const char *path, struct blob *b)
{
	uint8_t buf[65536];
	ssize_t n;
	int fd;

	memset(b, 0, sizeof(*b));
	if ((fd = open(path, O_RDONLY)) < 0)
		err(1, "%s", path);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		put(b, buf, (size_t)n);
	if (n < 0)
		err(1, "%s", path);
	close(fd);
}

static void
save(const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	if ((f = fopen(path, "wb")) == NULL)
		err(1, "%s", path);
	if (len > 0 && fwrite(p, 1, len, f) != len)
		err(1, "%s", path);
	if (fclose(f) != 0)
		err(1, "%s", path);
}

static void
path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", outdir, name);
}

/* Size of the first zstd frame of @b. */
static size_t
first_frame(const struct blob *b)
{
	size_t n = ZSTD_findFrameCompressedSize(b->p, b->len);

	if (ZSTD_isError(n))
		errx(1, "not a zstd frame: %s", ZSTD_getErrorName(n));
	return (n);
}

/* @len bytes compressed as one frame with a checksum, appended to @b. */
static void
put_frame(struct blob *b, const void *p, size_t len, int size_flag)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(len), n;
	uint8_t *out = malloc(cap);

	if (c == NULL || out == NULL)
		err(1, "zstd");
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, size_flag);
	n = ZSTD_compress2(c, out, cap, p, len);
	if (ZSTD_isError(n))
		errx(1, "zstd: %s", ZSTD_getErrorName(n));
	put(b, out, n);
	free(out);
	ZSTD_freeCCtx(c);
}

/* A POSIX ustar header; @type '0' file, '2' symlink, '3' char device. */
static void
tar_header(uint8_t h[512], const char *name, char type, uint64_t size,
    const char *link)
{
	unsigned sum = 0;
	int i;

	memset(h, 0, 512);
	strncpy((char *)h, name, 100);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	snprintf((char *)h + 136, 12, "%011o", 1700000000);
	h[156] = (uint8_t)type;
	if (link != NULL)
		strncpy((char *)h + 157, link, 100);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

/* One tar member (header, data, padding) as its own frame. */
static void
put_member(struct blob *b, const char *name, char type, const void *data,
    size_t len, const char *link)
{
	struct blob m = { NULL, 0 };
	uint8_t h[512], pad[512];

	tar_header(h, name, type, len, link);
	put(&m, h, 512);
	if (len > 0)
		put(&m, data, len);
	memset(pad, 0, sizeof(pad));
	if (len % 512)
		put(&m, pad, 512 - len % 512);
	put_frame(b, m.p, m.len, 1);
	free(m.p);
}

/* A member @name of @size zero bytes, compressed as one frame. */
static void
put_zeros(struct blob *b, const char *name, size_t size)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	uint8_t *zero = calloc(1, 1u << 20), h[512];
	uint8_t *obuf = malloc(1u << 20);
	size_t left = size, r;

	if (c == NULL || zero == NULL || obuf == NULL)
		errx(1, "out of memory");
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setPledgedSrcSize(c, 512 + left);
	tar_header(h, name, '0', left, NULL);
	in.src = h;
	in.size = 512;
	in.pos = 0;
	do {
		out.dst = obuf;
		out.size = 1u << 20;
		out.pos = 0;
		r = ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue);
		if (ZSTD_isError(r))
			errx(1, "zstd: %s", ZSTD_getErrorName(r));
		put(b, obuf, out.pos);
	} while (in.pos < in.size);
	while (left > 0) {
		in.src = zero;
		in.size = left < (1u << 20) ? left : (1u << 20);
		in.pos = 0;
		left -= in.size;
		do {
			out.dst = obuf;
			out.size = 1u << 20;
			out.pos = 0;
			r = ZSTD_compressStream2(c, &out, &in,
			    left == 0 ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(r))
				errx(1, "zstd: %s", ZSTD_getErrorName(r));
			put(b, obuf, out.pos);
		} while (in.pos < in.size || (left == 0 && r != 0));
	}
	free(zero);
	free(obuf);
	ZSTD_freeCCtx(c);
}

static void
put_eof(struct blob *b)
{
	uint8_t z[1024];

	memset(z, 0, sizeof(z));
	put_frame(b, z, sizeof(z), 1);
}

/* Bytes that look like Intel PT: PSB, PAD, TNT, TIP-ish patterns. */
static void
fill_pt(uint8_t *p, size_t len, uint32_t seed)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		if (i % 1024 == 0 && i + 16 <= len) {
			memcpy(p + i, psb, 16);
			i += 15;
			continue;
		}
		p[i] = (seed >> 16) % 5 == 0 ? 0x0d : (uint8_t)(((seed >> 16) &
		    0x7e) | 0x04);
	}
}

static struct hwtr_aw *
open_writer(const char *name, const char *const *argv, size_t argc,
    int no_partial)
{
	struct hwtr_capture_meta m;
	struct hwtr_aw_opts o;
	struct hwtr_aw *aw;
	char path[4096], errbuf[256];

	tool_intel_meta(&m, "seedhost", "import-raw", 79);
	m.cpu.stepping = 1;
	m.argv = argv;
	m.argc = argc;
	m.start_ns = 1700000000000000000LL;
	memset(&o, 0, sizeof(o));
	o.threads = 1;
	o.no_partial = no_partial;
	path_of(path, sizeof(path), name);
	if (hwtr_aw_open(&aw, path, &m, &o, errbuf, sizeof(errbuf)) < 0)
		errx(1, "%s: %s", path, errbuf);
	return (aw);
}

static void
check(struct hwtr_aw *aw, int rc, const char *what)
{
	if (rc < 0)
		errx(1, "%s: %s", what, hwtr_aw_errmsg(aw));
}

static void
close_writer(struct hwtr_aw *aw)
{
	char errbuf[256];

	if (hwtr_aw_close(aw, errbuf, sizeof(errbuf)) < 0)
		errx(1, "close: %s", errbuf);
}

static void
seed_minimal(void)
{
	const char *argv[] = { "true" };

	close_writer(open_writer("ok-minimal.hwtrace", argv, 1, 0));
}

static void
seed_pt(void)
{
	const char *argv[] = { "./a.out", "-v" };
	struct hwtr_stream_desc sd;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw;
	uint8_t buf[3000], img[512];
	char key[HWTR_IMAGE_KEY_MAX];
	uint32_t sid;
	int i;

	aw = open_writer("ok-pt.hwtrace", argv, 2, 0);
	tool_pt_stream(&sd, 4242, 4242, 168, 24, HWTR_PT_OPT_TSC |
	    HWTR_PT_OPT_MTC | HWTR_PT_OPT_BRANCH | HWTR_PT_OPT_USER);
	check(aw, hwtr_aw_add_stream(aw, &sd, &sid), "stream");
	for (i = 0; i < 3; i++) {
		fill_pt(buf, sizeof(buf), (uint32_t)i);
		check(aw, hwtr_aw_chunk(aw, sid, HWTR_AW_APPEND, buf,
		    sizeof(buf)), "chunk");
	}
	memset(&id, 0, sizeof(id));
	id.path = "[vdso]";
	id.kind = HWTR_IMG_MEMORY;
	for (i = 0; i < (int)sizeof(img); i++)
		img[i] = (uint8_t)(i * 7);
	check(aw, hwtr_aw_add_image(aw, &id, img, sizeof(img), key), "image");
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_START;
	r.time = 1000;
	r.pid = r.tid = 4242;
	r.u.proc_start.ppid = 1;
	check(aw, hwtr_aw_sideband(aw, &r), "sideband");
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_MMAP;
	r.time = 1001;
	r.pid = r.tid = 4242;
	r.u.mmap.addr = 0x7fff0000;
	r.u.mmap.len = sizeof(img);
	r.u.mmap.prot = 5;
	r.u.mmap.path = "[vdso]";
	r.u.mmap.image = key;
	check(aw, hwtr_aw_sideband(aw, &r), "sideband");
	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_EXIT;
	r.time = 5000;
	r.pid = r.tid = 4242;
	r.u.exit.kind = HWTR_EXIT_CODE;
	check(aw, hwtr_aw_sideband(aw, &r), "sideband");
	close_writer(aw);
}

/*
 * Sideband record of type @t for seed_full(): thread 101 of process 100,
 * image @key with build-id @bid, streams @s0 and @s1.
 */
static void
sb_example(struct hwtr_sb_rec *r, int t, const char *key, const uint8_t *bid,
    uint32_t s0, uint32_t s1)
{
	memset(r, 0, sizeof(*r));
	r->type = (enum hwtr_sb_type)t;
	r->time = 1000 + (uint64_t)t;
	r->pid = 100;
	r->tid = 101;
	switch (r->type) {
	case HWTR_SB_PROC_START:
		r->u.proc_start.ppid = 1;
		break;
	case HWTR_SB_THREAD_START:
		r->u.thread_start.ptid = 100;
		break;
	case HWTR_SB_PROC_EXIT:
	case HWTR_SB_THREAD_EXIT:
		r->u.exit.kind = HWTR_EXIT_SIGNAL;
		r->u.exit.value = 11;
		break;
	case HWTR_SB_EXEC:
		r->u.exec.path = "/usr/bin/prog";
		break;
	case HWTR_SB_COMM:
		r->u.comm.comm = "prog";
		r->u.comm.exec = 1;
		break;
	case HWTR_SB_MMAP:
		r->u.mmap.addr = 0x7f0000000000ULL;
		r->u.mmap.len = 0x21000;
		r->u.mmap.pgoff = 0x1000;
		r->u.mmap.prot = 5;
		r->u.mmap.flags = 2;
		r->u.mmap.path = "/usr/lib/libfoo.so.1";
		r->u.mmap.image = key;
		memcpy(r->u.mmap.build_id, bid, 20);
		r->u.mmap.build_id_len = 20;
		break;
	case HWTR_SB_MUNMAP:
		r->u.munmap.addr = 0x7f0000000000ULL;
		r->u.munmap.len = 0x1000;
		break;
	case HWTR_SB_SWITCH:
		r->u.sw.cpu = 3;
		r->u.sw.out = 1;
		r->u.sw.preempt = 1;
		break;
	case HWTR_SB_LOST:
		r->u.lost.stream = s0;
		r->u.lost.reason = HWTR_LOST_OVERFLOW;
		r->u.lost.bytes = 2048;
		break;
	case HWTR_SB_BUFPOS:
		r->u.bufpos.stream = s1;
		r->u.bufpos.offset = 4096;
		break;
	default:
		break;
	}
}

/* Every kind of member and every sideband record type; @keep: no close. */
static void
seed_full(const char *name, int abort_early)
{
	static const struct hwtr_reg regs[] = {
		{ "TRCCONFIGR", 0x000000c1 }, { "TRCTRACEIDR", 0x10 },
		{ "TRCIDR0", 0x28000ea1 }, { "TRCIDR2", 0x20001088 }
	};
	const char *argv[] = { "/usr/bin/prog", "--flag", "arg with space" };
	struct hwtr_cs_source src[2];
	struct hwtr_stream_desc sd;
	struct hwtr_image_desc id;
	struct hwtr_capture_end end;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw;
	uint8_t buf[2048], img[4096];
	char key[HWTR_IMAGE_KEY_MAX], key2[HWTR_IMAGE_KEY_MAX];
	uint32_t s0, s1, s2;
	int i, t;

	aw = open_writer(name, argv, 3, 0);
	tool_pt_stream(&sd, 100, 101, 200, 30, HWTR_PT_OPT_TSC |
	    HWTR_PT_OPT_MTC | HWTR_PT_OPT_CYC | HWTR_PT_OPT_BRANCH |
	    HWTR_PT_OPT_USER);
	sd.name = "tid 101";
	sd.pt.cyc_thresh = 1;
	sd.pt.psb_freq = 0;
	tool_pt_filter(&sd, 0x400000, 0x4fffff);
	check(aw, hwtr_aw_add_stream(aw, &sd, &s0), "stream");
	sd.tid = -1;
	sd.cpu = 3;
	sd.name = NULL;
	sd.pt.nfilters = 0;
	check(aw, hwtr_aw_add_stream(aw, &sd, &s1), "stream");
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_CORESIGHT;
	sd.pid = sd.tid = -1;
	sd.cpu = -1;
	sd.name = "ETR buffer";
	memset(src, 0, sizeof(src));
	for (i = 0; i < 2; i++) {
		src[i].protocol = HWTR_TF_ETMV4;
		src[i].trace_id = (uint8_t)(0x10 + i);
		src[i].core = "Cortex-A57";
		src[i].regs = regs;
		src[i].nregs = sizeof(regs) / sizeof(regs[0]);
	}
	sd.cs.frame = HWTR_CS_FRAME_CORESIGHT;
	sd.cs.sources = src;
	sd.cs.nsources = 2;
	check(aw, hwtr_aw_add_stream(aw, &sd, &s2), "stream");

	for (i = 0; i < 4; i++) {
		fill_pt(buf, sizeof(buf), (uint32_t)(100 + i));
		check(aw, hwtr_aw_chunk(aw, i % 2 ? s1 : s0, HWTR_AW_APPEND,
		    buf, sizeof(buf)), "chunk");
	}
	/* A gap in stream 0: bytes lost, said by a LOST record. */
	check(aw, hwtr_aw_chunk(aw, s0, 3 * sizeof(buf), buf, 100), "chunk");
	memset(buf, 0x5a, sizeof(buf));
	check(aw, hwtr_aw_chunk(aw, s2, HWTR_AW_APPEND, buf, 1600), "chunk");
	if (abort_early) {
		hwtr_aw_abort(aw, 1);
		return;
	}

	memset(&id, 0, sizeof(id));
	id.path = "/usr/lib/libfoo.so.1";
	id.kind = HWTR_IMG_FILE;
	for (i = 0; i < 20; i++)
		id.build_id[i] = (uint8_t)(0xa0 + i);
	id.build_id_len = 20;
	for (i = 0; i < (int)sizeof(img); i++)
		img[i] = (uint8_t)(i ^ (i >> 3));
	memcpy(img, "\177ELF", 4);
	check(aw, hwtr_aw_add_image(aw, &id, img, sizeof(img), key), "image");
	memset(&id, 0, sizeof(id));
	id.path = "[vdso]";
	id.kind = HWTR_IMG_MEMORY;
	check(aw, hwtr_aw_add_image(aw, &id, img, 1024, key2), "image");

	for (t = HWTR_SB_PROC_START; t < HWTR_SB_MAX; t++) {
		sb_example(&r, t, key, id.build_id, s0, s1);
		check(aw, hwtr_aw_sideband(aw, &r), "sideband");
		if (t == HWTR_SB_EXEC)
			check(aw, hwtr_aw_flush(aw), "flush");
	}
	check(aw, hwtr_aw_add_aux(aw, "notes/readme.txt", "hello\n", 6),
	    "aux");
	memset(&end, 0, sizeof(end));
	end.end_ns = 1700000001000000000LL;
	end.exit_kind = HWTR_EXIT_SIGNAL;
	end.exit_value = 11;
	end.lost_bytes = 2048;
	hwtr_aw_set_end(aw, &end);
	close_writer(aw);
}

/* Cuts of ok-full at several places. */
static void
seed_cuts(void)
{
	char path[4096], name[64];
	struct blob b;
	size_t cut[6], f0;
	int i;

	path_of(path, sizeof(path), "ok-full.hwtrace");
	load(path, &b);
	f0 = first_frame(&b);
	cut[0] = f0 / 2;		/* inside the first member */
	cut[1] = f0;			/* the first member alone */
	cut[2] = b.len / 3;
	cut[3] = b.len / 2 + 7;
	cut[4] = b.len - 300;		/* around the final member */
	cut[5] = b.len - 5;		/* inside the trailer */
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "cut-full-%zu.hwtrace", cut[i]);
		save(name, b.p, cut[i]);
	}
	free(b.p);
}

/* Hostile archives: a valid first member, then something bad. */
static void
seed_hostile(void)
{
	char path[4096];
	struct blob ok, b;
	size_t f0, n, i;
	uint8_t *content, data[64];
	unsigned long long csize;

	path_of(path, sizeof(path), "ok-minimal.hwtrace");
	load(path, &ok);
	f0 = first_frame(&ok);
	memset(data, 'A', sizeof(data));

#define HOSTILE(file, stmt) do {					\
	memset(&b, 0, sizeof(b));					\
	put(&b, ok.p, f0);						\
	stmt;								\
	put_eof(&b);							\
	save(file, b.p, b.len);						\
	free(b.p);							\
} while (0)
	HOSTILE("bad-dotdot.hwtrace",
	    put_member(&b, "aux/../../evil", '0', data, 4, NULL));
	HOSTILE("bad-absolute.hwtrace",
	    put_member(&b, "/tmp/evil", '0', data, 4, NULL));
	HOSTILE("bad-symlink.hwtrace",
	    put_member(&b, "streams/0/stream.json", '2', NULL, 0,
	    "/etc/passwd"));
	HOSTILE("bad-device.hwtrace",
	    put_member(&b, "aux/dev", '3', NULL, 0, NULL));
	HOSTILE("bad-duplicate.hwtrace", put(&b, ok.p, f0));
	HOSTILE("bad-badname.hwtrace",
	    put_member(&b, "aux/x\001\377y", '0', data, 4, NULL));
	/* A member whose size field claims far more than its frame holds. */
	{
		uint8_t m[1024];

		memset(m, 0, sizeof(m));
		tar_header(m, "aux/short", '0', 65536, NULL);
		memset(m + 512, 'B', 64);
		HOSTILE("bad-short-member.hwtrace",
		    put_frame(&b, m, sizeof(m), 1));
	}
	free(ok.p);

	/* Version: major 9 in the first member; the checksum stays valid. */
	path_of(path, sizeof(path), "ok-minimal.hwtrace");
	load(path, &ok);
	f0 = first_frame(&ok);
	csize = ZSTD_getFrameContentSize(ok.p, f0);
	if (csize == ZSTD_CONTENTSIZE_ERROR ||
	    csize == ZSTD_CONTENTSIZE_UNKNOWN || csize > (1u << 20))
		errx(1, "first frame: no usable content size");
	content = malloc((size_t)csize);
	n = ZSTD_decompress(content, (size_t)csize, ok.p, f0);
	if (ZSTD_isError(n))
		errx(1, "first frame: %s", ZSTD_getErrorName(n));
	for (i = 0; i + 12 < n; i++)
		if (memcmp(content + i, "\"format\"", 8) == 0)
			break;
	for (; i + 3 < n; i++)
		if (content[i] == '"' && content[i + 1] == '1' &&
		    content[i + 2] == '.')
			break;
	if (i + 3 >= n)
		errx(1, "first member: no \"format\": \"1.x\" found");
	content[i + 1] = '9';
	memset(&b, 0, sizeof(b));
	put_frame(&b, content, n, 1);
	put(&b, ok.p + f0, ok.len - f0);
	save("bad-newer-major.hwtrace", b.p, b.len);
	free(b.p);

	/*
	 * A window bomb: the second member's frame header asks for a 1 GiB
	 * window (Window_Descriptor exponent 20), the content is harmless.
	 */
	memset(&b, 0, sizeof(b));
	put(&b, ok.p, f0);
	i = b.len;
	{
		uint8_t h[1024];

		memset(h, 0, sizeof(h));
		tar_header(h, "aux/window", '0', 512, NULL);
		put_frame(&b, h, sizeof(h), 0);
	}
	if ((b.p[i + 4] & 0x20) != 0)
		errx(1, "window bomb: frame is single-segment");
	b.p[i + 5] = 20 << 3;
	put_eof(&b);
	save("bad-window.hwtrace", b.p, b.len);
	free(b.p);

	/*
	 * A ratio bomb: five members claiming 256 MiB of zeros each, which
	 * zstd packs into a few kilobytes of RLE blocks: past the reader's
	 * allowance of 1 GiB for frames beyond its ratio.
	 */
	{
		char name[16];
		int k;

		memset(&b, 0, sizeof(b));
		put(&b, ok.p, f0);
		for (k = 0; k < 5; k++) {
			snprintf(name, sizeof(name), "aux/bomb%d", k);
			put_zeros(&b, name, 256u << 20);
		}
		put_eof(&b);
		save("bad-ratio-bomb.hwtrace", b.p, b.len);
		free(b.p);
	}

	/* Not an archive at all. */
	save("bad-empty.hwtrace", "", 0);
	save("bad-text.hwtrace", "this is not an archive\n", 23);
	{
		uint8_t h[2048];

		memset(h, 0, sizeof(h));
		tar_header(h, "hwtrace.json", '0', 2, NULL);
		memcpy(h + 512, "{}", 2);
		save("bad-plain-tar.hwtrace", h, sizeof(h));
	}
	free(ok.p);
}

int
main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds dir\n");
		return (2);
	}
	outdir = argv[1];
	seed_minimal();
	seed_pt();
	seed_full("ok-full.hwtrace", 0);
	seed_full("cut-partial.hwtrace", 1);
	/* The aborted writer left its ".partial" name. */
	path_of(path, sizeof(path), "cut-partial.hwtrace");
	{
		char from[4200];

		snprintf(from, sizeof(from), "%s.partial", path);
		if (rename(from, path) != 0)
			err(1, "rename %s", from);
	}
	seed_cuts();
	seed_hostile();
	return (0);
}
