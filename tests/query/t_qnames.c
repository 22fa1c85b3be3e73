/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Function patterns (query/q_names.c) match a name of any length and any
 * depth of scopes exactly as they match a short one.  Each case builds a
 * name twice from the same parts, once short and once many KiB long (or
 * with many scopes), by construction, and asks the same patterns of both:
 * the answers must be the same, and the ones the case states.
 */

#include <atf-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../query/q_int.h"

/* A growing string; the test fails out of memory. */
struct buf {
	char	*p;
	size_t	len;
};

static void
put(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	b->p = realloc(b->p, b->len + n + 1);
	ATF_REQUIRE(b->p != NULL);
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

/* A nested template argument @depth deep: "std::vector<...<int>...>". */
static char *
targ(int depth)
{
	struct buf b = { 0 };
	int i;

	put(&b, "");
	for (i = 0; i < depth; i++)
		put(&b, "std::vector<std::pair<long, ");
	put(&b, "int");
	for (i = 0; i < depth; i++)
		put(&b, "> >");
	return (b.p);
}

/* printf into a malloc'd string. */
static char *
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	ATF_REQUIRE(vasprintf(&s, f, ap) >= 0);
	va_end(ap);
	return (s);
}

/* @t with each "%s" replaced by @arg, malloc'd. */
static char *
subst(const char *t, const char *arg)
{
	struct buf b = { 0 };
	const char *p;
	char c[2] = { 0 };

	put(&b, "");
	for (p = t; *p != '\0'; p++)
		if (p[0] == '%' && p[1] == 's') {
			put(&b, arg);
			p++;
		} else {
			c[0] = *p;
			put(&b, c);
		}
	return (b.p);
}

/* @pattern names @name (want 1) or does not (want 0). */
static void
expect(const char *name, const char *pattern, int want)
{
	int got = q_name_match(name, pattern);

	if (got != want)
		atf_tc_fail_nonfatal("pattern '%.200s%s' (%zu bytes) on name "
		    "'%.200s%s' (%zu bytes): expected %s, got %d", pattern,
		    strlen(pattern) > 200 ? "..." : "", strlen(pattern), name,
		    strlen(name) > 200 ? "..." : "", strlen(name),
		    want ? "a match" : "no match", got);
}

/*
 * The patterns a case asks of its names: in @tname and each pattern,
 * "%s" stands for the template argument (short or long).
 */
struct pcase {
	const char	*pattern;
	int		want;
};

static void
both(const char *tname, const struct pcase *pc, size_t n)
{
	char *ts = targ(1), *tl = targ(200), *ns, *nl, *ps, *pl;
	size_t i;

	ATF_REQUIRE(strlen(tl) > 4096);
	ns = subst(tname, ts);
	nl = subst(tname, tl);
	for (i = 0; i < n; i++) {
		ps = subst(pc[i].pattern, ts);
		pl = subst(pc[i].pattern, tl);
		expect(ns, ps, pc[i].want);
		expect(nl, pl, pc[i].want);
		free(ps);
		free(pl);
	}
	free(ns);
	free(nl);
	free(ts);
	free(tl);
}

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

ATF_TC_WITHOUT_HEAD(cxx_templates_params_scopes);
ATF_TC_BODY(cxx_templates_params_scopes, tc)
{
	static const struct pcase pc[] = {
		{ "f", 1 },
		{ "ns::f", 0 },		/* scopes are consecutive */
		{ "A::f", 1 },
		{ "ns::A::f", 1 },
		{ "::ns::A::f", 1 },
		{ "::A::f", 0 },
		{ "other::f", 0 },
		{ "g", 0 },
		{ "f(%s const&, int)", 1 },
		{ "A<%s>::f(%s const&,int)", 1 },
		{ "f(%s const&, long)", 0 },
		{ "f(int)", 0 },
		{ "A<%s>::f", 1 },
		{ "A<int>::f", 0 },
	};

	both("int ns::A<%s>::f(%s const&, int)", pc, NELEM(pc));
}

ATF_TC_WITHOUT_HEAD(cxx_clone_suffix);
ATF_TC_BODY(cxx_clone_suffix, tc)
{
	static const struct pcase pc[] = {
		{ "f", 1 },
		{ "ns::f", 1 },
		{ "f(%s)", 1 },
		{ "f(int)", 0 },
	};

	both("void ns::f<%s>(%s) [clone .isra.0]", pc, NELEM(pc));
}

ATF_TC_WITHOUT_HEAD(rust_type_as_trait);
ATF_TC_BODY(rust_type_as_trait, tc)
{
	static const struct pcase pc[] = {
		{ "area", 1 },
		{ "Sq::area", 1 },
		{ "shapes::Sq::area", 1 },
		{ "Shape::area", 1 },
		{ "shapes::Shape::area", 1 },
		{ "Circle::area", 0 },
		{ "Sq<%s>::area", 1 },
		{ "Sq<int>::area", 0 },
	};

	/* The trait is generic over the same argument: "%s" twice. */
	both("<shapes::Sq<%s> as shapes::Shape<%s>>::area", pc, NELEM(pc));
}

/* C: GCC's clone of a function with a name of 5,000 characters. */
ATF_TC_WITHOUT_HEAD(c_clone_long);
ATF_TC_BODY(c_clone_long, tc)
{
	struct buf id = { 0 };
	char *name, *other;
	int i;

	put(&id, "f");
	for (i = 0; i < 500; i++)
		put(&id, "_abcdefghi");
	name = fmt("%s.constprop.0", id.p);
	other = fmt("%sx.constprop.0", id.p);
	expect(name, id.p, 1);
	expect(other, id.p, 0);
	expect(name, "f", 0);
	free(name);
	free(other);
	free(id.p);
}

/*
 * More scopes than the 32 parsed in place: 40 (a short name) and 300
 * (3 KiB); the whole path, rooted, and its tail name it, a path missing
 * its first scope rooted does not.
 */
static void
scopes(int n)
{
	struct buf name = { 0 }, full = { 0 }, tail = { 0 };
	char *p, s[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(s, sizeof(s), "s%d::", i);
		put(&name, s);
		put(&full, s);
		if (i > 0)
			put(&tail, s);
	}
	put(&name, "f(int)");
	put(&full, "f");
	put(&tail, "f");
	expect(name.p, "f", 1);
	expect(name.p, full.p, 1);
	p = fmt("::%s", full.p);
	expect(name.p, p, 1);
	free(p);
	expect(name.p, tail.p, 1);
	p = fmt("::%s", tail.p);
	expect(name.p, p, 0);
	free(p);
	p = fmt("x::%s", full.p);
	expect(name.p, p, 0);
	free(p);
	p = fmt("s%d::f(int)", n - 1);
	expect(name.p, p, 1);
	free(p);
	free(name.p);
	free(full.p);
	free(tail.p);
}

ATF_TC_WITHOUT_HEAD(many_scopes);
ATF_TC_BODY(many_scopes, tc)
{
	scopes(40);
	scopes(300);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, cxx_templates_params_scopes);
	ATF_TP_ADD_TC(tp, cxx_clone_suffix);
	ATF_TP_ADD_TC(tp, rust_type_as_trait);
	ATF_TP_ADD_TC(tp, c_clone_long);
	ATF_TP_ADD_TC(tp, many_scopes);
	return (atf_no_error());
}
