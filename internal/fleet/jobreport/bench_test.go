package jobreport

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/rdmabench/rdmabench/internal/benchfile"
	"github.com/rdmabench/rdmabench/internal/fleet"
	"github.com/rdmabench/rdmabench/internal/fleet/jobdir"
	"github.com/rdmabench/rdmabench/internal/fleet/synthjob"
)

var (
	benchNodes = flag.Int("jobreport.nodes", 10, "BenchmarkCollect: nodes of the synthetic all-pairs job (1000: 499,500 pair files, ~1 GB and a minute to write)")
	benchDir   = flag.String("jobreport.dir", "", "BenchmarkCollect: an existing job directory (rdmafleet synth -dir D) instead of a new one")
)

// BenchmarkCollect reads a synthetic all-pairs job's pair files and
// summarises every cell, as the report does, and the same with the old
// path (every value kept to the end, each file through benchfmt, one
// reader); it reports the old path's time and allocations and the ratio.
//
//	go test -run '^$' -bench Collect -benchtime 1x ./internal/fleet/jobreport -jobreport.nodes 1000
func BenchmarkCollect(b *testing.B) {
	dir := *benchDir
	if dir == "" {
		dir = b.TempDir()
		o := synthjob.DefaultOptions
		o.Nodes = *benchNodes
		if _, err := synthjob.Write(context.Background(), dir, o); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	var oldNs, oldAllocs float64
	for b.Loop() {
		c, err := collect(ctx, dir, DefaultOptions, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.results.WriteMatrix(io.Discard, c.plan.Nodes); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ns, allocs, err := measure(func() error { return legacyCollect(ctx, dir) })
		if err != nil {
			b.Fatal(err)
		}
		oldNs, oldAllocs = oldNs+ns, oldAllocs+allocs
		b.StartTimer()
	}
	b.ReportMetric(oldNs/float64(b.N), "old-ns/op")
	b.ReportMetric(oldAllocs/float64(b.N), "old-allocs/op")
	b.ReportMetric(oldNs/float64(b.Elapsed().Nanoseconds()), "old/new")
}

// measure returns fn's time and allocations.
func measure(fn func() error) (ns, allocs float64, err error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	err = fn()
	ns = float64(time.Since(start).Nanoseconds())
	runtime.ReadMemStats(&after)
	return ns, float64(after.Mallocs - before.Mallocs), err
}

// legacyCollect is the report's reading before cells were summarised as
// read (kept here only to measure against): one reader, each pair file
// through benchfmt into a map of every value, each cell summarised by
// benchmath at the end.
func legacyCollect(ctx context.Context, dir string) error {
	plan, err := jobdir.ReadPlan(ctx, filepath.Join(dir, jobdir.PlanFile))
	if err != nil {
		return err
	}
	type cellKey struct{ bench, unit, src, dst string }
	values := map[cellKey][]float64{}
	for _, s := range plan.Steps() {
		f, err := jobdir.Open(ctx, jobdir.ResultPath(dir, s))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		one := map[cellKey][]float64{}
		_, err = benchfile.Read(f, s.Src, benchfile.Fail, func(rec *benchfmt.Result) error {
			bench, src, dst, err := fleet.SplitPairName(rec.Name)
			if err != nil {
				return err
			}
			for _, v := range rec.Values {
				k := cellKey{bench, v.Unit, src, dst}
				one[k] = append(one[k], v.Value)
			}
			return nil
		})
		f.Close()
		if err != nil {
			return err
		}
		for k, vs := range one {
			values[k] = append(values[k], vs...)
		}
	}
	n := 0
	for _, vs := range values {
		s := benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds)
		if benchmath.AssumeNothing.Summary(s, fleet.Confidence).Center >= 0 {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: no cells", dir)
	}
	return nil
}
