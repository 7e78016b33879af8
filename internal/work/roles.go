package work

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The kernel's roles: the few kernel functions that tell the plugin, which
// sees no registers and no interrupts, whether a vCPU's kernel
// instructions follow time (plugin/insns.c, "kernel work apart from
// time"; plugin/roles.c). Their numbers are the plugin's R_* values.
const (
	roleTick     = 1 // the local timer interrupt's entry
	roleIdle     = 2 // the idle task's loop
	roleSwitch   = 3 // the context switch
	roleSirqLoop = 4 // the softirq loop: the action before returned
	roleSirqWork = 5 // softirq actions that do the device's work
	roleSirqTime = 6 // softirq actions that follow time
)

// roleSymbols names the functions of each role (Linux 6.1; the softirq
// loop was renamed from __do_softirq to handle_softirqs in 6.10 and in
// its stable backports).
var roleSymbols = map[string]uint64{
	"asm_sysvec_apic_timer_interrupt": roleTick,
	"do_idle":                         roleIdle,
	"__switch_to_asm":                 roleSwitch,
	"handle_softirqs":                 roleSirqLoop,
	"__do_softirq":                    roleSirqLoop,
	"net_rx_action":                   roleSirqWork,
	"net_tx_action":                   roleSirqWork,
	"tasklet_action":                  roleSirqWork,
	"tasklet_hi_action":               roleSirqWork,
	"run_timer_softirq":               roleSirqTime,
	"hrtimer_run_softirq":             roleSirqTime,
	"rcu_core_si":                     roleSirqTime,
	"run_rebalance_domains":           roleSirqTime,
}

// A Role is one kernel function the plugin watches: its role and its
// addresses [Start, End).
type Role struct {
	Role, Start, End uint64
}

// neededRoles must all be found for the split to mean anything.
var neededRoles = []uint64{roleTick, roleIdle, roleSwitch, roleSirqLoop, roleSirqWork, roleSirqTime}

// KernelRoles reads kallsyms (/proc/kallsyms's format) and returns the
// roles' functions, each ending where the next symbol starts. It fails
// when the addresses are hidden or a role has no function.
func KernelRoles(kallsyms io.Reader) ([]Role, error) {
	type sym struct {
		addr uint64
		name string
	}
	var text []sym
	sc := bufio.NewScanner(kallsyms)
	sc.Buffer(make([]byte, 4096), 4096)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			return nil, fmt.Errorf("kallsyms line %d: %q", n, trunc(sc.Bytes()))
		}
		if len(f) > 3 {
			continue // a module's: the roles are vmlinux's
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("kallsyms line %d: %q", n, trunc(sc.Bytes()))
		}
		text = append(text, sym{addr, f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(text, func(i, j int) bool { return text[i].addr < text[j].addr })
	var roles []Role
	found := map[uint64]bool{}
	for i, s := range text {
		r, ok := roleSymbols[s.name]
		if !ok {
			continue
		}
		if s.addr == 0 {
			return nil, ErrHiddenKernel
		}
		end := s.addr + 1
		for j := i + 1; j < len(text); j++ {
			if text[j].addr > s.addr {
				end = text[j].addr
				break
			}
		}
		roles = append(roles, Role{r, s.addr, end})
		found[r] = true
	}
	for _, r := range neededRoles {
		if !found[r] {
			return nil, fmt.Errorf("kallsyms has none of the functions of role %d (a kernel other than Linux 6.1-6.12?)", r)
		}
	}
	return roles, nil
}

// sendRoles sends the roles to the plugin through markers: each value
// bit by bit, most significant first, then the end of the table.
func sendRoles(roles []Role) {
	for _, r := range roles {
		for _, v := range []uint64{r.Role, r.Start, r.End} {
			for b := 63; b >= 0; b-- {
				if v>>b&1 == 1 {
					markBit1()
				} else {
					markBit0()
				}
			}
			markValue()
		}
	}
	markTable()
}

// rolesSent sends the kernel's roles once per process (the plugin keeps
// them for the boot; another process sends the same).
var rolesSent = sync.OnceValue(func() error {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return err
	}
	defer f.Close()
	roles, err := KernelRoles(f)
	if err != nil {
		return err
	}
	sendRoles(roles)
	return nil
})

// Prepare does before a measurement what the plugin counter's first Reset
// would otherwise do inside it: read kallsyms and send the kernel's roles.
// Under the plugin's instrumentation that takes seconds, longer than a
// peer waiting in a started run allows (RDMABENCH_TIMEOUT, 5 s): a
// responder timed out in 2 of 3 A/A trials of make validate-work on a
// quiet host. Outside rxevm -insns it does nothing. The error says why
// the roles were not sent: kernel-work-insns/op is then absent.
func Prepare() error {
	if os.Getenv(EnvPlugin) == "" {
		return nil
	}
	return rolesSent()
}
