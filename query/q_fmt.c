/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Rendering a result: an aligned table for people, CSV, TSV and JSON for
 * programs.  A table shortens long text cells only when asked to fit a width
 * (the CLI asks only on a terminal), so piped output is never cut.
 *
 * Rendering goes through a writer (struct q_out) that takes rows in blocks:
 * hwtr_q_res_format() gives it the whole result as one block, and a streamed
 * answer (hwtr_q_stream) hands it each block of rows as a verb makes them,
 * so that a million-row answer is never held whole.  A table is aligned on
 * the widths of the rows seen so far: an answer that fits in one block
 * looks exactly as if it had been rendered whole; in a longer one a column
 * starts as wide as the verb's hint (q_res_hint: calls knows its largest
 * id, position and time) and widens where a later block needs it, as
 * psql's FETCH_COUNT does.
 */

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

int
hwtr_q_format_parse(const char *name, enum hwtr_q_format *fmtp)
{
	static const char *const names[] = { "table", "csv", "tsv", "json" };
	size_t i;

	for (i = 0; i < HWTR_NELEM(names); i++)
		if (strcmp(name, names[i]) == 0) {
			*fmtp = (enum hwtr_q_format)i;
			return (0);
		}
	return (-HWTR_E_INVAL);
}

/* Bytes of the first @w code points of @s. */
static size_t
q_dprefix(const char *s, size_t w)
{
	size_t i = 0, n = 0;

	for (; s[i] != '\0'; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (n == w)
				break;
			n++;
		}
	}
	return (i);
}

/* Room for @n more bytes (and a NUL) in @o; 0, or -1 with o->err set. */
static int
q_str_room(struct q_str *o, size_t n)
{
	size_t ncap;
	char *np;

	if (o->err)
		return (-1);
	if (o->len + n + 1 <= o->cap)
		return (0);
	ncap = o->cap ? o->cap : 256;
	while (ncap < o->len + n + 1)
		ncap *= 2;
	if ((np = realloc(o->p, ncap)) == NULL) {
		o->err = 1;
		return (-1);
	}
	o->p = np;
	o->cap = ncap;
	return (0);
}

void
q_out_init(struct q_out *out, enum hwtr_q_format fmt, int width,
    int (*sink)(void *, const char *, size_t), void *arg)
{
	memset(out, 0, sizeof(*out));
	out->fmt = fmt;
	out->width = width;
	out->sink = sink;
	out->arg = arg;
	hwtr_jw_init(&out->jw, q_str_put, &out->buf, HWTR_JW_SPACED);
}

/* The columns are known with the first block: the table's state. */
static int
q_out_cols(struct q_out *out, const struct hwtr_q_res *res)
{
	size_t c;

	if (out->nat != NULL)
		return (0);
	out->ncols = res->ncols;
	out->nat = calloc(res->ncols + 1, sizeof(*out->nat));
	out->fit = calloc(res->ncols + 1, sizeof(*out->fit));
	out->right = calloc(res->ncols + 1, sizeof(*out->right));
	out->textcol = calloc(res->ncols + 1, sizeof(*out->textcol));
	if (out->nat == NULL || out->fit == NULL || out->right == NULL ||
	    out->textcol == NULL)
		return (-HWTR_E_NOMEM);
	for (c = 0; c < res->ncols; c++)
		out->nat[c] = q_dwidth(res->names[c], strlen(res->names[c]));
	return (0);
}

void
q_out_fini(struct q_out *out)
{
	free(out->nat);
	free(out->fit);
	free(out->right);
	free(out->textcol);
	free(out->buf.p);
	memset(out, 0, sizeof(*out));
}

/* Hand what is buffered to the sink. */
static int
q_out_drain(struct q_out *out)
{
	int rc;

	if (out->buf.err)
		return (-HWTR_E_NOMEM);
	if (out->buf.len == 0 || out->sink == NULL)
		return (0);
	rc = out->sink(out->arg, out->buf.p, out->buf.len);
	out->buf.len = 0;
	return (rc < 0 ? -HWTR_E_IO : 0);
}

/*
 * Fit the natural widths into out->width: take columns from the widest text
 * column down, never below 8 or its name.
 */
static void
q_table_fit(struct q_out *out, const struct hwtr_q_res *res)
{
	size_t c, total, k, widest, floor, *w = out->fit;

	memcpy(w, out->nat, out->ncols * sizeof(*w));
	while (out->width > 0 && out->ncols > 0) {
		widest = out->ncols;
		for (total = 0, c = 0; c < out->ncols; c++)
			total += w[c] + (c ? 2 : 0);
		if (total <= (size_t)out->width)
			break;
		for (c = 0; c < out->ncols; c++) {
			floor = q_dwidth(res->names[c], strlen(res->names[c]));
			if (floor < 8)
				floor = 8;
			if (out->textcol[c] && w[c] > floor &&
			    (widest == out->ncols || w[c] > w[widest]))
				widest = c;
		}
		if (widest == out->ncols)
			break;
		floor = q_dwidth(res->names[widest],
		    strlen(res->names[widest]));
		if (floor < 8)
			floor = 8;
		k = total - (size_t)out->width;
		w[widest] = w[widest] - k < floor || k >= w[widest] ? floor :
		    w[widest] - k;
	}
}

/* One line of a table: @s[c] of @len[c] bytes, @dw[c] wide. */
static void
q_table_line(struct q_out *out, const char *const *s, const size_t *len,
    const size_t *dw, int header)
{
	struct q_str *o = &out->buf;
	size_t c, pad, n, need = 1;
	char *p;

	for (c = 0; c < out->ncols; c++)
		need += 2 + (len[c] > out->fit[c] ? len[c] : out->fit[c]) + 3;
	if (q_str_room(o, need) < 0)
		return;
	p = o->p + o->len;
	for (c = 0; c < out->ncols; c++) {
		if (c > 0) {
			*p++ = ' ';
			*p++ = ' ';
		}
		if (dw[c] > out->fit[c]) {
			/* Shortened: keep the start, mark the cut. */
			n = q_dprefix(s[c], out->fit[c] - 3);
			memcpy(p, s[c], n);
			memcpy(p + n, "...", 3);
			p += n + 3;
			continue;
		}
		pad = out->fit[c] - dw[c];
		if (out->right[c] && !header) {
			memset(p, ' ', pad);
			p += pad;
		}
		if (len[c] > 0)
			memcpy(p, s[c], len[c]);
		p += len[c];
		if ((!out->right[c] || header) && c + 1 < out->ncols) {
			memset(p, ' ', pad);
			p += pad;
		}
	}
	/* No trailing blanks. */
	while (p > o->p + o->len && p[-1] == ' ')
		p--;
	*p++ = '\n';
	*p = '\0';
	o->len = (size_t)(p - o->p);
}

/*
 * @len bytes at @s made safe for a terminal (hwtr_esc_dup()): a copy the
 * caller frees, or NULL when nothing needs escaping (or out of memory).
 */
static char *
q_table_esc(const char *s, size_t len)
{
	char *t, *e;
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			break;
	if (i == len)
		return (NULL);
	if ((t = strndup(s, len)) == NULL)
		return (NULL);
	e = hwtr_esc_needed(t, 0) ? hwtr_esc_dup(t, 0) : NULL;
	free(t);
	return (e);
}

/*
 * The table is for people: text from the database (symbol names, paths,
 * argv; whatever a SELECT makes) is printed with its control characters
 * escaped, so that it cannot move the cursor, retitle or clear the
 * terminal.  CSV and TSV write control characters as \e or \xHH too
 * (q_ctl()); JSON escapes them its own way.
 */
static void
q_table(struct q_out *out, const struct hwtr_q_res *res, int more)
{
	size_t nr = hwtr_q_res_nrows(res), r, c, nc = out->ncols;
	const struct q_cell *cell;
	const char *sv[64] = { NULL }, **s = sv;
	size_t lv[64] = { 0 }, wv[64] = { 0 }, *len = lv, *dw = wv;
	char **escs = NULL, *hv[64] = { NULL }, **hesc = hv;

	if (nc > 64) {
		s = calloc(nc, sizeof(*s));
		len = calloc(nc, sizeof(*len));
		dw = calloc(nc, sizeof(*dw));
		hesc = calloc(nc, sizeof(*hesc));
		if (s == NULL || len == NULL || dw == NULL || hesc == NULL) {
			out->buf.err = 1;
			goto out;
		}
	}
	for (r = 0; r < nr; r++) {
		cell = &res->cells[r * nc];
		for (c = 0; c < nc; c++, cell++) {
			char *e;

			if (cell->off == Q_NULLOFF || cell->type != HWTR_Q_TEXT ||
			    (e = q_table_esc(res->pool.p + cell->off,
			    cell->len)) == NULL)
				continue;
			if (escs == NULL && (escs = calloc(nr * nc,
			    sizeof(*escs))) == NULL) {
				free(e);
				out->buf.err = 1;
				goto out;
			}
			escs[r * nc + c] = e;
		}
	}
	for (c = 0; c < nc; c++) {
		hesc[c] = q_table_esc(res->names[c], strlen(res->names[c]));
		if (hesc[c] != NULL && q_dwidth(hesc[c], strlen(hesc[c])) >
		    out->nat[c])
			out->nat[c] = q_dwidth(hesc[c], strlen(hesc[c]));
	}
	if (more && res->hint != NULL)
		for (c = 0; c < nc; c++)
			if (res->hint[c] > out->nat[c])
				out->nat[c] = res->hint[c];
	/* Numbers right, text left; NULLs do not decide. */
	for (r = 0; r < nr; r++) {
		cell = &res->cells[r * nc];
		for (c = 0; c < nc; c++, cell++) {
			if (escs != NULL && escs[r * nc + c] != NULL) {
				const char *e = escs[r * nc + c];

				if (q_dwidth(e, strlen(e)) > out->nat[c])
					out->nat[c] = q_dwidth(e, strlen(e));
			}
			if (cell->w > out->nat[c])
				out->nat[c] = cell->w;
			if (cell->type == HWTR_Q_TEXT)
				out->textcol[c] = 1;
			else if (cell->type != HWTR_Q_NULL)
				out->right[c] = 1;
		}
	}
	for (c = 0; c < nc; c++)
		if (out->textcol[c])
			out->right[c] = 0;
	q_table_fit(out, res);
	if (out->nrows == 0 && !out->header_done) {
		for (c = 0; c < nc; c++) {
			s[c] = hesc[c] != NULL ? hesc[c] : res->names[c];
			len[c] = strlen(s[c]);
			dw[c] = q_dwidth(s[c], len[c]);
		}
		q_table_line(out, s, len, dw, 1);
		out->header_done = 1;
	}
	for (r = 0; r < nr; r++) {
		cell = &res->cells[r * nc];
		for (c = 0; c < nc; c++, cell++) {
			if (cell->off == Q_NULLOFF) {
				s[c] = "-";
				len[c] = 1;
			} else if (escs != NULL && escs[r * nc + c] != NULL) {
				s[c] = escs[r * nc + c];
				len[c] = strlen(s[c]);
				dw[c] = q_dwidth(s[c], len[c]);
				continue;
			} else {
				s[c] = res->pool.p + cell->off;
				len[c] = cell->len;
			}
			dw[c] = cell->w;
		}
		q_table_line(out, s, len, dw, 0);
	}
out:
	if (escs != NULL) {
		for (r = 0; r < nr * nc; r++)
			free(escs[r]);
		free(escs);
	}
	for (c = 0; hesc != NULL && c < nc; c++)
		free(hesc[c]);
	if (s != sv) {
		free(s);
		free(len);
		free(dw);
		free(hesc);
	}
}

/*
 * How many bytes at @s[@i] a terminal would take as a control character:
 * C0 (but tab, newline and return, which CSV quotes and TSV escapes), DEL
 * (1), or a C1 character in UTF-8 (0xc2 0x80-0x9f, 2); 0 for others.
 */
static size_t
q_ctl(const char *s, size_t len, size_t i)
{
	unsigned char c = (unsigned char)s[i];

	assert(i < len);
	if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
		return (1);
	if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
	    (unsigned char)s[i + 1] <= 0x9f)
		return (2);
	return (0);
}

/* The @n control bytes at @s as the table shows them: \e, or \xHH. */
static void
q_ctl_put(struct q_str *o, const char *s, size_t n)
{
	char b[5];
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\033')
			q_str_add(o, "\\e", 2);
		else {
			snprintf(b, sizeof(b), "\\x%02x", (unsigned char)s[i]);
			q_str_add(o, b, 4);
		}
	}
}

/*
 * RFC 4180: a field with a comma, quote or line break is quoted.  Control
 * characters (ESC, BEL, ...) are written as \e or \xHH, so that a symbol
 * name cannot drive the terminal a CSV file is shown on.
 */
static void
q_csv_field(struct q_str *o, const char *s, size_t len)
{
	size_t i, n;
	int quote = 0;

	if (s == NULL)
		return;
	for (i = 0; i < len; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			quote = 1;
	if (quote)
		q_str_add(o, "\"", 1);
	for (i = 0; i < len; i += n) {
		if ((n = q_ctl(s, len, i)) > 0) {
			q_ctl_put(o, s + i, n);
			continue;
		}
		if (s[i] == '"')
			q_str_add(o, "\"", 1);
		q_str_add(o, s + i, 1);
		n = 1;
	}
	if (quote)
		q_str_add(o, "\"", 1);
}

static void
q_tsv_field(struct q_str *o, const char *s, size_t len)
{
	size_t i, run;

	if (s == NULL)
		return;
	for (i = 0; i < len; i += run) {
		for (run = 0; i + run < len && s[i + run] != '\t' &&
		    s[i + run] != '\n' && s[i + run] != '\r' &&
		    s[i + run] != '\\' && q_ctl(s, len, i + run) == 0; run++)
			;
		if (run > 0) {
			q_str_add(o, s + i, run);
			continue;
		}
		if ((run = q_ctl(s, len, i)) > 0) {
			q_ctl_put(o, s + i, run);
			continue;
		}
		switch (s[i]) {
		case '\t':
			q_str_add(o, "\\t", 2);
			break;
		case '\n':
			q_str_add(o, "\\n", 2);
			break;
		case '\r':
			q_str_add(o, "\\r", 2);
			break;
		default:
			q_str_add(o, "\\\\", 2);
			break;
		}
		run = 1;
	}
}

static void
q_sep(struct q_out *out, const struct hwtr_q_res *res)
{
	size_t nr = hwtr_q_res_nrows(res), r, c;
	const struct q_cell *cell;
	struct q_str *o = &out->buf;
	const char *s;
	char sep = out->fmt == HWTR_Q_FMT_CSV ? ',' : '\t';

	if (!out->header_done) {
		for (c = 0; c < res->ncols; c++) {
			if (c > 0)
				q_str_add(o, &sep, 1);
			if (out->fmt == HWTR_Q_FMT_CSV)
				q_csv_field(o, res->names[c],
				    strlen(res->names[c]));
			else
				q_tsv_field(o, res->names[c],
				    strlen(res->names[c]));
		}
		q_str_add(o, "\n", 1);
		out->header_done = 1;
	}
	for (r = 0; r < nr; r++) {
		cell = &res->cells[r * res->ncols];
		for (c = 0; c < res->ncols; c++, cell++) {
			if (c > 0)
				q_str_add(o, &sep, 1);
			s = Q_CELL_S(res, cell);
			if (out->fmt == HWTR_Q_FMT_CSV)
				q_csv_field(o, s, cell->len);
			else
				q_tsv_field(o, s, cell->len);
		}
		q_str_add(o, "\n", 1);
	}
}

/*
 * JSON: an array of objects, one per row, a row to a line, through the
 * common writer (which the array spans across blocks).
 */
static void
q_json(struct q_out *out, const struct hwtr_q_res *res)
{
	size_t nr = hwtr_q_res_nrows(res), r, c;
	const struct q_cell *cell;
	struct hwtr_jw *w = &out->jw;
	const char *s;

	for (r = 0; r < nr; r++) {
		if (out->nrows + r == 0)
			hwtr_jw_arr(w);
		hwtr_jw_ws(w, "\n  ");
		hwtr_jw_obj(w);
		cell = &res->cells[r * res->ncols];
		for (c = 0; c < res->ncols; c++, cell++) {
			hwtr_jw_key(w, res->names[c]);
			s = Q_CELL_S(res, cell);
			if (s == NULL)
				hwtr_jw_null(w);
			else if (cell->type == HWTR_Q_INT ||
			    (cell->type == HWTR_Q_REAL &&
			    strspn(s, "0123456789.-+eE") == cell->len))
				hwtr_jw_num(w, s, cell->len);
			else
				hwtr_jw_str(w, s);
		}
		/* What the trace lost where the answer looked. */
		if (out->lost != NULL && out->lost->n > 0) {
			if (out->lost->lower) {
				hwtr_jw_key(w, "lower_bound");
				hwtr_jw_bool(w, 1);
			}
			hwtr_jw_key(w, "gaps");
			hwtr_jw_i64(w, out->lost->n);
		}
		/* bt: a frame entered before the loss (q_lost_bt()). */
		if (out->lost != NULL && out->nrows + r < out->lost->nbefore &&
		    out->lost->before[out->nrows + r]) {
			hwtr_jw_key(w, "before_gap");
			hwtr_jw_bool(w, 1);
		}
		hwtr_jw_end(w);
	}
}

int
q_out_rows(struct q_out *out, struct hwtr_q_res *res, int more)
{
	if (out->fmt > HWTR_Q_FMT_JSON)
		return (-HWTR_E_INVAL);
	if (q_out_cols(out, res) < 0)
		return (-HWTR_E_NOMEM);
	switch (out->fmt) {
	case HWTR_Q_FMT_TABLE:
		q_table(out, res, more);
		break;
	case HWTR_Q_FMT_CSV:
	case HWTR_Q_FMT_TSV:
		q_sep(out, res);
		break;
	case HWTR_Q_FMT_JSON:
		q_json(out, res);
		break;
	}
	out->nrows += hwtr_q_res_nrows(res);
	/* The block is written: its rows and their text go. */
	res->ncells = 0;
	res->pool.len = 0;
	return (q_out_drain(out));
}

int
q_out_end(struct q_out *out, struct hwtr_q_res *res)
{
	int rc;

	if ((rc = q_out_rows(out, res, 0)) < 0)
		return (rc);
	if (out->fmt == HWTR_Q_FMT_JSON) {
		if (out->nrows == 0)
			hwtr_jw_arr(&out->jw);
		else
			hwtr_jw_ws(&out->jw, "\n");
		hwtr_jw_end(&out->jw);
		q_str_add(&out->buf, "\n", 1);
	}
	/*
	 * A table's footer: what the trace lost where the answer looked.
	 * CSV and TSV stay rows alone (their readers take every line for a
	 * row): the caller says it on stderr (hwtr_q_lost()).
	 */
	if (out->fmt == HWTR_Q_FMT_TABLE && out->lost != NULL &&
	    out->lost->note != NULL)
		q_str_printf(&out->buf, "note: %s\n", out->lost->note);
	return (q_out_drain(out));
}

static int
q_str_sink(void *arg, const char *buf, size_t len)
{
	struct q_str *s = arg;

	q_str_add(s, buf, len);
	return (s->err ? -1 : 0);
}

int
hwtr_q_res_format(const struct hwtr_q_res *res, enum hwtr_q_format fmt,
    int width, char **bufp, size_t *lenp)
{
	struct hwtr_q_res copy;
	struct q_out out;
	struct q_str o = { 0 };
	int rc;

	*bufp = NULL;
	*lenp = 0;
	q_out_init(&out, fmt, width, q_str_sink, &o);
	out.lost = &res->lost;
	/* The writer empties the block it is given: give it a view. */
	copy = *res;
	rc = q_out_end(&out, &copy);
	q_out_fini(&out);
	if (rc == 0 && o.p == NULL)
		q_str_add(&o, "", 0);
	if (rc < 0 || o.err) {
		free(o.p);
		return (rc < 0 && rc != -HWTR_E_IO ? rc : -HWTR_E_NOMEM);
	}
	*bufp = o.p;
	*lenp = o.len;
	return (0);
}
