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
 * The files: this one translates blocks into parts and loads the plugin;
 * markers.c is the markers' state machine, count.c the accounting of a
 * part's instructions, roles.c the kernel's roles, report.c the output;
 * insns.h declares what they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insns.h"

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

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
	if (open_outputs(path, ppath) != 0)
		return -1;
	report(); /* a file the guest can read before any report: all zero */
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	return 0;
}
