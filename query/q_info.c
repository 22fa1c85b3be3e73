/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace info's description of an archive (hwtr_q_info()): gathered once
 * from the reader, rendered as "key: value" lines for people (archive
 * content escaped, so that no name can send escape sequences to a
 * terminal) or as one JSON object for programs (through the common JSON
 * writer; its keys are documented in hwtrace-info(1)).  A truncated
 * archive is described as far as it goes and says where it was cut.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_jit.h"
#include "q_int.h"

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
print_pt(struct q_str *o, const struct hwtr_pt_config *pt)
{
	size_t i;

	q_str_printf(o, "    pt: cpuid-0x15.eax %" PRIu32 ", cpuid-0x15.ebx %"
	    PRIu32 ", nom-freq %u, mtc-freq %u, cyc-thresh %u, psb-freq %u, "
	    "options 0x%" PRIx32 "\n", pt->cpuid_15_eax, pt->cpuid_15_ebx,
	    pt->nom_freq, pt->mtc_freq, pt->cyc_thresh, pt->psb_freq,
	    pt->options);
	for (i = 0; i < pt->nfilters && i < HWTR_PT_MAX_FILTERS; i++)
		q_str_printf(o, "    pt filter %zu: cfg %" PRIu32 ", 0x%" PRIx64
		    "-0x%" PRIx64 "\n", i, pt->filter[i].cfg, pt->filter[i].a,
		    pt->filter[i].b);
}

static void
print_cs(struct q_str *o, struct info *in, const struct hwtr_cs_config *cs)
{
	const struct hwtr_cs_source *src;
	size_t i, j;

	q_str_printf(o, "    coresight: frame %s, %zu source%s\n",
	    hwtr_cs_frame_name(cs->frame), cs->nsources,
	    cs->nsources == 1 ? "" : "s");
	for (i = 0; i < cs->nsources && cs->sources != NULL; i++) {
		src = &cs->sources[i];
		q_str_printf(o, "    source %zu: %s, trace id 0x%02x, core "
		    "%s\n", i, hwtr_tf_name(src->protocol), src->trace_id,
		    txt(in, src->core, "unknown"));
		for (j = 0; j < src->nregs && src->regs != NULL; j++)
			q_str_printf(o, "      %s = 0x%" PRIx64 "\n",
			    txt(in, src->regs[j].name, "?"),
			    src->regs[j].value);
	}
}

/*
 * The member under @dir holding @img: its bytes under "images/", its
 * separate debug file under "aux/debug/" (hwtrace(5)); or NULL.
 */
static const struct hwtr_member_info *
image_member(const struct hwtr_ar *ar, const char *dir,
    const struct hwtr_image_desc *img)
{
	char name[HWTR_IMAGE_KEY_MAX + 16];
	size_t i;

	snprintf(name, sizeof(name), "%s%s", dir, img->key);
	if (hwtr_ar_find_member(ar, name, &i) < 0)
		return (NULL);
	return (hwtr_ar_member(ar, i));
}

/* The capture's description (hwtrace.json), as text. */
static void
text_capture(struct q_str *o, struct info *in,
    const struct hwtr_capture_meta *m)
{
	char buf[160];
	size_t i;

	q_str_printf(o, "writer: %s\n", txt(in, m->writer, "unknown"));
	q_str_printf(o, "host: %s\n", txt(in, m->host, "unknown"));
	q_str_printf(o, "source: %s%s%s\n", txt(in, m->source, "unknown"),
	    m->source_version ? " " : "",
	    txt(in, m->source_version, ""));
	q_str_printf(o, "cpu: %s family %u model %u stepping %u%s%s%s\n",
	    hwtr_cpu_vendor_name(m->cpu.vendor), m->cpu.family,
	    m->cpu.model, m->cpu.stepping, m->cpu.brand[0] ? " (" : "",
	    txt(in, m->cpu.brand, ""), m->cpu.brand[0] ? ")" : "");
	q_str_printf(o, "command:");
	if (m->argc == 0)
		q_str_printf(o, " unknown");
	for (i = 0; i < m->argc && m->argv != NULL; i++)
		q_str_printf(o, " %s", txt(in, m->argv[i], "''"));
	q_str_printf(o, "\n");
	fmt_time(m->start_ns, buf, sizeof(buf));
	q_str_printf(o, "start: %s\n", buf);
	if (m->tconv.valid)
		q_str_printf(o, "time conversion: tsc-zero %" PRIu64
		    ", ns-zero %" PRId64 ", mult %" PRIu32 ", shift %"
		    PRIu32 "\n", m->tconv.tsc_zero, m->tconv.ns_zero,
		    m->tconv.mult, m->tconv.shift);
	else
		q_str_printf(o, "time conversion: none\n");
	q_str_printf(o, "sideband origin: %s\n",
	    txt(in, m->sideband_origin, "none"));
	q_str_printf(o, "caveats: %zu\n", m->ncaveats);
	for (i = 0; i < m->ncaveats && m->caveats != NULL; i++)
		q_str_printf(o, "  %s\n", txt(in, m->caveats[i], ""));
	if (m->nnotes > 0 && m->notes != NULL) {
		q_str_printf(o, "notes: %zu\n", m->nnotes);
		for (i = 0; i < m->nnotes; i++)
			q_str_printf(o, "  %s\n", txt(in, m->notes[i], ""));
	}
}

/*
 * What a member under jit/ holds (hwtrace(5)), parsed again: a symbol
 * file's counts, or a code-region file's regions and bytes.
 */
struct jit_sum {
	int		code;		/* HWTR_M_CODE, else HWTR_M_JIT */
	int		dump;		/* a jitdump, not a perf map */
	size_t		n;		/* symbols, or code regions */
	size_t		nloads;
	size_t		nmoves;
	uint64_t	bytes;		/* code bytes of the regions */
};

static int
jit_sum(struct jit_sum *js, const struct hwtr_member_info *mi,
    const void *buf, size_t len, char *err, size_t errlen)
{
	struct hwtr_jit_list l;
	struct hwtr_code_list cl;
	size_t i;
	int rc;

	memset(js, 0, sizeof(*js));
	if (mi->kind == HWTR_M_CODE) {
		memset(&cl, 0, sizeof(cl));
		js->code = 1;
		rc = hwtr_code_parse(&cl, mi->name, buf, len, err, errlen);
		js->n = cl.n;
		for (i = 0; i < cl.n; i++)
			js->bytes += cl.v[i].len;
		hwtr_code_list_free(&cl);
		return (rc);
	}
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, mi->name, buf, len, err, errlen);
	js->dump = l.dump;
	js->n = l.n;
	js->nloads = l.nloads;
	js->nmoves = l.nmoves;
	hwtr_jit_list_free(&l);
	return (rc);
}

/*
 * The members of kind @kind under jit/ (HWTR_M_JIT symbol files or
 * HWTR_M_CODE code regions): how many, and for each one parsed again
 * its counts, or the error that stopped it (the reader checked each at
 * open, so that is rare).  @fn is called once per member with the
 * counts, the error (NULL when parsed) and @arg.
 */
static size_t
jit_members(struct hwtr_ar *ar, int kind, void (*fn)(void *, const char *,
    const struct jit_sum *, const char *), void *arg)
{
	const struct hwtr_member_info *mi;
	struct jit_sum js;
	char err[HWTR_ERRMSG_MAX];
	size_t i, n, count = 0;
	void *buf;
	size_t len;
	int rc;

	n = hwtr_ar_nmembers(ar);
	for (i = 0; i < n; i++) {
		if ((mi = hwtr_ar_member(ar, i)) == NULL ||
		    (int)mi->kind != kind)
			continue;
		count++;
		if (fn == NULL)
			continue;
		memset(&js, 0, sizeof(js));
		err[0] = '\0';
		if ((rc = hwtr_ar_read_member(ar, i, &buf, &len)) == 0) {
			rc = jit_sum(&js, mi, buf, len, err, sizeof(err));
			free(buf);
		}
		fn(arg, mi->name, &js, rc < 0 ? (err[0] ? err :
		    hwtr_errstr(rc)) : NULL);
	}
	return (count);
}

/*
 * A line per JIT member: "  NAME: N symbols[, N code loads, N moves]",
 * or "  NAME: N code regions, N bytes".
 */
struct jit_text {
	struct info	*in;
	struct q_str	*o;
};

static void
text_jit_one(void *arg, const char *name, const struct jit_sum *js,
    const char *err)
{
	struct jit_text *jt = arg;

	if (err != NULL)
		q_str_printf(jt->o, "  %s: unreadable (%s)\n",
		    txt(jt->in, name, ""), txt(jt->in, err, ""));
	else if (js->code)
		q_str_printf(jt->o, "  %s: %zu code regions, %" PRIu64
		    " bytes\n", txt(jt->in, name, ""), js->n, js->bytes);
	else if (js->dump)
		q_str_printf(jt->o, "  %s: %zu symbols, %zu code loads, %zu "
		    "moves\n", txt(jt->in, name, ""), js->n, js->nloads,
		    js->nmoves);
	else
		q_str_printf(jt->o, "  %s: %zu symbols\n",
		    txt(jt->in, name, ""), js->n);
}

static void
json_jit_one(void *arg, const char *name, const struct jit_sum *js,
    const char *err)
{
	struct hwtr_jw *w = arg;

	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "member", name);
	if (js->code) {
		hwtr_jw_ku64(w, "regions", js->n);
		hwtr_jw_ku64(w, "bytes", js->bytes);
	} else {
		hwtr_jw_kstr(w, "format", js->dump ? "jitdump" : "perf-map");
		hwtr_jw_ku64(w, "symbols", js->n);
		hwtr_jw_ku64(w, "code_loads", js->nloads);
		hwtr_jw_ku64(w, "moves", js->nmoves);
	}
	hwtr_jw_kstr(w, "error", err);
	hwtr_jw_end(w);
}

/* The images, each with its debug file and what both cost, as text. */
static void
text_images(struct q_str *o, struct info *in)
{
	const struct hwtr_image_desc *img;
	struct jit_text jt;
	const struct hwtr_member_info *dm, *im;
	uint64_t istored = 0, dstored = 0;
	size_t i, n;

	n = hwtr_ar_nimages(in->ar);
	q_str_printf(o, "images: %zu\n", n);
	for (i = 0; i < n; i++) {
		if ((img = hwtr_ar_image(in->ar, i)) == NULL)
			continue;
		q_str_printf(o, "  %s %s (%s, %" PRIu64 " bytes)\n", img->key,
		    txt(in, img->path, "unknown"),
		    img->kind == HWTR_IMG_MEMORY ? "memory" : "file",
		    img->size);
		if ((dm = image_member(in->ar, "aux/debug/", img)) != NULL)
			q_str_printf(o, "    debug file %s (%" PRIu64
			    " bytes)\n", dm->name, dm->usize);
		/* What the image costs in the archive, compressed. */
		im = image_member(in->ar, "images/", img);
		q_str_printf(o, "    stored: image %" PRIu64 " bytes, debug "
		    "info %" PRIu64 " bytes\n", im != NULL ? im->csize : 0,
		    dm != NULL ? dm->csize : 0);
		istored += im != NULL ? im->csize : 0;
		dstored += dm != NULL ? dm->csize : 0;
	}
	q_str_printf(o, "images stored: %" PRIu64 " bytes, debug info %"
	    PRIu64 " bytes\n", istored, dstored);
	jt.in = in;
	jt.o = o;
	q_str_printf(o, "jit files: %zu\n", jit_members(in->ar, HWTR_M_JIT,
	    NULL, NULL));
	jit_members(in->ar, HWTR_M_JIT, text_jit_one, &jt);
	q_str_printf(o, "code region files: %zu\n", jit_members(in->ar,
	    HWTR_M_CODE, NULL, NULL));
	jit_members(in->ar, HWTR_M_CODE, text_jit_one, &jt);
}

static void
print_text(struct q_str *o, struct info *in)
{
	const struct hwtr_ar_status *st = in->st;
	const struct hwtr_capture_meta *m = in->meta;
	const struct hwtr_capture_end *e = in->end;
	const struct hwtr_stream_desc *sd;
	const struct hwtr_sb_rec *r;
	char buf[160];
	size_t i, n, nchunks;
	uint64_t bytes;
	int t;

	q_str_printf(o, "archive: %s\n", txt(in, in->path, ""));
	q_str_printf(o, "format: %" PRIu32 ".%" PRIu32 "\n", st->version_major,
	    st->version_minor);
	if (st->complete)
		q_str_printf(o, "status: complete, %" PRIu64 " bytes\n",
		    st->file_size);
	else
		q_str_printf(o, "status: truncated at byte %" PRIu64 " of %"
		    PRIu64 " (%s)\n", st->valid_end, st->file_size,
		    txt(in, st->why, "no final member"));
	if (m != NULL)
		text_capture(o, in, m);

	n = hwtr_ar_nstreams(in->ar);
	q_str_printf(o, "streams: %zu\n", n);
	for (i = 0; i < n; i++) {
		if ((sd = hwtr_ar_stream(in->ar, i)) == NULL)
			continue;
		stream_totals(in->ar, i, &nchunks, &bytes);
		q_str_printf(o, "  stream %" PRIu32 " '%s': %s, pid %" PRId32
		    ", tid %" PRId32 ", cpu %" PRId32 ", %zu chunk%s, %"
		    PRIu64 " bytes\n", sd->id, txt(in, sd->name, ""),
		    hwtr_tf_name(sd->format), sd->pid, sd->tid, sd->cpu,
		    nchunks, nchunks == 1 ? "" : "s", bytes);
		if (sd->format == HWTR_TF_INTEL_PT)
			print_pt(o, &sd->pt);
		else if (sd->format != HWTR_TF_NONE)
			print_cs(o, in, &sd->cs);
	}

	text_images(o, in);

	q_str_printf(o, "mappings: %zu\n", in->sbcount[HWTR_SB_MMAP]);
	n = hwtr_ar_nsideband(in->ar);
	for (i = 0; i < n; i++) {
		r = hwtr_ar_sideband_rec(in->ar, i);
		if (r == NULL || r->type != HWTR_SB_MMAP)
			continue;
		q_str_printf(o, "  pid %" PRId32 ": 0x%" PRIx64 "-0x%" PRIx64
		    " pgoff 0x%" PRIx64 " %s %s [%s]\n", r->pid,
		    r->u.mmap.addr, r->u.mmap.addr + r->u.mmap.len,
		    r->u.mmap.pgoff, prot_str(r->u.mmap.prot, buf),
		    txt(in, r->u.mmap.path, "unknown"),
		    txt(in, r->u.mmap.image, "no image"));
	}

	n = hwtr_ar_nsideband(in->ar);
	q_str_printf(o, "sideband: %zu record%s\n", n, n == 1 ? "" : "s");
	for (t = 1; t < HWTR_SB_MAX; t++)
		if (in->sbcount[t] != 0)
			q_str_printf(o, "  %s: %zu\n", hwtr_sb_type_name(t),
			    in->sbcount[t]);
	if (in->sbunknown != 0)
		q_str_printf(o, "  unknown: %zu\n", in->sbunknown);

	if (e != NULL) {
		q_str_printf(o, "lost: %" PRIu64 " trace bytes, %" PRIu64
		    " sideband records\n", e->lost_bytes, e->lost_records);
		fmt_time(e->end_ns, buf, sizeof(buf));
		q_str_printf(o, "end: %s\n", buf);
		switch (e->exit_kind) {
		case HWTR_EXIT_CODE:
			q_str_printf(o, "exit: status %d\n", e->exit_value);
			break;
		case HWTR_EXIT_SIGNAL:
			q_str_printf(o, "exit: signal %d\n", e->exit_value);
			break;
		default:
			q_str_printf(o, "exit: unknown\n");
			break;
		}
	} else {
		/* Without the final member only the LOST records tell. */
		q_str_printf(o, "lost: %" PRIu64 " trace bytes, %" PRIu64
		    " sideband records (from %zu lost records; the final "
		    "member is missing)\n", in->sb_lost_bytes,
		    in->sb_lost_records, in->nlost);
		q_str_printf(o, "exit: unknown (truncated)\n");
	}

	n = hwtr_ar_nwarnings(in->ar);
	q_str_printf(o, "warnings: %zu\n", n);
	for (i = 0; i < n; i++)
		q_str_printf(o, "  %s\n", txt(in, hwtr_ar_warning(in->ar, i),
		    ""));
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

static void
json_pt(struct hwtr_jw *w, const struct hwtr_pt_config *pt)
{
	size_t j;

	hwtr_jw_key(w, "pt");
	hwtr_jw_obj(w);
	hwtr_jw_ku64(w, "cpuid_15_eax", pt->cpuid_15_eax);
	hwtr_jw_ku64(w, "cpuid_15_ebx", pt->cpuid_15_ebx);
	hwtr_jw_ku64(w, "nom_freq", pt->nom_freq);
	hwtr_jw_ku64(w, "mtc_freq", pt->mtc_freq);
	hwtr_jw_ku64(w, "cyc_thresh", pt->cyc_thresh);
	hwtr_jw_ku64(w, "psb_freq", pt->psb_freq);
	hwtr_jw_ku64(w, "options", pt->options);
	hwtr_jw_key(w, "filters");
	hwtr_jw_arr(w);
	for (j = 0; j < pt->nfilters && j < HWTR_PT_MAX_FILTERS; j++) {
		hwtr_jw_obj(w);
		hwtr_jw_ku64(w, "cfg", pt->filter[j].cfg);
		hwtr_jw_ku64(w, "a", pt->filter[j].a);
		hwtr_jw_ku64(w, "b", pt->filter[j].b);
		hwtr_jw_end(w);
	}
	hwtr_jw_end(w);
	hwtr_jw_end(w);
}

static void
json_cs(struct hwtr_jw *w, const struct hwtr_cs_config *cs)
{
	const struct hwtr_cs_source *src;
	size_t j, k;

	hwtr_jw_key(w, "coresight");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "frame", hwtr_cs_frame_name(cs->frame));
	hwtr_jw_key(w, "sources");
	hwtr_jw_arr(w);
	for (j = 0; j < cs->nsources && cs->sources != NULL; j++) {
		src = &cs->sources[j];
		hwtr_jw_obj(w);
		hwtr_jw_kstr(w, "protocol", hwtr_tf_name(src->protocol));
		hwtr_jw_ku64(w, "trace_id", src->trace_id);
		hwtr_jw_kstr(w, "core", src->core);
		hwtr_jw_key(w, "regs");
		hwtr_jw_obj(w);
		for (k = 0; k < src->nregs && src->regs != NULL; k++)
			hwtr_jw_ku64(w, str_or(src->regs[k].name, "?"),
			    src->regs[k].value);
		hwtr_jw_end(w);
		hwtr_jw_end(w);
	}
	hwtr_jw_end(w);
	hwtr_jw_end(w);
}

static void
json_stream(struct hwtr_jw *w, struct hwtr_ar *ar, size_t i,
    const struct hwtr_stream_desc *sd)
{
	size_t nchunks;
	uint64_t bytes;

	stream_totals(ar, i, &nchunks, &bytes);
	hwtr_jw_obj(w);
	hwtr_jw_ku64(w, "id", sd->id);
	hwtr_jw_kstr(w, "name", sd->name);
	hwtr_jw_kstr(w, "format", hwtr_tf_name(sd->format));
	hwtr_jw_ki64(w, "pid", sd->pid);
	hwtr_jw_ki64(w, "tid", sd->tid);
	hwtr_jw_ki64(w, "cpu", sd->cpu);
	hwtr_jw_ku64(w, "chunks", nchunks);
	hwtr_jw_ku64(w, "bytes", bytes);
	if (sd->format == HWTR_TF_INTEL_PT)
		json_pt(w, &sd->pt);
	else if (sd->format != HWTR_TF_NONE)
		json_cs(w, &sd->cs);
	hwtr_jw_end(w);
}

/* An array of @n strings under @key. */
static void
json_strs(struct hwtr_jw *w, const char *key, const char *const *v,
    size_t n)
{
	size_t i;

	hwtr_jw_key(w, key);
	hwtr_jw_arr(w);
	for (i = 0; i < n && v != NULL; i++)
		hwtr_jw_str(w, v[i]);
	hwtr_jw_end(w);
}

static void
json_capture(struct hwtr_jw *w, const struct hwtr_capture_meta *m)
{
	hwtr_jw_key(w, "capture");
	if (m == NULL) {
		hwtr_jw_null(w);
		return;
	}
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "writer", m->writer);
	hwtr_jw_kstr(w, "host", m->host);
	hwtr_jw_kstr(w, "source", m->source);
	hwtr_jw_kstr(w, "source_version", m->source_version);
	hwtr_jw_kstr(w, "sideband_origin", m->sideband_origin);
	hwtr_jw_key(w, "cpu");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "vendor", hwtr_cpu_vendor_name(m->cpu.vendor));
	hwtr_jw_ku64(w, "family", m->cpu.family);
	hwtr_jw_ku64(w, "model", m->cpu.model);
	hwtr_jw_ku64(w, "stepping", m->cpu.stepping);
	hwtr_jw_kstr(w, "brand", m->cpu.brand);
	hwtr_jw_end(w);
	json_strs(w, "argv", (const char *const *)m->argv, m->argc);
	hwtr_jw_ki64(w, "start_ns", m->start_ns);
	hwtr_jw_key(w, "timeconv");
	if (m->tconv.valid) {
		hwtr_jw_obj(w);
		hwtr_jw_ku64(w, "tsc_zero", m->tconv.tsc_zero);
		hwtr_jw_ki64(w, "ns_zero", m->tconv.ns_zero);
		hwtr_jw_ku64(w, "mult", m->tconv.mult);
		hwtr_jw_ku64(w, "shift", m->tconv.shift);
		hwtr_jw_end(w);
	} else
		hwtr_jw_null(w);
	json_strs(w, "caveats", (const char *const *)m->caveats, m->ncaveats);
	json_strs(w, "notes", (const char *const *)m->notes, m->nnotes);
	hwtr_jw_end(w);
}

static void
json_images(struct hwtr_jw *w, struct hwtr_ar *ar)
{
	const struct hwtr_image_desc *img;
	const struct hwtr_member_info *dm, *im;
	char buf[2 * HWTR_BUILD_ID_MAX + 1];
	size_t i, n;

	hwtr_jw_key(w, "images");
	hwtr_jw_arr(w);
	n = hwtr_ar_nimages(ar);
	for (i = 0; i < n; i++) {
		if ((img = hwtr_ar_image(ar, i)) == NULL)
			continue;
		hwtr_jw_obj(w);
		hwtr_jw_kstr(w, "key", img->key);
		hwtr_jw_kstr(w, "path", img->path);
		hwtr_jw_kstr(w, "kind",
		    img->kind == HWTR_IMG_MEMORY ? "memory" : "file");
		hwtr_jw_ku64(w, "size", img->size);
		hwtr_hex(buf, img->build_id, img->build_id_len);
		hwtr_jw_kstr(w, "build_id", img->build_id_len ? buf : NULL);
		dm = image_member(ar, "aux/debug/", img);
		hwtr_jw_kstr(w, "debug_file", dm != NULL ? dm->name : NULL);
		if (dm != NULL)
			hwtr_jw_ku64(w, "debug_size", dm->usize);
		im = image_member(ar, "images/", img);
		hwtr_jw_ku64(w, "stored_size", im != NULL ? im->csize : 0);
		hwtr_jw_ku64(w, "debug_stored_size",
		    dm != NULL ? dm->csize : 0);
		hwtr_jw_end(w);
	}
	hwtr_jw_end(w);
}

static void
json_mappings(struct hwtr_jw *w, struct hwtr_ar *ar)
{
	const struct hwtr_sb_rec *r;
	char pbuf[4];
	size_t i, n;

	hwtr_jw_key(w, "mappings");
	hwtr_jw_arr(w);
	n = hwtr_ar_nsideband(ar);
	for (i = 0; i < n; i++) {
		r = hwtr_ar_sideband_rec(ar, i);
		if (r == NULL || r->type != HWTR_SB_MMAP)
			continue;
		hwtr_jw_obj(w);
		hwtr_jw_ki64(w, "pid", r->pid);
		hwtr_jw_ki64(w, "tid", r->tid);
		hwtr_jw_ku64(w, "time", r->time);
		hwtr_jw_ku64(w, "addr", r->u.mmap.addr);
		hwtr_jw_ku64(w, "len", r->u.mmap.len);
		hwtr_jw_ku64(w, "pgoff", r->u.mmap.pgoff);
		hwtr_jw_kstr(w, "prot", prot_str(r->u.mmap.prot, pbuf));
		hwtr_jw_kstr(w, "path", r->u.mmap.path);
		hwtr_jw_kstr(w, "image", r->u.mmap.image);
		hwtr_jw_end(w);
	}
	hwtr_jw_end(w);
}

static void
json_end(struct hwtr_jw *w, const struct info *in)
{
	const struct hwtr_capture_end *e = in->end;
	size_t i, n;
	int t;

	hwtr_jw_key(w, "sideband");
	hwtr_jw_obj(w);
	hwtr_jw_ku64(w, "records", hwtr_ar_nsideband(in->ar));
	hwtr_jw_key(w, "types");
	hwtr_jw_obj(w);
	for (t = 1; t < HWTR_SB_MAX; t++)
		if (in->sbcount[t] != 0)
			hwtr_jw_ku64(w, hwtr_sb_type_name(t), in->sbcount[t]);
	if (in->sbunknown != 0)
		hwtr_jw_ku64(w, "unknown", in->sbunknown);
	hwtr_jw_end(w);
	hwtr_jw_end(w);

	hwtr_jw_key(w, "lost");
	hwtr_jw_obj(w);
	hwtr_jw_ku64(w, "bytes", e ? e->lost_bytes : in->sb_lost_bytes);
	hwtr_jw_ku64(w, "records", e ? e->lost_records : in->sb_lost_records);
	hwtr_jw_end(w);

	hwtr_jw_key(w, "exit");
	if (e == NULL)
		hwtr_jw_null(w);
	else {
		hwtr_jw_obj(w);
		hwtr_jw_kstr(w, "kind", exit_name(e->exit_kind));
		hwtr_jw_ki64(w, "value", e->exit_value);
		hwtr_jw_ki64(w, "end_ns", e->end_ns);
		hwtr_jw_end(w);
	}

	hwtr_jw_key(w, "warnings");
	hwtr_jw_arr(w);
	n = hwtr_ar_nwarnings(in->ar);
	for (i = 0; i < n; i++)
		hwtr_jw_str(w, hwtr_ar_warning(in->ar, i));
	hwtr_jw_end(w);
}

static void
print_json(struct q_str *o, struct info *in)
{
	const struct hwtr_ar_status *st = in->st;
	const struct hwtr_stream_desc *sd;
	struct hwtr_jw w;
	char buf[32];
	size_t i, n;

	hwtr_jw_init(&w, q_str_put, o, 0);
	hwtr_jw_obj(&w);
	hwtr_jw_kstr(&w, "archive", in->path);
	snprintf(buf, sizeof(buf), "%" PRIu32 ".%" PRIu32, st->version_major,
	    st->version_minor);
	hwtr_jw_kstr(&w, "format", buf);
	hwtr_jw_key(&w, "complete");
	hwtr_jw_bool(&w, st->complete);
	hwtr_jw_ku64(&w, "file_size", st->file_size);
	hwtr_jw_ku64(&w, "valid_end", st->valid_end);
	hwtr_jw_kstr(&w, "truncated_why", st->complete ? NULL :
	    str_or(st->why, "no final member"));
	json_capture(&w, in->meta);
	hwtr_jw_key(&w, "streams");
	hwtr_jw_arr(&w);
	n = hwtr_ar_nstreams(in->ar);
	for (i = 0; i < n; i++)
		if ((sd = hwtr_ar_stream(in->ar, i)) != NULL)
			json_stream(&w, in->ar, i, sd);
	hwtr_jw_end(&w);
	json_images(&w, in->ar);
	hwtr_jw_key(&w, "jit");
	hwtr_jw_arr(&w);
	jit_members(in->ar, HWTR_M_JIT, json_jit_one, &w);
	hwtr_jw_end(&w);
	hwtr_jw_key(&w, "code");
	hwtr_jw_arr(&w);
	jit_members(in->ar, HWTR_M_CODE, json_jit_one, &w);
	hwtr_jw_end(&w);
	json_mappings(&w, in->ar);
	json_end(&w, in);
	hwtr_jw_end(&w);
	q_str_add(o, "\n", 1);
}

int
hwtr_q_info(struct hwtr_ar *ar, const char *path, enum hwtr_q_format fmt,
    char **bufp, size_t *lenp)
{
	struct q_str o = { 0 };
	struct info in;

	*bufp = NULL;
	*lenp = 0;
	if (fmt != HWTR_Q_FMT_TABLE && fmt != HWTR_Q_FMT_JSON)
		return (-HWTR_E_INVAL);
	memset(&in, 0, sizeof(in));
	in.path = path;
	in.ar = ar;
	gather(&in);
	if (fmt == HWTR_Q_FMT_JSON)
		print_json(&o, &in);
	else
		print_text(&o, &in);
	while (in.nesc > 0)
		free(in.esc[--in.nesc]);
	free(in.esc);
	if (o.err || o.p == NULL) {
		free(o.p);
		return (-HWTR_E_NOMEM);
	}
	*bufp = o.p;
	*lenp = o.len;
	return (0);
}
