// memprobe [PERIOD_MS] [MIB] [STEPS]: on the host, every PERIOD_MS (20)
// chases STEPS (2000) dependent loads through a random cycle over MIB
// (16) MiB and prints "start_ns duration_ns" (CLOCK_MONOTONIC, the clock
// ../2026-12-04-levels/hostcpu.py stamps the VM's lines with), so that a
// run's speed in the VM can be set beside the host memory system's at the
// same time. About 10% of one CPU.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
	int period = argc > 1 ? atoi(argv[1]) : 20, steps = argc > 3 ? atoi(argv[3]) : 2000;
	size_t n = (size_t)(argc > 2 ? atoi(argv[2]) : 16) << 17; // 8-byte slots
	uint64_t *next = malloc(n * sizeof *next);
	for (size_t i = 0; i < n; i++)
		next[i] = i;
	for (size_t i = n - 1; i > 0; i--) { // Sattolo: one cycle through every slot
		size_t j = (size_t)random() % i;
		uint64_t t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
	uint64_t p = 0;
	for (;;) {
		int64_t t0 = now();
		for (int i = 0; i < steps; i++)
			p = next[p];
		printf("%lld %lld\n", (long long)t0, (long long)(now() - t0));
		fflush(stdout);
		struct timespec d = {0, period * 1000000L};
		nanosleep(&d, NULL);
		if (p == n) // never: keeps the chase
			return 1;
	}
}
