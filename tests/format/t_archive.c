/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive writer and reader together: every field round-trips,
 * truncation at every byte offset, random access and damage, tar
 * compatibility.
 */

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "fixture.h"

#define NCHUNK	4
static const size_t chunk_len[NCHUNK] = { 1000, 70000, 5, 300000 };

struct written {
	uint8_t		*chunk[NCHUNK];
	uint64_t	chunk_off[NCHUNK];
	uint8_t		*img;
	size_t		img_len;
	char		key_mem[HWTR_IMAGE_KEY_MAX];
	char		key_file[HWTR_IMAGE_KEY_MAX];
	struct hwtr_sb_rec rec[12];
	size_t		nrec;
	struct hwtr_capture_end end;
};

static void
write_full(const char *path, struct written *w, int with_file)
{
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc pt, cs;
	struct hwtr_cs_source src;
	struct hwtr_image_desc idesc;
	struct hwtr_aw *aw;
	char err[256], key2[HWTR_IMAGE_KEY_MAX];
	uint32_t id0, id1;
	uint64_t off = 0;
	size_t i;
	uint8_t cs_bytes[64];

	fx_meta(&m);
	fx_streams(&pt, &cs, &src);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err, sizeof(err)),
	    0, "open: %s", err);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &pt, &id0), 0);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &cs, &id1), 0);
	ATF_CHECK_EQ(id0, 0);
	ATF_CHECK_EQ(id1, 1);
	for (i = 0; i < NCHUNK; i++) {
		w->chunk[i] = malloc(chunk_len[i]);
		fx_fill(w->chunk[i], chunk_len[i], (uint32_t)i);
		/* Chunk 2 leaves a gap of lost bytes before it. */
		if (i == 2)
			off += 4096;
		w->chunk_off[i] = off;
		ATF_REQUIRE_EQ_MSG(hwtr_aw_chunk(aw, id0, i == 2 ? off :
		    HWTR_AW_APPEND, w->chunk[i], chunk_len[i]), 0, "chunk %zu: %s",
		    i, hwtr_aw_errmsg(aw));
		off += chunk_len[i];
	}
	fx_fill(cs_bytes, sizeof(cs_bytes), 99);
	ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id1, 0x100, cs_bytes, sizeof(cs_bytes)), 0);
	/* Offsets never go back. */
	ATF_CHECK_EQ(hwtr_aw_chunk(aw, id0, 0, cs_bytes, 8), -HWTR_E_INVAL);

	w->img_len = 5000;
	w->img = malloc(w->img_len);
	fx_fill(w->img, w->img_len, 7);
	memset(&idesc, 0, sizeof(idesc));
	idesc.path = "[vdso]";
	idesc.kind = HWTR_IMG_MEMORY;
	ATF_REQUIRE_EQ(hwtr_aw_add_image(aw, &idesc, w->img, w->img_len,
	    w->key_mem), 0);
	ATF_CHECK_MSG(strncmp(w->key_mem, "sha256-", 7) == 0, "key %s",
	    w->key_mem);
	ATF_CHECK_EQ(hwtr_aw_has_image(aw, w->key_mem), 1);
	/* The same bytes again are not stored twice. */
	ATF_REQUIRE_EQ(hwtr_aw_add_image(aw, &idesc, w->img, w->img_len, key2), 0);
	ATF_CHECK_STREQ(key2, w->key_mem);
	w->key_file[0] = '\0';
	if (with_file) {
		ATF_REQUIRE_EQ_MSG(hwtr_aw_add_image_file(aw, "/bin/true", NULL, 0,
		    w->key_file), 0, "%s", hwtr_aw_errmsg(aw));
		ATF_CHECK_MSG(strncmp(w->key_file, "bid-", 4) == 0, "key %s",
		    w->key_file);
	}

	w->nrec = fx_records(w->rec, w->key_mem);
	for (i = 0; i < w->nrec; i++) {
		ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw, &w->rec[i]), 0,
		    "record %zu: %s", i, hwtr_aw_errmsg(aw));
		if (i == 4)
			ATF_REQUIRE_EQ(hwtr_aw_flush(aw), 0);
	}
	ATF_REQUIRE_EQ(hwtr_aw_add_aux(aw, "notes/readme.txt", "hello", 5), 0);
	ATF_CHECK_EQ(hwtr_aw_add_aux(aw, "notes/readme.txt", "x", 1),
	    -HWTR_E_EXISTS);
	ATF_CHECK_EQ(hwtr_aw_add_aux(aw, "../x", "x", 1), -HWTR_E_INVAL);
	memset(&w->end, 0, sizeof(w->end));
	w->end.end_ns = 1700000001000000000LL;
	w->end.exit_kind = HWTR_EXIT_SIGNAL;
	w->end.exit_value = 11;
	w->end.lost_bytes = 4096;
	w->end.lost_records = 3;
	hwtr_aw_set_end(aw, &w->end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "close: %s",
	    err);
}

static void
written_free(struct written *w)
{
	size_t i;

	for (i = 0; i < NCHUNK; i++)
		free(w->chunk[i]);
	free(w->img);
}

ATF_TC_WITHOUT_HEAD(round_trip_every_field);
ATF_TC_BODY(round_trip_every_field, tc)
{
	struct written w;
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc pt, cs;
	struct hwtr_cs_source src;
	const struct hwtr_capture_meta *rm;
	const struct hwtr_stream_desc *s;
	const struct hwtr_capture_end *e;
	const struct hwtr_image_desc *im;
	const struct hwtr_chunk_info *ci;
	struct hwtr_ar *ar;
	struct stat st;
	void *buf;
	size_t len, i, mi;
	int ix;

	write_full("a.hwtrace", &w, 1);
	ATF_CHECK_MSG(stat("a.hwtrace.partial", &st) != 0,
	    "the partial file is still there after close");
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "a.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 1);
	ATF_CHECK_EQ(hwtr_ar_status(ar)->version_major, HWTR_FORMAT_MAJOR);
	ATF_CHECK_EQ(hwtr_ar_status(ar)->version_minor, HWTR_FORMAT_MINOR);
	ATF_CHECK(hwtr_ar_status(ar)->why == NULL);
	for (i = 0; i < hwtr_ar_nwarnings(ar); i++)
		ATF_CHECK_MSG(0, "unexpected warning: %s", hwtr_ar_warning(ar, i));

	fx_meta(&m);
	rm = hwtr_ar_meta(ar);
	ATF_REQUIRE(rm != NULL);
	ATF_CHECK_STREQ(rm->host, m.host);
	ATF_CHECK_STREQ(rm->source, m.source);
	ATF_CHECK_STREQ(rm->source_version, m.source_version);
	ATF_CHECK_STREQ(rm->sideband_origin, m.sideband_origin);
	ATF_REQUIRE_EQ(rm->ncaveats, 1);
	ATF_CHECK_STREQ(rm->caveats[0], m.caveats[0]);
	ATF_CHECK_EQ(rm->cpu.vendor, m.cpu.vendor);
	ATF_CHECK_EQ(rm->cpu.family, m.cpu.family);
	ATF_CHECK_EQ(rm->cpu.model, m.cpu.model);
	ATF_CHECK_EQ(rm->cpu.stepping, m.cpu.stepping);
	ATF_CHECK_STREQ(rm->cpu.brand, m.cpu.brand);
	ATF_REQUIRE_EQ(rm->argc, 3);
	for (i = 0; i < 3; i++)
		ATF_CHECK_STREQ(rm->argv[i], m.argv[i]);
	ATF_CHECK_EQ(rm->start_ns, m.start_ns);
	ATF_CHECK_EQ(rm->tconv.valid, 1);
	ATF_CHECK_EQ(rm->tconv.tsc_zero, m.tconv.tsc_zero);
	ATF_CHECK_EQ(rm->tconv.ns_zero, m.tconv.ns_zero);
	ATF_CHECK_EQ(rm->tconv.mult, m.tconv.mult);
	ATF_CHECK_EQ(rm->tconv.shift, m.tconv.shift);
	ATF_CHECK_STREQ(rm->writer, "hwtrace " HWTRACE_VERSION);

	fx_streams(&pt, &cs, &src);
	ATF_REQUIRE_EQ(hwtr_ar_nstreams(ar), 2);
	s = hwtr_ar_stream(ar, 0);
	ATF_CHECK_EQ(s->id, 0);
	ATF_CHECK_STREQ(s->name, "tid 101");
	ATF_CHECK_EQ(s->format, HWTR_TF_INTEL_PT);
	ATF_CHECK_EQ(s->pid, 100);
	ATF_CHECK_EQ(s->tid, 101);
	ATF_CHECK_EQ(s->cpu, -1);
	ATF_CHECK_MSG(memcmp(&s->pt, &pt.pt, sizeof(pt.pt)) == 0,
	    "Intel PT configuration differs");
	s = hwtr_ar_stream(ar, 1);
	ATF_CHECK_EQ(s->id, 1);
	ATF_CHECK_STREQ(s->name, "etb 0");
	ATF_CHECK_EQ(s->format, HWTR_TF_CORESIGHT);
	ATF_CHECK_EQ(s->cpu, 2);
	ATF_CHECK_EQ(s->cs.frame, HWTR_CS_FRAME_CORESIGHT);
	ATF_REQUIRE_EQ(s->cs.nsources, 1);
	ATF_CHECK_EQ(s->cs.sources[0].protocol, HWTR_TF_ETMV4);
	ATF_CHECK_EQ(s->cs.sources[0].trace_id, 0x10);
	ATF_CHECK_STREQ(s->cs.sources[0].core, "Cortex-A57");
	ATF_REQUIRE_EQ(s->cs.sources[0].nregs, 3);
	for (i = 0; i < 3; i++) {
		ATF_CHECK_STREQ(s->cs.sources[0].regs[i].name, fx_regs[i].name);
		ATF_CHECK_EQ(s->cs.sources[0].regs[i].value, fx_regs[i].value);
	}

	ATF_REQUIRE_EQ(hwtr_ar_nchunks(ar, 0), NCHUNK);
	for (i = 0; i < NCHUNK; i++) {
		ci = hwtr_ar_chunk(ar, 0, i);
		ATF_CHECK_EQ(ci->offset, w.chunk_off[i]);
		ATF_CHECK_EQ(ci->len, chunk_len[i]);
		ATF_REQUIRE_EQ_MSG(hwtr_ar_read_chunk(ar, 0, i, &buf, &len), 0,
		    "%s", hwtr_ar_errmsg(ar));
		ATF_CHECK_EQ(len, chunk_len[i]);
		ATF_CHECK_MSG(memcmp(buf, w.chunk[i], len) == 0,
		    "chunk %zu bytes differ", i);
		free(buf);
	}
	ATF_REQUIRE_EQ(hwtr_ar_nchunks(ar, 1), 1);
	ATF_CHECK_EQ(hwtr_ar_chunk(ar, 1, 0)->offset, 0x100);

	ATF_REQUIRE_EQ(hwtr_ar_nimages(ar), 2);
	ix = hwtr_ar_find_image(ar, w.key_mem);
	ATF_REQUIRE(ix >= 0);
	im = hwtr_ar_image(ar, (size_t)ix);
	ATF_CHECK_STREQ(im->path, "[vdso]");
	ATF_CHECK_EQ(im->kind, HWTR_IMG_MEMORY);
	ATF_CHECK_EQ(im->size, w.img_len);
	ATF_CHECK_EQ(im->build_id_len, 0);
	ATF_REQUIRE_EQ(hwtr_ar_read_image(ar, (size_t)ix, &buf, &len), 0);
	ATF_CHECK(len == w.img_len && memcmp(buf, w.img, len) == 0);
	free(buf);
	ix = hwtr_ar_find_image(ar, w.key_file);
	ATF_REQUIRE(ix >= 0);
	im = hwtr_ar_image(ar, (size_t)ix);
	ATF_CHECK_STREQ(im->path, "/bin/true");
	ATF_CHECK_EQ(im->kind, HWTR_IMG_FILE);
	ATF_CHECK(im->build_id_len > 0);
	ATF_CHECK_EQ(hwtr_ar_find_image(ar, "bid-00"), -HWTR_E_NOENT);

	ATF_REQUIRE_EQ(hwtr_ar_nsideband(ar), w.nrec);
	for (i = 0; i < w.nrec; i++)
		fx_check_rec(&w.rec[i], hwtr_ar_sideband_rec(ar, i), i);

	ATF_REQUIRE_EQ(hwtr_ar_find_member(ar, "aux/notes/readme.txt", &mi), 0);
	ATF_CHECK_EQ(hwtr_ar_member(ar, mi)->kind, HWTR_M_AUX);
	ATF_REQUIRE_EQ(hwtr_ar_read_member(ar, mi, &buf, &len), 0);
	ATF_CHECK(len == 5 && memcmp(buf, "hello", 5) == 0);
	free(buf);
	ATF_CHECK_EQ(hwtr_ar_find_member(ar, "aux/none", &mi), -HWTR_E_NOENT);

	e = hwtr_ar_end(ar);
	ATF_REQUIRE(e != NULL);
	ATF_CHECK_EQ(e->end_ns, w.end.end_ns);
	ATF_CHECK_EQ(e->exit_kind, w.end.exit_kind);
	ATF_CHECK_EQ(e->exit_value, w.end.exit_value);
	ATF_CHECK_EQ(e->lost_bytes, w.end.lost_bytes);
	ATF_CHECK_EQ(e->lost_records, w.end.lost_records);
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "verify: %s", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	written_free(&w);
}

/* Copy the first @n bytes of @src to @dst. */
static void
cut_copy(const uint8_t *data, size_t n, const char *dst)
{
	FILE *f = fopen(dst, "wb");

	ATF_REQUIRE(f != NULL);
	ATF_REQUIRE(n == 0 || fwrite(data, 1, n, f) == n);
	fclose(f);
}

static uint8_t *
slurp(const char *path, size_t *lenp)
{
	struct stat st;
	uint8_t *p;
	FILE *f;

	ATF_REQUIRE(stat(path, &st) == 0);
	p = malloc((size_t)st.st_size + 1);
	f = fopen(path, "rb");
	ATF_REQUIRE(f != NULL && p != NULL);
	ATF_REQUIRE(fread(p, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	*lenp = (size_t)st.st_size;
	return (p);
}

/*
 * Cut the archive at every byte offset: the reader opens every prefix
 * that holds the manifest, says it was cut and where, and returns exactly
 * the chunks, images and sideband records whose members ended before the
 * cut.
 */
ATF_TC_WITHOUT_HEAD(truncation_at_every_offset);
ATF_TC_BODY(truncation_at_every_offset, tc)
{
	struct written w;
	struct hwtr_ar *full, *ar;
	const struct hwtr_member_info *mi;
	const struct hwtr_ar_status *st;
	uint8_t *data;
	size_t len, cut, i, j, step, nm, exp_chunks, exp_images, exp_sb;
	size_t manifest_end, end_end, opened = 0, e;
	int after_end;
	void *buf;
	size_t blen;
	int rc;

	write_full("t.hwtrace", &w, 0);
	data = slurp("t.hwtrace", &len);
	ATF_REQUIRE_EQ(hwtr_ar_open(&full, "t.hwtrace", NULL), 0);
	nm = hwtr_ar_nmembers(full);
	mi = hwtr_ar_member(full, 0);
	manifest_end = (size_t)(mi->offset + mi->csize);
	ATF_REQUIRE_EQ(hwtr_ar_find_member(full, "end.json", &e), 0);
	mi = hwtr_ar_member(full, e);
	end_end = (size_t)(mi->offset + mi->csize);
	/* Every byte near the small members, every 97th in the big chunk. */
	for (cut = 0; cut < len; cut += step) {
		/* Every byte near frame boundaries, a sample inside. */
		step = 1;
		for (i = 0; i < nm; i++) {
			mi = hwtr_ar_member(full, i);
			if (cut > mi->offset + 64 && cut + 64 < mi->offset +
			    mi->csize)
				step = mi->csize > 8192 ? 4099 : 7;
		}
		cut_copy(data, cut, "cut.hwtrace");
		rc = hwtr_ar_open(&ar, "cut.hwtrace", NULL);
		if (cut < manifest_end) {
			ATF_CHECK_MSG(rc < 0, "cut at %zu (before the manifest "
			    "ends at %zu) opened", cut, manifest_end);
			hwtr_ar_close(ar);
			continue;
		}
		ATF_REQUIRE_MSG(rc == 0, "cut at %zu: %s", cut,
		    hwtr_ar_errmsg(ar));
		opened++;
		st = hwtr_ar_status(ar);
		/* Cut after end.json: complete, only the tar end is missing. */
		after_end = cut >= end_end;
		ATF_CHECK_MSG(st->complete == after_end, "cut at %zu: complete "
		    "%d", cut, st->complete);
		ATF_CHECK_MSG((st->why != NULL) == !after_end,
		    "cut at %zu: reason '%s'", cut, st->why ? st->why : "(none)");
		ATF_CHECK_MSG(st->valid_end <= cut, "cut at %zu: valid_end %ju",
		    cut, (uintmax_t)st->valid_end);
		exp_chunks = exp_images = exp_sb = 0;
		for (i = 0; i < nm; i++) {
			mi = hwtr_ar_member(full, i);
			if (mi->offset + mi->csize > cut)
				break;
			if (mi->kind == HWTR_M_CHUNK &&
			    strncmp(mi->name, "streams/0/", 10) == 0)
				exp_chunks++;
			if (mi->kind == HWTR_M_IMAGE)
				exp_images++;
			if (mi->kind == HWTR_M_END)
				continue;
			if (mi->kind == HWTR_M_SIDEBAND)
				exp_sb += exp_sb == 0 ? 5 : w.nrec - 5;
		}
		ATF_CHECK_MSG(after_end || st->valid_end == (i > 0 ?
		    hwtr_ar_member(full, i - 1)->offset +
		    hwtr_ar_member(full, i - 1)->csize : 0),
		    "cut at %zu: valid_end %ju", cut, (uintmax_t)st->valid_end);
		ATF_CHECK_EQ_MSG(hwtr_ar_nchunks(ar, 0), exp_chunks,
		    "cut at %zu: expected %zu chunks, got %zu", cut, exp_chunks,
		    hwtr_ar_nchunks(ar, 0));
		ATF_CHECK_EQ_MSG(hwtr_ar_nimages(ar), exp_images,
		    "cut at %zu: expected %zu images, got %zu", cut, exp_images,
		    hwtr_ar_nimages(ar));
		ATF_CHECK_EQ_MSG(hwtr_ar_nsideband(ar), exp_sb,
		    "cut at %zu: expected %zu records, got %zu", cut, exp_sb,
		    hwtr_ar_nsideband(ar));
		ATF_CHECK((hwtr_ar_end(ar) != NULL) == after_end);
		for (j = 0; j < hwtr_ar_nchunks(ar, 0); j++) {
			ATF_CHECK_EQ_MSG(hwtr_ar_read_chunk(ar, 0, j, &buf, &blen),
			    0, "cut at %zu chunk %zu: %s", cut, j,
			    hwtr_ar_errmsg(ar));
			if (buf != NULL)
				ATF_CHECK(blen == chunk_len[j] &&
				    memcmp(buf, w.chunk[j], blen) == 0);
			free(buf);
		}
		hwtr_ar_close(ar);
	}
	ATF_CHECK_MSG(opened > 100, "only %zu cuts opened", opened);
	hwtr_ar_close(full);
	free(data);
	written_free(&w);
}

/* A writer killed with SIGKILL leaves a readable ".partial". */
ATF_TC_WITHOUT_HEAD(killed_writer_leaves_readable_partial);
ATF_TC_BODY(killed_writer_leaves_readable_partial, tc)
{
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc d;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	uint8_t buf[10000];
	char err[256];
	int pfd[2], status;
	pid_t pid;
	char c;

	ATF_REQUIRE(pipe(pfd) == 0);
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		fx_meta(&m);
		memset(&d, 0, sizeof(d));
		d.format = HWTR_TF_INTEL_PT;
		d.pid = d.tid = d.cpu = -1;
		if (hwtr_aw_open(&aw, "k.hwtrace", &m, NULL, err, sizeof(err)) ||
		    hwtr_aw_add_stream(aw, &d, NULL))
			_exit(1);
		fx_fill(buf, sizeof(buf), 1);
		if (hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, buf, sizeof(buf)) ||
		    hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, buf, sizeof(buf)))
			_exit(1);
		(void)write(pfd[1], "x", 1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	ATF_REQUIRE_EQ(read(pfd[0], &c, 1), 1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "k.hwtrace.partial", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 0);
	ATF_CHECK_EQ(hwtr_ar_nstreams(ar), 1);
	/*
	 * The first chunk was in the file when the second call returned; the
	 * second one reaches it from the background, here or not yet
	 * (t_awpipe checks that it does).
	 */
	ATF_CHECK_MSG(hwtr_ar_nchunks(ar, 0) == 1 || hwtr_ar_nchunks(ar, 0) == 2,
	    "%zu chunks, expected 1 or 2", hwtr_ar_nchunks(ar, 0));
	if (hwtr_ar_nchunks(ar, 0) == 2)
		ATF_CHECK_EQ(hwtr_ar_chunk(ar, 0, 1)->offset, sizeof(buf));
	hwtr_ar_close(ar);
}

/*
 * GNU tar and the zstd command read the archive: the member list equals
 * the reader's, and an extracted chunk equals what was written.
 */
ATF_TC_WITHOUT_HEAD(tar_lists_and_extracts);
ATF_TC_BODY(tar_lists_and_extracts, tc)
{
	struct written w;
	struct hwtr_ar *ar;
	char line[512], cmd[256];
	const char *tools[] = { "tar --zstd -tf a.hwtrace",
	    "zstd -dc a.hwtrace | tar -tf -" };
	uint8_t *x;
	size_t i, t, n, xlen;
	FILE *f;

	if (system("command -v zstd >/dev/null && command -v tar >/dev/null"))
		atf_tc_skip("zstd or tar not installed");
	write_full("a.hwtrace", &w, 0);
	ATF_REQUIRE_EQ(hwtr_ar_open(&ar, "a.hwtrace", NULL), 0);
	for (t = 0; t < 2; t++) {
		snprintf(cmd, sizeof(cmd), "%s 2>&1", tools[t]);
		f = popen(cmd, "r");
		ATF_REQUIRE(f != NULL);
		for (n = 0; fgets(line, sizeof(line), f) != NULL; n++) {
			line[strcspn(line, "\n")] = '\0';
			if (n < hwtr_ar_nmembers(ar))
				ATF_CHECK_STREQ_MSG(line,
				    hwtr_ar_member(ar, n)->name, "%s: line %zu",
				    tools[t], n);
		}
		ATF_CHECK_EQ_MSG(pclose(f), 0, "%s failed", tools[t]);
		ATF_CHECK_EQ_MSG(n, hwtr_ar_nmembers(ar), "%s: %zu names, the "
		    "reader has %zu", tools[t], n, hwtr_ar_nmembers(ar));
	}
	ATF_REQUIRE_EQ(system("mkdir x && tar --zstd -xf a.hwtrace -C x"), 0);
	for (i = 0; i < NCHUNK; i++) {
		snprintf(cmd, sizeof(cmd), "x/streams/0/%016jx.chunk",
		    (uintmax_t)w.chunk_off[i]);
		x = slurp(cmd, &xlen);
		ATF_CHECK_MSG(xlen == chunk_len[i] && memcmp(x, w.chunk[i],
		    xlen) == 0, "extracted %s differs", cmd);
		free(x);
	}
	hwtr_ar_close(ar);
	written_free(&w);
}

struct reader_arg {
	struct hwtr_ar	*ar;
	struct written	*w;
	int		bad;
};

static void *
reader_thread(void *arg)
{
	struct reader_arg *ra = arg;
	void *buf;
	size_t len, i, round;

	for (round = 0; round < 20; round++)
		for (i = 1; i < NCHUNK; i++) {
			if (hwtr_ar_read_chunk(ra->ar, 0, i, &buf, &len) != 0 ||
			    len != chunk_len[i] || memcmp(buf, ra->w->chunk[i],
			    len) != 0)
				ra->bad++;
			free(buf);
		}
	return (NULL);
}

/*
 * Damage the bytes of the first chunk's frame: later chunks still read
 * (from several threads at once), the damaged one fails, and verify names
 * it.
 */
ATF_TC_WITHOUT_HEAD(random_access_survives_damage);
ATF_TC_BODY(random_access_survives_damage, tc)
{
	struct written w;
	struct hwtr_ar *ar;
	const struct hwtr_member_info *mi;
	struct reader_arg ra[4];
	pthread_t th[4];
	uint8_t *data;
	size_t len, i, blen;
	void *buf;
	char name[64];
	FILE *f;

	write_full("d.hwtrace", &w, 0);
	ATF_REQUIRE_EQ(hwtr_ar_open(&ar, "d.hwtrace", NULL), 0);
	mi = hwtr_ar_member(ar, hwtr_ar_chunk(ar, 0, 0)->member);
	snprintf(name, sizeof(name), "%s", mi->name);
	data = slurp("d.hwtrace", &len);
	for (i = 0; i < 16; i++)
		data[mi->offset + mi->csize / 2 + i] ^= 0x5a;
	hwtr_ar_close(ar);
	f = fopen("d.hwtrace", "wb");
	ATF_REQUIRE(fwrite(data, 1, len, f) == len);
	fclose(f);

	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "d.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 1);
	ATF_CHECK(hwtr_ar_read_chunk(ar, 0, 0, &buf, &blen) < 0);
	ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), name) != NULL,
	    "read error '%s' does not name '%s'", hwtr_ar_errmsg(ar), name);
	free(buf);
	for (i = 0; i < 4; i++) {
		ra[i].ar = ar;
		ra[i].w = &w;
		ra[i].bad = 0;
		ATF_REQUIRE(pthread_create(&th[i], NULL, reader_thread,
		    &ra[i]) == 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ATF_CHECK_EQ_MSG(ra[i].bad, 0, "thread %zu: %d bad reads", i,
		    ra[i].bad);
	}
	ATF_CHECK(hwtr_ar_verify(ar) < 0);
	ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), name) != NULL,
	    "verify error '%s' does not name '%s'", hwtr_ar_errmsg(ar), name);
	hwtr_ar_close(ar);
	free(data);
	written_free(&w);
}

/*
 * Without its trailer the archive is scanned frame by frame: the view is
 * the same as through the table of contents.
 */
ATF_TC_WITHOUT_HEAD(scan_and_toc_agree);
ATF_TC_BODY(scan_and_toc_agree, tc)
{
	struct written w;
	struct hwtr_ar *a, *b;
	const struct hwtr_member_info *x, *y;
	uint8_t *data;
	size_t len, i;

	write_full("s.hwtrace", &w, 1);
	data = slurp("s.hwtrace", &len);
	cut_copy(data, len - 40, "s2.hwtrace");
	ATF_REQUIRE_EQ(hwtr_ar_open(&a, "s.hwtrace", NULL), 0);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&b, "s2.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(b));
	ATF_CHECK_EQ(hwtr_ar_status(b)->complete, 1);
	ATF_REQUIRE_EQ(hwtr_ar_nmembers(a), hwtr_ar_nmembers(b));
	for (i = 0; i < hwtr_ar_nmembers(a); i++) {
		x = hwtr_ar_member(a, i);
		y = hwtr_ar_member(b, i);
		ATF_CHECK_STREQ(x->name, y->name);
		ATF_CHECK_EQ(x->kind, y->kind);
		ATF_CHECK_EQ(x->offset, y->offset);
		ATF_CHECK_EQ(x->csize, y->csize);
		ATF_CHECK_EQ(x->usize, y->usize);
	}
	ATF_CHECK_EQ(hwtr_ar_nsideband(a), hwtr_ar_nsideband(b));
	ATF_CHECK_EQ(hwtr_ar_nimages(a), hwtr_ar_nimages(b));
	ATF_CHECK_EQ(hwtr_ar_nchunks(a, 0), hwtr_ar_nchunks(b, 0));
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(b), 0, "%s", hwtr_ar_errmsg(b));
	hwtr_ar_close(a);
	hwtr_ar_close(b);
	free(data);
	written_free(&w);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, random_access_survives_damage);
	ATF_TP_ADD_TC(tp, scan_and_toc_agree);
	ATF_TP_ADD_TC(tp, tar_lists_and_extracts);
	ATF_TP_ADD_TC(tp, round_trip_every_field);
	ATF_TP_ADD_TC(tp, truncation_at_every_offset);
	ATF_TP_ADD_TC(tp, killed_writer_leaves_readable_partial);
	return (atf_no_error());
}
