/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The importer table and its one driver.  An importer bids on a path
 * (how sure it is the path is its format) and loads it into a sink; the
 * driver picks the importer, owns the archive's name, and finishes or
 * removes the archive, so no importer opens, closes or cleans up a file
 * of its own.
 */

#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_import.h"

static const struct hwtr_importer *const importers[] = {
	&hwtr_importer_raw,
	&hwtr_importer_lldb,
	&hwtr_importer_cs,
	&hwtr_importer_perf,
};

static const char *const names[] = {
	"raw", "lldb", "coresight", "perf", NULL
};

const char *const *
hwtr_import_formats(void)
{
	return (names);
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

	if (path == NULL)
		return (NULL);
	imp = best_bid(path, &bid);
	return (imp == NULL ? NULL : imp->name);
}

int
hwtr_import_begin(struct hwtr_import_sink *sk,
    const struct hwtr_capture_meta *meta)
{
	char ebuf[256];
	int rc;

	if (sk->aw != NULL) {
		hwtr_import_err(sk->errbuf, sk->errlen, "archive '%s' opened "
		    "twice", sk->out);
		return (-HWTR_E_INVAL);
	}
	ebuf[0] = '\0';
	rc = hwtr_aw_open(&sk->aw, sk->out, meta, sk->aw_opts, ebuf,
	    sizeof(ebuf));
	if (rc < 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "cannot write '%s': "
		    "%s", sk->out, ebuf[0] ? ebuf : hwtr_errstr(rc));
		sk->aw = NULL;
	}
	return (rc);
}

int
hwtr_import(const char *path, const struct hwtr_import_opts *o,
    const char *out, char *errbuf, size_t errlen)
{
	static const struct hwtr_import_opts none;
	const struct hwtr_importer *imp = NULL;
	struct hwtr_import_sink sk;
	size_t i;
	int rc, bid;

	if (o == NULL)
		o = &none;
	if (out == NULL || *out == '\0') {
		hwtr_import_err(errbuf, errlen, "no output given");
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
	memset(&sk, 0, sizeof(sk));
	sk.out = out;
	sk.aw_opts = o->aw_opts;
	sk.errbuf = errbuf;
	sk.errlen = errlen;
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
	hwtr_aw_set_end(sk.aw, &sk.end);
	rc = hwtr_import_close(sk.aw, out, errbuf, errlen);
	return (rc < 0 ? rc : 0);
}
