/* Conformance fixture: with an argument, leaf() dereferences NULL. */
#include <stddef.h>
__attribute__((noinline)) int leaf(int *p) { return *p + 1; }
__attribute__((noinline)) int outer(int *p) { return leaf(p) * 2; }
int main(int argc, char **argv) { (void)argv; return outer(argc > 1 ? NULL : &argc); }
