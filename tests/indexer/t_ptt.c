/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Conformance with libipt's own test suite: every libipt-ptt case of the
 * shared corpus is packed into an archive as "hwtrace import --raw" packs
 * it (with the CPU and image addresses of its <t>-ptxed.cmd), indexed, and
 * the instruction addresses expanded from the database, with enable,
 * disable and decode-error events at their positions, must equal the
 * address lines of ptxed's <t>-ptxed.exp.  Cases that cannot match are
 * listed in unmatchable[] with the reason (also in hwtrace-index(1)).
 */

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "ptt.h"

static const struct {
	const char	*cmd;
	const char	*why;
} unmatchable[] = {
	/* Filled from the results: see hwtrace-index(1), CONFORMANCE. */
	{ NULL, NULL }
};

/*
 * Cases that cannot be cut at every PSB: their PSBs are a few bytes apart
 * and the first PSB+ has no status update of its own, so libipt, reading
 * ahead from the first PSB, delivers the second one's as the first
 * segment's.  The indexer never cuts there (a cut PSB is 256 bytes or
 * more after the PSB before it); this test cuts everywhere.
 */
static const char *const uncuttable[] = {
	"apl12-psb-", "psb_nofup-psb-", "skd010-psb-", NULL
};

static const char *
why_uncuttable(const char *cmd)
{
	size_t i;

	for (i = 0; uncuttable[i] != NULL; i++)
		if (strncmp(cmd, uncuttable[i], strlen(uncuttable[i])) == 0)
			return ("PSBs a few bytes apart, the first without "
			    "status updates: not a cut point");
	return (NULL);
}

static const char *
why_unmatchable(const char *cmd)
{
	size_t i;

	for (i = 0; unmatchable[i].cmd != NULL; i++)
		if (strcmp(unmatchable[i].cmd, cmd) == 0)
			return (unmatchable[i].why);
	return (NULL);
}

/* Parse a <t>-ptxed.cmd line into @spec; -1 for options we cannot carry. */
static int
parse_cmd(const char *dir, char *line, struct pack_spec *spec, char **pt,
    const char **why)
{
	char *tok, *save = NULL;
	static char paths[8][1100];

	memset(spec, 0, sizeof(*spec));
	*pt = NULL;
	for (tok = strtok_r(line, " \t\n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(tok, "--raw") == 0) {
			char *arg = strtok_r(NULL, " \t\n", &save), *c1, *c2;
			struct raw_image *ri;

			if (arg == NULL || spec->nraw >= 8)
				return (-1);
			ri = &spec->raw[spec->nraw];
			c1 = strchr(arg, ':');
			if (c1 == NULL)
				return (-1);
			*c1++ = '\0';
			c2 = strchr(c1, ':');
			if (c2 != NULL) {
				char *dash;

				*c2++ = '\0';
				ri->from = strtoull(c1, &dash, 0);
				if (*dash == '-')
					ri->to = strtoull(dash + 1, NULL, 0);
				ri->addr = strtoull(c2, NULL, 0);
			} else
				ri->addr = strtoull(c1, NULL, 0);
			snprintf(paths[spec->nraw], sizeof(paths[0]), "%s/%s",
			    dir, arg);
			ri->path = paths[spec->nraw];
			spec->nraw++;
		} else if (strcmp(tok, "--pt") == 0) {
			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL)
				return (-1);
			if (asprintf(pt, "%s/%s", dir, tok) < 0)
				return (-1);
		} else if (strcmp(tok, "--cpu") == 0) {
			unsigned f = 0, m = 0, s = 0;

			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL || sscanf(tok, "%u/%u/%u", &f, &m,
			    &s) < 2)
				return (-1);
			spec->cpu.vendor = HWTR_CPU_INTEL;
			spec->cpu.family = (uint16_t)f;
			spec->cpu.model = (uint8_t)m;
			spec->cpu.stepping = (uint8_t)s;
		} else if (strcmp(tok, "--nom-freq") == 0) {
			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL)
				return (-1);
			spec->nom_freq = (uint8_t)strtoul(tok, NULL, 0);
		} else if (strncmp(tok, "--filter:addr", 13) == 0 &&
		    tok[13] >= '0' && tok[13] <= '3') {
			int k = tok[13] - '0';
			const char *what = tok + 14;

			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL)
				return (-1);
			if (strcmp(what, "_cfg") == 0)
				spec->filter[k].cfg = (uint32_t)strtoul(tok,
				    NULL, 0);
			else if (strcmp(what, "_a") == 0)
				spec->filter[k].a = strtoull(tok, NULL, 0);
			else if (strcmp(what, "_b") == 0)
				spec->filter[k].b = strtoull(tok, NULL, 0);
			if ((uint32_t)k + 1 > spec->nfilters)
				spec->nfilters = (uint32_t)k + 1;
		} else if (strncmp(tok, "--pevent", 8) == 0 ||
		    strncmp(tok, "--sb", 4) == 0) {
			*why = "uses perf sideband files (--pevent/--sb), "
			    "which a raw import does not carry";
			if (strchr(tok, ':') != NULL &&
			    strcmp(tok, "--sb:compact") != 0 &&
			    strcmp(tok, "--sb:switch") != 0 &&
			    strcmp(tok, "--sb:warn") != 0 &&
			    strcmp(tok, "--pevent:kernel-start") != 0)
				(void)strtok_r(NULL, " \t\n", &save);
		}
	}
	spec->pt = *pt;
	return (*pt != NULL && spec->nraw > 0 ? 0 : -1);
}

/*
 * Every case against ptxed; @seg, when not NULL, is the indexer's segment
 * size (HWTRACE_IX_SEGMENT): 16 bytes cuts the streams at every PSB.
 */
static void
check_all(const char *seg)
{
	const char *root = HWTR_TEST_CORPUS "/libipt-ptt";
	struct dirent **cases;
	int ncases, i, pass = 0, fail = 0, known = 0, newok = 0;
	char failed[8192] = "";

	if (seg != NULL)
		ATF_REQUIRE(setenv("HWTRACE_IX_SEGMENT", seg, 1) == 0);
	else
		ATF_REQUIRE(unsetenv("HWTRACE_IX_SEGMENT") == 0);
	ncases = scandir(root, &cases, NULL, alphasort);
	ATF_REQUIRE(ncases > 0);
	for (i = 0; i < ncases; i++) {
		char dir[512];
		struct dirent **files;
		int nf, j;

		if (cases[i]->d_name[0] == '.')
			goto next;
		snprintf(dir, sizeof(dir), "%s/%s", root, cases[i]->d_name);
		nf = scandir(dir, &files, NULL, alphasort);
		for (j = 0; j < nf; j++) {
			const char *fn = files[j]->d_name;
			size_t fl = strlen(fn);
			char path[1024], exp[1024], line[2048], err[400];
			char msg[512];
			struct pack_spec spec;
			struct tok want = { 0 }, got = { 0 };
			struct hwtr_ix *ix;
			const char *why = NULL, *known_why;
			char *pt = NULL;
			FILE *fp;
			int ok;

			if (fl < 4 || strcmp(fn + fl - 4, ".cmd") != 0 ||
			    strstr(fn, "-ptxed") == NULL)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fn);
			snprintf(exp, sizeof(exp), "%s/%.*s.exp", dir,
			    (int)(fl - 4), fn);
			fp = fopen(path, "r");
			ATF_REQUIRE(fp != NULL);
			if (fgets(line, sizeof(line), fp) == NULL)
				line[0] = '\0';
			fclose(fp);
			known_why = why_unmatchable(fn);
			if (known_why == NULL && seg != NULL)
				known_why = why_uncuttable(fn);
			msg[0] = '\0';
			if (parse_cmd(dir, line, &spec, &pt, &why) < 0) {
				snprintf(msg, sizeof(msg), "cannot pack: %s",
				    line);
				ok = 0;
			} else if (pack_raw("case.hwtrace", &spec, err,
			    sizeof(err)) < 0) {
				snprintf(msg, sizeof(msg), "pack: %s", err);
				ok = 0;
			} else {
				ATF_REQUIRE(hwtr_ix_new(&ix, NULL) == 0);
				if (hwtr_ix_run(ix, "case.hwtrace",
				    "case.db") < 0) {
					snprintf(msg, sizeof(msg), "index: %s",
					    hwtr_ix_errmsg(ix));
					ok = 0;
				} else if (db_tokens("case.db", &got, err,
				    sizeof(err)) < 0) {
					snprintf(msg, sizeof(msg), "%s", err);
					ok = 0;
				} else {
					ATF_REQUIRE(exp_tokens(exp, &want) == 0);
					ok = !tok_diff(&want, &got, msg,
					    sizeof(msg));
				}
				hwtr_ix_free(ix);
			}
			free(pt);
			tok_free(&want);
			tok_free(&got);
			if (ok && known_why == NULL) {
				pass++;
				printf("pass %s\n", fn);
			} else if (ok) {
				newok++;
				printf("pass %s (listed as unmatchable)\n", fn);
			} else if (known_why != NULL || why != NULL) {
				known++;
				printf("fail %s (expected: %s): %s\n", fn,
				    known_why ? known_why : why, msg);
			} else {
				fail++;
				printf("FAIL %s: %s\n", fn, msg);
				if (strlen(failed) + strlen(fn) + 2 <
				    sizeof(failed)) {
					strcat(failed, " ");
					strcat(failed, fn);
				}
			}
		}
		for (j = 0; j < nf; j++)
			free(files[j]);
		free(files);
next:
		free(cases[i]);
	}
	free(cases);
	printf("libipt-ptt: %d pass, %d fail, %d cannot match (listed)%s\n",
	    pass, fail, known, newok ? ", some listed cases now pass" : "");
	ATF_CHECK_MSG(pass > 0, "no case passed");
	ATF_CHECK_MSG(fail == 0, "%d cases differ from ptxed:%s", fail,
	    failed);
}

ATF_TC(libipt_ptt_matches_ptxed);
ATF_TC_HEAD(libipt_ptt_matches_ptxed, tc)
{
	atf_tc_set_md_var(tc, "descr", "every libipt-ptt case: addresses and "
	    "enable/disable/error events from the database equal ptxed's");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(libipt_ptt_matches_ptxed, tc)
{
	HWTR_REQUIRE_CORPUS("libipt-ptt");
	check_all(NULL);
}

ATF_TC(libipt_ptt_cut_at_every_psb);
ATF_TC_HEAD(libipt_ptt_cut_at_every_psb, tc)
{
	atf_tc_set_md_var(tc, "descr", "every libipt-ptt case with its stream "
	    "cut into a segment per PSB, decoded apart and stitched: still "
	    "ptxed's addresses and events");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(libipt_ptt_cut_at_every_psb, tc)
{
	HWTR_REQUIRE_CORPUS("libipt-ptt");
	check_all("16");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, libipt_ptt_matches_ptxed);
	ATF_TP_ADD_TC(tp, libipt_ptt_cut_at_every_psb);
	return (atf_no_error());
}
