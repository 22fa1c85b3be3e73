/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Which trace source to use when the user names none: on FreeBSD hwt
 * (hwt(4), when /dev/hwt is there and usable); perf (Intel PT)
 * when the machine has the PMU and this process may use it, else the valgrind
 * source when it can run the command (fast, exact, but a simulated CPU),
 * else the step source (native, slow, can attach).
 */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "sources.h"

/* 1 when @argv0 (on PATH or a path) is an x86-64 ELF or a script. */
static int
runs_on_amd64_valgrind(const char *argv0, char *why, size_t len)
{
	char path[PATH_MAX];
	const char *p = argv0, *env, *s, *e;
	unsigned char h[20];
	int fd;
	ssize_t n;

	if (strchr(argv0, '/') == NULL) {
		env = getenv("PATH");
		if (env == NULL)
			env = "/usr/bin:/bin";
		p = NULL;
		for (s = env; *s != '\0'; s = *e ? e + 1 : e) {
			e = strchr(s, ':');
			if (e == NULL)
				e = s + strlen(s);
			snprintf(path, sizeof(path), "%.*s/%s", (int)(e - s), s,
			    argv0);
			if (access(path, X_OK) == 0) {
				p = path;
				break;
			}
		}
		if (p == NULL)
			return (1);	/* the source reports "not found" */
	}
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return (1);
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n >= 2 && h[0] == '#' && h[1] == '!')
		return (1);
	if (n < 20 || memcmp(h, "\177ELF", 4) != 0)
		return (1);
	if (h[4] != 2 || h[18] != 62) {		/* ELFCLASS64, EM_X86_64 */
		snprintf(why, len, "'%s' is not an x86-64 program", p);
		return (0);
	}
	return (1);
}

const char *
hwtr_src_auto(char *const *argv, int32_t pid, char *why, size_t len)
{
	char buf[512];

	if (why == NULL) {
		why = buf;
		len = sizeof(buf);
	}
	why[0] = '\0';
#ifdef __FreeBSD__
	/* FreeBSD's hardware trace framework, when it is loaded. */
	if (hwtr_hwt_usable(why, len))
		return ("hwt");
	why[0] = '\0';
#endif
	/* Hardware first: the PMU is there and this process may use it. */
	if (hwtr_perf_usable(why, len)) {
		char pmu[64];

		snprintf(pmu, sizeof(pmu), "%s", why);
		snprintf(why, len, "the %s is there and usable: hardware "
		    "trace", pmu);
		return ("perf");
	}
	why[0] = '\0';
	if (pid > 0) {
		snprintf(why, len, "attaching: Valgrind cannot, the step "
		    "source can");
		return ("step");
	}
	if (!hwtr_vg_available(why, len))
		return ("step");
	if (argv == NULL || argv[0] == NULL ||
	    !runs_on_amd64_valgrind(argv[0], why, len))
		return ("step");
	return ("valgrind");
}
