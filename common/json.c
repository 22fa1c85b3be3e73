/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * JSON strings in the output hwtrace writes itself (hwtrace info --json,
 * the query verbs' json format and trees).  The archive's JSON members are
 * written and parsed by format/ with jansson; output that streams row by
 * row needs only this, the quoting (RFC 8259, section 7).
 */

#include <stdio.h>

#include "hwtr_common.h"

void
hwtr_json_quote(hwtr_put_fn put, void *arg, const char *s)
{
	const unsigned char *p, *run;
	const char *e;
	char u[8];

	if (s == NULL) {
		put(arg, "null", 4);
		return;
	}
	put(arg, "\"", 1);
	for (p = run = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			if (*p >= 0x20 && *p != 0x7f)
				continue;
			snprintf(u, sizeof(u), "\\u%04x", *p);
			e = u;
		}
		if (p > run)
			put(arg, (const char *)run, (size_t)(p - run));
		put(arg, e, e == u ? 6 : 2);
		run = p + 1;
	}
	if (p > run)
		put(arg, (const char *)run, (size_t)(p - run));
	put(arg, "\"", 1);
}
