/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The demo program ("make demo"): it parses a little inventory, totals it,
 * then looks up an item that is not there and follows the null pointer the
 * lookup returned.  The last blocks before the crash read as a story:
 * main -> report -> find_item (loop, not found) -> print_item, whose
 * first load of it->name faults (SIGSEGV).
 */

#include <stdio.h>
#include <string.h>

struct item {
	const char	*name;
	unsigned int	count;
	unsigned int	price;
};

static const struct item stock[] = {
	{ "apple", 12, 30 },
	{ "pear", 5, 45 },
	{ "plum", 20, 12 },
	{ "fig", 3, 90 },
};

static __attribute__((noinline)) const struct item *
find_item(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(stock) / sizeof(stock[0]); i++)
		if (strcmp(stock[i].name, name) == 0)
			return (&stock[i]);
	return (NULL);
}

/*
 * Not static: a static print_item is rewritten by gcc's IPA-SRA into
 * print_item.isra.0 taking the item's fields, which moves the faulting
 * load into report() and spoils the story.
 */
void	print_item(const struct item *it);

__attribute__((noinline)) void
print_item(const struct item *it)
{
	/* Bug: no check for NULL; crashes for an unknown item. */
	printf("demo: %s x%u\n", it->name, it->count);
}

static __attribute__((noinline)) unsigned int
total(void)
{
	unsigned int i, t = 0;

	for (i = 0; i < sizeof(stock) / sizeof(stock[0]); i++)
		t += stock[i].count * stock[i].price;
	return (t);
}

static __attribute__((noinline)) void
report(const char *name)
{
	print_item(find_item(name));
}

int
main(void)
{
	printf("demo: stock value %u\n", total());
	report("plum");
	fflush(stdout);
	report("kiwi");
	return (0);
}
