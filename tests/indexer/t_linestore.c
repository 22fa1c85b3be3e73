/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The lines store (indexer/linestore.c) against line rows generated here:
 * pages that decode to the rows they were made from, whatever the
 * addresses (kernel ones, differences that wrap); damaged pages that give
 * an error, never a crash; and the lines virtual table, read with the
 * queries hwtrace makes and others, against an ordinary table of the same
 * rows (schema version 7's lines); a lookup that reads only its page;
 * a page rewritten through SQL, by this connection or another, read as
 * rewritten; writes refused.
 */

#include <atf-c.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"
#include "../../indexer/schema.sql.h"
#include "../../indexer/linestore.h"

static uint64_t seed;

static uint32_t
rnd(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((uint32_t)(seed >> 33));
}

/*
 * @n rows from @addr on, ascending in SQLite's (signed) order, as an
 * image's line table has them: mostly one after another, with gaps where
 * a sequence ends.
 */
static void
gen_rows(struct hwtr_ls_row *r, size_t n, int64_t start)
{
	int64_t line = 1 + rnd() % 3000;
	uint64_t addr = (uint64_t)start, end;
	size_t i;

	/* Addresses wrap as 64-bit patterns do (no signed overflow). */
	for (i = 0; i < n; i++) {
		end = addr + 1 + rnd() % 40;
		r[i].addr = (int64_t)addr;
		r[i].end = (int64_t)end;
		r[i].file = 1 + rnd() % 60;
		line += (int64_t)(rnd() % 21) - 10;
		r[i].line = line > 0 ? line : 1;
		r[i].col = rnd() % 5 == 0 ? 0 : rnd() % 120;
		r[i].is_stmt = rnd() % 3 != 0;
		addr = rnd() % 8 == 0 ? end + rnd() % 300 : end;
	}
}

static int
rows_eq(const struct hwtr_ls_row *a, const struct hwtr_ls_row *b)
{
	return (a->addr == b->addr && a->end == b->end && a->file == b->file &&
	    a->line == b->line && a->col == b->col &&
	    a->is_stmt == b->is_stmt);
}

ATF_TC_WITHOUT_HEAD(codec_round_trip);
ATF_TC_BODY(codec_round_trip, tc)
{
	static struct hwtr_ls_row r[HWTR_LS_PAGE], got[HWTR_LS_PAGE];
	static const int64_t starts[] = { 0x1000, 0x7ffffffffffff000LL,
	    (int64_t)0xffffffff81000000ULL, INT64_MIN, -0x80 };
	const char *why;
	uint8_t *blob;
	size_t len, n, i, k;

	seed = 1;
	for (k = 0; k < 200; k++) {
		n = k < 5 ? HWTR_LS_PAGE : 1 + rnd() % HWTR_LS_PAGE;
		gen_rows(r, n, starts[k % 5]);
		/* Values no DWARF gives, which the codec keeps all the same. */
		if (k % 7 == 0) {
			r[0].col = -5;
			r[n - 1].line = INT64_MAX;
			r[n - 1].file = INT64_MIN;
			r[n - 1].end = r[n - 1].addr;
		}
		ATF_REQUIRE_EQ(hwtr_ls_encode(r, n, &blob, &len), 0);
		memset(got, 0x5a, sizeof(got));
		ATF_REQUIRE_MSG(hwtr_ls_decode(blob, len, (int64_t)n, r[0].addr,
		    got, &why) == 0, "page %zu of %zu rows: %s", k, n, why);
		for (i = 0; i < n; i++)
			ATF_REQUIRE_MSG(rows_eq(&r[i], &got[i]), "page %zu row "
			    "%zu: addr %#jx line %jd, expected %#jx line %jd", k, i,
			    (uintmax_t)got[i].addr, (intmax_t)got[i].line,
			    (uintmax_t)r[i].addr, (intmax_t)r[i].line);
		free(blob);
	}
	ATF_CHECK_EQ(hwtr_ls_encode(r, 0, &blob, &len), -1);
	ATF_CHECK_EQ(hwtr_ls_encode(r, HWTR_LS_PAGE + 1, &blob, &len), -1);
}

ATF_TC_WITHOUT_HEAD(damaged_pages_give_errors);
ATF_TC_BODY(damaged_pages_give_errors, tc)
{
	static struct hwtr_ls_row r[HWTR_LS_PAGE], got[HWTR_LS_PAGE];
	const char *why;
	uint8_t *blob, *bad;
	size_t len, i, cut;
	int b, nok = 0;

	seed = 2;
	gen_rows(r, 200, 0x400000);
	ATF_REQUIRE_EQ(hwtr_ls_encode(r, 200, &blob, &len), 0);
	ATF_CHECK_EQ(blob[0], 1);	/* zstd */
	ATF_CHECK_EQ(hwtr_ls_decode(blob, len, 199, r[0].addr, got, &why),
	    -1);
	ATF_CHECK_STREQ(why, "row count differs from its table row");
	ATF_CHECK_EQ(hwtr_ls_decode(blob, len, 0, r[0].addr, got, &why), -1);
	ATF_CHECK_EQ(hwtr_ls_decode(NULL, 0, 200, r[0].addr, got, &why), -1);
	/* Every truncation, every byte changed: an answer, never a crash. */
	for (cut = 0; cut < len; cut++) {
		bad = malloc(cut ? cut : 1);
		ATF_REQUIRE(bad != NULL);
		memcpy(bad, blob, cut);
		ATF_CHECK_EQ_MSG(hwtr_ls_decode(bad, cut, 200, r[0].addr, got,
		    &why), -1, "cut at %zu of %zu decoded", cut, len);
		free(bad);
	}
	bad = malloc(len);
	ATF_REQUIRE(bad != NULL);
	for (i = 0; i < len; i++)
		for (b = 0; b < 8; b += 3) {
			memcpy(bad, blob, len);
			bad[i] ^= (uint8_t)(1u << b);
			nok += hwtr_ls_decode(bad, len, 200, r[0].addr, got,
			    &why) == 0;
		}
	free(bad);
	free(blob);
	/* The same rows kept raw (a page zstd does not shrink). */
	gen_rows(r, 1, 0x1000);
	ATF_REQUIRE_EQ(hwtr_ls_encode(r, 1, &blob, &len), 0);
	ATF_CHECK_EQ(blob[0], 0);
	ATF_CHECK_EQ(hwtr_ls_decode(blob, len, 1, r[0].addr, got, &why), 0);
	ATF_CHECK(rows_eq(&r[0], &got[0]));
	ATF_CHECK_EQ(hwtr_ls_decode(blob, len - 1, 1, r[0].addr, got, &why),
	    -1);
	blob[0] = 7;
	ATF_CHECK_EQ(hwtr_ls_decode(blob, len, 1, r[0].addr, got, &why), -1);
	ATF_CHECK_STREQ(why, "unknown page format");
	free(blob);
	printf("%d of the changed pages decoded (to other rows)\n", nok);
}

/* The images of the database the table tests read, and their rows. */
#define NIMG	5
static struct hwtr_ls_row *img_rows[NIMG + 1];
static size_t img_n[NIMG + 1];

/*
 * A database with the schema, each image's rows in line_pages as the
 * indexer writes them, and an ordinary table "ref" of the same rows.
 */
static sqlite3 *
make_db(void)
{
	static const size_t sizes[NIMG + 1] = { 0, 1000, 600, 1, 513, 256 };
	static const int64_t starts[NIMG + 1] = { 0, 0x401000,
	    (int64_t)0xffffffff81000000ULL, 0x1000, -0x3000, 0x402000 };
	sqlite3 *db;
	sqlite3_stmt *pg, *rf;
	uint8_t *blob;
	size_t i, k, m, len;
	int im;

	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	ATF_REQUIRE_EQ(sqlite3_exec(db, HWTR_IX_SCHEMA_SQL "CREATE TABLE ref ("
	    "image INTEGER NOT NULL, addr INTEGER NOT NULL, file INTEGER NOT "
	    "NULL, line INTEGER NOT NULL, col INTEGER NOT NULL, is_stmt "
	    "INTEGER NOT NULL, end_addr INTEGER NOT NULL, PRIMARY KEY (image, "
	    "addr)) WITHOUT ROWID; CREATE TABLE probes (i INTEGER, a INTEGER);",
	    NULL, NULL, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "INSERT INTO line_pages VALUES "
	    "(?, ?, ?, ?, ?)", -1, &pg, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "INSERT INTO ref VALUES "
	    "(?, ?, ?, ?, ?, ?, ?)", -1, &rf, NULL), SQLITE_OK);
	seed = 3;
	for (im = 1; im <= NIMG; im++) {
		struct hwtr_ls_row *r = calloc(sizes[im], sizeof(*r));

		ATF_REQUIRE(r != NULL);
		gen_rows(r, sizes[im], starts[im]);
		img_rows[im] = r;
		img_n[im] = sizes[im];
		for (k = 0; k < sizes[im]; k += m) {
			m = sizes[im] - k < HWTR_LS_PAGE ? sizes[im] - k :
			    HWTR_LS_PAGE;
			ATF_REQUIRE_EQ(hwtr_ls_encode(r + k, m, &blob, &len), 0);
			sqlite3_bind_int(pg, 1, im);
			sqlite3_bind_int64(pg, 2, r[k].addr);
			sqlite3_bind_int64(pg, 3, r[k + m - 1].addr);
			sqlite3_bind_int64(pg, 4, (int64_t)m);
			sqlite3_bind_blob(pg, 5, blob, (int)len, SQLITE_TRANSIENT);
			ATF_REQUIRE_EQ(sqlite3_step(pg), SQLITE_DONE);
			sqlite3_reset(pg);
			free(blob);
		}
		for (i = 0; i < sizes[im]; i++) {
			sqlite3_bind_int(rf, 1, im);
			sqlite3_bind_int64(rf, 2, r[i].addr);
			sqlite3_bind_int64(rf, 3, r[i].file);
			sqlite3_bind_int64(rf, 4, r[i].line);
			sqlite3_bind_int64(rf, 5, r[i].col);
			sqlite3_bind_int64(rf, 6, r[i].is_stmt);
			sqlite3_bind_int64(rf, 7, r[i].end);
			ATF_REQUIRE_EQ(sqlite3_step(rf), SQLITE_DONE);
			sqlite3_reset(rf);
		}
	}
	sqlite3_finalize(pg);
	sqlite3_finalize(rf);
	return (db);
}

static void
free_rows(void)
{
	int im;

	for (im = 1; im <= NIMG; im++) {
		free(img_rows[im]);
		img_rows[im] = NULL;
	}
}

/*
 * The rows of @fmt (the table's name as %s), bound to @a and @b (when
 * they are used), on table @t, as text; NULL when the statement fails.
 */
static char *
answer(sqlite3 *db, const char *fmt, const char *t, sqlite3_int64 a,
    sqlite3_int64 b)
{
	char *sql = sqlite3_mprintf(fmt, t, t), *out;
	sqlite3_str *s = sqlite3_str_new(db);
	sqlite3_stmt *st;
	int c, rc;

	ATF_REQUIRE(sql != NULL);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(s));
		return (NULL);
	}
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, b);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (c = 0; c < sqlite3_column_count(st); c++) {
			const unsigned char *v = sqlite3_column_text(st, c);

			sqlite3_str_appendf(s, "%s%s", c ? "|" : "",
			    v ? (const char *)v : "NULL");
		}
		sqlite3_str_appendchar(s, 1, '\n');
	}
	sqlite3_finalize(st);
	out = sqlite3_str_finish(s);
	if (rc != SQLITE_DONE) {
		sqlite3_free(out);
		return (NULL);
	}
	return (out != NULL ? out : sqlite3_mprintf("%s", ""));
}

/* @fmt gives the same rows from lines as from ref. */
static void
same(sqlite3 *db, const char *fmt, sqlite3_int64 a, sqlite3_int64 b)
{
	char *got = answer(db, fmt, "lines", a, b);
	char *want = answer(db, fmt, "ref", a, b);

	ATF_REQUIRE_MSG(want != NULL, "ref: %s: %s", fmt, sqlite3_errmsg(db));
	ATF_REQUIRE_MSG(got != NULL, "lines: %s (?1 %lld, ?2 %lld): %s", fmt,
	    (long long)a, (long long)b, sqlite3_errmsg(db));
	ATF_REQUIRE_MSG(strcmp(got, want) == 0, "%s with ?1 %lld ?2 %lld: "
	    "lines gave %zu bytes '%.200s', expected %zu bytes '%.200s'", fmt,
	    (long long)a, (long long)b, strlen(got), got, strlen(want), want);
	sqlite3_free(got);
	sqlite3_free(want);
}

ATF_TC_WITHOUT_HEAD(table_answers_as_a_plain_one);
ATF_TC_BODY(table_answers_as_a_plain_one, tc)
{
	static const char *const whole[] = {
		"SELECT * FROM %s ORDER BY image, addr",
		"SELECT * FROM %s",
		"SELECT count(*), sum(line), min(addr), max(end_addr) FROM %s",
		"SELECT * FROM %s ORDER BY image DESC, addr DESC",
		"SELECT * FROM %s ORDER BY addr, image",
		"SELECT * FROM %s ORDER BY addr DESC, image DESC",
		"SELECT * FROM %s ORDER BY image",
		"SELECT * FROM %s WHERE image IN (1, 3, 4) ORDER BY image, addr",
		"SELECT * FROM %s WHERE image IN (4, 2) ORDER BY addr DESC",
		"SELECT * FROM %s WHERE image IN (1, 5) ORDER BY addr DESC, image",
		"SELECT * FROM %s WHERE image IN (5, 1) ORDER BY addr, image",
		"SELECT * FROM %s WHERE image IN (5, 1) AND addr > 4202000 ORDER BY "
		    "image DESC, addr DESC",
		"SELECT * FROM %s WHERE image = '4' ORDER BY addr",
		"SELECT * FROM %s WHERE image = 4.0 ORDER BY addr DESC",
		"SELECT * FROM %s WHERE image = 4.5",
		"SELECT * FROM %s WHERE image = NULL",
		"SELECT * FROM %s WHERE image = 'x'",
		"SELECT * FROM %s WHERE image = 1 AND addr < 4198500.5 "
		    "ORDER BY addr DESC LIMIT 4",
		"SELECT * FROM %s WHERE image = 1 AND addr > 'a'",
		"SELECT * FROM %s WHERE image = 1 AND addr < 'a' LIMIT 3",
		"SELECT * FROM %s WHERE image = 2 AND addr > "
		    "9223372036854775807",
		"SELECT * FROM %s WHERE image = 2 AND addr < "
		    "-9223372036854775808",
		"SELECT * FROM %s WHERE addr BETWEEN 0 AND 4200000 "
		    "ORDER BY image, addr",
		"SELECT * FROM %s WHERE line > 100 AND is_stmt ORDER BY image, "
		    "addr",
		"SELECT image, count(*) FROM %s GROUP BY image",
		"SELECT (SELECT line FROM %s l WHERE l.image = p.i AND l.addr "
		    "<= p.a ORDER BY l.addr DESC LIMIT 1) FROM probes p",
		"SELECT p.i, p.a, (SELECT count(*) FROM %s l WHERE l.image = p.i "
		    "AND l.addr >= p.a AND l.addr < p.a + 500) FROM probes p",
		"SELECT a.addr, b.addr FROM %s a JOIN %s b ON b.image = a.image "
		    "AND b.addr = a.end_addr WHERE a.image = 5",
	};
	static const char *const point[] = {
		"SELECT * FROM %s WHERE image = ?1 AND addr <= ?2 ORDER BY addr "
		    "DESC LIMIT 1",
		"SELECT * FROM %s WHERE image = ?1 AND addr = ?2",
		"SELECT * FROM %s WHERE image = ?1 AND addr >= ?2 AND addr < ?2 "
		    "+ 300 ORDER BY addr",
		"SELECT * FROM %s WHERE image = ?1 AND addr > ?2 ORDER BY addr "
		    "LIMIT 3",
		"SELECT * FROM %s WHERE image = ?1 AND addr < ?2 ORDER BY addr "
		    "DESC LIMIT 2",
		"SELECT * FROM %s WHERE image = ?1 AND addr >= ?2 ORDER BY addr "
		    "DESC LIMIT 2",
		"SELECT file, line FROM (SELECT * FROM %s WHERE image = ?1 AND "
		    "addr <= ?2 ORDER BY addr DESC LIMIT 1) WHERE ?2 < end_addr",
		/* Without the image: every image's pages, by range. */
		"SELECT * FROM %s WHERE addr = ?2 AND ?1 = ?1",
		"SELECT * FROM %s WHERE addr >= ?2 AND addr <= ?2 + 99 AND "
		    "?1 = ?1 ORDER BY image, addr",
		"SELECT * FROM %s WHERE addr > ?2 - 99 AND addr < ?2 AND ?1 = ?1",
	};
	sqlite3 *db = make_db();
	sqlite3_stmt *pr;
	size_t q, i;
	int im;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "INSERT INTO probes VALUES "
	    "(?, ?)", -1, &pr, NULL), SQLITE_OK);
	for (im = 1; im <= NIMG; im++)
		for (i = 0; i < img_n[im]; i += 7) {
			sqlite3_bind_int(pr, 1, im);
			sqlite3_bind_int64(pr, 2, img_rows[im][i].addr +
			    (int64_t)(i % 3));
			ATF_REQUIRE_EQ(sqlite3_step(pr), SQLITE_DONE);
			sqlite3_reset(pr);
		}
	sqlite3_finalize(pr);
	for (q = 0; q < sizeof(whole) / sizeof(whole[0]); q++)
		same(db, whole[q], 0, 0);
	/*
	 * Every row's address, one below and one above (the page bounds
	 * among them), and the ends of the address space.
	 */
	for (q = 0; q < sizeof(point) / sizeof(point[0]); q++) {
		for (im = 0; im <= NIMG + 1; im++) {
			same(db, point[q], im, INT64_MIN);
			same(db, point[q], im, INT64_MAX);
			same(db, point[q], im, 0);
			for (i = 0; im >= 1 && im <= NIMG && i < img_n[im];
			    i += q == 0 || q >= 7 ? 1 : 5) {
				int64_t a = img_rows[im][i].addr;

				same(db, point[q], im, a);
				same(db, point[q], im, a - 1);
				same(db, point[q], im, a + 1);
			}
		}
	}
	sqlite3_close(db);
	free_rows();
}

/*
 * The line of an address reads its page only: the others are made
 * undecodable, and a statement that reads one fails.
 */
ATF_TC_WITHOUT_HEAD(lookup_reads_its_page);
ATF_TC_BODY(lookup_reads_its_page, tc)
{
	sqlite3 *db = make_db();
	const struct hwtr_ls_row *r = img_rows[1];
	char *got;

	/* Row 600 of image 1 is in its third page ([512, 768)). */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "UPDATE line_pages SET data = x'01' "
	    "WHERE NOT (image = 1 AND n = 256 AND lo = (SELECT lo FROM "
	    "line_pages WHERE image = 1 ORDER BY lo LIMIT 1 OFFSET 2))",
	    NULL, NULL, NULL), SQLITE_OK);
	got = answer(db, "SELECT addr, line FROM %s WHERE image = ?1 AND addr "
	    "<= ?2 ORDER BY addr DESC LIMIT 1", "lines", 1, r[600].addr + 1);
	ATF_REQUIRE_MSG(got != NULL, "lookup: %s", sqlite3_errmsg(db));
	ATF_CHECK_EQ(strtoll(got, NULL, 10), r[600].addr);
	sqlite3_free(got);
	got = answer(db, "SELECT addr FROM %s WHERE image = ?1 AND addr >= ?2 "
	    "AND addr < ?2 + 64 ORDER BY addr", "lines", 1, r[600].addr);
	ATF_REQUIRE_MSG(got != NULL, "range: %s", sqlite3_errmsg(db));
	sqlite3_free(got);
	/* A statement that reaches a damaged page says which. */
	ATF_CHECK(answer(db, "SELECT count(*) FROM %s", "lines", 0, 0) ==
	    NULL);
	ATF_CHECK_MSG(strstr(sqlite3_errmsg(db), "lines: the line_pages row "
	    "of image") != NULL, "error '%s'", sqlite3_errmsg(db));
	sqlite3_close(db);
	free_rows();
}

/*
 * Image 1's first page, whose rows are @r, written again through @db
 * with each row's line 1000 more (@r changed to match).
 */
static void
rewrite_page(sqlite3 *db, struct hwtr_ls_row *r)
{
	sqlite3_stmt *st;
	uint8_t *blob;
	size_t len, i;

	for (i = 0; i < HWTR_LS_PAGE; i++)
		r[i].line += 1000;
	ATF_REQUIRE_EQ(hwtr_ls_encode(r, HWTR_LS_PAGE, &blob, &len), 0);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "UPDATE line_pages SET data = ?1 "
	    "WHERE image = 1 AND lo = ?2", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, blob, (int)len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, r[0].addr);
	ATF_REQUIRE_EQ(sqlite3_step(st), SQLITE_DONE);
	ATF_REQUIRE_EQ(sqlite3_changes(db), 1);
	sqlite3_finalize(st);
	free(blob);
}

/* A page written again through SQL reads as written, not as cached. */
ATF_TC_WITHOUT_HEAD(rewritten_page_read_again);
ATF_TC_BODY(rewritten_page_read_again, tc)
{
	sqlite3 *db = make_db();
	struct hwtr_ls_row r[HWTR_LS_PAGE];
	char *got;

	memcpy(r, img_rows[1], sizeof(r));
	got = answer(db, "SELECT line FROM %s WHERE image = ?1 AND addr <= ?2 "
	    "ORDER BY addr DESC LIMIT 1", "lines", 1, r[10].addr);
	ATF_REQUIRE(got != NULL);
	ATF_CHECK_EQ(strtoll(got, NULL, 10), r[10].line);
	sqlite3_free(got);
	rewrite_page(db, r);
	got = answer(db, "SELECT line FROM %s WHERE image = ?1 AND addr <= ?2 "
	    "ORDER BY addr DESC LIMIT 1", "lines", 1, r[10].addr);
	ATF_REQUIRE(got != NULL);
	ATF_CHECK_EQ_MSG(strtoll(got, NULL, 10), r[10].line, "line %s, "
	    "expected %jd (the page as rewritten)", got, (intmax_t)r[10].line);
	sqlite3_free(got);
	sqlite3_close(db);
	free_rows();
}

/*
 * A page another connection wrote again (committed) reads as written,
 * whether this connection's reads run SQL or land on a page it holds.
 */
ATF_TC_WITHOUT_HEAD(page_rewritten_by_another_connection);
ATF_TC_BODY(page_rewritten_by_another_connection, tc)
{
	sqlite3 *db = make_db(), *other;
	struct hwtr_ls_row r[HWTR_LS_PAGE];
	size_t i;
	char *got;
	int round;

	ATF_REQUIRE_EQ(sqlite3_exec(db, "VACUUM INTO 'two.db'", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	ATF_REQUIRE_EQ(sqlite3_open("two.db", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	ATF_REQUIRE_EQ(sqlite3_open("two.db", &other), SQLITE_OK);
	memcpy(r, img_rows[1], sizeof(r));
	for (round = 1; round <= 3; round++) {
		/* Twice: the second lookup lands on the page held. */
		for (i = 0; i < 2; i++) {
			got = answer(db, "SELECT line FROM %s WHERE image = ?1 "
			    "AND addr <= ?2 ORDER BY addr DESC LIMIT 1",
			    "lines", 1, r[10 + i].addr);
			ATF_REQUIRE_MSG(got != NULL, "%s", sqlite3_errmsg(db));
			ATF_CHECK_EQ_MSG(strtoll(got, NULL, 10),
			    r[10 + i].line, "round %d: line %s, expected %jd",
			    round, got, (intmax_t)r[10 + i].line);
			sqlite3_free(got);
		}
		rewrite_page(other, r);
	}
	sqlite3_close(other);
	sqlite3_close(db);
	free_rows();
}

ATF_TC_WITHOUT_HEAD(writes_refused);
ATF_TC_BODY(writes_refused, tc)
{
	sqlite3 *db = make_db();

	ATF_CHECK(sqlite3_exec(db, "DELETE FROM lines", NULL, NULL, NULL) !=
	    SQLITE_OK);
	ATF_CHECK(sqlite3_exec(db, "INSERT INTO lines VALUES (1, 2, 3, 4, 5, "
	    "1, 7)", NULL, NULL, NULL) != SQLITE_OK);
	ATF_CHECK(sqlite3_exec(db, "UPDATE lines SET line = 0", NULL, NULL,
	    NULL) != SQLITE_OK);
	same(db, "SELECT count(*) FROM %s", 0, 0);
	sqlite3_close(db);
	free_rows();
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, codec_round_trip);
	ATF_TP_ADD_TC(tp, damaged_pages_give_errors);
	ATF_TP_ADD_TC(tp, table_answers_as_a_plain_one);
	ATF_TP_ADD_TC(tp, lookup_reads_its_page);
	ATF_TP_ADD_TC(tp, rewritten_page_read_again);
	ATF_TP_ADD_TC(tp, page_rewritten_by_another_connection);
	ATF_TP_ADD_TC(tp, writes_refused);
	return (0);
}
