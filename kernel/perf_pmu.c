/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf source's PMU (perf_int.h lists the source's files): the
 * intel_pt or cs_etm PMU found the way perf finds it, whether the source
 * can trace here (hwtr_perf_usable(), what --source auto asks), and the
 * event's attributes made from what the PMU offers (Intel PT's config
 * fields and caps; CoreSight's sink and each CPU's ETM registers).  The
 * bottom of the source: it calls none of its other files.
 */

#include <sys/utsname.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "perf_int.h"

#ifdef __linux__
#include <linux/capability.h>
#include <sys/syscall.h>
#endif

static const char *
sysfs_root(void)
{
	const char *r = getenv("HWTRACE_SYSFS");

	return (r != NULL && *r != '\0' ? r :
	    "/sys/bus/event_source/devices");
}

/* The first line of @path into @buf; 0, or -1 (errno kept). */
int
perf_read_line(const char *path, char *buf, size_t len)
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
 * A number in the file @dir/@name: 0 and *@v set, 1 when there is no such
 * file, -HWTR_E_FORMAT (with @why) when it holds something else.  The
 * caps files are hexadecimal bit masks (mtc_periods "249") or small
 * numbers; @base says which.
 */
static int
read_num(const char *dir, const char *name, int base, unsigned long *v,
    char *why, size_t len)
{
	char path[512], line[64], *end;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (perf_read_line(path, line, sizeof(line)) < 0)
		return (1);
	errno = 0;
	*v = strtoul(line, &end, base);
	if (errno != 0 || end == line || *end != '\0' || *v > INT32_MAX) {
		snprintf(why, len, "'%s' holds '%.40s', not a %s", path, line,
		    base == 16 ? "hexadecimal mask" : "number");
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* The PMU's caps/ and nr_addr_filters into pmu->caps. */
static int
caps_read(struct perf_pmu *pmu, char *why, size_t len)
{
	static const struct {
		const char	*name;
		int		base;
		size_t		off;
	} caps[] = {
#define C(n, b)	{ #n, b, offsetof(struct perf_caps, n) }
		C(mtc, 10), C(psb_cyc, 10), C(ptwrite, 10),
		C(power_event_trace, 10), C(mtc_periods, 16),
		C(cyc_thresholds, 16), C(psb_periods, 16),
		C(num_address_ranges, 10),
#undef C
	};
	struct perf_caps *c = &pmu->caps;
	char dir[512];
	unsigned long v;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), "%s/%s/caps", sysfs_root(), pmu->name);
	for (i = 0; i < HWTR_NELEM(caps); i++) {
		if ((rc = read_num(dir, caps[i].name, caps[i].base, &v, why,
		    len)) < 0)
			return (rc);
		if (rc > 0)
			continue;
		/* Every field is an int or a uint32_t. */
		if (caps[i].base == 16)
			*(uint32_t *)(void *)((char *)c + caps[i].off) =
			    (uint32_t)v;
		else
			*(int *)(void *)((char *)c + caps[i].off) = (int)v;
	}
	snprintf(dir, sizeof(dir), "%s/%s", sysfs_root(), pmu->name);
	c->nr_addr_filters = -1;
	if ((rc = read_num(dir, "nr_addr_filters", 10, &v, why, len)) < 0)
		return (rc);
	if (rc == 0)
		c->nr_addr_filters = (int)v;
	if ((rc = read_num(dir, "max_nonturbo_ratio", 10, &v, why,
	    len)) < 0)
		return (rc);
	if (rc == 0)
		c->max_nonturbo_ratio = (int)v;
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
	    "retstack", "contextid", "sinkid", "branch_broadcast", NULL };
	char *end;
	long v;
	size_t i;

	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s/type", sysfs_root(), name);
	if (perf_read_line(path, line, sizeof(line)) < 0)
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
		if (perf_read_line(path, line, sizeof(line)) < 0)
			continue;
		if (parse_fmt(line, f) < 0) {
			snprintf(why, len, "'%s' holds '%.40s', not a config "
			    "field", path, line);
			return (-HWTR_E_FORMAT);
		}
		snprintf(f->name, sizeof(f->name), "%s", fields[i]);
		pmu->nfmt++;
	}
	return (caps_read(pmu, why, len));
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
int
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
	if (perf_read_line("/proc/sys/kernel/perf_event_paranoid", line,
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

	if (!perf_check(&pmu, why, len))
		return (0);
	snprintf(why, len, "%s PMU (type %d)", pmu.name, pmu.type);
	return (1);
}

#ifdef __linux__

void
perf_err(struct perf_src *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->src->errmsg, sizeof(ps->src->errmsg), fmt, ap);
	va_end(ap);
}

/* The mask of the PMU's config field @name (0: none) in *@word. */
uint64_t
perf_fmt_mask(const struct perf_pmu *pmu, const char *name, int *word)
{
	size_t i;

	for (i = 0; i < pmu->nfmt; i++) {
		const struct perf_fmt *f = &pmu->fmt[i];

		if (strcmp(f->name, name) != 0)
			continue;
		if (word != NULL)
			*word = f->word;
		if (f->hi - f->lo == 63)
			return (UINT64_MAX);
		return (((UINT64_C(1) << (f->hi - f->lo + 1)) - 1) << f->lo);
	}
	return (0);
}

/* Set the PMU's config field @name to @v; 0, or -1 when it has none. */
static int
fmt_set(struct perf_src *ps, const char *name, uint64_t v)
{
	uint64_t m;
	int word = 0;

	if ((m = perf_fmt_mask(&ps->pmu, name, &word)) == 0)
		return (-1);
	v <<= __builtin_ctzll(m);
	ps->config[word] = (ps->config[word] & ~m) | (v & m);
	return (0);
}

/*
 * A hexadecimal register value of the cs_etm PMU's file @rel (as
 * "cpu7/trcidr/trcidr0"): 0; 1 when there is no such file;
 * -HWTR_E_FORMAT (with errmsg) when it holds something else.
 */
static int
cs_reg(struct perf_src *ps, const char *rel, uint64_t *v)
{
	char path[512], line[64], *end;

	snprintf(path, sizeof(path), "%s/cs_etm/%s", sysfs_root(), rel);
	if (perf_read_line(path, line, sizeof(line)) < 0)
		return (1);
	errno = 0;
	*v = strtoull(line, &end, 16);
	if (errno != 0 || end == line || *end != '\0') {
		perf_err(ps, "'%s' holds '%.40s', not a hexadecimal register",
		    path, line);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* The sink: the first of cs_etm/sinks/ by name, as perf's default. */
static int
cs_sink(struct perf_src *ps)
{
	char dir[512], rel[600], best[256];
	struct dirent *de;
	uint64_t id;
	DIR *d;
	int rc;

	snprintf(dir, sizeof(dir), "%s/cs_etm/sinks", sysfs_root());
	if ((d = opendir(dir)) == NULL)
		return (0);	/* the kernel picks one */
	best[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (best[0] == '\0' || strcmp(de->d_name, best) < 0)
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	closedir(d);
	if (best[0] == '\0')
		return (0);
	snprintf(rel, sizeof(rel), "sinks/%s", best);
	if ((rc = cs_reg(ps, rel, &id)) != 0)
		return (rc < 0 ? rc : 0);
	if (fmt_set(ps, "sinkid", id) < 0) {
		perf_err(ps, "the cs_etm PMU has sinks but no sinkid format "
		    "field in %s/cs_etm/format", sysfs_root());
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/*
 * cs_etm's config (contextid; timestamp when several CPUs' trace is to be
 * ordered; the sink) and each traced CPU's ETM registers into ps->etm.
 */
static int
cs_config(struct perf_src *ps)
{
	static const char *const ro[] = { "trcidr/trcidr0", "trcidr/trcidr1",
	    "trcidr/trcidr2", "trcidr/trcidr8", "mgmt/trcauthstatus" };
	char rel[128];
	uint64_t cfgr = 0, v, *w;
	size_t i, j;
	int rc;

	if (fmt_set(ps, "contextid", 1) == 0)
		cfgr |= 1u << 6;	/* TRCCONFIGR.CID */
	if (ps->ncpu > 1 && fmt_set(ps, "timestamp", 1) == 0)
		cfgr |= 1u << 11;	/* TRCCONFIGR.TS */

	if ((rc = cs_sink(ps)) < 0)
		return (rc);
	free(ps->etm);
	if ((ps->etm = calloc(ps->ncpu, sizeof(*ps->etm))) == NULL) {
		perf_err(ps, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < ps->ncpu; i++) {
		w = ps->etm[i];
		w[1] = (uint64_t)ps->cpus[i];
		w[3] = cfgr;
		w[4] = 0x10 + 2 * (uint64_t)ps->cpus[i];
		for (j = 0; j < 5; j++) {
			snprintf(rel, sizeof(rel), "cpu%d/%s", ps->cpus[i],
			    ro[j]);
			if ((rc = cs_reg(ps, rel, &w[5 + j])) == 1) {
				perf_err(ps, "CPU %d has no ETMv4 or ETE "
				    "(%s/cs_etm/%s is missing; ETMv3 and PTM "
				    "are not recorded live)", ps->cpus[i],
				    sysfs_root(), rel);
				return (-HWTR_E_UNSUPPORTED);
			}
			if (rc < 0)
				return (rc);
		}
		/* ETE: TRCDEVARCH.ARCHVER (bits 15:12) 5 or more. */
		snprintf(rel, sizeof(rel), "cpu%d/mgmt/trcdevarch",
		    ps->cpus[i]);
		if ((rc = cs_reg(ps, rel, &v)) < 0)
			return (rc);
		if (rc == 0 && ((v >> 12) & 0xf) >= 5) {
			w[0] = CS_MAGIC_ETE;
			w[2] = 8;
			w[10] = v;
		} else {
			w[0] = CS_MAGIC_ETMV4;
			w[2] = 7;
		}
	}
	return (0);
}

/*
 * The event: Intel PT with branch tracing, TSC, and what the caps allow
 * (MTC at period 3, PTWRITE, power events; CYC is left off: it multiplies
 * the trace for cycle counts hwtrace does not use).
 */
int
perf_make_attr(struct perf_src *ps)
{
	struct perf_event_attr *a = &ps->attr;
	const struct perf_caps *c = &ps->pmu.caps;
	int rc;

	memset(ps->config, 0, sizeof(ps->config));
	if (ps->cs && (rc = cs_config(ps)) < 0)
		return (rc);
	(void)fmt_set(ps, "pt", 1);
	(void)fmt_set(ps, "branch", 1);
	(void)fmt_set(ps, "tsc", 1);
	if (c->mtc && (c->mtc_periods & (1u << 3)) &&
	    fmt_set(ps, "mtc", 1) == 0)
		(void)fmt_set(ps, "mtc_period", 3);
	if (c->psb_cyc && (c->psb_periods & (1u << 3)))
		(void)fmt_set(ps, "psb_period", 3);
	if (c->ptwrite)
		(void)fmt_set(ps, "ptw", 1);
	if (c->power_event_trace)
		(void)fmt_set(ps, "pwr_evt", 1);
	if (ps->src->cfg.no_ret_compression)
		(void)fmt_set(ps, "noretcomp", 1);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)ps->pmu.type;
	a->config = ps->config[0];
	a->config1 = ps->config[1];
	a->config2 = ps->config[2];
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	if (!ps->cpu_mode) {
		/*
		 * The command from its exec, and every child it makes; an
		 * attached process's threads from the attach (ENABLE).
		 */
		a->enable_on_exec = ps->attach == 0;
		a->inherit = !ps->src->cfg.no_follow;
	}
	return (0);
}

#endif /* __linux__ */
