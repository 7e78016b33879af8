package artifacts

import (
	"path/filepath"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/rdmabench/rdmabench/latency"
)

// LatencyBase is the base name of the files Write leaves in a run's
// directory: latency.hlog, latency.hgrm, latency.samples.txt. Its plots,
// which latplot.WritePlots draws, sit beside them.
const LatencyBase = "latency"

// Run is one run of one benchmark (one size, one -count repetition).
type Run struct {
	Name    string                  // "BenchmarkRDMAWrite/size=2"
	Size    int                     // message size in bytes
	Hist    *hdrhistogram.Histogram // the reported latency, ns
	Samples []int64                 // optional: every sample in order, ns
}

// Write leaves r's artifacts in dir (testing.B.ArtifactDir, after the
// measured loop): latency.hlog and latency.hgrm, and latency.samples.txt
// when r has samples. It returns r's Result, with the files' names, for
// the benchmark's Summary. With samples, Min, Max, Mean, StdDev and
// Stalls are exact. The plots are latplot.WritePlots', drawn from the
// same histogram, now or later from the HDR log (drawing costs far more
// than measuring in an emulated VM, and the host draws them faster).
func Write(dir string, r Run) (Result, error) {
	res := resultOf(r.Name, r.Size, r.Hist)
	var files []string
	keep := func(path string, err error) error {
		if err == nil {
			files = append(files, filepath.Base(path))
		}
		return err
	}
	if len(r.Samples) > 0 {
		exact(&res, r.Samples)
		if err := keep(writeSamples(dir, LatencyBase, r.Samples)); err != nil {
			return res, err
		}
	}
	if err := keep(WriteHlog(dir, LatencyBase, r.Name, r.Hist)); err != nil {
		return res, err
	}
	if err := keep(writeHgrm(dir, LatencyBase, r.Hist)); err != nil {
		return res, err
	}
	res.Files = files
	return res, nil
}

// exact replaces the histogram's approximations with the samples' exact
// figures, as latency defines them.
func exact(res *Result, samples []int64) {
	rec := latency.NewRecorder(false)
	for _, s := range samples {
		rec.Record(s)
	}
	sum := rec.Summary()
	res.Min, res.Max, res.Mean, res.StdDev = sum.Min, sum.Max, sum.Mean, sum.StdDev
	res.Stalls = latency.StallsOf(samples)
}
