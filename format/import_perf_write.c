/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive of a scanned perf.data file (see import_perf.c): the decoder
 * configuration from AUXTRACE_INFO, one stream per CPU or thread of AUX
 * data, images found by build-id, and the sideband in time order with
 * every loss stated.  The perf importer itself (hwtr_importer_perf: map
 * the file, scan it, write it) is at the end, above both.
 */

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"
#include "perf_file.h"
#include "perf_record.h"

#define PROT_R	0x1u
#define PROT_X	0x4u
#define CHUNK	(4u << 20)
#define MAX_IMAGE (4ULL << 30)



struct pw_stream {
	int32_t		key;		/* CPU, or tid when per thread */
	uint32_t	id;
	uint64_t	end;		/* next stream byte */
	uint64_t	announced;	/* AUX records' sizes */
	uint64_t	have;		/* AUXTRACE bytes in the file */
	uint64_t	gaps;		/* bytes skipped between them (lost) */
	int		raw;		/* unformatted CoreSight */
};

struct pw_img {
	char		*name;		/* recorded path */
	int		found;		/* 1 found (at @file), -1 not */
	char		*file;
	uint8_t		fid[HWTR_BUILD_ID_MAX];	/* @file's own build-id */
	size_t		fidlen;
	char		key[HWTR_IMAGE_KEY_MAX];	/* once stored */
	uint8_t		id[HWTR_BUILD_ID_MAX];	/* recorded */
	size_t		idlen;
};

struct pw_cs {
	struct hwtr_cs_source *src;
	struct hwtr_reg	*regs;		/* 16 per source */
	int32_t		*cpu;
	size_t		nsrc;
};

struct pw {
	struct hwtr_perf_data *pd;
	const struct hwtr_import_opts *o;
	struct hwtr_import_sink *sk;
	struct hwtr_aw	*aw;
	int		per_cpu;
	struct pw_stream *st;
	size_t		nst;
	struct pw_img	*img;
	size_t		nimg, imgcap;
	struct pw_cs	cs;
	struct hwtr_pt_config ptc;
	struct hwtr_timeconv tc;
	/*
	 * perf's own conversion (perf_time_to_tsc()): time_zero, mult and
	 * shift, and with a short counter (TIME_CONV's cap_user_time_short)
	 * the mask of its bits: sideband times are made counter values as
	 * the trace holds them.
	 */
	uint64_t	pz, pmask;
	uint32_t	pmult, pshift;
	int		pt;		/* Intel PT, else CoreSight */
	int		notrace;	/* no AUX trace: sideband alone */
	struct hwtr_perf_jit *jit;	/* the JIT code it names */
	uint64_t	lost_bytes, lost_records;
	uint64_t	img_missing, img_nobid, img_stored, img_mismatch;
	uint64_t	kernel_maps;
	uint64_t	kernel_slide;	/* --vmlinux: run-time less link-time */
	int		kernel_done;	/* --vmlinux checked */
	int		kernel_written;
	char		buildid_dir[2048];
	char		unpacked[256];	/* --perf-archive, unpacked */
};

static int
werr(struct pw *w, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
werr(struct pw *w, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->sk->errbuf == NULL || w->sk->errlen == 0)
		return (rc);
	n = snprintf(w->sk->errbuf, w->sk->errlen, "'%s': ", w->pd->path);
	if (n < 0 || (size_t)n >= w->sk->errlen)
		return (rc);
	va_start(ap, fmt);
	vsnprintf(w->sk->errbuf + n, w->sk->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return (rc);
}

static uint64_t
priv(const struct hwtr_perf_data *pd, size_t i)
{
	return (i < pd->info_npriv ? pd->info_priv[i] : 0);
}

static int
stream_of(const struct pw *w, int32_t cpu, int32_t tid)
{
	int32_t key = w->per_cpu ? cpu : tid;
	size_t i;

	for (i = 0; i < w->nst; i++)
		if (w->st[i].key == key)
			return ((int)i);
	return (-1);
}

static int
add_key(struct pw *w, int32_t key)
{
	struct pw_stream *nv;
	size_t i;

	for (i = 0; i < w->nst; i++)
		if (w->st[i].key == key)
			return (0);
	if ((nv = realloc(w->st, (w->nst + 1) * sizeof(*nv))) == NULL)
		return (-HWTR_E_NOMEM);
	w->st = nv;
	memset(&w->st[w->nst], 0, sizeof(*nv));
	w->st[w->nst++].key = key;
	return (0);
}

static int
key_cmp(const void *a, const void *b)
{
	const struct pw_stream *x = a, *y = b;

	return (x->key < y->key ? -1 : x->key > y->key);
}

/* The streams: one per CPU (or thread) that has AUX data or AUX records. */
static int
plan_streams(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	size_t i;
	int s;

	w->per_cpu = 0;
	for (i = 0; i < pd->naux; i++)
		if (pd->aux[i].cpu != -1)
			w->per_cpu = 1;
	if (pd->naux == 0)
		for (i = 0; i < pd->nauxrec; i++)
			if (pd->auxrec[i].cpu != -1)
				w->per_cpu = 1;
	for (i = 0; i < pd->naux; i++)
		if (add_key(w, w->per_cpu ? pd->aux[i].cpu :
		    pd->aux[i].tid) < 0)
			return (-HWTR_E_NOMEM);
	for (i = 0; i < pd->nauxrec; i++)
		if (add_key(w, w->per_cpu ? pd->auxrec[i].cpu :
		    pd->auxrec[i].tid) < 0)
			return (-HWTR_E_NOMEM);
	if (w->nst > 1)
		qsort(w->st, w->nst, sizeof(*w->st), key_cmp);
	for (i = 0; i < pd->nauxrec; i++) {
		if ((s = stream_of(w, pd->auxrec[i].cpu,
		    pd->auxrec[i].tid)) < 0)
			continue;
		w->st[s].announced += pd->auxrec[i].size;
		if (pd->auxrec[i].flags & HWTR_PERF_AUX_CS_RAW)
			w->st[s].raw = 1;
	}
	for (i = 0; i < pd->naux; i++)
		if ((s = stream_of(w, pd->aux[i].cpu, pd->aux[i].tid)) >= 0)
			w->st[s].have += pd->aux[i].have;
	return (0);
}

/* The attr of the tracing PMU (Intel PT's type is in AUXTRACE_INFO). */
static const struct hwtr_perf_attr *
pt_attr(const struct hwtr_perf_data *pd)
{
	size_t i;

	for (i = 0; i < pd->nattr; i++)
		if (pd->info_npriv > PT_PMU_TYPE &&
		    pd->attr[i].type == pd->info_priv[PT_PMU_TYPE])
			return (&pd->attr[i]);
	return (NULL);
}

static int
pt_config(struct pw *w, struct hwtr_pt_config *c)
{
	struct hwtr_perf_data *pd = w->pd;
	const struct hwtr_perf_attr *a = pt_attr(pd);
	uint64_t cfg, m, flen;
	int sh;

	memset(c, 0, sizeof(*c));
	if (pd->info_npriv < PT_TSC_CTC_N)
		hwtr_perf_caveat(pd, "Intel PT AUXTRACE_INFO has %zu of %d "
		    "words (an old perf): no TSC:CTC ratio or maximum "
		    "non-turbo ratio", pd->info_npriv, PT_PRIV_MAX);
	if (a == NULL) {
		hwtr_perf_caveat(pd, "no attr of the intel_pt PMU (type "
		    "%" PRIu64 "): packet options unknown",
		    priv(pd, PT_PMU_TYPE));
		return (0);
	}
	cfg = a->config;
	if (cfg & priv(pd, PT_TSC_BIT))
		c->options |= HWTR_PT_OPT_TSC;
	if (cfg & priv(pd, PT_MTC_BIT))
		c->options |= HWTR_PT_OPT_MTC;
	if (cfg & priv(pd, PT_CYC_BIT))
		c->options |= HWTR_PT_OPT_CYC;
	if (cfg & priv(pd, PT_NORETCOMP_BIT))
		c->options |= HWTR_PT_OPT_NORETCOMP;
	if (cfg & (1u << 4))
		c->options |= HWTR_PT_OPT_PWR;
	if (cfg & (1u << 12))
		c->options |= HWTR_PT_OPT_PTW;
	if (cfg & (1u << 13))
		c->options |= HWTR_PT_OPT_BRANCH;
	if (!(a->flags & (1u << 4)))
		c->options |= HWTR_PT_OPT_USER;
	if (!(a->flags & (1u << 5)))
		c->options |= HWTR_PT_OPT_KERNEL;
	m = priv(pd, PT_MTC_FREQ_BITS);
	if (m != 0) {
		sh = __builtin_ctzll(m);
		c->mtc_freq = (uint8_t)((cfg & m) >> sh);
	}
	c->cyc_thresh = (uint8_t)((cfg >> 19) & 0xf);
	c->psb_freq = (uint8_t)((cfg >> 24) & 0xf);
	c->cpuid_15_ebx = (uint32_t)priv(pd, PT_TSC_CTC_N);
	c->cpuid_15_eax = (uint32_t)priv(pd, PT_TSC_CTC_D);
	c->nom_freq = (uint8_t)priv(pd, PT_MAX_NONTURBO_RATIO);
	flen = priv(pd, PT_FILTER_STR_LEN);
	if (flen > 0) {
		size_t words = (size_t)((flen + 8) / 8);

		if (pd->info_npriv < PT_PRIV_MAX ||
		    words > pd->info_npriv - PT_PRIV_MAX)
			hwtr_perf_caveat(pd, "Intel PT address filter string "
			    "of %" PRIu64 " bytes runs past AUXTRACE_INFO",
			    flen);
		else
			hwtr_perf_caveat(pd, "Intel PT address filter '%.*s' "
			    "was recorded; its addresses are relative to "
			    "files and are not resolved into the decoder's "
			    "filter registers", (int)flen,
			    (const char *)(pd->info_priv + PT_PRIV_MAX));
	}
	return (0);
}

static void
set_reg(struct hwtr_reg *r, size_t *n, const char *name, uint64_t v)
{
	r[*n].name = name;
	r[*n].value = v;
	(*n)++;
}

/* Each CPU's ETM from cs_etm's AUXTRACE_INFO. */
static int
cs_sources(struct pw *w)
{
	static const char *const v3[] = { "ETMCR", "ETMTRACEIDR", "ETMCCER",
	    "ETMIDR" };
	static const char *const v4[] = { "TRCCONFIGR", "TRCTRACEIDR",
	    "TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCAUTHSTATUS" };
	struct hwtr_perf_data *pd = w->pd;
	uint64_t ver, ncpu, magic, nparam, i, j, k;
	struct hwtr_cs_source *s;
	struct hwtr_reg *regs;
	size_t pos, nr;
	int32_t cpu;

	if (pd->info_npriv < 3)
		return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO has "
		    "%zu words, fewer than its 3-word header",
		    pd->info_npriv));
	ver = pd->info_priv[0];
	ncpu = pd->info_priv[1] & 0xffffffffu;
	if (ver > 2)
		return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO header "
		    "version %" PRIu64 " is not known (0 to 2 are)", ver));
	if (ncpu == 0 || ncpu > HWTR_PERF_MAX_CPUS)
		return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO says "
		    "%" PRIu64 " CPUs", ncpu));
	w->cs.src = calloc(ncpu, sizeof(*w->cs.src));
	w->cs.regs = calloc(ncpu * 16, sizeof(*w->cs.regs));
	w->cs.cpu = calloc(ncpu, sizeof(*w->cs.cpu));
	if (w->cs.src == NULL || w->cs.regs == NULL || w->cs.cpu == NULL)
		return (werr(w, -HWTR_E_NOMEM, "out of memory"));
	pos = 3;
	for (i = 0; i < ncpu; i++) {
		if (pos + 2 > pd->info_npriv)
			return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO "
			    "ends in CPU entry %" PRIu64 " of %" PRIu64, i,
			    ncpu));
		magic = pd->info_priv[pos];
		cpu = (int32_t)pd->info_priv[pos + 1];
		if (ver == 0) {
			nparam = magic == CS_MAGIC_ETMV3 ? 4 : 7;
			pos += 2;
		} else {
			if (pos + 3 > pd->info_npriv)
				return (werr(w, -HWTR_E_FORMAT, "cs_etm "
				    "AUXTRACE_INFO ends in CPU entry %" PRIu64,
				    i));
			nparam = pd->info_priv[pos + 2];
			pos += 3;
		}
		if (nparam > 13 || nparam > pd->info_npriv - pos)
			return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO "
			    "CPU entry %" PRIu64 ": %" PRIu64 " parameters do "
			    "not fit", i, nparam));
		s = &w->cs.src[i];
		regs = &w->cs.regs[i * 16];
		nr = 0;
		if (magic == CS_MAGIC_ETMV3) {
			for (j = 0; j < nparam && j < 4; j++)
				set_reg(regs, &nr, v3[j],
				    pd->info_priv[pos + j]);
			k = nparam > 3 ? pd->info_priv[pos + 3] : 0;
			s->protocol = (k & 0x300) == 0x300 ? HWTR_TF_PTM :
			    HWTR_TF_ETMV3;
			s->trace_id = nparam > 1 ?
			    (uint8_t)(pd->info_priv[pos + 1] & 0x7f) : 0;
		} else if (magic == CS_MAGIC_ETMV4 || magic == CS_MAGIC_ETE) {
			for (j = 0; j < nparam && j < 7; j++)
				set_reg(regs, &nr, v4[j],
				    pd->info_priv[pos + j]);
			s->protocol = magic == CS_MAGIC_ETE ? HWTR_TF_ETE :
			    HWTR_TF_ETMV4;
			if (magic == CS_MAGIC_ETE) {
				/*
				 * TRCDEVARCH follows the ETMv4 block: right
				 * after it (8 parameters, perf before 6.3)
				 * or after TS_SOURCE (9).
				 */
				if (nparam == 8)
					set_reg(regs, &nr, "TRCDEVARCH",
					    pd->info_priv[pos + 7]);
				else if (nparam >= 9)
					set_reg(regs, &nr, "TRCDEVARCH",
					    pd->info_priv[pos + 8]);
			}
			s->trace_id = nparam > 1 ?
			    (uint8_t)(pd->info_priv[pos + 1] & 0x7f) : 0;
		} else
			return (werr(w, -HWTR_E_FORMAT, "cs_etm AUXTRACE_INFO "
			    "CPU entry %" PRIu64 ": magic 0x%016" PRIx64 " is "
			    "none of ETMv3, ETMv4 or ETE", i, magic));
		if (ver == 2 && cpu >= 0 && cpu < HWTR_PERF_MAX_CPUS &&
		    pd->has_hw_id[cpu])
			s->trace_id = (uint8_t)(pd->hw_id[cpu] & 0x7f);
		s->regs = regs;
		s->nregs = nr;
		w->cs.cpu[i] = cpu;
		pos += (size_t)nparam;
	}
	w->cs.nsrc = (size_t)ncpu;
	return (0);
}

static void
cpu_identity(struct pw *w, struct hwtr_cpu *c)
{
	struct hwtr_perf_data *pd = w->pd;
	unsigned f, m, s;
	char v[32];

	memset(c, 0, sizeof(*c));
	if (!w->pt && !w->notrace)
		c->vendor = HWTR_CPU_ARM;
	if (pd->cpuid != NULL && sscanf(pd->cpuid, "%31[^,],%u,%u,%u", v, &f,
	    &m, &s) == 4) {
		if (strcmp(v, "GenuineIntel") == 0)
			c->vendor = HWTR_CPU_INTEL;
		else if (strcmp(v, "AuthenticAMD") == 0)
			c->vendor = HWTR_CPU_AMD;
		c->family = (uint16_t)f;
		c->model = (uint8_t)m;
		c->stepping = (uint8_t)s;
	} else if (w->pt) {
		c->vendor = HWTR_CPU_INTEL;
		hwtr_perf_caveat(pd, "no CPUID feature: the decoder runs "
		    "without the CPU's family and model (no errata "
		    "workarounds)");
	}
	if (pd->cpudesc != NULL)
		snprintf(c->brand, sizeof(c->brand), "%s", pd->cpudesc);
}

/*
 * perf clock ns to TSC, as perf's perf_time_to_tsc(); with a short
 * counter, its bits only (what the trace's timestamps hold).
 */
static uint64_t
ns_to_tsc(const struct pw *w, uint64_t ns)
{
	uint64_t t, q, r;

	if (!w->tc.valid || w->pmult == 0)
		return (ns);
	t = ns - w->pz;
	q = t / w->pmult;
	r = t % w->pmult;
	t = (q << w->pshift) + ((r << w->pshift) / w->pmult);
	return (w->pmask != 0 ? t & w->pmask : t);
}

/*
 * The archive's conversion of a short counter (TIME_CONV with
 * cap_user_time_short): perf extends a counter value c to time_cycles +
 * ((c - time_cycles) & time_mask) before tsc_to_perf_time().  The archive
 * holds counter values as the trace does (masked), converted from a zero
 * point: the extended time_cycles rounded down to a multiple of 2^shift,
 * Z, at raw value Z & mask and time time_zero + (Z >> shift) * mult, so
 * that every value from there to the counter's wrap converts to the very
 * nanosecond perf's formula gives (Z's own part has no fraction).  Values
 * below Z's are before the record was made; perf would take them for a
 * wrap, the archive for the past.
 */
static void
short_counter(struct pw *w, const struct hwtr_perf_data *pd)
{
	uint64_t z = pd->tc_cycles;

	if (w->pshift > 0)
		z &= ~((UINT64_C(1) << w->pshift) - 1);
	w->pmask = pd->tc_mask;
	w->tc.tsc_zero = z & pd->tc_mask;
	w->tc.ns_zero = (int64_t)(pd->tc_zero + (z >> w->pshift) *
	    (uint64_t)w->pmult);
}

/* The JIT code's times, as the sideband's (hwtr_perf_jit_clock). */
static uint64_t
jit_ns(const void *arg, uint64_t ns)
{
	return (ns_to_tsc(arg, ns));
}

static int
add_stream(struct pw *w, struct pw_stream *ps)
{
	struct hwtr_stream_desc sd;
	struct hwtr_cs_source *one = NULL;
	char name[64];
	size_t i;
	int rc;

	memset(&sd, 0, sizeof(sd));
	sd.pid = -1;
	sd.tid = w->per_cpu ? -1 : ps->key;
	sd.cpu = w->per_cpu ? ps->key : -1;
	snprintf(name, sizeof(name), w->per_cpu ? "cpu %d" : "tid %d",
	    (int)ps->key);
	sd.name = name;
	if (w->pt) {
		sd.format = HWTR_TF_INTEL_PT;
		sd.pt = w->ptc;
	} else {
		sd.format = HWTR_TF_CORESIGHT;
		if (ps->raw) {
			/* Unformatted: this CPU's ETM alone. */
			for (i = 0; i < w->cs.nsrc; i++)
				if (w->cs.cpu[i] == ps->key)
					one = &w->cs.src[i];
			if (one == NULL)
				return (werr(w, -HWTR_E_FORMAT, "unformatted "
				    "trace of CPU %d, whose ETM AUXTRACE_INFO "
				    "does not describe", (int)ps->key));
			sd.cs.frame = HWTR_CS_FRAME_NONE;
			sd.cs.sources = one;
			sd.cs.nsources = 1;
		} else {
			sd.cs.frame = HWTR_CS_FRAME_CORESIGHT;
			sd.cs.sources = w->cs.src;
			sd.cs.nsources = w->cs.nsrc;
		}
	}
	if ((rc = hwtr_aw_add_stream(w->aw, &sd, &ps->id)) < 0)
		return (werr(w, rc, "stream '%s': %s", name,
		    hwtr_aw_errmsg(w->aw)));
	return (0);
}

static int
lost(struct pw *w, uint64_t time, uint32_t sid, enum hwtr_lost_reason why,
    uint64_t bytes, uint64_t records)
{
	struct hwtr_sb_rec r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_LOST;
	r.time = time;
	r.pid = r.tid = -1;
	r.u.lost.stream = sid;
	r.u.lost.reason = why;
	r.u.lost.bytes = bytes;
	r.u.lost.records = records;
	w->lost_bytes += bytes;
	w->lost_records += records;
	if ((rc = hwtr_aw_sideband(w->aw, &r)) < 0)
		return (werr(w, rc, "sideband: %s", hwtr_aw_errmsg(w->aw)));
	return (0);
}

/* Copy every AUXTRACE payload into its stream. */
static int
copy_aux(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	struct hwtr_perf_aux *ax;
	struct pw_stream *ps;
	uint64_t off, done, n;
	size_t i;
	int s, rc;

	for (i = 0; i < pd->naux; i++) {
		ax = &pd->aux[i];
		if ((s = stream_of(w, ax->cpu, ax->tid)) < 0)
			continue;
		ps = &w->st[s];
		/*
		 * A payload starts where the AUX area had it: a jump forward
		 * is data perf did not save (snapshot mode, a full buffer);
		 * one backward (a wrapped snapshot) is appended.
		 */
		off = ax->offset >= ps->end ? ax->offset : ps->end;
		if (off > ps->end && (rc = lost(w, 0, ps->id,
		    HWTR_LOST_OTHER, off - ps->end, 0)) < 0)
			return (rc);
		if (off > ps->end)
			ps->gaps += off - ps->end;
		for (done = 0; done < ax->have; done += n) {
			n = ax->have - done;
			if (n > CHUNK)
				n = CHUNK;
			if ((rc = hwtr_aw_chunk(w->aw, ps->id, off + done,
			    pd->buf + ax->data_off + done, (size_t)n)) < 0)
				return (werr(w, rc, "AUXTRACE %zu: %s", i,
				    hwtr_aw_errmsg(w->aw)));
		}
		ps->end = off + ax->have;
		w->sk->trace_bytes += ax->have;
		if (ax->have < ax->want) {
			if ((rc = lost(w, 0, ps->id, HWTR_LOST_OTHER,
			    ax->want - ax->have, 0)) < 0)
				return (rc);
			ps->end += ax->want - ax->have;
		}
	}
	return (0);
}

/* 1 when the file at @path has build-id @id (recorded, maybe padded). */
static int
bid_matches(const char *path, const uint8_t *id, size_t idlen, uint8_t *got,
    size_t *gotlen)
{
	struct stat st;
	size_t i;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return (0);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return (0);
	}
	rc = hwtr_elf_build_id_fd(fd, got, gotlen);
	close(fd);
	if (rc < 0 || *gotlen == 0 || *gotlen > idlen + 4)
		return (0);
	for (i = 0; i < idlen; i++)
		if ((i < *gotlen ? got[i] : 0) != id[i])
			return (0);
	return (1);
}

static const struct hwtr_perf_bid *
recorded_bid(const struct hwtr_perf_data *pd, const char *name)
{
	size_t i;

	for (i = 0; i < pd->nbid; i++)
		if (strcmp(pd->bid[i].name, name) == 0)
			return (&pd->bid[i]);
	return (NULL);
}

/* 1 when the path @s has a ".." component. */
static int
dotdot(const char *s)
{
	const char *p;

	for (p = s; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == s || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return (1);
	return (0);
}

/*
 * Find the image @name with build-id @id: perf's build-id cache, then
 * --symfs, then the recorded path; a candidate's own build-id must be
 * @id.  Before the archive is open (resolve_images()) this only looks;
 * while writing it stores what it found and returns the key, or NULL.
 */
static const char *
find_image(struct pw *w, const char *name, const uint8_t *id, size_t idlen)
{
	char hex[2 * HWTR_BUILD_ID_MAX + 1], cand[6][4400];
	uint8_t got[HWTR_BUILD_ID_MAX];
	struct pw_img *im = NULL;
	size_t i, n = 0, gotlen;

	for (i = 0; i < w->nimg; i++)
		if (strcmp(w->img[i].name, name) == 0 &&
		    w->img[i].idlen == idlen &&
		    memcmp(w->img[i].id, id, idlen) == 0)
			im = &w->img[i];
	if (im != NULL) {
		if (im->found <= 0 || w->aw == NULL)
			return (NULL);
		if (im->key[0] != '\0')
			return (im->key);
		if (hwtr_aw_add_image_file(w->aw, im->file, im->fid,
		    im->fidlen, im->key) < 0) {
			im->key[0] = '\0';
			im->found = -1;
			return (NULL);
		}
		w->img_stored++;
		return (im->key);
	}
	if (w->aw != NULL)
		return (NULL);	/* not seen before writing: cannot be */
	if (hwtr_grow(&w->img, &w->imgcap, w->nimg + 1, sizeof(*w->img)) < 0)
		return (NULL);
	im = &w->img[w->nimg];
	memset(im, 0, sizeof(*im));
	if ((im->name = strdup(name)) == NULL)
		return (NULL);
	memcpy(im->id, id, idlen);
	im->idlen = idlen;
	im->found = -1;
	w->nimg++;
	if (idlen == 0) {
		w->img_nobid++;
		return (NULL);
	}
	hwtr_hex(hex, id, idlen);
	if (w->buildid_dir[0] != '\0') {
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s/elf",
		    w->buildid_dir, hex, hex + 2);
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s",
		    w->buildid_dir, hex, hex + 2);
	}
	if (w->unpacked[0] != '\0') {
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s/elf",
		    w->unpacked, hex, hex + 2);
		snprintf(cand[n++], sizeof(cand[0]), "%s/.build-id/%.2s/%s",
		    w->unpacked, hex, hex + 2);
	}
	/* A recorded name with ".." would leave --symfs: not looked up. */
	if (w->o->symfs != NULL && !dotdot(name))
		snprintf(cand[n++], sizeof(cand[0]), "%s/%s", w->o->symfs,
		    name);
	if (name[0] == '/')
		snprintf(cand[n++], sizeof(cand[0]), "%s", name);
	for (i = 0; i < n; i++) {
		if (!bid_matches(cand[i], id, idlen, got, &gotlen))
			continue;
		if ((im->file = strdup(cand[i])) == NULL)
			return (NULL);
		memcpy(im->fid, got, gotlen);
		im->fidlen = gotlen;
		im->found = 1;
		return (NULL);
	}
	w->img_missing++;
	return (NULL);
}

/* The build-id of the code mapping @pr, or length 0. */
static void
mmap_bid(const struct pw *w, const struct hwtr_perf_rec *pr, uint8_t *id,
    uint8_t *len)
{
	const struct hwtr_perf_bid *rb;

	*len = 0;
	if (pr->u.mmap.build_id_len > 0) {
		memcpy(id, pr->u.mmap.build_id, pr->u.mmap.build_id_len);
		*len = pr->u.mmap.build_id_len;
	} else if ((rb = recorded_bid(w->pd, pr->u.mmap.filename)) != NULL) {
		memcpy(id, rb->id, rb->len);
		*len = (uint8_t)rb->len;
	}
}

/* 1 when @pr maps code that lives in a file. */
static int
maps_file_code(const struct hwtr_perf_rec *pr)
{
	if (pr->type != HWTR_PERF_MMAP && pr->type != HWTR_PERF_MMAP2)
		return (0);
	if (pr->type == HWTR_PERF_MMAP2 ? !(pr->u.mmap.prot & PROT_X) :
	    (pr->misc & HWTR_PERF_MISC_MMAP_DATA) != 0)
		return (0);
	return (pr->u.mmap.filename[0] != '[' &&
	    strncmp(pr->u.mmap.filename, "//anon", 6) != 0);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return (remove(path));
}

/*
 * Unpack a `perf archive` tarball (a build-id cache's files, relative to
 * ~/.debug) into a private directory that is searched like one.  Entries
 * cannot leave it (no "..", no absolute names, no writing through
 * symbolic links); what they link to is checked by build-id anyway.
 */
static int
unpack_archive(struct pw *w, const char *tarball)
{
	struct archive *a, *d;
	struct archive_entry *e;
	const char *nm;
	const char *td = getenv("TMPDIR");
	char path[4200];
	int r, rc = 0;

	/* Under TMPDIR, as the indexer's own temporaries are. */
	snprintf(w->unpacked, sizeof(w->unpacked),
	    "%s/hwtrace-perf-archive.XXXXXX",
	    td != NULL && *td != '\0' && strlen(td) < 200 ? td : "/tmp");
	if (mkdtemp(w->unpacked) == NULL) {
		w->unpacked[0] = '\0';
		return (werr(w, -HWTR_E_IO, "--perf-archive: cannot make a "
		    "directory: %s", strerror(errno)));
	}
	a = archive_read_new();
	d = archive_write_disk_new();
	if (a == NULL || d == NULL) {
		archive_read_free(a);
		archive_write_free(d);
		return (werr(w, -HWTR_E_NOMEM, "out of memory"));
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_all(a);
	archive_write_disk_set_options(d, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	    ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	if (archive_read_open_filename(a, tarball, 65536) != ARCHIVE_OK) {
		rc = werr(w, -HWTR_E_IO, "--perf-archive '%s': %s", tarball,
		    archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		nm = archive_entry_pathname(e);
		if (nm == NULL || nm[0] == '/' || strstr(nm, "..") != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", w->unpacked, nm);
		archive_entry_set_pathname(e, path);
		if (archive_write_header(d, e) != ARCHIVE_OK)
			continue;
		if (archive_entry_size(e) > 0) {
			const void *buf;
			size_t len;
			int64_t off;

			while ((r = archive_read_data_block(a, &buf, &len,
			    &off)) == ARCHIVE_OK)
				if (archive_write_data_block(d, buf, len,
				    off) != ARCHIVE_OK)
					break;
			if (r != ARCHIVE_EOF && r != ARCHIVE_OK) {
				rc = werr(w, -HWTR_E_FORMAT, "--perf-archive "
				    "'%s': %s: %s", tarball, nm,
				    archive_error_string(a));
				goto out;
			}
		}
		archive_write_finish_entry(d);
	}
	if (r != ARCHIVE_EOF)
		rc = werr(w, -HWTR_E_FORMAT, "--perf-archive '%s': %s",
		    tarball, archive_error_string(a));
out:
	archive_read_free(a);
	archive_write_free(d);
	return (rc);
}

static int kernel_check(struct pw *, const struct hwtr_perf_rec *);

/* Look every mapped image up before the archive is opened. */
static int
resolve_images(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	struct hwtr_perf_rec pr;
	uint8_t id[HWTR_BUILD_ID_MAX], len;
	size_t i;
	int rc;

	for (i = 0; i < pd->nsb; i++) {
		const uint8_t *p = pd->buf + pd->sb[i].file_off;
		size_t room = pd->data_end - pd->sb[i].file_off;

		if (hwtr_perf_rec_parse(p, room, hwtr_perf_layout(pd, p,
		    room), &pr, NULL, 0) < 0)
			continue;
		if ((pr.type == HWTR_PERF_MMAP || pr.type == HWTR_PERF_MMAP2) &&
		    (pr.misc & HWTR_PERF_MISC_CPUMODE) ==
		    HWTR_PERF_MISC_KERNEL && strncmp(pr.u.mmap.filename,
		    "[kernel.kallsyms]", 17) == 0 &&
		    (rc = kernel_check(w, &pr)) < 0)
			return (rc);
		if (!maps_file_code(&pr) ||
		    hwtr_perf_jit_skip(w->jit, pr.u.mmap.filename))
			continue;
		mmap_bid(w, &pr, id, &len);
		find_image(w, pr.u.mmap.filename, id, len);
	}
	return (0);
}

/*
 * Read and parse the kernel image @path into *@bufp (the caller frees it)
 * and @info.  A file cut inside a segment is refused: it would map bytes
 * it does not have.
 */
static int
kernel_read(struct pw *w, const char *path, void **bufp, size_t *lenp,
    struct hwtr_elf_info *info)
{
	char ebuf[HWTR_ERRMSG_MAX];
	size_t i;
	int rc;

	*bufp = NULL;
	memset(info, 0, sizeof(*info));
	if ((rc = hwtr_read_file(path, MAX_IMAGE, bufp, lenp, ebuf,
	    sizeof(ebuf))) < 0)
		return (werr(w, rc, "kernel image '%s': %s", path, ebuf));
	if ((rc = hwtr_elf_parse(*bufp, *lenp, info, ebuf,
	    sizeof(ebuf))) < 0) {
		free(*bufp);
		*bufp = NULL;
		return (werr(w, rc, "kernel image '%s': %s", path, ebuf));
	}
	for (i = 0; i < info->nload; i++)
		if (info->load[i].offset > *lenp ||
		    info->load[i].filesz > *lenp - info->load[i].offset) {
			free(*bufp);
			*bufp = NULL;
			return (werr(w, -HWTR_E_FORMAT, "kernel image '%s': "
			    "segment %zu (offset %#" PRIx64 ", %" PRIu64
			    " bytes) ends past the end of the file (%zu "
			    "bytes): truncated?", path, i,
			    (uint64_t)info->load[i].offset,
			    (uint64_t)info->load[i].filesz, *lenp));
		}
	return (0);
}

/*
 * Check --vmlinux against the kernel MMAP record @pr before the archive is
 * open.  A vmlinux is where it was linked; perf moves it as KASLR moved
 * the kernel: @pr is named "[kernel.kallsyms]" followed by a relocation
 * symbol (_text) and has that symbol's run-time address as its pgoff.
 * The vmlinux must have the build-id the recording gives the kernel.
 */
static int
kernel_check(struct pw *w, const struct hwtr_perf_rec *pr)
{
	const char *path = w->o->vmlinux;
	const char *sym = pr->u.mmap.filename + 17;
	char hw[2 * HWTR_BUILD_ID_MAX + 1], hg[2 * HWTR_BUILD_ID_MAX + 1];
	const struct hwtr_perf_bid *rb;
	struct hwtr_elf_info info;
	uint64_t link;
	void *buf = NULL;
	size_t len, i;
	int rc;

	if (path == NULL || w->kernel_done)
		return (0);
	w->kernel_done = 1;
	if ((rc = kernel_read(w, path, &buf, &len, &info)) < 0)
		return (rc);
	rb = recorded_bid(w->pd, "[kernel.kallsyms]");
	if (rb != NULL && info.build_id_len > 0) {
		for (i = 0; i < rb->len; i++)
			if ((i < info.build_id_len ? info.build_id[i] : 0) !=
			    rb->id[i])
				break;
		if (i < rb->len || info.build_id_len > rb->len + 4) {
			free(buf);
			hwtr_hex(hw, rb->id, rb->len);
			hwtr_hex(hg, info.build_id, info.build_id_len);
			return (werr(w, -HWTR_E_FORMAT, "--vmlinux '%s' has "
			    "build-id %s, the recorded kernel %s", path, hg,
			    hw));
		}
	}
	if (*sym != '\0' && hwtr_elf_symbol(buf, len, sym, &link) == 1)
		w->kernel_slide = pr->u.mmap.pgoff - link;
	else if (*sym != '\0')
		hwtr_perf_caveat(w->pd, "--vmlinux '%s' has no symbol '%s': "
		    "it is mapped where it was linked, which is wrong when "
		    "the kernel was moved (KASLR)", path, sym);
	free(buf);
	return (0);
}

/*
 * The kernel from --vmlinux or --kcore: one MMAP per PT_LOAD segment,
 * a vmlinux moved by kernel_slide, kcore's segments where the running
 * kernel had them.
 */
static int
kernel_image(struct pw *w, uint64_t time)
{
	const char *path = w->o->vmlinux;
	char kc[4200], key[HWTR_IMAGE_KEY_MAX];
	struct hwtr_elf_info info;
	struct hwtr_sb_rec r;
	struct stat st;
	void *buf = NULL;
	size_t len, i;
	int rc;

	if (w->kernel_written)
		return (0);
	w->kernel_written = 1;
	if (path == NULL && w->o->kcore != NULL) {
		path = w->o->kcore;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(kc, sizeof(kc), "%s/kcore", path);
			path = kc;
		}
	}
	if (path == NULL)
		return (0);
	if ((rc = kernel_read(w, path, &buf, &len, &info)) < 0)
		return (rc);
	free(buf);
	if ((rc = hwtr_aw_add_image_file(w->aw, path, NULL, 0, key)) < 0)
		return (werr(w, rc, "kernel image '%s': %s", path,
		    hwtr_aw_errmsg(w->aw)));
	for (i = 0; i < info.nload; i++) {
		if (info.load[i].filesz == 0)
			continue;
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_MMAP;
		r.time = time;
		r.pid = r.tid = -1;
		r.u.mmap.addr = info.load[i].vaddr + w->kernel_slide;
		r.u.mmap.len = info.load[i].filesz;
		r.u.mmap.pgoff = info.load[i].offset;
		r.u.mmap.prot = hwtr_import_prot(info.load[i].flags);
		r.u.mmap.path = path;
		r.u.mmap.image = key;
		memcpy(r.u.mmap.build_id, info.build_id, info.build_id_len);
		r.u.mmap.build_id_len = (uint8_t)info.build_id_len;
		if ((rc = hwtr_aw_sideband(w->aw, &r)) < 0)
			return (werr(w, rc, "sideband: %s",
			    hwtr_aw_errmsg(w->aw)));
		w->kernel_maps++;
	}
	return (0);
}

static int
sb_cmp(const void *a, const void *b)
{
	const struct hwtr_perf_sbrec *x = a, *y = b;

	if (x->time != y->time)
		return (x->time < y->time ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static int
put(struct pw *w, struct hwtr_sb_rec *r)
{
	int rc;

	if ((rc = hwtr_aw_sideband(w->aw, r)) < 0)
		return (werr(w, rc, "sideband %s: %s",
		    hwtr_sb_type_name(r->type), hwtr_aw_errmsg(w->aw)));
	return (0);
}

/* One kernel record into hwtrace sideband. */
static int
convert(struct pw *w, const struct hwtr_perf_rec *pr, uint64_t time)
{
	struct hwtr_sb_rec r;
	int s, rc = 0, kernel;

	memset(&r, 0, sizeof(r));
	r.time = time;
	r.pid = pr->sid.has_tid ? (int32_t)pr->sid.pid : -1;
	r.tid = pr->sid.has_tid ? (int32_t)pr->sid.tid : -1;
	switch (pr->type) {
	case HWTR_PERF_COMM:
		r.type = HWTR_SB_COMM;
		r.pid = (int32_t)pr->u.comm.pid;
		r.tid = (int32_t)pr->u.comm.tid;
		r.u.comm.comm = pr->u.comm.comm;
		r.u.comm.exec = (pr->misc & HWTR_PERF_MISC_COMM_EXEC) != 0;
		return (put(w, &r));
	case HWTR_PERF_FORK:
	case HWTR_PERF_EXIT:
		r.pid = (int32_t)pr->u.fork.pid;
		r.tid = (int32_t)pr->u.fork.tid;
		if (pr->type == HWTR_PERF_FORK) {
			if (pr->u.fork.pid != pr->u.fork.ppid ||
			    pr->u.fork.tid == pr->u.fork.pid) {
				r.type = HWTR_SB_PROC_START;
				r.u.proc_start.ppid =
				    (int32_t)pr->u.fork.ppid;
			} else {
				r.type = HWTR_SB_THREAD_START;
				r.u.thread_start.ptid =
				    (int32_t)pr->u.fork.ptid;
			}
		} else {
			r.type = pr->u.fork.pid == pr->u.fork.tid ?
			    HWTR_SB_PROC_EXIT : HWTR_SB_THREAD_EXIT;
			r.u.exit.kind = HWTR_EXIT_NONE;
		}
		return (put(w, &r));
	case HWTR_PERF_MMAP:
	case HWTR_PERF_MMAP2:
		if (pr->type == HWTR_PERF_MMAP2 ?
		    !(pr->u.mmap.prot & PROT_X) :
		    (pr->misc & HWTR_PERF_MISC_MMAP_DATA) != 0)
			return (0);	/* not code */
		if (hwtr_perf_jit_skip(w->jit, pr->u.mmap.filename))
			return (0);	/* its code regions replace it */
		kernel = (pr->misc & HWTR_PERF_MISC_CPUMODE) ==
		    HWTR_PERF_MISC_KERNEL;
		if (kernel && strncmp(pr->u.mmap.filename,
		    "[kernel.kallsyms]", 17) == 0 &&
		    (w->o->vmlinux != NULL || w->o->kcore != NULL))
			return (kernel_image(w, time));
		r.type = HWTR_SB_MMAP;
		r.pid = (int32_t)pr->u.mmap.pid;
		r.tid = (int32_t)pr->u.mmap.tid;
		r.u.mmap.addr = pr->u.mmap.addr;
		r.u.mmap.len = pr->u.mmap.len;
		r.u.mmap.pgoff = pr->u.mmap.pgoff;
		r.u.mmap.prot = pr->type == HWTR_PERF_MMAP2 ?
		    pr->u.mmap.prot : PROT_R | PROT_X;
		r.u.mmap.flags = pr->u.mmap.flags;
		r.u.mmap.path = pr->u.mmap.filename;
		mmap_bid(w, pr, r.u.mmap.build_id, &r.u.mmap.build_id_len);
		if (maps_file_code(pr))
			r.u.mmap.image = find_image(w, pr->u.mmap.filename,
			    r.u.mmap.build_id, r.u.mmap.build_id_len);
		return (put(w, &r));
	case HWTR_PERF_ITRACE_START:
		/* Tracing started on this CPU with this thread running. */
		r.type = HWTR_SB_SWITCH;
		r.pid = (int32_t)pr->u.itrace_start.pid;
		r.tid = (int32_t)pr->u.itrace_start.tid;
		r.u.sw.cpu = pr->sid.has_cpu ? (int32_t)pr->sid.cpu : -1;
		r.u.sw.out = 0;
		return (put(w, &r));
	case HWTR_PERF_SWITCH:
	case HWTR_PERF_SWITCH_CPU_WIDE:
		r.type = HWTR_SB_SWITCH;
		r.u.sw.cpu = pr->sid.has_cpu ? (int32_t)pr->sid.cpu : -1;
		r.u.sw.out = (pr->misc & HWTR_PERF_MISC_SWITCH_OUT) != 0;
		r.u.sw.preempt =
		    (pr->misc & HWTR_PERF_MISC_SWITCH_PREEMPT) != 0;
		return (put(w, &r));
	case HWTR_PERF_LOST:
		return (lost(w, time, UINT32_MAX, HWTR_LOST_SIDEBAND, 0,
		    pr->u.lost.lost));
	case HWTR_PERF_LOST_SAMPLES:
		return (lost(w, time, UINT32_MAX, HWTR_LOST_OTHER, 0,
		    pr->u.lost.lost));
	case HWTR_PERF_AUX:
		s = stream_of(w, pr->sid.has_cpu ? (int32_t)pr->sid.cpu : -1,
		    pr->sid.has_tid ? (int32_t)pr->sid.tid : -1);
		if (s < 0)
			return (0);
		/* Where the stream stood when the kernel said so. */
		r.type = HWTR_SB_BUFPOS;
		r.u.bufpos.stream = w->st[s].id;
		r.u.bufpos.offset = pr->u.aux.offset + pr->u.aux.size;
		if ((rc = put(w, &r)) < 0)
			return (rc);
		if (pr->u.aux.flags & HWTR_PERF_AUX_TRUNCATED)
			rc = lost(w, time, w->st[s].id, HWTR_LOST_OVERFLOW,
			    0, 0);
		if (rc == 0 && (pr->u.aux.flags & HWTR_PERF_AUX_OVERWRITE))
			rc = lost(w, time, w->st[s].id, HWTR_LOST_WRAP, 0, 0);
		if (rc == 0 && (pr->u.aux.flags & (HWTR_PERF_AUX_PARTIAL |
		    HWTR_PERF_AUX_COLLISION)))
			rc = lost(w, time, w->st[s].id, HWTR_LOST_OTHER, 0,
			    0);
		return (rc);
	default:
		return (0);
	}
}

static int
write_sideband(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	struct hwtr_perf_rec pr;
	const struct hwtr_perf_idlayout *lay;
	uint64_t last = 0, t;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t i;
	int rc;

	/* A record without a time keeps the one before it in the file. */
	for (i = 0; i < pd->nsb; i++) {
		if (pd->sb[i].has_time)
			last = pd->sb[i].time;
		else
			pd->sb[i].time = last;
	}
	if (pd->nsb > 1)
		qsort(pd->sb, pd->nsb, sizeof(*pd->sb), sb_cmp);
	for (i = 0; i < pd->nsb; i++) {
		const uint8_t *p = pd->buf + pd->sb[i].file_off;
		size_t room = pd->data_end - pd->sb[i].file_off;

		lay = hwtr_perf_layout(pd, p, room);
		if ((rc = hwtr_perf_rec_parse(p, room, lay, &pr, ebuf,
		    sizeof(ebuf))) < 0)
			return (werr(w, rc, "record at byte %zu: %s",
			    pd->sb[i].file_off, ebuf));
		t = ns_to_tsc(w, pd->sb[i].time);
		if ((rc = convert(w, &pr, t)) < 0)
			return (rc);
	}
	return (0);
}

static void
caveats(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	const struct hwtr_perf_attr *a;
	size_t i;
	int kernel = 0;

	if (pd->cut)
		hwtr_perf_caveat(pd, "the file ends inside a record at byte "
		    "%zu: records after it are lost", pd->cut_at);
	if (pd->data_short > 0)
		hwtr_perf_caveat(pd, "the data section is %" PRIu64 " bytes "
		    "longer than the file: the file was cut short",
		    pd->data_short);
	if (pd->no_data_size)
		hwtr_perf_caveat(pd, "the header gives no data size (perf "
		    "did not finish the file): records read to its end");
	if (pd->feat_missing || pd->feat_bad > 0)
		hwtr_perf_caveat(pd, "feature sections missing or past the "
		    "end of the file: no build-ids, CPUID or host name from "
		    "them");
	if (pd->unknown > 0)
		hwtr_perf_caveat(pd, "%" PRIu64 " records of unknown types "
		    "skipped", pd->unknown);
	if (pd->compressed > 0)
		hwtr_perf_caveat(pd, "%" PRIu64 " compressed records "
		    "(perf record -z) skipped: their sideband is lost",
		    pd->compressed);
	if (pd->extra_info > 0)
		hwtr_perf_caveat(pd, "%" PRIu64 " further AUXTRACE_INFO "
		    "records ignored; the first one is used",
		    pd->extra_info);
	if (pd->lay_mode == LAY_NONE && pd->nattr > 1)
		hwtr_perf_caveat(pd, "attrs disagree on sample_id and lack "
		    "SAMPLE_IDENTIFIER: sideband records carry no time, CPU "
		    "or thread");
	for (i = 0; i < pd->nattr; i++) {
		a = &pd->attr[i];
		if (!(a->flags & (1u << 5)))
			kernel = 1;
	}
	if (kernel && w->o->vmlinux == NULL && w->o->kcore == NULL)
		hwtr_perf_caveat(pd, "kernel code is not in the archive (no "
		    "--kcore or --vmlinux): kernel parts of the trace do "
		    "not decode");
	if (w->img_missing > 0)
		hwtr_perf_caveat(pd, "%" PRIu64 " executable images were not "
		    "found with their recorded build-id (perf's build-id "
		    "cache, --buildid-dir, --symfs, the recorded paths)",
		    w->img_missing);
	if (w->img_nobid > 0)
		hwtr_perf_caveat(pd, "%" PRIu64 " executable images have no "
		    "recorded build-id and were not stored (they cannot be "
		    "verified)", w->img_nobid);
}

/*
 * The time conversion of the sideband's perf clock: Intel PT's
 * AUXTRACE_INFO, else TIME_CONV (none for CoreSight).
 */
static void
time_conv(struct pw *w)
{
	const struct hwtr_perf_data *pd = w->pd;
	int short_tc = 0;

	if (w->pt && pd->info_npriv > PT_CAP_USER_TIME_ZERO &&
	    pd->info_priv[PT_CAP_USER_TIME_ZERO] != 0 &&
	    pd->info_priv[PT_TIME_MULT] != 0 &&
	    pd->info_priv[PT_TIME_SHIFT] < 64) {
		w->tc.valid = 1;
		w->tc.shift = (uint32_t)pd->info_priv[PT_TIME_SHIFT];
		w->tc.mult = (uint32_t)pd->info_priv[PT_TIME_MULT];
		w->tc.ns_zero = (int64_t)pd->info_priv[PT_TIME_ZERO];
	} else if (w->pt && pd->has_tc && pd->tc_mult != 0 &&
	    pd->tc_mult <= UINT32_MAX && pd->tc_shift < 64 &&
	    (!pd->tc_ext || pd->tc_zero_cap)) {
		w->tc.valid = 1;
		w->tc.shift = (uint32_t)pd->tc_shift;
		w->tc.mult = (uint32_t)pd->tc_mult;
		w->tc.ns_zero = (int64_t)pd->tc_zero;
		short_tc = pd->tc_ext && pd->tc_short && pd->tc_mask != 0;
	}
	w->pz = (uint64_t)w->tc.ns_zero;
	w->pmult = w->tc.mult;
	w->pshift = w->tc.shift;
	if (short_tc)
		short_counter(w, pd);
}

/* The capture's description in the first member, as far as known now. */
static void
fill_meta(struct pw *w, struct hwtr_capture_meta *meta)
{
	const struct hwtr_perf_data *pd = w->pd;
	const struct hwtr_import_sink *sk = w->sk;

	memset(meta, 0, sizeof(*meta));
	meta->host = pd->hostname != NULL ? pd->hostname : "unknown";
	meta->source = "import-perf";
	meta->source_version = pd->version != NULL && pd->version[0] != '\0' ?
	    pd->version : NULL;
	meta->sideband_origin = "perf_event";
	cpu_identity(w, &meta->cpu);
	meta->tconv = w->tc;
	if (pd->ncmdline > 0) {
		meta->argv = (const char *const *)pd->cmdline;
		meta->argc = pd->ncmdline;
	}
	if (sk->base != NULL) {
		/* A live capture: who ran what, where, is the session's. */
		meta->host = sk->base->host;
		meta->source = sk->base->source;
		meta->source_version = sk->base->source_version;
		meta->argv = sk->base->argv;
		meta->argc = sk->base->argc;
		meta->start_ns = sk->base->start_ns;
		meta->notes = sk->base->notes;
		meta->nnotes = sk->base->nnotes;
		if (pd->cpuid == NULL)
			meta->cpu = sk->base->cpu;
	}
}

/* The trace that AUX or AUXTRACE records announce and the file lacks. */
static void
aux_caveats(struct pw *w)
{
	struct hwtr_perf_data *pd = w->pd;
	size_t i;

	for (i = 0; i < w->nst; i++)
		if (w->st[i].announced > w->st[i].have)
			hwtr_perf_caveat(pd, "%s %d: AUX records announce "
			    "%" PRIu64 " bytes of trace, the file holds %" PRIu64
			    "; %" PRIu64 " bytes are lost", w->per_cpu ? "CPU" :
			    "tid", (int)w->st[i].key, w->st[i].announced,
			    w->st[i].have, w->st[i].announced - w->st[i].have);
	for (i = 0; i < pd->naux; i++)
		if (pd->aux[i].have < pd->aux[i].want)
			hwtr_perf_caveat(pd, "AUXTRACE buffer %zu (%s %d) "
			    "announces %" PRIu64 " bytes; the file ends after "
			    "%" PRIu64, i, w->per_cpu ? "CPU" : "tid",
			    (int)(w->per_cpu ? pd->aux[i].cpu : pd->aux[i].tid),
			    pd->aux[i].want, pd->aux[i].have);
}

int
hwtr_perf_write(struct hwtr_perf_data *pd, const struct hwtr_import_opts *o,
    struct hwtr_import_sink *sk)
{
	static const char *const tcav = "sideband times are TSC converted "
	    "from perf clock time; the time conversion gives perf clock "
	    "time, not wall-clock time";
	struct hwtr_capture_meta meta;
	struct hwtr_perf_jit_clock jc;
	struct pw w;
	const char *home;
	size_t i;
	int rc;

	memset(&w, 0, sizeof(w));
	w.pd = pd;
	w.o = o;
	w.sk = sk;
	/* Without any AUX data: the sideband and the JIT code alone. */
	w.notrace = pd->info_priv == NULL && pd->naux == 0 &&
	    pd->nauxrec == 0;
	if (pd->info_priv == NULL && !w.notrace)
		return (werr(&w, -HWTR_E_FORMAT, "no AUXTRACE_INFO record: "
		    "not a recording of Intel PT or CoreSight ETM (perf "
		    "record -e intel_pt// or -e cs_etm//)"));
	if (w.notrace)
		hwtr_perf_caveat(pd, "no trace: the recording holds no AUX "
		    "area trace (Intel PT, CoreSight ETM); the archive has "
		    "its sideband, images and JIT code only");
	else if (pd->info_type == 1)
		w.pt = 1;
	else if (pd->info_type != 3)
		return (werr(&w, -HWTR_E_FORMAT, "AUXTRACE_INFO type %u (%s) "
		    "is not imported; hwtrace decodes Intel PT (1) and "
		    "CoreSight ETM (3)", pd->info_type,
		    pd->info_type == 2 ? "Intel BTS" :
		    pd->info_type == 4 ? "Arm SPE" : "unknown"));
	if (o->buildid_dir != NULL)
		snprintf(w.buildid_dir, sizeof(w.buildid_dir), "%s",
		    o->buildid_dir);
	else if ((home = getenv("HOME")) != NULL)
		snprintf(w.buildid_dir, sizeof(w.buildid_dir), "%s/.debug",
		    home);
	if (!w.pt && !w.notrace && (rc = cs_sources(&w)) < 0)
		goto out;
	if ((rc = plan_streams(&w)) < 0) {
		werr(&w, rc, "out of memory");
		goto out;
	}
	if (w.nst == 0 && sk->base == NULL && !w.notrace) {
		rc = werr(&w, -HWTR_E_FORMAT, "no AUX area data: neither "
		    "AUXTRACE nor AUX records");
		goto out;
	}
	/* A live capture whose program made no trace still has its end. */
	if (w.nst == 0 && !w.notrace)
		hwtr_perf_caveat(pd, "the trace hardware wrote no trace: "
		    "the program ran no traced code (address filters, CPUs "
		    "not traced) or ended before its exec");

	time_conv(&w);
	jc.ns = jit_ns;
	jc.arg = &w;
	jc.tsc = w.pt && w.tc.valid;
	jc.tsc_mask = w.pmask;

	fill_meta(&w, &meta);
	if (w.tc.valid)
		hwtr_perf_caveat(pd, "%s", tcav);
	else
		hwtr_perf_caveat(pd, "sideband times are perf clock "
		    "nanoseconds; there is no conversion to trace time");
	/*
	 * The caveats that depend on writing are known only after it; the
	 * first member holds those known now.
	 */
	if (w.pt)
		pt_config(&w, &w.ptc);
	aux_caveats(&w);
	if (o->perf_archive != NULL &&
	    (rc = unpack_archive(&w, o->perf_archive)) < 0)
		goto out;
	if ((rc = hwtr_perf_jit_find(pd, o, &jc, &w.jit)) < 0 ||
	    (rc = resolve_images(&w)) < 0)
		goto out;
	caveats(&w);
	meta.caveats = (const char *const *)pd->caveat;
	meta.ncaveats = pd->ncaveat;
	if ((rc = hwtr_import_begin(sk, &meta)) < 0)
		goto out;
	w.aw = sk->aw;
	for (i = 0; i < w.nst; i++)
		if ((rc = add_stream(&w, &w.st[i])) < 0)
			goto out;
	if ((rc = copy_aux(&w)) < 0)
		goto out;
	if ((rc = write_sideband(&w)) < 0 ||
	    (rc = hwtr_perf_jit_write(w.jit, w.aw, &jc)) < 0)
		goto out;
	/*
	 * AUX data the kernel announced and the file does not hold, less
	 * the gaps between payloads already recorded (snapshot mode).
	 */
	for (i = 0; i < w.nst; i++) {
		uint64_t held = w.st[i].have + w.st[i].gaps;

		if (w.st[i].announced <= held)
			continue;
		if ((rc = lost(&w, 0, w.st[i].id, HWTR_LOST_OTHER,
		    w.st[i].announced - held, 0)) < 0)
			goto out;
	}
	sk->end.lost_bytes = w.lost_bytes;
	sk->end.lost_records = w.lost_records;
	rc = 0;
out:
	if (w.unpacked[0] != '\0')
		nftw(w.unpacked, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	for (i = 0; i < w.nimg; i++) {
		free(w.img[i].name);
		free(w.img[i].file);
	}
	free(w.img);
	free(w.st);
	free(w.cs.src);
	free(w.cs.regs);
	free(w.cs.cpu);
	hwtr_perf_jit_free(w.jit);
	return (rc);
}

/* --- the perf importer: the scan, then the archive ----------------------- */

static int
perf_bid(const char *path)
{
	uint8_t m[8];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return (0);
	n = read(fd, m, sizeof(m));
	close(fd);
	if (n == 8 && memcmp(m, "PERFILE2", 8) == 0)
		return (100);
	if (n == 8 && memcmp(m, "2ELIFREP", 8) == 0)
		return (100);	/* big-endian: refused with the reason */
	return (0);
}

static int
perf_load(const char *path, const struct hwtr_import_opts *o,
    struct hwtr_import_sink *sk)
{
	struct hwtr_perf_data pd;
	struct stat st;
	void *map = MAP_FAILED;
	int fd, rc;

	memset(&pd, 0, sizeof(pd));
	pd.path = path;
	pd.errbuf = sk->errbuf;
	pd.errlen = sk->errlen;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) != 0) {
		hwtr_import_err(sk->errbuf, sk->errlen, "cannot open '%s': %s",
		    path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return (-HWTR_E_IO);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		hwtr_import_err(sk->errbuf, sk->errlen, "'%s': not a regular "
		    "file", path);
		return (-HWTR_E_INVAL);
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
		    fd, 0);
		if (map == MAP_FAILED) {
			hwtr_import_err(sk->errbuf, sk->errlen, "cannot map "
			    "'%s': %s", path, strerror(errno));
			close(fd);
			return (-HWTR_E_IO);
		}
	}
	close(fd);
	pd.buf = map == MAP_FAILED ? (const uint8_t *)"" : map;
	pd.len = (size_t)st.st_size;
	rc = hwtr_perf_scan(&pd);
	if (rc >= 0)
		rc = hwtr_perf_write(&pd, o, sk);
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	hwtr_perf_data_free(&pd);
	return (rc);
}

const struct hwtr_importer hwtr_importer_perf = {
	.name = "perf",
	.bid = perf_bid,
	.load = perf_load,
};
