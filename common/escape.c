/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Terminal-safe strings.  Host names, command lines, paths and symbol
 * names come from archives, which nothing trusts: printed as they are, an
 * escape sequence in one could retitle the terminal, clear it or forge
 * lines of output.  Human-readable output passes them through here; JSON
 * and CSV output (which quote by their own rules) stay exact.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"

/*
 * The length of the valid UTF-8 sequence at @p (2 to 4 bytes) that is not
 * a C1 control, or 0.  Overlong forms and surrogates are not valid.
 */
static size_t
utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned int c;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return (0);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 ||
	    c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff) ||
	    (c >= 0x80 && c <= 0x9f))
		return (0);
	return (n);
}

/*
 * Escape @s into @out (NULL: only count).  Returns the length of the
 * escaped string.
 */
static size_t
esc(const char *s, int flags, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	char e[8];
	size_t n = 0, k;

	while (*p != '\0') {
		if ((*p >= 0x20 && *p < 0x7f) ||
		    (*p == '\n' && (flags & HWTR_ESC_KEEP_NL))) {
			if (out != NULL)
				out[n] = (char)*p;
			n++;
			p++;
			continue;
		}
		if (*p >= 0x80 && (k = utf8_len(p)) > 0) {
			if (out != NULL)
				memcpy(out + n, p, k);
			n += k;
			p += k;
			continue;
		}
		switch (*p) {
		case '\n':
			memcpy(e, "\\n", 3);
			break;
		case '\t':
			memcpy(e, "\\t", 3);
			break;
		case '\r':
			memcpy(e, "\\r", 3);
			break;
		case 0x1b:
			memcpy(e, "\\e", 3);
			break;
		default:
			snprintf(e, sizeof(e), "\\x%02x", *p);
			break;
		}
		k = strlen(e);
		if (out != NULL)
			memcpy(out + n, e, k);
		n += k;
		p++;
	}
	if (out != NULL)
		out[n] = '\0';
	return (n);
}

int
hwtr_esc_needed(const char *s, int flags)
{
	return (s != NULL && esc(s, flags, NULL) != strlen(s) ? 1 : 0);
}

char *
hwtr_esc_dup(const char *s, int flags)
{
	char *out;

	if (s == NULL)
		return (NULL);
	if ((out = malloc(esc(s, flags, NULL) + 1)) == NULL)
		return (NULL);
	esc(s, flags, out);
	return (out);
}
