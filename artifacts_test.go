package rdmabench

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/artifacts"
	"github.com/rdmabench/rdmabench/env"
	"github.com/rdmabench/rdmabench/internal/latplot"
	"github.com/rdmabench/rdmabench/latency"
	"github.com/rdmabench/rdmabench/rdmalat"
	"github.com/rdmabench/rdmabench/testenv"
)

// benchArtifacts collects one benchmark's artifacts when go test runs
// with -artifacts (Go 1.26): per size and -count repetition, in that
// run's testing.B.ArtifactDir, the raw samples in order, the HDR histogram
// in HdrHistogram's log format and its percentile text, and a histogram
// and a tail plot as PNG and SVG; in the benchmark's own directory,
// summary.json with every size. All of it is written after the measured
// loop, so they cannot slow it.
type benchArtifacts struct {
	sum artifacts.Summary
}

// noPlots leaves each run's plots to the host: make bench passes it and
// rdmasummary draws them from the HDR logs after the run, because in the
// emulated VM drawing took longer than measuring.
var noPlots = flag.Bool("rdmabench.noplots", false, "with -artifacts: write each run's samples and HDR log but not its plots (rdmasummary -artifacts draws them)")

// artifactsOn reports whether go test was given -artifacts.
func artifactsOn() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// newBenchArtifacts starts b's summary, written when b and all its sizes
// are done; nil without -artifacts.
func newBenchArtifacts(b *testing.B, pair *rdmalat.Pair, c env.Config) *benchArtifacts {
	if !artifactsOn() {
		return nil
	}
	a := &benchArtifacts{sum: artifacts.Summary{
		Benchmark: b.Name(), Unit: "ns", OneWay: pair.Local.Op().Halved(), Config: map[string]string{},
	}}
	for _, l := range testenv.ConfigLines(pair, c) {
		if k, v, ok := strings.Cut(l, ": "); ok {
			a.sum.Config[k] = v
		}
	}
	dir := b.ArtifactDir()
	b.Cleanup(func() {
		if _, err := artifacts.WriteSummary(dir, a.sum); err != nil {
			b.Errorf("artifacts: %v", err)
		}
	})
	return a
}

// samples returns where this run's raw samples go: the artifact directory
// and RDMABENCH_SAMPLES_DIR, either or both, capped at
// RDMABENCH_MAX_SAMPLES lines (a note in the log says when the cap
// dropped some); nil for neither.
func (a *benchArtifacts) samples(b *testing.B, c env.Config) io.Writer {
	w := a.sampleSinks(b, c)
	if w == nil {
		return nil
	}
	cw := artifacts.NewCapWriter(w, c.MaxSamples)
	b.Cleanup(func() {
		if n := cw.Note(); n != "" {
			b.Log(n)
		}
	})
	return cw
}

func (a *benchArtifacts) sampleSinks(b *testing.B, c env.Config) io.Writer {
	var ws []io.Writer
	if w := samplesFile(b, c); w != nil {
		ws = append(ws, w)
	}
	if a != nil {
		f, err := os.Create(filepath.Join(b.ArtifactDir(), artifacts.LatencyBase+".samples.txt"))
		if err != nil {
			b.Fatalf("artifacts: %v", err)
		}
		b.Cleanup(func() { f.Close() })
		ws = append(ws, f)
	}
	switch len(ws) {
	case 0:
		return nil
	case 1:
		return ws[0]
	}
	return io.MultiWriter(ws...)
}

// record writes a finished run's histogram and plots and adds it to the
// summary.
func (a *benchArtifacts) record(b *testing.B, size int, rec *latency.Recorder) {
	if a == nil || rec == nil {
		return
	}
	h := rec.Histogram() // round trips
	if a.sum.OneWay {
		h = artifacts.Scale(h, 0.5)
	}
	res, err := artifacts.Write(b.ArtifactDir(), artifacts.Run{Name: b.Name(), Size: size, Hist: h})
	if err != nil {
		b.Fatalf("artifacts: %v", err)
	}
	if !*noPlots {
		plots, err := latplot.WritePlots(b.ArtifactDir(), b.Name(), h)
		if err != nil {
			b.Fatalf("artifacts: %v", err)
		}
		res.Files = append(res.Files, plots...)
	}
	res.Files = append(res.Files, artifacts.LatencyBase+".samples.txt")
	res.Dir = b.ArtifactDir() // go test names it at random: the summary says which run is where
	a.sum.Results = append(a.sum.Results, res)
}
