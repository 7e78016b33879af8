// Events mode's blocking wait (perftest -e blocks in ibv_get_cq_event):
// while a loop runs, its completion channels' fds are blocking, and a
// timer of the loop's own thread sends it RB_WAKE_SIG every tick. The
// signal's handler does nothing and has no SA_RESTART, so a read blocked
// in ibv_get_cq_event returns EINTR and the wait looks at the stop flag
// and its deadline; Go sends the same signal to the thread when it raises
// the flag. A wait thus costs one system call, as perftest's, instead of a
// non-blocking read, a poll and a read.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include "loops.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

int rb_wake_signal(void) { return SIGRTMIN + 7; }

static void rb_wake_handler(int sig) { (void)sig; }

static int rb_handler_err;

// SA_ONSTACK: the handler may run on a Go thread, which has an alternate
// signal stack (cgo's rule for C-installed handlers).
static void rb_install_handler(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = rb_wake_handler;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(rb_wake_signal(), &sa, NULL))
		rb_handler_err = errno;
}

static pthread_once_t rb_handler_once = PTHREAD_ONCE_INIT;

// rb_set_blocking makes fd blocking (block) or non-blocking again.
static int rb_set_blocking(int fd, int block) {
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return errno;
	fl = block ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? errno : 0;
}

// rb_events_begin prepares the calling thread for an events loop: the
// channels blocking, the signal unblocked, the timer ticking at a quarter
// of the idle timeout (at most 100 ms): a wait ends within its deadline
// plus one tick. Without events it does nothing.
int rb_events_begin(rb_loop *l) {
	if (!l->events || !l->sch)
		return RB_OK;
	int err;
	pthread_once(&rb_handler_once, rb_install_handler);
	if ((err = rb_handler_err))
		goto fail;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, rb_wake_signal());
	if ((err = pthread_sigmask(SIG_UNBLOCK, &set, NULL)))
		goto fail;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = rb_wake_signal();
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &l->wake_timer)) {
		err = errno;
		goto fail;
	}
	int64_t tick = l->idle_ns / 4;
	if (tick > 100000000)
		tick = 100000000;
	if (tick < 1000000)
		tick = 1000000;
	struct itimerspec its = {
		.it_interval = {tick / 1000000000, tick % 1000000000},
		.it_value = {tick / 1000000000, tick % 1000000000},
	};
	if (timer_settime(l->wake_timer, 0, &its, NULL) ||
	    (err = rb_set_blocking(l->sch->fd, 1)) ||
	    (l->rch && l->rch != l->sch && (err = rb_set_blocking(l->rch->fd, 1)))) {
		if (!err)
			err = errno;
		timer_delete(l->wake_timer);
		rb_set_blocking(l->sch->fd, 0);
		goto fail;
	}
	__atomic_store_n(&l->wake_tid, sev.sigev_notify_thread_id, __ATOMIC_RELEASE);
	return RB_OK;
fail:
	l->err = err;
	l->got = RB_EV_SETUP;
	return RB_EVENT;
}

// rb_events_end undoes rb_events_begin: no more signals, the channels
// non-blocking again (verbs' Go-side waits expect that).
void rb_events_end(rb_loop *l) {
	if (!l->events || !l->sch)
		return;
	__atomic_store_n(&l->wake_tid, 0, __ATOMIC_RELEASE);
	timer_delete(l->wake_timer);
	rb_set_blocking(l->sch->fd, 0);
	if (l->rch && l->rch != l->sch)
		rb_set_blocking(l->rch->fd, 0);
}
