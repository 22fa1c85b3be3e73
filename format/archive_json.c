/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The JSON members of an archive (hwtrace.json, stream.json, image
 * descriptions, end.json), through jansson.  Parsing is strict about types
 * (a wrong type names the member and the field) and lenient about fields it
 * does not know (listed as warnings): that is the minor-version rule of
 * hwtrace(5).  64-bit values that may exceed 2^63 (addresses, TSC values,
 * register values) are written as "0x..." strings.
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hwtr_common.h"
#include "hwtr_format.h"

/* ---- names ------------------------------------------------------------ */

static const char *const tfname[] = {
	[HWTR_TF_NONE] = "none",
	[HWTR_TF_INTEL_PT] = "intel-pt",
	[HWTR_TF_ETMV3] = "etmv3",
	[HWTR_TF_PTM] = "ptm",
	[HWTR_TF_ETMV4] = "etmv4",
	[HWTR_TF_ETE] = "ete",
	[HWTR_TF_STM] = "stm",
	[HWTR_TF_CORESIGHT] = "coresight",
};

static const char *const vendorname[] = {
	[HWTR_CPU_UNKNOWN] = "unknown",
	[HWTR_CPU_INTEL] = "intel",
	[HWTR_CPU_AMD] = "amd",
	[HWTR_CPU_ARM] = "arm",
};

static const char *const framename[] = {
	[HWTR_CS_FRAME_NONE] = "none",
	[HWTR_CS_FRAME_CORESIGHT] = "coresight",
	[HWTR_CS_FRAME_TPIU] = "tpiu",
	[HWTR_CS_FRAME_DSTREAM] = "dstream",
};

static const char *const exitname[] = {
	[HWTR_EXIT_NONE] = "none",
	[HWTR_EXIT_CODE] = "code",
	[HWTR_EXIT_SIGNAL] = "signal",
};

static const char *const kindname[] = {
	[HWTR_IMG_FILE] = "file",
	[HWTR_IMG_MEMORY] = "memory",
};

#define NAME(tab, v) \
	((size_t)(v) < HWTR_NELEM(tab) ? (tab)[(size_t)(v)] : "unknown")

const char *
hwtr_tf_name(enum hwtr_trace_format f)
{
	return (NAME(tfname, f));
}

const char *
hwtr_cs_frame_name(enum hwtr_cs_frame f)
{
	return (NAME(framename, f));
}

const char *
hwtr_cpu_vendor_name(enum hwtr_cpu_vendor v)
{
	return (NAME(vendorname, v));
}

static int
lookup(const char *const *tab, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tab[i] != NULL && strcmp(tab[i], s) == 0)
			return ((int)i);
	return (-1);
}

/* ---- writing ----------------------------------------------------------- */

static json_t *
jhex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return (json_string(b));
}

static json_t *
jstrn(const char *s)
{
	return (s != NULL ? json_string(s) : json_null());
}

static json_t *
jstrarr(const char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		json_array_append_new(a, jstrn(v[i]));
	return (a);
}

static char *
dump(json_t *o)
{
	char *s;

	if (o == NULL)
		return (NULL);
	s = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return (s);
}

char *
hwtr_json_meta(const struct hwtr_capture_meta *m)
{
	char ver[32], writer[64];
	json_t *o, *cpu, *tc;

	snprintf(ver, sizeof(ver), "%d.%d", HWTR_FORMAT_MAJOR, HWTR_FORMAT_MINOR);
	snprintf(writer, sizeof(writer), "hwtrace %s", HWTRACE_VERSION);
	cpu = json_pack("{s:s,s:i,s:i,s:i,s:s}",
	    "vendor", NAME(vendorname, m->cpu.vendor),
	    "family", (json_int_t)m->cpu.family,
	    "model", (json_int_t)m->cpu.model,
	    "stepping", (json_int_t)m->cpu.stepping,
	    "brand", m->cpu.brand);
	if (m->tconv.valid)
		tc = json_pack("{s:o,s:I,s:I,s:I}",
		    "tsc_zero", jhex(m->tconv.tsc_zero),
		    "ns_zero", (json_int_t)m->tconv.ns_zero,
		    "mult", (json_int_t)m->tconv.mult,
		    "shift", (json_int_t)m->tconv.shift);
	else
		tc = json_null();
	o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o}",
	    "format", ver,
	    "writer", writer,
	    "host", jstrn(m->host),
	    "source", jstrn(m->source),
	    "source_version", jstrn(m->source_version),
	    "sideband_origin", jstrn(m->sideband_origin),
	    "caveats", jstrarr(m->caveats, m->caveats ? m->ncaveats : 0),
	    "cpu", cpu,
	    "argv", jstrarr(m->argv, m->argv ? m->argc : 0),
	    "start_ns", (json_int_t)m->start_ns,
	    "timeconv", tc);
	if (o != NULL && m->nnotes > 0 && m->notes != NULL &&
	    json_object_set_new(o, "notes", jstrarr(m->notes, m->nnotes)) != 0) {
		json_decref(o);
		return (NULL);
	}
	return (dump(o));
}

char *
hwtr_json_stream(const struct hwtr_stream_desc *d)
{
	json_t *o, *pt, *f, *cs, *srcs, *src, *regs;
	size_t i, j;

	o = json_pack("{s:I,s:s,s:s,s:i,s:i,s:i}",
	    "id", (json_int_t)d->id,
	    "name", d->name != NULL ? d->name : "",
	    "format", hwtr_tf_name(d->format),
	    "pid", (int)d->pid, "tid", (int)d->tid, "cpu", (int)d->cpu);
	if (o == NULL)
		return (NULL);
	if (d->format == HWTR_TF_INTEL_PT) {
		f = json_array();
		for (i = 0; f != NULL && i < d->pt.nfilters &&
		    i < HWTR_PT_MAX_FILTERS; i++)
			json_array_append_new(f, json_pack("{s:I,s:o,s:o}",
			    "cfg", (json_int_t)d->pt.filter[i].cfg,
			    "a", jhex(d->pt.filter[i].a),
			    "b", jhex(d->pt.filter[i].b)));
		pt = json_pack("{s:I,s:I,s:i,s:i,s:i,s:i,s:I,s:o}",
		    "cpuid_15_eax", (json_int_t)d->pt.cpuid_15_eax,
		    "cpuid_15_ebx", (json_int_t)d->pt.cpuid_15_ebx,
		    "nom_freq", (int)d->pt.nom_freq,
		    "mtc_freq", (int)d->pt.mtc_freq,
		    "cyc_thresh", (int)d->pt.cyc_thresh,
		    "psb_freq", (int)d->pt.psb_freq,
		    "options", (json_int_t)d->pt.options,
		    "filters", f);
		json_object_set_new(o, "intel_pt", pt);
	} else if (d->format != HWTR_TF_NONE) {
		srcs = json_array();
		for (i = 0; srcs != NULL && i < d->cs.nsources; i++) {
			const struct hwtr_cs_source *s = &d->cs.sources[i];

			regs = json_array();
			for (j = 0; regs != NULL && j < s->nregs; j++)
				json_array_append_new(regs, json_pack("{s:s,s:o}",
				    "name", s->regs[j].name ? s->regs[j].name : "",
				    "value", jhex(s->regs[j].value)));
			src = json_pack("{s:s,s:i,s:o,s:o}",
			    "protocol", hwtr_tf_name(s->protocol),
			    "trace_id", (int)s->trace_id,
			    "core", jstrn(s->core),
			    "regs", regs);
			json_array_append_new(srcs, src);
		}
		cs = json_pack("{s:s,s:o}", "frame", NAME(framename, d->cs.frame),
		    "sources", srcs);
		json_object_set_new(o, "coresight", cs);
	}
	return (dump(o));
}

char *
hwtr_json_image(const struct hwtr_image_desc *d)
{
	char bid[2 * HWTR_BUILD_ID_MAX + 1], sha[65];

	hwtr_hex(bid, d->build_id, d->build_id_len <= HWTR_BUILD_ID_MAX ?
	    d->build_id_len : 0);
	hwtr_hex(sha, d->sha256, 32);
	return (dump(json_pack("{s:s,s:o,s:s,s:s,s:I,s:s}",
	    "key", d->key,
	    "path", jstrn(d->path),
	    "kind", NAME(kindname, d->kind),
	    "build_id", bid,
	    "size", (json_int_t)d->size,
	    "sha256", sha)));
}

char *
hwtr_json_end(const struct hwtr_capture_end *e, const struct hwtr_toc_ent *toc,
    size_t ntoc)
{
	json_t *o, *a, *m;
	char sha[65];
	size_t i;

	a = json_array();
	for (i = 0; a != NULL && i < ntoc; i++) {
		m = json_pack("{s:s,s:I,s:I,s:I,s:I}",
		    "name", toc[i].name,
		    "offset", (json_int_t)toc[i].offset,
		    "csize", (json_int_t)toc[i].csize,
		    "usize", (json_int_t)toc[i].usize,
		    "size", (json_int_t)toc[i].size);
		if (m != NULL && toc[i].has_sha256) {
			hwtr_hex(sha, toc[i].sha256, 32);
			json_object_set_new(m, "sha256", json_string(sha));
		}
		if (m == NULL || json_array_append_new(a, m) != 0) {
			json_decref(a);
			return (NULL);
		}
	}
	o = json_pack("{s:I,s:{s:s,s:i},s:I,s:I,s:o}",
	    "end_ns", (json_int_t)e->end_ns,
	    "exit", "kind", NAME(exitname, e->exit_kind),
	    "value", e->exit_value,
	    "lost_bytes", (json_int_t)e->lost_bytes,
	    "lost_records", (json_int_t)e->lost_records,
	    "members", a);
	return (dump(o));
}

/* ---- parsing ----------------------------------------------------------- */

struct jp {
	const char	*member;
	char		*err;
	size_t		errlen;
	struct hwtr_pool *pool;
	struct hwtr_warnings *w;
};

static void
jseterr(struct jp *p, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
jseterr(struct jp *p, const char *path, const char *key, const char *fmt, ...)
{
	char msg[HWTR_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s: field '%s%s': %s", p->member, path,
	    key, msg);
}

/* Keep the message, evaluate to -HWTR_E_FORMAT (visibly negative). */
#define jerr(p, path, key, ...) \
	(jseterr((p), (path), (key), __VA_ARGS__), -HWTR_E_FORMAT)

static const char *
tyname(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return ("an object");
	case JSON_ARRAY: return ("an array");
	case JSON_STRING: return ("a string");
	case JSON_INTEGER: return ("an integer");
	case JSON_REAL: return ("a real number");
	case JSON_TRUE:
	case JSON_FALSE: return ("a boolean");
	default: return ("null");
	}
}

/* Warn about every field of @o not in @known (NULL-terminated). */
static void
junknown(struct jp *p, json_t *o, const char *path, const char *const *known)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach(o, k, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(known[i], k) == 0)
				break;
		if (known[i] == NULL)
			hwtr_warn(p->w, "%s: unknown field '%s%s' skipped",
			    p->member, path, k);
	}
}

static int
jint(struct jp *p, json_t *o, const char *path, const char *key,
    int64_t min, int64_t max, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	json_int_t x;

	*out = 0;
	if (v == NULL)
		return (jerr(p, path, key, "missing"));
	if (!json_is_integer(v))
		return (jerr(p, path, key, "expected an integer, got %s",
		    tyname(v)));
	x = json_integer_value(v);
	if (x < min || x > max)
		return (jerr(p, path, key, "%lld is out of range [%" PRId64
		    ", %" PRId64 "]", (long long)x, min, max));
	*out = x;
	return (0);
}

static int
jhexv(struct jp *p, json_t *o, const char *path, const char *key,
    uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	const char *s;
	uint64_t x = 0;
	int c, nd = 0;

	*out = 0;
	if (v == NULL)
		return (jerr(p, path, key, "missing"));
	if (!json_is_string(v))
		return (jerr(p, path, key, "expected a \"0x...\" string, got %s",
		    tyname(v)));
	s = json_string_value(v);
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return (jerr(p, path, key, "'%.40s' is not \"0x\" and hex", s));
	for (s += 2; *s != '\0'; s++, nd++) {
		if ((c = hwtr_hexdigit((unsigned char)*s)) < 0)
			return (jerr(p, path, key, "bad hex digit '%c'", *s));
		if (nd >= 16 && x >> 60 != 0)
			return (jerr(p, path, key, "more than 64 bits"));
		x = x << 4 | (uint64_t)c;
	}
	if (nd == 0)
		return (jerr(p, path, key, "no hex digits"));
	*out = x;
	return (0);
}

/* A string field; @nullable allows JSON null (stored as NULL). */
static int
jstr(struct jp *p, json_t *o, const char *path, const char *key,
    int nullable, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL)
		return (jerr(p, path, key, "missing"));
	if (json_is_null(v) && nullable)
		return (0);
	if (!json_is_string(v))
		return (jerr(p, path, key, "expected a string, got %s",
		    tyname(v)));
	if (strlen(json_string_value(v)) != json_string_length(v))
		return (jerr(p, path, key, "NUL byte in the string"));
	if ((*out = hwtr_pool_strdup(p->pool, json_string_value(v))) == NULL)
		return (-HWTR_E_NOMEM);
	return (0);
}

static int
jobj(struct jp *p, json_t *o, const char *path, const char *key,
    json_type type, int nullable, json_t **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (v == NULL)
		return (jerr(p, path, key, "missing"));
	if (json_is_null(v) && nullable)
		return (0);
	if (json_typeof(v) != type)
		return (jerr(p, path, key, "expected %s, got %s",
		    type == JSON_OBJECT ? "an object" : "an array", tyname(v)));
	*out = v;
	return (0);
}

/* An array of strings into pool memory. */
static int
jstrv(struct jp *p, json_t *o, const char *key, size_t max,
    const char *const **vp, size_t *np)
{
	json_t *a, *v;
	const char **vec;
	size_t i, n;
	int rc;

	if ((rc = jobj(p, o, "", key, JSON_ARRAY, 0, &a)) < 0)
		return (rc);
	n = json_array_size(a);
	if (n > max)
		return (jerr(p, "", key, "%zu entries (limit %zu)", n, max));
	if ((vec = hwtr_pool_alloc(p->pool, (n + 1) * sizeof(*vec))) == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return (jerr(p, "", key, "entry %zu: expected a string, "
			    "got %s", i, tyname(v)));
		if ((vec[i] = hwtr_pool_strdup(p->pool, json_string_value(v))) ==
		    NULL)
			return (-HWTR_E_NOMEM);
	}
	*vp = vec;
	*np = n;
	return (0);
}

/*
 * JSON values a member may hold: jansson's tree costs some 40 to 90 bytes
 * a value, so a 64 MiB member of small values would take gigabytes.  The
 * table of contents has about 7 a member (400,000 members fit).
 */
#define JSON_VALUES_MAX		(1u << 20)
#define JSON_VALUES_END		(3u << 20)

/* An upper bound of the values in @len bytes of JSON text: separators. */
static size_t
jcount(const char *s, size_t len)
{
	size_t i, n = 1;
	int instr = 0;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				instr = 0;
			continue;
		}
		if (s[i] == '"')
			instr = 1;
		else if (s[i] == ',' || s[i] == '[' || s[i] == '{')
			n++;
	}
	return (n);
}

/*
 * Parse member @buf into *@rootp, an object, and warn about its fields not
 * in @known (NULL: the caller looks later): 0, or an error in p->err.
 */
static int
jload(struct jp *p, const void *buf, size_t len, const char *const *known,
    json_t **rootp)
{
	json_error_t je;
	json_t *root;
	size_t max = strcmp(p->member, HWTR_END_NAME) == 0 ? JSON_VALUES_END :
	    JSON_VALUES_MAX;

	if (jcount(buf, len) > max) {
		snprintf(p->err, p->errlen, "%s: more than %zu JSON values "
		    "(the reader's limit)", p->member, max);
		return (-HWTR_E_LIMIT);
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(p->err, p->errlen, "%s: invalid JSON at line %d "
		    "column %d: %s", p->member, je.line, je.column, je.text);
		return (-HWTR_E_FORMAT);
	}
	if (!json_is_object(root)) {
		snprintf(p->err, p->errlen, "%s: expected a JSON object, got %s",
		    p->member, tyname(root));
		json_decref(root);
		return (-HWTR_E_FORMAT);
	}
	if (known != NULL)
		junknown(p, root, "", known);
	*rootp = root;
	return (0);
}

#define TRY(x)	do { if ((rc = (x)) < 0) goto out; } while (0)

/* "M.m" with decimal numbers only. */
static int
parse_version(const char *s, uint32_t *maj, uint32_t *min)
{
	unsigned long a, b;
	char *e;

	if (*s < '0' || *s > '9')
		return (-1);
	a = strtoul(s, &e, 10);
	if (*e != '.' || e[1] < '0' || e[1] > '9' || a > 65535)
		return (-1);
	b = strtoul(e + 1, &e, 10);
	if (*e != '\0' || b > 65535)
		return (-1);
	*maj = (uint32_t)a;
	*min = (uint32_t)b;
	return (0);
}

int
hwtr_json_parse_meta(const char *member, const void *buf, size_t len,
    struct hwtr_capture_meta *m, uint32_t *major, uint32_t *minor,
    struct hwtr_pool *pool, struct hwtr_warnings *w, char *err, size_t errlen)
{
	static const char *const known[] = { "format", "writer", "host",
	    "source", "source_version", "sideband_origin", "caveats", "notes",
	    "cpu", "argv", "start_ns", "timeconv", NULL };
	static const char *const kcpu[] = { "vendor", "family", "model",
	    "stepping", "brand", NULL };
	static const char *const ktc[] = { "tsc_zero", "ns_zero", "mult",
	    "shift", NULL };
	struct jp p = { member, err, errlen, pool, w };
	json_t *root, *cpu, *tc;
	const char *ver, *s;
	int64_t v;
	int rc, vi;

	memset(m, 0, sizeof(*m));
	if ((rc = jload(&p, buf, len, NULL, &root)) < 0)
		return (rc);
	/* The version first: a newer major may change every other field. */
	TRY(jstr(&p, root, "", "format", 0, &ver));
	if (parse_version(ver, major, minor) < 0) {
		rc = jerr(&p, "", "format", "'%.40s' is not \"major.minor\"", ver);
		goto out;
	}
	if (*major > HWTR_FORMAT_MAJOR || *major == 0) {
		snprintf(err, errlen, "format version %u.%u is %s this hwtrace "
		    "(reads %d.x)", *major, *minor, *major == 0 ?
		    "older than" : "newer than", HWTR_FORMAT_MAJOR);
		rc = -HWTR_E_VERSION;
		goto out;
	}
	junknown(&p, root, "", known);
	TRY(jstr(&p, root, "", "writer", 1, &m->writer));
	TRY(jstr(&p, root, "", "host", 1, &m->host));
	TRY(jstr(&p, root, "", "source", 1, &m->source));
	TRY(jstr(&p, root, "", "source_version", 1, &m->source_version));
	TRY(jstr(&p, root, "", "sideband_origin", 1, &m->sideband_origin));
	TRY(jstrv(&p, root, "caveats", 4096, &m->caveats, &m->ncaveats));
	if (json_object_get(root, "notes") != NULL)
		TRY(jstrv(&p, root, "notes", 4096, &m->notes, &m->nnotes));
	TRY(jstrv(&p, root, "argv", 1 << 20, &m->argv, &m->argc));
	TRY(jint(&p, root, "", "start_ns", INT64_MIN, INT64_MAX, &m->start_ns));
	TRY(jobj(&p, root, "", "cpu", JSON_OBJECT, 0, &cpu));
	junknown(&p, cpu, "cpu.", kcpu);
	TRY(jstr(&p, cpu, "cpu.", "vendor", 0, &s));
	if ((vi = lookup(vendorname, HWTR_NELEM(vendorname), s)) < 0) {
		hwtr_warn(w, "%s: unknown CPU vendor '%s' read as unknown",
		    member, s);
		vi = HWTR_CPU_UNKNOWN;
	}
	m->cpu.vendor = (enum hwtr_cpu_vendor)vi;
	TRY(jint(&p, cpu, "cpu.", "family", 0, UINT16_MAX, &v));
	m->cpu.family = (uint16_t)v;
	TRY(jint(&p, cpu, "cpu.", "model", 0, UINT8_MAX, &v));
	m->cpu.model = (uint8_t)v;
	TRY(jint(&p, cpu, "cpu.", "stepping", 0, UINT8_MAX, &v));
	m->cpu.stepping = (uint8_t)v;
	TRY(jstr(&p, cpu, "cpu.", "brand", 0, &s));
	snprintf(m->cpu.brand, sizeof(m->cpu.brand), "%s", s);
	TRY(jobj(&p, root, "", "timeconv", JSON_OBJECT, 1, &tc));
	if (tc != NULL) {
		junknown(&p, tc, "timeconv.", ktc);
		m->tconv.valid = 1;
		TRY(jhexv(&p, tc, "timeconv.", "tsc_zero", &m->tconv.tsc_zero));
		TRY(jint(&p, tc, "timeconv.", "ns_zero", INT64_MIN, INT64_MAX,
		    &m->tconv.ns_zero));
		TRY(jint(&p, tc, "timeconv.", "mult", 0, UINT32_MAX, &v));
		m->tconv.mult = (uint32_t)v;
		TRY(jint(&p, tc, "timeconv.", "shift", 0, 63, &v));
		m->tconv.shift = (uint32_t)v;
	}
	rc = 0;
out:
	json_decref(root);
	return (rc);
}

static int
parse_pt(struct jp *p, json_t *pt, struct hwtr_pt_config *c)
{
	static const char *const k[] = { "cpuid_15_eax", "cpuid_15_ebx",
	    "nom_freq", "mtc_freq", "cyc_thresh", "psb_freq", "options",
	    "filters", NULL };
	static const char *const kf[] = { "cfg", "a", "b", NULL };
	json_t *f, *e;
	int64_t v;
	size_t i;
	int rc;

	junknown(p, pt, "intel_pt.", k);
	if ((rc = jint(p, pt, "intel_pt.", "cpuid_15_eax", 0, UINT32_MAX, &v)) < 0)
		return (rc);
	c->cpuid_15_eax = (uint32_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "cpuid_15_ebx", 0, UINT32_MAX, &v)) < 0)
		return (rc);
	c->cpuid_15_ebx = (uint32_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "nom_freq", 0, UINT8_MAX, &v)) < 0)
		return (rc);
	c->nom_freq = (uint8_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "mtc_freq", 0, UINT8_MAX, &v)) < 0)
		return (rc);
	c->mtc_freq = (uint8_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "cyc_thresh", 0, UINT8_MAX, &v)) < 0)
		return (rc);
	c->cyc_thresh = (uint8_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "psb_freq", 0, UINT8_MAX, &v)) < 0)
		return (rc);
	c->psb_freq = (uint8_t)v;
	if ((rc = jint(p, pt, "intel_pt.", "options", 0, UINT32_MAX, &v)) < 0)
		return (rc);
	c->options = (uint32_t)v;
	if ((rc = jobj(p, pt, "intel_pt.", "filters", JSON_ARRAY, 0, &f)) < 0)
		return (rc);
	if (json_array_size(f) > HWTR_PT_MAX_FILTERS)
		return (jerr(p, "intel_pt.", "filters", "%zu filters (at most %d)",
		    json_array_size(f), HWTR_PT_MAX_FILTERS));
	json_array_foreach(f, i, e) {
		if (!json_is_object(e))
			return (jerr(p, "intel_pt.filters.", "", "entry %zu: "
			    "expected an object, got %s", i, tyname(e)));
		junknown(p, e, "intel_pt.filters.", kf);
		if ((rc = jint(p, e, "intel_pt.filters.", "cfg", 0, 2,
		    &v)) < 0)
			return (rc);
		c->filter[i].cfg = (uint32_t)v;
		if ((rc = jhexv(p, e, "intel_pt.filters.", "a", &c->filter[i].a)) < 0 ||
		    (rc = jhexv(p, e, "intel_pt.filters.", "b", &c->filter[i].b)) < 0)
			return (rc);
	}
	c->nfilters = (uint32_t)json_array_size(f);
	return (0);
}

static int
parse_cs(struct jp *p, json_t *cs, struct hwtr_cs_config *c)
{
	static const char *const k[] = { "frame", "sources", NULL };
	static const char *const ks[] = { "protocol", "trace_id", "core",
	    "regs", NULL };
	static const char *const kr[] = { "name", "value", NULL };
	struct hwtr_cs_source *srcs;
	struct hwtr_reg *regs;
	json_t *a, *e, *ra, *re;
	const char *s;
	int64_t v;
	size_t i, j;
	int rc, x;

	junknown(p, cs, "coresight.", k);
	if ((rc = jstr(p, cs, "coresight.", "frame", 0, &s)) < 0)
		return (rc);
	if ((x = lookup(framename, HWTR_NELEM(framename), s)) < 0)
		return (jerr(p, "coresight.", "frame", "unknown framing '%s'", s));
	c->frame = (enum hwtr_cs_frame)x;
	if ((rc = jobj(p, cs, "coresight.", "sources", JSON_ARRAY, 0, &a)) < 0)
		return (rc);
	if (json_array_size(a) > 256)
		return (jerr(p, "coresight.", "sources", "%zu sources (at most 256)",
		    json_array_size(a)));
	srcs = hwtr_pool_alloc(p->pool, (json_array_size(a) + 1) * sizeof(*srcs));
	if (srcs == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(a, i, e) {
		if (!json_is_object(e))
			return (jerr(p, "coresight.sources.", "", "entry %zu: "
			    "expected an object, got %s", i, tyname(e)));
		junknown(p, e, "coresight.sources.", ks);
		if ((rc = jstr(p, e, "coresight.sources.", "protocol", 0, &s)) < 0)
			return (rc);
		if ((x = lookup(tfname, HWTR_NELEM(tfname), s)) < 0)
			return (jerr(p, "coresight.sources.", "protocol",
			    "unknown protocol '%s'", s));
		srcs[i].protocol = (enum hwtr_trace_format)x;
		if ((rc = jint(p, e, "coresight.sources.", "trace_id", 0, 127,
		    &v)) < 0)
			return (rc);
		srcs[i].trace_id = (uint8_t)v;
		if ((rc = jstr(p, e, "coresight.sources.", "core", 1,
		    &srcs[i].core)) < 0)
			return (rc);
		if ((rc = jobj(p, e, "coresight.sources.", "regs", JSON_ARRAY, 0,
		    &ra)) < 0)
			return (rc);
		if (json_array_size(ra) > 4096)
			return (jerr(p, "coresight.sources.", "regs",
			    "%zu registers (at most 4096)", json_array_size(ra)));
		regs = hwtr_pool_alloc(p->pool,
		    (json_array_size(ra) + 1) * sizeof(*regs));
		if (regs == NULL)
			return (-HWTR_E_NOMEM);
		json_array_foreach(ra, j, re) {
			if (!json_is_object(re))
				return (jerr(p, "coresight.sources.regs.", "",
				    "entry %zu: expected an object, got %s", j,
				    tyname(re)));
			junknown(p, re, "coresight.sources.regs.", kr);
			if ((rc = jstr(p, re, "coresight.sources.regs.", "name", 0,
			    &regs[j].name)) < 0 ||
			    (rc = jhexv(p, re, "coresight.sources.regs.", "value",
			    &regs[j].value)) < 0)
				return (rc);
		}
		srcs[i].regs = regs;
		srcs[i].nregs = json_array_size(ra);
	}
	c->sources = srcs;
	c->nsources = json_array_size(a);
	return (0);
}

int
hwtr_json_parse_stream(const char *member, const void *buf, size_t len,
    struct hwtr_stream_desc *d, struct hwtr_pool *pool,
    struct hwtr_warnings *w, char *err, size_t errlen)
{
	static const char *const known[] = { "id", "name", "format", "pid",
	    "tid", "cpu", "intel_pt", "coresight", NULL };
	struct jp p = { member, err, errlen, pool, w };
	json_t *root, *sub;
	const char *s;
	int64_t v;
	int rc, x;

	memset(d, 0, sizeof(*d));
	if ((rc = jload(&p, buf, len, known, &root)) < 0)
		return (rc);
	TRY(jint(&p, root, "", "id", 0, UINT32_MAX - 1, &v));
	d->id = (uint32_t)v;
	TRY(jstr(&p, root, "", "name", 0, &d->name));
	TRY(jint(&p, root, "", "pid", -1, INT32_MAX, &v));
	d->pid = (int32_t)v;
	TRY(jint(&p, root, "", "tid", -1, INT32_MAX, &v));
	d->tid = (int32_t)v;
	TRY(jint(&p, root, "", "cpu", -1, INT32_MAX, &v));
	d->cpu = (int32_t)v;
	TRY(jstr(&p, root, "", "format", 0, &s));
	if ((x = lookup(tfname, HWTR_NELEM(tfname), s)) < 0) {
		/* A later minor version may add trace formats. */
		hwtr_warn(w, "%s: unknown trace format '%s' read as none",
		    member, s);
		x = HWTR_TF_NONE;
	}
	d->format = (enum hwtr_trace_format)x;
	if (d->format == HWTR_TF_INTEL_PT) {
		TRY(jobj(&p, root, "", "intel_pt", JSON_OBJECT, 0, &sub));
		TRY(parse_pt(&p, sub, &d->pt));
	} else if (d->format != HWTR_TF_NONE) {
		TRY(jobj(&p, root, "", "coresight", JSON_OBJECT, 0, &sub));
		TRY(parse_cs(&p, sub, &d->cs));
	}
	rc = 0;
out:
	json_decref(root);
	return (rc);
}

int
hwtr_json_parse_image(const char *member, const void *buf, size_t len,
    struct hwtr_image_desc *d, struct hwtr_pool *pool,
    struct hwtr_warnings *w, char *err, size_t errlen)
{
	static const char *const known[] = { "key", "path", "kind", "build_id",
	    "size", "sha256", NULL };
	struct jp p = { member, err, errlen, pool, w };
	json_t *root;
	const char *s;
	size_t n;
	int64_t v;
	int rc, x;

	memset(d, 0, sizeof(*d));
	if ((rc = jload(&p, buf, len, known, &root)) < 0)
		return (rc);
	TRY(jstr(&p, root, "", "key", 0, &s));
	if (strlen(s) >= sizeof(d->key) || !hwtr_name_ok(s) ||
	    strchr(s, '/') != NULL) {
		rc = jerr(&p, "", "key", "'%.80s' is not an image key", s);
		goto out;
	}
	strcpy(d->key, s);
	TRY(jstr(&p, root, "", "path", 1, &d->path));
	TRY(jstr(&p, root, "", "kind", 0, &s));
	if ((x = lookup(kindname, HWTR_NELEM(kindname), s)) < 0) {
		rc = jerr(&p, "", "kind", "unknown image kind '%s'", s);
		goto out;
	}
	d->kind = (enum hwtr_image_kind)x;
	TRY(jstr(&p, root, "", "build_id", 0, &s));
	if (hwtr_unhex(s, d->build_id, HWTR_BUILD_ID_MAX, &d->build_id_len) < 0) {
		rc = jerr(&p, "", "build_id", "not lowercase hex of at most "
		    "64 bytes");
		goto out;
	}
	TRY(jint(&p, root, "", "size", 0, INT64_MAX, &v));
	d->size = (uint64_t)v;
	TRY(jstr(&p, root, "", "sha256", 0, &s));
	if (hwtr_unhex(s, d->sha256, 32, &n) < 0 || n != 32) {
		rc = jerr(&p, "", "sha256", "not 64 lowercase hex digits");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return (rc);
}

int
hwtr_json_parse_end(const char *member, const void *buf, size_t len,
    struct hwtr_capture_end *e, struct hwtr_toc_ent **tocp, size_t *ntocp,
    uint64_t max_entries, struct hwtr_pool *pool, struct hwtr_warnings *w,
    char *err, size_t errlen)
{
	static const char *const known[] = { "end_ns", "exit", "lost_bytes",
	    "lost_records", "members", NULL };
	static const char *const kx[] = { "kind", "value", NULL };
	static const char *const km[] = { "name", "offset", "csize", "usize",
	    "size", "sha256", NULL };
	struct jp p = { member, err, errlen, pool, w };
	struct hwtr_toc_ent *toc;
	json_t *root, *x, *a, *m, *sv;
	const char *s;
	size_t i, n;
	int64_t v;
	int rc, k;

	memset(e, 0, sizeof(*e));
	*tocp = NULL;
	*ntocp = 0;
	if ((rc = jload(&p, buf, len, known, &root)) < 0)
		return (rc);
	TRY(jint(&p, root, "", "end_ns", INT64_MIN, INT64_MAX, &e->end_ns));
	TRY(jobj(&p, root, "", "exit", JSON_OBJECT, 0, &x));
	junknown(&p, x, "exit.", kx);
	TRY(jstr(&p, x, "exit.", "kind", 0, &s));
	if ((k = lookup(exitname, HWTR_NELEM(exitname), s)) < 0) {
		rc = jerr(&p, "exit.", "kind", "unknown exit kind '%s'", s);
		goto out;
	}
	e->exit_kind = (enum hwtr_exit_kind)k;
	TRY(jint(&p, x, "exit.", "value", INT32_MIN, INT32_MAX, &v));
	e->exit_value = (int)v;
	TRY(jint(&p, root, "", "lost_bytes", 0, INT64_MAX, &v));
	e->lost_bytes = (uint64_t)v;
	TRY(jint(&p, root, "", "lost_records", 0, INT64_MAX, &v));
	e->lost_records = (uint64_t)v;
	TRY(jobj(&p, root, "", "members", JSON_ARRAY, 0, &a));
	n = json_array_size(a);
	if (n > max_entries) {
		(void)jerr(&p, "", "members", "%zu entries (limit %ju)", n,
		    (uintmax_t)max_entries);
		rc = -HWTR_E_LIMIT;
		goto out;
	}
	if ((toc = hwtr_pool_alloc(pool, (n + 1) * sizeof(*toc))) == NULL) {
		rc = -HWTR_E_NOMEM;
		goto out;
	}
	json_array_foreach(a, i, m) {
		if (!json_is_object(m)) {
			rc = jerr(&p, "members.", "", "entry %zu: expected an "
			    "object, got %s", i, tyname(m));
			goto out;
		}
		junknown(&p, m, "members.", km);
		TRY(jstr(&p, m, "members.", "name", 0, &toc[i].name));
		TRY(jint(&p, m, "members.", "offset", 0, INT64_MAX, &v));
		toc[i].offset = (uint64_t)v;
		TRY(jint(&p, m, "members.", "csize", 1, INT64_MAX, &v));
		toc[i].csize = (uint64_t)v;
		TRY(jint(&p, m, "members.", "usize", 512, INT64_MAX, &v));
		toc[i].usize = (uint64_t)v;
		TRY(jint(&p, m, "members.", "size", 0, INT64_MAX, &v));
		toc[i].size = (uint64_t)v;
		if ((sv = json_object_get(m, "sha256")) != NULL) {
			if (!json_is_string(sv) || hwtr_unhex(json_string_value(sv),
			    toc[i].sha256, 32, &n) < 0 || n != 32) {
				rc = jerr(&p, "members.", "sha256", "entry %zu: "
				    "not 64 lowercase hex digits", i);
				goto out;
			}
			toc[i].has_sha256 = 1;
		}
	}
	*tocp = toc;
	*ntocp = json_array_size(a);
	rc = 0;
out:
	json_decref(root);
	return (rc);
}
