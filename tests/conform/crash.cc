// Conformance fixture: with an argument, cr::leaf() dereferences NULL.
namespace cr {
__attribute__((noinline)) int leaf(int *p) { return *p + 1; }
__attribute__((noinline)) int outer(int *p) { return leaf(p) * 2; }
}
int main(int argc, char **argv) { (void)argv; return cr::outer(argc > 1 ? nullptr : &argc); }
