/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A request checked before it is answered: the words each verb takes
 * (--by, --weight), a range in one unit that ends after it starts, and
 * export's two outputs with the options of each.  The messages name the
 * options as hwtrace-query(1) spells them; a front end prints them as
 * usage errors.
 */

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"

/* --by of hot and of annotate; NULL-terminated. */
static const char *const by_hot[] = { "func", "function", "inline", "line",
	"image", "block", "edge", NULL };
static const char *const by_annotate[] = { "insn", "line", NULL };

static int __attribute__((format(printf, 3, 4)))
req_fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return (-HWTR_E_INVAL);
}

static int
word_in(const char *w, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(w, *set) == 0)
			return (1);
	return (0);
}

/* export: one output, and only that output's options. */
static int
check_export(const struct hwtr_q_req *req, char *errbuf, size_t errlen)
{
	assert(req->verb == HWTR_Q_EXPORT);
	if ((req->perfetto == NULL) == (req->folded == NULL))
		return (req_fail(errbuf, errlen, "%s", req->perfetto == NULL ?
		    "no --perfetto OUT given (or --folded OUT)" : "give one "
		    "of --perfetto OUT and --folded OUT, not both"));
	if (req->perfetto != NULL &&
	    (req->depth >= 0 || req->weight != NULL))
		return (req_fail(errbuf, errlen, "--depth and --weight apply "
		    "to --folded only (--perfetto has --max-depth)"));
	if (req->folded != NULL && (req->min_dur >= 0 || req->max_depth >= 0))
		return (req_fail(errbuf, errlen, "--min-dur and --max-depth "
		    "apply to --perfetto only (--folded has --depth)"));
	return (0);
}

int
hwtr_q_req_check(const struct hwtr_q_req *req, char *errbuf, size_t errlen)
{
	int annotate = req->verb == HWTR_Q_ANNOTATE;

	if (req->by != NULL &&
	    !word_in(req->by, annotate ? by_annotate : by_hot))
		return (req_fail(errbuf, errlen, "--by: '%s' is not %s",
		    req->by, annotate ? "insn or line" : "function, inline, "
		    "line, image, block or edge"));
	if (req->weight != NULL && strcmp(req->weight, "insns") != 0 &&
	    strcmp(req->weight, "time") != 0)
		return (req_fail(errbuf, errlen, "--weight: '%s' is not insns "
		    "or time", req->weight));
	/* A range is of instructions or of times, and ends after it starts. */
	if ((req->from >= 0 || req->to >= 0) && req->verb != HWTR_Q_INSNS &&
	    (req->t_from >= 0 || req->t_to >= 0))
		return (req_fail(errbuf, errlen, "--from and --to: give both "
		    "as instruction numbers or both as times"));
	if (req->from >= 0 && req->to >= 0 && req->from > req->to)
		return (req_fail(errbuf, errlen, "--from %lld is after --to "
		    "%lld", (long long)req->from, (long long)req->to));
	if (req->t_from >= 0 && req->t_to >= 0 && req->t_from > req->t_to)
		return (req_fail(errbuf, errlen, "--from (%lld ns) is after "
		    "--to (%lld ns)", (long long)req->t_from,
		    (long long)req->t_to));
	if (req->verb == HWTR_Q_EXPORT)
		return (check_export(req, errbuf, errlen));
	return (0);
}
