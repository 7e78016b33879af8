package main

import (
	"io"
	"strings"
	"testing"
)

func TestFleetFlags(t *testing.T) {
	c, err := parseFlags([]string{"-nodes", "4", "-slurm", "-netem", "node3=delay 2ms", "prog"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Nodes != 4 || !c.Slurm || c.SMP != 1 || c.Mem != 512 {
		t.Errorf("nodes %d slurm %v smp %d mem %d, want 4 true 1 512", c.Nodes, c.Slurm, c.SMP, c.Mem)
	}
	// Explicit -smp/-mem win; one VM keeps the single-VM defaults.
	if c, _ := parseFlags([]string{"-nodes", "2", "-smp", "2", "-mem", "1024", "prog"}, io.Discard); c.SMP != 2 || c.Mem != 1024 {
		t.Errorf("-smp 2 -mem 1024 with -nodes 2: got %d %d", c.SMP, c.Mem)
	}
	if c, _ := parseFlags([]string{"prog"}, io.Discard); c.Nodes != 1 || c.SMP != 4 || c.Mem != 2048 {
		t.Errorf("defaults: nodes %d smp %d mem %d, want 1 4 2048", c.Nodes, c.SMP, c.Mem)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "0"}, "-nodes 0: want 1 to 16"},
		{[]string{"-nodes", "17"}, "-nodes 17: want 1 to 16"},
		{[]string{"-slurm"}, "-slurm needs several VMs: add -nodes 4"},
		{[]string{"-netem", "node1=delay 1ms"}, "-netem needs several VMs"},
		{[]string{"-nodes", "4", "-netem", "node5=delay 1ms"}, `no node5 among node1..node4`},
		{[]string{"-nodes", "4", "-netem", "3=delay 1ms"}, `want nodeK=NETEM-ARGS`},
		{[]string{"-nodes", "4", "-netem", "node3="}, `want nodeK=NETEM-ARGS`},
		{[]string{"-nodes", "4", "-netem", "node3=delay 1ms", "-netem", "node3=loss 1%"}, "node3 given twice"},
	} {
		_, err := parseFlags(append(tt.args, "prog"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}
