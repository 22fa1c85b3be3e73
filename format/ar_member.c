/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive reader's member table: member names and their hash, and the
 * table of member kinds that takes each member into the reader's view
 * (how much of it is read into memory and which parser gets it).
 */

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ar_int.h"
#include "hwtr_jit.h"

/* ---- member table -------------------------------------------------------- */

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return (h);
}

int
ar_hash_find(const struct hwtr_ar *ar, const char *name, size_t *ip)
{
	size_t i, mask;
	uint32_t v;

	if (ar->hashcap == 0)
		return (0);
	mask = ar->hashcap - 1;
	for (i = name_hash(name) & mask; (v = ar->hash[i]) != 0;
	    i = (i + 1) & mask)
		if (strcmp(ar->m[v - 1].info.name, name) == 0) {
			*ip = v - 1;
			return (1);
		}
	return (0);
}

static int
hash_insert(struct hwtr_ar *ar, size_t idx)
{
	uint32_t *nh;
	size_t i, j, mask, ncap;

	if (2 * (ar->nm + 1) > ar->hashcap) {
		ncap = ar->hashcap ? 2 * ar->hashcap : 256;
		if ((nh = calloc(ncap, sizeof(*nh))) == NULL)
			return (-HWTR_E_NOMEM);
		for (j = 0; j < ar->hashcap; j++) {
			if (ar->hash[j] == 0)
				continue;
			for (i = name_hash(ar->m[ar->hash[j] - 1].info.name) &
			    (ncap - 1); nh[i] != 0; i = (i + 1) & (ncap - 1))
				;
			nh[i] = ar->hash[j];
		}
		free(ar->hash);
		ar->hash = nh;
		ar->hashcap = ncap;
	}
	mask = ar->hashcap - 1;
	for (i = name_hash(ar->m[idx].info.name) & mask; ar->hash[i] != 0;
	    i = (i + 1) & mask)
		;
	ar->hash[i] = (uint32_t)idx + 1;
	return (0);
}

static int
all_digits(const char *s, size_t n, int hex)
{
	size_t i;

	if (n == 0)
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (hex && s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

/*
 * The kind of a member from its name (hwtrace(5) MEMBERS).  For stream
 * members *idp receives the stream id; for chunks *offp the stream offset.
 */
static enum hwtr_member_kind
classify(const char *name, uint32_t *idp, uint64_t *offp)
{
	const char *p, *slash;
	unsigned long long v;
	size_t n;

	if (strcmp(name, HWTR_MANIFEST_NAME) == 0)
		return (HWTR_M_MANIFEST);
	if (strcmp(name, HWTR_END_NAME) == 0)
		return (HWTR_M_END);
	if (strncmp(name, "aux/", 4) == 0)
		return (HWTR_M_AUX);
	if (strncmp(name, HWTR_JIT_PREFIX, 4) == 0)
		return (hwtr_jit_name_ok(name + 4) ? HWTR_M_JIT :
		    hwtr_code_name_ok(name + 4, NULL) ? HWTR_M_CODE :
		    HWTR_M_UNKNOWN);
	if (strncmp(name, "sideband/", 9) == 0) {
		p = name + 9;
		n = strlen(p);
		if (n > 3 && strcmp(p + n - 3, ".sb") == 0 &&
		    all_digits(p, n - 3, 0))
			return (HWTR_M_SIDEBAND);
		return (HWTR_M_UNKNOWN);
	}
	if (strncmp(name, "images/", 7) == 0) {
		p = name + 7;
		if (strchr(p, '/') != NULL)
			return (HWTR_M_UNKNOWN);
		n = strlen(p);
		if (n > 5 && strcmp(p + n - 5, ".json") == 0)
			return (n - 5 < HWTR_IMAGE_KEY_MAX ? HWTR_M_IMAGE_DESC :
			    HWTR_M_UNKNOWN);
		return (n < HWTR_IMAGE_KEY_MAX && strchr(p, '.') == NULL ?
		    HWTR_M_IMAGE : HWTR_M_UNKNOWN);
	}
	if (strncmp(name, "streams/", 8) == 0) {
		p = name + 8;
		if ((slash = strchr(p, '/')) == NULL ||
		    !all_digits(p, (size_t)(slash - p), 0) || slash - p > 10 ||
		    (slash - p > 1 && p[0] == '0'))
			return (HWTR_M_UNKNOWN);
		v = strtoull(p, NULL, 10);
		if (v >= UINT32_MAX)
			return (HWTR_M_UNKNOWN);
		*idp = (uint32_t)v;
		p = slash + 1;
		if (strcmp(p, "stream.json") == 0)
			return (HWTR_M_STREAM_DESC);
		if (strlen(p) == 22 && strcmp(p + 16, ".chunk") == 0 &&
		    all_digits(p, 16, 1)) {
			*offp = strtoull(p, NULL, 16);
			return (HWTR_M_CHUNK);
		}
	}
	return (HWTR_M_UNKNOWN);
}

/*
 * A name under streams/ that classify() did not take but that claims to be
 * a stream's: a stream directory that is not a canonical decimal id ("00",
 * "+1", "4294967295"), or a chunk name whose offset is not 16 lowercase hex
 * digits.  Refused rather than skipped: a reader that skipped it would see
 * a stream without the data the writer meant it to have.
 */
static int
stream_name_bad(const char *name)
{
	const char *p, *slash;
	size_t n;

	if (strncmp(name, "streams/", 8) != 0)
		return (0);
	p = name + 8;
	if ((slash = strchr(p, '/')) == NULL)
		return (1);
	n = (size_t)(slash - p);
	if (!all_digits(p, n, 0) || n > 10 || (n > 1 && p[0] == '0') ||
	    strtoull(p, NULL, 10) >= UINT32_MAX)
		return (1);
	p = slash + 1;
	n = strlen(p);
	return (n >= 6 && strcmp(p + n - 6, ".chunk") == 0);
}


/* ---- member processing ---------------------------------------------------- */

/* Lookups go through the member names' hash: no quadratic cases. */
static struct ar_stream *
stream_by_id(struct hwtr_ar *ar, uint32_t id)
{
	char name[64];
	size_t i;

	snprintf(name, sizeof(name), "streams/%u/stream.json", id);
	if (!ar_hash_find(ar, name, &i) || ar->m[i].obj == 0)
		return (NULL);
	return (&ar->s[ar->m[i].obj - 1]);
}

int
ar_image_index(const struct hwtr_ar *ar, const char *key)
{
	char name[HWTR_IMAGE_KEY_MAX + 16];
	size_t i;

	if (strlen(key) >= HWTR_IMAGE_KEY_MAX)
		return (-1);
	snprintf(name, sizeof(name), "images/%s", key);
	if (!ar_hash_find(ar, name, &i) || ar->m[i].obj == 0 ||
	    ar->m[i].info.kind != HWTR_M_IMAGE)
		return (-1);
	return ((int)(ar->m[i].obj - 1));
}

static int
do_sideband(struct hwtr_ar *ar, const struct ar_member *m, const uint8_t *p,
    size_t len)
{
	struct hwtr_sb_rec rec, *n;
	char why[HWTR_ERRMSG_MAX];
	size_t off = 0, used, extra, cap;
	int rc;

	while (off < len) {
		rc = hwtr_sb_decode(p + off, len - off, &rec, &ar->pool, &used,
		    &extra, why, sizeof(why));
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		if (rc < 0)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: %s", m->info.name, off, why));
		off += used;
		if (rc == 0) {
			unsigned t = (unsigned)rec.type & 0xffff;

			if (!(ar->sb_unknown[t / 8] & (1u << (t % 8)))) {
				ar->sb_unknown[t / 8] |= (uint8_t)(1u << (t % 8));
				hwtr_warn(&ar->warn, "%s: sideband records of "
				    "unknown type %u skipped", m->info.name, t);
			}
			continue;
		}
		if (extra > 0 && !ar->sb_extra[rec.type]) {
			ar->sb_extra[rec.type] = 1;
			hwtr_warn(&ar->warn, "%s: %s records carry fields this "
			    "reader does not know (skipped)", m->info.name,
			    hwtr_sb_type_name(rec.type));
		}
		/* References point backwards (hwtrace(5)): check them now. */
		if ((rec.type == HWTR_SB_LOST && rec.u.lost.stream !=
		    UINT32_MAX && stream_by_id(ar, rec.u.lost.stream) == NULL) ||
		    (rec.type == HWTR_SB_BUFPOS &&
		    stream_by_id(ar, rec.u.bufpos.stream) == NULL))
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: %s record names stream %u, which does not "
			    "exist", m->info.name, off - used,
			    hwtr_sb_type_name(rec.type), rec.type ==
			    HWTR_SB_LOST ? rec.u.lost.stream :
			    rec.u.bufpos.stream));
		if (rec.type == HWTR_SB_MMAP && rec.u.mmap.image != NULL &&
		    ar_image_index(ar, rec.u.mmap.image) < 0)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: mmap record names image '%s', which does "
			    "not exist", m->info.name, off - used,
			    rec.u.mmap.image));
		if (ar->nsb >= ar->opts.max_sideband)
			return (ar_err(ar, HWTR_E_LIMIT, "member '%s': more than "
			    "%ju sideband records", m->info.name,
			    (uintmax_t)ar->opts.max_sideband));
		if (ar->nsb == ar->sbcap) {
			cap = ar->sbcap ? 2 * ar->sbcap : 256;
			if ((n = realloc(ar->sb, cap * sizeof(*n))) == NULL)
				return (-HWTR_E_NOMEM);
			ar->sb = n;
			ar->sbcap = cap;
		}
		ar->sb[ar->nsb++] = rec;
	}
	return (0);
}

/*
 * What a kind's functions are given: the member, its index, what its name
 * says (stream id, chunk offset) and, for kinds read into memory, its data.
 */
struct mk_arg {
	struct ar_member *m;
	size_t		idx;
	uint32_t	id;
	uint64_t	coff;
	void		*buf;
	size_t		len;
};

static int
mk_manifest_check(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;

	if (a->idx != 0)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
		    "only the first member may be the manifest",
		    m->info.name, (uintmax_t)m->info.offset));
	return (0);
}

static int
mk_manifest(struct hwtr_ar *ar, struct mk_arg *a)
{
	uint32_t major, minor;
	int rc;

	rc = hwtr_json_parse_meta(a->m->info.name, a->buf, a->len, &ar->meta,
	    &major, &minor, &ar->pool, &ar->warn, ar->errmsg,
	    sizeof(ar->errmsg));
	ar->st.version_major = major;
	ar->st.version_minor = minor;
	if (rc == 0)
		ar->have_meta = 1;
	return (rc);
}

static int
mk_stream_desc(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;
	struct ar_stream *s;
	int rc;

	if ((rc = hwtr_grow(&ar->s, &ar->scap, ar->ns + 1,
	    sizeof(*ar->s))) < 0)
		return (rc);
	s = &ar->s[ar->ns];
	memset(s, 0, sizeof(*s));
	rc = hwtr_json_parse_stream(m->info.name, a->buf, a->len, &s->d,
	    &ar->pool, &ar->warn, ar->errmsg, sizeof(ar->errmsg));
	if (rc == 0 && s->d.id != a->id)
		rc = ar_err(ar, HWTR_E_FORMAT, "%s: field 'id' is %u, "
		    "the member name says %u", m->info.name, s->d.id,
		    a->id);
	if (rc == 0)
		m->obj = ++ar->ns;
	return (rc);
}

static int
mk_chunk(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;
	struct hwtr_chunk_info *nc;
	struct ar_stream *s;
	uint64_t coff = a->coff;
	size_t cap;

	if (m->size > HWTR_CHUNK_MAX)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s': a chunk "
		    "of %ju bytes (writers split chunks at %u)",
		    m->info.name, (uintmax_t)m->size, HWTR_CHUNK_MAX));
	if ((s = stream_by_id(ar, a->id)) == NULL)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': stream %u "
		    "has no stream.json before it", m->info.name, a->id));
	if (coff < s->next)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': stream "
		    "offset 0x%jx goes back before 0x%jx",
		    m->info.name, (uintmax_t)coff, (uintmax_t)s->next));
	if (m->size > UINT64_MAX - coff)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': chunk "
		    "overflows the stream offset", m->info.name));
	if (s->nchunks == s->cap) {
		cap = s->cap ? 2 * s->cap : 16;
		if ((nc = realloc(s->chunks, cap * sizeof(*nc))) == NULL)
			return (-HWTR_E_NOMEM);
		s->chunks = nc;
		s->cap = cap;
	}
	s->chunks[s->nchunks].member = a->idx;
	s->chunks[s->nchunks].offset = coff;
	s->chunks[s->nchunks].len = m->size;
	s->nchunks++;
	s->next = coff + m->size;
	return (0);
}

static int
mk_image_desc(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;
	struct hwtr_image_desc d;
	const char *key;
	int rc;

	rc = hwtr_json_parse_image(m->info.name, a->buf, a->len, &d, &ar->pool,
	    &ar->warn, ar->errmsg, sizeof(ar->errmsg));
	if (rc < 0)
		return (rc);
	key = m->info.name + 7;
	if (strncmp(key, d.key, strlen(d.key)) != 0 ||
	    strcmp(key + strlen(d.key), ".json") != 0)
		return (ar_err(ar, HWTR_E_FORMAT, "%s: field 'key' is '%s', "
		    "the member name says otherwise", m->info.name,
		    d.key));
	if ((rc = hwtr_grow(&ar->pending, &ar->pcap, ar->npending + 1,
	    sizeof(*ar->pending))) < 0)
		return (rc);
	ar->pending[ar->npending].d = d;
	ar->pending[ar->npending].used = 0;
	m->obj = ++ar->npending;
	return (0);
}

static int
mk_image(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;
	char dname[HWTR_NAME_MAX + 8];
	struct ar_pending *pd;
	size_t i;

	snprintf(dname, sizeof(dname), "%s.json", m->info.name);
	if (!ar_hash_find(ar, dname, &i) || ar->m[i].obj == 0 ||
	    ar->m[i].info.kind != HWTR_M_IMAGE_DESC)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': image "
		    "without a description before it", m->info.name));
	pd = &ar->pending[ar->m[i].obj - 1];
	if (pd->d.size != m->size)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': %ju bytes, "
		    "its description says %ju", m->info.name,
		    (uintmax_t)m->size, (uintmax_t)pd->d.size));
	if (hwtr_grow(&ar->img, &ar->icap, ar->ni + 1, sizeof(*ar->img)) < 0)
		return (-HWTR_E_NOMEM);
	ar->img[ar->ni].d = pd->d;
	ar->img[ar->ni].member = a->idx;
	pd->used = 1;
	m->obj = ++ar->ni;
	return (0);
}

/* Writers flush at 1 MiB; anything far bigger is absurd. */
static int
mk_sideband_check(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;

	if (m->size > SB_TOTAL_LIMIT - ar->sb_bytes)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s': more than "
		    "%u bytes of sideband in all", m->info.name,
		    SB_TOTAL_LIMIT));
	ar->sb_bytes += m->size;
	return (0);
}

static int
mk_sideband(struct hwtr_ar *ar, struct mk_arg *a)
{
	return (do_sideband(ar, a->m, a->buf, a->len));
}

static int
mk_aux(struct hwtr_ar *ar, struct mk_arg *a)
{
	return (0);
}

/* A member checked whole by its parser: @rc, and @why when it failed. */
static int
mk_checked(struct hwtr_ar *ar, int rc, const char *why)
{
	if (rc == -HWTR_E_NOMEM)
		return (rc);
	if (rc < 0)
		return (ar_err(ar, -rc, "member %s", why));
	return (0);
}

/*
 * A JIT symbol file: checked whole when the archive opens, so that the
 * verbs that read it later (hwtr_jit_parse()) meet no surprise.
 */
static int
mk_jit(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct hwtr_jit_list l;
	char why[HWTR_ERRMSG_MAX];
	int rc;

	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, a->m->info.name, a->buf, a->len, why,
	    sizeof(why));
	hwtr_jit_list_free(&l);
	return (mk_checked(ar, rc, why));
}

/* Code regions: checked whole when the archive opens, as JIT symbols. */
static int
mk_code(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct hwtr_code_list l;
	char why[HWTR_ERRMSG_MAX];
	int rc;

	memset(&l, 0, sizeof(l));
	rc = hwtr_code_parse(&l, a->m->info.name, a->buf, a->len, why,
	    sizeof(why));
	hwtr_code_list_free(&l);
	return (mk_checked(ar, rc, why));
}

static int
mk_end(struct hwtr_ar *ar, struct mk_arg *a)
{
	int rc;

	rc = hwtr_json_parse_end(a->m->info.name, a->buf, a->len, &ar->end,
	    &ar->toc, &ar->ntoc, ar->opts.max_members, &ar->pool,
	    &ar->warn, ar->errmsg, sizeof(ar->errmsg));
	if (rc == 0)
		ar->have_end = 1;
	return (rc);
}

static int
mk_unknown(struct hwtr_ar *ar, struct mk_arg *a)
{
	struct ar_member *m = a->m;

	if (stream_name_bad(m->info.name))
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
		    "not a stream member name (streams/ID/stream.json "
		    "or streams/ID/OFFSET.chunk, ID in decimal without "
		    "leading zeros, OFFSET in 16 lowercase hex digits)",
		    m->info.name, (uintmax_t)m->info.offset));
	hwtr_warn(&ar->warn, "unknown member '%s' skipped", m->info.name);
	return (0);
}

/*
 * The member kinds (hwtrace(5) MEMBERS).  @check runs first, on the
 * member's header only; then a kind with a @limit has its data read whole
 * into memory, at most that many bytes, and handed to @parse; a kind
 * without one (0) has @parse look at its header only.  A kind not in the
 * table is taken by its last row, HWTR_M_UNKNOWN.
 */
static const struct member_kind {
	enum hwtr_member_kind kind;
	uint64_t	limit;
	int		(*check)(struct hwtr_ar *, struct mk_arg *);
	int		(*parse)(struct hwtr_ar *, struct mk_arg *);
} member_kinds[] = {
	{ HWTR_M_MANIFEST,	JSON_MAX,	mk_manifest_check, mk_manifest },
	{ HWTR_M_STREAM_DESC,	JSON_MAX,	NULL,	mk_stream_desc },
	{ HWTR_M_CHUNK,		0,		NULL,	mk_chunk },
	{ HWTR_M_IMAGE_DESC,	JSON_MAX,	NULL,	mk_image_desc },
	{ HWTR_M_IMAGE,		0,		NULL,	mk_image },
	{ HWTR_M_SIDEBAND,	SB_MEMBER_LIMIT, mk_sideband_check, mk_sideband },
	{ HWTR_M_AUX,		0,		NULL,	mk_aux },
	{ HWTR_M_END,		JSON_MAX,	NULL,	mk_end },
	{ HWTR_M_JIT,		HWTR_AR_MEM_MAX, NULL,	mk_jit },
	{ HWTR_M_CODE,		HWTR_AR_MEM_MAX, NULL,	mk_code },
	{ HWTR_M_UNKNOWN,	0,		NULL,	mk_unknown },
};

static const struct member_kind *
member_kind(enum hwtr_member_kind kind)
{
	size_t i;

	for (i = 0; i < HWTR_NELEM(member_kinds) - 1; i++)
		if (member_kinds[i].kind == kind)
			break;
	return (&member_kinds[i]);
}

/*
 * Take member @idx (already in ar->m) into the reader's view: parse what
 * needs parsing, check cross-references.  Members come in file order.
 */
int
ar_process_member(struct hwtr_ar *ar, size_t idx)
{
	const struct member_kind *k;
	struct mk_arg a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.m = &ar->m[idx];
	a.idx = idx;
	a.m->info.kind = classify(a.m->info.name, &a.id, &a.coff);
	if (idx == 0 && a.m->info.kind != HWTR_M_MANIFEST)
		return (ar_err(ar, HWTR_E_FORMAT, "not an hwtrace archive: the "
		    "first member is '%s', not '%s'", a.m->info.name,
		    HWTR_MANIFEST_NAME));
	k = member_kind(a.m->info.kind);
	assert(k->kind == a.m->info.kind || k->kind == HWTR_M_UNKNOWN);
	if (k->check != NULL && (rc = k->check(ar, &a)) < 0)
		return (rc);
	/* Not read: its parser's errors already carry their message. */
	if (k->limit == 0)
		return (k->parse(ar, &a));
	if ((rc = ar_read_member_alloc(ar, a.m, k->limit, &a.buf,
	    &a.len)) < 0)
		return (rc);
	rc = k->parse(ar, &a);
	free(a.buf);
	if (rc == -HWTR_E_NOMEM)
		return (ar_err(ar, HWTR_E_NOMEM, "out of memory"));
	return (rc);
}

/*
 * Add a member to the table after checking what a hostile file could get
 * wrong: duplicate names, counts, sizes, ratio.
 */
int
ar_add_member(struct hwtr_ar *ar, const char *name, uint64_t off, uint64_t csize,
    uint64_t usize, uint64_t size, size_t *idxp)
{
	struct ar_member *nm, *m;
	size_t i, cap;
	uint64_t padded;

	if (ar_hash_find(ar, name, &i))
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
		    "duplicate name (first at 0x%jx)", name, (uintmax_t)off,
		    (uintmax_t)ar->m[i].info.offset));
	if (ar->nm >= ar->opts.max_members)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at 0x%jx: more "
		    "than %ju members", name, (uintmax_t)off,
		    (uintmax_t)ar->opts.max_members));
	if (size > ar->opts.max_member_size)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at 0x%jx: %ju "
		    "bytes (limit %ju)", name, (uintmax_t)off, (uintmax_t)size,
		    (uintmax_t)ar->opts.max_member_size));
	padded = (size + 511) & ~(uint64_t)511;
	if (usize < padded + 512 || usize - padded > HDR_PREFIX ||
	    (usize - padded) % 512 != 0)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: frame "
		    "content of %ju bytes does not fit %ju data bytes",
		    name, (uintmax_t)off, (uintmax_t)usize, (uintmax_t)size));
	/*
	 * Frames that expand more than max_ratio times (a 16 MiB array of
	 * zeros in a small program's .data does) share one allowance, so
	 * that what a hostile archive makes us inflate stays bounded by
	 * its size times the ratio plus the allowance.
	 */
	if (usize / csize > ar->opts.max_ratio) {
		if (usize > ar->opts.ratio_allowance - ar->ratio_used)
			return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at "
			    "0x%jx: %ju bytes from %ju compressed exceeds the "
			    "ratio limit %ju, beyond the %ju bytes allowed in "
			    "all", name, (uintmax_t)off, (uintmax_t)usize,
			    (uintmax_t)csize, (uintmax_t)ar->opts.max_ratio,
			    (uintmax_t)ar->opts.ratio_allowance));
		ar->ratio_used += usize;
	}
	if (ar->nm == ar->mcap) {
		cap = ar->mcap ? 2 * ar->mcap : 64;
		if ((nm = realloc(ar->m, cap * sizeof(*nm))) == NULL)
			return (-HWTR_E_NOMEM);
		ar->m = nm;
		ar->mcap = cap;
	}
	m = &ar->m[ar->nm];
	memset(m, 0, sizeof(*m));
	if ((m->info.name = hwtr_pool_strdup(&ar->pool, name)) == NULL)
		return (-HWTR_E_NOMEM);
	m->info.offset = off;
	m->info.csize = csize;
	m->info.usize = usize;
	m->size = size;
	m->hdr_len = usize - padded;
	if (hash_insert(ar, ar->nm) < 0)
		return (-HWTR_E_NOMEM);
	*idxp = ar->nm++;
	return (0);
}
