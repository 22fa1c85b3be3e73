/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Inlined subroutines of one image (libdw: DW_TAG_inlined_subroutine),
 * the inlines table of hwtrace-db(5).  elfsym.c calls ix_inl_read() with
 * each DWARF handle it reads lines from (its decompressed copy: libdw
 * cannot read compressed sections of a read-only image), then
 * ix_inl_sort(); the writer stores the ranges.
 */

#ifndef HWTR_IX_ELFINLINE_H
#define HWTR_IX_ELFINLINE_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct ix_elf;

/* One address range of one inlined instance (an instance may have many). */
struct ix_inl {
	uint64_t	lo, hi;		/* link-time, [lo, hi) */
	uint64_t	entry;		/* the instance's entry (gdb's break) */
	int64_t		inst;		/* instance, from 1 within the image */
	int64_t		parent;		/* enclosing instance, 0: none */
	int32_t		depth;		/* 1: inlined into a real function */
	int32_t		call_file;	/* index into ix_elf.ifiles, -1: none */
	int32_t		call_line;
	char		*name;		/* demangled when mangled */
};

/*
 * The inlined subroutines of @dw (borrowed; NULL: none) into @e
 * (ix_elf.inls), unless an earlier DWARF of the image gave some.  A split
 * unit whose .dwo cannot be found is counted in ix_elf.inl_nodwo and
 * skipped.  -1: out of memory; DWARF it cannot read is no error.
 * ix_inl_sort() then sorts them by lo.
 */
int ix_inl_read(struct ix_elf *e, Dwarf *dw);
void ix_inl_sort(struct ix_elf *e);
void ix_inl_free(struct ix_elf *e);

#endif /* !HWTR_IX_ELFINLINE_H */
