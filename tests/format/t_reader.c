/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The reader against archives crafted here with libarchive and zstd:
 * version rules, unknown members / record types / fields skipped, and
 * every hostile case of hwtrace(5) refused with a clear error.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "craft.h"

/* Open @path expecting failure @code with @what in the message. */
static void
expect_refused(const char *path, const struct hwtr_ar_opts *o, int code,
    const char *what)
{
	struct hwtr_ar *ar;
	int rc;

	rc = hwtr_ar_open(&ar, path, o);
	ATF_CHECK_EQ_MSG(rc, -code, "expected %s (%s), got %d (%s): %s",
	    hwtr_errstr(-code), what, rc, hwtr_errstr(rc),
	    ar ? hwtr_ar_errmsg(ar) : "");
	if (ar != NULL)
		ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), what) != NULL,
		    "message '%s' does not mention '%s'", hwtr_ar_errmsg(ar),
		    what);
	hwtr_ar_close(ar);
}

/* A valid crafted archive: manifest, one stream, a chunk, + @extra. */
static void
craft_with(const char *path, const struct craft_member *extra, size_t n,
    const struct craft_opts *o)
{
	struct craft_member m[16];
	char *man = craft_manifest("1.0", "");
	size_t i;

	ATF_REQUIRE(n + 3 <= 16);
	memset(m, 0, sizeof(m));
	craft_set(&m[0], "hwtrace.json", man, strlen(man));
	craft_set(&m[1], "streams/0/stream.json", CRAFT_STREAM0,
	    strlen(CRAFT_STREAM0));
	craft_set(&m[2], "streams/0/0000000000000000.chunk", "0123456789", 10);
	for (i = 0; i < n; i++)
		m[3 + i] = extra[i];
	craft(path, m, n + 3, o);
	free(man);
}

/* craft_with @path and @extra, then expect_refused: a format error, @what. */
static void
refused_with(const char *path, const struct craft_member *extra, size_t n,
    const char *what)
{
	craft_with(path, extra, n, NULL);
	expect_refused(path, NULL, HWTR_E_FORMAT, what);
}

/* refused_with @path and the one member @x, first renamed @name. */
static void
renamed_refused(const char *path, struct craft_member *x, const char *name,
    const char *what)
{
	x->name = name;
	refused_with(path, x, 1, what);
}

/* craft @path of @m alone, then expect_refused: a format error, @what. */
static void
refused_crafted(const char *path, const struct craft_member *m, size_t n,
    const char *what)
{
	craft(path, m, n, NULL);
	expect_refused(path, NULL, HWTR_E_FORMAT, what);
}

ATF_TC_WITHOUT_HEAD(crafted_archive_opens);
ATF_TC_BODY(crafted_archive_opens, tc)
{
	struct hwtr_ar *ar;
	void *buf;
	size_t len;

	/* The control: without a hostile member the same archive opens. */
	craft_with("ok.hwtrace", NULL, 0, NULL);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "ok.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 0);
	ATF_CHECK_MSG(strstr(hwtr_ar_status(ar)->why, "end.json") != NULL,
	    "why: %s", hwtr_ar_status(ar)->why);
	ATF_REQUIRE_EQ(hwtr_ar_nchunks(ar, 0), 1);
	ATF_REQUIRE_EQ(hwtr_ar_read_chunk(ar, 0, 0, &buf, &len), 0);
	ATF_CHECK(len == 10 && memcmp(buf, "0123456789", 10) == 0);
	free(buf);
	hwtr_ar_close(ar);
}

ATF_TC_WITHOUT_HEAD(newer_major_refused_naming_both_versions);
ATF_TC_BODY(newer_major_refused_naming_both_versions, tc)
{
	struct craft_member m[1];
	char *man = strdup("{\"format\": \"3.0\", \"host\": 5, "
	    "\"everything\": \"different\"}");

	/* A newer major may change anything: nothing else is read. */
	memset(m, 0, sizeof(m));
	craft_set(&m[0], "hwtrace.json", man, strlen(man));
	craft("v3.hwtrace", m, 1, NULL);
	expect_refused("v3.hwtrace", NULL, HWTR_E_VERSION,
	    "format version 3.0 is newer than this hwtrace (reads 1.x)");
	free(man);
}

ATF_TC_WITHOUT_HEAD(newer_minor_read_unknowns_skipped);
ATF_TC_BODY(newer_minor_read_unknowns_skipped, tc)
{
	struct craft_member m[4];
	struct hwtr_ar *ar;
	uint8_t sb[256];
	char *man = craft_manifest("1.9", ", \"future_field\": {\"x\": 1}");
	const char *stream = "{\"id\": 0, \"name\": \"s\", \"format\": \"none\", "
	    "\"pid\": -1, \"tid\": -1, \"cpu\": -1, \"colour\": \"blue\"}";
	size_t n = 0, i, nw;
	int seen_member = 0, seen_field = 0, seen_type = 0, seen_trail = 0;
	int seen_sfield = 0;

	/* A known record, one of unknown type 200, one with 8 extra bytes. */
	n += sb_hdr(sb + n, 200, 24 + 6, 5, 1, 1);
	n += sb_put(sb + n, 0xdeadbeef, 4);
	n += sb_put(sb + n, 0, 2);
	n += sb_hdr(sb + n, 8 /* munmap */, 24 + 16 + 8, 6, 1, 2);
	n += sb_put(sb + n, 0x1000, 8);
	n += sb_put(sb + n, 0x2000, 8);
	n += sb_put(sb + n, 0x1122334455667788ULL, 8);
	n += sb_hdr(sb + n, 1 /* proc start */, 24 + 4, 7, 3, 3);
	n += sb_put(sb + n, 1, 4);

	memset(m, 0, sizeof(m));
	craft_set(&m[0], "hwtrace.json", man, strlen(man));
	craft_set(&m[1], "streams/0/stream.json", stream, strlen(stream));
	craft_set(&m[2], "future/thing.bin", "zz", 2);
	craft_set(&m[3], "sideband/00000000.sb", sb, n);
	craft("v19.hwtrace", m, 4, NULL);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "v19.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->version_major, 1);
	ATF_CHECK_EQ(hwtr_ar_status(ar)->version_minor, 9);
	ATF_REQUIRE_EQ(hwtr_ar_nsideband(ar), 2);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 0)->type, HWTR_SB_MUNMAP);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 0)->u.munmap.addr, 0x1000);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 0)->u.munmap.len, 0x2000);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 1)->type, HWTR_SB_PROC_START);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 1)->u.proc_start.ppid, 1);
	ATF_CHECK_EQ(hwtr_ar_sideband_rec(ar, 1)->pid, 3);
	nw = hwtr_ar_nwarnings(ar);
	for (i = 0; i < nw; i++) {
		const char *w = hwtr_ar_warning(ar, i);

		seen_member |= strstr(w, "future/thing.bin") != NULL;
		seen_field |= strstr(w, "future_field") != NULL;
		seen_sfield |= strstr(w, "colour") != NULL;
		seen_type |= strstr(w, "unknown type 200") != NULL;
		seen_trail |= strstr(w, "munmap records carry fields") != NULL;
	}
	ATF_CHECK_MSG(seen_member, "no warning about the unknown member");
	ATF_CHECK_MSG(seen_field, "no warning about the unknown manifest field");
	ATF_CHECK_MSG(seen_sfield, "no warning about the unknown stream field");
	ATF_CHECK_MSG(seen_type, "no warning about the unknown record type");
	ATF_CHECK_MSG(seen_trail, "no warning about unknown trailing fields");
	hwtr_ar_close(ar);
	free(man);
}

ATF_TC_WITHOUT_HEAD(sideband_record_past_member_end);
ATF_TC_BODY(sideband_record_past_member_end, tc)
{
	struct craft_member x[1];
	uint8_t sb[128];
	size_t n = 0;

	n += sb_hdr(sb + n, 1, 24 + 4, 1, 1, 1);
	n += sb_put(sb + n, 0, 4);
	/* Claims 200 bytes, 28 remain. */
	n += sb_hdr(sb + n, 1, 200, 1, 1, 1);
	n += sb_put(sb + n, 0, 4);
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "sideband/00000000.sb", sb, n);
	refused_with("sb.hwtrace", x, 1,
	    "'sideband/00000000.sb' offset 0x1c: record type 1 claims 200 bytes");
}

ATF_TC_WITHOUT_HEAD(hostile_names_refused);
ATF_TC_BODY(hostile_names_refused, tc)
{
	static const char *const bad[] = { "/etc/passwd", "../x",
	    "aux/../../x", "aux/a b", "aux/x\\y", "aux//x", "aux/./x",
	    "aux/x:y", "aux/x*", "" };
	struct craft_member x[1];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(x, 0, sizeof(x));
		craft_set(&x[0], bad[i], "x", 1);
		refused_with("name.hwtrace", x, 1,
		    "is absolute, has '..' or characters outside");
	}
}

ATF_TC_WITHOUT_HEAD(links_devices_dirs_fifos_refused);
ATF_TC_BODY(links_devices_dirs_fifos_refused, tc)
{
	struct craft_member x[1];
	static const unsigned types[] = { AE_IFLNK, AE_IFCHR, AE_IFBLK,
	    AE_IFDIR, AE_IFIFO };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(x, 0, sizeof(x));
		x[0].name = "aux/thing";
		x[0].type = types[i];
		x[0].link = "/etc/passwd";
		refused_with("link.hwtrace", x, 1,
		    "not a regular file");
	}
	/* A hard link is a regular-file entry naming another file. */
	memset(x, 0, sizeof(x));
	x[0].name = "aux/hard";
	x[0].link = "hwtrace.json";
	craft_with("hard.hwtrace", x, 1, NULL);
	expect_refused("hard.hwtrace", NULL, HWTR_E_FORMAT, "not a regular file");
}

ATF_TC_WITHOUT_HEAD(duplicate_names_refused);
ATF_TC_BODY(duplicate_names_refused, tc)
{
	struct craft_member x[1];

	memset(x, 0, sizeof(x));
	craft_set(&x[0], "streams/0/stream.json", CRAFT_STREAM0,
	    strlen(CRAFT_STREAM0));
	refused_with("dup.hwtrace", x, 1,
	    "'streams/0/stream.json' at 0x");
}

ATF_TC_WITHOUT_HEAD(size_and_count_limits);
ATF_TC_BODY(size_and_count_limits, tc)
{
	struct hwtr_ar_opts o;
	struct craft_member x[2];
	uint8_t *big = malloc(5000), sb[64];
	size_t i, n;

	for (i = 0; i < 5000; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 5));
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "aux/big", big, 5000);
	craft_with("big.hwtrace", x, 1, NULL);
	memset(&o, 0, sizeof(o));
	o.max_member_size = 4096;
	expect_refused("big.hwtrace", &o, HWTR_E_LIMIT, "aux/big");
	memset(&o, 0, sizeof(o));
	o.max_members = 3;
	expect_refused("big.hwtrace", &o, HWTR_E_LIMIT, "more than 3 members");

	n = sb_hdr(sb, 1, 28, 1, 1, 1);
	n += sb_put(sb + n, 0, 4);
	n += sb_hdr(sb + n, 1, 28, 1, 1, 1);
	n += sb_put(sb + n, 0, 4);
	craft_set(&x[0], "sideband/00000000.sb", sb, n);
	craft_with("nsb.hwtrace", x, 1, NULL);
	memset(&o, 0, sizeof(o));
	o.max_sideband = 1;
	expect_refused("nsb.hwtrace", &o, HWTR_E_LIMIT,
	    "more than 1 sideband records");
	free(big);
}

ATF_TC_WITHOUT_HEAD(window_bomb_refused);
ATF_TC_BODY(window_bomb_refused, tc)
{
	struct craft_opts o = { 30, 1, 0, 0, 0 };
	struct craft_member x[1];

	/* No content size and a 1 GiB window: the frame header says so. */
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "aux/w", "window", 6);
	craft_with("win.hwtrace", x, 1, &o);
	expect_refused("win.hwtrace", NULL, HWTR_E_LIMIT,
	    "exceeds the limit 2^27");
}

/*
 * 16 MiB of zeros compress some 5000 times: a small program's .data can do
 * that, so such a member opens as long as the content above the ratio
 * stays within the allowance (1 GiB by default), and is refused beyond it.
 */
ATF_TC_WITHOUT_HEAD(ratio_bomb_refused);
ATF_TC_BODY(ratio_bomb_refused, tc)
{
	size_t len = 16u << 20, blen, mi;
	uint8_t *z = calloc(1, len);
	struct hwtr_ar_opts o;
	struct craft_member x[2];
	struct hwtr_ar *ar;
	void *buf;

	ATF_REQUIRE(z != NULL);
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "aux/zeros", z, len);
	craft_set(&x[1], "aux/zeros2", z, len);
	craft_with("ratio.hwtrace", x, 1, NULL);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "ratio.hwtrace", NULL), 0,
	    "16 MiB of zeros refused by default: %s", hwtr_ar_errmsg(ar));
	ATF_REQUIRE_EQ(hwtr_ar_find_member(ar, "aux/zeros", &mi), 0);
	ATF_REQUIRE_EQ(hwtr_ar_read_member(ar, mi, &buf, &blen), 0);
	ATF_CHECK_MSG(blen == len && memcmp(buf, z, len) == 0,
	    "aux/zeros: %zu bytes read back, expected %zu zeros", blen, len);
	free(buf);
	hwtr_ar_close(ar);

	memset(&o, 0, sizeof(o));
	o.ratio_allowance = len - 1;
	expect_refused("ratio.hwtrace", &o, HWTR_E_LIMIT, "ratio limit 4096");

	/*
	 * Two such members: the allowance is for all of them together
	 * (each frame holds its tar header too, 512 bytes).
	 */
	craft_with("ratio2.hwtrace", x, 2, NULL);
	o.ratio_allowance = 2 * len + 4096;
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "ratio2.hwtrace", &o), 0,
	    "two members within the allowance refused: %s",
	    hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	o.ratio_allowance = 3 * len / 2;
	expect_refused("ratio2.hwtrace", &o, HWTR_E_LIMIT,
	    "member 'aux/zeros2' at 0x");
	free(z);
}

ATF_TC_WITHOUT_HEAD(wrong_json_types_refused);
ATF_TC_BODY(wrong_json_types_refused, tc)
{
	struct craft_member m[2];
	char *man = craft_manifest("1.0", "");
	char *bad;
	const char *stream = "{\"id\": 0, \"name\": \"s\", \"format\": \"none\", "
	    "\"pid\": \"12\", \"tid\": -1, \"cpu\": -1}";

	/* jansson refuses duplicate keys: replace the field instead. */
	bad = strdup(man);
	memcpy(strstr(bad, "\"family\": 25"), "\"family\": [] ", 12);
	memset(m, 0, sizeof(m));
	craft_set(&m[0], "hwtrace.json", bad, strlen(bad));
	refused_crafted("j1.hwtrace", m, 1,
	    "hwtrace.json: field 'cpu.family': expected an integer, got an array");

	m[0].data = man;
	m[0].len = strlen(man);
	craft_set(&m[1], "streams/0/stream.json", stream, strlen(stream));
	refused_crafted("j2.hwtrace", m, 2,
	    "streams/0/stream.json: field 'pid': expected an integer, got a string");
	free(bad);
	free(man);
}

ATF_TC_WITHOUT_HEAD(bad_cross_references_refused);
ATF_TC_BODY(bad_cross_references_refused, tc)
{
	struct craft_member x[2];
	uint8_t sb[128];
	size_t n;

	memset(x, 0, sizeof(x));
	craft_set(&x[0], "streams/7/0000000000000000.chunk", "abc", 3);
	refused_with("x1.hwtrace", x, 1,
	    "stream 7 has no stream.json before it");

	renamed_refused("x2.hwtrace", x, "streams/0/0000000000000004.chunk",
	    "stream offset 0x4 goes back before 0xa");

	renamed_refused("x3.hwtrace", x, "images/bid-0011",
	    "image without a description");

	x[0].name = "images/bid-0011.json";
	x[0].data = "{\"key\": \"bid-0011\", \"path\": null, \"kind\": "
	    "\"file\", \"build_id\": \"0011\", \"size\": 5, \"sha256\": "
	    "\"0000000000000000000000000000000000000000000000000000000000000000\"}";
	x[0].len = strlen(x[0].data);
	craft_set(&x[1], "images/bid-0011", "abc", 3);
	refused_with("x6.hwtrace", x, 2,
	    "'images/bid-0011': 3 bytes, its description says 5");
	renamed_refused("x7.hwtrace", x, "images/bid-0022.json",
	    "images/bid-0022.json: field 'key' is 'bid-0011'");
	memset(x, 0, sizeof(x));

	n = sb_hdr(sb, 10 /* lost */, 24 + 24, 1, 1, 1);
	n += sb_put(sb + n, 9, 4);
	n += sb_put(sb + n, 1, 4);
	n += sb_put(sb + n, 100, 8);
	n += sb_put(sb + n, 0, 8);
	craft_set(&x[0], "sideband/00000000.sb", sb, n);
	refused_with("x4.hwtrace", x, 1,
	    "lost record names stream 9, which does not exist");

	n = sb_hdr(sb, 7 /* mmap */, 0, 1, -1, -1);
	n += sb_put(sb + n, 0x1000, 8);
	n += sb_put(sb + n, 0x1000, 8);
	n += sb_put(sb + n, 0, 8);
	n += sb_put(sb + n, 5, 4);
	n += sb_put(sb + n, 2, 4);
	n += sb_put(sb + n, 0, 1);
	n += sb_put(sb + n, 1, 2);
	sb[n++] = 'p';
	n += sb_put(sb + n, 6, 2);
	memcpy(sb + n, "bid-99", 6);
	n += 6;
	sb_put(sb + 4, n, 4);
	x[0].len = n;
	refused_with("x5.hwtrace", x, 1,
	    "mmap record names image 'bid-99', which does not exist");
}

ATF_TC_WITHOUT_HEAD(not_an_archive);
ATF_TC_BODY(not_an_archive, tc)
{
	struct craft_member m[1];
	FILE *f;

	f = fopen("junk", "w");
	fputs("this is not an archive\n", f);
	fclose(f);
	expect_refused("junk", NULL, HWTR_E_FORMAT, "not an hwtrace archive");
	memset(m, 0, sizeof(m));
	craft_set(&m[0], "aux/first", "x", 1);
	refused_crafted("first.hwtrace", m, 1,
	    "the first member is 'aux/first'");
	expect_refused("/nonexistent/x", NULL, HWTR_E_NOENT, "/nonexistent/x");
}

/*
 * Copy @src to @dst with its end.json text passed through @edit: the
 * frames before end.json are kept, end.json, the tar end and the trailer
 * are written anew (so the trailer points at the edited table).
 */
static void
rewrite_end(const char *src, const char *dst, void (*edit)(char *))
{
	struct craft_buf b = { NULL, 0, 0 };
	struct archive *a;
	struct archive_entry *e;
	struct hwtr_ar *ar;
	const struct hwtr_member_info *mi;
	char *text;
	uint8_t *data, tr[40];
	void *buf;
	size_t len, i;
	long endoff, endlen;
	FILE *in, *out;

	ATF_REQUIRE_EQ(hwtr_ar_open(&ar, src, NULL), 0);
	ATF_REQUIRE_EQ(hwtr_ar_find_member(ar, "end.json", &i), 0);
	mi = hwtr_ar_member(ar, i);
	endoff = (long)mi->offset;
	ATF_REQUIRE_EQ(hwtr_ar_read_member(ar, i, &buf, &len), 0);
	hwtr_ar_close(ar);
	text = calloc(1, len + 64);
	memcpy(text, buf, len);
	free(buf);
	edit(text);

	data = malloc((size_t)endoff);
	in = fopen(src, "rb");
	ATF_REQUIRE(fread(data, 1, (size_t)endoff, in) == (size_t)endoff);
	fclose(in);
	out = fopen(dst, "wb");
	ATF_REQUIRE(fwrite(data, 1, (size_t)endoff, out) == (size_t)endoff);
	a = archive_write_new();
	archive_write_set_format_pax(a);
	archive_write_set_bytes_per_block(a, 0);
	archive_write_set_bytes_in_last_block(a, 1);
	archive_write_open2(a, &b, NULL, craft_cb, NULL, NULL);
	e = archive_entry_new();
	archive_entry_set_pathname(e, "end.json");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)strlen(text));
	archive_write_header(a, e);
	archive_write_data(a, text, strlen(text));
	archive_write_finish_entry(a);
	archive_entry_free(e);
	craft_frame(out, &b, NULL);
	endlen = ftell(out) - endoff;
	archive_write_close(a);
	craft_frame(out, &b, NULL);
	archive_write_free(a);
	memset(tr, 0, sizeof(tr));
	sb_put(tr, 0x184D2A5E, 4);
	sb_put(tr + 4, 32, 4);
	memcpy(tr + 8, "HWTRACE", 8);
	sb_put(tr + 16, 1, 8);
	sb_put(tr + 24, (uint64_t)endoff, 8);
	sb_put(tr + 32, (uint64_t)endlen, 8);
	ATF_REQUIRE(fwrite(tr, 1, sizeof(tr), out) == sizeof(tr));
	fclose(out);
	free(b.p);
	free(data);
	free(text);
}

static void
write_small(const char *path)
{
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc d;
	struct hwtr_aw *aw;
	char err[256], chunk[1000];
	size_t i;

	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	d.format = HWTR_TF_INTEL_PT;
	d.pid = d.tid = d.cpu = -1;
	for (i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)(i * 13 + (i >> 3));
	ATF_REQUIRE_EQ(hwtr_aw_open(&aw, path, &m, NULL, err, sizeof(err)), 0);
	ATF_REQUIRE_EQ(hwtr_aw_add_stream(aw, &d, NULL), 0);
	for (i = 0; i < 3; i++)
		ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, 0, HWTR_AW_APPEND, chunk,
		    sizeof(chunk)), 0);
	ATF_REQUIRE_EQ(hwtr_aw_close(aw, err, sizeof(err)), 0);
}

static void
edit_none(char *t)
{
	(void)t;
}

/* Move the second chunk's frame offset by one byte. */
static void
edit_gap(char *t)
{
	char *p = strstr(t, "\"streams/0/00000000000003e8.chunk\"");
	char *o, tail[8192];
	long v;

	ATF_REQUIRE(p != NULL);
	o = strstr(p, "\"offset\": ");
	ATF_REQUIRE(o != NULL);
	o += 10;
	v = strtol(o, &p, 10);
	snprintf(tail, sizeof(tail), "%s", p);
	sprintf(o, "%ld%s", v + 1, tail);
}

/* Name the first chunk's frame "aux/fake". */
static void
edit_name(char *t)
{
	char *p = strstr(t, "\"streams/0/0000000000000000.chunk\"");
	char tail[8192];

	ATF_REQUIRE(p != NULL);
	snprintf(tail, sizeof(tail), "%s", p + 34);
	sprintf(p, "\"aux/fake\"%s", tail);
}

ATF_TC_WITHOUT_HEAD(table_of_contents_checked);
ATF_TC_BODY(table_of_contents_checked, tc)
{
	struct hwtr_ar *ar;
	size_t i;

	write_small("toc.hwtrace");
	/* The control: rewritten unchanged, it opens through its trailer. */
	rewrite_end("toc.hwtrace", "same.hwtrace", edit_none);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "same.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 1);
	ATF_CHECK_EQ(hwtr_ar_nchunks(ar, 0), 3);
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "%s", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);

	rewrite_end("toc.hwtrace", "gap.hwtrace", edit_gap);
	expect_refused("gap.hwtrace", NULL, HWTR_E_FORMAT,
	    "member 'streams/0/00000000000003e8.chunk': frame at");

	/*
	 * A table naming a frame wrongly: refused when opened, as a scan
	 * refuses what it finds wrong, not only by verify (issue 16).
	 */
	rewrite_end("toc.hwtrace", "name.hwtrace", edit_name);
	expect_refused("name.hwtrace", NULL, HWTR_E_FORMAT,
	    "member 'aux/fake': the frame at 0x");
	(void)i;
}

/*
 * Issue 16: an archive with a table of contents (end.json and the trailer)
 * gets the checks a truncated one gets.  Each hostile member is listed in
 * end.json under a harmless name and size; the reader must look at the
 * frame and the tar header itself.
 */
ATF_TC_WITHOUT_HEAD(toc_members_checked_like_scanned_ones);
ATF_TC_BODY(toc_members_checked_like_scanned_ones, tc)
{
	struct craft_opts o;
	struct craft_member x[1];
	struct hwtr_ar *ar;
	static const unsigned types[] = { AE_IFLNK, AE_IFCHR, AE_IFBLK,
	    AE_IFDIR, AE_IFIFO };
	static const char *const names[] = { "/etc/x", "aux/../x",
	    "../../x" };
	size_t i;

	memset(&o, 0, sizeof(o));
	o.toc = 1;
	/* The control: the same archive, opened through its table. */
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "aux/thing", "thing", 5);
	craft_with("ok.hwtrace", x, 1, &o);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "ok.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_status(ar)->complete, 1);
	ATF_CHECK_EQ(hwtr_ar_nchunks(ar, 0), 1);
	ATF_CHECK_EQ(hwtr_ar_nwarnings(ar), 0);
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "%s", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(x, 0, sizeof(x));
		x[0].name = "aux/thing";
		x[0].type = types[i];
		x[0].link = "/etc/shadow";
		craft_with("link.hwtrace", x, 1, &o);
		expect_refused("link.hwtrace", NULL, HWTR_E_FORMAT,
		    "not a regular file");
	}
	memset(x, 0, sizeof(x));
	x[0].name = "aux/hard";
	x[0].link = "/etc/shadow";
	craft_with("hard.hwtrace", x, 1, &o);
	expect_refused("hard.hwtrace", NULL, HWTR_E_FORMAT,
	    "not a regular file");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		memset(x, 0, sizeof(x));
		x[0].name = names[i];
		x[0].toc_name = "aux/x";
		x[0].data = "x";
		x[0].len = 1;
		craft_with("name.hwtrace", x, 1, &o);
		expect_refused("name.hwtrace", NULL, HWTR_E_FORMAT,
		    "is absolute, has '..' or characters outside");
	}
	/* A tar header claiming 2^60 bytes, listed with its real size. */
	memset(x, 0, sizeof(x));
	x[0].name = "aux/huge";
	x[0].claim_size = 1ULL << 60;
	craft_with("huge.hwtrace", x, 1, &o);
	expect_refused("huge.hwtrace", NULL, HWTR_E_FORMAT,
	    "member 'aux/huge': the frame at 0x");
	/* A 1 GiB window (the limit is 2^27). */
	memset(x, 0, sizeof(x));
	craft_set(&x[0], "aux/w", "window", 6);
	x[0].window_log = 30;
	craft_with("window.hwtrace", x, 1, &o);
	expect_refused("window.hwtrace", NULL, HWTR_E_LIMIT,
	    "exceeds the limit 2^27");
}

/* Issue 16: names that claim to be a stream's are refused, not skipped. */
ATF_TC_WITHOUT_HEAD(malformed_stream_names_refused);
ATF_TC_BODY(malformed_stream_names_refused, tc)
{
	static const char *const bad[] = {
	    "streams/0/00000000000000000.chunk",	/* 17 digits */
	    "streams/0/000000000000000.chunk",		/* 15 */
	    "streams/0/00000000000000AA.chunk",		/* upper case */
	    "streams/00/stream.json",
	    "streams/01/0000000000000000.chunk",
	    "streams/4294967295/stream.json" };
	struct craft_member x[1];
	struct craft_opts o;
	size_t i, k;

	memset(&o, 0, sizeof(o));
	for (k = 0; k < 2; k++) {
		o.toc = (int)k;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memset(x, 0, sizeof(x));
			craft_set(&x[0], bad[i], "x", 1);
			craft_with("s.hwtrace", x, 1, &o);
			expect_refused("s.hwtrace", NULL, HWTR_E_FORMAT,
			    "not a stream member name");
		}
	}
}

/*
 * Issue 16: chunks have no SHA-256 in the table of contents, so their
 * frame's content checksum is required, scanned or through the table.
 */
ATF_TC_WITHOUT_HEAD(frames_without_checksum_refused);
ATF_TC_BODY(frames_without_checksum_refused, tc)
{
	struct craft_opts o;
	size_t k;

	memset(&o, 0, sizeof(o));
	for (k = 0; k < 2; k++) {
		o.toc = (int)k;
		o.no_checksum = 0;
		craft_with("c.hwtrace", NULL, 0, &o);
		expect_refused("c.hwtrace", NULL, 0, "");
		o.no_checksum = 1;
		craft_with("n.hwtrace", NULL, 0, &o);
		expect_refused("n.hwtrace", NULL, HWTR_E_FORMAT,
		    "no content checksum");
	}
}

/* Issue 16: an address filter's cfg is 0 off, 1 filter, 2 stop. */
ATF_TC_WITHOUT_HEAD(filter_cfg_out_of_range_refused);
ATF_TC_BODY(filter_cfg_out_of_range_refused, tc)
{
	static const char stream[] = "{\"id\": 0, \"name\": \"s\", "
	    "\"format\": \"intel-pt\", \"pid\": -1, \"tid\": -1, "
	    "\"cpu\": -1, \"intel_pt\": {\"cpuid_15_eax\": 0, "
	    "\"cpuid_15_ebx\": 0, \"nom_freq\": 0, \"mtc_freq\": 0, "
	    "\"cyc_thresh\": 0, \"psb_freq\": 0, \"options\": 0, "
	    "\"filters\": [{\"cfg\": %d, \"a\": \"0x1000\", "
	    "\"b\": \"0x2000\"}]}}";
	struct craft_member m[2];
	char *man = craft_manifest("1.0", ""), js[1024];
	int cfg;

	for (cfg = 2; cfg <= 7; cfg += 5) {
		memset(m, 0, sizeof(m));
		craft_set(&m[0], "hwtrace.json", man, strlen(man));
		snprintf(js, sizeof(js), stream, cfg);
		craft_set(&m[1], "streams/0/stream.json", js, strlen(js));
		craft("f.hwtrace", m, 2, NULL);
		if (cfg == 2)
			expect_refused("f.hwtrace", NULL, 0, "");
		else
			expect_refused("f.hwtrace", NULL, HWTR_E_FORMAT,
			    "intel_pt.filters.cfg");
	}
	free(man);
}

/*
 * Issue 16: an image whose bytes do not have its description's SHA-256 is
 * refused by every reader, not only by verify: reading it, writing it out,
 * and so hwtrace index.  "abc" is FIPS 180-2's first SHA-256 example.
 */
ATF_TC_WITHOUT_HEAD(image_sha256_checked_on_read);
ATF_TC_BODY(image_sha256_checked_on_read, tc)
{
	static const char *const sha[2] = {
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ae",
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" };
	struct craft_member x[2];
	struct hwtr_ar *ar;
	char desc[512];
	void *buf;
	size_t len;
	int k, fd, want;

	for (k = 0; k < 2; k++) {
		want = k == 0 ? -HWTR_E_CHECKSUM : 0;
		memset(x, 0, sizeof(x));
		snprintf(desc, sizeof(desc), "{\"key\": \"bid-0011\", "
		    "\"path\": \"/lib/x\", \"kind\": \"file\", \"build_id\": "
		    "\"0011\", \"size\": 3, \"sha256\": \"%s\"}", sha[k]);
		craft_set(&x[0], "images/bid-0011.json", desc, strlen(desc));
		craft_set(&x[1], "images/bid-0011", "abc", 3);
		craft_with("img.hwtrace", x, 2, NULL);
		ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "img.hwtrace", NULL), 0,
		    "%s", hwtr_ar_errmsg(ar));
		ATF_REQUIRE_EQ(hwtr_ar_nimages(ar), 1);
		ATF_CHECK_EQ_MSG(hwtr_ar_read_image(ar, 0, &buf, &len), want,
		    "read: %s", hwtr_ar_errmsg(ar));
		free(buf);
		ATF_REQUIRE((fd = open("/dev/null", O_WRONLY)) >= 0);
		ATF_CHECK_EQ_MSG(hwtr_ar_extract_image(ar, 0, fd), want,
		    "extract: %s", hwtr_ar_errmsg(ar));
		close(fd);
		if (want != 0)
			ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), "member "
			    "'images/bid-0011': SHA-256 differs from its "
			    "description") != NULL, "%s", hwtr_ar_errmsg(ar));
		hwtr_ar_close(ar);
	}
	/* hwtrace index says so (the good one above says nothing). */
	craft_with("img.hwtrace", x, 2, NULL);
	ATF_REQUIRE(system(HWTR_TEST_BUILD "/hwtrace index -o i.db img.hwtrace "
	    "2> ok.err") == 0);
	ATF_CHECK(!atf_utils_grep_file("SHA-256", "ok.err"));
	snprintf(desc, sizeof(desc), "{\"key\": \"bid-0011\", \"path\": "
	    "\"/lib/x\", \"kind\": \"file\", \"build_id\": \"0011\", "
	    "\"size\": 3, \"sha256\": \"%s\"}", sha[0]);
	x[0].len = strlen(desc);
	craft_with("img.hwtrace", x, 2, NULL);
	(void)system(HWTR_TEST_BUILD "/hwtrace index -o i.db img.hwtrace "
	    "2> bad.err");
	ATF_CHECK_MSG(atf_utils_grep_file("image '/lib/x' \\(bid-0011\\): "
	    "cannot be read: member 'images/bid-0011': SHA-256 differs from "
	    "its description", "bad.err"), "index did not report the image");
}

/*
 * Issue 33 item 6: a chunk whose frame declares no content size (a
 * streamed frame, through the table of contents) is refused by verify,
 * naming it, and index counts it as not decoded rather than reporting a
 * clean decode of nothing.
 */
ATF_TC_WITHOUT_HEAD(chunk_without_content_size);
ATF_TC_BODY(chunk_without_content_size, tc)
{
	static const char stream[] = "{\"id\": 0, \"name\": \"s\", "
	    "\"format\": \"intel-pt\", \"pid\": -1, \"tid\": -1, "
	    "\"cpu\": -1, \"intel_pt\": {\"cpuid_15_eax\": 0, "
	    "\"cpuid_15_ebx\": 0, \"nom_freq\": 0, \"mtc_freq\": 0, "
	    "\"cyc_thresh\": 0, \"psb_freq\": 0, \"options\": 0, "
	    "\"filters\": []}}";
	static const uint8_t psb[32] = {
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23 };
	struct craft_member m[3];
	struct craft_opts o;
	struct hwtr_ar *ar;
	char *man = craft_manifest("1.0", "");
	int k;

	memset(&o, 0, sizeof(o));
	o.toc = 1;
	for (k = 0; k < 2; k++) {
		memset(m, 0, sizeof(m));
		craft_set(&m[0], "hwtrace.json", man, strlen(man));
		craft_set(&m[1], "streams/0/stream.json", stream,
		    strlen(stream));
		craft_set(&m[2], "streams/0/0000000000000000.chunk", psb,
		    sizeof(psb));
		/* k == 1: streamed, a window and no content size. */
		m[2].window_log = k == 1 ? 20 : 0;
		craft(k ? "n.hwtrace" : "c.hwtrace", m, 3, &o);
	}
	free(man);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "c.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "the frame with its content "
	    "size: %s", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "n.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), -HWTR_E_FORMAT, "verify of a "
	    "chunk without a content size: expected %s, got '%s'",
	    hwtr_errstr(-HWTR_E_FORMAT), hwtr_ar_errmsg(ar));
	ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), "member 'streams/0/"
	    "0000000000000000.chunk': frame at 0x") != NULL &&
	    strstr(hwtr_ar_errmsg(ar), "declares no content size") != NULL,
	    "expected the chunk and 'declares no content size' named, got "
	    "'%s'", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	ATF_REQUIRE(system(HWTR_TEST_BUILD "/hwtrace verify n.hwtrace "
	    "2> v.err") != 0);
	ATF_CHECK_MSG(atf_utils_grep_file("declares no content size",
	    "v.err"), "hwtrace verify did not name the frame");
	/* PSB, PSBEND and padding: nothing left undecoded. */
	ATF_REQUIRE(system(HWTR_TEST_BUILD "/hwtrace index -o c.db c.hwtrace "
	    "2> c.err") == 0);
	ATF_CHECK_MSG(atf_utils_grep_file(" 0 decode errors \\(0 of 32 bytes "
	    "not decoded\\)", "c.err"), "index of the good chunk: expected "
	    "'0 decode errors (0 of 32 bytes not decoded)'");
	/* The 32 bytes are not decoded, and index says so. */
	ATF_REQUIRE(system(HWTR_TEST_BUILD "/hwtrace index -o n.db n.hwtrace "
	    "2> i.err") == 0);
	ATF_CHECK_MSG(atf_utils_grep_file(" 0 instructions, 1 decode errors "
	    "\\(32 of 32 bytes not decoded\\)", "i.err"), "index: expected "
	    "'1 decode errors (32 of 32 bytes not decoded)'");
}

/*
 * Issue 33 item 6: the tar end frame between end.json and the trailer
 * (1024 zero bytes, some 23 bytes of zstd) is checked by verify: each of
 * its bytes damaged in turn (bits 0 and 7) fails verification naming it
 * whenever zstd -t fails on the file, and the frame cut out fails too;
 * readers still open the archive (nothing of the capture is missing).
 */
ATF_TC(tar_end_frame_verified);
ATF_TC_HEAD(tar_end_frame_verified, tc)
{
	atf_tc_set_md_var(tc, "descr", "damage to the tar end frame that "
	    "zstd -t finds, and the frame cut out, fail verify naming it");
	atf_tc_set_md_var(tc, "require.progs", "zstd");
}
ATF_TC_BODY(tar_end_frame_verified, tc)
{
	struct craft_opts o;
	struct hwtr_ar *ar;
	uint8_t *b;
	uint64_t endoff, endcsize, te, tlen;
	long size;
	size_t i, bit, nbad = 0;
	FILE *f;
	int rc, zbad;

	memset(&o, 0, sizeof(o));
	o.toc = 1;
	craft_with("e.hwtrace", NULL, 0, &o);
	ATF_REQUIRE((f = fopen("e.hwtrace", "rb")) != NULL);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	ATF_REQUIRE((b = malloc((size_t)size)) != NULL);
	ATF_REQUIRE(fread(b, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	/* The trailer (hwtrace(5)): end.json's offset and size. */
	endoff = endcsize = 0;
	for (i = 0; i < 8; i++) {
		endoff |= (uint64_t)b[size - 16 + i] << (8 * i);
		endcsize |= (uint64_t)b[size - 8 + i] << (8 * i);
	}
	te = endoff + endcsize;
	tlen = (uint64_t)size - 40 - te;
	ATF_REQUIRE_MSG(tlen > 8 && tlen < 64, "tar end frame of %ju bytes",
	    (uintmax_t)tlen);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "e.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ_MSG(hwtr_ar_verify(ar), 0, "intact: %s",
	    hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	for (i = 0; i < tlen; i++)
		for (bit = 0; bit < 8; bit += 7) {
			b[te + i] ^= (uint8_t)(1u << bit);
			ATF_REQUIRE((f = fopen("d.hwtrace", "wb")) != NULL);
			ATF_REQUIRE(fwrite(b, 1, (size_t)size, f) ==
			    (size_t)size);
			fclose(f);
			b[te + i] ^= (uint8_t)(1u << bit);
			/*
			 * zstd(1) says whether the file is damaged: a flip
			 * can give another encoding of the same zeros.
			 */
			zbad = system("zstd -tq d.hwtrace 2>/dev/null") != 0;
			nbad += zbad;
			rc = hwtr_ar_open(&ar, "d.hwtrace", NULL);
			ATF_CHECK_EQ_MSG(rc, 0, "byte %zu bit %zu: open: %s", i,
			    bit, hwtr_ar_errmsg(ar));
			if (rc == 0)
				rc = hwtr_ar_verify(ar);
			ATF_CHECK_EQ_MSG(rc, zbad ? -HWTR_E_FORMAT : 0, "byte %zu "
			    "of the tar end frame, bit %zu flipped (zstd -t: "
			    "%s): verify gave %d (%s)", i, bit, zbad ? "damaged" :
			    "sound", rc, hwtr_ar_errmsg(ar));
			ATF_CHECK_MSG(!zbad || strstr(hwtr_ar_errmsg(ar), "the tar "
			    "end frame after end.json") != NULL, "byte %zu bit "
			    "%zu: '%s'", i, bit, hwtr_ar_errmsg(ar));
			hwtr_ar_close(ar);
		}
	ATF_CHECK_MSG(nbad >= tlen, "zstd -t found only %zu of %ju flips",
	    nbad, (uintmax_t)(2 * tlen));
	/* Cut out: end.json, then the trailer at once. */
	ATF_REQUIRE((f = fopen("d.hwtrace", "wb")) != NULL);
	ATF_REQUIRE(fwrite(b, 1, (size_t)te, f) == (size_t)te);
	ATF_REQUIRE(fwrite(b + size - 40, 1, 40, f) == 40);
	fclose(f);
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(&ar, "d.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(ar));
	ATF_CHECK_EQ(hwtr_ar_verify(ar), -HWTR_E_FORMAT);
	ATF_CHECK_MSG(strstr(hwtr_ar_errmsg(ar), "the tar end frame after "
	    "end.json") != NULL, "cut out: '%s'", hwtr_ar_errmsg(ar));
	hwtr_ar_close(ar);
	free(b);
	ATF_REQUIRE(system(HWTR_TEST_BUILD "/hwtrace verify d.hwtrace "
	    "2> v.err") != 0);
	ATF_CHECK_MSG(atf_utils_grep_file("the tar end frame after end.json",
	    "v.err"), "hwtrace verify did not name the tar end frame");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, tar_end_frame_verified);
	ATF_TP_ADD_TC(tp, chunk_without_content_size);
	ATF_TP_ADD_TC(tp, image_sha256_checked_on_read);
	ATF_TP_ADD_TC(tp, frames_without_checksum_refused);
	ATF_TP_ADD_TC(tp, filter_cfg_out_of_range_refused);
	ATF_TP_ADD_TC(tp, toc_members_checked_like_scanned_ones);
	ATF_TP_ADD_TC(tp, malformed_stream_names_refused);
	ATF_TP_ADD_TC(tp, table_of_contents_checked);
	ATF_TP_ADD_TC(tp, crafted_archive_opens);
	ATF_TP_ADD_TC(tp, newer_major_refused_naming_both_versions);
	ATF_TP_ADD_TC(tp, newer_minor_read_unknowns_skipped);
	ATF_TP_ADD_TC(tp, sideband_record_past_member_end);
	ATF_TP_ADD_TC(tp, hostile_names_refused);
	ATF_TP_ADD_TC(tp, links_devices_dirs_fifos_refused);
	ATF_TP_ADD_TC(tp, duplicate_names_refused);
	ATF_TP_ADD_TC(tp, size_and_count_limits);
	ATF_TP_ADD_TC(tp, window_bomb_refused);
	ATF_TP_ADD_TC(tp, ratio_bomb_refused);
	ATF_TP_ADD_TC(tp, wrong_json_types_refused);
	ATF_TP_ADD_TC(tp, bad_cross_references_refused);
	ATF_TP_ADD_TC(tp, not_an_archive);
	return (atf_no_error());
}
