package work

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// kallsymsRoles is an excerpt of the VM's /proc/kallsyms (Debian's 6.1.0-57,
// KASLR on): each role's function and the symbol after it.
const kallsymsRoles = `ffffffff85e03270 T __switch_to_asm
ffffffff85e032d0 T ret_from_fork
ffffffff85ea8df0 t handle_softirqs
ffffffff85ea9070 t __irq_exit_rcu
ffffffff85ea95b0 t tasklet_action
ffffffff85ea95d0 t tasklet_hi_action
ffffffff85ea95f0 t tasklet_clear_sched
ffffffff85ef5830 t run_rebalance_domains
ffffffff85ef58a0 t update_sd_lb_stats
ffffffff85efb980 t do_idle
ffffffff85efbc30 T play_idle_precise
ffffffff85f3be70 t rcu_core_si
ffffffff85f3be80 t rcu_cpu_kthread
ffffffff85f54090 t run_timer_softirq
ffffffff85f540d0 t ktime_get_next
ffffffff85f555d0 t hrtimer_run_softirq
ffffffff85f556d0 t hrtimer_next
ffffffff865dab30 t net_tx_action
ffffffff865dad00 t net_x
ffffffff865e0730 t net_rx_action
ffffffff865e0b00 t net_y
ffffffff86a00ef0 T asm_sysvec_apic_timer_interrupt
ffffffff86a00f10 T asm_sysvec_other
ffffffffc0a01000 t rxe_rcv	[rdma_rxe]
ffffffffc0a01200 t do_idle	[some_module]
`

func TestKernelRoles(t *testing.T) {
	roles, err := KernelRoles(strings.NewReader(kallsymsRoles))
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]Role{
		0xffffffff85e03270: {roleSwitch, 0xffffffff85e03270, 0xffffffff85e032d0},
		0xffffffff85ea8df0: {roleSirqLoop, 0xffffffff85ea8df0, 0xffffffff85ea9070},
		0xffffffff85ea95b0: {roleSirqWork, 0xffffffff85ea95b0, 0xffffffff85ea95d0},
		0xffffffff85ea95d0: {roleSirqWork, 0xffffffff85ea95d0, 0xffffffff85ea95f0},
		0xffffffff85ef5830: {roleSirqTime, 0xffffffff85ef5830, 0xffffffff85ef58a0},
		0xffffffff85efb980: {roleIdle, 0xffffffff85efb980, 0xffffffff85efbc30},
		0xffffffff85f3be70: {roleSirqTime, 0xffffffff85f3be70, 0xffffffff85f3be80},
		0xffffffff85f54090: {roleSirqTime, 0xffffffff85f54090, 0xffffffff85f540d0},
		0xffffffff85f555d0: {roleSirqTime, 0xffffffff85f555d0, 0xffffffff85f556d0},
		0xffffffff865dab30: {roleSirqWork, 0xffffffff865dab30, 0xffffffff865dad00},
		0xffffffff865e0730: {roleSirqWork, 0xffffffff865e0730, 0xffffffff865e0b00},
		0xffffffff86a00ef0: {roleTick, 0xffffffff86a00ef0, 0xffffffff86a00f10},
	}
	if len(roles) != len(want) {
		t.Fatalf("%d roles, want %d (a module's do_idle is not the idle loop): %+v", len(roles), len(want), roles)
	}
	for _, r := range roles {
		if want[r.Start] != r {
			t.Errorf("role %+v, want %+v", r, want[r.Start])
		}
	}

	// Hidden addresses (not root) and a kernel without a role's function.
	hidden := regexp.MustCompile(`(?m)^[0-9a-f]{16}`).ReplaceAllString(kallsymsRoles, "0000000000000000")
	if _, err := KernelRoles(strings.NewReader(hidden)); !errors.Is(err, ErrHiddenKernel) {
		t.Errorf("hidden addresses: %v, want ErrHiddenKernel", err)
	}
	noIdle := strings.Replace(kallsymsRoles, " do_idle\n", " do_idle_renamed\n", 1)
	if _, err := KernelRoles(strings.NewReader(noIdle)); err == nil || !strings.Contains(err.Error(), "role 2") {
		t.Errorf("no do_idle: %v, want an error naming the role", err)
	}
	if _, err := KernelRoles(strings.NewReader("garbage\n")); err == nil {
		t.Error("a malformed line parsed")
	}
}
