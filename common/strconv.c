/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Numbers and bytes to and from text, strictly: option values, snapshot
 * keys, archive members and trace bundles are parsed by the same rules,
 * so "12abc", " 12", "-1" and "+1" are refused everywhere alike.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"

void
hwtr_hex(char *out, const uint8_t *p, size_t len)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hx[p[i] >> 4];
		out[2 * i + 1] = hx[p[i] & 15];
	}
	out[2 * len] = '\0';
}

int
hwtr_hexdigit(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* hwtr_unhex() takes lowercase only. */
static int
hexdigit(int c)
{
	return (c >= 'A' && c <= 'F' ? -1 : hwtr_hexdigit(c));
}

int
hwtr_unhex(const char *s, uint8_t *out, size_t max, size_t *lenp)
{
	size_t n = strlen(s), i;
	int hi, lo;

	if (n % 2 != 0 || n / 2 > max)
		return (-HWTR_E_INVAL);
	for (i = 0; i < n / 2; i++) {
		hi = hexdigit((unsigned char)s[2 * i]);
		lo = hexdigit((unsigned char)s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return (-HWTR_E_INVAL);
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*lenp = n / 2;
	return (0);
}

int
hwtr_parse_u64(const char *s, uint64_t *vp)
{
	unsigned long long v;
	char *end;

	/* strtoull() would skip spaces and take a sign (and negate). */
	if (s == NULL || *s < '0' || *s > '9')
		return (-HWTR_E_INVAL);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0')
		return (-HWTR_E_INVAL);
	*vp = v;
	return (0);
}

int
hwtr_parse_long(const char *s, long min, long max, long *vp)
{
	long v;
	char *end;

	if (s == NULL || *s == '\0')
		return (-HWTR_E_INVAL);
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return (-HWTR_E_INVAL);
	*vp = v;
	return (0);
}
