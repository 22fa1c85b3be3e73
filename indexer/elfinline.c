/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Inlined subroutines (libdw): every DW_TAG_inlined_subroutine of every
 * compilation unit, split units included when their .dwo is found, as
 * one row per address range with its depth, its name (from the abstract
 * origin) and the call site in the function it was inlined into.  gdb
 * builds its inline frames and perf report --inline its inline chains
 * from the same entries.
 */

#include <sys/stat.h>

#include <assert.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "elfinline.h"

/*
 * Instances are recorded down to this depth (1 at a function's top):
 * nesting deeper is not followed (hostile or broken DWARF).
 */
#define INL_MAXDEPTH	HWTR_DB_INLINE_DEPTH
/*
 * Nor DIEs deeper than this in their unit, whatever their tags: lexical
 * blocks, namespaces and nested functions do not count as inlining, and
 * a hostile unit nests a hundred thousand of them in 200 KB, which the
 * recursion below would follow off the stack.  Real code stays under
 * a few dozen.  The rest of such a unit is left: going on past the
 * subtree would step over all of it at every level.
 */
#define INL_MAXNEST	512

struct inl_cu {
	struct ix_elf	*e;
	size_t		cap;		/* of e->inls */
	Dwarf_Files	*files;		/* the unit's file table */
	size_t		nfiles;
	int32_t		*fmap;		/* its index -> e->ifiles, -2: unset */
	int64_t		ninst;		/* instances so far, in the image */
	int		toodeep;	/* the unit nests past INL_MAXNEST */
	int		c_lang;		/* the unit is C or assembly */
};

static int32_t
inl_file(struct inl_cu *c, Dwarf_Word idx)
{
	struct ix_elf *e = c->e;
	const char *src;
	char **p;
	size_t i;

	if (c->files == NULL || idx >= c->nfiles)
		return (-1);
	if (c->fmap[idx] != -2)
		return (c->fmap[idx]);
	src = dwarf_filesrc(c->files, idx, NULL, NULL);
	if (src == NULL)
		return (c->fmap[idx] = -1);
	for (i = 0; i < e->nifiles; i++)
		if (strcmp(e->ifiles[i], src) == 0)
			return (c->fmap[idx] = (int32_t)i);
	p = realloc(e->ifiles, (e->nifiles + 1) * sizeof(*p));
	if (p == NULL)
		return (-3);
	e->ifiles = p;
	if ((p[e->nifiles] = strdup(src)) == NULL)
		return (-3);
	c->fmap[idx] = (int32_t)e->nifiles;
	return ((int32_t)e->nifiles++);
}

/* The name of an instance: its origin's linkage name demangled, or name. */
static char *
inl_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;
	char *d;

	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &a) != NULL ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a) != NULL) &&
	    (s = dwarf_formstring(&a)) != NULL &&
	    (d = ix_demangle(s)) != NULL)
		return (d);
	s = dwarf_diename(die);
	return (strdup(s != NULL ? s : "??"));
}

/*
 * The ranges of instance @die: 1 when it has code, 0 when every range is
 * empty (low_pc == high_pc, or a range list of empty entries: gcc keeps
 * the entry of a body that emits nothing), -1 out of memory.
 */
static int
inl_add(struct inl_cu *c, Dwarf_Die *die, int depth, int64_t parent,
    int64_t inst)
{
	struct ix_elf *e = c->e;
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int32_t file = -1, line = 0;
	char *name = NULL;
	Dwarf_Addr entry = 0;
	int has_entry;
	size_t first = e->ninls, i;

	if (dwarf_attr(die, DW_AT_call_file, &a) != NULL &&
	    dwarf_formudata(&a, &w) == 0 && (file = inl_file(c, w)) == -3)
		return (-1);
	if (dwarf_attr(die, DW_AT_call_line, &a) != NULL &&
	    dwarf_formudata(&a, &w) == 0 && w <= INT32_MAX)
		line = (int32_t)w;
	/*
	 * Where gdb puts a breakpoint on it: DW_AT_entry_pc, else low_pc,
	 * else the first range (set below).
	 */
	has_entry = dwarf_entrypc(die, &entry) == 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct ix_inl *r;

		if (hi <= lo)
			continue;
		if (hwtr_grow((void **)&e->inls, &c->cap, e->ninls + 1,
		    sizeof(*e->inls)) < 0)
			goto nomem;
		if (name == NULL && (name = inl_name(die)) == NULL)
			goto nomem;
		r = &e->inls[e->ninls];
		r->lo = lo;
		r->hi = hi;
		r->inst = inst;
		r->parent = parent;
		r->depth = depth;
		r->call_file = file;
		r->call_line = line;
		/* Each range owns a copy: freeing stays one loop. */
		if (e->ninls > 0 && e->inls[e->ninls - 1].inst == inst)
			r->name = strdup(name);
		else {
			r->name = name;
			name = NULL;
		}
		if (r->name == NULL)
			goto nomem;
		if (!has_entry) {
			entry = lo;
			has_entry = 1;
		}
		e->ninls++;
	}
	/* An entry outside every range (bad DWARF): the first range's. */
	for (i = first; i < e->ninls; i++)
		if (entry >= e->inls[i].lo && entry < e->inls[i].hi)
			break;
	if (i == e->ninls && first < e->ninls)
		entry = e->inls[first].lo;
	for (i = first; i < e->ninls; i++)
		e->inls[i].entry = entry;
	free(name);
	return ((int)(e->ninls - first > 0));
nomem:
	free(name);
	return (-1);
}

/*
 * The inlined instances under @die, @depth levels of inlining deep,
 * inside instance @parent (0: none), @die being @nest levels below its
 * unit's DIE.
 */
static int
inl_walk(struct inl_cu *c, Dwarf_Die *die, int depth, int nest,
    int64_t parent)
{
	Dwarf_Die child;
	int rc;

	if (nest > INL_MAXNEST)
		c->toodeep = 1;
	if (depth >= INL_MAXDEPTH || c->toodeep ||
	    dwarf_child(die, &child) != 0)
		return (0);
	do {
		int tag = dwarf_tag(&child);
		int64_t inst = parent;
		int d = depth;

		if (tag == DW_TAG_inlined_subroutine) {
			inst = ++c->ninst;
			d = depth + 1;
			if ((rc = inl_add(c, &child, d, parent, inst)) < 0)
				return (-1);
			/*
			 * An instance without code has no frame (gdb makes no
			 * block of it: "break" on it finds no function), and
			 * whatever DWARF nests in it is skipped with it, never
			 * given a parent that has no row.
			 */
			if (rc == 0)
				continue;
		} else if (tag == DW_TAG_subprogram) {
			/* A function nested in another starts again. */
			inst = 0;
			d = 0;
		} else if (tag == DW_TAG_class_type ||
		    tag == DW_TAG_structure_type) {
			/*
			 * C++'s and Rust's types may hold functions; a C
			 * structure holds members only (libc's debug file:
			 * 236,320 of them).
			 */
			if (c->c_lang)
				continue;
		} else if (tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_namespace && tag != DW_TAG_module &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;	/* call sites too: parameters only */
		if ((rc = inl_walk(c, &child, d, nest + 1, inst)) < 0)
			return (rc);
	} while (!c->toodeep && dwarf_siblingof(&child, &child) == 0);
	return (0);
}

/*
 * Unit @cudie is C or assembly: its structures hold no functions.  Any
 * other language, or none said, may nest them there.
 */
static int
unit_is_c(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return (1);
	default:
		return (0);
	}
}

static int
inl_unit(struct inl_cu *c, Dwarf_Die *cudie)
{
	size_t i;
	int rc;

	c->files = NULL;
	c->nfiles = 0;
	c->fmap = NULL;
	if (dwarf_getsrcfiles(cudie, &c->files, &c->nfiles) != 0) {
		c->files = NULL;
		c->nfiles = 0;
	}
	if (c->nfiles > 0) {
		if ((c->fmap = malloc(c->nfiles * sizeof(*c->fmap))) == NULL)
			return (-1);
		for (i = 0; i < c->nfiles; i++)
			c->fmap[i] = -2;
	}
	c->toodeep = 0;
	c->c_lang = unit_is_c(cudie);
	rc = inl_walk(c, cudie, 0, 0, 0);
	free(c->fmap);
	c->fmap = NULL;
	return (rc);
}

static int
inl_cmp(const void *a, const void *b)
{
	const struct ix_inl *x = a, *y = b;

	if (x->lo != y->lo)
		return (x->lo < y->lo ? -1 : 1);
	return (x->depth < y->depth ? -1 : x->depth > y->depth);
}

/*
 * Whether every file libdw would open as the .dwo of skeleton unit @cudie
 * is a regular file or absent.  The image's DWARF names them: a hostile
 * one names a FIFO, whose open() blocks till a writer comes (SIGTERM
 * too), or a device.  libdw (elfutils 0.188, __libdw_find_split_unit)
 * tries DW_AT_dwo_name when it is absolute, else DW_AT_comp_dir/name
 * when the directory is: the image is read from memory, so no directory
 * of its own is tried.
 */
static int
dwo_files_plain(Dwarf_Die *cudie)
{
	Dwarf_Attribute a;
	const char *name, *dir;
	char path[4096];
	struct stat st;

	if ((dwarf_attr(cudie, DW_AT_dwo_name, &a) == NULL &&
	    dwarf_attr(cudie, DW_AT_GNU_dwo_name, &a) == NULL) ||
	    (name = dwarf_formstring(&a)) == NULL)
		return (1);
	if (name[0] == '/')
		snprintf(path, sizeof(path), "%s", name);
	else if (dwarf_attr(cudie, DW_AT_comp_dir, &a) != NULL &&
	    (dir = dwarf_formstring(&a)) != NULL && dir[0] == '/')
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		return (1);
	return (stat(path, &st) != 0 || S_ISREG(st.st_mode));
}

int
ix_inl_read(struct ix_elf *e, Dwarf *dw)
{
	struct inl_cu c;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half ver;
	uint8_t ut;
	int rc = 0;

	/* The first DWARF that has them gives them: a debug file's. */
	if (dw == NULL || e->ninls != 0 || e->inl_nodwo != 0)
		return (0);
	memset(&c, 0, sizeof(c));
	c.e = e;
	c.cap = e->ninls;
	while (dwarf_get_units(dw, cu, &cu, &ver, &ut, &cudie, NULL) == 0) {
		Dwarf_Die *top = &cudie;

		if (ut == DW_UT_skeleton) {
			/*
			 * The split unit in its .dwo, when libdw finds it: on
			 * this machine, never in the archive.
			 */
			if (e->no_host || !dwo_files_plain(&cudie)) {
				e->inl_nodwo++;
				continue;
			}
			if (dwarf_cu_info(cu, NULL, NULL, NULL, &subdie, NULL,
			    NULL, NULL) != 0 || subdie.cu == NULL ||
			    dwarf_tag(&subdie) != DW_TAG_compile_unit) {
				e->inl_nodwo++;
				continue;
			}
			top = &subdie;
		} else if (ut != DW_UT_compile && ut != DW_UT_partial)
			continue;
		if ((rc = inl_unit(&c, top)) < 0)
			break;
	}
	return (rc);
}

void
ix_inl_sort(struct ix_elf *e)
{
	if (e->ninls > 1)
		qsort(e->inls, e->ninls, sizeof(*e->inls), inl_cmp);
}

void
ix_inl_free(struct ix_elf *e)
{
	size_t i;

	for (i = 0; i < e->ninls; i++)
		free(e->inls[i].name);
	free(e->inls);
	for (i = 0; i < e->nifiles; i++)
		free(e->ifiles[i]);
	free(e->ifiles);
	e->inls = NULL;
	e->ifiles = NULL;
	e->ninls = e->nifiles = 0;
}
