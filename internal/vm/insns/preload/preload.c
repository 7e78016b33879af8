/*
 * rxevm's preload: an LD_PRELOAD library that makes a program with no
 * markers of its own (perftest) steer the instruction counter
 * (../plugin/insns.c) as rdmabench's loops do, without changing the
 * program. rxevm -insns builds it with the host's cc beside the plugin and
 * shares it with the guest (internal/work.PreloadPath).
 *
 * ibv_poll_cq and ibv_post_send are inline functions that call the
 * context's ops.poll_cq and ops.post_send: wrapping ibv_open_device lets
 * this library replace those two pointers in every context the program
 * opens. A thread's first post or poll opens a window on its vCPU (the
 * program's setup before it is not counted). From then on the
 * instructions of each call count, except a poll that found nothing (a
 * try, as in loops.h); and the program's own instructions from the end of
 * one call to the start of the next are held, and count at the next call
 * unless the last was a poll that found nothing (the rest of a spin). So
 * what the program does after its last call (its statistics, printing
 * every sample, the teardown) is held and never counted: rdmacompare
 * closes every window after the program ends (work.CloseWindows).
 * An RDMA WRITE ping-pong (perftest's ib_write_lat, and ours) also spins
 * in the program's own code, on a buffer byte the peer's write sets,
 * between a send completion and its next post: with
 * RXEVM_PRELOAD_SPIN=after-completion in its environment (rdmacompare
 * sets it for those) the stretch after a completion is dropped too, with
 * the few instructions of the loop around the spin (its counters, its
 * test, a clock read).
 *
 * Own declarations of the libibverbs structures' leading fields (their
 * layout is libibverbs' ABI), so the build needs no rdma-core headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MARK(x) __asm__ volatile("nopl 0x52444d" #x "(%rax)")

typedef int (*poll_fn)(void *cq, int n, void *wc);
typedef int (*post_fn)(void *qp, void *wr, void **bad);

/* struct ibv_context's ops, up to post_send (verbs.h). */
struct ops {
	void *before_poll[11];
	poll_fn poll_cq;
	void *between[13];
	post_fn post_send;
};
struct context {
	void *device;
	struct ops ops;
};
/* struct ibv_cq and struct ibv_qp begin with their context. */
struct has_context {
	struct context *context;
};

/* The real functions, per context the program opened. */
#define MAXCTX 16
static struct {
	struct context *ctx;
	poll_fn poll;
	post_fn post;
} real[MAXCTX];
static int nreal;

static __thread int opened; /* this thread opened a window */
static __thread int drop;   /* the stretch since the last call is a spin */
static int write_lat;       /* RXEVM_PRELOAD_SPIN=after-completion */

static int find(struct context *c) {
	for (int i = 0; i < nreal; i++)
		if (__atomic_load_n(&real[i].ctx, __ATOMIC_ACQUIRE) == c)
			return i;
	return -1;
}

/*
 * Each wrapper is a trampoline whose first instruction pauses the count
 * and whose last but one resumes it, around a C function that resumes it
 * only for the real call: of this library's own instructions only the
 * resume and the return count (and the few that set up the real call),
 * on both sides alike.
 */
#define TRAMPOLINE(name, impl)                                          \
	__attribute__((naked)) static int name(void *a, void *b, void *c) { \
		__asm__ volatile("nopl 0x52444d49(%rax)\n\t" /* pause */    \
				 "sub $8, %rsp\n\t"                                \
				 "call " #impl "\n\t"                              \
				 "add $8, %rsp\n\t"                                \
				 "nopl 0x52444d4a(%rax)\n\t" /* resume */          \
				 "ret\n\t");                                        \
	}
#define PAUSE() MARK(49)
#define RESUME() MARK(4a)

/* enter starts a call (paused): the stretch since the last call counts
 * (got), unless it was a spin: a poll leaves it held for its own try to
 * drop, a post drops it (try) and counts itself (got). */
static inline void enter(int poll) {
	if (!opened) {
		opened = 1;
		MARK(42);
		return;
	}
	if (drop && poll)
		return;
	if (drop)
		MARK(45);
	MARK(46);
}

/* leave ends a call: what follows is held until the next one. */
static inline void leave(int spin) {
	drop = spin;
	MARK(45);
}

__attribute__((used, visibility("hidden"))) int rb_preload_poll(void *cq, int n, void *wc) {
	int i = find(((struct has_context *)cq)->context);
	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	enter(1);
	MARK(45); /* try */
	poll_fn f = real[i].poll;
	RESUME();
	int got = f(cq, n, wc);
	PAUSE();
	if (got != 0)
		MARK(46); /* got */
	leave(got == 0 || (write_lat && got > 0));
	return got;
}

__attribute__((used, visibility("hidden"))) int rb_preload_post(void *qp, void *wr, void **bad) {
	int i = find(((struct has_context *)qp)->context);
	if (i < 0)
		return EINVAL;
	enter(0);
	post_fn f = real[i].post;
	RESUME();
	int err = f(qp, wr, bad);
	PAUSE();
	leave(0);
	return err;
}

TRAMPOLINE(wrap_poll, rb_preload_poll)
TRAMPOLINE(wrap_post, rb_preload_post)

__attribute__((visibility("default"))) struct context *ibv_open_device(void *device) {
	static struct context *(*next)(void *);
	if (!next)
		next = (struct context * (*)(void *)) dlsym(RTLD_NEXT, "ibv_open_device");
	if (!next)
		return NULL;
	struct context *c = next(device);
	if (!c || nreal >= MAXCTX)
		return c;
	int i = nreal;
	real[i].poll = c->ops.poll_cq;
	real[i].post = c->ops.post_send;
	__atomic_store_n(&real[i].ctx, c, __ATOMIC_RELEASE);
	nreal++;
	c->ops.poll_cq = (poll_fn)wrap_poll;
	c->ops.post_send = (post_fn)wrap_post;
	return c;
}

__attribute__((visibility("default"))) int ibv_close_device(struct context *c) {
	static int (*next)(struct context *);
	if (!next)
		next = (int (*)(struct context *))dlsym(RTLD_NEXT, "ibv_close_device");
	if (opened) {
		opened = 0;
		MARK(43); /* drops what was held */
	}
	return next ? next(c) : EINVAL;
}

__attribute__((constructor)) static void start(void) {
	const char *spin = getenv("RXEVM_PRELOAD_SPIN");
	write_lat = spin && strcmp(spin, "after-completion") == 0;
}

__attribute__((destructor)) static void stop(void) {
	if (opened) {
		opened = 0;
		MARK(43);
	}
}
