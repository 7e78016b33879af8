package main

import (
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-env", "A=1", "-env", "B=2", "-include", "x", "-out", "o", "prog", "-test.v", "-env", "C=3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.prog != "prog" || !slices.Equal(c.args, []string{"-test.v", "-env", "C=3"}) {
		t.Errorf("prog %q args %q: flags after PROGRAM belong to it", c.prog, c.args)
	}
	if !slices.Equal(c.env, []string{"A=1", "B=2"}) || !slices.Equal(c.includes, []string{"x"}) || c.outDir != "o" {
		t.Errorf("env %q includes %q out %q", c.env, c.includes, c.outDir)
	}
	if c.accel != "auto" || c.smp != 4 || c.mem != 2048 || c.timeout != 30*time.Minute {
		t.Errorf("defaults: %+v", c)
	}
	if _, err := parseFlags(nil, io.Discard); err == nil {
		t.Error("no PROGRAM accepted")
	}
	if _, err := parseFlags([]string{"-accel", "hvf", "p"}, io.Discard); err == nil {
		t.Error("-accel hvf accepted")
	}
}

func TestEffectiveTimeout(t *testing.T) {
	for _, tt := range []struct {
		flags, progArgs []string
		want            time.Duration
	}{
		{nil, []string{"-test.timeout=10m0s"}, 30 * time.Minute},
		{nil, []string{"-test.timeout=1h"}, time.Hour + 3*time.Minute},
		{nil, []string{"-test.timeout=0s"}, 30 * time.Minute},
		{nil, []string{"-test.run=X"}, 30 * time.Minute},
		{[]string{"-timeout", "5m"}, []string{"-test.timeout=1h"}, 5 * time.Minute}, // given: kept
	} {
		args := append(append(tt.flags, "prog"), tt.progArgs...)
		c, err := parseFlags(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := effectiveTimeout(c); got != tt.want {
			t.Errorf("%q: %v, want %v", args, got, tt.want)
		}
	}
}

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

func TestQemuArgs(t *testing.T) {
	v := &vm{qemu: "q", kernel: "k", initrd: "i", accel: "tcg", smp: 4, mem: 2048, outDir: "/o", nonce: "n"}
	args := v.qemuArgs()
	for _, want := range [][]string{
		{"-accel", "tcg"}, {"-smp", "4"}, {"-m", "2048"}, {"-nic", "none"},
		{"-serial", "chardev:con"}, {"-serial", "chardev:out"},
		{"-fsdev", "local,id=rxevmout,path=/o,security_model=mapped-xattr,fmode=0644,dmode=0755"},
		{"-device", "virtio-9p-pci,fsdev=rxevmout,mount_tag=rxevmout"},
	} {
		if i := slices.Index(args, want[0]); i < 0 || !slices.Contains(args[i:], want[1]) {
			t.Errorf("qemu args lack %q: %q", want, args)
		}
	}
}
