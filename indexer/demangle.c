/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Symbol names demangled (hwtr_ix.h), at the bottom of indexer/: the ELF
 * symbol tables (elfsym.c) and the inlined subroutines (elfinline.c)
 * both use it.
 */

#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_ix.h"

/*
 * libiberty's demangler (Debian's libiberty-dev), which knows the Itanium
 * C++ ABI and both Rust manglings, as c++filt does.  A stub's "@plt" (or
 * any "@" suffix) is put back after the demangled name.
 */
char *
ix_demangle(const char *name)
{
	const char *at = strchr(name, '@');
	char *base, *d, *out;
	size_t n;

	if (at == NULL)
		return (cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI));
	if ((base = strndup(name, (size_t)(at - name))) == NULL)
		return (NULL);
	d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
	free(base);
	if (d == NULL)
		return (NULL);
	n = strlen(d) + strlen(at) + 1;
	if ((out = malloc(n)) != NULL)
		snprintf(out, n, "%s%s", d, at);
	free(d);
	return (out);
}
