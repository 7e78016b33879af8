package abrun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/internal/abtest"
	"github.com/rdmabench/rdmabench/internal/work"
)

// Work: with -work the runs count instructions (rxevm -insns), which
// repeat from run to run whatever the host does, so a few interleaved
// runs a side decide by the work rule (abtest.WorkRule) where time would
// need a duet of many pairs. Each run keeps the work profiles its
// benchmarks write (go test -artifacts) under workDir/SIDE/RUN, and the
// report diffs the sides' mean profiles into WorkDiffFile.

// workDir is where the runs' profiles go, under the output directory.
const workDir = "work"

// WorkDiffFile is the diff of where the sides' work went, per benchmark,
// written beside old.txt and new.txt.
const WorkDiffFile = "work-diff.txt"

// profileArtifact is the file a benchmark writes its work per function to
// (rdmalat.ProfileArtifact; abrun imports no engine).
const profileArtifact = "work-profile.txt"

// workArgs creates the directory of run run (from 1) of side's work
// profiles and returns the test binary flags that keep them there.
func workArgs(s *Spec, side abtest.Side, run int) ([]string, error) {
	if !s.Work {
		return nil, nil
	}
	dir := filepath.Join(s.OutDir, workDir, side.String(), strconv.Itoa(run))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return []string{"-test.artifacts", "-test.outputdir=" + dir}, nil
}

// judgeWork applies the work rule, prints it after the time verdict and
// returns the combined status. Work decides where it can: when it judged
// every work metric, a time verdict that could not decide (too few runs
// for a test, or no time metric) is reported but not counted.
func judgeWork(stdout, stderr io.Writer, old, new *abtest.Results, wrule abtest.WorkRule, vf *VerdictFile, timeCode int, timeJudged bool) int {
	if len(wrule.Units) == 0 {
		return timeCode
	}
	v := wrule.Judge(old, new)
	if len(v.Findings) == 0 && timeJudged {
		fmt.Fprintf(stdout, "\nwork: not judged: no %s in the results (rdmaab -work counts them in the VM)\n", strings.Join(wrule.Units, ", "))
		return timeCode
	}
	fmt.Fprintln(stdout)
	if err := v.Print(stdout); err != nil {
		fmt.Fprintf(stderr, "rdmaab: %v\n", err)
		return ExitFailed
	}
	vf.addWork(v)
	vf.addOneSided(old, new, wrule.Units)
	fmt.Fprintf(stdout, "%s\n", basisCounts(slices.Repeat([]Basis{ByWork}, len(v.Findings))))
	code := abtest.ExitPass
	switch err := v.Err(); {
	case v.Failed():
		code = ExitRegressed
	case errors.Is(err, abtest.ErrTooFew), errors.Is(err, abtest.ErrWorkSpread):
		code = ExitUndecided
	case err != nil:
		code = ExitFailed
	}
	if !timeJudged {
		return code
	}
	if v.Decided() && (timeCode == ExitUndecided || timeCode == ExitFailed) {
		fmt.Fprintf(stdout, "time: could not decide (status %d), not counted: work decided (gate on time alone with -metrics of time units)\n", timeCode)
		return code
	}
	return abtest.WorstStatus(timeCode, code)
}

// addWork adds the work rule's findings.
func (vf *VerdictFile) addWork(v abtest.WorkVerdict) {
	if vf == nil {
		return
	}
	for _, f := range v.Findings {
		d := "no difference found"
		switch {
		case !f.Judged:
			d = "undecided"
		case f.Regressed || f.Improved:
			d = "different"
		}
		lo, hi := f.New.Min/f.Old.Max, f.New.Max/f.Old.Min
		vf.Metrics = append(vf.Metrics, MetricVerdict{Benchmark: "Benchmark" + f.Key.Name, Unit: f.Key.Unit, JudgedBy: ByWork,
			N: min(f.Old.N, f.New.N), Estimate: finite(1 + f.Change), Lo: finite(lo), Hi: finite(hi), Level: f.Threshold,
			Decision: d, Decided: f.Judged, Regressed: f.Regressed})
	}
}

// readWorkProfiles reads every work profile under dir (a side's
// workDir, one directory per run), by benchmark. go test names artifact
// directories by numbers (for the root package of a module, whose path
// it cannot localize), so the benchmark's name comes from the
// summary.json beside them (artifacts.Summary: each size's directory).
// A run that wrote one benchmark's profile more than once (go test runs a
// benchmark once with b.N = 1 before its -benchtime) counts with its
// largest operation count.
func readWorkProfiles(dir string) (map[string][]work.Profile, error) {
	type key struct{ run, bench string }
	names := map[string]string{} // run/directory base -> benchmark
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != artifacts.SummaryFile {
			return err
		}
		s, err := artifacts.ReadSummary(path)
		if err != nil {
			return err
		}
		run := runOf(dir, path)
		for _, r := range s.Results {
			if r.Dir != "" {
				names[run+"/"+filepath.Base(r.Dir)] = r.Name
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A run's profiles of one benchmark: those of the most operations
	// (a probe run of fewer, if any, left out); a boot's process of
	// -boot-runs repetitions leaves one each.
	best := map[key][]work.Profile{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != profileArtifact {
			return err
		}
		run, base := runOf(dir, path), filepath.Base(filepath.Dir(path))
		name, ok := names[run+"/"+base]
		if !ok {
			// go test's own naming: _artifacts/PKG/NAME/RANDOM.
			name = strings.ReplaceAll(filepath.Base(filepath.Dir(filepath.Dir(path))), "__", "/")
		}
		k := key{run: run, bench: name}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		p, err := work.ParseProfile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch have := best[k]; {
		case len(have) == 0 || p.Ops > have[0].Ops:
			best[k] = []work.Profile{sameBinary(p)}
		case p.Ops == have[0].Ops:
			best[k] = append(have, sameBinary(p))
		}
		return nil
	})
	out := map[string][]work.Profile{}
	for k, ps := range best {
		out[k.bench] = append(out[k.bench], ps...)
	}
	return out, err
}

// runOf is the run directory (under dir) that path is in.
func runOf(dir, path string) string {
	rel, _ := filepath.Rel(dir, path)
	run, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return run
}

// testBinary is the object name both sides' test binaries get in the
// diff: they are files of different names (old.test, new.test), and the
// same function of each is the same function.
const testBinary = "(test binary)"

// sameBinary renames p's user objects named *.test (go test -c's and
// rdmaab's test binaries) to testBinary.
func sameBinary(p work.Profile) work.Profile {
	out := work.Profile{Ops: p.Ops, PerOp: make(map[work.Func]float64, len(p.PerOp))}
	for f, v := range p.PerOp {
		if f.Space == work.SpaceUser && strings.HasSuffix(f.Object, ".test") {
			f.Object = testBinary
		}
		out.PerOp[f] += v
	}
	return out
}

// workDiff writes WorkDiffFile in dir from the profiles under
// dir/workDir and prints each benchmark's largest changes, summaryLines
// of them, to w. It does nothing where there are no profiles.
func workDiff(w io.Writer, dir string) error {
	var sides [2]map[string][]work.Profile
	for _, side := range []abtest.Side{abtest.Old, abtest.New} {
		d := filepath.Join(dir, workDir, side.String())
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		m, err := readWorkProfiles(d)
		if err != nil {
			return err
		}
		sides[side] = m
	}
	var names []string
	for n := range sides[abtest.Old] {
		if len(sides[abtest.New][n]) > 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(w, "\nwhere the work went: no benchmark wrote a %s on both sides\n", profileArtifact)
		return nil
	}
	slices.Sort(names)
	f, err := os.Create(filepath.Join(dir, WorkDiffFile))
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(w, "\nwhere the work went (mean profile of each side's runs; all of it in %s):\n", filepath.Join(dir, WorkDiffFile))
	for _, n := range names {
		old, new := work.Mean(sides[abtest.Old][n]...), work.Mean(sides[abtest.New][n]...)
		fmt.Fprintf(f, "%s: old %d runs, new %d runs (mean insns/op per function)\n", n, len(sides[abtest.Old][n]), len(sides[abtest.New][n]))
		shown, err := work.WriteDiff(f, old, new, work.CountedIn(old, new), diffLines, diffMinDelta)
		if err != nil {
			return err
		}
		fmt.Fprintln(f)
		if len(shown) == 0 {
			fmt.Fprintf(w, "  %s: no function changed by %g insns/op or more\n", n, diffMinDelta)
		} else {
			fmt.Fprintf(w, "  %s:\n", n)
		}
		for _, c := range shown[:min(len(shown), summaryLines)] {
			fmt.Fprintf(w, "    %s\n", c)
		}
	}
	return f.Close()
}

// The diff's size: diffLines functions per benchmark in the file,
// summaryLines of them in the report, none that moved by less than
// diffMinDelta instructions per operation (user work repeats to 0.1).
const (
	diffLines    = 20
	summaryLines = 3
	diffMinDelta = 0.5
)
