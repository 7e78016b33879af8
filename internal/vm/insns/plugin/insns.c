/*
 * rxevm's instruction counter: a QEMU TCG plugin (plugin API version 1, as
 * in QEMU 7.2) that counts the guest instructions a measured loop costs,
 * user and kernel, on every vCPU. rxevm -insns builds it with the host's cc
 * and loads it; internal/vm/insns says how.
 *
 * The guest steers it with marker instructions: 7-byte NOPs
 * (nopl 0x52444dXX(%rax), "RDMB" in the displacement) that no compiler
 * emits, so on hardware and without the plugin they cost one NOP each:
 *   42 open   a window on this vCPU (they nest)
 *   43 close  a window on this vCPU
 *   44 close-all  every vCPU's windows (after a program that opened
 *             windows ended, whichever threads it closed them on)
 *   45 try    a poll of a wait begins: this vCPU's user instructions are
 *             held apart from here, and a try that follows drops them
 *   46 got    the wait's last poll succeeded: the held ones count
 *   49 pause  this vCPU's user instructions count not at all, held or
 *             not, until
 *   4a resume (the preload library's own instructions: ../preload)
 *   47 reset  zero every count
 *   48 report write the counts to out=FILE (the guest reads them back
 *             through a 9p share: plugin API 1 cannot write guest memory),
 *             and with profile=FILE the counts per block there
 *   4b, 4c    shift a 0 or a 1 bit into the value being sent
 *   4d        the value is complete: append it to the table being sent
 *   4e        the table is complete: the kernel's time roles (below)
 * Counted: a vCPU's user instructions while a window is open on it, except
 * the polls of a wait that found nothing (so spinning on the peer, whose
 * length follows time, adds nothing); every vCPU's kernel instructions
 * while any window is open anywhere (the doorbell's system call, the
 * provider's kernel work in softirqs, interrupts), in three parts: on a
 * vCPU with a window open outside a wait (kernel), inside one
 * (kernel-wait: interrupts of a spin, which follow time), and on the other
 * vCPUs (kernel-other).
 *
 * Kernel work apart from time (kernel-work): plugin API 1 shows no
 * registers and no interrupt, so the guest sends, from /proc/kallsyms, the
 * addresses of the few kernel functions that say what a vCPU is doing
 * (internal/work/roles.go): the local timer interrupt's entry, the idle
 * task's loop, the context switch, the softirq loop and its actions. Each
 * vCPU then is in time's context from the timer interrupt's entry until its
 * iretq, a return to user mode or a context switch; in the idle task from
 * a block of do_idle until a switch; inside a softirq action from its
 * entry until the softirq loop runs again (the action returned), the
 * action's kind (network and tasklets: work; timers, RCU, load balancing:
 * time) winning over an interrupt entered before it. While any window is
 * open, kernel instructions that are not time's (timer interrupt, time
 * softirqs, idle task) count as kernel-work inside a work softirq action
 * on any vCPU (the device's work, wherever it was deferred to), and on a
 * vCPU with a window open otherwise too (the measured thread's system
 * calls, exceptions and softirqs, in a wait or not) unless a context
 * switch came since user mode last ran there: the plugin cannot tell which
 * task a switch resumed, and the tasks that come between a pinned spinning
 * thread's user instructions are the kernel's threads (kworkers,
 * khugepaged, woken by timers). Those, and other processes' system calls
 * on the other vCPUs (the Go runtime's sysmon), are others.
 *
 * Instructions are counted per translated block, split at markers: the
 * part of a block before its first marker when the block starts, each
 * marker's part (the marker up to the next one) when the marker runs,
 * under the state the marker left.
 *
 * With profile=FILE the same counts are also kept per part, keyed by the
 * guest address the part starts at, in a table of PROF_SLOTS; slot 0 takes
 * the parts that first counted once the table was full. The user
 * instructions of a poll are held per part and counted on got as the
 * totals are. The guest maps the addresses to functions (internal/work).
 *
 * Debian ships no qemu-plugin.h: the few declarations used are below.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, qemu_plugin_vcpu_udata_cb_t,
	enum qemu_plugin_cb_flags, void *);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, qemu_plugin_vcpu_udata_cb_t,
	enum qemu_plugin_cb_flags, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

enum { OPEN = 0x42, CLOSE = 0x43, CLOSEALL = 0x44, TRY = 0x45, GOT = 0x46, RESET = 0x47, REPORT = 0x48,
	PAUSE = 0x49, RESUME = 0x4a, BIT0 = 0x4b, BIT1 = 0x4c, VALUE = 0x4d, TABLE = 0x4e };

#define MAXCPU 64

/* Kernel addresses have the top bit set, with 4- and 5-level paging alike. */
#define KERNEL(va) ((va) >> 63)

/* One vCPU's counts, written only by that vCPU's thread (a cache line
 * each); report reads them all. */
struct vcpu {
	uint64_t user;
	/* kernel instructions: on this vCPU with a window open, outside and
	 * inside a wait; and with no window open here (another vCPU's
	 * window is) */
	uint64_t kernel, kwait, kother;
	uint64_t held;  /* user instructions of the current poll (try) */
	int depth;      /* windows open on this vCPU */
	int trying;     /* between try and got */
	int paused;     /* between pause and resume */
	/* kernel-work accounting (roles): counts and context */
	uint64_t kwork, ktime, kothers;
	uint64_t tick;  /* when the timer interrupt was entered (0: not in it) */
	uint64_t sirq;  /* when a softirq action was entered (0: none) */
	uint64_t seq;   /* this vCPU's event clock, for which came last */
	uint8_t sirq_time; /* that action is time's */
	uint8_t idle;   /* in the idle task */
	uint8_t switched; /* a switch since user mode last ran: which task is unknown */
	char pad[128 - 11 * sizeof(uint64_t) - 3 * sizeof(int) - 3];
};

static struct vcpu cpus[MAXCPU];
static int open_windows; /* all vCPUs' windows, atomically */
static uint64_t windows;  /* windows opened since reset */
static int fd = -1;

/* The profile (profile=FILE): per part, its start address and its counts
 * as user, kernel, kernel-wait, kernel-other. */
enum { P_USER, P_KERNEL, P_KWAIT, P_KOTHER, P_N, /* the profile file's columns; then profile-kernel's: */
	P_KWORK = P_N, P_KTIME, P_KOTHERS, P_ALL };
#define PROF_BITS 17
#define PROF_SLOTS (1u << PROF_BITS)
struct slot {
	uint64_t addr;
	uint64_t n[P_ALL];
};
static struct slot *prof;        /* NULL: no profile asked for */
static int pfd = -1, pkfd = -1; /* profile=FILE and FILE-kernel */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER; /* inserts (translation) */

/* A vCPU's user parts of the current poll, counted on got. */
#define HELD 256
struct held {
	uint32_t slot[HELD], n[HELD];
	int len;
	uint64_t spill; /* past HELD parts: counted to slot 0 */
};
static struct held helds[MAXCPU];

/* A block's part, the callback's argument: allocated when the block is
 * translated and kept (QEMU 7.2 tells a plugin of no block's end; blocks
 * are retranslated only when its code buffer fills). */
#define NO_SLOT UINT32_MAX
struct part {
	uint64_t addr;   /* where it starts */
	uint32_t n;      /* instructions */
	uint32_t slot;   /* profile slot, NO_SLOT until it first counts */
	uint8_t kernel;
	uint8_t marker;  /* the marker it starts with, if any */
	uint8_t role;    /* its kernel role (R_*) in the roles of gen */
	uint32_t gen;
};

static uint32_t slot(uint64_t addr);

/* part_slot returns p's profile slot, taking one the first time: only the
 * parts that count take slots, not every block since boot. */
static inline uint32_t part_slot(struct part *p) {
	uint32_t s = __atomic_load_n(&p->slot, __ATOMIC_RELAXED);
	if (s == NO_SLOT) {
		s = slot(p->addr);
		__atomic_store_n(&p->slot, s, __ATOMIC_RELAXED);
	}
	return s;
}

static inline void tally_slot(uint32_t s, int kind, uint64_t n) {
	__atomic_add_fetch(&prof[s].n[kind], n, __ATOMIC_RELAXED);
}

static inline void tally(struct part *p, int kind) {
	if (prof)
		tally_slot(part_slot(p), kind, p->n);
}

static inline void hold(unsigned v, struct part *p) {
	struct held *h = &helds[v];
	if (!prof)
		return;
	uint32_t s = part_slot(p);
	uint64_t n = p->n;
	if (h->len > 0 && h->slot[h->len - 1] == s)
		h->n[h->len - 1] += n;
	else if (h->len < HELD) {
		h->slot[h->len] = s;
		h->n[h->len++] = n;
	} else
		h->spill += n;
}

static inline void drop_held(unsigned v) {
	helds[v].len = 0;
	helds[v].spill = 0;
}

static void count_held(unsigned v) {
	struct held *h = &helds[v];
	if (prof) {
		for (int i = 0; i < h->len; i++)
			tally_slot(h->slot[i], P_USER, h->n[i]);
		tally_slot(0, P_USER, h->spill);
	}
	drop_held(v);
}

/* The kernel's roles (marker 4e): what a block at an address means. */
enum { R_NONE, R_TICK, R_IDLE, R_SWITCH, R_SIRQ_LOOP, R_SIRQ_WORK, R_SIRQ_TIME, R_N };
struct role { uint64_t role, start, end; };
struct roles { int n; uint32_t gen; struct role r[]; };
static struct roles *roles_now; /* replaced whole, never freed (small, rare) */
#define MAXVALS 3 * 64
static uint64_t send_acc, send_vals[MAXVALS]; /* the table being sent */
static int send_n;

/* role_of returns the role of a kernel block at addr. Entries (R_TICK and
 * the actions) match a function's first address only: a block starting
 * there is a call or an interrupt's delivery. */
static int role_of(uint64_t addr) {
	struct roles *t = __atomic_load_n(&roles_now, __ATOMIC_ACQUIRE);
	if (!t)
		return R_NONE;
	for (int i = 0; i < t->n; i++) {
		struct role *r = &t->r[i];
		if (addr < r->start || addr >= r->end)
			continue;
		switch (r->role) {
		case R_TICK: case R_SIRQ_WORK: case R_SIRQ_TIME:
			if (addr != r->start)
				continue;
		}
		return (int)r->role;
	}
	return R_NONE;
}

static inline uint32_t roles_gen(void) {
	struct roles *t = __atomic_load_n(&roles_now, __ATOMIC_ACQUIRE);
	return t ? t->gen : 0;
}

/* kernel_part follows a vCPU's context through a kernel block and says
 * whether its instructions are time's. */
static inline int time_part(struct vcpu *c, struct part *p) {
	uint32_t g = roles_gen();
	if (p->gen != g) {
		p->role = (uint8_t)role_of(p->addr);
		p->gen = g;
	}
	switch (p->role) {
	case R_TICK:
		c->tick = ++c->seq;
		break;
	case R_IDLE:
		c->idle = 1;
		break;
	case R_SWITCH:
		c->idle = 0;
		c->switched = 1;
		c->tick = c->sirq = 0;
		break;
	case R_SIRQ_LOOP:
		c->sirq = 0;
		break;
	case R_SIRQ_WORK: case R_SIRQ_TIME:
		c->sirq = ++c->seq;
		c->sirq_time = p->role == R_SIRQ_TIME;
		break;
	}
	if (c->sirq > c->tick)
		return c->sirq_time;
	return c->tick || c->idle;
}

static void on_iret(unsigned v, void *u) {
	(void)u;
	if (v < MAXCPU)
		cpus[v].tick = 0;
}

static inline void count(unsigned v, struct part *p) {
	uint64_t n = p->n;
	struct vcpu *c = &cpus[v];
	if (p->kernel) {
		int t = time_part(c, p);
		if (__atomic_load_n(&open_windows, __ATOMIC_RELAXED) > 0) {
			if (t) {
				c->ktime += n;
				tally(p, P_KTIME);
			} else if ((c->depth > 0 && !c->switched) || (c->sirq > c->tick && !c->sirq_time)) {
				c->kwork += n;
				tally(p, P_KWORK);
			} else {
				c->kothers += n;
				tally(p, P_KOTHERS);
			}
		}
		if (c->depth > 0) {
			if (c->trying) {
				c->kwait += n;
				tally(p, P_KWAIT);
			} else {
				c->kernel += n;
				tally(p, P_KERNEL);
			}
		} else if (__atomic_load_n(&open_windows, __ATOMIC_RELAXED) > 0) {
			c->kother += n;
			tally(p, P_KOTHER);
		}
	} else {
		c->tick = c->sirq = 0; /* back in user mode: every kernel context ended */
		c->idle = c->switched = 0;
	}
	if (!p->kernel && c->depth > 0 && !c->paused) {
		if (c->trying) {
			c->held += n;
			hold(v, p);
		} else {
			c->user += n;
			tally(p, P_USER);
		}
	}
}

/* slot returns addr's profile slot, adding it (slot 0 when the table is
 * full or there is no profile). Linear probing; slot 0 is never probed. */
static uint32_t slot(uint64_t addr) {
	if (!prof)
		return 0;
	uint32_t found = 0;
	pthread_mutex_lock(&prof_lock);
	uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - PROF_BITS));
	for (uint32_t tries = 0; tries < PROF_SLOTS / 2; tries++, i = (i + 1) & (PROF_SLOTS - 1)) {
		if (i == 0)
			continue;
		if (prof[i].addr == addr) {
			found = i;
			break;
		}
		if (prof[i].addr == 0) {
			prof[i].addr = addr;
			found = i;
			break;
		}
	}
	pthread_mutex_unlock(&prof_lock);
	return found;
}

/* write_columns writes every slot that counted something in columns
 * [from, to) of the profile to fd, under the header line head:
 *   HEAD
 *   ADDR N...   (hex address, decimal counts)
 *   end
 * replacing the file's previous contents. */
static void write_columns(int fd, const char *head, int from, int to) {
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return;
	len += snprintf(buf, cap, "%s\n", head);
	for (uint32_t i = 0; i < PROF_SLOTS; i++) {
		uint64_t n[P_ALL], any = 0;
		for (int j = from; j < to; j++)
			any |= n[j] = __atomic_load_n(&prof[i].n[j], __ATOMIC_RELAXED);
		if (!any)
			continue;
		if (cap - len < 128) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				return;
			}
			buf = b;
			cap *= 2;
		}
		len += snprintf(buf + len, cap - len, "%llx", (unsigned long long)prof[i].addr);
		for (int j = from; j < to; j++)
			len += snprintf(buf + len, cap - len, " %llu", (unsigned long long)n[j]);
		len += snprintf(buf + len, cap - len, "\n");
	}
	len += snprintf(buf + len, cap - len, "end\n");
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, len, 0) != (ssize_t)len)
		fprintf(stderr, "rxevm insns plugin: writing the profile failed\n");
	free(buf);
}

/* write_profile writes the profile: user, kernel, kernel-wait and
 * kernel-other per address to profile=FILE
 * (rxevm-insns-profile 1 windows W), and kernel-work, kernel-time and
 * kernel-others to FILE-kernel (rxevm-insns-kernel-profile 1 windows W),
 * a file of its own so that readers of the first need no change. */
static void write_profile(uint64_t w) {
	char head[128];
	snprintf(head, sizeof head, "rxevm-insns-profile 1 windows %llu", (unsigned long long)w);
	write_columns(pfd, head, 0, P_N);
	if (pkfd >= 0) {
		snprintf(head, sizeof head, "rxevm-insns-kernel-profile 1 windows %llu", (unsigned long long)w);
		write_columns(pkfd, head, P_KWORK, P_ALL);
	}
}

static void on_part(unsigned v, void *u) {
	if (v < MAXCPU)
		count(v, u);
}

static void report(void) {
	uint64_t u = 0, k = 0, kw = 0, ko = 0, wk = 0, tm = 0, ot = 0;
	for (int i = 0; i < MAXCPU; i++) {
		wk += __atomic_load_n(&cpus[i].kwork, __ATOMIC_RELAXED);
		tm += __atomic_load_n(&cpus[i].ktime, __ATOMIC_RELAXED);
		ot += __atomic_load_n(&cpus[i].kothers, __ATOMIC_RELAXED);
		u += __atomic_load_n(&cpus[i].user, __ATOMIC_RELAXED);
		k += __atomic_load_n(&cpus[i].kernel, __ATOMIC_RELAXED);
		kw += __atomic_load_n(&cpus[i].kwait, __ATOMIC_RELAXED);
		ko += __atomic_load_n(&cpus[i].kother, __ATOMIC_RELAXED);
	}
	char buf[512];
	/* Fixed width: each report overwrites the last one whole. The second
	 * line is new in this version: readers of the first alone ignore it. */
	int n = snprintf(buf, sizeof buf,
		"rxevm-insns 1 user %20llu kernel %20llu kernel-wait %20llu kernel-other %20llu windows %20llu\n"
		"rxevm-insns-kernel 1 work %20llu time %20llu others %20llu roles %5d\n",
		(unsigned long long)u, (unsigned long long)k, (unsigned long long)kw, (unsigned long long)ko,
		(unsigned long long)__atomic_load_n(&windows, __ATOMIC_RELAXED),
		(unsigned long long)wk, (unsigned long long)tm, (unsigned long long)ot,
		roles_now ? roles_now->n : 0);
	if (pwrite(fd, buf, n, 0) != n)
		fprintf(stderr, "rxevm insns plugin: writing the counts failed\n");
	if (prof)
		write_profile(__atomic_load_n(&windows, __ATOMIC_RELAXED));
}

/* install_roles makes the values sent, triples (role, start, end), the
 * kernel's roles; an incomplete or bad table installs nothing. */
static void install_roles(void) {
	int n = send_n / 3;
	if (send_n % 3 == 0 && n > 0) {
		struct roles *t = malloc(sizeof *t + n * sizeof t->r[0]);
		if (t) {
			t->n = 0;
			t->gen = roles_gen() + 1;
			for (int i = 0; i < n; i++) {
				struct role r = {send_vals[3 * i], send_vals[3 * i + 1], send_vals[3 * i + 2]};
				if (r.role > R_NONE && r.role < R_N && r.start < r.end)
					t->r[t->n++] = r;
			}
			__atomic_store_n(&roles_now, t, __ATOMIC_RELEASE);
		}
	}
	send_n = 0;
	send_acc = 0;
}

/* A marker's callback: u is the part the marker starts. */
static void on_marker(unsigned v, void *u) {
	struct part *p = u;
	if (v >= MAXCPU)
		return;
	struct vcpu *c = &cpus[v];
	switch (p->marker) {
	case OPEN:
		c->depth++;
		__atomic_add_fetch(&open_windows, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&windows, 1, __ATOMIC_RELAXED);
		break;
	case CLOSE:
		if (c->depth > 0) {
			c->depth--;
			__atomic_sub_fetch(&open_windows, 1, __ATOMIC_RELAXED);
		}
		c->trying = 0;
		c->paused = 0;
		c->held = 0;
		drop_held(v);
		break;
	case CLOSEALL:
		for (int i = 0; i < MAXCPU; i++) {
			cpus[i].depth = 0;
			cpus[i].trying = 0;
			cpus[i].paused = 0;
			cpus[i].held = 0;
			drop_held(i);
		}
		__atomic_store_n(&open_windows, 0, __ATOMIC_RELAXED);
		break;
	case TRY:
		c->trying = 1;
		c->held = 0;
		drop_held(v);
		break;
	case GOT:
		if (c->trying) {
			c->user += c->held;
			count_held(v);
		}
		c->trying = 0;
		c->held = 0;
		break;
	case PAUSE:
		c->paused = 1;
		break;
	case RESUME:
		c->paused = 0;
		break;
	case RESET:
		for (int i = 0; i < MAXCPU; i++) {
			__atomic_store_n(&cpus[i].user, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].kernel, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].kwait, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].kother, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].kwork, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].ktime, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&cpus[i].kothers, 0, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&windows, 0, __ATOMIC_RELAXED);
		if (prof)
			for (uint32_t i = 0; i < PROF_SLOTS; i++)
				for (int j = 0; j < P_ALL; j++)
					__atomic_store_n(&prof[i].n[j], 0, __ATOMIC_RELAXED);
		break;
	case REPORT:
		report();
		break;
	case BIT0: case BIT1:
		send_acc = send_acc << 1 | (p->marker == BIT1);
		break;
	case VALUE:
		if (send_n < MAXVALS)
			send_vals[send_n++] = send_acc;
		send_acc = 0;
		break;
	case TABLE:
		install_roles();
		break;
	}
	count(v, p);
}

static int marker(const struct qemu_plugin_insn *in) {
	const unsigned char *b = qemu_plugin_insn_data(in);
	if (qemu_plugin_insn_size(in) != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 ||
	    b[4] != 0x4d || b[5] != 0x44 || b[6] != 0x52)
		return 0;
	switch (b[3]) {
	case OPEN: case CLOSE: case CLOSEALL: case TRY: case GOT: case RESET: case REPORT: case PAUSE: case RESUME:
	case BIT0: case BIT1: case VALUE: case TABLE:
		return b[3];
	}
	return 0;
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t k = KERNEL(qemu_plugin_tb_vaddr(tb));
	/* The part before the first marker; then each marker's. */
	size_t start = 0;
	uint64_t start_va = qemu_plugin_tb_vaddr(tb);
	struct qemu_plugin_insn *at = NULL;
	int kind = 0;
	for (size_t i = 0; i <= n; i++) {
		int m = 0;
		struct qemu_plugin_insn *in = NULL;
		if (i < n && !k) {
			in = qemu_plugin_tb_get_insn(tb, i);
			m = marker(in);
		} else if (i < n) {
			/* iretq (48 cf): the end of an interrupt that came in the kernel */
			struct qemu_plugin_insn *ki = qemu_plugin_tb_get_insn(tb, i);
			const unsigned char *b = qemu_plugin_insn_data(ki);
			if (qemu_plugin_insn_size(ki) == 2 && b[0] == 0x48 && b[1] == 0xcf)
				qemu_plugin_register_vcpu_insn_exec_cb(ki, on_iret, QEMU_PLUGIN_CB_NO_REGS, NULL);
		}
		if (!m && i < n)
			continue;
		if (at || i > start) {
			struct part *p = malloc(sizeof *p);
			if (!p) {
				fprintf(stderr, "rxevm insns plugin: out of memory\n");
				abort();
			}
			*p = (struct part){.addr = start_va, .n = (uint32_t)(i - start), .slot = NO_SLOT,
				.kernel = (uint8_t)k, .marker = (uint8_t)kind};
			if (at)
				qemu_plugin_register_vcpu_insn_exec_cb(at, on_marker, QEMU_PLUGIN_CB_NO_REGS, p);
			else
				qemu_plugin_register_vcpu_tb_exec_cb(tb, on_part, QEMU_PLUGIN_CB_NO_REGS, p);
		}
		start = i;
		if (in)
			start_va = qemu_plugin_insn_vaddr(in);
		at = in;
		kind = m;
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv) {
	(void)info;
	const char *path = NULL, *ppath = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "profile=", 8))
			ppath = argv[i] + 8;
	}
	if (!path) {
		fprintf(stderr, "rxevm insns plugin: no out=FILE argument\n");
		return -1;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		perror(path);
		return -1;
	}
	if (ppath) {
		if ((pfd = open(ppath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
			perror(ppath);
			return -1;
		}
		size_t kl = strlen(ppath) + sizeof "-kernel";
		char *kpath = malloc(kl);
		if (kpath) {
			snprintf(kpath, kl, "%s-kernel", ppath);
			pkfd = open(kpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			free(kpath);
		}
		if (!(prof = calloc(PROF_SLOTS, sizeof *prof))) {
			fprintf(stderr, "rxevm insns plugin: no memory for the profile\n");
			return -1;
		}
	}
	report(); /* a file the guest can read before any report: all zero */
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	return 0;
}
