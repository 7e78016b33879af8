/*
 * The accounting of a part's instructions: user or kernel, the window
 * state of its vCPU, the polls' held parts and the kernel's time context
 * (insns.c says what counts where).
 */
#include "insns.h"

struct vcpu cpus[MAXCPU];
int open_windows;
uint64_t windows;
struct held helds[MAXCPU];

static inline uint32_t held_hash(uint32_t s) {
	return (s * 0x9e3779b1u) >> (32 - 13) & (HELD_INDEX - 1);
}

void hold(unsigned v, struct part *p) {
	struct held *h = &helds[v];
	if (!prof)
		return;
	uint32_t s = part_slot(p);
	uint64_t n = p->n;
	if (h->len > 0 && h->slot[h->len - 1] == s) {
		h->n[h->len - 1] += n;
		return;
	}
	uint32_t i = held_hash(s);
	for (; h->index[i]; i = (i + 1) & (HELD_INDEX - 1))
		if (h->slot[h->index[i] - 1] == s) {
			h->n[h->index[i] - 1] += n;
			return;
		}
	if (h->len < HELD) {
		h->index[i] = (uint16_t)(h->len + 1);
		h->slot[h->len] = s;
		h->n[h->len++] = n;
	} else
		h->spill += n;
}

void drop_held(unsigned v) {
	struct held *h = &helds[v];
	for (int i = 0; i < h->len; i++) {
		uint32_t j = held_hash(h->slot[i]);
		while (h->index[j])
			h->index[j] = 0, j = (j + 1) & (HELD_INDEX - 1);
	}
	h->len = 0;
	h->spill = 0;
}

void count_held(unsigned v) {
	struct held *h = &helds[v];
	if (prof) {
		for (int i = 0; i < h->len; i++)
			tally_slot(h->slot[i], P_USER, h->n[i]);
		tally_slot(0, P_USER, h->spill);
	}
	drop_held(v);
}

/* time_part follows a vCPU's context through a kernel block and says
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

void on_iret(unsigned v, void *u) {
	(void)u;
	if (v < MAXCPU)
		cpus[v].tick = 0;
}

void count(unsigned v, struct part *p) {
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

/* A block's part's callback (a part that starts with no marker). */
void on_part(unsigned v, void *u) {
	if (v < MAXCPU)
		count(v, u);
}
