/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Function names as people type them, matched as gdb's linespecs match
 * them: a name is a path of scopes (C++ namespaces and classes, Rust
 * modules and impls, Go packages and receivers), and a pattern names
 * every function whose path ends with the pattern's, whatever the scopes
 * before it, the parameters (every overload) and the template arguments
 * ("f" matches "int ns::f<int>(int)"); a qualified pattern narrows it
 * ("ns::f", "Sq::area"), parameters pick one overload ("f(double)"), and
 * a leading "::" asks for the whole path.
 *
 * Names are the demangled ones of the symbols table:
 *   C++   "int ns::A<int>::f(double) const [clone .isra.0]"
 *   Rust  "<shapes::Sq as shapes::Shape>::area" (matched through the
 *         type, "Sq::area", and through the trait, "Shape::area")
 *   Go    "main.work", "main.(*T).M", "example.com/x/y.F"
 *   C     "f", "f.constprop.0" (GCC's clones: the suffix is dropped)
 */

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

/*
 * A name of any length parses, into as many components as it has: names
 * up to QN_LEN bytes and paths of up to QN_COMPS components in place (the
 * common case, parsed by the million without malloc), longer ones on the
 * heap, in memory proportional to the name.  Demangled C++ names of
 * nested templates run to many KiB.
 */
#define QN_COMPS	32	/* components of one path kept in place */
#define QN_LEN		1024	/* bytes of a name kept in place */

struct qn_comp {
	const char	*c;
	size_t		len;
};

struct qn_path {
	struct qn_comp	*v;		/* inl, or malloc'd */
	size_t		n;
	size_t		cap;
	struct qn_comp	inl[QN_COMPS];
};

/* Between qn_parse() and qn_fini(); never copied (points into itself). */
struct qn {
	char		inbuf[2 * QN_LEN];
	char		*buf;		/* inbuf, or malloc'd: name, params */
	struct qn_path	alt[2];		/* Rust's <T as Trait>: both */
	size_t		nalt;
	char		*params;	/* without spaces; "" none */
	int		has_params;
	int		rooted;		/* pattern "::f" */
};

/* A pattern parsed once, for many names. */
struct q_pat {
	char		*text;
	struct qn	q;
	int		ok;		/* parsed: matches more than itself */
	int		at;		/* has '@' */
	char		*key;		/* q_name_key() */
};

static int
ident_char(char c)
{
	return (isalnum((unsigned char)c) || c == '_' || c == '$');
}

/*
 * Length of the operator name at @p ("operator<<", "operator()",
 * "operator new[]"), whose brackets are not nesting; 0 when @p does not
 * start one.
 */
static size_t
operator_len(const char *s, const char *p)
{
	const char *q;

	if (*p != 'o' || strncmp(p, "operator", 8) != 0 || (p > s && ident_char(p[-1])) ||
	    ident_char(p[8]))
		return (0);
	q = p + 8;
	if (strncmp(q, "()", 2) == 0)
		return ((size_t)(q + 2 - p));
	while (*q != '\0' && strchr("<>=!+-*/%^&|~,[]", *q) != NULL)
		q++;
	return ((size_t)(q - p));
}

/*
 * Walk @s from @i, keeping the bracket depth in *@depth; the index of the
 * next character to look at.
 */
static size_t
step(const char *s, size_t i, int *depth)
{
	size_t ol = operator_len(s, s + i);

	if (ol > 0)
		return (i + ol);
	switch (s[i]) {
	case '<': case '(': case '[': case '{':
		(*depth)++;
		break;
	case '>': case ')': case ']': case '}':
		if (*depth > 0)
			(*depth)--;
		break;
	}
	return (i + 1);
}

/*
 * Add the component [@p, @p + @n) to @path, growing it past QN_COMPS;
 * -HWTR_E_NOMEM out of memory.
 */
static int
add_comp(struct qn_path *path, const char *p, size_t n)
{
	struct qn_comp *v;
	size_t cap;

	assert(path->n <= path->cap);
	if (path->n == path->cap) {
		cap = path->cap * 2;
		if (path->v == path->inl) {
			if ((v = malloc(cap * sizeof(*v))) != NULL)
				memcpy(v, path->inl, sizeof(path->inl));
		} else
			v = realloc(path->v, cap * sizeof(*v));
		if (v == NULL)
			return (-HWTR_E_NOMEM);
		path->v = v;
		path->cap = cap;
	}
	path->v[path->n].c = p;
	path->v[path->n].len = n;
	path->n++;
	return (0);
}

/* GCC's clone suffixes, as in "f.constprop.0" and "f.cold". */
static void
cut_clone(char *s)
{
	static const char *const sfx[] = { "isra", "constprop", "part",
	    "cold", "lto_priv", "clone", "localalias", "hot", NULL };
	char *d;
	size_t k, n;

	for (d = strchr(s, '.'); d != NULL; d = strchr(d + 1, '.'))
		for (k = 0; sfx[k] != NULL; k++) {
			n = strlen(sfx[k]);
			if (strncmp(d + 1, sfx[k], n) == 0 &&
			    (d[n + 1] == '\0' || d[n + 1] == '.')) {
				*d = '\0';
				return;
			}
		}
}

/*
 * Split the path [@s, @s + @n) into @path: at top-level "::", or for a
 * name without any (Go, C) at top-level '.' after the last '/' (the
 * package path stays in the first component).  -HWTR_E_NOMEM out of
 * memory.
 */
static int
split_path(const char *s, size_t n, struct qn_path *path)
{
	size_t i = 0, start = 0, slash = 0;
	int depth = 0, colons = 0;

	for (i = 0; i + 1 < n; i = step(s, i, &depth))
		if (depth == 0 && s[i] == ':' && s[i + 1] == ':')
			colons = 1;
	if (!colons)
		for (i = 0; i < n; i++)
			if (s[i] == '/')
				slash = i + 1;
	depth = 0;
	for (i = slash; i < n; ) {
		if (depth == 0 && colons && s[i] == ':' && i + 1 < n &&
		    s[i + 1] == ':') {
			if (i > start && add_comp(path, s + start,
			    i - start) < 0)
				return (-HWTR_E_NOMEM);
			start = i + 2;
			i += 2;
			continue;
		}
		if (depth == 0 && !colons && s[i] == '.' && i > start) {
			if (add_comp(path, s + start, i - start) < 0)
				return (-HWTR_E_NOMEM);
			start = i + 1;
			i++;
			continue;
		}
		i = step(s, i, &depth);
	}
	if (n > start)
		return (add_comp(path, s + start, n - start));
	return (0);
}

/*
 * Rust's "<T as Trait>::m": the paths T::m and Trait::m; "<T>::m": T::m.
 * 1 when @s is one, 0 when it is not, -HWTR_E_NOMEM out of memory.
 */
static int
split_impl(struct qn *q, const char *s, size_t n)
{
	size_t i, close = 0, as = 0, k;
	int depth = 0;

	if (n < 3 || s[0] != '<')
		return (0);
	for (i = 0; i < n; ) {
		if (depth == 1 && strncmp(s + i, " as ", 4) == 0 && as == 0)
			as = i;
		i = step(s, i, &depth);
		if (depth == 0) {
			close = i - 1;
			break;
		}
	}
	if (close == 0 || close + 2 >= n || s[close + 1] != ':' ||
	    s[close + 2] != ':')
		return (0);
	q->nalt = as ? 2 : 1;
	for (k = 0; k < q->nalt; k++) {
		q->alt[k].n = 0;
		if ((k == 0 ? split_path(s + 1, (as ? as : close) - 1,
		    &q->alt[k]) : split_path(s + as + 4, close - as - 4,
		    &q->alt[k])) < 0 ||
		    split_path(s + close + 3, n - close - 3, &q->alt[k]) < 0)
			return (-HWTR_E_NOMEM);
	}
	return (1);
}

/* Release what qn_parse() took for @q (nothing for short names). */
static void
qn_fini(struct qn *q)
{
	size_t k;

	if (q->buf != q->inbuf)
		free(q->buf);
	q->buf = q->inbuf;
	for (k = 0; k < 2; k++) {
		if (q->alt[k].v != q->alt[k].inl)
			free(q->alt[k].v);
		q->alt[k].v = q->alt[k].inl;
		q->alt[k].cap = QN_COMPS;
		q->alt[k].n = 0;
	}
}

/*
 * Parse @name (a symbol's, or a pattern) into @q: 0 done, 1 when it is no
 * path (nothing left once the return type, parameters and clone suffix
 * are cut), -HWTR_E_NOMEM out of memory.  qn_fini() afterwards, whatever
 * it returned.
 */
static int
qn_parse(struct qn *q, const char *name)
{
	char *s, *p, *cut;
	size_t i, n, start = 0, k;
	int depth = 0, rc;

	/* Field by field: names are parsed by the million. */
	q->buf = q->inbuf;
	for (k = 0; k < 2; k++) {
		q->alt[k].v = q->alt[k].inl;
		q->alt[k].cap = QN_COMPS;
		q->alt[k].n = 0;
	}
	q->nalt = 0;
	q->has_params = q->rooted = 0;
	/* The name, then its parameters, each at most as long as the name. */
	n = strlen(name);
	if (n >= QN_LEN && (q->buf = malloc(2 * (n + 1))) == NULL) {
		q->buf = q->inbuf;
		return (-HWTR_E_NOMEM);
	}
	s = q->buf;
	q->params = q->buf + (q->buf == q->inbuf ? QN_LEN : n + 1);
	q->params[0] = '\0';
	memcpy(s, name, n + 1);
	if ((cut = strstr(s, " [clone ")) != NULL)
		*cut = '\0';
	if (strncmp(s, "::", 2) == 0) {
		q->rooted = 1;
		s += 2;
	}
	/* The parameters: a top-level '(' after a name ("f(int)"). */
	n = strlen(s);
	for (i = 0; i < n; ) {
		if (depth == 0 && s[i] == '(' && i > 0 &&
		    strchr(".: ", s[i - 1]) == NULL) {
			q->has_params = 1;
			for (p = s + i, k = 0; *p != '\0'; p++)
				if (*p != ' ')
					q->params[k++] = *p;
			q->params[k] = '\0';
			s[i] = '\0';
			n = i;
			break;
		}
		i = step(s, i, &depth);
	}
	/* A return type before the name ("int f<int>"): after its space. */
	depth = 0;
	for (i = 0; i < n; i = step(s, i, &depth))
		if (depth == 0 && s[i] == ' ' && !(i >= 8 &&
		    strncmp(s + i - 8, "operator", 8) == 0))
			start = i + 1;
	s += start;
	if (strstr(s, "::") == NULL && strchr(s, '(') == NULL)
		cut_clone(s);
	n = strlen(s);
	if (n == 0)
		return (1);
	if ((rc = split_impl(q, s, n)) != 0)
		return (rc > 0 ? 0 : rc);
	q->nalt = 1;
	return (split_path(s, n, &q->alt[0]));
}

/* Pattern component @pc names name component @nc. */
static int
comp_match(const char *pc, size_t pl, const char *nc, size_t nl)
{
	const char *sl;

	if (pl == nl && memcmp(pc, nc, pl) == 0)
		return (1);
	/* Without template arguments: "f" is "f<int>". */
	if (memchr(pc, '<', pl) == NULL && nl > pl && nc[pl] == '<' &&
	    memcmp(pc, nc, pl) == 0)
		return (1);
	/* A Go package by its last element: "y" is "example.com/x/y". */
	if (memchr(pc, '/', pl) == NULL && (sl = memrchr(nc, '/', nl)) !=
	    NULL && (size_t)(nc + nl - sl - 1) == pl &&
	    memcmp(sl + 1, pc, pl) == 0)
		return (1);
	return (0);
}

static int
path_match(const struct qn_path *pp, int rooted, const struct qn_path *np)
{
	const struct qn_comp *pc, *nc;
	size_t k;

	if (pp->n == 0 || pp->n > np->n || (rooted && pp->n != np->n))
		return (0);
	for (k = 1; k <= pp->n; k++) {
		pc = &pp->v[pp->n - k];
		nc = &np->v[np->n - k];
		if (!comp_match(pc->c, pc->len, nc->c, nc->len))
			return (0);
	}
	return (1);
}

struct q_pat *
q_pat_new(const char *pattern)
{
	struct q_pat *p = malloc(sizeof(*p));
	int rc;

	if (p == NULL)
		return (NULL);
	p->key = NULL;
	if ((p->text = strdup(pattern)) == NULL ||
	    (rc = qn_parse(&p->q, pattern)) < 0 ||
	    (p->key = q_name_key(pattern)) == NULL) {
		q_pat_free(p);
		return (NULL);
	}
	p->ok = rc == 0;
	p->at = strchr(pattern, '@') != NULL;
	return (p);
}

/*
 * @key is in @name as a whole word: what every name a pattern matches
 * has, tested before the name is parsed (most names that contain "area"
 * are not functions named area).
 */
static int
has_word(const char *name, const char *key)
{
	const char *h;
	size_t n = strlen(key);

	if (n == 0)
		return (1);
	for (h = strstr(name, key); h != NULL; h = strstr(h + 1, key))
		if ((h == name || !ident_char(h[-1])) && !ident_char(h[n]))
			return (1);
	return (0);
}

void
q_pat_free(struct q_pat *p)
{
	if (p == NULL)
		return;
	if (p->text != NULL)
		qn_fini(&p->q);
	free(p->text);
	free(p->key);
	free(p);
}

int
q_pat_match(const struct q_pat *p, const char *name)
{
	struct qn n;
	size_t i, j;
	int rc;

	if (strcmp(name, p->text) == 0)
		return (1);
	/* A stub ("f(int)@plt") only by its whole name. */
	if (!p->ok || (strchr(name, '@') != NULL && !p->at) ||
	    !has_word(name, p->key))
		return (0);
	if ((rc = qn_parse(&n, name)) != 0) {
		qn_fini(&n);
		return (rc < 0 ? rc : 0);
	}
	rc = 0;
	if (p->q.has_params && (!n.has_params ||
	    strcmp(p->q.params, n.params) != 0))
		goto out;
	for (i = 0; i < p->q.nalt && rc == 0; i++)
		for (j = 0; j < n.nalt && rc == 0; j++)
			rc = path_match(&p->q.alt[i], p->q.rooted, &n.alt[j]);
out:
	qn_fini(&n);
	return (rc);
}

int
q_name_match(const char *name, const char *pattern)
{
	struct q_pat *p = q_pat_new(pattern);
	int m;

	if (p == NULL)
		return (-HWTR_E_NOMEM);
	m = q_pat_match(p, name);
	q_pat_free(p);
	return (m);
}

/*
 * Name component @nc as pattern component @pc would be written to name
 * it (comp_match()): without its template arguments, or its Go package
 * path, when @pc has none.
 */
static void
comp_as(const char *pc, size_t pl, const char **ncp, size_t *nlp)
{
	const char *nc = *ncp, *lt, *sl;
	size_t nl = *nlp;

	if (memchr(pc, '<', pl) == NULL && (lt = memchr(nc, '<', nl)) !=
	    NULL && lt > nc)
		nl = (size_t)(lt - nc);
	if (memchr(pc, '/', pl) == NULL && (sl = memrchr(nc, '/', nl)) !=
	    NULL && sl + 1 < nc + nl) {
		nl -= (size_t)(sl + 1 - nc);
		nc = sl + 1;
	}
	*ncp = nc;
	*nlp = nl;
}

int
q_name_tail(const char *name, const struct q_pat *p, char **tailp)
{
	const struct qn_path *pp = &p->q.alt[0], *np;
	const struct qn_comp *pc, *nc;
	const char *c, *sep = strstr(name, "::") != NULL ? "::" : ".";
	struct qn *n;
	char *t = NULL, *w;
	size_t k, len, cl;
	int rc;

	*tailp = NULL;
	/* With parameters, the whole name is what such a pattern spells. */
	if (!p->ok || p->q.has_params || p->q.nalt == 0 || pp->n == 0)
		return (0);
	if ((n = malloc(sizeof(*n))) == NULL)
		return (-HWTR_E_NOMEM);
	if ((rc = qn_parse(n, name)) != 0 || n->alt[0].n < pp->n)
		goto out;
	np = &n->alt[0];
	for (k = 1, len = 0; k <= pp->n; k++)
		len += np->v[np->n - k].len + strlen(sep);
	if ((t = malloc(len + 1)) == NULL) {
		rc = -HWTR_E_NOMEM;
		goto out;
	}
	for (k = pp->n, w = t; k >= 1; k--) {
		pc = &pp->v[pp->n - k];
		nc = &np->v[np->n - k];
		c = nc->c;
		cl = nc->len;
		comp_as(pc->c, pc->len, &c, &cl);
		if (w > t) {
			memcpy(w, sep, strlen(sep));
			w += strlen(sep);
		}
		memcpy(w, c, cl);
		w += cl;
	}
	*w = '\0';
	rc = 1;
out:
	qn_fini(n);
	free(n);
	*tailp = t;
	return (rc < 0 ? rc : rc > 0 && t != NULL);
}

char *
q_name_key(const char *pattern)
{
	struct qn *p = malloc(sizeof(*p));
	const struct qn_path *a;
	const char *c, *e;
	char *key = NULL;
	int rc;

	if (p == NULL)
		return (NULL);
	if ((rc = qn_parse(p, pattern)) == 0 && p->alt[0].n > 0) {
		a = &p->alt[0];
		c = a->v[a->n - 1].c;
		e = c + a->v[a->n - 1].len;
		if (memchr(c, '<', (size_t)(e - c)) != NULL)
			e = memchr(c, '<', (size_t)(e - c));
		if (memrchr(c, '/', (size_t)(e - c)) != NULL)
			c = (const char *)memrchr(c, '/', (size_t)(e - c)) + 1;
		if (e > c)
			key = strndup(c, (size_t)(e - c));
	}
	qn_fini(p);
	free(p);
	if (rc < 0)
		return (NULL);
	return (key != NULL ? key : strdup(pattern));
}
