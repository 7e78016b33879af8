/*
 * The kernel's roles: the guest sends, bit by bit through markers, a table
 * of triples (role, start, end) from /proc/kallsyms (internal/work/roles.go),
 * and a kernel block's role is looked up in it once per table.
 */
#include <stdlib.h>

#include "insns.h"

struct roles *roles_now;
#define MAXVALS 3 * 64
static uint64_t send_acc, send_vals[MAXVALS]; /* the table being sent */
static int send_n;

/* role_of returns the role of a kernel block at addr. Entries (R_TICK and
 * the actions) match a function's first address only: a block starting
 * there is a call or an interrupt's delivery. */
int role_of(uint64_t addr) {
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

/* send_bit shifts a bit into the value being sent (markers 4b, 4c). */
void send_bit(int bit) {
	send_acc = send_acc << 1 | (uint64_t)bit;
}

/* send_value appends the value being sent to the table (marker 4d). */
void send_value(void) {
	if (send_n < MAXVALS)
		send_vals[send_n++] = send_acc;
	send_acc = 0;
}

/* install_roles makes the values sent, triples (role, start, end), the
 * kernel's roles (marker 4e); an incomplete or bad table installs nothing. */
void install_roles(void) {
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
