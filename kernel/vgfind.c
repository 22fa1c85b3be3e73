/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The valgrind source, finding what it runs: valgrind.bin on PATH, the
 * hwtrace tool beside the executable or under an installed prefix, and
 * the Valgrind version the tool was built for (kernel/valgrind.c).
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "sources.h"
#include "vgfind.h"

int
vg_find_in_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;

	if (path == NULL || *path == '\0')
		path = "/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		snprintf(out, len, "%.*s/%s", (int)(e - p), p, name);
		if (access(out, X_OK) == 0)
			return (0);
	}
	return (-1);
}

/* "valgrind-3.19.0" from `valgrind.bin --version`. */
static int
valgrind_version(const char *bin, char *out, size_t len)
{
	int fds[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return (-1);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return (-1);
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(bin, "valgrind.bin", "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], out, len - 1);
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return (-1);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return (0);
}

/*
 * Where the tool is, relative to the hwtrace executable: beside it in a
 * build tree, or under ../lib/hwtrace of an installed prefix (make
 * install), the first that holds the tool.  When neither does, p->lib
 * is the first and @tried (may be NULL) names both, for the message.
 */
static int
find_lib(struct vg_paths *p, char *tried, size_t len)
{
	static const char *const rel[] = {
		"/valgrind-lib", "/../lib/hwtrace/valgrind-lib"
	};
	char exe[PATH_MAX - 64], tool[PATH_MAX + 32], *slash;
	const char *env = getenv("HWTRACE_VALGRIND_LIB");
	ssize_t n;
	size_t i;

	if (env != NULL && *env != '\0') {
		snprintf(p->lib, sizeof(p->lib), "%s", env);
		return (0);
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return (-1);
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return (-1);
	*slash = '\0';
	for (i = 0; i < HWTR_NELEM(rel); i++) {
		snprintf(p->lib, sizeof(p->lib), "%s%s", exe, rel[i]);
		snprintf(tool, sizeof(tool), "%s/hwtrace-amd64-linux",
		    p->lib);
		if (access(tool, X_OK) == 0) {
			char *rp = realpath(p->lib, NULL);

			/* PREFIX/lib/hwtrace/valgrind-lib, not bin/../lib. */
			if (rp != NULL && strlen(rp) < sizeof(p->lib))
				strcpy(p->lib, rp);
			free(rp);
			return (0);
		}
	}
	if (tried != NULL)
		snprintf(tried, len, "neither '%s%s' nor '%s%s' has it", exe,
		    rel[0], exe, rel[1]);
	snprintf(p->lib, sizeof(p->lib), "%s%s", exe, rel[0]);
	return (0);
}

/*
 * Can the valgrind source run here?  Fills @why (may be NULL) when not.
 * Used by configure and by the automatic choice of a source.
 */
int
vg_find(struct vg_paths *p, char *why, size_t len)
{
	char tool[PATH_MAX + 32], built[64], tried[2 * PATH_MAX];
	FILE *fp;

	if (vg_find_in_path("valgrind.bin", p->valgrind,
	    sizeof(p->valgrind)) < 0) {
		snprintf(why, len, "valgrind is not installed (no valgrind.bin "
		    "on PATH): install Debian's valgrind package (make deps)");
		return (-HWTR_E_UNSUPPORTED);
	}
	tried[0] = '\0';
	if (find_lib(p, tried, sizeof(tried)) < 0) {
		snprintf(why, len, "cannot tell where the hwtrace Valgrind "
		    "tool is (set HWTRACE_VALGRIND_LIB)");
		return (-HWTR_E_NOENT);
	}
	snprintf(tool, sizeof(tool), "%s/hwtrace-amd64-linux", p->lib);
	if (access(tool, X_OK) != 0) {
		if (tried[0] != '\0')
			snprintf(why, len, "the hwtrace Valgrind tool "
			    "(hwtrace-amd64-linux) was not found: %s (run make "
			    "or make install, or set HWTRACE_VALGRIND_LIB)",
			    tried);
		else
			snprintf(why, len, "the hwtrace Valgrind tool is not "
			    "built: '%s' is missing (run make)", tool);
		return (-HWTR_E_NOENT);
	}
	if (valgrind_version(p->valgrind, p->version,
	    sizeof(p->version)) < 0) {
		snprintf(why, len, "'%s --version' failed", p->valgrind);
		return (-HWTR_E_UNSUPPORTED);
	}
	snprintf(tool, sizeof(tool), "%s/hwtrace-built-for", p->lib);
	built[0] = '\0';
	if ((fp = fopen(tool, "re")) != NULL) {
		if (fgets(built, sizeof(built), fp) == NULL)
			built[0] = '\0';
		fclose(fp);
	}
	built[strcspn(built, "\n")] = '\0';
	if (strcmp(built, p->version) != 0) {
		snprintf(why, len, "%s is installed but the hwtrace Valgrind "
		    "tool was built for %s: rebuild hwtrace (make)",
		    p->version, built[0] ? built : "another version");
		return (-HWTR_E_VERSION);
	}
	return (0);
}

/* Probe for the automatic choice: 1 when valgrind can be used. */
int
hwtr_vg_available(char *why, size_t len)
{
	struct vg_paths p;

	memset(&p, 0, sizeof(p));
	return (vg_find(&p, why, len) == 0);
}
