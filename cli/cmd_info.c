/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace info: describe an archive, for people (key: value lines) or for
 * programs (--json, one object whose keys hwtrace-info(1) documents).
 * A truncated archive is described as far as it goes and says where it was
 * cut; only an archive the reader refuses is an error.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"
#include "hwtr_jit.h"

enum {
	OPT_JSON = 'j'
};

static const struct cli_opt info_opts[] = {
	{ "json", OPT_JSON, NULL, "print one JSON object instead of text" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd info_cmd = {
	.verb = "info",
	.usage = "[-j] FILE",
	.summary = "Describe a hwtrace archive: capture identity, streams, "
	    "images, sideband, loss, exit status.",
	.opts = info_opts,
};

/* Everything both printers need, gathered once. */
struct info {
	const char	*path;
	struct hwtr_ar	*ar;
	const struct hwtr_ar_status *st;
	const struct hwtr_capture_meta *meta;
	const struct hwtr_capture_end *end;
	size_t		sbcount[HWTR_SB_MAX];
	size_t		sbunknown;
	uint64_t	sb_lost_bytes;
	uint64_t	sb_lost_records;
	size_t		nlost;
	char		**esc;		/* escaped copies made by txt() */
	size_t		nesc;
};

static const char *
exit_name(enum hwtr_exit_kind k)
{
	switch (k) {
	case HWTR_EXIT_CODE:
		return ("exited");
	case HWTR_EXIT_SIGNAL:
		return ("signaled");
	default:
		return ("unknown");
	}
}

/* "2026-11-21T06:00:00.123456789Z", or "unknown" for 0. */
static void
fmt_time(int64_t ns, char *buf, size_t len)
{
	struct tm tm;
	time_t t;
	int64_t frac;

	if (ns == 0) {
		snprintf(buf, len, "unknown");
		return;
	}
	t = (time_t)(ns / 1000000000);
	frac = ns % 1000000000;
	if (frac < 0) {
		frac += 1000000000;
		t--;
	}
	if (gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "%" PRId64 " ns", ns);
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, frac);
}

static const char *
str_or(const char *s, const char *dflt)
{
	return (s != NULL && *s != '\0' ? s : dflt);
}

/*
 * @s (or @dflt when empty) for the text output: archive content with
 * control characters escaped (hwtr_esc_dup()), so that no host name,
 * argument or path can send escape sequences to the terminal.  Valid until
 * the info is freed.
 */
static const char *
txt(struct info *in, const char *s, const char *dflt)
{
	char **v, *e;

	s = str_or(s, dflt);
	if (!hwtr_esc_needed(s, 0))
		return (s);
	if ((v = realloc(in->esc, (in->nesc + 1) * sizeof(*v))) == NULL ||
	    (e = hwtr_esc_dup(s, 0)) == NULL) {
		if (v != NULL)
			in->esc = v;
		return ("(out of memory)");
	}
	in->esc = v;
	in->esc[in->nesc++] = e;
	return (e);
}

/* "r-x" from PROT_* bits. */
static const char *
prot_str(uint32_t prot, char *buf)
{
	buf[0] = prot & 0x1 ? 'r' : '-';
	buf[1] = prot & 0x2 ? 'w' : '-';
	buf[2] = prot & 0x4 ? 'x' : '-';
	buf[3] = '\0';
	return (buf);
}

static void
gather(struct info *in)
{
	const struct hwtr_sb_rec *r;
	size_t i, n;

	in->st = hwtr_ar_status(in->ar);
	in->meta = hwtr_ar_meta(in->ar);
	in->end = hwtr_ar_end(in->ar);
	n = hwtr_ar_nsideband(in->ar);
	for (i = 0; i < n; i++) {
		r = hwtr_ar_sideband_rec(in->ar, i);
		if (r == NULL)
			continue;
		if (r->type > 0 && r->type < HWTR_SB_MAX)
			in->sbcount[r->type]++;
		else
			in->sbunknown++;
		if (r->type == HWTR_SB_LOST) {
			in->nlost++;
			in->sb_lost_bytes += r->u.lost.bytes;
			in->sb_lost_records += r->u.lost.records;
		}
	}
}

static void
stream_totals(struct hwtr_ar *ar, size_t s, size_t *nchunks, uint64_t *bytes)
{
	const struct hwtr_chunk_info *c;
	size_t i;

	*nchunks = hwtr_ar_nchunks(ar, s);
	*bytes = 0;
	for (i = 0; i < *nchunks; i++)
		if ((c = hwtr_ar_chunk(ar, s, i)) != NULL)
			*bytes += c->len;
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */
/* ------------------------------------------------------------------ */

static void
print_pt(FILE *fp, const struct hwtr_pt_config *pt)
{
	size_t i;

	fprintf(fp, "    pt: cpuid-0x15.eax %" PRIu32 ", cpuid-0x15.ebx %"
	    PRIu32 ", nom-freq %u, mtc-freq %u, cyc-thresh %u, psb-freq %u, "
	    "options 0x%" PRIx32 "\n", pt->cpuid_15_eax, pt->cpuid_15_ebx,
	    pt->nom_freq, pt->mtc_freq, pt->cyc_thresh, pt->psb_freq,
	    pt->options);
	for (i = 0; i < pt->nfilters && i < HWTR_PT_MAX_FILTERS; i++)
		fprintf(fp, "    pt filter %zu: cfg %" PRIu32 ", 0x%" PRIx64
		    "-0x%" PRIx64 "\n", i, pt->filter[i].cfg, pt->filter[i].a,
		    pt->filter[i].b);
}

static void
print_cs(FILE *fp, struct info *in, const struct hwtr_cs_config *cs)
{
	const struct hwtr_cs_source *src;
	size_t i, j;

	fprintf(fp, "    coresight: frame %s, %zu source%s\n",
	    hwtr_cs_frame_name(cs->frame), cs->nsources,
	    cs->nsources == 1 ? "" : "s");
	for (i = 0; i < cs->nsources && cs->sources != NULL; i++) {
		src = &cs->sources[i];
		fprintf(fp, "    source %zu: %s, trace id 0x%02x, core %s\n", i,
		    hwtr_tf_name(src->protocol), src->trace_id,
		    txt(in, src->core, "unknown"));
		for (j = 0; j < src->nregs && src->regs != NULL; j++)
			fprintf(fp, "      %s = 0x%" PRIx64 "\n",
			    txt(in, src->regs[j].name, "?"),
			    src->regs[j].value);
	}
}

/* The member holding @img's bytes (hwtrace(5)), or NULL. */
static const struct hwtr_member_info *
image_member(const struct hwtr_ar *ar, const struct hwtr_image_desc *img)
{
	char name[HWTR_IMAGE_KEY_MAX + 16];
	size_t i;

	snprintf(name, sizeof(name), "images/%s", img->key);
	if (hwtr_ar_find_member(ar, name, &i) < 0)
		return (NULL);
	return (hwtr_ar_member(ar, i));
}

/* The member holding @img's separate debug file (hwtrace(5)), or NULL. */
static const struct hwtr_member_info *
debug_member(const struct hwtr_ar *ar, const struct hwtr_image_desc *img)
{
	char name[HWTR_IMAGE_KEY_MAX + 16];
	size_t i;

	snprintf(name, sizeof(name), "aux/debug/%s", img->key);
	if (hwtr_ar_find_member(ar, name, &i) < 0)
		return (NULL);
	return (hwtr_ar_member(ar, i));
}

static void jkstr(FILE *, int *, const char *, const char *);
static void jku(FILE *, int *, const char *, uint64_t);

/*
 * The JIT symbol files (members jit/..., hwtrace(5)), parsed again for
 * their counts: text lines "  NAME: N symbols[, N code loads]" or, with
 * @json, one array of objects.  A member that cannot be read is shown
 * with its error (the reader checked it at open, so it is rare).
 */
static void
print_jit(FILE *fp, struct info *in, int json)
{
	const struct hwtr_member_info *mi;
	struct hwtr_jit_list l;
	char err[256];
	size_t i, n, count = 0;
	void *buf;
	size_t len;
	int first = 1, g, rc;

	n = hwtr_ar_nmembers(in->ar);
	for (i = 0; i < n; i++)
		if ((mi = hwtr_ar_member(in->ar, i)) != NULL &&
		    mi->kind == HWTR_M_JIT)
			count++;
	if (json)
		fputc('[', fp);
	else
		fprintf(fp, "jit files: %zu\n", count);
	for (i = 0; i < n && count > 0; i++) {
		if ((mi = hwtr_ar_member(in->ar, i)) == NULL ||
		    mi->kind != HWTR_M_JIT)
			continue;
		memset(&l, 0, sizeof(l));
		err[0] = '\0';
		if ((rc = hwtr_ar_read_member(in->ar, i, &buf, &len)) == 0) {
			rc = hwtr_jit_parse(&l, mi->name, buf, len, err,
			    sizeof(err));
			free(buf);
		}
		if (json) {
			if (!first)
				fputc(',', fp);
			first = 0;
			g = 1;
			fputc('{', fp);
			jkstr(fp, &g, "member", mi->name);
			jkstr(fp, &g, "format", l.dump ? "jitdump" :
			    "perf-map");
			jku(fp, &g, "symbols", l.n);
			jku(fp, &g, "code_loads", l.nloads);
			jku(fp, &g, "moves", l.nmoves);
			jkstr(fp, &g, "error", rc < 0 ? (err[0] ? err :
			    hwtr_errstr(rc)) : NULL);
			fputc('}', fp);
		} else if (rc < 0)
			fprintf(fp, "  %s: unreadable (%s)\n", mi->name,
			    txt(in, err[0] ? err : hwtr_errstr(rc), ""));
		else if (l.dump)
			fprintf(fp, "  %s: %zu symbols, %zu code loads, %zu "
			    "moves\n", mi->name, l.n, l.nloads, l.nmoves);
		else
			fprintf(fp, "  %s: %zu symbols\n", mi->name, l.n);
		hwtr_jit_list_free(&l);
	}
	if (json)
		fputc(']', fp);
}

static void
print_text(FILE *fp, struct info *in)
{
	const struct hwtr_ar_status *st = in->st;
	const struct hwtr_capture_meta *m = in->meta;
	const struct hwtr_capture_end *e = in->end;
	const struct hwtr_stream_desc *sd;
	const struct hwtr_image_desc *img;
	const struct hwtr_member_info *dm, *im;
	const struct hwtr_sb_rec *r;
	char buf[160];
	size_t i, n, nchunks;
	uint64_t bytes, istored = 0, dstored = 0;
	int t;

	fprintf(fp, "archive: %s\n", txt(in, in->path, ""));
	fprintf(fp, "format: %" PRIu32 ".%" PRIu32 "\n", st->version_major,
	    st->version_minor);
	if (st->complete)
		fprintf(fp, "status: complete, %" PRIu64 " bytes\n",
		    st->file_size);
	else
		fprintf(fp, "status: truncated at byte %" PRIu64 " of %" PRIu64
		    " (%s)\n", st->valid_end, st->file_size,
		    txt(in, st->why, "no final member"));
	if (m != NULL) {
		fprintf(fp, "writer: %s\n", txt(in, m->writer, "unknown"));
		fprintf(fp, "host: %s\n", txt(in, m->host, "unknown"));
		fprintf(fp, "source: %s%s%s\n", txt(in, m->source, "unknown"),
		    m->source_version ? " " : "",
		    txt(in, m->source_version, ""));
		fprintf(fp, "cpu: %s family %u model %u stepping %u%s%s%s\n",
		    hwtr_cpu_vendor_name(m->cpu.vendor), m->cpu.family,
		    m->cpu.model, m->cpu.stepping, m->cpu.brand[0] ? " (" : "",
		    txt(in, m->cpu.brand, ""), m->cpu.brand[0] ? ")" : "");
		fprintf(fp, "command:");
		if (m->argc == 0)
			fprintf(fp, " unknown");
		for (i = 0; i < m->argc && m->argv != NULL; i++)
			fprintf(fp, " %s", txt(in, m->argv[i], "''"));
		fprintf(fp, "\n");
		fmt_time(m->start_ns, buf, sizeof(buf));
		fprintf(fp, "start: %s\n", buf);
		if (m->tconv.valid)
			fprintf(fp, "time conversion: tsc-zero %" PRIu64
			    ", ns-zero %" PRId64 ", mult %" PRIu32 ", shift %"
			    PRIu32 "\n", m->tconv.tsc_zero, m->tconv.ns_zero,
			    m->tconv.mult, m->tconv.shift);
		else
			fprintf(fp, "time conversion: none\n");
		fprintf(fp, "sideband origin: %s\n",
		    txt(in, m->sideband_origin, "none"));
		fprintf(fp, "caveats: %zu\n", m->ncaveats);
		for (i = 0; i < m->ncaveats && m->caveats != NULL; i++)
			fprintf(fp, "  %s\n", txt(in, m->caveats[i], ""));
		if (m->nnotes > 0 && m->notes != NULL) {
			fprintf(fp, "notes: %zu\n", m->nnotes);
			for (i = 0; i < m->nnotes; i++)
				fprintf(fp, "  %s\n", txt(in, m->notes[i], ""));
		}
	}

	n = hwtr_ar_nstreams(in->ar);
	fprintf(fp, "streams: %zu\n", n);
	for (i = 0; i < n; i++) {
		if ((sd = hwtr_ar_stream(in->ar, i)) == NULL)
			continue;
		stream_totals(in->ar, i, &nchunks, &bytes);
		fprintf(fp, "  stream %" PRIu32 " '%s': %s, pid %" PRId32
		    ", tid %" PRId32 ", cpu %" PRId32 ", %zu chunk%s, %"
		    PRIu64 " bytes\n", sd->id, txt(in, sd->name, ""),
		    hwtr_tf_name(sd->format), sd->pid, sd->tid, sd->cpu,
		    nchunks, nchunks == 1 ? "" : "s", bytes);
		if (sd->format == HWTR_TF_INTEL_PT)
			print_pt(fp, &sd->pt);
		else if (sd->format != HWTR_TF_NONE)
			print_cs(fp, in, &sd->cs);
	}

	n = hwtr_ar_nimages(in->ar);
	fprintf(fp, "images: %zu\n", n);
	for (i = 0; i < n; i++) {
		if ((img = hwtr_ar_image(in->ar, i)) == NULL)
			continue;
		fprintf(fp, "  %s %s (%s, %" PRIu64 " bytes)\n", img->key,
		    txt(in, img->path, "unknown"),
		    img->kind == HWTR_IMG_MEMORY ? "memory" : "file",
		    img->size);
		if ((dm = debug_member(in->ar, img)) != NULL)
			fprintf(fp, "    debug file %s (%" PRIu64 " bytes)\n",
			    dm->name, dm->usize);
		/* What the image costs in the archive, compressed. */
		im = image_member(in->ar, img);
		fprintf(fp, "    stored: image %" PRIu64 " bytes, debug info %"
		    PRIu64 " bytes\n", im != NULL ? im->csize : 0,
		    dm != NULL ? dm->csize : 0);
		istored += im != NULL ? im->csize : 0;
		dstored += dm != NULL ? dm->csize : 0;
	}
	fprintf(fp, "images stored: %" PRIu64 " bytes, debug info %" PRIu64
	    " bytes\n", istored, dstored);
	print_jit(fp, in, 0);

	fprintf(fp, "mappings: %zu\n", in->sbcount[HWTR_SB_MMAP]);
	n = hwtr_ar_nsideband(in->ar);
	for (i = 0; i < n; i++) {
		r = hwtr_ar_sideband_rec(in->ar, i);
		if (r == NULL || r->type != HWTR_SB_MMAP)
			continue;
		fprintf(fp, "  pid %" PRId32 ": 0x%" PRIx64 "-0x%" PRIx64
		    " pgoff 0x%" PRIx64 " %s %s [%s]\n", r->pid,
		    r->u.mmap.addr, r->u.mmap.addr + r->u.mmap.len,
		    r->u.mmap.pgoff, prot_str(r->u.mmap.prot, buf),
		    txt(in, r->u.mmap.path, "unknown"),
		    txt(in, r->u.mmap.image, "no image"));
	}

	n = hwtr_ar_nsideband(in->ar);
	fprintf(fp, "sideband: %zu record%s\n", n, n == 1 ? "" : "s");
	for (t = 1; t < HWTR_SB_MAX; t++)
		if (in->sbcount[t] != 0)
			fprintf(fp, "  %s: %zu\n", hwtr_sb_type_name(t),
			    in->sbcount[t]);
	if (in->sbunknown != 0)
		fprintf(fp, "  unknown: %zu\n", in->sbunknown);

	if (e != NULL) {
		fprintf(fp, "lost: %" PRIu64 " trace bytes, %" PRIu64
		    " sideband records\n", e->lost_bytes, e->lost_records);
		fmt_time(e->end_ns, buf, sizeof(buf));
		fprintf(fp, "end: %s\n", buf);
		switch (e->exit_kind) {
		case HWTR_EXIT_CODE:
			fprintf(fp, "exit: status %d\n", e->exit_value);
			break;
		case HWTR_EXIT_SIGNAL:
			fprintf(fp, "exit: signal %d\n", e->exit_value);
			break;
		default:
			fprintf(fp, "exit: unknown\n");
			break;
		}
	} else {
		/* Without the final member only the LOST records tell. */
		fprintf(fp, "lost: %" PRIu64 " trace bytes, %" PRIu64
		    " sideband records (from %zu lost records; the final "
		    "member is missing)\n", in->sb_lost_bytes,
		    in->sb_lost_records, in->nlost);
		fprintf(fp, "exit: unknown (truncated)\n");
	}

	n = hwtr_ar_nwarnings(in->ar);
	fprintf(fp, "warnings: %zu\n", n);
	for (i = 0; i < n; i++)
		fprintf(fp, "  %s\n", txt(in, hwtr_ar_warning(in->ar, i), ""));
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void
fput(void *arg, const char *p, size_t len)
{
	fwrite(p, 1, len, arg);
}

/* A JSON string (null for NULL). */
static void
jstr(FILE *fp, const char *s)
{
	hwtr_json_quote(fput, fp, s);
}

static void
jkey(FILE *fp, int *first, const char *key)
{
	if (!*first)
		fputc(',', fp);
	*first = 0;
	jstr(fp, key);
	fputc(':', fp);
}

static void
jkstr(FILE *fp, int *first, const char *key, const char *val)
{
	jkey(fp, first, key);
	jstr(fp, val);
}

static void
jku(FILE *fp, int *first, const char *key, uint64_t v)
{
	jkey(fp, first, key);
	fprintf(fp, "%" PRIu64, v);
}

static void
jki(FILE *fp, int *first, const char *key, int64_t v)
{
	jkey(fp, first, key);
	fprintf(fp, "%" PRId64, v);
}

static void
json_stream(FILE *fp, struct hwtr_ar *ar, size_t i,
    const struct hwtr_stream_desc *sd)
{
	const struct hwtr_cs_source *src;
	size_t nchunks, j, k;
	uint64_t bytes;
	int f = 1, g, h;

	stream_totals(ar, i, &nchunks, &bytes);
	fputc('{', fp);
	jku(fp, &f, "id", sd->id);
	jkstr(fp, &f, "name", sd->name);
	jkstr(fp, &f, "format", hwtr_tf_name(sd->format));
	jki(fp, &f, "pid", sd->pid);
	jki(fp, &f, "tid", sd->tid);
	jki(fp, &f, "cpu", sd->cpu);
	jku(fp, &f, "chunks", nchunks);
	jku(fp, &f, "bytes", bytes);
	if (sd->format == HWTR_TF_INTEL_PT) {
		jkey(fp, &f, "pt");
		g = 1;
		fputc('{', fp);
		jku(fp, &g, "cpuid_15_eax", sd->pt.cpuid_15_eax);
		jku(fp, &g, "cpuid_15_ebx", sd->pt.cpuid_15_ebx);
		jku(fp, &g, "nom_freq", sd->pt.nom_freq);
		jku(fp, &g, "mtc_freq", sd->pt.mtc_freq);
		jku(fp, &g, "cyc_thresh", sd->pt.cyc_thresh);
		jku(fp, &g, "psb_freq", sd->pt.psb_freq);
		jku(fp, &g, "options", sd->pt.options);
		jkey(fp, &g, "filters");
		fputc('[', fp);
		for (j = 0; j < sd->pt.nfilters && j < HWTR_PT_MAX_FILTERS;
		    j++) {
			h = 1;
			fputs(j ? ",{" : "{", fp);
			jku(fp, &h, "cfg", sd->pt.filter[j].cfg);
			jku(fp, &h, "a", sd->pt.filter[j].a);
			jku(fp, &h, "b", sd->pt.filter[j].b);
			fputc('}', fp);
		}
		fputs("]}", fp);
	} else if (sd->format != HWTR_TF_NONE) {
		jkey(fp, &f, "coresight");
		g = 1;
		fputc('{', fp);
		jkstr(fp, &g, "frame", hwtr_cs_frame_name(sd->cs.frame));
		jkey(fp, &g, "sources");
		fputc('[', fp);
		for (j = 0; j < sd->cs.nsources && sd->cs.sources != NULL;
		    j++) {
			src = &sd->cs.sources[j];
			h = 1;
			fputs(j ? ",{" : "{", fp);
			jkstr(fp, &h, "protocol", hwtr_tf_name(src->protocol));
			jku(fp, &h, "trace_id", src->trace_id);
			jkstr(fp, &h, "core", src->core);
			jkey(fp, &h, "regs");
			fputc('{', fp);
			g = 1;
			for (k = 0; k < src->nregs && src->regs != NULL; k++)
				jku(fp, &g, str_or(src->regs[k].name, "?"),
				    src->regs[k].value);
			fputs("}}", fp);
		}
		fputs("]}", fp);
	}
	fputc('}', fp);
}

static void
print_json(FILE *fp, struct info *in)
{
	const struct hwtr_ar_status *st = in->st;
	const struct hwtr_capture_meta *m = in->meta;
	const struct hwtr_capture_end *e = in->end;
	const struct hwtr_stream_desc *sd;
	const struct hwtr_image_desc *img;
	const struct hwtr_member_info *dm, *im;
	const struct hwtr_sb_rec *r;
	char buf[2 * HWTR_BUILD_ID_MAX + 1];
	size_t i, n;
	int f = 1, g, t, first;

	fputc('{', fp);
	jkstr(fp, &f, "archive", in->path);
	snprintf(buf, sizeof(buf), "%" PRIu32 ".%" PRIu32, st->version_major,
	    st->version_minor);
	jkstr(fp, &f, "format", buf);
	jkey(fp, &f, "complete");
	fputs(st->complete ? "true" : "false", fp);
	jku(fp, &f, "file_size", st->file_size);
	jku(fp, &f, "valid_end", st->valid_end);
	jkstr(fp, &f, "truncated_why", st->complete ? NULL :
	    str_or(st->why, "no final member"));

	jkey(fp, &f, "capture");
	if (m == NULL) {
		fputs("null", fp);
	} else {
		g = 1;
		fputc('{', fp);
		jkstr(fp, &g, "writer", m->writer);
		jkstr(fp, &g, "host", m->host);
		jkstr(fp, &g, "source", m->source);
		jkstr(fp, &g, "source_version", m->source_version);
		jkstr(fp, &g, "sideband_origin", m->sideband_origin);
		jkey(fp, &g, "cpu");
		t = 1;
		fputc('{', fp);
		jkstr(fp, &t, "vendor", hwtr_cpu_vendor_name(m->cpu.vendor));
		jku(fp, &t, "family", m->cpu.family);
		jku(fp, &t, "model", m->cpu.model);
		jku(fp, &t, "stepping", m->cpu.stepping);
		jkstr(fp, &t, "brand", m->cpu.brand);
		fputc('}', fp);
		jkey(fp, &g, "argv");
		fputc('[', fp);
		for (i = 0; i < m->argc && m->argv != NULL; i++) {
			if (i)
				fputc(',', fp);
			jstr(fp, m->argv[i]);
		}
		fputc(']', fp);
		jki(fp, &g, "start_ns", m->start_ns);
		jkey(fp, &g, "timeconv");
		if (m->tconv.valid) {
			t = 1;
			fputc('{', fp);
			jku(fp, &t, "tsc_zero", m->tconv.tsc_zero);
			jki(fp, &t, "ns_zero", m->tconv.ns_zero);
			jku(fp, &t, "mult", m->tconv.mult);
			jku(fp, &t, "shift", m->tconv.shift);
			fputc('}', fp);
		} else
			fputs("null", fp);
		jkey(fp, &g, "caveats");
		fputc('[', fp);
		for (i = 0; i < m->ncaveats && m->caveats != NULL; i++) {
			if (i)
				fputc(',', fp);
			jstr(fp, m->caveats[i]);
		}
		fputc(']', fp);
		jkey(fp, &g, "notes");
		fputc('[', fp);
		for (i = 0; i < m->nnotes && m->notes != NULL; i++) {
			if (i)
				fputc(',', fp);
			jstr(fp, m->notes[i]);
		}
		fputs("]}", fp);
	}

	jkey(fp, &f, "streams");
	fputc('[', fp);
	n = hwtr_ar_nstreams(in->ar);
	for (i = 0, first = 1; i < n; i++) {
		if ((sd = hwtr_ar_stream(in->ar, i)) == NULL)
			continue;
		if (!first)
			fputc(',', fp);
		first = 0;
		json_stream(fp, in->ar, i, sd);
	}
	fputc(']', fp);

	jkey(fp, &f, "images");
	fputc('[', fp);
	n = hwtr_ar_nimages(in->ar);
	for (i = 0, first = 1; i < n; i++) {
		if ((img = hwtr_ar_image(in->ar, i)) == NULL)
			continue;
		if (!first)
			fputc(',', fp);
		first = 0;
		g = 1;
		fputc('{', fp);
		jkstr(fp, &g, "key", img->key);
		jkstr(fp, &g, "path", img->path);
		jkstr(fp, &g, "kind",
		    img->kind == HWTR_IMG_MEMORY ? "memory" : "file");
		jku(fp, &g, "size", img->size);
		hwtr_hex(buf, img->build_id, img->build_id_len);
		jkstr(fp, &g, "build_id", img->build_id_len ? buf : NULL);
		dm = debug_member(in->ar, img);
		jkstr(fp, &g, "debug_file", dm != NULL ? dm->name : NULL);
		if (dm != NULL)
			jku(fp, &g, "debug_size", dm->usize);
		im = image_member(in->ar, img);
		jku(fp, &g, "stored_size", im != NULL ? im->csize : 0);
		jku(fp, &g, "debug_stored_size", dm != NULL ? dm->csize : 0);
		fputc('}', fp);
	}
	fputc(']', fp);

	jkey(fp, &f, "jit");
	print_jit(fp, in, 1);

	jkey(fp, &f, "mappings");
	fputc('[', fp);
	n = hwtr_ar_nsideband(in->ar);
	for (i = 0, first = 1; i < n; i++) {
		char pbuf[4];

		r = hwtr_ar_sideband_rec(in->ar, i);
		if (r == NULL || r->type != HWTR_SB_MMAP)
			continue;
		if (!first)
			fputc(',', fp);
		first = 0;
		g = 1;
		fputc('{', fp);
		jki(fp, &g, "pid", r->pid);
		jki(fp, &g, "tid", r->tid);
		jku(fp, &g, "time", r->time);
		jku(fp, &g, "addr", r->u.mmap.addr);
		jku(fp, &g, "len", r->u.mmap.len);
		jku(fp, &g, "pgoff", r->u.mmap.pgoff);
		jkstr(fp, &g, "prot", prot_str(r->u.mmap.prot, pbuf));
		jkstr(fp, &g, "path", r->u.mmap.path);
		jkstr(fp, &g, "image", r->u.mmap.image);
		fputc('}', fp);
	}
	fputc(']', fp);

	jkey(fp, &f, "sideband");
	g = 1;
	fputc('{', fp);
	jku(fp, &g, "records", hwtr_ar_nsideband(in->ar));
	jkey(fp, &g, "types");
	fputc('{', fp);
	first = 1;
	for (t = 1; t < HWTR_SB_MAX; t++)
		if (in->sbcount[t] != 0)
			jku(fp, &first, hwtr_sb_type_name(t), in->sbcount[t]);
	if (in->sbunknown != 0)
		jku(fp, &first, "unknown", in->sbunknown);
	fputs("}}", fp);

	jkey(fp, &f, "lost");
	g = 1;
	fputc('{', fp);
	jku(fp, &g, "bytes", e ? e->lost_bytes : in->sb_lost_bytes);
	jku(fp, &g, "records", e ? e->lost_records : in->sb_lost_records);
	fputc('}', fp);

	jkey(fp, &f, "exit");
	if (e == NULL) {
		fputs("null", fp);
	} else {
		g = 1;
		fputc('{', fp);
		jkstr(fp, &g, "kind", exit_name(e->exit_kind));
		jki(fp, &g, "value", e->exit_value);
		jki(fp, &g, "end_ns", e->end_ns);
		fputc('}', fp);
	}

	jkey(fp, &f, "warnings");
	fputc('[', fp);
	n = hwtr_ar_nwarnings(in->ar);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', fp);
		jstr(fp, hwtr_ar_warning(in->ar, i));
	}
	fputs("]}\n", fp);
}

int
cmd_info(int argc, char **argv)
{
	struct info in;
	const char *arg;
	int c, json = 0, rc;

	while ((c = cli_getopt(&info_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = 1;
			break;
		default:
			return (cli_usage_error(&info_cmd,
			    "unhandled option '%s'", argv[optind - 1]));
		}
	}
	if (argc - optind != 1)
		return (cli_usage_error(&info_cmd, argc - optind == 0 ?
		    "no archive given" : "more than one archive given"));

	memset(&in, 0, sizeof(in));
	in.path = argv[optind];
	rc = hwtr_ar_open(&in.ar, in.path, NULL);
	if (rc < 0 || in.ar == NULL) {
		cli_warnx("info", "cannot open '%s': %s", in.path,
		    in.ar != NULL ? hwtr_ar_errmsg(in.ar) : hwtr_errstr(rc));
		hwtr_ar_close(in.ar);
		return (1);
	}
	gather(&in);
	if (json)
		print_json(stdout, &in);
	else
		print_text(stdout, &in);
	hwtr_ar_close(in.ar);
	while (in.nesc > 0)
		free(in.esc[--in.nesc]);
	free(in.esc);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_warnx("info", "cannot write the output");
		return (1);
	}
	return (0);
}
