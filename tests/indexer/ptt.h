/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers for the indexer's conformance tests: pack a trace and raw code
 * into an archive the way "hwtrace import --raw" does (one Intel PT stream,
 * a memory image per --raw file, a global MMAP record at its address),
 * index it, and read the instruction history back from the database as
 * tokens ("0000000000100000", "enabled", "disabled", "error") that compare
 * with ptxed's output.
 */

#ifndef HWTR_TEST_PTT_H
#define HWTR_TEST_PTT_H

#include <sys/mman.h>

#include <ctype.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"

struct tok {
	char	**v;
	size_t	n, cap;
};

static void
tok_add(struct tok *t, const char *s)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		if (t->v == NULL)
			abort();
	}
	t->v[t->n++] = strdup(s);
}

static void
tok_free(struct tok *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static int
slurp_file(const char *path, void **bufp, size_t *lenp)
{
	FILE *fp = fopen(path, "rb");
	long n;
	void *buf;

	if (fp == NULL)
		return (-1);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, fp) !=
	    (size_t)n)) {
		free(buf);
		fclose(fp);
		return (-1);
	}
	fclose(fp);
	*bufp = buf;
	*lenp = (size_t)n;
	return (0);
}

struct raw_image {
	const char	*path;
	uint64_t	from, to;	/* file range; to 0: to the end */
	uint64_t	addr;
};

struct pack_spec {
	const char	*pt;
	struct raw_image raw[8];
	size_t		nraw;
	struct hwtr_cpu	cpu;
	uint8_t		nom_freq;
	struct hwtr_pt_filter filter[HWTR_PT_MAX_FILTERS];
	uint32_t	nfilters;
};

/* Write archive @out from @spec; 0 or -1 with @err filled. */
static int
pack_raw(const char *out, const struct pack_spec *spec, char *err,
    size_t errlen)
{
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_aw *aw;
	struct hwtr_sb_rec rec;
	void *buf;
	size_t len, i;
	uint32_t id;
	char key[HWTR_IMAGE_KEY_MAX];

	memset(&meta, 0, sizeof(meta));
	meta.host = "test";
	meta.source = "import-raw";
	meta.sideband_origin = "import";
	meta.cpu = spec->cpu;
	if (hwtr_aw_open(&aw, out, &meta, NULL, err, errlen) < 0)
		return (-1);
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = sd.tid = sd.cpu = -1;
	sd.name = "raw";
	sd.pt.nom_freq = spec->nom_freq;
	sd.pt.nfilters = spec->nfilters;
	memcpy(sd.pt.filter, spec->filter, sizeof(sd.pt.filter));
	if (hwtr_aw_add_stream(aw, &sd, &id) < 0)
		goto fail;
	if (slurp_file(spec->pt, &buf, &len) < 0) {
		snprintf(err, errlen, "cannot read %s", spec->pt);
		hwtr_aw_abort(aw, 0);
		return (-1);
	}
	if (len > 0 && hwtr_aw_chunk(aw, id, 0, buf, len) < 0) {
		free(buf);
		goto fail;
	}
	free(buf);
	for (i = 0; i < spec->nraw; i++) {
		struct hwtr_image_desc idesc;
		const struct raw_image *ri = &spec->raw[i];

		if (slurp_file(ri->path, &buf, &len) < 0) {
			snprintf(err, errlen, "cannot read %s", ri->path);
			hwtr_aw_abort(aw, 0);
			return (-1);
		}
		memset(&idesc, 0, sizeof(idesc));
		idesc.path = ri->path;
		idesc.kind = HWTR_IMG_MEMORY;
		if (hwtr_aw_add_image(aw, &idesc, buf, len, key) < 0) {
			free(buf);
			goto fail;
		}
		free(buf);
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_MMAP;
		rec.pid = rec.tid = -1;
		rec.u.mmap.addr = ri->addr;
		rec.u.mmap.pgoff = ri->from;
		rec.u.mmap.len = (ri->to ? ri->to : len) - ri->from;
		rec.u.mmap.prot = PROT_READ | PROT_EXEC;
		rec.u.mmap.path = ri->path;
		rec.u.mmap.image = key;
		if (hwtr_aw_sideband(aw, &rec) < 0)
			goto fail;
	}
	return (hwtr_aw_close(aw, err, errlen) < 0 ? -1 : 0);
fail:
	snprintf(err, errlen, "%s", hwtr_aw_errmsg(aw));
	hwtr_aw_abort(aw, 0);
	return (-1);
}

/* Tokens of thread 1 from database @db: addresses and events in order. */
static int
db_tokens(const char *db, struct tok *t, char *err, size_t errlen)
{
	sqlite3 *s;
	sqlite3_stmt *ins = NULL, *ev = NULL;
	int64_t evinsn = -1;
	int rc_i, rc_e = SQLITE_DONE;
	char buf[32];

	if (sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    hwtr_ix_sqlite_register(s) < 0 ||
	    sqlite3_prepare_v2(s, "SELECT insn, ip FROM exec_insns WHERE "
	    "thread = 1", -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s, "SELECT insn, kind FROM events WHERE "
	    "thread = 1 AND insn IS NOT NULL AND kind IN ('enabled', "
	    "'disabled', 'async-disabled', 'decode-error') ORDER BY id", -1,
	    &ev, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", db, sqlite3_errmsg(s));
		sqlite3_finalize(ins);
		sqlite3_finalize(ev);
		sqlite3_close(s);
		return (-1);
	}
	rc_e = sqlite3_step(ev);
	if (rc_e == SQLITE_ROW)
		evinsn = sqlite3_column_int64(ev, 0);
	while ((rc_i = sqlite3_step(ins)) == SQLITE_ROW) {
		int64_t insn = sqlite3_column_int64(ins, 0);

		while (rc_e == SQLITE_ROW && evinsn <= insn) {
			const char *k = (const char *)sqlite3_column_text(ev, 1);

			tok_add(t, strcmp(k, "decode-error") == 0 ? "error" :
			    strcmp(k, "async-disabled") == 0 ? "disabled" : k);
			rc_e = sqlite3_step(ev);
			if (rc_e == SQLITE_ROW)
				evinsn = sqlite3_column_int64(ev, 0);
		}
		snprintf(buf, sizeof(buf), "%016" PRIx64,
		    (uint64_t)sqlite3_column_int64(ins, 1));
		tok_add(t, buf);
	}
	while (rc_e == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(ev, 1);

		tok_add(t, strcmp(k, "decode-error") == 0 ? "error" :
		    strcmp(k, "async-disabled") == 0 ? "disabled" : k);
		rc_e = sqlite3_step(ev);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(ev);
	sqlite3_close(s);
	if (rc_i != SQLITE_DONE || rc_e != SQLITE_DONE) {
		snprintf(err, errlen, "%s: reading failed", db);
		return (-1);
	}
	return (0);
}

/* Tokens of a ptxed .exp file: the same vocabulary as db_tokens(). */
static int
exp_tokens(const char *path, struct tok *t)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	size_t i;

	if (fp == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL) {
		unsigned long long n;

		/* "--stat --stat:insn" with --quiet: only the count. */
		if (sscanf(line, "insn: %llu.", &n) == 1) {
			snprintf(line, sizeof(line), "insn-count %llu", n);
			tok_add(t, line);
			continue;
		}
		/* Speculative instructions are printed as "? <address>". */
		if (line[0] == '?' && line[1] == ' ')
			memmove(line, line + 2, strlen(line + 2) + 1);
		for (i = 0; i < 16 && isxdigit((unsigned char)line[i]); i++)
			;
		if (i == 16 && (line[16] == '\n' || line[16] == ' ' ||
		    line[16] == '\0')) {
			line[16] = '\0';
			tok_add(t, line);
		} else if (line[0] == '[' && strstr(line, "disabled") != NULL)
			tok_add(t, "disabled");	/* also "[<time>  disabled]" */
		else if (line[0] == '[' && strstr(line, "enabled") != NULL)
			tok_add(t, "enabled");
		else if (line[0] == '[' && strstr(line, "error:") != NULL &&
		    strstr(line, "sideband") == NULL)
			tok_add(t, "error");
	}
	fclose(fp);
	return (0);
}

/* First difference of two token lists, or 0 when equal. */
static int
tok_diff(const struct tok *want, const struct tok *got, char *msg,
    size_t len)
{
	size_t i, n = 0;

	if (want->n >= 1 &&
	    strncmp(want->v[want->n - 1], "insn-count ", 11) == 0) {
		char buf[64];
		struct tok w = *want;

		for (i = 0; i < got->n; i++)
			n += strlen(got->v[i]) == 16;
		snprintf(buf, sizeof(buf), "insn-count %zu", n);
		if (strcmp(buf, want->v[want->n - 1]) != 0) {
			snprintf(msg, len, "expected '%s', got '%s'",
			    want->v[want->n - 1], buf);
			return (1);
		}
		if (want->n == 1)
			return (0);	/* --quiet: the count is all there is */
		w.n--;
		return (tok_diff(&w, got, msg, len));
	}

	for (i = 0; i < want->n && i < got->n; i++)
		if (strcmp(want->v[i], got->v[i]) != 0)
			break;
	if (i == want->n && i == got->n)
		return (0);
	snprintf(msg, len, "at token %zu of %zu/%zu: expected '%s', got '%s'",
	    i, want->n, got->n, i < want->n ? want->v[i] : "(end)",
	    i < got->n ? got->v[i] : "(end)");
	return (1);
}

#endif /* !HWTR_TEST_PTT_H */
