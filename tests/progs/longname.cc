/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A function whose demangled name is over 14,000 characters long, as
 * nested standard containers make them (each std::map spells out its
 * key three times: std::less<K>, std::allocator<std::pair<K const, V>>):
 * deep::Holder<deep::L2>::run, called 7 times, and deep::Holder<int>::run,
 * called 3 times.  The query tests match function patterns against it.
 */

#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#define F __attribute__((noipa))

namespace deep {
using L0 = std::map<int, std::function<long(std::tuple<int, long, double>)>>;
using L1 = std::map<L0, std::function<L0(std::tuple<L0, int>)>>;
using L2 = std::map<L1, std::tuple<L1, L0>>;

template <typename T> struct Holder {
	F static int run(const T &t, int k) { return (int)sizeof(t) + k; }
};
}

int
main()
{
	deep::L2 big;
	int small = 0, s = 0;

	for (int i = 0; i < 7; i++)
		s += deep::Holder<deep::L2>::run(big, i);
	for (int i = 0; i < 3; i++)
		s += deep::Holder<int>::run(small, i);
	std::printf("longname: %d\n", s);
	return 0;
}
