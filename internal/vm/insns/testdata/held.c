/* held.c drives the plugin's accounting of a poll's held parts without
 * QEMU (TestHeldParts): linked with the plugin's files (../plugin/*.c),
 * with the QEMU API they call stubbed out. A poll holds its own part, then a neighbour thread on the
 * same vCPU runs 600 distinct parts 100,000 times before the poll's last
 * part and its got; three such polls. Printed: the poll's own part's
 * profile count, slot 0's (parts the table could not place), the profile's
 * total, and the index cells left after the polls. */
#include <stdio.h>
#include <stdlib.h>

#include "../plugin/insns.h"

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *t) { (void)t; return 0; }
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *t) { (void)t; return 0; }
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *t, size_t i) { (void)t; (void)i; return 0; }
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *i) { (void)i; return 0; }
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *i) { (void)i; return 0; }
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *i) { (void)i; return 0; }
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t a, qemu_plugin_vcpu_tb_trans_cb_t b) { (void)a; (void)b; }
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *a, qemu_plugin_vcpu_udata_cb_t b, enum qemu_plugin_cb_flags c, void *d) { (void)a; (void)b; (void)c; (void)d; }
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *a, qemu_plugin_vcpu_udata_cb_t b, enum qemu_plugin_cb_flags c, void *d) { (void)a; (void)b; (void)c; (void)d; }

int main(void) {
	prof = calloc(PROF_SLOTS, sizeof *prof);
	static struct part other[600];
	struct part own = {.addr = 0x1000, .n = 3, .slot = NO_SLOT};
	for (int i = 0; i < 600; i++)
		other[i] = (struct part){.addr = 0x2000 + 16 * i, .n = 1, .slot = NO_SLOT};
	for (int poll = 0; poll < 3; poll++) {
		drop_held(0); /* the try */
		for (int k = 0; k < 100000; k++)
			hold(0, &other[k % 600]);
		hold(0, &own);
		count_held(0); /* the got */
	}
	uint64_t total = 0;
	for (uint32_t i = 0; i < PROF_SLOTS; i++)
		total += prof[i].n[P_USER];
	int left = 0;
	for (int i = 0; i < HELD_INDEX; i++)
		left += helds[0].index[i] != 0;
	printf("own %llu slot0 %llu total %llu left %d\n", (unsigned long long)prof[part_slot(&own)].n[P_USER],
		(unsigned long long)prof[0].n[P_USER], (unsigned long long)total, left);
	return 0;
}
