/*
 * The markers' state machine: windows, polls, pauses, reset and report,
 * and the values the guest sends (insns.c lists the markers).
 */
#include "insns.h"

/* A marker's callback: u is the part the marker starts. */
void on_marker(unsigned v, void *u) {
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
		reset_profile();
		break;
	case REPORT:
		report();
		break;
	case BIT0: case BIT1:
		send_bit(p->marker == BIT1);
		break;
	case VALUE:
		send_value();
		break;
	case TABLE:
		install_roles();
		break;
	}
	count(v, p);
}
