/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Code that lives in no file (issue 32, ix_jit.h): the archive's code
 * regions (jit/code-PID.bin) and JIT symbol files (jit/perf-PID.map,
 * jit/jit-PID.dump) become, per process, one image of the indexer's own,
 * "[jit]", after the archive's images.  Its file (in the run's temporary
 * directory, as libipt's section cache maps files) holds every region's
 * bytes one after the other; each region is a mapping of that file at
 * its address from its time "from" to its time "until", so that both
 * decoders take the bytes valid at each time exactly as they take a file
 * mapping's image from its mmap on.  Its symbols are the JIT files'
 * symbols at their run-time addresses (the image's bias is 0); code no
 * symbol names is "[anon]+0xOFF" (ix_jit_anon_name()).
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_jit.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_jit.h"

/* A symbol and when it names its code. */
struct jit_sym {
	struct ix_sym	s;
	uint64_t	from, until;
	size_t		seq;		/* order read: the later wins a tie */
};

/* What one process has: its regions and its symbols. */
struct jit_proc {
	int32_t		pid;
	struct hwtr_code_list code;
	struct jit_sym	*syms;
	size_t		nsyms, csyms;
};

struct jit_all {
	struct jit_proc	*v;
	size_t		n, cap;
	void		**bufs;		/* members read, which lists point into */
	size_t		nbufs, cbufs;
};

static struct jit_proc *
proc_of(struct jit_all *a, int32_t pid)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->v[i].pid == pid)
			return (&a->v[i]);
	if (hwtr_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)) < 0)
		return (NULL);
	memset(&a->v[a->n], 0, sizeof(a->v[a->n]));
	a->v[a->n].pid = pid;
	return (&a->v[a->n++]);
}

/* The PID in a member's base name after @prefix ("perf-", "jit-", "code-"). */
static int32_t
pid_of(const char *base, const char *prefix)
{
	size_t n = strlen(prefix);
	unsigned long v;
	char *end;

	if (strncmp(base, prefix, n) != 0)
		return (-1);
	errno = 0;
	v = strtoul(base + n, &end, 10);
	if (errno != 0 || end == base + n || v > INT32_MAX)
		return (-1);
	return ((int32_t)v);
}

static int
add_syms(struct jit_proc *p, const struct hwtr_jit_list *l, int dump)
{
	struct ix_sym *s;
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct hwtr_jit_sym *j = &l->v[i];

		if (hwtr_grow((void **)&p->syms, &p->csyms, p->nsyms + 1,
		    sizeof(*p->syms)) < 0)
			return (-HWTR_E_NOMEM);
		memset(&p->syms[p->nsyms], 0, sizeof(p->syms[p->nsyms]));
		p->syms[p->nsyms].from = j->timestamp;
		p->syms[p->nsyms].until = j->until;
		p->syms[p->nsyms].seq = p->nsyms;
		s = &p->syms[p->nsyms].s;
		if ((s->name = strdup(j->name != NULL ? j->name : "?")) ==
		    NULL)
			return (-HWTR_E_NOMEM);
		s->addr = j->start;
		s->size = j->size;
		s->kind = "func";
		s->bind = "global";
		s->origin = dump ? "jitdump" : "perf-map";
		s->code = 1;
		/* A size 0 (or one past the top) names its first byte. */
		if (j->size == 0 || j->start + j->size < j->start) {
			s->size = 0;
			s->reach = j->start + 1;
		} else
			s->reach = j->start + j->size;
		s->sec_end = s->reach;
		p->nsyms++;
	}
	return (0);
}

/* One jit/ member: its regions or its symbols into @a. */
static int
read_member(struct ix_images *im, struct jit_all *a, size_t i)
{
	const struct hwtr_member_info *mi = hwtr_ar_member(im->ar, i);
	const char *base = mi->name + strlen(HWTR_JIT_PREFIX);
	struct hwtr_jit_list l;
	struct jit_proc *p;
	void *buf = NULL;
	size_t len = 0;
	int32_t pid;
	char err[HWTR_ERRMSG_MAX];
	int rc;

	pid = mi->kind == HWTR_M_CODE ? pid_of(base, "code-") :
	    pid_of(base, "perf-") >= 0 ? pid_of(base, "perf-") :
	    pid_of(base, "jit-");
	if (pid < 0)
		return (0);
	if (hwtr_ar_read_member(im->ar, i, &buf, &len) < 0) {
		ix_problem(im->ix, "member '%s': cannot be read: %s", mi->name,
		    hwtr_ar_errmsg(im->ar));
		return (0);
	}
	if (hwtr_grow((void **)&a->bufs, &a->cbufs, a->nbufs + 1,
	    sizeof(*a->bufs)) < 0) {
		free(buf);
		return (-HWTR_E_NOMEM);
	}
	a->bufs[a->nbufs++] = buf;
	if ((p = proc_of(a, pid)) == NULL)
		return (-HWTR_E_NOMEM);
	if (mi->kind == HWTR_M_CODE) {
		rc = hwtr_code_parse(&p->code, mi->name, buf, len, err,
		    sizeof(err));
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		if (rc < 0)
			ix_problem(im->ix, "%s", err);
		return (0);
	}
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse(&l, mi->name, buf, len, err, sizeof(err));
	if (rc == 0)
		rc = add_syms(p, &l, l.dump);
	else if (rc != -HWTR_E_NOMEM) {
		ix_problem(im->ix, "%s", err);
		rc = 0;
	}
	hwtr_jit_list_free(&l);
	return (rc);
}

static int
cmp_sym(const void *x, const void *y)
{
	const struct jit_sym *a = x, *b = y;

	if (a->s.addr != b->s.addr)
		return (a->s.addr < b->s.addr ? -1 : 1);
	if (a->from != b->from)
		return (a->from < b->from ? -1 : 1);
	return (a->seq < b->seq ? -1 : a->seq > b->seq);
}

/*
 * @p's symbols, sorted by address then time, as image @ig's: a symbol
 * ends where a later one at its address begins (a JIT that loads new
 * code at an address frees the old; in a perf map, the later line).
 */
static int
take_syms(struct ix_img *ig, struct jit_proc *p)
{
	size_t i;

	if (p->nsyms == 0)
		return (0);
	qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_sym);
	if ((ig->elf.syms = calloc(p->nsyms, sizeof(*ig->elf.syms))) ==
	    NULL || (ig->jit_t = calloc(2 * p->nsyms,
	    sizeof(*ig->jit_t))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < p->nsyms; i++) {
		if (i + 1 < p->nsyms && p->syms[i + 1].s.addr ==
		    p->syms[i].s.addr && p->syms[i + 1].from < p->syms[i].until)
			p->syms[i].until = p->syms[i + 1].from;
		ig->elf.syms[i] = p->syms[i].s;
		ig->jit_t[2 * i] = p->syms[i].from;
		ig->jit_t[2 * i + 1] = p->syms[i].until;
		p->syms[i].s.name = NULL;	/* the image's now */
		ig->elf.nsyms++;
	}
	return (0);
}

/* Room for one more image in @im (imgs, img_bytes, img_len). */
static int
grow_images(struct ix_images *im)
{
	struct ix_img *ig;
	const uint8_t **b;
	size_t *l;

	if ((ig = realloc(im->imgs, (im->nimgs + 1) * sizeof(*ig))) == NULL)
		return (-HWTR_E_NOMEM);
	im->imgs = ig;
	memset(&im->imgs[im->nimgs], 0, sizeof(*ig));
	if ((b = realloc(im->img_bytes, (im->nimgs + 2) * sizeof(*b))) ==
	    NULL)
		return (-HWTR_E_NOMEM);
	im->img_bytes = b;
	if ((l = realloc(im->img_len, (im->nimgs + 2) * sizeof(*l))) == NULL)
		return (-HWTR_E_NOMEM);
	im->img_len = l;
	im->img_bytes[im->nimgs] = im->img_bytes[im->nimgs + 1] = NULL;
	im->img_len[im->nimgs] = im->img_len[im->nimgs + 1] = 0;
	return (0);
}

static int
write_all(int fd, const uint8_t *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += w;
		n -= (size_t)w;
	}
	return (0);
}

/* Write @p's regions to the image's file and map it back. */
static int
write_file(struct ix_images *im, struct ix_img *ig, const struct jit_proc *p,
    const char *tmpdir)
{
	struct hwtr_sha256 sh;
	size_t i, off = 0;
	void *buf;
	int fd;

	if (asprintf(&ig->file, "%s/jit-%" PRId32, tmpdir, p->pid) < 0) {
		ig->file = NULL;
		return (-HWTR_E_NOMEM);
	}
	if ((fd = open(ig->file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) < 0) {
		ix_err(im->ix, "cannot write '%s': %s", ig->file,
		    strerror(errno));
		return (-HWTR_E_IO);
	}
	hwtr_sha256_init(&sh);
	for (i = 0; i < p->code.n; i++) {
		const struct hwtr_code_region *c = &p->code.v[i];

		if (write_all(fd, c->bytes, c->len) < 0) {
			ix_err(im->ix, "cannot write '%s': %s", ig->file,
			    strerror(errno));
			close(fd);
			return (-HWTR_E_IO);
		}
		hwtr_sha256_update(&sh, c->bytes, c->len);
		off += c->len;
	}
	hwtr_sha256_final(&sh, ig->jdesc.sha256);
	buf = NULL;
	if (off > 0 && (buf = mmap(NULL, off, PROT_READ, MAP_PRIVATE, fd,
	    0)) == MAP_FAILED) {
		ix_err(im->ix, "cannot map '%s': %s", ig->file,
		    strerror(errno));
		close(fd);
		return (-HWTR_E_IO);
	}
	close(fd);
	ig->bytes = buf;
	ig->size = off;
	return (0);
}

static void
sha_u64(struct hwtr_sha256 *sh, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	hwtr_sha256_update(sh, b, sizeof(b));
}

/*
 * The image's key: "jit-" and the SHA-256 (as much as fits) of what it
 * is, its regions and symbols with their times, not the pid, so that
 * export's images (merged by key across runs) differ when they differ.
 */
static void
make_key(char *key, size_t len, const struct jit_proc *p)
{
	struct hwtr_sha256 sh;
	uint8_t d[32];
	size_t i, n;

	assert(len > 5);
	hwtr_sha256_init(&sh);
	for (i = 0; i < p->code.n; i++) {
		const struct hwtr_code_region *c = &p->code.v[i];

		sha_u64(&sh, c->addr);
		sha_u64(&sh, c->from);
		sha_u64(&sh, c->until);
		sha_u64(&sh, c->len);
		hwtr_sha256_update(&sh, c->bytes, c->len);
	}
	for (i = 0; i < p->nsyms; i++) {
		const struct jit_sym *j = &p->syms[i];

		sha_u64(&sh, j->s.addr);
		sha_u64(&sh, j->s.size);
		sha_u64(&sh, j->from);
		sha_u64(&sh, j->until);
		hwtr_sha256_update(&sh, j->s.name, strlen(j->s.name) + 1);
	}
	hwtr_sha256_final(&sh, d);
	snprintf(key, len, "jit-");
	for (i = 0, n = 4; i < sizeof(d) && n + 3 <= len; i++, n += 2)
		snprintf(key + n, 3, "%02x", d[i]);
}

/* Process @p's image and its regions' mappings. */
static int
add_proc(struct ix_images *im, struct jit_proc *p, const char *tmpdir)
{
	struct ix_img *ig;
	struct ix_map *m;
	size_t i, k, off = 0;
	int rc;

	if ((rc = grow_images(im)) < 0)
		return (rc);
	ig = &im->imgs[im->nimgs];
	ig->jit = 1;
	ig->jit_pid = p->pid;
	im->nimgs++;
	make_key(ig->jdesc.key, sizeof(ig->jdesc.key), p);
	ig->jdesc.path = "[jit]";
	ig->jdesc.kind = HWTR_IMG_MEMORY;
	if ((rc = write_file(im, ig, p, tmpdir)) < 0)
		return (rc);
	ig->jdesc.size = ig->size;
	ig->present = 1;
	im->img_bytes[im->nimgs - 1] = ig->bytes;
	im->img_len[im->nimgs - 1] = ig->size;
	if ((rc = take_syms(ig, p)) < 0)
		return (rc);
	for (i = 0; i < p->code.n; i++) {
		const struct hwtr_code_region *c = &p->code.v[i];

		k = im->nmaps;
		if (hwtr_grow((void **)&im->maps, &im->cmaps, k + 1,
		    sizeof(*m)) < 0)
			return (-HWTR_E_NOMEM);
		m = &im->maps[k];
		memset(m, 0, sizeof(*m));
		m->id = (int64_t)++im->nmaps;
		m->pid = p->pid;
		m->image = (int)(im->nimgs - 1);
		m->path = "[jit]";
		m->start = c->addr;
		m->end = c->addr + c->len;
		m->pgoff = off;
		m->prot = PROT_READ | PROT_EXEC;
		m->has_from = 1;
		m->from_tsc = c->from;
		m->has_to = c->until != UINT64_MAX;
		m->to_tsc = c->until;
		off += c->len;
	}
	return (0);
}

int
ix_jit_load(struct ix_images *im, const char *tmpdir)
{
	struct jit_all a;
	size_t i, n = hwtr_ar_nmembers(im->ar);
	int rc = 0;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < n && rc == 0; i++) {
		const struct hwtr_member_info *mi = hwtr_ar_member(im->ar, i);

		if (mi->kind == HWTR_M_JIT || mi->kind == HWTR_M_CODE)
			rc = read_member(im, &a, i);
	}
	for (i = 0; i < a.n && rc == 0; i++)
		rc = add_proc(im, &a.v[i], tmpdir);
	for (i = 0; i < a.n; i++) {
		size_t k;

		for (k = 0; k < a.v[i].nsyms; k++)
			free(a.v[i].syms[k].s.name);
		free(a.v[i].syms);
		hwtr_code_list_free(&a.v[i].code);
	}
	free(a.v);
	for (i = 0; i < a.nbufs; i++)
		free(a.bufs[i]);
	free(a.bufs);
	return (rc);
}

const struct hwtr_image_desc *
ix_img_desc(const struct ix_images *im, struct hwtr_ar *ar, size_t i)
{
	assert(i < im->nimgs);
	return (im->imgs[i].jit ? &im->imgs[i].jdesc : hwtr_ar_image(ar, i));
}

/*
 * The symbol of "[jit]" image @ig naming @addr while @m's code was there:
 * of those whose time overlaps @m's, the one valid when @m begins (the
 * latest load before it), else the first loaded after.  A mapping of a
 * snapshot of anonymous memory begins after the code was written and may
 * end well after it was replaced (at the next mprotect).
 */
static int
sym_starts_by(const void *addr, const void *syms, size_t i)
{
	return (((const struct ix_sym *)syms)[i].addr <=
	    *(const uint64_t *)addr);
}

static const struct ix_sym *
jit_func(const struct ix_img *ig, const struct ix_map *m, uint64_t addr)
{
	const struct ix_sym *before = NULL, *after = NULL;
	uint64_t mfrom, mto, bf = 0, af = 0;
	size_t lo, k, steps;

	assert(ig->jit);
	mfrom = m->has_from ? m->from_tsc : 0;
	mto = m->has_to ? m->to_tsc : UINT64_MAX;
	/* The last symbol at or below @addr, then down to those covering it. */
	lo = hwtr_bsearch(&addr, ig->elf.syms, ig->elf.nsyms, sym_starts_by);
	for (k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
		const struct ix_sym *s = &ig->elf.syms[k - 1];
		uint64_t f = ig->jit_t[2 * (k - 1)];
		uint64_t u = ig->jit_t[2 * (k - 1) + 1];

		if (addr >= s->reach || f >= mto || u <= mfrom || f >= u)
			continue;
		if (f <= mfrom && (before == NULL || f > bf)) {
			before = s;
			bf = f;
		} else if (f > mfrom && (after == NULL || f < af)) {
			after = s;
			af = f;
		}
	}
	return (before != NULL ? before : after);
}

/* Is image @i a memory image of anonymous memory (the step source's)? */
static int
anon_image(const struct ix_images *im, int i)
{
	const struct hwtr_image_desc *d;

	if (i < 0 || (size_t)i >= im->nimgs || im->imgs[i].jit)
		return (0);
	d = hwtr_ar_image(im->ar, (size_t)i);
	return (d != NULL && d->kind == HWTR_IMG_MEMORY && d->path != NULL &&
	    strcmp(d->path, "//anon") == 0);
}

int
ix_jit_anon_name(const struct ix_images *im, size_t image, uint64_t addr,
    char *buf, size_t len)
{
	const struct ix_img *ig;
	const struct ix_map *m, *best = NULL;
	size_t i;

	if (anon_image(im, (int)image)) {
		/* Its address is the offset in the mapping (no ELF). */
		snprintf(buf, len, "[anon]+0x%" PRIx64, addr);
		return (1);
	}
	if (image >= im->nimgs || !im->imgs[image].jit)
		return (0);
	ig = &im->imgs[image];
	/* The anonymous mapping holding it, the latest made. */
	for (i = 0; i < im->nmaps; i++) {
		m = &im->maps[i];
		if (m->pid == ig->jit_pid && (m->image < 0 ||
		    anon_image(im, m->image)) && addr >= m->start &&
		    addr < m->end)
			best = m;
	}
	snprintf(buf, len, "[anon]+0x%" PRIx64, best != NULL ?
	    addr - best->start : addr & 0xfff);
	return (1);
}

int
ix_jit_other(const struct ix_images *im, const struct ix_map *m, uint64_t ip,
    size_t *imagep, const struct ix_sym **symp)
{
	size_t i;

	if (!anon_image(im, m->image))
		return (0);
	for (i = 0; i < im->nimgs; i++)
		if (im->imgs[i].jit && im->imgs[i].jit_pid == m->pid)
			break;
	if (i == im->nimgs ||
	    (*symp = jit_func(&im->imgs[i], m, ip)) == NULL)
		return (0);
	*imagep = i;
	return (1);
}


const struct ix_sym *
ix_jit_func(const struct ix_images *im, const struct ix_map *m,
    uint64_t addr)
{
	assert(m->image >= 0 && (size_t)m->image < im->nimgs);
	return (jit_func(&im->imgs[m->image], m, addr));
}
