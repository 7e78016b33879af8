package vm

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/vm/qemu"
)

func TestAccelPlan(t *testing.T) {
	for _, tt := range []struct {
		accel  string
		useKVM bool
		want   []string
	}{
		{"auto", true, []string{"kvm", "tcg", "tcg", "tcg"}},
		{"auto", false, []string{"tcg", "tcg", "tcg"}},
		{"tcg", false, []string{"tcg", "tcg", "tcg"}},
		{"kvm", true, []string{"kvm", "kvm", "kvm"}},
	} {
		if got := accelPlan(tt.accel, tt.useKVM, 3); !slices.Equal(got, tt.want) {
			t.Errorf("accelPlan(%s, %v) = %q, want %q", tt.accel, tt.useKVM, got, tt.want)
		}
	}
}

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	w := &prefixWriter{w: &b, prefix: "node2| "}
	for _, s := range []string{"a\nb", "c\n", "\nd\n"} {
		w.Write([]byte(s))
	}
	if got, want := b.String(), "node2| a\nnode2| bc\nnode2| \nnode2| d\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFleetAppend(t *testing.T) {
	if got := fleetAppend("x=1"); got != "no_timer_check x=1" {
		t.Errorf("fleetAppend = %q", got)
	}
}

func TestBootBound(t *testing.T) {
	for _, tt := range []struct {
		flag  time.Duration
		accel string
		want  time.Duration
	}{
		{0, "tcg", 45 * time.Second},
		{0, "kvm", 15 * time.Second},
		{time.Minute, "kvm", time.Minute},
	} {
		if got := bootBound(tt.flag, tt.accel); got != tt.want {
			t.Errorf("bootBound(%v, %s) = %v, want %v", tt.flag, tt.accel, got, tt.want)
		}
	}
}

func TestNetemByNode(t *testing.T) {
	m, err := NetemByNode([]string{"node3= delay 2ms ", "node1=loss 1%"}, 4)
	if err != nil || m[3] != "delay 2ms" || m[1] != "loss 1%" || len(m) != 2 {
		t.Errorf("NetemByNode = %v, %v", m, err)
	}
	if _, err := NetemByNode([]string{"node5=delay 1ms"}, 4); err == nil || !strings.Contains(err.Error(), "no node5 among node1..node4") {
		t.Errorf("node5 of 4: %v", err)
	}
}

func TestBootAgain(t *testing.T) {
	panicked := "[    0.5] Kernel panic - not syncing: IO-APIC + timer doesn't work!"
	cases := []struct {
		name      string
		err       error
		earlyExit bool
		console   string
		want      bool
	}{
		{"no sign of life", fmt.Errorf("x: %w", qemu.ErrNoLife), false, "", true},
		{"kernel panic before init", fmt.Errorf("x: %w", qemu.ErrQemuStart), false, panicked, true},
		{"bad flag", fmt.Errorf("x: %w", qemu.ErrQemuStart), false, "qemu: invalid option", false},
		{"fleet node, any early exit", fmt.Errorf("x: %w", qemu.ErrQemuStart), true, "", true},
		{"program's own failure", fmt.Errorf("x: %w", qemu.ErrSetup), true, panicked, false},
	}
	for _, c := range cases {
		if got := bootAgain(c.err, c.earlyExit, c.console); got != c.want {
			t.Errorf("%s: bootAgain = %v, want %v", c.name, got, c.want)
		}
	}
}
