// Package report builds what a person opens after make bench: one
// overview picture of the run (latency against message size for every
// operation, and the tail curves of each size side by side) and an index
// page that names each benchmark and links its plots, raw samples, HDR
// log and summary.json, which go test -artifacts leaves in directories
// named by numbers.
package report

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/internal/latplot"
)

// Bench is one benchmark's artifacts: its summary.json and every run.
type Bench struct {
	Name    string // "BenchmarkRDMAWrite"
	Summary string // summary.json, relative to the results directory
	Runs    []Run
}

// Run is one size and -count repetition of a benchmark.
type Run struct {
	artifacts.Result
	Rep     int      // 1-based repetition of this size
	RelDir  string   // its directory, relative to the results directory
	Missing []string // files its summary names that are not there
}

// File returns the path of r's file base (relative to the results
// directory) and whether it is there.
func (r Run) File(base string) (string, bool) {
	if !slices.Contains(r.Files, base) || slices.Contains(r.Missing, base) {
		return "", false
	}
	return filepath.ToSlash(filepath.Join(r.RelDir, base)), true
}

// LoadArtifacts finds every summary.json under root (the -outputdir of
// go test -artifacts) and returns the benchmarks in name order, with
// paths relative to out, the results directory holding the index. A
// run's directory is taken as the sibling of its summary's directory
// with the base name of the recorded one: in the VM the recorded path is
// the guest's (/rxevm/out/_artifacts/N), but go test puts every
// artifact directory of one run side by side.
func LoadArtifacts(out, root string) ([]Bench, error) {
	var benches []Bench
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != artifacts.SummaryFile {
			return err
		}
		s, err := artifacts.ReadSummary(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, path)
		if err != nil {
			return err
		}
		b := Bench{Name: s.Benchmark, Summary: filepath.ToSlash(rel)}
		reps := map[string]int{}
		for _, res := range s.Results {
			dir := filepath.Dir(path)
			if res.Dir != "" {
				dir = filepath.Join(filepath.Dir(dir), filepath.Base(res.Dir))
			}
			relDir, err := filepath.Rel(out, dir)
			if err != nil {
				return err
			}
			reps[res.Name]++
			run := Run{Result: res, Rep: reps[res.Name], RelDir: filepath.ToSlash(relDir)}
			for _, f := range res.Files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					run.Missing = append(run.Missing, f)
				}
			}
			b.Runs = append(b.Runs, run)
		}
		benches = append(benches, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(benches) == 0 {
		return nil, fmt.Errorf("%s: no %s (run the benchmarks with go test -artifacts -outputdir %s, as make bench does)", root, artifacts.SummaryFile, root)
	}
	slices.SortFunc(benches, func(a, b Bench) int { return strings.Compare(a.Name, b.Name) })
	return benches, nil
}

// Merged returns, for each run name ("BenchmarkRDMAWrite/size=2"), the
// histogram of every repetition's samples together, read from their HDR
// logs.
func Merged(out string, benches []Bench) (map[string]*hdrhistogram.Histogram, error) {
	merged := map[string]*hdrhistogram.Histogram{}
	for _, b := range benches {
		for _, r := range b.Runs {
			path, ok := r.File(artifacts.LatencyBase + artifacts.HlogExt)
			if !ok {
				continue
			}
			hs, err := artifacts.ReadHlog(filepath.Join(out, path))
			if err != nil {
				return nil, err
			}
			for _, h := range hs {
				if merged[r.Name] == nil {
					merged[r.Name] = h
				} else {
					merged[r.Name].Merge(h)
				}
			}
		}
	}
	return merged, nil
}

// DrawPlots draws the histogram and tail plots of every run that has an
// HDR log but no plots (make bench leaves them to the host: see
// -rdmabench.noplots), beside its other files, and adds them to the
// run's files. Runs are drawn on every CPU at once.
func DrawPlots(out string, benches []Bench) error {
	type job struct{ b, r int }
	var jobs []job
	for i, b := range benches {
		for j, r := range b.Runs {
			_, hasLog := r.File(artifacts.LatencyBase + artifacts.HlogExt)
			if _, drawn := r.File(latplot.HistogramBase + ".png"); hasLog && !drawn {
				jobs = append(jobs, job{i, j})
			}
		}
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for k, jb := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &benches[jb.b].Runs[jb.r]
			logPath, _ := r.File(artifacts.LatencyBase + artifacts.HlogExt)
			hs, err := artifacts.ReadHlog(filepath.Join(out, logPath))
			if err != nil || len(hs) == 0 {
				errs[k] = cmp.Or(err, fmt.Errorf("%s: no histogram in it", logPath))
				return
			}
			files, err := latplot.WritePlots(filepath.Join(out, filepath.FromSlash(r.RelDir)), r.Name, hs[0])
			r.Files = append(slices.Clip(r.Files), files...)
			errs[k] = err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
