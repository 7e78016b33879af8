/* A small shared object for the symbolizer's tests (built with the host's cc). */
int rb_alpha(int x) { return x * 3 + 1; }

__attribute__((noinline, used)) static int rb_hidden(int x) { return x ^ 0x55; }

int rb_beta(int x) {
	int s = 0;
	for (int i = 0; i < x; i++)
		s += rb_hidden(i);
	return s;
}
