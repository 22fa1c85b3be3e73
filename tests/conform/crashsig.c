/* Conformance fixture: with an argument, leaf() dereferences NULL at its
 * first instruction; a SIGSEGV handler (as Rust's runtime and crash
 * reporters install) puts the default action back and returns, so the
 * fault comes again and kills the program. */
#include <signal.h>
#include <stddef.h>
static void on_segv(int sig) { signal(sig, SIG_DFL); }
__attribute__((noinline)) int leaf(int *p) { return *p + 1; }
__attribute__((noinline)) int outer(int *p) { return leaf(p) * 2; }
int
main(int argc, char **argv)
{
	(void)argv;
	signal(SIGSEGV, on_segv);
	return outer(argc > 1 ? NULL : &argc);
}
