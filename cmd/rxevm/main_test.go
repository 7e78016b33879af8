package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-env", "A=1", "-env", "B=2", "-include", "x", "-out", "o", "prog", "-test.v", "-env", "C=3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Prog != "prog" || !slices.Equal(c.Args, []string{"-test.v", "-env", "C=3"}) {
		t.Errorf("prog %q args %q: flags after PROGRAM belong to it", c.Prog, c.Args)
	}
	if !slices.Equal(c.Env, []string{"A=1", "B=2"}) || !slices.Equal(c.Includes, []string{"x"}) || c.OutDir != "o" {
		t.Errorf("env %q includes %q out %q", c.Env, c.Includes, c.OutDir)
	}
	if c.Accel != "auto" || c.SMP != 4 || c.Mem != 2048 || c.timeout != 30*time.Minute {
		t.Errorf("defaults: %+v", c)
	}
	if _, err := parseFlags(nil, io.Discard); err == nil {
		t.Error("no PROGRAM accepted")
	}
	if _, err := parseFlags([]string{"-accel", "hvf", "p"}, io.Discard); err == nil {
		t.Error("-accel hvf accepted")
	}
	if c, err := parseFlags([]string{"-insns", "p"}, io.Discard); err != nil || !c.Insns || c.Accel != "tcg" {
		t.Errorf("-insns: %+v, %v; want it on, under TCG", c, err)
	}
	if _, err := parseFlags([]string{"-insns", "-accel", "kvm", "p"}, io.Discard); err == nil {
		t.Error("-insns -accel kvm accepted: plugins count under TCG only")
	}
	if _, err := parseFlags([]string{"-insns", "-nodes", "2", "p"}, io.Discard); err == nil || !strings.Contains(err.Error(), "drop -nodes") {
		t.Errorf("-insns with -nodes: %v, want a refusal saying what to drop", err)
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

func TestKernelFlags(t *testing.T) {
	dir := t.TempDir()
	bz, mods := filepath.Join(dir, "bzImage"), filepath.Join(dir, "modules")
	os.WriteFile(bz, []byte("x"), 0o644)
	os.Mkdir(mods, 0o755)
	c, err := parseFlags([]string{"-kernel", bz, "-modules", mods, "prog"}, io.Discard)
	if err != nil || c.Kernel != bz || c.Modules != mods {
		t.Fatalf("-kernel %s -modules %s: %+v, %v", bz, mods, c, err)
	}
	// Modules alone are allowed: an out-of-tree rdma_rxe for Debian's kernel.
	if _, err := parseFlags([]string{"-modules", mods, "prog"}, io.Discard); err != nil {
		t.Errorf("-modules alone: %v", err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-kernel", bz}, "-kernel " + bz + " needs -modules"},
		{[]string{"-kernel", dir + "/nope", "-modules", mods}, "-kernel " + dir + "/nope: no such file or directory: give the bzImage"},
		{[]string{"-kernel", bz, "-modules", dir + "/nope"}, "-modules " + dir + "/nope: no such file or directory: give a lib/modules/<release> directory or a linux-image .deb"},
	} {
		_, err := parseFlags(append(tt.args, "prog"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}

// TestModuleFlags: -siw and -rxe-extra-cost build for Debian's kernel in
// one VM; what they cannot go with is refused with what to drop.
func TestModuleFlags(t *testing.T) {
	c, err := parseFlags([]string{"-siw", "-rxe-extra-cost", "1000", "prog"}, io.Discard)
	if err != nil || !c.SIW || c.RxeCost != 1000 {
		t.Fatalf("-siw -rxe-extra-cost 1000: %+v, %v", c, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-siw", "-nodes", "2"}, "-siw adds siw devices in one VM: drop -nodes (or -siw)"},
		{[]string{"-siw", "-modules", "/nope"}, "-siw builds siw for Debian's guest kernel: drop -kernel and -modules"},
		{[]string{"-rxe-extra-cost", "-1"}, "-rxe-extra-cost -1: want 0 (stock rdma_rxe) to 1000000 loop turns"},
		{[]string{"-rxe-extra-cost", "5", "-nodes", "2"}, "-rxe-extra-cost rebuilds the single VM's Debian rdma_rxe: drop -kernel, -modules and -nodes"},
	} {
		_, err := parseFlags(append(tt.args, "prog"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}
