/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The fuzzer's seed corpus (tests/fuzz/corpus/) through the reader, as the
 * fuzzer walks it (fuzz_walk.h): every seed opens or is refused cleanly,
 * and each kind of seed gets the answer its name promises (mkseeds.c):
 * ok-* open complete and verify, cut-* say they were cut, bad-* are
 * refused, reg-* (inputs that once crashed the reader) and fz-* (inputs
 * the fuzzer reached new code with) just do not crash.
 * Under `make sanitize` this is also a memory-safety check of the reader
 * on every seed.
 */

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "fuzz_walk.h"

#define CORPUS	HWTR_TEST_SRC "/tests/fuzz/corpus"

/* Call @fn on every seed whose name starts with @prefix; returns how many. */
static int
each_seed(const char *prefix, void (*fn)(const char *, const char *))
{
	struct dirent *de;
	char path[4096];
	DIR *d;
	int n = 0;

	d = opendir(CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open the seed corpus %s", CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, de->d_name);
		fn(de->d_name, path);
		n++;
	}
	closedir(d);
	return (n);
}

static void
check_ok(const char *name, const char *path)
{
	struct fuzz_walk w;

	fuzz_walk(path, NULL, &w);
	ATF_CHECK_MSG(w.open_rc == 0, "%s: expected to open, got %s: %s",
	    name, hwtr_errstr(w.open_rc), w.errmsg);
	if (w.open_rc != 0)
		return;
	ATF_CHECK_MSG(w.complete, "%s: expected a complete archive, the "
	    "reader says it is incomplete", name);
	ATF_CHECK_MSG(w.verify_rc == 0, "%s: expected verify to pass, got "
	    "%s: %s", name, hwtr_errstr(w.verify_rc), w.errmsg);
	ATF_CHECK_MSG(w.read_errors == 0, "%s: expected every member to "
	    "read back, %d reads failed", name, w.read_errors);
}

static void
check_cut(const char *name, const char *path)
{
	struct fuzz_walk w;

	fuzz_walk(path, NULL, &w);
	if (w.open_rc < 0)
		return;		/* refusing a cut archive is an answer */
	/*
	 * Cut after the final member (in the trailer), everything is there:
	 * complete is right, but the cut must still be said, as a warning.
	 */
	ATF_CHECK_MSG(!w.complete || w.nwarnings > 0, "%s: expected the "
	    "reader to say the archive was cut (incomplete, or a warning), it "
	    "says complete without a warning", name);
	ATF_CHECK_MSG(w.read_errors == 0, "%s: expected every chunk and "
	    "image the reader lists to read back, %d reads failed", name,
	    w.read_errors);
}

static void
check_bad(const char *name, const char *path)
{
	struct fuzz_walk w;

	fuzz_walk(path, NULL, &w);
	ATF_CHECK_MSG(w.open_rc < 0 || w.verify_rc < 0, "%s: expected the "
	    "reader to refuse it (open or verify), it opened and verified",
	    name);
	ATF_CHECK_MSG(w.open_rc >= 0 || w.errmsg[0] != '\0',
	    "%s: refused (%s) without a message", name,
	    hwtr_errstr(w.open_rc));
}

static void
check_any(const char *name, const char *path)
{
	struct fuzz_walk w;

	(void)name;
	fuzz_walk(path, NULL, &w);
}

ATF_TC_WITHOUT_HEAD(ok_seeds_open_complete_and_verify);
ATF_TC_BODY(ok_seeds_open_complete_and_verify, tc)
{
	ATF_CHECK_MSG(each_seed("ok-", check_ok) >= 3,
	    "expected at least 3 ok-* seeds in %s", CORPUS);
}

ATF_TC_WITHOUT_HEAD(cut_seeds_say_they_were_cut);
ATF_TC_BODY(cut_seeds_say_they_were_cut, tc)
{
	ATF_CHECK_MSG(each_seed("cut-", check_cut) >= 3,
	    "expected at least 3 cut-* seeds in %s", CORPUS);
}

ATF_TC_WITHOUT_HEAD(bad_seeds_are_refused);
ATF_TC_BODY(bad_seeds_are_refused, tc)
{
	ATF_CHECK_MSG(each_seed("bad-", check_bad) >= 5,
	    "expected at least 5 bad-* seeds in %s", CORPUS);
}

ATF_TC_WITHOUT_HEAD(every_seed_walks_without_crash);
ATF_TC_BODY(every_seed_walks_without_crash, tc)
{
	ATF_CHECK(each_seed("", check_any) > 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, ok_seeds_open_complete_and_verify);
	ATF_TP_ADD_TC(tp, cut_seeds_say_they_were_cut);
	ATF_TP_ADD_TC(tp, bad_seeds_are_refused);
	ATF_TP_ADD_TC(tp, every_seed_walks_without_crash);
	return (atf_no_error());
}
