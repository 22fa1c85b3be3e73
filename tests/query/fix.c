/* The program that tests/query/fixture.sql says ran (hwtrace query tests). */
int
sq(int x)
{
	return x * x;
}
int
sum(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i);
	return s;
	/* end of sum */
}
int
unused(void)
{
	return 42;
}
int
main(void)
{
	return sum(2);
}
