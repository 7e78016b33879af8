package abrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/cmdout"
)

// Boots: the comparison of two VM setups, above all two kernels (rxevm
// -kernel/-modules), which cannot share a boot. Each side's boots run its
// binary alone; boots alternate old,new then new,old (ABBA), so that drift
// of the host falls on both; the boot is the unit of the paired verdict:
// one value per boot (the median over its runs) and one log ratio per
// pair of boots, judged by the same sequential rule as the duet's pairs.
// Boots of one build differ by more than the processes of one boot do
// (docs/validation.md has the figures), so this resolves less than a
// duet and needs more time: use it for what a duet cannot reach.

// bootsFile holds one line per boot and metric:
//
//	<pair> <side> <unit> <value> <name>
const bootsFile = "boots.txt"

// BootsMode reports whether the sides run in boots of their own: their
// VM setups differ, or Boots asks.
func (o *Comparison) BootsMode() bool { return o.Boots || o.SideVMFlags[0] != o.SideVMFlags[1] }

// runBoots boots each side's VM in turn, -count pairs at most, and stops
// when the paired verdict on the gated units decides.
func runBoots(ctx context.Context, o *Comparison, rxevm string, progress io.Writer) error {
	s := &o.Spec
	rule, err := s.Gate.Rule()
	if err != nil {
		return err
	}
	// Every gated time unit: a boot's median of it is one value, whatever
	// the unit (a turn's summary has p50 and min only; a boot has all).
	// Work units are the work rule's, over every run of every boot
	// (Report): a comparison gated on work alone runs all -count pairs.
	covered := rule.Units
	seq := s.SequentialRule()
	bf, err := os.Create(filepath.Join(s.OutDir, bootsFile))
	if err != nil {
		return err
	}
	defer bf.Close()
	way := fmt.Sprintf("boots: each side's VM (-old-vmflags %q, -new-vmflags %q) booted in turn, old,new then new,old, %s each boot", o.SideVMFlags[0], o.SideVMFlags[1], bootRunsDesc(s))
	os.WriteFile(filepath.Join(s.OutDir, "way.txt"), []byte(way+"\n"), 0o644)
	fmt.Fprintf(progress, "rdmaab: %s\n", way)
	var recs []bootRec
	for pair := 1; pair <= s.Pairs; pair++ {
		start := time.Now()
		for _, side := range abtest.Order(pair - 1) {
			out, err := bootOnce(ctx, o, rxevm, side, pair)
			appendFile(sideFile(s.OutDir, side), out.stdout)
			appendFile(filepath.Join(s.OutDir, side.String()+".log"), out.stderr)
			appendFile(filepath.Join(s.OutDir, "order.txt"), fmt.Appendf(nil, "pair %d %s\n", pair, side))
			if err != nil {
				return fmt.Errorf("pair %d, %s side's boot: %w", pair, side, err)
			}
			if len(covered) == 0 {
				if err := anyResult(out.stdout); err != nil {
					return fmt.Errorf("pair %d, %s side: %w", pair, side, err)
				}
				continue
			}
			rs, err := bootValues(pair, side, out.stdout, covered)
			if err != nil {
				return fmt.Errorf("pair %d, %s side: %w", pair, side, err)
			}
			for _, r := range rs {
				fmt.Fprintf(bf, "%d %s %s %g %s\n", r.pair, r.side, r.unit, r.value, r.name)
			}
			recs = append(recs, rs...)
		}
		fs := judgeBoots(recs, covered, seq)
		d := abtest.Overall(fs)
		fmt.Fprintf(progress, "rdmaab: boot pair %d/%d ran in %.1f s: %s\n", pair, s.Pairs, time.Since(start).Seconds(), d)
		if out, _ := seq.Gate(fs); len(covered) > 0 && out != abtest.GateUndecided && pair < s.Pairs {
			os.WriteFile(filepath.Join(s.OutDir, "stop.txt"), fmt.Appendf(nil, "stopped after %d boot pairs of at most %d (-count): the paired verdict on %s is %s\n", pair, s.Pairs, strings.Join(covered, ","), d), 0o644)
			return nil
		}
	}
	stop := fmt.Sprintf("the paired verdict on %s: undecided", strings.Join(covered, ","))
	if len(covered) == 0 {
		stop = "no time metric gated: the work rule judges the runs of every boot"
	}
	os.WriteFile(filepath.Join(s.OutDir, "stop.txt"), fmt.Appendf(nil, "ran %d boot pairs (-count %d); %s\n", s.Pairs, s.Pairs, stop), 0o644)
	return nil
}

func bootRunsDesc(s *Spec) string {
	bt := s.Benchtime
	if bt == "" {
		bt = "the default benchtime"
	}
	return fmt.Sprintf("%d runs of %s", s.BootRuns, bt)
}

// bootOnce boots one side's VM and runs its binary there, -boot-runs
// repetitions in one process. With -work the boot's work profiles come
// back through rxevm's shared output directory into workDir/SIDE/PAIR,
// where the report's work diff reads them as one run's.
func bootOnce(ctx context.Context, o *Comparison, rxevm string, side abtest.Side, pair int) (runOutput, error) {
	s := &o.Spec
	args := o.vmArgs(int(side))
	var testArgs []string
	if s.Work {
		dir := filepath.Join(s.OutDir, workDir, side.String(), strconv.Itoa(pair))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return runOutput{}, err
		}
		args = append(args, "-insns", "-out", dir)
		testArgs = []string{"-test.artifacts", "-test.outputdir=" + guestOutDir}
	}
	for _, kv := range s.Env[side] {
		args = append(args, "-env", kv)
	}
	bound := time.Duration(s.BootRuns)*s.RunTimeout + 5*time.Minute
	args = append(args, "-timeout", bound.String(), "-include", s.Bins[side], s.Bins[side],
		"-test.run=^$", "-test.bench="+s.Bench, "-test.count="+strconv.Itoa(s.BootRuns))
	if s.Benchtime != "" {
		args = append(args, "-test.benchtime="+s.Benchtime)
	}
	args = append(args, testArgs...)
	args = append(args, s.TestArgs...)
	ctx, cancel := context.WithTimeout(ctx, bound+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rxevm, args...)
	cmd.Dir = s.Dir
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // rxevm kills QEMU and cleans up
	cmd.WaitDelay = 30 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := runOutput{stdout.Bytes(), stderr.Bytes()}
	if err != nil {
		return out, fmt.Errorf("%s: %w%s", rxevm, err, cmdout.Tail(append(out.stdout, out.stderr...), tailLines))
	}
	return out, nil
}

// guestOutDir is rxevm's shared output directory as the guest sees it
// ($RXEVM_OUT; internal/vm/guest.OutDir).
const guestOutDir = "/rxevm/out"

// A bootRec is one boot's value of one metric: the median over its runs.
type bootRec struct {
	pair  int
	side  abtest.Side
	unit  string
	value float64
	name  string
}

// bootValues reduces one boot's output to a value per benchmark and unit
// of units: the median over its runs.
func bootValues(pair int, side abtest.Side, out []byte, units []string) ([]bootRec, error) {
	rs, err := abtest.ReadResults(bytes.NewReader(out), side.String()+" boot")
	if err != nil {
		return nil, err
	}
	var recs []bootRec
	for _, k := range rs.Keys {
		if !slices.ContainsFunc(units, func(u string) bool { return abtest.MatchUnit(k.Unit, u) }) {
			continue
		}
		v := slices.Clone(rs.Values[k])
		slices.Sort(v)
		recs = append(recs, bootRec{pair: pair, side: side, unit: k.Unit, value: v[len(v)/2], name: "Benchmark" + k.Name})
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("the boot printed no result of %s (-metrics)%s", strings.Join(units, ","), cmdout.Tail(out, tailLines))
	}
	return recs, nil
}

// anyResult checks that a boot printed a benchmark result.
func anyResult(out []byte) error {
	rs, err := abtest.ReadResults(bytes.NewReader(out), "boot")
	if err != nil {
		return err
	}
	if len(rs.Keys) == 0 {
		return fmt.Errorf("the boot printed no benchmark result%s", cmdout.Tail(out, tailLines))
	}
	return nil
}

func readBootsFile(name string) ([]bootRec, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []bootRec
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		bad := fmt.Errorf("%s line %d: %q: want <pair> old|new <unit> <value> <name>", bootsFile, ln, sc.Text())
		if len(fs) != 5 || (fs[1] != "old" && fs[1] != "new") {
			return nil, bad
		}
		pair, err1 := strconv.Atoi(fs[0])
		v, err2 := strconv.ParseFloat(fs[3], 64)
		if err1 != nil || err2 != nil {
			return nil, bad
		}
		side := abtest.Old
		if fs[1] == "new" {
			side = abtest.New
		}
		recs = append(recs, bootRec{pair: pair, side: side, unit: fs[2], value: v, name: fs[4]})
	}
	return recs, sc.Err()
}

// bootRatios returns, per "name unit" of the covered units, the log ratio
// new/old of each pair of boots that has both sides.
func bootRatios(recs []bootRec, units []string) (names []string, lrs [][]float64) {
	type key struct {
		pair       int
		name, unit string
	}
	var got [2]map[key]float64
	got[0], got[1] = map[key]float64{}, map[key]float64{}
	for _, r := range recs {
		got[r.side][key{r.pair, r.name, r.unit}] = r.value
	}
	byName := map[string][]float64{}
	maxPair := 0
	for _, r := range recs {
		maxPair = max(maxPair, r.pair)
	}
	for p := 1; p <= maxPair; p++ {
		for _, r := range recs {
			if r.pair != p || r.side != abtest.Old || !slices.ContainsFunc(units, func(u string) bool { return abtest.MatchUnit(r.unit, u) }) {
				continue
			}
			k := key{p, r.name, r.unit}
			n, ok := got[abtest.New][k]
			if !ok || n <= 0 || r.value <= 0 {
				continue
			}
			name := r.name + " " + r.unit
			if _, seen := byName[name]; !seen {
				names = append(names, name)
			}
			byName[name] = append(byName[name], math.Log(n/r.value))
		}
	}
	slices.Sort(names)
	for _, n := range names {
		lrs = append(lrs, byName[n])
	}
	return names, lrs
}

// bootMetrics returns the boots' metrics of units, one log ratio per pair
// of boots each.
func bootMetrics(recs []bootRec, units []string) []pairedMetric {
	names, lrs := bootRatios(recs, units)
	ms := make([]pairedMetric, len(names))
	for i := range names {
		ms[i] = pairedMetric{name: names[i], lrs: lrs[i], basis: ByBoots}
	}
	return ms
}

func judgeBoots(recs []bootRec, units []string, rule abtest.SequentialRule) []abtest.PairedFinding {
	return decideMetrics(rule, bootMetrics(recs, units))
}

// bootsVerdict prints the paired verdict over the boot pairs, names the
// benchmarks one side lacks, and returns the gate's status.
func bootsVerdict(w io.Writer, recs []bootRec, old, new *abtest.Results, rule abtest.GateRule, seq abtest.SequentialRule, vf *VerdictFile) int {
	covered := rule.Units
	seq.Alpha = rule.Alpha
	ms := bootMetrics(recs, covered)
	fs := decideMetrics(seq, ms)
	printFindings(w, seq, fs, "boot pairs", "each pair's log ratio new/old of the boots' medians", ms)
	printOneSided(w, old, new, covered)
	vf.addPaired(fs, ms)
	vf.addOneSided(old, new, covered)
	code := pairedStatus(w, seq, fs)
	bases := make([]Basis, len(ms))
	for i := range bases {
		bases[i] = ByBoots
	}
	fmt.Fprintf(w, "%s\n", basisCounts(bases))
	return code
}
