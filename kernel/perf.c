/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "perf" trace source: Linux perf_event_open(2) with the intel_pt or
 * cs_etm PMU and an AUX area (kernel/perf_aux.c reads its ring).
 *
 * What is here: finding the PMU the way perf does (its type from
 * /sys/bus/event_source/devices/NAME/type, its config fields from
 * .../format/NAME, its capabilities from .../caps/NAME), and saying exactly what
 * is missing when tracing cannot work: no PMU, perf_event_paranoid without
 * CAP_PERFMON, a kernel without AUX areas.  hwtr_perf_usable() is what
 * --source auto asks.  Opening the event and following the program is not
 * written yet: with a usable PMU, enable says so.  Nothing here has run on
 * trace hardware; the ring protocol is tested against a simulated kernel.
 *
 * HWTRACE_SYSFS names another root for /sys/bus/event_source/devices (for
 * tests).
 */

#include <sys/utsname.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "kernel.h"

#ifdef __linux__
#include <linux/capability.h>
#include <sys/syscall.h>
#endif

#define PERF_MAX_FORMAT	48

/* One config field of a PMU: "config:14-17" as "mtc_period". */
struct perf_fmt {
	char		name[32];
	uint8_t		word;		/* 0 config, 1 config1, 2 config2 */
	uint8_t		lo, hi;		/* bit range */
};

struct perf_pmu {
	char		name[16];	/* "intel_pt" or "cs_etm" */
	int		type;
	struct perf_fmt	fmt[PERF_MAX_FORMAT];
	size_t		nfmt;
};

struct perf_src {
	struct hwtr_src	*src;
	struct perf_pmu	pmu;
};

static const char *
sysfs_root(void)
{
	const char *r = getenv("HWTRACE_SYSFS");

	return (r != NULL && *r != '\0' ? r :
	    "/sys/bus/event_source/devices");
}

/* The first line of @path into @buf; 0, or -1 (errno kept). */
static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	if (fgets(buf, (int)len, fp) == NULL) {
		fclose(fp);
		errno = EIO;
		return (-1);
	}
	fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
	return (0);
}

/* "config:14-17" or "config1:0" into @f; 0, or -1 when malformed. */
static int
parse_fmt(const char *s, struct perf_fmt *f)
{
	unsigned long lo, hi;
	char *end;

	if (strncmp(s, "config2:", 8) == 0) {
		f->word = 2;
		s += 8;
	} else if (strncmp(s, "config1:", 8) == 0) {
		f->word = 1;
		s += 8;
	} else if (strncmp(s, "config:", 7) == 0) {
		f->word = 0;
		s += 7;
	} else
		return (-1);
	errno = 0;
	lo = strtoul(s, &end, 10);
	if (errno != 0 || end == s || lo > 63)
		return (-1);
	hi = lo;
	if (*end == '-') {
		s = end + 1;
		hi = strtoul(s, &end, 10);
		if (errno != 0 || end == s || hi > 63 || hi < lo)
			return (-1);
	}
	if (*end != '\0')
		return (-1);
	f->lo = (uint8_t)lo;
	f->hi = (uint8_t)hi;
	return (0);
}

/*
 * Read the PMU @name under the sysfs root into @pmu.  0; -HWTR_E_NOENT when
 * it does not exist; -HWTR_E_FORMAT (with @why) when its files are bad.
 */
static int
pmu_read(const char *name, struct perf_pmu *pmu, char *why, size_t len)
{
	char path[512], line[128];
	static const char *const fields[] = { "pt", "tsc", "mtc", "mtc_period",
	    "cyc", "cyc_thresh", "psb_period", "branch", "noretcomp",
	    "ptw", "fup_on_ptw", "pwr_evt", "cycacc", "timestamp",
	    "retstack", "contextid", "sinkid", NULL };
	char *end;
	long v;
	size_t i;

	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s/type", sysfs_root(), name);
	if (read_line(path, line, sizeof(line)) < 0)
		return (-HWTR_E_NOENT);
	errno = 0;
	v = strtol(line, &end, 10);
	if (errno != 0 || end == line || *end != '\0' || v < 0 ||
	    v > INT32_MAX) {
		snprintf(why, len, "'%s' holds '%.40s', not a PMU type", path,
		    line);
		return (-HWTR_E_FORMAT);
	}
	pmu->type = (int)v;
	for (i = 0; fields[i] != NULL && pmu->nfmt < PERF_MAX_FORMAT; i++) {
		struct perf_fmt *f = &pmu->fmt[pmu->nfmt];

		snprintf(path, sizeof(path), "%s/%s/format/%s", sysfs_root(),
		    name, fields[i]);
		if (read_line(path, line, sizeof(line)) < 0)
			continue;
		if (parse_fmt(line, f) < 0) {
			snprintf(why, len, "'%s' holds '%.40s', not a config "
			    "field", path, line);
			return (-HWTR_E_FORMAT);
		}
		snprintf(f->name, sizeof(f->name), "%s", fields[i]);
		pmu->nfmt++;
	}
	return (0);
}

/* 1 when this process has @cap in its effective set. */
static int
has_cap(int cap)
{
#ifdef __linux__
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return (0);
	return ((d[cap / 32].effective >> (cap % 32)) & 1);
#else
	(void)cap;
	return (0);
#endif
}

/*
 * Whether the perf source can trace here: 1 with the PMU in @pmu, or 0 with
 * @why naming what is missing.
 */
static int
perf_check(struct perf_pmu *pmu, char *why, size_t len)
{
	struct utsname u;
	char line[64];
	int rc, major = 0, minor = 0, paranoid = 2;

	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 4 || (major == 4 && minor < 1))) {
		snprintf(why, len, "Linux %s is too old for perf AUX areas "
		    "(4.1 or later needed)", u.release);
		return (0);
	}
	if ((rc = pmu_read("intel_pt", pmu, why, len)) == -HWTR_E_NOENT)
		rc = pmu_read("cs_etm", pmu, why, len);
	if (rc == -HWTR_E_NOENT) {
		snprintf(why, len, "no intel_pt or cs_etm PMU in %s (no trace "
		    "hardware here, or a VM that does not pass it through)",
		    sysfs_root());
		return (0);
	}
	if (rc < 0)
		return (0);
	if (read_line("/proc/sys/kernel/perf_event_paranoid", line,
	    sizeof(line)) == 0)
		paranoid = atoi(line);
	/* CAP_PERFMON is 38; CAP_SYS_ADMIN (21) did its work before 5.8. */
	if (paranoid > 1 && !has_cap(38) && !has_cap(21)) {
		snprintf(why, len, "kernel.perf_event_paranoid is %d and this "
		    "process has neither CAP_PERFMON nor CAP_SYS_ADMIN: lower "
		    "it to 1 (sysctl kernel.perf_event_paranoid=1) or grant "
		    "CAP_PERFMON", paranoid);
		return (0);
	}
	return (1);
}

int
hwtr_perf_usable(char *why, size_t len)
{
	struct perf_pmu pmu;

	return (perf_check(&pmu, why, len));
}

static int
perf_backend_init(struct hwtr_src *src)
{
	struct perf_src *ps;

	if ((ps = calloc(1, sizeof(*ps))) == NULL)
		return (-HWTR_E_NOMEM);
	ps->src = src;
	src->priv = ps;
	return (0);
}

static int
perf_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	struct perf_src *ps = src->priv;
	char why[400];

	if ((cfg->argv == NULL || cfg->argv[0] == NULL) && cfg->pid <= 0) {
		snprintf(src->errmsg, sizeof(src->errmsg),
		    "no command and no process to trace");
		return (-HWTR_E_INVAL);
	}
	src->cfg = *cfg;
	if (!perf_check(&ps->pmu, why, sizeof(why))) {
		snprintf(src->errmsg, sizeof(src->errmsg),
		    "the perf source cannot trace here: %s", why);
		return (-HWTR_E_UNSUPPORTED);
	}
	src->version = HWTRACE_VERSION;
	return (0);
}

static int
perf_backend_enable(struct hwtr_src *src)
{
	struct perf_src *ps = src->priv;

	snprintf(src->errmsg, sizeof(src->errmsg), "the perf source found "
	    "the %s PMU (type %d), but opening its events is not written "
	    "yet in this hwtrace: use --source valgrind or --source step",
	    ps->pmu.name, ps->pmu.type);
	return (-HWTR_E_UNSUPPORTED);
}

static int
perf_backend_fail(struct hwtr_src *src)
{
	snprintf(src->errmsg, sizeof(src->errmsg), "the perf source is not "
	    "running");
	return (-HWTR_E_INVAL);
}

static int
perf_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	return (0);
}

static void
perf_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
}

static void
perf_backend_deinit(struct hwtr_src *src)
{
	free(src->priv);
	src->priv = NULL;
}

const struct hwtr_src_ops hwtr_perf_ops = {
	.name = "perf",
	.init = perf_backend_init,
	.configure = perf_backend_configure,
	.enable = perf_backend_enable,
	.read = perf_backend_fail,
	.disable = perf_backend_fail,
	.thread_alloc = perf_backend_thread_alloc,
	.thread_free = perf_backend_thread_free,
	.deinit = perf_backend_deinit,
};
