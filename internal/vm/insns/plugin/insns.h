/*
 * The instruction counter's private header: the QEMU plugin API it calls,
 * the markers, and the state its files share. insns.c says what the
 * plugin counts and how the guest steers it.
 *
 * Debian ships no qemu-plugin.h: the few declarations used are below.
 */
#ifndef RXEVM_INSNS_H
#define RXEVM_INSNS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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

/* Only qemu_plugin_install and qemu_plugin_version leave the plugin: the
 * files' shared functions stay calls within it, as when they were one file. */
#pragma GCC visibility push(hidden)

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

extern struct vcpu cpus[MAXCPU];
extern int open_windows; /* all vCPUs' windows, atomically */
extern uint64_t windows;  /* windows opened since reset */

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
extern struct slot *prof; /* NULL: no profile asked for */

/* A vCPU's user parts of the current poll, counted on got: one entry a
 * part, however often it ran, found through a small hash index. Another
 * thread that the kernel runs on the vCPU inside the poll (a descheduled
 * responder's CPU neighbour, with its signal handlers) runs hundreds of
 * parts millions of times; with an entry per run of a part the table
 * filled, and the poll's own last parts went to slot 0. */
#define HELD 4096
#define HELD_INDEX (2 * HELD) /* a power of two */
struct held {
	uint32_t slot[HELD];
	uint64_t n[HELD];
	uint16_t index[HELD_INDEX]; /* entry + 1 by slot hash; 0: free */
	int len;
	uint64_t spill; /* past HELD distinct parts: counted to slot 0 */
};
extern struct held helds[MAXCPU];

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

/* The kernel's roles (marker 4e): what a block at an address means. */
enum { R_NONE, R_TICK, R_IDLE, R_SWITCH, R_SIRQ_LOOP, R_SIRQ_WORK, R_SIRQ_TIME, R_N };
struct role { uint64_t role, start, end; };
struct roles { int n; uint32_t gen; struct role r[]; };
extern struct roles *roles_now; /* replaced whole, never freed (small, rare) */

/* count.c: the accounting of a part's instructions */
void count(unsigned v, struct part *p);
void on_part(unsigned v, void *u);
void on_iret(unsigned v, void *u);
void hold(unsigned v, struct part *p);
void drop_held(unsigned v);
void count_held(unsigned v);

/* markers.c: the state the markers steer */
void on_marker(unsigned v, void *u);

/* roles.c: the kernel's roles, sent by the guest as values */
int role_of(uint64_t addr);
void send_bit(int bit);
void send_value(void);
void install_roles(void);

/* report.c: the counts and the profile, out to files */
int open_outputs(const char *path, const char *ppath);
uint32_t slot(uint64_t addr);
void reset_profile(void);
void report(void);

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

static inline uint32_t roles_gen(void) {
	struct roles *t = __atomic_load_n(&roles_now, __ATOMIC_ACQUIRE);
	return t ? t->gen : 0;
}

#pragma GCC visibility pop

#endif
