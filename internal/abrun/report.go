package abrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/abtest"
)

// Report prints benchstat old.txt new.txt, the median per-pair ratio of
// each gated time metric with its interval, why the runs stopped, the
// gate over time (rule) and over work (wrule), and where the work went
// (work.go); with gateOn it returns the gate's exit status.
func Report(ctx context.Context, stdout, stderr io.Writer, dir string, rule abtest.GateRule, wrule abtest.WorkRule, seq abtest.SequentialRule, gateOn bool) int {
	oldName, newName := sideFile(dir, abtest.Old), sideFile(dir, abtest.New)
	fmt.Fprintf(stdout, "results: %s %s\n\n", oldName, newName)
	if err := benchstat(ctx, stdout, stderr, oldName, newName); err != nil {
		fmt.Fprintf(stdout, "(no benchstat table: %v)\n", err)
	}
	old, new, err := readSides(oldName, newName)
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	pairs, err := pairsOf(dir)
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	fmt.Fprintf(stdout, "\nper-pair ratios new/old (each pair ran back to back, so drift cancels), median and 95%% interval:\n")
	for _, iv := range abtest.PairedIntervals(pairs, rule.Units, 0.95) {
		fmt.Fprintf(stdout, "  %s\n", iv)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "way.txt")); err == nil {
		fmt.Fprintf(stdout, "ran as %s", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stop.txt")); err == nil {
		fmt.Fprintf(stdout, "%s", b)
	}
	fmt.Fprintln(stdout)
	var code int
	vf := newVerdictFile(rule)
	timeJudged := judgesTime(stdout, oldName, newName, rule, wrule)
	switch recs, err := readBootsFile(filepath.Join(dir, bootsFile)); {
	case !timeJudged:
	case err == nil && len(recs) > 0:
		code = bootsVerdict(stdout, recs, old, new, rule, seq, vf)
	default:
		if bs, err := readBurstsFile(filepath.Join(dir, burstsFile)); err == nil {
			code = duetVerdict(stdout, stderr, bs, pairs, old, new, rule, seq, vf)
		} else {
			code = uTestVerdict(stdout, stderr, old, new, rule, vf)
		}
	}
	code = judgeWork(stdout, stderr, old, new, wrule, vf, code, timeJudged)
	if err := workDiff(stdout, dir); err != nil {
		fmt.Fprintf(stdout, "\nwhere the work went: no diff: %v\n", err)
	}
	vf.settle(code)
	if err := WriteVerdict(filepath.Join(dir, VerdictFileName), vf); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	if w := contentionWarning(oldName); w != "" {
		fmt.Fprintf(stdout, "\nnote: %s\n  %s\n", w, contentionAdvice)
	}
	if !gateOn {
		return 0 // the verdict informs; only -gate makes it the status
	}
	return code
}

// Gate applies rule to two files of benchmark output (rdmaab gate) and
// returns the gate's exit status. A duet's files (its bursts.txt beside
// oldName) get the paired verdict by seq.
//
// With jsonName it writes the verdict there too (VerdictFile).
func Gate(stdout, stderr io.Writer, oldName, newName, jsonName string, rule abtest.GateRule, wrule abtest.WorkRule, seq abtest.SequentialRule) int {
	vf := newVerdictFile(rule)
	code := gate(stdout, stderr, oldName, newName, rule, wrule, seq, vf)
	vf.settle(code)
	if jsonName != "" {
		if err := WriteVerdict(jsonName, vf); err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return ExitFailed
		}
	}
	return code
}

func gate(stdout, stderr io.Writer, oldName, newName string, rule abtest.GateRule, wrule abtest.WorkRule, seq abtest.SequentialRule, vf *VerdictFile) int {
	old, new, err := readSides(oldName, newName)
	if err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	code, timeJudged := 0, judgesTime(stdout, oldName, newName, rule, wrule)
	if bs, err := readBurstsFile(filepath.Join(filepath.Dir(oldName), burstsFile)); err == nil && timeJudged {
		pairs, err := readPairs(oldName, newName)
		if err != nil {
			fmt.Fprintf(stderr, "rdmaab: %v\n", err)
			return ExitFailed
		}
		code = duetVerdict(stdout, stderr, bs, pairs, old, new, rule, seq, vf)
	} else if timeJudged {
		code = uTestVerdict(stdout, stderr, old, new, rule, vf)
	}
	code = judgeWork(stdout, stderr, old, new, wrule, vf, code, timeJudged)
	if err := workDiff(stdout, filepath.Dir(oldName)); err != nil {
		fmt.Fprintf(stdout, "\nwhere the work went: no diff: %v\n", err)
	}
	return code
}

// judgesTime reports whether the time metrics are judged: where the rule
// has time units, unless work is judged too and the runs warmed up with
// fewer round trips than the default (rdmaab -work's -work-warmup), which
// it says. Those runs' time is in benchstat's table, but the gate's time
// figures stand for warmed-up loops.
func judgesTime(stdout io.Writer, oldName, newName string, rule abtest.GateRule, wrule abtest.WorkRule) bool {
	if len(rule.Units) == 0 {
		return false
	}
	full := env.Default().Warmup
	n, ok := leastWarmup(oldName, newName)
	if !ok || n >= full || len(wrule.Units) == 0 {
		return true
	}
	fmt.Fprintf(stdout, "time: not judged: the runs warmed up with %d round trips, not %d (rdmaab -work's -work-warmup; -work-warmup %d judges time too)\n\n", n, full, full)
	return false
}

// warmupLine is the config line that says a run's warm-up (testenv).
const warmupLine = "rdmabench-warmup:"

// leastWarmup returns the smallest warm-up the files' config lines name,
// and whether any does.
func leastWarmup(names ...string) (int, bool) {
	least, found := 0, false
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			v, ok := strings.CutPrefix(line, warmupLine)
			if !ok {
				continue
			}
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && (!found || n < least) {
				least, found = n, true
			}
		}
	}
	return least, found
}

// uTestVerdict judges every gated metric by the U test over the runs (an
// interleaved comparison's, or two files made any other way).
func uTestVerdict(stdout, stderr io.Writer, old, new *abtest.Results, rule abtest.GateRule, vf *VerdictFile) int {
	v := rule.Judge(old, new)
	vf.addUTest(v)
	vf.addOneSided(old, new, rule.Units)
	code := printVerdict(stdout, stderr, v)
	bases := make([]Basis, len(v.Findings))
	for i := range bases {
		bases[i] = ByUTest
	}
	fmt.Fprintf(stdout, "%s\n", basisCounts(bases))
	return code
}

// contentionAdvice is what to do about a host whose CPUs slow each other:
// there each run's p50 sits at one of two levels, so p50 and p99 move by
// the luck of the draw, and min, the floor both levels share, is what
// resolves a change (docs/validation.md).
const contentionAdvice = "on such a host p50 and p99 follow the slowdown, which switches between two levels, not the code: " +
	"for a change under ~10% judge min (-metrics min-ns) and run 30 or more pairs (-count 30)"

// contentionWarning returns the first cpu-contention warning in a side's
// output (a "#" line from hostinfo, which benchstat skips), or "".
func contentionWarning(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "# warning (host-cpu-contention)") || strings.HasPrefix(line, "# warning (cpu-contention)") {
			return strings.TrimSpace(strings.TrimPrefix(line, "# "))
		}
	}
	return ""
}

// pairsOf rebuilds the pairs from dir's old.txt and new.txt.
func pairsOf(dir string) ([]abtest.Pair, error) {
	return readPairs(sideFile(dir, abtest.Old), sideFile(dir, abtest.New))
}

// readPairs rebuilds the pairs from two sides' files.
func readPairs(oldName, newName string) ([]abtest.Pair, error) {
	oldF, err := os.Open(oldName)
	if err != nil {
		return nil, err
	}
	defer oldF.Close()
	newF, err := os.Open(newName)
	if err != nil {
		return nil, err
	}
	defer newF.Close()
	return abtest.ReadPairs(oldF, newF)
}

// duetVerdict judges a duet: the gated units a turn's summary covers
// (p50, min) by the paired sequential rule, over every benchmark (by its
// turns, or by its pairs of runs where it takes none), the others (p99) by
// the U test over the runs. The two families share alpha in proportion to
// their metrics (Bonferroni between them, Holm within each).
func duetVerdict(stdout, stderr io.Writer, bs []burstRec, pairs []abtest.Pair, old, new *abtest.Results, rule abtest.GateRule, seq abtest.SequentialRule, vf *VerdictFile) int {
	covered, rest := coveredUnits(rule.Units)
	n := len(covered) + len(rest)
	seq.Alpha = abtest.AlphaShare(rule.Alpha, len(covered), n)
	code := 0
	var bases []Basis
	if len(covered) > 0 {
		ms := duetMetrics(bs, pairs, old, new, covered)
		fs := printPaired(stdout, ms, seq)
		printOneSided(stdout, old, new, covered)
		vf.addPaired(fs, ms)
		vf.addOneSided(old, new, covered)
		for _, m := range ms {
			bases = append(bases, m.basis)
		}
		code = pairedStatus(stdout, seq, fs)
	}
	if len(rest) > 0 {
		r := rule
		r.Units, r.Alpha = rest, abtest.AlphaShare(rule.Alpha, len(rest), n)
		fmt.Fprintln(stdout)
		v := r.Judge(old, new)
		vf.addUTest(v)
		vf.addOneSided(old, new, rest)
		c := printVerdict(stdout, stderr, v)
		code = abtest.WorstStatus(code, c)
		for range v.Findings {
			bases = append(bases, ByUTest)
		}
	}
	fmt.Fprintf(stdout, "%s\n", basisCounts(bases))
	return code
}
