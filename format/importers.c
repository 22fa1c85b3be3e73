/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The importer table and its one driver, at the top of the importers.  An
 * importer bids on a path (how sure it is the path is its format) and
 * loads it into a sink; the driver picks the importer, owns the archive's
 * name, and finishes or removes the archive, so no importer opens, closes
 * or cleans up a file of its own.  What the importers share (the sink,
 * the error message) is in import.c, below them.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_import.h"

static const struct hwtr_importer *const importers[] = {
	&hwtr_importer_raw,
	&hwtr_importer_lldb,
	&hwtr_importer_cs,
	&hwtr_importer_perf,
	&hwtr_importer_hwt,
};

static const char *const names[] = {
	"raw", "lldb", "coresight", "perf", "hwt", NULL
};

const char *const *
hwtr_import_formats(void)
{
	return (names);
}

/*
 * An input is a directory (a snapshot) or a regular file: a FIFO or a
 * device is refused before any importer opens it, so that none blocks.
 */
static int
input_kind_ok(const char *path)
{
	struct stat st;

	return (stat(path, &st) != 0 || S_ISDIR(st.st_mode) ||
	    S_ISREG(st.st_mode));
}

static const struct hwtr_importer *
best_bid(const char *path, int *bidp)
{
	const struct hwtr_importer *best = NULL;
	size_t i;
	int b, top = 0;

	for (i = 0; i < HWTR_NELEM(importers); i++) {
		if (importers[i]->bid == NULL)
			continue;
		b = importers[i]->bid(path);
		if (b > top) {
			top = b;
			best = importers[i];
		}
	}
	*bidp = top;
	return (best);
}

const char *
hwtr_import_guess(const char *path)
{
	const struct hwtr_importer *imp;
	int bid;

	if (path == NULL || !input_kind_ok(path))
		return (NULL);
	imp = best_bid(path, &bid);
	return (imp == NULL ? NULL : imp->name);
}

/*
 * Close @aw (renaming its file to @out); on failure remove the partial
 * file too and say why in @errbuf.  Frees @aw.
 */
static int
import_close(struct hwtr_aw *aw, const char *out, char *errbuf,
    size_t errlen)
{
	char ebuf[HWTR_ERRMSG_MAX], *tmp;
	int rc;

	/*
	 * A capture keeps the partial file of a writer that fails to close
	 * (what it holds is still readable); an import has its inputs and
	 * leaves nothing behind.
	 */
	tmp = strdup(hwtr_aw_path(aw));
	ebuf[0] = '\0';
	rc = hwtr_aw_close(aw, ebuf, sizeof(ebuf));
	if (rc < 0) {
		hwtr_import_err(errbuf, errlen, "cannot finish '%s': %s", out,
		    ebuf[0] ? ebuf : hwtr_errstr(rc));
		if (tmp != NULL && strcmp(tmp, out) != 0)
			unlink(tmp);
	}
	free(tmp);
	return (rc);
}

/*
 * The one write path: run @imp's loader into a fresh sink, then finish
 * the archive it opened (end record, close, rename) or remove it.  @base
 * and @end0 are a live capture's identity and exit status (NULL for an
 * import); the loader's loss is added to @end0's, and the end written is
 * returned in *@endp.
 */
static int
import_run(const struct hwtr_importer *imp, const char *path,
    const struct hwtr_import_opts *o, const struct hwtr_capture_meta *base,
    const struct hwtr_capture_end *end0, const char *out,
    struct hwtr_capture_end *endp, uint64_t *trace_bytes, char *errbuf,
    size_t errlen)
{
	struct hwtr_import_sink sk;
	struct hwtr_capture_end own;
	int rc;

	if (endp == NULL)
		endp = &own;
	memset(&sk, 0, sizeof(sk));
	sk.out = out;
	sk.aw_opts = o->aw_opts;
	sk.errbuf = errbuf;
	sk.errlen = errlen;
	sk.base = base;
	sk.end.exit_kind = HWTR_EXIT_NONE;
	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	rc = imp->load(path, o, &sk);
	if (rc < 0) {
		if (sk.aw != NULL)
			hwtr_aw_abort(sk.aw, 0);
		return (rc);
	}
	if (sk.aw == NULL) {
		hwtr_import_err(errbuf, errlen, "%s importer wrote nothing",
		    imp->name);
		return (-HWTR_E_INVAL);
	}
	if (end0 != NULL) {
		*endp = *end0;
		endp->lost_bytes += sk.end.lost_bytes;
		endp->lost_records += sk.end.lost_records;
	} else
		*endp = sk.end;
	if (trace_bytes != NULL)
		*trace_bytes = sk.trace_bytes;
	hwtr_aw_set_end(sk.aw, endp);
	rc = import_close(sk.aw, out, errbuf, errlen);
	return (rc < 0 ? rc : 0);
}

int
hwtr_import(const char *path, const struct hwtr_import_opts *o,
    const char *out, char *errbuf, size_t errlen)
{
	static const struct hwtr_import_opts none;
	const struct hwtr_importer *imp = NULL;
	struct hwtr_capture_end end;
	size_t i;
	int bid;

	if (o == NULL)
		o = &none;
	if (out == NULL || *out == '\0') {
		hwtr_import_err(errbuf, errlen, "no output given");
		return (-HWTR_E_INVAL);
	}
	if (path != NULL && !input_kind_ok(path)) {
		hwtr_import_err(errbuf, errlen, "'%s' is not a regular file "
		    "or a directory", path);
		return (-HWTR_E_INVAL);
	}
	if (o->format != NULL) {
		for (i = 0; i < HWTR_NELEM(importers); i++)
			if (strcmp(importers[i]->name, o->format) == 0)
				imp = importers[i];
		if (imp == NULL) {
			hwtr_import_err(errbuf, errlen, "no importer of "
			    "format '%s' (raw, lldb, coresight, perf)",
			    o->format);
			return (-HWTR_E_INVAL);
		}
	} else {
		if (path == NULL) {
			hwtr_import_err(errbuf, errlen, "nothing to import");
			return (-HWTR_E_INVAL);
		}
		if ((imp = best_bid(path, &bid)) == NULL) {
			hwtr_import_err(errbuf, errlen, "'%s': not a format "
			    "hwtrace imports (an LLDB trace bundle, a "
			    "CoreSight snapshot directory or a perf.data "
			    "file)", path);
			return (-HWTR_E_FORMAT);
		}
	}
	return (import_run(imp, path, o, NULL, NULL, out, &end, NULL, errbuf,
	    errlen));
}

int
hwtr_import_perf_capture(const char *recording,
    const struct hwtr_import_opts *o, const struct hwtr_capture_meta *base,
    struct hwtr_capture_end *end, const char *out, uint64_t *trace_bytes,
    char *errbuf, size_t errlen)
{
	static const struct hwtr_import_opts none;

	return (import_run(&hwtr_importer_perf, recording,
	    o != NULL ? o : &none, base, end, out, end, trace_bytes, errbuf,
	    errlen));
}

int
hwtr_import_raw(const struct hwtr_import_raw_opts *o, const char *out,
    char *errbuf, size_t errlen)
{
	struct hwtr_import_opts io;

	memset(&io, 0, sizeof(io));
	io.format = "raw";
	io.raw = o;
	io.aw_opts = o != NULL ? o->aw_opts : NULL;
	return (hwtr_import(NULL, &io, out, errbuf, errlen));
}
