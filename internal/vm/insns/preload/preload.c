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
 * opens with wrappers that
 *   - open a window on the calling thread's vCPU at its first post or
 *     poll (the program's loop; its setup before that is not counted),
 *     and close it when the same thread closes the device or the program
 *     exits (rdmacompare closes every window after the program ends too:
 *     work.CloseWindows, for a thread that never closes);
 *   - mark each poll a try, and a poll that found something got, as the
 *     loops do (loops.h): the user instructions of polls that found
 *     nothing are left out.
 * perftest's ib_write_lat also spins in its own code, on a buffer byte the
 * peer's write sets, between a send completion and its next post. There
 * it holds the instructions from each completion on and drops them at the
 * next post: the spin is left out, with the few instructions of its loop
 * around it (the counters, the loop's test, rdtsc).
 *
 * Own declarations of the libibverbs structures' leading fields (their
 * layout is libibverbs' ABI), so the build needs no rdma-core headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
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

static __thread int opened;  /* this thread opened a window */
static __thread int holding; /* write_lat: held since a completion */
static int write_lat;        /* the program is perftest's ib_write_lat */

static int find(struct context *c) {
	for (int i = 0; i < nreal; i++)
		if (__atomic_load_n(&real[i].ctx, __ATOMIC_ACQUIRE) == c)
			return i;
	return -1;
}

static inline void open_window(void) {
	if (!opened) {
		opened = 1;
		MARK(42);
	}
}

static int wrap_poll(void *cq, int n, void *wc) {
	int i = find(((struct has_context *)cq)->context);
	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	open_window();
	MARK(45); /* try */
	int got = real[i].poll(cq, n, wc);
	if (got != 0) {
		MARK(46); /* got */
		if (write_lat && got > 0) {
			MARK(45); /* hold until the next post */
			holding = 1;
		}
	}
	return got;
}

static int wrap_post(void *qp, void *wr, void **bad) {
	int i = find(((struct has_context *)qp)->context);
	if (i < 0)
		return EINVAL;
	open_window();
	if (holding) {
		MARK(45); /* drop what was held: the spin */
		MARK(46);
		holding = 0;
	}
	return real[i].post(qp, wr, bad);
}

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
	c->ops.poll_cq = wrap_poll;
	c->ops.post_send = wrap_post;
	return c;
}

__attribute__((visibility("default"))) int ibv_close_device(struct context *c) {
	static int (*next)(struct context *);
	if (!next)
		next = (int (*)(struct context *))dlsym(RTLD_NEXT, "ibv_close_device");
	if (opened) {
		opened = 0;
		MARK(43);
	}
	return next ? next(c) : EINVAL;
}

__attribute__((constructor)) static void start(void) {
	write_lat = strcmp(program_invocation_short_name, "ib_write_lat") == 0;
}

__attribute__((destructor)) static void stop(void) {
	if (opened) {
		opened = 0;
		MARK(43);
	}
}
