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
 *
 * An RDMA WRITE ping-pong (perftest's ib_write_lat, and ours) also spins
 * in the program's own code, on a buffer byte the peer's write sets,
 * between a send completion and its next post. With
 * RXEVM_PRELOAD_SPIN=after-completion in its environment (rdmacompare
 * sets it for those), each send completion is followed, inside the
 * library and uncounted, by a wait until that byte changes, so that the
 * program's own spin finds it at its first look and only that look
 * counts, as our markers count a wait's last poll. The byte is found
 * once per thread: the first time a registered buffer (the one the
 * thread's last post sent from, else the process's only one) changes
 * during that wait. Where it cannot be found, or does not change within
 * WAIT_NS (the peer's last answer never comes), the stretch up to the
 * next call is dropped, as a spin.
 *
 * Each call through the library adds exactly CALL_INSNS counted
 * instructions (the resume markers, the call and the return of the
 * trampolines below); with RXEVM_PRELOAD_CALLS=FILE (a 16-byte file the
 * caller made) the library adds up in it, shared by every process, the
 * calls whose instructions counted, so that the caller can take them off
 * (internal/work.PreloadCallInsns), and the write waits that found no
 * answer (their stretch dropped as a spin).
 *
 * Own declarations of the libibverbs structures' leading fields (their
 * layout is libibverbs' ABI), so the build needs no rdma-core headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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
/* struct ibv_send_wr's leading fields, and struct ibv_sge. */
struct sge {
	uint64_t addr;
	uint32_t length, lkey;
};
struct send_wr {
	uint64_t wr_id;
	struct send_wr *next;
	struct sge *sg_list;
	int num_sge;
};
/* struct ibv_mr's leading fields. */
struct mr {
	void *context, *pd, *addr;
	size_t length;
};

/* The real functions, per context the program opened. */
#define MAXCTX 16
static struct {
	struct context *ctx;
	poll_fn poll;
	post_fn post;
} real[MAXCTX];
static int nreal;

/* The registered buffers (the write wait's candidates). */
#define MAXMR 16
static struct {
	uint8_t *addr;
	size_t len;
} mrs[MAXMR];
static int nmr;

static __thread int opened; /* this thread opened a window */
static __thread int drop;   /* the stretch since the last call is a spin */
static int write_lat;       /* RXEVM_PRELOAD_SPIN=after-completion */
static uint64_t *calls;     /* RXEVM_PRELOAD_CALLS's counters, shared: calls, lost waits */

/* The write wait's state, per thread: the byte the peer's write sets
 * (NULL until found), its value when the completion's polls began, the
 * buffer the last post sent from, and a copy of the candidate buffer. */
static __thread volatile uint8_t *poll_byte;
static __thread uint8_t poll_was;
static __thread int polling;
static __thread uint64_t last_sent;
static __thread uint8_t *snap, *snap_of;
static __thread size_t snap_len;
#define SNAP_MAX (1 << 20)
#define WAIT_NS 1000000000LL

static int find(struct context *c) {
	for (int i = 0; i < nreal; i++)
		if (__atomic_load_n(&real[i].ctx, __ATOMIC_ACQUIRE) == c)
			return i;
	return -1;
}

static int bad_poll(void *cq, int n, void *wc) {
	(void)cq, (void)n, (void)wc;
	errno = EINVAL;
	return -1;
}

static int bad_post(void *qp, void *wr, void **bad) {
	(void)qp, (void)wr, (void)bad;
	return EINVAL;
}

static void counted_call(void) {
	if (calls)
		__atomic_add_fetch(calls, 1, __ATOMIC_RELAXED);
}

/* candidate returns the registered buffer the thread's poll byte is
 * looked for in: the one holding what it last sent, else the only one. */
static int candidate(void) {
	int n = __atomic_load_n(&nmr, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (last_sent >= (uintptr_t)mrs[i].addr && last_sent < (uintptr_t)mrs[i].addr + mrs[i].len)
			return i;
	return n == 1 ? 0 : -1;
}

/* begin_polls notes, at a post (or, where the program posts other than
 * through ops.post_send, at the first poll after a completion), what the
 * wait after the coming completion compares against. */
static void begin_polls(void) {
	polling = 1;
	if (poll_byte) {
		poll_was = *poll_byte;
		return;
	}
	snap_of = NULL;
	int i = candidate();
	if (i < 0 || mrs[i].len > SNAP_MAX)
		return;
	if (snap_len < mrs[i].len) {
		free(snap);
		snap_len = 0;
		if (!(snap = malloc(mrs[i].len)))
			return;
		snap_len = mrs[i].len;
	}
	memcpy(snap, mrs[i].addr, mrs[i].len);
	snap_of = mrs[i].addr;
}

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* wait_answer waits, uncounted, until the peer's write changes the poll
 * byte (finding it the first time) and says whether it did in time. The
 * wait is marked as one (try, got), so that the kernel's work meanwhile
 * falls where a spin's does. */
static int wait_answer(void) {
	polling = 0;
	if (!poll_byte && !snap_of)
		return 0;
	size_t len = 0;
	if (!poll_byte)
		for (int i = 0; i < nmr; i++)
			if (mrs[i].addr == snap_of)
				len = mrs[i].len;
	int64_t end = 0;
	int ok = 0;
	MARK(45);
	for (unsigned spins = 0;; spins++) {
		if (poll_byte) {
			if (*poll_byte != poll_was) {
				ok = 1;
				break;
			}
		} else {
			const volatile uint8_t *b = snap_of;
			for (size_t j = len; j-- > 0;)
				if (b[j] != snap[j]) {
					poll_byte = (volatile uint8_t *)&b[j];
					ok = 1;
					break;
				}
			if (ok)
				break;
		}
		if ((spins & 255) == 0) {
			int64_t t = now_ns();
			if (!end)
				end = t + WAIT_NS;
			else if (t > end)
				break;
		}
	}
	MARK(46);
	return ok;
}

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

/* The trampolines' halves, run paused: before returns the real function
 * (or one that fails as it should), after takes its result. */
__attribute__((used, visibility("hidden"))) poll_fn rb_preload_poll_before(void *cq) {
	int i = find(((struct has_context *)cq)->context);
	if (i < 0)
		return bad_poll;
	enter(1);
	MARK(45); /* try */
	if (write_lat && !polling)
		begin_polls();
	return real[i].poll;
}

__attribute__((used, visibility("hidden"))) int rb_preload_poll_after(int got) {
	if (got != 0) {
		MARK(46); /* got */
		counted_call();
	}
	int spin = got == 0;
	if (write_lat && got > 0 && (spin = !wait_answer()) && calls)
		__atomic_add_fetch(&calls[1], 1, __ATOMIC_RELAXED);
	leave(spin);
	return got;
}

__attribute__((used, visibility("hidden"))) post_fn rb_preload_post_before(void *qp, struct send_wr *wr) {
	int i = find(((struct has_context *)qp)->context);
	if (i < 0)
		return bad_post;
	enter(0);
	counted_call();
	if (write_lat) {
		/* Before the post, the peer's answer to it cannot have come:
		 * the byte holds what the wait after its completion compares
		 * against (at the first poll, the answer may be there already). */
		if (wr && wr->num_sge > 0 && wr->sg_list)
			last_sent = wr->sg_list[0].addr;
		begin_polls();
	}
	return real[i].post;
}

__attribute__((used, visibility("hidden"))) int rb_preload_post_after(int err) {
	leave(0);
	return err;
}

/*
 * The trampolines: the caller's arguments are kept across the paused
 * half before, the real function runs counted, and the half after runs
 * paused. Counted of their own: resume and the call, resume and the
 * return (CALL_INSNS, 4). Entered with %rsp 8 past a 16-byte boundary.
 */
#define TRAMPOLINE(name, before, after)                                      \
	__asm__(".text\n\t"                                                  \
		".type " #name ", @function\n"                               \
		#name ":\n\t"                                                \
		"nopl 0x52444d49(%rax)\n\t" /* pause */                      \
		"push %rdi\n\t"                                              \
		"push %rsi\n\t"                                              \
		"push %rdx\n\t"                                              \
		"call " #before "\n\t"                                       \
		"pop %rdx\n\t"                                               \
		"pop %rsi\n\t"                                               \
		"pop %rdi\n\t"                                               \
		"sub $8, %rsp\n\t"                                           \
		"nopl 0x52444d4a(%rax)\n\t" /* resume */                     \
		"call *%rax\n\t"                                             \
		"nopl 0x52444d49(%rax)\n\t" /* pause */                      \
		"mov %eax, %edi\n\t"                                         \
		"call " #after "\n\t"                                        \
		"add $8, %rsp\n\t"                                           \
		"nopl 0x52444d4a(%rax)\n\t" /* resume */                     \
		"ret\n\t"                                                    \
		".size " #name ", .-" #name "\n");
TRAMPOLINE(rb_wrap_poll, rb_preload_poll_before, rb_preload_poll_after)
TRAMPOLINE(rb_wrap_post, rb_preload_post_before, rb_preload_post_after)
int rb_wrap_poll(void *cq, int n, void *wc);
int rb_wrap_post(void *qp, void *wr, void **bad);

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
	c->ops.poll_cq = rb_wrap_poll;
	c->ops.post_send = rb_wrap_post;
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

/* note_mr keeps a registered buffer for the write wait. */
static struct mr *note_mr(struct mr *m) {
	if (m && nmr < MAXMR) {
		mrs[nmr].addr = m->addr;
		mrs[nmr].len = m->length;
		__atomic_store_n(&nmr, nmr + 1, __ATOMIC_RELEASE);
	}
	return m;
}

__attribute__((visibility("default"))) struct mr *ibv_reg_mr(void *pd, void *addr, size_t length, int access) {
	static struct mr *(*next)(void *, void *, size_t, int);
	if (!next)
		next = (struct mr * (*)(void *, void *, size_t, int)) dlsym(RTLD_NEXT, "ibv_reg_mr");
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	return note_mr(next(pd, addr, length, access));
}

__attribute__((visibility("default"))) struct mr *ibv_reg_mr_iova2(void *pd, void *addr, size_t length, uint64_t iova, unsigned access) {
	static struct mr *(*next)(void *, void *, size_t, uint64_t, unsigned);
	if (!next)
		next = (struct mr * (*)(void *, void *, size_t, uint64_t, unsigned)) dlsym(RTLD_NEXT, "ibv_reg_mr_iova2");
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	return note_mr(next(pd, addr, length, iova, access));
}

__attribute__((constructor)) static void start(void) {
	const char *spin = getenv("RXEVM_PRELOAD_SPIN");
	write_lat = spin && strcmp(spin, "after-completion") == 0;
	const char *path = getenv("RXEVM_PRELOAD_CALLS");
	if (path && *path) {
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			void *p = mmap(NULL, 2 * sizeof *calls, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (p != MAP_FAILED)
				calls = p;
			close(fd);
		}
	}
}

__attribute__((destructor)) static void stop(void) {
	if (opened) {
		opened = 0;
		MARK(43);
	}
}
