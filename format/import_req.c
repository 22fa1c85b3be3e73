/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * An import as a command line states it (hwtrace import): ptxed's
 * FILE[:SUFFIX] arguments taken apart, the rules saying which options go
 * with which kind of import, and the import run.  The command only parses
 * options and prints; the messages here name the options as ptxed and
 * hwtrace-import(1) spell them.
 */

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_import.h"

/*
 * "FROM" or "FROM-TO", strictly.  TO must be above FROM.  Returns 0, or -1
 * for a malformed range.
 */
static int
parse_range(char *s, struct hwtr_import_file *f)
{
	char *dash;

	dash = strchr(s, '-');
	if (dash != NULL)
		*dash = '\0';
	if (hwtr_parse_u64(s, &f->from) != 0)
		return (-1);
	if (dash != NULL) {
		if (hwtr_parse_u64(dash + 1, &f->to) != 0 || f->to <= f->from)
			return (-1);
	}
	return (0);
}

/*
 * Split an optional ":SUFFIX" off @s when SUFFIX starts with a digit, as
 * ptxed does (a ':' followed by anything else belongs to the file name).
 * Returns the suffix or NULL.
 */
static char *
split_suffix(char *s)
{
	char *c;

	c = strrchr(s, ':');
	if (c == NULL || c == s || !isdigit((unsigned char)c[1]))
		return (NULL);
	*c = '\0';
	return (c + 1);
}

int
hwtr_import_parse_cpu(const char *s, struct hwtr_import_raw_opts *o)
{
	char buf[64], *m, *st;
	long fam, mod, step = 0;

	if (strcmp(s, "none") == 0) {
		o->cpu_mode = HWTR_IMPORT_CPU_NONE;
		return (0);
	}
	if (strcmp(s, "auto") == 0) {
		o->cpu_mode = HWTR_IMPORT_CPU_AUTO;
		return (0);
	}
	if (strlen(s) >= sizeof(buf))
		return (-HWTR_E_INVAL);
	strcpy(buf, s);
	if ((m = strchr(buf, '/')) == NULL)
		return (-HWTR_E_INVAL);
	*m++ = '\0';
	if ((st = strchr(m, '/')) != NULL)
		*st++ = '\0';
	if (hwtr_parse_long(buf, 0, 0xffff, &fam) != 0 ||
	    hwtr_parse_long(m, 0, 0xff, &mod) != 0 ||
	    (st != NULL && hwtr_parse_long(st, 0, 0xff, &step) != 0))
		return (-HWTR_E_INVAL);
	o->cpu_mode = HWTR_IMPORT_CPU_GIVEN;
	o->cpu.vendor = HWTR_CPU_INTEL;
	o->cpu.family = (uint16_t)fam;
	o->cpu.model = (uint8_t)mod;
	o->cpu.stepping = (uint8_t)step;
	return (0);
}

/* The option word of @which, without its dashes. */
static const char *
list_name(enum hwtr_import_list which)
{
	switch (which) {
	case HWTR_IMPORT_PT:
		return ("pt");
	case HWTR_IMPORT_RAW:
		return ("raw");
	case HWTR_IMPORT_ELF:
		return ("elf");
	case HWTR_IMPORT_PEV_PRIMARY:
		return ("pevent:primary");
	default:
		assert(which == HWTR_IMPORT_PEV_SECONDARY);
		return ("pevent:secondary");
	}
}

/*
 * The suffixes of @copy (the argument @arg of option @which) into @f; @copy
 * keeps the file name.  0 or -HWTR_E_INVAL with the reason in @errbuf.
 */
static int
file_suffixes(enum hwtr_import_list which, const char *arg, char *copy,
    struct hwtr_import_file *f, char *errbuf, size_t errlen)
{
	const char *name = list_name(which);
	char *sfx;

	if (which == HWTR_IMPORT_PEV_PRIMARY ||
	    which == HWTR_IMPORT_PEV_SECONDARY) {
		sfx = split_suffix(copy);
		if (sfx != NULL && parse_range(sfx, f) != 0)
			goto range;
		return (0);
	}
	if (which == HWTR_IMPORT_RAW) {
		/* The load address is not optional. */
		sfx = strrchr(copy, ':');
		if (sfx == NULL || sfx == copy) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': no load "
			    "address (FILE[:FROM[-TO]]:VADDR)", arg);
			return (-HWTR_E_INVAL);
		}
		*sfx++ = '\0';
		if (hwtr_parse_u64(sfx, &f->addr) != 0) {
			hwtr_import_err(errbuf, errlen, "--raw '%s': "
			    "malformed load address '%s'", arg, sfx);
			return (-HWTR_E_INVAL);
		}
		f->has_addr = 1;
	}
	sfx = split_suffix(copy);
	if (sfx != NULL && which == HWTR_IMPORT_ELF) {
		if (hwtr_parse_u64(sfx, &f->addr) != 0) {
			hwtr_import_err(errbuf, errlen, "--elf '%s': "
			    "malformed base '%s'", arg, sfx);
			return (-HWTR_E_INVAL);
		}
		f->has_addr = 1;
	} else if (sfx != NULL && parse_range(sfx, f) != 0)
		goto range;
	if (*copy == '\0') {
		hwtr_import_err(errbuf, errlen, "--%s '%s': no file name",
		    name, arg);
		return (-HWTR_E_INVAL);
	}
	return (0);
range:
	hwtr_import_err(errbuf, errlen, "--%s '%s': malformed range (FROM "
	    "or FROM-TO, TO above FROM)", name, arg);
	return (-HWTR_E_INVAL);
}

int
hwtr_import_req_file(struct hwtr_import_req *r, enum hwtr_import_list which,
    const char *arg, char *errbuf, size_t errlen)
{
	struct hwtr_import_files *to;
	struct hwtr_import_file f, *nv;
	char *copy;
	int rc;

	memset(&f, 0, sizeof(f));
	if ((copy = strdup(arg)) == NULL)
		goto nomem;
	rc = file_suffixes(which, arg, copy, &f, errbuf, errlen);
	if (rc < 0) {
		free(copy);
		return (rc);
	}
	to = which == HWTR_IMPORT_PT ? &r->pt : which == HWTR_IMPORT_RAW ?
	    &r->rawf : which == HWTR_IMPORT_ELF ? &r->elf : &r->pev;
	nv = realloc(to->v, (to->n + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(copy);
		goto nomem;
	}
	f.path = copy;
	to->v = nv;
	to->v[to->n++] = f;
	return (0);
nomem:
	hwtr_import_err(errbuf, errlen, "out of memory");
	return (-HWTR_E_NOMEM);
}

static void
files_free(struct hwtr_import_files *fs)
{
	while (fs->n > 0)
		free((char *)fs->v[--fs->n].path);
	free(fs->v);
	fs->v = NULL;
}

void
hwtr_import_req_free(struct hwtr_import_req *r)
{
	files_free(&r->pt);
	files_free(&r->rawf);
	files_free(&r->elf);
	files_free(&r->pev);
}

/* One operand that is hwt(8)'s raw dump (format/import_hwt.c). */
static int
hwt_dump(const struct hwtr_import_req *r)
{
	const char *g;

	if (r->nops != 1 || r->lldb || r->pt.n + r->rawf.n > 0)
		return (0);
	g = hwtr_import_guess(r->ops[0]);
	return (g != NULL && strcmp(g, "hwt") == 0);
}

/* Raw files (--pt, --raw, --elf) and nothing else. */
static int
check_raw(const struct hwtr_import_req *r, char *errbuf, size_t errlen)
{
	if (!r->lldb && r->nops == 1 && r->pt.n + r->rawf.n == 0)
		hwtr_import_err(errbuf, errlen, "'%s' is not a hwt(8) raw "
		    "dump (it does not start with a PSB packet); other raw "
		    "Intel PT goes with --pt", r->ops[0]);
	else if (r->lldb || r->nops != 0)
		hwtr_import_err(errbuf, errlen, "raw files (--pt, --raw, "
		    "--elf) and a trace bundle cannot be imported together");
	else if (r->pt.n == 0)
		hwtr_import_err(errbuf, errlen, "no trace given (--pt FILE)");
	else
		return (0);
	return (-HWTR_E_INVAL);
}

/* One operand without the options of raw imports. */
static int
check_bundle(const struct hwtr_import_req *r, char *errbuf, size_t errlen)
{
	const struct hwtr_import_raw_opts *o = &r->raw;
	const struct hwtr_import_opts *io = &r->opts;
	const char *g;

	if (r->nops != 1)
		hwtr_import_err(errbuf, errlen, "%s", r->nops == 0 ?
		    "nothing to import (--pt FILE or TRACE.JSON)" :
		    "more than one trace bundle given");
	else if (hwt_dump(r))
		return (0);
	else if (o->cpu_mode != HWTR_IMPORT_CPU_NONE ||
	    o->pt_config.cpuid_15_eax != 0 ||
	    o->pt_config.cpuid_15_ebx != 0 ||
	    o->pt_config.mtc_freq != 0 || o->pt_config.nom_freq != 0)
		hwtr_import_err(errbuf, errlen, "--cpu, --cpuid-*, "
		    "--mtc-freq and --nom-freq apply to raw imports; "
		    "a trace bundle carries its own");
	else if (r->pev.n != 0 || r->npevopt != 0)
		hwtr_import_err(errbuf, errlen, "--pevent:* apply to raw "
		    "imports");
	else if (o->pt_config.nfilters != 0)
		hwtr_import_err(errbuf, errlen, "--filter:* apply to raw "
		    "imports; a trace bundle carries its own");
	else {
		g = r->lldb ? NULL : hwtr_import_guess(r->ops[0]);
		if (g == NULL || strcmp(g, "perf") == 0 ||
		    (io->buildid_dir == NULL && io->symfs == NULL &&
		    io->perf_archive == NULL && io->kcore == NULL &&
		    io->vmlinux == NULL))
			return (0);
		hwtr_import_err(errbuf, errlen, "--buildid-dir, --symfs, "
		    "--perf-archive, --kcore and --vmlinux apply to "
		    "perf.data imports");
	}
	return (-HWTR_E_INVAL);
}

/* Raw files, unless they are the --elf images of a hwt(8) dump. */
static int
is_raw(const struct hwtr_import_req *r)
{
	return (r->pt.n + r->rawf.n + r->elf.n > 0 && !hwt_dump(r));
}

int
hwtr_import_req_check(const struct hwtr_import_req *r, char *errbuf,
    size_t errlen)
{
	return (is_raw(r) ? check_raw(r, errbuf, errlen) :
	    check_bundle(r, errbuf, errlen));
}

int
hwtr_import_req_run(struct hwtr_import_req *r, const char *out,
    char *errbuf, size_t errlen)
{
	struct hwtr_import_raw_opts *o = &r->raw;
	struct hwtr_import_opts *io = &r->opts;
	int hwt;

	/* hwtr_import_req_check() said yes. */
	o->elf = r->elf.v;
	o->nelf = r->elf.n;
	o->aw_opts = &r->aw;
	io->aw_opts = &r->aw;
	if (is_raw(r)) {
		o->pt = r->pt.v;
		o->npt = r->pt.n;
		o->raw = r->rawf.v;
		o->nraw = r->rawf.n;
		o->pevent = r->pev.v;
		o->npevent = r->pev.n;
		return (hwtr_import_raw(o, out, errbuf, errlen));
	}
	hwt = hwt_dump(r);
	io->format = hwt ? "hwt" : r->lldb ? "lldb" : NULL;
	if (hwt)
		io->raw = o;
	return (hwtr_import(r->ops[0], io, out, errbuf, errlen));
}
