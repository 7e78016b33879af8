package abrun

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
)

// TestLowerWarmup: -work sets RDMABENCH_WARMUP on each side whose -env
// sets none, keeps a side's own, adds none where the environment sets
// it, and the runner's flags carry -work-warmup.
func TestLowerWarmup(t *testing.T) {
	t.Setenv(env.VarWarmup, "")
	s := Spec{Work: true, WorkWarmup: 20}
	s.Env[abtest.New] = []string{env.VarWarmup + "=500"}
	way := lowerWarmup(&s)
	if !slices.Equal(s.Env[abtest.Old], []string{env.VarWarmup + "=20"}) || !slices.Equal(s.Env[abtest.New], []string{env.VarWarmup + "=500"}) {
		t.Errorf("env old %q new %q", s.Env[abtest.Old], s.Env[abtest.New])
	}
	if !strings.Contains(way, "warm-up 20 round trips a run (-work-warmup)") {
		t.Errorf("way.txt's words: %q", way)
	}

	t.Setenv(env.VarWarmup, "300")
	s = Spec{Work: true, WorkWarmup: 20}
	if way := lowerWarmup(&s); len(s.Env[abtest.Old])+len(s.Env[abtest.New]) != 0 || !strings.Contains(way, "warm-up 300") {
		t.Errorf("with %s=300 set: env %q, way %q", env.VarWarmup, s.Env, way)
	}

	var back Spec
	fs := flag.NewFlagSet("rdmaab run", flag.ContinueOnError)
	back.Register(fs)
	back.Gate.Register(fs)
	if err := fs.Parse((&Spec{WorkWarmup: 7, Work: true, Method: "rank"}).Flags()); err != nil || back.WorkWarmup != 7 {
		t.Errorf("-work-warmup through Flags: %d, %v", back.WorkWarmup, err)
	}
	back.WorkWarmup, back.Pairs, back.RunTimeout, back.Burst = -1, 3, 1, 1
	if err := back.Check(); err == nil || !strings.Contains(err.Error(), "-work-warmup -1") {
		t.Errorf("Check of -work-warmup -1: %v", err)
	}
}

// TestTimeOfLowWarmupNotJudged: the recorded work A/B with its runs'
// warm-up line at 20 (as rdmaab -work runs them now): work fails it as
// before, time is shown in benchstat's table but not judged, and
// verdict.json holds work metrics only. Gated on time alone, time is
// judged as ever.
func TestTimeOfLowWarmupNotJudged(t *testing.T) {
	dir := copyDir(t, "testdata/work-ab")
	for _, side := range []string{"old.txt", "new.txt"} {
		name := filepath.Join(dir, side)
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		low := strings.ReplaceAll(string(b), "rdmabench-warmup: 1000", "rdmabench-warmup: 20")
		if low == string(b) {
			t.Fatalf("%s has no warm-up line of 1000", side)
		}
		if err := os.WriteFile(name, []byte(low), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, vf := gateWork(t, dir)
	if code != ExitRegressed || !strings.Contains(out, "time: not judged: the runs warmed up with 20 round trips, not 1000") ||
		strings.Contains(out, "gate: UNDECIDED") || !strings.Contains(out, "FAIL RDMAWrite/size=2-4 user-insns/op") {
		t.Errorf("status %d\n%s", code, out)
	}
	for _, m := range vf.Metrics {
		if m.JudgedBy != ByWork {
			t.Errorf("verdict.json judges %s %s by %s", m.Benchmark, m.Unit, m.JudgedBy)
		}
	}
	rule := abtest.DefaultThresholds.GateRule()
	rule.Units = []string{"p50-ns"}
	if !judgesTime(&strings.Builder{}, filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"), rule, abtest.WorkRule{}) {
		t.Error("time alone (no work units) was not judged")
	}
}
