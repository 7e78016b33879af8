// LD_PRELOAD'ed into perftest: one extra thread that only sleeps, so that
// the process is multi-threaded as ours is (fdget takes references, the
// mm is shared), and nothing else changes.
#include <pthread.h>
#include <unistd.h>

static void *sleeper(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return 0;
}

__attribute__((constructor)) static void start_sleeper(void) {
	pthread_t t;
	if (pthread_create(&t, 0, sleeper, 0) == 0)
		pthread_detach(t);
}
