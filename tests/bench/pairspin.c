/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pairspin: a loop whose cost on this machine bench_pair.sh compares run
 * alone and run beside a second copy on the other CPU.  `index -j 2`
 * spends more CPU than `-j 1` for the same instructions (E2 in
 * docs/PERFORMANCE.md); this tells whether the machine itself charges a
 * second busy thread, and for what kind of work.
 *
 * pairspin MIB N: N dependent random 8-byte reads over a table of MIB
 * MiB (a power of two), or with MIB 0, N rounds of three independent
 * xorshift chains (registers only).  Prints a checksum so that nothing
 * is optimised away; exit 2 on bad arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t
step(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (x);
}

int
main(int argc, char **argv)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL, b = a ^ 1, c = a ^ 2, s = 0;
	uint64_t *t;
	char *end;
	unsigned long mib;
	long long n, i;
	size_t m, k;

	if (argc != 3)
		goto usage;
	mib = strtoul(argv[1], &end, 10);
	if (*end != '\0' || mib > 4096 || (mib & (mib - 1)) != 0)
		goto usage;
	n = strtoll(argv[2], &end, 10);
	if (*end != '\0' || n <= 0)
		goto usage;
	if (mib == 0) {
		for (i = 0; i < n; i++) {
			a = step(a);
			b = step(b);
			c = step(c);
		}
		s = a + b + c;
	} else {
		m = (size_t)mib << 17;
		if ((t = malloc(m * sizeof(*t))) == NULL) {
			fprintf(stderr, "pairspin: out of memory\n");
			return (1);
		}
		for (k = 0; k < m; k++)
			t[k] = k * 0x9e3779b1u;
		for (i = 0; i < n; i++) {
			a = step(a);
			s += t[(a ^ s) & (m - 1)];
		}
		free(t);
	}
	printf("%llu\n", (unsigned long long)s);
	return (0);
usage:
	fprintf(stderr, "usage: pairspin MIB N (MIB 0 or a power of two)\n");
	return (2);
}
