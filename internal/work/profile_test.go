package work

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseRawProfileRefuses(t *testing.T) {
	for _, bad := range []string{
		"",
		"rxevm-insns-profile 1 windows 3\n10 1 2 3 4\n",                             // no end: torn
		"rxevm-insns-profile 2 windows 3\nend\n",                                    // another version
		"rxevm-insns-profile 1 windows x\nend\n",                                    // not a count
		"rxevm-insns-profile 1 windows 3\n10 1 2 3\nend\n",                          // short line
		"rxevm-insns-profile 1 windows 3\nzz 1 2 3 4\nend\n",                        // not hex
		"rxevm-insns-profile 1 windows 3\n10 1 2 3 -4\nend\n",                       // negative
		"rxevm-insns-profile 1 windows 3\nend\n10 1 2 3 4\n",                        // after the end
		"10 1 2 3 4\nend\n",                                                         // no header
		"rxevm-insns-profile 1 windows 3\n" + strings.Repeat("1", 5000) + "\nend\n", // long line
	} {
		if _, err := ParseRawProfile(strings.NewReader(bad)); !errors.Is(err, ErrMalformedProfile) {
			t.Errorf("ParseRawProfile(%.60q): %v, want ErrMalformedProfile", bad, err)
		}
	}
	_, err := ParseRawProfile(strings.NewReader("rxevm-insns-profile 2 windows 3\nend\n"))
	if err == nil || !strings.Contains(err.Error(), "different versions") {
		t.Errorf("version error %v does not say what differs", err)
	}
}

func TestWriteParseProfile(t *testing.T) {
	p := Profile{Ops: 25000, PerOp: map[Func]float64{
		{SpaceUser, "rdmalat.test", "write_ping"}:   465.25,
		{SpaceKernel, "rdma_rxe", "rxe_requester"}:  14007,
		{SpaceKernelWait, "vmlinux", "do_idle"}:     0.5,
		{SpaceUser, "librxe-rdmav34.so", "x+0x1f0"}: 1e-3,
	}}
	var b bytes.Buffer
	if err := WriteProfile(&b, p); err != nil {
		t.Fatal(err)
	}
	want := "rdmawork-profile 1 ops 25000\n# insns/op\tspace\tobject\tfunction\n" +
		"14007\tkernel\trdma_rxe\trxe_requester\n465.25\tuser\trdmalat.test\twrite_ping\n" +
		"0.5\tkernel-wait\tvmlinux\tdo_idle\n0.001\tuser\tlibrxe-rdmav34.so\tx+0x1f0\n"
	if b.String() != want {
		t.Errorf("WriteProfile:\n%s\nwant\n%s", b.String(), want)
	}
	q, err := ParseProfile(&b)
	if err != nil || q.Ops != p.Ops || len(q.PerOp) != len(p.PerOp) {
		t.Fatalf("ParseProfile: %+v, %v", q, err)
	}
	for f, v := range p.PerOp {
		if q.PerOp[f] != v {
			t.Errorf("%s read back %v, want %v", f, q.PerOp[f], v)
		}
	}
	for _, bad := range []string{
		"",
		"rdmawork-profile 2 ops 1\n",
		"goos: linux\n",
		"rdmawork-profile 1 ops 1\n1\tuser\tx\n",
		"rdmawork-profile 1 ops 1\n-1\tuser\tx\tf\n",
		"rdmawork-profile 1 ops 1\nNaN\tuser\tx\tf\n",
		"rdmawork-profile 1 ops 1\n1\tsystem\tx\tf\n",
		"rdmawork-profile 1 ops 1\n1\tuser\tx\tf\n2\tuser\tx\tf\n",
		"rdmawork-profile 1 ops 1\n1\tuser\tx\tf\x1b[2J\n",
	} {
		if _, err := ParseProfile(strings.NewReader(bad)); !errors.Is(err, ErrMalformedProfile) {
			t.Errorf("ParseProfile(%q): %v, want ErrMalformedProfile", bad, err)
		}
	}
}

// Diff ranks by the size of the change, either way (figures by hand).
func TestDiff(t *testing.T) {
	old := Profile{Ops: 10, PerOp: map[Func]float64{
		{SpaceUser, "rdmalat.test", "write_ping"}:  465,
		{SpaceKernel, "rdma_rxe", "rxe_requester"}: 14000,
		{SpaceKernel, "vmlinux", "gone_fn"}:        10,
		{SpaceKernel, "vmlinux", "same"}:           50,
		{SpaceKernelOther, "vmlinux", "tick"}:      9000,
	}}
	new := Profile{Ops: 20, PerOp: map[Func]float64{
		{SpaceUser, "rdmalat.test", "write_ping"}:  1465,
		{SpaceKernel, "rdma_rxe", "rxe_requester"}: 14312,
		{SpaceKernel, "vmlinux", "new_fn"}:         5,
		{SpaceKernel, "vmlinux", "same"}:           50,
		{SpaceKernelOther, "vmlinux", "tick"}:      1000,
	}}
	d := Diff(old, new, SpaceUser, SpaceKernel)
	want := []struct {
		name      string
		delta     float64
		pct, text string
	}{
		{"write_ping", 1000, "", "rdmalat.test     write_ping +1000.0 insns/op (+215.1%)"},
		{"rxe_requester", 312, "", "rdma_rxe         rxe_requester +312.0 insns/op (+2.2%)"},
		{"gone_fn", -10, "", "gone_fn -10.0 insns/op (gone)"},
		{"new_fn", 5, "", "new_fn +5.0 insns/op (new)"},
		{"same", 0, "", "same +0.0 insns/op (+0.0%)"},
	}
	if len(d) != len(want) {
		t.Fatalf("Diff: %d changes %v, want %d (kernel-other left out)", len(d), d, len(want))
	}
	for i, w := range want {
		if d[i].Name != w.name || d[i].Delta() != w.delta || !strings.HasSuffix(d[i].String(), w.text) {
			t.Errorf("change %d: %q (%v), want %s %+v ending %q", i, d[i], d[i].Delta(), w.name, w.delta, w.text)
		}
	}
	if p := d[3].Pct(); !math.IsInf(p, 1) {
		t.Errorf("a new function's Pct: %v, want +Inf", p)
	}
	if all := Diff(old, new); len(all) != 6 || all[0].Name != "tick" {
		t.Errorf("Diff of all spaces: %v, want 6 changes, tick first", all)
	}
}

// A diff shows the kernel's work, not the kernel's all, where both
// profiles split it: the timer's functions, which follow time, stay out.
func TestCountedIn(t *testing.T) {
	tick := Func{SpaceKernel, "vmlinux", "rcu_sched_clock_irq"}
	plain := func(rcv, tk float64) Profile {
		return Profile{Ops: 1, PerOp: map[Func]float64{{SpaceKernel, "rdma_rxe", "rxe_rcv"}: rcv, tick: tk}}
	}
	split := func(rcv, tk float64) Profile {
		p := plain(rcv, tk)
		p.PerOp[Func{SpaceKernelWork, "rdma_rxe", "rxe_rcv"}] = rcv
		p.PerOp[Func{SpaceKernelTime, "vmlinux", "rcu_sched_clock_irq"}] = tk
		return p
	}
	// A/A across boots: only the timer's work moved.
	old, new := split(300, 8), split(300, 36)
	if sp := CountedIn(old, new); !slices.Equal(sp, []Space{SpaceUser, SpaceKernelWork}) {
		t.Fatalf("CountedIn with the split: %v", sp)
	}
	if d := Diff(old, new, CountedIn(old, new)...); len(d) != 1 || d[0].Name != "rxe_rcv" || d[0].Delta() != 0 {
		t.Errorf("A/A diff of the kernel's work: %v, want rxe_rcv unchanged alone", d)
	}
	// One side without the split (an older plugin's): the kernel's all.
	if sp := CountedIn(split(300, 8), plain(1100, 8)); !slices.Equal(sp, Counted) {
		t.Errorf("CountedIn without the split on one side: %v, want %v", sp, Counted)
	}
}

func FuzzParseRawProfile(f *testing.F) {
	b, err := os.ReadFile("testdata/profile-kernel.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("rxevm-insns-profile 1 windows 0\nend\n"))
	f.Add([]byte("rxevm-insns-profile 1 windows 1\n0 1 2 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseRawProfile(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformedProfile) || len(err.Error()) > 400 {
				t.Fatalf("error %q: not ErrMalformedProfile, or the input quoted unbounded", err)
			}
			return
		}
		if len(p.Samples) > maxProfileLines {
			t.Fatalf("%d samples past the bound", len(p.Samples))
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	f.Add([]byte("rdmawork-profile 1 ops 10\n# insns/op\tspace\tobject\tfunction\n14007\tkernel\trdma_rxe\trxe_requester\n0.5\tuser\tx\tf\n"))
	f.Add([]byte("rdmawork-profile 1 ops 0\n"))
	f.Add([]byte("rdmawork-profile 1 ops 1\n1e300\tkernel-other\ta b\tc d\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProfile(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrMalformedProfile) || len(err.Error()) > 400 {
				t.Fatalf("error %q: not ErrMalformedProfile, or the input quoted unbounded", err)
			}
			return
		}
		// What parses writes and reads back the same.
		var w bytes.Buffer
		if err := WriteProfile(&w, p); err != nil {
			t.Fatal(err)
		}
		q, err := ParseProfile(&w)
		if err != nil || q.Ops != p.Ops || len(q.PerOp) != len(p.PerOp) {
			t.Fatalf("round trip: %+v %v, want %+v", q, err, p)
		}
		for k, v := range p.PerOp {
			if q.PerOp[k] != v {
				t.Fatalf("round trip of %s: %v, want %v", k, q.PerOp[k], v)
			}
		}
	})
}

// TestKernelProfileMerge: the plugin's profile-kernel file (kernel-work,
// kernel-time, kernel-others per address) merges into the profile by
// address, as ReadProfile does, and an old plugin's profile alone still
// parses.
func TestKernelProfileMerge(t *testing.T) {
	raw, err := ParseRawProfile(strings.NewReader("rxevm-insns-profile 1 windows 2\nffffffff81000000 0 700 30 0\n401000 500 0 0 0\nend\n"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseRawKernelProfile(strings.NewReader("rxevm-insns-kernel-profile 1 windows 2\nffffffff81000000 720 10 0\nffffffff81000100 0 0 90\nend\n"))
	if err != nil {
		t.Fatal(err)
	}
	raw.Merge(k)
	want := []Sample{
		{Addr: 0xffffffff81000000, N: [nSpaces]uint64{0, 700, 30, 0, 720, 10, 0}},
		{Addr: 0x401000, N: [nSpaces]uint64{500}},
		{Addr: 0xffffffff81000100, N: [nSpaces]uint64{SpaceKernelOthers: 90}},
	}
	if !reflect.DeepEqual(raw.Samples, want) {
		t.Errorf("merged %+v, want %+v", raw.Samples, want)
	}
	for _, bad := range []string{
		"rxevm-insns-profile 1 windows 2\nffffffff81000000 1 2 3\nend\n",      // the main file's header
		"rxevm-insns-kernel-profile 1 windows 2\nffffffff81000000 1 2\nend\n", // two columns
		"rxevm-insns-kernel-profile 1 windows 2\nffffffff81000000 1 2 3\n",    // no end
	} {
		if _, err := ParseRawKernelProfile(strings.NewReader(bad)); !errors.Is(err, ErrMalformedProfile) {
			t.Errorf("ParseRawKernelProfile(%q): %v, want ErrMalformedProfile", bad, err)
		}
	}
	if s, err := ParseSpace("kernel-work"); err != nil || s != SpaceKernelWork {
		t.Errorf("ParseSpace(kernel-work) = %v, %v", s, err)
	}
}
