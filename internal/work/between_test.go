package work

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readCounts reads a plugin report kept in testdata/between: the counts
// files of rdmacompare's work runs of perftest (ib_write_lat and
// ib_send_lat -s 2 under rxevm -insns, 200 and 400 operations, from a
// plugin before the kernel's line; ib_write_lat -s 4096, 500 and 1000
// operations, with it).
func readCounts(t *testing.T, name string) Counts {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "between", name))
	if err != nil {
		t.Fatal(err)
	}
	c, w, err := ParseReport(b)
	if err != nil || w == 0 {
		t.Fatalf("%s: %v (windows %d)", name, err, w)
	}
	return c
}

func TestBetweenRecorded(t *testing.T) {
	for _, tc := range []struct {
		name         string
		user, kernel float64
	}{
		// user (308800-154400)/200 = 772: no constant part at all;
		// kernel (11478712-5768431)/200 = 28551.405.
		{"write", 772, 28551.405},
		// user (531023-265423)/200 = 1328; kernel (11438717-5760193)/200 = 28392.62.
		{"send", 1328, 28392.62},
	} {
		p, err := Between(readCounts(t, tc.name+"-n200.txt"), readCounts(t, tc.name+"-n400.txt"), 200, 400)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p.User-tc.user) > 1e-9 || math.Abs(p.Kernel-tc.kernel) > 1e-6 {
			t.Errorf("%s: user %v kernel %v, want %v and %v", tc.name, p.User, p.Kernel, tc.user, tc.kernel)
		}
	}
}

// TestBetweenKernelWork: kernel work per operation comes from the
// reports' second line, and only when both runs have it.
func TestBetweenKernelWork(t *testing.T) {
	n500, n1000 := readCounts(t, "write4096-n500.txt"), readCounts(t, "write4096-n1000.txt")
	p, err := Between(n500, n1000, 500, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// user (675890-337890)/500 = 676 (the preload's 4 a call not yet
	// taken off); kernel work (153514307-77266747)/500 = 152495.12;
	// kernel (153930965-77426271)/500 = 153009.388.
	if !p.HasKernelWork || math.Abs(p.KernelWork-152495.12) > 1e-6 || p.User != 676 || math.Abs(p.Kernel-153009.388) > 1e-6 {
		t.Errorf("Between: %+v, want user 676, kernel 153009.388, kernel work 152495.12", p)
	}
	// A run whose plugin did not know the roles: no kernel work.
	n500.RolesKnown = false
	if p, err := Between(n500, n1000, 500, 1000); err != nil || p.HasKernelWork || p.KernelWork != 0 {
		t.Errorf("Between with one run lacking the roles: %+v %v, want no kernel work", p, err)
	}
	old := readCounts(t, "write-n200.txt")
	if p, err := Between(old, readCounts(t, "write-n400.txt"), 200, 400); err != nil || p.HasKernelWork {
		t.Errorf("Between of reports without the kernel's line: %+v %v, want no kernel work", p, err)
	}
}

func TestBetweenCancelsOnce(t *testing.T) {
	// 5000 instructions once (startup) and 700 per operation: 1000 and
	// 3000 operations count 705000 and 2105000; the difference over 2000
	// leaves 700. Kernel-other fell (time-driven): negative, as it is.
	c1 := Counts{User: 705000, Kernel: 50000, KernelWait: 10, KernelOther: 900}
	c2 := Counts{User: 2105000, Kernel: 130000, KernelWait: 10, KernelOther: 500}
	p, err := Between(c1, c2, 1000, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if p != (PerOp{User: 700, Kernel: 40, KernelWait: 0, KernelOther: -0.2}) {
		t.Errorf("Between: %+v", p)
	}
	for _, n := range [][2]uint64{{1000, 1000}, {3000, 1000}} {
		if _, err := Between(c1, c2, n[0], n[1]); !errors.Is(err, ErrRuns) {
			t.Errorf("Between(%d, %d): %v, want ErrRuns", n[0], n[1], err)
		}
	}
}

func TestPreloadPath(t *testing.T) {
	t.Setenv(EnvPlugin, "")
	if _, err := PreloadPath(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no $%s: %v, want ErrUnavailable", EnvPlugin, err)
	}
	dir := t.TempDir()
	t.Setenv(EnvPlugin, filepath.Join(dir, "counts"))
	if _, err := PreloadPath(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("no library beside the counts: %v, want ErrUnavailable", err)
	}
	lib := filepath.Join(dir, PreloadFile)
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := PreloadPath(); err != nil || p != lib {
		t.Errorf("PreloadPath: %q %v, want %q", p, err, lib)
	}
}

// fakeCounter counts what MeasureProgram asks of it.
type fakeCounter struct {
	resets int
	counts Counts
}

func (f *fakeCounter) Reset() error          { f.resets++; return nil }
func (f *fakeCounter) Read() (Counts, error) { return f.counts, nil }
func (f *fakeCounter) Close() error          { return nil }
func (f *fakeCounter) Source() string        { return "fake" }

func TestMeasureProgram(t *testing.T) {
	f := &fakeCounter{counts: Counts{User: 7}}
	c, err := MeasureProgram(f, func() error { return nil })
	if err != nil || c.User != 7 || f.resets != 1 {
		t.Errorf("MeasureProgram: %+v %v (resets %d)", c, err, f.resets)
	}
	boom := errors.New("boom")
	if _, err := MeasureProgram(f, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed program: %v, want its error", err)
	}
}

func TestCallTally(t *testing.T) {
	tally, err := NewCallTally(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tally.Env(), EnvPreloadCalls+"=") {
		t.Errorf("Env %q: want %s=PATH", tally.Env(), EnvPreloadCalls)
	}
	if calls, lost, err := tally.Read(); err != nil || calls != 0 || lost != 0 {
		t.Fatalf("fresh tally: %d %d %v, want 0 0", calls, lost, err)
	}
	// As the library leaves it: two native-endian counters.
	var b [16]byte
	binary.NativeEndian.PutUint64(b[:], 4000)
	binary.NativeEndian.PutUint64(b[8:], 2)
	if err := os.WriteFile(strings.TrimPrefix(tally.Env(), EnvPreloadCalls+"="), b[:], 0o644); err != nil {
		t.Fatal(err)
	}
	if calls, lost, err := tally.Read(); err != nil || calls != 4000 || lost != 2 {
		t.Errorf("tally: %d %d %v, want 4000 2", calls, lost, err)
	}
	if err := tally.Reset(); err != nil {
		t.Fatal(err)
	}
	if calls, _, _ := tally.Read(); calls != 0 {
		t.Errorf("after Reset: %d calls", calls)
	}
	if _, _, err := ParseCallTally(b[:8]); !errors.Is(err, ErrMalformed) {
		t.Errorf("8 bytes: %v, want ErrMalformed", err)
	}
}

func TestLessCallsAndAllKernel(t *testing.T) {
	p := PerOp{User: 837, Kernel: 28000, KernelWait: 126, KernelOther: 600}
	q := p.LessCalls(2)
	if q.User != 837-2*PreloadCallInsns || q.Kernel != p.Kernel {
		t.Errorf("LessCalls(2): %+v, want user less %d, the kernel's unchanged", q, 2*PreloadCallInsns)
	}
	if p.AllKernel() != 28726 {
		t.Errorf("AllKernel %v, want 28726", p.AllKernel())
	}
}
