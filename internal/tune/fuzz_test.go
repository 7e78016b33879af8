package tune

import (
	"encoding/json"
	"testing"
)

// FuzzParseState: any state file is refused, or every change it holds
// writes an allowed file with allowed values; no panic.
func FuzzParseState(f *testing.F) {
	good, _ := json.Marshal(Plan{Root: "/", Host: "h", BootID: "b", Changes: []Change{
		{What: "CPU 2 governor", Path: "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", Old: "powersave", New: "performance"},
		{What: "irq 9 affinity", Path: "proc/irq/9/smp_affinity_list", Old: "2-3", New: "0-1"},
	}})
	f.Add(good)
	f.Add([]byte(`{"root":"/","changes":[{"path":"etc/shadow","old":"x","new":"y"}]}`))
	f.Add([]byte(`{"root":"/","changes":[{"path":"sys/devices/system/cpu/cpu0/cpuidle/state1/disable","old":"0","new":"1\n2"}]}`))
	f.Add([]byte(`{"root":"","changes":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParseState(in, "state.json")
		if err != nil {
			return
		}
		if p.Root == "" {
			t.Fatal("accepted a state without a root")
		}
		for _, c := range p.Changes {
			if err := checkChange(c); err != nil {
				t.Fatalf("accepted %v: %v", c, err)
			}
		}
	})
}
