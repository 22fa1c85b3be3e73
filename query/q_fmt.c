/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Rendering a result: an aligned table for people, CSV, TSV and JSON for
 * programs.  Everything goes into one buffer that the caller writes at
 * once.  A table shortens long text cells only when asked to fit a width
 * (the CLI asks only on a terminal), so piped output is never cut.
 */

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

/* Display width of UTF-8 text: code points, not bytes. */
static size_t
q_dwidth(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return (w);
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

static const char *
q_tcell(const struct hwtr_q_res *res, const struct q_cell *c)
{
	return (c->off == Q_NULLOFF ? "-" : res->pool.p + c->off);
}

static void
q_table(const struct hwtr_q_res *res, int width, struct q_str *o)
{
	size_t nr = hwtr_q_res_nrows(res), r, c, *w, total, pad, k, n;
	int *right, *textcol;
	const struct q_cell *cell;
	const char *s;

	w = calloc(res->ncols, sizeof(*w));
	right = calloc(res->ncols, sizeof(*right));
	textcol = calloc(res->ncols, sizeof(*textcol));
	if (w == NULL || right == NULL || textcol == NULL) {
		o->err = 1;
		goto out;
	}
	for (c = 0; c < res->ncols; c++) {
		w[c] = q_dwidth(res->names[c]);
		/* Numbers right, text left; NULLs do not decide. */
		for (r = 0; r < nr; r++) {
			cell = &res->cells[r * res->ncols + c];
			if ((n = q_dwidth(q_tcell(res, cell))) > w[c])
				w[c] = n;
			if (cell->type == HWTR_Q_TEXT)
				textcol[c] = 1;
			else if (cell->type != HWTR_Q_NULL)
				right[c] = 1;
		}
		if (textcol[c])
			right[c] = 0;
	}
	/*
	 * Fit @width: take columns from the widest text column down, never
	 * below 8 or its name.
	 */
	while (width > 0 && res->ncols > 0) {
		size_t widest = res->ncols, floor;

		for (total = 0, c = 0; c < res->ncols; c++)
			total += w[c] + (c ? 2 : 0);
		if (total <= (size_t)width)
			break;
		for (c = 0; c < res->ncols; c++) {
			floor = q_dwidth(res->names[c]);
			if (floor < 8)
				floor = 8;
			if (textcol[c] && w[c] > floor &&
			    (widest == res->ncols || w[c] > w[widest]))
				widest = c;
		}
		if (widest == res->ncols)
			break;
		floor = q_dwidth(res->names[widest]);
		if (floor < 8)
			floor = 8;
		k = total - (size_t)width;
		w[widest] = w[widest] - k < floor || k >= w[widest] ? floor :
		    w[widest] - k;
	}
	for (r = 0; r <= nr; r++) {
		for (c = 0; c < res->ncols; c++) {
			s = r == 0 ? res->names[c] :
			    q_tcell(res, &res->cells[(r - 1) * res->ncols + c]);
			n = q_dwidth(s);
			if (c > 0)
				q_str_add(o, "  ", 2);
			if (n > w[c]) {
				/* Shortened: keep the start, mark the cut. */
				q_str_add(o, s, q_dprefix(s, w[c] - 3));
				q_str_add(o, "...", 3);
				continue;
			}
			pad = w[c] - n;
			if (right[c] && r > 0)
				for (k = 0; k < pad; k++)
					q_str_add(o, " ", 1);
			q_str_puts(o, s);
			if ((!right[c] || r == 0) && c + 1 < res->ncols)
				for (k = 0; k < pad; k++)
					q_str_add(o, " ", 1);
		}
		/* No trailing blanks. */
		while (o->len > 0 && o->p[o->len - 1] == ' ')
			o->p[--o->len] = '\0';
		q_str_add(o, "\n", 1);
	}
out:
	free(w);
	free(right);
	free(textcol);
}

static void
q_csv_field(struct q_str *o, const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\r\n") == NULL) {
		q_str_puts(o, s);
		return;
	}
	q_str_add(o, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			q_str_add(o, "\"", 1);
		q_str_add(o, s, 1);
	}
	q_str_add(o, "\"", 1);
}

static void
q_tsv_field(struct q_str *o, const char *s)
{
	if (s == NULL)
		return;
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '\t':
			q_str_add(o, "\\t", 2);
			break;
		case '\n':
			q_str_add(o, "\\n", 2);
			break;
		case '\r':
			q_str_add(o, "\\r", 2);
			break;
		case '\\':
			q_str_add(o, "\\\\", 2);
			break;
		default:
			q_str_add(o, s, 1);
		}
	}
}

static void
q_sep(const struct hwtr_q_res *res, enum hwtr_q_format fmt, struct q_str *o)
{
	size_t nr = hwtr_q_res_nrows(res), r, c;
	const char *s;

	for (r = 0; r <= nr; r++) {
		for (c = 0; c < res->ncols; c++) {
			if (c > 0)
				q_str_add(o, fmt == HWTR_Q_FMT_CSV ? "," : "\t",
				    1);
			s = r == 0 ? res->names[c] : Q_CELL_S(res,
			    &res->cells[(r - 1) * res->ncols + c]);
			if (fmt == HWTR_Q_FMT_CSV)
				q_csv_field(o, s);
			else
				q_tsv_field(o, s);
		}
		q_str_add(o, "\n", 1);
	}
}

static void
q_json(const struct hwtr_q_res *res, struct q_str *o)
{
	size_t nr = hwtr_q_res_nrows(res), r, c;
	const struct q_cell *cell;
	const char *s;

	if (nr == 0) {
		q_str_puts(o, "[]\n");
		return;
	}
	q_str_puts(o, "[\n");
	for (r = 0; r < nr; r++) {
		q_str_puts(o, "  {");
		for (c = 0; c < res->ncols; c++) {
			cell = &res->cells[r * res->ncols + c];
			if (c > 0)
				q_str_puts(o, ", ");
			q_str_json(o, res->names[c]);
			q_str_puts(o, ": ");
			s = Q_CELL_S(res, cell);
			if (s == NULL)
				q_str_puts(o, "null");
			else if (cell->type == HWTR_Q_INT ||
			    (cell->type == HWTR_Q_REAL &&
			    strspn(s, "0123456789.-+eE") == strlen(s)))
				q_str_puts(o, s);
			else
				q_str_json(o, s);
		}
		q_str_puts(o, r + 1 < nr ? "},\n" : "}\n");
	}
	q_str_puts(o, "]\n");
}

int
hwtr_q_res_format(const struct hwtr_q_res *res, enum hwtr_q_format fmt,
    int width, char **bufp, size_t *lenp)
{
	struct q_str o = { 0 };

	*bufp = NULL;
	*lenp = 0;
	switch (fmt) {
	case HWTR_Q_FMT_TABLE:
		q_table(res, width, &o);
		break;
	case HWTR_Q_FMT_CSV:
	case HWTR_Q_FMT_TSV:
		q_sep(res, fmt, &o);
		break;
	case HWTR_Q_FMT_JSON:
		q_json(res, &o);
		break;
	default:
		return (-HWTR_E_INVAL);
	}
	if (o.err) {
		free(o.p);
		return (-HWTR_E_NOMEM);
	}
	if (o.p == NULL)
		q_str_add(&o, "", 0);
	if (o.err) {
		free(o.p);
		return (-HWTR_E_NOMEM);
	}
	*bufp = o.p;
	*lenp = o.len;
	return (0);
}
