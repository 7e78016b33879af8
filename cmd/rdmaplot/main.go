// Command rdmaplot draws one tail (percentile) plot comparing two result
// sets from their artifacts: the HDR logs (.hlog) that the benchmarks
// leave under go test -artifacts (or any HdrHistogram interval logs
// tagged with the benchmark name).
//
//	go test -run='^$' -bench=RDMAWrite -count=5 -artifacts -outputdir old/ .
//	... change something ...
//	go test -run='^$' -bench=RDMAWrite -count=5 -artifacts -outputdir new/ .
//	go run ./cmd/rdmaplot -o compare.png old new
//
// OLD and NEW are directories, searched recursively, or files: .hlog
// files, and raw sample files that RDMABENCH_SAMPLES_DIR leaves
// (Benchmark*.txt, one sample in ns per line), named after their file up
// to its first dot. The histograms of one benchmark (its tag) are merged
// across repetitions;
// every benchmark in both sets gets an old (dashed) and a new (solid)
// curve in one colour; -match keeps only the names it matches. It also
// prints p50, p99, p99.9 and max of each, old and new, and their ratio.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/internal/latplot"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("rdmaplot", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("o", "tail-compare.png", "the plot to write, `FILE`.png or .svg")
	match := fl.String("match", "", "only benchmarks whose name matches this `regexp`")
	oldLabel := fl.String("old", "old", "label of the first set")
	newLabel := fl.String("new", "new", "label of the second set")
	title := fl.String("title", "", "plot title (default: the labels)")
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: rdmaplot [flags] OLD NEW\n\nOLD and NEW are directories of benchmark artifacts (searched for .hlog files) or .hlog files.\n\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() != 2 {
		fmt.Fprintf(stderr, "rdmaplot: want two result sets, OLD and NEW (got %d arguments); example: rdmaplot -o compare.png old/ new/\n", fl.NArg())
		return 2
	}
	var re *regexp.Regexp
	if *match != "" {
		var err error
		if re, err = regexp.Compile(*match); err != nil {
			fmt.Fprintf(stderr, "rdmaplot: -match: %v\n", err)
			return 2
		}
	}
	if ext := strings.ToLower(filepath.Ext(*out)); ext != ".png" && ext != ".svg" {
		fmt.Fprintf(stderr, "rdmaplot: -o %s: want a file name ending in .png or .svg\n", *out)
		return 2
	}
	sets := make([]map[string]*hdrhistogram.Histogram, 2)
	for i, arg := range fl.Args() {
		s, err := load(arg, re)
		if err != nil {
			fmt.Fprintf(stderr, "rdmaplot: %v\n", err)
			return 1
		}
		sets[i] = s
	}
	var names []string
	for name := range sets[0] {
		if sets[1][name] != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(stderr, "rdmaplot: no benchmark is in both sets: %s has %s; %s has %s\n",
			fl.Arg(0), keys(sets[0]), fl.Arg(1), keys(sets[1]))
		return 1
	}
	slices.SortFunc(names, compareNames)
	var series []latplot.Series
	fmt.Fprintf(stdout, "%-30s %-11s %-24s %-24s %-24s %s\n", "benchmark", "samples", "p50 (us)", "p99 (us)", "p99.9 (us)", "max (us)")
	for i, name := range names {
		o, n := sets[0][name], sets[1][name]
		series = append(series,
			latplot.Series{Label: *oldLabel + " " + short(name), Hist: o, Dashed: true, Color: i},
			latplot.Series{Label: *newLabel + " " + short(name), Hist: n, Color: i})
		line := fmt.Sprintf("%-30s %-11s", name, fmt.Sprintf("%d/%d", o.TotalCount(), n.TotalCount()))
		for _, q := range []float64{50, 99, 99.9, 100} {
			a, b := float64(o.ValueAtQuantile(q))/1000, float64(n.ValueAtQuantile(q))/1000
			line += fmt.Sprintf(" %-24s", fmt.Sprintf("%s -> %s %.3fx", us(a), us(b), b/a))
		}
		fmt.Fprintln(stdout, strings.TrimRight(line, " "))
	}
	fmt.Fprintf(stdout, "(%s -> %s, ratio new/old; samples merged over repetitions)\n", *oldLabel, *newLabel)
	t := *title
	if t == "" {
		t = fmt.Sprintf("latency tail: %s (dashed) vs %s (solid)", *oldLabel, *newLabel)
	}
	p, err := latplot.Tail(t, series...)
	if err == nil {
		err = latplot.Save(p, *out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "rdmaplot: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// isRaw reports whether a file is a raw sample file of a benchmark.
func isRaw(p string) bool {
	base := filepath.Base(p)
	return strings.HasPrefix(base, "Benchmark") && strings.HasSuffix(base, ".txt")
}

// load reads every .hlog and raw sample file under path (or path itself),
// merging the histograms of each benchmark; untagged ones are named after
// their file.
func load(path string, re *regexp.Regexp) (map[string]*hdrhistogram.Histogram, error) {
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, artifacts.HlogExt) || isRaw(p)) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s or Benchmark*.txt files (run the benchmarks with go test -artifacts -outputdir DIR, or RDMABENCH_SAMPLES_DIR=DIR)", path, artifacts.HlogExt)
	}
	set := map[string]*hdrhistogram.Histogram{}
	for _, f := range files {
		var hs []*hdrhistogram.Histogram
		if isRaw(f) {
			samples, err := artifacts.ReadSamples(f)
			if err != nil {
				return nil, err
			}
			h := artifacts.FromSamples(samples)
			stem, _, _ := strings.Cut(filepath.Base(f), ".")
			h.SetTag(stem)
			hs = append(hs, h)
		} else if hs, err = artifacts.ReadHlog(f); err != nil {
			return nil, err
		}
		for _, h := range hs {
			name := h.Tag()
			if name == "" {
				name = strings.TrimSuffix(filepath.Base(f), artifacts.HlogExt)
			}
			if re != nil && !re.MatchString(name) {
				continue
			}
			if set[name] == nil {
				set[name] = h
			} else {
				set[name].Merge(h)
			}
		}
	}
	return set, nil
}

func keys(m map[string]*hdrhistogram.Histogram) string {
	if len(m) == 0 {
		return "none"
	}
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	return strings.Join(k, ", ")
}

// compareNames orders "X/size=4096" after "X/size=64": by length of the
// trailing number first, so sizes sort numerically.
func compareNames(a, b string) int {
	if len(a) != len(b) && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// short is the last part of a benchmark name, its size: after the last
// "/" ("BenchmarkRDMAWrite/size=2"), or "_" in a raw sample file's name
// ("BenchmarkRDMAWrite_size-2").
func short(name string) string {
	if i := strings.LastIndexAny(name, "/_"); i >= 0 {
		return name[i+1:]
	}
	return name
}

// us formats microseconds with four significant digits, without an
// exponent.
func us(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
