/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ptcheck: the ground-truth checker of the software trace sources (a test
 * helper, not part of hwtrace).
 *
 *   ptcheck [-v] ARCHIVE
 *
 * For every Intel PT stream of ARCHIVE it decodes the trace with libipt's
 * instruction flow decoder (the reference decoder, not our indexer), reading
 * code from the archive's images as the sideband's MMAP records map them at
 * the decoder's current time (exec, fork, mmap and munmap followed), and
 * compares the instruction addresses with the member
 * aux/groundtruth/tid-<tid>.u64: the addresses the tracer saw the thread
 * execute, little-endian u64, in order.  It prints one line per stream:
 *
 *   tid N: M instructions match
 *   tid N: mismatch at instruction K: decoded 0x..., ground truth 0x...
 *   tid N: decode error at instruction K (offset 0x...): <libipt error>
 *   tid N: decoded M instructions, ground truth has G
 *
 * and exits 0 when every stream matches, 1 on any mismatch, decode error,
 * stream without ground truth or ground truth without stream, 2 on usage.
 * -v prints the addresses around a divergence.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "hwtrace.h"

#define GT_PREFIX	"aux/groundtruth/tid-"

struct img {
	char		key[HWTR_IMAGE_KEY_MAX];
	uint8_t		*buf;
	size_t		len;
	int		loaded;		/* 1 ok, -1 missing */
};

struct check {
	struct hwtr_ar	*ar;
	const struct hwtr_sb_rec **sb;	/* sideband sorted by time */
	size_t		nsb;
	struct img	*imgs;		/* by archive image index */
	size_t		nimgs;
	int		verbose;

	/* Per stream. */
	struct pt_insn_decoder *dec;
	int32_t		pid;
	/* The last mapping found, valid while @cache_gen is the generation. */
	size_t		cache_gen;
	const struct hwtr_sb_rec *cache_rec;
	struct img	*cache_img;
};

struct u64vec {
	uint64_t	*v;
	size_t		n, cap;
};

static int
push(struct u64vec *x, uint64_t v)
{
	uint64_t *nv;
	size_t ncap;

	if (x->n == x->cap) {
		ncap = x->cap ? 2 * x->cap : 4096;
		if ((nv = realloc(x->v, ncap * sizeof(*nv))) == NULL)
			return (-1);
		x->v = nv;
		x->cap = ncap;
	}
	x->v[x->n++] = v;
	return (0);
}

static int
sb_cmp(const void *a, const void *b)
{
	const struct hwtr_sb_rec *x = *(const struct hwtr_sb_rec *const *)a;
	const struct hwtr_sb_rec *y = *(const struct hwtr_sb_rec *const *)b;

	if (x->time != y->time)
		return (x->time < y->time ? -1 : 1);
	/* Keep capture order among equal times (qsort is not stable). */
	return (x < y ? -1 : x > y);
}

/* The image an MMAP record maps: by key, else by build-id, else by path. */
static struct img *
image_of(struct check *c, const struct hwtr_sb_rec *r)
{
	char key[HWTR_IMAGE_KEY_MAX];
	const struct hwtr_image_desc *d;
	struct img *im;
	size_t i, len;
	void *buf;
	int idx = -1;

	if (r->u.mmap.image != NULL) {
		idx = hwtr_ar_find_image(c->ar, r->u.mmap.image);
	} else if (r->u.mmap.build_id_len > 0) {
		strcpy(key, "bid-");
		for (i = 0; i < r->u.mmap.build_id_len; i++)
			sprintf(key + 4 + 2 * i, "%02x", r->u.mmap.build_id[i]);
		idx = hwtr_ar_find_image(c->ar, key);
	}
	if (idx < 0 && r->u.mmap.path != NULL) {
		for (i = 0; i < c->nimgs; i++) {
			d = hwtr_ar_image(c->ar, i);
			if (d->path != NULL && strcmp(d->path,
			    r->u.mmap.path) == 0) {
				idx = (int)i;
				break;
			}
		}
	}
	if (idx < 0 || (size_t)idx >= c->nimgs)
		return (NULL);
	im = &c->imgs[idx];
	if (im->loaded == 0) {
		if (hwtr_ar_read_image(c->ar, (size_t)idx, &buf, &len) == 0) {
			im->buf = buf;
			im->len = len;
			im->loaded = 1;
		} else {
			im->loaded = -1;
		}
	}
	return (im->loaded == 1 ? im : NULL);
}

static int
covers(const struct hwtr_sb_rec *r, uint64_t ip)
{
	uint64_t a, l;

	if (r->type == HWTR_SB_MMAP) {
		a = r->u.mmap.addr;
		l = r->u.mmap.len;
	} else {
		a = r->u.munmap.addr;
		l = r->u.munmap.len;
	}
	return (ip >= a && ip - a < l);
}

/*
 * The record that maps @ip in process @pid at time @t (the first @gen
 * records of the sorted sideband are older than @t).  A process sees its
 * own MMAP records back to its last exec; before its own PROC_START it
 * sees its parent's mappings as they were at the fork.  Records of pid -1
 * (imports) map into every process.
 */
static const struct hwtr_sb_rec *
lookup(struct check *c, int32_t pid, size_t gen, uint64_t ip)
{
	const struct hwtr_sb_rec *r;
	size_t i = gen;
	int own_done = 0;

	while (i-- > 0) {
		r = c->sb[i];
		if (r->pid == -1 && r->type == HWTR_SB_MMAP && covers(r, ip))
			return (r);
		if (own_done || r->pid != pid)
			continue;
		switch (r->type) {
		case HWTR_SB_MMAP:
			if (covers(r, ip))
				return (r);
			break;
		case HWTR_SB_MUNMAP:
			if (covers(r, ip))
				own_done = 1;
			break;
		case HWTR_SB_EXEC:
			own_done = 1;
			break;
		case HWTR_SB_PROC_START:
			/* Before the fork: the parent's mappings. */
			if (r->u.proc_start.ppid > 0 &&
			    r->u.proc_start.ppid != pid)
				pid = r->u.proc_start.ppid;
			else
				own_done = 1;
			break;
		default:
			break;
		}
	}
	return (NULL);
}

/* How many sideband records are at or before @t. */
static size_t
generation(const struct check *c, uint64_t t)
{
	size_t lo = 0, hi = c->nsb, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->sb[mid]->time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

/* libipt's memory callback: code bytes at @ip, as mapped now. */
static int
read_code(uint8_t *buffer, size_t size, const struct pt_asid *asid,
    uint64_t ip, void *context)
{
	struct check *c = context;
	const struct hwtr_sb_rec *r;
	struct img *im;
	uint64_t t = UINT64_MAX, off, n;
	uint32_t lost_mtc, lost_cyc;
	size_t gen;

	(void)asid;
	/* No time (no TSC yet, or none at all): the latest mappings. */
	if (pt_insn_time(c->dec, &t, &lost_mtc, &lost_cyc) < 0)
		t = UINT64_MAX;
	gen = generation(c, t);
	if (gen == c->cache_gen && c->cache_rec != NULL &&
	    covers(c->cache_rec, ip)) {
		r = c->cache_rec;
		im = c->cache_img;
	} else {
		if ((r = lookup(c, c->pid, gen, ip)) == NULL ||
		    (im = image_of(c, r)) == NULL)
			return (-pte_nomap);
		c->cache_gen = gen;
		c->cache_rec = r;
		c->cache_img = im;
	}
	off = r->u.mmap.pgoff + (ip - r->u.mmap.addr);
	if (off >= im->len)
		return (-pte_nomap);
	n = im->len - off;
	if (n > r->u.mmap.len - (ip - r->u.mmap.addr))
		n = r->u.mmap.len - (ip - r->u.mmap.addr);
	if (n > size)
		n = size;
	memcpy(buffer, im->buf + off, n);
	return ((int)n);
}

/* The stream's bytes, all chunks; fails on a gap (lost data). */
static int
stream_bytes(struct check *c, size_t s, const char *who, uint8_t **bufp,
    size_t *lenp)
{
	const struct hwtr_chunk_info *ci;
	uint8_t *buf = NULL, *nb;
	size_t i, len = 0, clen;
	void *cbuf;

	for (i = 0; i < hwtr_ar_nchunks(c->ar, s); i++) {
		ci = hwtr_ar_chunk(c->ar, s, i);
		if (ci->offset != len) {
			printf("%s: stream has a gap at offset 0x%zx (0x%" PRIx64
			    " bytes lost): cannot compare with ground truth\n",
			    who, len, ci->offset - len);
			free(buf);
			return (-1);
		}
		if (hwtr_ar_read_chunk(c->ar, s, i, &cbuf, &clen) != 0) {
			printf("%s: cannot read chunk %zu: %s\n", who, i,
			    hwtr_ar_errmsg(c->ar));
			free(buf);
			return (-1);
		}
		if ((nb = realloc(buf, len + clen + 1)) == NULL) {
			free(cbuf);
			free(buf);
			return (-1);
		}
		buf = nb;
		memcpy(buf + len, cbuf, clen);
		len += clen;
		free(cbuf);
	}
	*bufp = buf;
	*lenp = len;
	return (0);
}

struct decoded {
	struct u64vec	ip;
	int		err;		/* first libipt error, 0 none */
	uint64_t	err_offset;
	size_t		err_index;
};

static void
note_error(struct decoded *d, struct pt_insn_decoder *dec, int err)
{
	if (d->err != 0)
		return;
	d->err = err;
	d->err_index = d->ip.n;
	if (pt_insn_get_offset(dec, &d->err_offset) < 0)
		d->err_offset = 0;
}

static void
set_config(struct check *c, const struct hwtr_stream_desc *sd,
    struct pt_config *cfg)
{
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(c->ar);
	uint64_t *fa[4] = { &cfg->addr_filter.addr0_a,
	    &cfg->addr_filter.addr1_a, &cfg->addr_filter.addr2_a,
	    &cfg->addr_filter.addr3_a };
	uint64_t *fb[4] = { &cfg->addr_filter.addr0_b,
	    &cfg->addr_filter.addr1_b, &cfg->addr_filter.addr2_b,
	    &cfg->addr_filter.addr3_b };
	size_t i;

	if (meta != NULL && meta->cpu.vendor == HWTR_CPU_INTEL) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = meta->cpu.family;
		cfg->cpu.model = meta->cpu.model;
		cfg->cpu.stepping = meta->cpu.stepping;
		(void)pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	cfg->cpuid_0x15_eax = sd->pt.cpuid_15_eax;
	cfg->cpuid_0x15_ebx = sd->pt.cpuid_15_ebx;
	cfg->nom_freq = sd->pt.nom_freq;
	cfg->mtc_freq = sd->pt.mtc_freq;
	for (i = 0; i < sd->pt.nfilters && i < HWTR_PT_MAX_FILTERS && i < 4;
	    i++) {
		uint64_t cfgbits = (uint64_t)(sd->pt.filter[i].cfg & 0xf) <<
		    (4 * i);

		cfg->addr_filter.config.addr_cfg |= cfgbits;
	}
	for (i = 0; i < sd->pt.nfilters && i < 4; i++) {
		*fa[i] = sd->pt.filter[i].a;
		*fb[i] = sd->pt.filter[i].b;
	}
}

/* Decode one stream as ptxed does; -1 only when that cannot start. */
static int
decode(struct check *c, const struct hwtr_stream_desc *sd, uint8_t *buf,
    size_t len, struct decoded *d)
{
	struct pt_config cfg;
	struct pt_image *image;
	struct pt_insn insn;
	struct pt_event ev;
	int status;

	memset(d, 0, sizeof(*d));
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	set_config(c, sd, &cfg);
	if ((c->dec = pt_insn_alloc_decoder(&cfg)) == NULL)
		return (-1);
	image = pt_insn_get_image(c->dec);
	if (image == NULL || pt_image_set_callback(image, read_code, c) < 0) {
		pt_insn_free_decoder(c->dec);
		c->dec = NULL;
		return (-1);
	}
	c->pid = sd->pid;
	c->cache_rec = NULL;
	for (;;) {
		status = pt_insn_sync_forward(c->dec);
		if (status < 0) {
			if (status != -pte_eos)
				note_error(d, c->dec, status);
			break;
		}
		for (;;) {
			while (status >= 0 && (status & pts_event_pending))
				status = pt_insn_event(c->dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			memset(&insn, 0, sizeof(insn));
			status = pt_insn_next(c->dec, &insn, sizeof(insn));
			/* As ptxed: an instruction is reported even when the
			 * decoder failed right after it. */
			if (insn.iclass != ptic_error && push(&d->ip,
			    insn.ip) < 0) {
				pt_insn_free_decoder(c->dec);
				c->dec = NULL;
				return (-1);
			}
			if (status < 0)
				break;
		}
		if (status == -pte_eos)
			break;
		note_error(d, c->dec, status);
	}
	pt_insn_free_decoder(c->dec);
	c->dec = NULL;
	return (0);
}

static void
context(const char *who, const struct u64vec *dv, const uint64_t *gt,
    size_t ngt, size_t k)
{
	size_t i, from = k > 3 ? k - 3 : 0;

	for (i = from; i < k + 3 && (i < dv->n || i < ngt); i++)
		printf("%s:   [%zu] decoded %s0x%016" PRIx64 "  ground truth "
		    "%s0x%016" PRIx64 "\n", who, i, i < dv->n ? "" : "(none) ",
		    i < dv->n ? dv->v[i] : 0, i < ngt ? "" : "(none) ",
		    i < ngt ? gt[i] : 0);
}

/* Check stream @s; returns 0 when it matches its ground truth. */
static int
check_stream(struct check *c, size_t s, uint8_t *seen)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(c->ar, s);
	char who[64], name[64];
	struct decoded d;
	uint64_t *gt;
	size_t len, glen, ngt, k, n, m;
	uint8_t *buf;
	void *gbuf;
	int bad = 0;

	if (sd->tid >= 0)
		snprintf(who, sizeof(who), "tid %d", (int)sd->tid);
	else
		snprintf(who, sizeof(who), "stream '%s'", sd->name ?
		    sd->name : "?");
	snprintf(name, sizeof(name), GT_PREFIX "%d.u64", (int)sd->tid);
	if (hwtr_ar_find_member(c->ar, name, &m) != 0) {
		printf("%s: no ground truth (member %s)\n", who, name);
		return (1);
	}
	seen[m] = 1;
	if (hwtr_ar_read_member(c->ar, m, &gbuf, &glen) != 0) {
		printf("%s: cannot read %s: %s\n", who, name,
		    hwtr_ar_errmsg(c->ar));
		return (1);
	}
	if (glen % 8 != 0) {
		printf("%s: %s is %zu bytes, not a multiple of 8\n", who, name,
		    glen);
		free(gbuf);
		return (1);
	}
	/* Little-endian on disk; this checker runs on x86-64. */
	gt = gbuf;
	ngt = glen / 8;
	if (stream_bytes(c, s, who, &buf, &len) != 0) {
		free(gbuf);
		return (1);
	}
	if (decode(c, sd, buf, len, &d) != 0) {
		printf("%s: cannot set up libipt's decoder\n", who);
		free(d.ip.v);
		free(buf);
		free(gbuf);
		return (1);
	}
	n = d.ip.n < ngt ? d.ip.n : ngt;
	for (k = 0; k < n && d.ip.v[k] == gt[k]; k++)
		;
	if (d.err != 0) {
		printf("%s: decode error at instruction %zu (offset 0x%" PRIx64
		    "): %s\n", who, d.err_index, d.err_offset,
		    pt_errstr(pt_errcode(d.err)));
		bad = 1;
	}
	if (k < n) {
		printf("%s: mismatch at instruction %zu: decoded 0x%" PRIx64
		    ", ground truth 0x%" PRIx64 "\n", who, k, d.ip.v[k], gt[k]);
		bad = 1;
	} else if (d.ip.n != ngt) {
		printf("%s: decoded %zu instructions, ground truth has %zu: "
		    "first difference at instruction %zu\n", who, d.ip.n, ngt,
		    n);
		bad = 1;
	}
	if (bad && c->verbose)
		context(who, &d.ip, gt, ngt, k < n ? k : n);
	if (!bad)
		printf("%s: %zu instructions match\n", who, ngt);
	free(d.ip.v);
	free(buf);
	free(gbuf);
	return (bad);
}

static void
usage(void)
{
	fprintf(stderr, "usage: ptcheck [-v] ARCHIVE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const struct hwtr_member_info *mi;
	struct check c;
	uint8_t *seen;
	size_t i, nstreams = 0;
	int ch, rc, bad = 0;

	memset(&c, 0, sizeof(c));
	while ((ch = getopt(argc, argv, "v")) != -1) {
		switch (ch) {
		case 'v':
			c.verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1)
		usage();
	rc = hwtr_ar_open(&c.ar, argv[optind], NULL);
	if (rc < 0) {
		/* The reader's message names the file already. */
		if (c.ar != NULL && hwtr_ar_errmsg(c.ar)[0] != '\0')
			fprintf(stderr, "ptcheck: %s\n", hwtr_ar_errmsg(c.ar));
		else
			fprintf(stderr, "ptcheck: cannot open '%s': %s\n",
			    argv[optind], hwtr_errstr(rc));
		hwtr_ar_close(c.ar);
		return (1);
	}
	c.nsb = hwtr_ar_nsideband(c.ar);
	c.nimgs = hwtr_ar_nimages(c.ar);
	c.sb = calloc(c.nsb + 1, sizeof(*c.sb));
	c.imgs = calloc(c.nimgs + 1, sizeof(*c.imgs));
	seen = calloc(hwtr_ar_nmembers(c.ar) + 1, 1);
	if (c.sb == NULL || c.imgs == NULL || seen == NULL) {
		fprintf(stderr, "ptcheck: out of memory\n");
		free(c.sb);
		free(c.imgs);
		free(seen);
		hwtr_ar_close(c.ar);
		return (1);
	}
	for (i = 0; i < c.nsb; i++)
		c.sb[i] = hwtr_ar_sideband_rec(c.ar, i);
	qsort(c.sb, c.nsb, sizeof(*c.sb), sb_cmp);

	for (i = 0; i < hwtr_ar_nstreams(c.ar); i++) {
		if (hwtr_ar_stream(c.ar, i)->format != HWTR_TF_INTEL_PT)
			continue;
		nstreams++;
		bad |= check_stream(&c, i, seen);
	}
	for (i = 0; i < hwtr_ar_nmembers(c.ar); i++) {
		mi = hwtr_ar_member(c.ar, i);
		if (!seen[i] && strncmp(mi->name, GT_PREFIX,
		    strlen(GT_PREFIX)) == 0) {
			printf("%s: ground truth without an Intel PT stream\n",
			    mi->name);
			bad = 1;
		}
	}
	if (nstreams == 0) {
		printf("no Intel PT stream in '%s'\n", argv[optind]);
		bad = 1;
	}
	for (i = 0; i < c.nimgs; i++)
		free(c.imgs[i].buf);
	free(c.imgs);
	free(c.sb);
	free(seen);
	hwtr_ar_close(c.ar);
	return (bad ? 1 : 0);
}
